//! The time PELT runs on, under either scale-invariance scheme (seed 000).
//!
//! `ClockPelt` (Linux 5.1+, pelt.h `update_rq_clock_pelt`): while something runs, the rq's
//! clock_pelt advances by the elapsed time scaled by CPU capacity and then by frequency;
//! when the rq is idle it resyncs with clock_task, and idle time "stolen" by a saturated
//! rq is written off as lost_idle_time. Contributions are not scaled.
//!
//! `Legacy` (4.12–5.0, `accumulate_sum` of that era): PELT runs on clock_task and each
//! contribution is scaled by frequency, and util's additionally by CPU capacity. The
//! runnable signal keeps its 5.7+ unweighted form, scaled like load (runnable_load_avg
//! itself is not modelled).

use crate::sched::pelt::{cap_scale, ContribScale, LOAD_AVG_MAX, SCHED_CAPACITY_SHIFT};
use crate::time::Ns;

/// Which scale-invariance scheme PELT uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invariance {
    ClockPelt,
    Legacy,
}

impl Invariance {
    pub const ALL: [Invariance; 2] = [Invariance::ClockPelt, Invariance::Legacy];

    pub fn name(self) -> &'static str {
        match self {
            Invariance::ClockPelt => "clock_pelt",
            Invariance::Legacy => "legacy",
        }
    }

    pub fn from_name(name: &str) -> Option<Invariance> {
        Invariance::ALL.into_iter().find(|i| i.name() == name)
    }
}

/// A CPU's scale factors: `arch_scale_cpu_capacity` and `arch_scale_freq_capacity`
/// (both in 1/1024ths: capacity_orig, and cur_freq·1024/max_freq).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuScale {
    pub cpu: u64,
    pub freq: u64,
}

impl CpuScale {
    pub const MAX: CpuScale = CpuScale {
        cpu: 1024,
        freq: 1024,
    };
}

/// Utilization sum at which an rq counts as saturated when it goes idle:
/// `((LOAD_AVG_MAX - 1024) << SCHED_CAPACITY_SHIFT) - LOAD_AVG_MAX` (`update_idle_rq_clock_pelt`).
pub const LOST_IDLE_THRESHOLD: u32 = ((LOAD_AVG_MAX - 1024) << SCHED_CAPACITY_SHIFT) - LOAD_AVG_MAX;

/// An rq's clocks as PELT sees them: clock_task, clock_pelt and lost_idle_time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RqClock {
    pub invariance: Invariance,
    pub scale: CpuScale,
    pub clock_task: Ns,
    pub clock_pelt: Ns,
    pub lost_idle_time: Ns,
}

impl RqClock {
    pub fn new(invariance: Invariance, scale: CpuScale, now: Ns) -> RqClock {
        RqClock {
            invariance,
            scale,
            clock_task: now,
            clock_pelt: now,
            lost_idle_time: 0,
        }
    }

    /// `update_rq_clock_task` → `update_rq_clock_pelt`: advance to `now` with the
    /// rq running a task (`curr_is_idle == false`) or the idle task.
    #[inline]
    pub fn update(&mut self, now: Ns, curr_is_idle: bool) {
        let delta = now - self.clock_task;
        self.clock_task = now;
        if curr_is_idle {
            self.clock_pelt = self.clock_task; // _update_idle_rq_clock_pelt
        } else {
            let delta = cap_scale(delta, self.scale.cpu);
            self.clock_pelt += cap_scale(delta, self.scale.freq);
        }
    }

    /// `update_idle_rq_clock_pelt`, when the rq is about to run idle: `rq_util_sum` is
    /// cfs + rt + dl util_sum (u32, as the kernel adds them).
    #[inline]
    pub fn update_idle(&mut self, rq_util_sum: u32) {
        if rq_util_sum >= LOST_IDLE_THRESHOLD {
            self.lost_idle_time += self.clock_task - self.clock_pelt;
        }
        self.clock_pelt = self.clock_task;
    }

    /// The `now` of every PELT update on this rq: `rq_clock_pelt` (5.1+) or
    /// `rq_clock_task` (legacy).
    #[inline(always)]
    pub fn pelt_now(&self) -> Ns {
        match self.invariance {
            Invariance::ClockPelt => self.clock_pelt - self.lost_idle_time,
            Invariance::Legacy => self.clock_task,
        }
    }

    /// How contributions are scaled under this scheme.
    #[inline(always)]
    pub fn contrib_scale(&self) -> ContribScale {
        match self.invariance {
            Invariance::ClockPelt => ContribScale::NONE,
            Invariance::Legacy => ContribScale {
                freq: self.scale.freq,
                cpu: self.scale.cpu,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Ns = 1_000_000;

    #[test]
    fn threshold_is_the_kernels() {
        assert_eq!(LOST_IDLE_THRESHOLD, 46718 * 1024 - 47742);
        assert_eq!(LOST_IDLE_THRESHOLD, 47_791_490);
    }

    #[test]
    fn busy_time_is_scaled_by_capacity_then_frequency() {
        let mut rq = RqClock::new(
            Invariance::ClockPelt,
            CpuScale {
                cpu: 1000,
                freq: 1000,
            },
            0,
        );
        rq.update(1000, false);
        // cap_scale(1000, 1000) = 976, cap_scale(976, 1000) = 953 (two truncations).
        assert_eq!(rq.clock_pelt, 953);
        assert_eq!(rq.pelt_now(), 953);
        assert_eq!(rq.contrib_scale(), ContribScale::NONE);
    }

    #[test]
    fn idle_resyncs_and_a_saturated_rq_writes_idle_time_off() {
        let half = CpuScale {
            cpu: 512,
            freq: 1024,
        };
        let mut rq = RqClock::new(Invariance::ClockPelt, half, 0);
        rq.update(10 * MS, false);
        assert_eq!(rq.pelt_now(), 5 * MS);
        // Not saturated: the stolen 5 ms come back as idle time.
        let mut unsaturated = rq;
        unsaturated.update_idle(LOST_IDLE_THRESHOLD - 1);
        assert_eq!(unsaturated.pelt_now(), 10 * MS);
        // Saturated: they are lost, and PELT time carries on from 5 ms.
        rq.update_idle(LOST_IDLE_THRESHOLD);
        assert_eq!((rq.lost_idle_time, rq.pelt_now()), (5 * MS, 5 * MS));
        rq.update(20 * MS, true);
        assert_eq!((rq.clock_pelt, rq.pelt_now()), (20 * MS, 15 * MS));
    }

    #[test]
    fn legacy_runs_on_clock_task_and_scales_contributions() {
        let scale = CpuScale {
            cpu: 512,
            freq: 768,
        };
        let mut rq = RqClock::new(Invariance::Legacy, scale, 0);
        rq.update(10 * MS, false);
        assert_eq!(rq.pelt_now(), 10 * MS);
        assert_eq!(
            rq.contrib_scale(),
            ContribScale {
                freq: 768,
                cpu: 512
            }
        );
    }

    #[test]
    fn names_round_trip() {
        for i in Invariance::ALL {
            assert_eq!(Invariance::from_name(i.name()), Some(i));
        }
        assert_eq!(Invariance::from_name("pelt"), None);
    }
}
