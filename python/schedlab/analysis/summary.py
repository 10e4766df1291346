"""The run's own tables as tidy frames: per task, per CPU and per cluster figures, every
column's unit in its name (`_ns`, `_pct`, `_mj`)."""

from __future__ import annotations

import pandas as pd


def df_tasks_summary(run) -> pd.DataFrame:
    """One row per task (index `pid`): the run summary's task columns (docs/outputs.md),
    mean slack in ns like every other duration."""
    df = pd.DataFrame(run.task_rows).set_index("pid")
    df["mean_slack_ns"] = df.pop("mean_slack_us") * 1000
    return df


def df_cpus_summary(run) -> pd.DataFrame:
    """One row per CPU (index `cpu`): capacity, busy and system time, schedstat counts and
    energy; frequency residency is in `df_frequency_residency`."""
    return pd.DataFrame(run.cpu_rows).drop(columns="freq_residency").set_index("cpu")


def df_cluster_energy(run) -> pd.DataFrame:
    """Energy of each platform cluster: `cluster`, `cpus`, `cpus_energy_mj` (its CPUs'
    active and idle power), `shared_energy_mj` (the cluster's own power) and their sum
    `energy_mj`."""
    cpus = pd.DataFrame(run.cpu_rows).groupby("cluster")
    df = pd.DataFrame({"cpus": cpus["cpu"].agg(lambda c: " ".join(map(str, c))),
                       "cpus_energy_mj": cpus["energy_mj"].sum()})
    df["shared_energy_mj"] = run.cluster_energy_mj
    df["energy_mj"] = df["cpus_energy_mj"] + df["shared_energy_mj"]
    return df.reset_index()
