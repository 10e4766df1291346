"""`df_event(run, name)`: one frame per event kind, with the tracepoint's own field names,
as `trace-cmd report` prints them and LISA's `Trace.df_event` returns them.

Every frame of `schedlab.analysis` is indexed by `Time`, the trace clock in seconds (the
run starts at `run.start_ns`, 1 s), as LISA indexes its frames."""

from __future__ import annotations

import numpy as np
import pandas as pd

TIME = "Time"

# cpu_idle's state when the CPU leaves idle: (u32)-1, as the event's field carries it.
PWR_EVENT_EXIT = (1 << 32) - 1

# sched_switch's prev_state as the kernel's TASK_REPORT bits (__trace_sched_switch_state):
# R (preempted) 0, S 0x1, X (EXIT_DEAD) 0x10.
SWITCH_STATE = {"R": 0x0, "S": 0x1, "X": 0x10}


def time_index(ts_ns) -> pd.Index:
    """Nanoseconds of the trace clock as the `Time` index, in seconds."""
    return pd.Index(np.asarray(ts_ns, dtype=np.int64) / 1e9, name=TIME)


def window_ns(run) -> tuple[int, int]:
    """The run's span on the trace clock, in ns: [start, end)."""
    return run.start_ns, run.start_ns + run.simulated_ns


def window(run) -> tuple[float, float]:
    """The run's span on the trace clock, in seconds, as LISA's `Trace.window`."""
    start, end = window_ns(run)
    return start / 1e9, end / 1e9


# TASK_COMM_LEN less its NUL: the kernel keeps a task's name to 15 bytes.
COMM_BYTES = 15


def kernel_comm(name: str) -> str:
    """A task's name as the kernel keeps it, and every event reports it."""
    return name.encode()[:COMM_BYTES].decode(errors="ignore")


def comms(run) -> dict[int, str]:
    """Each pid's comm as the kernel reports it (pid 1 is rt-app's main thread)."""
    return {0: "<idle>", 1: "rt-app", **{t["pid"]: kernel_comm(t["comm"]) for t in run.task_rows}}


def _ints(column) -> np.ndarray:
    return column.to_numpy(dtype=np.int64, na_value=-1)


def _switch(e, comm):
    return {"prev_comm": comm(e["pid"]), "prev_pid": _ints(e["pid"]),
            "prev_state": e["prev_state"].astype(object).map(SWITCH_STATE).astype(np.int64),
            "next_comm": comm(e["other_pid"]), "next_pid": _ints(e["other_pid"])}


def _wakeup(e, comm):
    return {"comm": comm(e["pid"]), "pid": _ints(e["pid"]), "target_cpu": _ints(e["target_cpu"])}


def _placed_wakeup(e, comm):
    """A waking's (or wakeup_new's) fields, and schedlab's `placement`: the rule of
    select_task_rq that chose `target_cpu`."""
    return {**_wakeup(e, comm), "placement": e["placement"]}


def _migrate(e, comm):
    return {"comm": comm(e["pid"]), "pid": _ints(e["pid"]), "orig_cpu": _ints(e["value"]),
            "dest_cpu": _ints(e["target_cpu"])}


def _fork(e, comm):
    return {"parent_comm": comm(e["pid"]), "parent_pid": _ints(e["pid"]),
            "child_comm": comm(e["other_pid"]), "child_pid": _ints(e["other_pid"])}


def _task(e, comm):
    return {"comm": comm(e["pid"]), "pid": _ints(e["pid"])}


def _rename(e, comm):
    return {"pid": _ints(e["pid"]), "newcomm": comm(e["pid"])}


def _cpu_state(e, comm):
    state = _ints(e["value"])
    return {"state": np.where(state < 0, PWR_EVENT_EXIT, state), "cpu_id": e["cpu"].to_numpy(np.int64)}


def _capacity(e, comm):
    return {"cpu": e["cpu"].to_numpy(np.int64), "capacity": _ints(e["value"])}


def _overutilized(e, comm):
    return {"overutilized": _ints(e["value"])}


def _print(e, comm):
    return {"buf": e["text"]}


def _dl_runtime(e, comm):
    return {**_task(e, comm), "cpu": e["cpu"].to_numpy(np.int64), "runtime": _ints(e["value"])}


def _dl_miss(e, comm):
    return {**_task(e, comm), "cpu": e["cpu"].to_numpy(np.int64), "deadline": _ints(e["value"])}


def _setprio(e, comm):
    return {**_task(e, comm), "newprio": _ints(e["value"])}


# Fields of each event of the events frame. Not carried: priorities, task_rename's oldcomm
# (the frame names a pid by its last comm), sched_overutilized's span and
# sched_dl_replenish's deadline.
_EVENTS = {
    "sched_switch": _switch, "sched_waking": _placed_wakeup, "sched_wakeup": _wakeup,
    "sched_wakeup_new": _placed_wakeup, "sched_migrate_task": _migrate, "sched_process_fork": _fork,
    "sched_process_exit": _task, "task_rename": _rename, "cpu_idle": _cpu_state,
    "cpu_frequency": _cpu_state, "sched_cpu_capacity": _capacity, "sched_overutilized": _overutilized,
    "print": _print, "sched_dl_throttle": _dl_runtime, "sched_dl_replenish": _dl_runtime,
    "sched_dl_miss": _dl_miss, "sched_pi_setprio": _setprio,
}

# The LISA module's signals: their fields, in the order the module's events declare them.
_SIGNALS = {
    "sched_pelt_se": ("update_time", "load", "runnable", "util", "cpu", "pid", "path", "comm"),
    "sched_pelt_cfs": ("update_time", "load", "runnable", "util", "cpu", "path"),
    "sched_util_est_se": ("util", "enqueued", "ewma", "cpu", "pid", "path", "comm"),
    "sched_util_est_cfs": ("util", "enqueued", "ewma", "cpu", "path"),
    "sched_pelt_rt": ("update_time", "load", "runnable", "util", "cpu"),
    "sched_pelt_dl": ("update_time", "load", "runnable", "util", "cpu"),
}

EVENT_NAMES = tuple(_EVENTS) + tuple(_SIGNALS)


def _needs_frames(run):
    if run.events is None:
        raise ValueError("the run kept no events: run it with frames=True")


def rows(run, *names: str) -> pd.DataFrame:
    """The events frame's rows of these kinds, with `ts` in integer ns."""
    _needs_frames(run)
    return run.events[run.events["event"].isin(names)]


def df_event(run, name: str) -> pd.DataFrame:
    """The rows of one event kind, with its fields as the tracepoint names them and
    `__cpu`, the CPU that recorded it (LISA's `trace.df_event(name)`)."""
    _needs_frames(run)
    if name in _SIGNALS:
        return _signal(run, name)
    if name not in _EVENTS:
        raise ValueError(f"unknown event '{name}' (known: {', '.join(EVENT_NAMES)})")
    e = rows(run, name)
    names = comms(run)
    swapper = "swapper/" + e["cpu"].astype(str)

    def comm(pids):
        """The comm of each pid; the idle task's is swapper/CPU."""
        return pids.map(names).astype(object).where(pids != 0, swapper).to_numpy()

    columns = {"__cpu": e["cpu"].to_numpy(np.int64), **_EVENTS[name](e, comm)}
    return pd.DataFrame({k: np.asarray(v) for k, v in columns.items()}, index=time_index(e["ts"]))


def _signal(run, name: str) -> pd.DataFrame:
    s = run.signals[run.signals["signal"] == name]
    names = comms(run)
    columns = {"__cpu": s["cpu"].to_numpy(np.int64)}
    for field in _SIGNALS[name]:
        column = s[field]
        if field == "comm":
            column = s["pid"].map(names).astype(object).fillna("(null)")
        elif field == "path":
            column = column.fillna("(null)").astype(object)
        elif field == "pid":
            column = column.fillna(-1)
        elif field != "cpu":
            # A value the event does not track (a cfs_rq's util_est ewma) is written 0.
            column = column.fillna(0)
        columns[field] = column.to_numpy(dtype=object if field in ("path", "comm") else np.int64)
    return pd.DataFrame(columns, index=time_index(s["ts"]))
