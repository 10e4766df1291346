"""The kernel's PELT integer rules, written out by hand from kernel-sched.md §1 for tests:
the table entries are copied from the reference (sched-pelt.h), not from schedlab."""

# runnable_avg_yN_inv[32], kernel-sched.md §1.2.
INV = [
    0xFFFFFFFF, 0xFA83B2DA, 0xF5257D14, 0xEFE4B99A, 0xEAC0C6E6, 0xE5B906E6, 0xE0CCDEEB, 0xDBFBB796,
    0xD744FCC9, 0xD2A81D91, 0xCE248C14, 0xC9B9BD85, 0xC5672A10, 0xC12C4CC9, 0xBD08A39E, 0xB8FBAF46,
    0xB504F333, 0xB123F581, 0xAD583EE9, 0xA9A15AB4, 0xA5FED6A9, 0xA2704302, 0x9EF5325F, 0x9B8D39B9,
    0x9837F050, 0x94F4EFA8, 0x91C3D373, 0x8EA4398A, 0x8B95C1E3, 0x88980E80, 0x85AAC367, 0x82CD8698,
]
LOAD_AVG_MAX = 47742
PERIOD_NS = 1024 * 1024


def decay(val: int, n: int) -> int:
    """decay_load (§1.3): 0 beyond 2016 periods, halve per 32, then (val * inv[n % 32]) >> 32."""
    if n > 32 * 63:
        return 0
    val >>= n // 32
    return (val * INV[n % 32]) >> 32


class Avg:
    """One sched_avg driven by the integer rules of §1.4–1.6 (accumulate_sum,
    ___update_load_sum, ___update_load_avg); `load` is the weight already scaled down."""

    def __init__(self, now: int):
        self.last = now
        self.load_sum = self.runnable_sum = self.util_sum = self.period_contrib = 0
        self.load_avg = self.runnable_avg = self.util_avg = 0

    def _accumulate(self, delta: int, load: int, runnable: int, running: bool) -> int:
        contrib = delta
        delta += self.period_contrib
        periods = delta // 1024
        if periods:
            self.load_sum = decay(self.load_sum, periods)
            self.runnable_sum = decay(self.runnable_sum, periods)
            self.util_sum = decay(self.util_sum, periods)
            delta %= 1024
            if load:
                d1 = 1024 - self.period_contrib
                contrib = decay(d1, periods) + LOAD_AVG_MAX - decay(LOAD_AVG_MAX, periods) - 1024 + delta
        self.period_contrib = delta
        if load:
            self.load_sum += load * contrib
        if runnable:
            self.runnable_sum += (runnable * contrib) << 10
        if running:
            self.util_sum += contrib << 10
        return periods

    def update(self, now: int, load: int, runnable: int, running: bool, avg_load: int = 1) -> None:
        """Accumulate up to `now`; recompute the averages if a period boundary was crossed.
        A cfs_rq passes its weight as `load` and 1 as `avg_load`; a task entity the reverse."""
        units = (now - self.last) >> 10
        if units <= 0:
            return
        self.last += units << 10
        if not load:
            runnable, running = 0, False
        if self._accumulate(units, load, runnable, running):
            divider = LOAD_AVG_MAX - 1024 + self.period_contrib
            self.load_avg = avg_load * self.load_sum // divider
            self.runnable_avg = self.runnable_sum // divider
            self.util_avg = self.util_sum // divider


UTIL_EST_MARGIN = 1024 // 100


def util_est_61(ewma: int, dequeued: int) -> int:
    """util_est_update (6.1, UTIL_EST_FASTUP): reset on increase, skip within the margin,
    else ewma' = (4·ewma + (dequeued − ewma)) / 4."""
    if ewma <= dequeued:
        return dequeued
    if ewma - dequeued < UTIL_EST_MARGIN:
        return ewma
    return (4 * ewma + dequeued - ewma) >> 2


def periodic_cpu(run_ns: int, period_ns: int, start: int, end: int, window: int) -> tuple[int, int, int]:
    """A CPU's cfs_rq (last_update_time 0 at boot) holding one nice-0 task forked at `start`
    with util 512 (post_init_entity_util_avg on an idle CPU of capacity 1024) that runs
    `run_ns` every `period_ns`; updated at each wakeup and sleep. Returns its util_avg
    min and max over the updates after `end − window`, and the last util_est the CPU
    had after an enqueue (6.1: max(ewma, util at the last dequeue))."""
    avg = Avg(0)
    avg.update(start, 0, 0, False)
    avg.util_avg = 512
    avg.util_sum = 512 * (LOAD_AVG_MAX - 1024 + avg.period_contrib)
    seen, ewma, dequeued, est = [], 0, 0, 0
    for now in range(start, end - run_ns, period_ns):
        avg.update(now, 0, 0, False)
        est = max(ewma, dequeued)
        low = avg.util_avg
        avg.update(now + run_ns, 1024, 1, True)
        dequeued = avg.util_avg
        ewma = util_est_61(ewma, dequeued)
        if now >= end - window:
            seen += [low, dequeued]
    return min(seen), max(seen), est


def always_running_cfs_load(weight: int, start: int, end: int, tick: int = 4_000_000) -> int:
    """cfs_rq load_avg (last_update_time 0 at boot) at `end` of one task of load weight
    `weight` enqueued at `start` and always running, updated at every `tick` after it."""
    avg = Avg(0)
    avg.update(start, 0, 0, False)
    for now in range(start + tick, end + 1, tick):
        avg.update(now, weight, 1, True)
    return avg.load_avg


def always_running_util(periods: int, per_period_contrib: int = 1002 * 1024) -> list[int]:
    """util_avg after each of `periods` updates at period boundaries of an always-running
    task from zero: util_sum' = decay(util_sum, 1) + decay_load(1024, 1)·1024; divider 46718."""
    out, s = [], 0
    for _ in range(periods):
        s = decay(s, 1) + per_period_contrib
        out.append(s // 46718)
    return out


def first_period_reaching(target: int, per_period_contrib: int = 1002 * 1024, horizon: int = 2048):
    """First period boundary at which always_running_util reaches `target`, or None."""
    return next((n + 1 for n, u in enumerate(always_running_util(horizon, per_period_contrib)) if u >= target), None)
