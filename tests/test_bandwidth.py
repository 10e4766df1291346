"""CFS bandwidth control (cgroup v2 cpu.max; fair.c CONFIG_CFS_BANDWIDTH), against the
arithmetic of the 5 ms slices, the period timer and the frozen PELT clock, worked by hand."""

import pytest

import schedlab

MS = 1_000_000
START = 10**9  # simulated runs start 1 s after boot; the period timer's grid starts at boot


def two_hogs(kernel):
    w = {"global": {"duration": 1},
         "tasks": {"hog": {"instance": 2, "taskgroup": "/g", "run": 2_000_000}}}
    return schedlab.run(w, "smp:2", kernel=kernel, sets=["hz=1000"],
                        cgroups=["/g:max=50000/100000"])


def throttles(r):
    """Per 100 ms period, the sorted instants (ms into it) at which a hog left a CPU."""
    sw = r.events[(r.events.event == "sched_switch") & (r.events.other_pid == 0)]
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
    # two cfs_rqs wait 75 + 75 ms (first period) or 76 + 74 ms (later ones).
    assert r.group_rows == [{"path": "/g", "quota_us": 50_000, "period_us": 100_000,
                             "nr_periods": 9, "nr_throttled": 9, "throttled_ns": 1350 * MS}]


@pytest.mark.parametrize("kernel", ["6.12", "6.1"])
def test_throttled_where_the_slices_run_out(kernel):
    # HZ=1000: each CPU's update_curr charges 1 ms a tick. Period 0: each cfs_rq takes 5 ms
    # whenever its runtime reaches 0 (at 0, 5, 10, 15, 20 ms): ten slices empty the 50 ms
    # pool, and at 25 ms both find it empty: throttled at 25 ms.
    # Later periods: the refill gives each throttled cfs_rq what it overran plus 1 ns
    # (runtime_remaining 0 → 1 ns) and unthrottles it. At the next tick it is at 1 ns − 1 ms
    # and tops up to 5 ms, taking 6 ms − 1 ns; then 5 ms at 6, 11 and 16 ms: the pool holds
    # 50 − 2·(6 + 15) ms + 0 = 8 ms at 21 ms, when the first CPU takes 5 ms and the second
    # the last 3: they are throttled at 26 and 24 ms.
    periods = throttles(two_hogs(kernel))
    assert periods[0] == [25.0, 25.0], periods
    assert all(p == [24.0, 26.0] for p in periods[1:]), periods
    assert len(periods) == 10


def test_a_throttled_cfs_rq_keeps_its_pelt_signals():
    # cfs_rq_clock_pelt stops while /g is throttled: the group's cfs_rq resumes where it
    # stopped, 1 ms of running later, instead of decaying over the 75 ms it waited (which
    # would divide its util by 2^(75/32) ≈ 5).
    r = two_hogs("6.12")
    s = r.signals
    g = s[(s.path == "/g") & (s.signal == "sched_pelt_cfs") & (s.cpu == 0)]
    before = g[g.ts <= START + 25 * MS].iloc[-1]
    after = g[g.ts > START + 100 * MS].iloc[0]
    assert after.ts == START + 101 * MS
    # Its clock moved by 1 ms (up to PELT's 1024-ns granularity), not 76 ms.
    assert abs((after.update_time - before.update_time) - 1 * MS) < 1024
    # A running cfs_rq's util grows over 1 ms (0.977 PELT periods of 1024 µs, y = 2^(−1/32))
    # by (1024 − util)·(1 − y^0.977) = (1024 − util)·0.0209: 6.4 from 718. Had it decayed
    # over 76 ms, it would have fallen to util·2^(−76/32) ≈ util/5.
    grow = (1024 - before.util) * (1 - 0.5 ** (0.977 / 32))
    assert abs((after.util - before.util) - grow) <= 1.5, (before.util, after.util, grow)
