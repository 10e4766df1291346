"""Seed 003: Vincent Guittot's governor table (3 Jul 2015), by rt-app's
cpufreq_governor_efficiency method: one task alternating a run phase (work calibrated at
the highest frequency) and a sleep phase, pinned to one CPU of an A53 cluster.

perf = floor(100 · (T_powersave − T_gov) / (T_powersave − T_performance)), T being the mean
measured duration of the run phase; energy = the cluster's energy (its CPUs and shared
logic) over the whole test, as % of performance's.
"""

import json
import math
import tempfile
from pathlib import Path

import pandas as pd

from schedlab.reproduce import Experiment, Figure, register
from schedlab.run import run as simulate

LOOPS = 10
CASES = [(50, 1000), (100, 1000), (200, 1000), (400, 1000), (1000, 100)]
# The seed's table: (perf %, energy %) per governor and case, in CASES order.
SEED = {
    "powersave": [(0, 34), (0, 41), (0, 51), (0, 55), (0, 74)],
    "ondemand": [(95, 62), (98, 78), (98, 78), (99, 83), (99, 100)],
    "sched-dvfs-2015": [(49, 35), (69, 41), (86, 62), (93, 63), (96, 97)],
    "conservative": [(72, 33), (92, 45), (93, 62), (99, 77), (99, 99)],
}
PERF_TOLERANCE = {"ondemand": 10, "conservative": 10, "sched-dvfs-2015": 15}
# The seed's settings: ondemand sampling 10 ms, conservative 200 ms (2015 defaults);
# sched-dvfs ran on 2015's PELT, frequency-invariant by scaling contributions.
SETS = {
    "performance": [],
    "powersave": [],
    "ondemand": ["ondemand.sampling_rate_us=10000"],
    "conservative": ["conservative.sampling_rate_us=200000"],
    "sched-dvfs-2015": ["pelt.invariance=legacy"],
    "schedutil": [],
    "schedutil-legacy": ["pelt.invariance=legacy"],
}
CLUSTER_CPUS = [0, 1, 2, 3]


def measure(governor: str, run_ms: int, sleep_ms: int) -> tuple[float, float]:
    """(mean run-phase duration in µs, cluster-0 energy in mJ) of one test."""
    wl = {"global": {"default_policy": "SCHED_OTHER", "calibration": 100},
          "tasks": {"thread": {"cpus": [0], "loop": LOOPS, "phases": {
              "sleeping": {"sleep": sleep_ms * 1000}, "running": {"run": run_ms * 1000}}}}}
    gov = governor.removesuffix("-legacy")
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "dvfs.json"
        path.write_text(json.dumps(wl))
        r = simulate(path, "hikey", sets=[f"cpufreq.governor={gov}", *SETS[governor]],
                     log_dir=Path(d), frames=False)
        log = pd.read_csv(next(Path(d).glob("*.log")), sep=r"\s+")
    log.columns = [c.lstrip("#") for c in log.columns]
    runs = log[log["c_duration"] > 0]["run"]
    energy = r.cpus.loc[r.cpus.cpu.isin(CLUSTER_CPUS), "energy_mj"].sum() + r.cluster_energy_mj[0]
    return float(runs.mean()), float(energy)


def table() -> dict[str, list[tuple[int, int]]]:
    """(perf %, energy %) per governor and case."""
    out: dict[str, list[tuple[int, int]]] = {g: [] for g in SETS}
    for run_ms, sleep_ms in CASES:
        m = {g: measure(g, run_ms, sleep_ms) for g in SETS}
        (t_perf, e_perf), (t_ps, _) = m["performance"], m["powersave"]
        for g, (t, e) in m.items():
            perf = 0 if t >= t_ps else min(100, math.floor(100 * (t_ps - t) / (t_ps - t_perf)))
            out[g].append((perf, round(100 * e / e_perf)))
    return out


def _energy_order_ok(measured: dict, seed: dict, case: int) -> bool:
    """Seed's energy order of the governors kept, except pairs within 5 points there."""
    govs = list(seed)
    for a in govs:
        for b in govs:
            sa, sb = seed[a][case][1], seed[b][case][1]
            if sa + 5 < sb and not measured[a][case][1] < measured[b][case][1]:
                return False
    return True


def run() -> list[Figure]:
    t = table()
    figures = []
    for i, (r_ms, s_ms) in enumerate(CASES):
        for g, seed in SEED.items():
            sp, se = seed[i]
            mp, me = t[g][i]
            tol = PERF_TOLERANCE.get(g)
            figures.append(Figure(
                label=f"{r_ms}/{s_ms} ms {g}", source=f"{sp}% / {se}%",
                measured=f"{mp}% / {me}%", detail="perf / energy",
                tolerance=f"perf ±{tol}" if tol else "by construction" if g == "powersave" else "",
                ok=(abs(mp - sp) <= tol) if tol else mp == sp))
        figures.append(Figure(
            label=f"{r_ms}/{s_ms} ms energy order", source=" < ".join(
                sorted(SEED, key=lambda g: SEED[g][i][1])),
            measured=" < ".join(sorted(SEED, key=lambda g: t[g][i][1])), detail="",
            tolerance="ties within 5 points may swap", ok=_energy_order_ok(t, SEED, i)))
        for g in ("schedutil", "schedutil-legacy"):
            mp, me = t[g][i]
            figures.append(Figure(
                label=f"{r_ms}/{s_ms} ms {g}", source="(not in the seed)", measured=f"{mp}% / {me}%",
                detail="perf / energy", tolerance="", ok=True))
    return figures


register(Experiment(
    name="governor-efficiency",
    title="Governors' performance and energy on run/sleep cycles (rt-app method)",
    source="seeds/003_d4f52c163931dd71.txt, Vincent Guittot, 3 Jul 2015",
    run=run,
    footnotes=(
        "hikey, the task pinned to CPU 0, 10 loops of sleep then run (2015's method: a sleep "
        "event, not a timer); energy is CPUs 0-3 and cluster 0 from LISA's HiKey 620 model.",
        "Governors as in 6.12 but for sched-dvfs-2015 (Turquette's v3 series) and the seed's "
        "sampling rates (ondemand 10 ms, conservative 200 ms).",
    ),
))
