//! Slice protection: how long EEVDF lets the running entity keep the CPU before it looks for
//! another (RUN_TO_PARITY, PREEMPT_SHORT), in the three forms the kernels had
//! (`--set fair.protect_slice`).
//!
//! - `deadline` (6.6 to 6.16): until the request picked is served. The mark is the deadline
//!   at the pick; under NO_RUN_TO_PARITY there is none.
//! - `min_slice` (6.17, 6.18): until `vprot`, the deadline or, when a shorter slice is queued,
//!   the vruntime after the shortest queued slice (NO_RUN_TO_PARITY: after the normalized base
//!   slice); a wakeup of a shorter slice that does not preempt bounds it again; `update_curr`
//!   reschedules once it is passed.
//! - `ineligible` (7.x): as `min_slice`, but under PREEMPT_SHORT a shorter queued slice
//!   protects only while the entity stays eligible, every wakeup that does not preempt bounds
//!   `vprot` from min(v, V), and an eligible waking task of shorter slice preempts.
//!
//! The mark is `se->vprot` (6.17+) under every form: 6.12 kept it in `vlag`, which it reads
//! only once a dequeue has set it again, so the two behave alike; 7.x keeps a lag from the
//! dequeue on, delayed or not (`fair.delayed_lag=bounded`), and needs the field.
//!
//! Simplified: the shortest slice is found by walking the queue (the kernel keeps it in its
//! tree's augmentation), and only when a task with a custom slice is queued: otherwise every
//! slice is the base slice.

use super::eevdf::{avg_vruntime, curr_on_rq};
use super::{min_vruntime, vdiff, Fair, SeId};
use crate::sched::features::Feat;
use crate::sched::weight::calc_delta_fair;

/// The form of slice protection (`--set fair.protect_slice`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtectSlice {
    /// 6.6 to 6.16: protected while the deadline picked stands.
    Deadline,
    /// 6.17, 6.18: up to `vprot`, bounded by the shortest queued slice.
    MinSlice,
    /// 7.x: `vprot` bounded by the point the entity turns ineligible.
    Ineligible,
}

/// `set_protect_slice`: at the pick, how far `id` may run.
pub(super) fn set_protect_slice(f: &mut Fair, id: SeId) {
    let form = f.feat.protect_slice;
    let se = &f.ses[id as usize];
    if form == ProtectSlice::Deadline {
        set_vprot(f, id, se.deadline);
        return;
    }
    let quantum = if f.feat.has(Feat::RunToParity) {
        cfs_rq_min_slice(f)
    } else {
        f.feat.base_slice_ns // normalized_sysctl_sched_base_slice
    };
    let slice = quantum.min(se.slice);
    let mut vprot = se.deadline;
    if slice != se.slice {
        let bound = if form == ProtectSlice::Ineligible && f.feat.has(Feat::PreemptShort) {
            ineligible_vruntime(f)
        } else {
            se.vruntime
                .wrapping_add(calc_delta_fair(slice, &f.h_load(id)))
        };
        vprot = min_vruntime(vprot, bound);
    }
    set_vprot(f, id, vprot);
}

/// `update_protect_slice`: a wakeup that did not preempt bounds curr's protection to the
/// shortest queued slice from its vruntime (7.x: from min(v, V)); 6.6 to 6.16 have none.
pub(super) fn update_protect_slice(f: &mut Fair, id: SeId) {
    if f.feat.protect_slice == ProtectSlice::Deadline {
        return;
    }
    let slice = cfs_rq_min_slice(f);
    let mut from = f.ses[id as usize].vruntime;
    if f.feat.protect_slice == ProtectSlice::Ineligible {
        from = min_vruntime(from, avg_vruntime(f));
    }
    let bound = from.wrapping_add(calc_delta_fair(slice, &f.h_load(id)));
    set_vprot(f, id, min_vruntime(vprot(f, id), bound));
}

/// `se->vprot`.
fn vprot(f: &Fair, id: SeId) -> u64 {
    f.ses[id as usize].vprot
}

fn set_vprot(f: &mut Fair, id: SeId, vprot: u64) {
    f.ses[id as usize].vprot = vprot;
}

/// `protect_slice`.
pub(super) fn protect_slice(f: &Fair, id: SeId) -> bool {
    let se = &f.ses[id as usize];
    match f.feat.protect_slice {
        ProtectSlice::Deadline => vprot(f, id) == se.deadline,
        _ => vdiff(se.vruntime, vprot(f, id)) < 0,
    }
}

/// `cancel_protect_slice`.
pub(super) fn cancel_protect_slice(f: &mut Fair, id: SeId) {
    if protect_slice(f, id) {
        let se = &f.ses[id as usize];
        let passed = match f.feat.protect_slice {
            ProtectSlice::Deadline => se.deadline.wrapping_add(1),
            _ => se.vruntime,
        };
        set_vprot(f, id, passed);
    }
}

/// `reweight_eevdf`'s `rel_vprot` (7.x): a protected curr's `vprot` keeps its distance to V
/// in real time, as its deadline does.
pub(super) fn rescale_vprot(f: &mut Fair, id: SeId, avruntime: u64, old: i64, new: i64) {
    if f.feat.protect_slice == ProtectSlice::Deadline
        || f.cfs.curr != Some(id)
        || !protect_slice(f, id)
    {
        return;
    }
    let rel = (vprot(f, id).wrapping_sub(avruntime) as i64).wrapping_mul(old) / new;
    set_vprot(f, id, avruntime.wrapping_add(rel as u64));
}

/// `cfs_rq_min_slice`: the shortest slice of curr and the queued entities.
fn cfs_rq_min_slice(f: &Fair) -> u64 {
    slice_bound(f, u64::MAX, u64::min)
}

/// `cfs_rq_max_slice` (6.17+): the longest slice of curr and the queued entities.
pub(super) fn cfs_rq_max_slice(f: &Fair) -> u64 {
    slice_bound(f, 0, u64::max)
}

/// curr's and the queued entities' slices folded by `pick` (`none` if there are none); the
/// queued ones are all the base slice unless one has its own.
fn slice_bound(f: &Fair, none: u64, pick: fn(u64, u64) -> u64) -> u64 {
    let curr = curr_on_rq(f).map_or(none, |c| f.ses[c as usize].slice);
    let queued = if f.cfs.nr_custom_slice == 0 {
        f.cfs.timeline.first().map_or(none, |_| f.tun.base_slice)
    } else {
        let slices = f.cfs.timeline.iter().map(|id| f.ses[id as usize].slice);
        slices.fold(none, pick)
    };
    pick(curr, queued)
}

/// `ineligible_vruntime`: the vruntime at which curr stops being eligible, the weighted
/// mean of the others' (rounded toward −∞), plus one.
fn ineligible_vruntime(f: &Fair) -> u64 {
    let weight = f.cfs.avg_load as i64;
    let delta = if weight == 0 {
        0
    } else {
        f.cfs.avg_vruntime.div_euclid(weight)
    };
    f.cfs
        .min_vruntime
        .wrapping_add(delta as u64)
        .wrapping_add(1)
}
