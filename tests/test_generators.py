"""hackbench and perf bench pipe as run-file generators: their structure counted exactly in
the system calls they make, and bad options refused with one clear message."""

import json

import pytest

import schedlab
from schedlab.conformance import ftrace


def ops(r) -> dict:
    out = {}
    for o in r.ops.to_dict("records") if hasattr(r.ops, "to_dict") else r.ops:
        out[o["op"]] = out.get(o["op"], 0) + o["count"]
    return out


def run(tmp_path, generators, platform="smp:4"):
    p = tmp_path / "g.json"
    p.write_text(json.dumps({"generators": generators}))
    return schedlab.run(p, platform, sets=["overhead=on"])


@pytest.mark.parametrize("pipe", [True, False])
def test_hackbench_passes_loops_messages_from_every_sender_to_every_receiver(tmp_path, pipe):
    # 2 groups of 3 senders and 3 receivers, 40 loops: each sender writes 40 · 3 messages,
    # each receiver reads 3 · 40; 2 · 3 · 3 · 40 = 720 of each. 100 bytes are 2 cache lines
    # copied per call. Besides, the 12 children each write a byte to the ready pipe, which
    # the main process reads 12 times, then writes the wake pipe once: 13 pipe writes and 12
    # reads of one cache line each.
    r = run(tmp_path, {"hackbench": {"groups": 2, "fds": 3, "loops": 40, "pipe": pipe}})
    assert r.deadlock is None
    assert len(r.tasks) == 13
    n = ops(r)
    if pipe:
        assert (n["pipe_write"], n["pipe_read"]) == (720 + 13, 720 + 12)
    else:
        assert (n["unix_stream_sendmsg"], n["unix_stream_recvmsg"]) == (720, 720)
        assert (n["pipe_write"], n["pipe_read"]) == (13, 12)
    assert n["copy_line"] == 4 * 720 + 25
    assert (n["fork"], n["fork_child"], n["exit"], n["clone"]) == (12, 12, 12, 0)
    assert (r.tasks["sys_ns"] > 0).all()


@pytest.mark.parametrize("threads", [False, True])
def test_hackbench_kicks_off_its_ready_children_with_one_write_and_reaps_each(tmp_path, threads):
    # hackbench.c: the main process forks (or creates) every child; each writes the ready
    # pipe and polls the wake pipe; the main process reads all 4 bytes, takes its time and
    # writes the wake pipe once, which wakes every child then polling, the last to poll
    # first (__pollwait queues at the wait queue's head); then it waits for each child's
    # exit. A process costs its creator a fork, its own CPU its first steps and its exit; a
    # thread a clone only.
    trace = tmp_path / "t.txt"
    r = schedlab.run({"generators": {"hackbench": {"groups": 1, "fds": 2, "loops": 3,
                                                   "threads": threads}}},
                     "smp:1", sets=["overhead=on"], trace=trace)
    assert r.deadlock is None
    evs = list(ftrace.events(trace.read_text()))
    main = next(t["pid"] for t in r.task_rows if t["comm"].startswith("hackbench-0"))
    children = [int(e.fields["child_pid"]) for e in evs
                if e.name == "sched_process_fork" and e.pid == main]
    assert len(children) == 4
    kick = r.start_ns + r.bench_start_ns
    polled = [int(e.fields["prev_pid"]) for e in evs if e.name == "sched_switch"
              and e.ts < kick and e.fields["prev_state"] == "S"
              and int(e.fields["prev_pid"]) in children]
    woken = [int(e.fields["pid"]) for e in evs if e.name == "sched_waking" and e.pid == main
             and kick <= e.ts <= kick + 10_000 and int(e.fields["pid"]) in children]
    assert woken and woken == polled[::-1]
    exits = [e.ts for e in evs if e.name == "sched_process_exit" and e.pid in children]
    assert len(exits) == 4 and min(exits) > kick
    n = ops(r)
    assert (n["fork"], n["fork_child"], n["exit"], n["clone"]) == \
        ((0, 0, 0, 4) if threads else (4, 4, 4, 0))


def test_hackbench_without_kick_starts_its_tasks_at_once(tmp_path):
    r = run(tmp_path, {"hackbench": {"groups": 1, "fds": 2, "loops": 3, "kick": False}})
    assert r.deadlock is None and r.bench_start_ns is None
    assert len(r.tasks) == 4 and (r.tasks["started_ns"] == 0).all()
    n = ops(r)
    assert (n["fork"], n["clone"], n["pipe_write"]) == (0, 0, 0)


@pytest.mark.parametrize("threaded", [False, True])
def test_perf_bench_pipe_makes_two_writes_and_two_reads_per_round_trip(tmp_path, threaded):
    # sched-pipe.c: perf forks worker 0 and runs worker 1 itself (processes: 2 tasks, a fork,
    # the child's first steps and exit), or creates both as threads and joins them (-T: 3
    # tasks, 2 clones, no process exit).
    r = run(tmp_path, {"perf_bench_pipe": {"loops": 500, "threaded": threaded}})
    assert r.deadlock is None and len(r.tasks) == 2 + threaded
    n = ops(r)
    assert (n["pipe_write"], n["pipe_read"], n["copy_line"]) == (1000, 1000, 2000)
    expected = (0, 0, 0, 2) if threaded else (1, 1, 1, 0)
    assert (n["fork"], n["fork_child"], n["exit"], n["clone"]) == expected
    # Each round trip blocks each task once: a switch to it and one away (at least).
    assert n["context_switch"] >= 2 * 500


@pytest.mark.parametrize("gen, msg", [
    ({"hackbench": {"groups": 0}}, "generators.hackbench.groups (line 1, column 41): 0 is out of range: 1 to 16384"),
    ({"hackbench": {"datasize": 4097}}, "4097 is out of range: 1 to 4096"),
    ({"hackbench": {"loops": -1}}, "-1 is out of range"),
    ({"hackbench": {"fds": 20, "groups": 1000}}, "40001 threads"),
    ({"hackbench": {"bogus": 1}}, "unknown hackbench option"),
    ({"perf_bench_pipe": {"loops": 0}}, "generators.perf_bench_pipe.loops (line 1, column 46): 0 is out of range"),
    ({"netperf": {}}, "unknown generator"),
])
def test_bad_generator_options_get_one_clear_message(cli, tmp_path, gen, msg):
    p = tmp_path / "g.json"
    p.write_text(json.dumps({"generators": gen}))
    out = cli("run", str(p), "--platform", "smp:2")
    assert out.returncode == 2
    err = out.stderr.decode()
    assert msg in err and "Traceback" not in err, err


def _sec_ms(ns: int) -> str:
    """%lu.%03lu of tv_sec and tv_usec / 1000, as both tools print their time."""
    return f"{ns // 10**9}.{ns % 10**9 // 10**6:03d}"


def test_hackbench_command_prints_rt_tests_report_timed_to_the_last_exit(cli, tmp_path):
    summary = tmp_path / "s.json"
    out = cli("hackbench", "-g", "2", "-f", "3", "-l", "40", "--pipe", "--platform", "smp:4",
              "--summary", summary)
    assert out.returncode == 0, out.stderr
    s = json.loads(summary.read_text())
    assert s["switches"]["overhead"] == "on"  # the benchmarks' default
    # 720 messages, 12 ready bytes and the kick (the first test's derivation).
    assert sum(o["count"] for o in s["ops"] if o["op"] == "pipe_write") == 733
    last_exit = max(t["ended_ns"] for t in s["tasks"])
    assert all(0 <= t["started_ns"] < t["ended_ns"] for t in s["tasks"])
    # Timed from when the main process had every child ready (after it forked them all).
    assert max(t["started_ns"] for t in s["tasks"]) < s["bench_start_ns"] < last_exit
    assert out.stdout.decode() == (
        "Running in process mode with 2 groups using 6 file descriptors each (== 12 tasks)\n"
        "Each sender will pass 40 messages of 100 bytes\n"
        f"Time: {_sec_ms(last_exit - s['bench_start_ns'])}\n")


def test_perf_bench_pipe_command_prints_perf_report(cli, tmp_path):
    summary = tmp_path / "s.json"
    out = cli("perf-bench-pipe", "-l", "2000", "-T", "--platform", "hikey", "--summary", summary)
    assert out.returncode == 0, out.stderr
    s = json.loads(summary.read_text())
    # Timed from perf's clock read, before it creates the threads, to the last exit.
    usecs = (max(t["ended_ns"] for t in s["tasks"]) - s["bench_start_ns"]) // 1000
    assert usecs > 0 and s["bench_start_ns"] < min(t["started_ns"] for t in s["tasks"][1:])
    lines = out.stdout.decode().splitlines()
    assert lines[:3] == ["# Running 'sched/pipe' benchmark:",
                         "# Executed 2000 pipe operations between two threads", ""]
    # perf's formats: " %14s: %lu.%03lu [sec]", " %14lf usecs/op", " %14d ops/sec".
    assert lines[3] == f"     Total time: {usecs // 10**6}.{usecs % 10**6 // 1000:03d} [sec]"
    assert lines[5] == f" {usecs / 2000:14f} usecs/op"
    assert lines[6] == f" {int(2000 / (usecs / 1e6)):14d} ops/sec"


@pytest.mark.parametrize("args, msg", [
    (["hackbench", "-g", "0"], "hackbench: -g/--groups: 0 is out of range: 1 to 16384"),
    (["hackbench", "-s", "4097"], "hackbench: -s/--datasize: 4097 is out of range: 1 to 4096"),
    (["hackbench", "-f", "20", "-g", "1000"], "40001 threads"),
    (["hackbench", "--taskgroup", "a b"], "hackbench: --taskgroup: cgroup path"),
    (["hackbench", "-l", "-3"], "argument -l/--loops: '-3' is not a whole number"),
    (["hackbench", "--threads", "--process"], "not allowed with argument"),
    (["perf-bench-pipe", "-l", "0"], "perf-bench-pipe: -l/--loop: 0 is out of range"),
])
def test_bad_benchmark_options_name_the_option(cli, args, msg):
    out = cli(*args, "--platform", "smp:2")
    err = out.stderr.decode()
    assert out.returncode == 2 and msg in err and not out.stdout, err


def test_benchmark_without_cost_model_is_warned(cli):
    out = cli("perf-bench-pipe", "-l", "10", "--set", "overhead=off", "--platform", "smp:2")
    assert out.returncode == 0
    assert "cost nothing with overhead=off" in out.stderr.decode()
    assert "Total time: 0.000 [sec]" in out.stdout.decode()
