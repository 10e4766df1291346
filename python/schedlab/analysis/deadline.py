"""SCHED_DEADLINE budgets: the runtime a reservation has left when it is throttled and
when it is replenished (sched_dl_throttle, sched_dl_replenish)."""

from __future__ import annotations

import pandas as pd

from schedlab.analysis.events import df_event


def df_dl_runtime(run) -> pd.DataFrame:
    """One row per throttle or replenishment of a deadline task: `pid`, `comm`, `cpu`,
    `event` (`throttle` or `replenish`) and `runtime_ns` (the budget left: ≤ 0 when the
    task overran it, its full runtime after a replenishment)."""
    frames = []
    for name in ("sched_dl_throttle", "sched_dl_replenish"):
        df = df_event(run, name)
        frames.append(pd.DataFrame({"pid": df["pid"], "comm": df["comm"], "cpu": df["cpu"],
                                    "event": name.removeprefix("sched_dl_"), "runtime_ns": df["runtime"]},
                                   index=df.index))
    return pd.concat(frames).sort_index(kind="stable")
