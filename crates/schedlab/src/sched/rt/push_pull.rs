//! rt.c's SMP side: pushing and pulling RT tasks between CPUs (`push_rt_task`,
//! `pull_rt_task`), and the period timer of RT throttling (`sched_rt_period_timer`).
//! Simplified: the timer runs from boot every `sched_rt_period_us` while RT threads live,
//! where the kernel starts it at the first RT activity and stops it once the CPUs idle; and
//! a CPU pulls directly, where RT_PUSH_IPI has the overloaded CPUs push to it.

use crate::sched::cpupri;
use crate::sched::hooks::{Hooks, SchedTimer};
use crate::sched::task::TaskState;
use crate::sched::Sched;

impl Sched {
    /// `task_woken_rt`: a woken RT task that will not run at once, behind an RT or deadline
    /// task it does not preempt (or that cannot move), is pushed away now.
    pub(crate) fn task_woken_rt<H: Hooks>(&mut self, cpu: usize, id: u32, h: &mut H) {
        let rq = &self.rqs[cpu];
        let prio = self.tasks[id as usize].prio();
        let push = rq.curr.is_some_and(|c| {
            let curr = &self.tasks[c as usize];
            c != id
                && !rq.need_resched
                && self.rts[id as usize].migratable
                && curr.class.rt_task()
                && (!self.rts[c as usize].migratable || curr.prio() <= prio)
        });
        if push {
            self.push_rt_tasks(cpu, h);
        }
    }

    /// `push_rt_tasks`.
    pub(crate) fn push_rt_tasks<H: Hooks>(&mut self, cpu: usize, h: &mut H) {
        while self.push_rt_task(cpu, h) {}
    }

    /// `push_rt_task`: move the most important pushable RT task of `cpu` to the CPU of
    /// lowest priority, if that runs less important work; true if one moved.
    fn push_rt_task<H: Hooks>(&mut self, cpu: usize, h: &mut H) -> bool {
        let rq = &self.rqs[cpu];
        let Some(next) = rq.rt.pushable(&self.rts, rq.curr, |_| true) else {
            return false;
        };
        let prio = self.rts[next as usize].prio;
        if rq
            .curr
            .is_none_or(|c| (prio as i32) < self.tasks[c as usize].prio())
        {
            self.resched_curr(cpu, h);
            return false;
        }
        let Some(lowest) = self.find_lowest_rq(next, cpu) else {
            return false;
        };
        self.move_queued_task(next, (cpu, lowest), cpu, h);
        self.resched_curr(lowest, h);
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
        cpupri::find_lowest_rq(&self.rqs, se.prio, &t.cpus_mask, t.cpu, this, fits)
            .filter(|&l| l != t.cpu && se.prio < self.rqs[l].rt.highest_prio_curr())
    }

    /// `balance_rt`: after an RT or deadline task `prev` that left the queue, this CPU pulls
    /// RT tasks more important than any it has (`need_pull_rt_task`).
    pub(crate) fn balance_rt<H: Hooks>(&mut self, cpu: usize, prev: u32, h: &mut H) {
        if !self.rts[prev as usize].on_rq
            && (self.rqs[cpu].rt.highest_prio_curr() as i32) > self.tasks[prev as usize].prio()
        {
            self.pull_rt_task(cpu, h);
        }
    }

    /// `switched_from_rt`: a CPU left with no RT task pulls one. True when one came.
    pub(crate) fn switched_from_rt<H: Hooks>(&mut self, cpu: usize, h: &mut H) -> bool {
        if self.rqs[cpu].rt.nr_running != 0 {
            return false;
        }
        self.pull_rt_task(cpu, h);
        self.rqs[cpu].rt.nr_running > 0
    }

    /// `pull_rt_task`: `this` is about to run less important work than the task that left
    /// it; take from each other CPU with pushable RT tasks its most important one allowed
    /// here, if more important than what `this` has and not about to preempt its own CPU.
    pub(crate) fn pull_rt_task<H: Hooks>(&mut self, this: usize, h: &mut H) {
        let n = self.rqs.len();
        if self.rqs.iter().all(|rq| rq.rt.nr_running == 0) {
            return; // rt_overload: no RT task queued anywhere
        }
        for src in (1..n).map(|i| (this + i) % n) {
            let rq = &self.rqs[src];
            let allowed = |p: u32| self.tasks[p as usize].cpus_mask[this];
            let Some(p) = rq.rt.pushable(&self.rts, rq.curr, allowed) else {
                continue;
            };
            let prio = self.rts[p as usize].prio;
            let src_curr = rq.curr.map_or(i32::MAX, |c| self.tasks[c as usize].prio());
            if prio < self.rqs[this].rt.highest_prio_curr() && prio as i32 >= src_curr {
                self.move_queued_task(p, (src, this), this, h);
            }
        }
    }

    fn rt_threads_live(&self) -> bool {
        self.tasks
            .iter()
            .any(|t| t.class.is_rt() && t.state != TaskState::Dead)
    }

    /// `start_rt_bandwidth`: arm the next period end, when RT throttling applies.
    pub fn start_rt_bandwidth<H: Hooks>(&mut self, h: &mut H) {
        if self.feat.rt_throttle().is_some() && !self.rt_period_armed && self.rt_threads_live() {
            let at = h.now() + self.feat.rt_period_us * 1000;
            h.arm(at, SchedTimer::RtPeriod);
            self.rt_period_armed = true;
        }
    }

    /// `do_sched_rt_period_timer`: every rq pays back one period's budget; an rq back under
    /// it runs its RT tasks again.
    pub(crate) fn rt_period_timer<H: Hooks>(&mut self, h: &mut H) -> bool {
        self.rt_period_armed = false;
        for cpu in 0..self.rqs.len() {
            self.update_rq_clock(cpu, h.now());
            if self.rqs[cpu].rt.period_timer() {
                self.resched_curr(cpu, h);
            }
        }
        self.start_rt_bandwidth(h);
        true
    }
}
