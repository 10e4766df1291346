"""Seed 000: time for an always-running task to reach a util_avg value, at max and at half
capacity, with the pre-5.1 scale invariance (legacy, "mainline" in the thread) and with
clock_pelt (the patch): once from the PELT arithmetic alone, once in the engine with the CPU
held at half its maximum frequency by the userspace governor.
"""

from pathlib import Path

import pandas as pd

from schedlab import analysis, pelt
from schedlab.reproduce import Experiment, Figure, Job, Results, register
from schedlab.run import RunSpec

TARGETS = (972, 486, 256)
NOT_REACHABLE = None

# (column of the seed's table, capacity, invariance, seed values in ms, tolerance in periods)
SEED_TABLE = (
    ("max capacity", 1024, "clock_pelt", (138, 30, 13), 1),
    ("max capacity", 1024, "legacy", (138, 30, 13), 1),
    ("half capacity (mainline)", 512, "legacy", (NOT_REACHABLE, 138, 32), 1),
    ("half capacity (w/ patch)", 512, "clock_pelt", (276, 60, 26), 2),
)


# One CPU whose lowest OPP is exactly half its highest (its text: runs go to other processes).
HALF_PLATFORM = Path(__file__).with_name("half-opp.toml").read_text()
# As schedutil-ramp: 30 wakeups for 10 µs every 50 ms bring util_avg near zero, then the task
# runs for good; HZ=1000 so that util_avg is read every millisecond.
WARMUP = {"loop": 30, "run": 10, "sleep": 50_000}
# The kernel's integer series is up to 2 periods off the seed's continuous reading (the
# arithmetic rows: 28 periods for its 26), and the engine reads util_avg at ticks, up to one
# more (HZ=1000: 1 ms = 0.95 periods).
ENGINE_TOLERANCE = 3


def _verdict(expected, periods, tolerance) -> bool:
    if expected is NOT_REACHABLE or periods is None:
        return expected is NOT_REACHABLE and periods is None
    return abs(periods - expected) <= tolerance


def _figure(label: str, seed, periods: float | None, tolerance: int) -> Figure:
    return Figure(
        label=label,
        source="not reachable" if seed is NOT_REACHABLE else f"{seed}",
        measured="not reachable" if periods is None else f"{round(periods, 1):g} periods",
        detail="" if periods is None else f"{periods * pelt.PELT_PERIOD_NS / 1e6:.1f} ms",
        tolerance="exact" if seed is NOT_REACHABLE else f"±{tolerance} periods",
        ok=_verdict(seed, periods, tolerance),
    )


def arithmetic_figures() -> list[Figure]:
    figures = []
    for column, capacity, invariance, expected, tolerance in SEED_TABLE:
        df = pelt.ramp(TARGETS, capacity=capacity, invariance=invariance)
        for target, seed, reached in zip(TARGETS, expected, df["periods"]):
            periods = None if pd.isna(reached) else int(reached)
            figures.append(_figure(f"{target} · {column} · {invariance}", seed, periods, tolerance))
    return figures


def runs() -> dict[str, Job]:
    """A task on one CPU held at half frequency, after 30 short wakeups, per invariance."""
    wl = {"global": {"duration": 2, "default_policy": "SCHED_OTHER"},
          "tasks": {"task": {"cpus": [0], "loop": 1, "phases": {"quiet": WARMUP, "busy": {"run": 3_000_000}}}}}
    return {inv: Job(RunSpec.of(wl, HALF_PLATFORM, sets=[
        "cpufreq.governor=userspace", "userspace.khz=500000", f"pelt.invariance={inv}", "hz=1000"]), frames=True)
        for _, capacity, inv, _, _ in SEED_TABLE if capacity < 1024}


def engine_periods(r) -> list[float | None]:
    """Wall-clock periods from the wakeup that starts the always-running phase to the first
    sched_pelt_se update at which the task's util_avg reaches each target."""
    woke = analysis.df_event(r, "sched_wakeup").index[WARMUP["loop"] - 1]
    util = analysis.df_tasks_signal(r, "util")
    util = util[util.index >= woke]
    out = []
    for target in TARGETS:
        hit = util[util["util"] >= target]
        out.append(None if hit.empty else float((hit.index.min() - woke) * 1e9 / pelt.PELT_PERIOD_NS))
    return out


def judge(results: Results) -> list[Figure]:
    return arithmetic_figures() + [
        _figure(f"{target} · half frequency in the engine · {invariance}", seed, periods, ENGINE_TOLERANCE)
        for _, capacity, invariance, expected, _ in SEED_TABLE if capacity < 1024
        for target, seed, periods in zip(TARGETS, expected, engine_periods(results[invariance]))]


def plots(results: Results) -> list:
    """The task's util_avg at half frequency under each invariance."""
    from schedlab.comparison import overlay
    from schedlab.plots import plot_task_signals

    return [overlay(*(plot_task_signals(results[inv], "task-0") for inv in results), tuple(results))]


register(Experiment(
    name="pelt-invariance",
    title="Time to reach a util_avg value from zero (always-running task)",
    source="seeds/000_6f41fe18b85b8edc.txt, table 'Util (%) max capacity half capacity'",
    runs=runs,
    judge=judge,
    plots=plots,
    footnotes=(
        "The thread counts one PELT period (1024 × 1024 ns = 1.048576 ms) as 1 ms and reads "
        "times off the continuous series 1024·(1 − y^n). schedlab updates the entity at every "
        "period boundary with the kernel's integer arithmetic and reports the first update at "
        "which util_avg reaches the value: in periods of wall-clock time (judged against the "
        "seed) and in ms (periods × 1.048576).",
        "With clock_pelt at half capacity one period of the PELT clock lasts two wall periods, "
        "so the tolerance there is ±2 wall periods.",
        "The engine rows run a task on one CPU held at 500 MHz of 1 GHz by the userspace governor, "
        "HZ=1000, after 30 short wakeups that leave util_avg near zero. The kernel's integer series "
        "is up to 2 periods off the seed's reading (rows above) and util_avg is read at each update "
        "(every tick, 0.95 periods), hence ±3 periods.",
    ),
))
