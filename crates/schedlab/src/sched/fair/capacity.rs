//! The capacity a CPU has left for fair tasks (`update_cpu_capacity`), refreshed when the
//! CPU balances its lowest domain (`sched/fair/balance`), and whether a utilization fits
//! a CPU (`util_fits_cpu`).

use super::SchedEntity;
use crate::sched::rq::Rq;
use crate::sched::task::SchedTask;
use crate::sched::uclamp::{UCLAMP_MAX, UCLAMP_MIN};
use crate::sched::Sched;

/// `get_actual_cpu_capacity` (6.10+): the CPU's capacity less the larger of the hw
/// pressure's average and the cpufreq pressure; ≤6.9 less the thermal pressure now, as
/// `util_fits_cpu`'s `capacity_orig_thermal` and `find_energy_efficient_cpu`'s
/// `cpu_thermal_cap` take it.
pub fn get_actual_cpu_capacity(rq: &Rq) -> u64 {
    match rq.pressure_averaged {
        true => rq.capacity - rq.avg_hw.load_avg.max(rq.cpufreq_pressure),
        false => rq.capacity - rq.hw_pressure,
    }
}

/// The capacity less its averaged pressure: ≤6.9 `capacity_orig_of − thermal_load_avg`
/// (`select_idle_capacity`, and `scale_rt_capacity`'s share); 6.10+ as
/// [`get_actual_cpu_capacity`].
pub fn capacity_less_avg_pressure(rq: &Rq) -> u64 {
    match rq.pressure_averaged {
        true => get_actual_cpu_capacity(rq),
        false => rq.capacity - rq.avg_hw.load_avg,
    }
}

impl Sched {
    /// `cpufreq_update_pressure` (6.10+) of a policy over `cpus` limited to `max_khz` of
    /// `ref_khz` (`arch_scale_freq_ref`): the capacity the limit takes away, 0 at or above
    /// the reference. It counts from each CPU's next `update_cpu_capacity`.
    pub fn cpufreq_update_pressure(&mut self, cpus: &[usize], max_khz: u32, ref_khz: u32) {
        for &cpu in cpus {
            let rq = &mut self.rqs[cpu];
            rq.cpufreq_pressure = capped_share(rq.capacity, max_khz as u64, ref_khz as u64);
        }
    }

    /// `topology_update_hw_pressure` (6.10+, from a hardware throttle's driver;
    /// ≤6.9 `topology_update_thermal_pressure`, from it or the cpufreq cooling device) of a
    /// policy over `cpus` capped at `capped_khz` of `max_khz` (`arch_scale_freq_ref`; ≤6.9
    /// `freq_factor`, both then in MHz): the capacity the cap takes away, 0 at or above
    /// the top.
    pub fn update_hw_pressure(&mut self, cpus: &[usize], capped_khz: u32, max_khz: u32) {
        for &cpu in cpus {
            let rq = &mut self.rqs[cpu];
            let unit = if rq.pressure_averaged { 1 } else { 1000 };
            let (capped, max) = (capped_khz as u64 / unit, max_khz as u64 / unit);
            rq.hw_pressure = capped_share(rq.capacity, capped, max);
        }
    }
}

/// The capacity a frequency cap of `capped` of `max` takes from `capacity`
/// (`capacity − mult_frac(capacity, capped, max)`), none at or above `max`.
fn capped_share(capacity: u64, capped: u64, max: u64) -> u64 {
    match capped < max {
        true => capacity - capacity * capped / max,
        false => 0,
    }
}

/// `scale_rt_capacity`: the CPU's actual capacity less what RT and deadline tasks used by
/// their PELT signals (≤6.9: and the averaged thermal pressure), at least 1. schedlab has
/// no IRQ time.
pub fn scale_rt_capacity(rq: &Rq) -> u64 {
    let used = rq.avg_rt.util_avg + rq.avg_dl.util_avg;
    capacity_less_avg_pressure(rq).saturating_sub(used).max(1)
}

/// `fits_capacity`: `cap` leaves 20% of `max` spare.
pub fn fits_capacity(cap: u64, max: u64) -> bool {
    cap * 1280 < max * 1024
}

/// `util_fits_cpu` on the CPU of runqueue `rq`: 1 when `util` fits its `capacity_of` with
/// 20% headroom, or (with uclamp in use) when the task's util_max is one the CPU meets; −1
/// when it fits but its util_min asks more than the CPU can give
/// (`get_actual_cpu_capacity`).
pub fn util_fits_cpu(
    util: u64,
    uclamp_min: u64,
    uclamp_max: u64,
    rq: &Rq,
    uclamp_used: bool,
) -> i32 {
    let capacity_orig = rq.capacity;
    let mut fits = fits_capacity(util, rq.cpu_capacity);
    if !uclamp_used {
        return fits as i32;
    }
    let biggest_uncapped = capacity_orig == 1024 && uclamp_max == 1024;
    fits |= !biggest_uncapped && uclamp_max <= capacity_orig;
    let uclamp_min = uclamp_min.min(uclamp_max);
    if fits && util < uclamp_min && uclamp_min > get_actual_cpu_capacity(rq) {
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
    util_fits_cpu(task_util_est(se), min, max, rq, uclamp_used) > 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Kernel;
    use crate::sched::tests::machine;

    /// A hikey960 A73 (capacity 1024) under a cap taking 408 away, its PELT average at 200 so
    /// far. A task of util 100 asks util_min 700:
    /// - ≤6.9 `util_fits_cpu` takes the thermal pressure now: 700 > 1024 − 408 = 616, so its
    ///   util_min does not fit (−1); `select_idle_capacity` and `capacity_of` the average,
    ///   1024 − 200 = 824;
    /// - 6.10+ takes the hw pressure's average everywhere: 700 ≤ 824, it fits (1).
    #[test]
    fn the_pressure_is_taken_as_it_is_until_6_10_and_averaged_after() {
        for (kernel, actual, fits) in [(Kernel::V6_1, 616, -1), (Kernel::V6_12, 824, 1)] {
            let (mut s, _) = machine("hikey960", kernel);
            let rq = &mut s.rqs[4];
            (rq.hw_pressure, rq.avg_hw.load_avg) = (408, 200);
            assert_eq!(get_actual_cpu_capacity(rq), actual, "{kernel:?}");
            assert_eq!(capacity_less_avg_pressure(rq), 824, "{kernel:?}");
            assert_eq!(util_fits_cpu(100, 700, 1024, rq, true), fits, "{kernel:?}");
        }
    }
}
