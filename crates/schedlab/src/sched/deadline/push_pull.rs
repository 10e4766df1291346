//! deadline.c's SMP side: global EDF pushes and pulls tasks between runqueues
//! (`push_dl_task`, `pull_dl_task`); `cpudl.rs` decides which and where.

use super::cpudl;
use crate::sched::hooks::Hooks;
use crate::sched::Sched;

/// What a queued deadline task's change of parameters makes its CPU do first
/// (`prio_changed_dl`; `--set dl.prio_changed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DlPrioChanged {
    /// ≤ 6.18: the old deadline is not known, so the CPU pulls unless it is overloaded.
    Overloaded,
    /// 6.19+ (`get_prio_dl` gives the change the old deadline): nothing when the deadline
    /// stays; a pull when it got later.
    Deadline,
}

impl Sched {
    /// `task_woken_dl`: a woken deadline task that will not run here is pushed away now.
    pub(crate) fn task_woken_dl<H: Hooks>(&mut self, cpu: usize, id: u32, h: &mut H) {
        if self.rqs[cpu].curr != Some(id) && self.dl_of(id).migratable {
            self.push_dl_tasks(cpu, h);
        }
    }

    /// The entity of the task running on `cpu`.
    #[inline]
    fn curr_dl(&self, cpu: usize) -> Option<u32> {
        self.rqs[cpu].curr.map(|c| self.tasks[c as usize].dl)
    }

    /// `push_dl_tasks`.
    pub(crate) fn push_dl_tasks<H: Hooks>(&mut self, cpu: usize, h: &mut H) {
        while self.push_dl_task(cpu, h) {}
    }

    /// `push_dl_task`: move the earliest pushable task of an overloaded `cpu` to a CPU
    /// where it runs at once; true if one moved.
    fn push_dl_task<H: Hooks>(&mut self, cpu: usize, h: &mut H) -> bool {
        // dl_overloaded: more than one deadline task, one of them pushable.
        if self.rqs[cpu].dl.nr_running() <= 1 {
            return false;
        }
        let curr = self.curr_dl(cpu);
        let Some((next, e)) = cpudl::earliest_pushable(&self.rqs[cpu], curr, &self.dls, |_| true)
        else {
            return false;
        };
        let next_dl = &self.dls[e as usize];
        if let Some(c) = curr {
            let curr = &self.dls[c as usize];
            if curr.dl_runtime != 0 && next_dl.deadline < curr.deadline && curr.migratable {
                self.resched_curr(cpu, h);
                return false;
            }
        }
        let allowed = &self.tasks[next as usize].cpus_mask;
        let Some(later) = cpudl::find_later_rq(&self.rqs, next_dl, allowed, cpu, self.asym)
            .filter(|&l| l != cpu && cpudl::is_earliest(&self.rqs[l], next_dl))
        else {
            return false;
        };
        self.move_queued_task(next, (cpu, later), cpu, h);
        self.resched_curr(later, h);
        true
    }

    /// `balance_dl`: a deadline task `prev` that left the queue (blocked, throttled) may let
    /// this CPU pull an earlier one. True when the CPU has no deadline work left, so that
    /// the classes below may balance too.
    pub(crate) fn balance_dl<H: Hooks>(&mut self, cpu: usize, prev: u32, h: &mut H) -> bool {
        if !self.dl_of(prev).on_rq {
            self.pull_dl_task(cpu, h);
        }
        self.rqs[cpu].dl.nr_running() == 0
    }

    /// `dl_rq->overloaded`: a task is pushable (queued, not running, migratable).
    fn dl_overloaded(&self, cpu: usize) -> bool {
        cpudl::earliest_pushable(&self.rqs[cpu], self.curr_dl(cpu), &self.dls, |_| true).is_some()
    }

    /// `switched_to_dl` of a queued task `p` that does not run on `cpu`: a migratable one
    /// on an overloaded CPU lets it push (`deadline_queue_push_tasks`).
    pub(crate) fn switched_to_dl_push<H: Hooks>(&mut self, cpu: usize, p: u32, h: &mut H) {
        if self.dl_of(p).migratable && self.dl_overloaded(cpu) {
            self.push_dl_tasks(cpu, h);
        }
    }

    /// Whether `prio_changed_dl` on `cpu` of a queued task `p` whose deadline was `old`
    /// queues a pull (`deadline_queue_pull_task`): under `overloaded` unless the CPU is,
    /// under `deadline` when the deadline got later. None when it stayed: 7.x's
    /// `prio_changed_dl` then does nothing at all.
    pub(crate) fn prio_changed_dl_pulls(&self, (cpu, p): (usize, u32), old: u64) -> Option<bool> {
        let deadline = self.dl_of(p).deadline;
        match self.feat.dl_prio_changed {
            DlPrioChanged::Overloaded => Some(!self.dl_overloaded(cpu)),
            DlPrioChanged::Deadline if deadline == old => None,
            DlPrioChanged::Deadline => Some(super::before(old, deadline)),
        }
    }

    /// `switched_from_dl`: a CPU left with no deadline task pulls one. True when one came.
    pub(crate) fn switched_from_dl<H: Hooks>(&mut self, cpu: usize, h: &mut H) -> bool {
        if self.rqs[cpu].dl.nr_running() != 0 {
            return false;
        }
        self.pull_dl_task(cpu, h);
        self.rqs[cpu].dl.nr_running() > 0
    }

    /// `pull_dl_task`: `cpu` lost a deadline task; take from an overloaded CPU the earliest
    /// pushable task that would run here at once and not have run there already.
    pub(crate) fn pull_dl_task<H: Hooks>(&mut self, this: usize, h: &mut H) {
        let n = self.rqs.len();
        for src in (1..n).map(|i| (this + i) % n) {
            // dl_overloaded, then a pushable task this CPU may take.
            if self.rqs[src].dl.nr_running() <= 1 {
                continue;
            }
            let curr = self.curr_dl(src);
            let allowed = |p: u32| self.tasks[p as usize].cpus_mask[this];
            let Some((p, e)) = cpudl::earliest_pushable(&self.rqs[src], curr, &self.dls, allowed)
            else {
                continue;
            };
            let se = &self.dls[e as usize];
            let src_curr = curr.map_or(0, |c| self.dls[c as usize].deadline);
            if cpudl::is_earliest(&self.rqs[this], se) && se.deadline >= src_curr {
                self.move_queued_task(p, (src, this), this, h);
            }
        }
    }
}
