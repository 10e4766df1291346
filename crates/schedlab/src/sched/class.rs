//! `struct sched_class`: what the core asks of a scheduling class, and the classes in the
//! kernel's order (deadline > rt > fair > idle). The idle class has no queue
//! (`sched::idle`). A new class implements `SchedClass` and takes its place in `Class`,
//! above the ones it preempts.

use super::deadline::SchedDlEntity;
use super::fair::bandwidth::ThrottleNode;
use super::fair::cfs_tasks::GroupNode;
use super::fair::group::TaskGroup;
use super::fair::sched_class::{attach_task_cfs_rq, detach_task_cfs_rq};
use super::fair::{CfsRq, CfsRqId, SchedEntity, Tunables};
use super::features::Features;
use super::hooks::{Hooks, RqHooks};
use super::ops::OpLedger;
use super::rq::{Rq, RqAvg};
use super::rt::SchedRtEntity;
use super::task::SchedTask;
use super::weight::LoadWeight;
use super::Sched;
use crate::sched::uapi::Policy;
use std::cell::Cell;

/// What a class operation on one runqueue reaches besides it: the entities, the switches,
/// the tunables, and the machine (tracepoints, timers).
pub struct Env<'a> {
    /// Every cfs_rq (this CPU's root one is `cfs()`).
    pub cfs_rqs: &'a mut [Box<CfsRq>],
    /// A cfs_rq's box lent to the fair class while it works on one (`sched_class::fair`).
    pub spare_cfs: &'a mut Option<Box<CfsRq>>,
    pub tgs: &'a mut [TaskGroup],
    /// Every CPU's operation counts.
    pub ops: &'a mut OpLedger,
    pub ses: &'a mut [SchedEntity],
    /// Every task's links in its CPU's `rq->cfs_tasks`.
    pub group_nodes: &'a mut [GroupNode],
    /// Every task's `se->h_load` under 7.x's flat runqueue.
    pub h_loads: &'a mut [LoadWeight],
    /// Every task's task-based throttling state.
    pub throttle_nodes: &'a mut [ThrottleNode],
    pub dl: &'a mut [SchedDlEntity],
    pub rt: &'a mut [SchedRtEntity],
    pub feat: &'a Features,
    pub tun: &'a Tunables,
    /// `sched_asym_cpucap_active`: CPUs of different capacities.
    pub asym: bool,
    /// `uclamp_is_used`.
    pub uclamp_used: bool,
    /// `rd->overutilized`, with EAS on.
    pub rd_overutilized: Option<&'a Cell<bool>>,
    pub hooks: RqHooks<'a>,
}

impl Env<'_> {
    /// `rq`'s RT or deadline signal to now (`running`: that class runs), traced when it
    /// changed.
    pub fn update_rq_avg(&mut self, rq: &mut Rq, which: RqAvg, running: bool) {
        if rq.update_class_avg(which, running) && self.hooks.tracing {
            self.hooks.trace(rq.pelt_tp(self.hooks.cpu, which));
        }
    }

    /// The tasks (`p->se`, `p->dl` of task `p`).
    #[inline]
    pub fn tasks(&self) -> &[SchedTask] {
        self.hooks.tasks
    }

    /// `rq->cfs` of the operation's CPU: its root cfs_rq's id.
    #[inline]
    pub fn root(&self) -> CfsRqId {
        self.hooks.cpu as CfsRqId
    }

    /// `rq->cfs`.
    #[inline]
    pub fn cfs(&mut self) -> &mut CfsRq {
        &mut self.cfs_rqs[self.root() as usize]
    }
}

/// What `dequeue_task` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dequeued {
    Off,
    /// Still queued: fair's delayed dequeue.
    Delayed,
    /// Off, and its deadline bandwidth leaves the root domain (a dead task past its 0-lag
    /// time: `task_non_contending`), which the core owns.
    Released,
}

/// A placement as `select_task_rq` sees it: the CPU doing it (`smp_processor_id()`, whose
/// running task is `current`, the waker), the wake flags (`WF_*`) and the time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wake {
    pub cpu: usize,
    pub flags: u32,
    pub now: u64,
}

/// Why a task was placed where it was: the rule of `select_task_rq` that chose its CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Placement {
    /// The previous CPU: idle, or the fallback of a search that found nothing better.
    Prev,
    /// The waker's CPU, as `wake_affine` chose it.
    Affine,
    /// An idle CPU that `select_idle_sibling` found (an SMT sibling, a scan, by capacity).
    IdleSibling,
    /// The task's `recent_used_cpu`.
    Recent,
    /// `find_energy_efficient_cpu`.
    Eas,
    /// The fork/exec slow path (`sched_balance_find_dst_cpu`).
    SlowPath,
    /// An almost idle CPU that only `WAKEUP_BIAS_PREV_IDLE` accepted.
    Bias,
    /// `WF_CURRENT_CPU`: the waker's CPU, asked for.
    CurrentCpu,
    /// The RT or deadline class's own search (`find_lowest_rq`, `find_later_rq`).
    Class,
    /// `select_fallback_rq`: the chosen CPU was not allowed.
    Fallback,
}

impl Placement {
    /// Names by code, as the summary and the events frame give them.
    pub const NAMES: [&'static str; 10] = [
        "prev",
        "affine",
        "idle_sibling",
        "recent",
        "eas",
        "slow_path",
        "bias",
        "current_cpu",
        "class",
        "fallback",
    ];

    pub fn name(self) -> &'static str {
        Placement::NAMES[self as usize]
    }
}

/// The operations of `struct sched_class` that schedlab's core calls (`p` is a task id;
/// `rq` is the CPU the task is on, or leaves).
pub trait SchedClass: Sync {
    fn enqueue_task(&self, rq: &mut Rq, env: &mut Env, p: u32, flags: u32);
    fn dequeue_task(&self, rq: &mut Rq, env: &mut Env, p: u32, flags: u32) -> Dequeued;
    fn yield_task(&self, rq: &mut Rq, env: &mut Env, p: u32);
    /// Should the woken `p` preempt `rq.curr`, which is of this class?
    fn wakeup_preempt(&self, rq: &mut Rq, env: &mut Env, p: u32, wake_flags: u32) -> bool;
    /// The task this class would run next, if it has one.
    fn pick_task(&self, rq: &mut Rq, env: &mut Env) -> Option<u32>;
    fn put_prev_task(&self, rq: &mut Rq, env: &mut Env, p: u32);
    fn set_next_task(&self, rq: &mut Rq, env: &mut Env, p: u32);
    /// The tick hit `p`, the running task; true asks for a resched.
    fn task_tick(&self, rq: &mut Rq, env: &mut Env, p: u32) -> bool;
    /// Charge the running task `p` for its time so far; true asks for a resched.
    fn update_curr(&self, rq: &mut Rq, env: &mut Env, p: u32) -> bool;
    // The optional operations (NULL in a kernel `sched_class`) do nothing by default.
    /// A new task `p` placed on `rq`, before its first enqueue.
    fn task_fork(&self, _rq: &mut Rq, _env: &mut Env, _p: u32) {}
    /// `p` leaves `rq` for another CPU: waking (`migrating` false) or, already dequeued,
    /// moved while queued (`task_on_rq_migrating`).
    fn migrate_task_rq(&self, _rq: &mut Rq, _env: &mut Env, _p: u32, _migrating: bool) {}
    /// `p` has exited and been dequeued.
    fn task_dead(&self, _rq: &mut Rq, _env: &mut Env, _p: u32) {}
    /// `p` takes a new weight (a nice change).
    fn reweight_task(&self, _rq: &mut Rq, _env: &mut Env, _p: u32, _lw: LoadWeight) {}
    /// The CPU `p` should run on, among those it may, and why.
    fn select_task_rq(&self, s: &mut Sched, p: u32, prev: usize, wake: Wake) -> (usize, Placement);
}

/// A task's class (`p->sched_class`), highest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Deadline,
    Rt,
    Fair,
}

impl Class {
    /// Every class with a queue, highest first (`for_each_class`).
    pub const ORDER: [Class; 3] = [Class::Deadline, Class::Rt, Class::Fair];

    /// `__setscheduler_class` at the policy's own priority.
    pub fn of(policy: Policy) -> Class {
        match policy {
            Policy::Deadline => Class::Deadline,
            Policy::Fifo | Policy::Rr => Class::Rt,
            _ => Class::Fair,
        }
    }

    /// `__setscheduler_class(policy, prio)`: a PI boost's priority picks the class.
    pub fn of_prio(policy: Policy, prio: i32) -> Class {
        match prio {
            ..0 => Class::Deadline,
            0..100 => Class::Rt,
            _ => Class::of(policy),
        }
    }

    /// `sched_class_above`.
    pub fn above(self, other: Class) -> bool {
        self < other
    }

    /// `normal_prio` of a task of this class: −1 for deadline, 99 − rt_priority for RT,
    /// 120 + nice for fair.
    #[inline]
    pub fn normal_prio(self, rt_priority: u32, nice: i32) -> i32 {
        match self {
            Class::Deadline => -1,
            Class::Rt => 99 - rt_priority as i32,
            Class::Fair => 120 + nice,
        }
    }

    /// `task_woken`: a deadline or RT task that will not run here may be pushed away.
    #[inline]
    pub fn task_woken<H: Hooks>(self, s: &mut Sched, cpu: usize, p: u32, h: &mut H) {
        match self {
            Class::Deadline => s.task_woken_dl(cpu, p, h),
            Class::Rt => s.task_woken_rt(cpu, p, h),
            Class::Fair => {}
        }
    }

    /// The balance callback `set_next_task` queues for a task of this class just picked
    /// (`deadline_queue_push_tasks`, `rt_queue_push_tasks`).
    #[inline]
    pub fn queue_push_tasks<H: Hooks>(self, s: &mut Sched, cpu: usize, h: &mut H) {
        match self {
            Class::Deadline => s.push_dl_tasks(cpu, h),
            Class::Rt => s.push_rt_tasks(cpu, h),
            Class::Fair => {}
        }
    }

    /// `prev_balance` from `prev`'s class down while none has work: a deadline task that
    /// left the queue (blocked, throttled) may let this CPU pull an earlier one
    /// (`balance_dl`); with no deadline work left, or after an RT task that left the queue,
    /// this CPU may pull RT tasks more important than any it has (`balance_rt`); with
    /// nothing at all, fair tasks (`balance_fair` → `sched_balance_newidle`).
    #[inline]
    pub fn balance<H: Hooks>(self, s: &mut Sched, cpu: usize, prev: u32, h: &mut H) {
        if self == Class::Deadline && !s.balance_dl(cpu, prev, h) {
            return;
        }
        if self != Class::Fair {
            s.balance_rt(cpu, prev, h);
        }
        // balance_fair: nothing left to run here, so pull before going idle.
        if s.nr_running(cpu) == 0 {
            s.sched_balance_newidle(cpu, h);
        }
    }

    /// `switched_from_dl` / `switched_from_rt` / `switched_from_fair` of task `p` (`queued` or
    /// not) on `cpu`: a CPU left with no queued task of the class pulls one from an overloaded
    /// CPU (true when one came); a fair task's load leaves its cfs_rq (`detach_task_cfs_rq`).
    pub fn switched_from<H: Hooks>(
        self,
        s: &mut Sched,
        (cpu, p): (usize, u32),
        queued: bool,
        h: &mut H,
    ) -> bool {
        match self {
            Class::Deadline => queued && s.switched_from_dl(cpu, h),
            Class::Rt => queued && s.switched_from_rt(cpu, h),
            Class::Fair => {
                s.on_rq(cpu, h, |rq, env| detach_task_cfs_rq(rq, env, p));
                false
            }
        }
    }

    /// `switched_to_fair` / `_rt` / `_dl` of task `p`, now of this class, on `cpu`: a fair
    /// task's load joins its cfs_rq (`attach_task_cfs_rq`, aged over its time in the other
    /// class); then, if `queued`, a running task is rescheduled only into the fair class (it
    /// came down from a higher one), a waiting one preempts as at a wakeup (`switched_to_rt`:
    /// only a more important task's, then a CPU with more than one RT task pushes what it
    /// can, `rt_queue_push_tasks`; `switched_to_dl`: a migratable deadline task on an
    /// overloaded CPU lets it push, `deadline_queue_push_tasks`).
    pub fn switched_to<H: Hooks>(
        self,
        s: &mut Sched,
        (cpu, p): (usize, u32),
        queued: bool,
        h: &mut H,
    ) {
        if self == Class::Fair {
            s.on_rq(cpu, h, |rq, env| attach_task_cfs_rq(rq, env, p));
        }
        if !queued {
            return;
        }
        if s.rqs[cpu].curr == Some(p) {
            if self == Class::Fair {
                s.resched_curr(cpu, h);
            }
        } else if self != Class::Rt {
            s.wakeup_preempt(cpu, p, 0, h);
            if self == Class::Deadline {
                s.switched_to_dl_push(cpu, p, h);
            }
        } else {
            preempt_if_more_important(s, cpu, p, h);
            if s.rts[p as usize].migratable && s.rqs[cpu].rt.nr_running > 1 {
                s.push_rt_tasks(cpu, h);
            }
        }
    }

    /// `prio_changed_fair` / `_rt` / `_dl` of task `p` on `cpu`, of this class before and
    /// after, once at `old_prio` (a deadline task: with deadline `old_deadline`): the running
    /// task reschedules when a more important one waits (an RT task lowered, or a deadline
    /// task as `dl.prio_changed` says, first pulls), a waiting one preempts a less important.
    pub fn prio_changed<H: Hooks>(
        self,
        s: &mut Sched,
        (cpu, p): (usize, u32),
        (old_prio, old_deadline): (i32, u64),
        h: &mut H,
    ) {
        let prio = s.tasks[p as usize].prio();
        let running = s.rqs[cpu].curr == Some(p);
        match self {
            Class::Fair => s.prio_changed_fair(p, prio > old_prio, h),
            Class::Rt if prio == old_prio => {}
            Class::Rt if running => {
                if prio > s.rqs[cpu].rt.highest_prio_curr() as i32 {
                    s.resched_curr(cpu, h);
                }
                if prio > old_prio {
                    s.pull_rt_task(cpu, h);
                }
            }
            Class::Rt => preempt_if_more_important(s, cpu, p, h),
            Class::Deadline => {
                let Some(pull) = s.prio_changed_dl_pulls((cpu, p), old_deadline) else {
                    return;
                };
                if !running {
                    // a current not of the class, or of a later deadline, yields
                    s.wakeup_preempt(cpu, p, 0, h);
                } else if (s.rqs[cpu].dl.earliest())
                    .is_some_and(|d| super::deadline::before(d, s.dl_of(p).deadline))
                {
                    s.resched_curr(cpu, h);
                }
                if pull {
                    s.pull_dl_task(cpu, h); // the balance callback, once the rest is done
                }
            }
        }
    }

    /// Is this the RT class?
    #[inline]
    pub fn is_rt(self) -> bool {
        self == Class::Rt
    }

    /// `rt_task(p)` of a task of this class: RT or deadline.
    #[inline]
    pub fn rt_task(self) -> bool {
        self != Class::Fair
    }
}

/// `switched_to_rt` and `prio_changed_rt` of waiting task `p`: the CPU reschedules when `p`
/// is more important than its current task (`p->prio < rq->donor->prio`), or it idles.
fn preempt_if_more_important<H: Hooks>(s: &mut Sched, cpu: usize, p: u32, h: &mut H) {
    let prio = s.tasks[p as usize].prio();
    if (s.rqs[cpu].curr).is_none_or(|c| prio < s.tasks[c as usize].prio()) {
        s.resched_curr(cpu, h);
    }
}

/// Each operation of a task's class, dispatched statically to the class's own (`p->sched_class->op`).
macro_rules! dispatch {
    ($($op:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;)*) => {
        impl SchedClass for Class {
            $(
                #[inline]
                fn $op(&self, $($arg: $ty),*) $(-> $ret)? {
                    match self {
                        Class::Deadline => super::deadline::sched_class::DEADLINE.$op($($arg),*),
                        Class::Rt => super::rt::RT.$op($($arg),*),
                        Class::Fair => super::fair::sched_class::FAIR.$op($($arg),*),
                    }
                }
            )*
        }
    };
}

dispatch! {
    enqueue_task(rq: &mut Rq, env: &mut Env, p: u32, flags: u32);
    dequeue_task(rq: &mut Rq, env: &mut Env, p: u32, flags: u32) -> Dequeued;
    yield_task(rq: &mut Rq, env: &mut Env, p: u32);
    wakeup_preempt(rq: &mut Rq, env: &mut Env, p: u32, wake_flags: u32) -> bool;
    pick_task(rq: &mut Rq, env: &mut Env) -> Option<u32>;
    put_prev_task(rq: &mut Rq, env: &mut Env, p: u32);
    set_next_task(rq: &mut Rq, env: &mut Env, p: u32);
    task_tick(rq: &mut Rq, env: &mut Env, p: u32) -> bool;
    update_curr(rq: &mut Rq, env: &mut Env, p: u32) -> bool;
    task_fork(rq: &mut Rq, env: &mut Env, p: u32);
    migrate_task_rq(rq: &mut Rq, env: &mut Env, p: u32, migrating: bool);
    task_dead(rq: &mut Rq, env: &mut Env, p: u32);
    reweight_task(rq: &mut Rq, env: &mut Env, p: u32, lw: LoadWeight);
    select_task_rq(s: &mut Sched, p: u32, prev: usize, wake: Wake) -> (usize, Placement);
}

/// `rq->donor->sched_class->update_curr(rq)`: the running task's time, or the idle task's,
/// accounted to now; a resched it asks is flagged on `rq`.
pub fn update_curr(rq: &mut Rq, env: &mut Env) {
    match rq.curr {
        Some(p) => {
            let class = env.tasks()[p as usize].class;
            if class.update_curr(rq, env, p) {
                rq.resched();
            }
        }
        None => super::idle::update_curr_idle(rq, env),
    }
}

/// `__pick_next_task`: the first class, highest first, with a task to run (a fair task the
/// fair server picked is of the fair class); `None` runs the idle task.
pub fn pick_next_task(rq: &mut Rq, env: &mut Env) -> Option<(Class, u32)> {
    rq.dl_server = false;
    let (c, p) = Class::ORDER
        .iter()
        .find_map(|&c| c.pick_task(rq, env).map(|p| (c, p)))?;
    Some((if rq.dl_server { Class::Fair } else { c }, p))
}
