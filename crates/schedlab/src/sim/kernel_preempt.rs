//! Kernel preemption (`sched.preempt` = full or lazy: CONFIG_PREEMPTION): a full reschedule
//! that comes while the running thread is in a system call's kernel work preempts it there,
//! at the interrupt's return (`irqentry_exit_cond_resched`); the rest of the call's work goes
//! with the thread and is done when it runs again. Under `voluntary` the thread is preempted
//! at the call's end, and so it is under `lazy` for a lazy reschedule (TIF_NEED_RESCHED_LAZY
//! alone) until the next tick makes it full.
//!
//! The kernel preempts its parent inside fork() in messaging-1@7.3's record with the system
//! calls traced: 32 of 39 forks, 51 to 642 µs into the call (perf's main process spends 784 µs
//! of CPU a child), each time at its hrtick.
//!
//! Simplified: a system call is preemptible all through (no section runs with preemption
//! off); under `voluntary` none is, where the kernel has `cond_resched()` points in its long
//! loops (a fork's page-table copy).

use super::engine::{Action, Engine};
use crate::sched::Sched;
use crate::time::Ns;

/// A thread's system call: its kernel work under way, or what a preemption left of it.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Syscall {
    /// When its work is done on the CPU (0: none under way).
    pub end: Ns,
    /// Its own work (what was queued before it is the CPU's).
    pub ns: Ns,
    /// Work a preemption left, done when the thread runs again.
    pub left: Ns,
}

impl Engine {
    /// The running thread `id` is in a system call of `ns` of work, done on its CPU at `end`.
    pub(super) fn syscall_begins(&mut self, id: u32, ns: Ns, end: Ns) {
        self.threads[id as usize].syscall = Syscall { end, ns, left: 0 };
    }

    /// `cpu` reaches its preemption point with a reschedule asked: under kernel preemption a
    /// full one takes what is left of the running thread's system call off the CPU, to go
    /// with the thread.
    pub(super) fn preempt_syscall(&mut self, s: &Sched, cpu: usize) {
        if !s.feat().preempt.kernel() || s.need_resched_lazy(cpu) {
            return;
        }
        let Some(id) = s.cpu_curr(cpu) else { return };
        let now = self.now;
        let call = &mut self.threads[id as usize].syscall;
        if call.end <= now {
            return;
        }
        let left = call.ns.min(call.end - now);
        call.end = 0;
        call.left += left;
        self.overhead.take(cpu, left);
    }

    /// Thread `id`, switched in on `cpu`, goes on with the system call a preemption cut,
    /// after the work queued there (the switch's): true when it has one.
    pub(super) fn resume_syscall(&mut self, cpu: usize, id: u32) -> bool {
        let left = std::mem::take(&mut self.threads[id as usize].syscall.left);
        if left == 0 {
            return false;
        }
        let now = self.now;
        self.overhead.bring(cpu, now, left);
        let end = now + self.overhead.pending(cpu, now);
        self.syscall_begins(id, left, end);
        self.threads[id as usize].action = Action::Until(end);
        true
    }
}
