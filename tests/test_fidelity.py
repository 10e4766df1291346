"""Behaviours a real kernel shows that schedlab once missed (issue 17's comparison with Linux
6.1), each against the kernel's arithmetic worked out by hand."""

import schedlab


def slices(r):
    """(comm, ms) of every stretch a task ran, from consecutive sched_switch events."""
    sw = r.events[r.events.event == "sched_switch"]
    comm = dict(zip(r.tasks.pid, r.tasks.comm))
    ts, nxt = sw.ts.tolist(), sw.other_pid.tolist()
    return [(comm.get(n, "idle"), (b - a) / 1e6) for n, a, b in zip(nxt, ts, ts[1:])]


def test_repicking_the_running_task_does_not_restart_its_slice():
    # 6.1, one CPU, nice 0 (weight 1024) against nice 5 (335), ticks every 4 ms. Ideal
    # slices: 6 ms × 1024/1359 = 4.52 ms and 6 ms × 335/1359 = 1.48 ms. b is preempted at its
    # first tick (4 ms > 1.48 ms), its vruntime 4 ms × 1024/335 = 12.227 ms further on. a is
    # resched at every tick past its 4.52 ms, but re-picked (pick_next_task_fair leaves
    # prev_sum_exec_runtime alone) until its vruntime passes b's: 3 ticks (12 ms) while its
    # lead d at the switch exceeds 0.227 ms, else 4 (16 ms); each 12 ms turn lowers d by
    # 0.227 ms, so one 16 ms turn in every 17 or 18 (4 / 0.227 = 17.6). Restarting the slice
    # at each re-pick would alternate 8 and 16 ms instead.
    w = {"global": {"duration": 3}, "tasks": {"a": {"priority": 0, "run": 10**7},
                                               "b": {"priority": 5, "run": 10**7}}}
    r = schedlab.run(w, "smp:1", kernel="6.1")
    runs = slices(r)[4:]  # past the start: fork placement (START_DEBIT)
    a = [ms for comm, ms in runs if comm.startswith("a")]
    b = [ms for comm, ms in runs if comm.startswith("b")]
    assert set(b) == {4.0}
    assert set(a) == {12.0, 16.0}
    long = [i for i, ms in enumerate(a) if ms == 16.0]
    assert len(long) >= 8 and {j - i for i, j in zip(long, long[1:])} <= {17, 18}


def test_a_phase_that_narrows_the_affinity_moves_the_running_task_at_once():
    # tutorial/example8: the task's mask is CPU 2, its phases CPU 0, CPU 1, then the task's.
    # Each phase runs 1500 µs (capacity 1024 at smp:4's only OPP). At each phase start the
    # running task's CPU leaves the new mask, so set_cpus_allowed_ptr sends it through the
    # stopper to the mask's CPU at that instant: 2→0 at 0, 0→1 at 1.5 ms, 1→2 at 3 ms, ...
    w = {"global": {"duration": 1}, "tasks": {"t": {"cpus": [2], "loop": 2, "phases": {
        "a": {"cpus": [0], "run": 1500}, "b": {"cpus": [1], "run": 1500}, "c": {"run": 1500}}}}}
    r = schedlab.run(w, "smp:4")
    m = r.events[r.events.event == "sched_migrate_task"]
    moves = list(zip((m.ts - 10**9).tolist(), m.cpu.tolist(), m.target_cpu.tolist()))
    step = 1_500_000
    assert moves == [(i * step, src, dst) for i, (src, dst) in
                     enumerate([(2, 0), (0, 1), (1, 2), (2, 0), (0, 1), (1, 2)])]


def test_a_new_mask_takes_the_next_allowed_cpu_after_the_last_one_given():
    # cpumask_any_and_distribute, per calling CPU, returns the allowed CPU after the one it
    # gave last (0 at boot), wrapping; it is drawn at every mask change, used only when the
    # task's CPU left the mask. Started on CPU 0, phases {1,2,3}, {0,2,3}, {1,3}, twice:
    #   a from 0: 0 → next after 0 = 1, move 0→1      b from 1: 1 → after 0 = 2, move 1→2
    #   c from 2: 2 → after 0 = 1, move 2→1           a from 1: after 2 = 3, CPU 1 allowed: stays
    #   b from 1: after 3 (wrap) = 0, move 1→0        c from 0: after 1 = 3, move 0→3
    w = {"global": {"duration": 1}, "tasks": {"t": {"cpus": [0], "loop": 2, "phases": {
        "a": {"cpus": [1, 2, 3], "run": 100}, "b": {"cpus": [0, 2, 3], "run": 100},
        "c": {"cpus": [1, 3], "run": 100}}}}}
    r = schedlab.run(w, "smp:4")
    m = r.events[r.events.event == "sched_migrate_task"]
    assert list(zip(m.cpu, m.target_cpu)) == [(0, 1), (1, 2), (2, 1), (1, 0), (0, 3)]
