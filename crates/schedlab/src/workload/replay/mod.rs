//! A kernel trace as a workload (`schedlab replay`): the trace read (`dat/`: trace.dat as
//! `trace-cmd record` writes it; `perfetto.rs`: a Perfetto trace's ftrace events), its
//! threads rebuilt as programs (`rebuild.rs`), and written as rt-app JSON (`rtapp_json.rs`).

pub mod dat;
mod perfetto;
pub mod rebuild;
mod rtapp_json;

use std::fs::File;
use std::io::{Read, Seek};
use std::path::Path;

use self::dat::{SchedFields, Trace};
use self::perfetto::PerfettoTrace;
use self::rebuild::{Rebuild, Thread};
use crate::error::InputError;
use crate::limits::MAX_THREADS;
use crate::run::load_platform;
use crate::time::Ns;

/// A trace rebuilt.
pub struct Replayed {
    pub threads: Vec<Thread>,
    /// From its first record to its last.
    pub length: Ns,
    /// Each CPU's time running a thread.
    pub cpu_busy: Vec<Ns>,
    /// The platform the rebuild used.
    pub platform: String,
    /// The traced kernel's release (`6.12.0-...`), if the trace says.
    pub release: Option<String>,
    /// What the rebuild assumed.
    pub notes: Vec<String>,
}

impl Replayed {
    /// As rt-app JSON.
    pub fn rtapp_json(&self) -> String {
        rtapp_json::rtapp_json(&self.threads, self.length)
    }
}

/// The trace at `path` (a trace.dat, or a Perfetto trace) rebuilt, its CPUs those of
/// `platform` (None: `smp:N` for the trace's N CPUs, said in a note).
pub fn replay(path: &Path, platform: Option<&str>) -> Result<Replayed, InputError> {
    let origin = path.display().to_string();
    let failed = |e: std::io::Error| InputError::new(&origin, e.to_string());
    let mut file = File::open(path).map_err(failed)?;
    let mut magic = Vec::with_capacity(10);
    (&file).take(10).read_to_end(&mut magic).map_err(failed)?;
    if magic == b"\x17\x08\x44tracing" {
        let trace = Trace::open(path)?;
        let fields = SchedFields::of(&trace.meta, &origin)?;
        let release = (trace.meta.uname.as_deref())
            .and_then(|u| u.split(' ').nth(2))
            .map(str::to_string);
        let mut r = Replay::new(trace.meta.nr_cpus, platform, release, &origin)?;
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
        return r.finish(&origin);
    }
    file.rewind().map_err(failed)?;
    let trace = PerfettoTrace::read(file, &origin)?;
    if trace.switches == 0 {
        let msg = "the trace has no sched_switch event (record ftrace's sched/sched_switch)";
        return Err(InputError::new(&origin, msg));
    }
    let mut r = Replay::new(trace.nr_cpus, platform, trace.release.clone(), &origin)?;
    trace.for_each(|ts, cpu, ev| r.rebuild.event(ts, cpu, ev));
    if trace.compact > 0 {
        r.notes.push(format!(
            "{} bundles of compact_sched events not read (record with ftrace_config.compact_sched off)",
            trace.compact
        ));
    }
    r.finish(&origin)
}

/// A replay under way: its rebuild, and what is known of the trace.
struct Replay {
    rebuild: Rebuild,
    platform: String,
    release: Option<String>,
    notes: Vec<String>,
}

impl Replay {
    /// For a trace of `nr_cpus` CPUs on `platform` (None: `smp:N`, said in a note).
    fn new(
        nr_cpus: usize,
        platform: Option<&str>,
        release: Option<String>,
        origin: &str,
    ) -> Result<Replay, InputError> {
        let inferred = format!("smp:{}", nr_cpus.max(1));
        let mut notes = vec![];
        if platform.is_none() {
            notes.push(format!(
                "platform {inferred}, from the trace's CPUs (--platform to say)"
            ));
        }
        let platform = platform.unwrap_or(&inferred).to_string();
        let rebuild = Rebuild::new(nr_cpus, &load_platform(&platform)?, origin)?;
        Ok(Replay {
            rebuild,
            platform,
            release,
            notes,
        })
    }

    /// The threads rebuilt; more than a workload may start are refused.
    fn finish(self, origin: &str) -> Result<Replayed, InputError> {
        let (threads, length, cpu_busy, mut notes) = self.rebuild.finish();
        if threads.len() > MAX_THREADS {
            let msg = format!(
                "{} threads, more than the {MAX_THREADS} a workload may start (the kernel's default pid_max)",
                threads.len()
            );
            return Err(InputError::new(origin, msg));
        }
        notes.extend(self.notes);
        Ok(Replayed {
            threads,
            length,
            cpu_busy,
            platform: self.platform,
            release: self.release,
            notes,
        })
    }
}
