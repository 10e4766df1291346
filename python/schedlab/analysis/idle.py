"""CPU idle states and their residency, shaped as LISA's `idle` analysis
(`lisa/analysis/idle.py`): state −1 is "not idle"."""

from __future__ import annotations

import numpy as np
import pandas as pd

from schedlab.analysis.events import PWR_EVENT_EXIT, df_event, rows, window_ns
from schedlab.analysis.steps import spans, value_at


def df_cpus_idle(run, cpus=None) -> pd.DataFrame:
    """One row per cpu_idle event: `cpu`, `state` (the idle state entered, −1 on exit)."""
    df = df_event(run, "cpu_idle")
    state = df["state"].to_numpy()
    out = pd.DataFrame({"cpu": df["cpu_id"], "state": np.where(state == PWR_EVENT_EXIT, -1, state)},
                       index=df.index)
    return out if cpus is None else out[out["cpu"].isin(list(cpus))]


def df_cpu_idle(run, cpu: int) -> pd.DataFrame:
    """`df_cpus_idle` of one CPU."""
    return df_cpus_idle(run, [cpu])


def _states_ns(run, cpus) -> tuple[np.ndarray, np.ndarray]:
    """The change points of `cpus` (ns) and, at each, every CPU's state (a row per
    instant, a column per CPU; +inf before a CPU's first event)."""
    df = rows(run, "cpu_idle")
    df = df[df["cpu"].isin(list(cpus))]
    ts, cpu, state = df["ts"].to_numpy(np.int64), df["cpu"].to_numpy(), df["value"].to_numpy(float)
    at, _ = spans(ts, *window_ns(run))
    columns = [value_at(ts[cpu == c], state[cpu == c], at, np.inf) for c in cpus]
    return at, np.column_stack(columns)


def active_ns(run, cpus) -> tuple[np.ndarray, np.ndarray]:
    """When any of `cpus` is not idle, as a step signal: change points (ns), bool values."""
    at, states = _states_ns(run, cpus)
    return at, (states == -1).any(axis=1)


def _state_residency(run, cpus) -> pd.DataFrame:
    at, states = _states_ns(run, cpus)
    _, length = spans(at, *window_ns(run))
    # A cluster sits in the shallowest state of its CPUs (LISA's cluster residency).
    state = states.min(axis=1)
    known = np.isfinite(state)
    df = pd.DataFrame({"idle_state": state[known].astype(np.int64), "time": length[known]})
    return df.groupby("idle_state").sum() / 1e9


def df_cpu_idle_state_residency(run, cpu: int) -> pd.DataFrame:
    """Time CPU `cpu` spent in each idle state: index `idle_state` (−1: not idle), column
    `time` (s)."""
    return _state_residency(run, [cpu])


def df_cluster_idle_state_residency(run, cluster) -> pd.DataFrame:
    """Time a cluster (a list of CPUs) spent in each state, the shallowest of its CPUs':
    index `idle_state`, column `time` (s)."""
    return _state_residency(run, list(cluster))
