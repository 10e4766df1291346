"""cyclictest as a generator and a command: its threads' structure (policy, priority, interval,
CPU) as rt-tests' cyclictest.c sets it up, latencies on hand-derived cases, the real tool's
output formats, and bad options refused with one clear message."""

import json
import re

import pytest

from schedlab.benchmarks import Cyclictest
from schedlab.run import RunSpec

# cyclictest.c's print_stat formats (µs, and ns with -N).
STAT_US = "T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld"
STAT_NS = "T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%8ld Avg:%8ld Max:%8ld"
LATENCY_TARGET = "# /dev/cpu_dma_latency set to 0us"


def cyclic(workload: dict, platform="smp:1", sets=("overhead=off",)):
    return RunSpec.of(workload, platform, sets=sets).run()


def stat_line(fmt: str, i: int, t: dict) -> str:
    # The tool's own format, filled by C's rules (%ld of a double's truncation for Avg).
    avg = int(t["sum"] / t["cycles"]) if t["cycles"] else 0
    return fmt.replace("%ld", "%d").replace("%lu", "%d") % (
        i, t["pid"], t["priority"], t["interval_us"], t["cycles"], t["min"], t["act"], avg, t["max"])


def test_a_fifo_thread_waits_out_a_higher_priority_burst_every_period():
    # One CPU, no cost model. The blocker (SCHED_FIFO 90) starts 700 µs in and runs 500 µs
    # of each 1 ms period on its absolute timer: busy [700, 1200) µs, [1700, 2200) µs, …
    # cyclictest's thread (SCHED_FIFO 80) takes its clock as it starts (t0, a few ns in:
    # its creation's steps) and sleeps to t0 + k ms: each expiry falls 300 − t0 µs into a
    # burst, so each period it runs at the burst's end, 200 µs − t0 late.
    wl = {"generators": {"cyclictest": {"priority": 80, "loops": 50, "nsecs": True}},
          "tasks": {"blocker": {"policy": "SCHED_FIFO", "priority": 90, "delay": 700, "loop": -1,
                                "run": 500, "timer": {"ref": "t", "period": 1000}}},
          "global": {"duration": 1}}
    (t,) = cyclic(wl).cyclictest_rows
    assert (t["cycles"], t["priority"], t["interval_us"]) == (50, 80, 1000)
    assert t["min"] == t["max"] == t["act"] and t["sum"] == 50 * t["min"]
    assert 200_000 - 100 < t["min"] <= 200_000


@pytest.mark.parametrize("priority, latency_ns", [
    # hrtimer_nanosleep: an RT task sleeps with no slack; a fair one with its timer_slack_ns
    # (50 µs by default), and on an idle CPU nothing expires its timer before that. Either
    # then runs 1 ns after the expiry (the engine spaces a wakeup and the switch it causes
    # by the trace clock's 1 ns, docs/benchmarks.md).
    (80, 1),
    (0, 50_000 + 1),
])
def test_an_idle_cpu_wakes_a_thread_at_its_expiry_plus_its_timer_slack(priority, latency_ns):
    wl = Cyclictest(priority=priority, policy="fifo" if priority else "other", loops=100, nsecs=True).workload()
    (t,) = cyclic(wl).cyclictest_rows
    assert (t["cycles"], t["min"], t["max"], t["priority"]) == (100, latency_ns, latency_ns, priority)


def test_threads_are_set_up_as_cyclictest_sets_them_up():
    # -t alone: one thread per CPU, thread i pinned to CPU i (AFFINITY_USEALL); --priospread
    # with no priority starts at threads + 1 = 5 and goes down by one; thread i's interval is
    # 1000 + 500·i µs. 30 loops each: the main thread joins them after its polls.
    b = Cyclictest(threads=0, policy="fifo", priospread=True, loops=30)
    r = cyclic(b.workload(), "smp:4")
    rows = r.cyclictest_rows
    assert [t["priority"] for t in rows] == [5, 4, 3, 2]
    assert [t["interval_us"] for t in rows] == [1000, 1500, 2000, 2500]
    assert all(t["cycles"] == 30 for t in rows)
    by_pid = {t["pid"]: t for t in r.task_rows}
    assert [by_pid[t["pid"]]["cpu"] for t in rows] == [0, 1, 2, 3]
    assert {by_pid[t["pid"]]["policy"] for t in rows} == {"SCHED_FIFO"}
    main = [t for t in r.task_rows if t["pid"] not in {c["pid"] for c in rows}]
    assert [t["policy"] for t in main] == ["SCHED_OTHER"]
    # Its last poll comes after 30 · 2.5 ms = 75 ms: 8 polls of 10 ms, then 50 ms, then joins.
    assert main[0]["ended_ns"] > 75_000_000 + 50_000_000


def test_a_histogram_sets_every_interval_alike_and_a_priority_makes_them_fifo():
    # cyclictest.c: with -h the distance is 0; -p 0 with SCHED_FIFO takes threads + 1.
    r = cyclic(Cyclictest(threads=2, priority=0, policy="fifo", loops=5, histogram=10).workload(), "smp:2")
    assert [(t["interval_us"], t["priority"]) for t in r.cyclictest_rows] == [(1000, 3), (1000, 3)]


def test_report_lines_are_print_stat_s_and_the_histogram_print_hist_s(cli, tmp_path):
    summary = tmp_path / "s.json"
    out = cli("cyclictest", "-t", "2", "-p", "80", "-i", "500", "-l", "40", "-h", "400", "-H", "400",
              "--platform", "qemu-tcg:2", "--summary", summary)
    assert out.returncode == 0, out.stderr
    rows = json.loads(summary.read_text())["cyclictest"]
    lines = out.stdout.decode().splitlines()
    assert lines[0] == LATENCY_TARGET
    assert lines[1:3] == [stat_line(STAT_US, i, t) for i, t in enumerate(rows)]
    assert lines[3] == "# Histogram"
    # "%06d " then each thread's "%06lu" tab-separated, and (-H) their sum.
    for i in range(400):
        counts = [t["hist"][i] for t in rows]
        assert lines[4 + i] == f"{i:06d} " + "\t".join(f"{n:06d}" for n in counts) + f"\t{sum(counts):06d}"
    tail = lines[404:]
    total = [sum(t["hist"]) for t in rows]
    assert tail[0] == "# Total: " + " ".join(f"{n:09d}" for n in total + [sum(total)])
    assert tail[1] == "# Min Latencies: " + " ".join(f"{t['min']:05d}" for t in rows)
    assert tail[3] == "# Max Latencies: " + " ".join(f"{t['max']:05d}" for t in rows + [max(rows, key=lambda t: t['max'])])
    assert tail[4].startswith("# Histogram Overflows: ") and tail[5] == "# Histogram Overflow at cycle number:"
    assert [t["cycles"] for t in rows] == [40, 40]
    assert all(sum(t["hist"]) + t["overflows"] == 40 for t in rows)


def test_overflows_name_their_cycles_up_to_the_histogram_s_size(cli):
    # The blocker case: 50 periods 199 µs late (µs, truncated), beyond a 10-bucket histogram:
    # the first 10 cycle numbers, then "# 00040 others". -q with -h prints no thread line.
    wl = {"generators": {"cyclictest": {"priority": 80, "loops": 50, "histogram": 10}},
          "tasks": {"blocker": {"policy": "SCHED_FIFO", "priority": 90, "delay": 700, "loop": -1,
                                "run": 500, "timer": {"ref": "t", "period": 1000}}},
          "global": {"duration": 1}}
    r = cyclic(wl)
    (t,) = r.cyclictest_rows
    assert (t["overflows"], t["outliers"], t["hist"]) == (50, list(range(10)), [0] * 10)
    text = Cyclictest(loops=50, histogram=10, quiet=True).report(r)
    assert not re.search(r"^T:", text, re.M)
    assert "# Thread 0: " + " ".join(f"{c:05d}" for c in range(10)) + " # 00040 others\n" in text
    assert "# Histogram Overflows: 00050\n" in text


def test_quiet_without_a_histogram_prints_the_summary_in_ns(cli, tmp_path):
    summary = tmp_path / "s.json"
    out = cli("cyclictest", "-q", "-N", "-p", "90", "-l", "20", "--platform", "smp:2", "--summary", summary)
    assert out.returncode == 0, out.stderr
    (t,) = json.loads(summary.read_text())["cyclictest"]
    assert out.stdout.decode() == f"{LATENCY_TARGET}\n{stat_line(STAT_NS, 0, t)}\n"


def test_duration_ends_the_run_and_the_threads_count_their_periods(cli, tmp_path):
    # -D 1: the run ends 1 s in; a 1 ms thread started just after 0 has had 999 whole periods.
    summary = tmp_path / "s.json"
    out = cli("cyclictest", "-D", "1", "-q", "-p", "90", "--platform", "smp:1", "--summary", summary)
    assert out.returncode == 0, out.stderr
    s = json.loads(summary.read_text())
    assert s["simulated_s"] == 1.0 and s["cyclictest"][0]["cycles"] == 999


@pytest.mark.parametrize("args, msg", [
    (["-p", "100", "-l", "3"], "cyclictest: -p/--priority: 100 is out of range: 0 to 99"),
    (["-a", "9", "-l", "3"], "cyclictest: -a/--affinity: CPU 9 is outside the platform smp:2 (CPUs 0-1)"),
    (["-a", "1-x", "-l", "3"], "-a/--affinity: '1-x' is not a CPU list"),
    (["-i", "0", "-l", "3"], "cyclictest: -i/--interval: 0 is out of range: 1 to"),
    (["-l", "0"], "-l 0 (the default) runs until -D's time: give -l LOOPS or -D TIME"),
    (["-D", "2x"], "argument -D/--duration: '2x' is not a time"),
    (["--policy", "deadline", "-l", "3"], "argument --policy: invalid choice"),
])
def test_bad_cyclictest_options_name_the_option(cli, args, msg):
    out = cli("cyclictest", *args, "--platform", "smp:2")
    err = out.stderr.decode()
    assert out.returncode == 2 and msg in err and not out.stdout and "Traceback" not in err, err


@pytest.mark.parametrize("gen, msg", [
    # (column 44: where -1 begins in {"generators": {"cyclictest": {"priority": -1}}, …})
    ({"priority": -1}, "generators.cyclictest.priority (line 1, column 44): -1 is out of range: 0 to 99"),
    ({"policy": "SCHED_FIFO"}, "unknown policy \"SCHED_FIFO\": other, normal, batch, idle, fifo or rr"),
    ({"bogus": 1}, "unknown cyclictest option"),
])
def test_bad_run_file_options_get_one_clear_message(cli, tmp_path, gen, msg):
    p = tmp_path / "g.json"
    p.write_text(json.dumps({"generators": {"cyclictest": gen}, "global": {"duration": 1}}))
    out = cli("run", str(p), "--platform", "smp:2")
    err = out.stderr.decode()
    assert out.returncode == 2 and msg in err and "Traceback" not in err, err


def test_help_offers_the_real_tools_options(cli):
    # rt-tests 2.x's cyclictest --help names these; -h is its histogram, not help.
    text = cli("cyclictest", "--help").stdout.decode()
    for opt in ("-t", "--threads", "-p", "--priority", "--policy", "--priospread", "-i", "--interval", "-d",
                "--distance", "-l", "--loops", "-D", "--duration", "-h", "--histogram", "-H", "--histofall",
                "-N", "--nsecs", "-a", "--affinity", "-m", "--mlockall", "-q", "--quiet"):
        assert re.search(rf"(^|[\s,\[]){re.escape(opt)}\b", text), opt


def test_summary_round_trips_the_cyclictest_table(reload):
    r = cyclic(Cyclictest(threads=2, priority=50, loops=10, histogram=5).workload(), "smp:2")
    assert reload(r).cyclictest_rows == r.cyclictest_rows


def test_the_conformance_suite_measures_both_sides_on_the_tools_histogram():
    from schedlab.conformance import measure

    # Two threads, 5 buckets, one overflow each (n = 10). Thread 0: 5 periods at 1 µs, 4 at
    # 2: nearest ranks 5, 9 and 10 give p50 1, p90 2, p99 the overflow (the histogram's size,
    # 5). Thread 1: 1 at 2 µs, 8 at 3: p50 3, p90 3, p99 5.
    report = ("# /dev/cpu_dma_latency set to 0us\n# Histogram\n"
              "000000 000000\t000000\n000001 000005\t000000\n000002 000004\t000001\n"
              "000003 000000\t000008\n000004 000000\t000000\n"
              "# Total: 000000009 000000009\n# Min Latencies: 00001 00002\n"
              "# Avg Latencies: 00001 00002\n# Max Latencies: 00002 00007\n"
              "# Histogram Overflows: 00001 00001\n# Histogram Overflow at cycle number:\n"
              "# Thread 0: 00003\n# Thread 1: 00000\n\n")
    assert measure.cyclictest(report) == {"cyclictest": [
        {"latency_us": [1, 2, 5], "avg_us": 1}, {"latency_us": [3, 3, 5], "avg_us": 2}]}
    with pytest.raises(ValueError, match="cyclictest printed no histogram"):
        measure.cyclictest("T: 0 ( 100) P:80 I:1000 C:      5 Min:      1 Act:    1 Avg:    1 Max:       1\n")
