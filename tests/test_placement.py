"""Wakeup placement in the outputs: every placement counted once by its rule, in the summary
and in the events frame alike, and every migration once by its distance."""

from pathlib import Path

import schedlab

CORPUS = Path(__file__).parent / "rtapp-corpus"
PLACED = [f"placed_{n}" for n in ("prev", "affine", "idle_sibling", "recent", "eas", "slow_path",
                                  "bias", "current_cpu", "class", "fallback")]
MOVED = [f"migrations_{n}" for n in ("smt", "cluster", "llc", "other_llc", "other_node")]


def test_each_fork_and_wakeup_is_counted_once_by_its_rule_and_each_move_by_its_distance():
    r = schedlab.run(CORPUS / "browser-short.json", "hikey960")
    ev = r.events
    placed = ev[ev["event"].isin(["sched_waking", "sched_wakeup_new"])]
    assert placed["placement"].notna().all() and placed["value"].isna().all()
    assert ev.loc[~ev["event"].isin(["sched_waking", "sched_wakeup_new"]), "placement"].isna().all()
    per_task = placed.groupby("pid", observed=True).size()
    for _, t in r.tasks.iterrows():
        assert t[PLACED].sum() == per_task.get(t["pid"], 0), t["comm"]
        assert t[MOVED].sum() == t["migrations"], t["comm"]
    # hikey960: an LLC per cluster, so a move stays in its cluster or leaves the LLC.
    assert r.tasks[["migrations_smt", "migrations_llc", "migrations_other_node"]].sum().sum() == 0
    assert r.tasks["migrations_other_llc"].sum() > 0
    by_rule = placed["placement"].value_counts()
    assert by_rule["slow_path"] == len(r.tasks) + 1  # every fork: the threads and rt-app's main thread
    assert by_rule["prev"] > 0


def test_a_small_task_that_eas_places_on_a_little_cpu_stays_there():
    # hikey960 under schedutil: a 1 ms / 16 ms task pinned to big CPU 4 for its first period,
    # then allowed everywhere. find_energy_efficient_cpu prices a little CPU far below a big
    # one for its utilization (the Energy Model's littles at 533 MHz against the bigs' lowest
    # OPP, 903 MHz), so its wakeups go to the little cluster, and nothing in the kernel moves a
    # task that fits its CPU back at once. Both kernels.
    w = {"global": {"duration": 2}, "tasks": {"t": {"loop": -1, "phases": {
        "big": {"loop": 1, "cpus": [4], "run": 1000, "timer": {"ref": "t", "period": 16000}},
        "free": {"loop": -1, "run": 1000, "timer": {"ref": "t", "period": 16000}}}}}}
    for kernel in ("6.12", "6.1"):
        r = schedlab.run(w, "hikey960", kernel=kernel, governors=["schedutil"])
        ins = r.events[(r.events.event == "sched_switch") & (r.events.other_pid == 1000)
                       & (r.events.ts > 10**9 + 100_000_000)]
        assert len(ins) >= 110 and (ins.cpu < 4).all(), (kernel, ins.cpu.value_counts())



def test_each_event_is_recorded_where_and_by_whom_the_kernel_records_it(tmp_path):
    # smp:4. rt-app's main thread, on CPU 0, creates t and h, both pinned to CPU 1; h sleeps
    # 50 µs, then runs 100 ms; t waits at the start barrier, runs 100 µs and sleeps 1 ms, its
    # timer firing while h runs. As the kernel records them (trace-cmd report of the oracle's
    # records): the fork and wakeup_new are the parent's, on its CPU; sched_waking is in the
    # context the waker interrupted (h) and names the task's CPU before select_task_rq; the
    # wakeup onto busy CPU 1 is queued by the waker, in the same context.
    wl = {"global": {"default_policy": "SCHED_OTHER"},
          "tasks": {"t": {"cpus": [1], "loop": 1, "run": 100, "sleep": 1000},
                    "h": {"cpus": [1], "delay": 50, "loop": 1, "run": 100_000}}}
    trace = tmp_path / "t.txt"
    schedlab.run(wl, "smp:4", trace=trace, frames=False, duration_ns=20_000_000)
    seen = {}
    for line in trace.read_text().splitlines()[1:]:
        w = line.split()
        if "pid=1000 " in line or line.endswith("child_pid=1000"):
            seen[w[3]] = (w[0], w[1], w[-1])  # the last of each kind: t's timer wakeup
    assert seen["sched_process_fork:"][:2] == ("rt-app-1", "[000]")
    assert seen["sched_wakeup_new:"] == ("rt-app-1", "[000]", "target_cpu=001")
    assert seen["sched_waking:"] == ("h-1-1001", "[001]", "target_cpu=001")
    assert seen["sched_wakeup:"] == ("h-1-1001", "[001]", "target_cpu=001")


def test_a_wakeup_that_moves_a_task_is_recorded_by_the_waker_and_its_target():
    # In any run, as in the kernel: a wakeup's move (sched_migrate_task at its sched_waking's
    # instant) is recorded by the waking CPU in the waking's context, from the CPU the waking
    # named (the task's before select_task_rq); the wakeup is then recorded by the waking CPU,
    # or, when the target was idle (queued on its wake list), by the target itself.
    r = schedlab.run(CORPUS / "browser-short.json", "hikey960")
    ev = r.events.reset_index(drop=True)
    moved = 0
    for i in ev.index[ev.event == "sched_waking"]:
        nxt = ev.iloc[i + 1]
        if nxt.event != "sched_migrate_task" or nxt.pid != ev.pid[i] or nxt.ts != ev.ts[i]:
            continue
        moved += 1
        assert (nxt.cpu, nxt.value) == (ev.cpu[i], ev.target_cpu[i])
        wakeup = ev[(ev.index > i) & (ev.event == "sched_wakeup") & (ev.pid == ev.pid[i])].iloc[0]
        assert wakeup.target_cpu == nxt.target_cpu and wakeup.cpu in (ev.cpu[i], nxt.target_cpu)
    assert moved >= 10
