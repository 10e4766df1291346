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
    assert by_rule["slow_path"] == len(r.tasks)  # every fork
    assert by_rule["prev"] > 0
