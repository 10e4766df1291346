"""`schedlab reproduce`: the registry of published figures schedlab reproduces.

An experiment names its source (seed file, table or sentence), runs what it needs and
returns one Figure per published number, each with the source's value, schedlab's, the
tolerance and a verdict. Expected values come from the source, never from schedlab.
"""

from dataclasses import dataclass
from typing import Callable


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


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    source: str
    run: Callable[[], list[Figure]]
    footnotes: tuple[str, ...] = ()


REGISTRY: dict[str, Experiment] = {}


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
