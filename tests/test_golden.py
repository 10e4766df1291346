"""Golden outputs: every corpus workload that runs, and a run file of each generator
(tests/generators: hackbench, perf bench pipe, cyclictest, schbench and its pipe test), under
the 7.3, 6.12 and 6.1 presets, on
smp:4 and hikey960, with the performance and schedutil governors, gives byte-identical traces,
rt-app logs and summaries (and, on hikey960 with schedutil, trace.dat and Perfetto files) to
those recorded in tests/golden/runs.txt; `schedlab reproduce`'s table is
tests/golden/reproduce.txt. A behaviour change regenerates them on purpose, in the same
commit, saying why:

    .venv/bin/python tests/test_golden.py      # rewrite tests/golden/
"""

import contextlib
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import schedlab
from schedlab.run import run

HERE = Path(__file__).parent
ROOT = HERE.parent
CORPUS = HERE / "rtapp-corpus"
GENERATORS = HERE / "generators"
GOLDEN = HERE / "golden"
KERNELS = ("7.3", "6.12", "6.1")
PLATFORMS = ("smp:4", "hikey960")
GOVERNORS = ("performance", "schedutil")
DURATION_NS = 3_000_000_000


def workloads() -> list[Path]:
    """The corpus's workloads, fragments of a merge set included (they are refused: that too
    is behaviour), and the generators' run files."""
    return sorted(CORPUS.rglob("*.json")) + sorted(GENERATORS.glob("*.json"))


def variants():
    for w in workloads():
        for k in KERNELS:
            for p in PLATFORMS:
                for g in GOVERNORS:
                    yield w, k, p, g


def key(w: Path, k: str, p: str, g: str) -> str:
    name = w.relative_to(CORPUS) if w.is_relative_to(CORPUS) else w.relative_to(HERE)
    return f"{name} {k} {p} {g}"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def outcome(w: Path, k: str, p: str, g: str, tmp: Path) -> str:
    """trace, logs and summary digests of one run, or the error it gives. The workload is
    named relative to the checkout, as messages quote it, so that any clone gives the same."""
    trace, logs = tmp / "trace.txt", tmp / "logs"
    try:
        with contextlib.chdir(ROOT):
            r = run(w.relative_to(ROOT), p, kernel=k, sets=[f"cpufreq.governor={g}"],
                    duration_ns=DURATION_NS, trace=trace, log_dir=logs, frames=False)
    except schedlab.InputError as e:
        return f"error {digest(str(e).encode())}"
    summary = json.dumps(r.summary(), indent=1, default=int).encode()
    log_set = b"".join(f.name.encode() + b"\0" + f.read_bytes() for f in sorted(logs.iterdir()))
    out = f"trace {digest(trace.read_bytes())} logs {digest(log_set)} summary {digest(summary)}"
    if (p, g) == ("hikey960", "schedutil"):
        # The same run's trace.dat and Perfetto trace (the variant with the most events).
        for name, ext in (("dat", "dat"), ("pf", "perfetto-trace")):
            with contextlib.chdir(ROOT):
                run(w.relative_to(ROOT), p, kernel=k, sets=[f"cpufreq.governor={g}"],
                    duration_ns=DURATION_NS, trace=tmp / f"trace.{ext}", frames=False)
            out += f" {name} {digest((tmp / f'trace.{ext}').read_bytes())}"
    return out


def reproduce_table() -> str:
    out = subprocess.run([sys.executable, "-m", "schedlab", "reproduce"], capture_output=True,
                         env={**{k: v for k, v in os.environ.items() if "COLOR" not in k}, "COLUMNS": "160"})
    return out.stdout.decode()


def recorded() -> dict[str, str]:
    lines = (GOLDEN / "runs.txt").read_text().splitlines()
    return dict(line.split(" = ", 1) for line in lines if line and not line.startswith("#"))


GOLD = recorded() if (GOLDEN / "runs.txt").exists() else {}


@pytest.mark.parametrize("w, k, p, g", list(variants()), ids=lambda v: str(v).replace(str(CORPUS) + "/", "").replace(str(HERE) + "/", ""))
def test_run_outputs_are_the_recorded_ones(w, k, p, g, tmp_path):
    assert outcome(w, k, p, g, tmp_path) == GOLD[key(w, k, p, g)]


def test_every_variant_is_recorded():
    assert sorted(GOLD) == sorted(key(*v) for v in variants())


def test_reproduce_table_is_the_recorded_one():
    assert reproduce_table() == (GOLDEN / "reproduce.txt").read_text()


if __name__ == "__main__":
    import tempfile

    GOLDEN.mkdir(exist_ok=True)
    rows = []
    for v in variants():
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(f"{key(*v)} = {outcome(*v, Path(tmp))}")
    header = "# tests/test_golden.py: workload kernel platform governor = sha256[:16] of each output\n"
    (GOLDEN / "runs.txt").write_text(header + "\n".join(rows) + "\n")
    (GOLDEN / "reproduce.txt").write_text(reproduce_table())
    print(f"{len(rows)} runs recorded in {GOLDEN}")
