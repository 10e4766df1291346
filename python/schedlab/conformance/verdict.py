"""Observables of a run (scalars named by what they measure) and the verdict on each: schedlab's
value against the kernel's runs, their range widened by the emulator's documented effects."""

import difflib
import statistics
from dataclasses import dataclass, field

from . import measure

# Widening of the kernel's range per observable family: (relative, absolute). The sources
# (oracle README, docs/fidelity.md): the emulated machine adds 1.7-2% to every job on one vCPU
# and 10-15% on two; a wakeup costs it 4-6 µs (up to 11), which qemu-tcg's cost table models
# (2 µs left for the fit's residual); idle-vCPU wakeups 0.1-2 ms on two. A perf bench rate is
# the cost table's prediction: within 10%. A slice (a thread's run once switched in) ends at
# a timer the emulator serves late by tens of µs and lengthens as the jobs do.
WIDEN = {
    "share": (0.03, 0.01),
    "busy": (0.03, 0.02),
    "migrations": (0.25, 0.5),
    "wake_prev": (0.0, 0.05),
    "latency": (0.25, 2.0),
    "lb": (0.25, 1.0),
    "throttled": (0.15, 0.01),
    "spread": (0.5, 5.0),
    "switch_order": (0.0, 0.0),
    "slice": (0.10, 20.0),
    "ops": (0.10, 0.0),
    "per_op": (0.05, 0.02),
}


WOKEN_PER_S = 5


@dataclass
class Row:
    observable: str
    kernel: list  # one value per kernel run
    schedlab: float  # the median of its runs
    low: float
    high: float
    known: str | None = None  # why schedlab is outside, if it is known to be
    runs: list = field(default_factory=list)  # schedlab's value per run (per seed)

    @property
    def inside(self) -> bool:
        return self.low <= self.schedlab <= self.high


def _by_task(run: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for name, t in run["threads"].items():
        out.setdefault(name.rsplit("-", 1)[0], []).append(t)
    return out


def observables(run: dict, name: str) -> dict[str, float]:
    """The scalars of one compare entry of a run."""
    if name == "ops":
        return {"ops/s": run["ops_per_s"]}
    if name == "per_op":
        return {f"{k} per op": v for k, v in run["per_op"].items()}
    if name == "wake_latency":
        return {f"wakeup latency p{p} µs": run["latency_us"][i] for i, p in enumerate((50, 90))}
    if name == "cyclictest":  # the threads' mean of each figure cyclictest reports
        threads = run["cyclictest"]
        return {**{f"cyclictest p{p} µs": statistics.fmean(t["latency_us"][i] for t in threads)
                   for i, p in enumerate((50, 90, 99))},
                "cyclictest avg µs": statistics.fmean(t["avg_us"] for t in threads)}
    if name == "schbench":  # the last report's figures (a pipe test's: no requests or RPS)
        sb = run["schbench"]
        rate = {"schbench transfers/s": sb["transfers"]} if "transfers" in sb else {"schbench rps": sb["rps"]}
        return {**{f"schbench {k} p{p} µs": sb[f"{k}_us"][i]
                   for k in ("wakeup", "request") if f"{k}_us" in sb for i, p in enumerate((50, 90, 99))},
                **rate}
    if name == "slice":  # how long a workload thread runs once switched in, of the first switches
        sw = run["switches"]
        return {"run p50 µs": statistics.median(
            b[0] - a[0] for a, b in zip(sw, sw[1:]) if a[2] != measure.IDLE)}
    tasks = _by_task(run)
    if name == "share":  # the least and the most any thread of a task got
        return {f"share {t} {f.__name__}": f(x["share"] for x in ts)
                for t, ts in tasks.items() for f in ((min, max) if len(ts) > 1 else (max,))}
    if name == "migrations":
        return {f"migrations/s {t}": statistics.fmean(x["migrations_per_s"] for x in ts)
                for t, ts in tasks.items()}
    # Wakeup measures of tasks that wake often: a hog's one wakeup (rt-app's start) is no
    # distribution.
    woken = {t: ts for t, ts in tasks.items() if min(x["wakeups_per_s"] for x in ts) >= WOKEN_PER_S}
    if name == "wake_prev":
        return {f"wakes on prev {t}": statistics.fmean(x["wake_prev"] or 0 for x in ts)
                for t, ts in woken.items()}
    if name == "latency":
        return {f"latency p{p} µs {t}": statistics.fmean(x["latency_us"][i] for x in ts)
                for t, ts in woken.items() for i, p in enumerate((50, 90))}
    if name == "busy":
        return {"busy CPUs": sum(run["busy"])}
    if name.startswith("lb."):
        idle = name[3:]
        return {f"lb_count.{idle}/s": run["schedstat"][f"lb_count.{idle}"]}
    if name == "throttled":
        return {f"{k} {path}": v for path, g in run["cgroups"].items()
                for k, v in g.items() if k != "nr_periods_per_s"}
    if name == "spread":
        return {"all CPUs busy ms": run["all_cpus_busy_ms"] or float("inf")}
    raise KeyError(f"unknown observable {name!r}")


def _matched(a: list, b: list) -> list[tuple[float, float]]:
    """The times (µs) of the switches (prev -> next) of a and b that lie in blocks matching in
    order, pair by pair."""
    pa = [(s[1], s[2]) for s in a]
    pb = [(s[1], s[2]) for s in b]
    blocks = difflib.SequenceMatcher(None, pa, pb, autojunk=False).get_matching_blocks()
    return [(a[m.a + k][0], b[m.b + k][0]) for m in blocks for k in range(m.size)]


def switch_order(a: list, b: list) -> float:
    """Switches of a found in blocks matching b's order, of a's first 1000."""
    return len(_matched(a, b)) / max(1, len(a))


def switch_time_p90(a: list, b: list) -> float:
    """How far apart in time the matched switches of a and b lie (µs, p90, nearest rank),
    their clocks aligned on the first matched pair (the runs' starts differ by a constant)."""
    pairs = _matched(a, b)
    if not pairs:
        return float("inf")
    offset = pairs[0][0] - pairs[0][1]
    d = sorted(abs(x - y - offset) for x, y in pairs)
    return d[(len(d) * 90 + 99) // 100 - 1]


def _widen(name: str, lo: float, hi: float) -> tuple[float, float]:
    family = "lb" if name.startswith("lb.") else "latency" if name in ("wake_latency", "cyclictest", "schbench") else name
    rel, ab = WIDEN[family]
    return lo - rel * abs(lo) - ab, hi + rel * abs(hi) + ab


def rows(case, record: dict, sims: list[dict]) -> list[Row]:
    """One row per observable of the case: the kernel's runs, schedlab's value (the median of
    its runs `sims`, one per seed), the range."""
    sim = sims[0]  # the switch order's run: one vCPU, one run
    out = []
    for name in case.compare:
        if name == "switch_order":
            # the kernel against itself gives the range's floor, schedlab against the first run
            runs = record["runs"]
            ref = runs[0]["switches"]
            kernel = [switch_order(r["switches"], ref) for r in runs[1:]]
            value = switch_order(sim["switches"], ref)
            out.append(Row("switch order (matched of first 1000)", kernel, value,
                           min(kernel) - 0.02, 1.0))
            # the target: matched switches within 10 µs more than the kernel's own
            kernel = [switch_time_p90(r["switches"], ref) for r in runs[1:]]
            value = switch_time_p90(sim["switches"], ref)
            out.append(Row("switch time p90 µs (matched)", kernel, value, 0.0, max(kernel) + 10.0))
            continue
        per_run = [observables(r, name) for r in record["runs"]]
        mine = [observables(s, name) for s in sims]
        for key in per_run[0]:
            # A run where the observable is undefined (no wakeup of that task) has no say.
            values = [p[key] for p in per_run if key in p]
            lo, hi = _widen(name, min(values), max(values))
            seeds = [m.get(key, float("nan")) for m in mine]
            out.append(Row(key, values, statistics.median(seeds), lo, hi, runs=seeds))
    for r in out:
        r.known = case.known.get(r.observable)
    return out
