//! One run from files and switches to outputs: what `schedlab run` and `schedlab.run` do.
//! `spec.rs` says what is asked and checks it, `outputs.rs` stages the files, `result.rs`
//! builds what the run returns.

pub mod explain;
mod outputs;
mod result;
mod spec;

pub use self::result::RunResult;
pub use self::spec::{features, load_platform, load_workload, RunError, RunSpec, WorkloadSource};
pub use crate::sched::fair::bandwidth::GroupSummary;
pub use crate::sched::ops::OpSummary;
pub use crate::sched::stats::DomainSummary;
pub use crate::sim::summary::{
    CpuSummary, CyclicSummary, PolicySummary, SchbenchSummary, TaskSummary,
};

use self::outputs::Outputs;
use crate::platform;
use crate::sim::Sim;
use crate::time::Ns;
use crate::workload::Workload;

/// Run: every input is checked before any output is opened. `progress(simulated, total)`
/// returns false to stop the run, which then removes the outputs it had opened.
pub fn run(
    spec: &RunSpec,
    progress: impl FnMut(Ns, Option<Ns>) -> bool,
) -> Result<RunResult, RunError> {
    let (wl, plat, feat) = spec::inputs(spec)?;
    spec::check_outputs(spec)?;
    let listing = feat.listing();
    let mut sim = Sim::new(&wl, plat, feat, &spec.options())?;
    let outputs = Outputs::open(&mut sim, spec, &wl)?;
    let (sim, frames) = outputs.run(sim, spec, progress)?;
    Ok(RunResult::of(&sim, spec, wl, listing, frames))
}

/// `schedlab check`: the workload's structure, one line per task and phase.
pub fn describe(wl: &Workload) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let g = &wl.global;
    let _ = writeln!(
        out,
        "dialect {:?}; duration {}; {} thread(s) at start",
        wl.dialect,
        g.duration
            .map_or("until every thread ends".into(), |d| format!(
                "{} s",
                d / 1_000_000_000
            )),
        wl.nr_threads()
    );
    for t in &wl.tasks {
        let loops = if t.loops < 0 {
            "for ever".to_string()
        } else {
            format!("{}x", t.loops)
        };
        let _ = writeln!(
            out,
            "task {} x{}: {} nice/prio {} cpus {} delay {} us, phases {loops}",
            t.name,
            t.instance,
            t.params.policy.map_or("?", |p| p.name()),
            t.params.priority.unwrap_or(0),
            t.cpus
                .as_ref()
                .map_or("all".into(), |c| platform::format_cpulist(c)),
            t.delay_us
        );
        for p in &t.phases {
            let loops = if p.loops <= 0 {
                "for ever".to_string()
            } else {
                format!("{}x", p.loops)
            };
            let events: Vec<String> = p.events.iter().map(|e| e.desc()).collect();
            let _ = writeln!(out, "  phase {} {loops}: {}", p.name, events.join(", "));
        }
    }
    out
}
