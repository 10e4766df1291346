//! cyclictest's measuring threads (rt-tests' cyclictest.c, `timerthread`): each sleeps with
//! `clock_nanosleep(TIMER_ABSTIME)` to its next period and, back in user space, takes the
//! time; the difference is the period's latency, kept in the thread's statistics and
//! histogram as cyclictest keeps them (`struct thread_stat`).

use crate::time::Ns;
use crate::workload::gen::HIST_MAX;

/// A measuring thread: its next expiry and its statistics.
#[derive(Debug, Clone)]
pub struct Cyclic {
    pub interval: Ns,
    next: Option<Ns>,
    /// When it last came back from its sleep (the time it took).
    now: Ns,
    nsecs: bool,
    pub stats: CyclicStats,
}

/// cyclictest's `struct thread_stat`: latencies in µs (ns with `-N`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CyclicStats {
    pub cycles: u64,
    /// cyclictest starts it at 1,000,000 (what it prints when no period ended).
    pub min: u64,
    pub max: u64,
    /// The last period's.
    pub act: u64,
    /// Of every period's (cyclictest sums them in a double: exact below 2^53).
    pub sum: u64,
    /// Periods by latency, one bucket per unit, `-h` of them; those beyond overflow, and
    /// the cycle numbers of the first `-h` of these.
    pub hist: Vec<u64>,
    pub overflows: u64,
    pub outliers: Vec<u64>,
}

const NSEC_PER_SEC: Ns = 1_000_000_000;

impl Cyclic {
    pub fn new(interval: Ns, hist: u32, nsecs: bool) -> Cyclic {
        Cyclic {
            interval,
            next: None,
            now: 0,
            nsecs,
            stats: CyclicStats {
                cycles: 0,
                min: 1_000_000,
                max: 0,
                act: 0,
                sum: 0,
                hist: vec![0; hist.min(HIST_MAX) as usize],
                overflows: 0,
                outliers: Vec::new(),
            },
        }
    }

    /// The expiry to sleep to at `now`: an interval after the thread's start the first
    /// time, else after the last expiry, past the instant it last came back (missed periods
    /// are skipped, `tsgreater`).
    pub fn arm(&mut self, now: Ns) -> Ns {
        let interval = self.interval;
        let next = match self.next {
            None => now + interval,
            Some(last) => {
                let mut next = last + interval;
                while self.now > next {
                    next += interval;
                }
                next
            }
        };
        self.next = Some(next);
        next
    }

    /// Back in user space at `now` from the sleep to `expiry`: the period's latency, as
    /// `calcdiff` (µs) or `calcdiff_ns` computes it from the two `timespec`s.
    pub fn record(&mut self, now: Ns, expiry: Ns) {
        self.now = now;
        let diff = if self.nsecs {
            now - expiry
        } else {
            calcdiff(now, expiry)
        };
        let st = &mut self.stats;
        st.min = st.min.min(diff);
        st.max = st.max.max(diff);
        st.act = diff;
        st.sum += diff;
        let buckets = st.hist.len();
        if (diff as usize) < buckets {
            st.hist[diff as usize] += 1;
        } else if buckets > 0 {
            st.overflows += 1;
            if st.outliers.len() < buckets {
                st.outliers.push(st.cycles);
            }
        }
        st.cycles += 1;
    }
}

/// rt-utils.h `calcdiff`: whole seconds apart in µs plus the nanoseconds' difference
/// divided by 1000, truncated toward zero (so 2.5 µs across a second's boundary counts 3).
fn calcdiff(t1: Ns, t2: Ns) -> u64 {
    let secs = (t1 / NSEC_PER_SEC) as i64 - (t2 / NSEC_PER_SEC) as i64;
    let nsecs = (t1 % NSEC_PER_SEC) as i64 - (t2 % NSEC_PER_SEC) as i64;
    (secs * 1_000_000 + nsecs / 1000) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calcdiff_truncates_each_timespec_part() {
        // 2.999 µs within a second: 2; 2.5 µs across a second's boundary:
        // 1,000,000 + (1,500 − 999,999,000)/1000 = 1,000,000 − 999,997 = 3.
        assert_eq!(calcdiff(5_000_002_999, 5_000_000_000), 2);
        assert_eq!(calcdiff(5_000_001_500, 4_999_999_000), 3);
    }

    #[test]
    fn periods_skip_what_was_missed_and_count_as_cyclictest() {
        let mut c = Cyclic::new(1_000_000, 10, false);
        // started at 100 µs, interval 1 ms: the first expiry is at 1.1 ms
        assert_eq!(c.arm(100_000), 1_100_000);
        c.record(1_103_000, 1_100_000); // 3 µs
        assert_eq!(c.arm(1_103_000), 2_100_000);
        // back 2.5 ms late: 2,500 µs overflows the 10 buckets, and the next expiry skips
        // 3.1 and 4.1 ms (before 4.6 ms) for 5.1 ms
        c.record(4_600_000, 2_100_000);
        assert_eq!(c.arm(4_600_000), 5_100_000);
        c.record(5_100_000, 5_100_000); // on time: 0
        let st = &c.stats;
        assert_eq!((st.cycles, st.min, st.max, st.act), (3, 0, 2500, 0));
        assert_eq!(st.sum, 2503);
        assert_eq!((st.hist[0], st.hist[3], st.overflows), (1, 1, 1));
        assert_eq!(st.outliers, [1]); // the second cycle, numbered from 0
    }

    #[test]
    fn without_a_histogram_nothing_overflows() {
        let mut c = Cyclic::new(1000, 0, true);
        let at = c.arm(0);
        c.record(at + 7, at);
        assert_eq!(
            (c.stats.act, c.stats.overflows, c.stats.outliers.len()),
            (7, 0, 0)
        );
    }
}
