//! EEVDF (Linux 6.6+, 6.12.y reference): virtual time, eligibility, virtual deadlines, lag
//! kept across sleep, slice protection (RUN_TO_PARITY), PREEMPT_SHORT and delayed dequeue.

use super::load_avg::{self, DO_ATTACH, UPDATE_TG};
use super::protect_slice::{
    cancel_protect_slice, cfs_rq_max_slice, protect_slice, rescale_vprot, update_protect_slice,
    ProtectSlice,
};
use super::{vdiff, CfsRq, Fair, SchedEntity, SeId, Waking};
use crate::sched::features::Feat;
use crate::sched::flags::*;
use crate::sched::weight::{calc_delta_fair, LoadWeight};

/// The entities EEVDF has queued, curr included: the cfs_rq's own (`nr_queued`), or every
/// task's under the flat runqueue, whose root alone has a tree (`h_nr_queued`).
#[inline(always)]
pub(super) fn nr_queued(f: &Fair) -> u32 {
    if f.flat() {
        f.cfs.h_nr_queued
    } else {
        f.cfs.nr_running
    }
}

/// `entity_key`: v_i − v0 as a signed value.
#[inline(always)]
fn entity_key(f: &Fair<'_, '_>, se: &SchedEntity) -> i64 {
    se.vruntime.wrapping_sub(f.cfs.min_vruntime) as i64
}

/// `avg_vruntime_add`.
pub(super) fn avg_vruntime_add(f: &mut Fair, id: SeId) {
    let (w, key) = (f.avg_weight(id), entity_key(f, &f.ses[id as usize]));
    f.cfs.avg_vruntime = f.cfs.avg_vruntime.wrapping_add(key.wrapping_mul(w as i64));
    f.cfs.avg_load += w;
}

/// `avg_vruntime_sub`.
pub(super) fn avg_vruntime_sub(f: &mut Fair, id: SeId) {
    let (w, key) = (f.avg_weight(id), entity_key(f, &f.ses[id as usize]));
    f.cfs.avg_vruntime = f.cfs.avg_vruntime.wrapping_sub(key.wrapping_mul(w as i64));
    f.cfs.avg_load -= w;
}

/// The running entity if it is still queued.
pub(super) fn curr_on_rq(f: &Fair) -> Option<SeId> {
    f.cfs.curr.filter(|&c| f.ses[c as usize].on_rq)
}

/// `avg_vruntime`: V, the weighted mean vruntime (rounded toward −∞); moves v0 to it.
pub(super) fn avg_vruntime(f: &mut Fair) -> u64 {
    let mut weight = f.cfs.avg_load as i64;
    let curr = curr_on_rq(f);
    let mut delta = 0i64;
    if weight != 0 {
        let mut runtime = f.cfs.avg_vruntime;
        if let Some(c) = curr {
            let w = f.avg_weight(c) as i64;
            runtime = runtime.wrapping_add(entity_key(f, &f.ses[c as usize]).wrapping_mul(w));
            weight += w;
        }
        if runtime < 0 {
            runtime -= weight - 1;
        }
        delta = runtime / weight;
    } else if let Some(c) = curr {
        delta = entity_key(f, &f.ses[c as usize]);
    }
    // update_zero_vruntime
    f.cfs.avg_vruntime = f
        .cfs
        .avg_vruntime
        .wrapping_sub((f.cfs.avg_load as i64).wrapping_mul(delta));
    f.cfs.min_vruntime = f.cfs.min_vruntime.wrapping_add(delta as u64);
    f.cfs.min_vruntime
}

/// `vruntime_eligible`: v ≤ V, compared without dividing, in s64 as the kernel does. The weighted
/// sums are gathered once, so a pick tests every entity against the same V.
struct Eligibility {
    avg: i64,
    load: i64,
    zero: u64,
}

impl Eligibility {
    fn of(f: &Fair) -> Eligibility {
        Eligibility::of_rq(f.cfs, f.ses, f.h_loads())
    }

    fn of_rq(cfs: &CfsRq, ses: &[SchedEntity], h_loads: Option<&[LoadWeight]>) -> Eligibility {
        let mut avg = cfs.avg_vruntime;
        let mut load = cfs.avg_load as i64;
        if let Some(se) = cfs.curr.map(|c| &ses[c as usize]).filter(|se| se.on_rq) {
            let w = se.avg_weight(h_loads) as i64;
            avg = avg
                .wrapping_add((se.vruntime.wrapping_sub(cfs.min_vruntime) as i64).wrapping_mul(w));
            load += w;
        }
        Eligibility {
            avg,
            load,
            zero: cfs.min_vruntime,
        }
    }

    #[inline(always)]
    fn holds(&self, vruntime: u64) -> bool {
        self.avg >= (vruntime.wrapping_sub(self.zero) as i64).wrapping_mul(self.load)
    }
}

/// `entity_lag`'s view without its clamp, for `compare --explain`: entity `id`'s lag V − v
/// on `cfs` (V rounded toward −∞, as `avg_vruntime`), and whether it is eligible.
pub(in crate::sched) fn lag_of(
    cfs: &CfsRq,
    ses: &[SchedEntity],
    id: SeId,
    h_loads: Option<&[LoadWeight]>,
) -> (i64, bool) {
    let e = Eligibility::of_rq(cfs, ses, h_loads);
    let v = ses[id as usize].vruntime;
    let key = v.wrapping_sub(e.zero) as i64;
    let avg = if e.load == 0 {
        key
    } else {
        e.avg.div_euclid(e.load)
    };
    (avg - key, e.holds(v))
}

/// `entity_eligible` of entity `id` on `cfs`, asked from outside the class (the balancer).
pub(in crate::sched) fn eligible_on(
    cfs: &CfsRq,
    ses: &[SchedEntity],
    id: SeId,
    h_loads: Option<&[LoadWeight]>,
) -> bool {
    Eligibility::of_rq(cfs, ses, h_loads).holds(ses[id as usize].vruntime)
}

/// `entity_eligible`.
pub(super) fn entity_eligible(f: &Fair, id: SeId) -> bool {
    Eligibility::of(f).holds(f.ses[id as usize].vruntime)
}

/// `entity_before`: earlier virtual deadline.
#[inline(always)]
fn entity_before(a: &SchedEntity, b: &SchedEntity) -> bool {
    vdiff(a.deadline, b.deadline) < 0
}

/// `entity_lag`: V − v_i clamped to a slice-sized limit (`--set fair.lag_limit`).
pub(super) fn entity_lag(f: &Fair, avruntime: u64, id: SeId) -> i64 {
    let se = &f.ses[id as usize];
    let vlag = avruntime.wrapping_sub(se.vruntime) as i64;
    let span = match f.feat.lag_limit {
        LagLimit::Slice => (2 * se.slice).max(f.tun.tick_ns),
        LagLimit::MaxSlice => cfs_rq_max_slice(f) + f.tun.tick_ns,
    };
    let limit = calc_delta_fair(span, &f.h_load(id)) as i64;
    vlag.clamp(-limit, limit)
}

/// What bounds a lag (`--set fair.lag_limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LagLimit {
    /// ≤ 6.16: twice the entity's own slice, at least a tick.
    Slice,
    /// 6.17+: the longest slice on the queue plus a tick, EEVDF's steady-state bound, so
    /// that a task waiting behind a long custom slice keeps what it is owed.
    MaxSlice,
}

/// `reweight_eevdf`: a queued entity's V − v and remaining virtual slice scale by old/new
/// weight, so it keeps its lag and its deadline in real time.
pub(super) fn reweight_eevdf(f: &mut Fair, id: SeId, avruntime: u64, weight: u64) {
    let (old, new) = (f.ses[id as usize].load.weight as i64, weight as i64);
    if avruntime != f.ses[id as usize].vruntime {
        let vlag = entity_lag(f, avruntime, id).wrapping_mul(old) / new;
        f.ses[id as usize].vruntime = avruntime.wrapping_sub(vlag as u64);
    }
    rescale_vprot(f, id, avruntime, old, new);
    let se = &mut f.ses[id as usize];
    let vslice = (se.deadline.wrapping_sub(avruntime) as i64).wrapping_mul(old) / new;
    se.deadline = avruntime.wrapping_add(vslice as u64);
}

/// `update_entity_lag`; under `fair.delayed_lag=bounded` a delayed entity's lag stays at
/// least what it was at the delay and, under DELAY_ZERO, at most zero. True when the lag kept
/// is not V − v (the entity must be placed again to have it).
pub(super) fn update_entity_lag(f: &mut Fair, id: SeId) -> bool {
    let v = avg_vruntime(f);
    let mut vlag = entity_lag(f, v, id);
    let se = &mut f.ses[id as usize];
    if f.feat.delayed_lag == DelayedLag::Bounded && se.sched_delayed {
        vlag = vlag.max(se.vlag);
        if f.feat.has(Feat::DelayZero) {
            vlag = vlag.min(0);
        }
    }
    se.vlag = vlag;
    v.wrapping_sub(vlag as u64) != se.vruntime
}

/// How a delayed entity's lag is kept (`--set fair.delayed_lag`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelayedLag {
    /// 6.6 to 7.0: taken when the entity wakes or leaves, against curr's vruntime as last
    /// updated; DELAY_ZERO drops a positive one.
    Zero,
    /// 7.x: curr's vruntime brought up to date first; the lag at the delay is a floor, and
    /// zero a ceiling under DELAY_ZERO; a wakeup places the entity again where they moved it.
    Bounded,
}

/// `update_deadline`: once the request is served, a new one from the current vruntime.
fn update_deadline(f: &mut Fair, id: SeId) -> bool {
    let (base, h_load) = (f.tun.base_slice, f.h_load(id));
    let se = &mut f.ses[id as usize];
    if vdiff(se.vruntime, se.deadline) < 0 {
        return false;
    }
    if !se.custom_slice {
        se.slice = base;
    }
    se.deadline = se.vruntime.wrapping_add(calc_delta_fair(se.slice, &h_load));
    avg_vruntime(f);
    true
}

/// The tail of `update_curr` under EEVDF: deadline, then `did_preempt_short` (6.17+: the
/// protection passed).
pub(super) fn after_update_curr(f: &mut Fair, id: SeId) -> bool {
    let resched = update_deadline(f, id);
    if nr_queued(f) == 1 {
        return false;
    }
    let ended = match f.feat.protect_slice {
        ProtectSlice::Deadline => did_preempt_short(f, id),
        _ => !protect_slice(f, id),
    };
    if resched || ended {
        f.clear_buddies(id);
        return true;
    }
    false
}

/// `did_preempt_short`.
fn did_preempt_short(f: &Fair, curr: SeId) -> bool {
    f.feat.has(Feat::PreemptShort) && !protect_slice(f, curr) && !entity_eligible(f, curr)
}

/// `do_preempt_short(cfs_rq, pse, se)`.
fn do_preempt_short(f: &Fair, pse: SeId, se: SeId) -> bool {
    let (p, s) = (&f.ses[pse as usize], &f.ses[se as usize]);
    if !f.feat.has(Feat::PreemptShort) || p.slice >= s.slice || !entity_eligible(f, pse) {
        return false;
    }
    entity_before(p, s) || !entity_eligible(f, se)
}

/// `pick_eevdf`: the eligible entity with the earliest virtual deadline, curr kept while
/// its slice is protected (`protect`: 6.17+'s `__pick_eevdf` argument).
fn pick_eevdf(f: &Fair, protect: bool) -> Option<SeId> {
    let mut curr = f.cfs.curr;
    if nr_queued(f) == 1 {
        return curr_on_rq(f).or_else(|| f.cfs.timeline.first());
    }
    if let Some(c) = curr {
        if !f.ses[c as usize].on_rq || !entity_eligible(f, c) {
            curr = None;
        }
    }
    if let Some(c) = curr {
        let parity =
            f.feat.protect_slice != ProtectSlice::Deadline || f.feat.has(Feat::RunToParity);
        if protect && parity && protect_slice(f, c) {
            return Some(c);
        }
    }
    let eligible = Eligibility::of(f);
    let best = f.cfs.timeline.first_eligible(|v| eligible.holds(v));
    match (best, curr) {
        (None, c) => c,
        (Some(b), Some(c)) if entity_before(&f.ses[c as usize], &f.ses[b as usize]) => Some(c),
        (b, _) => b,
    }
}

/// `pick_next_entity` (PICK_BUDDY): the next buddy if eligible, else EEVDF's pick; neither
/// when the slice protection is ignored (7.x).
pub(super) fn pick_next_entity(f: &Fair, protect: bool) -> Option<SeId> {
    if let Some(n) = f.cfs.next {
        if protect && f.feat.has(Feat::PickBuddy) && entity_eligible(f, n) {
            return Some(n);
        }
    }
    pick_eevdf(f, protect)
}

/// `place_entity`: keep the lag the entity had, start a new request (ENQUEUE_QUEUED: the
/// entity is counted queued already).
pub(super) fn place_entity(f: &mut Fair, id: SeId, flags: u32) {
    let vruntime = avg_vruntime(f);
    let base = f.tun.base_slice;
    let curr_w = curr_on_rq(f).map_or(0, |c| f.avg_weight(c));
    let (h_load, weight) = (f.h_load(id), f.avg_weight(id));
    let nr_queued = nr_queued(f) - (flags & ENQUEUE_QUEUED != 0) as u32;
    let avg_load = f.cfs.avg_load;
    let feat = f.feat;
    let se = &mut f.ses[id as usize];
    if !se.custom_slice {
        se.slice = base;
    }
    let mut vslice = calc_delta_fair(se.slice, &h_load);
    let mut lag = 0i64;
    if feat.has(Feat::PlaceLag) && nr_queued != 0 {
        let load = (avg_load + curr_w).max(1);
        lag = ((se.vlag as i128 * (load + weight) as i128) / load as i128) as i64;
    }
    se.vruntime = vruntime.wrapping_sub(lag as u64);
    if feat.has(Feat::PlaceRelDeadline) && se.rel_deadline {
        se.deadline = se.deadline.wrapping_add(se.vruntime);
        se.rel_deadline = false;
        return;
    }
    if feat.has(Feat::PlaceDeadlineInitial) && flags & ENQUEUE_INITIAL != 0 {
        vslice /= 2;
    }
    se.deadline = se.vruntime.wrapping_add(vslice);
}

/// `enqueue_entity`.
pub(super) fn enqueue_entity(f: &mut Fair, id: SeId, flags: u32) {
    let is_curr = f.cfs.curr == Some(id);
    if is_curr {
        place_entity(f, id, flags);
    }
    f.update_curr();
    load_avg::update_load_avg(f, id, UPDATE_TG | DO_ATTACH);
    f.se_update_runnable(id);
    f.update_cfs_group(id);
    if !is_curr {
        place_entity(f, id, flags);
    }
    f.account_enqueue(id);
    if flags & ENQUEUE_MIGRATED != 0 {
        f.ses[id as usize].exec_start = 0;
    }
    if !is_curr {
        f.enqueue_tree(id);
    }
    f.ses[id as usize].on_rq = true;
}

/// `dequeue_entity`: false when the dequeue is delayed (DELAY_DEQUEUE, ineligible sleeper).
pub(super) fn dequeue_entity(f: &mut Fair, id: SeId, flags: u32) -> bool {
    let sleep = flags & DEQUEUE_SLEEP != 0;
    f.update_curr();
    f.clear_buddies(id);
    let bounded = f.feat.delayed_lag == DelayedLag::Bounded;
    if bounded {
        update_entity_lag(f, id); // 7.x: before the delay, which keeps it
    }
    if flags & (DEQUEUE_DELAYED | DEQUEUE_SPECIAL) == 0
        && sleep
        && f.feat.has(Feat::DelayDequeue)
        && !entity_eligible(f, id)
    {
        load_avg::update_load_avg(f, id, 0);
        f.ses[id as usize].sched_delayed = true;
        return false;
    }
    load_avg::update_load_avg(f, id, load_avg::dequeue_action(f, id, flags));
    f.se_update_runnable(id);
    if !bounded {
        update_entity_lag(f, id);
    }
    if f.feat.has(Feat::PlaceRelDeadline) && !sleep {
        let se = &mut f.ses[id as usize];
        se.deadline = se.deadline.wrapping_sub(se.vruntime);
        se.rel_deadline = true;
    }
    if f.cfs.curr != Some(id) {
        f.dequeue_tree(id);
    }
    f.ses[id as usize].on_rq = false;
    f.account_dequeue(id);
    f.return_cfs_rq_runtime();
    f.update_cfs_group(id);
    if flags & DEQUEUE_DELAYED != 0 {
        finish_delayed_dequeue(f, id);
    }
    true
}

/// `finish_delayed_dequeue_entity`: a delayed entity leaves for good (a migrating one stays
/// delayed), with no positive lag under DELAY_ZERO.
pub(super) fn finish_delayed_dequeue(f: &mut Fair, id: SeId) {
    f.ses[id as usize].sched_delayed = false;
    drop_positive_lag(f, id);
}

/// DELAY_ZERO: a delayed entity leaves or wakes with no positive lag (under `bounded`,
/// `update_entity_lag` has capped it already). True when it had some.
fn drop_positive_lag(f: &mut Fair, id: SeId) -> bool {
    let se = &mut f.ses[id as usize];
    let positive = f.feat.has(Feat::DelayZero) && se.vlag > 0;
    if positive {
        se.vlag = 0;
    }
    positive
}

/// `requeue_delayed_entity`: a delayed sleeper woke before being picked.
pub(super) fn requeue_delayed_entity(f: &mut Fair, id: SeId) {
    let place = match f.feat.delayed_lag {
        DelayedLag::Zero if f.feat.has(Feat::DelayZero) => {
            update_entity_lag(f, id);
            drop_positive_lag(f, id)
        }
        DelayedLag::Zero => false,
        DelayedLag::Bounded => {
            f.update_curr(); // enqueue_task_fair's update_curr_eevdf
            update_entity_lag(f, id)
        }
    };
    if place {
        let queued = f.cfs.curr != Some(id);
        if queued {
            f.dequeue_tree(id);
        }
        place_entity(f, id, ENQUEUE_QUEUED);
        if queued {
            f.enqueue_tree(id);
        }
    }
    load_avg::update_load_avg(f, id, 0);
    f.ses[id as usize].sched_delayed = false; // clear_delayed (its counts: the class's)
}

/// `check_preempt_wakeup_fair` where `curr`'s and `p`'s sides meet (the next buddy is the
/// class's): an idle entity yields to a non-idle one; else a normal `p` preempts when it is
/// now EEVDF's pick, a shorter slice ignoring curr's protection as each form has it; 7.x
/// first rules out what its wakeup preemption does not preempt for (`preempt_action`).
pub(super) fn check_preempt_wakeup(f: &mut Fair, curr: SeId, p: SeId, w: &Waking) -> bool {
    if !f.feat.has(Feat::WakeupPreemption) {
        return false;
    }
    let (cse_idle, pse_idle) = (f.ses[curr as usize].idle, f.ses[p as usize].idle);
    if cse_idle && !pse_idle {
        cancel_protect_slice(f, curr);
        return true;
    }
    let barred = cse_idle != pse_idle || !w.normal;
    let rework = f.feat.wakeup_preempt == WakeupPreempt::Rework;
    if !rework && barred {
        return false;
    }
    f.update_curr();
    if rework {
        if let Some(preempt) = preempt_action(f, (curr, p), barred, w) {
            return preempt;
        }
    }
    match f.feat.protect_slice {
        ProtectSlice::Deadline => {
            if do_preempt_short(f, p, curr) {
                cancel_protect_slice(f, curr);
            }
            pick_eevdf(f, true) == Some(p)
        }
        ProtectSlice::MinSlice => preempt_min_slice(f, curr, p),
        ProtectSlice::Ineligible => preempt_ineligible(f, curr, p),
    }
}

/// How a wakeup decides to preempt (`--set fair.wakeup_preempt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeupPreempt {
    /// 6.6 to 6.18: EEVDF's pick decides, for a fork too; NEXT_BUDDY marks every wakee.
    Pick,
    /// 7.x (e837456fdca8 and after): no preemption for a fork or a delayed task; NEXT_BUDDY
    /// marks a wakee only ahead of an earlier-deadline buddy, and a WF_SYNC one never
    /// preempts at once.
    Rework,
}

/// 7.x's `wakeup_preempt_fair` before its pick: `barred` (across idle and non-idle, or for a
/// batch or idle task), for a delayed task or a fork of no shorter slice, no preemption, only
/// curr's protection bounded; under NEXT_BUDDY the wakee becomes the next buddy unless one of
/// earlier deadline is (`set_preempt_buddy`), and a WF_SYNC wakeup then does not preempt:
/// `preempt_sync` weighs curr's run since its `exec_start`, which `update_curr` has just
/// set. None: the pick decides.
fn preempt_action(f: &mut Fair, (curr, p): (SeId, SeId), barred: bool, w: &Waking) -> Option<bool> {
    let short = is_shorter(f, p, curr);
    let fork = w.flags & WF_FORK != 0;
    if barred || w.delayed || (fork && !short) {
        if f.feat.has(Feat::RunToParity) {
            update_protect_slice(f, curr);
        }
        return Some(false);
    }
    if short || !f.feat.has(Feat::NextBuddy) {
        return None;
    }
    if f.cfs
        .next
        .is_some_and(|n| entity_before(&f.ses[n as usize], &f.ses[p as usize]))
    {
        return None;
    }
    f.cfs.next = Some(p); // set_next_buddy
    (w.flags & WF_SYNC != 0).then_some(false)
}

/// 6.17's tail of `check_preempt_wakeup_fair`: a shorter slice picks without curr's
/// protection and, not picked, bounds it.
fn preempt_min_slice(f: &mut Fair, curr: SeId, p: SeId) -> bool {
    let short = is_shorter(f, p, curr);
    if pick_eevdf(f, !short) == Some(p) {
        if short {
            cancel_protect_slice(f, curr);
        }
        return true;
    }
    if short && f.feat.has(Feat::RunToParity) {
        update_protect_slice(f, curr);
    }
    false
}

/// 7.x's `wakeup_preempt_fair` (PREEMPT_WAKEUP_PICK and _SHORT): a shorter slice that is
/// eligible preempts and becomes the next buddy unless a shorter one is; a wakeup that does
/// not preempt bounds curr's protection.
fn preempt_ineligible(f: &mut Fair, curr: SeId, p: SeId) -> bool {
    let short = is_shorter(f, p, curr);
    if pick_next_entity(f, !short) == Some(p) || (short && entity_eligible(f, p)) {
        cancel_protect_slice(f, curr);
        let slice = f.ses[p as usize].slice;
        if short && f.cfs.next.is_none_or(|n| f.ses[n as usize].slice >= slice) {
            f.cfs.next = Some(p); // set_short_buddy
        }
        return true;
    }
    if f.feat.has(Feat::RunToParity) {
        update_protect_slice(f, curr);
    }
    false
}

/// PREEMPT_SHORT's test: `p` asks a shorter slice than `curr`.
fn is_shorter(f: &Fair, p: SeId, curr: SeId) -> bool {
    f.feat.has(Feat::PreemptShort) && f.ses[p as usize].slice < f.ses[curr as usize].slice
}

/// `yield_task_fair`: an eligible task gives up the rest of its request.
pub(super) fn yield_task(f: &mut Fair, id: SeId) {
    f.clear_buddies(id);
    f.update_curr();
    if entity_eligible(f, id) {
        let se = &mut f.ses[id as usize];
        se.vruntime = se.deadline;
        update_deadline(f, id);
    }
}
