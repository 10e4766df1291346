//! `WAKEUP_BIAS_PREV_IDLE` (seed 002, RFC of 29 Sep 2023, never merged): a wakeup keeps an
//! "almost idle" previous CPU as if it were idle. The thread proposed five definitions,
//! each modelled exactly as posted:
//! - `load_avg_max` (the RFC): `cpu_load_without(prev, p) ≤ LOAD_AVG_MAX / 1000` (47);
//! - `almost_idle_load` (Chen Yu's `ALMOST_IDLE_CPU_LOAD`): the same load ≤ 50, about a
//!   nice-0 task running 50 µs per ms;
//! - `load_sum`: the root cfs_rq's weighted `load_sum ≤ 10 · get_pelt_divider`, "1%";
//! - `util_avg`: `util_avg ≤ 10 · capacity_of(cpu)`, which is meant as 1% but, util_avg never
//!   exceeding the capacity scale, holds for every CPU;
//! - `util_fits_capacity` (v2's `UTIL_FITS_CAPACITY`): the runnable tasks' util_est plus the
//!   waking task's fits `scale_rt_capacity` with the 20% margin.
//!
//! The first four make prev (or a target that is prev) acceptable in `wake_affine_idle` and
//! `select_idle_sibling`; the fifth makes any target, prev or recent CPU acceptable in
//! `select_idle_sibling`.

use crate::sched::explain::About;
use crate::sched::fair::capacity::{fits_capacity, scale_rt_capacity};
use crate::sched::features::Feat;
use crate::sched::pelt::{get_pelt_divider, LOAD_AVG_MAX};
use crate::sched::Sched;
use smallvec::smallvec;

/// The thread's definitions of "almost idle" (`--set fair.prev_idle_bias`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrevIdleBias {
    LoadAvgMax,
    AlmostIdleLoad,
    LoadSum,
    UtilAvg,
    UtilFitsCapacity,
}

/// `ALMOST_IDLE_CPU_LOAD`.
const ALMOST_IDLE_CPU_LOAD: u64 = 50;

impl Sched {
    /// `almost_idle_cpu(cpu, p)` under the chosen definition, for the prev CPU of a wakeup
    /// on CPU `by` (false when the feature is off, and for `util_fits_capacity`, which
    /// hooks in elsewhere).
    pub(super) fn almost_idle_cpu(&mut self, cpu: usize, p: u32, by: usize) -> bool {
        if !self.feat.has(Feat::WakeupBiasPrevIdle) {
            return false;
        }
        let avg = &self.cfs_rqs[cpu].avg;
        let (value, limit) = match self.feat.prev_idle_bias {
            PrevIdleBias::LoadAvgMax => (
                self.cpu_load_without(cpu, p, by),
                LOAD_AVG_MAX as u64 / 1000,
            ),
            PrevIdleBias::AlmostIdleLoad => {
                (self.cpu_load_without(cpu, p, by), ALMOST_IDLE_CPU_LOAD)
            }
            PrevIdleBias::LoadSum => (avg.load_sum, 10 * get_pelt_divider(avg) as u64),
            PrevIdleBias::UtilAvg => (avg.util_avg, 10 * self.capacity_of(cpu)),
            PrevIdleBias::UtilFitsCapacity => return false,
        };
        self.note("almost_idle_cpu", || {
            (
                About::Cpu(cpu),
                smallvec![("value", value as i64), ("limit", limit as i64)],
            )
        });
        value <= limit
    }

    /// `task_fits_remaining_cpu_capacity(task_util, cpu)` of `UTIL_FITS_CAPACITY`: the
    /// estimated utilization of `cpu`'s runnable tasks plus the task's leaves 20% of what RT
    /// and deadline tasks leave of the CPU.
    pub(super) fn fits_remaining_capacity(&self, task_util: u64, cpu: usize) -> bool {
        self.feat.has(Feat::WakeupBiasPrevIdle)
            && self.feat.prev_idle_bias == PrevIdleBias::UtilFitsCapacity
            && fits_capacity(
                self.cfs_rqs[cpu].util_est as u64 + task_util,
                scale_rt_capacity(&self.rqs[cpu]),
            )
    }
}
