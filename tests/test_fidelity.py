"""Behaviours a real kernel shows that schedlab once missed (issue 17's comparison with Linux
6.1), each against the kernel's arithmetic worked out by hand, on the idealized machine (the
kernel's own work free, every thread started at once without rt-app's main thread: IDEAL)
where the derivation counts whole nanoseconds."""

import subprocess
import sys

import schedlab

AT_ONCE = ["rtapp.start_barrier=off"]
IDEAL = ["overhead=off", *AT_ONCE]


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
    r = schedlab.run(w, "smp:1", kernel="6.1", sets=AT_ONCE)
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
    # stopper to the mask's CPU at that instant: 2→0, 0→1, 1→2, ... The first at 2 ns (the
    # task starts 1 ns in, when its idle CPU reschedules, and its affinity change is a
    # scheduling event, 1 ns after its switch in); each next one phase plus 1 ns later (the
    # idle destination CPU switches to it 1 ns after the move).
    w = {"global": {"duration": 1}, "tasks": {"t": {"cpus": [2], "loop": 2, "phases": {
        "a": {"cpus": [0], "run": 1500}, "b": {"cpus": [1], "run": 1500}, "c": {"run": 1500}}}}}
    r = schedlab.run(w, "smp:4", sets=IDEAL)
    m = r.events[r.events.event == "sched_migrate_task"]
    moves = list(zip((m.ts - 10**9).tolist(), m.cpu.tolist(), m.target_cpu.tolist()))
    step = 1_500_000
    assert moves == [(2 + i * (step + 1), src, dst) for i, (src, dst) in
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


def wu_lat(tmp_path, workload, platform="smp:1"):
    """Each thread's rt-app log `wu_lat` column, by thread name."""
    schedlab.run(workload, platform, log_dir=tmp_path, frames=False, sets=IDEAL)
    out = {}
    for log in sorted(tmp_path.glob("*.log")):
        rows = [line.split() for line in log.read_text().splitlines()[1:]]
        out[log.stem.split("-")[2]] = [int(r[10]) for r in rows]
    return out


def test_a_fair_sleep_ends_within_its_timer_slack_and_an_rt_sleep_on_time(tmp_path):
    # Each alone on an idle CPU (no tick or other timer to end a range early): a SCHED_OTHER
    # task's timer fires at the end of its range [expiry, expiry + 50 µs], so every row's
    # wu_lat (the wakeup that ends the row's iteration) is 50 µs; SCHED_FIFO timers have no
    # slack: 0.
    w = {"global": {"duration": 1}, "tasks": {
        "o": {"cpus": [0], "loop": 6, "run": 1000, "timer": {"ref": "a", "period": 10000}},
        "f": {"cpus": [1], "policy": "SCHED_FIFO", "priority": 10, "loop": 6, "run": 1000,
              "timer": {"ref": "b", "period": 10000}}}}
    lat = wu_lat(tmp_path, w, "smp:2")
    assert lat["o"] == [50] * 6 and lat["f"] == [0] * 6


def test_a_busy_cpus_tick_ends_a_sleep_inside_its_range(tmp_path):
    # A SCHED_IDLE hog keeps CPU 0 busy, so it ticks every 4 ms from boot (runs start at
    # 1 s = 250 ticks); the SCHED_OTHER sleeper there (which preempts the hog at once) has
    # expiries every 10 ms: at 20, 40, 60 ms a tick falls at the expiry, inside the range, and
    # ends the sleep at once; at 10, 30, 50, 70 ms the next tick (12, 32, 52, 72 ms) is past
    # the range's end, 50 µs.
    w = {"global": {"duration": 1}, "tasks": {
        "hog": {"policy": "SCHED_IDLE", "loop": 1, "run": 900000},
        "s": {"loop": 7, "run": 1000, "timer": {"ref": "a", "period": 10000}}}}
    assert wu_lat(tmp_path, w)["s"] == [50, 0, 50, 0, 50, 0, 50]


def test_timers_in_range_on_one_cpu_end_together(tmp_path):
    # Two SCHED_OTHER sleepers pinned to idle CPU 0, expiries 20 µs apart (same period, b
    # delayed 20 µs). a's hard expiry (+50 µs) is an interrupt on CPU 0 inside b's range, so
    # b's sleep ends with a's, 30 µs after b's expiry. a, woken first, runs its 10 µs at once
    # (wu_lat 50), then b: wu_lat 30 + 10 = 40. At the third wakeup a has no loop left and
    # exits without running: b's is 30. Alone, b's range would end at +50 µs.
    w = {"global": {"duration": 1}, "tasks": {
        "a": {"cpus": [0], "loop": 3, "run": 10, "timer": {"ref": "ta", "period": 10000}},
        "b": {"cpus": [0], "delay": 20, "loop": 3, "run": 10, "timer": {"ref": "tb", "period": 10000}}}}
    lat = wu_lat(tmp_path, w)
    assert lat["a"] == [50] * 3 and lat["b"] == [40, 40, 30]


def test_rtapp_threads_meet_at_the_start_barrier_and_its_wakeups_spread_them():
    # rt-app 1.0: its main thread (pid 1, forked on CPU 0, running at 1 ns) creates the
    # threads (clone free on this machine: all four at 2 ns) and waits for them; each waits at
    # pthread_barrier_wait(&threads_barrier) before its first phase and the last to come wakes
    # the others from its CPU. Fork placement (find_idlest_group; post_init_entity_util_avg
    # gives a new task min(cfs util × its weight / (cfs load + 1), (1024 − cfs util) / 2)):
    # the main thread has util 512 on CPU 0. h-0 goes to idle CPU 1 (util 512). h-1 and h-2
    # stay on the forking CPU 0, the local group kept (no idle CPU either side) while it has
    # capacity (group_has_capacity: 1024 × 100 > util × 117): h-1 takes 256 (768 there), h-2
    # 128 (896). For h-3, 896 × 117 > 102,400: CPU 0 is fully busy, CPU 1 (512) has spare,
    # so h-3 goes to CPU 1. The main thread blocks (prev_state=S) at 2 ns, then h-2 (3 ns), h-3 and
    # h-1 (4 ns); h-0, the last, wakes h-2 (its prev CPU 0, idle: CPU 0), h-3 (prev CPU 1,
    # the waker's: 1) and h-1 (prev CPU 0: 0): two per CPU within a few ns, not after a
    # balance interval (the kernel spread them in about 3 ms, its threads running some code
    # first).
    w = {"global": {"duration": 1}, "tasks": {"h": {"instance": 4, "loop": -1, "run": 100000}}}
    r = schedlab.run(w, "smp:2", kernel="6.1", sets=["overhead=off"])
    ev = r.events[r.events.ts < 10**9 + 10]
    new = ev[ev.event == "sched_wakeup_new"]
    assert list(zip(new.pid, new.target_cpu)) == [(1, 0), (1000, 1), (1001, 0), (1002, 0), (1003, 1)]
    blocked = ev[(ev.event == "sched_switch") & (ev.prev_state == "S")]
    assert list(zip(blocked.ts - 10**9, blocked.pid)) == [(2, 1), (3, 1002), (4, 1003), (4, 1001)]
    wake = ev[ev.event == "sched_wakeup"]
    assert list(zip(wake.pid, wake.target_cpu)) == [(1002, 0), (1003, 1), (1001, 0)]
    # Then two hogs per CPU, in 8 ms turns (6.1 on 2 CPUs: a 12 ms period, 6 ms ideal slices,
    # preempted at the second 4 ms tick): 125 turns in 1 s per CPU, so a pair's shares differ
    # by at most one turn: each within 4 ms of 0.5 s.
    assert (r.tasks.run_ns - 5 * 10**8).abs().max() <= 4 * 10**6


def test_rtapp_threads_take_their_rt_policy_in_their_set_up(tmp_path):
    # rt-app 1.0 creates a thread with its main thread's policy (SCHED_OTHER, nice 0) and the
    # thread sets SCHED_RR in its set-up. 6.1, one CPU, the idealized machine: the main thread
    # (pid 1) runs at 1 ns, creates r-0 and r-1 at 2 ns and blocks in pthread_join. START_DEBIT
    # places each new task a vslice past min_vruntime, the slice shrinking with the queue:
    # r-0's 6 ms × 1024/2048 = 3 ms (main queued), r-1's 6 ms × 1024/3072 = 2 ms, so r-1 runs
    # first. It sets SCHED_RR (prio 99 − 10 = 89) and waits at the barrier (3 ns); r-0 sets
    # it, comes last and wakes r-1, which as an RT task of equal priority does not preempt
    # it: r-0 has the first 100 ms slice (RR_TIMESLICE), then they alternate. The kernel's
    # run (the oracle's up-rr-2@6.1 record) has the same order: r-1's set-up, r-0's slice.
    w = {"global": {"duration": 1}, "tasks": {
        "r": {"instance": 2, "loop": -1, "run": 100000, "policy": "SCHED_RR", "priority": 10}}}
    out = tmp_path / "t.txt"
    r = schedlab.run(w, "smp:1", kernel="6.1", sets=["overhead=off"], duration_ns=300_000_000,
                     trace=out)
    sw = r.events[r.events.event == "sched_switch"]
    assert list(zip(sw.ts - 10**9, sw.pid, sw.prev_state, sw.other_pid)) == [
        (1, 0, "R", 1), (2, 1, "S", 1001), (3, 1001, "S", 1000),
        (100_000_001, 1000, "R", 1001), (200_000_001, 1001, "R", 1000)]
    lines = [ln for ln in out.read_text().splitlines() if "sched_switch:" in ln]
    assert "prev_comm=rt-app prev_pid=1 prev_prio=120" in lines[1]
    assert "prev_comm=r-1 prev_pid=1001 prev_prio=89 prev_state=S" in lines[2]


def test_timer_interrupts_come_late_by_a_draw_of_the_seed(tmp_path):
    # qemu-tcg:2's ticks and timers come up to 200 µs after their expiry, and each vCPU up to
    # 30 µs later than that (sim/jitter.rs): a seed gives the same bytes every time, two seeds
    # two schedules, and no tick is early or later than the spread and skew.
    w = {"global": {"duration": 1}, "tasks": {"h": {"instance": 3, "loop": -1, "run": 100000}}}
    def trace(seed, name):
        out = tmp_path / name
        r = schedlab.run(w, "qemu-tcg:2", kernel="6.1", sets=[f"seed={seed}", *IDEAL], trace=out)
        return out.read_bytes(), r
    (a, ra), (b, _), (c, rc) = trace(0, "a.txt"), trace(0, "b.txt"), trace(1, "c.txt")
    assert a == b
    sw = lambda r: r.events[r.events.event == "sched_switch"][["ts", "cpu", "other_pid"]].values.tolist()
    assert sw(ra) != sw(rc)
    # A hog is preempted 1 ns after a tick: 0-230 µs (and 1 ns) after a 4 ms jiffy.
    pre = ra.events[(ra.events.event == "sched_switch") & (ra.events.prev_state == "R")]
    late = (pre.ts - 10**9) % 4_000_000
    assert len(pre) > 100 and late.max() < 200_000 + 30_000 + 2 and late.std() > 20_000


def vm(tmp_path, work_stretch: str):
    """A one-CPU platform file whose jobs stretch by `work_stretch` (a TOML list)."""
    path = tmp_path / "vm.toml"
    path.write_text(f'name = "vm"\ndescription = "a VM"\nwork_stretch = {work_stretch}\n'
                    '[[freq_domain]]\nname = "c"\ncpus = "0"\ncapacity = 1024\n'
                    'opps = [{ khz = 1000000 }]\n')
    return path


def test_jobs_take_longer_than_calibrated_by_the_platforms_draws(tmp_path):
    # qemu-tcg:1 runs every job 1.9% long (work_stretch [1019]): a 3 ms run takes
    # 3000 µs * 1019 / 1000 = 3057 µs with the kernel's work free; as calibrated with
    # jitter.work=off.
    w = {"global": {"duration": 1}, "tasks": {"p": {"loop": 5, "run": 3000, "timer": {"ref": "t", "period": 10000}}}}
    # (after its last loop the thread runs 1 ns more, to exit)
    jobs = lambda r: [ms for comm, ms in slices(r) if comm.startswith("p") and ms > 0.001]
    stretched = jobs(schedlab.run(w, "qemu-tcg:1", kernel="6.1", sets=IDEAL))
    assert len(stretched) == 5 and all(abs(ms - 3.057) < 1e-6 for ms in stretched), stretched
    calibrated = jobs(schedlab.run(w, "qemu-tcg:1", kernel="6.1", sets=[*IDEAL, "jitter.work=off"]))
    assert all(abs(ms - 3.0) < 1e-6 for ms in calibrated), calibrated
    # Quantiles 1.0 at 25% and 2.0 at 75%: a quarter of the jobs as calibrated, a quarter
    # twice as long, the middle half evenly between; a seed gives the same jobs every time.
    path = vm(tmp_path, "[1000, 2000]")
    w["global"]["duration"], w["tasks"]["p"]["loop"] = 5, 400
    runs = [jobs(schedlab.run(w, str(path), kernel="6.1", sets=[*IDEAL, f"seed={s}"]))
            for s in (5, 5, 6)]
    drawn = runs[0]
    assert runs[0] == runs[1] and runs[0] != runs[2]
    assert len(drawn) == 400 and all(3.0 - 1e-6 < ms < 6.0 + 1e-6 for ms in drawn)
    ends = sum(abs(ms - 3.0) < 1e-6 for ms in drawn), sum(abs(ms - 6.0) < 1e-6 for ms in drawn)
    # 100 expected at each end (binomial σ ≈ 8.7); the mean 1.5 * 3 ms (σ of the mean ≈ 0.06).
    assert all(70 <= n <= 130 for n in ends), ends
    assert abs(sum(drawn) / len(drawn) - 4.5) < 0.2


def test_a_platforms_work_stretch_is_checked(tmp_path):
    wl = tmp_path / "w.json"
    wl.write_text('{"tasks": {"t": {"loop": 1, "run": 10}}}')
    for q, msg in (("[400]", "work_stretch: 400 out of range, 500 to 4000"),
                   ("[1200, 1100]", "work_stretch: the quantiles must ascend")):
        path = vm(tmp_path, q)
        r = subprocess.run([sys.executable, "-m", "schedlab", "run", "--platform", str(path), str(wl)],
                           capture_output=True)
        err = r.stderr.decode()
        assert r.returncode == 2 and msg in err and "Traceback" not in err, err


def test_an_rr_slice_counts_the_tick_that_throttles_it():
    # Two SCHED_RR hogs on one CPU, 100 ms slices (25 ticks at HZ=250), RT throttling 950 ms
    # a second. They alternate each 100 ms; r-1's slice from 900 ms counts the ticks at 904
    # ... 952 ms (13), the last of which finds 952 ms of RT time, past the 950 allowed: it is
    # throttled then (task_tick_rt counts that tick too) until the period's end at 1 s, and
    # its slice ends 12 ticks later, at 1048 ms. The kernel's record shows the same.
    w = {"global": {"duration": 2}, "tasks": {"r": {
        "instance": 2, "loop": -1, "run": 100000, "policy": "SCHED_RR", "priority": 10}}}
    r = schedlab.run(w, "qemu-tcg:1", kernel="6.1", sets=IDEAL)
    sw = r.events[r.events.event == "sched_switch"]
    comm = dict(zip(r.tasks.pid, r.tasks.comm))
    at = [(round((t - 10**9) / 1e6, 3), comm.get(p, "idle"), comm.get(n, "idle"))
          for t, p, n in zip(sw.ts, sw.pid, sw.other_pid)]
    assert (952.0, "r-1", "idle") in at and (1000.0, "idle", "r-1") in at, at[:14]
    assert (1048.0, "r-1", "r-0") in at, at[10:16]


def test_a_workload_begins_at_its_start_phase():
    # rtapp.start_ns = 1.5 ms: rt-app's main thread comes 1.5 ms after the run's start (a
    # tick), and the workload's 10 ms run from there, to 11.5 ms: a job of 1 ms every 2 ms
    # still ends past 10 ms.
    w = {"global": {"duration": 1}, "tasks": {"t": {"loop": -1, "run": 1000, "sleep": 1000}}}
    r = schedlab.run(w, "smp:1", kernel="6.1", duration_ns=10_000_000,
                     sets=["rtapp.start_ns=1500000", "overhead=off"])
    sw = r.events[r.events.event == "sched_switch"].ts - 10**9
    assert sw.min() == 1_500_001, sw.min()
    assert 10_000_000 < sw.max() < 11_500_000, sw.max()
