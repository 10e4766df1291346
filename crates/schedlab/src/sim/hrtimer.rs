//! Sleep timers (kernel/time/hrtimer.c): a fair task's sleep may end anywhere in [expiry,
//! expiry + timer_slack_ns] (`hrtimer_set_expires_range_ns`), an RT or deadline task's at its
//! expiry (no slack). A CPU's timer
//! interrupt comes at the earliest hard expiry of its timers, or at its tick, and runs every
//! timer in hard-expiry order until one whose soft expiry is still ahead
//! (`__hrtimer_run_queues`): sleeps that end close together on one CPU end together, and a
//! busy CPU's tick ends them early. Simplified: the scheduler's own hrtimers (deadline and
//! RT period timers) do not run these queues.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::time::Ns;

/// A pending range timer, ordered by hard expiry, then arming (`seq`): the kernel's
/// timerqueue is a tree in expiry order, and ties run in the order they were armed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct RangeTimer {
    hard: Ns,
    seq: u64,
    soft: Ns,
    task: u32,
    gen: u32,
}

/// Each CPU's pending range timers, earliest first: a binary heap, so that a CPU with
/// thousands of sleepers arms and runs a timer in O(log n).
pub(super) struct HrTimers {
    cpus: Vec<BinaryHeap<Reverse<RangeTimer>>>,
    /// Timers armed so far.
    seq: u64,
}

impl HrTimers {
    pub(super) fn new(nr_cpus: usize) -> HrTimers {
        HrTimers {
            cpus: vec![BinaryHeap::new(); nr_cpus],
            seq: 0,
        }
    }

    /// `hrtimer_start_range_ns` on `cpu`: the sleep of `task` (wake generation `gen`).
    pub(super) fn start(&mut self, cpu: usize, soft: Ns, hard: Ns, task: u32, gen: u32) {
        self.seq += 1;
        let seq = self.seq;
        self.cpus[cpu].push(Reverse(RangeTimer {
            hard,
            seq,
            soft,
            task,
            gen,
        }));
    }

    /// The next timer `__hrtimer_run_queues` runs on `cpu` at `now`, taken off its queue:
    /// the earliest by hard expiry, if its soft expiry has come.
    pub(super) fn expired(&mut self, cpu: usize, now: Ns) -> Option<(u32, u32)> {
        let q = &mut self.cpus[cpu];
        let Reverse(first) = q.peek().filter(|t| t.0.soft <= now)?;
        let (task, gen) = (first.task, first.gen);
        q.pop();
        Some((task, gen))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The queue as a vector in hard-expiry order, ties in arming order: what each CPU's
    /// queue was before the heap.
    #[derive(Default)]
    struct Sorted(Vec<(Ns, Ns, u32, u32)>);

    impl Sorted {
        fn start(&mut self, soft: Ns, hard: Ns, task: u32, gen: u32) {
            let at = self.0.partition_point(|t| t.1 <= hard);
            self.0.insert(at, (soft, hard, task, gen));
        }

        fn expired(&mut self, now: Ns) -> Option<(u32, u32)> {
            let &(soft, _, task, gen) = self.0.first()?;
            (soft <= now).then(|| {
                self.0.remove(0);
                (task, gen)
            })
        }
    }

    proptest! {
        /// On random arming (hard expiries crowded, so ties are common; slack 0 or not)
        /// and interrupts at advancing times, each CPU's timers run exactly as the sorted
        /// vector runs them.
        #[test]
        fn runs_timers_as_the_sorted_queue(
            ops in prop::collection::vec((0usize..3, any::<bool>(), 0u64..40, 0u64..20), 1..500)
        ) {
            let (mut heap, mut sorted) = (HrTimers::new(3), [(); 3].map(|_| Sorted::default()));
            let mut now = 0;
            for (i, (cpu, arm, at, slack)) in ops.into_iter().enumerate() {
                if arm {
                    let (soft, task) = (now + at, i as u32);
                    heap.start(cpu, soft, soft + slack, task, 7);
                    sorted[cpu].start(soft, soft + slack, task, 7);
                } else {
                    now += at;
                    loop {
                        let want = sorted[cpu].expired(now);
                        prop_assert_eq!(heap.expired(cpu, now), want);
                        if want.is_none() {
                            break;
                        }
                    }
                }
            }
        }
    }
}
