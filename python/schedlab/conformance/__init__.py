"""Conformance to the real kernel: the oracle's records of Debian's kernels running the suite's
cases (tests/conformance/), schedlab's runs of the same cases measured the same way, and the
verdicts (docs/fidelity.md)."""
