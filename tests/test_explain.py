"""`schedlab compare --explain` and `Comparison.explain()`: two runs in lock-step stop at the
first scheduling decision they take differently, with the values the kernel functions
weighed; identical configurations never diverge."""

import json
import subprocess
import sys

import pytest

import schedlab
from schedlab.explain import explain
from schedlab.run import RunSpec

# smp:2: a hog pinned to CPU 1 for the whole run; a task that starts pinned there too, runs
# 100 µs, then may run on either CPU and sleeps 1 ms between runs of 100 µs. Its first sleep
# ends with a timer on CPU 1, where the hog runs and CPU 0 is idle.
HOG_AND_SLEEPER = {"global": {"duration": 1},
                   "tasks": {"hog": {"cpus": [1], "run": 1_000_000},
                             "wakee": {"phases": {"there": {"cpus": [1], "run": 100, "loop": 1},
                                                  "free": {"cpus": [0, 1], "sleep": 1000, "run": 100}}}}}
# Both sides dequeue at once: a sleeper with negative lag would otherwise stay queued
# (DELAY_DEQUEUE) and its wakeup be ttwu_runnable's requeue, with no CPU to choose.
PLAIN = ("NO_DELAY_DEQUEUE",)
BIASED = dict(features=PLAIN + ("WAKEUP_BIAS_PREV_IDLE",), sets=("fair.prev_idle_bias=util_avg",))


def sides():
    return RunSpec.of(HOG_AND_SLEEPER, "smp:2", features=PLAIN), RunSpec.of(HOG_AND_SLEEPER, "smp:2", **BIASED)


def test_the_first_divergence_is_the_wakeup_the_bias_placed():
    """The wakee's placements: its fork (the 1st, alike: CPU 0, as the hog is queued on CPU 1,
    so its recent_used_cpu is 0 when the phase's affinity moves it to CPU 1), then its first
    wakeup (the 2nd), from the timer on CPU 1 (this = prev = target = 1). select_idle_sibling
    finds CPU 1 busy with the hog. Without the bias it takes the task's recent CPU 0, idle. With it,
    `almost_idle_cpu(1)` holds: util_avg ≤ 10 · capacity_of(1) = 10 · 1024 (no RT, deadline
    or IRQ time on smp:2), and util_avg never exceeds 1024, so CPU 1 keeps it, by the bias."""
    e = explain(*sides())
    assert len(e.divergences) == 1
    d = e.divergences[0]
    a, b = d.sides
    assert (a.kind, a.task, d.ordinal) == ("select_task_rq", "wakee-1-1001", 1)
    assert a.at_ns == b.at_ns and a.cpu == b.cpu == 1
    assert (a.outcome, a.how) == ("cpu0", "recent") and (b.outcome, b.how) == ("cpu1", "bias")
    sis = {"target": 1, "prev": 1, "recent_used_cpu": 0, "target_idle": 0, "prev_idle": 0, "recent_idle": 1}
    for side in (a, b):
        assert side.why[0][:2] == ("select_idle_sibling", "") and side.why[0][2] == sis
    (func, about, values), = b.why[1:]
    assert (func, about, values["limit"]) == ("almost_idle_cpu", "cpu1", 10 * 1024)
    assert 0 < values["value"] <= 1024
    # The runs took the same decisions until then: the context before is one.
    assert d.before[0] == d.before[1] and len(d.before[0]) == 6
    assert d.after[0][0].kind == "wakeup_preempt" and d.after[0][0].cpu == 0
    assert d.after[1][0].kind == "wakeup_preempt" and d.after[1][0].cpu == 1


def test_a_pick_notes_each_entity_with_its_lag_and_eligibility():
    """The second divergence is a pick on CPU 1, where one run has the wakee back and the other
    not. pick_eevdf's notes: V is the mean vruntime of equal weights, so the lags (V − v) sum
    to 0 less the floor's rounding (−(n − 1) to 0), an entity is eligible iff its lag ≥ 0,
    and the running entity is noted first."""
    e = explain(*sides(), 2)
    d = e.divergences[1]
    assert d.sides[0].kind == "pick_next_task" and d.sides[0].cpu == 1
    for side in d.sides:
        notes = [values for func, _, values in side.why if func == "pick_eevdf"]
        assert notes and notes[0]["running"] == 1
        assert -(len(notes) - 1) <= sum(v["lag"] for v in notes) <= 0
        assert all(v["eligible"] == (v["lag"] >= 0) for v in notes)
    assert e.divergences[0].sides[0].at_ns <= min(s.at_ns for s in d.sides)


def test_under_cfs_a_preemption_notes_each_entitys_vruntime():
    """6.1 (CFS), the same workload, b without WAKEUP_PREEMPTION: the first divergence is a
    wakeup on CPU 1 that preempts the hog in a and not in b. CFS keeps no V, so the notes
    (check_preempt_wakeup's) give each entity's vruntime only, the running one first. a's
    preemption is wakeup_preempt_entity's: the hog's vruntime leads the wakee's by more than
    the wakeup granularity, 1 ms · (1 + ilog2(2 CPUs)) = 2 ms at nice 0."""
    a = RunSpec.of(HOG_AND_SLEEPER, "smp:2", kernel="6.1")
    b = RunSpec.of(HOG_AND_SLEEPER, "smp:2", kernel="6.1", features=("NO_WAKEUP_PREEMPTION",))
    d = explain(a, b).divergences[0]
    assert [(s.kind, s.cpu, s.outcome) for s in d.sides] == [("wakeup_preempt", 1, "resched"),
                                                             ("wakeup_preempt", 1, "none")]
    for side in d.sides:
        assert {func for func, _, _ in side.why} == {"check_preempt_wakeup"}
        (hog, curr), (wakee, other) = [(about, values) for _, about, values in side.why]
        assert hog.startswith("hog-") and wakee.startswith("wakee-")
        assert curr == {"vruntime": curr["vruntime"], "running": 1} and other["running"] == 0
        assert curr["vruntime"] - other["vruntime"] > 2_000_000


def test_identical_configurations_never_diverge():
    """The same spec on both sides: every decision matches, to the end of the run."""
    a = RunSpec.of(HOG_AND_SLEEPER, "smp:2")
    e = explain(a, a, 3)
    assert e.divergences == ()
    plain = a.run(frames=False)
    assert e.simulated_ns == (plain.simulated_ns, plain.simulated_ns)
    # A decision per wakeup and per pick at least.
    wakee = next(t for t in plain.task_rows if t["comm"] == "wakee-1")
    assert e.compared > 2 * wakee["wakeups"]
    assert "No divergence" in e.text()


def test_comparison_explain_reruns_the_compared_sides():
    a, b = sides()
    c = schedlab.compare(a.run(frames=False), b.run(frames=False))
    first = c.explain().divergences[0]
    assert first.sides[1].how == "bias"
    loaded = schedlab.compare(a.run(frames=False), b.run(frames=False))
    loaded.a[0].spec = None
    with pytest.raises(schedlab.InputError, match="explain: it reruns both sides"):
        loaded.explain()


def cli(tmp_path, *args):
    wl = tmp_path / "wl.json"
    wl.write_text(json.dumps(HOG_AND_SLEEPER))
    return subprocess.run([sys.executable, "-m", "schedlab", "compare", str(wl), "--platform", "smp:2", *args],
                          capture_output=True, text=True)


def test_cli_prints_the_divergence(tmp_path):
    b = "--feature WAKEUP_BIAS_PREV_IDLE --set fair.prev_idle_bias=util_avg"
    r = cli(tmp_path, "--feature", "NO_DELAY_DEQUEUE", "--b", b, "--explain")
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"a: (the shared options)\nb: {b}\n\n" + explain(*sides()).text()


@pytest.mark.parametrize("args, message", [
    (("--explain", "0"), "argument --explain: '0' is not a number of divergences (1 to 10000)"),
    (("--explain", "2", "--seeds", "3"), "--seeds is not for it"),
    (("--explain", "--b", "--kernel 5.4"), "--b '--kernel 5.4'"),
])
def test_cli_bad_input(tmp_path, args, message):
    r = cli(tmp_path, *args)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr


def test_explain_refuses_a_count_that_is_not_one_or_more():
    a, _ = sides()
    with pytest.raises(schedlab.InputError, match="--explain: 0 is not a number of divergences"):
        explain(a, a, 0)
