"""schedlab's real-kernel oracle: boots Debian's stock kernels under QEMU, runs a conformance
case's workload in them and writes the case's record (tests/conformance/records/).

  oracle.py setup [--kernel K]...        fetch and pack what the guest boots (idempotent)
  oracle.py record [CASE...] [--force]   record the cases not yet recorded (all, or those named:
                                         `hogs-3@6.1`, or `hogs-3` for every kernel)
  oracle.py list                         the cases and whether each is recorded
  oracle.py try CASE@K [--append ARGS] [--feature F]... [--before CMD] [--probe eevdf]
                 [--event SYSTEM:EVENT]...
                                         one run, not recorded, its measures printed: the
                                         kernel booted with ARGS, sched features F set, CMD
                                         run first (before.log), the EEVDF state traced on
                                         each switch and wakeup (guest/eevdf.sh), trace
                                         events added (e.g. timer:hrtimer_expire_entry); the
                                         guest's files in the cache's last-run folder

Exit status 2 with one line on any failure (per case that failed, the others recorded); a record
is written whole or not at all.
"""

import argparse
import datetime
import gzip
import json
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import boot  # noqa: E402
import image  # noqa: E402
from errors import OracleError  # noqa: E402

from schedlab.conformance import suite  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "conformance" / "cases.toml"
RECORDS = ROOT / "tests" / "conformance" / "records"
GUEST = Path(__file__).parent / "guest"
TRACE_SH = (GUEST / "trace.sh").read_bytes()
EXCERPT_BYTES = 1 << 20


def record_path(case: suite.Case) -> Path:
    return suite.record_path(case, RECORDS)


def _cgroups(case: suite.Case) -> bytes:
    """The guest's cgroup lines (path shares quota_us period_us) from schedlab's --cgroup
    spellings: shares= as cgroup v1 has it, max=QUOTA/PERIOD in µs."""
    lines = []
    for spec in case.cgroups:
        path, _, opts = spec.partition(":")
        kv = dict(o.split("=", 1) for o in opts.split(",") if o)
        unknown = set(kv) - {"shares", "max"}
        if unknown:
            raise OracleError(f"{CASES}: {case.name}: cgroups: the guest sets only shares= and "
                              f"max=, not {', '.join(sorted(unknown))}")
        quota, period = kv.get("max", "-1/100000").split("/")
        lines.append(f"{path} {kv.get('shares', 1024)} {quota} {period}\n")
    return "".join(lines).encode()


def _members(case: suite.Case) -> bytes:
    """Each task with a taskgroup: "path task instances" (rt-app 1.0 ignores taskgroup; the
    guest moves the threads itself)."""
    tasks = json.loads(case.workload.read_text())["tasks"]
    return "".join(f"{t['taskgroup']} {name} {t.get('instance', 1)}\n"
                   for name, t in tasks.items() if t.get("taskgroup", "/") != "/").encode()


def report(trace_dat: bytes) -> str:
    """trace-cmd report -t (nanosecond timestamps) of the guest's trace.dat, on the host."""
    with tempfile.NamedTemporaryFile(suffix=".dat") as f:
        f.write(trace_dat)
        f.flush()
        r = subprocess.run(["trace-cmd", "report", "-t", "-i", f.name], capture_output=True)
    if r.returncode != 0:
        raise OracleError(f"trace-cmd report failed: {r.stderr.decode(errors='replace').strip()}")
    return r.stdout.decode(errors="replace")


def _job(case: suite.Case) -> tuple[dict[str, bytes], int]:
    """The guest's job files for a case, and its time limit (s)."""
    if case.perf or case.cyclictest or case.schbench:
        case.bench  # refuses arguments schedlab cannot run too
        script, var, args = (("perf.sh", "PERF_ARGS", case.perf) if case.perf
                             else ("cyclictest.sh", "CYCLICTEST_ARGS", case.cyclictest) if case.cyclictest
                             else ("schbench.sh", "SCHBENCH_ARGS", case.schbench))
        job = {"run.sh": (GUEST / script).read_bytes(), "trace.sh": TRACE_SH,
               "params": f"{var}='{args}'\n".encode()}
        if case.schbench:
            job["schbench"] = image.schbench()
        return job, 600
    return {
        "run.sh": (GUEST / "rtapp.sh").read_bytes(),
        "trace.sh": TRACE_SH,  # the host probe's (guest/init)
        "workload.json": case.workload.read_bytes(),
        "cgroups": _cgroups(case),
        "members": _members(case),
        "params": "SNAPSHOT_FROM={}\nSNAPSHOT_SPAN={}\nSNAPSHOT_DURING={}\n".format(
            *suite.snapshot_window(case), int(suite.compares_counters(case))).encode(),
    }, int(case.duration_s) + 120


def one_run(case: suite.Case, append: str = "", before: str = "",
            events: tuple[str, ...] = ()) -> tuple[dict, str, dict]:
    """One run of a case: its measures, its trace, the guest's facts. `append` goes on the
    kernel's command line; the guest runs the shell command `before` ahead of the job, its
    output in before.log, and traces `events` too (`try` only: records take none)."""
    job, limit = _job(case)
    if before:
        job["run.sh"] = f"{{ {before}; }} > before.log 2>&1\n".encode() + job["run.sh"]
    if events:
        job["events"] = "".join(f"{e}\n" for e in events).encode()  # guest/trace.sh
    files = boot.boot_retrying(case.kernel, case.vcpus, job, limit, append)
    last = image.cache() / "last-run"  # the guest's files as they came, to look into
    last.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (last / name).write_bytes(data)
    text = {k: v.decode(errors="replace") for k, v in files.items() if k != "trace.dat"}
    status = text.get("status", "").strip()
    if not status.endswith("=0"):
        name, what = (("perf.log", f"perf bench sched {case.perf}") if case.perf
                      else ("cyclictest.log", f"cyclictest {case.cyclictest}") if case.cyclictest
                      else ("schbench.log", f"schbench {case.schbench}") if case.schbench
                      else ("rt-app.log", f"{case.workload}: rt-app"))
        log = text.get(name, text.get("job.log", ""))
        tail = " / ".join(log.strip().splitlines()[-2:])
        raise OracleError(f"{what} failed in the guest ({status or 'no status'}): {tail}")
    if any(int(line.split()[-1]) for line in text["trace.overruns"].splitlines()):
        raise OracleError(f"{case.name}: the trace buffer overran")
    trace = report(files["trace.dat"])
    guest = dict(line.split("=", 1) for line in text["guest.txt"].splitlines() if "=" in line)
    return suite.kernel_run(text, case, trace), trace, guest


def record(case: suite.Case) -> None:
    runs, excerpt, guest = [], "", {}
    for i in range(case.runs):
        print(f"oracle: {case.name}: run {i + 1}/{case.runs}", flush=True)
        run, trace, guest = one_run(case)
        runs.append(run)
        if i == 0:
            excerpt = trace
    qemu = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True,
                          text=True).stdout.splitlines()[0]
    rec = {"format": suite.FORMAT, "case": case.name, "kernel": case.kernel,
           "release": guest.get("uname"), "vcpus": case.vcpus, "icount": case.vcpus == 1,
           "features": guest.get("features"),
           "made": {"command": f"make oracle CASES={case.name}", "qemu": qemu,
                    "date": datetime.date.today().isoformat(),
                    "how": "oracle/oracle.py: Debian's stock kernel under QEMU TCG, rt-app 1.0, "
                           "perf bench or cyclictest (bookworm) or schbench (built static) under "
                                  "trace-cmd, schedstats on"},
           "runs": runs}
    RECORDS.mkdir(parents=True, exist_ok=True)
    out = record_path(case)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
    data = gzip.compress(_cut(excerpt).encode(), mtime=0)
    ex = RECORDS / f"{case.name}.trace.txt.gz"
    ex.with_suffix(".tmp").write_bytes(data)
    ex.with_suffix(".tmp").rename(ex)
    tmp.rename(out)


def _try(case: suite.Case, append: str, features: list[str], before: str, probe: bool,
         events: list[str]) -> int:
    bad = [f for f in features if not re.fullmatch(r"(NO_)?[A-Z0-9_]+", f)]
    if bad:
        raise OracleError(f"try: --feature {bad[0]!r}: a sched feature's name, e.g. NO_HRTICK")
    bad = [e for e in events if not re.fullmatch(r"[a-z0-9_]+:[a-z0-9_]+", e)]
    if bad:
        raise OracleError(f"try: --event {bad[0]!r}: a trace event as SYSTEM:EVENT, e.g. "
                          "timer:hrtimer_expire_entry")
    first = [f"echo {f} > /sys/kernel/debug/sched/features" for f in features]
    if probe:
        first.append(f"( {(GUEST / 'eevdf.sh').read_text()})")  # a subshell: its own $1..
    if before:
        first.append(before)
    image.kernel_suite(case.kernel)
    run, _, _ = one_run(case, append, "; ".join(first), tuple(events))
    print(json.dumps({k: v for k, v in run.items() if k != "switches"}, indent=1, sort_keys=True))
    return 0


def _cut(trace: str) -> str:
    """The trace's start, whole lines, compressing to at most EXCERPT_BYTES."""
    lines = trace.splitlines(keepends=True)
    keep = len(lines)
    while keep and len(gzip.compress("".join(lines[:keep]).encode())) > EXCERPT_BYTES:
        keep = keep * 3 // 4
    return "".join(lines[:keep])


def select(all_cases: list[suite.Case], names: list[str]) -> list[suite.Case]:
    if not names:
        return all_cases
    known = {c.name for c in all_cases} | {c.name.split("@")[0] for c in all_cases}
    bad = [n for n in names if n not in known]
    if bad:
        raise OracleError(f"unknown case {bad[0]!r} (see: oracle.py list)")
    return [c for c in all_cases if c.name in names or c.name.split("@")[0] in names]


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="oracle.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("setup")
    s.add_argument("--kernel", action="append", default=[])
    r = sub.add_parser("record")
    r.add_argument("cases", nargs="*")
    r.add_argument("--force", action="store_true", help="record again cases already recorded")
    sub.add_parser("list")
    t = sub.add_parser("try", help="one run of a case, not recorded: its measures as JSON, "
                                   "the guest's files in the cache's last-run folder")
    t.add_argument("case")
    t.add_argument("--append", default="", help="more kernel command line, e.g. mitigations=off")
    t.add_argument("--feature", action="append", default=[],
                   help="a sched feature to set first, e.g. NO_HRTICK (repeatable)")
    t.add_argument("--before", default="", help="a shell command run first, its output in "
                                                "before.log, e.g. an untraced perf bench")
    t.add_argument("--probe", choices=["eevdf"], help="trace the EEVDF state on each switch "
                   "and wakeup too (read it with oracle/eevdf.py)")
    t.add_argument("--event", action="append", default=[],
                   help="a trace event to record too, as SYSTEM:EVENT, e.g. "
                        "timer:hrtimer_expire_entry (repeatable)")
    a = p.parse_args(argv)
    # SIGTERM unwinds as Ctrl-C does: QEMU is killed, temporary folders go, no record is half
    # written.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        all_cases = suite.cases(CASES)
        if a.cmd == "list":
            for c in all_cases:
                print(f"{c.name:28} {'recorded' if record_path(c).exists() else '-'}")
            return 0
        # The arguments first: a case name wrong is said as such on any host.
        chosen = (select(all_cases, a.cases) if a.cmd == "record"
                  else select(all_cases, [a.case]) if a.cmd == "try" else [])
        if a.cmd == "try" and "@" not in a.case:
            raise OracleError(f"try: name one kernel's case, e.g. {a.case}@7.3")
        image.check_host()
        if a.cmd == "setup":
            image.userspace()
            for k in a.kernel or list(image.KERNELS):
                image.kernel(k)
            return 0
        if a.cmd == "try":
            return _try(chosen[0], a.append, a.feature, a.before, a.probe == "eevdf",
                        a.event)
        todo = [c for c in chosen if a.force or not record_path(c).exists()]
        failed = 0
        for c in todo:
            # A case that fails (its tool in the guest, say) says so and leaves the others to
            # be recorded: an hour's recording does not stop at its third case.
            try:
                image.kernel_suite(c.kernel)
                record(c)
            except OracleError as e:
                print(f"oracle: {e}", file=sys.stderr, flush=True)
                failed += 1
        return 2 if failed else 0
    except OracleError as e:
        print(f"oracle: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("oracle: interrupted; no record was written for the case under way", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
