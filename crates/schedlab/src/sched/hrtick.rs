//! HRTICK and HRTICK_DL (kernel/sched/core.c `hrtick_start`, fair.c `hrtick_start_fair`,
//! deadline.c `start_hrtick_dl`; on by default in 7.x): an hrtimer ends the running fair
//! task's slice at its virtual deadline, and a deadline task's budget at its remaining
//! runtime, where without them each ends at the first tick past. Simplified: the timer fires
//! on its expiry (no interrupt entry latency), and one that expires while an RT task runs
//! does nothing (the kernel calls `task_tick_rt`).

use super::class::{Class, Env};
use super::hooks::{Hooks, SchedTimer};
use super::ops::Op;
use super::rq::Rq;
use super::Sched;
use crate::time::Ns;

/// `hrtick_start`'s floor: shorter slices "just don't make sense and can cause timer DoS".
const MIN_DELAY_NS: Ns = 10_000;
/// `hrtick_needs_rearm`: a queued timer within this of the new expiry is left as it is.
const REARM_SLACK_NS: Ns = 5_000;

/// `hrtick_start`: arm the CPU's hrtick `delay` ns from now.
pub fn start(rq: &mut Rq, env: &mut Env, delay: Ns) {
    let at = env.hooks.now() + delay.max(MIN_DELAY_NS);
    if rq
        .hrtick
        .is_some_and(|queued| queued.abs_diff(at) <= REARM_SLACK_NS)
    {
        return;
    }
    rq.hrtick = Some(at);
    let cpu = env.hooks.cpu as u32;
    env.hooks.arm(at, SchedTimer::Hrtick { cpu });
}

/// `hrtimer_cancel` of the hrtick (`hrtick_schedule_exit` when the CPU goes idle).
pub fn cancel(rq: &mut Rq) {
    rq.hrtick = None;
}

impl Sched {
    /// `hrtick`: the running task's `task_tick(queued = 1)`: a fair task's slice is over
    /// (entity_tick at each level, then a resched); a deadline task's budget is charged.
    /// False when the timer was stale: cancelled, or armed again for another instant (an
    /// expiry is the arming it belongs to).
    pub(super) fn hrtick<H: Hooks>(&mut self, cpu: usize, h: &mut H) -> bool {
        let rq = &mut self.rqs[cpu];
        if rq.hrtick != Some(h.now()) {
            return false;
        }
        rq.hrtick = None;
        self.ops.add(cpu, Op::HrtimerIrq, 1);
        let Some((curr, class)) = rq.curr.map(|c| (c, self.tasks[c as usize].class)) else {
            return true;
        };
        self.update_rq_clock(cpu, h.now());
        let resched = match class {
            Class::Fair => {
                self.on_rq(cpu, h, |rq, env| {
                    super::fair::sched_class::entity_ticks(rq, env, curr)
                });
                true
            }
            Class::Deadline => self.on_rq(cpu, h, |rq, env| {
                super::deadline::sched_class::hrtick_tick_dl(rq, env, curr)
            }),
            _ => false,
        };
        if resched {
            self.resched_curr(cpu, h);
        }
        true
    }
}
