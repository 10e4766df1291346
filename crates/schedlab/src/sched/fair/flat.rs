//! The flat runqueue of 7.x (`--set fair.runqueue=flat`; "sched/eevdf: Move to a single
//! runqueue", read in Debian's 7.3.4): EEVDF picks among a CPU's tasks on its root cfs_rq
//! alone, each at its share of the CPU down its groups (`se->h_load`, `__calc_prop_weight`),
//! set again at its enqueue, its pick and each tick (`reweight_eevdf`). The groups' cfs_rqs
//! and entities stay for load tracking, shares and bandwidth: a task's enqueue and dequeue walk
//! its groups for their load (`enqueue_hierarchy`, `dequeue_hierarchy`) and each level's
//! running entity (`cfs_rq->h_curr`) is charged its runtime, the task's own level charging its
//! vruntime on the root. Only tasks are delayed; only the root has a next buddy. Throttling is
//! task-based (6.18's), whatever `fair.throttle` says.
//!
//! Simplified: a group that runs out of runtime is throttled, and its running task given the
//! work that takes it off on its way to user space, at the pick that the reschedule asks
//! (`pick_task`) rather than in `update_curr`; the weighted sums never overflow here, so
//! 7.x's `sum_shift` is not modelled.

use super::bandwidth::{check_cfs_rq_runtime, task_throttle_setup_work};
use super::eevdf::{self, avg_vruntime, entity_lag, place_entity, update_entity_lag};
use super::load_avg::{self, DO_ATTACH, UPDATE_TG};
use super::protect_slice::{protect_slice, set_protect_slice};
use super::sched_class::{
    dequeue_entities, enqueue_entities, fair, is_limited, level_of, put_prev_entity, se_of,
};
use super::{group::MIN_SHARES, DelayedLag, Fair, SeId, Waking};
use crate::sched::class::{Class, Env};
use crate::sched::features::Feat;
use crate::sched::flags::*;
use crate::sched::rq::Rq;
use crate::sched::weight::{calc_delta_fair, LoadWeight, NICE_0_LOAD};

/// Where EEVDF queues a group's tasks (`--set fair.runqueue`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runqueue {
    /// 6.6 to 6.18: a tree per cfs_rq, each picking among its entities, groups' too.
    Hier,
    /// 7.x: every task on the root's tree at its hierarchical share.
    Flat,
}

/// `update_curr`'s tail for a task (7.x): its time, at its share, moves its vruntime and
/// serves its request on the root's tree; true asks for a resched. A task in a group is
/// charged at its level and left for the class interface (`Fair::task_delta`).
pub(super) fn charge_task(f: &mut Fair, id: SeId, delta: u64) -> bool {
    if f.cfs.tg != super::group::ROOT_TG {
        let before = f.task_delta.map_or(0, |(_, d)| d);
        f.task_delta = Some((id, before + delta));
        return false;
    }
    let h_load = f.h_load(id);
    let se = &mut f.ses[id as usize];
    se.vruntime = se.vruntime.wrapping_add(calc_delta_fair(delta, &h_load));
    let resched = eevdf::after_update_curr(f, id);
    f.resched |= resched;
    resched
}

/// `enqueue_entity` (7.x): the entity's load joins its level (`enqueue_hierarchy`'s
/// `update_curr` first); a task is placed on the root's tree by `enqueue_task`.
pub(super) fn enqueue_entity(f: &mut Fair, id: SeId, flags: u32) {
    f.update_curr();
    load_avg::update_load_avg(f, id, UPDATE_TG | DO_ATTACH);
    f.se_update_runnable(id);
    f.update_cfs_group(id);
    f.account_enqueue(id);
    let se = &mut f.ses[id as usize];
    if flags & ENQUEUE_MIGRATED != 0 {
        se.exec_start = 0;
    }
    se.on_rq = true;
}

/// `dequeue_entity` (7.x): the entity's load leaves its level (`dequeue_hierarchy`'s
/// `update_curr` first); a migrating task's leaves with it.
pub(super) fn dequeue_entity(f: &mut Fair, id: SeId, flags: u32) {
    f.update_curr();
    load_avg::update_load_avg(f, id, load_avg::dequeue_action(f, id, flags));
    f.se_update_runnable(id);
    f.ses[id as usize].on_rq = false;
    f.account_dequeue(id);
    f.return_cfs_rq_runtime();
    f.update_cfs_group(id);
}

/// `reweight_eevdf` (7.x): task `id` takes EEVDF weight `weight`. Queued, it keeps its lag,
/// and its deadline and protection their distance to V, in real time; off the tree its lag,
/// and its deadline if relative, scale alike (`rescale_entity`).
fn reweight_eevdf(f: &mut Fair, id: SeId, weight: u64, on_rq: bool) {
    let (old, new) = (f.h_load(id).weight as i64, weight as i64);
    let task = f.ses[id as usize].task as usize;
    if old == new {
        return;
    }
    let scale = |x: i64| x.wrapping_mul(old) / new;
    let h_load = LoadWeight {
        weight,
        inv_weight: 0,
    };
    if !on_rq {
        let se = &mut f.ses[id as usize];
        se.vlag = scale(se.vlag);
        if se.rel_deadline {
            se.deadline = scale(se.deadline as i64) as u64;
        }
        f.h_loads[task] = h_load;
        return;
    }
    let curr = f.cfs.curr == Some(id);
    let v = avg_vruntime(f);
    let vlag = entity_lag(f, v, id);
    let protected = curr && protect_slice(f, id);
    if !curr {
        f.dequeue_tree(id);
    }
    let se = &mut f.ses[id as usize];
    se.vlag = scale(vlag);
    se.deadline = v.wrapping_add(scale(se.deadline.wrapping_sub(v) as i64) as u64);
    if protected {
        se.vprot = v.wrapping_add(scale(se.vprot.wrapping_sub(v) as i64) as u64);
    }
    se.vruntime = v.wrapping_sub(se.vlag as u64);
    f.h_loads[task] = h_load;
    if !curr {
        f.enqueue_tree(id);
    }
}

/// `__calc_prop_weight` up from task entity `se`: its share of its CPU down its groups,
/// as a weight (each level's entity against its cfs_rq's load; at least MIN_SHARES).
fn prop_weight(env: &Env, se: SeId) -> u64 {
    let mut weight = NICE_0_LOAD;
    let mut cur = Some(se);
    while let Some(e) = cur {
        let s = &env.ses[e as usize];
        weight *= s.load.weight;
        weight /= match s.parent {
            Some(_) => env.cfs_rqs[s.cfs_rq as usize].load.weight,
            None => NICE_0_LOAD,
        };
        weight = weight.max(MIN_SHARES);
        cur = s.parent;
    }
    weight
}

/// `reweight_eevdf` of task entity `se` on the root at its share now (`task_tick_fair`
/// after its levels' ticks, `set_next_task`, a reweight).
pub(super) fn reweight_share(rq: &mut Rq, env: &mut Env, se: SeId) {
    let (weight, on_rq) = (prop_weight(env, se), env.ses[se as usize].on_rq);
    fair(rq, env, env.root(), |f| {
        reweight_eevdf(f, se, weight, on_rq)
    });
}

/// `account_cfs_rq_runtime(cfs_rq, 0)` at each level of task `p`'s path: one with a quota
/// that ran out is throttled, and `p` leaves on its way to user space.
fn throttle_levels(rq: &mut Rq, env: &mut Env, p: u32) {
    let (mut cur, mut throttled) = (Some(se_of(env, p)), false);
    while let Some(e) = cur {
        let (q, parent) = level_of(env, e);
        if is_limited(env, q) {
            throttled |= check_cfs_rq_runtime(rq, env, q);
        }
        cur = parent;
    }
    if throttled {
        task_throttle_setup_work(env, p);
    }
}

/// `update_curr_eevdf`: the running task (the root's `curr`) charged at its level.
pub(super) fn update_curr_eevdf(rq: &mut Rq, env: &mut Env) {
    if let Some(c) = env.cfs().curr {
        let q = level_of(env, c).0;
        fair(rq, env, q, |f| {
            f.update_curr();
        });
    }
}

/// `update_curr_fair`: each level of task `p`'s path charged.
pub(super) fn update_curr_fair(rq: &mut Rq, env: &mut Env, p: u32) {
    let mut cur = Some(se_of(env, p));
    while let Some(e) = cur {
        let (q, parent) = level_of(env, e);
        fair(rq, env, q, |f| {
            f.update_curr();
        });
        cur = parent;
    }
}

/// `enqueue_task_fair` (7.x) of task entity `se`, not delayed: its groups' load
/// (`enqueue_hierarchy`), then its place on the root's tree at its share (running, it was
/// placed first).
pub(super) fn enqueue_task(rq: &mut Rq, env: &mut Env, se: SeId, flags: u32) {
    let root = env.root();
    let curr = env.cfs().curr == Some(se);
    if curr {
        fair(rq, env, root, |f| place_entity(f, se, flags));
    }
    enqueue_entities(rq, env, se, flags);
    if !curr {
        let weight = prop_weight(env, se);
        fair(rq, env, root, |f| {
            reweight_eevdf(f, se, weight, false);
            place_entity(f, se, flags | ENQUEUE_QUEUED);
            f.enqueue_tree(se);
        });
    }
}

/// `__dequeue_task` (7.x) of task entity `se`: false when its sleep is delayed, the task
/// ineligible on the root (DELAY_DEQUEUE); else its groups' load leaves
/// (`dequeue_hierarchy`) and it leaves the root's tree.
pub(super) fn dequeue_task(rq: &mut Rq, env: &mut Env, se: SeId, flags: u32) -> bool {
    let root = env.root();
    fair(rq, env, root, |f| f.clear_buddies(se));
    update_curr_eevdf(rq, env);
    let delay = flags & (DEQUEUE_DELAYED | DEQUEUE_SPECIAL) == 0 && flags & DEQUEUE_SLEEP != 0;
    let bounded = env.feat.delayed_lag == DelayedLag::Bounded;
    let delayed = fair(rq, env, root, |f| {
        if bounded {
            update_entity_lag(f, se); // 7.x: before the delay, which keeps it
        }
        delay && f.feat.has(Feat::DelayDequeue) && !eevdf::entity_eligible(f, se)
    });
    if delayed {
        let q = level_of(env, se).0;
        fair(rq, env, q, |f| load_avg::update_load_avg(f, se, 0));
        env.ses[se as usize].sched_delayed = true;
        super::sched_class::count_up(env, Some(se), 0, -1); // set_delayed
        return false;
    }
    if !bounded {
        fair(rq, env, root, |f| update_entity_lag(f, se));
    }
    dequeue_entities(rq, env, se, flags);
    fair(rq, env, root, |f| {
        let rel = f.feat.has(Feat::PlaceRelDeadline) && flags & DEQUEUE_SLEEP == 0;
        let s = &mut f.ses[se as usize];
        if rel {
            s.deadline = s.deadline.wrapping_sub(s.vruntime);
            s.rel_deadline = true;
        }
        if f.cfs.curr != Some(se) {
            f.dequeue_tree(se);
        }
        if flags & DEQUEUE_DELAYED != 0 {
            eevdf::finish_delayed_dequeue(f, se);
        }
    });
    true
}

/// `pick_task_fair` (7.x): EEVDF's pick on the root's tree, the running task charged
/// first (and given the throttle work if a level of its ran out: `throttle_levels`); a
/// delayed task picked is dequeued and the pick starts again.
pub(super) fn pick_task(rq: &mut Rq, env: &mut Env) -> Option<u32> {
    loop {
        if env.cfs().h_nr_queued == 0 {
            return None;
        }
        if let Some(c) = env.cfs().curr.filter(|&c| env.ses[c as usize].on_rq) {
            update_curr_eevdf(rq, env);
            throttle_levels(rq, env, env.ses[c as usize].task);
        }
        let root = env.root();
        let se = fair(rq, env, root, |f| f.pick_next_entity())?;
        if env.ses[se as usize].sched_delayed {
            dequeue_task(rq, env, se, DEQUEUE_SLEEP | DEQUEUE_DELAYED);
            continue;
        }
        return Some(env.ses[se as usize].task);
    }
}

/// `put_prev_task_fair` (7.x): task `prev`'s levels put up to where `next`'s path meets
/// them (`is_same_group`; all of them without a fair `next`), then `prev` back on the root's
/// tree if still queued.
pub(super) fn put_prev_task(rq: &mut Rq, env: &mut Env, prev: u32, next: Option<u32>) {
    let mut se = Some(se_of(env, prev));
    let mut nse = next.map(|n| se_of(env, n));
    while let Some(e) = se {
        let (q, parent) = level_of(env, e);
        if nse.is_none() || env.cfs_rqs[q as usize].h_curr.is_some() {
            put_prev_entity(rq, env, q, e);
        }
        if let Some(n) = nse {
            if level_of(env, n).0 == q {
                break;
            }
            let (nd, d) = (env.ses[n as usize].depth, env.ses[e as usize].depth);
            if nd >= d {
                nse = env.ses[n as usize].parent;
                if nd > d {
                    continue;
                }
            }
        }
        se = parent;
    }
    let pse = se_of(env, prev);
    fair(rq, env, env.root(), |f| {
        f.cfs.curr = None;
        if f.ses[pse as usize].on_rq {
            f.enqueue_tree(pse);
        }
    });
}

/// `set_next_task_fair` (7.x): task `p` leaves the root's tree; each level of its path
/// not running an entity sets it (`set_next_entity`), its bandwidth checked
/// (`throttle_levels`); it runs at its share, its slice protected.
pub(super) fn set_next_task(rq: &mut Rq, env: &mut Env, p: u32) {
    let se = se_of(env, p);
    let on_rq = env.ses[se as usize].on_rq;
    fair(rq, env, env.root(), |f| {
        f.clear_buddies(se);
        if on_rq {
            f.dequeue_tree(se);
        }
    });
    let mut cur = Some(se);
    while let Some(e) = cur {
        let (q, parent) = level_of(env, e);
        if env.cfs_rqs[q as usize].h_curr.is_none() {
            fair(rq, env, q, |f| f.set_next_entity(e));
        }
        cur = parent;
    }
    throttle_levels(rq, env, p);
    env.cfs().curr = Some(se);
    if on_rq {
        reweight_share(rq, env, se);
        fair(rq, env, env.root(), |f| set_protect_slice(f, se));
    }
}

/// `wakeup_preempt_fair` (7.x) between the running task `curr_task` and the woken task
/// entity `p`, both on the root's tree: every level of the running task charged first, unless
/// an idle task yields to a non-idle one at once.
pub(super) fn wakeup_preempt(
    rq: &mut Rq,
    env: &mut Env,
    curr_task: u32,
    p: SeId,
    waking: &Waking,
) -> bool {
    let curr = se_of(env, curr_task);
    let (c_idle, p_idle) = (env.ses[curr as usize].idle, env.ses[p as usize].idle);
    if !c_idle || p_idle {
        update_curr_fair(rq, env, curr_task);
    }
    fair(rq, env, env.root(), |f| {
        f.check_preempt_wakeup(curr, p, waking)
    })
}

/// `reweight_task_fair` (7.x): task `p`'s load weight changes at its level; queued, it
/// takes its new share on the root, every level of the running task charged first.
pub(super) fn reweight_task(rq: &mut Rq, env: &mut Env, p: u32, lw: LoadWeight) {
    let se = se_of(env, p);
    let on_rq = env.ses[se as usize].on_rq;
    let fair_curr = rq
        .curr
        .filter(|&c| env.tasks()[c as usize].class == Class::Fair);
    if let Some(c) = fair_curr.filter(|_| on_rq) {
        update_curr_fair(rq, env, c);
    }
    let q = level_of(env, se).0;
    fair(rq, env, q, |f| f.reweight_entity(se, lw));
    if on_rq {
        reweight_share(rq, env, se);
    }
}
