//! CFS bandwidth control (CONFIG_CFS_BANDWIDTH; cgroup v2 `cpu.max`): a group with a quota
//! has a global pool of running time, refilled each period by its period timer; its cfs_rq
//! on each CPU draws 5 ms slices from it as it runs. A cfs_rq that cannot get more is
//! throttled: its group entity leaves the hierarchy and the PELT clock of its subtree
//! stops (`cfs_rq_clock_pelt`) until the timer hands it what it overran and unthrottles it.
//! A cfs_rq left empty gives back what it holds beyond 1 ms, which the slack timer passes
//! on to throttled ones (fair.c, 6.12; 6.1 is the same but for delayed dequeue).
//!
//! 6.18 throttles tasks instead (`--set fair.throttle=task`): a throttled cfs_rq stays in
//! the hierarchy; a task picked from it is given `sched_throttle_work`, which dequeues it
//! onto its cfs_rq's limbo list when it returns to user space, so a task woken in the
//! kernel finishes its way out first; the unthrottle requeues the limbo's tasks. A
//! cfs_rq's PELT clock stops only once it is empty, and cpu.stat's throttled time starts
//! at its first task so dequeued. schedlab's threads return to user space as they are
//! switched in (Simplified: no time in the kernel before it).
//!
//! Simplified: no `cpu.max.burst` (burst 0); the period timer hands out runtime and
//! unthrottles each cfs_rq at once, in throttling order, where the kernel sends remote CPUs
//! an IPI (`unthrottle_cfs_rq_async`); `throttled_clock` uses the task clock (schedlab
//! has no IRQ time, so it is `rq_clock`).

use super::blocked::{cfs_rq_is_decayed, list_add_leaf_cfs_rq, list_del_leaf_cfs_rq};
use super::group::{TaskGroup, TgId};
use super::sched_class::{count, detach_task_migrated, fair, level_of, FAIR};
use super::{load_avg, CfsRq, CfsRqId, Fair, SeId};
use crate::sched::class::{Class, Env, SchedClass};
use crate::sched::deadline::sched_class::fair_server;
use crate::sched::deadline::server::dl_server_start;
use crate::sched::flags::*;
use crate::sched::hooks::{Hooks, RqHooks, SchedTimer};
use crate::sched::rq::Rq;
use crate::sched::Sched;
use crate::time::Ns;

const NSEC_PER_MSEC: u64 = 1_000_000;
/// `sysctl_sched_cfs_bandwidth_slice` (5000 µs): what a cfs_rq draws from the pool at once.
pub const CFS_BANDWIDTH_SLICE: u64 = 5 * NSEC_PER_MSEC;
/// `min_cfs_rq_runtime`: a cfs_rq keeps this much when it gives runtime back.
const MIN_CFS_RQ_RUNTIME: u64 = NSEC_PER_MSEC;
/// `min_bandwidth_expiration`: no slack is handed out this close to a refill.
const MIN_BANDWIDTH_EXPIRATION: u64 = 2 * NSEC_PER_MSEC;
/// `cfs_bandwidth_slack_period`: how long slack gathers before it is handed out.
const CFS_BANDWIDTH_SLACK_PERIOD: u64 = 5 * NSEC_PER_MSEC;

/// A link of an intrusive list of tasks, 4 bytes: none (a zeroed cfs_rq's list is
/// empty) or a task's id.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskLink(Option<std::num::NonZeroU32>);

impl TaskLink {
    pub fn to(p: u32) -> TaskLink {
        TaskLink(std::num::NonZeroU32::new(p + 1))
    }

    pub fn task(self) -> Option<u32> {
        self.0.map(|n| n.get() - 1)
    }
}

/// A task's state under task-based throttling (6.18+; indexed by task): `p->throttled`
/// (on its cfs_rq's limbo list), its pending `sched_throttle_work`, and its
/// `throttle_node` (the next task on that list).
#[derive(Debug, Clone, Copy, Default)]
pub struct ThrottleNode {
    pub throttled: bool,
    pub work: bool,
    next: TaskLink,
}

/// How a throttled group stops running (`--set fair.throttle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Throttle {
    /// ≤6.17: the throttled cfs_rq's group entity leaves the hierarchy with its tasks.
    CfsRq,
    /// 6.18+: the hierarchy stays; each task leaves on its way to user space.
    Task,
}

/// Is throttling task-based (6.18+)?
#[inline]
pub(super) fn task_based(env: &Env) -> bool {
    env.feat.task_throttle()
}

/// `struct cfs_bandwidth` of a group with a quota, with its cfs_rqs' runtime per CPU.
#[derive(Debug, Clone)]
pub struct CfsBandwidth {
    pub quota: u64,
    pub period: u64,
    /// The pool: runtime left to hand out this period.
    pub runtime: u64,
    /// The period timer is armed (`period_active`); it expires at `expires`, a multiple of
    /// the period since boot.
    pub period_active: bool,
    pub expires: Ns,
    /// No runtime handed out since the last refill: the timer stops after one more.
    pub idle: bool,
    pub slack_started: bool,
    /// `throttled_cfs_rq`: the CPUs whose cfs_rq is throttled, in throttling order.
    pub throttled: Vec<usize>,
    /// Per CPU: `cfs_rq->runtime_remaining`, and `throttled_clock` (when it was throttled
    /// with entities queued).
    pub runtime_remaining: Vec<i64>,
    pub throttled_clock: Vec<Option<Ns>>,
    /// cpu.stat: `nr_periods`, `nr_throttled`, `throttled_usec` (ns, Σ over the CPUs).
    pub nr_periods: u64,
    pub nr_throttled: u64,
    pub throttled_time: u64,
}

impl CfsBandwidth {
    /// `tg_set_cfs_bandwidth`: quota and period in ns, the pool full
    /// (`__refill_cfs_bandwidth_runtime`), every cfs_rq with nothing yet.
    pub fn new(quota: u64, period: u64, nr_cpus: usize) -> CfsBandwidth {
        CfsBandwidth {
            quota,
            period,
            runtime: quota,
            period_active: false,
            expires: 0,
            idle: false,
            slack_started: false,
            throttled: Vec::new(),
            runtime_remaining: vec![0; nr_cpus],
            throttled_clock: vec![None; nr_cpus],
            nr_periods: 0,
            nr_throttled: 0,
            throttled_time: 0,
        }
    }

    /// `hrtimer_forward_now`: move the expiry past `now` by whole periods; how many.
    fn forward(&mut self, now: Ns) -> u64 {
        if now < self.expires {
            return 0;
        }
        let n = (now - self.expires) / self.period + 1;
        self.expires += n * self.period;
        n
    }

    /// `start_cfs_bandwidth`: arm the period timer unless it is armed.
    fn start(&mut self, tg: TgId, h: &mut RqHooks) {
        if self.period_active {
            return;
        }
        self.period_active = true;
        self.forward(h.now());
        h.arm(self.expires, SchedTimer::CfsPeriod { tg });
    }

    /// `__assign_cfs_rq_runtime`: top `cpu`'s cfs_rq up to `target` from the pool, as far
    /// as it goes; true when it then has some.
    fn assign(&mut self, cpu: usize, target: u64, tg: TgId, h: &mut RqHooks) -> bool {
        let min_amount = (target as i64 - self.runtime_remaining[cpu]) as u64;
        self.start(tg, h);
        if self.runtime > 0 {
            let amount = self.runtime.min(min_amount);
            self.runtime -= amount;
            self.idle = false;
            self.runtime_remaining[cpu] += amount as i64;
        }
        self.runtime_remaining[cpu] > 0
    }

    /// `runtime_refresh_within`: is the refill less than `min` away?
    fn refresh_within(&self, now: Ns, min: u64) -> bool {
        (self.expires as i64 - now as i64) < min as i64
    }

    /// `__refill_cfs_bandwidth_runtime` (no burst: the pool is the quota).
    fn refill(&mut self) {
        self.runtime = self.quota;
    }
}

impl TaskGroup {
    /// `tg_cfs_bandwidth` of a group with a quota.
    fn cfs_b(&mut self) -> &mut CfsBandwidth {
        self.bandwidth.as_deref_mut().expect("a group with a quota")
    }
}

impl Fair<'_, '_> {
    /// `account_cfs_rq_runtime`: charge this cfs_rq's runtime; when it runs out and the pool
    /// cannot extend it, resched so that the running hierarchy is throttled.
    pub(super) fn account_cfs_rq_runtime(&mut self, delta: u64) {
        let (tg, cpu) = (self.cfs.tg, self.root as usize);
        let Some(b) = self.tgs[tg as usize].bandwidth.as_deref_mut() else {
            return;
        };
        b.runtime_remaining[cpu] -= delta as i64;
        if b.runtime_remaining[cpu] > 0 || self.cfs.throttled {
            return;
        }
        if !b.assign(cpu, CFS_BANDWIDTH_SLICE, tg, self.hooks) && self.cfs.h_curr.is_some() {
            self.resched = true;
        }
    }

    /// `return_cfs_rq_runtime`: a cfs_rq left empty gives back all but 1 ms of its runtime;
    /// the slack timer hands it to throttled cfs_rqs.
    pub(super) fn return_cfs_rq_runtime(&mut self) {
        let (tg, cpu) = (self.cfs.tg, self.root as usize);
        let Some(b) = self.tgs[tg as usize].bandwidth.as_deref_mut() else {
            return;
        };
        let slack = b.runtime_remaining[cpu] - MIN_CFS_RQ_RUNTIME as i64;
        if self.cfs.nr_running != 0 || slack <= 0 {
            return;
        }
        b.runtime += slack as u64;
        b.runtime_remaining[cpu] -= slack;
        // start_cfs_slack_bandwidth: not near a refill, not pushing one forward.
        let now = self.hooks.now();
        if b.runtime > CFS_BANDWIDTH_SLICE
            && !b.throttled.is_empty()
            && !b.refresh_within(now, CFS_BANDWIDTH_SLACK_PERIOD + MIN_BANDWIDTH_EXPIRATION)
            && !b.slack_started
        {
            b.slack_started = true;
            let at = now + CFS_BANDWIDTH_SLACK_PERIOD;
            self.hooks.arm(at, SchedTimer::CfsSlack { tg });
        }
    }

    /// `cfs_rq_clock_pelt`: the CPU's PELT clock less the time this cfs_rq's clock was
    /// stopped; frozen while it is.
    #[inline(always)]
    pub(super) fn cfs_rq_clock_pelt(&self) -> Ns {
        if self.cfs.pelt_frozen(self.feat.task_throttle()) {
            self.cfs.throttled_clock_pelt
        } else {
            self.clock.pelt_now() - self.cfs.throttled_clock_pelt
        }
    }
}

impl CfsRq {
    /// Is its PELT clock stopped (`pelt_clock_throttled`)? ≤6.17: while its hierarchy is
    /// throttled; 6.18+: while it is so and has nothing queued (tg_throttle_down,
    /// dequeue_entity and enqueue_entity keep this true).
    #[inline(always)]
    pub(super) fn pelt_frozen(&self, task_based: bool) -> bool {
        self.throttle_count != 0 && (!task_based || self.nr_running == 0)
    }

    /// Stop or restart its PELT clock at `now`: `throttled_clock_pelt` holds the frozen
    /// clock while stopped and the time spent stopped otherwise (the kernel's two fields in
    /// one).
    pub(super) fn switch_pelt_clock(&mut self, now: Ns) {
        self.throttled_clock_pelt = now - self.throttled_clock_pelt;
    }
}

/// `walk_tg_tree_from(tg, down, up)`: `visit` each group of the subtree, parents first
/// (`down`) or children first (`up`).
fn walk_tg_tree_from(env: &mut Env, tg: TgId, up: bool, mut visit: impl FnMut(&mut Env, TgId)) {
    let mut stack = vec![(tg, false)];
    while let Some((g, children_done)) = stack.pop() {
        if children_done || !up {
            visit(env, g);
        }
        if !children_done {
            if up {
                stack.push((g, true));
            }
            stack.extend(
                env.tgs[g as usize]
                    .children
                    .iter()
                    .rev()
                    .map(|&c| (c, false)),
            );
        }
    }
}

/// `tg_throttle_down` (down) and `tg_unthrottle_up` (up) on this CPU: the subtree's
/// throttle counts, and its PELT clocks stopped at the first throttle (6.18+: only those
/// with nothing queued; the others stop as they empty) and restarted at the last
/// unthrottle, which (6.18+) requeues the tasks of its limbo list, the last throttled
/// first. A cfs_rq whose clock stops leaves the leaf list; back, those with load left
/// return to it.
fn throttle_count(rq: &mut Rq, env: &mut Env, tg: TgId, down: bool) {
    let (cpu, now) = (env.hooks.cpu, rq.clock.pelt_now());
    let task = task_based(env);
    walk_tg_tree_from(env, tg, !down, |env, g| {
        let q = env.tgs[g as usize].cfs_rq(cpu);
        let c = &mut env.cfs_rqs[q as usize];
        if down {
            c.throttle_count += 1;
            if c.throttle_count == 1 && c.pelt_frozen(task) {
                c.switch_pelt_clock(now);
                list_del_leaf_cfs_rq(rq, env, q);
            }
            return;
        }
        if c.pelt_frozen(task) && c.throttle_count == 1 {
            c.switch_pelt_clock(now);
        }
        c.throttle_count -= 1;
        if c.throttle_count != 0 {
            return;
        }
        let mut next = std::mem::take(&mut c.limbo).task();
        while let Some(p) = next {
            let node = &mut env.throttle_nodes[p as usize];
            node.throttled = false;
            next = std::mem::take(&mut node.next).task();
            FAIR.enqueue_task(rq, env, p, ENQUEUE_WAKEUP);
        }
        if !cfs_rq_is_decayed(env, q) {
            list_add_leaf_cfs_rq(rq, env, q);
        }
    });
}

/// `check_cfs_rq_runtime`: from `put_prev_entity` and the pick, throttle cfs_rq `q` if it
/// ran out; true when it is throttled.
pub(super) fn check_cfs_rq_runtime(rq: &mut Rq, env: &mut Env, q: CfsRqId) -> bool {
    let c = &env.cfs_rqs[q as usize];
    let Some(b) = env.tgs[c.tg as usize].bandwidth.as_deref() else {
        return false;
    };
    if b.runtime_remaining[env.hooks.cpu] > 0 {
        return false;
    }
    c.throttled || throttle_cfs_rq(rq, env, q)
}

/// `check_enqueue_throttle`: a cfs_rq getting its first entity must have runtime, else it
/// is throttled at once (a running one is left to `update_curr` and `put_prev_entity`).
pub(super) fn check_enqueue_throttle(rq: &mut Rq, env: &mut Env, q: CfsRqId) {
    let c = &env.cfs_rqs[q as usize];
    let limited = env.tgs[c.tg as usize].bandwidth.is_some();
    if !limited || c.h_curr.is_some() || c.throttled {
        return;
    }
    fair(rq, env, q, |f| f.account_cfs_rq_runtime(0));
    let c = &env.cfs_rqs[q as usize];
    let b = env.tgs[c.tg as usize].cfs_b();
    if b.runtime_remaining[env.hooks.cpu] <= 0 {
        throttle_cfs_rq(rq, env, q);
    }
}

/// `dequeue_entity` (6.18+): a cfs_rq of a throttled hierarchy left empty stops its PELT
/// clock and leaves the leaf list.
pub(super) fn stop_emptied_pelt(rq: &mut Rq, env: &mut Env, q: CfsRqId) {
    let c = &env.cfs_rqs[q as usize];
    if c.throttle_count != 0 && c.nr_running == 0 {
        list_del_leaf_cfs_rq(rq, env, q);
        let now = rq.clock.pelt_now();
        env.cfs_rqs[q as usize].switch_pelt_clock(now);
    }
}

/// `task_throttle_setup_work`: a task picked from a throttled hierarchy leaves it on its
/// way to user space (once: a pending work is not added again).
pub(super) fn task_throttle_setup_work(env: &mut Env, p: u32) {
    env.throttle_nodes[p as usize].work = true;
}

/// `record_throttle_clock` (6.18+) at each level of task entity `se`'s path, as it leaves
/// for the limbo list: a throttled cfs_rq's throttled time counts from its first task gone.
fn record_throttle_clock(rq: &Rq, env: &mut Env, se: SeId) {
    let (cpu, now) = (env.hooks.cpu, rq.clock.clock_task);
    let mut cur = Some(se);
    while let Some(e) = cur {
        let (q, parent) = level_of(env, e);
        let c = &env.cfs_rqs[q as usize];
        if c.throttled {
            let b = env.tgs[c.tg as usize].cfs_b();
            b.throttled_clock[cpu].get_or_insert(now);
        }
        cur = parent;
    }
}

/// `list_add(&p->throttle_node, &cfs_rq->throttled_limbo_list)`: task `p` first on cfs_rq
/// `q`'s limbo list.
fn limbo_add(env: &mut Env, q: CfsRqId, p: u32) {
    let c = &mut env.cfs_rqs[q as usize];
    env.throttle_nodes[p as usize].next = std::mem::replace(&mut c.limbo, TaskLink::to(p));
}

/// `list_del_init(&p->throttle_node)`: task `p` (entity `se`) off its cfs_rq's limbo list.
fn limbo_del(env: &mut Env, p: u32, se: SeId) {
    let after = std::mem::take(&mut env.throttle_nodes[p as usize].next);
    let q = env.ses[se as usize].cfs_rq;
    let mut link = &mut env.cfs_rqs[q as usize].limbo;
    while let Some(t) = link.task() {
        if t == p {
            *link = after;
            return;
        }
        link = &mut env.throttle_nodes[t as usize].next;
    }
}

/// `enqueue_throttled_task`: a throttled task enqueued again (moved by the core) goes
/// straight to the limbo list of a throttled hierarchy, unless it is the running one; true
/// when it did.
pub(super) fn enqueue_throttled_task(rq: &Rq, env: &mut Env, p: u32, se: SeId) -> bool {
    let q = env.ses[se as usize].cfs_rq;
    if env.cfs_rqs[q as usize].throttle_count != 0 && rq.curr != Some(p) {
        limbo_add(env, q, p);
        return true;
    }
    env.throttle_nodes[p as usize].throttled = false;
    false
}

/// `dequeue_throttled_task`: a throttled task the core dequeues leaves the limbo list; one
/// that blocks is no longer throttled, one that migrates takes its load away.
pub(super) fn dequeue_throttled_task(rq: &mut Rq, env: &mut Env, p: u32, se: SeId, flags: u32) {
    limbo_del(env, p, se);
    if flags & DEQUEUE_SLEEP != 0 {
        env.throttle_nodes[p as usize].throttled = false;
    } else if flags & DEQUEUE_MIGRATING != 0 {
        detach_task_migrated(rq, env, p);
    }
}

/// `throttle_cfs_rq`: unless 1 ns can still be had, stop the subtree's clocks and (≤6.17)
/// take the group's entity out of the hierarchy (its tasks stay queued on their cfs_rqs).
fn throttle_cfs_rq(rq: &mut Rq, env: &mut Env, q: CfsRqId) -> bool {
    let (cpu, tg) = (env.hooks.cpu, env.cfs_rqs[q as usize].tg);
    let b = env.tgs[tg as usize].cfs_b();
    if b.assign(cpu, 1, tg, &mut env.hooks) {
        return false;
    }
    b.throttled.push(cpu);
    throttle_count(rq, env, tg, true);
    if task_based(env) {
        env.cfs_rqs[q as usize].throttled = true;
        return true;
    }
    let c = &env.cfs_rqs[q as usize];
    let (queued, runnable) = (c.h_nr_queued as i32, c.h_nr_runnable as i32);
    let mut se = env.tgs[tg as usize].se(cpu);
    let mut dequeue = true;
    while let Some(e) = se {
        if !env.ses[e as usize].on_rq {
            break;
        }
        let (pq, parent) = level_of(env, e);
        if dequeue {
            // SPECIAL: never a delayed dequeue here.
            let delayed = env.ses[e as usize].sched_delayed;
            let flags = DEQUEUE_SLEEP | DEQUEUE_SPECIAL | if delayed { DEQUEUE_DELAYED } else { 0 };
            fair(rq, env, pq, |f| f.dequeue_entity(e, flags));
            dequeue = env.cfs_rqs[pq as usize].load.weight == 0;
        } else {
            fair(rq, env, pq, |f| {
                load_avg::update_load_avg(f, e, 0);
                f.se_update_runnable(e);
            });
        }
        count(env, pq, -queued, -runnable);
        se = parent;
    }
    env.cfs_rqs[q as usize].throttled = true;
    let now = rq.clock.clock_task;
    let b = env.tgs[tg as usize].cfs_b();
    if env.cfs_rqs[q as usize].nr_running != 0 {
        b.throttled_clock[cpu] = Some(now);
    }
    true
}

/// `unthrottle_cfs_rq`: restart the subtree's clocks and put the group's entity back in
/// the hierarchy up to the first throttled level (6.18+: requeue the limbo's tasks, once
/// the cfs_rq has runtime); an idle CPU picks again.
fn unthrottle_cfs_rq(rq: &mut Rq, env: &mut Env, q: CfsRqId) {
    let (cpu, tg) = (env.hooks.cpu, env.cfs_rqs[q as usize].tg);
    let task = task_based(env);
    if task && env.tgs[tg as usize].cfs_b().runtime_remaining[cpu] <= 0 {
        return;
    }
    let root_queued = env.cfs().h_nr_queued;
    env.cfs_rqs[q as usize].throttled = false;
    let now = rq.clock.clock_task;
    let b = env.tgs[tg as usize].cfs_b();
    if let Some(t) = b.throttled_clock[cpu].take() {
        b.throttled_time += now - t;
    }
    b.throttled.retain(|&c| c != cpu);
    throttle_count(rq, env, tg, false);
    let c = &env.cfs_rqs[q as usize];
    if task || c.load.weight == 0 {
        if rq.curr.is_none() && env.cfs().h_nr_queued != 0 {
            rq.resched();
        }
        return;
    }
    let (queued, runnable) = (c.h_nr_queued as i32, c.h_nr_runnable as i32);
    let mut se = env.tgs[tg as usize].se(cpu);
    let mut enqueue = true;
    while let Some(e) = se {
        let (pq, parent) = level_of(env, e);
        let s = &env.ses[e as usize];
        enqueue &= s.sched_delayed || !s.on_rq;
        if enqueue {
            fair(rq, env, pq, |f| {
                if f.ses[e as usize].sched_delayed {
                    f.dequeue_entity(e, DEQUEUE_SLEEP | DEQUEUE_DELAYED);
                }
                f.enqueue_entity(e, ENQUEUE_WAKEUP);
            });
        } else {
            fair(rq, env, pq, |f| {
                load_avg::update_load_avg(f, e, load_avg::UPDATE_TG);
                f.se_update_runnable(e);
            });
        }
        count(env, pq, queued, runnable);
        if env.cfs_rqs[pq as usize].throttled {
            break;
        }
        se = parent;
    }
    if root_queued == 0 && env.cfs().h_nr_queued != 0 {
        let server = fair_server(env) as usize;
        if env.dl[server].dl_runtime != 0 && dl_server_start(rq, env) {
            rq.resched();
        }
    }
    if rq.curr.is_none() && env.cfs().nr_running != 0 {
        rq.resched();
    }
}

impl Sched {
    /// The tasks on cfs_rq `c`'s limbo list, the most recent first.
    pub fn limbo<'a>(&'a self, c: &CfsRq) -> impl Iterator<Item = u32> + 'a {
        let nodes = &self.throttle_nodes;
        std::iter::successors(c.limbo.task(), move |&p| nodes[p as usize].next.task())
    }

    /// `throttle_cfs_rq_work`, at task `p`'s return to user space on `cpu`: still in a
    /// throttled hierarchy, it is dequeued onto its cfs_rq's limbo list and the CPU
    /// schedules. schedlab's threads return to user space as they are switched in.
    pub(crate) fn throttle_cfs_rq_work<H: Hooks>(&mut self, cpu: usize, p: u32, h: &mut H) {
        let se = self.tasks[p as usize].se;
        if !std::mem::take(&mut self.throttle_nodes[p as usize].work)
            || self.tasks[p as usize].class != Class::Fair
        {
            return;
        }
        let q = self.ses[se as usize].cfs_rq;
        if self.cfs_rqs[q as usize].throttle_count == 0 {
            return;
        }
        self.update_rq_clock(cpu, h.now());
        self.on_rq(cpu, h, |rq, env| {
            // SPECIAL: never a delayed dequeue.
            FAIR.dequeue_task(rq, env, p, DEQUEUE_SLEEP | DEQUEUE_SPECIAL);
            record_throttle_clock(rq, env, se);
            limbo_add(env, q, p);
            env.throttle_nodes[p as usize].throttled = true;
        });
        self.resched_curr(cpu, h);
    }

    /// The period timers of the groups with a quota start with the run (`cpu.max` was
    /// written before it: `tg_set_cfs_bandwidth` → `start_cfs_bandwidth`).
    pub fn start_cfs_bandwidth<H: Hooks>(&mut self, h: &mut H) {
        for tg in 0..self.tgs.len() {
            if self.tgs[tg].bandwidth.is_some() {
                let mut hooks = RqHooks::new(h, &self.tasks, 0, None);
                let b = self.tgs[tg].cfs_b();
                b.start(tg as TgId, &mut hooks);
            }
        }
    }

    /// `sched_cfs_period_timer` → `do_sched_cfs_period_timer`: refill the pool; hand it to
    /// the throttled cfs_rqs; stop after a period in which nothing ran.
    pub(crate) fn sched_cfs_period_timer<H: Hooks>(&mut self, tg: TgId, h: &mut H) -> bool {
        let b = self.tgs[tg as usize].cfs_b();
        let overrun = b.forward(h.now());
        let mut throttled = !b.throttled.is_empty();
        b.nr_periods += overrun;
        b.refill();
        if !throttled {
            if b.idle {
                b.period_active = false;
                return true;
            }
            b.idle = true;
        } else {
            b.nr_throttled += overrun;
            while throttled && self.tgs[tg as usize].cfs_b().runtime > 0 {
                throttled = self.distribute_cfs_runtime(tg, h);
            }
            self.tgs[tg as usize].cfs_b().idle = false;
        }
        let at = self.tgs[tg as usize].cfs_b().expires;
        h.arm(at, SchedTimer::CfsPeriod { tg });
        true
    }

    /// `sched_cfs_slack_timer`: runtime given back is handed to throttled cfs_rqs, unless
    /// a refill is near.
    pub(crate) fn sched_cfs_slack_timer<H: Hooks>(&mut self, tg: TgId, h: &mut H) -> bool {
        let b = self.tgs[tg as usize].cfs_b();
        b.slack_started = false;
        if !b.refresh_within(h.now(), MIN_BANDWIDTH_EXPIRATION) && b.runtime > CFS_BANDWIDTH_SLICE {
            self.distribute_cfs_runtime(tg, h);
        }
        true
    }

    /// `distribute_cfs_runtime`: each throttled cfs_rq in turn gets what it overran and
    /// 1 ns, while the pool lasts, and is unthrottled; true when some stay throttled.
    fn distribute_cfs_runtime<H: Hooks>(&mut self, tg: TgId, h: &mut H) -> bool {
        let b = self.tgs[tg as usize].cfs_b();
        let cpus = b.throttled.clone();
        let mut throttled = false;
        for cpu in cpus {
            let q = self.tgs[tg as usize].cfs_rq(cpu);
            let b = self.tgs[tg as usize].cfs_b();
            if b.runtime == 0 {
                return true;
            }
            if !self.cfs_rqs[q as usize].throttled {
                continue;
            }
            let runtime = ((1 - b.runtime_remaining[cpu]) as u64).min(b.runtime);
            b.runtime -= runtime;
            b.runtime_remaining[cpu] += runtime as i64;
            if b.runtime_remaining[cpu] <= 0 {
                throttled = true;
                continue;
            }
            self.update_rq_clock(cpu, h.now());
            self.on_rq(cpu, h, |rq, env| unthrottle_cfs_rq(rq, env, q));
            if self.rqs[cpu].need_resched {
                self.resched_curr(cpu, h);
            }
        }
        throttled
    }
}

table! {
    /// `cpu.stat` of one cgroup with a `cpu.max` quota (CFS bandwidth): periods in which
    /// its timer was active, those with a throttled cfs_rq, and the time its cfs_rqs spent
    /// throttled (summed over the CPUs, counted at each unthrottle as the kernel does).
    #[derive(Debug, Clone)]
    pub struct GroupSummary {
        pub path: String,
        pub quota_us: u64,
        pub period_us: u64,
        pub nr_periods: u64,
        pub nr_throttled: u64,
        pub throttled_ns: Ns,
    }
}

impl Sched {
    /// Each cgroup with a `cpu.max` quota's `cpu.stat` (`cpu_cfs_stat_show`).
    pub fn group_summaries(&self) -> Vec<GroupSummary> {
        (self.tgs.iter())
            .filter_map(|tg| {
                let b = tg.bandwidth.as_deref()?;
                Some(GroupSummary {
                    path: tg.path.clone(),
                    quota_us: b.quota / 1000,
                    period_us: b.period / 1000,
                    nr_periods: b.nr_periods,
                    nr_throttled: b.nr_throttled,
                    throttled_ns: b.throttled_time,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::kernel::Kernel;
    use crate::sched::fair::group::ROOT_TG;
    use crate::sched::hooks::SchedTimer;
    use crate::sched::tests::{attr, machine, T0};
    use crate::sched::uapi::{Policy, SchedAttr};
    use crate::time::Ns;

    const MS: Ns = 1_000_000;
    /// `TICK_NSEC` at the presets' HZ=250.
    const TICK: Ns = 4 * MS;

    #[test]
    fn a_group_that_spends_its_quota_is_throttled_until_its_period_timer_refills_it() {
        // cpu.max "20000 100000" on one CPU, one hog in the group. The period timer starts
        // at the first multiple of the period after now (hrtimer_forward_now): T0 + 100 ms.
        // Each tick charges the hog 4 ms, drawn from the pool in 5 ms slices; at 20 ms its
        // cfs_rq's runtime_remaining is 0, not above it, and the pool is empty
        // (account_cfs_rq_runtime): resched, and put_prev's check_cfs_rq_runtime throttles
        // it, so the CPU idles. The period timer refills 20 ms and unthrottles it: the hog
        // runs again. cpu.stat: one period, throttled in it, for 80 ms.
        let (mut s, mut h) = machine("smp:1", Kernel::V6_12);
        let g = s.sched_create_group("/g".into(), ROOT_TG, 1024, false, Some((20 * MS, 100 * MS)));
        s.start_bandwidth(&mut h);
        let period = SchedTimer::CfsPeriod { tg: g };
        assert_eq!(h.armed, [(T0 + 100 * MS, period)]);
        let hog = s.tasks().len() as u32;
        let a = SchedAttr {
            group: g,
            ..attr(Policy::Other)
        };
        assert!(s.wake_up_new_task(1000, "hog".into(), &a, None, None, &mut h));
        for tick in 1..=5 {
            assert_eq!(s.cpu_curr(0), Some(hog), "runs before tick {tick}");
            h.now = T0 + tick * TICK;
            s.sched_tick(0, &mut h);
        }
        assert_eq!(s.cpu_curr(0), None, "throttled at 20 ms");
        h.now = T0 + 100 * MS;
        s.timer(period, &mut h);
        assert_eq!(s.cpu_curr(0), Some(hog));
        let stat = &s.group_summaries()[0];
        let cpu_stat = (stat.nr_periods, stat.nr_throttled, stat.throttled_ns);
        assert_eq!(cpu_stat, (1, 1, 80 * MS));
    }
}
