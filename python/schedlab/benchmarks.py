"""hackbench, perf bench sched pipe, cyclictest and schbench, simulated: the run file a command
line means, what the benchmark measures (hackbench's and perf's time to their last task's exit,
cyclictest's and schbench's latencies) and the real tools' reports.

The engine builds them from a run file's `generators` object (docs/benchmarks.md); these
helpers write that object from the tools' options."""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import ClassVar

from schedlab.run import RunResult, RunSpec


@dataclass(frozen=True)
class Hackbench:
    """rt-tests' `hackbench -g GROUPS -f FDS -l LOOPS -s DATASIZE [--pipe] [--threads]`
    (its defaults), in the cgroup `taskgroup` (None: the root)."""

    groups: int = 10
    fds: int = 20
    loops: int = 100
    datasize: int = 100
    pipe: bool = False
    threads: bool = False
    # The main process forks the tasks and kicks them off together once all are ready; False
    # starts them at once without it (an idealization: no start-up in a run of few loops).
    kick: bool = True
    taskgroup: str | None = None
    OPTIONS: ClassVar[dict] = {"groups": "-g/--groups", "fds": "-f/--fds", "loops": "-l/--loops",
                               "datasize": "-s/--datasize", "taskgroup": "--taskgroup"}

    def workload(self) -> dict:
        return {"generators": {"hackbench": _options(self)}}

    def report(self, r: RunResult) -> str:
        """What hackbench prints (rt-tests' hackbench.c)."""
        mode = "threaded" if self.threads else "process"
        return (f"Running in {mode} mode with {self.groups} groups using {2 * self.fds} file descriptors "
                f"each (== {2 * self.fds * self.groups} tasks)\n"
                f"Each sender will pass {self.loops} messages of {self.datasize} bytes\n"
                f"Time: {_sec_ms(elapsed_ns(r))}\n")


@dataclass(frozen=True)
class PipeBench:
    """`perf bench sched pipe -l LOOPS [-T]` (perf's defaults), both tasks in `taskgroup`."""

    loops: int = 1_000_000
    threaded: bool = False
    taskgroup: str | None = None
    OPTIONS: ClassVar[dict] = {"loops": "-l/--loop", "taskgroup": "--taskgroup"}

    def workload(self) -> dict:
        return {"generators": {"perf_bench_pipe": _options(self)}}

    def report(self, r: RunResult) -> str:
        """What `perf bench sched pipe` prints (tools/perf/bench/sched-pipe.c)."""
        usecs = elapsed_ns(r) // 1000
        who = "threads" if self.threaded else "processes"
        return ("# Running 'sched/pipe' benchmark:\n"
                f"# Executed {self.loops} pipe operations between two {who}\n\n"
                f" {'Total time':>14}: {_sec_ms(elapsed_ns(r))} [sec]\n\n"
                f" {usecs / self.loops:14f} usecs/op\n"
                f" {self.ops_per_sec(r):14d} ops/sec\n")

    def ops_per_sec(self, r: RunResult) -> int:
        """perf's rate: round trips per second of whole µs of the run's time."""
        usecs = elapsed_ns(r) // 1000
        return int(self.loops / (usecs / 1e6)) if usecs else 0


@dataclass(frozen=True)
class Cyclictest:
    """rt-tests' `cyclictest -t THREADS -p PRIORITY -i INTERVAL -d DISTANCE -l LOOPS [-D SECONDS]
    [-h HISTOGRAM] [-N] [-q] [-a CPUS]` (its defaults; threads 0: one per CPU, loops 0: until
    `duration`), in the cgroup `taskgroup`."""

    threads: int = 1
    priority: int = 0
    policy: str = "other"
    priospread: bool = False
    interval: int = 1000
    distance: int = 500
    loops: int = 0
    histogram: int = 0
    nsecs: bool = False
    affinity: tuple[int, ...] | None = None
    taskgroup: str | None = None
    # What the run and the report do, not the generator: -D's seconds, -H, -q.
    duration: int = 0
    histofall: bool = False
    quiet: bool = False
    OPTIONS: ClassVar[dict] = {"threads": "-t/--threads", "priority": "-p/--priority", "policy": "--policy",
                               "interval": "-i/--interval", "distance": "-d/--distance", "loops": "-l/--loops",
                               "histogram": "-h/--histogram", "affinity": "-a/--affinity",
                               "taskgroup": "--taskgroup", "duration": "-D/--duration"}

    def workload(self) -> dict:
        gen = {k: v for k, v in _options(self).items() if k not in ("duration", "histofall", "quiet")}
        wl = {"generators": {"cyclictest": gen}}
        return {**wl, "global": {"duration": self.duration}} if self.duration else wl

    def report(self, r: RunResult) -> str:
        """What cyclictest prints (rt-tests' cyclictest.c): its latency target, then each
        thread's line (`print_stat`) unless -q with a histogram, then the histogram
        (`print_hist`)."""
        rows = r.cyclictest_rows
        out = ["# /dev/cpu_dma_latency set to 0us\n"]
        if not (self.quiet and self.histogram):
            out += [self._stat(i, t) for i, t in enumerate(rows)]
        if self.histogram:
            out.append(self._hist(rows))
        return "".join(out)

    def _stat(self, i: int, t: dict) -> str:
        """`print_stat`'s line of thread `i`."""
        act = "%8d" if self.nsecs else "%5d"
        return (f"T:{i:2d} ({t['pid']:5d}) P:{t['priority']:2d} I:{t['interval_us']} C:{t['cycles']:7d} "
                f"Min:{t['min']:7d} Act:{act % t['act']} Avg:{act % _avg(t)} Max:{t['max']:8d}\n")

    def _hist(self, rows: list[dict]) -> str:
        """`print_hist`: one line per bucket (and, -H, the threads' sum), then the totals."""
        every = self.histofall and len(rows) > 1
        lines = ["# Histogram"]
        for i in range(self.histogram):
            counts = [t["hist"][i] for t in rows]
            lines.append(f"{i:06d} " + "\t".join(f"{n:06d}" for n in counts) + (f"\t{sum(counts):06d}" if every else ""))

        def row(label: str, values: list[int], width: int, total=None) -> str:
            values = values + ([total] if every and total is not None else [])
            return f"# {label}:" + "".join(f" {v:0{width}d}" for v in values)

        totals = [sum(t["hist"]) for t in rows]
        lines += [row("Total", totals, 9, sum(totals)),
                  row("Min Latencies", [t["min"] for t in rows], 5),
                  row("Avg Latencies", [_avg(t) for t in rows], 5),
                  row("Max Latencies", [t["max"] for t in rows], 5, max(t["max"] for t in rows)),
                  row("Histogram Overflows", [t["overflows"] for t in rows], 5, sum(t["overflows"] for t in rows)),
                  "# Histogram Overflow at cycle number:"]
        for i, t in enumerate(rows):
            others = t["overflows"] - len(t["outliers"])
            lines.append(f"# Thread {i}:" + "".join(f" {c:05d}" for c in t["outliers"])
                         + (f" # {others:05d} others" if others > 0 else ""))
        return "\n".join(lines) + "\n\n"


# schbench's `PIPE_TRANSFER_BUFFER`: the largest -p transfer (a larger one is cut to it).
PIPE_TRANSFER_BUFFER = 1 << 20


@dataclass(frozen=True)
class Schbench:
    """schbench's `-m MESSAGE_THREADS -t THREADS -r RUNTIME -w WARMUP -i INTERVAL -z ZERO
    -F KB -n OPERATIONS -s SLEEP_USEC -R RPS -A BUSY_PCT -p BYTES [-C] [-L] [--split PCT] [-M CPUS]
    [-W CPUS]` (its defaults; threads 0: the CPUs shared out; pipe 0: not a pipe test), in the
    cgroup `taskgroup`; `matrix_ps` and `memset_ps` (schedlab's): a multiply-add of its work and
    a 64-byte line of a pipe test's memset at the reference CPU's top speed, in ps (None: the
    engine's defaults); `work_stretch` (schedlab's): how much longer than `matrix_ps` says a
    request's work takes, as quantiles in 1/1000, in place of the platform's (None: the
    platform's)."""

    message_threads: int = 1
    threads: int = 0
    runtime: int = 30
    warmuptime: int = 0
    intervaltime: int = 10
    zerotime: int = 0
    cache_footprint: int = 256
    operations: int = 5
    sleep_usec: int = 100
    rps: int = 0
    auto_rps: int = 0
    pipe: int = 0
    calibrate: bool = False
    no_locking: bool = False
    split: int | None = None
    auto_pin: bool = False
    message_cpus: tuple[int, ...] | None = None
    worker_cpus: tuple[int, ...] | None = None
    matrix_ps: int | None = None
    memset_ps: int | None = None
    work_stretch: tuple[int, ...] | None = None
    taskgroup: str | None = None
    OPTIONS: ClassVar[dict] = {"message_threads": "-m/--message-threads", "threads": "-t/--threads",
                               "runtime": "-r/--runtime", "warmuptime": "-w/--warmuptime",
                               "intervaltime": "-i/--intervaltime", "zerotime": "-z/--zerotime",
                               "cache_footprint": "-F/--cache_footprint", "operations": "-n/--operations",
                               "sleep_usec": "-s/--sleep_usec", "rps": "-R/--rps", "auto_rps": "-A/--auto-rps",
                               "pipe": "-p/--pipe", "split": "--split",
                               "message_cpus": "-M/--message-cpus", "worker_cpus": "-W/--worker-cpus",
                               "matrix_ps": "--matrix-ps", "memset_ps": "--memset-ps",
                               "work_stretch": "--work-stretch", "taskgroup": "--taskgroup"}

    def workload(self) -> dict:
        return {"generators": {"schbench": _options(self)}}

    def report(self, r: RunResult) -> str:
        """What schbench prints (on its stderr): the worker count it chose, the split and the
        pinning, each interval's report, then the last (schbench.c `sleep_for_runtime`,
        `main`)."""
        out = ["auto pinning message and worker threads\n"] if self.auto_pin else []
        if not self.threads:
            nr_cpus = len(r.cpu_rows)
            out.append(f"setting worker threads to {-(-nr_cpus // self.message_threads)}\n")
        if self.split is not None:
            shared_kb = self.cache_footprint * (100 - self.split) // 100
            private_kb = self.cache_footprint * self.split // 100
            out += [f"split mode: {self.split}% private ({private_kb} KB per thread), "
                    f"{100 - self.split}% shared ({shared_kb} KB total)\n",
                    f"matrix sizes: private={_side(private_kb)}, shared={_side(shared_kb)}\n"]
        cpus = tuple(range(self.message_threads)) if self.auto_pin else self.message_cpus
        out += [f"Pinning to message thread index {i} cpu {cpus[i % len(cpus)]}\n"
                for i in range(self.message_threads) if cpus]
        reports: dict[int, dict[str, dict]] = {}
        for row in r.schbench_rows:
            reports.setdefault(row["report"], {})[row["stat"]] = row
        for rep in reports.values():
            out.append(self._pipe_report(rep) if self.pipe else self._report(rep, self.auto_rps > 0))
        return "".join(out)

    def json(self, r: RunResult, jobname: str | None, json_file: str) -> str:
        """What `-j FILE` writes (schbench.c `write_json_header`, `write_json_stats`,
        `write_json_footer`): the last report's percentiles, min and max of each histogram.
        Simplified, for a deterministic output: `version` is the kernel preset, `hostname`
        the platform, `time` 0 (schbench's is the wall clock), `sched_ext` disabled."""
        last = {}
        for row in r.schbench_rows:
            if row["last"]:
                last[row["stat"]] = row
        cmdline = " ".join(["schbench", *self.argv(), "-j", json_file, *(["-J", jobname] if jobname else [])])
        out = ['{"normal": {', f'"version": "{r.kernel}",']
        if jobname:
            out.append(f'"jobname": "{_json_escape(jobname)}",')
        out += [f'"hostname": "{r.platform}",', '"sched_ext": "disabled",',
                f'"cmdline": "{_json_escape(cmdline)}"}},', '"int": {"time": 0, ',
                _json_stats(last["wakeup"], "wakeup_latency")]
        if not self.pipe:  # (a pipe test's has the wakeups only)
            out += [", ", _json_stats(last["request"], "request_latency"), ", ", _json_stats(last["rps"], "rps")]
        return "".join(out + [f', "runtime": {self.runtime}', "}}"])

    def argv(self) -> list[str]:
        """schbench's options that give this run (those not at their defaults)."""
        words = []
        for name, option in self.OPTIONS.items():
            value = getattr(self, name)
            if name in ("matrix_ps", "memset_ps", "work_stretch", "taskgroup") or value == getattr(Schbench, name, None):
                continue
            flag = option.split("/")[0]
            words += [flag, ",".join(map(str, value)) if isinstance(value, tuple) else str(value)]
        words += [flag for flag, on in (("-C", self.calibrate), ("-L", self.no_locking)) if on]
        return words + (["-M", "auto"] if self.auto_pin else [])

    @staticmethod
    def _report(rep: dict[str, dict], auto_rps: bool) -> str:
        """One report: the three histograms (`show_latencies`), then its rates and delays
        (the last, under -A: the rate it ended at)."""
        w = rep["wakeup"]
        lines = [_latencies(rep["wakeup"], "Wakeup Latencies", "usec", (50, 90, 99, 99.9), 99),
                 _latencies(rep["request"], "Request Latencies", "usec", (50, 90, 99, 99.9), 99),
                 _latencies(rep["rps"], "RPS", "requests", (20, 50, 90), 50)]
        delay = f"sched delay: message {w['delay_message_us']} (usec) worker {w['delay_worker_us']} (usec)\n"
        if w["last"]:
            rate = f"final rps goal was {w['rps_goal']}\n" if auto_rps else f"average rps: {w['rps_now']:.2f}\n"
            return "".join(lines) + rate + delay
        return "".join(lines) + delay + f"current rps: {w['rps_now']:.2f}\n"


    def _pipe_report(self, rep: dict[str, dict]) -> str:
        """A pipe test's report (`main`'s only): the wakeup latencies from the 20th percentile,
        then the workers' loops a second of their summed run times and the bytes a second
        (`loop_count · pipe / loop_runtime` in integers, as schbench divides them)."""
        w = rep["wakeup"]
        loops_per_sec = w["loops"] * 1_000_000 / w["worker_runtime_us"]
        size, unit = _pretty_size(w["loops"] * self.pipe * 1_000_000 // w["worker_runtime_us"])
        return (_latencies(w, "Wakeup Latencies", "usec", _PLIST, 99)
                + f"avg worker transfer: {loops_per_sec:.2f} ops/sec {size:.2f}{unit}/s\n")


# The percentiles schbench computes (`plist`); a report prints some of them.
_PLIST = (20, 50, 90, 99, 99.9)


def _latencies(row: dict, label: str, units: str, shown: tuple, star: float) -> str:
    """`show_latencies`: the header, the chosen percentiles (the starred one marked), min and
    max."""
    out = [f"{label} percentiles ({units}) runtime {row['runtime_s']} (s) ({row['samples']} total samples)\n"]
    for p, value, count in zip(_PLIST, row["values"], row["counts"]):
        if p in shown:
            out.append(f"\t{'* ' if p == star else '  '}{p:2.1f}th: {value:<10d} ({count} samples)\n")
    out.append(f"\t  min={row['min']}, max={row['max']}\n")
    return "".join(out)


def _json_stats(row: dict, label: str) -> str:
    """`write_json_stats`: every percentile of `plist`, then min and max; nothing for a
    histogram without samples."""
    if not row["samples"]:
        return ""
    pcts = ", ".join(f'"{label}_pct{p:2.1f}": {v}' for p, v in zip(_PLIST, row["values"]))
    return pcts + f', "{label}_min": {row["min"]},"{label}_max": {row["max"]}'


def _pretty_size(number: float) -> tuple[float, str]:
    """`pretty_size`: divided by 1024 while at least 1024, up to EB, with its unit."""
    units = ("B", "KB", "MB", "GB", "TB", "PB", "EB")
    divs = 0
    while number >= 1024 and divs + 1 < len(units):
        divs += 1
        number /= 1024
    return number, units[divs]


def _json_escape(text: str) -> str:
    """`escape_string`: a double quote gets a backslash."""
    return text.replace('"', '\\"')


def _side(kb: int) -> int:
    """A matrix's side for KB of footprint: sqrt(KB·1024/3/8), truncated as schbench does."""
    return int(math.sqrt(kb * 1024 // 3 // 8))


def _avg(t: dict) -> int:
    """cyclictest's `(long)(avg / cycles)`: its double sum over the cycles, truncated."""
    return int(t["sum"] / t["cycles"]) if t["cycles"] else 0


def elapsed_ns(r: RunResult) -> int:
    """The benchmark's time: from when it started its tasks (hackbench's clock, once they are
    all ready; else the run's start) to the last task's exit (the run goes on while kernel
    timers are pending)."""
    return max(t["ended_ns"] for t in r.task_rows) - (r.bench_start_ns or 0)


def spec(bench: Hackbench | PipeBench | Cyclictest, platform: str, *, sets=(), **options) -> RunSpec:
    """`bench` on `platform` (with the cost model, on by default: without it system calls
    are free and the benchmark takes no time)."""
    return RunSpec.of(bench.workload(), platform, sets=tuple(sets), **options)


def option_error(bench: Hackbench | PipeBench | Cyclictest | Schbench, message: str) -> str:
    """The core's message about the generated run file's `generators.NAME.KEY (line, column)`
    (or `generators[N].KEY`), naming the command-line option instead."""
    m = re.search(r"generators(?:\.\w+|\[\d+\])\.(\w+)(?: \(line \d+, column \d+\))?", message)
    return message.replace(m[0], bench.OPTIONS[m[1]]) if m and m[1] in bench.OPTIONS else message


def _options(bench) -> dict:
    return {k: v for k, v in asdict(bench).items() if v is not None}


def _sec_ms(ns: int) -> str:
    """Seconds with three decimals, truncated as both tools print them (%lu.%03lu)."""
    usec = ns // 1000
    return f"{usec // 1_000_000}.{usec % 1_000_000 // 1000:03d}"
