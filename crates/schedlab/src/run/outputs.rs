//! A run's output files: opened under temporary names before the run (an unwritable one
//! fails first) and attached to the simulation as observers, then moved into place once it
//! has finished. On failure or interruption, dropping them removes them.

use std::cell::RefCell;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::spec::{trace_output, RunError, RunSpec};
use crate::output::{Staged, StagedDir};
use crate::sched::task::SchedTask;
use crate::sim::{Sim, SIM_START};
use crate::time::Ns;
use crate::trace::{
    plat_info, schedstat, Counter, DatVersion, DatWriter, Frames, FtraceWriter, LogRow, Observer,
    PerfettoWriter, RtappLogs, SharedFrames, TraceFormat, Tracepoint,
};
use crate::workload::{pload_ns, Workload};

/// The outputs of a run, staged.
pub(super) struct Outputs {
    /// The trace and, beside it, the platform description.
    trace: Vec<Staged>,
    /// The rt-app logs, which the run's end stages.
    logs: Option<Rc<RefCell<Vec<Staged>>>>,
    schedstat: Option<(PathBuf, Staged, File)>,
    frames: Option<SharedFrames>,
    /// Last: removed (on failure) once the files in it are.
    log_dir: Option<StagedDir>,
}

fn io_error(what: &str, p: &Path, e: std::io::Error) -> RunError {
    RunError::Io(format!("{}: {what}: {e}", p.display()))
}

impl Outputs {
    /// Open `spec`'s outputs and attach their observers to `sim`.
    pub(super) fn open(sim: &mut Sim, spec: &RunSpec, wl: &Workload) -> Result<Outputs, RunError> {
        let log_dir = match &spec.log_dir {
            Some(dir) => Some(
                StagedDir::create(dir)
                    .map_err(|e| io_error("cannot create the log directory", dir, e))?,
            ),
            None => None,
        };
        let mut outputs = Outputs {
            trace: open_trace(sim, spec, wl)?,
            logs: None,
            schedstat: None,
            frames: spec.frames.then(Frames::shared),
            log_dir,
        };
        if let Some(dir) = &spec.log_dir {
            let (observer, done) = RtappLogs::new(dir.clone(), wl.global.log_basename.clone());
            let probe = dir.join(format!("{}-probe.log", wl.global.log_basename));
            drop(Staged::create(&probe).map_err(|e| io_error("cannot write the logs", dir, e))?);
            sim.observe(Labelled::boxed(
                Box::new(observer),
                "cannot write the logs",
                dir,
            ));
            outputs.logs = Some(done);
        }
        if let Some(path) = &spec.schedstat {
            let (staged, file) = Staged::create(path)
                .map_err(|e| io_error("cannot write the schedstat", path, e))?;
            outputs.schedstat = Some((path.clone(), staged, file));
        }
        if let Some(f) = &outputs.frames {
            sim.observe(Box::new(f.clone()));
        }
        Ok(outputs)
    }

    /// Run `sim` (`progress` as `Sim::run` takes it), then write what is written at the end
    /// and move every output into place. The simulation, which holds the log files, is
    /// dropped before the outputs on failure.
    pub(super) fn run(
        self,
        mut sim: Sim,
        spec: &RunSpec,
        progress: impl FnMut(Ns, Option<Ns>) -> bool,
    ) -> Result<(Sim, Option<Frames>), RunError> {
        let finished = sim.run(progress);
        match finished {
            Ok(true) => {}
            Ok(false) => {
                drop(sim);
                return Err(RunError::Interrupted);
            }
            Err(e) => {
                drop(sim);
                return Err(RunError::Io(e.to_string()));
            }
        }
        for staged in self.trace {
            commit(staged)?;
        }
        if let Some((path, staged, mut file)) = self.schedstat {
            let jiffies = (SIM_START + sim.elapsed()) / sim.sched().tun().tick_ns;
            let text = schedstat::render(sim.sched(), spec.kernel, jiffies);
            file.write_all(text.as_bytes())
                .map_err(|e| io_error("cannot write the schedstat", &path, e))?;
            commit(staged)?;
        }
        for staged in self.logs.map(|d| d.take()).unwrap_or_default() {
            commit(staged)?;
        }
        if let Some(d) = self.log_dir {
            d.commit();
        }
        Ok((sim, self.frames.map(|f| f.take())))
    }
}

/// An output's observer whose write errors name the output, as its opening's do.
struct Labelled {
    inner: Box<dyn Observer>,
    what: &'static str,
    path: PathBuf,
}

impl Labelled {
    fn boxed(inner: Box<dyn Observer>, what: &'static str, path: &Path) -> Box<dyn Observer> {
        let path = path.to_path_buf();
        Box::new(Labelled { inner, what, path })
    }

    fn label(&self, r: std::io::Result<()>) -> std::io::Result<()> {
        let what = |e: std::io::Error| format!("{}: {}: {e}", self.path.display(), self.what);
        r.map_err(|e| std::io::Error::new(e.kind(), what(e)))
    }
}

impl Observer for Labelled {
    fn record(&mut self, now: Ns, tp: &Tracepoint, tasks: &[SchedTask]) -> std::io::Result<()> {
        let r = self.inner.record(now, tp, tasks);
        self.label(r)
    }

    fn counter(&mut self, now: Ns, cpu: usize, c: Counter, value: f64) -> std::io::Result<()> {
        let r = self.inner.counter(now, cpu, c, value);
        self.label(r)
    }

    fn groups(&mut self, paths: &[String]) {
        self.inner.groups(paths)
    }

    fn log(&mut self, task: u32, row: LogRow) {
        self.inner.log(task, row)
    }

    fn finish(&mut self, tasks: &[SchedTask]) -> std::io::Result<()> {
        let r = self.inner.finish(tasks);
        self.label(r)
    }
}

fn commit(s: Staged) -> Result<(), RunError> {
    s.commit()
        .map_err(|e| RunError::Io(format!("moving an output into place: {e}")))
}

/// Open the trace in its format, and the platform description beside it (not beside a
/// device or a FIFO).
fn open_trace(sim: &mut Sim, spec: &RunSpec, wl: &Workload) -> Result<Vec<Staged>, RunError> {
    let Some((path, format)) = trace_output(spec)? else {
        return Ok(Vec::new());
    };
    let failed = |e| io_error("cannot write the trace", path, e);
    let (staged, file) = Staged::create(path).map_err(failed)?;
    let out = BufWriter::with_capacity(1 << 20, file);
    let nr_cpus = sim.platform().nr_cpus();
    let w: Box<dyn Observer> = match format {
        TraceFormat::Txt => Box::new(FtraceWriter::new(out, nr_cpus).map_err(failed)?),
        TraceFormat::Dat | TraceFormat::Dat6 => {
            let version = match format {
                TraceFormat::Dat => DatVersion::V7,
                _ => DatVersion::V6,
            };
            Box::new(DatWriter::new(out, nr_cpus, spec.kernel, version).map_err(failed)?)
        }
        TraceFormat::Perfetto => {
            let mut w = PerfettoWriter::new(out, nr_cpus);
            w.system(sim.platform(), spec.kernel).map_err(failed)?;
            Box::new(w)
        }
    };
    sim.observe(Labelled::boxed(w, "cannot write the trace", path));
    let beside = !staged.in_place();
    let mut staged = vec![staged];
    if beside {
        let info = plat_info::path_for(path);
        let failed = |e| io_error("cannot write the platform description", &info, e);
        let (info_staged, mut info_file) = Staged::create(&info).map_err(failed)?;
        let text = plat_info::render(sim.platform(), spec.kernel, pload_ns(wl.global.calibration));
        info_file.write_all(text.as_bytes()).map_err(failed)?;
        staged.push(info_staged);
    }
    Ok(staged)
}
