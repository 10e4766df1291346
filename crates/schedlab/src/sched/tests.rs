//! The scheduler alone, driven through a recording `Hooks`: no engine, no threads. The
//! recorder reschedules at once, as the engine does, and keeps what was asked of it.

use super::deadline::DlTimer;
use super::fair::balance::stats::CpuIdleType;
use super::fair::{CfsRq, Fair, SchedEntity};
use super::features::Features;
use super::flags::ENQUEUE_WAKEUP;
use super::hooks::{Hooks, SchedTimer, Switch};
use super::task::{SchedTask, TaskState};
use super::uapi::{DlAttr, Policy, SchedAttr};
use super::{Sched, Ttwu};
use crate::cpufreq::Hook;
use crate::kernel::Kernel;
use crate::platform::load_builtin;
use crate::time::Ns;
use crate::tracepoint::Tracepoint;

pub(crate) const T0: Ns = 1_000_000_000;
const MS: Ns = 1_000_000;

/// A machine that only records: timers armed, CPUs rescheduled, switches.
#[derive(Default)]
pub(crate) struct Recorder {
    pub now: Ns,
    pub armed: Vec<(Ns, SchedTimer)>,
    pub resched: Vec<usize>,
    pub switches: Vec<(usize, Switch)>,
    /// A rescheduled CPU waits for the test to call `schedule` (its preemption point later).
    pub defer: bool,
    /// What each newly idle pass takes beyond its counted work.
    pub newidle_stall: Ns,
    /// The kernel work each CPU still has to do when asked (`Hooks::kernel_pending`).
    pub kernel_pending: Ns,
    /// The kernel work a task switched to brings (the system call a preemption took it
    /// from, a new task's first steps), added to `kernel_pending` as it goes on.
    pub switched_in_work: Ns,
}

impl Hooks for Recorder {
    fn now(&self) -> Ns {
        self.now
    }

    fn tracing(&self) -> bool {
        false
    }

    fn trace(&mut self, _tasks: &[SchedTask], _tp: Tracepoint) {}

    fn arm(&mut self, at: Ns, timer: SchedTimer) {
        self.armed.push((at, timer));
    }

    fn resched_curr(&mut self, s: &mut Sched, cpu: usize) {
        self.resched.push(cpu);
        if !self.defer {
            s.schedule(cpu, self);
        }
    }

    fn context_switch(&mut self, _s: &mut Sched, cpu: usize, sw: Switch) {
        if sw.prev != sw.next {
            self.switches.push((cpu, sw));
        }
    }

    fn switched_in(&mut self, _s: &mut Sched, _cpu: usize, sw: Switch) {
        if sw.prev != sw.next {
            self.kernel_pending += self.switched_in_work;
        }
    }

    fn cpufreq_update_util(&mut self, _s: &mut Sched, _cpu: usize, _hook: Hook) {}

    fn newidle_stall(&mut self, _cpu: usize) -> Ns {
        self.newidle_stall
    }

    fn kernel_pending(&mut self, _s: &Sched, _cpu: usize) -> Ns {
        self.kernel_pending
    }
}

/// Reads of the scheduler's internals for the whole-run tests (`sim/tests`), which check
/// the fair class's sums after a simulation.
impl Sched {
    /// Every scheduling entity, tasks' and groups'.
    pub(crate) fn entities(&self) -> &[SchedEntity] {
        &self.ses
    }

    /// `&cpu_rq(cpu)->cfs`.
    pub(crate) fn cfs_rq(&self, cpu: usize) -> &CfsRq {
        &self.cfs_rqs[cpu]
    }

    /// EEVDF's weighted lag sum of CPU `cpu`'s root cfs_rq (`Fair::weighted_lag_sum`) and
    /// its total weight, curr included.
    pub(crate) fn weighted_lag_sum<H: Hooks>(&mut self, cpu: usize, h: &mut H) -> (i128, u64) {
        let mut cfs = self.cfs_rqs[cpu].clone();
        self.on_rq(cpu, h, |rq, env| {
            let mut f = Fair::on(rq, env, &mut cfs);
            let w = f.cfs.avg_load + f.cfs.curr.map_or(0, |c| f.ses[c as usize].weight());
            (f.weighted_lag_sum(), w)
        })
    }
}

pub(crate) fn machine(platform: &str, kernel: Kernel) -> (Sched, Recorder) {
    let plat = load_builtin(platform).unwrap();
    let s = Sched::new(&plat, Features::preset(kernel), false, T0);
    let h = Recorder {
        now: T0,
        ..Recorder::default()
    };
    (s, h)
}

/// `platform` under 6.18 with `throttle`, and one fair task forked into a new group /g:
/// (scheduler, recorder, the group, the task).
pub(crate) fn task_in_group(
    platform: &str,
    throttle: super::fair::bandwidth::Throttle,
) -> (Sched, Recorder, u32, u32) {
    let (mut s, mut h) = machine(platform, Kernel::V6_18);
    s.feat.throttle = throttle;
    let root = super::fair::group::ROOT_TG;
    let g = s.sched_create_group("/g".into(), root, 1024, false, None);
    let a = SchedAttr {
        group: g,
        ..attr(Policy::Other)
    };
    let p = s.tasks.len() as u32;
    assert!(s.wake_up_new_task(1000, "p".into(), &a, None, None, &mut h));
    (s, h, g, p)
}

pub(crate) fn attr(policy: Policy) -> SchedAttr {
    SchedAttr::of(policy)
}

fn fifo(rt_priority: u32) -> SchedAttr {
    SchedAttr {
        rt_priority,
        ..attr(Policy::Fifo)
    }
}

/// Fork a task of `a` at the recorder's time; its id is the count of tasks before it.
fn fork(s: &mut Sched, h: &mut Recorder, a: SchedAttr) -> u32 {
    fork_on(s, h, a, None)
}

/// Fork a task allowed on `cpus` only (None: every CPU).
pub(crate) fn fork_on(
    s: &mut Sched,
    h: &mut Recorder,
    a: SchedAttr,
    cpus: Option<&[usize]>,
) -> u32 {
    let id = s.tasks.len() as u32;
    let mask = cpus.map(|cpus| (0..s.rqs.len()).map(|c| cpus.contains(&c)).collect());
    assert!(s.wake_up_new_task(1000 + id, format!("t{id}"), &a, mask, None, h));
    id
}

#[test]
fn a_preempted_rt_task_is_pushed_to_the_cpu_running_less_important_work() {
    // smp:2. A fair task forks onto CPU 0 (the least loaded) and runs. FIFO 20 forks onto
    // CPU 0 too (select_task_rq_rt keeps prev: curr is not RT) and preempts it. FIFO 30 does
    // the same and preempts FIFO 20 (prio 69 < 79), whose set_next_task queues the push:
    // push_rt_task finds FIFO 20 not above curr, and find_lowest_rq the CPU at cpupri 0,
    // CPU 1, idle. FIFO 20 moves there and CPU 1 is rescheduled to run it.
    let (mut s, mut h) = machine("smp:2", Kernel::V6_12);
    let fair = fork(&mut s, &mut h, attr(Policy::Other));
    let low = fork(&mut s, &mut h, fifo(20));
    let high = fork(&mut s, &mut h, fifo(30));
    assert_eq!(s.rqs[0].curr, Some(high));
    assert_eq!(s.rqs[1].curr, Some(low));
    assert_eq!(s.tasks[low as usize].cpu, 1);
    assert_eq!(s.tasks[low as usize].stats.migrations(), 1);
    assert_eq!(h.resched.last(), Some(&1));
    assert_eq!(s.tasks[fair as usize].state, TaskState::Runnable);
    let on_cpu1: Vec<_> = h.switches.iter().filter(|(c, _)| *c == 1).collect();
    assert_eq!(on_cpu1.len(), 1);
    assert_eq!((on_cpu1[0].1.prev, on_cpu1[0].1.next), (None, Some(low)));
}

#[test]
fn an_rt_task_freed_from_its_one_cpu_is_pushed_when_next_preempted() {
    // smp:2. FIFO 20 and FIFO 30 fork onto CPU 0, allowed it only; 30 preempts 20, which,
    // not migratable, stays queued there with CPU 1 idle. 20 is then allowed both CPUs: the
    // kernel requeues it under the new mask (sched_change), where enqueue_pushable_task
    // reads nr_cpus_allowed 2. 30 sleeps and 20 runs; 30 wakes, preempts it again, and now
    // its set_next_task queues the push: 20 moves to CPU 1.
    let (mut s, mut h) = machine("smp:2", Kernel::V6_12);
    let low = fork_on(&mut s, &mut h, fifo(20), Some(&[0]));
    let high = fork_on(&mut s, &mut h, fifo(30), Some(&[0]));
    assert_eq!((s.rqs[0].curr, s.rqs[1].curr), (Some(high), None));
    s.set_cpus_allowed(low, vec![true, true], &mut h);
    assert_eq!(s.tasks[low as usize].cpu, 0);
    h.now = T0 + MS;
    s.deactivate(high, TaskState::Sleeping, &mut h);
    assert_eq!(s.rqs[0].curr, Some(low));
    h.now = T0 + 2 * MS;
    assert!(s.try_to_wake_up(high, 0, 0, &mut h));
    assert_eq!((s.rqs[0].curr, s.rqs[1].curr), (Some(high), Some(low)));
}

#[test]
fn an_exhausted_deadline_task_is_throttled_then_replenished_at_its_next_period() {
    // 10/100 ms on smp:1. Set up at T0: deadline T0 + 100 ms, runtime 10 ms. A tick 12 ms
    // later charges 12 ms (capacity and frequency 1024: unscaled), runtime −2 ms: throttled,
    // the replenishment timer armed at the next period, T0 + 100 ms, the CPU idle. When it
    // fires, replenish_dl_entity adds one period and one budget: deadline T0 + 200 ms,
    // runtime −2 + 10 = 8 ms (the overrun repaid), and the task runs again.
    let (mut s, mut h) = machine("smp:1", Kernel::V6_12);
    let dl = DlAttr {
        runtime: 10 * MS,
        deadline: 100 * MS,
        period: 100 * MS,
        reclaim: false,
    };
    let p = fork(
        &mut s,
        &mut h,
        SchedAttr {
            dl: Some(dl),
            ..attr(Policy::Deadline)
        },
    );
    assert_eq!(s.rqs[0].curr, Some(p));
    assert_eq!(s.dl_of(p).deadline, T0 + 100 * MS);
    h.now = T0 + 12 * MS;
    s.sched_tick(0, &mut h);
    let se = s.dl_of(p);
    assert!(se.throttled);
    assert_eq!(se.runtime, -2 * MS as i64);
    assert_eq!(s.rqs[0].curr, None);
    let (at, timer) = *h.armed.last().expect("a timer");
    assert_eq!(at, T0 + 100 * MS);
    assert!(matches!(
        timer,
        SchedTimer::Dl {
            kind: DlTimer::Replenish,
            ..
        }
    ));
    h.now = at;
    assert!(s.timer(timer, &mut h));
    let se = s.dl_of(p);
    assert_eq!(
        (se.throttled, se.runtime, se.deadline),
        (false, 8 * MS as i64, T0 + 200 * MS)
    );
    assert_eq!(se.stats.exhaustions, 1);
    assert_eq!(s.rqs[0].curr, Some(p));
}

/// smp:1: a forks and runs; b forks behind it (under CFS, START_DEBIT puts it a slice ahead;
/// under EEVDF, RUN_TO_PARITY keeps a running through its slice). a sleeps: the cfs_rq holds
/// b alone and picks it; b sleeps and the idle task runs. `spare` fair entities that belong
/// to no task (as a task group's would) come first in the arena.
fn fair_pick(kernel: Kernel, spare: usize) {
    let (mut s, mut h) = machine("smp:1", kernel);
    for _ in 0..spare {
        s.ses.push(crate::sched::fair::SchedEntity::new(
            u32::MAX,
            crate::sched::weight::LoadWeight::of_nice(0, false),
            s.feat.util_est.initial(),
        ));
    }
    let a = fork(&mut s, &mut h, attr(Policy::Other));
    let b = fork(&mut s, &mut h, attr(Policy::Other));
    assert_eq!(s.tasks[b as usize].se as usize, b as usize + spare);
    assert_eq!(s.rqs[0].curr, Some(a), "{kernel:?}");
    assert_eq!(s.cfs_rqs[0].h_nr_queued, 2);
    h.now = T0 + MS;
    s.deactivate(a, TaskState::Sleeping, &mut h);
    assert_eq!(s.rqs[0].curr, Some(b), "{kernel:?}");
    assert_eq!(s.tasks[b as usize].state, TaskState::Running);
    assert!(s.ses[s.tasks[b as usize].se as usize].on_rq);
    let cpu0: Vec<_> = h
        .switches
        .iter()
        .map(|(_, sw)| (sw.prev, sw.next))
        .collect();
    assert_eq!(cpu0, [(None, Some(a)), (Some(a), Some(b))], "{kernel:?}");
    s.deactivate(b, TaskState::Sleeping, &mut h);
    assert!(
        s.idle_cpu(0),
        "{kernel:?}: nothing left, the idle task runs"
    );
}

#[test]
fn a_fair_enqueue_is_picked_when_the_running_task_sleeps() {
    for kernel in Kernel::ALL {
        fair_pick(kernel, 0);
    }
}

#[test]
fn under_eevdf_a_task_whose_request_is_served_is_rescheduled_by_the_next_wakeup() {
    // smp:1. A runs from T0 with B queued behind it (a fork does not preempt a task in its
    // first slice); 1 ms later C forks. 6.12: the wakeup's update_curr charges A 1 ms, past
    // its deadline (its request was at most a 0.75 ms base slice) with others queued, so it
    // asks for a reschedule itself, though C is not the pick (B, placed at T0's average, has
    // the earlier deadline): B runs. 6.1's update_curr asks nothing and C, placed a slice
    // after min_vruntime (START_DEBIT), does not preempt: A runs on until a tick.
    for (kernel, next) in [(Kernel::V6_12, 1), (Kernel::V6_1, 0)] {
        let (mut s, mut h) = machine("smp:1", kernel);
        let a = fork(&mut s, &mut h, attr(Policy::Other));
        fork(&mut s, &mut h, attr(Policy::Other));
        assert_eq!(s.rqs[0].curr, Some(a), "{kernel:?}");
        h.now = T0 + MS;
        fork(&mut s, &mut h, attr(Policy::Other));
        assert_eq!(s.rqs[0].curr, Some(next), "{kernel:?}");
    }
}

#[test]
fn a_wakeup_that_preempts_leaves_the_clock_where_it_was_until_the_switch() {
    // smp:1, 6.1. A forks onto the idle CPU at vruntime 6 ms (min_vruntime 0 plus its
    // START_DEBIT slice, 6 ms alone); B forks behind it at max(A's 6, 0 + 3 ms, its slice of
    // two) = 6 ms. A runs 1 ms (7 ms) and sleeps; B runs 4 ms (10 ms). A wakes at T0 + 5 ms,
    // placed at max(7, 10 − 3) = 7: 3 ms behind B, more than the 1 ms wakeup granularity,
    // so B is to be preempted, and wakeup_preempt asks rq_clock_skip_update. The switch
    // comes 5 µs later: __schedule keeps the clock of the wakeup, so B is charged 4 ms, not
    // 4.005, and A's run starts at the wakeup's clock: its next update, at T0 + 6 ms, charges
    // it 1 ms, the skipped 5 µs included (2 ms in all).
    let (mut s, mut h) = machine("smp:1", Kernel::V6_1);
    let a = fork(&mut s, &mut h, attr(Policy::Other));
    let b = fork(&mut s, &mut h, attr(Policy::Other));
    h.now = T0 + MS;
    s.deactivate(a, TaskState::Sleeping, &mut h);
    assert_eq!(s.rqs[0].curr, Some(b));
    h.defer = true;
    h.now = T0 + 5 * MS;
    h.resched.clear();
    assert!(s.try_to_wake_up(a, 0, 0, &mut h));
    assert_eq!(h.resched, [0], "A preempts B");
    h.now += 5_000;
    s.schedule(0, &mut h);
    assert_eq!(s.rqs[0].curr, Some(a));
    let run = |s: &Sched, t: u32| s.ses[s.tasks[t as usize].se as usize].sum_exec_runtime;
    assert_eq!(run(&s, b), 4 * MS);
    h.now = T0 + 6 * MS;
    s.deactivate(a, TaskState::Sleeping, &mut h);
    assert_eq!(run(&s, a), 2 * MS);
}

#[test]
fn a_wakeup_onto_an_idle_cpu_charges_the_woken_task_from_the_wakeup() {
    // smp:1, 6.12. A runs 1 ms from T0 and sleeps: the CPU idles. A wakes at T0 + 5 ms; the
    // idle task counts as queued (init_idle sets its on_rq), so wakeup_preempt asks the
    // clock skip too, and the switch 5 µs later keeps the wakeup's clock: A's run starts at
    // T0 + 5 ms, and its next update, at T0 + 6 ms, charges it 1 ms (2 ms in all), the 5 µs
    // before its switch included.
    let (mut s, mut h) = machine("smp:1", Kernel::V6_12);
    let a = fork(&mut s, &mut h, attr(Policy::Other));
    h.now = T0 + MS;
    s.deactivate(a, TaskState::Sleeping, &mut h);
    assert!(s.idle_cpu(0));
    h.defer = true;
    h.now = T0 + 5 * MS;
    assert!(s.try_to_wake_up(a, 0, 0, &mut h));
    h.now += 5_000;
    s.schedule(0, &mut h);
    assert_eq!(s.rqs[0].curr, Some(a));
    h.now = T0 + 6 * MS;
    s.deactivate(a, TaskState::Sleeping, &mut h);
    assert_eq!(
        s.ses[s.tasks[a as usize].se as usize].sum_exec_runtime,
        2 * MS
    );
}

#[test]
fn a_waking_task_is_on_no_runqueue_until_its_enqueue() {
    // smp:2, both kernels: t runs on CPU 0 and sleeps. Its wakeup from idle CPU 0 (its timer
    // interrupt) chooses CPU 0 (`select_task_rq`: prev idle) and leaves t TASK_WAKING there:
    // CPU 0 is still idle (no task queued) to CPU 1's placement until `ttwu_activate`
    // queues t; a second wakeup meanwhile finds t awake already, as try_to_wake_up's state
    // test does.
    for kernel in Kernel::ALL {
        let (mut s, mut h) = machine("smp:2", kernel);
        let t = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[0]));
        h.now = T0 + MS;
        s.deactivate(t, TaskState::Sleeping, &mut h);
        h.now = T0 + 2 * MS;
        let Ttwu::Waking { flags, queued, .. } = s.ttwu_select(t, 0, 0, &mut h) else {
            panic!("{kernel:?}: t sleeps, so it is woken")
        };
        assert_eq!((flags, queued), (ENQUEUE_WAKEUP, false), "{kernel:?}");
        assert_eq!(s.tasks[t as usize].state, TaskState::Waking, "{kernel:?}");
        assert!(s.idle_cpu(0) && s.nr_running(0) == 0, "{kernel:?}");
        assert_eq!(
            s.ttwu_select(t, 1, 0, &mut h),
            Ttwu::NotAsleep,
            "{kernel:?}"
        );
        assert!(!s.try_to_wake_up(t, 1, 0, &mut h), "{kernel:?}");
        h.now += 5_000;
        s.ttwu_activate(t, (flags, 0), (0, queued), &mut h);
        // (the test's hooks switch at once: t runs)
        assert_eq!(s.rqs[0].curr, Some(t), "{kernel:?}");
        assert!(!s.idle_cpu(0) && s.nr_running(0) == 1, "{kernel:?}");
        assert_eq!(
            s.rqs[0].stats.ttwu_count, 1,
            "{kernel:?}: one wakeup counted"
        );
    }
}

#[test]
fn a_task_is_scheduled_through_its_own_entity_not_the_entity_of_its_id() {
    for kernel in Kernel::ALL {
        fair_pick(kernel, 1);
    }
}

#[test]
fn a_task_woken_on_another_cpu_is_queued_on_that_cpus_root_cfs_rq() {
    // smp:2: t runs on CPU 0 and sleeps; it may then run on CPU 1 only, so its wakeup
    // migrates it: set_task_rq points its entity at CPU 1's root cfs_rq, where it is queued
    // (and runs, CPU 1 being idle), CPU 0's left empty.
    let (mut s, mut h) = machine("smp:2", Kernel::V6_12);
    let t = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[0]));
    let se = s.tasks[t as usize].se as usize;
    assert_eq!(s.ses[se].cfs_rq, 0);
    h.now = T0 + MS;
    s.deactivate(t, TaskState::Sleeping, &mut h);
    s.set_cpus_allowed(t, vec![false, true], &mut h);
    h.now = T0 + 2 * MS;
    assert!(s.try_to_wake_up(t, 0, 0, &mut h));
    assert_eq!((s.tasks[t as usize].cpu, s.ses[se].cfs_rq), (1, 1));
    assert_eq!((s.cfs_rqs[0].h_nr_queued, s.cfs_rqs[1].h_nr_queued), (0, 1));
    assert_eq!(s.cfs_rqs[1].curr, Some(se as u32));
    assert_eq!(s.rqs[1].curr, Some(t));
}

#[test]
fn a_group_costs_at_most_512_bytes_per_cpu() {
    // The target per (group, CPU) pair: its entity and cfs_rq, with 32 bytes left for its
    // share of the group itself (a TaskGroup, its path and its place in its parent's children,
    // over 8 CPUs) and the allocator's headers.
    use super::fair::{CfsRq, SchedEntity};
    let boxed = std::mem::size_of::<Box<CfsRq>>(); // its place in Sched::cfs_rqs
    let pair = std::mem::size_of::<CfsRq>() + boxed + std::mem::size_of::<SchedEntity>();
    assert!(pair <= 480, "entity + cfs_rq = {pair} bytes");
}

#[test]
fn a_remote_wakeup_is_queued_on_the_target_across_llcs_or_when_it_is_idle() {
    // ttwu_queue_cond on icelake-2s (one LLC per package), waker CPU 0: an idle CPU of the
    // same LLC takes the wakeup on its wake list, a busy one is enqueued by the waker
    // itself, and any CPU of the other package takes it, busy or not. NO_TTWU_QUEUE: the
    // waker always does it.
    let (mut s, mut h) = machine("icelake-2s", Kernel::V6_12);
    let other = (1..s.rqs.len())
        .find(|&c| !s.topo.share_cache(0, c))
        .unwrap();
    assert!(s.ttwu_queue_cond(0, 1) && s.ttwu_queue_cond(0, other));
    for cpu in [1, other] {
        fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[cpu]));
    }
    assert!(!s.ttwu_queue_cond(0, 1) && s.ttwu_queue_cond(0, other));
    s.feat.set_feature("NO_TTWU_QUEUE").unwrap();
    assert!(!s.ttwu_queue_cond(0, 1) && !s.ttwu_queue_cond(0, other));
}

/// smp:2, 6.12: a and b run on CPU 0; c and d on CPU 1, where d may also run on CPU 0. a runs
/// 1 ms and sleeps: its lag is V − v_a = (1 ms + 0) / 2 − 1 ms = −0.5 ms, not eligible, so
/// DELAY_DEQUEUE leaves it queued (nr_running stays 1). b runs 1 ms and sleeps at lag 0
/// (eligible): dequeued. CPU 0 then has nothing to run but the delayed a; what became of
/// it. CPU 0's domain starts with a newly idle cost of `inherited` (ns), and each pass
/// takes `stall` more than its counted work.
fn cpu0_left_with_a_delayed_task(inherited: Ns, stall: Ns) -> (Sched, u32) {
    let (mut s, mut h) = machine("smp:2", Kernel::V6_12);
    h.newidle_stall = stall;
    s.inherit_newidle_cost(0, inherited);
    let a = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[0]));
    let b = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[0]));
    fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[1]));
    let d = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[1]));
    s.set_cpus_allowed(d, vec![true, true], &mut h);
    assert_eq!(s.tasks[d as usize].cpu, 1);
    h.now = T0 + MS;
    s.deactivate(a, TaskState::Sleeping, &mut h);
    assert_eq!(s.rqs[0].curr, Some(b));
    assert!(s.ses[s.tasks[a as usize].se as usize].sched_delayed);
    assert_eq!(s.nr_running(0), 2);
    h.now = T0 + 2 * MS;
    s.deactivate(b, TaskState::Sleeping, &mut h);
    assert!(!s.ses[s.tasks[a as usize].se as usize].sched_delayed);
    (s, d)
}

fn newidle_passes(s: &Sched, cpu: usize) -> u32 {
    s.topo.domains[cpu][0].stats.lb_count[CpuIdleType::NewlyIdle as usize]
}

#[test]
fn from_7_0_avg_idle_is_sampled_when_a_pulled_task_ends_the_idle() {
    // smp:2 (no costs). a alone on CPU 0 sleeps at T0 + 1 ms: CPU 0 goes newly idle
    // (idle_stamp T0 + 1 ms; CPU 1 has one task, nothing to pull), avg_idle at its initial
    // 1 ms (twice the migration cost; capped at twice max_idle_balance_cost, 0.5 ms). At
    // T0 + 1.2 ms e forks onto CPU 1 beside c, and may then run anywhere. CPU 1's tick at
    // T0 + 1.5 ms kicks the idle CPU 0's balance, which pulls a task: CPU 0's idle stretch
    // ends with no wakeup. ≤6.19 samples avg_idle in ttwu_do_activate only: 1 ms still.
    // 7.0+ samples it in put_prev_task_idle, 0.5 ms: 1 ms + (0.5 ms − 1 ms) / 8 = 937.5 µs.
    use super::fair::balance::AvgIdle;
    for (form, want) in [(AvgIdle::Wakeup, 1_000_000), (AvgIdle::IdleExit, 937_500)] {
        let (mut s, mut h) = machine("smp:2", Kernel::V7_3);
        s.feat.avg_idle = form;
        let a = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[0]));
        fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[1]));
        h.now = T0 + MS;
        s.deactivate(a, TaskState::Sleeping, &mut h);
        assert_eq!(s.rqs[0].idle_stamp, Some(T0 + MS), "{form:?}");
        h.now = T0 + 1_200_000;
        let e = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[1]));
        s.set_cpus_allowed(e, vec![true, true], &mut h);
        assert_eq!(s.rqs[0].curr, None, "{form:?}");
        h.now = T0 + 1_500_000;
        s.sched_tick(1, &mut h);
        assert!(s.rqs[0].curr.is_some(), "{form:?}: CPU 0 pulled a task");
        assert_eq!(s.rqs[0].avg_idle, want, "{form:?}");
    }
}

#[test]
fn before_7_0_a_fork_onto_an_idle_cpu_leaves_avg_idle_to_the_next_wakeup() {
    // smp:2 (no costs), 6.12. a alone on CPU 0 sleeps at T0 + 1 ms: CPU 0 goes newly idle
    // (idle_stamp T0 + 1 ms), avg_idle at its initial 1 ms. At T0 + 1.2 ms e forks onto
    // CPU 0: wake_up_new_task activates it without ttwu_do_activate's sample, so the stamp
    // stays. At T0 + 1.4 ms a wakes on CPU 0 (e running): ttwu_do_activate samples the
    // stretch from the stamp, 0.4 ms, and clears it: 1 ms + (0.4 ms − 1 ms) / 8 = 925 µs.
    // (Sampling at the fork would give 1 ms + (0.2 ms − 1 ms) / 8 = 900 µs, and nothing at
    // the wakeup.)
    let (mut s, mut h) = machine("smp:2", Kernel::V6_12);
    let a = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[0]));
    h.now = T0 + MS;
    s.deactivate(a, TaskState::Sleeping, &mut h);
    h.now = T0 + 1_200_000;
    let e = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[0]));
    assert_eq!(s.rqs[0].curr, Some(e));
    assert_eq!(s.rqs[0].idle_stamp, Some(T0 + MS));
    assert_eq!(s.rqs[0].avg_idle, 1_000_000);
    h.now = T0 + 1_400_000;
    assert!(s.try_to_wake_up(a, 0, 0, &mut h));
    assert_eq!((s.rqs[0].idle_stamp, s.rqs[0].avg_idle), (None, 925_000));
}

#[test]
fn a_cpu_left_with_a_delayed_task_only_balances_newly_idle_after_the_pick() {
    // balance_fair sees the delayed a queued and does not balance; pick_next_task_fair's
    // pick dequeues it, finds nothing, and its idle label balances newly idle: CPU 1 has
    // two tasks (rd overloaded), avg_idle is its initial 1 ms against a max_newidle_lb_cost
    // of 0, so d, queued, is pulled.
    let (s, d) = cpu0_left_with_a_delayed_task(0, 0);
    assert_eq!(newidle_passes(&s, 0), 1);
    assert_eq!(s.rqs[0].curr, Some(d));
    assert_eq!(s.tasks[d as usize].stats.migrations(), 1);
}

#[test]
fn newly_idle_balancing_waits_while_a_pass_costs_more_than_the_cpu_idles() {
    // The same, with CPU 0's domain remembering a 2 ms pass (max_idle_balance_cost raised
    // with it): avg_idle, 1 ms, is below it, so no pass runs and CPU 0 idles.
    let (s, _) = cpu0_left_with_a_delayed_task(2 * MS, 0);
    assert_eq!(s.rqs[0].max_idle_balance_cost, 2 * MS);
    assert_eq!(newidle_passes(&s, 0), 0);
    assert_eq!(s.rqs[0].curr, None);
    // Below avg_idle it does not stop the pass, whose cost is its priced work (the pass
    // alone, from 0) plus the 300 µs stall, above the 100 µs it started with.
    let cost = |s: &Sched| s.topo.domains[0][0].max_newidle_lb_cost;
    let work = cost(&cpu0_left_with_a_delayed_task(0, 0).0);
    assert!(work > 0 && work < 100_000, "{work}");
    let (s, d) = cpu0_left_with_a_delayed_task(100_000, 300_000);
    assert_eq!((newidle_passes(&s, 0), s.rqs[0].curr), (1, Some(d)));
    assert_eq!(cost(&s), work + 300_000);
    assert_eq!(
        s.rqs[0].max_idle_balance_cost, 500_000,
        "sysctl_sched_migration_cost"
    );
}

#[test]
fn under_7_x_next_buddy_a_sync_wakeup_marks_the_wakee_without_preempting() {
    // smp:1, the 7.3 preset with NEXT_BUDDY. b runs and sleeps at T0 (lag 0); a forks and
    // runs from T0, its request v0 .. v0 + 0.7 ms. At T0 + 0.1 ms a wakes b: placed at V =
    // a's vruntime v0 + 0.1 ms with lag 0, b is eligible and its deadline, v0 + 0.8 ms, is
    // after a's, so EEVDF alone would keep a. With NEXT_BUDDY b becomes cfs_rq->next, which
    // the pick prefers while eligible (PICK_BUDDY): under `pick` (6.6-6.18) it preempts;
    // under `rework` (7.x) an unsynced wakeup does too (PREEMPT_WAKEUP_PICK), but a WF_SYNC
    // one asks preempt_sync, which waits for a to have run sysctl_sched_migration_cost
    // since its exec_start, just set by the wakeup's update_curr: no preemption, b stays
    // the next buddy.
    use super::fair::WakeupPreempt;
    use super::flags::WF_SYNC;
    for (form, sync, preempts) in [
        (WakeupPreempt::Pick, WF_SYNC, true),
        (WakeupPreempt::Rework, 0, true),
        (WakeupPreempt::Rework, WF_SYNC, false),
    ] {
        let (mut s, mut h) = machine("smp:1", Kernel::V7_3);
        s.feat.set_feature("NEXT_BUDDY").unwrap();
        s.feat.wakeup_preempt = form;
        let b = fork(&mut s, &mut h, attr(Policy::Other));
        s.deactivate(b, TaskState::Sleeping, &mut h);
        let a = fork(&mut s, &mut h, attr(Policy::Other));
        assert_eq!(s.rqs[0].curr, Some(a));
        h.now = T0 + MS / 10;
        assert!(s.try_to_wake_up(b, 0, sync, &mut h));
        let want = if preempts { b } else { a };
        assert_eq!(s.rqs[0].curr, Some(want), "{form:?}, sync {sync}");
        if !preempts {
            let next = s.cfs_rqs[0].next;
            assert_eq!(next, Some(s.tasks[b as usize].se), "{form:?}");
        }
    }
}

#[test]
fn from_7_1_the_hrtick_starts_once_the_switch_is_done() {
    // smp:1 under 7.3 (HRTICK), each CPU with 5 µs of kernel work left whenever asked. a and
    // b fork at T0, each asking half a slice first (PLACE_DEADLINE_INITIAL: deadline v0 +
    // 0.35 ms). b's enqueue gives a a second fair task, so it arms a's hrtick at once
    // (hrtick_update, outside schedule()): at T0 + 0.35 ms. There a's request is served and
    // b (v0, eligible: V = v0 + 0.175 ms) is picked, its hrtick asked for 0.35 ms:
    // - pick (≤ 7.0): started by the pick, at T0 + 0.7 ms;
    // - schedule_exit (7.1+): noted, and started at schedule()'s end, after the switch's
    //   5 µs: at T0 + 0.7 ms + 5 µs. Not after what b does once switched to, which comes
    //   after `finish_lock_switch` (here 0.2 ms of b's own kernel work, as the rest of a
    //   system call a preemption took it from would be): the same instant.
    // A schedule() that picks b again (protected to its deadline) then cancels it under
    // pick (`hrtick_clear`, nothing restarts it) and leaves it under schedule_exit.
    use super::hrtick::HrtickArm;
    const K: Ns = 5_000;
    for (arm, want, work) in [
        (HrtickArm::Pick, T0 + 700_000, 0),
        (HrtickArm::ScheduleExit, T0 + 700_000 + K, 0),
        (HrtickArm::ScheduleExit, T0 + 700_000 + K, 200_000),
    ] {
        let (mut s, mut h) = machine("smp:1", Kernel::V7_3);
        s.feat.hrtick_arm = arm;
        h.kernel_pending = K;
        fork(&mut s, &mut h, attr(Policy::Other));
        let b = fork(&mut s, &mut h, attr(Policy::Other));
        h.switched_in_work = work;
        let hrticks = |h: &Recorder| -> Vec<Ns> {
            let armed = h.armed.iter();
            armed
                .filter(|(_, t)| matches!(t, SchedTimer::Hrtick { .. }))
                .map(|(at, _)| *at)
                .collect()
        };
        assert_eq!(
            hrticks(&h),
            [T0 + 350_000],
            "{arm:?}: a's, armed by b's enqueue"
        );
        h.now = T0 + 350_000;
        assert!(s.hrtick(0, &mut h));
        assert_eq!(s.rqs[0].curr, Some(b), "{arm:?}");
        assert_eq!(hrticks(&h), [T0 + 350_000, want], "{arm:?}");
        s.schedule(0, &mut h);
        assert_eq!(s.rqs[0].curr, Some(b), "{arm:?}");
        let left = (arm == HrtickArm::ScheduleExit).then_some(want);
        assert_eq!(s.rqs[0].hrtick, left, "{arm:?}");
    }
}

#[test]
fn from_7_x_a_delayed_wakee_is_placed_at_zero_lag_against_its_waker_brought_up_to_date() {
    // smp:1 under 7.3, no costs. a and b fork at T0 (v0, half-slice deadlines v0 + 0.35 ms;
    // b's fork does not preempt a). At T0 + 0.2 ms a sleeps: V = v0 + 0.1 ms, its lag
    // −0.1 ms, not eligible: delayed; b is picked, protected to its deadline. At T0 + 0.5 ms
    // b, having run 0.3 ms, wakes a:
    // - zero (6.x): requeue_delayed_entity reads b's vruntime as last updated (v0, at its
    //   pick): a's lag −0.1 ms, nothing to drop; the wakeup's update_curr then brings b to
    //   v0 + 0.3 ms: V = v0 + 0.25 ms, a eligible (+0.05 ms) and b not: a preempts.
    // - bounded (7.x): b is brought up to date first, so a's lag is +0.05 ms: above its
    //   −0.1 ms at the delay, cut to 0 (DELAY_ZERO), and a is placed again, at V without it,
    //   b's v0 + 0.3 ms. b, eligible, keeps its protection: no preemption.
    use super::fair::DelayedLag;
    for (form, runs) in [(DelayedLag::Zero, 0), (DelayedLag::Bounded, 1)] {
        let (mut s, mut h) = machine("smp:1", Kernel::V7_3);
        s.feat.delayed_lag = form;
        let a = fork(&mut s, &mut h, attr(Policy::Other));
        let b = fork(&mut s, &mut h, attr(Policy::Other));
        let se = |s: &Sched, t: u32| s.ses[s.tasks[t as usize].se as usize].clone();
        let v0 = se(&s, a).vruntime;
        h.now = T0 + MS / 5;
        s.deactivate(a, TaskState::Sleeping, &mut h);
        assert!(se(&s, a).sched_delayed, "{form:?}");
        assert_eq!(s.rqs[0].curr, Some(b), "{form:?}");
        h.now = T0 + MS / 2;
        assert!(s.try_to_wake_up(a, 0, 0, &mut h));
        assert_eq!(s.rqs[0].curr, Some([a, b][runs]), "{form:?}");
        let placed = [v0 + MS / 5, v0 + 3 * MS / 10][runs];
        assert_eq!(se(&s, a).vruntime, placed, "{form:?}");
    }
}

#[test]
fn from_6_17_a_lag_is_bounded_by_the_longest_queued_slice_plus_a_tick() {
    // smp:1 under 7.3, no costs, no tick (none is called): a and b fork at T0 at v0 (b's
    // fork does not preempt a). a runs 10 ms and sleeps: V = (va + vb) / 2 = v0 + 5 ms, a's
    // lag −5 ms (both nice 0: virtual time is real time), kept at the delay, clamped:
    // - slice (≤6.16): to max(2 × 0.7 ms, the 4 ms tick) = 4 ms;
    // - max_slice (6.17+): to the longest slice queued (a's and b's 0.7 ms) + 4 ms = 4.7 ms,
    //   or, when b asked for a 20 ms slice, 24 ms: not clamped.
    use super::fair::LagLimit;
    for (limit, b_slice, lag) in [
        (LagLimit::Slice, None, -4 * MS as i64),
        (LagLimit::MaxSlice, None, -4_700_000),
        (LagLimit::Slice, Some(20 * MS), -4 * MS as i64),
        (LagLimit::MaxSlice, Some(20 * MS), -5 * MS as i64),
    ] {
        let (mut s, mut h) = machine("smp:1", Kernel::V7_3);
        s.feat.lag_limit = limit;
        let a = fork(&mut s, &mut h, attr(Policy::Other));
        let mut b_attr = attr(Policy::Other);
        b_attr.slice = b_slice;
        let b = fork(&mut s, &mut h, b_attr);
        assert_eq!(s.rqs[0].curr, Some(a), "{limit:?}");
        h.now = T0 + 10 * MS;
        s.deactivate(a, TaskState::Sleeping, &mut h);
        let se = &s.ses[s.tasks[a as usize].se as usize];
        assert!(se.sched_delayed, "{limit:?}");
        assert_eq!(
            (se.vlag, s.rqs[0].curr),
            (lag, Some(b)),
            "{limit:?} {b_slice:?}"
        );
    }
}

#[test]
fn from_7_1_a_fair_tasks_hrtick_counts_a_tick_of_the_rr_task_that_took_its_cpu() {
    // smp:1 under 7.3 (HRTICK, HZ=250: an RR slice is 25 ticks). a and b fork at T0; b's
    // enqueue arms a's hrtick for T0 + 0.35 ms (as above). An RR task r forks and takes the
    // CPU from a:
    // - pick (≤ 7.0): schedule() cancels the hrtick first (`hrtick_clear`): none fires, and
    //   r's slice keeps its 25 ticks;
    // - schedule_exit (7.1+): only going idle cancels it, so at T0 + 0.35 ms it calls the
    //   running task's task_tick: task_tick_rt counts it, 24 ticks left.
    use super::hrtick::HrtickArm;
    for (arm, fires, left) in [
        (HrtickArm::Pick, false, 25),
        (HrtickArm::ScheduleExit, true, 24),
    ] {
        let (mut s, mut h) = machine("smp:1", Kernel::V7_3);
        s.feat.hrtick_arm = arm;
        fork(&mut s, &mut h, attr(Policy::Other));
        fork(&mut s, &mut h, attr(Policy::Other));
        let rr = SchedAttr {
            rt_priority: 10,
            ..attr(Policy::Rr)
        };
        let r = fork(&mut s, &mut h, rr);
        s.schedule(0, &mut h);
        assert_eq!(s.rqs[0].curr, Some(r), "{arm:?}");
        h.now = T0 + 350_000;
        assert_eq!(s.hrtick(0, &mut h), fires, "{arm:?}");
        assert_eq!(s.rts[r as usize].time_slice, left, "{arm:?}");
    }
}

#[test]
fn a_nice_change_reschedules_as_prio_changed_fair_says() {
    // smp:1 under 6.1 (CFS, no costs; the wakeup granularity 1 ms on one CPU). As in
    // a_wakeup_that_preempts_leaves_the_clock_where_it_was_until_the_switch: a forks at
    // vruntime 6 ms and runs, b forks behind it at 6 ms. At T0 + 2 ms a has run to 8 ms, 2 ms
    // past b. b's nice changes while it waits: its CPU is checked as at a wakeup, against
    // b's granularity. Nice 5 (weight 335): 1 ms * 1024/335 = 3.06 ms, more than the 2 ms:
    // a keeps the CPU. Nice -5 (3121): 328 µs: a is to be preempted.
    let (mut s, mut h) = machine("smp:1", Kernel::V6_1);
    let a = fork(&mut s, &mut h, attr(Policy::Other));
    let b = fork(&mut s, &mut h, attr(Policy::Other));
    assert_eq!(s.rqs[0].curr, Some(a));
    h.defer = true;
    let v = |s: &Sched, t: u32| s.ses[s.tasks[t as usize].se as usize].vruntime;
    assert_eq!(v(&s, a), v(&s, b));
    h.now = T0 + 2 * MS;
    h.resched.clear();
    s.set_user_nice(b, 5, &mut h);
    assert_eq!(h.resched, []);
    s.set_user_nice(b, -5, &mut h);
    assert_eq!(h.resched, [0]);

    // The running task (6.12): a alone sets nice 5, nothing else queued: no reschedule.
    let (mut s, mut h) = machine("smp:1", Kernel::V6_12);
    let a = fork(&mut s, &mut h, attr(Policy::Other));
    h.defer = true;
    h.resched.clear();
    s.set_user_nice(a, 5, &mut h);
    assert_eq!(h.resched, []);
    // b forks beside a (nice 0) once a has run 1 ms, past its first request: a's next, 0.7
    // ms, is unprotected, and b, at lag 0 with a deadline half a slice away (0.35 ms), ahead
    // of a's, takes the CPU. b's nice -5 (its priority rises) keeps it; nice 10 (it falls)
    // reschedules it.
    let (mut s, mut h) = machine("smp:1", Kernel::V6_12);
    fork(&mut s, &mut h, attr(Policy::Other));
    h.defer = true;
    h.now = T0 + MS;
    let b = fork(&mut s, &mut h, attr(Policy::Other));
    s.schedule(0, &mut h);
    assert_eq!(s.rqs[0].curr, Some(b));
    h.resched.clear();
    s.set_user_nice(b, -5, &mut h);
    assert_eq!(h.resched, []);
    s.set_user_nice(b, 10, &mut h);
    assert_eq!(h.resched, [0]);
}

#[test]
fn a_nice_change_puts_the_task_back_where_it_was_and_restarts_a_running_ones_slice() {
    // set_user_nice dequeues the task (DEQUEUE_SAVE) and enqueues it again (ENQUEUE_RESTORE),
    // a running one put back and set next again.
    // 6.1 (CFS, smp:1, no costs): a runs 2 ms past b, which waits at 6 ms; min_vruntime is
    // b's, 6 ms. DEQUEUE_SAVE alone does not advance it (it would go to a's 8 ms with b out
    // of the tree), so b, renormalized against it, comes back at 6 ms, where it was.
    let (mut s, mut h) = machine("smp:1", Kernel::V6_1);
    let a = fork(&mut s, &mut h, attr(Policy::Other));
    let b = fork(&mut s, &mut h, attr(Policy::Other));
    h.defer = true;
    let v = |s: &Sched, t: u32| s.ses[s.tasks[t as usize].se as usize].vruntime;
    let before = v(&s, b);
    h.now = T0 + 2 * MS;
    s.set_user_nice(b, 5, &mut h);
    assert_eq!(v(&s, b), before);
    assert_eq!(v(&s, a), before + 2 * MS);
    // 6.12 (EEVDF, RUN_TO_PARITY), as a_nice_change_reschedules_as_prio_changed_fair_says:
    // a, alone, has run 1 ms, past its first request, and sets nice 5. The dequeue charges it
    // and opens its next request (0.7 ms of virtual time), and set_next_task picks it anew,
    // its slice protected to that deadline; so b, forked beside it at lag 0 with a deadline
    // half a slice away, ahead of a's, does not take the CPU (without the nice change it
    // does: there a's new request opens at b's enqueue, unprotected).
    let (mut s, mut h) = machine("smp:1", Kernel::V6_12);
    let a = fork(&mut s, &mut h, attr(Policy::Other));
    h.defer = true;
    h.now = T0 + MS;
    s.set_user_nice(a, 5, &mut h);
    fork(&mut s, &mut h, attr(Policy::Other));
    s.schedule(0, &mut h);
    assert_eq!(s.rqs[0].curr, Some(a));
}

#[test]
fn a_class_change_reschedules_as_check_class_changed_says() {
    // smp:1 under 6.12: a and b fair, a running. a makes itself FIFO 10 (prio 89):
    // switched_to_rt lets a running task run on. b, waiting, becomes FIFO 20 (prio 79 < 89):
    // switched_to_rt reschedules, and b runs. b raised to FIFO 30 keeps its CPU; lowered to
    // FIFO 5 (prio 94), a (89) is the highest queued: prio_changed_rt reschedules.
    let (mut s, mut h) = machine("smp:1", Kernel::V6_12);
    let a = fork(&mut s, &mut h, attr(Policy::Other));
    let b = fork(&mut s, &mut h, attr(Policy::Other));
    s.schedule(0, &mut h);
    h.defer = true;
    let fifo = |rt_priority| SchedAttr {
        rt_priority,
        ..attr(Policy::Fifo)
    };
    let cur = s.rqs[0].curr.unwrap();
    let other = if cur == a { b } else { a };
    h.resched.clear();
    s.sched_setscheduler_rt(cur, &fifo(10), &mut h);
    assert_eq!(h.resched, []);
    s.sched_setscheduler_rt(other, &fifo(20), &mut h);
    assert_eq!(h.resched, [0]);
    s.schedule(0, &mut h);
    assert_eq!(s.rqs[0].curr, Some(other));
    h.resched.clear();
    s.sched_setscheduler_rt(other, &fifo(30), &mut h);
    assert_eq!(h.resched, []);
    s.sched_setscheduler_rt(other, &fifo(5), &mut h);
    assert_eq!(h.resched, [0]);
}

#[test]
fn a_fair_task_made_rt_takes_its_load_off_its_cfs_rq() {
    // smp:1 under 6.12: a alone runs 50 ms as a fair task, its load and utilization its
    // cfs_rq's. It makes itself FIFO: switched_from_fair's detach_task_cfs_rq takes them off
    // at once (the kernel's cfs_rq then holds nothing), where they had stayed to decay as
    // blocked load.
    let (mut s, mut h) = machine("smp:1", Kernel::V6_12);
    let a = fork(&mut s, &mut h, attr(Policy::Other));
    h.now = T0 + 50 * MS;
    s.update_rq_clock(0, h.now);
    let avg = |s: &Sched| (s.cfs_rq(0).avg.load_avg, s.cfs_rq(0).avg.util_avg);
    let fifo = SchedAttr {
        rt_priority: 10,
        ..attr(Policy::Fifo)
    };
    s.sched_setscheduler_rt(a, &fifo, &mut h);
    assert_eq!(s.rqs[0].curr, Some(a));
    assert_eq!(avg(&s), (0, 0));
}

#[test]
fn a_waiting_task_made_rt_on_a_busy_rt_cpu_is_pushed() {
    // smp:2 under 6.12: FIFO 30 runs on CPU 0, a fair task on CPU 1, and a fair task y waits
    // on CPU 0 (forked there; then allowed both CPUs, it stays queued where it is). y made
    // FIFO 20 (prio 79, below FIFO 30's 69) does not preempt CPU 0 (switched_to_rt), but
    // CPU 0 now has two RT tasks: rt_queue_push_tasks moves y to CPU 1, whose fair task is
    // less important, and y runs there.
    let (mut s, mut h) = machine("smp:2", Kernel::V6_12);
    let x = fork_on(&mut s, &mut h, fifo(30), Some(&[0]));
    let z = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[1]));
    let y = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[0]));
    s.set_cpus_allowed(y, vec![true, true], &mut h);
    assert_eq!(
        (s.rqs[0].curr, s.rqs[1].curr, s.tasks[y as usize].cpu),
        (Some(x), Some(z), 0)
    );
    s.sched_setscheduler_rt(y, &fifo(20), &mut h);
    assert_eq!((s.rqs[0].curr, s.rqs[1].curr), (Some(x), Some(y)));
    assert_eq!(s.tasks[y as usize].cpu, 1);
}

#[test]
fn a_waiting_rt_task_raised_below_the_current_stays_queued() {
    // As a_waiting_task_made_rt_on_a_busy_rt_cpu_is_pushed, but y waits as FIFO 10 (forked
    // on CPU 0 alone, then allowed both CPUs: it stays queued there). Raised to FIFO 20
    // (prio 79, still below FIFO 30's 69), prio_changed_rt only compares it with the current
    // task: no reschedule and no push (only switched_to_rt queues one), so y still waits on
    // CPU 0 and CPU 1 keeps its fair task.
    let (mut s, mut h) = machine("smp:2", Kernel::V6_12);
    let x = fork_on(&mut s, &mut h, fifo(30), Some(&[0]));
    let z = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[1]));
    let y = fork_on(&mut s, &mut h, fifo(10), Some(&[0]));
    s.set_cpus_allowed(y, vec![true, true], &mut h);
    assert_eq!(
        (s.rqs[0].curr, s.rqs[1].curr, s.tasks[y as usize].cpu),
        (Some(x), Some(z), 0)
    );
    h.resched.clear();
    s.sched_setscheduler_rt(y, &fifo(20), &mut h);
    assert_eq!((s.rqs[0].curr, s.rqs[1].curr), (Some(x), Some(z)));
    assert_eq!(
        (s.tasks[y as usize].cpu, h.resched.as_slice()),
        (0, &[][..])
    );
}

#[test]
fn from_7_x_a_task_queues_on_the_root_at_its_share_down_its_groups() {
    // smp:1 at T0, /g at 1024 shares; r forks in the root, then a and b in /g (neither fork
    // preempts r under 7.3). On one CPU /g's entity weighs its whole shares, 2^20 (scaled
    // 1024: calc_group_shares' load is the whole group's). Flat (7.x): b's weight on the
    // root's tree is __calc_prop_weight from b up: 2^20 (NICE_0_LOAD) × b's 2^20 / /g's
    // cfs_rq load 2^21 = 2^19, then × /g's entity 2^20 / NICE_0_LOAD = 2^19. Its first
    // request is half a slice (PLACE_DEADLINE_INITIAL) at that weight: calc_delta_fair(0.7
    // ms, 2^19) = 700000 × fact >> 31, fact = 1024 × ((2^32 − 1) / 512) >> 1 = 4294966784,
    // = 1399999 (floor of 1400000 − 0.17), halved: 699999 ns of vruntime. r, a and b are
    // the root's tasks (a and b queued there). Hierarchical (6.x): b is queued in /g's tree
    // at its own weight: 350000, and the root's tree holds /g's entity.
    use super::fair::Runqueue;
    let base = 700_000;
    for (runqueue, vslice) in [(Runqueue::Flat, 699_999), (Runqueue::Hier, base / 2)] {
        let (mut s, mut h) = machine("smp:1", Kernel::V7_3);
        s.feat.runqueue = runqueue;
        assert_eq!(s.tun.base_slice, base);
        let g = s.sched_create_group("/g".into(), super::fair::group::ROOT_TG, 1024, false, None);
        let r = fork(&mut s, &mut h, attr(Policy::Other));
        let in_g = SchedAttr {
            group: g,
            ..attr(Policy::Other)
        };
        let a = fork(&mut s, &mut h, in_g);
        let b = fork(&mut s, &mut h, in_g);
        assert_eq!(s.rqs[0].curr, Some(r), "{runqueue:?}");
        let se = |t: u32| s.tasks[t as usize].se;
        let sb = &s.ses[se(b) as usize];
        assert_eq!(sb.deadline - sb.vruntime, vslice, "{runqueue:?}");
        let root: Vec<u32> = s.cfs_rqs[0].timeline.iter().collect();
        match runqueue {
            Runqueue::Flat => {
                assert_eq!(s.h_loads[b as usize].weight, 1 << 19);
                assert_eq!(root, vec![se(a), se(b)]);
                assert_eq!(s.cfs_rqs[0].h_nr_queued, 3);
            }
            Runqueue::Hier => {
                assert_eq!(root, vec![s.tgs[g as usize].se(0).expect("/g's entity")]);
            }
        }
    }
}

#[test]
fn a_group_entity_emptied_by_a_migration_keeps_its_blocked_load_on_its_parent() {
    // smp:2, /g at 1024 shares. q forks into /g on CPU 0, runs alone 5 ms and sleeps (alone,
    // it is eligible: no delayed dequeue), its load left blocked in /g's cfs_rq and in /g's
    // entity. p forks into /g on CPU 0; at T0 + 6 ms a tick brings every level's PELT there,
    // then p moves to CPU 1 (move_task: a DEQUEUE_MIGRATING dequeue) at that same instant,
    // emptying /g's cfs_rq on CPU 0, whose entity leaves the root's queue. dequeue_entity
    // detaches only a migrating *task*'s load (entity_is_task && task_on_rq_migrating: 6.1's
    // migrate_task_rq_fair, 6.12's and 7.x's dequeue_entity): p's leaves /g and reaches the
    // root as the change of /g's entity's load (update_tg_cfs_load adds the entity's delta to
    // its parent), while /g's entity keeps q's blocked load on the root. So the root's
    // load_avg moves exactly as /g's entity's does (detaching the entity too would take its
    // whole load off the root besides).
    for k in [Kernel::V6_1, Kernel::V6_12, Kernel::V7_3] {
        let (mut s, mut h) = machine("smp:2", k);
        let g = s.sched_create_group("/g".into(), super::fair::group::ROOT_TG, 1024, false, None);
        let in_g = SchedAttr {
            group: g,
            ..attr(Policy::Other)
        };
        let q = fork_on(&mut s, &mut h, in_g, Some(&[0]));
        h.now = T0 + 5_000_000;
        s.deactivate(q, TaskState::Sleeping, &mut h);
        let p = fork_on(&mut s, &mut h, in_g, Some(&[0]));
        s.set_cpus_allowed(p, vec![true, true], &mut h);
        h.now = T0 + 6_000_000;
        s.sched_tick(0, &mut h);
        let ge = s.tgs[g as usize].se(0).expect("/g's entity on CPU 0") as usize;
        let load = |s: &Sched| {
            (
                s.ses[ge].avg.load_avg as i64,
                s.cfs_rqs[0].avg.load_avg as i64,
            )
        };
        let (group, root) = load(&s);
        s.move_task(p, 0, 1, &mut h);
        let (group_after, root_after) = load(&s);
        assert!(group_after > 0, "{k:?}");
        assert_eq!(root_after - root, group_after - group, "{k:?}");
    }
}

#[test]
fn from_7_x_a_niced_task_reschedules_when_its_cpu_has_another_task_in_its_group() {
    // smp:1 under 7.3, a and b forked into /g at T0 (b's fork does not preempt a); 0.1 ms
    // later a, running, sets nice 5, its priority falling. prio_changed_fair returns early
    // when the CPU's root cfs_rq holds one: 6.x counts its entities (nr_queued: /g's alone,
    // so no reschedule), 7.x's flat runqueue its tasks (h_nr_queued: 2), so the running task
    // whose priority fell reschedules.
    use super::fair::Runqueue;
    for (runqueue, resched) in [(Runqueue::Hier, false), (Runqueue::Flat, true)] {
        let (mut s, mut h) = machine("smp:1", Kernel::V7_3);
        s.feat.runqueue = runqueue;
        let g = s.sched_create_group("/g".into(), super::fair::group::ROOT_TG, 1024, false, None);
        let in_g = SchedAttr {
            group: g,
            ..attr(Policy::Other)
        };
        let a = fork(&mut s, &mut h, in_g);
        fork(&mut s, &mut h, in_g);
        assert_eq!(s.rqs[0].curr, Some(a), "{runqueue:?}");
        h.now = T0 + MS / 10;
        let asked = h.resched.len();
        s.set_user_nice(a, 5, &mut h);
        assert_eq!(h.resched.len() > asked, resched, "{runqueue:?}");
    }
}
