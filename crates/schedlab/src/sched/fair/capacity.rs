//! The capacity a CPU has left for fair tasks (`update_cpu_capacity`), refreshed when the
//! CPU balances its lowest domain (`sched/fair/balance`), and whether a utilization fits
//! a CPU (`util_fits_cpu`).

use super::SchedEntity;
use crate::sched::rq::Rq;
use crate::sched::task::SchedTask;
use crate::sched::uclamp::{UCLAMP_MAX, UCLAMP_MIN};

/// `scale_rt_capacity`: the CPU's capacity less what RT and deadline tasks used by their PELT
/// signals, at least 1. schedlab has no IRQ time and no thermal pressure.
pub fn scale_rt_capacity(rq: &Rq) -> u64 {
    let used = rq.avg_rt.util_avg + rq.avg_dl.util_avg;
    rq.capacity.saturating_sub(used).max(1)
}

/// `fits_capacity`: `cap` leaves 20% of `max` spare.
pub fn fits_capacity(cap: u64, max: u64) -> bool {
    cap * 1280 < max * 1024
}

/// `util_fits_cpu` on a CPU of capacity `capacity` (`capacity_of`) out of `capacity_orig`:
/// 1 when `util` fits with 20% headroom, or (with uclamp in use) when the task's util_max
/// is one the CPU meets; −1 when it fits but its util_min asks more than the CPU can give
/// (schedlab has no thermal pressure: `get_actual_cpu_capacity` is the original capacity).
pub fn util_fits_cpu(
    util: u64,
    uclamp_min: u64,
    uclamp_max: u64,
    capacity: u64,
    capacity_orig: u64,
    uclamp_used: bool,
) -> i32 {
    let mut fits = fits_capacity(util, capacity);
    if !uclamp_used {
        return fits as i32;
    }
    let biggest_uncapped = capacity_orig == 1024 && uclamp_max == 1024;
    fits |= !biggest_uncapped && uclamp_max <= capacity_orig;
    let uclamp_min = uclamp_min.min(uclamp_max);
    if fits && util < uclamp_min && uclamp_min > capacity_orig {
        return -1;
    }
    fits as i32
}

/// `task_util_est`: the larger of the task's util_avg and its util_est.
pub fn task_util_est(se: &SchedEntity) -> u64 {
    se.avg.util_avg.max(se.util_est.task_util_est() as u64)
}

/// `task_fits_cpu`: task `t` (entity `se`) fits the CPU of runqueue `rq` (`util_fits_cpu`,
/// its clamps included).
pub fn task_fits_cpu(t: &SchedTask, se: &SchedEntity, rq: &Rq, uclamp_used: bool) -> bool {
    let (min, max) = (
        t.uclamp[UCLAMP_MIN].value as u64,
        t.uclamp[UCLAMP_MAX].value as u64,
    );
    util_fits_cpu(
        task_util_est(se),
        min,
        max,
        rq.cpu_capacity,
        rq.capacity,
        uclamp_used,
    ) > 0
}
