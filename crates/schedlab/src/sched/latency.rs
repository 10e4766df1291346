//! Wakeup latencies (wakeup to running) of one thread, for its percentiles: kept exactly
//! for the first `EXACT` wakeups, then in an HDR histogram of 3 significant digits (0.1 %
//! relative precision), so that a thread's memory does not grow with simulated time.
//! docs/outputs.md gives the percentile definition.

use hdrhistogram::Histogram;

use crate::time::Ns;

/// Latencies kept exactly (32 KB a thread).
const EXACT: usize = 4096;

/// Significant decimal digits of the histogram: values within 0.1 % of each other may share
/// a bucket.
const SIGFIG: u8 = 3;

#[derive(Debug, Clone, Default)]
pub struct Latencies {
    exact: Vec<Ns>,
    hist: Option<Histogram<u64>>,
    count: u64,
    max: Ns,
}

impl Latencies {
    pub fn record(&mut self, ns: Ns) {
        self.count += 1;
        self.max = self.max.max(ns);
        if let Some(h) = &mut self.hist {
            h.record(ns)
                .expect("an auto-resizing histogram records any u64");
        } else if self.exact.len() < EXACT {
            self.exact.push(ns);
        } else {
            let mut h = Histogram::new(SIGFIG).expect("3 significant digits are valid");
            for &v in self.exact.iter().chain([&ns]) {
                h.record(v)
                    .expect("an auto-resizing histogram records any u64");
            }
            self.exact = Vec::new();
            self.hist = Some(h);
        }
    }

    /// Wakeups recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The largest latency, exact.
    pub fn max(&self) -> Ns {
        self.max
    }

    /// The `p` quantile (0..=1): the value of rank round((n − 1)·p) among the n sorted
    /// latencies; from the histogram once there are more than `EXACT`, within its precision.
    pub fn percentile(&self, p: f64) -> Ns {
        if let Some(h) = &self.hist {
            return h.value_at_quantile(p).min(self.max);
        }
        if self.exact.is_empty() {
            return 0;
        }
        let mut sorted = self.exact.clone();
        let rank = ((sorted.len() - 1) as f64 * p).round() as usize;
        *sorted.select_nth_unstable(rank).1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_ranks_then_the_histogram_within_its_precision() {
        let mut l = Latencies::default();
        assert_eq!((l.percentile(0.5), l.max(), l.count()), (0, 0, 0));
        // 1..=1001 µs: the median has rank round(1000 × 0.5) = 500, value 501 µs; p99 rank
        // round(1000 × 0.99) = 990, value 991 µs.
        for us in (1..=1001).rev() {
            l.record(us * 1000);
        }
        assert_eq!((l.percentile(0.5), l.percentile(0.99)), (501_000, 991_000));
        // 8192 values 1..=8192 µs: past EXACT, in the histogram. The median is near 4096 µs
        // and p99 near 8110 µs, each within 0.1 %; the max stays exact.
        let mut l = Latencies::default();
        for us in 1..=8192u64 {
            l.record(us * 1000);
        }
        assert!(l.hist.is_some() && l.exact.is_empty());
        let near = |got: Ns, want: f64| (got as f64 - want).abs() <= want * 1e-3 + 1000.0;
        assert!(
            near(l.percentile(0.5), 4_096_000.0),
            "{}",
            l.percentile(0.5)
        );
        assert!(
            near(l.percentile(0.99), 8_110_000.0),
            "{}",
            l.percentile(0.99)
        );
        assert_eq!((l.max(), l.count()), (8_192_000, 8192));
    }
}
