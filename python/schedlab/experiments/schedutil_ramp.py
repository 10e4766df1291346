"""Seed 000: time for schedutil to take an always-running task's CPU from null utilization
to the highest OPP on HiKey 620: 223 ms with the legacy invariance, 121 ms with clock_pelt.

The task first wakes every 50 ms for 10 µs of work, 30 times, so that both its util_avg and
its util_est (which only falls by a quarter per activation) are near zero; then it runs for
good. The figure is the time from that last wakeup to the cpu_frequency event that reaches
1.2 GHz on its CPU.
"""

from schedlab import analysis
from schedlab.comparison import overlay
from schedlab.plots import plot_frequency
from schedlab.reproduce import Experiment, Figure, Job, Results, register
from schedlab.run import RunSpec

SEED_MS = {"legacy": 223, "clock_pelt": 121}
TOLERANCE = 0.20
WARMUP = {"loop": 30, "run": 10, "sleep": 50_000}
# 2019's schedutil rate limit on hikey: min(500 µs latency × LATENCY_MULTIPLIER, 10 ms).
RATE_LIMIT_US = 10_000
MAX_KHZ = 1_200_000


def spec(invariance: str) -> RunSpec:
    """The run: 30 short wakeups on CPU 0 of hikey, then 3 s of work, under `invariance`."""
    wl = {"global": {"duration": 4, "default_policy": "SCHED_OTHER"},
          "tasks": {"task": {"cpus": [0], "loop": 1, "phases": {
              "quiet": WARMUP, "busy": {"run": 3_000_000}}}}}
    return RunSpec.of(wl, "hikey", kernel="6.12", sets=[
        "cpufreq.governor=schedutil", f"pelt.invariance={invariance}",
        f"schedutil.rate_limit_us={RATE_LIMIT_US}"])


def ramp_ms(r) -> float | None:
    """ms from the wakeup after the sleep to the first switch to the max OPP on CPU 0."""
    woke, top = ramp(r)
    return None if top is None else (top - woke) * 1e3


def ramp(r) -> tuple[float, float | None]:
    """When (s) the wakeup ending the last quiet sleep came, and when CPU 0 first reached the
    max OPP after it."""
    woke = analysis.df_event(r, "sched_wakeup").index[WARMUP["loop"] - 1]
    freq = analysis.df_cpu_frequency(r, 0)
    top = freq[(freq["frequency"] == MAX_KHZ) & (freq.index > woke)]
    return woke, None if top.empty else top.index.min()


def runs() -> dict[str, Job]:
    return {inv: Job(spec(inv), frames=True) for inv in SEED_MS}


def judge(results: Results) -> list[Figure]:
    figures, measured = [], {}
    for inv, seed in SEED_MS.items():
        ms = ramp_ms(results[inv])
        measured[inv] = ms
        ok = ms is not None and abs(ms - seed) <= TOLERANCE * seed
        figures.append(Figure(
            label=f"null util → 1.2 GHz, {inv}", source=f"{seed} ms",
            measured="never" if ms is None else f"{ms:.0f} ms", detail="hikey, schedutil",
            tolerance=f"±{TOLERANCE:.0%}", ok=ok))
    legacy, clock = measured["legacy"], measured["clock_pelt"]
    figures.append(Figure(
        label="clock_pelt faster than legacy", source="121 < 223",
        measured="yes" if legacy and clock and clock < legacy else "no", detail="",
        tolerance="", ok=bool(legacy and clock and clock < legacy)))
    return figures


register(Experiment(
    name="schedutil-ramp",
    title="schedutil: time from null utilization to the max OPP",
    source="seeds/000_6f41fe18b85b8edc.txt, Vincent Guittot, 2019",
    runs=runs,
    judge=judge,
    plots=lambda results: [overlay(*(plot_frequency(results[inv]) for inv in SEED_MS), tuple(SEED_MS))],
    footnotes=(
        "hikey (HiKey 620), one policy for its 8 A53s, schedutil as in 6.12 (util × 1.25, "
        "lowest OPP at or above, hold while the CPU stays busy) with 2019's rate limit on this "
        "board: min(500 µs transition latency × 1000, 10 ms) = 10 ms.",
    ),
))
