"""`schedlab compare` and `schedlab.compare(a, b)`: two configurations of one workload side by
side. Each side is a run or several (seeds); every figure is its mean over them, with the
difference b − a, relative to a, and, with several seeds per side, the difference's 95%
confidence interval (Welch's t). Every figure comes from `schedlab.analysis`."""

from __future__ import annotations

import html
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from schedlab import analysis, plots, report
from schedlab._core import InputError
from schedlab.output import write_text

TASK_METRICS = ("run_ns", "utilization", "wait_ns", "wakeups", "latency_p50_ns", "latency_p99_ns",
                "mean_slack_ns", "overruns", "migrations", "preemptions", "dl_misses", "dl_throttled_ns")
CPU_METRICS = ("busy_pct", "energy_mj", "sched_count", "run_delay_ns")
# Each side's label in tables and plots.
LABELS = ("a", "b")


@dataclass
class Comparison:
    """`totals` (one row per run metric), `tasks` (per task and metric), `cpus` (per CPU and
    metric), `clusters` (energy per cluster) and `frequency` (per policy and frequency, % of
    the run): columns `a`, `b`, `diff` (b − a), `rel_pct` (diff / |a|, NaN where a is 0) and,
    with ≥ 2 runs a side, `ci_low` and `ci_high`."""

    a: list
    b: list
    labels: tuple[str, str]
    totals: pd.DataFrame
    tasks: pd.DataFrame
    cpus: pd.DataFrame
    clusters: pd.DataFrame
    frequency: pd.DataFrame

    def to_html(self, title: str | None = None) -> str:
        return comparison_html(self, title)

    def __repr__(self) -> str:
        la, lb = self.labels
        return (f"<Comparison {la!r} ({len(self.a)} run(s)) against {lb!r} ({len(self.b)}): {len(self.totals)} "
                f"totals, {len(self.tasks)} task and {len(self.cpus)} CPU figures>")

    def _repr_html_(self) -> str:
        """Jupyter's view: the totals and the energy per cluster, side by side."""
        return "".join(report.section(heading, report.table_html(df)) for heading, df in
                       (("Totals", self.totals), ("Energy per cluster (mJ)", self.clusters)))

    def explain(self, n: int = 1, progress=None):
        """The first `n` scheduling decisions the two sides take differently, their first runs
        rerun in lock-step (`schedlab.explain.explain`)."""
        from schedlab.explain import explain

        specs = [side[0].spec for side in (self.a, self.b)]
        if any(spec is None for spec in specs):
            raise InputError("explain: it reruns both sides, and a result loaded from its summary has no run "
                             "to rerun: compare results of schedlab.run")
        return explain(*specs, n, labels=self.labels, progress=progress)

    def write(self, path, title: str | None = None) -> None:
        """The comparison report, written whole or not at all."""
        write_text(path, self.to_html(title))


def _series_tasks(run) -> pd.Series:
    df = analysis.df_tasks_summary(run).set_index("comm")[list(TASK_METRICS)]
    return df.stack().rename_axis(["task", "metric"]).astype(float)


def _series_cpus(run) -> pd.Series:
    return analysis.df_cpus_summary(run)[list(CPU_METRICS)].stack().rename_axis(["cpu", "metric"]).astype(float)


def _series_totals(run) -> pd.Series:
    return pd.Series(analysis.run_metrics(run), dtype=float).rename_axis("metric")


def _series_clusters(run) -> pd.Series:
    df = analysis.df_cluster_energy(run).set_index("cluster")
    return df[["cpus_energy_mj", "shared_energy_mj", "energy_mj"]].stack().rename_axis(["cluster", "metric"])


def _series_frequency(run) -> pd.Series:
    df = analysis.df_policy_residency(run)
    return df.set_index(["policy", "frequency_khz"])["time_pct"]


def welch_ci(a: np.ndarray, b: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The confidence interval of mean(b) − mean(a) by Welch's t (unequal variances):
    scipy's `ttest_ind(b, a, equal_var=False).confidence_interval`."""
    from scipy import stats

    diff = b.mean() - a.mean()
    if a.var(ddof=1) + b.var(ddof=1) == 0:
        return diff, diff  # no spread: the interval is the difference itself (scipy gives NaN)
    with warnings.catch_warnings():
        # Runs that nearly agree on a large figure make scipy warn of precision loss in its
        # moments; the interval (about the difference, tiny) is still what it computes.
        warnings.simplefilter("ignore", RuntimeWarning)
        ci = stats.ttest_ind(b, a, equal_var=False).confidence_interval(level)
    return float(ci.low), float(ci.high)


def side_by_side(a: list[pd.Series], b: list[pd.Series]) -> pd.DataFrame:
    """Each side's runs (one Series each, same index) as means, differences and intervals."""
    sa, sb = pd.concat(a, axis=1), pd.concat(b, axis=1)
    keys = sa.index.union(sb.index, sort=False)
    sa, sb = sa.reindex(keys), sb.reindex(keys)
    df = pd.DataFrame({"a": sa.mean(axis=1), "b": sb.mean(axis=1)}, index=keys)
    df["diff"] = df["b"] - df["a"]
    df["rel_pct"] = 100 * df["diff"] / df["a"].abs().where(df["a"] != 0)
    if len(a) > 1 and len(b) > 1:
        ci = [welch_ci(x[~np.isnan(x)], y[~np.isnan(y)]) for x, y in zip(sa.to_numpy(), sb.to_numpy())]
        df["ci_low"], df["ci_high"] = zip(*ci)
    return df


def _runs(side) -> list:
    return list(side) if isinstance(side, (list, tuple)) else [side]


def _same_workload(runs: list) -> None:
    """Refuse results of different workloads (by the digest of their text)."""
    named = [r.workload for r in runs if r.workload is not None]
    if len({w["sha256"] for w in named}) > 1:
        names = sorted({w["name"] for w in named})
        raise InputError(f"cannot compare results of different workloads: {', '.join(names)} "
                         f"(their texts differ)" if len(names) > 1 else
                         f"cannot compare results of different workloads: {names[0]} changed between them")


def compare(a, b, labels: tuple[str, str] = LABELS) -> Comparison:
    """Compare side `a` with side `b`: a RunResult each, or a list of them (seeds)."""
    a, b = _runs(a), _runs(b)
    _same_workload(a + b)

    def table(of):
        return side_by_side([of(r) for r in a], [of(r) for r in b])

    return Comparison(a, b, tuple(labels), table(_series_totals), table(_series_tasks), table(_series_cpus),
                      table(_series_clusters), table(_series_frequency))


def overlay(fa: plots.Figure, fb: plots.Figure, labels: tuple[str, str]) -> plots.Figure:
    """Two runs' versions of a plot in one, each series named after its side."""
    fig = plots.Figure(fa.title, fa.x_label, fa.y_label, y2_label=fa.y2_label, stacked=False)
    for label, f in zip(labels, (fa, fb)):
        for s in f.series:
            fig.series.append(plots.Series(f"{label}: {s.name}", s.x, s.y, s.kind, s.secondary, s.dash, s.group))
    return fig


# The plots a comparison overlays (those whose series two runs share).
OVERLAID = ("plot_frequency", "plot_frequency_residency", "plot_wakeup_latency_cdf", "plot_energy")


def comparison_figures(c: Comparison) -> list[plots.Figure]:
    """The overlaid plots of the first run of each side (both must have kept their events)."""
    ra, rb = c.a[0], c.b[0]
    if ra.events is None or rb.events is None:
        return []
    figures = []
    for name in OVERLAID:
        fa, fb = getattr(plots, name)(ra), getattr(plots, name)(rb)
        if fa is not None and fb is not None:
            figures.append(overlay(fa, fb, c.labels))
    return figures


def comparison_html(c: Comparison, title: str | None = None) -> str:
    la, lb = c.labels
    names = {"a": la, "b": lb, "diff": f"{lb} − {la}", "rel_pct": "rel %"}
    config = pd.DataFrame({la: pd.Series(report.configuration(c.a[0])), lb: pd.Series(report.configuration(c.b[0]))})
    body = report.section("Configurations", report.table_html(config.fillna("")))
    body += f"<p class=\"note\">{len(c.a)} run(s) of {html.escape(la)}, {len(c.b)} of {html.escape(lb)}.</p>"
    for heading, df in (("Totals", c.totals), ("Energy per cluster (mJ)", c.clusters),
                        ("Frequency residency (% of the run)", c.frequency), ("CPUs", c.cpus),
                        ("Tasks", c.tasks)):
        body += report.section(heading, report.table_html(df.rename(columns=names)))
    body += report.section("Plots", report.figures_html(comparison_figures(c)))
    return report.page(title or f"schedlab: {la} against {lb}", body)
