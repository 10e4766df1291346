"""`schedlab report`: one self-contained HTML file of a run (its configuration, summary
tables and every plot of `schedlab.plots`), readable offline: plotly's script is inlined
once. Every number comes from `schedlab.analysis`."""

from __future__ import annotations

import html
import pandas as pd

from schedlab import analysis, plots
from schedlab.output import write_text

STYLE = """body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}td,th{padding:2px 8px;border-bottom:1px solid #eee;
text-align:right}th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
.note{color:#666;font-size:.85em}.warn{color:#a50}"""


def configuration(run) -> dict[str, str]:
    """What was run: workload, platform, kernel, duration and the switches set."""
    spec = run.spec
    workload = "" if spec is None else (spec.origin or spec.workload)
    rows = {"workload": workload, "platform": run.platform, "kernel": run.kernel,
            "simulated": f"{run.simulated_ns / 1e9:g} s", "events": f"{run.nr_events}",
            "energy": f"{run.energy_mj:.1f} mJ"}
    if spec is not None:
        for key in ("sets", "features", "cgroups"):
            if getattr(spec, key):
                rows[key] = ", ".join(getattr(spec, key))
    # The governors the run's policies ran, however they were chosen (--governor, --set).
    governors = {p["policy"]: p["governor"] for p in run.policy_rows}
    if governors:
        same = len(set(governors.values())) == 1
        rows["governors"] = (next(iter(governors.values())) if same else
                             ", ".join(f"{policy}: {g}" for policy, g in governors.items()))
    return rows


def tasks_table(run, count: int = 30) -> pd.DataFrame:
    """The busiest tasks' figures, as the report and the notebook view show them."""
    df = analysis.df_tasks_summary(run).sort_values("run_ns", ascending=False, kind="stable").head(count)
    return pd.DataFrame({
        "task": df["comm"], "policy": df["policy"], "run ms": df["run_ns"] / 1e6, "wait ms": df["wait_ns"] / 1e6,
        "wakeups": df["wakeups"], "lat p50 µs": df["latency_p50_ns"] / 1e3, "lat p99 µs": df["latency_p99_ns"] / 1e3,
        "migrations": df["migrations"], "preemptions": df["preemptions"], "overruns": df["overruns"],
        "mean slack µs": df["mean_slack_ns"] / 1e3, "dl misses": df["dl_misses"]}, index=df.index)


def cpus_table(run) -> pd.DataFrame:
    df = analysis.df_cpus_summary(run)
    return pd.DataFrame({"capacity": df["capacity"], "cluster": df["cluster"], "busy %": df["busy_pct"],
                         "energy mJ": df["energy_mj"], "switches": df["sched_count"],
                         "wait ms": df["run_delay_ns"] / 1e6}, index=df.index)


def table_html(df: pd.DataFrame, index: bool = True) -> str:
    return df.to_html(index=index, float_format=lambda v: f"{v:,.1f}", border=0, escape=True)


def run_card(run) -> str:
    """A run in a few lines of HTML: its configuration and busiest tasks (Jupyter's view)."""
    config = " · ".join(f"<b>{k}</b> {html.escape(v)}" for k, v in configuration(run).items())
    return f"<div><p>{config}</p>{table_html(tasks_table(run, 8))}</div>"


def figures_html(figures, with_script: bool = True) -> str:
    """Plotly divs; the first carries plotly's script (unless the page has it already)."""
    parts = []
    for i, fig in enumerate(figures):
        parts.append(plots.to_plotly(fig).to_html(full_html=False, include_plotlyjs=with_script and i == 0,
                                                  config={"displaylogo": False}))
    return "\n".join(parts)


def page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n")


def section(title: str, content: str) -> str:
    return f"<h2>{html.escape(title)}</h2>\n{content}\n"


def report_html(run, title: str | None = None) -> str:
    """The run's report as one HTML document."""
    config = pd.DataFrame({"": list(configuration(run).values())}, index=list(configuration(run)))
    body = section("Configuration", table_html(config))
    if run.warnings or run.refusals:
        notes = [f"warning: {w}" for w in run.warnings] + [f"refused: {w}" for w in run.refusals]
        body += "".join(f"<p class=\"warn\">{html.escape(n)}</p>" for n in notes)
    body += section("Tasks (busiest first)", table_html(tasks_table(run)))
    body += section("CPUs", table_html(cpus_table(run)))
    residency = analysis.df_policy_residency(run) if run.events is None else analysis.df_frequency_residency(run)
    body += section("Frequency residency", table_html(residency, index=False))
    body += section("Energy", table_html(analysis.df_cluster_energy(run), index=False))
    body += section("Plots", figures_html(plots.plots(run)))
    return page(title or f"schedlab: {configuration(run)['workload']} on {run.platform}", body)


def write_report(run, path, title: str | None = None) -> None:
    """Write the run's report to `path` (whole or not at all)."""
    write_text(path, report_html(run, title))
