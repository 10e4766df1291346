# schedlab: `make run` and `make test` set everything up from a clean clone, every
# dependency at the version uv.lock (Python) and Cargo.lock (Rust) give.
VENV    := .venv
BIN     := $(VENV)/bin
PYTHON  ?= python3
STAMP   := $(VENV)/.lock-stamp
# uv installs the lock; it is itself pinned by hash (requirements-uv.txt), in its own
# virtualenv so that syncing the project's leaves it alone.
UV_VERSION := 0.13.9
UV_HOME := target/uv
UV      := $(UV_HOME)/bin/uv
export UV_PROJECT_ENVIRONMENT := $(VENV)
export UV_PYTHON_DOWNLOADS := never
# Bytecode compiled at install, as pip does: else every command compiles its imports anew
# where Python cannot write __pycache__ (rich's import took 77 ms instead of 34).
export UV_COMPILE_BYTECODE := 1

.PHONY: run test bench bench-sweep develop lock check-lock fmt clean fuzz oracle fidelity replay-fidelity

$(UV): requirements-uv.txt
	$(PYTHON) -m venv $(UV_HOME)
	$(UV_HOME)/bin/python -m pip install --quiet --require-hashes --no-deps -r requirements-uv.txt
	touch $@

# The virtualenv holds exactly the lock: the runtime dependencies, the test, lisa and dask
# extras and the build tool (maturin); `--locked` fails when uv.lock is not pyproject.toml's.
$(STAMP): uv.lock pyproject.toml $(UV)
	$(UV) sync --quiet --locked --all-extras --group build --no-install-project --python $(PYTHON)
	touch $@

# Build the extension in release mode (Cargo.lock's crates) and install it, editable.
develop: $(STAMP)
	PATH="$(abspath $(UV_HOME))/bin:$$PATH" VIRTUAL_ENV=$(abspath $(VENV)) \
		$(BIN)/maturin develop --release --locked --uv --quiet

run: develop
	$(BIN)/schedlab reproduce

test: develop
	cargo test --workspace --locked
	$(BIN)/pytest -q

# Update the locks: uv.lock to pyproject.toml (pins kept where they still fit; ARGS=--upgrade
# takes the newest versions allowed), requirements-uv.txt to UV_VERSION.
lock: $(UV)
	echo "uv==$(UV_VERSION)" | $(UV) pip compile - --generate-hashes --universal --quiet \
		--no-header --python-version 3.11 -o requirements-uv.txt.new
	(echo "# uv, which installs uv.lock: pinned by hash. \`make lock\` writes this file (UV_VERSION in the Makefile)."; \
		cat requirements-uv.txt.new) > requirements-uv.txt && rm requirements-uv.txt.new
	$(UV) lock $(ARGS)

# Fail when uv.lock is not pyproject.toml's (CI runs it).
check-lock: $(UV)
	$(UV) lock --check

bench: develop
	cargo bench -p schedlab --locked
	$(MAKE) bench-sweep

# 100 sweep points one after another, then on 2 processes (docs/analysis.md): the times, and
# the two Parquet files compared byte for byte.
bench-sweep: develop
	@for j in 1 2; do rm -f target/sweep-$$j.parquet; \
		/usr/bin/time -f "sweep-100 --jobs $$j: %e s wall" $(BIN)/schedlab sweep benches/sweep-100.toml \
			-o target/sweep-$$j.parquet --jobs $$j >/dev/null || exit 1; done
	cmp target/sweep-1.parquet target/sweep-2.parquet

# The real-kernel oracle (oracle/README.md): boots Debian's kernels under QEMU and records the
# conformance cases not yet recorded (CASES="name ..." to choose, FORCE=1 to record again).
# Never part of `make test`, which replays the records.
oracle: develop
	$(BIN)/python oracle/oracle.py setup
	$(BIN)/python oracle/oracle.py record $(CASES) $(if $(FORCE),--force)

# docs/fidelity.md: schedlab against every record.
fidelity: develop
	$(BIN)/python -m schedlab.conformance tests/conformance/cases.toml -o docs/fidelity.md

# docs/replay-fidelity.md: the records' real-kernel traces replayed (issue 40's targets).
replay-fidelity: develop
	$(BIN)/python -m schedlab.conformance.replay -o docs/replay-fidelity.md

fmt:
	cargo fmt --all

clean:
	rm -rf $(VENV) target

# Fuzz each target for FUZZ_SECONDS (cargo-fuzz on the nightly toolchain: `cargo install
# cargo-fuzz`). Inputs that crash land in fuzz/artifacts/TARGET: copy them to
# fuzz/regressions/TARGET, where `make test` replays them.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS := json rtapp platform
fuzz:
	cd fuzz && for t in $(FUZZ_TARGETS); do \
		mkdir -p corpus/$$t && \
		cargo +nightly fuzz run -O $$t corpus/$$t seeds/$$t -- \
			-max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 || exit 1; \
	done
