//! `struct sched_class`: what the core asks of a scheduling class, and the classes in the
//! kernel's order (deadline > rt > fair > idle). The idle class has no queue
//! (`sched::idle`). A new class implements `SchedClass` and takes its place in `Class`,
//! above the ones it preempts.

use super::deadline::SchedDlEntity;
use super::fair::{SchedEntity, Tunables};
use super::features::Features;
use super::hooks::Hooks;
use super::rq::Rq;
use super::rt::SchedRtEntity;
use super::weight::LoadWeight;
use super::Sched;
use crate::sched::uapi::Policy;

/// What every CPU's classes share: the entities, the switches, the tunables.
pub struct Env<'a> {
    pub ses: &'a mut [SchedEntity],
    pub dl: &'a mut [SchedDlEntity],
    pub rt: &'a mut [SchedRtEntity],
    pub feat: &'a Features,
    pub tun: &'a Tunables,
    /// Record tracepoints into `Rq::notes`.
    pub tracing: bool,
    /// `sched_asym_cpucap_active`: CPUs of different capacities.
    pub asym: bool,
}

/// The operations of `struct sched_class` that schedlab's core calls (`p` is a task id;
/// `rq` is the CPU the task is on, or leaves).
pub trait SchedClass: Sync {
    fn enqueue_task(&self, rq: &mut Rq, env: &mut Env, p: u32, flags: u32);
    /// False when the task stays queued (fair's delayed dequeue).
    fn dequeue_task(&self, rq: &mut Rq, env: &mut Env, p: u32, flags: u32) -> bool;
    fn yield_task(&self, rq: &mut Rq, env: &mut Env, p: u32);
    /// Should the woken `p` preempt `rq.curr`, which is of this class?
    fn wakeup_preempt(&self, rq: &mut Rq, env: &mut Env, p: u32, wake_flags: u32) -> bool;
    /// The task this class would run next, if it has one.
    fn pick_task(&self, rq: &mut Rq, env: &mut Env) -> Option<u32>;
    fn put_prev_task(&self, rq: &mut Rq, env: &mut Env, p: u32);
    fn set_next_task(&self, rq: &mut Rq, env: &mut Env, p: u32);
    /// The tick hit `p`, the running task; true asks for a resched.
    fn task_tick(&self, rq: &mut Rq, env: &mut Env, p: u32) -> bool;
    // The optional operations (NULL in a kernel `sched_class`) do nothing by default.
    /// A new task `p` placed on `rq`, before its first enqueue.
    fn task_fork(&self, _rq: &mut Rq, _env: &mut Env, _p: u32) {}
    /// `p` leaves `rq` for another CPU while it sleeps.
    fn migrate_task_rq(&self, _rq: &mut Rq, _env: &mut Env, _p: u32) {}
    /// `p` has exited and been dequeued.
    fn task_dead(&self, _rq: &mut Rq, _env: &mut Env, _p: u32) {}
    /// `p` takes a new weight (a nice change).
    fn reweight_task(&self, _rq: &mut Rq, _env: &mut Env, _p: u32, _lw: LoadWeight) {}
    /// The CPU `p` should run on (`wake_flags`: WF_FORK or WF_TTWU).
    fn select_task_rq(
        &self,
        rqs: &[Rq],
        env: &Env,
        p: u32,
        allowed: &[bool],
        prev: usize,
        wake_flags: u32,
    ) -> usize;
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

    pub fn ops(self) -> &'static dyn SchedClass {
        match self {
            Class::Deadline => &super::deadline::sched_class::DEADLINE,
            Class::Rt => &super::rt::RT,
            Class::Fair => &super::fair::sched_class::FAIR,
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
    /// this CPU may pull RT tasks more important than any it has (`balance_rt`).
    #[inline]
    pub fn balance<H: Hooks>(self, s: &mut Sched, cpu: usize, prev: u32, h: &mut H) {
        if self == Class::Deadline && !s.balance_dl(cpu, prev, h) {
            return;
        }
        if self != Class::Fair {
            s.balance_rt(cpu, prev, h);
        }
    }

    /// `switched_from_dl` / `switched_from_rt`: a CPU left with no task of the class pulls
    /// one from an overloaded CPU. True when one came.
    pub fn switched_from<H: Hooks>(self, s: &mut Sched, cpu: usize, h: &mut H) -> bool {
        match self {
            Class::Deadline => s.switched_from_dl(cpu, h),
            Class::Rt => s.switched_from_rt(cpu, h),
            Class::Fair => false,
        }
    }

    /// At a tick, the RT and deadline signals of a CPU running another class's task decay,
    /// where the kernel's periodic balancing does it (`__update_blocked_others`); the
    /// running class's own is its task_tick's.
    #[inline]
    pub fn decay_other_class_avgs(self, rq: &mut Rq) {
        if self != Class::Rt {
            rq.update_rt_avg(false);
        }
        if self != Class::Deadline {
            rq.update_dl_avg(false);
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

/// `__pick_next_task`: the first class, highest first, with a task to run (a fair task the
/// fair server picked is of the fair class); `None` runs the idle task.
pub fn pick_next_task(rq: &mut Rq, env: &mut Env) -> Option<(Class, u32)> {
    rq.dl_server = false;
    let (c, p) = Class::ORDER
        .iter()
        .find_map(|&c| c.ops().pick_task(rq, env).map(|p| (c, p)))?;
    Some((if rq.dl_server { Class::Fair } else { c }, p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Kernel;
    use crate::sched::clock_pelt::{CpuScale, RqClock};
    use crate::sched::flags::*;

    const T0: u64 = 1_000_000_000;

    /// Every task's entities, the switches and the tunables: what an `Env` borrows.
    struct Shared {
        ses: Vec<SchedEntity>,
        dl: Vec<SchedDlEntity>,
        rt: Vec<SchedRtEntity>,
        feat: Features,
        tun: Tunables,
    }

    impl Shared {
        fn env(&mut self) -> Env<'_> {
            Env {
                ses: &mut self.ses,
                dl: &mut self.dl,
                rt: &mut self.rt,
                feat: &self.feat,
                tun: &self.tun,
                tracing: false,
                asym: false,
            }
        }
    }

    fn machine(n: usize, kernel: Kernel) -> (Vec<Rq>, Shared) {
        let feat = Features::preset(kernel);
        let tun = Tunables::new(&feat, n);
        let scale = CpuScale {
            cpu: 1024,
            freq: 1024,
        };
        let rqs = (0..n)
            .map(|_| {
                Rq::new(
                    RqClock::new(feat.invariance, scale, T0),
                    1024,
                    crate::sched::deadline::DlRq::new(None),
                    crate::sched::rt::RtRq::new(None, 25),
                )
            })
            .collect();
        let ses = (0..4)
            .map(|_| SchedEntity::new(LoadWeight::of_nice(0, false), feat.util_est.initial()))
            .collect();
        let shared = Shared {
            ses,
            dl: vec![SchedDlEntity::default(); 4],
            rt: vec![SchedRtEntity::default(); 4],
            feat,
            tun,
        };
        (rqs, shared)
    }

    /// Fork `p` onto `rq` and enqueue it, through the class interface.
    fn fork(rq: &mut Rq, env: &mut Env, p: u32) {
        let fair = Class::of(Policy::Other).ops();
        fair.task_fork(rq, env, p);
        fair.enqueue_task(rq, env, p, ENQUEUE_INITIAL);
    }

    #[test]
    fn pick_next_task_runs_the_fair_task_or_the_idle_task() {
        for kernel in [Kernel::V6_12, Kernel::V6_1] {
            let (mut rqs, mut shared) = machine(1, kernel);
            let mut env = shared.env();
            let rq = &mut rqs[0];
            assert_eq!(pick_next_task(rq, &mut env), None);
            fork(rq, &mut env, 2);
            assert_eq!(rq.nr_running(), 1);
            assert_eq!(pick_next_task(rq, &mut env), Some((Class::Fair, 2)));
            Class::Fair.ops().set_next_task(rq, &mut env, 2);
            rq.curr = Some(2);
            assert!(!rq.idle());
            assert!(Class::Fair
                .ops()
                .dequeue_task(rq, &mut env, 2, DEQUEUE_SPECIAL));
            rq.curr = None;
            assert!(rq.idle());
        }
    }

    #[test]
    fn placement_wakes_on_an_idle_prev_else_the_least_loaded_allowed_cpu() {
        let (mut rqs, mut shared) = machine(4, Kernel::V6_12);
        let mut env = shared.env();
        // CPU 1 runs one task, CPU 2 has two queued: 0 and 3 are idle.
        fork(&mut rqs[1], &mut env, 0);
        rqs[1].curr = Some(0);
        fork(&mut rqs[2], &mut env, 1);
        fork(&mut rqs[2], &mut env, 2);
        let fair = Class::Fair.ops();
        let all = [true; 4];
        assert_eq!(fair.select_task_rq(&rqs, &env, 0, &all, 3, WF_TTWU), 3);
        assert_eq!(fair.select_task_rq(&rqs, &env, 0, &all, 1, WF_TTWU), 0);
        assert_eq!(fair.select_task_rq(&rqs, &env, 0, &all, 3, WF_FORK), 0);
        let busy_only = [false, true, true, false];
        assert_eq!(
            fair.select_task_rq(&rqs, &env, 0, &busy_only, 2, WF_TTWU),
            1
        );
        let one = [false, false, true, false];
        assert_eq!(fair.select_task_rq(&rqs, &env, 0, &one, 0, WF_TTWU), 2);
    }
}
