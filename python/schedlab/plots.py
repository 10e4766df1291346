"""Plots of a run, built only on `schedlab.analysis`: each `plot_*` returns a `Figure`, a
description of its series that `to_plotly` (interactive, for reports and notebooks) and
`to_matplotlib` (static images) draw the same way. A plot with nothing to show returns
None (no deadline task, no rt-app logs)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from schedlab import analysis

# Series longer than this are thinned for drawing: each of half this many buckets keeps its
# lowest and its highest point, in time order (peaks and troughs survive; a report stays a
# few MB).
MAX_POINTS = 4000


@dataclass
class Series:
    name: str
    x: np.ndarray
    y: np.ndarray
    kind: str = "line"  # line, step (holds until the next point), scatter, bar
    secondary: bool = False  # drawn against the right-hand axis
    dash: bool = False
    group: str | None = None  # series of one group share a colour (a CPU's util and capacity)

    def __repr__(self) -> str:
        return f"<Series {self.name!r}: {self.kind}, {len(self.x)} points>"


@dataclass
class Figure:
    title: str
    x_label: str
    y_label: str
    series: list[Series] = field(default_factory=list)
    y2_label: str | None = None
    stacked: bool = False  # bars stacked rather than side by side

    def __repr__(self) -> str:
        return f"<Figure {self.title!r}: {len(self.series)} series>"

    def _repr_html_(self) -> str:
        """Jupyter's view: the plot, drawn by plotly (its script loaded once per notebook)."""
        return to_plotly(self).to_html(full_html=False, include_plotlyjs="cdn")


def palette() -> list[str]:
    """48 distinct colours (plotly's Dark24 and Light24): one per series group, where 10
    would repeat over a 16-CPU platform's series."""
    from plotly.colors import qualitative

    return list(qualitative.Dark24) + list(qualitative.Light24)


def _colours(fig: Figure) -> list[str]:
    """Each series' colour: one per group (a series without one is its own group)."""
    groups: dict = {}
    colours = palette()
    return [colours[groups.setdefault(s.group or s.name, len(groups)) % len(colours)] for s in fig.series]


def thin(x, y, n: int = MAX_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most `n` points: the lowest and the highest of each of `n` / 2 equal runs of
    points, in their order (min–max decimation)."""
    x, y = np.asarray(x), np.asarray(y)
    if len(x) <= n:
        return x, y
    edges = np.linspace(0, len(x), n // 2 + 1).astype(int)
    keep = sorted({a + int(f(y[a:b])) for a, b in zip(edges[:-1], edges[1:]) if b > a
                   for f in (np.argmin, np.argmax)})
    return x[keep], y[keep]


def _line(name, df, column, kind="line", **kw) -> Series:
    x, y = thin(df.index.to_numpy(), df[column].to_numpy(dtype=float))
    return Series(name, x, y, kind, **kw)


def busiest(run, count: int = 4) -> list[int]:
    """The pids of the `count` tasks that ran longest."""
    runtime = analysis.df_tasks_runtime(run).drop(index=[0, 1], errors="ignore")
    return runtime.index[:count].tolist()


def plot_task_signals(run, task) -> Figure:
    """A task's util_avg and util_est (ewma), and the CPU it ran on (right axis)."""
    pid = analysis.tasks.task_pids(run, task)[0]
    comm = next(t["comm"] for t in run.task_rows if t["pid"] == pid)
    fig = Figure(f"{comm} ({pid}): utilization", "time (s)", "util", y2_label="CPU")
    fig.series.append(_line("util_avg", analysis.df_task_signal(run, pid, "util"), "util"))
    fig.series.append(_line("util_est.ewma", analysis.df_task_signal(run, pid, "ewma"), "ewma", "step"))
    states = analysis.df_task_states(run, pid)
    ran = states[states["curr_state"] == analysis.TaskState.TASK_ACTIVE]
    fig.series.append(Series("CPU", ran.index.to_numpy(), ran["cpu"].to_numpy(), "scatter", secondary=True))
    return fig


def plot_cpus_util(run) -> Figure:
    """Each CPU's util_avg against the capacity left to CFS, each held until its next
    update (a signal between two updates is not a ramp), a CPU's two in one colour."""
    fig = Figure("CPU utilization and capacity", "time (s)", "util / capacity")
    util = analysis.df_cpus_signal(run, "util")
    capacity = analysis.df_cpus_signal(run, "capacity")
    for cpu in sorted(util["cpu"].unique()):
        group = f"CPU{cpu}"
        fig.series.append(_line(f"CPU{cpu} util", util[util["cpu"] == cpu], "util", "step", group=group))
        fig.series.append(_line(f"CPU{cpu} capacity", capacity[capacity["cpu"] == cpu], "capacity", "step",
                                dash=True, group=group))
    return fig


def plot_frequency(run) -> Figure:
    """Each cpufreq policy's frequency over time."""
    fig = Figure("Frequency per policy", "time (s)", "frequency (MHz)")
    for p in run.policy_rows:
        df = analysis.df_cpu_frequency(run, p["cpus"][0])
        end = analysis.window(run)[1]
        x = np.append(df.index.to_numpy(), end)
        y = np.append(df["frequency"].to_numpy(), df["frequency"].to_numpy()[-1:]) / 1000
        fig.series.append(Series(f"{p['policy']} ({p['governor']})", x, y, "step"))
    return fig


def plot_frequency_residency(run) -> Figure:
    """Share of the run each policy spent at each frequency, in all and not idle."""
    df = analysis.df_frequency_residency(run)
    names = np.array([f"{p} {khz // 1000} MHz" for p, khz in zip(df["policy"], df["frequency_khz"])])
    fig = Figure("Frequency residency", "policy and frequency", "% of the run")
    fig.series.append(Series("total", names, df["total_pct"].to_numpy(), "bar"))
    fig.series.append(Series("not idle", names, 100 * df["active_s"].to_numpy() / (run.simulated_ns / 1e9), "bar"))
    return fig


def plot_idle_residency(run) -> Figure:
    """Share of the run each CPU spent in each idle state (−1: not idle)."""
    fig = Figure("Idle state residency", "CPU", "% of the run", stacked=True)
    span = run.simulated_ns / 1e9
    cpus = [c["cpu"] for c in run.cpu_rows]
    table = pd.DataFrame({cpu: analysis.df_cpu_idle_state_residency(run, cpu)["time"] for cpu in cpus}).fillna(0)
    for state, row in table.sort_index().iterrows():
        name = "running" if state == -1 else f"state {state}"
        fig.series.append(Series(name, np.array([f"CPU{c}" for c in cpus]), 100 * row.to_numpy() / span, "bar"))
    return fig


def plot_tasks_residency(run, count: int = 10) -> Figure:
    """Run time of the busiest tasks on each CPU."""
    fig = Figure("Task residency per CPU", "task", "run time (s)", stacked=True)
    table = analysis.df_tasks_total_residency(run, busiest(run, count))
    for cpu in table.columns.drop("Total"):
        if table[cpu].any():
            fig.series.append(Series(f"CPU{cpu}", table.index.to_numpy(), table[cpu].to_numpy(), "bar"))
    return fig


def plot_wakeup_latency_cdf(run, count: int = 6) -> Figure | None:
    """Distribution of wakeup latency: all tasks, and the busiest ones."""
    df = analysis.df_latency_wakeup(run)
    if df.empty:
        return None
    fig = Figure("Wakeup latency (CDF)", "latency (µs)", "fraction of wakeups")
    groups = [("all tasks", df)] + [(analysis.events.comms(run)[pid], df[df["pid"] == pid])
                                    for pid in busiest(run, count)]
    for name, part in groups:
        if len(part):
            us = np.sort(part["wakeup_latency"].to_numpy()) * 1e6
            x, y = thin(us, np.arange(1, len(us) + 1) / len(us))
            fig.series.append(Series(name, x, y, "step"))
    return fig


def plot_slack_histogram(run, bins: int = 40) -> Figure | None:
    """rt-app's slack per loop (the run must have written rt-app logs), all threads."""
    if run.log_dir is None:
        return None
    df = analysis.df_rtapp_stats(run)
    df = df[df["c_period"] > 0]
    if df.empty:
        return None
    counts, edges = np.histogram(df["slack"].to_numpy(), bins=bins)
    fig = Figure("rt-app slack per loop", "slack (µs)", "loops")
    fig.series.append(Series("slack", (edges[:-1] + edges[1:]) / 2, counts, "bar"))
    return fig


def plot_energy(run) -> Figure:
    """Energy of each cluster: its CPUs' and its own."""
    df = analysis.df_cluster_energy(run)
    names = np.array([f"cluster {c} (CPUs {cpus})" for c, cpus in zip(df["cluster"], df["cpus"])])
    fig = Figure(f"Energy per cluster (total {run.energy_mj:.1f} mJ)", "cluster", "energy (mJ)", stacked=True)
    fig.series.append(Series("CPUs", names, df["cpus_energy_mj"].to_numpy(), "bar"))
    fig.series.append(Series("cluster", names, df["shared_energy_mj"].to_numpy(), "bar"))
    return fig


def plot_deadline(run) -> Figure | None:
    """Each deadline task's budget left when throttled (≤ 0: overrun) and when replenished."""
    df = analysis.df_dl_runtime(run)
    if df.empty:
        return None
    fig = Figure("SCHED_DEADLINE budgets", "time (s)", "runtime left (µs)")
    for (comm, event), part in df.groupby(["comm", "event"], sort=True):
        fig.series.append(Series(f"{comm} {event}", part.index.to_numpy(), part["runtime_ns"].to_numpy() / 1e3,
                                 "scatter"))
    return fig


def plots(run) -> list[Figure]:
    """Every plot the run has data for, in the report's order (of a saved summary, which
    keeps no events: its energy)."""
    if run.events is None:
        return [plot_energy(run)]
    figures = [plot_task_signals(run, pid) for pid in busiest(run, 2)]
    figures += [plot_cpus_util(run), plot_frequency(run), plot_frequency_residency(run), plot_idle_residency(run),
                plot_tasks_residency(run), plot_wakeup_latency_cdf(run), plot_slack_histogram(run),
                plot_energy(run), plot_deadline(run)]
    return [f for f in figures if f is not None and any(len(s.x) for s in f.series)]


def to_plotly(fig: Figure):
    """The figure as a plotly Figure."""
    import plotly.graph_objects as go

    out = go.Figure()
    for s, colour in zip(fig.series, _colours(fig)):
        axis = {"yaxis": "y2"} if s.secondary else {}
        if s.kind == "bar":
            out.add_trace(go.Bar(name=s.name, x=s.x, y=s.y, marker_color=colour))
        else:
            mode = "markers" if s.kind == "scatter" else "lines"
            line = {"shape": "hv" if s.kind == "step" else "linear", "dash": "dash" if s.dash else "solid",
                    "color": colour}
            style = {"marker": {"color": colour}} if mode == "markers" else {"line": line}
            out.add_trace(go.Scatter(name=s.name, x=s.x, y=s.y, mode=mode, **style, **axis))
    out.update_layout(title=fig.title, xaxis_title=fig.x_label, yaxis_title=fig.y_label, height=420,
                      barmode="stack" if fig.stacked else "group", margin={"t": 50, "b": 40},
                      legend={"orientation": "v"})
    if fig.y2_label:
        out.update_layout(yaxis2={"title": fig.y2_label, "overlaying": "y", "side": "right", "dtick": 1,
                                  "rangemode": "tozero", "showgrid": False})
    return out


def to_matplotlib(fig: Figure, ax=None):
    """The figure drawn on a matplotlib Axes (a new one by default); returns the Axes."""
    import matplotlib.pyplot as plt

    ax = ax if ax is not None else plt.figure(figsize=(10, 4)).add_subplot()
    ax2 = ax.twinx() if fig.y2_label else None
    bars = [s for s in fig.series if s.kind == "bar"]
    width = 0.8 / (1 if fig.stacked else max(len(bars), 1))
    bottom: dict = {}
    for s, colour in zip(fig.series, _colours(fig)):
        target = ax2 if s.secondary else ax
        style = "--" if s.dash else "-"
        if s.kind == "bar":
            i = bars.index(s)
            pos = np.arange(len(s.x)) + (0 if fig.stacked else (i - (len(bars) - 1) / 2) * width)
            base = bottom.get(tuple(s.x), np.zeros(len(s.x))) if fig.stacked else 0
            target.bar(pos, s.y, width, bottom=base, label=s.name, color=colour)
            if fig.stacked:
                bottom[tuple(s.x)] = base + s.y
            target.set_xticks(np.arange(len(s.x)), s.x, rotation=30, ha="right")
        elif s.kind == "step":
            target.step(s.x, s.y, style, where="post", label=s.name, color=colour)
        elif s.kind == "scatter":
            target.scatter(s.x, s.y, s=4, label=s.name, color="grey" if s.secondary else colour)
        else:
            target.plot(s.x, s.y, style, label=s.name, color=colour)
    ax.set(title=fig.title, xlabel=fig.x_label, ylabel=fig.y_label)
    if ax2 is not None:
        ax2.set_ylabel(fig.y2_label)
    ax.legend(fontsize="small", loc="best")
    return ax
