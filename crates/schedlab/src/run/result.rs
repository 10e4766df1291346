//! What a run returns (`RunResult`): its summaries per task, CPU, sched domain, operation,
//! cgroup and cpufreq policy, each built by the room that owns its data (the machine's in
//! `sim/summary.rs`; the scheduler's in `sched/stats.rs`, `sched/ops.rs`,
//! `sched/fair/bandwidth.rs`), assembled here once the simulation has ended.

use crate::sched::fair::bandwidth::GroupSummary;
use crate::sched::ops::OpSummary;
use crate::sched::stats::DomainSummary;
use crate::sim::summary::{CpuSummary, CyclicSummary, PolicySummary, SchbenchSummary, TaskSummary};
use crate::sim::{Sim, SIM_START};
use crate::time::Ns;
use crate::trace::Frames;
use crate::workload::Workload;

use super::spec::RunSpec;

#[derive(Debug, Clone)]
pub struct RunResult {
    pub platform: String,
    pub kernel: String,
    pub simulated_ns: Ns,
    pub events: u64,
    pub tasks: Vec<TaskSummary>,
    pub cpus: Vec<CpuSummary>,
    pub domains: Vec<DomainSummary>,
    pub ops: Vec<OpSummary>,
    pub groups: Vec<GroupSummary>,
    pub policies: Vec<PolicySummary>,
    /// cyclictest's measuring threads.
    pub cyclictest: Vec<CyclicSummary>,
    /// schbench's reports.
    pub schbench: Vec<SchbenchSummary>,
    /// Energy of each cluster's shared logic, and of everything (mJ).
    pub cluster_energy_mj: Vec<f64>,
    pub energy_mj: f64,
    pub warnings: Vec<String>,
    /// Threads refused by SCHED_DEADLINE admission control.
    pub refusals: Vec<String>,
    pub deadlock: Option<String>,
    /// When a benchmark started its tasks (hackbench's and perf's `gettimeofday` before their
    /// kick), ns since the run's start; the time they report runs from it to their end.
    pub bench_start_ns: Option<Ns>,
    pub switches: Vec<(String, String)>,
    pub frames: Option<Frames>,
}

impl RunResult {
    /// The result of `spec`'s run of `wl` in `sim` (its switches as `listing`), with the
    /// frames it kept.
    pub(super) fn of(
        sim: &Sim,
        spec: &RunSpec,
        wl: Workload,
        listing: Vec<(String, String)>,
        frames: Option<Frames>,
    ) -> RunResult {
        let (sched, totals) = (sim.sched(), sim.totals());
        let policies = sim.policy_summaries();
        RunResult {
            platform: sim.platform().name.clone(),
            kernel: spec.kernel.name().to_string(),
            simulated_ns: sim.elapsed(),
            events: totals.events,
            tasks: sim.task_summaries(),
            cpus: sim.cpu_summaries(&policies),
            domains: sched.domain_summaries(),
            ops: sched.op_summaries(),
            groups: sched.group_summaries(),
            policies,
            cyclictest: sim.cyclic_summaries(),
            schbench: sim.schbench_summaries(),
            cluster_energy_mj: sim.energy().cluster_mj.clone(),
            energy_mj: sim.energy().total_mj(),
            warnings: (wl.warnings.into_iter())
                .chain(sim.warnings().iter().cloned())
                .collect(),
            refusals: sched.refusals().to_vec(),
            deadlock: totals.deadlock.clone(),
            bench_start_ns: totals.bench_start.map(|t| t - SIM_START),
            switches: listing,
            frames,
        }
    }
}
