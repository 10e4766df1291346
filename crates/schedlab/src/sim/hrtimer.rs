//! Sleep timers (kernel/time/hrtimer.c): a fair task's sleep may end anywhere in [expiry,
//! expiry + timer_slack_ns] (`hrtimer_set_expires_range_ns`), an RT or deadline task's at its
//! expiry (no slack). A CPU's timer
//! interrupt comes at the earliest hard expiry of its timers, or at its tick, and runs every
//! timer in hard-expiry order until one whose soft expiry is still ahead
//! (`__hrtimer_run_queues`): sleeps that end close together on one CPU end together, and a
//! busy CPU's tick ends them early. Simplified: the scheduler's own hrtimers (deadline and
//! RT period timers) do not run these queues.

use crate::time::Ns;

/// A pending range timer.
#[derive(Debug, Clone, Copy)]
struct RangeTimer {
    soft: Ns,
    hard: Ns,
    task: u32,
    gen: u32,
}

/// Each CPU's pending range timers, in hard-expiry order (ties in arming order).
pub(super) struct HrTimers {
    cpus: Vec<Vec<RangeTimer>>,
}

impl HrTimers {
    pub(super) fn new(nr_cpus: usize) -> HrTimers {
        HrTimers {
            cpus: vec![Vec::new(); nr_cpus],
        }
    }

    /// `hrtimer_start_range_ns` on `cpu`: the sleep of `task` (wake generation `gen`).
    pub(super) fn start(&mut self, cpu: usize, soft: Ns, hard: Ns, task: u32, gen: u32) {
        let q = &mut self.cpus[cpu];
        let at = q.partition_point(|t| t.hard <= hard);
        q.insert(
            at,
            RangeTimer {
                soft,
                hard,
                task,
                gen,
            },
        );
    }

    /// The next timer `__hrtimer_run_queues` runs on `cpu` at `now`, taken off its queue:
    /// the earliest by hard expiry, if its soft expiry has come.
    pub(super) fn expired(&mut self, cpu: usize, now: Ns) -> Option<(u32, u32)> {
        let q = &mut self.cpus[cpu];
        let first = q.first().filter(|t| t.soft <= now)?;
        let (task, gen) = (first.task, first.gen);
        q.remove(0);
        Some((task, gen))
    }
}
