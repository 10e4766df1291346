//! Scheduler statistics (kernel/sched/stats.h, stats.c): the per-runqueue and per-domain
//! counters `/proc/schedstat` shows (schedstats enabled), and each task's `sched_info`
//! stamps they are computed from.

use super::topology::{SchedDomain, Span};
use super::Sched;
use crate::time::Ns;

/// A runqueue's counters (`struct rq`'s schedstat fields and `rq_sched_info`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RqStats {
    /// sched_yield() calls.
    pub yld_count: u32,
    /// __schedule() calls, and those that left the CPU idle.
    pub sched_count: u32,
    pub sched_goidle: u32,
    /// try_to_wake_up() calls by this CPU, and those waking a task onto it.
    pub ttwu_count: u32,
    pub ttwu_local: u32,
    /// Time tasks ran here, and waited here to run (ns); time slices run.
    pub rq_cpu_time: Ns,
    pub run_delay: Ns,
    pub pcount: u64,
}

/// A domain's counters. The `lb_*` arrays are indexed by `enum cpu_idle_type` as 6.12
/// numbers it (busy, idle, newly idle).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SdStats {
    pub lb_count: [u32; 3],
    pub lb_balanced: [u32; 3],
    pub lb_failed: [u32; 3],
    /// By `enum migration_type` too (load, util, task, misfit), as version 17 prints it.
    pub lb_imbalance: [[u64; 4]; 3],
    pub lb_gained: [u32; 3],
    pub lb_hot_gained: [u32; 3],
    pub lb_nobusyq: [u32; 3],
    pub lb_nobusyg: [u32; 3],
    pub alb_count: u32,
    pub alb_failed: u32,
    pub alb_pushed: u32,
    /// try_to_wake_up() by this CPU of a task last on another CPU of the domain.
    pub ttwu_wake_remote: u32,
    pub ttwu_move_affine: u32,
    pub ttwu_move_balance: u32,
}

/// A task's `sched_info` stamps: since when it waits to run, and when it last started.
#[derive(Debug, Clone, Copy, Default)]
pub struct SchedInfo {
    pub last_queued: Option<Ns>,
    pub last_arrival: Ns,
    /// The task's own run_delay and pcount (/proc/PID/schedstat's second and third).
    pub run_delay: Ns,
    pub pcount: u64,
}

impl SchedInfo {
    /// `sched_info_enqueue`: the wait starts, unless already counting.
    pub fn enqueue(&mut self, now: Ns) {
        self.last_queued.get_or_insert(now);
    }

    /// `sched_info_dequeue`: the wait ends without running; the rq keeps it.
    pub fn dequeue(&mut self, rq: &mut RqStats, now: Ns) {
        if let Some(q) = self.last_queued.take() {
            self.run_delay += now - q;
            rq.run_delay += now - q;
        }
    }

    /// `sched_info_arrive`: the task gets the CPU.
    pub fn arrive(&mut self, rq: &mut RqStats, now: Ns) {
        if let Some(q) = self.last_queued.take() {
            self.run_delay += now - q;
            self.pcount += 1;
            rq.run_delay += now - q;
            rq.pcount += 1;
            self.last_arrival = now;
        }
    }

    /// `sched_info_depart`: it leaves the CPU; still runnable, it waits again.
    pub fn depart(&mut self, rq: &mut RqStats, now: Ns, runnable: bool) {
        rq.rq_cpu_time += now - self.last_arrival;
        if runnable {
            self.enqueue(now);
        }
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
        pub span: Span,
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

impl Sched {
    /// Each CPU's sched domains' rows (`/proc/schedstat`'s domain lines).
    pub fn domain_summaries(&self) -> Vec<DomainSummary> {
        (self.topo.domains.iter().enumerate())
            .flat_map(|(cpu, doms)| doms.iter().map(move |sd| domain_summary(cpu, sd)))
            .collect()
    }
}

/// A domain's row: its counters, busy, idle and newly idle (6.12's `cpu_idle_type` order).
fn domain_summary(cpu: usize, sd: &SchedDomain) -> DomainSummary {
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
        lb_imbalance_busy: st.lb_imbalance[0].iter().sum(),
        lb_imbalance_idle: st.lb_imbalance[1].iter().sum(),
        lb_imbalance_newidle: st.lb_imbalance[2].iter().sum(),
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
