import math

import pandas as pd
import pytest

import schedlab
from schedlab import pelt
from kernel_arith import LOAD_AVG_MAX, PERIOD_NS, always_running_util, decay, first_period_reaching

Y = 0.5 ** (1 / 32)


def test_replay_hand_computed_steps():
    # Row 1 sets last_update_time. Row 2: 1000 units inside the first period, no boundary
    # crossed, averages not recomputed. Row 3: 1048 more units from period_contrib 1000:
    # d = 2048 → 2 periods, d1 = 24, d3 = 0; contrib = decay(24, 2) + (47742 − decay(47742, 2) − 1024).
    df = pd.DataFrame({"now_ns": [0, 1000 * 1024, 2048 * 1024], "load": [1, 1, 1],
                       "runnable": [1, 1, 1], "running": [1, 1, 1]})
    out = pelt.replay(df)
    assert out.loc[0, ["load_sum", "util_sum", "util_avg"]].tolist() == [0, 0, 0]
    assert out.loc[1, ["load_sum", "util_sum", "period_contrib", "util_avg"]].tolist() == [1000, 1000 << 10, 1000, 0]
    contrib = decay(24, 2) + (LOAD_AVG_MAX - decay(LOAD_AVG_MAX, 2) - 1024)
    load_sum = decay(1000, 2) + contrib
    util_sum = decay(1000 << 10, 2) + (contrib << 10)
    assert out.loc[2, "period_contrib"] == 0
    assert out.loc[2, "load_sum"] == load_sum
    assert out.loc[2, "util_sum"] == util_sum
    assert out.loc[2, "util_avg"] == util_sum // 46718
    assert out.loc[2, "load_avg"] == 1024 * load_sum // 46718


def test_replay_always_running_matches_the_integer_series():
    n = 300
    df = pd.DataFrame({"now_ns": [k * PERIOD_NS for k in range(n + 1)], "load": 1, "runnable": 1, "running": 1})
    out = pelt.replay(df, weight=2048)
    assert out["util_avg"].tolist()[1:] == always_running_util(n)
    assert out["runnable_avg"].tolist()[1:] == always_running_util(n)


def test_replay_weight_scales_load_avg_only():
    df = pd.DataFrame({"now_ns": [0, 5 * PERIOD_NS], "load": [1, 1], "runnable": [1, 1], "running": [0, 0]})
    light, heavy = pelt.replay(df, weight=15), pelt.replay(df, weight=88761)
    assert light.loc[1, "load_sum"] == heavy.loc[1, "load_sum"]
    assert heavy.loc[1, "load_avg"] == 88761 * heavy.loc[1, "load_sum"] // 46718
    assert light.loc[1, "util_avg"] == 0


@pytest.mark.parametrize("column,value,message", [
    ("running", [1, 1], "runnable=0"),
    ("load", [1, 2], "not 0 or 1"),
])
def test_replay_refuses_bad_rows(column, value, message):
    df = pd.DataFrame({"now_ns": [0, 10], "load": [1, 1], "runnable": [0, 0], "running": [0, 0]})
    df[column] = value
    with pytest.raises(schedlab.InputError, match=message):
        pelt.replay(df)


def test_replay_refuses_time_going_back():
    df = pd.DataFrame({"now_ns": [5000, 4000], "load": [1, 1], "runnable": [1, 1], "running": [1, 1]})
    with pytest.raises(schedlab.InputError, match="row 1, column now_ns"):
        pelt.replay(df)


@pytest.mark.parametrize("run_ms,period_ms,capacity,freq", [(20, 200, 1024, 1.0), (20, 200, 512, 1.0),
                                                             (12, 32, 1024, 0.5), (3, 10, 1024, 1.0)])
def test_periodic_settles_on_seed_bounds(run_ms, period_ms, capacity, freq):
    df = pelt.periodic(run=f"{run_ms}ms", period=f"{period_ms}ms", capacity=capacity, freq_ratio=freq,
                       duration="3s")
    r, p = run_ms * 1e6 / PERIOD_NS, period_ms * 1e6 / PERIOD_NS
    hi = 1024 * (1 - Y ** r) / (1 - Y ** p)
    lo = hi * Y ** (p - r)
    assert abs(df.attrs["settled_max"] - hi) <= 2
    assert abs(df.attrs["settled_min"] - lo) <= 2
    assert set(df["event"]) == {"wakeup", "tick", "sleep"}
    assert df["now_ns"].is_monotonic_increasing


def last_sleep_and_the_update_before(df):
    sleep = df.index[df["event"] == "sleep"][-1]
    return df.loc[sleep], df.loc[sleep - 1]


def test_util_est_samples_where_each_kernel_samples():
    # 6.12 dequeue_task_fair calls util_est_update before dequeue_entities updates PELT, so
    # the sample is util_avg as of the last tick; 6.1 samples after the update, at sleep.
    # Settled, the estimate is that sample, give or take the 1% margin that keeps the old one.
    new = pelt.periodic(run="20ms", period="200ms", duration="2s", kernel="6.12")
    at_sleep, before = last_sleep_and_the_update_before(new)
    assert before["event"] == "tick" and before["util_avg"] < at_sleep["util_avg"]
    assert abs(int(at_sleep["util_est"]) - int(before["util_avg"])) < 10
    old = pelt.periodic(run="20ms", period="200ms", duration="2s", kernel="6.1")
    at_sleep, _ = last_sleep_and_the_update_before(old)
    assert abs(int(at_sleep["util_est"]) - int(at_sleep["util_avg"])) < 10


def test_ramp_against_continuous_series_and_seed():
    df = pelt.ramp([972, 486, 256])
    for target, periods in zip(df["target"], df["periods"]):
        continuous = 32 * math.log2(1024 / (1024 - target))
        assert abs(periods - continuous) <= 1
    # Legacy at half frequency: same time, contribution halved: decay(s) + 1002·512 a period.
    half = pelt.ramp([972, 486, 256], freq_ratio=0.5, invariance="legacy")
    assert half["reached_ns"].isna().tolist() == [True, False, False]
    assert half["periods"].tolist()[1:] == [first_period_reaching(t, 1002 * 512) for t in (486, 256)]
    assert first_period_reaching(972, 1002 * 512) is None


def test_ramp_with_tick_updates_answers_on_ticks():
    df = pelt.ramp([486], tick="4ms")
    ns = int(df.loc[0, "reached_ns"])
    assert ns % 4_000_000 == 0
    # The continuous crossing is at 29.7 periods = 31.1 ms: the first tick after it.
    assert ns == 32_000_000


def test_bad_parameters_are_input_errors():
    with pytest.raises(schedlab.InputError, match="--invariance"):
        pelt.ramp([100], invariance="new")
    with pytest.raises(schedlab.InputError, match="--capacity"):
        pelt.ramp([100], capacity=2048)
    with pytest.raises(schedlab.InputError, match="never sleep"):
        pelt.periodic(run="150ms", period="200ms", capacity=512)
    with pytest.raises(ValueError, match="20xs"):
        pelt.periodic(run="20xs")
