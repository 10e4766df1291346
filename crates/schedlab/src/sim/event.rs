//! The event queue: integer-ns times, ties broken by insertion order.

use dary_heap::QuaternaryHeap;
use std::cmp::Ordering;

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
    /// The workload begins (`rtapp.start_ns` after the run's start).
    Begin,
    /// The workload's `duration` is over.
    Stop,
}

// An entry is its 16-byte key and its event: keep the event in 16 bytes too.
const _: () = assert!(std::mem::size_of::<Ev>() <= 16);

/// A queued event; the earliest key is the greatest, for the max-heap.
struct Entry {
    /// The time in the high 64 bits, the insertion number in the low: one comparison.
    key: u128,
    ev: Ev,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

#[derive(Default)]
pub struct EventQueue {
    /// A 4-ary heap: half the depth of a binary one for the pops that dominate the run.
    heap: QuaternaryHeap<Entry>,
    seq: u64,
}

impl EventQueue {
    /// Schedule `ev` at `at`; never in the past.
    #[inline]
    pub fn push(&mut self, at: Ns, now: Ns, ev: Ev) {
        debug_assert!(
            at >= now,
            "event {ev:?} at {at} scheduled in the past (now {now})"
        );
        let key = (at.max(now) as u128) << 64 | self.seq as u128;
        self.heap.push(Entry { key, ev });
        self.seq += 1;
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Ns, Ev)> {
        self.heap.pop().map(|e| ((e.key >> 64) as Ns, e.ev))
    }
}
