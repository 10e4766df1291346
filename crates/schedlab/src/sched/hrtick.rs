//! HRTICK and HRTICK_DL (kernel/sched/core.c `hrtick_start`, fair.c `hrtick_start_fair`,
//! deadline.c `start_hrtick_dl`; on by default in 7.x): an hrtimer ends the running fair
//! task's slice at its virtual deadline, and a deadline task's budget at its remaining
//! runtime, where without them each ends at the first tick past. When `schedule()` arms it
//! is `--set sched.hrtick_arm`. The timer calls the running task's `task_tick` whatever armed
//! it: under 7.1+, where only going idle cancels it, a fair task's hrtick that expires after
//! an RR task took the CPU counts a tick of that task's slice. The machine delivers the
//! expiry's interrupt (`Sched::timer`): at once, or as late as an emulated vCPU takes a
//! tick's.

use super::class::{Class, Env, SchedClass};
use super::features::Feat;
use super::hooks::{Hooks, SchedTimer};
use super::ops::Op;
use super::rq::Rq;
use super::Sched;
use crate::time::Ns;

/// When `schedule()` arms the hrtick of the task it picks (`--set sched.hrtick_arm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HrtickArm {
    /// ≤ 7.0: `__schedule` cancels the hrtick first (`hrtick_clear`), and the pick starts it
    /// at once: the slice counts from the pick, as the task's runtime does.
    Pick,
    /// 7.1+ (`hrtick_schedule_enter`/`_exit`): the pick only notes the delay; the timer
    /// starts at the end of `schedule()`, once the switch is done, so each slice runs the
    /// switch's kernel time longer than its delay. It is cancelled only on going idle.
    ScheduleExit,
}

/// `hrtick_start`'s floor: shorter slices "just don't make sense and can cause timer DoS".
const MIN_DELAY_NS: Ns = 10_000;
/// `hrtick_needs_rearm`: a queued timer within this of the new expiry is left as it is.
const REARM_SLACK_NS: Ns = 5_000;

/// `hrtick_start`: arm the CPU's hrtick `delay` ns from now, or inside `schedule()` under
/// `schedule_exit` only note the delay.
pub fn start(rq: &mut Rq, env: &mut Env, delay: Ns) {
    let delay = delay.max(MIN_DELAY_NS);
    if rq.hrtick_sched {
        rq.hrtick_delay = Some(delay);
        return;
    }
    let cpu = env.hooks.cpu;
    if let Some(at) = rearm(rq, env.hooks.now() + delay) {
        env.hooks.arm(at, SchedTimer::Hrtick { cpu: cpu as u32 });
    }
}

/// `hrtick_needs_rearm`: the new expiry, unless a queued timer is within the slack of it.
fn rearm(rq: &mut Rq, at: Ns) -> Option<Ns> {
    if rq
        .hrtick
        .is_some_and(|queued| queued.abs_diff(at) <= REARM_SLACK_NS)
    {
        return None;
    }
    rq.hrtick = Some(at);
    Some(at)
}

/// `hrtimer_cancel` of the hrtick.
pub fn cancel(rq: &mut Rq) {
    rq.hrtick = None;
}

impl Sched {
    /// `hrtick_clear` (`pick`) or `hrtick_schedule_enter` (`schedule_exit`) as `__schedule`
    /// takes the runqueue.
    pub(super) fn hrtick_schedule_enter(&mut self, cpu: usize) {
        if !(self.feat.has(Feat::Hrtick) || self.feat.has(Feat::HrtickDl)) {
            return;
        }
        let rq = &mut self.rqs[cpu];
        match self.feat.hrtick_arm {
            HrtickArm::Pick => cancel(rq),
            HrtickArm::ScheduleExit => rq.hrtick_sched = true,
        }
    }

    /// `hrtick_schedule_exit` (`schedule_exit`): the hrtick the pick asked for starts now
    /// that the switch's kernel work is done; an idle CPU's is cancelled.
    pub(super) fn hrtick_schedule_exit<H: Hooks>(&mut self, cpu: usize, h: &mut H) {
        if !std::mem::take(&mut self.rqs[cpu].hrtick_sched) {
            return;
        }
        if let Some(delay) = self.rqs[cpu].hrtick_delay.take() {
            let at = h.now() + h.kernel_pending(self, cpu) + delay;
            if let Some(at) = rearm(&mut self.rqs[cpu], at) {
                h.arm(at, SchedTimer::Hrtick { cpu: cpu as u32 });
            }
        } else if self.rqs[cpu].curr.is_none() {
            cancel(&mut self.rqs[cpu]);
        }
    }

    /// `hrtick`: the running task's `task_tick(queued = 1)`: a fair task's slice is over
    /// (entity_tick at each level, then a resched); a deadline task's budget is charged; an
    /// RT task's is charged and an RR task's slice counts it as a tick.
    /// Its interrupt comes at or after the expiry (later on an emulated vCPU, whose task runs
    /// on meanwhile) and serves it if it is still armed and due: false when the timer was
    /// cancelled, or armed again for a later instant.
    pub(super) fn hrtick<H: Hooks>(&mut self, cpu: usize, h: &mut H) -> bool {
        let rq = &mut self.rqs[cpu];
        if rq.hrtick.is_none_or(|expiry| expiry > h.now()) {
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
            Class::Rt => self.on_rq(cpu, h, |rq, env| class.task_tick(rq, env, curr)),
        };
        if resched {
            self.resched_curr(cpu, h);
        }
        true
    }
}
