"""The kernel's PELT integer rules, written out by hand from kernel-sched.md §1 for tests:
the table entries are copied from the reference (sched-pelt.h), not from schedlab."""

INV = {1: 0xFA83B2DA, 2: 0xF5257D14}
LOAD_AVG_MAX = 47742
PERIOD_NS = 1024 * 1024


def decay(val: int, n: int) -> int:
    """decay_load for n < 32: (val * runnable_avg_yN_inv[n]) >> 32."""
    return (val * INV[n]) >> 32


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
