//! A kernel trace as a workload (`schedlab replay`): the trace read (`dat/`: trace.dat as
//! `trace-cmd record` writes it; `perfetto.rs`: a Perfetto trace's ftrace events;
//! `text.rs`: `trace-cmd report` or tracefs text), its threads rebuilt as programs
//! (`rebuild.rs`), and written as rt-app JSON (`rtapp_json.rs`).

mod attrs;
mod compact_sched;
pub mod dat;
mod perfetto;
pub mod rebuild;
mod rtapp_json;
mod text;

use std::fs::File;
use std::io::{Read, Seek};
use std::path::Path;

use self::attrs::Attrs;
use self::dat::{SchedFields, Trace};
use self::perfetto::PerfettoTrace;
use self::rebuild::{Rebuild, Rebuilt, RunAdds, SchedEvent, Thread};
use self::text::TextTrace;
use crate::error::InputError;
use crate::kernel::Kernel;
use crate::limits::MAX_THREADS;
use crate::run::{features, load_platform};
use crate::time::Ns;
use crate::trace::plat_info;
use crate::workload::Dialect;

/// A trace rebuilt.
pub struct Replayed {
    pub threads: Vec<Thread>,
    /// From its first record to its last.
    pub length: Ns,
    /// Each CPU's time running a thread.
    pub cpu_busy: Vec<Ns>,
    /// The platform the rebuild used.
    pub platform: String,
    /// The kernel whose costs were taken off the stretches, and which a check runs.
    pub kernel: Kernel,
    /// The traced kernel's release (`6.12.0-...`), if the trace says.
    pub release: Option<String>,
    /// What the rebuild assumed.
    pub notes: Vec<String>,
    /// As rt-app JSON.
    pub json: String,
    /// Each CPU's time at each frequency (kHz, ns), from `cpu_frequency` (none without).
    pub residency: Vec<Vec<(u64, Ns)>>,
}

/// The conditions a trace is rebuilt for: those it was recorded under.
#[derive(Debug, Clone, Copy, Default)]
pub struct Conditions<'a> {
    /// The machine (None: `smp:N` for the trace's N CPUs, said in a note).
    pub platform: Option<&'a str>,
    /// The kernel (None: the trace's release if a preset, else 6.12, said in a note).
    pub kernel: Option<Kernel>,
    /// The runs' switches (`--set KEY=VALUE`): with the cost model off (`overhead=off`) the
    /// kernel's work stays in the stretches, without the work's jitter (`jitter.work=off`)
    /// so does the platform's work stretch.
    pub sets: &'a [String],
    /// A side file of what the trace cannot say of its threads (`--attrs`).
    pub attrs: Option<&'a Path>,
}

/// The trace at `path` (a trace.dat, a Perfetto trace, or text, gzipped or not) rebuilt for
/// `cond`.
pub fn replay(path: &Path, cond: Conditions) -> Result<Replayed, InputError> {
    let origin = path.display().to_string();
    // LISA's plat_info.yml beside the trace (schedlab writes NAME.plat_info.yml), unless told.
    let beside = [
        plat_info::path_for(path),
        path.with_file_name("plat_info.yml"),
    ]
    .into_iter()
    .find(|p| cond.platform.is_none() && p.is_file())
    .map(|p| p.display().to_string());
    let cond = Conditions {
        platform: cond.platform.or(beside.as_deref()),
        ..cond
    };
    let failed = |e: std::io::Error| InputError::new(&origin, e.to_string());
    let mut file = File::open(path).map_err(failed)?;
    let mut magic = Vec::with_capacity(10);
    (&file).take(10).read_to_end(&mut magic).map_err(failed)?;
    if magic == b"\x17\x08\x44tracing" {
        return replay_dat(path, cond, &origin);
    }
    file.rewind().map_err(failed)?;
    if magic.starts_with(&text::GZIP_MAGIC) || text::is_text(&magic) {
        return replay_text(file, cond, &origin);
    }
    replay_perfetto(file, cond, &origin)
}

/// The trace.dat at `path` rebuilt.
fn replay_dat(path: &Path, cond: Conditions, origin: &str) -> Result<Replayed, InputError> {
    let trace = Trace::open(path)?;
    let fields = SchedFields::of(&trace.meta, origin)?;
    let release = (trace.meta.uname.as_deref())
        .and_then(|u| u.split(' ').nth(2))
        .map(str::to_string);
    let mut r = Replay::new(trace.meta.nr_cpus, release, cond, origin)?;
    if fields.migrations() {
        r.rebuild.migrations_recorded();
    }
    let lost = trace.for_each(|ts, cpu, rec| {
        if let Some(ev) = fields.event(rec) {
            r.rebuild.event(ts, cpu as usize, ev);
        }
        Ok(())
    })?;
    if lost > 0 {
        r.notes.push(format!(
            "{lost} pages of the trace say events were lost before them"
        ));
    }
    r.finish(origin)
}

/// The Perfetto trace in `file` rebuilt.
fn replay_perfetto(file: File, cond: Conditions, origin: &str) -> Result<Replayed, InputError> {
    let trace = PerfettoTrace::read(file, origin)?;
    if trace.switches == 0 {
        let msg = "the trace has no sched_switch event (record ftrace's sched/sched_switch)";
        return Err(InputError::new(origin, msg));
    }
    let mut r = Replay::new(trace.nr_cpus, trace.release.clone(), cond, origin)?;
    trace.for_each(|ts, cpu, ev| r.rebuild.event(ts, cpu, ev));
    r.finish(origin)
}

/// The text trace in `file` rebuilt.
fn replay_text(file: File, cond: Conditions, origin: &str) -> Result<Replayed, InputError> {
    let mut trace = TextTrace::open(file, origin)?;
    let mut r = Replay::new(trace.nr_cpus, None, cond, origin)?;
    let mut switches = 0u64;
    trace.for_each(|ts, cpu, ev| {
        switches += matches!(ev, SchedEvent::Switch(_)) as u64;
        r.rebuild.event(ts, cpu, ev)
    })?;
    if switches == 0 {
        let msg = "the trace has no sched_switch event (record it with -e sched)";
        return Err(InputError::new(origin, msg));
    }
    if !trace.contexts() {
        r.rebuild.contexts_unknown();
    }
    if trace.lost > 0 {
        r.notes
            .push(format!("{} CPUs' buffers say events were lost", trace.lost));
    }
    r.finish(origin)
}

/// A replay under way: its rebuild, and what is known of the trace.
struct Replay {
    rebuild: Rebuild,
    platform: String,
    kernel: Kernel,
    release: Option<String>,
    notes: Vec<String>,
    attrs: Attrs,
}

impl Replay {
    /// For a trace of `nr_cpus` CPUs of kernel `release`, under `cond`.
    fn new(
        nr_cpus: usize,
        release: Option<String>,
        cond: Conditions,
        origin: &str,
    ) -> Result<Replay, InputError> {
        let inferred = format!("smp:{}", nr_cpus.max(1));
        let mut notes = vec![];
        if cond.platform.is_none() {
            notes.push(format!(
                "platform {inferred}, from the trace's CPUs (--platform to say)"
            ));
        }
        let traced = (release.as_deref()).and_then(|r| {
            Kernel::ALL
                .into_iter()
                .find(|k| r.starts_with(&format!("{}.", k.name())))
        });
        let kernel = cond.kernel.or(traced).unwrap_or_else(|| {
            let k = Kernel::DEFAULT.name();
            notes.push(match release.as_deref() {
                Some(r) => {
                    format!("kernel {k}: the trace's ({r}) is not a preset (--kernel to say)")
                }
                None => format!("kernel {k}: the trace does not name its kernel (--kernel to say)"),
            });
            Kernel::DEFAULT
        });
        let platform = cond.platform.unwrap_or(&inferred).to_string();
        let plat = load_platform(&platform)?;
        if crate::platform::is_plat_info(&platform) {
            let em = if plat.has_energy_model() {
                "its energy model and costs"
            } else {
                "no energy model"
            };
            notes.push(format!(
                "platform {platform}: LISA's plat_info, {} ({em}; --platform to say)",
                plat.name
            ));
        }
        let adds = RunAdds::of(&plat, kernel, &features(kernel, cond.sets, &[])?);
        let rebuild = Rebuild::new(nr_cpus, &plat, adds, origin)?;
        let attrs = cond.attrs.map_or(Ok(Attrs::default()), Attrs::load)?;
        Ok(Replay {
            rebuild,
            platform,
            kernel,
            release,
            notes,
            attrs,
        })
    }

    /// The threads rebuilt; more than a workload may start are refused.
    fn finish(self, origin: &str) -> Result<Replayed, InputError> {
        let Rebuilt {
            threads,
            length,
            cpu_busy,
            residency,
            mut notes,
        } = self.rebuild.finish();
        if threads.len() > MAX_THREADS {
            let msg = format!(
                "{} threads, more than the {MAX_THREADS} a workload may start (the kernel's default pid_max)",
                threads.len()
            );
            return Err(InputError::new(origin, msg));
        }
        notes.extend(self.notes);
        self.attrs.check(&threads)?;
        let json = rtapp_json::rtapp_json(&threads, length, &self.attrs);
        if !self.attrs.is_empty() {
            // Its keys are checked as a workload's: errors name the side file and the key,
            // not where in the workload's text (the reader's `ORIGIN: tasks.T.KEY (line L,
            // column C)`).
            let origin = &self.attrs.origin;
            crate::workload::parse(&json, origin, Dialect::Workgen).map_err(|e| {
                let key = (e.location.strip_prefix(&format!("{origin}: ")))
                    .and_then(|k| k.split(" (line ").next())
                    .unwrap_or_default();
                InputError::new(origin, format!("{key}: {}", e.message))
            })?;
        }
        let idle = threads
            .iter()
            .filter(|t| !rtapp_json::has_events(t))
            .count();
        if idle > 0 {
            notes.push(format!(
                "{idle} threads left out: nothing of theirs an rt-app program can hold (no run of 0.5 us or more, no wakeup)"
            ));
        }
        Ok(Replayed {
            threads,
            length,
            cpu_busy,
            platform: self.platform,
            kernel: self.kernel,
            release: self.release,
            notes,
            json,
            residency,
        })
    }
}
