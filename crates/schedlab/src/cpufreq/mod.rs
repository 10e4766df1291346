//! cpufreq: one policy per frequency domain, driven by a governor (drivers/cpufreq,
//! kernel/sched/cpufreq_schedutil.c). The scheduler calls `Hook`s where the kernel calls
//! `cpufreq_update_util` (and where the 2015 scheduler-driven prototype made its requests);
//! a governor answers with the frequency to set, which the engine applies at once (as a
//! fast-switching driver would).

mod conservative;
pub mod cooling;
mod dbs;
mod ondemand;
mod performance;
mod powersave;
mod sched_dvfs;
pub mod schedutil;
mod tunables;
mod userspace;

pub use tunables::{keys as tunable_keys, GovName, Tunables, GOVERNORS};

use crate::platform::FreqDomain;
use crate::time::Ns;

/// `CPUFREQ_RELATION_*`: how a target frequency maps to a table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// Lowest frequency at or above the target.
    L,
    /// Highest frequency at or below the target.
    H,
    /// The closest frequency (ties go to the lower one).
    C,
}

/// `struct cpufreq_policy`: the CPUs of a frequency domain and their frequency.
#[derive(Debug, Clone)]
pub struct Policy {
    pub cpus: Vec<usize>,
    /// The frequency table, ascending (kHz).
    pub freqs: Vec<u32>,
    /// `policy->min` and `policy->max`: the limits (`scaling_max_freq` may lower `max`
    /// below the table's top, and need not be one of its frequencies; so may the cooling
    /// device's cap, the lower of the two being `max`, as frequency QoS aggregates them).
    pub min: u32,
    pub max: u32,
    /// `scaling_max_freq`, clamped to the table; the cooling device's cap and the hardware
    /// throttle's (the table's top when none).
    pub scaling_max: u32,
    pub cooling_max: u32,
    pub hw_max: u32,
    pub cur: u32,
    /// `cpuinfo.transition_latency` (ns, 0 if unknown).
    pub transition_latency: Ns,
    /// `TICK_NSEC`.
    pub tick_ns: Ns,
}

impl Policy {
    /// The policy of domain `dom`, its `scaling_max_freq` `max_khz` clamped to the table
    /// (`cpufreq_verify_within_cpu_limits`), at the highest frequency it allows.
    pub fn new(dom: &FreqDomain, tick_ns: Ns, max_khz: u32) -> Policy {
        let freqs: Vec<u32> = dom.opps.iter().map(|o| o.khz).collect();
        let (lo, hi) = (freqs[0], *freqs.last().expect("a domain has OPPs"));
        let scaling_max = max_khz.clamp(lo, hi);
        let mut pol = Policy {
            cpus: dom.cpus.clone(),
            min: lo,
            max: scaling_max,
            scaling_max,
            cooling_max: hi,
            hw_max: hi,
            cur: hi,
            freqs,
            transition_latency: dom.transition_latency,
            tick_ns,
        };
        pol.cur = pol.resolve(hi, Relation::H);
        pol
    }

    /// `policy->cpuinfo.max_freq`, the table's top: the frequency capacities and the
    /// frequency scale refer to (`arch_scale_freq_ref`).
    #[inline]
    pub fn cpuinfo_max(&self) -> u32 {
        self.freqs[self.freqs.len() - 1]
    }

    /// The table frequency for `target` under `rel`, within [min, max]
    /// (`cpufreq_frequency_table_target` after `clamp_val`).
    pub fn resolve(&self, target: u32, rel: Relation) -> u32 {
        let t = target.clamp(self.min, self.max);
        let mut ok = self
            .freqs
            .iter()
            .copied()
            .filter(|f| (self.min..=self.max).contains(f));
        let highest = ok.clone().next_back().unwrap_or(self.min);
        match rel {
            Relation::L => ok.find(|&f| f >= t).unwrap_or(highest),
            Relation::H => ok.rev().find(|&f| f <= t).unwrap_or(self.min),
            // cpufreq_table_find_index_ac: the higher one only if strictly closer.
            Relation::C => ok
                .min_by_key(|&f| (f.abs_diff(t), f > t))
                .unwrap_or(highest),
        }
    }

    /// `__cpufreq_driver_target`: the new frequency, if it differs from the current one.
    pub fn target(&self, target: u32, rel: Relation) -> Option<u32> {
        Some(self.resolve(target, rel)).filter(|&f| f != self.cur)
    }

    /// `cpufreq_policy_transition_delay_us` (6.12): 1.5 × the transition latency, else
    /// 1 ms.
    pub fn transition_delay_us(&self) -> u64 {
        match self.transition_latency / 1000 {
            0 => 1000,
            us => us + us / 2,
        }
    }

    /// `CPUFREQ_DBS_MIN_SAMPLING_INTERVAL`: two ticks, in µs.
    pub fn min_sampling_us(&self) -> u64 {
        2 * self.tick_ns / 1000
    }
}

/// Where the scheduler calls into cpufreq.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    /// `cpufreq_update_util`: the root cfs_rq's PELT signals changed (`cfs_rq_util_change`).
    UtilChange,
    /// A task was enqueued on wakeup (the 2015 prototype's request point).
    Wakeup,
    /// A task was dequeued to sleep.
    Sleep,
    /// The tick hit a busy CPU.
    Tick,
}

/// What a governor reads of one CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuSample {
    /// `cpu_util_cfs_boost`.
    pub util_boost: u64,
    /// The root cfs_rq's util_avg (the 2015 prototype's `get_cpu_usage` input).
    pub util_avg: u64,
    /// `arch_scale_cpu_capacity`.
    pub capacity: u64,
    /// CPU idle time since boot (ns), the current idle period included.
    pub idle_ns: Ns,
    /// Times the CPU entered idle (`tick_nohz_get_idle_calls_cpu`).
    pub idle_calls: u64,
    /// Fair tasks queued, the running one included.
    pub nr_running: u32,
    /// `uclamp_rq_get(rq, UCLAMP_MIN / UCLAMP_MAX)`.
    pub uclamp_min: u64,
    pub uclamp_max: u64,
    /// `uclamp_rq_is_capped`: the CPU's utilization reaches its max clamp.
    pub uclamp_capped: bool,
    /// `!uclamp_is_used() && rt_rq_is_runnable`: an RT task asks for the highest OPP.
    pub rt_max: bool,
    /// `cpu_bw_dl`: the active deadline bandwidth, in capacity units.
    pub dl_bw: u64,
    /// `cpu_util_rt`, `cpu_util_dl`: avg_rt and avg_dl's util_avg.
    pub util_rt: u64,
    pub util_dl: u64,
}

impl Default for CpuSample {
    /// An idle CPU of capacity 1024, unclamped.
    fn default() -> CpuSample {
        CpuSample {
            util_boost: 0,
            util_avg: 0,
            capacity: 1024,
            idle_ns: 0,
            idle_calls: 0,
            nr_running: 0,
            uclamp_min: 0,
            uclamp_max: 1024,
            uclamp_capped: false,
            rt_max: false,
            dl_bw: 0,
            util_rt: 0,
            util_dl: 0,
        }
    }
}

/// A governor: the frequency it sets when it takes a policy over, and its answer to the
/// scheduler's hooks on one of the policy's CPUs.
pub trait Governor {
    /// The frequency at takeover: by default the policy's current one.
    fn start(&mut self, pol: &Policy, _now: Ns, _sample: &dyn Fn(usize) -> CpuSample) -> u32 {
        pol.cur
    }
    /// Does it hook the scheduler's `cpufreq_update_util` (`cpufreq_add_update_util_hook`)?
    /// A fixed-frequency governor does not: the hook finds nothing on its CPUs.
    fn update_util_hook(&self) -> bool {
        false
    }
    /// `limits`, after the policy's limits changed: the frequency to set, if any
    /// (`cpufreq_policy_apply_limits`: the current one brought under the new `max`).
    fn limits(&mut self, pol: &Policy) -> Option<u32> {
        (pol.cur > pol.max).then(|| pol.resolve(pol.max, Relation::H))
    }
    /// A fixed-frequency governor never answers.
    fn update(
        &mut self,
        _pol: &Policy,
        _cpu: usize,
        _hook: Hook,
        _now: Ns,
        _sample: &dyn Fn(usize) -> CpuSample,
    ) -> Option<u32> {
        None
    }
}

/// The governor `name` for policy `pol`, with the run's tunables.
pub fn governor(name: GovName, tun: &Tunables, pol: &Policy) -> Result<Box<dyn Governor>, String> {
    Ok(match name {
        GovName::Performance => Box::new(performance::Performance),
        GovName::Powersave => Box::new(powersave::Powersave),
        GovName::Userspace => Box::new(userspace::Userspace::new(tun.userspace.khz, pol)?),
        GovName::Schedutil => Box::new(schedutil::Schedutil::new(tun, pol)),
        GovName::Ondemand => Box::new(ondemand::Ondemand::new(tun, pol)?),
        GovName::Conservative => Box::new(conservative::Conservative::new(tun, pol)?),
        GovName::SchedDvfs2015 => {
            Box::new(sched_dvfs::SchedDvfs::new(pol, tun.sched_dvfs.throttle_us))
        }
    })
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::*;

    /// hikey's A53 table (208/432/729/960/1200 MHz, 500 µs latency), 4 ms tick.
    pub fn hikey(cpus: usize) -> Policy {
        Policy {
            cpus: (0..cpus).collect(),
            freqs: vec![208_000, 432_000, 729_000, 960_000, 1_200_000],
            min: 208_000,
            max: 1_200_000,
            scaling_max: 1_200_000,
            cooling_max: 1_200_000,
            hw_max: 1_200_000,
            cur: 1_200_000,
            transition_latency: 500_000,
            tick_ns: 4_000_000,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::hikey;
    use super::*;

    #[test]
    fn only_the_governors_that_follow_utilization_hook_the_scheduler() {
        // cpufreq_add_update_util_hook: schedutil (sugov_start), ondemand and conservative
        // (cpufreq_dbs_governor_start), and the 2015 prototype; performance, powersave and
        // userspace set a frequency and register nothing.
        let tun = crate::sched::features::Features::preset(crate::kernel::Kernel::V6_12).cpufreq;
        for (name, g) in tunables::GOVERNORS {
            let gov = governor(g, &tun, &hikey(1)).unwrap();
            let follows = !matches!(
                g,
                GovName::Performance | GovName::Powersave | GovName::Userspace
            );
            assert_eq!(gov.update_util_hook(), follows, "{name}");
        }
    }

    #[test]
    fn relations_pick_as_the_table_search_does() {
        let p = hikey(1);
        assert_eq!(p.resolve(433_000, Relation::L), 729_000);
        assert_eq!(p.resolve(432_000, Relation::L), 432_000);
        assert_eq!(p.resolve(728_999, Relation::H), 432_000);
        assert_eq!(p.resolve(1, Relation::L), 208_000);
        assert_eq!(p.resolve(5_000_000, Relation::H), 1_200_000);
        // 580500 is equidistant from 432000 and 729000: the lower one.
        assert_eq!(p.resolve(580_500, Relation::C), 432_000);
        assert_eq!(p.resolve(580_501, Relation::C), 729_000);
        assert_eq!(p.target(1_200_000, Relation::L), None);
    }

    #[test]
    fn transition_delay_is_one_and_a_half_latencies() {
        assert_eq!(hikey(1).transition_delay_us(), 750);
        let mut p = hikey(1);
        p.transition_latency = 0;
        assert_eq!(p.transition_delay_us(), 1000);
        assert_eq!(p.min_sampling_us(), 8000);
    }
}
