"""The `schedlab` command: a thin layer over the library."""

import argparse
import io
import os
import signal
import sys
import tempfile
from contextlib import contextmanager, redirect_stderr
from pathlib import Path

import schedlab
from schedlab import _core
from schedlab.reproduce import experiments
from schedlab.lisa import plat_info_path
from schedlab.output import Staged, check_outputs, write_text
from schedlab.replays import KTHREADS_OFF
from schedlab.run import fair_sets, governor_sets
from schedlab.units import UNITS_NS, parse_duration, unsigned

KERNELS = _core.kernels()


def _duration(text: str) -> int:
    try:
        return parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _count(text: str) -> int:
    if not text.isdigit() or int(text) > 1 << 31:
        raise argparse.ArgumentTypeError(f"'{text}' is not a count (0 to {1 << 31})")
    return int(text)


def _seconds(text: str) -> int:
    """cyclictest's -D (`parse_time_string`): seconds, or minutes, hours or days with m, h, d."""
    scale = {"m": 60, "h": 3600, "d": 86400}.get(text[-1:].lower(), 1)
    digits = text[:-1] if scale > 1 or text[-1:].lower() == "s" else text
    if not digits.isdigit() or int(digits) * scale > 366 * 86400:
        raise argparse.ArgumentTypeError(f"'{text}' is not a time (seconds, or a number with m, h or d; at most 366d)")
    return int(digits) * scale


def _whole(text: str) -> int:
    """A whole number for an option whose range the core checks (and names)."""
    if not text.isdigit() or int(text) >= 1 << 64:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number")
    return int(text)


def _quantiles(text: str) -> tuple[int, ...]:
    """Comma-separated whole numbers (a distribution's quantiles, whose range the core checks)."""
    return tuple(_whole(part) for part in text.split(","))


def _seeds(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 1000:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seeds (1 to 1000)")
    return int(text)


def _divergences(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 10_000:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of divergences (1 to 10000)")
    return int(text)


def _targets(text: str) -> list[int]:
    try:
        return [int(t) for t in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of util_avg values") from None


def _cpu_options(p: argparse.ArgumentParser, exclusive: bool) -> None:
    group = p.add_mutually_exclusive_group() if exclusive else p
    group.add_argument("--capacity", type=int, default=1024, help="arch_scale_cpu_capacity, 1..1024 (default 1024)")
    group.add_argument("--freq-ratio", type=float, default=1.0, help="current/max frequency, (0, 1] (default 1)")
    p.add_argument("--invariance", choices=["clock_pelt", "legacy"], default="clock_pelt",
                   help="scale invariance: clock_pelt (5.1+, default) or legacy (before 5.1)")


def _switch_options(p: argparse.ArgumentParser, kernel: str | None = "6.12") -> None:
    default = kernel or "the trace's, else 6.12"
    p.add_argument("--kernel", choices=KERNELS, default=kernel, help=f"kernel preset: {', '.join(KERNELS)} (default {default})")
    p.add_argument("--fair", choices=["eevdf", "cfs"], help="fair pick policy (default: the kernel's)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a tunable")
    p.add_argument("--feature", action="append", default=[], metavar="NAME|NO_NAME", help="turn a SCHED_FEAT on/off")
    p.add_argument("--governor", action="append", default=[], metavar="[POLICY=]NAME",
                   help="cpufreq governor of every policy or of one (default performance)")


def _sets(args) -> list[str]:
    """--set values, with --fair and --governor folded in."""
    return args.set + list(fair_sets(args.fair)) + governor_sets(args.governor)


# Warnings printed before the rest are counted (20,000 taskgroups would print 20,000).
SHOWN_WARNINGS = 10

EXIT_CODES = """exit status:
  0    success
  1    a reproduced figure outside its tolerance, a sweep point that failed, or an internal
       error (a schedlab bug)
  2    bad input: usage, workload, platform, switches, unwritable outputs; a deadlock
  130  interrupted (Ctrl-C); no output file is left behind
  143  terminated (SIGTERM); no output file is left behind

docs/outputs.md describes every output, the summary JSON's fields and these codes."""


def _run_options(r: argparse.ArgumentParser, units: str, duration: bool = True) -> None:
    """The platform, switches, cgroups and outputs of a run (and its --duration)."""
    r.add_argument("--platform", default="smp:4", help="built-in name, smp:N, qemu-tcg:N[@K], a .toml file, or LISA's plat_info.yml "
                                                        "(default smp:4)")
    if duration:
        r.add_argument("--duration", type=_duration, help=f"simulated time, overrides global.duration ({units})")
    _switch_options(r)
    r.add_argument("--cgroup", action="append", default=[], metavar="PATH:KEY=VALUE[,KEY=VALUE]",
                   help="describe a cgroup (repeatable): weight=1..10000 (cpu.weight), weight.nice=-20..19, "
                        "shares=2..262144 (v1 cpu.shares), idle=0|1, max=QUOTA/PERIOD µs or max")
    r.add_argument("--idle-cgroups", type=_count, default=0, metavar="N",
                   help="add N empty cgroups /idle-0 … (at most 100000 in all)")
    r.add_argument("--trace", metavar="FILE",
                   help="write a trace: FILE.dat (trace.dat for trace-cmd, KernelShark, LISA), "
                        "FILE.perfetto-trace or .pftrace (Perfetto), FILE.txt (trace-cmd report text)")
    r.add_argument("--trace-format", choices=["txt", "dat", "dat6", "perfetto"],
                   help="the trace's format whatever its name (default: from its extension; dat is "
                        "version 7 with zstd-compressed pages, dat6 version 6)")
    r.add_argument("--log-dir", metavar="DIR", help="write rt-app per-thread logs there")
    r.add_argument("--summary", metavar="FILE.json", help="write the run summary as JSON")
    r.add_argument("--schedstat", metavar="FILE",
                   help="write /proc/schedstat as it reads at the end of the run (version 16; 15 under 6.1)")


def _executor_options(r: argparse.ArgumentParser, what: str) -> None:
    """Where many runs go: local processes or a Dask cluster (docs/analysis.md)."""
    r.add_argument("-j", "--jobs", type=_count, metavar="N", help="local worker processes (default: every core)")
    r.add_argument("--dask", metavar="tcp://HOST:PORT", help=f"run the {what} on this Dask scheduler's workers")


def _table_options(r: argparse.ArgumentParser, report: bool) -> None:
    """--top and --quiet: run's task table (a benchmark's, after its report and only with --top)."""
    shown = "after the report, " if report else ""
    r.add_argument("--top", type=_count, default=None if report else 30, metavar="N",
                   help=f"{shown}show the N tasks with the most run time" + ("" if report else " (default 30; 0: all)"))
    r.add_argument("--quiet", "-q", action="store_true",
                   help=f"print no {'report or ' if report else ''}table (warnings and errors only)")


def _benchmark_options(r: argparse.ArgumentParser, units: str) -> None:
    r.add_argument("--taskgroup", metavar="PATH", help="run its tasks in this cgroup (e.g. /a/b; default: the root)")
    _run_options(r, units)
    _table_options(r, report=True)


def _cyclictest_parser(commands, units: str) -> None:
    """cyclictest's own options (rt-tests 2.x: `-h` is its histogram, `-q` its summary, `-D`
    its duration), then a run's."""
    r = commands.add_parser("cyclictest", add_help=False, help="simulate rt-tests' cyclictest; print its report",
                            description="Measuring threads that wake every interval on an absolute timer and "
                                        "report how late they ran (docs/benchmarks.md).")
    r.add_argument("--help", action="help", help="show this help message and exit")
    r.add_argument("-t", "--threads", type=_whole, nargs="?", const=0, default=1, metavar="NUM",
                   help="measuring threads (default 1; -t alone: one per CPU)")
    r.add_argument("-p", "--priority", type=_whole, metavar="PRIO",
                   help="priority of the highest-priority thread (SCHED_FIFO unless --policy rr)")
    r.add_argument("--policy", choices=["other", "normal", "batch", "idle", "fifo", "rr"],
                   help="the threads' policy (without a priority cyclictest runs them SCHED_OTHER)")
    r.add_argument("--priospread", action="store_true", help="each thread one priority below the one before")
    r.add_argument("-i", "--interval", type=_whole, default=1000, metavar="INTV",
                   help="base interval of the threads in µs (default 1000)")
    r.add_argument("-d", "--distance", type=_whole, default=500, metavar="DIST",
                   help="distance of the threads' intervals in µs (default 500)")
    r.add_argument("-l", "--loops", type=_whole, default=0, metavar="LOOPS", help="periods per thread (default 0: until -D)")
    r.add_argument("-D", "--duration", dest="ct_duration", type=_seconds, default=0, metavar="TIME",
                   help="length of the test in seconds (suffix m, h or d: minutes, hours, days)")
    r.add_argument("-h", "--histogram", type=_whole, default=0, metavar="US",
                   help="dump a latency histogram of US buckets after the run (sets the distance to 0)")
    r.add_argument("-H", "--histofall", type=_whole, metavar="US", help="as -h, with a column summing the threads")
    r.add_argument("-N", "--nsecs", action="store_true", help="latencies in ns instead of µs")
    r.add_argument("-a", "--affinity", nargs="?", const="", metavar="CPUSET",
                   help="pin thread N to the set's CPU N mod its size (default: every CPU in turn)")
    r.add_argument("-m", "--mlockall", action="store_true", help="accepted; memory is not modelled")
    r.add_argument("-q", "--quiet", dest="ct_quiet", action="store_true", help="print a summary only on exit")
    r.add_argument("--taskgroup", metavar="PATH", help="run its threads in this cgroup (e.g. /a/b; default: the root)")
    _run_options(r, units, duration=False)
    r.add_argument("--top", type=_count, metavar="N", help="after the report, show the N tasks with the most run time")
    r.set_defaults(duration=None, quiet=False)


def _schbench_parser(commands, units: str) -> None:
    """schbench's own options (schbench.c's `long_options`), then a run's."""
    r = commands.add_parser("schbench", add_help=False, help="simulate schbench; print its report",
                            description="Message threads waking worker threads that sleep, then multiply "
                                        "matrices under their CPU's lock; wakeup and request latency "
                                        "percentiles and requests per second (docs/benchmarks.md).")
    r.add_argument("--help", action="help", help="show this help message and exit")
    r.add_argument("-m", "--message-threads", type=_whole, default=1, metavar="N",
                   help="number of message threads (def: 1)")
    r.add_argument("-t", "--threads", type=_whole, default=0, metavar="N",
                   help="worker threads per message thread (def: num_cpus)")
    r.add_argument("-r", "--runtime", type=_whole, default=30, metavar="S",
                   help="How long to run before exiting (seconds, def: 30)")
    r.add_argument("-w", "--warmuptime", type=_whole, default=0, metavar="S",
                   help="how long to warmup before resetting stats (seconds, def: 0)")
    r.add_argument("-i", "--intervaltime", type=_whole, default=10, metavar="S",
                   help="interval for printing latencies (seconds, def: 10)")
    r.add_argument("-z", "--zerotime", type=_whole, default=0, metavar="S",
                   help="interval for zeroing latencies (seconds, def: never)")
    r.add_argument("-F", "--cache_footprint", type=_whole, default=256, metavar="KB",
                   help="cache footprint (kb, def: 256)")
    r.add_argument("-n", "--operations", type=_whole, default=5, metavar="N",
                   help="think time operations to perform (def: 5)")
    r.add_argument("-s", "--sleep_usec", type=_whole, default=100, metavar="US",
                   help="think time sleep (usecs) per request (def: 100)")
    r.add_argument("-R", "--rps", type=_whole, default=0, metavar="N", help="requests per second mode (count, def: 0)")
    r.add_argument("-C", "--calibrate", action="store_true", help="sleep before the request's clock starts; no locking")
    r.add_argument("-L", "--no-locking", action="store_true", help="don't spinlock during CPU work (def: locking on)")
    r.add_argument("--split", type=_whole, metavar="PCT",
                   help="percent of cache footprint that is private per thread (0-100, def: all private)")
    r.add_argument("-M", "--message-cpus", metavar="CPUS",
                   help="pin message threads to these CPUs 'a-m,n-z' or 'auto' (def: no pinning)")
    r.add_argument("-W", "--worker-cpus", metavar="CPUS",
                   help="pin worker threads to these CPUs 'a-m,n-z' or 'auto' (def: no pinning)")
    r.add_argument("-A", "--auto-rps", dest="sb_auto_rps", type=_whole, default=0, metavar="PCT",
                   help="grow RPS until cpu utilization hits target (def: none)")
    r.add_argument("-p", "--pipe", dest="sb_pipe", type=_whole, default=0, metavar="BYTES",
                   help="transfer size bytes to simulate a pipe test (def: 0)")
    r.add_argument("-j", "--json", dest="sb_json", metavar="FILE",
                   help="output in json format (def: false; -: standard output, the report then on stderr)")
    r.add_argument("-J", "--jobname", dest="sb_jobname", metavar="NAME",
                   help="an optional jobname to add to the json output (def: none)")
    r.add_argument("--matrix-ps", type=_whole, metavar="PS",
                   help="schedlab's: one multiply-add of the work at the reference CPU's top speed, in ps "
                        "(default 377, measured on an x86-64 host)")
    r.add_argument("--memset-ps", type=_whole, metavar="PS",
                   help="schedlab's: one 64-byte line of -p's memset at the reference CPU's top speed, in ps "
                        "(default 416, measured on an x86-64 host)")
    r.add_argument("--work-stretch", type=_quantiles, metavar="Q,Q,...",
                   help="schedlab's: how much longer than --matrix-ps says a request's work takes, as ascending "
                        "quantiles in 1/1000, e.g. 1000,1020,1300 (default: the platform's)")
    r.add_argument("--taskgroup", metavar="PATH", help="run its threads in this cgroup (e.g. /a/b; default: the root)")
    _run_options(r, units, duration=False)
    r.add_argument("--top", type=_count, metavar="N", help="after the report, show the N tasks with the most run time")
    r.set_defaults(duration=None, quiet=False)


def parser() -> argparse.ArgumentParser:
    units = "/".join(UNITS_NS)
    top = argparse.ArgumentParser(
        prog="schedlab",
        description="A fast, deterministic, Linux-faithful simulator of the kernel's CPU scheduler.",
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("--debug", action="store_true",
                     help="print the traceback of an internal error (also SCHEDLAB_DEBUG=1)")
    top.add_argument("--version", action="version", version=f"schedlab {schedlab.__version__}")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = commands.add_parser("pelt", help="PELT signals of one task entity (kernel 6.12 arithmetic)")
    pelt_commands = p.add_subparsers(dest="pelt_command", required=True, metavar="SUBCOMMAND")

    r = pelt_commands.add_parser("replay", help="replay updates from CSV (now_ns,load,runnable,running)")
    r.add_argument("input", metavar="IN.csv", help="input CSV, or - for standard input")
    r.add_argument("--weight", type=int, default=1024, help="se_weight of the entity (default 1024, nice 0)")

    r = pelt_commands.add_parser("periodic", help="signal of a periodic task, with seed 000's closed-form bounds")
    r.add_argument("--run", type=_duration, required=True, help=f"work per period at full capacity ({units})")
    r.add_argument("--period", type=_duration, required=True, help=f"activation period ({units})")
    r.add_argument("--duration", type=_duration, default=parse_duration("2s"), help="simulated time (default 2s)")
    r.add_argument("--tick", type=_duration, default=parse_duration("4ms"), help="tick period (default 4ms, HZ=250)")
    r.add_argument("--kernel", choices=KERNELS, default="6.12", help="util_est as the kernel keeps it: its form (6.12+ EWMA; 6.1, 6.6 enqueued/ewma) and when it samples (6.12, 6.18: before the dequeue's PELT update; the others after)")
    _cpu_options(r, exclusive=False)

    r = pelt_commands.add_parser("ramp", help="time for an always-running task to reach util_avg values")
    r.add_argument("--to", type=_targets, default=[972, 486, 256], help="util_avg values (default 972,486,256)")
    r.add_argument("--tick", type=_duration, default=None, help="update every tick instead of every PELT period")
    _cpu_options(r, exclusive=True)

    r = commands.add_parser("run", help="simulate an rt-app workload on a platform")
    r.add_argument("workload", metavar="WORKLOAD.json", help="rt-app JSON workload")
    _run_options(r, units)
    r.add_argument("-o", "--output", dest="trace", metavar="FILE",
                   help="the trace to write, as --trace (trace-cmd record's -o)")
    r.add_argument("--json-c", action="store_true",
                   help="read repeated keys as rt-app's json-c does (default: workgen, keep them in order)")
    _table_options(r, report=False)

    r = commands.add_parser("report", help="simulate a workload and write an HTML report of the run",
                            description="One self-contained HTML file: the run's configuration, summary tables "
                                        "and plots (docs/analysis.md), readable offline.")
    r.add_argument("workload", nargs="?", metavar="WORKLOAD.json", help="rt-app JSON workload")
    r.add_argument("-o", "--output", required=True, metavar="REPORT.html", help="the report to write")
    r.add_argument("--result", metavar="SUMMARY.json",
                   help="report on a saved run summary (run --summary) instead: its tables and energy")
    _run_options(r, units)
    r.add_argument("--json-c", action="store_true", help="read repeated keys as rt-app's json-c does")

    r = commands.add_parser("hackbench", help="simulate rt-tests' hackbench; print its report",
                            description="hackbench's groups of senders and receivers passing messages over "
                                        "Unix sockets or pipes (docs/benchmarks.md).")
    r.add_argument("-g", "--groups", type=_whole, default=10, help="groups of senders and receivers (default 10)")
    r.add_argument("-f", "--fds", type=_whole, default=20,
                   help="senders and receivers per group (default 20)")
    r.add_argument("-l", "--loops", type=_whole, default=100,
                   help="messages each sender writes to each receiver (default 100)")
    r.add_argument("-s", "--datasize", type=_whole, default=100, help="bytes per message (default 100)")
    r.add_argument("-p", "--pipe", action="store_true", help="pipes instead of Unix stream sockets")
    mode = r.add_mutually_exclusive_group()
    mode.add_argument("-T", "--threads", action="store_true", help="threads of one process")
    mode.add_argument("-P", "--process", action="store_true", help="processes (the default)")
    _benchmark_options(r, units)

    _cyclictest_parser(commands, units)
    _schbench_parser(commands, units)

    r = commands.add_parser("perf-bench-pipe", help="simulate `perf bench sched pipe`; print its report",
                            description="Two tasks passing an int back and forth over two pipes "
                                        "(docs/benchmarks.md).")
    r.add_argument("-l", "--loop", type=_whole, default=1_000_000,
                   help="round trips (default 1000000, as perf)")
    r.add_argument("-T", "--threaded", action="store_true", help="two threads instead of two processes")
    _benchmark_options(r, units)

    r = commands.add_parser("bisect", help="which switches between two configurations move a metric past a "
                                           "threshold",
                            description="Run WORKLOAD with side a's options plus subsets of the switches whose "
                                        "values differ on side b, and narrow them by delta debugging to a "
                                        "smallest set (1-minimal) that moves METRIC past THRESHOLD "
                                        "(docs/analysis.md).")
    r.add_argument("workload", metavar="WORKLOAD.json", help="rt-app JSON workload")
    r.add_argument("--a", metavar="'OPTIONS'", default="", help="run options of side a, e.g. \"--kernel 6.1\"")
    r.add_argument("--b", metavar="'OPTIONS'", default="", help="run options of side b, e.g. \"--kernel 6.12\"")
    r.add_argument("--metric", required=True, metavar="PATH",
                   help="a summary figure: energy_mj.total, simulated_s, or a list's field reduced, "
                        "tasks.latency_p99_ns.max; or a frame's column reduced, "
                        "df_latency_wakeup.wakeup_latency.p99 (max, min, sum, mean, median, count, pNN)")
    r.add_argument("--threshold", required=True, type=float, metavar="X",
                   help="the value past which (on side b's side) the metric has moved")
    _executor_options(r, "runs")
    _run_options(r, units)

    r = commands.add_parser("compare", help="one workload under two configurations, side by side",
                            description="Run WORKLOAD with the shared run options plus --a's, then plus "
                                        "--b's (or read two saved summaries with --results), and print "
                                        "each figure of both, b − a and the relative difference; with "
                                        "--seeds N, N seeded runs a side and the difference's 95%% "
                                        "confidence interval (docs/analysis.md).")
    r.add_argument("workload", nargs="?", metavar="WORKLOAD.json", help="rt-app JSON workload")
    r.add_argument("--a", metavar="'OPTIONS'", default="", help="run options of side a, e.g. \"--kernel 6.1\"")
    r.add_argument("--b", metavar="'OPTIONS'", default="", help="run options of side b, e.g. \"--kernel 6.12\"")
    r.add_argument("--seeds", type=_seeds, default=1, metavar="N",
                   help="runs a side, with --set seed=1..N (default 1: one unseeded run)")
    r.add_argument("--results", nargs=2, metavar=("A.json", "B.json"),
                   help="compare two saved run summaries (run --summary) instead of running")
    r.add_argument("-o", "--output", metavar="COMPARE.html", help="write the comparison report")
    r.add_argument("--explain", nargs="?", const=1, type=_divergences, metavar="N",
                   help="run both sides in lock-step and print the first N (default 1) scheduling decisions "
                        "they take differently, with the values each kernel function weighed")
    _run_options(r, units)
    r.add_argument("--json-c", action="store_true", help="read repeated keys as rt-app's json-c does")

    r = commands.add_parser("sweep", help="run a grid of configurations; one Parquet row per run",
                            description="Every combination of GRID.toml's axes over its base settings "
                                        "(docs/analysis.md), on local processes or a Dask cluster. Points "
                                        "already in the output are skipped: run it again to resume.")
    r.add_argument("grid", metavar="GRID.toml")
    r.add_argument("-o", "--output", metavar="RESULTS.parquet",
                   help="the results (default: GRID.parquet beside the grid)")
    r.add_argument("--artefacts", metavar="DIR",
                   help="also keep each point's trace.dat and summary JSON in DIR/POINT/")
    _executor_options(r, "points")

    r = commands.add_parser("check", help="validate a workload and print its task/phase structure")
    r.add_argument("workload", metavar="WORKLOAD.json")
    r.add_argument("--json-c", action="store_true", help="read repeated keys as rt-app's json-c does")

    r = commands.add_parser("replay", help="rebuild the threads of a kernel trace (trace.dat, Perfetto or text) "
                                           "as an rt-app workload")
    r.add_argument("trace", metavar="TRACE", help="a trace.dat (trace-cmd record), a Perfetto trace, or "
                                                  "trace-cmd report or tracefs text (gzipped or not)")
    r.add_argument("--platform", metavar="NAME",
                   help="the traced machine: a built-in name, smp:N, a .toml file or LISA's plat_info.yml (default: "
                        "the plat_info.yml beside the trace, else smp:N for the trace's CPUs)")
    r.add_argument("-o", "--output", metavar="WORKLOAD.json",
                   help="write the workload there (default: standard output, unless --check)")
    r.add_argument("--attrs", metavar="THREADS.toml",
                   help="what the trace cannot say of its threads (deadline parameters, uclamp, cgroup, "
                        "affinity): rt-app task keys in a table per task name (comm-pid) or comm")
    r.add_argument("--check", action="store_true",
                   help="run the workload under the trace's conditions (the switches below: say its governor) "
                        "and set each thread's figures beside the trace's")
    r.add_argument("--top", type=int, default=30, metavar="N", help="--check's N busiest threads (default 30)")
    r.add_argument("--b", metavar="'OPTIONS'",
                   help="what if: the workload under the trace's conditions against the same with these run "
                        "options on top, e.g. \"--kernel 6.1 --governor schedutil --platform pixel6\"")
    r.add_argument("--report", metavar="COMPARE.html", help="--b: also write compare's HTML report there")
    r.add_argument("--seeds", type=_seeds, default=1, metavar="N",
                   help="--b: runs a side, with --set seed=1..N, and the difference's 95%% confidence "
                        "interval (default 1: one unseeded run)")
    _switch_options(r, kernel=None)

    r = commands.add_parser("platforms", help="list the built-in platforms, or one platform's sched domains")
    r.add_argument("name", nargs="?", metavar="PLATFORM", help="a built-in name, smp:N, qemu-tcg:N[@K], a .toml file or LISA's plat_info.yml")
    r.add_argument("--domains", action="store_true",
                   help="print PLATFORM's sched domains, per CPU, as /sys/kernel/debug/sched/domains shows them")
    r = commands.add_parser("features", help="list every switch and its default under each kernel preset")
    r.add_argument("--between", nargs=2, metavar=("OLD", "NEW"), choices=KERNELS,
                   help="only the switches whose defaults differ between two kernel presets, and the run "
                        "options that give OLD's preset NEW's value")

    r = commands.add_parser("reproduce", help="reproduce the published figures and judge them")
    r.add_argument("names", nargs="*", metavar="NAME", help="experiments to run (default: all)")
    r.add_argument("--list", action="store_true", help="list the experiments and exit")
    _executor_options(r, "experiments' runs")
    r.add_argument("--report", metavar="OUT.html", help="also write the figures and their plots as an HTML report")
    return top


def _replay(args) -> int:
    from schedlab.inputs import read_bytes

    name = "<stdin>" if args.input == "-" else args.input
    data = read_bytes("/dev/stdin" if args.input == "-" else args.input)
    try:
        out = schedlab._core.pelt_replay_csv(data, unsigned("--weight", args.weight))
    except schedlab.InputError as e:
        return _fail(f"{name}: {e}")
    sys.stdout.buffer.write(out)
    return 0


def _periodic(args) -> int:
    from schedlab import pelt

    df = pelt.periodic(run=args.run, period=args.period, capacity=args.capacity, freq_ratio=args.freq_ratio,
                       invariance=args.invariance, duration=args.duration, tick=args.tick, kernel=args.kernel)
    a = df.attrs
    sys.stdout.write(df.to_csv(index=False, lineterminator="\n"))
    # On stderr: the CSV stays rows only, for pandas, polars and spreadsheets.
    print(f"settled util_avg over the last period: min {a['settled_min']:.0f} max {a['settled_max']:.0f}; "
          f"seed 000 closed form ({args.invariance}): min {a['closed_form_min']:.2f} max {a['closed_form_max']:.2f}",
          file=sys.stderr)
    return 0


def _ramp(args) -> int:
    import pandas as pd

    from schedlab import pelt

    df = pelt.ramp(args.to, capacity=args.capacity, freq_ratio=args.freq_ratio, invariance=args.invariance,
                   tick=args.tick)
    lines = ["target,periods,ms"]
    for target, periods, ms in zip(df["target"], df["periods"], df["ms"]):
        if pd.isna(periods):
            lines.append(f"{target},not reachable,not reachable")
        else:
            lines.append(f"{target},{periods:g},{ms:.3f}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _reproduce(args) -> int:
    _, Table = _rich()
    registry = experiments()
    unknown = [n for n in args.names if n not in registry]
    if unknown:
        return _fail(f"reproduce: unknown experiment '{unknown[0]}' (known: {', '.join(registry)})")
    console = _stdout_console(120)
    if args.list:
        for e in registry.values():
            console.print(f"{e.name}: {e.title} [{e.source}]", highlight=False)
        return 0
    outcomes = _reproduce_runs(args, list(args.names or registry))
    if args.report:
        from schedlab.reproduce import report_html

        write_text(args.report, report_html(outcomes))
    failed = explained = 0
    for name, (figures, _) in outcomes.items():
        e = registry[name]
        table = Table(title=f"[bold]{e.name}[/bold]: {e.title}", title_justify="left",
                      caption=f"Source: {e.source}", caption_justify="left")
        kernel = any(f.expected for f in figures)
        for column in ("figure", "source") + ("kernel",) * kernel + ("schedlab", "", "tolerance", "verdict"):
            table.add_column(column)
        for f in figures:
            failed += not (f.ok or f.explained)
            explained += not f.ok and bool(f.explained)
            verdict = ("[green]OK[/green]" if f.ok else f"[yellow]OUTSIDE: {f.explained}[/yellow]"
                       if f.explained else "[red bold]FAIL[/red bold]")
            table.add_row(f.label, f.source, *(f.expected,) * kernel, f.measured, f.detail, f.tolerance, verdict)
        console.print(table, highlight=False)
        for note in e.footnotes:
            console.print(f"  * {note}", highlight=False)
        console.print()
    if failed:
        summary = f"{failed} figure(s) outside tolerance"
    elif explained:
        summary = f"all figures within tolerance but {explained}, outside for the reason each gives"
    else:
        summary = "all figures within tolerance"
    console.print(summary, highlight=False)
    return 1 if failed else 0


def _reproduce_runs(args, names: list[str]) -> dict:
    """Every run of the experiments `names` on the sweep executors, judged, with a progress bar."""
    from rich.progress import Progress

    from schedlab.reproduce import reproduce

    console = _rich()[0](stderr=True)
    with _executor(args) as client, Progress(console=console, transient=True, disable=not console.is_terminal) as bar:
        job = bar.add_task("runs", total=None)
        return reproduce(names, jobs=args.jobs, client=client,
                         progress=lambda done, total: bar.update(job, completed=done, total=total))


@contextmanager
def _executor(args):
    """The Dask client `--dask` names (closed after), or None: local processes."""
    from schedlab import sweeps

    client = sweeps.connect(args.dask) if args.dask else None
    try:
        yield client
    finally:
        if client is not None:
            client.close()


def _run(args) -> int:
    r, status = _simulate(args, args.workload, _sets(args), json_c=args.json_c)
    if not args.quiet:
        _run_tables(args, r, _rich()[1])
    return status


def _report(args) -> int:
    import tempfile

    from schedlab import report

    check_outputs({**_inputs(args, args.workload), "the result": args.result}, {
        "the report": args.output, "the summary": args.summary, "the trace": args.trace,
        "the schedstat": args.schedstat, "the log directory": args.log_dir})
    if args.result:
        from schedlab.run import RunResult

        write_text(args.output, report.report_html(RunResult.load(args.result)))
        return 0
    if not args.workload:
        return _fail("report: give a WORKLOAD.json (or --result SUMMARY.json)")
    output = Staged(args.output)
    try:
        with tempfile.TemporaryDirectory(prefix="schedlab-report-") as logs:
            args.log_dir = args.log_dir or logs
            r, status = _simulate(args, args.workload, _sets(args), json_c=args.json_c, frames=True)
            if status == 0:
                output.commit(report.report_html(r))
    finally:
        output.discard()
    return status


def _side_options(shared: argparse.Namespace, text: str, side: str) -> argparse.Namespace:
    """The shared run options with one side's on top."""
    import copy
    import shlex

    p = argparse.ArgumentParser(prog=f"--{side}", add_help=False, exit_on_error=False)
    _run_options(p, "/".join(UNITS_NS))
    try:
        words = shlex.split(text)
        ns, extra = p.parse_known_args(words, namespace=copy.deepcopy(shared))
    except (ValueError, argparse.ArgumentError) as e:
        raise schedlab.InputError(f"--{side} '{text}': {e}") from None
    if extra:
        hint = " (it reads the workload, the same on both sides: give it to compare)" if "--json-c" in extra else ""
        raise schedlab.InputError(f"--{side} '{text}': not a run option: {' '.join(extra)}{hint}")
    return ns


def _compare(args) -> int:
    from schedlab.comparison import compare
    from schedlab.run import RunResult

    ignored = [f"--{o.replace('_', '-')}" for o in ("trace", "summary", "log_dir", "schedstat") if getattr(args, o)]
    if ignored:
        return _fail(f"compare: {ignored[0]} is not for compare, which writes its comparison (-o COMPARE.html); "
                     "run each side with schedlab run for its outputs")
    if args.explain:
        return _explain(args)
    results = dict(zip(("the first result", "the second result"), args.results or ()))
    check_outputs({**_inputs(args, args.workload), **results}, {"the comparison": args.output})
    if args.results:
        sides = [[RunResult.load(path)] for path in args.results]
    elif not args.workload:
        return _fail("compare: give a WORKLOAD.json (or --results A.json B.json)")
    else:
        sides = [_side(args.workload, _side_options(args, getattr(args, name), name), args.seeds,
                       args.output is not None, args.json_c) for name in ("a", "b")]
    labels = tuple(getattr(args, n) or n for n in ("a", "b")) if not args.results else tuple(args.results)
    c = compare(*sides, labels=labels)
    if args.output:
        c.write(args.output)
    _compare_tables(c)
    return 0


def _explain(args) -> int:
    """compare --explain N: the first N divergences of the two sides, printed."""
    from schedlab.explain import explain

    clash = next((o for o, given in (("--results", args.results), ("--seeds", args.seeds > 1),
                                     ("-o", args.output)) if given), None)
    if clash:
        return _fail(f"compare: --explain runs both sides once in lock-step and prints what it finds: "
                     f"{clash} is not for it")
    if not args.workload:
        return _fail("compare: --explain needs a WORKLOAD.json")
    check_outputs(_inputs(args, args.workload), {})
    specs = [_spec(args.workload, _side_options(args, getattr(args, name), name), json_c=args.json_c)
             for name in ("a", "b")]
    with _progress("explain") as progress:
        e = explain(*specs, args.explain, progress=progress)
    print(f"a: {args.a or '(the shared options)'}\nb: {args.b or '(the shared options)'}\n")
    print(e.text(), end="")
    return 0


def _compare_tables(c, rows: int = 10) -> None:
    """The totals and energy; the tasks' and the CPUs' figures that differ most (`rows` of
    each; the HTML report has them all)."""
    _, Table = _rich()
    out = _stdout_console()
    la, lb = c.labels
    tasks = c.tasks.loc[c.tasks.index.get_level_values("metric").isin(["run_ns", "wait_ns", "latency_p99_ns"])]
    cpus = c.cpus.loc[c.cpus.index.get_level_values("metric").isin(["busy_pct", "energy_mj"])]
    for title, df in (("totals", c.totals), ("energy per cluster, mJ", c.clusters),
                      (f"tasks: the {rows} figures that differ most", _most_different(tasks, rows)),
                      (f"CPUs: the {rows} figures that differ most", _most_different(cpus, rows))):
        # The heading on a line of its own: a table's title wraps at the table's width.
        out.print(f"{la} against {lb}: {title}", highlight=False, markup=False, style="italic")
        table = Table()
        for column in ("figure", la, lb, "b − a", "rel %") + (("95% CI",) if "ci_low" in df else ()):
            table.add_column(column, justify="left" if column == "figure" else "right", overflow="fold")
        for key, row in df.iterrows():
            ci = (f"[{row['ci_low']:.4g}, {row['ci_high']:.4g}]",) if "ci_low" in df else ()
            rel = "" if row["rel_pct"] != row["rel_pct"] else f"{row['rel_pct']:+.1f}"
            name = " ".join(map(str, key)) if isinstance(key, tuple) else str(key)
            table.add_row(name, f"{row['a']:.6g}", f"{row['b']:.6g}", f"{row['diff']:+.6g}", rel, *ci)
        out.print(table, highlight=False)


def _most_different(df, rows: int):
    """The `rows` rows of largest |b − a| (ties in their order)."""
    return df.iloc[(-df["diff"].abs()).to_numpy().argsort(kind="stable")[:rows]]


def _sweep(args) -> int:
    from rich.progress import Progress

    from schedlab import sweeps

    console = _rich()[0](stderr=True)
    with Progress(console=console, transient=True, disable=not console.is_terminal) as bar:
        job = bar.add_task("checking the grid", total=None)
        points = sweeps.load_grid(args.grid, progress=lambda done, total: bar.update(job, completed=done,
                                                                                     total=total))
    out = args.output or str(Path(args.grid).with_suffix(".parquet"))
    check_outputs({"the grid": args.grid}, {"the results": out, "the artefacts": args.artefacts})
    if args.artefacts:
        Path(args.artefacts).mkdir(parents=True, exist_ok=True)
    try:
        with _executor(args) as client, Progress(console=console, disable=not console.is_terminal) as bar:
            job = bar.add_task("sweep", total=len(points))
            df = sweeps.sweep(points, out=out, jobs=args.jobs, client=client, artefacts=args.artefacts,
                              progress=lambda done, total: bar.update(job, completed=done))
    except (KeyboardInterrupt, Terminated) as e:
        print(f"schedlab: {'terminated' if isinstance(e, Terminated) else 'interrupted'}; the points finished are "
              f"in {out}: run again to resume", file=sys.stderr)
        return 143 if isinstance(e, Terminated) else 130
    failed = df[df["status"] != "ok"]
    for _, row in failed.iterrows():
        print(f"point {row['point']} failed: {row['error']}", file=sys.stderr)
    print(f"{len(df)} points ({len(df) - len(failed)} ok, {len(failed)} failed) in {out}")
    if len(failed):
        print(f"schedlab: {len(failed)} of {len(df)} points failed (their errors are in {out})", file=sys.stderr)
        return 1
    return 0


def _hackbench(args) -> int:
    from schedlab.benchmarks import Hackbench

    bench = Hackbench(args.groups, args.fds, args.loops, args.datasize, args.pipe, args.threads,
                      taskgroup=args.taskgroup)
    return _benchmark(args, bench)


def _cyclictest(args) -> int:
    if args.loops == 0 and args.ct_duration == 0:
        return _fail("cyclictest: -l 0 (the default) runs until -D's time: give -l LOOPS or -D TIME")
    return _benchmark(args, _cyclictest_bench(args))


def _cyclictest_bench(args):
    """The `Cyclictest` cyclictest's options mean (`-p` makes the policy SCHED_FIFO unless
    --policy says otherwise)."""
    from schedlab.benchmarks import Cyclictest

    policy = args.policy or ("fifo" if args.priority is not None else "other")
    return Cyclictest(args.threads, args.priority or 0, policy, args.priospread, args.interval, args.distance,
                      args.loops, args.histofall or args.histogram, args.nsecs,
                      _cpuset(args.affinity) if args.affinity else None, args.taskgroup,
                      args.ct_duration, args.histofall is not None, args.ct_quiet)


def cyclictest_of(words: list[str]):
    """The `Cyclictest` of cyclictest's arguments (those the real tool takes too), or None if
    they are not `schedlab cyclictest`'s or run for ever."""
    try:
        with redirect_stderr(io.StringIO()):
            args = parser().parse_args(["cyclictest", *words])
    except SystemExit:
        return None
    return _cyclictest_bench(args) if args.loops or args.ct_duration else None


def _schbench(args) -> int:
    from schedlab.benchmarks import PIPE_TRANSFER_BUFFER

    if args.sb_pipe > PIPE_TRANSFER_BUFFER:  # (schbench's own warning, and its cut)
        print(f"pipe size too big, using {PIPE_TRANSFER_BUFFER}", file=sys.stderr)
    if args.runtime == 0:
        return _fail("schbench: -r/--runtime 0 runs for ever: give the seconds to run")
    if args.sb_jobname is not None and args.sb_json is None:
        return _fail("schbench: -J/--jobname names the job of the -j/--json output: give -j FILE")
    bench = _schbench_bench(args)
    if args.sb_json is None:
        return _benchmark(args, bench)
    if args.sb_json == "-":  # the json on standard output, the report on stderr (schbench's own)
        return _benchmark(args, bench, before_report=lambda r: sys.stdout.write(_schbench_json(bench, r, args)),
                          stream=sys.stderr)
    out = Staged(args.sb_json)
    try:
        return _benchmark(args, bench, {"the json output": args.sb_json},
                          lambda r: out.commit(_schbench_json(bench, r, args)))
    finally:
        out.discard()


def _schbench_json(bench, r, args) -> str:
    """schbench's -j output, written before its final report."""
    return bench.json(r, args.sb_jobname, args.sb_json)


def _schbench_bench(args):
    """The `Schbench` schbench's options mean (`auto` for -M or -W pins both, as
    `thread_auto_pin` does)."""
    from schedlab.benchmarks import PIPE_TRANSFER_BUFFER, Schbench

    auto = "auto" in (args.message_cpus, args.worker_cpus)
    cpus = [_cpuset(v, o) if v not in (None, "auto") and not auto else None
            for o, v in (("-M/--message-cpus", args.message_cpus), ("-W/--worker-cpus", args.worker_cpus))]
    return Schbench(args.message_threads, args.threads, args.runtime, args.warmuptime, args.intervaltime,
                    args.zerotime, args.cache_footprint, args.operations, args.sleep_usec, args.rps,
                    args.sb_auto_rps, min(args.sb_pipe, PIPE_TRANSFER_BUFFER), args.calibrate, args.no_locking,
                    args.split, auto, *cpus, args.matrix_ps, args.memset_ps, args.work_stretch, args.taskgroup)


def schbench_of(words: list[str]):
    """The `Schbench` of schbench's arguments, or None if they are not `schedlab schbench`'s."""
    try:
        with redirect_stderr(io.StringIO()):
            args = parser().parse_args(["schbench", *words])
    except SystemExit:
        return None
    return _schbench_bench(args)


def _cpuset(text: str, option: str = "-a/--affinity") -> tuple[int, ...]:
    """A CPU list as cyclictest's -a and schbench's -M and -W take it: `3-5,0`."""
    cpus = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or not (hi or lo).isdigit() or int(hi or lo) < int(lo):
            raise schedlab.InputError(f"{option}: {text!r} is not a CPU list (e.g. 3-5,0)")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return tuple(sorted(cpus))


def _perf_bench_pipe(args) -> int:
    from schedlab.benchmarks import PipeBench

    return _benchmark(args, PipeBench(args.loop, args.threaded, args.taskgroup))


def _benchmark(args, bench, outputs: dict | None = None, before_report=None, stream=None) -> int:
    """Simulate `bench` as its command line asks (`outputs`: the tool's own output files, name
    to path); `before_report(result)` writes them; print the tool's report (on `stream`, by
    default standard output)."""
    from schedlab.benchmarks import option_error

    try:
        r, status = _simulate(args, bench.workload(), _sets(args), origin=args.command, outputs=outputs)
    except schedlab.InputError as e:
        return _fail(option_error(bench, str(e)))
    if status == 0 and before_report:
        before_report(r)
    if status == 0 and not args.quiet:
        (stream or sys.stdout).write(bench.report(r))
        if args.top is not None:
            args.workload = args.command
            _run_tables(args, r, _rich()[1])
    return status


@contextmanager
def _progress(label: str):
    """A progress bar on stderr (a terminal's only) of simulated seconds: the function a run
    calls with (simulated_ns, total_ns or None)."""
    from rich.progress import Progress

    console = _rich()[0](stderr=True, soft_wrap=True)
    with Progress(console=console, transient=True, disable=not console.is_terminal) as bar:
        job = bar.add_task(label, total=None)
        yield lambda now, total: bar.update(job, completed=now / 1e9, total=None if total is None else total / 1e9)


def _simulate(args, workload, sets, origin=None, json_c=False, frames=False, outputs=None):
    """Run `workload` with the run options in `args`: the result and the exit status. The
    summary file is written whole or not at all; warnings go to stderr. `outputs`: more
    output files (name to path) that may replace no input or other output."""
    from schedlab.run import RunSpec

    Console, _ = _rich()
    console = Console(stderr=True, soft_wrap=True)
    _core.check_switches(args.kernel, sets, args.feature)
    check_outputs(_inputs(args, workload), {
        "the summary": args.summary, "the trace": args.trace,
        "the platform description": args.trace and plat_info_path(Path(args.trace)),
        "the schedstat": args.schedstat, "the log directory": args.log_dir, **(outputs or {})})
    summary = Staged(args.summary) if args.summary else None
    try:
        with _progress("simulating") as progress:
            spec = RunSpec.of(workload, args.platform, kernel=args.kernel, sets=sets, features=args.feature,
                              duration_ns=args.duration, cgroups=args.cgroup, idle_cgroups=args.idle_cgroups,
                              json_c=json_c, origin=origin)
            r = spec.run(trace=args.trace, trace_format=args.trace_format, log_dir=args.log_dir,
                         schedstat=args.schedstat, frames=frames, progress=progress)
        if summary:
            import json

            summary.commit(json.dumps(r.summary(), indent=1, default=int))
    finally:
        if summary:
            summary.discard()
    for w in r.warnings[:SHOWN_WARNINGS]:
        console.print(f"warning: {w}", highlight=False, markup=False)
    if len(r.warnings) > SHOWN_WARNINGS:
        more = len(r.warnings) - SHOWN_WARNINGS
        console.print(f"warning: … and {more:,} more (--summary FILE.json lists them all)", highlight=False,
                      markup=False)
    for w in r.refusals:
        console.print(f"refused: {w}", highlight=False, markup=False)
    return r, _fail(r.deadlock) if r.deadlock else 0


def _inputs(args, workload=None) -> dict:
    """The input files of a command: its workload (a path, not generated) and platform file."""
    return {"the workload": workload if isinstance(workload, str) else None,
            "the platform": args.platform if str(args.platform).endswith(".toml") else None}


def _run_tables(args, r, Table) -> None:
    """The run's tables on stdout: tasks (the `--top` busiest, in pid order), deadline
    tasks, CPUs, cgroups with a cpu.max quota and cpufreq policies."""
    out = _stdout_console()
    tasks = r.task_rows
    shown = tasks
    if args.top and len(tasks) > args.top:
        busiest = sorted(tasks, key=lambda t: (-t["run_ns"], t["pid"]))[:args.top]
        shown = sorted(busiest, key=lambda t: t["pid"])
    table = Table(title=f"{args.workload} on {r.platform}, kernel {r.kernel}: {r.simulated_ns / 1e9:g} s, "
                        f"{r.nr_events} events", title_justify="left",
                  caption=f"… {len(tasks) - len(shown)} more tasks with less run time (--top 0 shows all)"
                  if len(shown) < len(tasks) else None, caption_justify="left")
    for c in ("task", "pid", "run ms", "wait ms", "sleep ms", "wakeups", "lat p50 us", "lat p99 us",
              "lat max us", "migr", "preempt", "overruns", "mean slack us"):
        table.add_column(c, justify="left" if c == "task" else "right", overflow="fold")
    for t in shown:
        table.add_row(t["comm"], str(t["pid"]), f"{t['run_ns'] / 1e6:.1f}", f"{t['wait_ns'] / 1e6:.1f}",
                      f"{t['sleep_ns'] / 1e6:.1f}", str(t["wakeups"]), f"{t['latency_p50_ns'] / 1e3:.1f}",
                      f"{t['latency_p99_ns'] / 1e3:.1f}", f"{t['latency_max_ns'] / 1e3:.1f}", str(t["migrations"]),
                      str(t["preemptions"]), str(t["overruns"]), f"{t['mean_slack_us']:.0f}")
    out.print(table, highlight=False)
    dl = [t for t in shown if t["policy"] == "SCHED_DEADLINE"]
    if dl:
        dlt = Table(title="SCHED_DEADLINE", title_justify="left")
        for c in ("task", "util %", "exhaustions", "throttled ms", "deadline misses", "reclaimed ms"):
            dlt.add_column(c, justify="left" if c == "task" else "right", overflow="fold")
        for t in dl:
            dlt.add_row(t["comm"], "refused" if t["refused"] else f"{100 * t['utilization']:.2f}",
                        str(t["dl_exhaustions"]), f"{t['dl_throttled_ns'] / 1e6:.1f}", str(t["dl_misses"]),
                        f"{t['dl_reclaimed_ns'] / 1e6:.1f}")
        out.print(dlt, highlight=False)
    cpus = Table(title="CPUs", title_justify="left")
    for c in ("cpu", "capacity", "busy %", "energy mJ"):
        cpus.add_column(c, justify="right")
    for c in r.cpu_rows:
        cpus.add_row(str(c["cpu"]), str(c["capacity"]), f"{c['busy_pct']:.1f}", f"{c['energy_mj']:.1f}")
    out.print(cpus, highlight=False)
    if r.group_rows:
        gt = Table(title="cgroups with cpu.max (cpu.stat)", title_justify="left")
        for c in ("cgroup", "quota us", "period us", "nr_periods", "nr_throttled", "throttled ms"):
            gt.add_column(c, justify="left" if c == "cgroup" else "right", overflow="fold")
        for g in r.group_rows:
            gt.add_row(g["path"], str(g["quota_us"]), str(g["period_us"]), str(g["nr_periods"]),
                       str(g["nr_throttled"]), f"{g['throttled_ns'] / 1e6:.1f}")
        out.print(gt, highlight=False)
    pols = Table(title=f"cpufreq policies (total energy {r.energy_mj:.1f} mJ, clusters "
                       f"{', '.join(f'{e:.1f}' for e in r.cluster_energy_mj)} mJ)", title_justify="left")
    for c in ("policy", "governor", "transitions", "frequency residency"):
        pols.add_column(c, justify="left" if c != "transitions" else "right", overflow="fold")
    for p in r.policy_rows:
        res = ", ".join(f"{int(k) // 1000} MHz {ns / max(r.simulated_ns, 1):.0%}"
                        for k, ns in p["residency"].items() if ns)
        pols.add_row(p["policy"], p["governor"], str(p["transitions"]), res)
    out.print(pols, highlight=False)


def _stdout_console(width: int = 250):
    """A console for tables: the terminal's width on a terminal (columns fold, never
    truncate, when it is narrow), at least `width` ($COLUMNS if wider) in a pipe or file. A closed pipe raises
    BrokenPipeError (rich would exit 1)."""
    from rich.console import Console

    console = Console(soft_wrap=False)
    if not console.is_terminal:
        console = Console(soft_wrap=False, width=max(console.width, width))
    console.on_broken_pipe = _raise_broken_pipe
    return console


def _raise_broken_pipe():
    raise BrokenPipeError


def _check(args) -> int:
    text, warnings = _core.check(Path(args.workload), args.json_c)
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    sys.stdout.write(text)
    return 0


def _replay_trace(args) -> int:
    if args.report is not None and args.b is None:
        return _fail("replay: --report is the what-if's: give --b 'OPTIONS'")
    check_outputs({"the trace": args.trace, "the thread attributes": args.attrs},
                  {"the workload": args.output, "the comparison": args.report})
    r = _core.replay(Path(args.trace), args.platform, args.kernel, _sets(args),
                     None if args.attrs is None else Path(args.attrs))
    runs = args.check or args.b is not None
    kernel = r["kernel"]
    for n in r["notes"]:
        print(f"note: {n}", file=sys.stderr)
    if args.output is not None:
        write_text(args.output, r["json"])
    elif not runs:
        sys.stdout.write(r["json"])
    args.set = [KTHREADS_OFF, *args.set]  # the trace's kernel threads are in the workload
    if args.check:
        # The run's own trace, read by the same code as the trace's: where each wakeup ran.
        with tempfile.TemporaryDirectory(prefix="schedlab-check-") as d:
            own = Path(d) / "replay.dat"
            run = schedlab.run(r["json"], platform=r["platform"], kernel=kernel, sets=_sets(args),
                               features=args.feature, duration_ns=r["length_ns"], trace=own, frames=False)
            again = _core.replay(own, r["platform"], kernel, _sets(args))
        _print_check(r, run.summary(), {t[1]: t for t in again["threads"]}, kernel, args.top)
    if args.b is not None:
        _what_if(args, r, kernel)
    return 0


def _spec(workload, ns, seed=(), json_c: bool = False):
    """`workload` under run options `ns` (its switches checked first), with `seed`'s sets."""
    from schedlab.run import RunSpec

    _core.check_switches(ns.kernel, _sets(ns), ns.feature)
    return RunSpec.of(workload, ns.platform, kernel=ns.kernel, sets=_sets(ns) + list(seed), features=ns.feature,
                      duration_ns=ns.duration, cgroups=ns.cgroup, idle_cgroups=ns.idle_cgroups, json_c=json_c)


def _side(workload, ns, seeds: int, frames: bool, json_c: bool = False) -> list:
    """One side of a comparison: `workload` under run options `ns`, once per seed 1..`seeds`
    (one unseeded run for 1)."""
    sets = [[f"seed={i}"] for i in range(1, seeds + 1)] if seeds > 1 else [[]]
    return [_spec(workload, ns, seed, json_c).run(frames=frames) for seed in sets]


def _bisect(args) -> int:
    from schedlab.bisect import bisect

    check_outputs(_inputs(args, args.workload), {})
    specs = [_spec(args.workload, _side_options(args, getattr(args, name), name)) for name in ("a", "b")]
    jobs = max(1, min(args.jobs or os.cpu_count() or 1, os.cpu_count() or 1))
    with _executor(args) as client:
        r = bisect(*specs, args.metric, args.threshold, jobs=jobs, client=client)
    _, Table = _rich()
    table = Table(title=f"bisect {args.metric} past {args.threshold:g}", title_justify="left")
    for c in ("run", "changes", args.metric, "past"):
        table.add_column(c, justify="left" if c == "changes" else "right")
    rows = [("a", "", r.a), ("b", "", r.b), ("a + every change", f"{len(r.changes)}", r.every)]
    rows += [(str(i), ", ".join(keys), v) for i, (keys, v) in enumerate(r.runs, 1)]
    for run, changes, v in rows:
        table.add_row(run, changes, f"{v:g}", "yes" if r.crosses(v) else "no")
    _stdout_console(140).print(table, highlight=False)
    print(_finding(r))
    return 0


def _finding(r) -> str:
    """What bisect found, in a line or a few."""
    if not r.crosses(r.b):
        return (f"bisect: side b's {r.metric} ({r.b:g}) is not past {r.threshold:g} from side a's ({r.a:g}): "
                "no configuration crosses it")
    if not r.crosses(r.every):
        return (f"bisect: side a with all {len(r.changes)} changes gives {r.every:g}, not past {r.threshold:g}: "
                "what moves the metric is not in the switches (the kernel's own costs, or the platform)")
    lines = [f"bisect: {len(r.culprits)} of {len(r.changes)} changes move {r.metric} past {r.threshold:g} "
             f"({3 + len(r.runs)} runs):"]
    lines += [f"  {c.key}: {c.a} -> {c.b}" + "".join(f"  [{k}: {commit}]" for k, _, commit in c.upstream)
              for c in r.culprits]
    return "\n".join(lines)


def _what_if(args, r: dict, kernel: str) -> None:
    """The replayed workload under the trace's conditions (its platform, kernel, length and
    the switches given) against the same with `--b`'s options on top: compare's tables."""
    from schedlab.comparison import compare

    base = argparse.Namespace(**vars(args))
    base.platform, base.kernel, base.duration = r["platform"], kernel, r["length_ns"]
    sides = [_side(r["json"], _side_options(base, text, name), args.seeds, args.report is not None)
             for name, text in (("a", ""), ("b", args.b))]
    c = compare(*sides, labels=("trace", args.b))
    if args.report is not None:
        c.write(args.report)
    _compare_tables(c)


def _print_check(r: dict, summary: dict, placed: dict, kernel: str, top: int) -> None:
    """Each thread's figures in the trace beside the replay's (`placed`: the replay's own
    trace read back, by pid), the busiest first; then each CPU's busy time."""
    _, Table = _rich()
    ran = {t["comm"].rsplit("-", 1)[0]: t for t in summary["tasks"]}
    table = Table(title=f"replay --check on {r['platform']}, kernel {kernel}: trace | replay",
                  title_justify="left")
    for c in ("thread", "CPU ms", "", "ratio", "wakeups", "", "lat p50 us", "", "lat p99 us", "", "migr", "",
              "same CPU %", ""):
        table.add_column(c, justify="left" if c == "thread" else "right")
    busiest = sorted(r["threads"], key=lambda t: -t[2])[:top]
    same = lambda wakeups, prev: f"{100 * prev / wakeups:.0f}" if wakeups else "-"
    for name, _pid, run_ns, wakeups, p50, p99, migrations, prev in busiest:
        s = ran.get(name)
        if s is None:
            continue
        again = placed.get(s["pid"])
        ratio = f"{s['run_ns'] / run_ns:.3f}" if run_ns else "-"
        table.add_row(name, f"{run_ns / 1e6:.1f}", f"{s['run_ns'] / 1e6:.1f}", ratio, str(wakeups),
                      str(s["wakeups"]), f"{p50 / 1e3:.1f}", f"{s['latency_p50_ns'] / 1e3:.1f}",
                      f"{p99 / 1e3:.1f}", f"{s['latency_p99_ns'] / 1e3:.1f}", str(migrations),
                      str(s["migrations"]), same(wakeups, prev), same(again[3], again[7]) if again else "-")
    cpus = Table(title="CPU busy %", title_justify="left")
    for c in ("cpu", "trace", "replay"):
        cpus.add_column(c, justify="right")
    length = r["length_ns"] or 1
    for cpu, (busy, s) in enumerate(zip(r["cpu_busy_ns"], summary["cpus"])):
        cpus.add_row(str(cpu), f"{100 * busy / length:.1f}", f"{s['busy_pct']:.1f}")
    console = _stdout_console(140)
    console.print(table, highlight=False)
    console.print(cpus, highlight=False)
    if any(r["freq_residency_ns"]):
        console.print(_residency_table(r, summary), highlight=False)


def _residency_table(r: dict, summary: dict):
    """Each CPU's time at each frequency, % of the trace's length: trace against replay."""
    _, Table = _rich()
    table = Table(title="frequency residency %", title_justify="left")
    for c in ("cpu", "kHz", "trace", "replay"):
        table.add_column(c, justify="right")
    length = r["length_ns"] or 1
    for cpu, (seen, s) in enumerate(zip(r["freq_residency_ns"], summary["cpus"])):
        seen = dict(seen)
        ran = {int(k): v for k, v in s["freq_residency"].items()}
        for khz in sorted(set(seen) | set(ran)):
            if seen.get(khz, 0) or ran.get(khz, 0):
                table.add_row(str(cpu), str(khz), f"{100 * seen.get(khz, 0) / length:.1f}",
                              f"{100 * ran.get(khz, 0) / length:.1f}")
    return table


def _platforms(args) -> int:
    _, Table = _rich()
    if args.domains or args.name:
        if not args.name:
            return _fail("platforms --domains: name a platform (e.g. hikey960, smp:4)")
        for (cpu, i, name, level, span, flags, groups, lo, hi, busy, imb, cnt) in _core.domains(args.name):
            print(f"cpu{cpu}/domain{i}: name={name} level={level} span={span} groups={groups} "
                  f"min_interval={lo} max_interval={hi} busy_factor={busy} imbalance_pct={imb} "
                  f"cache_nice_tries={cnt} flags={flags}")
        return 0
    table = Table(title="Built-in platforms (also smp:N, qemu-tcg:N[@K], .toml files and LISA's plat_info.yml)", title_justify="left")
    for c in ("name", "CPUs", "capacities", "description"):
        table.add_column(c)
    for name, desc, n, caps in _core.platforms():
        table.add_row(name, str(n), caps if n <= 16 else f"{caps[:40]}...", desc)
    _stdout_console(140).print(table, highlight=False)
    return 0


def _features(args) -> int:
    _, Table = _rich()
    if args.between:
        return _features_between(*args.between)
    table = Table(title="Switches: --set KEY=VALUE, --feature NAME|NO_NAME", title_justify="left")
    for c in ("switch", *KERNELS):
        table.add_column(c)
    for key, values in _core.features():
        table.add_row(key, *values)
    _stdout_console().print(table, highlight=False)
    return 0


def _features_between(old: str, new: str) -> int:
    """The switches whose defaults differ between presets `old` and `new`, and how to set
    each of `new`'s values on `old`."""
    from schedlab.bisect import differences
    from schedlab.run import RunSpec

    _, Table = _rich()
    changes = differences(RunSpec("", kernel=old), RunSpec("", kernel=new))
    table = Table(title=f"Switches from {old} to {new}: {len(changes)} differ", title_justify="left")
    for c in ("switch", old, new, f"on {old}", "upstream (first modelled kernel: commit)"):
        table.add_column(c)
    for c in changes:
        sets, feats = c.options()
        commits = "; ".join(f"{since}: {commit}" for since, _, commit in _core.history(c.key, old, new))
        table.add_row(c.key, c.a, c.b, " ".join([f"--set {s}" for s in sets] + [f"--feature {f}" for f in feats]),
                      commits)
    _stdout_console(140).print(table, highlight=False)
    return 0


def _rich():
    """rich's Console and Table, imported when a command prints a table (not for --version)."""
    from rich.console import Console
    from rich.table import Table

    return Console, Table


def _fail(message: str) -> int:
    print(f"schedlab: {message}", file=sys.stderr)
    return 2


class Terminated(BaseException):
    """SIGTERM (kill, timeout, systemd, a CI's cancel): stopped as Ctrl-C stops a run."""


def _terminate(signum, frame):
    raise Terminated


def _side_values(argv: list[str]) -> list[str]:
    """`--a VALUE` as `--a=VALUE`: a side's options start with a dash (`--a --json-c`), which
    argparse would take for an option of compare's own."""
    out, words = [], iter(argv)
    for word in words:
        out.append(f"{word}={next(words, '')}" if word in ("--a", "--b") else word)
    return out


def main(argv=None) -> int:
    signal.signal(signal.SIGTERM, _terminate)
    args = parser().parse_args(_side_values(sys.argv[1:] if argv is None else argv))
    handlers = {"replay": _replay, "periodic": _periodic, "ramp": _ramp}
    commands = {"run": _run, "report": _report, "compare": _compare, "bisect": _bisect, "sweep": _sweep, "hackbench": _hackbench, "cyclictest": _cyclictest, "schbench": _schbench, "perf-bench-pipe": _perf_bench_pipe, "check": _check, "replay": _replay_trace, "platforms": _platforms, "features": _features,
                "reproduce": _reproduce}
    handler = handlers[args.pelt_command] if args.command == "pelt" else commands[args.command]
    try:
        status = handler(args)
        sys.stdout.flush()
        return status
    except schedlab.InputError as e:
        return _fail(str(e))
    except BrokenPipeError:
        return _closed_stdout()
    except OSError as e:
        return _fail(f"{e.filename}: {e.strerror}" if e.filename and e.strerror else str(e))
    except KeyboardInterrupt:
        print("schedlab: interrupted; no output written", file=sys.stderr)
        return 130
    except Terminated:
        print("schedlab: terminated; no output written", file=sys.stderr)
        return 143
    except SystemExit:
        raise
    except BaseException as e:  # pyo3's PanicException is a BaseException
        if args.debug or os.environ.get("SCHEDLAB_DEBUG") == "1":
            raise
        print(f"schedlab: internal error (a bug in schedlab, please report it): {type(e).__name__}: {e}\n"
              "schedlab: run again with --debug (or SCHEDLAB_DEBUG=1) for the traceback", file=sys.stderr)
        return 1


def _closed_stdout() -> int:
    """stdout was closed (`| head`): the outputs are complete; end quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0
