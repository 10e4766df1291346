"""`schedlab reproduce`: the registry of published figures schedlab reproduces.

An experiment names its source (seed file, table or sentence), declares the runs it needs
(`runs`: name → Job) and judges their results (`judge`), returning one Figure per published
number, each with the source's value, schedlab's, the tolerance and a verdict. Expected
values come from the source, never from schedlab. `reproduce` runs every experiment's runs
together on the sweep executors (local processes or a Dask cluster).
"""

from __future__ import annotations

import html
import re
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Mapping

from schedlab.run import RunResult, RunSpec


@dataclass(frozen=True)
class Figure:
    """One published number against schedlab's. `expected`, when given, is what the kernel's
    arithmetic (closed form) gives where the source is only an estimate; the verdict is then
    schedlab against `expected` and the experiment's footnotes say why the source differs.
    `explained`, when given for a figure outside tolerance, is the cause the experiment
    checked in its own results (not a verdict of its own): it is reported, not failed."""

    label: str
    source: str
    measured: str
    detail: str
    tolerance: str
    ok: bool
    expected: str = ""
    explained: str = ""


# The sources' kernels (2015-2023) balance newly idle CPUs at every chance: NI_RANDOM came
# with 6.18 (in 6.12.y stable since), after the experiments' costs were calibrated without it.
BEFORE_NI_RANDOM = ("NO_NI_RANDOM",)


@dataclass(frozen=True)
class Job:
    """A run an experiment needs, and what its judge reads of it besides the summary: the
    events and signals (`frames`), rt-app's per-loop statistics (`logs`)."""

    spec: RunSpec
    frames: bool = False
    logs: bool = False


def run_job(job: Job) -> RunResult:
    """Run a job (in a worker process): its result, rt-app's statistics read in if asked."""
    if not job.logs:
        return job.spec.run(frames=job.frames)
    from schedlab import analysis

    with tempfile.TemporaryDirectory(prefix="schedlab-reproduce-") as logs:
        result = job.spec.run(frames=job.frames, log_dir=logs)
        result.rtapp_stats = analysis.df_rtapp_stats(result)
        result.log_dir = None
    return result


Results = Mapping[str, RunResult]


def _no_runs() -> dict[str, Job]:
    return {}


@dataclass(frozen=True)
class Experiment:
    """`runs()` names the runs; `judge(results)` turns their results (by name) into
    figures; `plots(results)` draws what the figures come from, for the report."""

    name: str
    title: str
    source: str
    judge: Callable[[Results], list[Figure]]
    runs: Callable[[], dict[str, Job]] = _no_runs
    plots: Callable[[Results], list] = field(default=lambda results: [])
    footnotes: tuple[str, ...] = ()

    def run(self) -> list[Figure]:
        """Run this experiment's runs here, one after another, and judge them."""
        return self.judge({name: run_job(job) for name, job in self.runs().items()})


REGISTRY: dict[str, Experiment] = {}


def within(deviation: float, tol: float, unit: str = "", note: str = "") -> dict:
    """A figure's tolerance, ±`tol` (then `unit` and `note`), and whether `deviation` lies
    within it: the text is derived from the number that judges, stated once."""
    return {"tolerance": f"±{tol:g}{unit}{note}", "ok": abs(deviation) <= tol}


def percent_change(before: float, after: float) -> float:
    """How far `after` is from `before`, in % of `before`."""
    return 100 * (after - before) / before


def register(experiment: Experiment) -> Experiment:
    if experiment.name in REGISTRY:
        raise ValueError(f"experiment '{experiment.name}' registered twice")
    REGISTRY[experiment.name] = experiment
    return experiment


def experiments() -> dict[str, Experiment]:
    """Every registered experiment, by name (importing the modules registers them)."""
    import schedlab.experiments  # noqa: F401

    return REGISTRY


def reproduce(names, *, jobs: int | None = None, client=None, progress=None) -> dict[str, tuple[list[Figure], dict]]:
    """Every run of experiments `names` on the sweep executors (`jobs` local processes,
    default every core, or the Dask cluster of `client`), then each judged: name →
    (figures, results). `progress(done, total)` is called as runs finish."""
    import os

    from schedlab.sweeps import execute

    registry = experiments()
    todo = [(name, run, job) for name in names for run, job in registry[name].runs().items()]
    results: dict[str, dict] = {name: {} for name in names}
    report = progress or (lambda done, total: None)
    report(0, len(todo))
    for done, (i, result) in enumerate(execute(run_job, [job for _, _, job in todo],
                                               jobs=jobs or os.cpu_count() or 1, client=client), 1):
        name, run, _ = todo[i]
        results[name][run] = result
        report(done, len(todo))
    return {name: (registry[name].judge(results[name]), results[name]) for name in names}


_NUMBER = re.compile(r"^[~≈]?\s*(-?\d[\d,]*(?:\.\d+)?)\s*([^\s(]*)")


def _number(text: str) -> tuple[float, str] | None:
    """A figure's leading number and its unit ("81.084 s" → (81.084, "s")), if it has one."""
    m = _NUMBER.match(text)
    return (float(m[1].replace(",", "")), m[2]) if m else None


def figures_plots(title: str, figures: list[Figure]) -> list:
    """The source's and schedlab's values of an experiment's figures, as bars side by side,
    one plot per unit (figures without a number, "not reachable", are left out)."""
    import numpy as np

    from schedlab.plots import Figure as Plot, Series

    by_unit: dict[str, list] = {}
    for f in figures:
        source, measured = _number(f.source), _number(f.measured)
        # A bare source number is in the figure's own unit (seed 000's periods read as ms).
        if source and measured and source[1] in (measured[1], ""):
            by_unit.setdefault(measured[1], []).append((f.label, source[0], measured[0]))
    out = []
    for unit, rows in by_unit.items():
        labels = np.array([label for label, _, _ in rows])
        plot = Plot(f"{title}: the source and schedlab" + (f" ({unit})" if unit else ""), "figure", unit or "value")
        plot.series.append(Series("source", labels, np.array([v for _, v, _ in rows]), "bar"))
        plot.series.append(Series("schedlab", labels, np.array([v for _, _, v in rows]), "bar"))
        out.append(plot)
    return out


def report_html(outcomes: dict[str, tuple[list[Figure], dict]]) -> str:
    """The experiments' figures beside the sources' values, with their plots."""
    import pandas as pd

    from schedlab import report

    registry = experiments()
    body = ""
    script = True  # plotly's script goes with the first plot of the page
    for name, (figures, results) in outcomes.items():
        e = registry[name]
        table = pd.DataFrame([{"figure": f.label, "source": f.source, "kernel": f.expected, "schedlab": f.measured,
                               "detail": f.detail, "tolerance": f.tolerance, "verdict": verdict(f)}
                              for f in figures])
        notes = "".join(f"<p class=\"note\">{html.escape(n)}</p>" for n in e.footnotes)
        plots = figures_plots(e.name, figures) + e.plots(results)
        body += report.section(f"{e.name}: {e.title}", f"<p class=\"note\">Source: {html.escape(e.source)}</p>"
                               + report.table_html(table, index=False) + notes
                               + report.figures_html(plots, with_script=script))
        script = script and not plots
    return report.page("schedlab reproduce: the seeds' figures", body)


def verdict(f: Figure) -> str:
    return "OK" if f.ok else f"OUTSIDE: {f.explained}" if f.explained else "FAIL"
