"""`schedlab sweep`: a grid of runs on a local process pool or a Dask cluster, one Parquet
row per run (its parameters and `analysis.run_metrics`).

Each point is a `RunSpec` carrying its workload's text, so it runs anywhere, and a content
hash (`point`) of that spec and schedlab's version: a sweep run again skips the points its
output already holds and re-runs those that changed. A point that fails is a row with its
error; the others go on. Rows are in grid order whatever order they finish in, so a sweep's
Parquet file is the same bytes on any executor."""

from __future__ import annotations

import ast
import hashlib
import itertools
import json
import math
import os
import signal
import sys
import time
import tomllib
from dataclasses import asdict, dataclass, replace
from functools import cached_property, partial
from pathlib import Path

import schedlab
from schedlab import _core
from schedlab.run import RunSpec, fair_sets
from schedlab.inputs import read_text
from schedlab.units import parse_duration

# Axes a grid may have, and `set.KEY` for any switch (`schedlab features`).
AXES = ("workload", "platform", "kernel", "governor", "fair", "duration", "feature", "seed")
# Seconds to wait for a Dask scheduler before giving up on it.
DASK_TIMEOUT_S = 10
# Seconds between two saves of the results while points finish.
SAVE_EVERY_S = 1.0
# Points a grid may have: each is a run, and the whole grid is checked before the first.
MAX_POINTS = 100_000


@dataclass(frozen=True)
class Point:
    """One run of a sweep: its axis values, its spec, and its content hash."""

    params: tuple[tuple[str, object], ...]
    spec: RunSpec

    @cached_property
    def key(self) -> str:
        return spec_key(self.spec)


def spec_key(spec: RunSpec) -> str:
    """A run's content hash: its spec (workload text included) and schedlab's version."""
    text = json.dumps({"spec": asdict(spec), "schedlab": schedlab.__version__}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class GridError(schedlab.InputError):
    """A grid file that cannot be read, named with the file and the key at fault."""


def _axis_sets(name: str, value) -> dict:
    """What an axis value changes in a RunSpec's keyword arguments."""
    if name.startswith("set."):
        return {"sets": (f"{name[4:]}={value}",)}
    if name == "seed":
        return {"sets": (f"seed={value}",)}
    if name == "governor":
        return {"governors": (str(value),)}
    if name == "feature":
        return {"features": tuple(value) if isinstance(value, list) else ((str(value),) if value else ())}
    if name == "fair":
        return {"sets": fair_sets(str(value))}
    if name == "duration":
        if not isinstance(value, str):
            raise ValueError(f"{value!r} has no unit: write it as a string, e.g. \"{value}s\" or \"{value}ms\"")
        return {"duration_ns": parse_duration(value)}
    return {name: str(value)}


def _workload(path: str, root: Path, where: str) -> tuple[str, str]:
    """A workload file's text (shipped with the point) and its name for messages."""
    file = (root / path) if not Path(path).is_absolute() else Path(path)
    try:
        return read_text(file, GridError), str(file)
    except GridError as e:
        raise GridError(f"{where}: {e}") from None


def _spec(settings: dict, root: Path, where: str) -> RunSpec:
    """The RunSpec of one combination of base settings and axis values."""
    kwargs = {"sets": (), "features": (), "governors": ()}
    for name, value in settings.items():
        try:
            change = _axis_sets(name, value)
        except ValueError as e:
            raise GridError(f"{where}: {name}: {e}") from None
        for key, v in change.items():
            kwargs[key] = kwargs[key] + v if key in ("sets", "features", "governors") else v
    if "workload" not in kwargs:
        raise GridError(f"{where}: no workload (give base.workload or a workload axis)")
    text, origin = _workload(kwargs.pop("workload"), root, where)
    platform = kwargs.get("platform", "smp:4")
    if platform.endswith(".toml"):
        platform = str(root / platform)
    kwargs["platform"] = platform
    spec = RunSpec.of(text, origin=origin, **{k: v for k, v in kwargs.items() if k in
                                               ("platform", "kernel", "sets", "features", "governors",
                                                "duration_ns")})
    try:
        _core.check_switches(spec.kernel, spec.switches(), list(spec.features))
        _core.domains(spec.platform)
    except schedlab.InputError as e:
        raise GridError(f"{where}: {e}") from None
    # A platform file travels as its text, as the workload does.
    return replace(spec, platform=read_text(platform, GridError)) if platform.endswith(".toml") else spec


def _check_axes(axes: dict, where: str) -> None:
    for name, values in axes.items():
        if name not in AXES and not name.startswith("set."):
            raise GridError(f"{where}: axes.{name}: unknown axis (known: {', '.join(AXES)}, set.KEY)")
        if not isinstance(values, list):
            raise GridError(f"{where}: axes.{name}: expected a list of values, found {type(values).__name__}")
        if not values:
            raise GridError(f"{where}: axes.{name}: empty axis")


def points(base: dict, axes: dict, root: Path = Path("."), where: str = "<grid>", progress=None) -> list[Point]:
    """Every combination of the axes' values over `base` (settings named as the axes),
    in order: the last axis varies fastest. `progress(done, total)` follows the checking of
    each point."""
    _check_axes(axes, where)
    for name in base:
        if name not in AXES and not name.startswith("set."):
            raise GridError(f"{where}: base.{name}: unknown setting (known: {', '.join(AXES)}, set.KEY)")
    names = list(axes)
    total = math.prod(len(axes[n]) for n in names)
    if total > MAX_POINTS:
        sizes = " × ".join(str(len(axes[n])) for n in names)
        raise GridError(f"{where}: {total:,} points ({sizes}): a grid has at most {MAX_POINTS:,}")
    out = []
    for combo in itertools.product(*(axes[n] for n in names)):
        params = tuple(zip(names, combo))
        label = ", ".join(f"{n}={v}" for n, v in params)
        out.append(Point(params, _spec({**base, **dict(params)}, root, f"{where} ({label})")))
        if progress is not None:
            progress(len(out), total)
    return out


def load_grid(path, progress=None) -> list[Point]:
    """The points of a grid file: `[base]` settings and `[axes]` lists (docs/analysis.md);
    `progress(done, total)` follows their checking."""
    path = Path(path)
    text = read_text(path, GridError)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise GridError(f"{path}: {e}") from None
    except RecursionError:
        raise GridError(f"{path}: nested too deep") from None
    unknown = set(data) - {"base", "axes"}
    if unknown:
        raise GridError(f"{path}: unknown table '{sorted(unknown)[0]}' (a grid has [base] and [axes])")
    if not data.get("axes"):
        raise GridError(f"{path}: no [axes]: a grid needs at least one axis")
    return points(data.get("base", {}), data["axes"], path.parent, str(path), progress)


def run_point(spec: RunSpec, artefacts: str | None = None) -> dict:
    """Run one point (in a worker process): its metrics, or the error that stopped it. With
    `artefacts`, its trace.dat and summary go to ARTEFACTS/POINT/."""
    out = None if artefacts is None else Path(artefacts) / spec_key(spec)
    try:
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
        r = spec.run(frames=False, trace=None if out is None else out / "run.dat")
        if out is not None:
            from schedlab.output import write_text

            write_text(out / "summary.json", json.dumps(r.summary(), indent=1, default=int))
    except (schedlab.InputError, OSError) as e:
        return {"status": "error", "error": str(e)}
    from schedlab.analysis import run_metrics

    if r.deadlock:
        return {"status": "error", "error": r.deadlock}
    return {"status": "ok", "error": None, **run_metrics(r)}


def _row(point: Point, result: dict) -> dict:
    return {**{name: _plain(value) for name, value in point.params}, "point": point.key, **result}


def _plain(value):
    """An axis value as one Parquet column takes it."""
    return " ".join(value) if isinstance(value, list) else str(value)


def _frame(rows: list[dict]):
    import pandas as pd

    df = pd.DataFrame(rows)
    # A string column whose missing values are nulls, in Parquet too (not '', nor a column
    # of type null when no point failed).
    df["error"] = df["error"].astype("string")
    return df


def _save(rows_by_key: dict, order: list[Point], out) -> None:
    """The rows found so far, in grid order, written whole or not at all."""
    from schedlab.output import Staged

    rows = [rows_by_key[p.key] for p in order if p.key in rows_by_key]
    if out is None or not rows:
        return
    staged = Staged(out)
    try:
        staged.write(lambda path: _frame(rows).to_parquet(path, index=False))
    finally:
        staged.discard()


def _done(out) -> dict:
    """The rows an earlier sweep wrote to `out`, by point."""
    import pandas as pd

    if out is None or not Path(out).exists():
        return {}
    try:
        df = pd.read_parquet(out)
    except Exception as e:  # pyarrow raises several kinds for a file that is not Parquet
        raise schedlab.InputError(f"{out}: not a sweep's Parquet file ({e})") from None
    if "point" not in df:
        raise schedlab.InputError(f"{out}: not a sweep's Parquet file (no 'point' column)")
    return {row["point"]: row for row in df.to_dict("records")}


def _ignore_sigint() -> None:
    """Workers leave Ctrl-C to the sweep, which stops them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _check_main_guard() -> None:
    """InputError when a script calls a sweep from its top level outside `if __name__ ==
    "__main__":`. Worker processes import the script again (multiprocessing's forkserver and
    spawn do), and an unguarded call would start the sweep again in each of them."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if getattr(getattr(main, "__spec__", None), "name", "").endswith(".__main__"):
        return  # `python -m package`: multiprocessing does not run a package's __main__ again
    frame = sys._getframe()
    while frame is not None and not (frame.f_globals is vars(main) and frame.f_code.co_name == "<module>"):
        frame = frame.f_back
    if path is None or frame is None:
        return  # Jupyter, the REPL, or a call from a function: nothing runs it again
    try:
        tree = ast.parse(Path(path).read_text())
    except (OSError, SyntaxError, ValueError):
        return
    line = frame.f_lineno
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_main_test(node.test) and node.lineno <= line <= node.end_lineno:
            return
    raise schedlab.InputError(
        f"{path}:{line}: the sweep's worker processes import this script again, and would run its "
        "sweep again: call it under `if __name__ == \"__main__\":`")


def _is_main_test(test) -> bool:
    """`__name__ == "__main__"`, either way round."""
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and {ast.dump(test.left), ast.dump(test.comparators[0])} ==
            {ast.dump(ast.Name("__name__", ast.Load())), ast.dump(ast.Constant("__main__"))})


def _local(fn, items: list, jobs: int):
    """(index, fn(item)) as each item is done, on `jobs` processes (1: in this one)."""
    if jobs == 1:
        for i, item in enumerate(items):
            yield i, fn(item)
        return
    _check_main_guard()
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # Workers fork from a server that has schedlab and pandas loaded: none imports them again.
    # Not multiprocessing.Pool: its terminate() can hang for ever when called mid-map
    # (CPython issues 73945, 78178), as a failed bisect run or Ctrl-C calls it.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["schedlab.sweeps", "schedlab.analysis", "schedlab.reproduce"])
    pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=_ignore_sigint)
    try:
        futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
        for future in as_completed(futures):
            yield futures[future], future.result()
    except BaseException:  # a consumer that stops early, a failure, Ctrl-C
        _terminate(pool)
        raise
    pool.shutdown()


def _terminate(pool) -> None:
    """Cancel the items not started and end the workers at once, running items and all:
    Python 3.14's ProcessPoolExecutor.terminate_workers, by hand for 3.11."""
    for process in list((pool._processes or {}).values()):
        process.terminate()
    pool.shutdown(cancel_futures=True)


def connect(address: str, timeout: float = DASK_TIMEOUT_S):
    """A Dask client of the scheduler at `address`, or InputError after `timeout` s."""
    try:
        from distributed import Client
    except ImportError:
        raise schedlab.InputError("--dask needs Dask: pip install 'schedlab[dask]'") from None
    try:
        return Client(address, timeout=timeout)
    except (OSError, TimeoutError) as e:
        raise schedlab.InputError(f"cannot reach the Dask scheduler at {address} within {timeout:g} s ({e})") from None
    except (ValueError, TypeError) as e:
        raise schedlab.InputError(f"--dask {address!r}: not a scheduler address such as tcp://HOST:8786 ({e})") from None


def _dask(fn, items: list, client):
    """(index, fn(item)) as each item is done on the Dask cluster of `client`."""
    from distributed import as_completed

    futures = {client.submit(fn, item, pure=False): i for i, item in enumerate(items)}
    try:
        for future in as_completed(futures):
            yield futures[future], future.result()
    finally:
        client.cancel(list(futures))


def execute(fn, items: list, *, jobs: int = 1, client=None):
    """(index, fn(item)) for every item as it is done: on the Dask cluster of `client` if
    given, else on `jobs` local processes."""
    return _dask(fn, items, client) if client is not None else _local(fn, items, jobs)


def sweep(specs=None, *, base: dict | None = None, grid: dict | None = None, out=None, jobs: int | None = None,
          client=None, progress=None, artefacts=None):
    """Run points (`specs`: Points or RunSpecs, or `base` settings and a `grid` of axes) on
    `jobs` local processes (default: every core) or on the Dask cluster of `client`; save
    the rows to Parquet `out` as they come (skipping points it already holds) and return
    them as a DataFrame. `progress(done, total)` is called as points finish; `artefacts`, a
    directory, receives each point's trace.dat and summary in a directory named by its
    `point`."""
    todo = _points(specs, base, grid)
    keys = {p.key for p in todo}
    rows = {key: row for key, row in _done(out).items() if key in keys}
    pending = [p for p in todo if p.key not in rows]
    report = progress or (lambda done, total: None)
    report(len(todo) - len(pending), len(todo))
    task = run_point if artefacts is None else partial(run_point, artefacts=str(Path(artefacts).resolve()))
    # No more workers than points to run, nor than cores.
    cores = os.cpu_count() or 1
    workers = max(1, min(jobs or cores, cores, len(pending)))
    results = execute(task, [p.spec for p in pending], jobs=workers, client=client)
    saved = time.monotonic()
    try:
        for i, result in results:
            rows[pending[i].key] = _row(pending[i], result)
            report(len(rows), len(todo))
            if time.monotonic() - saved >= SAVE_EVERY_S:
                _save(rows, todo, out)
                saved = time.monotonic()
    finally:
        _save(rows, todo, out)
    return _frame([rows[p.key] for p in todo])


def _points(specs, base, grid) -> list[Point]:
    if specs is None:
        return points(base or {}, grid or {})
    return [s if isinstance(s, Point) else Point(_described(s), s) for s in specs]


def _described(spec: RunSpec) -> tuple[tuple[str, object], ...]:
    """A RunSpec's parameters as a sweep row names them."""
    fields = asdict(replace(spec, workload=spec.origin or spec.workload))
    return tuple((k, " ".join(v) if isinstance(v, tuple) else v) for k, v in fields.items()
                 if k not in ("origin", "json_c"))
