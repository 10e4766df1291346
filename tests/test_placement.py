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
