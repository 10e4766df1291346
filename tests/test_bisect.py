"""`schedlab bisect` (issue 41): the switches between two configurations that move a metric
past a threshold, by delta debugging. Expected culprits are the switches that drive the
metric by construction; thresholds are placed between measured values."""

import pytest

import schedlab
from schedlab.bisect import bisect, metric_of
from schedlab.run import RunSpec

WORKLOAD = "tests/rtapp-corpus/mp3-short.json"


def spec(*sets, features=()):
    return RunSpec.of(WORKLOAD, "smp:2", sets=sets, features=features, duration_ns=500_000_000)


def sys_ns(*sets) -> float:
    return metric_of(spec(*sets).run(frames=False).summary(), "tasks.sys_ns.sum")


def test_one_switch_that_drives_the_metric_is_found():
    """System time is the cost model's: of four changes, `overhead` alone moves it."""
    a = spec("overhead=off")
    b = spec("overhead=on", "timer.slack_ns=0", "hz=1000", features=["NO_PLACE_LAG"])
    r = bisect(a, b, "tasks.sys_ns.sum", 1.0)
    assert [c.key for c in r.changes] == ["hz", "timer.slack_ns", "overhead", "PLACE_LAG"]
    assert [(c.key, c.a, c.b) for c in r.culprits] == [("overhead", "off", "on")]
    assert r.a == 0 and r.b > 0 and r.every == r.b
    # One culprit among four changes: two rounds of two runs (halves, then singletons).
    assert len(r.runs) == 4


def test_two_switches_that_drive_the_metric_together_are_both_found():
    """With the cost model on, HZ=1000 charges four times the ticks: a threshold above what
    either change gives alone (hz alone: no cost model, no system time) needs both."""
    alone = sys_ns("overhead=on")
    both = sys_ns("overhead=on", "hz=1000")
    assert both > alone > 0
    a = spec("overhead=off")
    b = spec("overhead=on", "hz=1000", "timer.slack_ns=0", features=["NO_PLACE_LAG"])
    r = bisect(a, b, "tasks.sys_ns.sum", (alone + both) / 2, jobs=2)
    assert sorted(c.key for c in r.culprits) == ["hz", "overhead"]


PERIODIC = '{"global": {"duration": 1}, "tasks": {"p": {"loop": -1, "run": 1000, "timer": {"ref": "t", "period": 10000}}}}'


def test_a_frame_metric_is_bisected_as_a_summary_figure(tmp_path):
    """A `df_*` metric: one periodic task alone on one CPU. Without the cost model the idle CPU
    switches to it 1 ns after each wakeup (the machine's next preemption point), so its worst
    wakeup latency (LISA's df_latency_wakeup, seconds) is 1 ns; the cost model's wakeup work
    delays every switch. Of three changes, `overhead` alone moves it past 0.1 µs."""
    w = tmp_path / "periodic.json"
    w.write_text(PERIODIC)

    def side(*sets):
        return RunSpec.of(str(w), "smp:1", sets=sets, duration_ns=200_000_000)

    a = side("overhead=off")
    b = side("overhead=on", "hz=1000", "timer.slack_ns=0")
    r = bisect(a, b, "df_latency_wakeup.wakeup_latency.p99", 1e-7)
    assert r.a == 1e-9 and r.b > 1e-7
    assert [(c.key, c.a, c.b) for c in r.culprits] == [("overhead", "off", "on")]


def test_percentiles_and_counts_reduce_as_numpy_does():
    """pNN is the linear-interpolation percentile (numpy's and pandas' default): of 1..5,
    p50 is 3, p90 is 4.6, p12_5 is 1.5; count is the rows."""
    summary = {"tasks": [{"x": v} for v in (5, 1, 4, 2, 3)]}
    assert [metric_of(summary, f"tasks.x.{h}") for h in ("p50", "p90", "p12_5", "count", "median")] == \
        [3.0, pytest.approx(4.6), 1.5, 5.0, 3.0]


@pytest.mark.parametrize("args, message, status", [
    (["--metric", "tasks.nope.max"], "--metric tasks.nope.max: not a number", 2),
    (["--metric", "tasks.sys_ns.p101"], "--metric tasks.sys_ns.p101: no reduction p101", 2),
    (["--metric", "df_nope.x.max"], "--metric df_nope.x.max: no frame df_nope (one of df_cluster_energy, ", 2),
    (["--metric", "df_latency_wakeup.nope.max"], "df_latency_wakeup has no column nope (it has Time", 2),
    (["--metric", "df_latency_wakeup.wakeup_latency"], "a frame's metric is df_NAME[(ARGS)].COLUMN.REDUCTION", 2),
    (["--metric", "df_task_signal.util.max"], "df_task_signal(): ", 2),
    (["--metric", "energy"], "--metric energy: the summary has no energy", 2),
    (["--metric", "tasks.sys_ns"], "a list's field and a reduction", 2),
    (["--b", "--set overhead=off"], "bisect: the two sides' switches do not differ", 2),
    (["--threshold", "1e15"], "no configuration crosses it", 0),
])
def test_bad_input_and_a_threshold_no_configuration_crosses(cli, args, message, status):
    base = {"--a": "--set overhead=off", "--b": "--set overhead=on", "--metric": "tasks.sys_ns.sum",
            "--threshold": "1"}
    for k, v in zip(args[::2], args[1::2]):
        base[k] = v
    r = cli("bisect", WORKLOAD, "--platform", "smp:2", "--duration", "200ms", *[x for kv in base.items() for x in kv])
    out = (r.stdout + r.stderr).decode()
    assert r.returncode == status and message in out, out
    assert "Traceback" not in out


@pytest.mark.parametrize("old, new", [("6.1", "6.12"), ("6.12", "7.3"), ("7.3", "6.6")])
def test_features_between_lists_what_differs_and_how_to_set_it(cli, old, new):
    """`features --between OLD NEW`: the switches whose presets differ (those `features`
    lists with two values in those columns), and run options that, given to OLD, give every
    one of NEW's values."""
    from schedlab import _core
    from schedlab.bisect import differences

    changes = differences(RunSpec("", kernel=old), RunSpec("", kernel=new))
    i, j = _core.kernels().index(old), _core.kernels().index(new)
    presets = {key: values for key, values in _core.features()}  # one value per kernel
    assert {c.key for c in changes} == {k for k, v in presets.items() if v[i] != v[j]}
    sets = [s for c in changes for s in c.options()[0]]
    feats = [f for c in changes for f in c.options()[1]]
    assert _core.switches(old, sets, feats) == _core.switches(new, [], [])
    out = cli("features", "--between", old, new).stdout.decode()
    assert f"Switches from {old} to {new}: {len(changes)} differ" in out


def test_a_per_policy_setting_one_side_lacks_is_a_change_to_its_every_policy_value():
    """Side a limits the a73 policy, side b governs the a53 policy: each per-policy key that
    one side lacks holds there its every-policy value (no limit, performance), so both are
    changes, and a with them has b's per-policy values."""
    from schedlab import _core
    from schedlab.bisect import differences, with_changes

    a = RunSpec.of(WORKLOAD, "hikey960", sets=["cpufreq.scaling_max_freq.a73=903000"])
    b = RunSpec.of(WORKLOAD, "hikey960", governors=["a53=schedutil"])
    changes = differences(a, b)
    assert [(c.key, c.a, c.b) for c in changes] == [
        ("cpufreq.scaling_max_freq.a73", "903000", "cpuinfo_max_freq"),
        ("cpufreq.governor.a53", "performance", "schedutil")]
    both = dict(_core.switches(a.kernel, with_changes(a, changes).switches(), []))
    assert (both["cpufreq.scaling_max_freq.a73"], both["cpufreq.governor.a53"]) == ("cpuinfo_max_freq", "schedutil")


def test_features_between_names_each_change_and_its_commit(cli):
    """6.1 to 6.12: EEVDF (6.6, its commit), DELAY_DEQUEUE (6.12) and LAST_BUDDY's removal
    (6.6); 6.12 to 7.3: HRTICK and NI_RATE on (7.3); 6.6 to 6.12: NI_RANDOM, backported to
    6.12.y; a kernel that is not a preset is refused with the known ones."""
    from schedlab import _core

    assert _core.history("fair.policy", "6.1", "6.12") == [
        ("6.6", "eevdf", "147f3efaa241 sched/fair: Implement an EEVDF-like scheduling policy")]
    assert [(k, v) for k, v, _ in _core.history("LAST_BUDDY", "6.1", "7.3")] == [("6.6", "off")]
    assert [(k, v) for k, v, _ in _core.history("HRTICK", "6.12", "7.3")] == [("7.3", "on")]
    assert _core.history("HRTICK", "6.1", "6.18") == []
    out = cli("features", "--between", "6.1", "6.12").stdout.decode()
    assert "--set fair.policy=eevdf" in out and "--feature DELAY_DEQUEUE" in out and "--feature NO_LAST_BUDDY" in out
    assert "147f3efaa241" in out
    out = cli("features", "--between", "6.12", "7.3").stdout.decode()
    assert "--feature HRTICK" in out and "--feature NI_RATE" in out and "--set sched.rt_runtime_us=1000000" in out
    assert "NI_RANDOM" not in out
    assert [(k, v) for k, v, _ in _core.history("NI_RANDOM", "6.6", "6.12")] == [("6.12", "on")]
    bad = cli("features", "--between", "6.1", "6.2")
    assert bad.returncode == 2 and "invalid choice: '6.2' (choose from '6.1', '6.6', '6.12', '6.18', '7.3')" in bad.stderr.decode()


def test_a_governor_given_as_governors_is_a_change_like_any_switch():
    """Sides that differ by their `governors` (as RunSpec.of takes them): on hikey960 the
    energy moves from performance's to schedutil's, and the governor is the change found; a
    with every change is b exactly."""
    a = RunSpec.of("tests/rtapp-corpus/video-short.json", "hikey960", governors="performance",
                   duration_ns=500_000_000)
    b = RunSpec.of("tests/rtapp-corpus/video-short.json", "hikey960", governors="schedutil",
                   duration_ns=500_000_000)
    r = bisect(a, b, "energy_mj.total", 0.0)
    r = bisect(a, b, "energy_mj.total", (r.a + r.b) / 2)
    assert r.every == r.b != r.a
    assert [(c.key, c.a, c.b) for c in r.culprits] == [("cpufreq.governor", "performance", "schedutil")]


def test_between_kernels_the_culprits_are_printed_with_their_commits(cli, tmp_path):
    """Two hogs on one CPU from 6.18 to 7.3: HRTICK ends each slice at its deadline rather
    than at the tick, so the switches grow, but only with 7.x's delayed lag. At rt-app's
    start barrier h-0 sleeps, delayed, and h-1 wakes it 17 µs later: under `zero` h-0 keeps
    its fork's half-slice deadline (its lag, read against h-1's vruntime of its pick, is
    negative), reaches it level with h-1's, is picked again at its hrtick, and a repick arms
    none: the hogs alternate at the 4 ms tick. Under `bounded` h-0 comes back at zero lag with
    a whole slice, and each hrtick hands the CPU over. Of the fourteen changes (HRTICK,
    HRTICK_DL, NI_RATE, the RT runtime, the slice protection, the wakeup preemption, the
    delayed lag, lazy preemption, the fair server's idle time, the hrtick's arming, the
    util_est sample, avg_idle's sample, the flat runqueue, the deadline class's pull on a
    change) bisect names those two, with where their defaults changed."""
    w = tmp_path / "hogs.json"
    w.write_text('{"global": {"duration": 1}, "tasks": {"h": {"instance": 2, "loop": -1, "run": 100000}}}')
    a = RunSpec.of(str(w), "smp:1", kernel="6.18", duration_ns=500_000_000)
    b = RunSpec.of(str(w), "smp:1", kernel="7.3", duration_ns=500_000_000)
    r = bisect(a, b, "tasks.preemptions.sum", 0.0)
    assert r.b > r.a > 0
    out = cli("bisect", str(w), "--platform", "smp:1", "--duration", "500ms", "--a", "--kernel 6.18",
              "--b", "--kernel 7.3", "--metric", "tasks.preemptions.sum",
              "--threshold", str((r.a + r.b) / 2)).stdout.decode()
    assert "2 of 14 changes" in out, out
    assert "HRTICK: off -> on  [7.3: 7.x features.h" in out, out
    assert "fair.delayed_lag: zero -> bounded  [7.3: sched/fair: Prevent negative lag" in out, out
