"""hackbench and perf bench sched pipe, simulated: the run file a command line means, the
time the benchmark measures (to its last task's exit) and the real tools' reports.

The engine builds both from a run file's `generators` object (docs/benchmarks.md); these
helpers write that object from the tools' options."""

from __future__ import annotations

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


def elapsed_ns(r: RunResult) -> int:
    """The benchmark's time: from when it started its tasks (hackbench's clock, once they are
    all ready; else the run's start) to the last task's exit (the run goes on while kernel
    timers are pending)."""
    return max(t["ended_ns"] for t in r.task_rows) - (r.bench_start_ns or 0)


def spec(bench: Hackbench | PipeBench, platform: str, *, sets=(), **options) -> RunSpec:
    """`bench` on `platform` (with the cost model, on by default: without it system calls
    are free and the benchmark takes no time)."""
    return RunSpec.of(bench.workload(), platform, sets=tuple(sets), **options)


def option_error(bench: Hackbench | PipeBench, message: str) -> str:
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
