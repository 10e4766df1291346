//! What the scheduler needs from the machine it runs on (`Hooks`): the time, its timers,
//! rescheduling and switching a CPU, cpufreq, and the tracepoints (`crate::tracepoint`).

use super::deadline::DlTimer;
use super::task::SchedTask;
use super::Sched;
use crate::cpufreq::Hook;
use crate::time::Ns;
use crate::tracepoint::{Counter, PrevState, Tracepoint};

/// A timer the scheduler arms; the machine hands it back to `Sched::timer` when it expires
/// (stale unless its generation still matches).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SchedTimer {
    /// A deadline entity's hrtimer (a task's reservation or a CPU's fair server).
    Dl {
        se: u32,
        kind: DlTimer,
        gen: u32,
    },
    /// `sched_rt_period_timer`: RT throttling's period ends.
    RtPeriod,
    /// A task group's CFS bandwidth timers (`sched_cfs_period_timer`,
    /// `sched_cfs_slack_timer`).
    CfsPeriod {
        tg: u32,
    },
    CfsSlack {
        tg: u32,
    },
    /// `rq->hrtick_timer` (HRTICK): the running fair task's slice ends.
    Hrtick {
        cpu: u32,
    },
}

/// A context switch `__schedule` decided: who ran, who runs now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switch {
    pub prev: Option<u32>,
    pub next: Option<u32>,
    pub prev_state: PrevState,
}

/// The machine as the scheduler sees it. Generic (static dispatch): the engine implements
/// it, and unit tests record what the scheduler asked for.
pub trait Hooks {
    /// The time now (ns since boot).
    fn now(&self) -> Ns;
    /// Are tracepoints recorded? (The scheduler builds none otherwise.)
    fn tracing(&self) -> bool;
    /// Is the scheduler entered from a hard interrupt (a timer's)? Its tracepoints say so
    /// (`common_flags`).
    fn in_interrupt(&self) -> bool {
        false
    }
    /// A tracepoint fires; `tasks` names its tasks.
    fn trace(&mut self, tasks: &[SchedTask], tp: Tracepoint);
    /// Arm `timer` to expire at `at`.
    fn arm(&mut self, at: Ns, timer: SchedTimer);
    /// `resched_curr`: `cpu` must pick again. The machine chooses when (schedlab's engine:
    /// at once, by `Sched::schedule`).
    fn resched_curr(&mut self, s: &mut Sched, cpu: usize);
    /// `context_switch`: `cpu` runs `sw.next` from now (also called when it stays the same
    /// task, so that the machine re-arms its work).
    fn context_switch(&mut self, s: &mut Sched, cpu: usize, sw: Switch);
    /// The end of `finish_task_switch`, after the balance callbacks and the hrtick's start:
    /// the task switched to goes on where it left off (its program, or the system call a
    /// preemption took it from), so that what it does then is not the switch's work.
    fn switched_in(&mut self, _s: &mut Sched, _cpu: usize, _sw: Switch) {}
    /// `cpufreq_update_util`: the governor of `cpu`'s policy may change its frequency,
    /// which the machine applies (`Sched::set_freq_scale` for the runqueues' clocks).
    fn cpufreq_update_util(&mut self, s: &mut Sched, cpu: usize, hook: Hook);
    /// Counter `c` of `cpu` is `value` (while tracing).
    fn counter(&mut self, _cpu: usize, _c: Counter, _value: f64) {}
    /// How much longer than its counted work a newly idle balance pass on `cpu` takes (an
    /// emulated CPU's stalls), held on the CPU: 0 on hardware.
    fn newidle_stall(&mut self, _cpu: usize) -> Ns {
        0
    }
    /// The kernel work `cpu` has still to do (its scheduler's counted work priced): 0 on
    /// the idealized machine.
    fn kernel_pending(&mut self, _s: &Sched, _cpu: usize) -> Ns {
        0
    }
}

/// The machine as a class operation reaches it while it holds `cpu`'s runqueue: `Hooks`
/// behind a pointer (tracepoints and timers are rare, so the indirect call costs nothing
/// measurable), with the tasks a tracepoint names.
pub struct RqHooks<'a> {
    h: &'a mut dyn Hooks,
    /// The tasks its tracepoints name (and the class operations look up).
    pub tasks: &'a [SchedTask],
    pub cpu: usize,
    /// The task running on `cpu` as the operation starts (a class operation never changes
    /// it): the context its tracepoints fire in.
    pub curr: Option<u32>,
    /// `h.tracing()`, read once.
    pub tracing: bool,
}

impl<'a> RqHooks<'a> {
    pub fn new<H: Hooks>(
        h: &'a mut H,
        tasks: &'a [SchedTask],
        cpu: usize,
        curr: Option<u32>,
    ) -> RqHooks<'a> {
        let tracing = h.tracing();
        RqHooks {
            h,
            tasks,
            cpu,
            curr,
            tracing,
        }
    }

    /// The same hooks for a shorter borrow (a class view built from an `Env`).
    pub fn reborrow(&mut self) -> RqHooks<'_> {
        RqHooks {
            h: &mut *self.h,
            tasks: self.tasks,
            cpu: self.cpu,
            curr: self.curr,
            tracing: self.tracing,
        }
    }

    /// Out of line: untraced runs keep it out of the hot paths' code.
    #[cold]
    #[inline(never)]
    pub fn trace(&mut self, tp: Tracepoint) {
        self.h.trace(self.tasks, tp);
    }

    pub fn arm(&mut self, at: Ns, timer: SchedTimer) {
        self.h.arm(at, timer);
    }

    pub fn now(&self) -> Ns {
        self.h.now()
    }
}
