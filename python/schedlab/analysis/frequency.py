"""CPU frequencies and their residency, shaped as LISA's `frequency` analysis
(`lisa/analysis/frequency.py`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from schedlab.analysis.events import df_event, rows, window_ns
from schedlab.analysis.idle import active_ns
from schedlab.analysis.steps import spans, value_at


def df_cpus_frequency(run) -> pd.DataFrame:
    """One row per cpu_frequency event: `cpu`, `frequency` (kHz)."""
    df = df_event(run, "cpu_frequency")
    return pd.DataFrame({"cpu": df["cpu_id"], "frequency": df["state"]}, index=df.index)


def df_cpu_frequency(run, cpu: int) -> pd.DataFrame:
    """`df_cpus_frequency` of one CPU."""
    df = df_cpus_frequency(run)
    return df[df["cpu"] == cpu]


def _residency(run, cpus: tuple[int, ...]) -> pd.DataFrame:
    """Time at each frequency of `cpus[0]`, in all (`total_time`) and while one of `cpus`
    is not idle (`active_time`), in s: LISA's `_get_frequency_residency`."""
    freq = rows(run, "cpu_frequency")
    freq = freq[freq["cpu"] == cpus[0]]
    freq_ts = freq["ts"].to_numpy(np.int64)
    active_ts, active = active_ns(run, cpus)
    start, end = window_ns(run)
    at, length = spans(np.concatenate([freq_ts, active_ts]), start, end)
    khz = value_at(freq_ts, freq["value"].to_numpy(np.int64), at, 0)
    busy = value_at(active_ts, active, at, False)
    df = pd.DataFrame({"frequency": khz, "total_time": length, "active_time": length * busy})
    df = df[df["frequency"] > 0].groupby("frequency").sum() / 1e9
    return df


def df_cpu_frequency_residency(run, cpu: int) -> pd.DataFrame:
    """Time CPU `cpu` spent at each frequency: index `frequency` (kHz), columns
    `total_time` and `active_time` (not idle), in s."""
    return _residency(run, (cpu,))


def df_domain_frequency_residency(run, cpu: int) -> pd.DataFrame:
    """Time the frequency domain of `cpu` spent at each frequency: index `frequency`
    (kHz), columns `total_time` and `active_time` (one of its CPUs not idle), in s."""
    return _residency(run, tuple(freq_domain(run, cpu)))


def freq_domains(run) -> list[list[int]]:
    """The CPUs of each cpufreq policy, as LISA's plat_info `freq-domains`."""
    return [list(p["cpus"]) for p in run.policy_rows]


def freq_domain(run, cpu: int) -> list[int]:
    for domain in freq_domains(run):
        if cpu in domain:
            return domain
    raise ValueError(f"CPU {cpu} belongs to no frequency domain")


def df_frequency_residency(run) -> pd.DataFrame:
    """Every domain's residency in one tidy table: one row per (policy, frequency), with
    `policy`, `cpus`, `frequency_khz`, `total_s`, `active_s` and `total_pct` (share of the
    run)."""
    rows = []
    for p in run.policy_rows:
        df = _residency(run, tuple(p["cpus"]))
        rows.append(pd.DataFrame({
            "policy": p["policy"], "cpus": " ".join(map(str, p["cpus"])), "frequency_khz": df.index,
            "total_s": df["total_time"].to_numpy(), "active_s": df["active_time"].to_numpy(),
            "total_pct": 100 * df["total_time"].to_numpy() / (run.simulated_ns / 1e9)}))
    return pd.concat(rows, ignore_index=True)


def df_policy_residency(run) -> pd.DataFrame:
    """Each cpufreq policy's time at each of its frequencies, as the run counted it (no
    events needed, so a saved result has it too): `policy`, `frequency_khz`, `time_ns` and
    `time_pct` (share of the run)."""
    rows = [{"policy": p["policy"], "frequency_khz": int(khz), "time_ns": ns,
             "time_pct": 100 * ns / max(run.simulated_ns, 1)}
            for p in run.policy_rows for khz, ns in p["residency"].items()]
    return pd.DataFrame(rows, columns=["policy", "frequency_khz", "time_ns", "time_pct"])
