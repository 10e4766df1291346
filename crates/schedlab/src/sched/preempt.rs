//! The preemption model (`--set sched.preempt`; kernel/sched/core.c `__resched_curr`,
//! `resched_curr_lazy`, `sched_tick`; kernel/entry/common.c's return to user space).
//!
//! - `voluntary` (PREEMPT_VOLUNTARY, Debian's default to 6.18): every reschedule sets
//!   TIF_NEED_RESCHED and tells a remote CPU at once (an IPI); a task in user space is
//!   preempted at the interrupt's return, one in a system call at the call's end.
//! - `full` (PREEMPT): the same, but a task in a system call is preempted inside it, at the
//!   interrupt's return (`sim/kernel_preempt.rs`).
//! - `lazy` (PREEMPT_LAZY, 6.13; the 7.x default where the architecture has it): the fair
//!   class's reschedules (a wakeup's preemption, a slice's end seen by `update_curr`) set
//!   TIF_NEED_RESCHED_LAZY, which sends no IPI. A remote CPU acts on it at its next
//!   interrupt (its tick promotes it; any return to user space takes it) or its running
//!   task's next system call. The idle task is always told at once, and other classes'
//!   reschedules are full. A task in a system call is preempted inside it by a full
//!   reschedule only: a lazy one waits for the call's end, or for the next tick, which
//!   makes it full (`sched_tick`).
//!
//! Simplified: the CPU doing the work is known only for wakeups (`Sched::this_cpu`);
//! elsewhere a reschedule counts as local, so a lazy one is acted on at once (true of the
//! tick, the balance's pulls, the CPU's own interrupts). The interrupts that act on it are the
//! CPU's timer interrupts (ticks, sleep timers, the hrtick), its wake list's IPI and the IPI
//! arming its hrtick (`hrtick_start` on another CPU); not the deadline and bandwidth timers.

use super::hooks::Hooks;
use super::Sched;

/// The preemption model (`--set sched.preempt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preempt {
    /// Reschedules tell a remote CPU at once; a system call runs to its end.
    Voluntary,
    /// Reschedules tell a remote CPU at once, and preempt a system call inside it.
    Full,
    /// The fair class's reschedules wait for a remote CPU's next interrupt.
    Lazy,
}

impl Preempt {
    /// CONFIG_PREEMPTION: a full reschedule preempts the kernel's own code.
    pub fn kernel(self) -> bool {
        self != Preempt::Voluntary
    }
}

impl Sched {
    /// `resched_curr`: TIF_NEED_RESCHED, the CPU told at once.
    #[inline]
    pub(super) fn resched_curr<H: Hooks>(&mut self, cpu: usize, h: &mut H) {
        self.rqs[cpu].resched();
        self.resched_asked(cpu, h);
    }

    /// `__resched_curr` of what the runqueue was asked: a CPU inside `__schedule` is only
    /// flagged (its pick is to come); TIF_NEED_RESCHED_LAZY alone sends a remote CPU running a
    /// task no IPI.
    #[inline]
    pub(super) fn resched_asked<H: Hooks>(&mut self, cpu: usize, h: &mut H) {
        let rq = &mut self.rqs[cpu];
        rq.need_resched = true;
        let remote = self.this_cpu.is_some_and(|c| c != cpu);
        if rq.in_schedule || (rq.lazy && remote && rq.curr.is_some()) {
            return;
        }
        rq.lazy = false;
        h.resched_curr(self, cpu);
    }

    /// `irqentry_exit_to_user_mode` on `cpu`: an interrupt's return acts on a lazy
    /// reschedule it was not told of.
    pub fn irq_exit<H: Hooks>(&mut self, cpu: usize, h: &mut H) {
        if self.rqs[cpu].lazy {
            self.resched_curr(cpu, h);
        }
    }

    /// Whether `cpu` was told to reschedule: its preemption point is due (a lazy reschedule
    /// waits for its running task's next interrupt or system call).
    #[inline]
    pub fn resched_due(&self, cpu: usize) -> bool {
        let rq = &self.rqs[cpu];
        rq.need_resched && !rq.lazy
    }
}
