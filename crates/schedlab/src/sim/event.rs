//! The event queue: integer-ns times, ties broken by insertion order.

use crate::sched::hooks::SchedTimer;
use crate::time::Ns;

/// What happens at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ev {
    /// A sleeping thread's timer or sleep ends (stale unless `gen` matches); `kicked`: its
    /// halted CPU has been kicked for the interrupt.
    Wake { task: u32, gen: u32, kicked: bool },
    /// A wakeup made at the instant its thread went to sleep, or by a thread on its way to
    /// sleep, delivered 1 ns later from `waker`'s CPU with `flags`; or a timer interrupt's
    /// k-th wakeup after its first (stale unless `gen` matches).
    Wakeup {
        task: u32,
        gen: u32,
        waker: u16,
        flags: u8,
        /// From a timer interrupt (its sleepers after the first).
        irq: bool,
    },
    /// A woken task's enqueue on its idle CPU, with its flags (ENQUEUE_WAKEUP, and
    /// ENQUEUE_MIGRATED), after the kernel work before it (`Engine::ttwu_queue`).
    Activate { task: u32, flags: u8 },
    /// The running task's current piece of work ends (stale unless `gen` matches).
    Done { cpu: u32, gen: u32 },
    /// The scheduler tick of a busy CPU.
    Tick { cpu: u32 },
    /// A timer the scheduler armed.
    Sched(SchedTimer),
    /// The late interrupt of a scheduler timer that expired: an emulated vCPU takes it as
    /// late as a tick's (`Engine::sched_timer`).
    SchedIrq(SchedTimer),
    /// The workload begins (`rtapp.start_ns` after the run's start).
    Begin,
    /// Policy `policy`'s cooling device (`hw`: its hardware throttle) moves to its
    /// schedule's `step`-th cap.
    Cap { policy: u16, step: u16, hw: bool },
    /// The workload's `duration` is over.
    Stop,
}

// An entry is its 16-byte key and its event: keep the event in 16 bytes too.
const _: () = assert!(std::mem::size_of::<Ev>() <= 16);

/// A queued event.
struct Entry {
    at: Ns,
    seq: u64,
    ev: Ev,
}

/// Bits per digit of a time: an entry moves to a lower bucket at most once per digit.
const DIGIT: u32 = 4;
const RADIX: usize = 1 << DIGIT;
/// Bucket 0 (the time last popped), then one per digit value of each digit position.
const BUCKETS: usize = 1 + (64 / DIGIT as usize) * RADIX;
const WORDS: usize = BUCKETS.div_ceil(64);

/// A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) on the event times, in base 16: a
/// monotone priority queue, as no event is scheduled before the last one popped. Pushing is
/// O(1); an entry moves to a lower bucket at most once per hexadecimal digit of its distance
/// from the time last popped (a nanosecond to a second: 8 digits), so a pop costs about the
/// same with 100 or 10,000 events pending, where a heap descends its depth. Bucket 0 holds
/// the events at the time last popped, popped in insertion order. Hand-written rather than
/// the radix-heap crate, whose pops scan its buckets in turn (7% slower than the 4-ary heap
/// before it on 640 tasks on icelake-2s); base 16 rather than 2 moves entries half as often.
pub struct EventQueue {
    /// Bucket 1 + 16·l + d holds the times whose highest hexadecimal digit that differs
    /// from `last` is digit l, and is d there: lower buckets, earlier times.
    buckets: Vec<Vec<Entry>>,
    /// Bit b set: bucket b is not empty.
    occupied: [u64; WORDS],
    /// The time popped last.
    last: Ns,
    seq: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self {
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            occupied: [0; WORDS],
            last: 0,
            seq: 0,
        }
    }
}

impl EventQueue {
    /// Schedule `ev` at `at`; never in the past.
    #[inline]
    pub fn push(&mut self, at: Ns, now: Ns, ev: Ev) {
        debug_assert!(
            at >= now,
            "event {ev:?} at {at} scheduled in the past (now {now})"
        );
        let seq = self.seq;
        self.insert(Entry {
            at: at.max(now),
            seq,
            ev,
        });
        self.seq += 1;
    }

    /// The earliest event, first pushed first among those at the same time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Ns, Ev)> {
        if self.occupied[0] & 1 == 0 {
            let b = self.lowest_occupied()?;
            self.redistribute(b);
        }
        let now = &mut self.buckets[0];
        // Usually one; more when events share an instant.
        let i = (0..now.len())
            .min_by_key(|&i| now[i].seq)
            .expect("bucket 0 is occupied");
        let e = now.swap_remove(i);
        if now.is_empty() {
            self.occupied[0] &= !1;
        }
        Some((e.at, e.ev))
    }

    fn lowest_occupied(&self) -> Option<usize> {
        let w = self.occupied.iter().position(|&w| w != 0)?;
        Some(64 * w + self.occupied[w].trailing_zeros() as usize)
    }

    /// The bucket of time `at` ≥ `last`.
    #[inline]
    fn bucket(&self, at: Ns) -> usize {
        let diff = at ^ self.last;
        if diff == 0 {
            return 0;
        }
        let digit = (63 - diff.leading_zeros()) / DIGIT;
        1 + RADIX * digit as usize + ((at >> (DIGIT * digit)) as usize & (RADIX - 1))
    }

    #[inline]
    fn insert(&mut self, e: Entry) {
        debug_assert!(e.at >= self.last, "a time before the last popped");
        let b = self.bucket(e.at);
        self.buckets[b].push(e);
        self.occupied[b / 64] |= 1 << (b % 64);
    }

    /// Bucket `b`, the lowest occupied, holds the earliest time: spread it over the buckets
    /// below by the distance from that time (the earliest land in bucket 0).
    fn redistribute(&mut self, b: usize) {
        let mut entries = std::mem::take(&mut self.buckets[b]);
        self.occupied[b / 64] &= !(1 << (b % 64));
        self.last = entries
            .iter()
            .map(|e| e.at)
            .min()
            .expect("an occupied bucket");
        for e in entries.drain(..) {
            self.insert(e);
        }
        self.buckets[b] = entries; // keep its capacity: no allocation once warm
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    proptest! {
        /// The radix heap pops in exactly the order of a binary heap keyed by (time,
        /// insertion number), on random pushes (never before the last pop) and pops.
        #[test]
        fn pops_as_a_heap_ordered_by_time_then_insertion(
            ops in prop::collection::vec((0u8..3, 0u64..5_000, 0u64..1 << 40), 1..600)
        ) {
            let (mut q, mut heap, mut now, mut seq) = (EventQueue::default(), BinaryHeap::new(), 0, 0u32);
            for (op, near, far) in ops {
                if op == 0 {
                    let got = q.pop();
                    let want = heap.pop().map(|Reverse((t, s))| (t, Ev::Tick { cpu: s }));
                    prop_assert_eq!(got, want);
                    if let Some((t, _)) = got {
                        now = t;
                    }
                } else {
                    // Mostly near (ties and close times), sometimes far ahead.
                    let at = now + if op == 1 { near % 7 } else { far };
                    q.push(at, now, Ev::Tick { cpu: seq });
                    heap.push(Reverse((at, seq)));
                    seq += 1;
                }
            }
            while let Some(want) = heap.pop() {
                let Reverse((t, s)) = want;
                prop_assert_eq!(q.pop(), Some((t, Ev::Tick { cpu: s })));
            }
            prop_assert_eq!(q.pop(), None);
        }
    }
}
