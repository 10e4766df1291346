"""Seed 002: biasing wakeups towards an almost-idle previous CPU. Chen Yu's hackbench runs on
a 144-CPU Ice Lake server (icelake-2s) before and after `WAKEUP_BIAS_PREV_IDLE`, whose
"almost idle" was `cpu_load_without(prev, p) <= ALMOST_IDLE_CPU_LOAD` (50): the variant
`almost_idle_load`. The thread's other definitions run beside it, unjudged (it measured none).

hackbench's LOOPS is scaled down (480000 to 480, and 960 to show the ratio holds); times are
scaled back up. So its tasks start at once (`kick=False`): hackbench's own start, where one
write wakes 640 tasks onto the waker's socket, takes schedlab 85 ms to spread out again,
which would be scaled up with the rest, where the seed's 81 s run hides it. The cost model
is on, with icelake-2s's table (platforms/icelake-2s.toml), calibrated on the "before" socket
and pipe times only; every "after" figure is a prediction. The cache model is on (a thread's refills when it runs again, by distance and time away).
"""

from dataclasses import dataclass

from schedlab.benchmarks import Hackbench, elapsed_ns, spec
from schedlab.reproduce import BEFORE_NI_RANDOM, Experiment, Figure, Job, Results, percent_change, register, within

SEED_LOOPS = 480_000
# 480 loops, not fewer: at 240 the start's placement transient (the cache model's refills
# while 640 tasks spread) still shows, 6% of the scaled time against 0.1% between 480 and 960.
LOOPS, CHECK_LOOPS = 480, 960
VARIANTS = ("almost_idle_load", "load_avg_max", "load_sum", "util_avg", "util_fits_capacity")
MEASURED = "almost_idle_load"
# The seed's times (s), before and after, and the judged change of the after (%).
SOCKET = (81.084, 78.083, (-7.0, -1.0))
PIPE = (38.219, 38.348, (-1.5, 1.5))
ONE_GROUP = (9.434, 9.373, (-2.0, 2.0))
# %: a small change of any cost moves the -g 16 times by a few % (the placement of 640 tasks
# shifts), and the pipe run sometimes much more: with the cache model, TTWU_QUEUE and the
# engine's nanosecond per scheduling event, pipe_write_ns 680, 700 and 720 give 45.4, 38.4
# and 39.3 s, and the scale 1.80, 1.82 and 1.84 gave the socket run 80.4, 82.8 and 83.1 s.
CALIBRATION = 3.0
# -g 1 is not calibrated (note 3).
ONE_GROUP_TOLERANCE = 50.0


@dataclass(frozen=True)
class Case:
    seconds: float  # scaled to the seed's LOOPS
    idle_pct: float
    migrations_per_s: float
    busy_pct: list  # per CPU
    biased: int  # wakeups the bias placed


@dataclass(frozen=True)
class Mode:
    """One hackbench command line of the seed's."""

    name: str
    pipe: bool
    loops: int = LOOPS
    groups: int = 16
    platform: str = "icelake-2s"

    def job(self, bias: str | None) -> Job:
        features = BEFORE_NI_RANDOM + (("WAKEUP_BIAS_PREV_IDLE",) if bias else ())
        sets = ("cache=on", *((f"fair.prev_idle_bias={bias}",) if bias else ()))
        bench = Hackbench(groups=self.groups, fds=20, loops=self.loops, datasize=100, pipe=self.pipe,
                          kick=False)
        return Job(spec(bench, self.platform, sets=sets, features=features))


SOCKET_MODE = Mode("socket -g 16", pipe=False)
PIPE_MODE = Mode("pipe -g 16", pipe=True)
CHECK_MODE = Mode(f"socket -g 16 -l {CHECK_LOOPS}", pipe=False, loops=CHECK_LOOPS)
ONE_GROUP_MODE = Mode("pipe -g 1, package 1 offline", pipe=True, groups=1, platform="icelake-1s")
BIASES = (None, *VARIANTS)


def runs() -> dict[str, Job]:
    """Each mode with the bias off and with each definition (the check: off and measured)."""
    out = {f"{m.name} · {b}": m.job(b) for m in (SOCKET_MODE, PIPE_MODE, ONE_GROUP_MODE) for b in BIASES}
    return out | {f"{CHECK_MODE.name} · {b}": CHECK_MODE.job(b) for b in (None, MEASURED)}


def case(r, loops: int) -> Case:
    ns = elapsed_ns(r)
    busy = [100 * c["busy_ns"] / ns for c in r.cpu_rows]
    return Case(ns * SEED_LOOPS / loops / 1e9, 100 - sum(busy) / len(busy),
                sum(t["migrations"] for t in r.task_rows) / (ns / 1e9), busy,
                sum(t["placed_bias"] for t in r.task_rows))


def _change(before: Case, after: Case) -> float:
    return percent_change(before.seconds, after.seconds)


def _mode(mode: Mode, results: Results, seed: tuple, tolerance: float, calibrated: bool, note: str = "") -> tuple:
    """One hackbench command line, bias off and each definition, beside the seed's (before,
    after, judged range of the change): the figures, the run without the bias, the change."""
    seed_before, seed_after, (low, high) = seed
    name = mode.name
    before = case(results[f"{name} · None"], mode.loops)
    after = {v: case(results[f"{name} · {v}"], mode.loops) for v in VARIANTS}
    measured = after[MEASURED]
    change = _change(before, measured)
    others = ", ".join(f"{v} {_change(before, after[v]):+.2f}%" for v in VARIANTS if v != MEASURED)
    return [
        Figure(label=f"{name} · bias off (before)", source=f"{seed_before:.3f} s", measured=f"{before.seconds:.3f} s",
               detail=f"idle {before.idle_pct:.1f}%{note}, {before.migrations_per_s:,.0f} migrations/s",
               **within(percent_change(seed_before, before.seconds), tolerance, "% ",
                        "(calibrated)" if calibrated else "(not calibrated, note 3)")),
        Figure(label=f"{name} · {MEASURED} (after)",
               source=f"{seed_after:.3f} s ({percent_change(seed_before, seed_after):+.2f}%)",
               measured=f"{measured.seconds:.3f} s ({change:+.2f}%)",
               detail=f"idle {measured.idle_pct:.1f}%, {measured.migrations_per_s:,.0f} migrations/s; "
                      f"the other definitions: {others}",
               tolerance=f"{low:+.1f}% to {high:+.1f}%", ok=low <= change <= high,
               explained=_never_fired(measured)),
    ], before, change


def _never_fired(c: Case) -> str:
    """The cause checked when the bias changed nothing: it never placed a wakeup."""
    return "" if c.biased else "the bias placed no wakeup: prev's load without the task was never ≤ 50 (note 4)"


def _one_core_of_two(busy: list) -> tuple[int, int]:
    """Of the cores with a busy hardware thread (> 50%), how many have the other one nearly
    idle (< 25%); icelake-1s's CPU n+36 is CPU n's sibling."""
    half = len(busy) // 2
    pairs = [sorted((busy[c], busy[c + half])) for c in range(half)]
    active = [p for p in pairs if p[1] > 50]
    return sum(p[0] < 25 for p in active), len(active)


def judge(results: Results) -> list[Figure]:
    socket, socket_before, socket_change = _mode(SOCKET_MODE, results, SOCKET, CALIBRATION, True)
    pipe, pipe_before, _ = _mode(PIPE_MODE, results, PIPE, CALIBRATION, True)
    figures = socket + pipe
    figures.append(Figure(
        label="idle: pipe above socket", source="8–10% (pipe), 2–3% (socket)",
        measured=f"{pipe_before.idle_pct:.1f}%, {socket_before.idle_pct:.1f}%", detail="bias off, all CPUs",
        tolerance="pipe idles more", ok=pipe_before.idle_pct > socket_before.idle_pct))
    check_off, check_on = (case(results[f"{CHECK_MODE.name} · {b}"], CHECK_LOOPS) for b in (None, MEASURED))
    ratio, check_change = check_off.seconds / socket_before.seconds, _change(check_off, check_on)
    figures.append(Figure(
        label=f"socket: LOOPS {CHECK_LOOPS} against {LOOPS}", source="–",
        measured=f"{check_off.seconds:.3f} s off, {check_change:+.2f}% on ({socket_change:+.2f}% at {LOOPS})",
        detail=f"scaled times' ratio {ratio:.3f}", tolerance="ratio within 3%, change of the same sign",
        ok=abs(ratio - 1) <= 0.03 and (check_change < 0) == (socket_change < 0)))
    one, off, _ = _mode(ONE_GROUP_MODE, results, ONE_GROUP, ONE_GROUP_TOLERANCE, False, note=" (seed: 49.57% busy)")
    lone, active = _one_core_of_two(off.busy_pct)
    figures += one + [
        Figure(label="pipe -g 1 · cores with one thread busy, the other nearly idle",
               source="4 of 6 cores shown", measured=f"{lone} of {active} busy cores",
               detail="busy > 50%, sibling < 25%", tolerance="at least half", ok=2 * lone >= active),
    ]
    return figures


register(Experiment(
    name="almost-idle",
    title="hackbench on 144 CPUs with and without WAKEUP_BIAS_PREV_IDLE",
    source="seeds/002_4deca19b5e217104.txt, Chen Yu's hackbench runs (RFC, ALMOST_IDLE_CPU_LOAD)",
    runs=runs,
    judge=judge,
    footnotes=(
        f"icelake-2s (2 × 36 cores × 2 threads), the 6.12 preset without NI_RANDOM (the source predates it), performance governor, --set overhead=on, cache=on; "
        f"hackbench -g 16 -f 20 -s 100 -l {LOOPS} (the seed's 480000 scaled by 1/1000; times scaled back), "
        f"and -g 1 -l {LOOPS} on icelake-1s (package 1 offline). After: --feature WAKEUP_BIAS_PREV_IDLE "
        f"--set fair.prev_idle_bias={MEASURED}, the definition the seed measured.",
        "Calibrated on the socket and pipe 'before' times: icelake-2s's cost scale 1.80 of the defaults "
        "(socket) and pipe_write_ns = pipe_read_ns = 680 (pipe); the pipe time is sensitive to "
        "both (a 1.5% change of pipe_write_ns can move it by 12%). Every 'after' figure, the idle shares, "
        "the migration rates and -g 1 are predictions.",
        "-g 1 is not calibrated and reads about 30% fast. Its threads never migrate, so the cache model "
        "charges nothing; what it leaves out costs here: a message's lines move between the sender's and "
        "the receiver's cores at no cost (data shared between cores is not modelled), and two busy "
        "threads of one core each run at full speed (no SMT throughput sharing).",
        "ALMOST_IDLE_CPU_LOAD is 50 of a nice-0 task's 1024: prev qualifies only if the tasks left on it "
        "ran a few percent of the last tens of ms. In schedlab's hackbench a CPU that is not idle runs "
        "tasks of load in the hundreds, and an idle prev is taken without the bias (placed_prev), so the "
        "bias never fires and the run is the same as without it, cache model or not. The seed's 3.7% gain "
        "came from something schedlab does not model (the thread guessed cache warmth; schedlab's refills "
        "are those of a thread's own working set); the other definitions, which do fire, are in the after "
        "rows' detail.",
    ),
))
