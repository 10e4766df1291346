"""Seed 002: what "almost idle" means to PELT. Vincent Guittot's estimates of a CPU's
util_avg and util_est under a periodic task, and the cfs_rq load_avg of a nice -20 hog,
simulated with the engine.

The thread counts one PELT period (1024 × 1024 ns) as 1 ms and 1024 ns as 1 µs. Each
periodic case runs twice: with the durations read that way ("periods"), and with the
literal wall-clock durations ("wall"). rt-app durations are whole µs, so the periods
reading rounds 20 periods to 20972 µs, 102.4 µs to 102 µs and so on.
"""

import math
from dataclasses import dataclass

from schedlab import analysis
from schedlab.reproduce import Experiment, Figure, Job, Results, register
from schedlab.run import RunSpec

PELT_PERIOD_NS = 1024 * 1024
Y = 0.5 ** (1 / 32)
# get_pelt_divider: util_sum / (46718 + period_contrib) reads up to 1023/47741 low.
DIVIDER_LOW = 46718 / 47741
UTIL_EST_MARGIN = 1024 // 100
NICE_M20_WEIGHT = 88761
TOLERANCE = 2


@dataclass(frozen=True)
class Periodic:
    """A task that runs `run_ns` every `period_ns` in the thread's reading (its "ms" a PELT
    period, its "µs" 1024 ns) and `wall` = (run, period) in literal ns; the thread's figures."""

    name: str
    run_ns: int
    period_ns: int
    wall: tuple[int, int]
    thread_min: int
    thread_max: int
    thread_util_est: int
    duration_s: int
    window_s: float


CASES = (
    Periodic("A: 20 ms every 200 ms", 20 * PELT_PERIOD_NS, 200 * PELT_PERIOD_NS, (20_000_000, 200_000_000),
             7, 365, 365, 3, 0.4),
    Periodic("B: 100 µs every 1024 µs", 100 * 1024, PELT_PERIOD_NS, (100_000, 1_024_000), 101, 103, 103, 6, 3.0),
)


def closed_form(run_ns: int, period_ns: int) -> tuple[float, float]:
    """The continuous series of a task running r of every p periods: util_avg peaks at
    1024·(1 − y^r)/(1 − y^p) when it sleeps and falls to peak·y^(p − r) when it wakes."""
    r, p = run_ns / PELT_PERIOD_NS, period_ns / PELT_PERIOD_NS
    peak = 1024 * (1 - Y**r) / (1 - Y**p)
    return peak * Y ** (p - r), peak


def workload(tasks: dict, duration_s: int) -> dict:
    return {"global": {"duration": duration_s, "default_policy": "SCHED_OTHER"}, "tasks": tasks}


def periodic_task(run_us: int, period_us: int) -> dict:
    return {"cpus": [0], "phases": {"p": {"loop": -1, "run": run_us,
                                          "timer": {"ref": "unique", "period": period_us}}}}


def job(wl: dict, kernel: str) -> Job:
    """The task alone on the CPU from t = 0, as the series count it: started at once, without
    rt-app's main thread."""
    return Job(RunSpec.of(wl, "smp:1", kernel=kernel, sets=["rtapp.start_barrier=off"]), frames=True)


@dataclass(frozen=True)
class CpuSignals:
    util_min: int
    util_max: int
    util_est: int


def periodic_job(run_ns: int, period_ns: int, duration_s: int, kernel: str) -> Job:
    """One periodic task alone on the CPU."""
    wl = workload({"task": periodic_task(round(run_ns / 1000), round(period_ns / 1000))}, duration_s)
    return job(wl, kernel)


def cpu_signals(r, window_s: float) -> CpuSignals:
    """CPU0's cfs_rq util_avg range over the run's last `window_s` of signals, and its
    util_est right after the task is enqueued."""
    util, enqueued = (analysis.df_cpus_signal(r, signal, cpus=[0]) for signal in ("util", "enqueued"))
    start = max(df.index.max() for df in (util, enqueued, analysis.df_event(r, "sched_pelt_se"))) - window_s

    def window(df):
        return df[df.index >= start]

    return CpuSignals(int(window(util)["util"].min()), int(window(util)["util"].max()),
                      int(window(enqueued)["enqueued"].max()))


def hog_job(kernel: str, duration_s: int = 2) -> Job:
    """One always-running nice -20 task."""
    hog = {"cpus": [0], "priority": -20, "phases": {"p": {"loop": -1, "run": 100_000}}}
    return job(workload({"hog": hog}, duration_s), kernel)


def hog_load_avg(r) -> int:
    """CPU0's cfs_rq load_avg at the end of the run."""
    return int(analysis.df_cpus_signal(r, "load", cpus=[0])["load"].iloc[-1])


def _readings(case: Periodic) -> dict:
    return {"periods": (case.run_ns, case.period_ns), "wall": case.wall}


def runs() -> dict[str, Job]:
    out = {f"{case.name} · {reading} · {kernel}": periodic_job(run_ns, period_ns, case.duration_s, kernel)
           for case in CASES for reading, (run_ns, period_ns) in _readings(case).items() for kernel in ("6.1", "6.12")}
    return out | {f"hog · {kernel}": hog_job(kernel) for kernel in ("6.1", "6.12")}


def _util_figure(label, thread, measured, expected) -> Figure:
    low, high = expected * DIVIDER_LOW - TOLERANCE, expected + TOLERANCE
    return Figure(label=label, source=str(thread), expected=f"{expected:.1f}", measured=str(measured),
                  detail="", tolerance=f"[{low:.1f}, {high:.1f}]", ok=low <= measured <= high)


def periodic_figures(case: Periodic, results: Results) -> list[Figure]:
    figures = []
    for reading, (run_ns, period_ns) in _readings(case).items():
        cf_min, cf_max = closed_form(run_ns, period_ns)
        sim, new = (cpu_signals(results[f"{case.name} · {reading} · {kernel}"], case.window_s)
                    for kernel in ("6.1", "6.12"))
        label = f"{case.name} · {reading}"
        figures.append(_util_figure(f"{label} · util_avg min", case.thread_min, sim.util_min, cf_min))
        figures.append(_util_figure(f"{label} · util_avg max", case.thread_max, sim.util_max, cf_max))
        low, high = cf_max * DIVIDER_LOW - TOLERANCE, cf_max + UTIL_EST_MARGIN
        figures.append(Figure(
            label=f"{label} · util_est at enqueue", source=str(case.thread_util_est), expected=f"{cf_max:.1f}",
            measured=str(sim.util_est), detail=f"6.12: {new.util_est}", tolerance=f"[{low:.1f}, {high:.1f})",
            ok=low <= sim.util_est < high,
        ))
    return figures


def hog_figure(results: Results) -> Figure:
    load = hog_load_avg(results["hog · 6.1"])
    thread = 88763
    return Figure(label="nice -20 hog · cfs_rq load_avg", source=str(thread), expected=f"~{NICE_M20_WEIGHT}",
                  measured=str(load), detail=f"6.12: {hog_load_avg(results['hog · 6.12'])}", tolerance="±1% of 88763",
                  ok=math.isclose(load, thread, rel_tol=0.01))


def judge(results: Results) -> list[Figure]:
    return [f for case in CASES for f in periodic_figures(case, results)] + [hog_figure(results)]


register(Experiment(
    name="idle-prev-cpu",
    title="CPU util_avg, util_est and load_avg under one task (Linux 6.1 arithmetic; 6.12 beside)",
    source="seeds/002_4deca19b5e217104.txt, Vincent Guittot, 12 Oct 2023",
    runs=runs,
    judge=judge,
    footnotes=(
        "'periods' reads the thread's ms as PELT periods (1.048576 ms) and its µs as 1024 ns, as the "
        "thread does; 'wall' runs the literal durations. The kernel column is the continuous series "
        "1024·(1−y^r)/(1−y^p) (peak) and peak·y^(p−r) (trough), r and p in periods.",
        "Tolerance: ±2 util, and below by a further 2.1%: the kernel divides util_sum by "
        "46718 + period_contrib (get_pelt_divider), so a value recomputed late in a period reads up to "
        "1023/47741 below the continuous series; which periods the updates fall in decides where in "
        "that band a run lands.",
        "A, wall: 20 ms is 19.07 periods and 200 ms is 190.7, so the peak is 352, not the thread's 365; "
        "the thread's figures are the periods reading.",
        "B: the series puts a 100/1024 duty at 1024·100/1024 = 100 ± 1; the thread's [101:103] sits "
        "about 2 above it. On hardware each activation also charges wakeup and switch time to the "
        "task (1 util unit is 1 µs of the 1024 µs cycle); schedlab charges none.",
        "util_est: the task starts at util 512 (post_init_entity_util_avg), its EWMA falls by 1/4 per "
        "activation and stops moving once within UTIL_EST_MARGIN (10) of the dequeued util_avg "
        "(util_est_update), so util_est settles up to 10 above the peak: tolerance [peak − 2.1% − 2, "
        "peak + 10).",
        "6.12 calls util_est_update before dequeue_entities (dequeue_task_fair), so the dequeued "
        "value is the task's util_avg as of its last PELT update, up to a tick before it slept: "
        "util_est reads lower there.",
        "nice -20: load_avg is weighted by the task's load weight (88761), so it is bounded by about "
        "that weight, not by LOAD_AVG_MAX (47742), which bounds the unweighted sums. The sum and the "
        "divider (46718 + period_contrib) grow at different rates within a period, so the integer "
        "series lands between 88758 and 88843 depending on where in its period the last update fell; "
        "the thread's 88763, read on a real machine, is one of those values.",
    ),
))
