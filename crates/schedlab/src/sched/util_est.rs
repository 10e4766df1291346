//! util_est: a task's utilization estimate, sampled when it sleeps (kernel/sched/fair.c).
//!
//! Two forms: [`UtilEst::Ewma`] is Linux 6.8+ (one EWMA, commit "sched/fair: Simplify
//! util_est"); [`UtilEst::EnqueuedEwma`] is the ≤6.7 pair as in Linux 6.1 (with
//! UTIL_EST_FASTUP, which 6.1 enables by default).

/// Weight of a new sample in the EWMA: 1/4 (`UTIL_EST_WEIGHT_SHIFT`, include/linux/sched.h).
pub const UTIL_EST_WEIGHT_SHIFT: u32 = 2;
/// Flag: util_avg has not changed since the last sample (`UTIL_AVG_UNCHANGED`).
pub const UTIL_AVG_UNCHANGED: u32 = 0x8000_0000;
/// ~1% of capacity: `SCHED_CAPACITY_SCALE / 100` (`UTIL_EST_MARGIN`).
pub const UTIL_EST_MARGIN: u32 = 1024 / 100;

/// Which util_est the kernel version has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UtilEstForm {
    /// Linux 6.8+.
    Ewma,
    /// Linux ≤ 6.7 (6.1 reference).
    EnqueuedEwma,
}

/// When `util_est_update` takes a task's sample as it sleeps (`--set util_est.sample`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UtilEstSample {
    /// ≤ 6.11: `dequeue_task_fair`, after the dequeue's PELT update.
    AfterDequeue,
    /// 6.12 to 7.1: `dequeue_task_fair`, before the dequeue's PELT update (so that a
    /// delayed dequeue samples once): util_avg as last updated, at the wakeup, the pick or
    /// the last tick.
    BeforeDequeue,
    /// 7.2+: `update_load_avg` (`UPDATE_UTIL_EST`) of the sleep's dequeue, delayed or not,
    /// after its PELT update, and without the rule that skips a sample above the CPU's
    /// capacity.
    LoadAvg,
}

impl UtilEstSample {
    /// The sample is taken before the dequeue's PELT update.
    pub fn before_dequeue_update(self) -> bool {
        self == UtilEstSample::BeforeDequeue
    }

    /// The CPU's capacity `util_est_update` skips a larger sample at (None: no such rule).
    pub fn capacity_rule(self, cpu_capacity: u64) -> Option<u64> {
        (self != UtilEstSample::LoadAvg).then_some(cpu_capacity)
    }
}

impl UtilEstForm {
    pub fn initial(self) -> UtilEst {
        match self {
            UtilEstForm::Ewma => UtilEst::Ewma(0),
            UtilEstForm::EnqueuedEwma => UtilEst::EnqueuedEwma {
                enqueued: 0,
                ewma: 0,
            },
        }
    }
}

/// A task's `se.avg.util_est`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UtilEst {
    Ewma(u32),
    EnqueuedEwma { enqueued: u32, ewma: u32 },
}

/// `within_margin(value, margin)`: |value| < margin, the kernel's way ([6.1] fair.c).
fn within_margin(value: i64, margin: u32) -> bool {
    ((value as i32).wrapping_add(margin as i32 - 1) as u32) < 2 * margin - 1
}

impl UtilEst {
    /// `_task_util_est(p)`: the estimate without the flag.
    pub fn task_util_est(&self) -> u32 {
        match *self {
            UtilEst::Ewma(v) => v & !UTIL_AVG_UNCHANGED,
            UtilEst::EnqueuedEwma { enqueued, ewma } => ewma.max(enqueued & !UTIL_AVG_UNCHANGED),
        }
    }

    /// `cfs_se_util_change`: after each recomputation of the task's averages, clear the
    /// flag so that the next sleep takes a sample (pelt.h).
    pub fn util_change(&mut self) {
        match self {
            UtilEst::Ewma(v) => *v &= !UTIL_AVG_UNCHANGED,
            UtilEst::EnqueuedEwma { enqueued, .. } => *enqueued &= !UTIL_AVG_UNCHANGED,
        }
    }

    /// `util_est_update(cfs_rq, p, task_sleep)`: take a sample of `util_avg` when the task
    /// dequeues to sleep. `runnable_avg` is the task's (6.8+ starvation rule) and
    /// `cpu_capacity` is `arch_scale_cpu_capacity` of its CPU, above which a sample is not
    /// trusted (None: 7.2+, which has no such rule).
    pub fn update(
        &mut self,
        util_avg: u64,
        runnable_avg: u64,
        cpu_capacity: Option<u64>,
        task_sleep: bool,
    ) {
        if !task_sleep {
            return; // migration: the activation is not complete
        }
        match self {
            UtilEst::Ewma(v) => update_ewma(v, util_avg, runnable_avg, cpu_capacity),
            UtilEst::EnqueuedEwma { enqueued, ewma } => {
                update_enqueued_ewma(enqueued, ewma, util_avg, cpu_capacity)
            }
        }
    }
}

/// util_est_update, 6.8+ ([6.12] fair.c).
fn update_ewma(util_est: &mut u32, util_avg: u64, runnable_avg: u64, cpu_capacity: Option<u64>) {
    let mut ewma = *util_est;
    if ewma & UTIL_AVG_UNCHANGED != 0 {
        return; // no new PELT sample since enqueue
    }
    let dequeued = util_avg as u32;
    if ewma <= dequeued {
        ewma = dequeued; // increases are followed at once
    } else {
        let last_ewma_diff = ewma - dequeued;
        if last_ewma_diff >= UTIL_EST_MARGIN {
            if cpu_capacity.is_some_and(|c| util_avg > c) {
                return; // no idle time could be granted: do not trust the sample
            }
            if util_avg + (UTIL_EST_MARGIN as u64) >= runnable_avg {
                // Not starved: fold the decrease in with weight 1/4.
                ewma = ((ewma << UTIL_EST_WEIGHT_SHIFT) - last_ewma_diff) >> UTIL_EST_WEIGHT_SHIFT;
            }
        }
    }
    *util_est = ewma | UTIL_AVG_UNCHANGED;
}

/// util_est_update, ≤6.7 with UTIL_EST_FASTUP ([6.1] fair.c). The kernel works on a copy
/// and stores it only at `done`: the early returns leave the stored pair untouched.
fn update_enqueued_ewma(
    enqueued: &mut u32,
    ewma: &mut u32,
    util_avg: u64,
    cpu_capacity: Option<u64>,
) {
    if *enqueued & UTIL_AVG_UNCHANGED != 0 {
        return;
    }
    let new_enqueued = util_avg as u32;
    let mut new_ewma = *ewma;
    if new_ewma < new_enqueued {
        new_ewma = new_enqueued; // UTIL_EST_FASTUP
    } else {
        let last_ewma_diff = new_enqueued as i64 - new_ewma as i64;
        let last_enqueued_diff = *enqueued as i64 - new_enqueued as i64;
        if within_margin(last_ewma_diff, UTIL_EST_MARGIN) {
            if within_margin(last_enqueued_diff, UTIL_EST_MARGIN) {
                return; // neither moved by 1%
            }
        } else {
            if cpu_capacity.is_some_and(|c| util_avg > c) {
                return; // no idle time could be granted
            }
            let scaled = ((new_ewma as i64) << UTIL_EST_WEIGHT_SHIFT) + last_ewma_diff;
            new_ewma = (scaled as u32) >> UTIL_EST_WEIGHT_SHIFT;
        }
    }
    *enqueued = new_enqueued | UTIL_AVG_UNCHANGED;
    *ewma = new_ewma;
}

/// `util_est_enqueue`: add the task's estimate to the root cfs_rq's.
pub fn util_est_enqueue(cfs_rq_util_est: &mut u32, p: &UtilEst) {
    *cfs_rq_util_est = cfs_rq_util_est.wrapping_add(p.task_util_est());
}

/// `util_est_dequeue`: remove it, never below zero.
pub fn util_est_dequeue(cfs_rq_util_est: &mut u32, p: &UtilEst) {
    *cfs_rq_util_est -= (*cfs_rq_util_est).min(p.task_util_est());
}

#[cfg(test)]
mod tests;
