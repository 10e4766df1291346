"""PELT and util_est signals of tasks and CPUs, shaped as LISA's `load_tracking` analysis
(`lisa/analysis/load_tracking.py`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from schedlab.analysis.events import df_event
from schedlab.analysis.tasks import task_pids

# Each task signal: the event that carries it (LISA's df_tasks_signal).
_TASK_SIGNALS = {"util": "sched_pelt_se", "load": "sched_pelt_se", "runnable": "sched_pelt_se",
                 "enqueued": "sched_util_est_se", "ewma": "sched_util_est_se",
                 "required_capacity": "sched_pelt_se"}

_CPU_SIGNALS = {"util": "sched_pelt_cfs", "load": "sched_pelt_cfs", "runnable": "sched_pelt_cfs",
                "enqueued": "sched_util_est_cfs", "capacity": "sched_cpu_capacity"}


def _known(signal: str, table: dict) -> str:
    if signal not in table:
        raise ValueError(f"signal '{signal}' not supported (supported: {', '.join(table)})")
    return table[signal]


def df_tasks_signal(run, signal: str) -> pd.DataFrame:
    """One row per update of `signal` of any task: columns `comm`, `cpu`, `pid`, `signal`
    (and `update_time`, ns of the PELT clock, for PELT signals). `signal` is `util`, `load`,
    `runnable`, `enqueued`, `ewma` (util_est) or `required_capacity` (the smallest CPU
    capacity that fits util, as LISA computes it). Group entities are left out, as LISA
    leaves them out."""
    event = _known(signal, _TASK_SIGNALS)
    df = df_event(run, event)
    df = df[df["path"] == "(null)"]
    if signal == "required_capacity":
        capacities = np.array(sorted({c["capacity"] for c in run.cpu_rows}))
        fits = np.searchsorted(capacities, df["util"].to_numpy())
        df = df.assign(required_capacity=capacities[np.minimum(fits, len(capacities) - 1)])
    columns = sorted({"cpu", "comm", "pid", "update_time", signal} & set(df.columns))
    return df[columns]


def df_task_signal(run, task, signal: str) -> pd.DataFrame:
    """`df_tasks_signal` of one task (a pid or a comm)."""
    df = df_tasks_signal(run, signal)
    return df[df["pid"].isin(task_pids(run, task))].drop(columns=["pid", "comm"])


def df_cpus_signal(run, signal: str, cpus=None) -> pd.DataFrame:
    """One row per update of a CPU's `signal`: `util`, `load` or `runnable` (the root
    cfs_rq's PELT, with `update_time`), `enqueued` (its util_est) or `capacity`
    (sched_cpu_capacity: the capacity left to CFS)."""
    event = _known(signal, _CPU_SIGNALS)
    df = df_event(run, event)
    if "path" in df:
        df = df[df["path"] == "/"]
    columns = sorted({"cpu", "update_time", signal} & set(df.columns))
    df = df[columns]
    return df if cpus is None else df[df["cpu"].isin(list(cpus))]
