"""rt-app's per-activation statistics, read from the run's rt-app logs (`log_dir`): what
LISA's `rta.df_rtapp_stats` reads from rt-app's `rtapp_stats` events."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from schedlab.analysis.events import TIME, kernel_comm
from schedlab.analysis.tasks import task_pids


def _logs(run) -> dict[int, Path]:
    """Each task's log, `<log_basename>-<comm>.log`: the basename is the one prefix that
    every log shares."""
    if run.log_dir is None:
        raise ValueError("the run wrote no rt-app logs: run it with log_dir=DIR")
    names = {p.name: p for p in Path(run.log_dir).glob("*.log")}
    comms = {t["pid"]: t["comm"] for t in run.task_rows}
    prefixes: dict[str, int] = {}
    for name in names:
        for comm in comms.values():
            if name.endswith(f"-{comm}.log"):
                prefix = name[:-len(f"-{comm}.log")]
                prefixes[prefix] = prefixes.get(prefix, 0) + 1
    if not prefixes:
        return {}
    base = max(prefixes, key=lambda p: (prefixes[p], p))
    return {pid: names[f"{base}-{comm}.log"] for pid, comm in comms.items() if f"{base}-{comm}.log" in names}


def df_rtapp_stats(run, task=None) -> pd.DataFrame:
    """One row per rt-app loop of each thread, as rt-app logs it: `perf`, `run`, `period`,
    `start`, `end`, `rel_st`, `slack`, `c_duration`, `c_period`, `wu_lat` (µs, rt-app's
    units), with `__comm` and `__pid`; indexed by the loop's start (s)."""
    df = run.rtapp_stats if run.rtapp_stats is not None else _read(run)
    return df if task is None else df[df["__pid"].isin(task_pids(run, task))]


def _read(run) -> pd.DataFrame:
    logs = _logs(run)
    comms = {t["pid"]: t["comm"] for t in run.task_rows}
    frames = []
    for pid in sorted(logs):
        df = pd.read_csv(logs[pid], sep=r"\s+").rename(columns={"#idx": "idx"})
        df.insert(0, "__pid", pid)
        df.insert(0, "__comm", kernel_comm(comms[pid]))
        frames.append(df)
    if not frames:
        return pd.DataFrame(columns=["__comm", "__pid", "idx", "perf", "run", "period", "start", "end",
                                     "rel_st", "slack", "c_duration", "c_period", "wu_lat"],
                            index=pd.Index([], name=TIME))
    df = pd.concat(frames, ignore_index=True)
    df.index = pd.Index(df["start"] / 1e6, name=TIME)
    return df.sort_index(kind="stable")
