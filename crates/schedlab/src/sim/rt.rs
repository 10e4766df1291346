//! The engine's side of rt.c: pushing and pulling RT tasks between CPUs (`push_rt_task`,
//! `pull_rt_task`), and the period timer of RT throttling (`sched_rt_period_timer`).
//! Simplified: the timer runs from boot every `sched_rt_period_us` while RT threads live,
//! where the kernel starts it at the first RT activity and stops it once the CPUs idle; and
//! a CPU pulls directly, where RT_PUSH_IPI has the overloaded CPUs push to it.

use super::event::Ev;
use super::task::State;
use super::Sim;
use crate::sched::class::Class;
use crate::sched::cpupri;

impl Sim {
    /// `task_woken_rt`: a woken RT task that will not run at once, behind an RT or deadline
    /// task it does not preempt (or that cannot move), is pushed away now.
    pub(super) fn task_woken_rt(&mut self, cpu: usize, id: u32) {
        let rq = &self.rqs[cpu];
        let prio = self.tasks[id as usize].prio();
        let push = rq.curr.is_some_and(|c| {
            let curr = &self.tasks[c as usize];
            c != id
                && !rq.need_resched
                && self.rts[id as usize].migratable
                && curr.class != Class::Fair // rt_task(curr): RT or deadline
                && (!self.rts[c as usize].migratable || curr.prio() <= prio)
        });
        if push {
            self.push_rt_tasks(cpu);
        }
    }

    /// `push_rt_tasks`.
    pub(super) fn push_rt_tasks(&mut self, cpu: usize) {
        while self.push_rt_task(cpu) {}
    }

    /// `push_rt_task`: move the most important pushable RT task of `cpu` to the CPU of
    /// lowest priority, if that runs less important work; true if one moved.
    fn push_rt_task(&mut self, cpu: usize) -> bool {
        let rq = &self.rqs[cpu];
        let Some(next) = rq.rt.pushable(&self.rts, rq.curr, |_| true) else {
            return false;
        };
        let prio = self.rts[next as usize].prio;
        if rq
            .curr
            .is_none_or(|c| (prio as i32) < self.tasks[c as usize].prio())
        {
            self.schedule(cpu);
            return false;
        }
        let Some(lowest) = self.find_lowest_rq(next, cpu) else {
            return false;
        };
        self.move_queued_task(next, cpu, lowest);
        self.schedule(lowest);
        true
    }

    /// `find_lowest_rq` for task `id`, with `this` the CPU searching, if the CPU found runs
    /// only less important RT work (`find_lock_lowest_rq`'s check).
    fn find_lowest_rq(&self, id: u32, this: usize) -> Option<usize> {
        let se = &self.rts[id as usize];
        let t = &self.tasks[id as usize];
        if !se.migratable {
            return None;
        }
        let fits = |c: usize| se.fits(self.rqs[c].capacity, self.asym);
        cpupri::find_lowest_rq(&self.rqs, se.prio, &t.allowed, t.cpu, this, fits)
            .filter(|&l| l != t.cpu && se.prio < self.rqs[l].rt.highest_prio_curr())
    }

    /// `pull_rt_task`: `this` is about to run less important work than the task that left
    /// it; take from each other CPU with pushable RT tasks its most important one allowed
    /// here, if more important than what `this` has and not about to preempt its own CPU.
    pub(super) fn pull_rt_task(&mut self, this: usize) {
        let n = self.rqs.len();
        if self.rqs.iter().all(|rq| rq.rt.nr_running == 0) {
            return; // rt_overload: no RT task queued anywhere
        }
        for src in (1..n).map(|i| (this + i) % n) {
            let rq = &self.rqs[src];
            let allowed = |p: u32| self.tasks[p as usize].allowed[this];
            let Some(p) = rq.rt.pushable(&self.rts, rq.curr, allowed) else {
                continue;
            };
            let prio = self.rts[p as usize].prio;
            let src_curr = rq.curr.map_or(i32::MAX, |c| self.tasks[c as usize].prio());
            if prio < self.rqs[this].rt.highest_prio_curr() && prio as i32 >= src_curr {
                self.move_queued_task(p, src, this);
            }
        }
    }

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
