//! Mutexes and priority inheritance (kernel/locking/rtmutex.c and core.c's
//! `rt_mutex_setprio`), for rt-app's mutexes: waiters queue in arrival order, or, for
//! PTHREAD_PRIO_INHERIT mutexes (`pi_enabled`), by priority, deadline waiters by deadline,
//! and a mutex's owner runs at the priority of its most important waiter, along the chain
//! of owners blocked in turn. A deadline waiter lends its reservation (`pi_se`): the owner
//! runs in the deadline class by the donor's runtime, deadline and period, never
//! throttled. Simplified: an owner whose top waiter and priority are unchanged is left as
//! it is, where the kernel requeues a deadline owner all the same; and a plain mutex is a
//! FIFO of waiters here too (a futex in the kernel).

use std::collections::VecDeque;

use super::class::{Class, SchedClass};
use super::deadline::{before, DlParams};
use super::flags::*;
use super::hooks::Hooks;
use super::Sched;
use crate::tracepoint::Tracepoint;

/// `MAX_LOCK_DEPTH`: the longest chain walked.
const MAX_LOCK_DEPTH: usize = 1024;

/// `struct rt_mutex`: its owner and waiters.
#[derive(Debug, Clone, Default)]
pub struct RtMutex {
    pub owner: Option<u32>,
    /// In order of handover: FIFO, or by priority for PI mutexes (`rt_mutex_waiter_less`).
    pub waiters: VecDeque<u32>,
}

impl Sched {
    /// The workload's `n` mutexes, with priority inheritance or without.
    pub fn init_mutexes(&mut self, n: usize, pi: bool) {
        self.mutexes = vec![RtMutex::default(); n];
        self.pi = pi;
    }

    /// `rt_mutex_trylock`: `id` takes mutex `m` if it is free.
    pub fn rt_mutex_trylock(&mut self, id: u32, m: u32) -> bool {
        let mx = &mut self.mutexes[m as usize];
        if mx.owner.is_some() {
            return false;
        }
        mx.owner = Some(id);
        true
    }

    /// `task_blocks_on_rt_mutex`: queue `id` on mutex `m`, last, or, for a PI mutex, after
    /// the waiters that go before it (`rt_mutex_enqueue`); then its owner inherits.
    pub fn rt_mutex_block<H: Hooks>(&mut self, id: u32, m: u32, h: &mut H) {
        self.tasks[id as usize].pi_blocked_on = Some(m);
        self.enqueue_waiter(id, m);
        if self.pi {
            self.pi_adjust_chain(m, h);
        }
    }

    /// `rt_mutex_unlock`: the mutex goes to its first waiter, whom `wake` wakes; with PI,
    /// the old owner's boost is recomputed and the new owner inherits from the waiters left.
    pub fn rt_mutex_unlock<H: Hooks>(
        &mut self,
        id: u32,
        m: u32,
        h: &mut H,
        wake: impl FnOnce(&mut Sched, &mut H, u32),
    ) {
        let mx = &mut self.mutexes[m as usize];
        mx.owner = mx.waiters.pop_front();
        if let Some(w) = mx.owner {
            self.tasks[w as usize].pi_blocked_on = None;
            wake(self, h, w);
        }
        if self.pi {
            self.pi_adjust_prio(id, h);
            self.pi_adjust_chain(m, h);
        }
    }

    fn enqueue_waiter(&mut self, id: u32, m: u32) {
        let w = &self.mutexes[m as usize].waiters;
        let at = if self.pi {
            w.partition_point(|&o| !self.waiter_less(id, o))
        } else {
            w.len()
        };
        self.mutexes[m as usize].waiters.insert(at, id);
    }

    /// `rt_waiter_node_less`: by priority; deadline tasks by their deadline.
    fn waiter_less(&self, a: u32, b: u32) -> bool {
        let (pa, pb) = (self.tasks[a as usize].prio(), self.tasks[b as usize].prio());
        pa < pb || (pa == pb && pa < 0 && before(self.dl_of(a).deadline, self.dl_of(b).deadline))
    }

    /// `rt_mutex_adjust_prio_chain`: from mutex `m`'s owner, each owner takes the priority of
    /// its top waiter; one blocked on a mutex in turn moves in that queue, and so on.
    fn pi_adjust_chain<H: Hooks>(&mut self, mut m: u32, h: &mut H) {
        for _ in 0..MAX_LOCK_DEPTH {
            let Some(owner) = self.mutexes[m as usize].owner else {
                return;
            };
            if !self.pi_adjust_prio(owner, h) {
                return;
            }
            let Some(next) = self.tasks[owner as usize].pi_blocked_on else {
                return;
            };
            let w = &mut self.mutexes[next as usize].waiters;
            w.retain(|&o| o != owner);
            self.enqueue_waiter(owner, next);
            m = next;
        }
    }

    /// `rt_mutex_adjust_prio`: `id` runs at the priority of the top waiter of the mutexes it
    /// owns, if above its own (`__rt_effective_prio`); a deadline top waiter lends its
    /// reservation to a task of another class, or to a deadline task whose deadline is
    /// later. True when that changed.
    fn pi_adjust_prio<H: Hooks>(&mut self, id: u32, h: &mut H) -> bool {
        let top = self
            .mutexes
            .iter()
            .filter(|mx| mx.owner == Some(id))
            .filter_map(|mx| mx.waiters.front().copied())
            .reduce(|a, b| if self.waiter_less(b, a) { b } else { a });
        let normal = self.tasks[id as usize].normal_prio();
        let prio = top.map_or(normal, |w| self.tasks[w as usize].prio().min(normal));
        let owner = self.dl_of(id);
        let pi = top
            .filter(|&w| self.tasks[w as usize].prio() < 0)
            .filter(|&w| normal >= 0 || before(self.dl_of(w).deadline, owner.deadline))
            .map(|w| self.dl_of(w).pi_of());
        let boost = (prio < normal).then_some(prio);
        if boost == self.tasks[id as usize].pi_prio && pi == self.dl_of(id).pi {
            return false;
        }
        self.rt_mutex_setprio(id, boost, pi, h);
        true
    }

    /// `rt_mutex_setprio`: the task takes priority `boost` (None: its own) and reservation
    /// `pi` (None: its own), changing class when the priority says so: dequeued and put
    /// back (DEQUEUE_SAVE / ENQUEUE_RESTORE; an RT task lowered at the head of its list, a
    /// deadline-boosted one replenished), then `check_class_changed` (a fair task boosted out
    /// of its class takes its load off its cfs_rq until it comes back).
    fn rt_mutex_setprio<H: Hooks>(
        &mut self,
        id: u32,
        boost: Option<i32>,
        pi: Option<DlParams>,
        h: &mut H,
    ) {
        let t = &self.tasks[id as usize];
        let old_prio = t.prio();
        let prio = boost.unwrap_or_else(|| t.normal_prio());
        let new = Class::of_prio(t.policy, prio);
        self.change_class((id, DEQUEUE_SAVE | DEQUEUE_MOVE), h, |s, h| {
            if h.tracing() {
                let tp = Tracepoint::PiSetprio {
                    task: id,
                    cpu: s.tasks[id as usize].cpu,
                    oldprio: old_prio,
                    newprio: prio,
                };
                h.trace(&s.tasks, tp);
            }
            let t = &mut s.tasks[id as usize];
            t.pi_prio = boost;
            t.class = new;
            s.dl_of_mut(id).pi = pi;
            let mut flags = ENQUEUE_RESTORE;
            if pi.is_some() {
                flags |= ENQUEUE_REPLENISH;
            }
            if new.is_rt() {
                s.rts[id as usize].prio = prio as u32;
                if prio > old_prio {
                    flags |= ENQUEUE_HEAD;
                }
            }
            flags
        });
    }

    /// Task `id` changes its class or priority (`rt_mutex_setprio`, `__sched_setscheduler`,
    /// `set_user_nice`): dequeued (`dequeue`: DEQUEUE_SAVE and maybe DEQUEUE_MOVE), changed
    /// by `change`, put back with the enqueue flags it returns, then `check_class_changed`.
    pub(crate) fn change_class<H: Hooks>(
        &mut self,
        (id, dequeue): (u32, u32),
        h: &mut H,
        change: impl FnOnce(&mut Sched, &mut H) -> u32,
    ) {
        let t = &self.tasks[id as usize];
        let (cpu, old, old_prio) = (t.cpu, t.class, t.prio());
        let old_deadline = self.dl_of(id).deadline; // `get_prio_dl`
        let queued = t.queued();
        let running = self.rqs[cpu].curr == Some(id);
        self.update_rq_clock(cpu, h.now());
        if queued {
            self.uclamp_dec(id, cpu);
            self.on_rq(cpu, h, |rq, env| {
                old.dequeue_task(rq, env, id, dequeue);
                if running {
                    old.put_prev_task(rq, env, id);
                }
            });
        }
        let flags = change(self, h);
        let new = self.tasks[id as usize].class;
        if queued {
            self.enqueue_task((id, cpu), false, h, |rq, env| {
                new.enqueue_task(rq, env, id, flags);
                if running {
                    new.set_next_task(rq, env, id);
                }
            });
        }
        self.check_class_changed(id, old, (old_prio, old_deadline), queued, h);
    }

    /// `check_class_changed` of task `id`, `queued` or not, of class `old` at `old_prio`
    /// (and deadline `old_deadline`) before: `switched_from` the old class (a fair task's
    /// load leaves its cfs_rq; a CPU left without queued tasks of the class pulls one, and
    /// reschedules if one came) and `switched_to` the new, or, if queued, the class's
    /// `prio_changed`. 7.x's `sched_change_end` decides alike.
    fn check_class_changed<H: Hooks>(
        &mut self,
        id: u32,
        old: Class,
        (old_prio, old_deadline): (i32, u64),
        queued: bool,
        h: &mut H,
    ) {
        let t = &self.tasks[id as usize];
        let (cpu, new) = (t.cpu, t.class);
        if old != new {
            if old.switched_from(self, (cpu, id), queued, h) {
                self.resched_curr(cpu, h);
            }
            new.switched_to(self, (cpu, id), queued, h);
        } else if queued && (old_prio != t.prio() || new == Class::Deadline) {
            new.prio_changed(self, (cpu, id), (old_prio, old_deadline), h);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::kernel::Kernel;
    use crate::sched::class::Class;
    use crate::sched::task::TaskState;
    use crate::sched::tests::{attr, fork_on, machine};
    use crate::sched::uapi::{DlAttr, Policy, SchedAttr};
    use crate::sched::Sched;

    const MS: u64 = 1_000_000;

    /// SCHED_DEADLINE 10 ms every 100 ms, due `deadline_ms` after each period's start.
    fn dl(deadline_ms: u64) -> SchedAttr {
        let dl = DlAttr {
            runtime: 10 * MS,
            deadline: deadline_ms * MS,
            period: 100 * MS,
            reclaim: false,
        };
        SchedAttr {
            dl: Some(dl),
            ..attr(Policy::Deadline)
        }
    }

    #[test]
    fn a_deadline_tasks_change_pulls_as_its_kernel_says() {
        // prio_changed_dl's pull on CPU 0 of deadline L (due at 90 ms, pinned there, running)
        // once its parameters change. 6.12 does not know the old deadline: it pulls unless
        // CPU 0 is overloaded, which it becomes once Q (due at 95, migratable) waits there
        // (Y, due at 30, runs on CPU 1, so neither CPU is later for Q). 7.3 is given the old
        // deadline: no pull when it stays (and nothing more), a pull when it was earlier.
        for kernel in [Kernel::V6_12, Kernel::V7_3] {
            let (mut s, mut h) = machine("smp:2", kernel);
            let l = fork_on(&mut s, &mut h, dl(90), Some(&[0]));
            fork_on(&mut s, &mut h, dl(30), Some(&[1]));
            let due = s.dl_of(l).deadline;
            let pulls = |s: &Sched, old| s.prio_changed_dl_pulls((0, l), old);
            if kernel == Kernel::V6_12 {
                assert_eq!(pulls(&s, due), Some(true), "not overloaded");
                let q = fork_on(&mut s, &mut h, dl(95), None);
                assert_eq!((s.task(q).cpu, s.cpu_curr(0)), (0, Some(l)));
                assert_eq!(pulls(&s, due), Some(false), "overloaded");
            } else {
                assert_eq!(pulls(&s, due), None);
                assert_eq!(pulls(&s, due - MS), Some(true));
                assert_eq!(pulls(&s, due + MS), Some(false));
            }
        }
    }

    #[test]
    fn a_waiting_owner_boosted_into_the_deadline_class_is_pushed_where_it_runs_at_once() {
        // smp:3 under 6.12. Fair F runs on CPU 1 (pinned), fair L on CPU 0, holding the
        // mutex; deadline X, due at 20 ms and pinned to CPU 0, preempts L, which waits.
        // Deadline H, due at 50 ms, runs on CPU 2 and blocks on the mutex: L takes H's
        // reservation (deadline class, due at 50 ms). switched_to_dl: L is queued and not
        // running, migratable, so CPU 0 is overloaded and pushes it (push_dl_task: X,
        // pinned, is not rescheduled for it; find_later_rq: CPU 1, running only a fair
        // task), where it preempts F, rather than waiting behind X's earlier deadline.
        let (mut s, mut h) = machine("smp:3", Kernel::V6_12);
        let f = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[1]));
        let l = fork_on(&mut s, &mut h, attr(Policy::Other), None);
        assert_eq!(s.cpu_curr(0), Some(l));
        s.init_mutexes(1, true);
        assert!(s.rt_mutex_trylock(l, 0));
        let x = fork_on(&mut s, &mut h, dl(20), Some(&[0]));
        let hi = fork_on(&mut s, &mut h, dl(50), Some(&[2]));
        assert_eq!((s.cpu_curr(0), s.cpu_curr(2)), (Some(x), Some(hi)));
        assert!(!s.rt_mutex_trylock(hi, 0));
        s.rt_mutex_block(hi, 0, &mut h);
        assert_eq!(s.class(l), Class::Deadline);
        assert_eq!(s.task(l).cpu, 1);
        assert_eq!((s.cpu_curr(0), s.cpu_curr(1)), (Some(x), Some(l)));
        assert!(s.task(f).queued());
    }

    #[test]
    fn a_pi_owner_runs_at_its_waiters_priority_until_it_unlocks() {
        // One CPU. Fair L (prio 120) holds the mutex; FIFO 10 H (prio 99 − 10 = 89) preempts
        // it and blocks on the mutex. rt_mutex_adjust_prio: L runs at min(120, 89) = 89 in
        // the RT class (__rt_effective_prio, rt_mutex_setprio), so FIFO 5 M (prio 94), woken
        // meanwhile, does not preempt it: no priority inversion. At the unlock the mutex goes
        // to H, L falls back to 120, and H preempts it.
        let (mut s, mut h) = machine("smp:1", Kernel::V6_12);
        s.init_mutexes(1, true);
        let fifo = |rt_priority| SchedAttr {
            rt_priority,
            ..attr(Policy::Fifo)
        };
        let l = fork_on(&mut s, &mut h, attr(Policy::Other), None);
        assert!(s.rt_mutex_trylock(l, 0));
        let hi = fork_on(&mut s, &mut h, fifo(10), None);
        assert_eq!(s.cpu_curr(0), Some(hi));
        assert!(!s.rt_mutex_trylock(hi, 0));
        s.rt_mutex_block(hi, 0, &mut h);
        s.deactivate(hi, TaskState::Blocked, &mut h);
        assert_eq!((s.cpu_curr(0), s.task(l).prio()), (Some(l), 89));
        assert_eq!(s.class(l), Class::Rt);
        let m = fork_on(&mut s, &mut h, fifo(5), None);
        assert_eq!(s.cpu_curr(0), Some(l), "M (94) waits behind boosted L (89)");
        s.rt_mutex_unlock(l, 0, &mut h, |s, h, w| {
            assert!(s.try_to_wake_up(w, 0, 0, h));
        });
        assert_eq!(s.mutexes[0].owner, Some(hi));
        assert_eq!((s.task(l).prio(), s.class(l)), (120, Class::Fair));
        assert_eq!(s.cpu_curr(0), Some(hi));
        assert!(s.rts[m as usize].on_rq, "M still waits, behind H");
    }

    #[test]
    fn without_pi_a_waiter_lends_nothing_and_waiters_queue_in_arrival_order() {
        // A plain mutex (no PTHREAD_PRIO_INHERIT), three CPUs, one task on each: fair L
        // holds it; fair F blocks on it, then FIFO 10 H. L stays at 120, and the mutex goes
        // to F first, first come, first served, whatever H's priority.
        let (mut s, mut h) = machine("smp:3", Kernel::V6_12);
        s.init_mutexes(1, false);
        let fifo = SchedAttr {
            rt_priority: 10,
            ..attr(Policy::Fifo)
        };
        let l = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[0]));
        let f = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[1]));
        let hi = fork_on(&mut s, &mut h, fifo, Some(&[2]));
        assert!(s.rt_mutex_trylock(l, 0));
        for waiter in [f, hi] {
            assert!(!s.rt_mutex_trylock(waiter, 0));
            s.rt_mutex_block(waiter, 0, &mut h);
            s.deactivate(waiter, TaskState::Blocked, &mut h);
        }
        assert_eq!((s.task(l).prio(), s.class(l)), (120, Class::Fair));
        assert_eq!(s.mutexes[0].waiters, [f, hi]);
        s.rt_mutex_unlock(l, 0, &mut h, |s, h, w| {
            assert!(s.try_to_wake_up(w, 0, 0, h));
        });
        assert_eq!(s.mutexes[0].owner, Some(f));
    }
}
