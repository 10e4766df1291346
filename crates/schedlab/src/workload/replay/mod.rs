//! A kernel trace as a workload (`schedlab replay`): the trace read (`dat/`: trace.dat as
//! `trace-cmd record` writes it), its threads rebuilt as programs (`rebuild.rs`), and
//! written as rt-app JSON (`rtapp_json.rs`).

pub mod dat;
pub mod rebuild;
mod rtapp_json;

use std::path::Path;

use self::dat::{SchedFields, Trace};
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
    /// The traced kernel's release (UNAME), if the trace says.
    pub uname: Option<String>,
    /// What the rebuild assumed.
    pub notes: Vec<String>,
}

impl Replayed {
    /// As rt-app JSON.
    pub fn rtapp_json(&self) -> String {
        rtapp_json::rtapp_json(&self.threads, self.length)
    }
}

/// The trace.dat at `path` rebuilt, its CPUs those of `platform` (None: `smp:N` for the
/// trace's N CPUs, said in a note).
pub fn replay(path: &Path, platform: Option<&str>) -> Result<Replayed, InputError> {
    let trace = Trace::open(path)?;
    let origin = path.display().to_string();
    let inferred = format!("smp:{}", trace.meta.nr_cpus.max(1));
    let plat = load_platform(platform.unwrap_or(&inferred))?;
    let fields = SchedFields::of(&trace.meta, &origin)?;
    let mut rebuild = Rebuild::new(trace.meta.nr_cpus, &plat, &origin)?;
    let lost = trace.for_each(|ts, cpu, r| {
        if let Some(ev) = fields.event(r) {
            rebuild.event(ts, cpu as usize, ev);
        }
        Ok(())
    })?;
    let (threads, length, cpu_busy, mut notes) = rebuild.finish();
    if threads.len() > MAX_THREADS {
        let msg = format!(
            "{} threads, more than the {MAX_THREADS} a workload may start (the kernel's default pid_max)",
            threads.len()
        );
        return Err(InputError::new(&origin, msg));
    }
    if platform.is_none() {
        notes.push(format!(
            "platform {inferred}, from the trace's CPUs (--platform to say)"
        ));
    }
    if lost > 0 {
        notes.push(format!(
            "{lost} pages of the trace say events were lost before them"
        ));
    }
    Ok(Replayed {
        threads,
        length,
        cpu_busy,
        platform: platform.unwrap_or(&inferred).to_string(),
        uname: trace.meta.uname.clone(),
        notes,
    })
}
