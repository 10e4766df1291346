//! schedlab._core: the Rust core seen from Python. Thin: it converts arguments and
//! results, and turns schedlab::InputError into schedlab.InputError.

use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use schedlab::kernel::Kernel;
use schedlab::sched::clock_pelt::{CpuScale, Invariance};
use schedlab::sched::pelt::SchedAvg;
use schedlab::solo::periodic::Periodic;
use schedlab::solo::ramp::Ramp;
use schedlab::solo::replay::{replay_csv, Replay, Row};
use schedlab::solo::SoloConfig;

create_exception!(
    _core,
    InputError,
    PyValueError,
    "Input that schedlab refuses."
);

fn input_error(e: schedlab::InputError) -> PyErr {
    InputError::new_err(e.to_string())
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
    let kernel = Kernel::from_name(kernel).ok_or_else(|| {
        InputError::new_err(format!("--kernel: unknown kernel '{kernel}' (6.12 or 6.1)"))
    })?;
    Ok(SoloConfig {
        invariance,
        scale: CpuScale { cpu, freq },
        util_est: kernel.util_est(),
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

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add_function(wrap_pyfunction!(pelt_replay_csv, m)?)?;
    m.add_function(wrap_pyfunction!(pelt_replay, m)?)?;
    m.add_function(wrap_pyfunction!(pelt_periodic, m)?)?;
    m.add_function(wrap_pyfunction!(pelt_ramp, m)?)?;
    Ok(())
}
