# schedlab: `make run` and `make test` set everything up from a clean clone.
VENV    := .venv
BIN     := $(VENV)/bin
PYTHON  ?= python3
STAMP   := $(VENV)/.maturin-stamp

.PHONY: run test bench develop fmt clean

# The virtualenv and the build tool; the project's own dependencies come from pyproject.toml.
$(STAMP):
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "maturin>=1.8,<2"
	touch $@

# Build the extension in release mode and install it, with runtime and test dependencies.
develop: $(STAMP)
	VIRTUAL_ENV=$(abspath $(VENV)) $(BIN)/maturin develop --release --extras test --quiet

run: develop
	$(BIN)/schedlab reproduce

test: develop
	cargo test --workspace
	$(BIN)/pytest -q

bench:
	cargo bench -p schedlab

fmt:
	cargo fmt --all

clean:
	rm -rf $(VENV) target
