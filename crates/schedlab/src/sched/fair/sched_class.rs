//! `fair_sched_class`: the fair class behind the core's `SchedClass` interface.

use super::bandwidth::{
    check_cfs_rq_runtime, check_enqueue_throttle, dequeue_throttled_task, enqueue_throttled_task,
    stop_emptied_pelt, task_based, task_throttle_setup_work,
};
use super::blocked::list_add_leaf_cfs_rq;
use super::capacity::task_fits_cpu;
use super::h_load::HLoadCtx;
use super::overutilized::check_update_overutilized_status;
use super::{flat, load_avg, CfsRq, CfsRqId, DelayedLag, Fair, SeId, WakeupPreempt, Waking};
use crate::sched::class::{Class, Dequeued, Env, Placement, SchedClass, Wake};
use crate::sched::deadline::sched_class::fair_server;
use crate::sched::deadline::server::{dl_server_start, ServerIdle};
use crate::sched::deadline::Dl;
use crate::sched::features::{FairPolicy, Feat};
use crate::sched::flags::*;
use crate::sched::hrtick;
use crate::sched::idle;
use crate::sched::preempt::Preempt;
use crate::sched::rq::Rq;
use crate::sched::weight::{LoadWeight, NICE_0_LOAD};
use crate::sched::Sched;

pub struct FairClass;

pub static FAIR: FairClass = FairClass;

impl<'a, 'n> Fair<'a, 'n> {
    /// The fair class of `rq` at work on `cfs`, a cfs_rq taken out of `env.cfs_rqs`.
    pub fn on(rq: &'a mut Rq, env: &'a mut Env<'n>, cfs: &'a mut CfsRq) -> Fair<'a, 'n> {
        Fair {
            root: env.hooks.cpu as CfsRqId,
            cfs,
            cfs_rqs: &mut *env.cfs_rqs,
            tgs: &mut *env.tgs,
            cfs_tasks: &mut rq.cfs_tasks,
            group_nodes: &mut *env.group_nodes,
            h_loads: &mut *env.h_loads,
            ses: &mut *env.ses,
            clock: &rq.clock,
            ops: env.ops.cpu(env.hooks.cpu),
            feat: env.feat,
            tun: env.tun,
            capacity: rq.capacity,
            hooks: &mut env.hooks,
            resched: false,
            server_delta: 0,
            task_delta: None,
        }
    }
}

/// `update_misfit_status`: on CPUs of different capacities, the running task `p` marks
/// its CPU with its load (`task_h_load`, at least 1) when a bigger CPU is allowed and it
/// does not fit this one (`task_fits_cpu`: util_est against `capacity_of` with headroom).
fn update_misfit_status(rq: &mut Rq, env: &mut Env, p: u32) {
    if !env.asym {
        return;
    }
    let t = &env.tasks()[p as usize];
    let se = &env.ses[t.se as usize];
    let fits = task_fits_cpu(t, se, rq, env.uclamp_used);
    rq.misfit_task_load = if t.nr_cpus_allowed == 1 || rq.capacity == t.max_allowed_capacity || fits
    {
        0
    } else {
        let (se, cpu) = (t.se, env.hooks.cpu);
        let ops = env.ops.cpu(cpu);
        HLoadCtx::new(rq, env.cfs_rqs, env.ses, env.tgs, cpu, env.tun.tick_ns, ops)
            .task_h_load(se, env.feat.h_load)
            .max(1)
    };
}

/// `&p->se`.
#[inline]
pub(super) fn se_of(env: &Env, p: u32) -> SeId {
    env.tasks()[p as usize].se
}

/// `cfs_rq_of(se)` and `parent_entity(se)`.
#[inline]
pub(super) fn level_of(env: &Env, se: SeId) -> (CfsRqId, Option<SeId>) {
    let e = &env.ses[se as usize];
    (e.cfs_rq, e.parent)
}

/// Run a fair operation on `rq`'s cfs_rq `q` (taken out of the arena meanwhile, so the
/// other levels stay reachable), then charge the fair server for the running time it
/// accounted (`update_curr_fair` → `dl_server_update`); its exhaustion asks for a resched.
#[inline]
pub(super) fn fair<R>(
    rq: &mut Rq,
    env: &mut Env,
    q: CfsRqId,
    op: impl FnOnce(&mut Fair) -> R,
) -> R {
    let spare = env
        .spare_cfs
        .take()
        .expect("the fair class works on one cfs_rq at a time");
    let mut cfs = std::mem::replace(&mut env.cfs_rqs[q as usize], spare);
    let mut f = Fair::on(rq, env, &mut cfs);
    let r = op(&mut f);
    let (resched, delta, task_delta) = (f.resched, f.server_delta, f.task_delta);
    if resched {
        rq.resched_lazy(env.feat.preempt == Preempt::Lazy);
    }
    *env.spare_cfs = Some(std::mem::replace(&mut env.cfs_rqs[q as usize], cfs));
    if let Some((se, d)) = task_delta {
        charge_on_root(rq, env, se, d);
    }
    if delta != 0
        && env.dl[fair_server(env) as usize].server_active
        && Dl::on(rq, env).server_update(delta)
    {
        rq.resched();
    }
    r
}

/// A task's time charged at its group's level (7.x's flat runqueue) moves its vruntime on
/// the root. Not generic, so that `fair` does not instantiate itself without end.
fn charge_on_root(rq: &mut Rq, env: &mut Env, se: SeId, delta: u64) {
    fair(rq, env, env.root(), |f| {
        flat::charge_task(f, se, delta);
    });
}

/// cfs_rq `q`'s h_nr counts move by `queued` tasks, `runnable` of them runnable.
#[inline]
pub(super) fn count(env: &mut Env, q: CfsRqId, queued: i32, runnable: i32) {
    let c = &mut env.cfs_rqs[q as usize];
    c.h_nr_queued = c.h_nr_queued.wrapping_add_signed(queued);
    c.h_nr_runnable = c.h_nr_runnable.wrapping_add_signed(runnable);
}

/// The counts of `cfs_rq_of(se)` and every level above it move (`set_delayed` and
/// `clear_delayed` move runnable only), up to a throttled cfs_rq (≤6.17).
pub(super) fn count_up(env: &mut Env, from: Option<SeId>, queued: i32, runnable: i32) {
    let mut se = from;
    while let Some(e) = se {
        let (q, parent) = level_of(env, e);
        count(env, q, queued, runnable);
        if stops_at(env, q) {
            return;
        }
        se = parent;
    }
}

/// A walk up the hierarchy ends at a throttled cfs_rq, out of it (≤6.17); 6.18+ keeps
/// throttled cfs_rqs in it.
#[inline]
fn stops_at(env: &Env, q: CfsRqId) -> bool {
    env.cfs_rqs[q as usize].throttled && !task_based(env)
}

/// The levels above a change: `update_load_avg(UPDATE_TG)`, `se_update_runnable` and
/// `update_cfs_group` of each entity from `from` up, with its counts, up to the first
/// throttled cfs_rq (≤6.17); 7.x's flat runqueue charges each level's running entity first.
fn update_up(rq: &mut Rq, env: &mut Env, from: Option<SeId>, queued: i32, runnable: i32) {
    let mut se = from;
    let flat = env.feat.flat();
    while let Some(e) = se {
        let (q, parent) = level_of(env, e);
        fair(rq, env, q, |f| {
            if flat {
                f.update_curr();
            }
            load_avg::update_load_avg(f, e, load_avg::UPDATE_TG);
            f.se_update_runnable(e);
            f.update_cfs_group(e);
        });
        count(env, q, queued, runnable);
        if stops_at(env, q) {
            return;
        }
        se = parent;
    }
}

/// `enqueue_task_fair`'s walk: enqueue `se` and each group entity above it not yet queued
/// (a delayed one is requeued), then update the levels above; a throttled cfs_rq ends it
/// (≤6.17; a cfs_rq's first entity may throttle it: `check_enqueue_throttle`). 6.18+ goes
/// on through throttled cfs_rqs, whose PELT clock a first entity restarts.
pub(super) fn enqueue_entities(rq: &mut Rq, env: &mut Env, se: SeId, mut flags: u32) {
    // A delayed sleeper the balancer moves stays delayed (6.12's h_nr_delayed).
    let runnable = !env.ses[se as usize].sched_delayed as i32;
    let mut cur = Some(se);
    while let Some(e) = cur {
        if env.ses[e as usize].on_rq {
            if env.ses[e as usize].sched_delayed {
                let q = level_of(env, e).0;
                fair(rq, env, q, |f| f.requeue_delayed_entity(e));
            }
            break;
        }
        let (q, parent) = level_of(env, e);
        fair(rq, env, q, |f| f.enqueue_entity(e, flags));
        if env.cfs_rqs[q as usize].nr_running == 1 {
            // A throttled hierarchy's clock stopped while this cfs_rq was empty.
            let stopped = env.cfs_rqs[q as usize].throttle_count != 0;
            check_enqueue_throttle(rq, env, q);
            if task_based(env) {
                list_add_leaf_cfs_rq(rq, env, q);
                if stopped {
                    env.cfs_rqs[q as usize].switch_pelt_clock(rq.clock.pelt_now());
                }
            } else if env.cfs_rqs[q as usize].throttle_count == 0 {
                list_add_leaf_cfs_rq(rq, env, q);
            }
        }
        count(env, q, 1, runnable);
        if stops_at(env, q) {
            return;
        }
        flags = ENQUEUE_WAKEUP;
        cur = parent;
    }
    update_up(rq, env, cur, 1, runnable);
}

/// `dequeue_entities`: dequeue `se` and each group entity above it left empty, then
/// update the levels above, up to a throttled cfs_rq (≤6.17; 6.18+ stops the PELT clock
/// of a throttled hierarchy's cfs_rq left empty, and a task leaving for the limbo list
/// starts its throttled time). False when the dequeue of task entity `se` is delayed.
pub(super) fn dequeue_entities(rq: &mut Rq, env: &mut Env, se: SeId, mut flags: u32) -> bool {
    let is_task = env.ses[se as usize].is_task();
    let queued = is_task as i32;
    // A delayed task already left the runnable counts (`set_delayed`).
    let runnable = (is_task && !env.ses[se as usize].sched_delayed) as i32;
    let task_sleep = flags & DEQUEUE_SLEEP != 0;
    let mut cur = Some(se);
    while let Some(e) = cur {
        let (q, parent) = level_of(env, e);
        if !fair(rq, env, q, |f| f.dequeue_entity(e, flags)) {
            if e == se && is_task {
                count_up(env, Some(se), 0, -1); // set_delayed
                return false;
            }
            break;
        }
        count(env, q, -queued, -runnable);
        cur = parent;
        if task_based(env) {
            stop_emptied_pelt(rq, env, q);
        }
        let c = &env.cfs_rqs[q as usize];
        if stops_at(env, q) {
            return true;
        }
        if c.load.weight != 0 {
            // Bias the pick to this group, as the task sleeps within its slice (≤6.17:
            // not in a throttled hierarchy; 7.x's flat runqueue has no group to bias to).
            if task_sleep && (c.throttle_count == 0 || task_based(env)) && !env.feat.flat() {
                if let Some(p) = cur {
                    set_buddy(env, p, Buddy::Next);
                }
            }
            break;
        }
        flags = (flags | DEQUEUE_SLEEP) & !(DEQUEUE_DELAYED | DEQUEUE_SPECIAL);
    }
    update_up(rq, env, cur, -queued, -runnable);
    true
}

#[derive(Clone, Copy)]
enum Buddy {
    Next,
    Last,
    Skip,
}

/// `set_next_buddy`, `set_last_buddy` (up to an idle entity) and `set_skip_buddy`: the
/// entity and its groups become their cfs_rqs' buddy.
fn set_buddy(env: &mut Env, se: SeId, kind: Buddy) {
    if env.feat.flat() {
        // Only the root's tree has buddies, and only a next one.
        let s = &env.ses[se as usize];
        if matches!(kind, Buddy::Next) && s.on_rq && !s.idle {
            env.cfs().next = Some(se);
        }
        return;
    }
    let mut cur = Some(se);
    while let Some(e) = cur {
        let s = &env.ses[e as usize];
        if !matches!(kind, Buddy::Skip) && (!s.on_rq || s.idle) {
            return;
        }
        let (q, parent) = (s.cfs_rq, s.parent);
        let c = &mut env.cfs_rqs[q as usize];
        *match kind {
            Buddy::Next => &mut c.next,
            Buddy::Last => &mut c.last,
            Buddy::Skip => &mut c.skip,
        } = Some(e);
        cur = parent;
    }
}

/// `propagate_entity_cfs_rq`: a load change of `se`'s cfs_rq goes up the levels above it
/// (`update_load_avg(UPDATE_TG)`), up to a throttled cfs_rq (≤6.17), each level whose PELT
/// clock runs on the leaf list.
fn propagate_entity_cfs_rq(rq: &mut Rq, env: &mut Env, se: SeId) {
    let (q, mut cur) = level_of(env, se);
    if stops_at(env, q) {
        return;
    }
    if !env.cfs_rqs[q as usize].pelt_frozen(task_based(env)) {
        list_add_leaf_cfs_rq(rq, env, q);
    }
    while let Some(e) = cur {
        let (q, parent) = level_of(env, e);
        fair(rq, env, q, |f| {
            load_avg::update_load_avg(f, e, load_avg::UPDATE_TG)
        });
        if stops_at(env, q) {
            return;
        }
        if !env.cfs_rqs[q as usize].pelt_frozen(task_based(env)) {
            list_add_leaf_cfs_rq(rq, env, q);
        }
        cur = parent;
    }
}

/// `detach_task_cfs_rq`: the task's load leaves its cfs_rq (a change of class, or of cfs_rq:
/// `detach_task_migrated`).
pub fn detach_task_cfs_rq(rq: &mut Rq, env: &mut Env, p: u32) {
    let se = se_of(env, p);
    let q = level_of(env, se).0;
    fair(rq, env, q, |f| load_avg::detach_entity_cfs_rq(f, se));
    propagate_entity_cfs_rq(rq, env, se);
}

/// `detach_task_cfs_rq` of a task whose cfs_rq changes (`task_change_group_fair`, a throttled
/// task's migration), marked migrated so that it attaches afresh (`last_update_time = 0`).
pub fn detach_task_migrated(rq: &mut Rq, env: &mut Env, p: u32) {
    detach_task_cfs_rq(rq, env, p);
    let se = se_of(env, p);
    env.ses[se as usize].avg.last_update_time = 0;
}

/// `attach_task_cfs_rq`: the task's load joins its cfs_rq, aged to now (ATTACH_AGE_LOAD)
/// unless it comes afresh.
pub fn attach_task_cfs_rq(rq: &mut Rq, env: &mut Env, p: u32) {
    let se = se_of(env, p);
    let q = level_of(env, se).0;
    fair(rq, env, q, |f| load_avg::attach_entity_cfs_rq(f, se));
    propagate_entity_cfs_rq(rq, env, se);
}

/// `find_matching_se`: `se` and `pse` walked up to the first level they share.
fn find_matching_se(env: &Env, mut se: SeId, mut pse: SeId) -> (SeId, SeId) {
    let e = |x: SeId| &env.ses[x as usize];
    while e(se).depth > e(pse).depth {
        se = e(se).parent.expect("deeper than 0");
    }
    while e(pse).depth > e(se).depth {
        pse = e(pse).parent.expect("deeper than 0");
    }
    while e(se).cfs_rq != e(pse).cfs_rq {
        (se, pse) = (
            e(se).parent.expect("below the root"),
            e(pse).parent.expect("below the root"),
        );
    }
    (se, pse)
}

/// `put_prev_entity` (which throttles a cfs_rq out of runtime: `check_cfs_rq_runtime`)
/// or `set_next_entity` of `se` and each entity above it.
fn put_or_set_up(rq: &mut Rq, env: &mut Env, from: Option<SeId>, set: bool) {
    let mut se = from;
    while let Some(e) = se {
        let (q, parent) = level_of(env, e);
        if set {
            fair(rq, env, q, |f| f.set_next_entity(e));
        } else {
            put_prev_entity(rq, env, q, e);
        }
        se = parent;
    }
}

/// `put_prev_entity`, then `check_cfs_rq_runtime` on its cfs_rq if limited.
pub(super) fn put_prev_entity(rq: &mut Rq, env: &mut Env, q: CfsRqId, se: SeId) {
    fair(rq, env, q, |f| f.put_prev_entity(se));
    if is_limited(env, q) {
        check_cfs_rq_runtime(rq, env, q);
    }
}

/// Does cfs_rq `q`'s group have a quota (`cfs_rq->runtime_enabled`)?
#[inline]
pub(super) fn is_limited(env: &Env, q: CfsRqId) -> bool {
    env.tgs[env.cfs_rqs[q as usize].tg as usize]
        .bandwidth
        .is_some()
}

/// `pick_next_task_fair`'s switch from fair task `prev` to fair task `next`: only the
/// entities below the level they share are put and set (prev's group entities there keep
/// their slice), then `__set_next_task_fair`.
pub fn put_prev_set_next_fair(rq: &mut Rq, env: &mut Env, prev: u32, next: u32) {
    if env.feat.flat() {
        flat::put_prev_task(rq, env, prev, Some(next));
        flat::set_next_task(rq, env, next);
        set_next_task_tail(rq, env, next);
        return;
    }
    let (mut pse, mut se) = (se_of(env, prev), se_of(env, next));
    while level_of(env, se).0 != level_of(env, pse).0 {
        let (sd, pd) = (env.ses[se as usize].depth, env.ses[pse as usize].depth);
        if sd <= pd {
            let (q, parent) = level_of(env, pse);
            put_prev_entity(rq, env, q, pse);
            pse = parent.expect("below the root");
        }
        if sd >= pd {
            let (q, parent) = level_of(env, se);
            fair(rq, env, q, |f| f.set_next_entity(se));
            se = parent.expect("below the root");
        }
    }
    let q = level_of(env, se).0;
    if is_limited(env, q) {
        put_prev_entity(rq, env, q, pse);
        fair(rq, env, q, |f| f.set_next_entity(se));
    } else {
        fair(rq, env, q, |f| {
            f.put_prev_entity(pse);
            f.set_next_entity(se);
        });
    }
    set_next_task_tail(rq, env, next);
}

/// `__set_next_task_fair`: a queued task moves to the head of `rq->cfs_tasks` (most
/// recently picked); the hrtick is armed for its slice; its misfit status is updated.
fn set_next_task_tail(rq: &mut Rq, env: &mut Env, p: u32) {
    if rq.cfs_tasks.contains(env.group_nodes, p) {
        rq.cfs_tasks.move_to_recent(env.group_nodes, p);
    }
    if env.feat.has(Feat::Hrtick) {
        hrtick_start_fair(rq, env, p);
    }
    update_misfit_status(rq, env, p);
}

/// `hrtick_start_fair` (7.x): the hrtick at the time `p` takes to reach its virtual
/// deadline at its weight, when another fair task is queued; past it, a resched.
/// Simplified: no correction for the CPU's interrupt time (`cpu_util_irq`).
fn hrtick_start_fair(rq: &mut Rq, env: &mut Env, p: u32) {
    if env.cfs().h_nr_queued <= 1 {
        return;
    }
    let se = &env.ses[se_of(env, p) as usize];
    let h_load = se.h_load(env.feat.flat().then_some(&*env.h_loads));
    let vdelta = se.deadline.wrapping_sub(se.vruntime) as i64;
    if vdelta < 0 {
        rq.resched();
        return;
    }
    let delta = (h_load.weight as u128 * vdelta as u128 / NICE_0_LOAD as u128) as u64;
    hrtick::start(rq, env, delta);
}

/// `hrtick_update`, on an enqueue: a running fair task whose hrtick is not armed gets one
/// now that it may share the CPU.
fn hrtick_update(rq: &mut Rq, env: &mut Env) {
    if !env.feat.has(Feat::Hrtick) || rq.hrtick.is_some() {
        return;
    }
    if let Some(curr) = (rq.curr).filter(|&c| env.tasks()[c as usize].class == Class::Fair) {
        hrtick_start_fair(rq, env, curr);
    }
}

/// `entity_tick` from `p`'s entity up: true when one asks for a resched. 7.x's flat
/// runqueue ticks a queued task alone, and its share on the root is set again after.
pub fn entity_ticks(rq: &mut Rq, env: &mut Env, p: u32) -> bool {
    let (task, flat) = (se_of(env, p), env.feat.flat());
    if flat && !env.ses[task as usize].on_rq {
        return false;
    }
    let (mut se, mut resched) = (Some(task), false);
    while let Some(e) = se {
        let (q, parent) = level_of(env, e);
        resched |= fair(rq, env, q, |f| f.entity_tick(e));
        se = parent;
    }
    if flat {
        flat::reweight_share(rq, env, task);
    }
    resched
}

impl SchedClass for FairClass {
    /// `enqueue_task_fair`; the CPU's first fair task starts the fair server, charging it
    /// first for the idle time if the CPU was idle.
    fn enqueue_task(&self, rq: &mut Rq, env: &mut Env, p: u32, flags: u32) {
        let first = env.cfs().h_nr_queued == 0;
        let se = se_of(env, p);
        if env.throttle_nodes[p as usize].throttled && enqueue_throttled_task(rq, env, p, se) {
            return;
        }
        fair(rq, env, env.root(), |f| f.util_est_enqueue(se, flags));
        let flat = env.feat.flat();
        let s = &env.ses[se as usize];
        let delayed = s.sched_delayed && s.on_rq;
        if flat && (!delayed || env.feat.delayed_lag == DelayedLag::Bounded) {
            flat::update_curr_eevdf(rq, env); // 7.x: curr brought up to date first
        }
        if delayed {
            // ENQUEUE_DELAYED: a delayed sleeper woke where it is queued.
            let q = if flat {
                env.root()
            } else {
                level_of(env, se).0
            };
            fair(rq, env, q, |f| f.requeue_delayed_entity(se));
            count_up(env, Some(se), 0, 1); // clear_delayed
            return;
        }
        if flat {
            flat::enqueue_task(rq, env, se, flags);
        } else {
            enqueue_entities(rq, env, se, flags);
        }
        if first && env.cfs().h_nr_queued > 0 && env.dl[fair_server(env) as usize].dl_runtime != 0 {
            if rq.nr_running_rt_dl() == 0 && env.feat.server_idle == ServerIdle::Clamp {
                idle::update_curr_idle(rq, env); // "Account for idle runtime"
            }
            if dl_server_start(rq, env) {
                rq.resched();
            }
        }
        // Not for a new task: its first util_avg is a guess.
        if flags & ENQUEUE_INITIAL == 0 {
            check_update_overutilized_status(rq, env);
        }
        hrtick_update(rq, env);
    }

    /// `dequeue_task_fair`: util_est first, then `dequeue_entities` (a throttled task is
    /// only taken off its limbo list).
    fn dequeue_task(&self, rq: &mut Rq, env: &mut Env, p: u32, flags: u32) -> Dequeued {
        let se = se_of(env, p);
        if env.throttle_nodes[p as usize].throttled {
            dequeue_throttled_task(rq, env, p, se, flags);
            return Dequeued::Off;
        }
        let sample_after = fair(rq, env, env.root(), |f| f.util_est_dequeue(se, flags));
        let dequeued = if env.feat.flat() {
            flat::dequeue_task(rq, env, se, flags)
        } else {
            dequeue_entities(rq, env, se, flags)
        };
        if sample_after {
            fair(rq, env, env.root(), |f| {
                f.util_est_update(se, flags & DEQUEUE_SLEEP != 0)
            });
        }
        if dequeued {
            Dequeued::Off
        } else {
            Dequeued::Delayed
        }
    }

    /// `yield_task_fair`: nothing when alone on the CPU; 6.1 marks the skip buddies.
    fn yield_task(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        if env.cfs().h_nr_queued + rq.nr_running_rt_dl() == 1 {
            return;
        }
        let se = se_of(env, p);
        let q = if env.feat.flat() {
            flat::update_curr_eevdf(rq, env);
            env.root()
        } else {
            level_of(env, se).0
        };
        fair(rq, env, q, |f| f.yield_task(se));
        if env.tun.policy == FairPolicy::Cfs {
            set_buddy(env, se, Buddy::Skip);
        }
    }

    /// `check_preempt_wakeup_fair` (6.12) / `check_preempt_wakeup` (6.1): the decision is
    /// taken where curr's and p's hierarchies meet.
    fn wakeup_preempt(&self, rq: &mut Rq, env: &mut Env, p: u32, wake_flags: u32) -> bool {
        let curr_task = rq.curr.expect("a fair task runs");
        let (curr, pse) = (se_of(env, curr_task), se_of(env, p));
        // Nothing to preempt for in a throttled hierarchy (6.18+: for a throttled task).
        let throttled = if task_based(env) {
            env.throttle_nodes[p as usize].throttled
        } else {
            env.cfs_rqs[level_of(env, pse).0 as usize].throttle_count != 0
        };
        if curr == pse || throttled {
            return false;
        }
        let fork = wake_flags & WF_FORK != 0;
        let normal = env.ses[pse as usize].normal;
        let cfs = env.tun.policy == FairPolicy::Cfs;
        let rework = env.feat.wakeup_preempt == WakeupPreempt::Rework;
        // 6.1: buddies only past sched_nr_latency on curr's cfs_rq.
        let scale = env.cfs_rqs[level_of(env, curr).0 as usize].nr_running >= env.tun.nr_latency;
        let next_marked = env.feat.has(Feat::NextBuddy)
            && !rework
            && !fork
            && if cfs {
                scale
            } else {
                !env.ses[pse as usize].sched_delayed
            };
        if next_marked {
            set_buddy(env, pse, Buddy::Next);
        }
        // Already to reschedule (the wakeup's own update_curr may have asked;
        // `test_tsk_need_resched`, TIF_NEED_RESCHED only). 7.x looks on under PREEMPT_SHORT.
        if rq.need_resched && !rq.lazy && !(rework && env.feat.has(Feat::PreemptShort)) {
            return false;
        }
        if cfs {
            let (c_idle, p_idle) = (env.ses[curr as usize].idle, env.ses[pse as usize].idle);
            if (!c_idle || p_idle) && (!normal || !env.feat.has(Feat::WakeupPreemption)) {
                return false;
            }
        }
        let waking = Waking {
            normal,
            delayed: env.ses[pse as usize].sched_delayed,
            flags: wake_flags,
        };
        if env.feat.flat() {
            return flat::wakeup_preempt(rq, env, curr_task, pse, &waking);
        }
        let (se, pse) = find_matching_se(env, curr, pse);
        let q = level_of(env, se).0;
        let preempt = fair(rq, env, q, |f| f.check_preempt_wakeup(se, pse, &waking));
        if preempt && cfs {
            // The idle-preempts path sets no next buddy.
            let (c_idle, p_idle) = (env.ses[se as usize].idle, env.ses[pse as usize].idle);
            if !next_marked && (!c_idle || p_idle) {
                set_buddy(env, pse, Buddy::Next);
            }
            let s = &env.ses[se as usize];
            if s.on_rq && env.feat.has(Feat::LastBuddy) && scale && s.is_task() {
                set_buddy(env, se, Buddy::Last);
            }
        }
        preempt
    }

    /// `pick_task_fair`: down the hierarchy, each level's curr charged first (its
    /// put_prev_entity may not have run); a cfs_rq out of runtime is throttled (≤6.17: and
    /// the pick starts again; 6.18+: the task picked below it gets the throttle work) and a
    /// delayed entity reached is dequeued, and the pick starts again.
    fn pick_task(&self, rq: &mut Rq, env: &mut Env) -> Option<u32> {
        if env.feat.flat() {
            return flat::pick_task(rq, env);
        }
        'again: loop {
            let mut q = env.root();
            if env.cfs_rqs[q as usize].nr_running == 0 {
                return None;
            }
            let mut throttled = false;
            loop {
                // A limited cfs_rq is charged, then checked, before the pick.
                let limited = is_limited(env, q);
                if limited {
                    fair(rq, env, q, |f| f.update_queued_curr());
                    if check_cfs_rq_runtime(rq, env, q) {
                        if !task_based(env) {
                            continue 'again;
                        }
                        throttled = true;
                    }
                }
                let se = fair(rq, env, q, |f| {
                    if !limited {
                        f.update_queued_curr();
                    }
                    f.pick_next_entity()
                })?;
                let e = &env.ses[se as usize];
                if e.sched_delayed {
                    dequeue_entities(rq, env, se, DEQUEUE_SLEEP | DEQUEUE_DELAYED);
                    continue 'again;
                }
                match e.my_q {
                    Some(g) => q = g,
                    None => {
                        let p = e.task;
                        if throttled {
                            task_throttle_setup_work(env, p);
                        }
                        return Some(p);
                    }
                }
            }
        }
    }

    /// `put_prev_task_fair`.
    fn put_prev_task(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        if env.feat.flat() {
            flat::put_prev_task(rq, env, p, None);
        } else {
            put_or_set_up(rq, env, Some(se_of(env, p)), false);
        }
    }

    /// `set_next_task_fair`: `set_next_entity` from the task up, then
    /// `__set_next_task_fair`.
    fn set_next_task(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        if env.feat.flat() {
            flat::set_next_task(rq, env, p);
        } else {
            put_or_set_up(rq, env, Some(se_of(env, p)), true);
        }
        set_next_task_tail(rq, env, p);
    }

    /// `task_tick_fair` → `entity_tick` at each level.
    fn task_tick(&self, rq: &mut Rq, env: &mut Env, p: u32) -> bool {
        let resched = entity_ticks(rq, env, p);
        update_misfit_status(rq, env, p);
        check_update_overutilized_status(rq, env);
        resched
    }

    /// `update_curr_fair`: curr's own level (7.x's flat runqueue: every level of its path);
    /// `fair` flags the resched it asks (lazily).
    fn update_curr(&self, rq: &mut Rq, env: &mut Env, p: u32) -> bool {
        if env.feat.flat() {
            flat::update_curr_fair(rq, env, p);
            return false;
        }
        let q = level_of(env, se_of(env, p)).0;
        fair(rq, env, q, |f| f.update_curr());
        false
    }

    /// `init_entity_runnable_average` (sched_fork) and `post_init_entity_util_avg`
    /// (wake_up_new_task) together, since schedlab places a new task before either; then
    /// `task_fork_fair`.
    fn task_fork(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        let se = se_of(env, p);
        let q = level_of(env, se).0;
        fair(rq, env, q, |f| {
            load_avg::init_new_task(f, se);
            f.task_fork(se);
        });
    }

    fn migrate_task_rq(&self, rq: &mut Rq, env: &mut Env, p: u32, migrating: bool) {
        let se = se_of(env, p);
        let q = level_of(env, se).0;
        fair(rq, env, q, |f| f.migrate_task_rq(se, migrating));
    }

    /// `task_dead_fair`.
    fn task_dead(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        let se = se_of(env, p);
        let q = level_of(env, se).0;
        fair(rq, env, q, |f| load_avg::remove_entity_load_avg(f, se));
    }

    /// `reweight_task_fair`.
    fn reweight_task(&self, rq: &mut Rq, env: &mut Env, p: u32, lw: LoadWeight) {
        if env.feat.flat() {
            flat::reweight_task(rq, env, p, lw);
            return;
        }
        let se = se_of(env, p);
        let q = level_of(env, se).0;
        fair(rq, env, q, |f| f.reweight_entity(se, lw));
    }

    /// `select_task_rq_fair` (`wakeup/`).
    fn select_task_rq(&self, s: &mut Sched, p: u32, prev: usize, wake: Wake) -> (usize, Placement) {
        s.select_task_rq_fair(p, prev, wake)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::fair::bandwidth::Throttle;
    use crate::sched::tests::{task_in_group, T0};

    #[test]
    fn from_6_18_load_propagates_through_a_throttled_cfs_rq() {
        // smp:1, one task in /g; /g's cfs_rq marked throttled as throttle_cfs_rq would. 1 ms
        // later its entity's load change is propagated (propagate_entity_cfs_rq, as attach
        // and detach do): ≤6.17 the walk stops at the throttled cfs_rq, so /g's entity in
        // the root keeps its PELT time; 6.18 (fe8d238e646e) goes on and updates it
        // (update_load_avg(UPDATE_TG) brings it to the root's clock).
        for (throttle, moves) in [(Throttle::CfsRq, false), (Throttle::Task, true)] {
            let (mut s, mut h, g, p) = task_in_group("smp:1", throttle);
            let ge = s.tgs[g as usize].se(0).expect("/g's entity on CPU 0") as usize;
            let q = s.tgs[g as usize].cfs_rq(0) as usize;
            s.cfs_rqs[q].throttled = true;
            let before = s.ses[ge].avg.last_update_time;
            h.now = T0 + 1_000_000;
            s.update_rq_clock(0, h.now);
            s.on_rq(0, &mut h, |rq, env| {
                let se = se_of(env, p);
                propagate_entity_cfs_rq(rq, env, se);
            });
            let after = s.ses[ge].avg.last_update_time;
            assert_eq!(after > before, moves, "{throttle:?}: {before} -> {after}");
        }
    }
}
