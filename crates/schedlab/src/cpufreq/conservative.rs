//! `conservative` (cpufreq_conservative.c, 6.12): one `freq_step` up when the load is
//! above `up_threshold`, one down when it is below `down_threshold` (every
//! `sampling_down_factor`-th sample), and the steps slept through taken down at once.

use super::dbs::{Dbs, DbsGovernor};
use super::tunables::{in_range, or_default, sampling_rate_us, set_in, set_some, Key};
use super::{Policy, Relation, Tunables};

/// conservative's tunables (`cs_dbs_tuners` and its `dbs_data`).
#[derive(Debug, Clone, PartialEq)]
pub struct CsTuners {
    pub up_threshold: u32,
    pub down_threshold: u32,
    pub freq_step: u32,
    pub sampling_rate_us: Option<u64>,
    pub sampling_down_factor: u32,
    /// The steps slept through taken down at once (Chen Yu's "Decrease frequency faster
    /// for deferred updates", 2018); seed 003's 2015 kernel took one step per sample.
    pub idle_fast_down: bool,
}

impl Default for CsTuners {
    fn default() -> CsTuners {
        CsTuners {
            up_threshold: 80,
            down_threshold: 20,
            freq_step: 5,
            sampling_rate_us: None,
            sampling_down_factor: 1,
            idle_fast_down: true,
        }
    }
}

/// Its `--set conservative.*` keys.
pub const KEYS: [Key; 6] = [
    Key {
        name: "conservative.up_threshold",
        accepts: "down_threshold+1..100 (default 80)",
        set: |t, v| {
            let lo = t.conservative.down_threshold as u64 + 1;
            set_in(&mut t.conservative.up_threshold, v, lo, 100)
        },
        get: |t| t.conservative.up_threshold.to_string(),
    },
    Key {
        name: "conservative.down_threshold",
        accepts: "1..up_threshold-1 (default 20)",
        set: |t, v| {
            let hi = t.conservative.up_threshold as u64 - 1;
            set_in(&mut t.conservative.down_threshold, v, 1, hi)
        },
        get: |t| t.conservative.down_threshold.to_string(),
    },
    Key {
        name: "conservative.freq_step",
        accepts: "0..100, % of the policy's max (default 5)",
        set: |t, v| set_in(&mut t.conservative.freq_step, v, 0, 100),
        get: |t| t.conservative.freq_step.to_string(),
    },
    Key {
        name: "conservative.sampling_rate_us",
        accepts: "≥ 2 ticks in µs (default: max(2 ticks, transition delay))",
        set: |t, v| set_some(&mut t.conservative.sampling_rate_us, v, 0, u64::MAX),
        get: |t| or_default(&t.conservative.sampling_rate_us),
    },
    Key {
        name: "conservative.sampling_down_factor",
        accepts: "1..10 (default 1)",
        set: |t, v| set_in(&mut t.conservative.sampling_down_factor, v, 1, 10),
        get: |t| t.conservative.sampling_down_factor.to_string(),
    },
    Key {
        name: "conservative.idle_fast_down",
        accepts: "1, or 0 for kernels before the deferred-update fast down (2018), as seed 003's (default 1)",
        set: |t, v| {
            let on = in_range::<u8>(v, 0, 1).map(|b| b == 1);
            on.map(|on| t.conservative.idle_fast_down = on).is_some()
        },
        get: |t| u32::from(t.conservative.idle_fast_down).to_string(),
    },
];

pub struct Conservative {
    dbs: Dbs,
    up_threshold: u32,
    down_threshold: u32,
    freq_step: u32,
    sampling_down_factor: u32,
    /// The steps slept through taken down at once (Chen Yu's "Decrease frequency faster
    /// for deferred updates", 2018); seed 003's 2015 kernel took one step per sample.
    idle_fast_down: bool,
    requested_freq: u32,
    down_skip: u32,
}

impl Conservative {
    pub fn new(tun: &Tunables, pol: &Policy) -> Result<Conservative, String> {
        Ok(Conservative {
            dbs: Dbs::new(
                sampling_rate_us(tun.conservative.sampling_rate_us, pol, "conservative")?,
                pol,
            ),
            up_threshold: tun.conservative.up_threshold,
            down_threshold: tun.conservative.down_threshold,
            freq_step: tun.conservative.freq_step,
            sampling_down_factor: tun.conservative.sampling_down_factor,
            idle_fast_down: tun.conservative.idle_fast_down,
            requested_freq: pol.cur,
            down_skip: 0,
        })
    }

    /// `get_freq_step`: `freq_step` % of the policy's max, 5 kHz if that rounds to 0.
    fn step(&self, pol: &Policy) -> u32 {
        match (self.freq_step as u64 * pol.max as u64 / 100) as u32 {
            0 => 5,
            s => s,
        }
    }

    /// `cs_dbs_update` after `dbs_update` measured `load`.
    fn cs_update(&mut self, pol: &Policy, load: u32) -> Option<u32> {
        if self.freq_step == 0 {
            return None;
        }
        let mut req = self.requested_freq;
        if req > pol.max || req < pol.min {
            req = pol.cur;
            self.requested_freq = req;
        }
        let step = self.step(pol);
        if self.idle_fast_down && self.dbs.max_sample_load < self.down_threshold {
            if let Some(periods) = self.dbs.idle_periods.take() {
                let steps = (periods * step as u64).min(u32::MAX as u64) as u32;
                req = if req > pol.min.saturating_add(steps) {
                    req - steps
                } else {
                    pol.min
                };
            }
        }
        if load > self.up_threshold {
            self.down_skip = 0;
            req = (req + step).min(pol.max);
            self.requested_freq = req;
            return pol.target(req, Relation::H);
        }
        self.down_skip += 1;
        if self.down_skip < self.sampling_down_factor {
            return None; // the idle-period steps are dropped too, as in the kernel
        }
        self.down_skip = 0;
        if load < self.down_threshold {
            req = if req > pol.min + step {
                req - step
            } else {
                pol.min
            };
            self.requested_freq = req;
            return pol.target(req, Relation::L);
        }
        None
    }
}

impl DbsGovernor for Conservative {
    fn dbs(&mut self) -> &mut Dbs {
        &mut self.dbs
    }

    fn gov_dbs_update(&mut self, pol: &Policy, load: u32) -> Option<u32> {
        self.cs_update(pol, load)
    }

    fn gov_start(&mut self, pol: &Policy) {
        self.requested_freq = pol.cur;
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::hikey;
    use super::*;

    #[test]
    fn steps_of_five_percent_of_max_resolved_to_the_table() {
        let mut pol = hikey(1);
        pol.cur = 208_000;
        let mut g = Conservative::new(&Tunables::default(), &pol).unwrap();
        // Step = 5 % of 1.2 GHz = 60 MHz. 268 MHz resolves (highest at or below) to 208.
        assert_eq!(g.cs_update(&pol, 90), None);
        assert_eq!(g.requested_freq, 268_000);
        g.cs_update(&pol, 90);
        g.cs_update(&pol, 90);
        // 448 MHz: 432 MHz.
        assert_eq!(g.cs_update(&pol, 90), Some(432_000));
        pol.cur = 432_000;
        // 50 % load: between the thresholds, nothing.
        assert_eq!(g.cs_update(&pol, 50), None);
        // 10 %: 388 MHz, lowest at or above → 432 (unchanged).
        assert_eq!(g.cs_update(&pol, 10), None);
        assert_eq!(g.requested_freq, 388_000);
    }

    #[test]
    fn slept_through_periods_step_down_at_once_unless_2015_rule() {
        let pol = hikey(1); // at 1.2 GHz
                            // Five sampling periods slept through, then a 0 % sample. 6.12: five 60 MHz steps for
                            // the sleep and one for the sample, 1200 − 6·60 = 840 MHz; 2015: the one, 1140 MHz.
        for (fast, req) in [(true, 840_000), (false, 1_140_000)] {
            let mut tun = Tunables::default();
            tun.conservative.idle_fast_down = fast;
            let mut g = Conservative::new(&tun, &pol).unwrap();
            g.dbs.idle_periods = Some(5);
            g.dbs.max_sample_load = 0;
            g.cs_update(&pol, 0);
            assert_eq!(g.requested_freq, req, "fast down {fast}");
        }
    }
}
