"""hackbench and perf bench pipe as run-file generators: their structure counted exactly in
the system calls they make, and bad options refused with one clear message."""

import json

import pytest

import schedlab


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
    # copied per call.
    r = run(tmp_path, {"hackbench": {"groups": 2, "fds": 3, "loops": 40, "pipe": pipe}})
    assert r.deadlock is None
    assert len(r.tasks) == 12
    write, read = ("pipe_write", "pipe_read") if pipe else ("unix_stream_sendmsg", "unix_stream_recvmsg")
    n = ops(r)
    assert (n[write], n[read], n["copy_line"]) == (720, 720, 4 * 720)
    assert (r.tasks["sys_ns"] > 0).all()


def test_perf_bench_pipe_makes_two_writes_and_two_reads_per_round_trip(tmp_path):
    r = run(tmp_path, {"perf_bench_pipe": {"loops": 500}})
    n = ops(r)
    assert (n["pipe_write"], n["pipe_read"], n["copy_line"]) == (1000, 1000, 2000)
    # Each round trip blocks each task once: a switch to it and one away (at least).
    assert n["context_switch"] >= 2 * 500


@pytest.mark.parametrize("gen, msg", [
    ({"hackbench": {"groups": 0}}, "generators.hackbench.groups (line 1, column 41): 0 is out of range: 1 to 16384"),
    ({"hackbench": {"datasize": 4097}}, "4097 is out of range: 1 to 4096"),
    ({"hackbench": {"loops": -1}}, "-1 is out of range"),
    ({"hackbench": {"fds": 20, "groups": 1000}}, "40000 threads"),
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
    assert sum(o["count"] for o in s["ops"] if o["op"] == "pipe_write") == 720
    last_exit = max(t["ended_ns"] for t in s["tasks"])
    assert all(0 <= t["started_ns"] < t["ended_ns"] for t in s["tasks"])
    assert out.stdout.decode() == (
        "Running in process mode with 2 groups using 6 file descriptors each (== 12 tasks)\n"
        "Each sender will pass 40 messages of 100 bytes\n"
        f"Time: {_sec_ms(last_exit)}\n")


def test_perf_bench_pipe_command_prints_perf_report(cli, tmp_path):
    summary = tmp_path / "s.json"
    out = cli("perf-bench-pipe", "-l", "2000", "-T", "--platform", "hikey", "--summary", summary)
    assert out.returncode == 0, out.stderr
    s = json.loads(summary.read_text())
    usecs = max(t["ended_ns"] for t in s["tasks"]) // 1000
    assert usecs > 0
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
    (["hackbench", "-f", "20", "-g", "1000"], "40000 threads"),
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
    assert "cost nothing with --set overhead=off" in out.stderr.decode()
    assert "Total time: 0.000 [sec]" in out.stdout.decode()
