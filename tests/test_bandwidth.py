"""CFS bandwidth control (cgroup v2 cpu.max; fair.c CONFIG_CFS_BANDWIDTH), against the
arithmetic of the 5 ms slices, the period timer and the frozen PELT clock, worked by hand."""

import pytest

import schedlab

MS = 1_000_000
START = 10**9  # simulated runs start 1 s after boot; the period timer's grid starts at boot


def two_hogs(kernel):
    w = {"global": {"duration": 1},
         "tasks": {"hog": {"instance": 2, "taskgroup": "/g", "run": 2_000_000}}}
    # The kernel's work free (overhead=off): the derivations below count whole ticks.
    return schedlab.run(w, "smp:2", kernel=kernel, sets=["hz=1000", "overhead=off"],
                        cgroups=["/g:max=50000/100000"])


def throttles(r):
    """Per 100 ms period, the sorted instants (ms into it) at which a throttled hog left a CPU
    still runnable (not the start barrier's waits, which leave it sleeping)."""
    sw = r.events[(r.events.event == "sched_switch") & (r.events.other_pid == 0)
                  & (r.events.prev_state == "R")]
    out = {}
    for ts in sw.ts:
        period, into = divmod(int(ts) - START, 100 * MS)
        out.setdefault(period, []).append(into / MS)
    return [sorted(v) for _, v in sorted(out.items())]


@pytest.mark.parametrize("kernel", ["6.12", "6.1"])
def test_a_50_of_100_ms_group_of_two_hogs_gets_half_a_cpu(kernel):
    r = two_hogs(kernel)
    share = sum(t["run_ns"] for t in r.task_rows) / 1e9
    assert abs(share - 0.5) <= 0.01, share
    # cpu.stat: 9 refills inside the run, each finding the group throttled; each period the
    # two cfs_rqs wait from their throttles (test_throttled_where_the_slices_run_out) to the
    # refill: 75 + 74 ms (first period) or 76 + 74 ms (later ones), less 1 ns each.
    assert r.group_rows == [{"path": "/g", "quota_us": 50_000, "period_us": 100_000,
                             "nr_periods": 9, "nr_throttled": 9,
                             "throttled_ns": 149 * MS + 8 * 150 * MS - 9 * 2}]


@pytest.mark.parametrize("kernel", ["6.12", "6.1"])
def test_throttled_where_the_slices_run_out(kernel):
    # HZ=1000: each CPU's update_curr charges 1 ms a tick; a throttle's reschedule switches
    # 1 ns after the tick (the engine's nanosecond per scheduling event), as does an idle
    # CPU's after a wakeup or an unthrottle.
    # Period 0: the hogs start 1 ns in and take 5 ms each. At the 5 ms tick 1 ns is left; at
    # the 6 ms tick each is at 1 ns − 1 ms and tops up to 5 ms, taking 6 ms − 1 ns; then 5 ms
    # at 11 and 16 ms: the pool holds 50 − 2·(5 + 6 + 10) ms + 2 ns = 8 ms + 2 ns at 21 ms,
    # when the first CPU takes 5 ms and the second the rest: at the 25 ms tick the second is
    # 1 ms − 2 ns short, at the 26 ms tick the first is at 0: throttled at 25 and 26 ms.
    # Later periods: the refill gives each throttled cfs_rq what it overran plus 1 ns
    # (runtime_remaining 0 → 1 ns) and unthrottles it. At the next tick it is at 1 ns − 1 ms
    # and tops up to 5 ms, taking 6 ms − 1 ns; then 5 ms at 6, 11 and 16 ms: the pool holds
    # 50 − 2·(6 + 15) ms + 0 = 8 ms at 21 ms, when the first CPU takes 5 ms and the second
    # the last 3: they are throttled at 26 and 24 ms.
    periods = throttles(two_hogs(kernel))
    assert periods[0] == [25.000001, 26.000001], periods
    assert all(p == [24.000001, 26.000001] for p in periods[1:]), periods
    assert len(periods) == 10


def test_a_throttled_cfs_rq_keeps_its_pelt_signals():
    # cfs_rq_clock_pelt stops while /g is throttled: the group's cfs_rq resumes where it
    # stopped, 1 ms of running later, instead of decaying over the 74 ms it waited (which
    # would divide its util by 2^(74/32) ≈ 5). CPU 0's is throttled 1 ns after 26 ms.
    r = two_hogs("6.12")
    s = r.signals
    g = s[(s.path == "/g") & (s.signal == "sched_pelt_cfs") & (s.cpu == 0)]
    before = g[g.ts <= START + 26 * MS + 1].iloc[-1]
    after = g[g.ts > START + 100 * MS].iloc[0]
    assert after.ts == START + 101 * MS
    # Its clock moved by 1 ms (up to PELT's 1024-ns granularity), not 76 ms.
    assert abs((after.update_time - before.update_time) - 1 * MS) < 1024
    # A running cfs_rq's util grows over 1 ms (0.977 PELT periods of 1024 µs, y = 2^(−1/32))
    # by (1024 − util)·(1 − y^0.977) = (1024 − util)·0.0209: 6.4 from 718. Had it decayed
    # over 76 ms, it would have fallen to util·2^(−76/32) ≈ util/5.
    grow = (1024 - before.util) * (1 - 0.5 ** (0.977 / 32))
    assert abs((after.util - before.util) - grow) <= 1.5, (before.util, after.util, grow)
