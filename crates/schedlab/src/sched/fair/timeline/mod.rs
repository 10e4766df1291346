//! `cfs_rq->tasks_timeline`: the queued entities (curr excepted) in key order (EEVDF: the
//! virtual deadline, CFS: vruntime; equal keys in queueing order, as `rb_add` puts them to
//! the right), searched for the first eligible entity as `pick_eevdf` does.
//!
//! Simplified: the kernel's augmented red-black tree is two structures with its order and
//! its searches. A short queue (the common case: a few tasks per CPU) is a sorted array of
//! the entries, searched in place; past `LONG` entries it becomes a treap (`treap.rs`), so a
//! queue of thousands costs O(log n) per operation, and back under `SHORT`. Each entry holds
//! the key and vruntime its entity was queued with (neither changes while it waits), so no
//! search reads an entity.

mod treap;

use super::{min_vruntime, vdiff, SchedEntity, SeId};
use treap::Treap;

/// `se.run_node` of an entity in no timeline (and an empty link in the treap).
pub const NIL: u32 = u32::MAX;
/// `se.run_node` of an entity in a short timeline's array (in a long one: its treap node).
const IN_ARRAY: u32 = u32::MAX - 1;
/// A short timeline reaching this many entries becomes a treap...
const LONG: usize = 128;
/// ...and a treap falling to this many entries an array again.
const SHORT: usize = 32;

/// What the timeline is ordered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// EEVDF (6.6+): the virtual deadline.
    Deadline,
    /// CFS (≤6.5): vruntime.
    Vruntime,
}

impl Key {
    fn of(self, se: &SchedEntity) -> u64 {
        match self {
            Key::Deadline => se.deadline,
            Key::Vruntime => se.vruntime,
        }
    }
}

/// `a` before `b` in the kernel's wrapping order of keys and vruntimes.
#[inline(always)]
fn lt(a: u64, b: u64) -> bool {
    vdiff(a, b) < 0
}

/// A queued entity as the timeline sees it.
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: u64,
    vruntime: u64,
    se: SeId,
}

/// `struct rb_root_cached`: the queued entities in order, as an array or a treap (boxed:
/// most cfs_rqs never need one, and a cfs_rq stays 280 bytes).
#[derive(Debug, Clone)]
pub struct Timeline(Form);

/// A timeline's form.
#[derive(Debug, Clone)]
enum Form {
    Short(Vec<Entry>),
    Long(Box<Treap>),
}

/// Where `id` is in a short timeline's array (found by its index alone).
fn position(a: &[Entry], id: SeId) -> usize {
    a.iter()
        .position(|q| q.se == id)
        .expect("a queued entity is in its timeline")
}

impl Default for Timeline {
    fn default() -> Timeline {
        Timeline(Short(Vec::new()))
    }
}

use Form::{Long, Short};

impl Timeline {
    pub fn len(&self) -> usize {
        match &self.0 {
            Short(a) => a.len(),
            Long(t) => t.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entity `id` is in a timeline (its cfs_rq's).
    pub fn contains(&self, ses: &[SchedEntity], id: SeId) -> bool {
        ses[id as usize].run_node != NIL
    }

    /// `__pick_first_entity`: the leftmost entity.
    pub fn first(&self) -> Option<SeId> {
        match &self.0 {
            Short(a) => a.first().map(|e| e.se),
            Long(t) => t.first(),
        }
    }

    /// `__enqueue_entity`'s `rb_add_augmented_cached`: after the entities with its key.
    pub fn insert(&mut self, ses: &mut [SchedEntity], by: Key, id: SeId) {
        if self.len() == LONG && matches!(self.0, Short(_)) {
            self.lengthen(ses);
        }
        let se = &ses[id as usize];
        let e = Entry {
            key: by.of(se),
            vruntime: se.vruntime,
            se: id,
        };
        ses[id as usize].run_node = match &mut self.0 {
            Short(a) => {
                let at = a.partition_point(|q| !lt(e.key, q.key));
                a.insert(at, e);
                IN_ARRAY
            }
            Long(t) => t.insert(e),
        };
    }

    /// `__dequeue_entity`'s `rb_erase_augmented_cached` (the entity's deadline may have moved
    /// already: `dequeue_entity` makes it relative first).
    pub fn remove(&mut self, ses: &mut [SchedEntity], id: SeId) {
        let n = std::mem::replace(&mut ses[id as usize].run_node, NIL);
        match &mut self.0 {
            Short(a) => {
                a.remove(position(a, id));
            }
            Long(t) => {
                t.remove(n);
                if t.len() == SHORT {
                    self.shorten(ses);
                }
            }
        }
    }

    /// The array moves into a treap, in order (so equal keys keep their order).
    fn lengthen(&mut self, ses: &mut [SchedEntity]) {
        let mut t = Box::<Treap>::default();
        if let Short(a) = &mut self.0 {
            for e in a.drain(..) {
                ses[e.se as usize].run_node = t.insert(e);
            }
        }
        self.0 = Long(t);
    }

    /// The treap moves into an array.
    fn shorten(&mut self, ses: &mut [SchedEntity]) {
        let a: Vec<Entry> = self.entries().collect();
        for e in &a {
            ses[e.se as usize].run_node = IN_ARRAY;
        }
        self.0 = Short(a);
    }

    /// `__pick_next_entity`: the entity after `id` (queued here) in key order.
    pub fn next(&self, ses: &[SchedEntity], id: SeId) -> Option<SeId> {
        match &self.0 {
            Short(a) => a.get(position(a, id) + 1).map(|e| e.se),
            Long(t) => t.next(ses[id as usize].run_node),
        }
    }

    /// The entries in key order.
    fn entries(&self) -> Box<dyn Iterator<Item = Entry> + '_> {
        match &self.0 {
            Short(a) => Box::new(a.iter().copied()),
            Long(t) => Box::new(t.in_order().map(|(_, e)| e)),
        }
    }

    /// The entities in key order.
    pub fn iter(&self) -> impl Iterator<Item = SeId> + '_ {
        self.entries().map(|e| e.se)
    }

    /// `pick_eevdf`'s search: the first entity in key order whose vruntime is `eligible`,
    /// which must hold for every vruntime below one it holds for.
    pub fn first_eligible(&self, eligible: impl Fn(u64) -> bool) -> Option<SeId> {
        match &self.0 {
            Short(a) => a.iter().find(|e| eligible(e.vruntime)).map(|e| e.se),
            Long(t) => t.first_eligible(eligible),
        }
    }

    /// The order by `by`, the entities' keys and vruntimes unmoved since they were queued,
    /// their `run_node`s and the treap's links consistent (for the invariant checks and the
    /// tests): the failure, if any.
    pub fn check(&self, ses: &[SchedEntity], by: Key) -> Result<(), String> {
        let mut count = 0;
        let mut prev: Option<u64> = None;
        let (len, long) = (self.len(), matches!(self.0, Long(_)));
        for e in self.entries().take(len + 1) {
            count += 1;
            let se = &ses[e.se as usize];
            if (by.of(se), se.vruntime) != (e.key, e.vruntime) {
                return Err(format!("entity {} moved while queued", e.se));
            }
            if (se.run_node == IN_ARRAY) == long || se.run_node == NIL {
                return Err(format!("entity {}'s run_node is {}", e.se, se.run_node));
            }
            if prev.is_some_and(|p| lt(e.key, p)) {
                return Err(format!("entity {} is out of key order", e.se));
            }
            prev = Some(e.key);
        }
        if count != len {
            return Err(format!("{count} entities in order, {len} counted"));
        }
        match &self.0 {
            Short(_) => Ok(()),
            Long(t) => t.check(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::util_est::UtilEst;
    use crate::sched::weight::LoadWeight;
    use proptest::prelude::*;

    const N: usize = 300;

    /// The vector the timeline replaced: sorted by key, equal keys in queueing order.
    fn model_insert(v: &mut Vec<SeId>, ses: &[SchedEntity], by: Key, id: SeId) {
        let k = by.of(&ses[id as usize]);
        let at = v.partition_point(|&q| !lt(k, by.of(&ses[q as usize])));
        v.insert(at, id);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// On random inserts, removals and searches, with keys crowded (ties) or spread,
        /// across the u64 wrap, through growth past `LONG` and shrinking under `SHORT`, the
        /// timeline reads as the sorted vector: the same order, leftmost, successors and
        /// first eligible entity (the vector scanned from its start).
        #[test]
        fn orders_and_searches_as_the_sorted_vector(
            deadline in any::<bool>(),
            spread in prop_oneof![Just(40u64), Just(1u64 << 40)],
            ops in prop::collection::vec((0u8..8, 0..N as u32, any::<u64>(), any::<u64>()), 1000..1500)
        ) {
            let by = if deadline { Key::Deadline } else { Key::Vruntime };
            let base = u64::MAX - spread / 2;
            let mut ses: Vec<SchedEntity> = (0..N as u32)
                .map(|t| SchedEntity::new(t, LoadWeight::default(), UtilEst::Ewma(0)))
                .collect();
            let (mut tl, mut model) = (Timeline::default(), Vec::<SeId>::new());
            let (mut was_long, mut short_again) = (false, false);
            for (i, (op, id, a, b)) in ops.into_iter().enumerate() {
                // Phases of 400 operations: inserts, then removals, then inserts.
                let grow = (i / 400) % 2 == 0;
                let some = (!model.is_empty()).then(|| model[id as usize % model.len()]);
                match (op, some) {
                    (0..=4, _) if grow && !model.contains(&id) => {
                        ses[id as usize].deadline = base.wrapping_add(a % spread);
                        ses[id as usize].vruntime = base.wrapping_add(b % spread);
                        tl.insert(&mut ses, by, id);
                        model_insert(&mut model, &ses, by, id);
                    }
                    (0..=4, Some(q)) if !grow => {
                        // dequeue_entity may move the deadline first (PLACE_REL_DEADLINE).
                        ses[q as usize].deadline = ses[q as usize].deadline.wrapping_sub(a);
                        tl.remove(&mut ses, q);
                        model.retain(|&m| m != q);
                    }
                    (5, _) => {
                        let limit = base.wrapping_add(a % spread);
                        let eligible = |v: u64| !lt(limit, v);
                        let want = model.iter().copied().find(|&q| eligible(ses[q as usize].vruntime));
                        prop_assert_eq!(tl.first_eligible(eligible), want);
                    }
                    (6, Some(q)) => {
                        let at = model.iter().position(|&m| m == q).unwrap();
                        prop_assert_eq!(tl.next(&ses, q), model.get(at + 1).copied());
                    }
                    _ => prop_assert_eq!(tl.contains(&ses, id), model.contains(&id)),
                }
                short_again |= was_long && matches!(tl.0, Short(_));
                was_long |= matches!(tl.0, Long(_));
                prop_assert_eq!(tl.first(), model.first().copied());
                prop_assert_eq!(tl.len(), model.len());
                prop_assert_eq!(tl.iter().collect::<Vec<_>>(), model.clone());
                prop_assert_eq!(tl.check(&ses, by), Ok(()));
            }
            // Every run went through both forms and both changes of form.
            prop_assert!(was_long && short_again);
        }
    }

    /// The check catches an entity whose key or vruntime moved while it was queued, in
    /// either form.
    #[test]
    fn check_finds_a_moved_entity() {
        for n in [8, LONG as u32 + 8] {
            let mut ses: Vec<SchedEntity> = (0..n)
                .map(|t| SchedEntity::new(t, LoadWeight::default(), UtilEst::Ewma(0)))
                .collect();
            let mut tl = Timeline::default();
            for id in 0..n {
                ses[id as usize].deadline = u64::from(id) * 10;
                ses[id as usize].vruntime = 1_000 - u64::from(id);
                tl.insert(&mut ses, Key::Deadline, id);
            }
            assert_eq!(matches!(tl.0, Long(_)), n > 8);
            assert_eq!(tl.check(&ses, Key::Deadline), Ok(()));
            ses[7].vruntime = 0;
            assert!(tl.check(&ses, Key::Deadline).is_err());
            ses[7].vruntime = 993;
            ses[3].deadline = 1_000_000;
            assert!(tl.check(&ses, Key::Deadline).is_err());
            ses[3].deadline = 30;
            assert_eq!(tl.check(&ses, Key::Deadline), Ok(()));
        }
    }
}
