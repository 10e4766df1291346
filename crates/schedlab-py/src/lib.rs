//! schedlab._core: the Rust core seen from Python. Thin: it converts arguments and
//! results, and turns schedlab::InputError into schedlab.InputError.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use schedlab::columns::Column;
use schedlab::kernel::Kernel;
use schedlab::run::explain::Shown;
use schedlab::run::{
    CpuSummary, CyclicSummary, DomainSummary, GroupSummary, OpSummary, PolicySummary,
    SchbenchSummary, TaskSummary,
};
use schedlab::run::{RunError, RunSpec, WorkloadSource};
use schedlab::sched::class::Placement;
use schedlab::sched::clock_pelt::{CpuScale, Invariance};
use schedlab::sched::features::{Features, SCHED_FEATS, SWITCHES};
use schedlab::sched::pelt::SchedAvg;
use schedlab::sched::topology::Span;
use schedlab::solo::periodic::Periodic;
use schedlab::solo::ramp::Ramp;
use schedlab::solo::replay::{replay_csv, Replay, Row};
use schedlab::solo::SoloConfig;
use schedlab::trace::{EventColumns, SignalColumns, TraceFormat, EVENT_NAMES, SIGNAL_NAMES};
use schedlab::workload::Dialect;

create_exception!(
    _core,
    InputError,
    PyValueError,
    "Input that schedlab refuses."
);

/// schedlab.InputError from the core's, a run option named as the CLI spells it (the
/// Python keywords' own checks do so too).
fn input_error(e: schedlab::InputError) -> PyErr {
    let at = e.location_as(|key| format!("--{}", key.replace('_', "-")));
    InputError::new_err(format!("{at}: {}", e.message))
}

fn solo_config(
    invariance: &str,
    cpu: u64,
    freq: u64,
    kernel: &str,
    weight: u64,
) -> PyResult<SoloConfig> {
    let invariance = Invariance::from_name(invariance).ok_or_else(|| {
        InputError::new_err(format!(
            "--invariance: unknown scheme '{invariance}' (clock_pelt or legacy)"
        ))
    })?;
    let preset = Features::preset(kernel_of(kernel)?);
    Ok(SoloConfig {
        invariance,
        scale: CpuScale { cpu, freq },
        util_est: preset.util_est,
        util_est_sample: preset.util_est_sample,
        weight,
    })
}

/// Replay CSV bytes; returns the output CSV bytes.
#[pyfunction]
fn pelt_replay_csv<'py>(
    py: Python<'py>,
    data: &[u8],
    weight: u64,
) -> PyResult<Bound<'py, PyBytes>> {
    let out = py
        .detach(|| replay_csv(data, weight))
        .map_err(input_error)?;
    Ok(PyBytes::new(py, &out))
}

/// Replay arrays of updates (flags already checked by the caller); returns a dict of
/// output columns.
#[pyfunction]
fn pelt_replay<'py>(
    py: Python<'py>,
    now_ns: PyReadonlyArray1<'py, u64>,
    load: PyReadonlyArray1<'py, bool>,
    runnable: PyReadonlyArray1<'py, bool>,
    running: PyReadonlyArray1<'py, bool>,
    weight: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let (now, flags) = (
        now_ns.as_slice()?,
        [load.as_slice()?, runnable.as_slice()?, running.as_slice()?],
    );
    let mut replay = Replay::new(weight).map_err(input_error)?;
    let mut cols: [Vec<u64>; 7] = Default::default();
    for (i, &t) in now.iter().enumerate() {
        let row = Row {
            now: t,
            load: flags[0][i],
            runnable: flags[1][i],
            running: flags[2][i],
        };
        let avg = replay.step(row).map_err(|e| {
            InputError::new_err(format!("row {i}, column {}: {}", e.column, e.message))
        })?;
        let values = avg.signals();
        for (col, v) in cols.iter_mut().zip(values) {
            col.push(v);
        }
    }
    let out = PyDict::new(py);
    for (name, col) in SchedAvg::SIGNAL_NAMES.into_iter().zip(cols) {
        out.set_item(name, col.into_pyarray(py))?;
    }
    Ok(out)
}

/// A periodic task's signals; returns (columns, summary).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn pelt_periodic<'py>(
    py: Python<'py>,
    run_ns: u64,
    period_ns: u64,
    duration_ns: u64,
    tick_ns: u64,
    capacity: u64,
    freq_scale: u64,
    invariance: &str,
    kernel: &str,
    weight: u64,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let config = solo_config(invariance, capacity, freq_scale, kernel, weight)?;
    let scenario = Periodic {
        config,
        run: run_ns,
        period: period_ns,
        duration: duration_ns,
        tick: tick_ns,
    };
    let result = scenario.simulate().map_err(input_error)?;
    let s = &result.samples;
    let col = |f: fn(&schedlab::solo::Sample) -> u64| {
        s.iter().map(f).collect::<Vec<u64>>().into_pyarray(py)
    };
    let col_k = |k: usize| {
        s.iter()
            .map(|x| x.avg.signals()[k])
            .collect::<Vec<u64>>()
            .into_pyarray(py)
    };
    let columns = PyDict::new(py);
    columns.set_item("now_ns", col(|x| x.now))?;
    columns.set_item(
        "event",
        s.iter().map(|x| x.event.name()).collect::<Vec<_>>(),
    )?;
    columns.set_item("pelt_now_ns", col(|x| x.pelt_now))?;
    for (k, name) in SchedAvg::SIGNAL_NAMES.into_iter().enumerate() {
        columns.set_item(name, col_k(k))?;
    }
    columns.set_item("util_est", col(|x| x.util_est as u64))?;
    let summary = PyDict::new(py);
    summary.set_item("run_wall_ns", result.run_wall)?;
    summary.set_item("settled_min", result.settled.min)?;
    summary.set_item("settled_max", result.settled.max)?;
    summary.set_item("closed_form_min", result.closed_form.min)?;
    summary.set_item("closed_form_max", result.closed_form.max)?;
    Ok((columns, summary))
}

/// Time to reach each util_avg target: a list of (target, ns or None).
#[pyfunction]
fn pelt_ramp(
    targets: Vec<u64>,
    step_ns: u64,
    capacity: u64,
    freq_scale: u64,
    invariance: &str,
) -> PyResult<Vec<(u64, Option<u64>)>> {
    let config = solo_config(invariance, capacity, freq_scale, "6.12", 1024)?;
    let crossings = Ramp {
        config,
        targets,
        step: step_ns,
    }
    .simulate()
    .map_err(input_error)?;
    Ok(crossings
        .into_iter()
        .map(|c| (c.target, c.reached_at))
        .collect())
}

/// A Kernel from its name, or schedlab.InputError.
fn kernel_of(name: &str) -> PyResult<Kernel> {
    Kernel::from_name(name).ok_or_else(|| {
        InputError::new_err(format!(
            "--kernel: unknown kernel '{name}' (known: {})",
            Kernel::names()
        ))
    })
}

fn trace_format_of(name: &str) -> PyResult<TraceFormat> {
    TraceFormat::from_name(name).ok_or_else(|| {
        InputError::new_err(format!(
            "--trace-format: unknown format '{name}' ({})",
            TraceFormat::NAMES.join(", ")
        ))
    })
}

/// A run's inputs as `RunSpec.core_args()` gives them: the workload's path or JSON text
/// (named `origin` in messages), platform, kernel, switches, features, cgroups, idle
/// cgroups, duration and dialect.
#[derive(FromPyObject)]
struct SpecArgs(
    Option<PathBuf>,
    Option<String>,
    String,
    String,
    String,
    Vec<String>,
    Vec<String>,
    Vec<String>,
    u64,
    Option<u64>,
    bool,
);

impl SpecArgs {
    /// The run it asks for, untraced.
    fn spec(self) -> PyResult<RunSpec> {
        let SpecArgs(
            path,
            text,
            origin,
            platform,
            kernel,
            sets,
            features,
            cgroups,
            idle,
            duration,
            json_c,
        ) = self;
        let workload = match (path, text) {
            (Some(p), None) => WorkloadSource::File(p),
            (None, Some(text)) => WorkloadSource::Text { text, origin },
            _ => return Err(PyValueError::new_err("give a workload's path or its text")),
        };
        Ok(RunSpec {
            kernel: kernel_of(&kernel)?,
            sets,
            features,
            cgroups,
            idle_cgroups: idle,
            duration,
            dialect: if json_c {
                Dialect::JsonC
            } else {
                Dialect::Workgen
            },
            ..RunSpec::new(workload, &platform)
        })
    }
}

/// `progress(simulated_ns, total_ns or None)` as the core calls it: false once it raised
/// (or a Ctrl-C is pending), the exception kept in `raised`.
fn progress_of<'a>(
    progress: &'a Py<PyAny>,
    raised: &'a mut Option<PyErr>,
) -> impl FnMut(u64, Option<u64>) -> bool + 'a {
    move |now, total| {
        Python::attach(|py| {
            let r = progress
                .call1(py, (now, total))
                .and_then(|_| py.check_signals());
            r.map_err(|e| *raised = Some(e)).is_ok()
        })
    }
}

/// The core's run error as Python's: an interrupted run raises what stopped it.
fn run_error(e: RunError, raised: Option<PyErr>) -> PyErr {
    match e {
        RunError::Input(e) => input_error(e),
        RunError::Io(m) => pyo3::exceptions::PyOSError::new_err(m),
        RunError::Interrupted => {
            raised.unwrap_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err(()))
        }
    }
}

/// Run a workload (`args`: `SpecArgs`) with the GIL released; `progress(simulated_ns,
/// total_ns or None)` is called as it goes, and an exception it raises (or a pending Ctrl-C)
/// stops the run and is raised again here.
#[pyfunction]
#[pyo3(signature = (args, trace, trace_format, log_dir, schedstat, frames, progress))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    args: SpecArgs,
    trace: Option<std::path::PathBuf>,
    trace_format: Option<&str>,
    log_dir: Option<std::path::PathBuf>,
    schedstat: Option<std::path::PathBuf>,
    frames: bool,
    progress: Py<PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let spec = RunSpec {
        trace,
        trace_format: trace_format.map(trace_format_of).transpose()?,
        log_dir,
        schedstat,
        frames,
        ..args.spec()?
    };
    let mut raised: Option<PyErr> = None;
    let r = py
        .detach(|| schedlab::run::run(&spec, progress_of(&progress, &mut raised)))
        .map_err(|e| run_error(e, raised))?;
    let d = PyDict::new(py);
    d.set_item("platform", r.platform)?;
    d.set_item("kernel", r.kernel)?;
    d.set_item("simulated_ns", r.simulated_ns)?;
    d.set_item("start_ns", schedlab::sim::SIM_START)?;
    d.set_item("nr_events", r.events)?;
    d.set_item("warnings", r.warnings)?;
    d.set_item("refusals", r.refusals)?;
    d.set_item("deadlock", r.deadlock)?;
    d.set_item("bench_start_ns", r.bench_start_ns)?;
    d.set_item("switches", r.switches)?;
    d.set_item("tasks", lists(py, TaskSummary::columns(&r.tasks))?)?;
    d.set_item("cpus", lists(py, CpuSummary::columns(&r.cpus))?)?;
    d.set_item("domains", lists(py, DomainSummary::columns(&r.domains))?)?;
    d.set_item("ops", lists(py, OpSummary::columns(&r.ops))?)?;
    d.set_item("groups", lists(py, GroupSummary::columns(&r.groups))?)?;
    d.set_item("policies", lists(py, PolicySummary::columns(&r.policies))?)?;
    d.set_item(
        "cyclictest",
        lists(py, CyclicSummary::columns(&r.cyclictest))?,
    )?;
    d.set_item(
        "schbench",
        lists(py, SchbenchSummary::columns(&r.schbench))?,
    )?;
    d.set_item("cluster_energy_mj", r.cluster_energy_mj)?;
    d.set_item("energy_mj", r.energy_mj)?;
    if let Some(f) = r.frames {
        d.set_item("events", events_dict(py, f.events)?)?;
        d.set_item("signals", signals_dict(py, f.signals, f.paths)?)?;
    }
    Ok(d)
}

/// A summary's columns in a new dict, in their order, numbers as lists: the CLI prints and
/// writes them without importing numpy (pandas builds its frames from them on demand).
fn lists<'py>(py: Python<'py>, cols: Vec<(&'static str, Column)>) -> PyResult<Bound<'py, PyDict>> {
    dict(py, cols, false)
}

/// Event or signal columns in a new dict, in their order, numbers as numpy arrays.
fn columns<'py>(
    py: Python<'py>,
    cols: Vec<(&'static str, Column)>,
) -> PyResult<Bound<'py, PyDict>> {
    dict(py, cols, true)
}

/// One list per row, a span's list made once and shared by its rows (a machine of 4,096
/// CPUs has 4,096 rows of the same 4,096 CPUs per level).
fn cpu_lists<'py>(py: Python<'py>, spans: &[Span]) -> PyResult<Bound<'py, PyList>> {
    let mut made: HashMap<*const usize, Bound<'py, PyList>> = HashMap::new();
    let rows = spans.iter().map(|s| match made.get(&s.as_ptr()) {
        Some(l) => Ok(l.clone()),
        None => {
            let l = PyList::new(py, s.iter())?;
            made.insert(s.as_ptr(), l.clone());
            Ok(l)
        }
    });
    PyList::new(py, rows.collect::<PyResult<Vec<_>>>()?)
}

fn dict<'py>(
    py: Python<'py>,
    cols: Vec<(&'static str, Column)>,
    arrays: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in cols {
        match col {
            Column::U8(v) => d.set_item(name, numbers(py, v, arrays)?),
            Column::U32(v) => d.set_item(name, numbers(py, v, arrays)?),
            Column::U64(v) => d.set_item(name, numbers(py, v, arrays)?),
            Column::Usize(v) => d.set_item(name, numbers(py, v, arrays)?),
            Column::I64(v) => d.set_item(name, numbers(py, v, arrays)?),
            Column::F64(v) => d.set_item(name, numbers(py, v, arrays)?),
            Column::Bool(v) => d.set_item(name, numbers(py, v, arrays)?),
            Column::Str(v) => d.set_item(name, v),
            Column::Cpus(v) => d.set_item(name, cpu_lists(py, &v)?),
            Column::Residency(v) => d.set_item(name, v),
            Column::Texts(v) => d.set_item(name, v),
            Column::Counts(v) => d.set_item(name, v),
        }?;
    }
    Ok(d)
}

/// A numeric column as a numpy array, or as a list of Python numbers (u8 too, not bytes).
fn numbers<'py, T>(py: Python<'py>, v: Vec<T>, arrays: bool) -> PyResult<Bound<'py, PyAny>>
where
    T: numpy::Element + IntoPyObject<'py>,
{
    if arrays {
        Ok(v.into_pyarray(py).into_any())
    } else {
        Ok(pyo3::types::PyList::new(py, v)?.into_any())
    }
}

/// `schedlab compare --explain`: runs `a` and `b` (`SpecArgs`) in lock-step to their
/// first `n` differing decisions, with the GIL released.
#[pyfunction]
fn explain<'py>(
    py: Python<'py>,
    a: SpecArgs,
    b: SpecArgs,
    n: usize,
    progress: Py<PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let (a, b) = (a.spec()?, b.spec()?);
    let mut raised: Option<PyErr> = None;
    let found = py
        .detach(|| schedlab::run::explain::explain(&a, &b, n, progress_of(&progress, &mut raised)))
        .map_err(|e| run_error(e, raised))?;
    let d = PyDict::new(py);
    d.set_item("compared", found.compared)?;
    d.set_item("simulated_ns", found.simulated.to_vec())?;
    let shown = |v: &[Shown]| -> PyResult<Vec<Bound<'py, PyDict>>> {
        v.iter().map(|s| shown_dict(py, s)).collect()
    };
    let mut divs = Vec::new();
    for div in &found.divergences {
        let x = PyDict::new(py);
        x.set_item("ordinal", div.ordinal)?;
        let sides: PyResult<Vec<_>> = div
            .sides
            .iter()
            .map(|s| s.as_ref().map(|s| shown_dict(py, s)).transpose())
            .collect();
        x.set_item("sides", sides?)?;
        x.set_item("before", [shown(&div.before[0])?, shown(&div.before[1])?])?;
        x.set_item("after", [shown(&div.after[0])?, shown(&div.after[1])?])?;
        divs.push(x);
    }
    d.set_item("divergences", divs)?;
    Ok(d)
}

/// One decision as a dict: `at_ns` (from the run's start), `kind`, `cpu`, `task`,
/// `outcome`, `how` and `why` (func, about, [(name, value)]).
fn shown_dict<'py>(py: Python<'py>, s: &Shown) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let dec = &s.decision;
    d.set_item("at_ns", dec.at - schedlab::sim::SIM_START)?;
    d.set_item("kind", dec.kind.name())?;
    d.set_item("cpu", dec.cpu)?;
    d.set_item("task", &s.task)?;
    d.set_item("outcome", &s.outcome)?;
    d.set_item("how", dec.how)?;
    let why: Vec<_> = (s.why.iter())
        .map(|(func, about, values)| (*func, about, values.to_vec()))
        .collect();
    d.set_item("why", why)?;
    Ok(d)
}

/// The events columns, plus the code names.
fn events_dict(py: Python<'_>, e: EventColumns) -> PyResult<Bound<'_, PyDict>> {
    let d = columns(py, e.into_columns())?;
    d.set_item("names", EVENT_NAMES.to_vec())?;
    d.set_item("placements", Placement::NAMES.to_vec())?;
    Ok(d)
}

/// The signals columns, plus the code names.
fn signals_dict(
    py: Python<'_>,
    s: SignalColumns,
    paths: Vec<String>,
) -> PyResult<Bound<'_, PyDict>> {
    let d = columns(py, s.into_columns())?;
    d.set_item("names", SIGNAL_NAMES.to_vec())?;
    d.set_item("paths", paths)?;
    Ok(d)
}

/// `schedlab check`: parse and describe a workload; returns (description, warnings).
#[pyfunction]
fn check(workload: std::path::PathBuf, json_c: bool) -> PyResult<(String, Vec<String>)> {
    let dialect = if json_c {
        Dialect::JsonC
    } else {
        Dialect::Workgen
    };
    let wl = schedlab::workload::load(&workload, dialect).map_err(input_error)?;
    Ok((schedlab::run::describe(&wl), wl.warnings))
}

/// `schedlab replay`: a trace (trace.dat, Perfetto or text) rebuilt on `platform` (None:
/// the trace's CPU count) for runs of `kernel` (None: the trace's) with switches `sets`
/// (what such a run adds to the trace's times is taken off), with the side file `attrs`'s
/// task keys (None: none): a dict of its rt-app JSON, notes, the platform, the
/// kernel, the kernel's release, the trace's length, each thread's observed figures (task
/// name, pid, run ns, wakeups, latency p50 and p99 ns, migrations, wakeups run on the
/// previous CPU), each CPU's busy ns and
/// its time at each frequency ((kHz, ns) pairs; none without `cpu_frequency`).
#[pyfunction]
#[pyo3(signature = (trace, platform=None, kernel=None, sets=vec![], attrs=None))]
fn replay<'py>(
    py: Python<'py>,
    trace: std::path::PathBuf,
    platform: Option<String>,
    kernel: Option<String>,
    sets: Vec<String>,
    attrs: Option<std::path::PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let cond = schedlab::workload::replay::Conditions {
        platform: platform.as_deref(),
        kernel: kernel.as_deref().map(kernel_of).transpose()?,
        sets: &sets,
        attrs: attrs.as_deref(),
    };
    let r = py
        .detach(|| schedlab::workload::replay::replay(&trace, cond))
        .map_err(input_error)?;
    let threads: Vec<_> = (r.threads.iter())
        .map(|t| {
            let o = &t.observed;
            let (p50, p99) = (o.latency.percentile(0.5), o.latency.percentile(0.99));
            let (run, wakeups, prev) = (o.run_ns, o.wakeups, o.wake_prev);
            (t.name(), t.pid, run, wakeups, p50, p99, o.migrations, prev)
        })
        .collect();
    let d = PyDict::new(py);
    d.set_item("json", &r.json)?;
    d.set_item("notes", &r.notes)?;
    d.set_item("platform", &r.platform)?;
    d.set_item("kernel", r.kernel.name())?;
    d.set_item("release", &r.release)?;
    d.set_item("length_ns", r.length)?;
    d.set_item("threads", threads)?;
    d.set_item("cpu_busy_ns", &r.cpu_busy)?;
    d.set_item("freq_residency_ns", &r.residency)?;
    Ok(d)
}

/// Built-in platforms: (name, description, nr_cpus, capacities).
#[pyfunction]
fn platforms() -> PyResult<Vec<(String, String, usize, String)>> {
    let mut out = Vec::new();
    for name in schedlab::platform::builtin_names().chain(["smp:4"]) {
        let p = schedlab::platform::load_builtin(name).map_err(input_error)?;
        let caps: Vec<String> = p.cpus.iter().map(|c| c.capacity_orig.to_string()).collect();
        out.push((p.name, p.description, p.cpus.len(), caps.join(" ")));
    }
    Ok(out)
}

/// The sched domains of `platform` (a built-in name, smp:N or a .toml), as
/// /sys/kernel/debug/sched/domains shows them: per CPU, per domain, (cpu, domain, name,
/// level, span, flags, groups, min_interval, max_interval, busy_factor, imbalance_pct,
/// cache_nice_tries).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn domains(
    platform: &str,
) -> PyResult<
    Vec<(
        usize,
        usize,
        &'static str,
        u32,
        String,
        String,
        String,
        u64,
        u64,
        u32,
        u32,
        u32,
    )>,
> {
    use schedlab::platform::format_cpulist;
    let p = schedlab::run::load_platform(platform).map_err(input_error)?;
    let topo = schedlab::sched::topology::Topology::build(&p, 0);
    let mut out = Vec::new();
    for (cpu, doms) in topo.domains.iter().enumerate() {
        for (i, sd) in doms.iter().enumerate() {
            let groups: Vec<String> = sd
                .groups
                .iter()
                .map(|g| format!("{{{}}}", format_cpulist(g)))
                .collect();
            out.push((
                cpu,
                i,
                sd.name,
                sd.level,
                format_cpulist(&sd.span),
                sd.flag_names(),
                groups.join(","),
                sd.min_interval,
                sd.max_interval,
                sd.busy_factor,
                sd.imbalance_pct,
                sd.cache_nice_tries,
            ));
        }
    }
    Ok(out)
}

/// The Energy Model of each frequency domain of `platform` (`em_perf_state`, with the
/// cluster's share): (domain, cpus, khz, performance, power_uw, cost, inefficient,
/// cluster_power_mw) per OPP; domains without power are left out.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn energy_model(
    platform: &str,
) -> PyResult<Vec<(String, String, u32, u64, u64, u64, bool, Option<f64>)>> {
    let p = schedlab::run::load_platform(platform).map_err(input_error)?;
    let mut out = Vec::new();
    for d in &p.freq_domains {
        let cap = d
            .cpus
            .iter()
            .map(|&c| p.cpus[c].capacity_orig)
            .max()
            .unwrap_or(0);
        let Some(table) = schedlab::energy::em::perf_table(d, cap as u64) else {
            continue;
        };
        let cpus = schedlab::platform::format_cpulist(&d.cpus);
        for (ps, opp) in table.iter().zip(&d.opps) {
            out.push((
                d.name.clone(),
                cpus.clone(),
                ps.khz,
                ps.performance,
                ps.power_uw,
                ps.cost,
                ps.inefficient,
                opp.cluster_power_mw,
            ));
        }
    }
    Ok(out)
}

/// The kernel presets, oldest first.
#[pyfunction]
fn kernels() -> Vec<&'static str> {
    Kernel::ALL.map(Kernel::name).to_vec()
}

/// The upstream changes of `key`'s default (a `--set` key or a feature's NAME) between
/// kernels `a` and `b`: (first kernel with it, value, commit).
#[pyfunction]
fn history(key: &str, a: &str, b: &str) -> PyResult<Vec<(&'static str, String, &'static str)>> {
    let (a, b) = (kernel_of(a)?, kernel_of(b)?);
    let row = |since: Kernel, value: String, commit| (since.name(), value, commit);
    if let Some(s) = SWITCHES.iter().find(|s| s.key == key) {
        let changes = s.preset.between(a, b);
        return Ok(changes
            .map(|c| row(c.since, c.value.into(), c.commit))
            .collect());
    }
    if let Some((_, h)) = SCHED_FEATS.iter().find(|(name, _)| *name == key) {
        let on_off = |on: bool| if on { "on" } else { "off" }.to_string();
        return Ok(h
            .between(a, b)
            .map(|c| row(c.since, on_off(c.value), c.commit))
            .collect());
    }
    Ok(vec![])
}

/// Every switch with its value under each kernel preset: (key, [values per preset]).
#[pyfunction]
fn features() -> Vec<(String, Vec<String>)> {
    let lists: Vec<Vec<(String, String)>> = Kernel::ALL
        .iter()
        .map(|&k| Features::preset(k).listing())
        .collect();
    lists[0]
        .iter()
        .enumerate()
        .map(|(i, (k, _))| (k.clone(), lists.iter().map(|l| l[i].1.clone()).collect()))
        .collect()
}

/// Every switch's value under `kernel` with `sets` and `features` on top, as `run` would
/// resolve them: (key, value); a scheduler feature's key is its NAME, its value on or off.
#[pyfunction]
fn switches(
    kernel: &str,
    sets: Vec<String>,
    features: Vec<String>,
) -> PyResult<Vec<(String, String)>> {
    let f = schedlab::run::features(kernel_of(kernel)?, &sets, &features).map_err(input_error)?;
    Ok(f.listing())
}

/// Check overrides against a preset, as `run` would.
#[pyfunction]
fn check_switches(kernel: &str, sets: Vec<String>, features: Vec<String>) -> PyResult<()> {
    schedlab::run::features(kernel_of(kernel)?, &sets, &features)
        .map(|_| ())
        .map_err(input_error)
}

/// `limits::read_input`: a file's bytes, at most `MAX_INPUT_BYTES`.
#[pyfunction]
fn read_input<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = schedlab::limits::read_input(&path).map_err(input_error)?;
    Ok(PyBytes::new(py, &bytes))
}

/// JSON text read as rt-app's json-c reads it (comments, trailing commas, single quotes; a
/// repeated key: the last one): Python values. Errors name `origin`, the line and column.
#[pyfunction]
fn read_json(py: Python<'_>, text: &str, origin: &str) -> PyResult<Py<PyAny>> {
    let node = schedlab::workload::json::parse(text, false).map_err(|e| {
        InputError::new_err(format!("{origin}:{}:{}: {}", e.line, e.col, e.message))
    })?;
    py_value(py, &node.value)
}

/// A parsed JSON value as Python's json module gives it.
fn py_value(py: Python<'_>, v: &schedlab::workload::json::Value) -> PyResult<Py<PyAny>> {
    use schedlab::workload::json::Value;
    Ok(match v {
        Value::Null | Value::Missing => py.None(),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Value::Float(f) => f.into_pyobject(py)?.into_any().unbind(),
        Value::Str(s) => s.into_pyobject(py)?.into_any().unbind(),
        Value::Array(items) => {
            let values: PyResult<Vec<_>> = items.iter().map(|n| py_value(py, &n.value)).collect();
            pyo3::types::PyList::new(py, values?)?.into_any().unbind()
        }
        Value::Object(entries) => {
            let d = PyDict::new(py);
            for (key, n) in entries {
                d.set_item(key, py_value(py, &n.value)?)?;
            }
            d.into_any().unbind()
        }
    })
}

/// `output::clash`: the first output (name, path) that would replace an input or another
/// output, as (its path, the message), or None.
#[pyfunction]
fn output_clash(
    inputs: Vec<(String, PathBuf)>,
    outputs: Vec<(String, PathBuf)>,
) -> Option<(String, String)> {
    schedlab::output::clash(&named(&inputs), &named(&outputs))
}

/// (name, path) pairs as the core takes them.
fn named(v: &[(String, PathBuf)]) -> Vec<(&str, &Path)> {
    v.iter().map(|(n, p)| (n.as_str(), p.as_path())).collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InputError", m.py().get_type::<InputError>())?;
    // The package's version is the crate's (maturin takes it from Cargo.toml).
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(pelt_replay_csv, m)?)?;
    m.add_function(wrap_pyfunction!(pelt_replay, m)?)?;
    m.add_function(wrap_pyfunction!(pelt_periodic, m)?)?;
    m.add_function(wrap_pyfunction!(pelt_ramp, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(kernels, m)?)?;
    m.add_function(wrap_pyfunction!(history, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(platforms, m)?)?;
    m.add_function(wrap_pyfunction!(domains, m)?)?;
    m.add_function(wrap_pyfunction!(features, m)?)?;
    m.add_function(wrap_pyfunction!(energy_model, m)?)?;
    m.add_function(wrap_pyfunction!(check_switches, m)?)?;
    m.add_function(wrap_pyfunction!(switches, m)?)?;
    m.add_function(wrap_pyfunction!(output_clash, m)?)?;
    m.add_function(wrap_pyfunction!(read_json, m)?)?;
    m.add_function(wrap_pyfunction!(read_input, m)?)?;
    Ok(())
}
