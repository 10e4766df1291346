# schedlab: `make run` and `make test` set everything up from a clean clone.
VENV    := .venv
BIN     := $(VENV)/bin
PYTHON  ?= python3
STAMP   := $(VENV)/.maturin-stamp

.PHONY: run test bench bench-sweep develop fmt clean fuzz

# The virtualenv and the build tool; the project's own dependencies come from pyproject.toml.
$(STAMP):
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "maturin>=1.8,<2"
	touch $@

# Build the extension in release mode and install it, with runtime and test dependencies
# and LISA (whose analyses the tests run on schedlab's traces).
develop: $(STAMP)
	VIRTUAL_ENV=$(abspath $(VENV)) $(BIN)/maturin develop --release --extras test,lisa --quiet

run: develop
	$(BIN)/schedlab reproduce

test: develop
	cargo test --workspace
	$(BIN)/pytest -q

bench: develop
	cargo bench -p schedlab
	$(MAKE) bench-sweep

# 100 sweep points one after another, then on 2 processes (docs/analysis.md): the times, and
# the two Parquet files compared byte for byte.
bench-sweep: develop
	@for j in 1 2; do rm -f target/sweep-$$j.parquet; \
		/usr/bin/time -f "sweep-100 --jobs $$j: %e s wall" $(BIN)/schedlab sweep benches/sweep-100.toml \
			-o target/sweep-$$j.parquet --jobs $$j >/dev/null || exit 1; done
	cmp target/sweep-1.parquet target/sweep-2.parquet

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
