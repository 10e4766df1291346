"""Seed 000: time for an always-running task to reach a util_avg value, at max and at half
capacity, with the pre-5.1 scale invariance (legacy, "mainline" in the thread) and with
clock_pelt (the patch).
"""

import pandas as pd

from schedlab import pelt
from schedlab.reproduce import Experiment, Figure, register

TARGETS = (972, 486, 256)
NOT_REACHABLE = None

# (column of the seed's table, capacity, invariance, seed values in ms, tolerance in periods)
SEED_TABLE = (
    ("max capacity", 1024, "clock_pelt", (138, 30, 13), 1),
    ("max capacity", 1024, "legacy", (138, 30, 13), 1),
    ("half capacity (mainline)", 512, "legacy", (NOT_REACHABLE, 138, 32), 1),
    ("half capacity (w/ patch)", 512, "clock_pelt", (276, 60, 26), 2),
)


def _verdict(expected, periods, tolerance) -> bool:
    if expected is NOT_REACHABLE or periods is None:
        return expected is NOT_REACHABLE and periods is None
    return abs(periods - expected) <= tolerance


def run() -> list[Figure]:
    figures = []
    for column, capacity, invariance, expected, tolerance in SEED_TABLE:
        df = pelt.ramp(TARGETS, capacity=capacity, invariance=invariance)
        for target, seed, reached, ms in zip(TARGETS, expected, df["periods"], df["ms"]):
            periods = None if pd.isna(reached) else int(reached)
            figures.append(Figure(
                label=f"{target} · {column} · {invariance}",
                source="not reachable" if seed is NOT_REACHABLE else f"{seed}",
                measured="not reachable" if periods is None else f"{periods} periods",
                detail="" if periods is None else f"{ms:.1f} ms",
                tolerance="exact" if seed is NOT_REACHABLE else f"±{tolerance} periods",
                ok=_verdict(seed, periods, tolerance),
            ))
    return figures


register(Experiment(
    name="pelt-invariance",
    title="Time to reach a util_avg value from zero (always-running task)",
    source="seeds/000_6f41fe18b85b8edc.txt, table 'Util (%) max capacity half capacity'",
    run=run,
    footnotes=(
        "The thread counts one PELT period (1024 × 1024 ns = 1.048576 ms) as 1 ms and reads "
        "times off the continuous series 1024·(1 − y^n). schedlab updates the entity at every "
        "period boundary with the kernel's integer arithmetic and reports the first update at "
        "which util_avg reaches the value: in periods of wall-clock time (judged against the "
        "seed) and in ms (periods × 1.048576).",
        "With clock_pelt at half capacity one period of the PELT clock lasts two wall periods, "
        "so the tolerance there is ±2 wall periods.",
    ),
))
