"""Task states, run time and residency, shaped as LISA's `tasks` analysis
(`lisa/analysis/tasks.py`): one row per state change, with the state's duration."""

from __future__ import annotations

from enum import IntEnum

import numpy as np
import pandas as pd

from schedlab.analysis.events import SWITCH_STATE, _ints, comms, df_event, kernel_comm, rows, time_index, window_ns


class TaskState(IntEnum):
    """The states of `df_tasks_states`, with LISA's values: the kernel's TASK_REPORT bits
    for a switched-out task, and LISA's own WAKING, ACTIVE and UNKNOWN."""

    TASK_RUNNING = 0x0
    TASK_INTERRUPTIBLE = 0x1
    EXIT_DEAD = 0x10
    TASK_WAKING = 0x200
    TASK_ACTIVE = 0x2000
    TASK_UNKNOWN = -1


def task_pids(run, task) -> list[int]:
    """The pids a task names: a pid, a comm, or LISA's (pid, comm)."""
    if isinstance(task, tuple):
        task = task[0]
    if isinstance(task, (int, np.integer)):
        pids = [int(task)] if any(t["pid"] == task for t in run.task_rows) else []
    else:
        pids = [t["pid"] for t in run.task_rows if task in (t["comm"], kernel_comm(t["comm"]))]
    if not pids:
        raise ValueError(f"no task '{task}' in the run")
    return pids


def _states_ns(run) -> pd.DataFrame:
    """Every task state change in trace order, with `ts` (ns) and `delta_ns` to the pid's
    next change (to the end of the run for its last one)."""
    e = rows(run, "sched_switch", "sched_wakeup", "sched_wakeup_new")
    switch = (e["event"] == "sched_switch").to_numpy()
    # A switch is two changes: prev leaves (its prev_state), then next becomes ACTIVE.
    reps = 1 + switch
    at = np.repeat(np.arange(len(e)), reps)
    incoming = np.zeros(len(at), dtype=bool)
    incoming[np.cumsum(reps)[switch] - 1] = True
    prev_state = e["prev_state"].astype(object).map(SWITCH_STATE).fillna(-1).to_numpy(np.int64)
    state = np.where(incoming, TaskState.TASK_ACTIVE,
                     np.where(switch[at], prev_state[at], TaskState.TASK_WAKING))
    pid = np.where(incoming, _ints(e["other_pid"])[at], _ints(e["pid"])[at])
    ts = e["ts"].to_numpy(np.int64)[at]
    target = np.where(switch[at], -1, _ints(e["target_cpu"])[at])
    df = pd.DataFrame({"ts": ts, "pid": pid, "cpu": e["cpu"].to_numpy(np.int64)[at],
                       "target_cpu": target, "curr_state": state})
    by_pid = df.groupby("pid", sort=False)
    df["next_state"] = by_pid["curr_state"].shift(-1, fill_value=int(TaskState.TASK_UNKNOWN))
    after = by_pid["ts"].shift(-1)
    df["delta_ns"] = (after.fillna(window_ns(run)[1]) - df["ts"]).astype(np.int64)
    df["last"] = after.isna()
    return df


def _comm(run, pids) -> np.ndarray:
    return pd.Series(pids).map(comms(run)).to_numpy(dtype=object)


def df_tasks_states(run) -> pd.DataFrame:
    """One row per task state change: `pid`, `comm`, `target_cpu` (a wakeup's, −1
    otherwise), `cpu`, `curr_state`, `next_state` (`TaskState` values) and `delta` (s spent
    in `curr_state`; NaN for a pid's last change), as LISA's `df_tasks_states`. Changes at
    one instant keep their trace order (LISA nudges their times apart instead)."""
    df = _states_ns(run)
    delta = (df["delta_ns"] / 1e9).mask(df["last"])
    out = pd.DataFrame({"pid": df["pid"].to_numpy(), "comm": _comm(run, df["pid"]),
                        "target_cpu": df["target_cpu"].to_numpy(), "cpu": df["cpu"].to_numpy(),
                        "curr_state": df["curr_state"].to_numpy(), "next_state": df["next_state"].to_numpy(),
                        "delta": delta.to_numpy()}, index=time_index(df["ts"]))
    return out


def df_task_states(run, task) -> pd.DataFrame:
    """`df_tasks_states` of one task (a pid, a comm or (pid, comm)), without `pid` and
    `comm`."""
    df = df_tasks_states(run)
    return df[df["pid"].isin(task_pids(run, task))].drop(columns=["pid", "comm"])


def _active_ns(run) -> pd.DataFrame:
    """The ACTIVE rows of `_states_ns`: each a stretch a task ran on `cpu`."""
    df = _states_ns(run)
    return df[df["curr_state"] == TaskState.TASK_ACTIVE]


def df_tasks_runtime(run) -> pd.DataFrame:
    """Run time of each pid: index `pid`, columns `runtime` (s) and `comm`, busiest first,
    as LISA's `df_tasks_runtime`."""
    ns = _active_ns(run).groupby("pid")["delta_ns"].sum()
    df = pd.DataFrame({"runtime": ns / 1e9, "comm": _comm(run, ns.index)}, index=ns.index.rename("pid"))
    return df.sort_values("runtime", ascending=False, kind="stable")


def df_task_total_residency(run, task) -> pd.DataFrame:
    """A task's run time on each CPU: index `cpu` (every CPU), column `runtime` (s)."""
    df = _active_ns(run)
    ns = df[df["pid"].isin(task_pids(run, task))].groupby("cpu")["delta_ns"].sum()
    cpus = pd.RangeIndex(len(run.cpu_rows), name="cpu")
    return (ns.reindex(cpus, fill_value=0) / 1e9).to_frame("runtime")


def df_tasks_total_residency(run, tasks=None, ascending: bool = False, count: int | None = None) -> pd.DataFrame:
    """Run time of tasks on each CPU: one row per task (named `pid:comm`, as LISA's task
    ids print), one column per CPU and `Total` (s), busiest first."""
    df = _active_ns(run)
    pids = [t["pid"] for t in run.task_rows] if tasks is None else [p for t in tasks for p in task_pids(run, t)]
    df = df[df["pid"].isin(pids)]
    table = df.pivot_table(index="pid", columns="cpu", values="delta_ns", aggfunc="sum", fill_value=0)
    table = table.reindex(index=pids, columns=range(len(run.cpu_rows)), fill_value=0) / 1e9
    table.index = [f"{pid}:{comm}" for pid, comm in zip(table.index, _comm(run, table.index))]
    table.columns.name = "cpu"
    table["Total"] = table.sum(axis=1)
    table = table.sort_values("Total", ascending=ascending, kind="stable")
    return table if count is None else table.head(count)


def df_migrations(run) -> pd.DataFrame:
    """One row per task migration (sched_migrate_task): `comm`, `pid`, `orig_cpu`,
    `dest_cpu`."""
    return df_event(run, "sched_migrate_task").drop(columns="__cpu")

