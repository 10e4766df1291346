"""Seed 003: "the load tracking ... needs around 75ms to reach 80% of max usage" (Vincent
Guittot, on scheduler-driven DVFS lagging short runs). Time for an always-running task's
util_avg to climb from 0 to 80% of 1024, at the kernel's period-boundary updates.
"""

import math

from schedlab import pelt
from schedlab.reproduce import Experiment, Figure, register

TARGET = math.ceil(0.8 * 1024)
THREAD_MS = 75
TOLERANCE = 1


def judge(results) -> list[Figure]:
    """From PELT's arithmetic alone: no run."""
    df = pelt.ramp((TARGET,), capacity=1024, invariance="clock_pelt")
    periods, ms = int(df["periods"].iloc[0]), float(df["ms"].iloc[0])
    # 1 − y^n = 0.8 with y^32 = 1/2.
    closed = 32 * math.log2(5)
    return [Figure(
        label=f"util_avg 0 → {TARGET} (80% of 1024)", source=f"~{THREAD_MS}", expected=f"{closed:.1f}",
        measured=f"{periods} periods", detail=f"{ms:.1f} ms", tolerance=f"±{TOLERANCE} period",
        ok=abs(periods - THREAD_MS) <= TOLERANCE,
    )]


register(Experiment(
    name="pelt-response",
    title="PELT's time to 80% of max usage",
    source="seeds/003_d4f52c163931dd71.txt, Vincent Guittot, 3 Jul 2015",
    judge=judge,
    footnotes=(
        "Read in PELT periods, as the thread's ms are: the continuous series reaches 0.8 after "
        "32·log2(5) = 74.3 periods; the kernel's integer series (each finished period enters the "
        "sum decayed once, as 1002 of its 1024 units; averages recomputed at period boundaries) "
        "gets there at the 75th boundary, 78.6 ms of wall-clock time.",
    ),
))
