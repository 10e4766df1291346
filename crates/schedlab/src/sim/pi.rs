//! Priority inheritance for rt-app's mutexes under `pi_enabled` (kernel/locking/rtmutex.c
//! and core.c's `rt_mutex_setprio`): waiters queue by priority, and a mutex's owner runs at
//! the priority of its most important waiter, along the chain of owners blocked in turn.
//! Simplified: a deadline waiter lends RT priority 99's place rather than its reservation
//! (the kernel's `pi_se`), and deadline waiters queue in FIFO order among themselves.

use super::task::State;
use super::Sim;
use crate::sched::class::Class;
use crate::sched::flags::*;

/// `MAX_LOCK_DEPTH`: the longest chain walked.
const MAX_LOCK_DEPTH: usize = 1024;

impl Sim {
    /// Queue `id` on mutex `m`: last, or, for a PI mutex, after the waiters of its priority
    /// or above (`rt_mutex_enqueue`); then its owner inherits (`task_blocks_on_rt_mutex`).
    pub(super) fn add_waiter(&mut self, id: u32, m: u32) {
        self.threads[id as usize].blocked_on = Some(m);
        self.enqueue_waiter(id, m);
        if self.prog.pi {
            self.pi_adjust_chain(m);
        }
    }

    fn enqueue_waiter(&mut self, id: u32, m: u32) {
        let prio = self.tasks[id as usize].prio();
        let tasks = &self.tasks;
        let w = &mut self.res.mutexes[m as usize].waiters;
        let at = if self.prog.pi {
            w.partition_point(|&o| tasks[o as usize].prio() <= prio)
        } else {
            w.len()
        };
        w.insert(at, id);
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

    /// `rt_mutex_adjust_prio`: `id` runs at the priority of the most important waiter of the
    /// mutexes it owns, if above its own. True when that changed.
    pub(super) fn pi_adjust_prio(&mut self, id: u32) -> bool {
        let tasks = &self.tasks;
        let top = self
            .res
            .mutexes
            .iter()
            .filter(|mx| mx.owner == Some(id))
            .filter_map(|mx| mx.waiters.front())
            .map(|&w| tasks[w as usize].prio().max(0)) // see the module's note on deadline
            .min();
        let t = &self.tasks[id as usize];
        let boost = top.filter(|&p| p < t.normal_prio());
        if boost == t.pi_prio {
            return false;
        }
        self.rt_mutex_setprio(id, boost);
        true
    }

    /// `rt_mutex_setprio`: the task takes priority `boost` (None: its own), changing class
    /// when that moves it between fair and RT: dequeued and put back (DEQUEUE_SAVE /
    /// ENQUEUE_RESTORE, at the head of its list when lowered), then preemption checked
    /// either way (`check_class_changed`). Simplified: a fair task's load stays in its
    /// cfs_rq's blocked averages while boosted (no `detach_task_cfs_rq`).
    fn rt_mutex_setprio(&mut self, id: u32, boost: Option<i32>) {
        let t = &self.tasks[id as usize];
        let (cpu, old, old_prio) = (t.cpu, t.class, t.prio());
        let normal = Class::of(t.policy);
        let new = if boost.is_some() && normal == Class::Fair {
            Class::Rt
        } else {
            normal
        };
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
        let t = &mut self.tasks[id as usize];
        t.pi_prio = boost;
        t.class = new;
        let prio = t.prio();
        if new == Class::Rt {
            self.rts[id as usize].prio = prio as u32;
        }
        let flags = ENQUEUE_RESTORE | if prio > old_prio { ENQUEUE_HEAD } else { 0 };
        if queued {
            self.on_rq(cpu, |rq, env| {
                new_ops.enqueue_task(rq, env, id, flags);
                if running {
                    new_ops.set_next_task(rq, env, id);
                }
            });
            self.uclamp_inc(id, cpu);
            if running {
                self.schedule(cpu); // a lowered task may have to yield the CPU
            } else {
                self.wakeup_preempt(cpu, id, 0);
            }
        }
    }
}

#[cfg(test)]
mod tests;
