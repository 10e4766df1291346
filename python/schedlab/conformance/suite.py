"""The conformance suite: cases (a workload, a kernel, a machine), the records the oracle made
of them on a real kernel, schedlab's run of each measured the same way, and the verdicts."""

import functools
import gzip
import json
import statistics
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import ftrace, measure

FORMAT = 1  # of a record; a record of another format is refused


class RecordError(ValueError):
    pass


@dataclass(frozen=True)
class Case:
    name: str  # case@kernel
    kernel: str
    vcpus: int
    runs: int
    workload: Path | None  # an rt-app JSON, or None for a perf bench or cyclictest case
    cgroups: tuple[str, ...]
    compare: tuple[str, ...]
    known: dict = field(default_factory=dict)  # observable -> why schedlab is outside
    about: str = ""
    perf: str | None = None  # `perf bench sched` arguments: "pipe -l LOOPS [-T]"
    cyclictest: str | None = None  # rt-tests' cyclictest arguments, with -q and -h
    schbench: str | None = None  # schbench's arguments

    @property
    def bench(self):
        """The benchmark a perf or cyclictest case runs, as schedlab's PipeBench or Hackbench:
        `pipe -l LOOPS [-T]`, or `messaging -g GROUPS -l LOOPS [-p] [-t]` (perf's messaging is
        hackbench with 20 senders and receivers per group and 100-byte messages); or its
        Cyclictest, whose arguments must ask for the histogram alone (-q -h), which both sides'
        reports are measured on."""
        from ..benchmarks import Hackbench, PipeBench
        if self.cyclictest:
            return self._cyclictest()
        if self.schbench:
            from ..cli import schbench_of
            bench = schbench_of(self.schbench.split())
            if bench is None:
                raise RecordError(f"{self.name}: schbench = {self.schbench!r}: not arguments "
                                  "schedlab schbench runs")
            return bench
        words = self.perf.split()
        flags, values = set(), {}
        it = iter(words[1:])
        for w in it:
            if w in ("-g", "-l"):
                values[w] = next(it, "")
            else:
                flags.add(w)
        numbers = all(v.isdigit() and int(v) > 0 for v in values.values())
        if words[:1] == ["pipe"] and set(values) == {"-l"} and flags <= {"-T"} and numbers:
            return PipeBench(int(values["-l"]), "-T" in flags)
        if words[:1] == ["messaging"] and set(values) == {"-g", "-l"} and flags <= {"-p", "-t"} \
                and numbers:
            return Hackbench(int(values["-g"]), 20, int(values["-l"]), 100, "-p" in flags,
                             "-t" in flags)
        raise RecordError(f"{self.name}: perf = {self.perf!r}: the suite runs only "
                          "\"pipe -l LOOPS [-T]\" and \"messaging -g GROUPS -l LOOPS [-p] [-t]\"")

    def _cyclictest(self):
        from ..cli import cyclictest_of
        bench = cyclictest_of(self.cyclictest.split())
        if bench is None or not (bench.quiet and bench.histogram):
            raise RecordError(f"{self.name}: cyclictest = {self.cyclictest!r}: the suite runs "
                              "cyclictest with -l LOOPS, -q and -h US")
        return bench

    @property
    def ops(self) -> int:
        """What a perf case's rate counts: pipe's round trips, messaging's messages."""
        from ..benchmarks import PipeBench
        b = self.bench
        return b.loops if isinstance(b, PipeBench) else b.groups * b.fds * b.fds * b.loops

    @property
    def tasks(self) -> list[str]:
        return list(json.loads(self.workload.read_text())["tasks"])

    @property
    def duration_s(self) -> float:
        return float(json.loads(self.workload.read_text())["global"]["duration"])


def cases(path: Path) -> list[Case]:
    """cases.toml: one table per case, expanded to one Case per kernel it lists; `causes`
    names the reasons that the cases' `known` entries give by name."""
    tables = tomllib.loads(path.read_text())
    causes = tables.pop("causes", {})
    out = []
    for name, c in tables.items():
        default_runs = 3 if c.get("vcpus", 2) > 1 else 2
        runs = c.get("runs", {})
        for kernel in c["kernels"]:
            known = {}
            for observable, cause in c.get("known", {}).get(kernel, {}).items():
                if cause not in causes:
                    raise RecordError(f"{path}: {name}.known.{kernel}: unknown cause {cause!r}")
                known[observable] = causes[cause]
            out.append(Case(f"{name}@{kernel}", kernel, c.get("vcpus", 2),
                            runs.get(kernel, default_runs) if isinstance(runs, dict) else runs,
                            path.parent / c["workload"] if "workload" in c else None,
                            tuple(c.get("cgroups", ())), tuple(c["compare"]), known,
                            c.get("about", ""), c.get("perf"), c.get("cyclictest"),
                            c.get("schbench")))
    return out


def kernel_run(files: dict[str, str], case: Case, trace_text: str) -> dict:
    """A record's run: what measure keeps of the kernel's trace and counters, and the host's
    speed where the guest measured it (two vCPUs: `host_pipe_ops`)."""
    run = _kernel_run(files, case, trace_text)
    if "host-probe.log" in files:
        run["host_pipe_ops"] = _perf_rate(files["host-probe.log"], 0)
    return run


def _kernel_run(files: dict[str, str], case: Case, trace_text: str) -> dict:
    evs = list(ftrace.events(trace_text))
    if case.perf:
        return measure.bench(evs, case.ops, _perf_rate(files["perf.log"], case.ops))
    if case.cyclictest:
        return measure.cyclictest(files["cyclictest.log"])
    if case.schbench:
        memset = ({"memset_ps": measure.schbench_memset_ps(files["calibrate-pipe.log"], files["calibrate-pipe-1.log"])}
                  if case.bench.pipe else {})
        stretch = ({"work_stretch": measure.schbench_work_stretch(files["calibrate.log"], files["calibrate-all.log"])}
                   if "calibrate-all.log" in files else {})
        return {**measure.schbench(files["schbench.log"]),
                "matrix_ps": measure.schbench_matrix_ps(files["calibrate.log"]), **memset, **stretch}
    m = measure.measure(evs, case.tasks, case.duration_s, case.vcpus)
    if m["snapshots_s"] is None:
        raise RecordError(f"{case.name}: the trace has no schedstat marks")
    span = m["snapshots_s"][1] - m["snapshots_s"][0]
    m["schedstat"] = measure.schedstat_delta(files["schedstat.before"], files["schedstat.after"],
                                             span)
    m["cgroups"] = _cpu_stat_delta(_v1_cpu_stat(files.get("cgroups.before", "")),
                                   _v1_cpu_stat(files.get("cgroups.after", "")), span)
    costs = newidle_costs(files)
    if costs is not None:
        m["max_newidle_lb_cost_ns"] = costs
    return m


def newidle_costs(files: dict[str, str]) -> dict | None:
    """Each CPU's `max_newidle_lb_cost` (ns) as rt-app started and ended, from the guest's
    `newidle_cost.start` and `.end` (None from a guest older than them)."""
    if "newidle_cost.start" not in files:
        return None
    return {when: [int(v) for v in files[f"newidle_cost.{when}"].split()] for when in ("start", "end")}


def _perf_rate(log: str, ops: int) -> float:
    """perf bench's rate: its `N ops/sec` line (pipe), else `ops` over its `Total time: S
    [sec]` line (messaging)."""
    lines = [line.split() for line in log.splitlines()]
    for words in lines:
        if words[-1:] == ["ops/sec"]:
            return float(words[0])
    for words in lines:
        if words[:2] == ["Total", "time:"] and float(words[2]) > 0:
            return ops / float(words[2])
    raise RecordError(f"perf bench printed no rate: {log.strip()[-200:]!r}")


def compares_counters(case: Case) -> bool:
    """The case compares /proc/schedstat's balance passes or cpu.stat: the oracle reads them
    during the workload (else after it, so that its shell does not run beside the workload)."""
    return any(c.startswith("lb.") or c == "throttled" for c in case.compare)


def snapshot_window(case: Case) -> tuple[float, float]:
    """When the guest reads the counters, s after starting rt-app: the middle of the run."""
    start = min(0.5, case.duration_s / 4)
    return start, case.duration_s - 2 * start


def _v1_cpu_stat(text: str) -> dict:
    """cgroup v1 cpu.stat per group: nr_periods, nr_throttled, throttled_time (ns)."""
    out, path = {}, None
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "path":
            path = value
            out[path] = {}
        elif path is not None and value.isdigit():
            out[path][key] = int(value)
    return out


def _cpu_stat_delta(before: dict, after: dict, span_s: float) -> dict:
    return {path: {"nr_periods_per_s": (g["nr_periods"] - before[path]["nr_periods"]) / span_s,
                   "nr_throttled_per_s": (g["nr_throttled"] - before[path]["nr_throttled"]) / span_s,
                   "throttled_share": (g["throttled_time"] - before[path]["throttled_time"])
                   / 1e9 / span_s}
            for path, g in after.items()}


# The guest kernels' tick (Debian's HZ=250).
TICK_NS = 4_000_000
# kcompactd0's period in the guests: its 500 ms timeout, rounded up by the timer wheel.
KCOMPACTD_SPAN_NS = 512_000_000
# rt-app's start (its threads' set-up and barrier) is over this long after its first fork.
START_NS = 10_000_000
# start_phase's probe runs: long enough for a first timer expiry and kcompactd0's wakeup.
PROBE_NS = KCOMPACTD_SPAN_NS + TICK_NS


def start_phase(case: Case, platform: str, record: dict | None, sets=()) -> tuple[str, ...]:
    """The switches that start schedlab's workload as the record's runs started theirs: its
    periodic threads' timers expiring as far past a tick as the kernel's did (the first
    wakeup of a workload thread past the start, `woken_ns`), or without one its first thread
    created as far past a tick as the kernel's rt-app created its own
    (`first_fork_phase_ns`); and the guest's own threads' timeline where the record's lay,
    kcompactd0 waking as long after that thread as the kernel's did (its first wakeup past
    the start in `woken_ns`; shifted by whole ticks, less than half its 512 ms either way). Both from the record's
    trace excerpt. Only on one vCPU, whose icount runs all start at one phase; on two each
    run starts at its own. None for perf bench and cyclictest cases and records without an
    excerpt. Measured on runs with the case's `sets`."""
    phase = (record or {}).get("first_fork_phase_ns")
    if case.workload is None or phase is None or case.vcpus != 1:
        return ()
    evs = _probe(case, platform, sets, TICK_NS)
    start = (phase - measure.first_fork(evs)) % TICK_NS
    woken = record.get("woken_ns", {})
    timer, kcompactd = _first_of(woken, case.tasks), woken.get("kcompactd0")
    if timer is None and kcompactd is None:
        return (f"rtapp.start_ns={start}",)
    evs = _probe(case, platform, (*sets, f"rtapp.start_ns={start}"), PROBE_NS)
    fork = measure.first_fork(evs)
    ours = _first_of(_first_wakeups(evs, fork), case.tasks)
    if timer is not None and ours is not None and (timer - ours) % TICK_NS:
        start = (start + timer - ours) % TICK_NS
        evs = _probe(case, platform, (*sets, f"rtapp.start_ns={start}"), PROBE_NS)
        fork = measure.first_fork(evs)
    ours = _first_wakeups(evs, fork).get("kcompactd0")
    if kcompactd is None or ours is None:  # no kernel threads
        return (f"rtapp.start_ns={start}",)
    shift = round(_nearest(kcompactd - ours, KCOMPACTD_SPAN_NS) / TICK_NS) * TICK_NS
    return (f"rtapp.start_ns={start}", f"kthreads.shift_ns={shift}")


def _probe(case: Case, platform: str, sets, duration_ns: int) -> list:
    """The trace events of schedlab's first `duration_ns` of a case."""
    from .. import run
    with tempfile.TemporaryDirectory() as t:
        trace = Path(t) / "probe.txt"
        run(case.workload, platform, kernel=case.kernel, cgroups=list(case.cgroups),
            sets=list(sets), duration_ns=duration_ns, trace=trace, frames=False)
        return list(ftrace.events(trace.read_text()))


# schedlab's runs of a case on two or more vCPUs: seeds 0..SEEDS-1 of the emulated machine's
# jitter, as the kernel's runs there are repeats in host time. One seed is one draw: across
# seeds 0-7 the 2-vCPU periodic cases' migration rates span ranges two to three times as wide
# as the kernel's, so a single draw inside (or outside) the kernel's range says little.
SEEDS = 5


def schedlab_runs(case: Case, record: dict | None = None) -> list[dict]:
    """schedlab's runs of a case: one on one vCPU (icount's machine draws no jitter), else one
    per seed of the emulator's jitter (timer interrupts' lateness, halted vCPUs' exits, jobs'
    stretch: platform.qemu_tcg)."""
    if case.vcpus == 1:
        return [schedlab_run(case, record)]
    return [schedlab_run(case, record, sets=(f"seed={s}",)) for s in range(SEEDS)]


def schedlab_run(case: Case, record: dict | None = None, platform: str | None = None,
                 sets=()) -> dict:
    """schedlab's run of a case, measured as the kernel's, its workload starting at the phase
    of a jiffy the record's did; the counters the case compares, over the window the record's
    runs read them in (their mean), from two more runs that stop at its ends."""
    from .. import run
    platform = platform or emulated(case, record)
    sets = (*start_phase(case, platform, record, sets), *sets)
    kw = dict(kernel=case.kernel, cgroups=list(case.cgroups), sets=sets, frames=False)
    with tempfile.TemporaryDirectory() as t:
        trace = Path(t) / "trace.txt"
        if case.perf:
            return _bench_run(case, platform, trace, kw)
        if case.cyclictest:
            bench = case.bench
            return measure.cyclictest(bench.report(run(bench.workload(), platform, **kw)))
        if case.schbench:
            bench = _calibrated(case.bench, record)
            return measure.schbench(bench.report(run(bench.workload(), platform, **kw)))
        run(case.workload, platform, trace=trace, **kw)
        m = measure.measure(list(ftrace.events(trace.read_text())), case.tasks, case.duration_s,
                            case.vcpus)
        # Counters only where the case compares them (balance passes, cpu.stat).
        if record is None or not compares_counters(case):
            return m
        a, b = (statistics.fmean(r["snapshots_s"][i] for r in record["runs"]) for i in (0, 1))
        ends = []
        for i, at in enumerate((a, b)):
            stat = Path(t) / f"schedstat.{i}"
            r = run(case.workload, platform, duration_ns=round(at * 1e9), schedstat=stat, **kw)
            ends.append((stat.read_text(), {g["path"]: {
                "nr_periods": g["nr_periods"], "nr_throttled": g["nr_throttled"],
                "throttled_time": g["throttled_ns"]} for g in r.group_rows}))
    m["schedstat"] = measure.schedstat_delta(ends[0][0], ends[1][0], b - a)
    m["cgroups"] = _cpu_stat_delta(ends[0][1], ends[1][1], b - a)
    return m


# The guest's host probe (oracle/guest/init): perf bench pipe's round trips across the vCPUs.
PROBE_LOOPS = 4000


def emulated(case: Case, record: dict | None) -> str:
    """The emulated machine of a case's record: `qemu-tcg:N`, with its host's factor
    (`qemu-tcg:N@K`) where the record's runs measured their host. qemu-tcg:N's latencies
    come from the records of 2026-11-26, which have no probe (K = 1). A probe's round trip
    in schedlab is a + b·K (the scaled table and the emulator's latencies scale with K, the
    measured costs do not): K is the one that gives the kernel's (the median over the runs),
    within qemu-tcg:N@K's range."""
    probes = [r["host_pipe_ops"] for r in (record or {}).get("runs", []) if "host_pipe_ops" in r]
    if case.vcpus == 1 or not probes:
        return f"qemu-tcg:{case.vcpus}"
    a, b = _probe_line(case.kernel, case.vcpus)
    k = (1e9 / statistics.median(probes) - a) / b
    return f"qemu-tcg:{case.vcpus}@{min(max(k, HOST_RANGE[0]), HOST_RANGE[1]):.3g}"


# qemu-tcg:N@K's range (platform::QEMU_HOST_RANGE).
HOST_RANGE = (0.1, 4.0)


@functools.cache
def _probe_line(kernel: str, vcpus: int) -> tuple[float, float]:
    """schedlab's round trip of the host probe (ns) as a + b·K, from its runs at K = 1 and
    K = 0.5."""
    from .. import run
    from ..benchmarks import PipeBench, elapsed_ns
    bench = PipeBench(loops=PROBE_LOOPS)
    trip = {k: elapsed_ns(run(bench.workload(), f"qemu-tcg:{vcpus}@{k}", kernel=kernel,
                              frames=False)) / PROBE_LOOPS for k in (1, 0.5)}
    b = 2 * (trip[1] - trip[0.5])
    return trip[1] - b, b


def _calibrated(bench, record: dict | None):
    """A schbench case's benchmark with the work's and a pipe test's memset's speeds the
    record's runs timed in the guest (their means), and the work's stretch with every vCPU
    working (their medians, quantile by quantile: a calibration the host disturbed, as one of
    schbench-2@6.12's three of 2026-11-28 with its p90 at 1.58, does not move it): the
    emulator's, not the engine's defaults nor the platform's stretch of rt-app's loop."""
    if not record:
        return bench
    runs = record["runs"]
    ps = {k: round(statistics.fmean(r[k] for r in runs))
          for k in ("matrix_ps", "memset_ps") if k in runs[0]}
    if "work_stretch" in runs[0]:
        ps["work_stretch"] = tuple(round(statistics.median(q)) for q in zip(*(r["work_stretch"] for r in runs)))
    return replace(bench, **ps)


def _bench_run(case: Case, platform: str, trace: Path, kw: dict) -> dict:
    """schedlab's perf bench run; its rate as perf reports it (pipe: whole µs; messaging:
    whole ms)."""
    from .. import run
    from ..benchmarks import PipeBench, elapsed_ns
    bench = case.bench
    r = run(bench.workload(), platform, trace=trace, **kw)
    rate = (bench.ops_per_sec(r) if isinstance(bench, PipeBench)
            else case.ops / (elapsed_ns(r) // 1_000_000 / 1e3))
    return measure.bench(list(ftrace.events(trace.read_text())), case.ops, rate)


def record_path(case: Case, records: Path) -> Path:
    return records / f"{case.name}.json"


def write_table(prog: str, make, output: Path | None) -> int:
    """A table of the records, `make()`'s text, written to `output` (None: standard output);
    a record that cannot be read is one line and exit status 2."""
    try:
        text = make()
    except (RecordError, OSError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    if output:
        output.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def load_record(path: Path) -> dict:
    """A record, refused unless its format is this schedlab's."""
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise RecordError(f"{path}: not a conformance record: {e}") from None
    if not isinstance(rec, dict) or rec.get("format") != FORMAT:
        found = rec.get("format") if isinstance(rec, dict) else None
        raise RecordError(f"{path}: record format {found!r}; this schedlab reads format {FORMAT} "
                          "(record it again: make oracle)")
    excerpt = path.with_name(path.name.removesuffix(".json") + ".trace.txt.gz")
    if excerpt.exists():
        evs = list(ftrace.events(gzip.decompress(excerpt.read_bytes()).decode()))
        fork = measure.first_fork(evs)
        rec["first_fork_phase_ns"] = None if fork is None else fork % TICK_NS
        rec["woken_ns"] = _first_wakeups(evs, fork)
    return rec


def _first_wakeups(evs: list, fork: int | None) -> dict[str, int]:
    """Each comm's first wakeup past rt-app's start, 10 ms or more after the workload's first
    fork (ns after it): a periodic thread's or a kernel thread's, a timer expiry."""
    woken: dict[str, int] = {}
    if fork is not None:
        for e in evs:
            if e.name == "sched_waking" and e.ts >= fork + START_NS:
                woken.setdefault(e.fields.get("comm", ""), e.ts - fork)
    return woken


def _first_of(woken: dict[str, int], tasks: list[str]) -> int | None:
    """The first of the workload's threads' wakeups in `woken` (schedlab names thread
    instances `task-N`)."""
    mine = [ns for comm, ns in woken.items() if comm in tasks or comm.rsplit("-", 1)[0] in tasks]
    return min(mine, default=None)


def _nearest(d: int, period: int) -> int:
    """`d` modulo `period`, the nearer way round: within ±period/2."""
    return (d + period // 2) % period - period // 2
