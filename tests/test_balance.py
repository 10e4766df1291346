"""Load balancing (fair.c, 6.12): what the periodic, NOHZ idle and newly idle balances do
on small machines, against bounds worked out from the domains' intervals."""

import schedlab


def test_four_hogs_started_on_one_cpu_end_two_and_two():
    # smp:2: one MC domain over both CPUs (groups of one CPU, imbalance_pct 117, intervals
    # 2-4 ms, busy_factor 16, HZ=250). Four hogs start pinned to CPU 0 for 1 ms of work, then
    # may run anywhere. CPU 1 is idle, so CPU 0's tick kicks it (NOHZ): as an idle CPU it pulls
    # half of the excess, by tasks. Then CPU 1 is busy and balances itself at most every
    # 4 ms × 16 − 1 jiffy = 60 ms: by load, each failed pass halving the load a task may bring
    # (shr_bound on nr_balance_failed), so it takes a second hog within 4 passes: by
    # 8 + 4 · 60 = 248 ms. Over 10 s each hog then runs half the time (±1%: losing at most a
    # third of 248 ms).
    w = {"global": {"duration": 10}, "tasks": {"h": {"instance": 4, "loop": 1, "phases": {
        "p0": {"cpus": [0], "run": 1000}, "p1": {"cpus": [0, 1], "run": 100_000_000}}}}}
    r = schedlab.run(w, "smp:2", duration_ns=10**10)
    moves = r.events[r.events.event == "sched_migrate_task"]
    # Moves at 0 are the pinned phase taking back the hogs forked on CPU 1.
    balance = moves[moves.ts > 10**9]
    assert (balance.ts - 10**9).max() <= 248_000_000
    assert sorted(r.tasks.cpu) == [0, 0, 1, 1]
    assert all(abs(u - 0.5) <= 0.01 for u in r.tasks.utilization), r.tasks.utilization.tolist()


def test_a_cpu_going_idle_pulls_a_waiting_task_at_once():
    # smp:2: two hogs on CPU 0 (pinned for their first 1 ms), one task of 10 ms pinned to CPU 1.
    # Before 10 ms CPU 1 is busy: its own periodic balance (at its first tick, 4 ms) finds
    # CPU 0 overloaded against its fully busy self and asks for load min((2048 − 1536)·1024,
    # (1536 − 1024)·1024)/1024 = 512, less than a hog's 1023: nothing moves, and the next
    # pass is 28 ms away. At 10 ms the task exits: CPU 1, newly idle, balances at once and
    # pulls one task (the excess halved) — the hog waiting on CPU 0, which last ran a tick
    # (4 ms) before, colder than the 0.5 ms of sysctl_sched_migration_cost.
    w = {"global": {"duration": 1}, "tasks": {
        "h": {"instance": 2, "loop": 1, "phases": {"p0": {"cpus": [0], "run": 1000},
                                                   "p1": {"cpus": [0, 1], "run": 100_000_000}}},
        "t": {"cpus": [1], "loop": 1, "run": 10_000}}}
    # every thread at once, the kernel's work free
    r = schedlab.run(w, "smp:2", sets=["rtapp.start_barrier=off", "overhead=off"])
    # After the start's pinning: the hog forked on CPU 1 runs 1 ns (from the idle CPU's
    # reschedule, 1 ns in) and moves to CPU 0; t starts then, 2 ns in, and ends 2 ns after 10 ms.
    # CPU 1 records the move it does (the event's cpu), from CPU 0 (value) to itself.
    moves = r.events[(r.events.event == "sched_migrate_task") & (r.events.ts > 10**9 + 1000)]
    assert list(zip(moves.ts - 10**9, moves.value, moves.target_cpu, moves.cpu))[:1] == \
        [(10_000_002, 0, 1, 1)]


def test_a_task_too_big_for_a_little_cpu_moves_to_a_big_one():
    # hikey960: littles of capacity 462, bigs of 1024 (PKG domain: SD_ASYM_CPUCAPACITY). An
    # always-running task starts on little CPU 0 (pinned for its first 1 ms). A new task's
    # util starts at half the idle CPU's spare capacity, 231, and grows by PELT on clock_pelt,
    # which runs at 462/1024 of wall time at the top OPP: util = 1024 − 793·y^n, n periods of
    # that clock. It stops fitting (util_fits_cpu: util·1280 ≥ 462·1024, util ≥ 370) after
    # n = 32·log2(793/654) = 8.9 periods = 8.9 × 1.024 ms × 1024/462 = 20.2 ms. The tick after
    # that marks the CPU misfit and kicks an idle CPU (NOHZ); a big idle CPU's PKG pass finds
    # the misfit group and, the task running, pulls it by active balance: at the first tick
    # past 20.2 ms (24 ms), within one more tick for the integer series.
    w = {"global": {"duration": 1}, "tasks": {"m": {"loop": 1, "phases": {
        "p0": {"cpus": [0], "run": 1000}, "p1": {"cpus": list(range(8)), "run": 10_000_000}}}}}
    r = schedlab.run(w, "hikey960", sets=["rtapp.start_barrier=off"])  # the task alone
    m = r.events[(r.events.event == "sched_migrate_task") & (r.events.ts > 10**9)]
    assert len(m) == 1
    t, src, dst = (m.ts.iloc[0] - 10**9) / 1e6, m.value.iloc[0], m.target_cpu.iloc[0]
    # (the stopper on the misfit's CPU moves it: the event is CPU 0's)
    assert 20.2 <= t <= 28 and src == 0 and dst in range(4, 8) and m.cpu.iloc[0] == 0


def test_two_tasks_stay_on_one_numa_node():
    # icelake-2s: two nodes of 72 CPUs, one LLC each. The NUMA level's allowance,
    # imb_numa_nr, is 72 >> 3 = 9 (12.5% of a node holding one LLC). Two hogs start on node 0;
    # an idle CPU of node 1 balancing the NUMA level finds an imbalance of 2 (72 idle CPUs
    # against 70, or 2 tasks against none), no more than NUMA_IMBALANCE_MIN while its node
    # would run 1 ≤ 9 tasks: adjust_numa_imbalance makes it 0, and the pair stays (it would
    # be split without the allowance).
    w = {"global": {"duration": 2}, "tasks": {"h": {"instance": 2, "run": 10_000_000}}}
    node0 = set(range(36)) | set(range(72, 108))
    for kernel in ("6.12", "6.1"):
        r = schedlab.run(w, "icelake-2s", kernel=kernel, frames=False)
        assert set(r.tasks.cpu) <= node0, (kernel, r.tasks.cpu.tolist())
        numa = r.domains[(r.domains.domain == "NUMA") & (r.domains.cpu == 36)].iloc[0]
        assert numa.lb_count_idle > 0 and numa.lb_gained_idle == 0


def test_an_idle_cpus_blocked_load_decays_every_32_ms():
    # CPU1's task runs 100 ms from its start (1 ns in: the idle CPU's reschedule) and sleeps
    # just after the 100 ms tick; CPU0 stays busy, so its ticks (every 4 ms, HZ=250) kick a
    # NOHZ stats pass whenever one is due: at the 104 ms tick (the last pass, while CPU1 was
    # busy, is more than 32 ms old), then nohz.next_blocked = now + 32 ms (LOAD_AVG_PERIOD),
    # passed at the first tick strictly after it, i.e. every 36 ms. Each
    # pass decays CPU1's root cfs_rq (update_blocked_averages) and reports it; over 36 ms
    # its util falls by y^(36 ms / 1.024 ms) = 2^(−35.16/32) = 0.467 (±3%: the PELT window's
    # partial period moves the divider).
    w = {"global": {"duration": 1}, "tasks": {
        "hog": {"cpus": [0], "run": 10**8},
        "t": {"cpus": [1], "loop": 1, "run": 100_000, "sleep": 2_000_000}}}
    r = schedlab.run(w, "smp:2")
    s = r.signals
    s = s[(s.signal == "sched_pelt_cfs") & (s.cpu == 1) & (s.path == "/") & (s.ts > 1.1e9)]
    ts, util = s.ts.tolist(), s.util.tolist()
    assert ts[0] == 1_104_000_000 and util[0] > 850, (ts[:3], util[:3])
    steps = [b - a for a, b in zip(ts, ts[1:])]
    assert set(steps[:6]) == {36_000_000}, steps
    for a, b in zip(util[:5], util[1:6]):
        assert abs(b / a - 0.467) <= 0.03 * 0.467, util


def test_newly_idle_balancing_is_gated_as_each_kernel_gated_it():
    # One task on CPU0 of smp:2 runs 100 µs and sleeps, 10 times, with no timer slack: CPU0 goes
    # newly idle 11 times (each sleep and the exit); no CPU ever has two tasks.
    # - none (≤ 2.6.34): every time.
    # - cost (3.13+, 6.1's and 6.12's): never, as no CPU is overloaded.
    # - migration_cost (2.6.35-3.12): while avg_idle ≥ 0.5 ms. It starts at 1 ms and moves 1/8 of the
    #   way to each idle stretch. Stretches of 900 µs keep it above: 11. Stretches of 100 µs take it
    #   (integer steps, truncated) 1,000,000 → 887,500 → 789,063 → 702,931 → 627,565 → 561,620 →
    #   503,918 → 453,429: the first 7 entries balance, the rest do not.
    # NI_RANDOM (6.12.y on) is off: its die before each pass is another gate.
    expected = {900: {"none": 11, "cost": 0, "migration_cost": 11},
                100: {"none": 11, "cost": 0, "migration_cost": 7}}
    for sleep, by_gate in expected.items():
        wl = {"global": {"default_policy": "SCHED_OTHER"},
              "tasks": {"t": {"loop": 10, "run": 100, "sleep": sleep, "cpus": [0]}}}
        for gate, n in by_gate.items():
            r = schedlab.run(wl, "smp:2", sets=["timer.slack_ns=0", f"fair.newidle_gate={gate}",
                                                "rtapp.start_barrier=off"],  # the task alone
                             features=["NO_NI_RANDOM"])
            assert [(d["cpu"], d["lb_count_newidle"]) for d in r.domain_rows] == [(0, n), (1, 0)], (sleep, gate)
