//! The sampling machinery ondemand and conservative share (cpufreq_governor.c, 6.12):
//! a sample is due when a scheduler update comes `sample_delay` after the last one
//! (`dbs_update_util_handler`); it measures each CPU's load since its previous sample
//! (`dbs_update`). Times are in µs, as `get_cpu_idle_time` gives them.

use super::{CpuSample, Governor, Hook, Policy};
use crate::time::Ns;

/// `struct dbs_governor`: what ondemand and conservative add to the shared sampling.
pub trait DbsGovernor {
    fn dbs(&mut self) -> &mut Dbs;
    /// `gov_dbs_update` for the policy's measured `load` (%): a frequency to set, if any.
    fn gov_dbs_update(&mut self, pol: &Policy, load: u32) -> Option<u32>;
    /// The governor's own `start` (`cs_start`); nothing by default.
    fn gov_start(&mut self, _pol: &Policy) {}
}

impl<G: DbsGovernor> Governor for G {
    fn update_util_hook(&self) -> bool {
        true
    }

    /// `cpufreq_dbs_governor_start`.
    fn start(&mut self, pol: &Policy, now: Ns, sample: &dyn Fn(usize) -> CpuSample) -> u32 {
        self.dbs().start(pol, now, sample);
        self.gov_start(pol);
        pol.cur
    }

    /// `dbs_update_util_handler` → `dbs_work_handler` → `gov_update_sample_delay`, run at
    /// once instead of from a workqueue.
    fn update(
        &mut self,
        pol: &Policy,
        _cpu: usize,
        hook: Hook,
        now: Ns,
        sample: &dyn Fn(usize) -> CpuSample,
    ) -> Option<u32> {
        if hook != Hook::UtilChange || !self.dbs().due(now) {
            return None;
        }
        let load = self.dbs().update(pol, now, sample);
        let f = self.gov_dbs_update(pol, load);
        let dbs = self.dbs();
        dbs.set_delay_us(dbs.sampling_rate_us * dbs.rate_mult);
        f
    }
}

pub struct Dbs {
    pub sampling_rate_us: u64,
    pub rate_mult: u64,
    sample_delay_ns: Ns,
    last_sample_time: Ns,
    /// Per CPU of the policy: previous update time, idle time (µs) and load.
    prev: Vec<(u64, u64, u32)>,
    /// Whole sampling periods the least idle CPU slept through, if more than two.
    pub idle_periods: Option<u64>,
    pub max_sample_load: u32,
}

impl Dbs {
    /// `cpufreq_dbs_governor_start`.
    pub fn new(sampling_rate_us: u64, pol: &Policy) -> Dbs {
        Dbs {
            sampling_rate_us,
            rate_mult: 1,
            sample_delay_ns: sampling_rate_us * 1000,
            last_sample_time: 0,
            prev: vec![(0, 0, 0); pol.cpus.len()],
            idle_periods: None,
            max_sample_load: 0,
        }
    }

    /// Reset the per-CPU baselines at `now` (governor start).
    pub fn start(&mut self, pol: &Policy, now: Ns, sample: &dyn Fn(usize) -> CpuSample) {
        for (p, &j) in self.prev.iter_mut().zip(&pol.cpus) {
            *p = (now / 1000, sample(j).idle_ns / 1000, 0);
        }
    }

    /// `dbs_update_util_handler`: is a sample due at `now`? (It starts one if so.)
    pub fn due(&mut self, now: Ns) -> bool {
        if now.saturating_sub(self.last_sample_time) < self.sample_delay_ns {
            return false;
        }
        self.last_sample_time = now;
        true
    }

    /// `gov_update_sample_delay`.
    pub fn set_delay_us(&mut self, us: u64) {
        self.sample_delay_ns = us * 1000;
    }

    /// `dbs_update`: the policy's load (max over its CPUs, in %).
    pub fn update(&mut self, pol: &Policy, now: Ns, sample: &dyn Fn(usize) -> CpuSample) -> u32 {
        let sampling_rate = self.sampling_rate_us * self.rate_mult;
        let (mut max_load, mut max_sample_load) = (0, 0);
        let mut idle_periods: Option<u64> = None;
        for (p, &j) in self.prev.iter_mut().zip(&pol.cpus) {
            let (update_time, cur_idle) = (now / 1000, sample(j).idle_ns / 1000);
            let time_elapsed = update_time - p.0;
            let idle_time = cur_idle.saturating_sub(p.1);
            p.0 = update_time;
            p.1 = cur_idle;
            let sample_load = if time_elapsed == 0 {
                p.2
            } else if time_elapsed > idle_time {
                (100 * (time_elapsed - idle_time) / time_elapsed) as u32
            } else {
                0
            };
            let load = if time_elapsed == 0 {
                p.2
            } else if idle_time > 2 * sampling_rate && p.2 != 0 {
                // Woken from a long idle: reuse the previous load, once.
                std::mem::replace(&mut p.2, 0)
            } else {
                p.2 = sample_load;
                sample_load
            };
            if idle_time > 2 * sampling_rate {
                let periods = idle_time / sampling_rate;
                idle_periods = Some(idle_periods.map_or(periods, |i| i.min(periods)));
            }
            max_load = max_load.max(load);
            max_sample_load = max_sample_load.max(sample_load);
        }
        self.idle_periods = idle_periods;
        self.max_sample_load = max_sample_load;
        max_load
    }
}
