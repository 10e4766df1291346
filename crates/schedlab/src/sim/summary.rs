//! The machine's summaries of a run: each thread's figures (the scheduler's accounting with
//! the interpreter's: system time, cache refills, rt-app's timer figures), each CPU's
//! (busy time, energy, frequency residency, its runqueue's schedstat) and each cpufreq
//! policy's.

use super::{Sim, SIM_START};
use crate::sched::topology::Span;
use crate::time::Ns;
use crate::tracepoint::RTAPP_MAIN_PID;

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
    /// One cpufreq policy's figures.
    #[derive(Debug, Clone)]
    pub struct PolicySummary {
        /// Its name (`policyN`, N its first CPU).
        pub policy: String,
        pub governor: String,
        pub cpus: Span,
        /// (kHz, ns) spent at each OPP.
        pub residency: Vec<(u32, Ns)>,
        pub transitions: u64,
    }
}

table! {
    /// A cyclictest measuring thread's statistics (cyclictest's `struct thread_stat`), in
    /// µs (ns with `-N`), in the order the threads were created.
    #[derive(Debug, Clone)]
    pub struct CyclicSummary {
        pub pid: u32,
        /// Its interval (µs) and priority (0: SCHED_OTHER).
        pub interval_us: u64,
        pub priority: u32,
        pub cycles: u64,
        pub min: u64,
        pub act: u64,
        /// Of every period's latency (cyclictest's `avg` before it divides by `cycles`).
        pub sum: u64,
        pub max: u64,
        /// `-h`: periods per latency unit, those beyond, and the first ones' cycle numbers.
        pub hist: Vec<u64>,
        pub overflows: u64,
        pub outliers: Vec<u64>,
    }
}

table! {
    /// A schbench report's histogram (wakeup or request latencies in µs, or RPS samples),
    /// three rows per report, in the order schbench prints them.
    #[derive(Debug, Clone)]
    pub struct SchbenchSummary {
        /// The report's number, the seconds it names, and whether it is the last (the
        /// others are the `-i` intervals').
        pub report: u64,
        pub runtime_s: u64,
        pub last: bool,
        /// "wakeup", "request" or "rps".
        pub stat: String,
        pub samples: u64,
        pub min: u64,
        pub max: u64,
        /// The 20th, 50th, 90th, 99th and 99.9th percentiles, and the samples from each
        /// one's predecessor to it.
        pub values: Vec<u64>,
        pub counts: Vec<u64>,
        /// The report's "current rps" (the last's: "average rps"), requests done, and
        /// "sched delay" of the message threads and the workers (µs).
        pub rps_now: f64,
        pub loops: u64,
        /// The workers' run times summed (µs), which a pipe test's transfer rate divides.
        pub worker_runtime_us: u64,
        /// `-A`'s rate at the report, all message threads together.
        pub rps_goal: u64,
        pub delay_message_us: u64,
        pub delay_worker_us: u64,
    }
}

impl Sim {
    /// A schbench run's reports, three rows each.
    pub fn schbench_summaries(&self) -> Vec<SchbenchSummary> {
        let Some(sb) = self.eng.res.schbench.as_deref() else {
            return Vec::new();
        };
        let rows = sb.reports.iter().enumerate().flat_map(|(i, r)| {
            [
                ("wakeup", &r.wakeup),
                ("request", &r.request),
                ("rps", &r.rps),
            ]
            .map(|(stat, f)| SchbenchSummary {
                report: i as u64,
                runtime_s: r.runtime_s,
                last: r.last,
                stat: stat.into(),
                samples: f.samples,
                min: f.min as u64,
                max: f.max as u64,
                values: f.values.iter().map(|&v| v as u64).collect(),
                counts: f.counts.to_vec(),
                rps_now: r.rps_now,
                loops: r.loops,
                worker_runtime_us: r.worker_runtime_us,
                rps_goal: r.rps_goal,
                delay_message_us: r.delay_message_us,
                delay_worker_us: r.delay_worker_us,
            })
        });
        rows.collect()
    }

    /// The cyclictest threads' rows.
    pub fn cyclic_summaries(&self) -> Vec<CyclicSummary> {
        let (sched, eng) = (&self.sched, &self.eng);
        let threads = eng.threads.iter().enumerate();
        let cyclic = threads.filter_map(|(id, th)| Some((id, th.cyclic.as_deref()?)));
        cyclic
            .map(|(id, c)| {
                let (t, st) = (&sched.tasks()[id], &c.stats);
                CyclicSummary {
                    pid: t.pid,
                    interval_us: c.interval / 1000,
                    priority: t.rt_priority,
                    cycles: st.cycles,
                    min: st.min,
                    act: st.act,
                    sum: st.sum,
                    max: st.max,
                    hist: st.hist.clone(),
                    overflows: st.overflows,
                    outliers: st.outliers.clone(),
                }
            })
            .collect()
    }

    /// The workload's threads' rows.
    pub fn task_summaries(&self) -> Vec<TaskSummary> {
        let (sched, eng, elapsed) = (&self.sched, &self.eng, self.elapsed());
        sched
            .tasks()
            .iter()
            .enumerate()
            .skip(eng.kthreads() as usize) // the workload's threads
            .filter(|(_, t)| t.pid != RTAPP_MAIN_PID)
            .map(|(id, t)| {
                let dl = sched.dl_of(id as u32);
                let lat = &t.stats.wakeup_latencies;
                let th = &eng.threads[id];
                let rtapp = &th.stats;
                let throttled_now = dl.stats.throttled_since.map_or(0, |s| eng.totals.end - s);
                TaskSummary {
                    comm: t.comm.clone(),
                    pid: t.pid,
                    policy: t.policy.name().to_string(),
                    cpu: t.cpu,
                    started_ns: t.stats.created_at - SIM_START,
                    ended_ns: t.stats.ended_at.map_or(elapsed, |at| at - SIM_START),
                    run_ns: t.stats.run_ns,
                    sys_ns: th.sys_ns,
                    refill_ns: th.refill_ns,
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
    pub fn policy_summaries(&self) -> Vec<PolicySummary> {
        let cf = &self.eng.cpufreq;
        (0..cf.policies.len())
            .map(|d| PolicySummary {
                policy: cf.names[d].clone(),
                cpus: cf.policies[d].cpus.as_slice().into(),
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
    pub fn cpu_summaries(&self, policies: &[PolicySummary]) -> Vec<CpuSummary> {
        let (sched, eng) = (&self.sched, &self.eng);
        (0..sched.nr_cpu_ids())
            .map(|cpu| (cpu, sched.cpu_rq(cpu)))
            .map(|(cpu, rq)| CpuSummary {
                cpu,
                capacity: rq.capacity,
                cluster: eng.plat.cpus[cpu].cluster,
                busy_ns: eng.cpus[cpu].busy_ns,
                sys_ns: eng.overhead.sys_ns(cpu),
                freq_residency: policies[eng.plat.cpus[cpu].freq_domain].residency.clone(),
                energy_mj: eng.energy.cpu_mj[cpu],
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
