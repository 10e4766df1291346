"""`schedlab.run`: simulate an rt-app workload on a platform; results as DataFrames.

numpy and pandas are imported only when a DataFrame is built: the CLI prints and writes a
run's summary from plain rows."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING

from schedlab import _core
from schedlab.units import parse_duration, unsigned

if TYPE_CHECKING:
    import pandas as pd

# The core marks a value an event or signal does not carry with the smallest int64.
_NA = -(1 << 63)


def _frame_of(rows: str) -> cached_property:
    """A DataFrame of the rows in attribute `rows`, built (pandas imported) when first read."""

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(getattr(self, rows))

    return cached_property(frame)


@dataclass
class RunResult:
    """A finished run: per-task and per-CPU figures, warnings, and the switches in force.
    `task_rows`, `cpu_rows`, `domain_rows`, `op_rows`, `group_rows` and `policy_rows` are the
    tables as plain rows (dicts); `tasks`, `cpus`, `domains`, `ops`, `groups` and `policies` the
    same as DataFrames."""

    platform: str
    kernel: str
    simulated_ns: int
    nr_events: int
    task_rows: list[dict]
    cpu_rows: list[dict]
    domain_rows: list[dict]
    op_rows: list[dict]
    group_rows: list[dict]
    policy_rows: list[dict]
    energy_mj: float
    cluster_energy_mj: list[float]
    events: pd.DataFrame | None = None
    signals: pd.DataFrame | None = None
    warnings: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    deadlock: str | None = None
    bench_start_ns: int | None = None  # when a benchmark started its tasks (its clock's zero)
    switches: dict[str, str] = field(default_factory=dict)
    trace: Path | None = None
    log_dir: Path | None = None
    start_ns: int = 0
    spec: RunSpec | None = field(default=None, repr=False)
    # The workload's name and digest (RunSpec.identity), also kept in a saved summary.
    workload: dict | None = None
    # rt-app's per-loop statistics, read from the logs before they went away (df_rtapp_stats).
    rtapp_stats: pd.DataFrame | None = None
    # cyclictest's measuring threads' statistics (a `cyclictest` generator's), by thread.
    cyclictest_rows: list[dict] = field(default_factory=list)
    # schbench's reports (a `schbench` generator's), three rows each.
    schbench_rows: list[dict] = field(default_factory=list)

    tasks = _frame_of("task_rows")
    cpus = _frame_of("cpu_rows")
    domains = _frame_of("domain_rows")
    ops = _frame_of("op_rows")
    groups = _frame_of("group_rows")
    policies = _frame_of("policy_rows")

    def __getattr__(self, name: str):
        """`schedlab.analysis`'s functions as methods: `run.df_tasks_signal("util")`."""
        from schedlab import analysis

        if name not in analysis.FUNCTIONS:
            raise AttributeError(f"'RunResult' object has no attribute '{name}'")
        return partial(getattr(analysis, name), self)

    def __dir__(self):
        from schedlab import analysis

        return sorted(set(super().__dir__()) | set(analysis.FUNCTIONS))

    def __repr__(self) -> str:
        return (f"<RunResult {self.platform} kernel {self.kernel}: {self.simulated_ns / 1e9:g} s, "
                f"{len(self.task_rows)} tasks, {self.nr_events} events, {self.energy_mj:.1f} mJ>")

    def _repr_html_(self) -> str:
        """Jupyter's view: the run in one line and its busiest tasks."""
        from schedlab.report import run_card

        return run_card(self)

    def to_lisa(self):
        """The run's trace as a `lisa.trace.Trace` (LISA installed: `pip install
        'schedlab[lisa]'`), with its platform description; the run must have written a
        trace.dat or a text trace."""
        from schedlab import lisa

        if self.trace is None:
            raise ValueError("the run wrote no trace: run it with trace='run.dat'")
        return lisa.trace(self.trace)

    @classmethod
    def load(cls, path) -> "RunResult":
        """A result saved as its summary (`--summary FILE.json`): its tables, without the
        events and signals a run keeps (plots of them need the run itself)."""
        from schedlab.inputs import read_text

        name = str(path)
        text = read_text(path)
        try:
            data = json.loads(text)
            _check_types(data, _SUMMARY_TYPES)
            result = cls(data["platform"], data["kernel"], round(data["simulated_s"] * 1e9), data["events"],
                         data["tasks"], data["cpus"], data["domains"], data["ops"], data["groups"],
                         data["policies"], data["energy_mj"]["total"], data["energy_mj"]["clusters"],
                         warnings=data["warnings"], refusals=data["refusals"], deadlock=data["deadlock"],
                         bench_start_ns=data["bench_start_ns"], switches=data["switches"],
                         workload=data["workload"], cyclictest_rows=data["cyclictest"],
                         schbench_rows=data["schbench"])
        except RecursionError:
            raise _core.InputError(f"{name}: not a schedlab run summary (nested too deep)") from None
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise _core.InputError(f"{name}: not a schedlab run summary ({type(e).__name__}: {e})") from None
        return result

    def summary(self) -> dict:
        """The run summary as plain data (what `--summary FILE.json` writes; docs/outputs.md
        describes every field)."""
        return {
            "workload": self.workload,
            "platform": self.platform,
            "kernel": self.kernel,
            "simulated_s": self.simulated_ns / 1e9,
            "events": self.nr_events,
            "deadlock": self.deadlock,
            "bench_start_ns": self.bench_start_ns,
            "switches": self.switches,
            "tasks": self.task_rows,
            "cpus": self.cpu_rows,
            "domains": self.domain_rows,
            "ops": self.op_rows,
            "groups": self.group_rows,
            "policies": self.policy_rows,
            "cyclictest": self.cyclictest_rows,
            "schbench": self.schbench_rows,
            "energy_mj": {"total": self.energy_mj, "clusters": self.cluster_energy_mj},
            "warnings": self.warnings,
            "refusals": self.refusals,
        }


@dataclass(frozen=True)
class RunSpec:
    """A run, described: what `schedlab.run` simulates, as plain data that pickles, so that
    sweeps can ship runs to other processes. `workload` is a path, or the workload's JSON
    text (a dict given to `RunSpec.of` is kept as its JSON text)."""

    workload: str
    platform: str = "smp:4"
    kernel: str = "6.12"
    sets: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    governors: tuple[str, ...] = ()
    duration_ns: int | None = None
    json_c: bool = False
    origin: str | None = None
    cgroups: tuple[str, ...] = ()
    idle_cgroups: int = 0

    @classmethod
    def of(cls, workload, platform: str = "smp:4", *, kernel: str = "6.12", fair: str | None = None,
           sets=(), features=(), governors=(), duration_ns: int | str | None = None,
           json_c: bool = False, cgroups=(), idle_cgroups: int = 0, origin: str | None = None) -> "RunSpec":
        """A spec from a workload given as a path, a dict or JSON text (named `origin` in
        error messages: `<dict>`, `<string>` by default); the other arguments as `run` takes
        them."""
        sets, features, governors, cgroups = (_strings(name, value) for name, value in (
            ("sets", sets), ("features", features), ("governors", governors), ("cgroups", cgroups)))
        if isinstance(duration_ns, str):
            try:
                duration_ns = parse_duration(duration_ns)
            except ValueError as e:
                raise _core.InputError(f"duration_ns: {e}") from None
        if isinstance(workload, dict):
            workload, origin = json.dumps(workload), origin or "<dict>"
        elif isinstance(workload, str) and workload.lstrip().startswith("{"):
            origin = origin or "<string>"
        sets = sets + fair_sets(fair)
        return cls(str(workload), platform, kernel, sets, features, governors, duration_ns, json_c, origin,
                   cgroups, idle_cgroups)

    def identity(self) -> dict:
        """The workload as a summary names it: its file (or origin) and its text's SHA-256,
        which tells two results of the same workload from two of different ones."""
        text = self.workload.encode() if self.origin is not None else Path(self.workload).read_bytes()
        return {"name": self.origin or self.workload, "sha256": hashlib.sha256(text).hexdigest()}

    def switches(self) -> list[str]:
        """The `--set` values, governors folded in."""
        return list(self.sets) + governor_sets(self.governors)

    def core_args(self) -> tuple:
        """The run's inputs as the core takes them, checked."""
        text = self.origin is not None
        if self.duration_ns is not None:
            unsigned("--duration", self.duration_ns)
        unsigned("--idle-cgroups", self.idle_cgroups)
        return (None if text else Path(self.workload), self.workload if text else None, self.origin or "",
                self.platform, self.kernel, self.switches(), list(self.features), list(self.cgroups),
                self.idle_cgroups, self.duration_ns, self.json_c)

    def run(self, *, trace=None, trace_format: str | None = None, log_dir=None, schedstat=None,
            frames: bool = True, progress=None) -> "RunResult":
        """Simulate; the GIL is released meanwhile. Ctrl-C (or an exception raised by
        `progress(simulated_ns, total_ns)`) stops the run, leaving no partial output."""
        r = _core.run(self.core_args(), None if trace is None else Path(trace), trace_format,
                      None if log_dir is None else Path(log_dir), None if schedstat is None else Path(schedstat),
                      frames, progress or (lambda now, total: None))
        result = _result(r, frames)
        result.trace = None if trace is None else Path(trace)
        result.log_dir = None if log_dir is None else Path(log_dir)
        result.spec = self
        result.workload = self.identity()
        return result


def governor_sets(governors) -> list[str]:
    """`--governor [POLICY=]NAME` values as `--set` values."""
    return [f"cpufreq.governor.{g}" if "=" in g else f"cpufreq.governor={g}" for g in governors]


def fair_sets(fair: str | None) -> tuple[str, ...]:
    """The switch a `fair` choice ("eevdf", "cfs"; None: the kernel's) sets."""
    return (f"fair.policy={fair}",) if fair else ()


def run(workload, platform: str = "smp:4", *, kernel: str = "6.12", fair: str | None = None,
        sets=(), features=(), governors=(), duration_ns: int | str | None = None, trace=None,
        trace_format: str | None = None, log_dir=None, schedstat=None, cgroups=(), idle_cgroups: int = 0,
        json_c: bool = False, frames: bool = True, progress=None) -> RunResult:
    """Run `workload` on `platform`; the arguments are `schedlab run`'s options:

    - workload: an rt-app JSON file's path (str or Path), a dict, or JSON text.
    - platform (str): a built-in name, `smp:N`, `qemu-tcg:N` (the oracle's emulated machine) or a
      .toml file's path.
    - kernel (str): "6.12" or "6.1"; fair (str or None): "eevdf" or "cfs".
    - sets, features, governors, cgroups: each a string or a list of strings (None: none),
      as `--set KEY=VALUE`, `--feature NAME|NO_NAME`, `--governor [POLICY=]NAME` and
      `--cgroup PATH:KEY=VALUE[,KEY=VALUE]` take them; idle_cgroups (int) adds that many
      empty groups.
    - duration_ns: simulated time, an int of ns or a string with its unit ("2s", "500ms");
      None: the workload's own.
    - trace, log_dir, schedstat: paths of outputs (str or Path), or None. `trace` is written
      in `trace_format` (txt, dat, dat6 or perfetto), by default the one its extension names
      (.txt, .dat, .perfetto-trace or .pftrace).
    - json_c (bool): read repeated keys as rt-app's json-c does.
    - frames (bool): the result also has `events` (one row per scheduler event of the text
      trace) and `signals` (one row per sched_pelt_* / sched_util_est_* tracepoint, `path`
      naming a cfs_rq's or a group entity's cgroup).
    - progress: a callable (simulated_ns, total_ns), called every 100 ms of simulated time;
      an exception it raises stops the run."""
    spec = RunSpec.of(workload, platform, kernel=kernel, fair=fair, sets=sets, features=features,
                      governors=governors, duration_ns=duration_ns, json_c=json_c, cgroups=cgroups,
                      idle_cgroups=idle_cgroups)
    return spec.run(trace=trace, trace_format=trace_format, log_dir=log_dir, schedstat=schedstat,
                    frames=frames, progress=progress)


# A run summary's fields and their JSON types (docs/outputs.md).
_NUMBER = (int, float)
_SUMMARY_TYPES = {
    "workload": (dict, type(None)), "platform": str, "kernel": str, "simulated_s": _NUMBER, "events": int,
    "deadlock": (str, type(None)), "bench_start_ns": (int, type(None)), "switches": dict, "tasks": list, "cpus": list, "domains": list, "ops": list,
    "groups": list, "policies": list, "cyclictest": list, "schbench": list, "energy_mj": {"total": _NUMBER, "clusters": list}, "warnings": list,
    "refusals": list,
}


# A summary table's fields that are not numbers; every other field of its rows is one.
_ROW_FIELDS = {
    "tasks": {"comm": str, "policy": str}, "cpus": {"freq_residency": dict}, "domains": {"domain": str, "span": list},
    "ops": {"op": str}, "groups": {"path": str},
    "policies": {"policy": str, "governor": str, "cpus": list, "residency": dict},
    "cyclictest": {"hist": list, "outliers": list},
    "schbench": {"last": bool, "stat": str, "values": list, "counts": list},
}


def _check_types(data, types: dict, where: str = "") -> None:
    """TypeError naming the first field of `data` that is missing or of the wrong type."""
    if not isinstance(data, dict):
        raise TypeError(f"{where or 'the summary'} is {type(data).__name__}, not an object")
    for key, kind in types.items():
        if key not in data:
            raise KeyError(f"{where}{key}")
        if isinstance(kind, dict):
            _check_types(data[key], kind, f"{where}{key}.")
        elif isinstance(data[key], bool) or not isinstance(data[key], kind):
            raise TypeError(f"{where}{key} is {type(data[key]).__name__}")
    for table, fields in ({} if where else _ROW_FIELDS).items():
        for i, row in enumerate(data[table]):
            if not isinstance(row, dict):
                raise TypeError(f"{table}[{i}] is {type(row).__name__}, not an object")
            for key, value in row.items():
                kind = fields.get(key, _NUMBER + (bool,))
                if not isinstance(value, kind) or (kind == dict and not all(
                        isinstance(v, _NUMBER) for v in value.values())):
                    raise TypeError(f"{table}[{i}].{key} is {value!r}")


def _strings(name: str, value) -> tuple[str, ...]:
    """An argument that takes strings: None, one string, or any iterable of strings."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    try:
        values = tuple(value)
    except TypeError:
        raise _core.InputError(f"{name}: {value!r} is not a string or a list of strings") from None
    for v in values:
        if not isinstance(v, str):
            raise _core.InputError(f"{name}: {v!r} is not a string")
    return values


def _rows(cols: dict) -> list[dict]:
    """Columns (name → list) as rows (name → value), in the columns' order."""
    return [dict(zip(cols, row)) for row in zip(*cols.values())]


def _result(r: dict, frames: bool) -> RunResult:
    span = max(r["simulated_ns"], 1)
    tasks = _rows(r["tasks"])
    for t in tasks:
        t["utilization"] = t["run_ns"] / span
    cpus = _rows(r["cpus"])
    for c in cpus:
        residency = c.pop("freq_residency")
        c["busy_pct"] = 100.0 * c["busy_ns"] / span
        c["freq_residency"] = {str(khz): ns for khz, ns in residency}
    policies = [{"policy": p["policy"], "governor": p["governor"], "cpus": p["cpus"],
                 "transitions": p["transitions"],
                 "residency": {str(khz): ns for khz, ns in p["residency"]}}
                for p in _rows(r["policies"])]
    comms = {0: "<idle>", 1: "rt-app", **{t["pid"]: t["comm"] for t in tasks}}
    events = _events(r["events"], comms) if frames else None
    signals = _signals(r["signals"], comms) if frames else None
    return RunResult(r["platform"], r["kernel"], r["simulated_ns"], r["nr_events"], tasks, cpus,
                     _rows(r["domains"]), _rows(r["ops"]), _rows(r["groups"]), policies, r["energy_mj"], list(r["cluster_energy_mj"]), events, signals,
                     r["warnings"], r["refusals"], r["deadlock"], r["bench_start_ns"], dict(r["switches"]),
                     start_ns=r["start_ns"], cyclictest_rows=_rows(r["cyclictest"]),
                     schbench_rows=_rows(r["schbench"]))


def _nullable(values):
    import pandas as pd

    return pd.arrays.IntegerArray(values, values == _NA)


def _frame(cols: dict, code: str, comms: dict, nullable: tuple[str, ...]) -> pd.DataFrame:
    """Columns from the core: `time` in seconds (the trace's clock) as index, codes as
    categories, NA where a row does not carry a value."""
    import pandas as pd

    df = pd.DataFrame({
        "ts": cols["ts"],
        code: pd.Categorical.from_codes(cols[code], categories=cols["names"]),
        "cpu": cols["cpu"],
    })
    for name in nullable:
        df[name] = _nullable(cols[name])
    df["comm"] = df["pid"].map(comms).astype(object)
    df.index = pd.Index(cols["ts"] / 1e9, name="time")
    return df


def _events(cols: dict, comms: dict) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    df = _frame(cols, "event", comms, ("pid", "other_pid", "target_cpu", "value"))
    # prev_state letters as a categorical: code −1 (NA) where the byte is 0.
    letters = ["R", "S", "X"]
    lut = np.full(256, -1, dtype=np.int8)
    lut[[ord(c) for c in letters]] = range(len(letters))
    df["prev_state"] = pd.Categorical.from_codes(lut[cols["prev_state"]], categories=letters)
    # A waking's or wakeup_new's placement rule travels in `value`: its own column here.
    placed = df["event"].isin(["sched_waking", "sched_wakeup_new"]).to_numpy()
    codes = np.where(placed, np.asarray(cols["value"], dtype=np.int64), -1)
    df["placement"] = pd.Categorical.from_codes(codes, categories=cols["placements"])
    df.loc[placed, "value"] = pd.NA
    text = np.full(len(df), None, dtype=object)
    for row, marker in cols["markers"]:
        text[row] = marker
    df["text"] = text
    return df


def _signals(cols: dict, comms: dict) -> pd.DataFrame:
    import numpy as np

    df = _frame(cols, "signal", comms, ("pid", "load", "runnable", "util", "enqueued", "ewma",
                                        "update_time"))
    # The cgroup path of a cfs_rq or group entity; "(null)" for a task, as LISA reads it.
    codes = np.asarray(cols["path"], dtype=np.int64)
    paths = np.array(list(cols["paths"]) + ["(null)"], dtype=object)
    df["path"] = paths[np.where(codes == _NA, len(paths) - 1, codes)]
    return df
