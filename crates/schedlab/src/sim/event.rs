//! The event queue: integer-ns times, ties broken by insertion order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::sched::deadline::DlTimer;
use crate::time::Ns;

/// What happens at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ev {
    /// A sleeping thread's timer or sleep ends (stale unless `gen` matches).
    Wake { task: u32, gen: u32 },
    /// The running task's current piece of work ends (stale unless `gen` matches).
    Done { cpu: u32, gen: u32 },
    /// The scheduler tick of a busy CPU.
    Tick { cpu: u32 },
    /// `sched_rt_period_timer`: RT throttling's period ends.
    RtPeriod,
    /// A deadline reservation's hrtimer (stale unless `gen` matches).
    Dl { task: u32, kind: DlTimer, gen: u32 },
    /// A CPU's fair server's hrtimer (stale unless `gen` matches).
    DlServer { cpu: u32, kind: DlTimer, gen: u32 },
    /// The workload's `duration` is over.
    Stop,
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(Ns, u64, Ev)>>,
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
        self.heap.push(Reverse((at.max(now), self.seq, ev)));
        self.seq += 1;
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Ns, Ev)> {
        self.heap.pop().map(|Reverse((t, _, ev))| (t, ev))
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}
