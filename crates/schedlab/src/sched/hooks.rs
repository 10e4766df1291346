//! What the scheduler needs from the machine it runs on (`Hooks`): the time, its timers,
//! rescheduling and switching a CPU, cpufreq, and the tracepoints, whose catalogue is here.

use super::class::Placement;
use super::deadline::{DlNote, DlTimer};
use super::fair::Note;
use super::rq::RqAvg;
use super::task::SchedTask;
use super::Sched;
use crate::cpufreq::Hook;
use crate::time::Ns;

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
}

/// `prev_state` of a switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrevState {
    /// Preempted: still runnable.
    Runnable,
    Sleeping,
    Dead,
}

/// A context switch `__schedule` decided: who ran, who runs now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switch {
    pub prev: Option<u32>,
    pub next: Option<u32>,
    pub prev_state: PrevState,
}

/// The tracepoints of a run, as the kernel's (and the LISA module's) would report them.
#[derive(Debug, Clone)]
pub enum Tracepoint {
    Switch {
        cpu: usize,
        prev: Option<u32>,
        prev_state: PrevState,
        next: Option<u32>,
    },
    /// On the waker's `cpu`, whose current task (`curr`: the waker, the task an interrupt
    /// came in, or none: idle) is the event's context; `target`: the task's CPU before
    /// `select_task_rq` (`task_cpu(p)`). `how`: the rule that chose where it goes (not in the
    /// kernel's event; the events frame keeps it).
    Waking {
        task: u32,
        cpu: usize,
        curr: Option<u32>,
        target: usize,
        how: Placement,
    },
    /// On `cpu`, which queues the task (the waker's, or the target's from its wake list),
    /// in the context of its current task `curr`.
    Wakeup {
        task: u32,
        target: usize,
        cpu: usize,
        curr: Option<u32>,
    },
    /// On the parent's CPU `cpu`, in its context (none: rt-app's main thread).
    WakeupNew {
        task: u32,
        target: usize,
        how: Placement,
        cpu: usize,
        parent: Option<u32>,
    },
    /// On `cpu`, which moves the task (the waker, the balancing or pushing CPU), in the
    /// context of its current task `curr`.
    Migrate {
        task: u32,
        from: usize,
        to: usize,
        cpu: usize,
        curr: Option<u32>,
    },
    Fork {
        parent: Option<u32>,
        child: u32,
        cpu: usize,
    },
    Rename {
        task: u32,
        cpu: usize,
    },
    Exit {
        task: u32,
        cpu: usize,
    },
    CpuIdle {
        cpu: usize,
        state: u32,
    },
    CpuFrequency {
        cpu: usize,
        khz: u32,
    },
    CpuCapacity {
        cpu: usize,
        capacity: u64,
        orig: u64,
        curr: u64,
    },
    /// A PELT or util_est tracepoint on `cpu`, fired in the context of `task` (None: idle).
    Fair {
        cpu: usize,
        task: Option<u32>,
        note: Note,
    },
    /// Task `task`'s reservation throttled, replenished or missed its deadline on `cpu`.
    Dl {
        cpu: usize,
        task: u32,
        note: DlNote,
    },
    /// `sched_pi_setprio`: a PI change of `task`'s priority.
    PiSetprio {
        task: u32,
        cpu: usize,
        oldprio: i32,
        newprio: i32,
    },
    /// `sched_overutilized_tp` (the LISA module's `sched_overutilized`): `cpu`, running
    /// `task` (None: idle), set the root domain's overutilized flag to `overutilized`.
    Overutilized {
        cpu: usize,
        task: Option<u32>,
        overutilized: bool,
    },
    /// `print`: text `task` wrote to trace_marker (rt-app's markers; None: rt-app's main
    /// thread).
    Print {
        task: Option<u32>,
        cpu: usize,
        text: String,
    },
}

/// The kernel's name of every event a `Tracepoint` reports, once for every observer (the
/// text trace's event names, the DataFrames' `event` and `signal` codes, in this order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum TraceEvent {
    SchedSwitch,
    SchedWaking,
    SchedWakeup,
    SchedWakeupNew,
    SchedMigrateTask,
    SchedProcessFork,
    SchedProcessExit,
    TaskRename,
    CpuIdle,
    CpuFrequency,
    SchedCpuCapacity,
    Print,
    SchedDlThrottle,
    SchedDlReplenish,
    SchedDlMiss,
    SchedPiSetprio,
    SchedOverutilized,
    // The LISA module's PELT and util_est tracepoints: the signals, after the events.
    SchedPeltSe,
    SchedPeltCfs,
    SchedUtilEstSe,
    SchedUtilEstCfs,
    SchedPeltRt,
    SchedPeltDl,
}

impl TraceEvent {
    /// Every name, in code order.
    pub const NAMES: [&'static str; 23] = [
        "sched_switch",
        "sched_waking",
        "sched_wakeup",
        "sched_wakeup_new",
        "sched_migrate_task",
        "sched_process_fork",
        "sched_process_exit",
        "task_rename",
        "cpu_idle",
        "cpu_frequency",
        "sched_cpu_capacity",
        "print",
        "sched_dl_throttle",
        "sched_dl_replenish",
        "sched_dl_miss",
        "sched_pi_setprio",
        "sched_overutilized",
        "sched_pelt_se",
        "sched_pelt_cfs",
        "sched_util_est_se",
        "sched_util_est_cfs",
        "sched_pelt_rt",
        "sched_pelt_dl",
    ];
    /// The first signal: events' codes are below it, signals' count from it.
    pub const FIRST_SIGNAL: TraceEvent = TraceEvent::SchedPeltSe;

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

impl Tracepoint {
    /// The event it reports.
    pub fn event(&self) -> TraceEvent {
        match self {
            Tracepoint::Switch { .. } => TraceEvent::SchedSwitch,
            Tracepoint::Waking { .. } => TraceEvent::SchedWaking,
            Tracepoint::Wakeup { .. } => TraceEvent::SchedWakeup,
            Tracepoint::WakeupNew { .. } => TraceEvent::SchedWakeupNew,
            Tracepoint::Migrate { .. } => TraceEvent::SchedMigrateTask,
            Tracepoint::Fork { .. } => TraceEvent::SchedProcessFork,
            Tracepoint::Rename { .. } => TraceEvent::TaskRename,
            Tracepoint::Exit { .. } => TraceEvent::SchedProcessExit,
            Tracepoint::CpuIdle { .. } => TraceEvent::CpuIdle,
            Tracepoint::CpuFrequency { .. } => TraceEvent::CpuFrequency,
            Tracepoint::CpuCapacity { .. } => TraceEvent::SchedCpuCapacity,
            Tracepoint::Fair { note, .. } => match note {
                Note::PeltSe { .. } => TraceEvent::SchedPeltSe,
                Note::PeltCfs { .. } => TraceEvent::SchedPeltCfs,
                Note::UtilEstSe { .. } => TraceEvent::SchedUtilEstSe,
                Note::UtilEstCfs { .. } => TraceEvent::SchedUtilEstCfs,
                Note::PeltRq {
                    class: RqAvg::Rt, ..
                } => TraceEvent::SchedPeltRt,
                Note::PeltRq {
                    class: RqAvg::Dl, ..
                } => TraceEvent::SchedPeltDl,
            },
            Tracepoint::Dl { note, .. } => match note {
                DlNote::Throttle { .. } => TraceEvent::SchedDlThrottle,
                DlNote::Replenish { .. } => TraceEvent::SchedDlReplenish,
                DlNote::Miss { .. } => TraceEvent::SchedDlMiss,
            },
            Tracepoint::PiSetprio { .. } => TraceEvent::SchedPiSetprio,
            Tracepoint::Overutilized { .. } => TraceEvent::SchedOverutilized,
            Tracepoint::Print { .. } => TraceEvent::Print,
        }
    }
}

/// Values a trace shows as counters that no kernel tracepoint reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Counter {
    /// GRUB's `running_bw` and the root domain share `this_bw` of a CPU's deadline
    /// runqueue, as fractions of the CPU.
    DlRunningBw,
    DlThisBw,
    /// A CPU's energy so far, in mJ.
    Energy,
    /// The runqueue's clamps (`rq->uclamp[UCLAMP_MIN/MAX].value`).
    UclampMin,
    UclampMax,
}

impl Counter {
    pub fn name(self) -> &'static str {
        match self {
            Counter::DlRunningBw => "dl running_bw",
            Counter::DlThisBw => "dl this_bw",
            Counter::Energy => "energy_mj",
            Counter::UclampMin => "uclamp_min",
            Counter::UclampMax => "uclamp_max",
        }
    }
}

/// The machine as the scheduler sees it. Generic (static dispatch): the engine implements
/// it, and unit tests record what the scheduler asked for.
pub trait Hooks {
    /// The time now (ns since boot).
    fn now(&self) -> Ns;
    /// Are tracepoints recorded? (The scheduler builds none otherwise.)
    fn tracing(&self) -> bool;
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
