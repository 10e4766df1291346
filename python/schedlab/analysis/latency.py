"""Wakeup and preemption latencies, shaped as LISA's `latency` analysis
(`lisa/analysis/latency.py`): the time a task waits between becoming runnable and
running."""

from __future__ import annotations

import pandas as pd

from schedlab.analysis.tasks import TaskState, df_tasks_states, task_pids


def _latency(run, task, name: str, curr: TaskState) -> pd.DataFrame:
    df = df_tasks_states(run)
    df = df[(df["curr_state"] == curr) & (df["next_state"] == TaskState.TASK_ACTIVE)]
    df = df.rename(columns={"delta": name})
    if task is None:
        return df[["pid", "comm", name, "cpu", "target_cpu"]]
    return df[df["pid"].isin(task_pids(run, task))][[name, "cpu", "target_cpu"]]


def df_latency_wakeup(run, task=None) -> pd.DataFrame:
    """Each wakeup's latency, from sched_wakeup to the switch that runs the task:
    `wakeup_latency` (s), `cpu` and `target_cpu`; of every task (with `pid` and `comm`)
    unless `task` names one."""
    return _latency(run, task, "wakeup_latency", TaskState.TASK_WAKING)


# The name the issue tracker and the plots use; LISA's is df_latency_wakeup.
df_wakeup_latency = df_latency_wakeup


def df_latency_preemption(run, task=None) -> pd.DataFrame:
    """Each preemption's latency, from the switch that preempts the task to the one that
    runs it again: `preempt_latency` (s), `cpu`."""
    df = _latency(run, task, "preempt_latency", TaskState.TASK_RUNNING)
    return df.drop(columns="target_cpu")
