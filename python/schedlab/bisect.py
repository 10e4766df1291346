"""`schedlab bisect`: which of the switches that differ between two configurations move a
metric past a threshold. Side a's run options plus a subset of side b's switch values are
run, and delta debugging (Zeller and Hildebrandt's ddmin) narrows the subset to a 1-minimal
one: it crosses the threshold, and without any one of its changes it does not. Each round's
subsets run at once on the sweep executors (local processes or Dask). Simplified: the
kernel itself is not a change; side a's kernel runs with side b's switch values (on
qemu-tcg:N its per-kernel costs stay a's), and a note says when all of them together do
not give side b's metric."""

import re
from dataclasses import dataclass, field, replace

import numpy as np

from schedlab import _core
from schedlab.analysis import FUNCTIONS
from schedlab.run import RunSpec
from schedlab.sweeps import execute

REDUCTIONS = {"max": np.max, "min": np.min, "sum": np.sum, "mean": np.mean, "median": np.median,
              "count": len}
REDUCTION_NAMES = "max, min, sum, mean, median, count or pNN (a percentile, e.g. p99)"
# A frame's metric: df_NAME or df_NAME(ARG[,ARG]), a column, a reduction.
DF_METRIC = re.compile(r"(df_\w+)(?:\(([^()]*)\))?\.(\w+)\.(\w+)")


@dataclass(frozen=True)
class Change:
    """A switch that differs: its key, its value on each side, and the upstream changes of its
    default between the sides' kernels: (first modelled kernel, value, commit)."""
    key: str
    a: str
    b: str
    upstream: tuple = ()

    def options(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """As run options with b's value: (sets, features); a scheduler feature is NAME/NO_NAME."""
        if self.key.isupper():
            return (), (self.key if self.b == "on" else f"NO_{self.key}",)
        return (f"{self.key}={self.b}",), ()


@dataclass
class Bisection:
    """What bisect found: the metric on each side and with every change, the 1-minimal set of
    changes that crosses the threshold (None: nothing crosses it), and each run beyond side a,
    side b and a with every change: (changes, value)."""
    metric: str
    threshold: float
    a: float
    b: float
    changes: list
    every: float | None = None
    culprits: list | None = None
    runs: list = field(default_factory=list)

    def crosses(self, value: float) -> bool:
        """Whether `value` is past the threshold: on its other side from side a's value."""
        return (value - self.threshold) * (self.a - self.threshold) < 0


def differences(a: RunSpec, b: RunSpec) -> list[Change]:
    """The switches whose values differ between the two sides, in the preset's order (a
    per-policy key one side lacks, `cpufreq.governor.POLICY`, has its every-policy value)."""
    sa = dict(_core.switches(a.kernel, a.switches(), list(a.features)))
    sb = dict(_core.switches(b.kernel, b.switches(), list(b.features)))
    keys = list(sa) + [k for k in sb if k not in sa]
    values = [(k, _value_of(sa, k), _value_of(sb, k)) for k in keys]
    return [Change(k, va, vb, tuple(_core.history(k, a.kernel, b.kernel))) for k, va, vb in values if va != vb]


def _value_of(switches: dict, key: str) -> str:
    """A switch's value, or for a per-policy key not set, its every-policy key's."""
    return switches[key] if key in switches else switches[key.rsplit(".", 1)[0]]


def metric_of_run(result, path: str) -> float:
    """A run's metric: a `df_*` frame's column reduced (`df_latency_wakeup.wakeup_latency.p99`,
    `df_tasks_signal(util).util.mean`), or a summary figure (`metric_of`)."""
    return df_metric(result, path) if path.startswith("df_") else metric_of(result.summary(), path)


def parse_df_metric(path: str) -> tuple[str, list, str, str]:
    """`df_NAME(ARGS).COLUMN.REDUCTION` as (name, args, column, reduction), checked before any
    run: a known frame and reduction. ARGS are comma-separated, a whole number a pid."""
    m = DF_METRIC.fullmatch(path)
    if not m:
        raise _core.InputError(f"--metric {path}: a frame's metric is df_NAME[(ARGS)].COLUMN.REDUCTION, "
                               "e.g. df_latency_wakeup.wakeup_latency.p99")
    name, args, column, how = m.groups()
    if name not in FUNCTIONS:
        raise _core.InputError(f"--metric {path}: no frame {name} (one of {', '.join(FUNCTIONS)})")
    _reduction(how, path)
    args = [int(a) if a.strip().isdigit() else a.strip() for a in args.split(",")] if args else []
    return name, args, column, how


def df_metric(result, path: str) -> float:
    """A frame's metric of a run: the frame `schedlab.analysis` gives, its column (or index
    level) reduced."""
    name, args, column, how = parse_df_metric(path)
    try:
        df = getattr(result, name)(*args).reset_index()
    except TypeError as e:
        raise _core.InputError(f"--metric {path}: {name}{tuple(args)}: {e}") from None
    if column not in df.columns:
        raise _core.InputError(f"--metric {path}: {name} has no column {column} "
                               f"(it has {', '.join(map(str, df.columns))})")
    return _reduce(list(df[column]), how, path)


def _reduction(how: str, path: str):
    """The function `how` names: one of REDUCTIONS, or pNN, numpy's linear percentile (p12_5:
    12.5)."""
    pct = re.fullmatch(r"p(\d+(?:_\d+)?)", how)
    q = float(pct[1].replace("_", ".")) if pct else None
    if q is not None and q <= 100:
        return lambda xs: np.percentile(xs, q)
    if how not in REDUCTIONS:
        raise _core.InputError(f"--metric {path}: no reduction {how} ({REDUCTION_NAMES})")
    return REDUCTIONS[how]


def _reduce(values: list, how: str, path: str) -> float:
    """`values` reduced by `how`."""
    reduce = _reduction(how, path)
    if not values:
        raise _core.InputError(f"--metric {path}: nothing to reduce (no rows)")
    return float(reduce([_number(v, path) for v in values]))


def metric_of(summary: dict, path: str) -> float:
    """The summary's figure at dotted `path`: `energy_mj.total`, or a list's field reduced,
    `tasks.latency_p99_ns.max` (max, min, sum, mean)."""
    node, parts = summary, path.split(".")
    for i, part in enumerate(parts):
        if isinstance(node, list):
            return _reduced(node, parts[i:], path)
        if not isinstance(node, dict) or part not in node:
            raise _core.InputError(f"--metric {path}: the summary has no {'.'.join(parts[:i + 1])}")
        node = node[part]
    if isinstance(node, list):
        raise _core.InputError(f"--metric {path}: a list: name a field and a reduction ({', '.join(REDUCTIONS)})")
    return _number(node, path)


def _reduced(items: list, rest: list, path: str) -> float:
    if len(rest) != 2:
        raise _core.InputError(f"--metric {path}: a list's field and a reduction ({REDUCTION_NAMES}), "
                               "e.g. tasks.latency_p99_ns.max")
    return _reduce([x.get(rest[0]) if isinstance(x, dict) else None for x in items], rest[1], path)


def _number(v, path: str) -> float:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise _core.InputError(f"--metric {path}: not a number")
    return float(v)


def _value(job: tuple) -> tuple[str, object]:
    """One run's metric (in a worker): ("ok", value), or ("error", why)."""
    spec, path = job
    try:
        return "ok", metric_of_run(spec.run(frames=path.startswith("df_")), path)
    except (_core.InputError, OSError) as e:
        return "error", str(e)


def with_changes(a: RunSpec, changes) -> RunSpec:
    """Side a with `changes`' b values on top (after its governors, which `switches()`
    would otherwise put last)."""
    sets, feats = a.switches(), list(a.features)
    for c in changes:
        s, f = c.options()
        sets += s
        feats += f
    return replace(a, sets=tuple(sets), governors=(), features=tuple(feats))


def bisect(a: RunSpec, b: RunSpec, metric: str, threshold: float, *, jobs: int = 1, client=None,
           progress=None) -> Bisection:
    """The 1-minimal set of `b`'s switch values that moves `metric` past `threshold` from `a`."""
    if metric.startswith("df_"):
        parse_df_metric(metric)
    changes = differences(a, b)
    if not changes:
        raise _core.InputError("bisect: the two sides' switches do not differ")
    cache: dict = {}
    values = _run([a, b, with_changes(a, changes)], metric, jobs, client)
    r = Bisection(metric, threshold, values[0], values[1], changes, every=values[2])
    cache[frozenset()] = r.a
    cache[frozenset(changes)] = r.every
    if not r.crosses(r.b) or not r.crosses(r.every):
        return r  # nothing to narrow: reported as found

    def test(sets: list) -> list[bool]:
        todo = [s for s in sets if frozenset(s) not in cache]
        for s, v in zip(todo, _run([with_changes(a, s) for s in todo], metric, jobs, client)):
            cache[frozenset(s)] = v
            r.runs.append((tuple(c.key for c in s), v))
            if progress is not None:
                progress(len(r.runs))
        return [r.crosses(cache[frozenset(s)]) for s in sets]

    r.culprits = _ddmin(changes, test)
    return r


def _ddmin(c: list, test) -> list:
    """Zeller and Hildebrandt's ddmin: a 1-minimal subset of `c` that `test` passes (each
    round's subsets, then their complements, tested together)."""
    n = 2
    while len(c) >= 2:
        size = -(-len(c) // n)
        parts = [c[i:i + size] for i in range(0, len(c), size)]
        passed = test(parts)
        if any(passed):
            c, n = parts[passed.index(True)], 2
            continue
        rests = [[x for x in c if x not in p] for p in parts] if len(parts) > 2 else []
        passed = test(rests)
        if any(passed):
            c, n = rests[passed.index(True)], max(n - 1, 2)
            continue
        if n >= len(c):
            break
        n = min(len(c), 2 * n)
    return c


def _run(specs: list, metric: str, jobs: int, client) -> list[float]:
    """Each spec's metric, in order; a run that fails is the first failure's InputError."""
    out = [None] * len(specs)
    for i, (status, v) in execute(_value, [(s, metric) for s in specs], jobs=jobs, client=client):
        if status != "ok":
            raise _core.InputError(v)
        out[i] = v
    return out
