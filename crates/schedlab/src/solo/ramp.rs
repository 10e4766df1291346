//! Time for an always-running task to bring util_avg from zero to given values (seed 000's
//! time-to-reach table).
//!
//! The task starts with all signals at zero and runs forever; the entity is updated every
//! `step` of wall-clock time (a PELT period by default, or the tick). The answer for each
//! target is the first update at which util_avg reaches it. A target is "not reachable"
//! when the PELT clock has run HORIZON periods without reaching it: by then every
//! contribution older than 2016 periods has decayed to exactly zero (`decay_load`), so the
//! signal has settled.

use super::{Solo, SoloConfig};
use crate::error::InputError;
use crate::sched::pelt::LOAD_AVG_PERIOD;
use crate::time::{Ns, PELT_PERIOD_NS};

/// PELT periods after which an always-running signal has settled.
pub const HORIZON: u64 = LOAD_AVG_PERIOD as u64 * 64;
/// Refuse scenarios that would need more updates than this to settle.
const MAX_UPDATES: u64 = 100_000_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ramp {
    pub config: SoloConfig,
    pub targets: Vec<u64>,
    /// Wall-clock time between updates.
    pub step: Ns,
}

/// When util_avg first reached `target`, if it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Crossing {
    pub target: u64,
    pub reached_at: Option<Ns>,
}

impl Ramp {
    fn check(&self) -> Result<(), InputError> {
        self.config.check()?;
        if self.step == 0 {
            return Err(InputError::option("tick", "must be greater than zero"));
        }
        if let Some(t) = self.targets.iter().find(|&&t| t == 0 || t > 1024) {
            return Err(InputError::option(
                "to",
                format!("{t} is not a util_avg value in 1..1024"),
            ));
        }
        let speed = (self.config.scale.cpu * self.config.scale.freq) as u128; // 1/2^20ths
        let horizon_wall = (HORIZON as u128 * PELT_PERIOD_NS as u128) << 20;
        if horizon_wall / speed / self.step as u128 > MAX_UPDATES as u128 {
            return Err(InputError::option(
                "capacity/freq_ratio",
                "the CPU is so slow that the signal would need more than 10^8 updates to settle",
            ));
        }
        Ok(())
    }

    /// Run the task until every target is reached or the signal has settled.
    pub fn simulate(&self) -> Result<Vec<Crossing>, InputError> {
        self.check()?;
        let mut crossings: Vec<Crossing> = self
            .targets
            .iter()
            .map(|&target| Crossing {
                target,
                reached_at: None,
            })
            .collect();
        let mut solo = Solo::new(self.config, 0);
        solo.wakeup(0);
        let mut now = 0;
        let mut pending = crossings.len();
        while pending > 0 {
            now += self.step;
            let s = solo.tick(now);
            for c in crossings.iter_mut().filter(|c| c.reached_at.is_none()) {
                if s.avg.util_avg >= c.target {
                    c.reached_at = Some(now);
                    pending -= 1;
                }
            }
            if s.pelt_now >= HORIZON * PELT_PERIOD_NS {
                break;
            }
        }
        Ok(crossings)
    }
}
