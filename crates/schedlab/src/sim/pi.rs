//! Priority inheritance for rt-app's mutexes under `pi_enabled` (kernel/locking/rtmutex.c
//! and core.c's `rt_mutex_setprio`): waiters queue by priority, deadline waiters by
//! deadline, and a mutex's owner runs at the priority of its most important waiter, along
//! the chain of owners blocked in turn. A deadline waiter lends its reservation (`pi_se`):
//! the owner runs in the deadline class by the donor's runtime, deadline and period, never
//! throttled. Simplified: an owner whose top waiter and priority are unchanged is left as
//! it is, where the kernel requeues a deadline owner all the same.

use super::task::State;
use super::Sim;
use crate::sched::class::Class;
use crate::sched::deadline::{before, DlParams};
use crate::sched::flags::*;
use crate::trace::Record;

/// `MAX_LOCK_DEPTH`: the longest chain walked.
const MAX_LOCK_DEPTH: usize = 1024;

impl Sim {
    /// Queue `id` on mutex `m`: last, or, for a PI mutex, after the waiters that go before
    /// it (`rt_mutex_enqueue`); then its owner inherits (`task_blocks_on_rt_mutex`).
    pub(super) fn add_waiter(&mut self, id: u32, m: u32) {
        self.threads[id as usize].blocked_on = Some(m);
        self.enqueue_waiter(id, m);
        if self.prog.pi {
            self.pi_adjust_chain(m);
        }
    }

    fn enqueue_waiter(&mut self, id: u32, m: u32) {
        let w = &self.res.mutexes[m as usize].waiters;
        let at = if self.prog.pi {
            w.partition_point(|&o| !self.waiter_less(id, o))
        } else {
            w.len()
        };
        self.res.mutexes[m as usize].waiters.insert(at, id);
    }

    /// `rt_waiter_node_less`: by priority; deadline tasks by their deadline.
    fn waiter_less(&self, a: u32, b: u32) -> bool {
        let (pa, pb) = (self.tasks[a as usize].prio(), self.tasks[b as usize].prio());
        pa < pb
            || (pa == pb
                && pa < 0
                && before(self.dls[a as usize].deadline, self.dls[b as usize].deadline))
    }

    /// `rt_mutex_adjust_prio_chain`: from mutex `m`'s owner, each owner takes the priority of
    /// its top waiter; one blocked on a mutex in turn moves in that queue, and so on.
    pub(super) fn pi_adjust_chain(&mut self, mut m: u32) {
        for _ in 0..MAX_LOCK_DEPTH {
            let Some(owner) = self.res.mutexes[m as usize].owner else {
                return;
            };
            if !self.pi_adjust_prio(owner) {
                return;
            }
            let Some(next) = self.threads[owner as usize].blocked_on else {
                return;
            };
            let w = &mut self.res.mutexes[next as usize].waiters;
            w.retain(|&o| o != owner);
            self.enqueue_waiter(owner, next);
            m = next;
        }
    }

    /// `rt_mutex_adjust_prio`: `id` runs at the priority of the top waiter of the mutexes it
    /// owns, if above its own (`__rt_effective_prio`); a deadline top waiter lends its
    /// reservation to a task of another class, or to a deadline task whose deadline is
    /// later. True when that changed.
    pub(super) fn pi_adjust_prio(&mut self, id: u32) -> bool {
        let top = self
            .res
            .mutexes
            .iter()
            .filter(|mx| mx.owner == Some(id))
            .filter_map(|mx| mx.waiters.front().copied())
            .reduce(|a, b| if self.waiter_less(b, a) { b } else { a });
        let normal = self.tasks[id as usize].normal_prio();
        let prio = top.map_or(normal, |w| self.tasks[w as usize].prio().min(normal));
        let (dls, owner) = (&self.dls, &self.dls[id as usize]);
        let pi = top
            .filter(|&w| self.tasks[w as usize].prio() < 0)
            .filter(|&w| normal >= 0 || before(dls[w as usize].deadline, owner.deadline))
            .map(|w| dls[w as usize].pi_of());
        let boost = (prio < normal).then_some(prio);
        if boost == self.tasks[id as usize].pi_prio && pi == self.dls[id as usize].pi {
            return false;
        }
        self.rt_mutex_setprio(id, boost, pi);
        true
    }

    /// `rt_mutex_setprio`: the task takes priority `boost` (None: its own) and reservation
    /// `pi` (None: its own), changing class when the priority says so: dequeued and put
    /// back (DEQUEUE_SAVE / ENQUEUE_RESTORE; an RT task lowered at the head of its list, a
    /// deadline-boosted one replenished), then preemption checked (`check_class_changed`).
    /// Simplified: a fair task's load stays in its cfs_rq's blocked averages while boosted
    /// (no `detach_task_cfs_rq`).
    fn rt_mutex_setprio(&mut self, id: u32, boost: Option<i32>, pi: Option<DlParams>) {
        let t = &self.tasks[id as usize];
        let (cpu, old, old_prio) = (t.cpu, t.class, t.prio());
        let prio = boost.unwrap_or_else(|| t.normal_prio());
        let new = Class::of_prio(t.policy, prio);
        let queued = matches!(t.state, State::Runnable | State::Running);
        let running = self.rqs[cpu].curr == Some(id);
        self.update_rq_clock(cpu);
        let (old_ops, new_ops) = (old.ops(), new.ops());
        if queued {
            self.uclamp_dec(id, cpu);
            self.on_rq(cpu, |rq, env| {
                old_ops.dequeue_task(rq, env, id, DEQUEUE_SAVE);
                if running {
                    old_ops.put_prev_task(rq, env, id);
                }
            });
        }
        if self.tracing {
            self.emit(Record::PiSetprio {
                task: id,
                cpu,
                oldprio: old_prio,
                newprio: prio,
            });
        }
        let t = &mut self.tasks[id as usize];
        t.pi_prio = boost;
        t.class = new;
        self.dls[id as usize].pi = pi;
        let mut flags = ENQUEUE_RESTORE;
        if pi.is_some() {
            flags |= ENQUEUE_REPLENISH;
        }
        if new == Class::Rt {
            self.rts[id as usize].prio = prio as u32;
            if prio > old_prio {
                flags |= ENQUEUE_HEAD;
            }
        }
        if !queued {
            return;
        }
        self.on_rq(cpu, |rq, env| {
            new_ops.enqueue_task(rq, env, id, flags);
            if running {
                new_ops.set_next_task(rq, env, id);
            }
        });
        self.uclamp_inc(id, cpu);
        if old != new && self.switched_from(cpu, old) || running {
            self.schedule(cpu); // a lowered task may have to yield the CPU
        } else {
            self.wakeup_preempt(cpu, id, 0);
        }
    }

    /// `switched_from_dl` / `switched_from_rt`: a CPU left with no task of the class pulls
    /// one from an overloaded CPU. True when one came.
    fn switched_from(&mut self, cpu: usize, old: Class) -> bool {
        match old {
            Class::Deadline if self.rqs[cpu].dl.nr_running() == 0 => {
                self.pull_dl_task(cpu);
                self.rqs[cpu].dl.nr_running() > 0
            }
            Class::Rt if self.rqs[cpu].rt.nr_running == 0 => {
                self.pull_rt_task(cpu);
                self.rqs[cpu].rt.nr_running > 0
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests;
