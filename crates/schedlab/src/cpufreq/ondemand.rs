//! `ondemand` (cpufreq_ondemand.c, 6.12): above `up_threshold` % load, the highest
//! frequency; below it, a frequency proportional to the load.
//!
//! Simplified: `powersave_bias` stays 0 (no sub-sampling between two OPPs).

use super::dbs::{Dbs, DbsGovernor};
use super::tunables::{or_default, sampling_rate_us, set_in, set_some, Key};
use super::{Policy, Relation, Tunables};

/// ondemand's tunables (`od_dbs_tuners` and its `dbs_data`).
#[derive(Debug, Clone, PartialEq)]
pub struct OdTuners {
    pub up_threshold: u32,
    pub sampling_rate_us: Option<u64>,
    pub sampling_down_factor: u32,
}

impl Default for OdTuners {
    fn default() -> OdTuners {
        OdTuners {
            // MICRO_FREQUENCY_UP_THRESHOLD: NO_HZ idle accounting is available.
            up_threshold: 95,
            sampling_rate_us: None,
            sampling_down_factor: 1,
        }
    }
}

/// Its `--set ondemand.*` keys.
pub const KEYS: [Key; 3] = [
    Key {
        name: "ondemand.up_threshold",
        accepts: "1..100 (default 95)",
        set: |t, v| set_in(&mut t.ondemand.up_threshold, v, 1, 100),
        get: |t| t.ondemand.up_threshold.to_string(),
    },
    Key {
        name: "ondemand.sampling_rate_us",
        accepts: "≥ 2 ticks in µs (default: max(2 ticks, transition delay))",
        set: |t, v| set_some(&mut t.ondemand.sampling_rate_us, v, 0, u64::MAX),
        get: |t| or_default(&t.ondemand.sampling_rate_us),
    },
    Key {
        name: "ondemand.sampling_down_factor",
        accepts: "1..100000 (default 1)",
        set: |t, v| set_in(&mut t.ondemand.sampling_down_factor, v, 1, 100_000),
        get: |t| t.ondemand.sampling_down_factor.to_string(),
    },
];

pub struct Ondemand {
    dbs: Dbs,
    up_threshold: u32,
    sampling_down_factor: u64,
}

impl Ondemand {
    pub fn new(tun: &Tunables, pol: &Policy) -> Result<Ondemand, String> {
        Ok(Ondemand {
            dbs: Dbs::new(
                sampling_rate_us(tun.ondemand.sampling_rate_us, pol, "ondemand")?,
                pol,
            ),
            up_threshold: tun.ondemand.up_threshold,
            sampling_down_factor: tun.ondemand.sampling_down_factor as u64,
        })
    }

    /// `od_update` for a measured `load` (%).
    fn od_update(&mut self, pol: &Policy, load: u32) -> Option<u32> {
        if load > self.up_threshold {
            if pol.cur < pol.max {
                self.dbs.rate_mult = self.sampling_down_factor;
            }
            return pol.target(pol.max, Relation::H); // dbs_freq_increase
        }
        let (min_f, max_f) = (pol.freqs[0], pol.freqs[pol.freqs.len() - 1]);
        let next = min_f + load * (max_f - min_f) / 100;
        self.dbs.rate_mult = 1;
        pol.target(next, Relation::C)
    }
}

impl DbsGovernor for Ondemand {
    fn dbs(&mut self) -> &mut Dbs {
        &mut self.dbs
    }

    fn gov_dbs_update(&mut self, pol: &Policy, load: u32) -> Option<u32> {
        self.od_update(pol, load)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::hikey;
    use super::super::{CpuSample, Governor, Hook};
    use super::*;

    #[test]
    fn load_maps_linearly_below_the_threshold_and_to_max_above() {
        let mut pol = hikey(1);
        let mut g = Ondemand::new(&Tunables::default(), &pol).unwrap();
        // max(2 ticks, 750 µs)
        assert_eq!(g.dbs.sampling_rate_us, 8000);
        // 50 %: 208000 + 50 × 992000 / 100 = 704000 → closest OPP 729 MHz.
        assert_eq!(g.od_update(&pol, 50), Some(729_000));
        pol.cur = 729_000;
        // 96 % > 95: straight to the max.
        assert_eq!(g.od_update(&pol, 96), Some(1_200_000));
        // 95 % is not above 95: 208000 + 942400 = 1150400 → 1.2 GHz, closest.
        assert_eq!(g.od_update(&pol, 95), Some(1_200_000));
        // 10 %: 307200 → 208 MHz (99200 away) rather than 432 MHz (124800).
        assert_eq!(g.od_update(&pol, 10), Some(208_000));
    }

    #[test]
    fn load_is_busy_time_over_wall_time_since_the_last_sample() {
        let pol = hikey(1);
        let mut g = Ondemand::new(&Tunables::default(), &pol).unwrap();
        let idle = std::cell::Cell::new(0u64);
        let s = |_| CpuSample {
            idle_ns: idle.get(),
            ..Default::default()
        };
        g.start(&pol, 10_000_000, &s);
        idle.set(6_000_000); // 10 ms later, 6 ms of it idle: 40 % → 604800 → 729 MHz
        assert_eq!(
            g.update(&pol, 0, Hook::UtilChange, 20_000_000, &s),
            Some(729_000)
        );
        // Not due before another 8 ms.
        assert_eq!(g.update(&pol, 0, Hook::UtilChange, 27_000_000, &s), None);
    }
}
