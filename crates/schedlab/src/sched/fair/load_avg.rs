//! PELT for the fair class where fair.c updates it: `update_load_avg` and the attach,
//! detach and removal of an entity's load (fair.c, 6.12).
//!
//! Simplified: a task migrating from a NO_HZ-idle CPU is not first aged by that CPU's idle
//! lag (`migrate_se_pelt_lag`).

use super::{CfsRq, Fair, SchedEntity, SeId};
use crate::sched::clock_pelt::Invariance;
use crate::sched::flags::DEQUEUE_MIGRATING;
use crate::sched::ops::Op;
use crate::sched::pelt::{
    get_pelt_divider, update_load_avg as ___update_load_avg, update_load_avg_se, update_load_sum,
    ContribScale, SchedAvg, PELT_MIN_DIVIDER, SCHED_CAPACITY_SHIFT,
};
use crate::sched::weight::scale_load_down;

pub const UPDATE_TG: u32 = 0x1;
pub const DO_ATTACH: u32 = 0x4;
pub const DO_DETACH: u32 = 0x8;

/// `dequeue_entity`'s `update_load_avg` flags for entity `id`: a migrating task's load leaves
/// its cfs_rq with it (`entity_is_task && task_on_rq_migrating`); a group entity's never does,
/// its blocked load staying on its parent.
pub(super) fn dequeue_action(f: &Fair, id: SeId, flags: u32) -> u32 {
    let migrating = flags & DEQUEUE_MIGRATING != 0 && f.ses[id as usize].is_task();
    if migrating {
        UPDATE_TG | DO_DETACH
    } else {
        UPDATE_TG
    }
}

/// `sub_positive`.
#[inline(always)]
fn sub_positive(v: &mut u64, d: u64) {
    *v = v.saturating_sub(d);
}

/// `update_load_avg(cfs_rq, se, flags)`.
pub fn update_load_avg(f: &mut Fair, id: SeId, flags: u32) {
    let now = f.cfs_rq_clock_pelt();
    let scale = f.clock.contrib_scale();
    f.ops.add(Op::PeltUpdate, 1);
    if f.clock.invariance == Invariance::Legacy {
        f.ops.add(Op::PeltScale, 1);
    }
    let running = f.cfs.h_curr == Some(id);
    let se = &mut f.ses[id as usize];
    if se.avg.last_update_time != 0 {
        let (on_rq, runnable, w) = (se.on_rq, se.runnable(), se.weight());
        if update_load_avg_se(now, &mut se.avg, on_rq, runnable, running, w, scale) {
            se.util_est.util_change(); // cfs_se_util_change
            f.note_pelt_se(id);
        }
    }
    let mut decayed = update_cfs_rq_load_avg(f, now);
    decayed |= propagate_entity_load_avg(f, id);
    if flags & DO_ATTACH != 0 && f.ses[id as usize].avg.last_update_time == 0 {
        attach_entity_load_avg(f, id);
        f.update_tg_load_avg();
    } else if flags & DO_DETACH != 0 {
        detach_entity_load_avg(f, id);
        f.update_tg_load_avg();
    } else if decayed {
        f.cfs_rq_util_change();
        if flags & UPDATE_TG != 0 {
            f.update_tg_load_avg();
        }
    } else {
        return;
    }
    f.note_pelt_cfs();
}

/// `update_cfs_rq_load_avg`: fold in removed load (to propagate up), then
/// `__update_load_avg_cfs_rq`.
pub fn update_cfs_rq_load_avg(f: &mut Fair, now: u64) -> bool {
    let mut decayed = false;
    let sa = &mut f.cfs.avg;
    let r = std::mem::take(&mut f.cfs.removed);
    if r.nr != 0 {
        let divider = get_pelt_divider(sa) as u64;
        sub_positive(&mut sa.load_avg, r.load_avg);
        sub_positive(&mut sa.load_sum, r.load_avg * divider);
        sa.load_sum = sa.load_sum.max(sa.load_avg * PELT_MIN_DIVIDER as u64);
        sub_positive(&mut sa.util_avg, r.util_avg);
        let mut util_sum = sa.util_sum as u64;
        sub_positive(&mut util_sum, r.util_avg * divider);
        sa.util_sum = util_sum.max(sa.util_avg * PELT_MIN_DIVIDER as u64) as u32;
        sub_positive(&mut sa.runnable_avg, r.runnable_avg);
        sub_positive(&mut sa.runnable_sum, r.runnable_avg * divider);
        sa.runnable_sum = sa
            .runnable_sum
            .max(sa.runnable_avg * PELT_MIN_DIVIDER as u64);
        add_tg_cfs_propagate(
            f.cfs,
            -((r.runnable_avg * divider) as i64) >> SCHED_CAPACITY_SHIFT,
        );
        decayed = true;
    }
    let load = scale_load_down(f.cfs.load.weight);
    let runnable = f.cfs.h_nr_runnable as u64;
    let running = f.cfs.h_curr.is_some();
    if update_load_sum(
        now,
        &mut f.cfs.avg,
        load,
        runnable,
        running,
        f.clock.contrib_scale(),
    ) {
        ___update_load_avg(&mut f.cfs.avg, 1);
        decayed = true;
    }
    decayed
}

/// `add_tg_cfs_propagate`.
fn add_tg_cfs_propagate(cfs: &mut CfsRq, runnable_sum: i64) {
    cfs.propagate = true;
    cfs.prop_runnable_sum += runnable_sum;
}

/// `propagate_entity_load_avg`: for a group entity, what changed in its cfs_rq below
/// (tasks attached, detached, removed) moves its util, runnable and load, and this level's.
fn propagate_entity_load_avg(f: &mut Fair, id: SeId) -> bool {
    let Some(q) = f.ses[id as usize].my_q else {
        return false; // a task
    };
    let g = &mut f.cfs_rqs[q as usize];
    if !g.propagate {
        return false;
    }
    g.propagate = false;
    let prop = std::mem::take(&mut g.prop_runnable_sum);
    let (gavg, gweight) = (g.avg, scale_load_down(g.load.weight));
    add_tg_cfs_propagate(f.cfs, prop);
    let divider = get_pelt_divider(&f.cfs.avg) as u64;
    let (se, c) = (&mut f.ses[id as usize], &mut f.cfs.avg);
    // update_tg_cfs_util
    let (mut se_sum, mut c_sum) = (se.avg.util_sum as u64, c.util_sum as u64);
    let sums = (&mut se_sum, &mut c_sum);
    take_group_avg(
        &mut se.avg.util_avg,
        &mut c.util_avg,
        sums,
        gavg.util_avg,
        divider,
    );
    (se.avg.util_sum, c.util_sum) = (se_sum as u32, c_sum as u32);
    // update_tg_cfs_runnable
    let sums = (&mut se.avg.runnable_sum, &mut c.runnable_sum);
    take_group_avg(
        &mut se.avg.runnable_avg,
        &mut c.runnable_avg,
        sums,
        gavg.runnable_avg,
        divider,
    );
    update_tg_cfs_load(se, c, prop, gavg.load_sum, gweight, divider);
    f.note_pelt_cfs();
    f.note_pelt_se(id);
    true
}

/// `update_tg_cfs_util` and `update_tg_cfs_runnable`: the group entity's average becomes
/// its cfs_rq's (`g_avg`), its sum that × the divider; this level's average and sum move by
/// as much (its sum at least its average × PELT_MIN_DIVIDER).
fn take_group_avg(
    se_avg: &mut u64,
    c_avg: &mut u64,
    (se_sum, c_sum): (&mut u64, &mut u64),
    g_avg: u64,
    divider: u64,
) {
    let d = g_avg as i64 - *se_avg as i64;
    if d == 0 {
        return;
    }
    *se_avg = g_avg;
    let ds = (g_avg * divider) as i64 - *se_sum as i64;
    *se_sum = g_avg * divider;
    *c_avg = add_positive(*c_avg, d);
    *c_sum = add_positive(*c_sum, ds).max(*c_avg * PELT_MIN_DIVIDER as u64);
}

/// `update_tg_cfs_load`: the group entity's load from the runnable sum propagated up,
/// added on attach (clipped at the divider), estimated on removal as if every task below
/// were equally runnable; never below its running sum.
fn update_tg_cfs_load(
    se: &mut SchedEntity,
    c: &mut SchedAvg,
    prop: i64,
    g_load_sum: u64,
    g_weight: u64,
    divider: u64,
) {
    if prop == 0 {
        return;
    }
    let runnable_sum = if prop >= 0 {
        (prop + se.avg.load_sum as i64).min(divider as i64) as u64
    } else {
        let load_sum = g_load_sum.checked_div(g_weight).unwrap_or(0);
        se.avg.load_sum.min(load_sum)
    };
    let runnable_sum = runnable_sum.max((se.avg.util_sum >> SCHED_CAPACITY_SHIFT) as u64);
    let w = se.weight();
    let load_sum = w * runnable_sum;
    let load_avg = load_sum / divider;
    let d = load_avg as i64 - se.avg.load_avg as i64;
    if d == 0 {
        return;
    }
    let ds = load_sum as i64 - (w * se.avg.load_sum) as i64;
    se.avg.load_sum = runnable_sum;
    se.avg.load_avg = load_avg;
    c.load_avg = add_positive(c.load_avg, d);
    c.load_sum = add_positive(c.load_sum, ds).max(c.load_avg * PELT_MIN_DIVIDER as u64);
}

/// `add_positive`: v + d, floored at 0.
#[inline(always)]
fn add_positive(v: u64, d: i64) -> u64 {
    (v as i64).saturating_add(d).max(0) as u64
}

/// `attach_entity_load_avg`: align the entity's window with the cfs_rq's and add it.
fn attach_entity_load_avg(f: &mut Fair, id: SeId) {
    let divider = get_pelt_divider(&f.cfs.avg) as u64;
    let (last, contrib) = (f.cfs.avg.last_update_time, f.cfs.avg.period_contrib);
    let se = &mut f.ses[id as usize];
    let w = se.weight();
    let sa = &mut se.avg;
    sa.last_update_time = last;
    sa.period_contrib = contrib;
    sa.util_sum = (sa.util_avg * divider) as u32;
    sa.runnable_sum = sa.runnable_avg * divider;
    sa.load_sum = sa.load_avg * divider;
    sa.load_sum = if w < sa.load_sum { sa.load_sum / w } else { 1 };
    let sa = *sa;
    enqueue_load_avg(f, id);
    let c = &mut f.cfs.avg;
    c.util_avg += sa.util_avg;
    c.util_sum += sa.util_sum;
    c.runnable_avg += sa.runnable_avg;
    c.runnable_sum += sa.runnable_sum;
    add_tg_cfs_propagate(f.cfs, sa.load_sum as i64);
    f.cfs_rq_util_change();
}

/// `detach_entity_load_avg`, with the PELT_MIN_DIVIDER floors.
fn detach_entity_load_avg(f: &mut Fair, id: SeId) {
    dequeue_load_avg(f, id);
    let sa = f.ses[id as usize].avg;
    let c = &mut f.cfs.avg;
    sub_positive(&mut c.util_avg, sa.util_avg);
    let mut util_sum = c.util_sum as u64;
    sub_positive(&mut util_sum, sa.util_sum as u64);
    c.util_sum = util_sum.max(c.util_avg * PELT_MIN_DIVIDER as u64) as u32;
    sub_positive(&mut c.runnable_avg, sa.runnable_avg);
    sub_positive(&mut c.runnable_sum, sa.runnable_sum);
    c.runnable_sum = c.runnable_sum.max(c.runnable_avg * PELT_MIN_DIVIDER as u64);
    add_tg_cfs_propagate(f.cfs, -(sa.load_sum as i64));
    f.cfs_rq_util_change();
}

/// `detach_entity_cfs_rq` at this level: catch up with the cfs_rq and take the entity's
/// load out (an entity never attached has none to take).
pub fn detach_entity_cfs_rq(f: &mut Fair, id: SeId) {
    if f.ses[id as usize].avg.last_update_time == 0 {
        return;
    }
    update_load_avg(f, id, 0);
    detach_entity_load_avg(f, id);
    f.update_tg_load_avg();
}

/// `attach_entity_cfs_rq` at this level (ATTACH_AGE_LOAD): the entity joins the cfs_rq's
/// PELT window with its load.
pub fn attach_entity_cfs_rq(f: &mut Fair, id: SeId) {
    update_load_avg(f, id, 0);
    attach_entity_load_avg(f, id);
    f.update_tg_load_avg();
}

/// `remove_entity_load_avg`: decay the entity to the cfs_rq's last update
/// (`sync_entity_load_avg`) and queue its averages for removal.
pub fn remove_entity_load_avg(f: &mut Fair, id: SeId) {
    let last = f.cfs.avg.last_update_time;
    let scale = f.clock.contrib_scale();
    let se = &mut f.ses[id as usize];
    sync_entity_load_avg(se, last, scale);
    let r = &mut f.cfs.removed;
    r.nr += 1;
    r.util_avg += se.avg.util_avg;
    r.load_avg += se.avg.load_avg;
    r.runnable_avg += se.avg.runnable_avg;
}

/// `sync_entity_load_avg`: a dequeued entity's averages decayed to `last`, its cfs_rq's
/// last update (`__update_load_avg_blocked_se`).
pub fn sync_entity_load_avg(se: &mut SchedEntity, last: u64, scale: ContribScale) {
    let w = se.weight();
    update_load_avg_se(last, &mut se.avg, false, 0, false, w, scale);
}

/// `init_entity_runnable_average` + `post_init_entity_util_avg` for a new task on `f`'s CPU.
pub fn init_new_task(f: &mut Fair, id: SeId) {
    let cap = f.capacity as i64;
    let (cfs_util, cfs_load) = (f.cfs.avg.util_avg as i64, f.cfs.avg.load_avg as i64);
    let se = &mut f.ses[id as usize];
    se.avg = Default::default();
    se.avg.load_avg = se.weight();
    let spare = (cap - cfs_util) / 2;
    if spare > 0 {
        se.avg.util_avg = if cfs_util != 0 {
            (cfs_util * se.weight() as i64 / (cfs_load + 1)).min(spare) as u64
        } else {
            spare as u64
        };
    }
    se.avg.runnable_avg = se.avg.util_avg;
}

/// `enqueue_load_avg`: add the entity's load to the cfs_rq's (its util stays attached).
pub fn enqueue_load_avg(f: &mut Fair, id: SeId) {
    let se = &f.ses[id as usize];
    let (w, sa) = (se.weight(), se.avg);
    f.cfs.avg.load_avg += sa.load_avg;
    f.cfs.avg.load_sum += w * sa.load_sum;
}

/// `dequeue_load_avg`, with the PELT_MIN_DIVIDER floor.
pub fn dequeue_load_avg(f: &mut Fair, id: SeId) {
    let se = &f.ses[id as usize];
    let (w, sa) = (se.weight(), se.avg);
    let c = &mut f.cfs.avg;
    sub_positive(&mut c.load_avg, sa.load_avg);
    sub_positive(&mut c.load_sum, w * sa.load_sum);
    c.load_sum = c.load_sum.max(c.load_avg * PELT_MIN_DIVIDER as u64);
}
