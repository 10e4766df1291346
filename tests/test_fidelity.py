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
