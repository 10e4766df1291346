//! CFS (Linux ≤ 6.5, 6.1 reference): the leftmost vruntime runs, with next/last/skip buddies;
//! slices from sched_latency; sleeper credit at wakeup; wakeup_granularity for preemption.

use super::load_avg::{self, DO_ATTACH, UPDATE_TG};
use super::{vdiff, Fair, SchedEntity, SeId};
use crate::sched::features::Feat;
use crate::sched::flags::*;
use crate::sched::weight::{calc_delta, calc_delta_fair, scale_load_down, LoadWeight, NICE_0_LOAD};

/// `entity_before`: smaller vruntime.
#[inline(always)]
fn entity_before(a: &SchedEntity, b: &SchedEntity) -> bool {
    vdiff(a.vruntime, b.vruntime) < 0
}

/// `__pick_first_entity`: the leftmost (the timeline is in vruntime order).
fn first(f: &Fair) -> Option<SeId> {
    f.cfs.timeline.first()
}

/// `__pick_next_entity`: the entity after `id` in tree order.
fn after(f: &Fair, id: SeId) -> Option<SeId> {
    f.cfs.timeline.next(f.ses, id)
}

/// `update_min_vruntime`: monotonic, following min(curr, leftmost).
pub(super) fn update_min_vruntime(f: &mut Fair) {
    let mut vruntime = f.cfs.min_vruntime;
    let curr = f.cfs.curr.filter(|&c| f.ses[c as usize].on_rq);
    if let Some(c) = curr {
        vruntime = f.ses[c as usize].vruntime;
    }
    if let Some(l) = first(f) {
        let lv = f.ses[l as usize].vruntime;
        vruntime = if curr.is_none() || vdiff(lv, vruntime) < 0 {
            lv
        } else {
            vruntime
        };
    }
    if vdiff(vruntime, f.cfs.min_vruntime) > 0 {
        f.cfs.min_vruntime = vruntime;
    }
}

/// `__sched_period`.
fn sched_period(f: &Fair, nr_running: u32) -> u64 {
    if nr_running > f.tun.nr_latency {
        nr_running as u64 * f.tun.min_granularity
    } else {
        f.tun.latency
    }
}

/// `sched_slice`: the entity's share of the period, down the hierarchy to its level.
fn sched_slice(f: &Fair, id: SeId) -> u64 {
    let se = &f.ses[id as usize];
    let nr = if f.feat.has(Feat::AltPeriod) {
        f.root_cfs().h_nr_queued
    } else {
        f.cfs.nr_running
    };
    let mut slice = sched_period(f, nr + !se.on_rq as u32);
    // Its share at each level up the hierarchy.
    let mut level = Some((id, &*f.cfs));
    while let Some((e, q)) = level {
        let se = &f.ses[e as usize];
        let mut load: LoadWeight = q.load;
        if !se.on_rq {
            load.add(se.load.weight);
        }
        slice = calc_delta(slice, se.load.weight, &load);
        level = se
            .parent
            .map(|p| (p, &*f.cfs_rqs[f.ses[p as usize].cfs_rq as usize]));
    }
    if f.feat.has(Feat::BaseSlice) {
        slice = slice.max(f.tun.min_granularity);
    }
    slice
}

/// `place_entity`: START_DEBIT for new tasks, sleeper credit (half a latency with
/// GENTLE_FAIR_SLEEPERS) for wakers, never backwards.
fn place_entity(f: &mut Fair, id: SeId, initial: bool) {
    let mut vruntime = f.cfs.min_vruntime;
    if initial && f.feat.has(Feat::StartDebit) {
        vruntime = vruntime.wrapping_add(calc_delta_fair(
            sched_slice(f, id),
            &f.ses[id as usize].load,
        ));
    }
    if !initial {
        let mut thresh = if f.ses[id as usize].idle {
            f.tun.min_granularity
        } else {
            f.tun.latency
        };
        if f.feat.has(Feat::GentleFairSleepers) {
            thresh >>= 1;
        }
        vruntime = vruntime.wrapping_sub(thresh);
    }
    let now = f.clock.clock_task;
    let se = &mut f.ses[id as usize];
    // entity_is_long_sleeper
    let long = se.exec_start != 0
        && now > se.exec_start
        && now - se.exec_start > (1u64 << 63) / scale_load_down(NICE_0_LOAD);
    se.vruntime = if long || vdiff(vruntime, se.vruntime) > 0 {
        vruntime
    } else {
        se.vruntime
    };
}

/// `task_fork_fair`: start from the parent's (curr's) vruntime plus a debit, relative.
pub(super) fn task_fork(f: &mut Fair, id: SeId) {
    if let Some(c) = f.cfs.curr {
        f.update_curr();
        f.ses[id as usize].vruntime = f.ses[c as usize].vruntime;
    }
    place_entity(f, id, true);
    let min = f.cfs.min_vruntime;
    let se = &mut f.ses[id as usize];
    se.vruntime = se.vruntime.wrapping_sub(min);
}

/// `enqueue_entity`.
pub(super) fn enqueue_entity(f: &mut Fair, id: SeId, flags: u32) {
    let renorm = flags & ENQUEUE_WAKEUP == 0 || flags & ENQUEUE_MIGRATED != 0;
    let is_curr = f.cfs.curr == Some(id);
    if renorm && is_curr {
        let min = f.cfs.min_vruntime;
        f.ses[id as usize].vruntime = f.ses[id as usize].vruntime.wrapping_add(min);
    }
    f.update_curr();
    if renorm && !is_curr {
        let min = f.cfs.min_vruntime;
        f.ses[id as usize].vruntime = f.ses[id as usize].vruntime.wrapping_add(min);
    }
    load_avg::update_load_avg(f, id, UPDATE_TG | DO_ATTACH);
    f.se_update_runnable(id);
    f.update_cfs_group(id);
    f.account_enqueue(id);
    if flags & ENQUEUE_WAKEUP != 0 {
        place_entity(f, id, false);
    }
    if flags & ENQUEUE_MIGRATED != 0 {
        f.ses[id as usize].exec_start = 0;
    }
    if !is_curr {
        f.enqueue_tree(id);
    }
    f.ses[id as usize].on_rq = true;
}

/// `dequeue_entity`.
pub(super) fn dequeue_entity(f: &mut Fair, id: SeId, flags: u32) {
    let action = load_avg::dequeue_action(f, id, flags);
    f.update_curr();
    load_avg::update_load_avg(f, id, action);
    f.se_update_runnable(id);
    f.clear_buddies(id);
    if f.cfs.curr != Some(id) {
        f.dequeue_tree(id);
    }
    f.ses[id as usize].on_rq = false;
    f.account_dequeue(id);
    f.return_cfs_rq_runtime();
    if flags & DEQUEUE_SLEEP == 0 {
        let min = f.cfs.min_vruntime;
        let se = &mut f.ses[id as usize];
        se.vruntime = se.vruntime.wrapping_sub(min);
    }
    f.update_cfs_group(id);
    // Not for a task put back at once where it was (DEQUEUE_SAVE alone).
    if flags & (DEQUEUE_SAVE | DEQUEUE_MOVE) != DEQUEUE_SAVE {
        update_min_vruntime(f);
    }
}

/// `wakeup_preempt_entity(curr, se)`: 1 when se is ahead of curr by more than the
/// wakeup granularity (in se's virtual time).
fn wakeup_preempt_entity(f: &Fair, curr: SeId, se: SeId) -> i32 {
    let d = vdiff(f.ses[curr as usize].vruntime, f.ses[se as usize].vruntime);
    if d <= 0 {
        return -1;
    }
    let gran = calc_delta_fair(f.tun.wakeup_granularity, &f.ses[se as usize].load) as i64;
    (d > gran) as i32
}

/// `pick_next_entity`: the leftmost, unless a buddy is close enough.
pub(super) fn pick_next_entity(f: &mut Fair) -> Option<SeId> {
    let curr = f.cfs.curr.filter(|&c| f.ses[c as usize].on_rq);
    let mut left = first(f);
    if let Some(c) = curr {
        if left.is_none_or(|l| entity_before(&f.ses[c as usize], &f.ses[l as usize])) {
            left = Some(c);
        }
    }
    let left = left?;
    let mut se = left;
    if f.cfs.skip == Some(se) {
        let second = if Some(se) == curr {
            first(f)
        } else {
            match (after(f, se), curr) {
                (None, c) => c,
                (Some(s), Some(c)) if entity_before(&f.ses[c as usize], &f.ses[s as usize]) => {
                    Some(c)
                }
                (s, _) => s,
            }
        };
        if let Some(s) = second {
            if wakeup_preempt_entity(f, s, left) < 1 {
                se = s;
            }
        }
    }
    if let Some(n) = f
        .cfs
        .next
        .filter(|&n| wakeup_preempt_entity(f, n, left) < 1)
    {
        se = n;
    } else if let Some(l) = f
        .cfs
        .last
        .filter(|&l| wakeup_preempt_entity(f, l, left) < 1)
    {
        se = l;
    }
    Some(se)
}

/// `check_preempt_tick`: curr ran its slice, or is a slice ahead of the leftmost.
pub(super) fn check_preempt_tick(f: &mut Fair, curr: SeId) -> bool {
    let ideal = sched_slice(f, curr);
    let se = &f.ses[curr as usize];
    let delta_exec = se.sum_exec_runtime - se.prev_sum_exec_runtime;
    if delta_exec > ideal {
        f.clear_buddies(curr);
        return true;
    }
    if delta_exec < f.tun.min_granularity {
        return false;
    }
    let Some(l) = first(f) else { return false };
    let d = vdiff(f.ses[curr as usize].vruntime, f.ses[l as usize].vruntime);
    d > ideal as i64
}

/// `check_preempt_wakeup` (6.1) where `curr`'s and `p`'s sides meet (its buddies and its
/// task-level checks are the class's): an idle entity yields to a non-idle one; else `p`
/// preempts when it is a wakeup granularity ahead.
pub(super) fn check_preempt_wakeup(f: &mut Fair, curr: SeId, p: SeId) -> bool {
    let (c_idle, p_idle) = (f.ses[curr as usize].idle, f.ses[p as usize].idle);
    if c_idle && !p_idle {
        return true;
    }
    if c_idle != p_idle {
        return false;
    }
    f.update_curr();
    wakeup_preempt_entity(f, curr, p) == 1
}

/// `yield_task_fair` (6.1): the class marks the skip buddies; curr is charged.
pub(super) fn yield_task(f: &mut Fair, id: SeId) {
    f.clear_buddies(id);
}
