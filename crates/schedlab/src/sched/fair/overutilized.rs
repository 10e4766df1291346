//! The root domain's overutilized flag (fair.c, 6.12): while some CPU's utilization does
//! not fit it, energy-aware placement stands aside and the load balancer balances as on any
//! other machine. A CPU raises the flag at enqueue and tick; the root domain's periodic
//! balance sets or clears it from every CPU.

use super::capacity::util_fits_cpu;
use crate::sched::uclamp::{UCLAMP_MAX, UCLAMP_MIN};
use crate::sched::Sched;

impl Sched {
    /// `sched_energy_enabled`: the root domain has perf domains.
    pub fn energy_enabled(&self) -> bool {
        !self.pd.is_empty()
    }

    /// `cpu_overutilized`: `cpu`'s CFS utilization does not fit it, its runqueue's clamps
    /// counted (never without EAS).
    pub(crate) fn cpu_overutilized(&self, cpu: usize) -> bool {
        if !self.energy_enabled() {
            return false;
        }
        let rq = &self.rqs[cpu];
        let (min, max) = (rq.uclamp.get(UCLAMP_MIN), rq.uclamp.get(UCLAMP_MAX));
        let util = self.cpu_util(cpu);
        let fits = util_fits_cpu(
            util,
            min as u64,
            max as u64,
            rq.cpu_capacity,
            rq.capacity,
            self.uclamp_used,
        );
        fits == 0
    }

    /// `is_rd_overutilized`: always, without EAS.
    pub fn is_rd_overutilized(&self) -> bool {
        !self.energy_enabled() || self.overutilized.get()
    }

    /// `set_rd_overutilized`.
    pub(crate) fn set_rd_overutilized(&self, flag: bool) {
        if self.energy_enabled() {
            self.overutilized.set(flag);
        }
    }

    /// `check_update_overutilized_status`: an overutilized CPU raises the flag.
    pub(crate) fn check_update_overutilized_status(&self, cpu: usize) {
        if !self.is_rd_overutilized() && self.cpu_overutilized(cpu) {
            self.set_rd_overutilized(true);
        }
    }
}
