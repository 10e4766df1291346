"""`run --schedstat`: /proc/schedstat at the end of a run, against counts traced by hand."""

import schedlab


def read(path):
    return [line.split() for line in path.read_text().splitlines()]


def test_a_cpu_line_counts_schedules_wakeups_and_times(tmp_path):
    # smp:1 (no domain), one SCHED_FIFO task (no timer slack): 3 loops of run 1 ms, sleep 1 ms,
    # then it exits. Switches: fork→run, sleep→idle, wake→run ×3, exit→idle: 8 schedule()
    # calls, 4 to idle; 3 wakeups, by the timer of the task's own CPU (local); 3 ms of run
    # time and 1 ns (its exit comes 1 ns after its last switch in: the engine's nanosecond
    # per scheduling event), 4 ns of wait (each time it is queued the CPU is idle and
    # switches 1 ns later), 4 slices (arrivals).
    w = {"global": {"duration": 1}, "tasks": {"t": {"policy": "SCHED_FIFO", "priority": 10,
                                                     "loop": 3, "run": 1000, "sleep": 1000}}}
    out = tmp_path / "schedstat"
    # The kernel's work free, the task alone (no rt-app main thread).
    schedlab.run(w, "smp:1", schedstat=out, frames=False, sets=["overhead=off", "rtapp.start_barrier=off"])
    lines = read(out)
    # version 16 (6.12); timestamp in jiffies since boot: the run ends as its task exits, 6 ms
    # and a few ns after its start at 1 s: 1.006 s is 251 whole ticks of 4 ms.
    assert lines[:2] == [["version", "16"], ["timestamp", "251"]]
    assert lines[2] == ["cpu0", "0", "0", "8", "4", "3", "3", "3000001", "4", "4"]
    assert len(lines) == 3
    schedlab.run(w, "smp:1", kernel="6.1", schedstat=out, frames=False)
    assert read(out)[0] == ["version", "15"]


START_AT_ONCE = ["rtapp.start_barrier=off"]
# test_balance's scenario: two tasks pinned to CPU 0 for their first 1 ms, then free; a third
# pinned to CPU 1 for 10 ms.
PULL = {"global": {"duration": 1}, "tasks": {
    "h": {"instance": 2, "loop": 1, "phases": {"p0": {"cpus": [0], "run": 1000},
                                               "p1": {"cpus": [0, 1], "run": 100_000_000}}},
    "t": {"cpus": [1], "loop": 1, "run": 10_000}}}


def test_a_newly_idle_pull_is_counted_in_the_newidle_columns(tmp_path):
    # test_balance's scenario, stopped at 11 ms: at 10 ms CPU 1, newly idle, runs one pass of
    # its domain (smp:2's MC, mask 3), finds CPU 0's group busier by tasks, imbalance 1, and
    # pulls one task: lb_count 1, balanced 0, failed 0, imbalance 1, gained 1, hot 0, no
    # "no busiest" — the third group of 8 (6.12's order: busy, idle, newly idle).
    out = tmp_path / "schedstat"
    # The derivation starts every thread at once (no start barrier).
    schedlab.run(PULL, "smp:2", duration_ns=11_000_000, schedstat=out, frames=False, sets=START_AT_ONCE)
    domain = [line for line in read(out) if line[0] == "domain0"][1]
    assert domain[1] == "3" and len(domain) == 2 + 36
    assert domain[2 + 16:2 + 24] == ["1", "0", "0", "1", "1", "0", "0", "0"]
    # Before 10 ms CPU 1 was busy: one busy pass (its first tick, 4 ms), no idle one. 6.1
    # (version 15) puts the idle columns first, then the busy ones; newly idle stays third.
    assert domain[2] == "1" and domain[2 + 8:2 + 16] == ["0"] * 8
    # 6.1's CFS places the second task forked onto CPU 1 at once (t) before the first (h-1):
    # START_DEBIT's slice shrinks with the queue. t runs first and h-1, still in its first
    # phase, moves to CPU 0 at 8 ms: at 10 ms it is pinned there, and the newly idle pass
    # finds the imbalance but fails: lb_count 1, failed 1, imbalance 1, nothing gained.
    schedlab.run(PULL, "smp:2", kernel="6.1", duration_ns=11_000_000, schedstat=out, frames=False,
                 sets=START_AT_ONCE)
    domain = [line for line in read(out) if line[0] == "domain0"][1]
    assert domain[2:2 + 8] == ["0"] * 8 and domain[2 + 8] == "1"
    assert domain[2 + 16:2 + 24] == ["1", "0", "1", "1", "0", "0", "0", "0"]


def test_version_17_names_each_domain_and_splits_the_imbalance(tmp_path):
    # The same pull under 7.3's format (version 17): the domain's name before its mask, and
    # lb_imbalance as four columns by migration type (load, util, task, misfit), 11 columns
    # per idle type. The pull is by tasks (migrate_task), so its 1 is in the third. NI_RANDOM
    # and HRTICK off: the scenario's derivation (every pass run, slices to the tick) holds.
    out = tmp_path / "schedstat"
    schedlab.run(PULL, "smp:2", kernel="7.3", duration_ns=11_000_000, schedstat=out, frames=False,
                 sets=START_AT_ONCE, features=["NO_NI_RANDOM", "NO_HRTICK"])
    lines = read(out)
    assert lines[0] == ["version", "17"]
    domain = [line for line in lines if line[0] == "domain0"][1]
    assert domain[1:3] == ["MC", "3"] and len(domain) == 3 + 45
    newidle = domain[3 + 22:3 + 33]
    assert newidle == ["1", "0", "0", "0", "0", "1", "0", "1", "0", "0", "0"]
