"""python -m schedlab.conformance [CASES.toml] [-o FIDELITY.md]: run schedlab on every recorded
case and write the table of verdicts (docs/fidelity.md's, which `make fidelity` regenerates)."""

import argparse
import sys
from pathlib import Path

from . import suite, verdict

HEAD = """# Fidelity: schedlab against the real kernel

Each conformance case (tests/conformance/cases.toml) ran on Debian's stock kernel under QEMU
(`make oracle`: 1 vCPU with icount, or 2 vCPUs repeated for the kernel's spread) and in schedlab
with its defaults on the emulated machine (`schedlab run WORKLOAD --platform qemu-tcg:N --kernel
K`, or `schedlab perf-bench-pipe` and `schedlab hackbench` for perf bench's pipe and messaging,
`schedlab cyclictest` for cyclictest, whose latencies both sides take from its histogram, and
`schedlab schbench` for schbench, with the work's speed its `-C` run timed in the guest (on
two vCPUs its stretch with a worker per vCPU, and a pipe test's memset speed its `-p` runs
timed); on
one vCPU with `--set rtapp.start_ns=N`, so that its periodic threads' timers expire as far
past a tick as the kernel's did (without any, its rt-app creates its first thread as far past
a tick), and `--set kthreads.shift_ns=M`, so that the guest's own threads' timeline lies
where the record's kcompactd0 puts it), measured by the same code from the two traces and
/proc/schedstat (schedlab.conformance). On two vCPUs schedlab runs once per seed of its
emulated machine's jitter (seeds 0-4: `--set seed=N`), as the kernel's runs there are repeats in
host time, and its value is their median [their range]; where the record's runs measured their
host (the guest's perf bench pipe across the vCPUs first), on `qemu-tcg:N@K`, K that host's
factor against the records qemu-tcg:N was measured on (listed at the end). A row is inside when schedlab's value
lies in the kernel's range widened by the emulator's documented effects
(schedlab.conformance.verdict.WIDEN). A row outside names its cause. Switch order and time
compare schedlab with the first kernel run, whose other runs give the range. Regenerate:
`make fidelity`.

| case | observable | kernel mean [range] | schedlab | verdict | cause |
|---|---|---|---|---|---|
"""


def _fmt(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def _spread(median: float, runs: list) -> str:
    """schedlab's value, and over several runs the range of theirs."""
    if len(runs) < 2:
        return _fmt(median)
    return f"{_fmt(median)} [{_fmt(min(runs))}–{_fmt(max(runs))}]"


def table(cases_file: Path) -> str:
    records = cases_file.parent / "records"
    lines = [HEAD]
    inside = outside = 0
    hosts = []
    for case in suite.cases(cases_file):
        path = suite.record_path(case, records)
        if not path.exists():
            lines.append(f"| {case.name} | | not recorded | | | |\n")
            continue
        rec = suite.load_record(path)
        machine = suite.emulated(case, rec)
        if "@" in machine:
            hosts.append(f"{case.name} {machine.split('@')[1]}")
        for r in verdict.rows(case, rec, suite.schedlab_runs(case, rec)):
            inside, outside = inside + r.inside, outside + (not r.inside)
            mean = sum(r.kernel) / len(r.kernel)
            lines.append(f"| {case.name} | {r.observable} | {_fmt(mean)} [{_fmt(min(r.kernel))}–"
                         f"{_fmt(max(r.kernel))}] | {_spread(r.schedlab, r.runs)} | "
                         f"{'inside' if r.inside else '**outside**'} | {r.known or ''} |\n")
    lines.append(f"\n{inside} observables inside the kernel's spread, {outside} outside (each with "
                 "its cause, tests/conformance/cases.toml's `causes`).\n")
    if hosts:
        lines.append(f"\nHost factors K (`qemu-tcg:N@K`): {', '.join(hosts)}.\n")
    return "".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m schedlab.conformance", description=__doc__)
    p.add_argument("cases", nargs="?", type=Path, default=Path("tests/conformance/cases.toml"))
    p.add_argument("-o", "--output", type=Path)
    a = p.parse_args(argv)
    return suite.write_table("schedlab.conformance", lambda: table(a.cases), a.output)


if __name__ == "__main__":
    sys.exit(main())
