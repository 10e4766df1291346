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


# The task columns a run's metrics sum.
SUMMED = ("run_ns", "wait_ns", "wakeups", "migrations", "preemptions", "overruns", "timer_events",
          "dl_misses", "dl_throttled_ns")


def run_metrics(run) -> dict:
    """A run in one row of scalars (a sweep's row, a comparison's totals): sums over tasks
    of their time and counts, the worst tasks' latency, the mean slack per timer event, the
    CPUs' mean busy share, energy and frequency changes."""
    tasks = df_tasks_summary(run)
    timed = tasks["timer_events"].sum()
    return {
        "simulated_s": run.simulated_ns / 1e9, "events": run.nr_events, "tasks": len(tasks),
        **{column: int(tasks[column].sum()) for column in SUMMED},
        "max_latency_p99_ns": int(tasks["latency_p99_ns"].to_numpy().max(initial=0)),
        "max_latency_ns": int(tasks["latency_max_ns"].to_numpy().max(initial=0)),
        "mean_slack_ns": float((tasks["mean_slack_ns"] * tasks["timer_events"]).sum() / timed) if timed else 0.0,
        "busy_pct": float(df_cpus_summary(run)["busy_pct"].mean()),
        "energy_mj": float(run.energy_mj),
        "freq_transitions": int(sum(p["transitions"] for p in run.policy_rows)),
        "warnings": len(run.warnings),
    }

