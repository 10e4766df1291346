//! One task alone on one CPU, updated where the kernel updates it, without the event loop.
//!
//! This is the workbench for PELT and util_est: the rq's clock (either invariance
//! scheme), the task's `sched_avg` and its util_est, moved by wakeup, tick and sleep.
//! Simplification: the task is the only thing on the rq, so the rq's cfs util_sum used by
//! `update_idle_rq_clock_pelt` equals the task's (the cfs_rq is updated at the same
//! instants with the same running flag) and the rt/dl sums are zero.

pub mod periodic;
pub mod ramp;
pub mod replay;

use crate::error::InputError;
use crate::sched::clock_pelt::{CpuScale, Invariance, RqClock};
use crate::sched::pelt::{update_load_avg_se, SchedAvg};
use crate::sched::util_est::{UtilEst, UtilEstForm, UtilEstSample};
use crate::time::Ns;

/// The kernel update point a sample was taken at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Wakeup,
    Tick,
    Sleep,
}

impl Event {
    pub fn name(self) -> &'static str {
        match self {
            Event::Wakeup => "wakeup",
            Event::Tick => "tick",
            Event::Sleep => "sleep",
        }
    }
}

/// The task's signals just after an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub now: Ns,
    pub event: Event,
    /// The `now` PELT saw (rq_clock_pelt, or clock_task under legacy).
    pub pelt_now: Ns,
    pub avg: SchedAvg,
    pub util_est: u32,
}

/// What the CPU and kernel look like to the lone task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SoloConfig {
    pub invariance: Invariance,
    pub scale: CpuScale,
    pub util_est: UtilEstForm,
    pub util_est_sample: UtilEstSample,
    /// se_weight(se): the task's scaled-down load weight (1024 for nice 0).
    pub weight: u64,
}

/// Largest accepted load weight: a group entity's tops out at MAX_SHARES = 2^18 (scaled down).
pub const MAX_WEIGHT: u64 = 1 << 18;

/// A load weight schedlab accepts (`--weight`).
pub fn check_weight(weight: u64) -> Result<(), InputError> {
    if weight == 0 || weight > MAX_WEIGHT {
        return Err(InputError::option(
            "weight",
            format!("{weight} is not a load weight in 1..{MAX_WEIGHT}"),
        ));
    }
    Ok(())
}

impl SoloConfig {
    /// Capacity and frequency scale in 1..1024, and a valid weight.
    pub fn check(&self) -> Result<(), InputError> {
        let scales = [
            ("capacity", self.scale.cpu),
            ("freq_ratio", self.scale.freq),
        ];
        if let Some((name, v)) = scales.iter().find(|(_, v)| !(1..=1024).contains(v)) {
            return Err(InputError::option(
                *name,
                format!("scale {v}/1024 is not in 1..1024"),
            ));
        }
        check_weight(self.weight)
    }
}

/// The rq and its lone task.
#[derive(Debug, Clone)]
pub struct Solo {
    config: SoloConfig,
    clock: RqClock,
    avg: SchedAvg,
    util_est: UtilEst,
}

impl Solo {
    /// A task that has never run, asleep at `now` with all signals zero.
    pub fn new(config: SoloConfig, now: Ns) -> Solo {
        Solo {
            config,
            clock: RqClock::new(config.invariance, config.scale, now),
            avg: SchedAvg {
                last_update_time: now,
                ..SchedAvg::default()
            },
            util_est: config.util_est.initial(),
        }
    }

    /// `update_load_avg` of the task entity at the rq's PELT time.
    fn update_se(&mut self, on_rq: bool) {
        let now = self.clock.pelt_now();
        let scale = self.clock.contrib_scale();
        if update_load_avg_se(
            now,
            &mut self.avg,
            on_rq,
            on_rq as u64,
            on_rq,
            self.config.weight,
            scale,
        ) {
            self.util_est.util_change();
        }
    }

    fn util_est_update(&mut self) {
        let (util, runnable) = (self.avg.util_avg, self.avg.runnable_avg);
        let cap = self
            .config
            .util_est_sample
            .capacity_rule(self.config.scale.cpu);
        self.util_est.update(util, runnable, cap, true);
    }

    fn sample(&self, now: Ns, event: Event) -> Sample {
        Sample {
            now,
            event,
            pelt_now: self.clock.pelt_now(),
            avg: self.avg,
            util_est: self.util_est.task_util_est(),
        }
    }

    /// try_to_wake_up → enqueue_task_fair: the clock moves with the rq idle, then the
    /// entity is updated as not yet on_rq (the interval that ends was sleep).
    pub fn wakeup(&mut self, now: Ns) -> Sample {
        self.clock.update(now, true);
        self.update_se(false);
        self.sample(now, Event::Wakeup)
    }

    /// entity_tick while the task runs.
    pub fn tick(&mut self, now: Ns) -> Sample {
        self.clock.update(now, false);
        self.update_se(true);
        self.sample(now, Event::Tick)
    }

    /// dequeue_task_fair(DEQUEUE_SLEEP), then set_next_task_idle.
    pub fn sleep(&mut self, now: Ns) -> Sample {
        self.clock.update(now, false);
        let before = self.config.util_est_sample.before_dequeue_update();
        if before {
            self.util_est_update();
        }
        self.update_se(true);
        if !before {
            self.util_est_update();
        }
        self.clock.update_idle(self.avg.util_sum);
        self.sample(now, Event::Sleep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Ns = 1_000_000;

    #[test]
    fn util_est_samples_a_sleeper_as_last_updated_from_6_12_and_as_it_sleeps_from_7_2() {
        // A 2 ms / 10 ms task on a full-capacity CPU, no tick inside its runs: its only
        // PELT updates are at the wakeup's enqueue and at the sleep's dequeue. Its util
        // rises period after period, so each sample replaces the EWMA (increases are taken
        // at once). 6.12's dequeue_task_fair samples before the dequeue's update: the util
        // the wakeup left. ≤6.11's dequeue_task_fair and 7.2's update_load_avg sample after
        // it: the util at the sleep, 2 ms of running higher.
        for (sample, at_sleep) in [
            (UtilEstSample::AfterDequeue, true),
            (UtilEstSample::BeforeDequeue, false),
            (UtilEstSample::LoadAvg, true),
        ] {
            let config = SoloConfig {
                invariance: Invariance::ClockPelt,
                scale: CpuScale::MAX,
                util_est: UtilEstForm::Ewma,
                util_est_sample: sample,
                weight: 1024,
            };
            let mut solo = Solo::new(config, 0);
            for k in 0..5 {
                let woken = solo.wakeup(k * 10 * MS);
                let slept = solo.sleep(k * 10 * MS + 2 * MS);
                assert!(slept.avg.util_avg > woken.avg.util_avg, "{sample:?}");
                let want = [woken, slept][at_sleep as usize].avg.util_avg;
                assert_eq!(slept.util_est as u64, want, "{sample:?}, period {k}");
            }
        }
    }
}
