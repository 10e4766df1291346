"""Task groups (fair.c, CONFIG_FAIR_GROUP_SCHED): shares split as calc_group_shares gives
them, on one CPU where every group's whole load is local."""

import pytest

import schedlab

# One CPU's hogs (pinned), 10 s: each share is checked to ±1% of the CPU.
SECONDS = 10


def hogs(groups: dict[str, int | None]) -> dict:
    """One always-running task per entry, in the named cgroup (None: the root)."""
    tasks = {}
    for name, group in groups.items():
        t = {"cpus": [0], "run": 100_000_000}
        if group is not None:
            t["taskgroup"] = group
        tasks[name] = t
    return {"global": {"duration": SECONDS}, "tasks": tasks}


def shares(r) -> dict[str, float]:
    return {t["comm"].split("-")[0]: t["run_ns"] / (SECONDS * 1e9) for t in r.task_rows}


# With all of a group's load on this CPU, calc_group_shares gives
#   load = max(cfs_rq->load.weight, load_avg) and tg_weight = tg->load_avg − contrib + load
#        = load, so shares = tg->shares · load / load = tg->shares:
# each group entity weighs its group's cpu.shares (weight·1024/100), and the CPU splits
# between the entities of a level in proportion to their weights.
@pytest.mark.parametrize("kernel", ["6.12", "6.1"])
def test_weights_100_and_300_split_25_75(kernel):
    r = schedlab.run(hogs({"a": "/A", "b": "/B"}), "smp:2", kernel=kernel,
                     cgroups=["/A:weight=100", "/B:weight=300"], frames=False)
    s = shares(r)
    assert abs(s["a"] - 0.25) <= 0.01 and abs(s["b"] - 0.75) <= 0.01, s


def test_nested_groups_split_each_level():
    # Root level: /P (1024) and /Q (1024) → ½ each. Inside /P: x (1024) and y (3072) → ¼ and
    # ¾ of P's half: 12.5% and 37.5%.
    r = schedlab.run(hogs({"x": "/P/x", "y": "/P/y", "q": "/Q"}), "smp:2",
                     cgroups=["/P/y:weight=300"], frames=False)
    s = shares(r)
    for name, want in {"x": 0.125, "y": 0.375, "q": 0.5}.items():
        assert abs(s[name] - want) <= 0.01, s
    # /P and /P/x were named without a description: a note says how they were made.
    assert any("cgroup /P/x: created" in w for w in r.warnings), r.warnings


def test_a_group_of_two_tasks_weighs_one_entity():
    # /G's entity weighs 1024 whatever it holds: against a root task of 1024 it gets half,
    # which its two tasks split: 25% each.
    r = schedlab.run(hogs({"g1": "/G", "g2": "/G", "r": None}), "smp:2", frames=False)
    s = shares(r)
    for name, want in {"g1": 0.25, "g2": 0.25, "r": 0.5}.items():
        assert abs(s[name] - want) <= 0.01, s


def test_an_idle_group_yields_to_a_normal_task():
    # cpu.idle=1: the group weighs WEIGHT_IDLEPRIO (3) against 1024, 3/1027 = 0.3%.
    r = schedlab.run(hogs({"i": "/I", "r": None}), "smp:2", cgroups=["/I:idle=1"], frames=False)
    s = shares(r)
    assert s["i"] <= 0.01 and s["r"] >= 0.99, s


@pytest.mark.parametrize("kernel", ["6.12", "6.1"])
@pytest.mark.parametrize("moving", [False, True])
def test_a_lone_tasks_group_entity_tracks_its_cfs_rq(kernel, moving):
    # One task alone in /g: on each CPU the group's entity is running exactly when its cfs_rq
    # runs the task and runnable exactly when the task is, so their PELT sums grow alike;
    # attaching and detaching the task (its first enqueue, and each move between CPUs)
    # propagates the cfs_rq's util and runnable to the entity (update_tg_cfs_util and
    # _runnable copy them). So at every update the entity reads what its cfs_rq reads.
    phases = {"p": {"loop": 1, "run": 3000, "sleep": 7000, "cpus": [0]}}
    if moving:
        phases["q"] = {"loop": 1, "run": 3000, "sleep": 7000, "cpus": [1]}
    wl = {"global": {"duration": 1, "default_policy": "SCHED_OTHER"},
          "tasks": {"t": {"loop": -1, "taskgroup": "/g", "phases": phases}}}
    # The task alone: started at once, without rt-app's main thread.
    s = schedlab.run(wl, "smp:2", kernel=kernel, sets=["rtapp.start_barrier=off"]).signals
    g = s[s["path"] == "/g"]
    cols = ["ts", "cpu", "util", "runnable"]
    se = g[g["signal"] == "sched_pelt_se"][cols].drop_duplicates(["ts", "cpu"], keep="last")
    cfs = g[g["signal"] == "sched_pelt_cfs"][cols].drop_duplicates(["ts", "cpu"], keep="last")
    both = se.merge(cfs, on=["ts", "cpu"], suffixes=("_se", "_cfs"))
    assert len(both) > 90 and set(both["cpu"]) == ({0, 1} if moving else {0})
    assert (both["util_se"] == both["util_cfs"]).all()
    assert (both["runnable_se"] == both["runnable_cfs"]).all()


def test_group_signals_carry_their_path(tmp_path):
    r = schedlab.run(hogs({"a": "/A", "b": "/B"}), "smp:2", trace=tmp_path / "t.txt",
                     duration_ns=200_000_000)
    paths = set(r.signals.path)
    assert {"/", "/A", "/B", "(null)"} <= paths, paths
    text = (tmp_path / "t.txt").read_text()
    assert "sched_pelt_cfs:" in text and " path=/A load=" in text
    # A group entity prints its path, comm (null) and pid -1, as LISA's module does.
    assert " path=/B comm=(null) pid=-1 load=" in text


@pytest.mark.parametrize("spec, says", [
    ("/A:weight=0", "1..=10000"),
    ("/A:weight=10001", "1..=10000"),
    ("/A:shares=1", "2..=262144"),
    ("/A:max=500/100000", "at least 1000"),
    ("/A:colour=1", "unknown key"),
])
def test_bad_cgroup_descriptions_are_refused(spec, says):
    with pytest.raises(schedlab.InputError, match=says):
        schedlab.run(hogs({"a": "/A"}), "smp:2", cgroups=[spec], duration_ns=1_000_000)


def test_too_many_idle_cgroups_are_refused():
    # 100,000 groups in all (limits.rs), the root one of them: 99,999 more at most.
    with pytest.raises(schedlab.InputError, match="^--idle-cgroups: 200000 is too many: at most 99999 more"):
        schedlab.run(hogs({"a": None}), "smp:2", idle_cgroups=200_000, duration_ns=1_000_000)


def test_the_cli_refuses_a_bad_weight_with_one_line_and_status_2(cli):
    r = cli("run", "tests/rtapp-corpus/tutorial/example10.json", "--duration", "1s",
            "--cgroup", "/tg1:weight=0")
    err = r.stderr.decode()
    assert r.returncode == 2 and r.stdout == b"", err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "--cgroup /tg1:weight=0" in err and "1..=10000" in err


@pytest.mark.parametrize("kernel", ["6.12", "6.1"])
def test_a_phase_taskgroup_moves_the_thread(kernel):
    # One CPU: hogs a in /A (cpu.weight 100) and b in /B (300), so /A's entity gets ¼ and
    # /B's ¾. m spends 1 s (wall time, `runtime`) in /A, then 1 s in /B (sched_move_task at
    # the phase's start): ½ of ¼ then ½ of ¾, i.e. 0.125 + 0.375 = 0.5 s; a 0.125 + 0.25,
    # b 0.75 + 0.375 s. Staying in /A would give m 0.25 s.
    w = {"global": {"duration": 2}, "tasks": {
        "a": {"cpus": [0], "taskgroup": "/A", "run": 10**8},
        "b": {"cpus": [0], "taskgroup": "/B", "run": 10**8},
        "m": {"cpus": [0], "loop": 1, "phases": {
            "inA": {"taskgroup": "/A", "runtime": 10**6},
            "inB": {"taskgroup": "/B", "runtime": 10**6}}}}}
    r = schedlab.run(w, "smp:2", kernel=kernel, cgroups=["/A:weight=100", "/B:weight=300"],
                     frames=False)
    ran = {t["comm"].split("-")[0]: t["run_ns"] / 1e9 for t in r.task_rows}
    for name, want in {"m": 0.5, "a": 0.375, "b": 1.125}.items():
        assert abs(ran[name] - want) <= 0.02, ran
    assert not any("taskgroup" in w for w in r.warnings), r.warnings
