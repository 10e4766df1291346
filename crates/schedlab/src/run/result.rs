//! What a run returns (`RunResult`): its summaries per task, CPU, sched domain, operation,
//! cgroup and cpufreq policy, each built from the simulation once it has ended.

use crate::sched::ops::OPS;
use crate::sched::Sched;
use crate::sim::{Sim, SIM_START};
use crate::time::Ns;
use crate::trace::{Frames, RTAPP_MAIN_PID};
use crate::workload::Workload;

use super::spec::RunSpec;

table! {
    /// One thread's figures.
    #[derive(Debug, Clone)]
    pub struct TaskSummary {
        pub comm: String,
        pub policy: String,
        pub pid: u32,
        /// The CPU it was on last.
        pub cpu: usize,
        /// When it was created, and when it exited (the run's end if it did not), in ns
        /// since the run's start.
        pub started_ns: Ns,
        pub ended_ns: Ns,
        pub run_ns: Ns,
        /// Of its run time, what the cost model charged it as system time.
        pub sys_ns: Ns,
        /// Of its run time, what cache refills stalled it (`--set cache=on`).
        pub refill_ns: Ns,
        pub wait_ns: Ns,
        pub sleep_ns: Ns,
        pub wakeups: u64,
        pub latency_p50_ns: Ns,
        pub latency_p99_ns: Ns,
        pub latency_max_ns: Ns,
        pub migrations: u64,
        /// Migrations by distance (`Distance::NAMES`).
        pub migrations_smt: u64,
        pub migrations_cluster: u64,
        pub migrations_llc: u64,
        pub migrations_other_llc: u64,
        pub migrations_other_node: u64,
        /// Placements (fork and wakeups) by the rule that chose the CPU (`Placement::NAMES`).
        pub placed_prev: u64,
        pub placed_affine: u64,
        pub placed_idle_sibling: u64,
        pub placed_recent: u64,
        pub placed_eas: u64,
        pub placed_slow_path: u64,
        pub placed_bias: u64,
        pub placed_current_cpu: u64,
        pub placed_class: u64,
        pub placed_fallback: u64,
        pub preemptions: u64,
        pub timer_events: u64,
        pub overruns: u64,
        pub mean_slack_us: f64,
        /// SCHED_DEADLINE: budget exhaustions, time throttled, missed scheduling deadlines,
        /// time GRUB let it run beyond its budget; refused by admission control.
        pub dl_exhaustions: u64,
        pub dl_throttled_ns: Ns,
        pub dl_misses: u64,
        pub dl_reclaimed_ns: Ns,
        pub refused: bool,
    }
}

table! {
    /// One CPU's figures.
    #[derive(Debug, Clone)]
    pub struct CpuSummary {
        pub cpu: usize,
        pub capacity: u64,
        /// The platform cluster it belongs to (an index of `cluster_energy_mj`).
        pub cluster: usize,
        pub busy_ns: Ns,
        /// The cost model's system time here.
        pub sys_ns: Ns,
        pub energy_mj: f64,
        /// (kHz, ns) spent at each frequency of its policy.
        pub freq_residency: Vec<(u32, Ns)>,
        // Its /proc/schedstat line (sched/stats.rs).
        pub yld_count: u32,
        pub sched_count: u32,
        pub sched_goidle: u32,
        pub ttwu_count: u32,
        pub ttwu_local: u32,
        pub rq_cpu_time_ns: Ns,
        pub run_delay_ns: Ns,
        pub pcount: u64,
    }
}

table! {
    /// One sched domain of one CPU and its /proc/schedstat counters, the load balance ones
    /// for a busy, an idle and a newly idle CPU.
    #[derive(Debug, Clone)]
    pub struct DomainSummary {
        pub cpu: usize,
        /// The topology level's name (SMT, CLS, MC, PKG, NODE, NUMA).
        pub domain: String,
        pub span: Vec<usize>,
        pub lb_count_busy: u32,
        pub lb_count_idle: u32,
        pub lb_count_newidle: u32,
        pub lb_balanced_busy: u32,
        pub lb_balanced_idle: u32,
        pub lb_balanced_newidle: u32,
        pub lb_failed_busy: u32,
        pub lb_failed_idle: u32,
        pub lb_failed_newidle: u32,
        pub lb_imbalance_busy: u64,
        pub lb_imbalance_idle: u64,
        pub lb_imbalance_newidle: u64,
        pub lb_gained_busy: u32,
        pub lb_gained_idle: u32,
        pub lb_gained_newidle: u32,
        pub lb_hot_gained_busy: u32,
        pub lb_hot_gained_idle: u32,
        pub lb_hot_gained_newidle: u32,
        pub lb_nobusyq_busy: u32,
        pub lb_nobusyq_idle: u32,
        pub lb_nobusyq_newidle: u32,
        pub lb_nobusyg_busy: u32,
        pub lb_nobusyg_idle: u32,
        pub lb_nobusyg_newidle: u32,
        pub ttwu_wake_remote: u32,
        pub ttwu_move_affine: u32,
    }
}

table! {
    /// How many operations of one kind the scheduler did on one CPU, and the system time
    /// the cost model charged for them (0 when it is off).
    #[derive(Debug, Clone)]
    pub struct OpSummary {
        pub cpu: usize,
        pub op: String,
        pub count: u64,
        pub sys_ns: Ns,
    }
}

table! {
    /// `cpu.stat` of one cgroup with a `cpu.max` quota (CFS bandwidth): periods in which
    /// its timer was active, those with a throttled cfs_rq, and the time its cfs_rqs spent
    /// throttled (summed over the CPUs, counted at each unthrottle as the kernel does).
    #[derive(Debug, Clone)]
    pub struct GroupSummary {
        pub path: String,
        pub quota_us: u64,
        pub period_us: u64,
        pub nr_periods: u64,
        pub nr_throttled: u64,
        pub throttled_ns: Ns,
    }
}

table! {
    /// One cpufreq policy's figures.
    #[derive(Debug, Clone)]
    pub struct PolicySummary {
        /// Its name (`policyN`, N its first CPU).
        pub policy: String,
        pub governor: String,
        pub cpus: Vec<usize>,
        /// (kHz, ns) spent at each OPP.
        pub residency: Vec<(u32, Ns)>,
        pub transitions: u64,
    }
}

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
        let policies = policies(sim);
        RunResult {
            platform: sim.platform().name.clone(),
            kernel: spec.kernel.name().to_string(),
            simulated_ns: sim.elapsed(),
            events: totals.events,
            tasks: tasks(sim),
            cpus: cpus(sim, &policies),
            domains: domains(sched),
            ops: ops(sched),
            groups: groups(sched),
            policies,
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

/// The workload's threads' rows.
fn tasks(sim: &Sim) -> Vec<TaskSummary> {
    let (sched, totals, elapsed) = (sim.sched(), sim.totals(), sim.elapsed());
    sched
        .tasks()
        .iter()
        .enumerate()
        .filter(|(_, t)| t.pid != RTAPP_MAIN_PID) // the workload's threads
        .map(|(id, t)| {
            let dl = sched.dl_of(id as u32);
            let lat = &t.stats.wakeup_latencies;
            let rtapp = sim.rtapp_stats(id as u32);
            let throttled_now = dl.stats.throttled_since.map_or(0, |s| totals.end - s);
            TaskSummary {
                comm: t.comm.clone(),
                pid: t.pid,
                policy: t.policy.name().to_string(),
                cpu: t.cpu,
                started_ns: t.stats.created_at - SIM_START,
                ended_ns: t.stats.ended_at.map_or(elapsed, |at| at - SIM_START),
                run_ns: t.stats.run_ns,
                sys_ns: sim.thread_sys_ns(id as u32),
                refill_ns: sim.thread_refill_ns(id as u32),
                wait_ns: t.stats.wait_ns,
                sleep_ns: t.stats.sleep_ns,
                wakeups: lat.count(),
                latency_p50_ns: lat.percentile(0.5),
                latency_p99_ns: lat.percentile(0.99),
                latency_max_ns: lat.max(),
                migrations: t.stats.migrations(),
                migrations_smt: t.stats.migrations_by[0],
                migrations_cluster: t.stats.migrations_by[1],
                migrations_llc: t.stats.migrations_by[2],
                migrations_other_llc: t.stats.migrations_by[3],
                migrations_other_node: t.stats.migrations_by[4],
                placed_prev: t.stats.placements[0],
                placed_affine: t.stats.placements[1],
                placed_idle_sibling: t.stats.placements[2],
                placed_recent: t.stats.placements[3],
                placed_eas: t.stats.placements[4],
                placed_slow_path: t.stats.placements[5],
                placed_bias: t.stats.placements[6],
                placed_current_cpu: t.stats.placements[7],
                placed_class: t.stats.placements[8],
                placed_fallback: t.stats.placements[9],
                preemptions: t.stats.preemptions,
                timer_events: rtapp.timer_events,
                overruns: rtapp.overruns,
                mean_slack_us: if rtapp.timer_events > 0 {
                    rtapp.slack_sum_us as f64 / rtapp.timer_events as f64
                } else {
                    0.0
                },
                dl_exhaustions: dl.stats.exhaustions,
                dl_throttled_ns: dl.stats.throttled_ns + throttled_now,
                dl_misses: dl.stats.misses,
                dl_reclaimed_ns: dl.stats.reclaimed_ns,
                refused: t.stats.refused,
            }
        })
        .collect()
}

/// Each cpufreq policy's row.
fn policies(sim: &Sim) -> Vec<PolicySummary> {
    let cf = sim.cpufreq();
    (0..cf.policies.len())
        .map(|d| PolicySummary {
            policy: cf.names[d].clone(),
            cpus: cf.policies[d].cpus.clone(),
            governor: cf.governor_names[d].to_string(),
            residency: cf.policies[d]
                .freqs
                .iter()
                .copied()
                .zip(cf.stats[d].residency.iter().copied())
                .collect(),
            transitions: cf.stats[d].transitions,
        })
        .collect()
}

/// Each CPU's row (its frequency residency its policy's, of `policies`).
fn cpus(sim: &Sim, policies: &[PolicySummary]) -> Vec<CpuSummary> {
    let sched = sim.sched();
    (0..sched.nr_cpu_ids())
        .map(|cpu| (cpu, sched.cpu_rq(cpu)))
        .map(|(cpu, rq)| CpuSummary {
            cpu,
            capacity: rq.capacity,
            cluster: sim.platform().cpus[cpu].cluster,
            busy_ns: sim.busy_ns(cpu),
            sys_ns: sim.sys_ns(cpu),
            freq_residency: policies[sim.platform().cpus[cpu].freq_domain]
                .residency
                .clone(),
            energy_mj: sim.energy().cpu_mj[cpu],
            yld_count: rq.stats.yld_count,
            sched_count: rq.stats.sched_count,
            sched_goidle: rq.stats.sched_goidle,
            ttwu_count: rq.stats.ttwu_count,
            ttwu_local: rq.stats.ttwu_local,
            rq_cpu_time_ns: rq.stats.rq_cpu_time,
            run_delay_ns: rq.stats.run_delay,
            pcount: rq.stats.pcount,
        })
        .collect()
}

/// Each CPU's operation counts and their system time.
fn ops(sched: &Sched) -> Vec<OpSummary> {
    let costs = sched.costs();
    let overhead = sched.feat().overhead;
    (0..sched.nr_cpu_ids())
        .flat_map(|cpu| {
            let counts = sched.ops().of(cpu);
            OPS.iter().map(move |&op| OpSummary {
                cpu,
                op: op.name().to_string(),
                count: counts.get(op),
                sys_ns: if overhead {
                    counts.get(op) * costs.get(op)
                } else {
                    0
                },
            })
        })
        .collect()
}

/// Each cgroup with a `cpu.max` quota's `cpu.stat`.
fn groups(sched: &Sched) -> Vec<GroupSummary> {
    (sched.task_groups().iter())
        .filter_map(|tg| {
            let b = tg.bandwidth.as_deref()?;
            Some(GroupSummary {
                path: tg.path.clone(),
                quota_us: b.quota / 1000,
                period_us: b.period / 1000,
                nr_periods: b.nr_periods,
                nr_throttled: b.nr_throttled,
                throttled_ns: b.throttled_time,
            })
        })
        .collect()
}

/// Each CPU's sched domains' rows.
fn domains(sched: &Sched) -> Vec<DomainSummary> {
    (sched.topology().domains.iter().enumerate())
        .flat_map(|(cpu, doms)| doms.iter().map(move |sd| domain_summary(cpu, sd)))
        .collect()
}

/// A domain's row: its counters, busy, idle and newly idle (6.12's `cpu_idle_type` order).
fn domain_summary(cpu: usize, sd: &crate::sched::topology::SchedDomain) -> DomainSummary {
    let st = &sd.stats;
    DomainSummary {
        cpu,
        domain: sd.name.to_string(),
        span: sd.span.clone(),
        lb_count_busy: st.lb_count[0],
        lb_count_idle: st.lb_count[1],
        lb_count_newidle: st.lb_count[2],
        lb_balanced_busy: st.lb_balanced[0],
        lb_balanced_idle: st.lb_balanced[1],
        lb_balanced_newidle: st.lb_balanced[2],
        lb_failed_busy: st.lb_failed[0],
        lb_failed_idle: st.lb_failed[1],
        lb_failed_newidle: st.lb_failed[2],
        lb_imbalance_busy: st.lb_imbalance[0],
        lb_imbalance_idle: st.lb_imbalance[1],
        lb_imbalance_newidle: st.lb_imbalance[2],
        lb_gained_busy: st.lb_gained[0],
        lb_gained_idle: st.lb_gained[1],
        lb_gained_newidle: st.lb_gained[2],
        lb_hot_gained_busy: st.lb_hot_gained[0],
        lb_hot_gained_idle: st.lb_hot_gained[1],
        lb_hot_gained_newidle: st.lb_hot_gained[2],
        lb_nobusyq_busy: st.lb_nobusyq[0],
        lb_nobusyq_idle: st.lb_nobusyq[1],
        lb_nobusyq_newidle: st.lb_nobusyq[2],
        lb_nobusyg_busy: st.lb_nobusyg[0],
        lb_nobusyg_idle: st.lb_nobusyg[1],
        lb_nobusyg_newidle: st.lb_nobusyg[2],
        ttwu_wake_remote: st.ttwu_wake_remote,
        ttwu_move_affine: st.ttwu_move_affine,
    }
}

#[cfg(test)]
mod tests {
    use super::TaskSummary;
    use crate::sched::class::Placement;
    use crate::sched::topology::Distance;

    #[test]
    fn the_placement_and_distance_columns_follow_their_names() {
        let names: Vec<&str> = TaskSummary::columns(&[]).iter().map(|c| c.0).collect();
        let placed: Vec<String> = Placement::NAMES
            .iter()
            .map(|n| format!("placed_{n}"))
            .collect();
        let moved: Vec<String> = Distance::NAMES
            .iter()
            .map(|n| format!("migrations_{n}"))
            .collect();
        let at = |first: &str| names.iter().position(|n| *n == first).unwrap();
        assert_eq!(names[at(&placed[0])..][..placed.len()], placed);
        assert_eq!(names[at(&moved[0])..][..moved.len()], moved);
    }
}
