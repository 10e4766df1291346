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
