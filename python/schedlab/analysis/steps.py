"""Step signals: a value that holds from one event to the next (a frequency, an idle state),
integrated exactly in integer nanoseconds over the run."""

from __future__ import annotations

import numpy as np


def value_at(ts: np.ndarray, values: np.ndarray, at: np.ndarray, before) -> np.ndarray:
    """The value in force at each time of `at`: that of the last event at or before it
    (the last of several at one instant), `before` ahead of the first."""
    if len(ts) == 0:
        return np.full(len(at), before)
    i = np.searchsorted(ts, at, side="right") - 1
    return np.where(i >= 0, values[np.maximum(i, 0)], before)


def spans(points: np.ndarray, start: int, end: int) -> tuple[np.ndarray, np.ndarray]:
    """The instants where any signal may change, within [start, end), and how long each
    lasts."""
    at = np.unique(np.concatenate([[start], points[(points >= start) & (points < end)]]))
    return at, np.diff(np.append(at, end))
