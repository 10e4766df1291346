//! The root domain's overutilized flag (fair.c, 6.12): while some CPU's utilization does
//! not fit it, energy-aware placement stands aside and the load balancer balances as on any
//! other machine. A CPU raises the flag when a fair task is enqueued there or ticks
//! (`enqueue_task_fair`, `task_tick_fair`); the root domain's periodic balance sets or clears
//! it from every CPU.

use super::capacity::util_fits_cpu;
use super::{cpu_util, CfsRq};
use crate::sched::class::Env;
use crate::sched::features::Feat;
use crate::sched::hooks::Hooks;
use crate::sched::rq::Rq;
use crate::sched::uclamp::{UCLAMP_MAX, UCLAMP_MIN};
use crate::sched::Sched;
use crate::tracepoint::Tracepoint;

/// `cpu_overutilized` with EAS on: the CFS utilization of `cpu` (runqueue `rq`, root
/// cfs_rq `cfs`) does not fit it, the runqueue's clamps counted.
fn overutilized(cpu: usize, rq: &Rq, cfs: &CfsRq, uclamp_used: bool, util_est: bool) -> bool {
    let util = cpu_util::cpu_util(cpu, cfs, rq.capacity, None, None, false, util_est);
    let (min, max) = (rq.uclamp.get(UCLAMP_MIN), rq.uclamp.get(UCLAMP_MAX));
    util_fits_cpu(util, min as u64, max as u64, rq, uclamp_used) == 0
}

/// `check_update_overutilized_status` on the runqueue of a class operation: an overutilized
/// CPU raises the flag (`env.rd_overutilized` is there only with EAS).
pub(super) fn check_update_overutilized_status(rq: &Rq, env: &mut Env) {
    if let Some(flag) = env.rd_overutilized.filter(|f| !f.get()) {
        let cpu = env.hooks.cpu;
        let util_est = env.feat.has(Feat::UtilEst);
        if overutilized(cpu, rq, &env.cfs_rqs[cpu], env.uclamp_used, util_est) {
            flag.set(true);
            if env.hooks.tracing {
                let task = env.hooks.curr;
                env.hooks.trace(overutilized_tp(cpu, task, true));
            }
        }
    }
}

fn overutilized_tp(cpu: usize, task: Option<u32>, overutilized: bool) -> Tracepoint {
    Tracepoint::Overutilized {
        cpu,
        task,
        overutilized,
    }
}

impl Sched {
    /// `sched_energy_enabled`: the root domain has perf domains.
    pub fn energy_enabled(&self) -> bool {
        !self.pd.is_empty()
    }

    /// `cpu_overutilized` (never without EAS).
    pub(crate) fn cpu_overutilized(&self, cpu: usize) -> bool {
        let (rq, cfs) = (&self.rqs[cpu], &self.cfs_rqs[cpu]);
        self.energy_enabled() && overutilized(cpu, rq, cfs, self.uclamp_used, self.util_est_on())
    }

    /// `is_rd_overutilized`: always, without EAS.
    pub fn is_rd_overutilized(&self) -> bool {
        !self.energy_enabled() || self.overutilized.get()
    }

    /// `set_rd_overutilized` by `cpu`'s balance: the tracepoint fires at every call.
    pub(crate) fn set_rd_overutilized<H: Hooks>(&self, flag: bool, cpu: usize, h: &mut H) {
        if self.energy_enabled() {
            self.overutilized.set(flag);
            if h.tracing() {
                h.trace(&self.tasks, overutilized_tp(cpu, self.rqs[cpu].curr, flag));
            }
        }
    }
}
