"""PELT for one task entity: replay kernel updates, a periodic task, the ramp to a value.

Each function is a thin call into the Rust core and returns a pandas DataFrame.
"""

import numpy as np
import pandas as pd

from schedlab import _core
from schedlab.units import as_ns, unsigned

PELT_PERIOD_NS = 1024 * 1024
LOAD_AVG_PERIOD = 32  # periods in which a contribution halves (y^32 = 1/2)
INPUT_COLUMNS = ["now_ns", "load", "runnable", "running"]


def freq_scale(freq_ratio: float) -> int:
    """arch_scale_freq_capacity for cur/max = freq_ratio: (cur << 10) / max, truncated."""
    scale = int(freq_ratio * 1024) if 0 < freq_ratio <= 1 else 0
    if scale < 1:
        raise _core.InputError(f"--freq-ratio: {freq_ratio} is not in [1/1024, 1]")
    return scale


def replay(df: pd.DataFrame, weight: int = 1024) -> pd.DataFrame:
    """Apply each row (now_ns, load, runnable, running) as one ___update_load_sum /
    ___update_load_avg of a task entity of load weight `weight`; the first row only sets
    last_update_time. Returns the signals after each row."""
    missing = [c for c in INPUT_COLUMNS if c not in df.columns]
    if missing:
        raise _core.InputError(f"missing column '{missing[0]}'")
    flags = {}
    for column in INPUT_COLUMNS[1:]:
        values = df[column].to_numpy()
        bad = ~np.isin(values, (0, 1))
        if bad.any():
            row = int(np.argmax(bad))
            raise _core.InputError(f"row {row}, column {column}: {values[row]!r} is not 0 or 1")
        flags[column] = values.astype(bool)
    now = df["now_ns"].to_numpy()
    if not np.issubdtype(now.dtype, np.integer) or (now < 0).any():
        raise _core.InputError("column now_ns: values must be non-negative integers")
    out = _core.pelt_replay(now.astype(np.uint64), flags["load"], flags["runnable"], flags["running"],
                            unsigned("--weight", weight))
    return pd.DataFrame({"now_ns": now.astype(np.uint64), **out})


def periodic(
    run="20ms",
    period="200ms",
    capacity: int = 1024,
    freq_ratio: float = 1.0,
    invariance: str = "clock_pelt",
    duration="2s",
    tick="4ms",
    kernel: str = "6.12",
    weight: int = 1024,
) -> pd.DataFrame:
    """A task that wakes every `period` and runs `run` of work (calibrated at capacity 1024
    and max frequency), alone on a CPU of `capacity` at `freq_ratio` of its max frequency.
    One row per update (wakeup, tick, sleep). `df.attrs` holds the settled min/max util_avg
    over the last period and seed 000's closed-form bounds."""
    columns, summary = _core.pelt_periodic(
        unsigned("--run", as_ns(run)), unsigned("--period", as_ns(period)),
        unsigned("--duration", as_ns(duration)), unsigned("--tick", as_ns(tick)),
        unsigned("--capacity", capacity), freq_scale(freq_ratio), invariance, kernel, unsigned("--weight", weight),
    )
    df = pd.DataFrame(columns)
    df.attrs.update(summary)
    return df


def ramp(
    to=(972, 486, 256),
    capacity: int = 1024,
    freq_ratio: float = 1.0,
    invariance: str = "clock_pelt",
    tick=None,
) -> pd.DataFrame:
    """Time for an always-running task to bring util_avg from zero to each value in `to`,
    updated at every PELT period boundary (or every `tick`). Columns: target, reached_ns
    (<NA> if not reachable), periods, ms."""
    step = PELT_PERIOD_NS if tick is None else unsigned("--tick", as_ns(tick))
    rows = _core.pelt_ramp([unsigned("--to", t) for t in to], step, unsigned("--capacity", capacity),
                           freq_scale(freq_ratio), invariance)
    reached = pd.array([ns for _, ns in rows], dtype="UInt64")
    return pd.DataFrame({
        "target": [t for t, _ in rows],
        "reached_ns": reached,
        "periods": reached.astype("Float64") / PELT_PERIOD_NS,
        "ms": reached.astype("Float64") / 1e6,
    })
