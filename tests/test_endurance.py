"""Endurance: 30 simulated days of a light workload in bounded memory, with exact counters."""

import json
import subprocess
import sys

DAY_S = 86_400
# Three periodic tasks, one per activation every 1, 2 and 3 s.
LIGHT = {"tasks": {
    "a": {"loop": -1, "run": 10_000, "timer": {"ref": "a", "period": 1_000_000}},
    "b": {"loop": -1, "run": 5_000, "timer": {"ref": "b", "period": 2_000_000}},
    "c": {"loop": -1, "run": 2_000, "timer": {"ref": "c", "period": 3_000_000}},
}}
PERIODS_S = {"a-0": 1, "b-1": 2, "c-2": 3}

# A fresh process per measurement: its children's peak RSS is this one run's.
PEAK = ("import resource, subprocess, sys; "
        "r = subprocess.run(sys.argv[1:]); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(r.returncode)")


def run_for(days, tmp_path):
    wl, summary = tmp_path / "light.json", tmp_path / f"s{days}.json"
    wl.write_text(json.dumps(LIGHT))
    out = subprocess.run([sys.executable, "-c", PEAK, sys.executable, "-m", "schedlab", "run", str(wl),
                          "--platform", "hikey960", "--duration", f"{days * DAY_S}s", "--quiet",
                          "--summary", str(summary)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1]), json.loads(summary.read_text())


def test_thirty_days_in_the_memory_of_one(tmp_path):
    peak_1, _ = run_for(1, tmp_path)
    peak_30, s = run_for(30, tmp_path)
    assert peak_30 <= peak_1 * 1.10, f"peak RSS {peak_1} KB for 1 day, {peak_30} KB for 30 days"
    assert peak_30 < 200 * 1024
    duration_ns = 30 * DAY_S * 10**9
    assert s["simulated_s"] == 30 * DAY_S
    for t in s["tasks"]:
        # Every nanosecond of every thread's life is accounted once.
        assert t["run_ns"] + t["wait_ns"] + t["sleep_ns"] == duration_ns - t["started_ns"], t["comm"]
    # Activations at 0, P, 2P, … before the end: all but the first are wakeups; and two of the
    # three threads wait at rt-app's start barrier for the last, which wakes them.
    wakeups = {t["comm"]: t["wakeups"] - (30 * DAY_S // PERIODS_S[t["comm"]] - 1) for t in s["tasks"]}
    assert sorted(wakeups.values()) == [0, 1, 1], wakeups
