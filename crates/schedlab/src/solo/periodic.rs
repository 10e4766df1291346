//! A periodic task alone on a CPU: wakes every `period`, runs `run` of work, sleeps.
//!
//! `run` is work calibrated at capacity 1024 and maximum frequency (DESIGN.md), so on a
//! CPU of scale (c, f) it takes run·1024/c·1024/f of wall-clock time. The entity is
//! updated at wakeup, at each tick while it runs, and at sleep; the run ends with one more
//! wakeup, so that the last period shows both the settled maximum (at sleep) and minimum
//! (at wakeup) of util_avg, beside seed 000's closed-form bounds.

use super::{Sample, Solo, SoloConfig};
use crate::error::InputError;
use crate::sched::clock_pelt::Invariance;
use crate::sched::pelt::{LOAD_AVG_PERIOD, SCHED_CAPACITY_SCALE};
use crate::time::{ns_to_periods, Ns};

/// The scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Periodic {
    pub config: SoloConfig,
    pub run: Ns,
    pub period: Ns,
    pub duration: Ns,
    pub tick: Ns,
}

/// Settled minimum and maximum of util_avg, measured and closed-form.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub min: f64,
    pub max: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PeriodicRun {
    pub samples: Vec<Sample>,
    /// Wall-clock time the task runs each period.
    pub run_wall: Ns,
    /// util_avg over the last period.
    pub settled: Bounds,
    /// Seed 000's closed form for the same task.
    pub closed_form: Bounds,
}

impl Periodic {
    /// Wall-clock busy time per period: the work divided by the CPU's speed, rounded up.
    pub fn run_wall(&self) -> Ns {
        let speed = self.config.scale.cpu * self.config.scale.freq; // in 1/2^20ths
        (self.run as u128 * (1u128 << 20)).div_ceil(speed as u128) as Ns
    }

    fn check(&self) -> Result<(), InputError> {
        self.config.check()?;
        let positive = [
            ("run", self.run),
            ("period", self.period),
            ("tick", self.tick),
        ];
        if let Some((name, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(InputError::option(*name, "must be greater than zero"));
        }
        if self.run_wall() >= self.period {
            return Err(InputError::option(
                "run",
                format!(
                    "{} ns of work takes {} ns at this capacity and frequency, not less than the period ({} ns): the task would never sleep",
                    self.run,
                    self.run_wall(),
                    self.period
                ),
            ));
        }
        if self.duration < self.period {
            return Err(InputError::option(
                "duration",
                "must cover at least one period",
            ));
        }
        Ok(())
    }

    /// Simulate the task; samples are in time order.
    pub fn simulate(&self) -> Result<PeriodicRun, InputError> {
        self.check()?;
        let run_wall = self.run_wall();
        let periods = self.duration.div_ceil(self.period);
        let mut solo = Solo::new(self.config, 0);
        let mut samples = Vec::new();
        for k in 0..periods {
            let wake = k * self.period;
            let sleep = wake + run_wall;
            samples.push(solo.wakeup(wake));
            let mut tick = (wake / self.tick + 1) * self.tick;
            while tick < sleep {
                samples.push(solo.tick(tick));
                tick += self.tick;
            }
            samples.push(solo.sleep(sleep));
        }
        let end = periods * self.period;
        samples.push(solo.wakeup(end));
        let settled = settled(&samples, end - self.period);
        Ok(PeriodicRun {
            samples,
            run_wall,
            settled,
            closed_form: self.closed_form(run_wall),
        })
    }

    /// Seed 000: U·(1−y^r)/(1−y^p)·y^i < util < U·(1−y^r)/(1−y^p), in PELT periods. With
    /// clock_pelt r is the work (invariant); with legacy r' is the wall-clock run and U is
    /// scaled by C, the CPU's capacity × frequency ratio.
    fn closed_form(&self, run_wall: Ns) -> Bounds {
        let y = 0.5f64.powf(1.0 / LOAD_AVG_PERIOD as f64);
        let full = SCHED_CAPACITY_SCALE as f64;
        let (u, r) = match self.config.invariance {
            Invariance::ClockPelt => (full, ns_to_periods(self.run)),
            Invariance::Legacy => {
                let c = (self.config.scale.cpu * self.config.scale.freq) as f64 / (full * full);
                (full * c, ns_to_periods(run_wall))
            }
        };
        let p = ns_to_periods(self.period);
        let max = u * (1.0 - y.powf(r)) / (1.0 - y.powf(p));
        Bounds {
            min: max * y.powf(p - r),
            max,
        }
    }
}

/// Min and max of util_avg over the samples from `since` on.
fn settled(samples: &[Sample], since: Ns) -> Bounds {
    let last = samples
        .iter()
        .filter(|s| s.now >= since)
        .map(|s| s.avg.util_avg as f64);
    let (min, max) = last.fold((f64::INFINITY, 0.0f64), |(lo, hi), u| {
        (lo.min(u), hi.max(u))
    });
    Bounds { min, max }
}
