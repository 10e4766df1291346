//! Scheduler statistics (kernel/sched/stats.h, stats.c): the per-runqueue and per-domain
//! counters `/proc/schedstat` shows (schedstats enabled), and each task's `sched_info`
//! stamps they are computed from.

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
    pub lb_imbalance: [u64; 3],
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
}

impl SchedInfo {
    /// `sched_info_enqueue`: the wait starts, unless already counting.
    pub fn enqueue(&mut self, now: Ns) {
        self.last_queued.get_or_insert(now);
    }

    /// `sched_info_dequeue`: the wait ends without running; the rq keeps it.
    pub fn dequeue(&mut self, rq: &mut RqStats, now: Ns) {
        if let Some(q) = self.last_queued.take() {
            rq.run_delay += now - q;
        }
    }

    /// `sched_info_arrive`: the task gets the CPU.
    pub fn arrive(&mut self, rq: &mut RqStats, now: Ns) {
        if let Some(q) = self.last_queued.take() {
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
