//! NI_RANDOM and NI_RATE ("sched/fair: Proportional newidle balance", 6.18, and 7.x): a
//! newly idle CPU balances a domain at random, about as often as balancing it there has
//! pulled a task, so that CPUs where it seldom succeeds stop paying for it.

use crate::sched::prandom::RndState;
use crate::time::Ns;

/// A domain's success record (`sd->newidle_call`, `_success`, `_ratio`, `_stamp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewidleStats {
    pub call: u32,
    pub success: u32,
    /// Out of 1024: how likely a pass is to run.
    pub ratio: u32,
    pub stamp: Ns,
}

impl Default for NewidleStats {
    /// `sd_init`'s: half the calls succeeded, so half the passes run.
    fn default() -> NewidleStats {
        NewidleStats {
            call: 512,
            success: 256,
            ratio: 512,
            stamp: 0,
        }
    }
}

impl NewidleStats {
    /// The die `sched_balance_newidle` throws: None skips the pass (counted as a failure);
    /// else the weight a success counts for, the inverse of the pass's probability.
    pub fn throw(&mut self, rng: &mut RndState, now: Ns, rate: bool) -> Option<u32> {
        if self.ratio >= 1024 {
            return Some(1);
        }
        let d1k = rng.next_u32() % 1024;
        let weight = 1 + self.ratio;
        if d1k > weight {
            self.update(0, now, rate);
            return None;
        }
        Some((1024 + weight / 2) / weight)
    }

    /// `update_newidle_stats`: every 1024 calls the ratio is the successes (weighted) since,
    /// plus under NI_RATE one per 2^22 ns (4.2 ms) those calls took, and both counts halve.
    pub fn update(&mut self, success: u32, now: Ns, rate: bool) {
        self.call += 1;
        self.success += success;
        if self.call >= 1024 {
            let delta = now.saturating_sub(std::mem::replace(&mut self.stamp, now));
            let by_rate = if rate { (delta >> 22) as u32 } else { 0 };
            self.ratio = (by_rate + self.success).min(1024);
            self.call /= 2;
            self.success /= 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// From sd_init's 512 calls and 256 successes, 511 calls of which the 256 at even i
    /// succeed (1023 calls, 512 successes), then a 1024th worth 4: the ratio is 516, and
    /// the counts halve to 512 and 258.
    #[test]
    fn the_ratio_is_the_successes_every_1024_calls() {
        let mut s = NewidleStats::default();
        for i in 0..511 {
            s.update(u32::from(i % 2 == 0), 0, false);
        }
        assert_eq!((s.call, s.success, s.ratio), (1023, 512, 512));
        s.update(4, 0, false);
        assert_eq!((s.call, s.success, s.ratio), (512, 258, 516));
    }

    /// NI_RATE adds delta >> 22: 1024 calls over 500 · 2^22 ns (2.1 s) add 500.
    #[test]
    fn ni_rate_adds_the_time_the_calls_took() {
        let mut s = NewidleStats {
            call: 1023,
            success: 10,
            ratio: 0,
            stamp: 0,
        };
        s.update(0, 500 << 22, true);
        assert_eq!(s.ratio, 500 + 10);
    }

    /// At ratio 1024 every pass runs and a success counts once; at ratio 63 a pass runs when
    /// the die shows at most 64, and a success counts (1024 + 32) / 64 = 16.
    #[test]
    fn the_die() {
        let mut rng = RndState::seeded(7);
        let mut s = NewidleStats {
            ratio: 1024,
            ..NewidleStats::default()
        };
        assert_eq!(s.throw(&mut rng, 0, false), Some(1));
        s.ratio = 63;
        let (mut ran, n) = (0, 10_000);
        for _ in 0..n {
            if let Some(w) = s.throw(&mut rng, 0, false) {
                assert_eq!(w, 16);
                ran += 1;
            }
            s.ratio = 63; // keep it there: the skips count as calls
        }
        // P(d1k <= 64) = 65/1024 ≈ 6.3%: within 1.5 points over 10,000 throws.
        assert!(
            (ran as f64 / n as f64 - 65.0 / 1024.0).abs() < 0.015,
            "{ran}"
        );
    }
}
