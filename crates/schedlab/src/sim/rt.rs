//! The engine's side of rt.c: the period timer of RT throttling (`sched_rt_period_timer`).
//! Simplified: the timer runs from boot every `sched_rt_period_us` while RT threads live,
//! where the kernel starts it at the first RT activity and stops it once the CPUs idle.

use super::event::Ev;
use super::task::State;
use super::Sim;
use crate::sched::class::Class;

impl Sim {
    fn rt_threads_live(&self) -> bool {
        self.tasks
            .iter()
            .any(|t| t.class == Class::Rt && t.state != State::Dead)
    }

    /// Arm the next period end, when RT throttling applies.
    pub(super) fn arm_rt_period(&mut self) {
        if self.feat.rt_throttle().is_some() && self.rt_threads_live() {
            let at = self.now + self.feat.rt_period_us * 1000;
            self.queue.push(at, self.now, Ev::RtPeriod);
        }
    }

    /// `do_sched_rt_period_timer`: every rq pays back one period's budget; an rq back under
    /// it runs its RT tasks again.
    pub(super) fn rt_period_timer(&mut self) -> bool {
        for cpu in 0..self.rqs.len() {
            self.update_rq_clock(cpu);
            if self.rqs[cpu].rt.period_timer() {
                self.schedule(cpu);
            }
        }
        self.arm_rt_period();
        true
    }
}

#[cfg(test)]
mod tests;
