//! `sched-dvfs-2015`: Michael Turquette's scheduler-driven frequency selection, v3 (LKML,
//! 27 June 2015, "[PATCH v3 0/4] scheduler-driven cpu frequency selection"), the "sched"
//! column of seed 003.
//!
//! Implemented from the series: the governor (`cpufreq_sched.c`) keeps one capacity request
//! per CPU and sets the policy to the lowest frequency at or above `max request · max_freq /
//! capacity_orig`, only when the asking CPU holds the policy's largest request, and drops
//! every request for `throttle_nsec` after a change (the transition latency, else 50 ms).
//! The policy (patch 4/4, RFC, fair.c) requests `usage · capacity_margin / 1024`
//! (`capacity_margin` = 1280) when a task is enqueued on wakeup and when one is dequeued to
//! sleep with others left (the request is reset to 0, without a frequency change, when the
//! last one leaves); at the tick it asks for `capacity_orig` as soon as usage crosses
//! `capacity_curr · 1024 / 1280`. `usage` is `get_cpu_usage`: the root cfs_rq's util_avg
//! capped at capacity_orig (2015's PELT had no util_est).

use super::tunables::{or_default, set_some, Key};
use super::{CpuSample, Governor, Hook, Policy, Relation};
use crate::time::Ns;

/// The 2015 prototype's tunable: how long after a change requests are dropped (None: the
/// transition latency).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SchedDvfsTunables {
    pub throttle_us: Option<u64>,
}

/// Its `--set sched_dvfs.*` key.
pub const KEYS: [Key; 1] = [Key {
    name: "sched_dvfs.throttle_us",
    accepts: "µs after a change during which requests are dropped (default: the transition latency, else 50000)",
    set: |t, v| set_some(&mut t.sched_dvfs.throttle_us, v, 0, u64::MAX),
    get: |t| or_default(&t.sched_dvfs.throttle_us),
}];

/// EAS's `capacity_margin`: requests carry a ~20 % headroom.
const CAPACITY_MARGIN: u64 = 1280;
/// `THROTTLE_NSEC`, when the driver gives no transition latency.
const THROTTLE_NSEC: Ns = 50_000_000;

pub struct SchedDvfs {
    /// Per CPU of the policy (by position): `pcpu_capacity`.
    requests: Vec<u64>,
    throttle_nsec: Ns,
    throttle: Ns,
}

impl SchedDvfs {
    pub fn new(pol: &Policy, throttle_us: Option<u64>) -> SchedDvfs {
        let latency = match pol.transition_latency {
            0 => THROTTLE_NSEC,
            l => l,
        };
        SchedDvfs {
            requests: vec![0; pol.cpus.len()],
            throttle_nsec: throttle_us.map_or(latency, |us| us * 1000),
            throttle: 0,
        }
    }

    /// `cpufreq_sched_set_cap`.
    fn set_cap(
        &mut self,
        pol: &Policy,
        pos: usize,
        capacity_orig: u64,
        cap: u64,
        now: Ns,
    ) -> Option<u32> {
        self.requests[pos] = cap;
        if now < self.throttle {
            return None;
        }
        if self.requests.iter().any(|&r| r > cap) {
            return None;
        }
        let freq_new = (cap * pol.max as u64 / capacity_orig) as u32;
        if freq_new == pol.cur {
            return None;
        }
        // cpufreq_sched_try_driver_target: the throttle starts with every attempt.
        self.throttle = now + self.throttle_nsec;
        pol.target(freq_new, Relation::L)
    }
}

/// `get_cpu_usage`.
fn usage(s: &CpuSample) -> u64 {
    s.util_avg.min(s.capacity)
}

impl Governor for SchedDvfs {
    fn update_util_hook(&self) -> bool {
        true
    }

    fn update(
        &mut self,
        pol: &Policy,
        cpu: usize,
        hook: Hook,
        now: Ns,
        sample: &dyn Fn(usize) -> CpuSample,
    ) -> Option<u32> {
        let pos = pol.cpus.iter().position(|&c| c == cpu)?;
        let s = sample(cpu);
        let req = (usage(&s) * CAPACITY_MARGIN) >> 10;
        match hook {
            Hook::Wakeup => self.set_cap(pol, pos, s.capacity, req, now),
            Hook::Sleep if s.nr_running > 0 => self.set_cap(pol, pos, s.capacity, req, now),
            Hook::Sleep => {
                self.requests[pos] = 0; // cpufreq_sched_reset_cap
                None
            }
            Hook::Tick => {
                let curr = s.capacity * pol.cur as u64 / pol.max as u64; // capacity_curr_of
                (curr < s.capacity && curr * 1024 < usage(&s) * CAPACITY_MARGIN)
                    .then(|| self.set_cap(pol, pos, s.capacity, s.capacity, now))
                    .flatten()
            }
            Hook::UtilChange => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::hikey;
    use super::*;

    fn sample(util: u64, nr: u32) -> CpuSample {
        CpuSample {
            util_avg: util,
            capacity: 1024,
            nr_running: nr,
            ..Default::default()
        }
    }

    #[test]
    fn requests_carry_the_margin_and_the_tick_jumps_to_max() {
        let mut pol = hikey(1);
        let mut g = SchedDvfs::new(&pol, None);
        assert_eq!(g.throttle_nsec, 500_000);
        // Wakeup with usage 100: request 125 → 125 × 1200000 / 1024 = 146484 → 208 MHz.
        assert_eq!(
            g.update(&pol, 0, Hook::Wakeup, 0, &|_| sample(100, 1)),
            Some(208_000)
        );
        pol.cur = 208_000;
        // capacity_curr = 1024 × 208 / 1200 = 177; usage 141: 141 × 1280 = 180480 <
        // 177 × 1024 = 181248, no jump; usage 142: 181760 > 181248, jump to the max.
        assert_eq!(
            g.update(&pol, 0, Hook::Tick, 1_000_000, &|_| sample(141, 1)),
            None
        );
        assert_eq!(
            g.update(&pol, 0, Hook::Tick, 2_000_000, &|_| sample(142, 1)),
            Some(1_200_000)
        );
        pol.cur = 1_200_000;
        // Throttled for 500 µs after the change.
        assert_eq!(
            g.update(&pol, 0, Hook::Wakeup, 2_400_000, &|_| sample(10, 1)),
            None
        );
        // The last task sleeping resets the request without a change.
        assert_eq!(
            g.update(&pol, 0, Hook::Sleep, 3_000_000, &|_| sample(10, 0)),
            None
        );
        assert_eq!(g.requests[0], 0);
    }

    #[test]
    fn only_the_largest_request_of_the_policy_moves_it() {
        let pol = hikey(2);
        let mut g = SchedDvfs::new(&pol, Some(0));
        assert_eq!(
            g.update(&pol, 0, Hook::Wakeup, 0, &|_| sample(800, 1)),
            None
        ); // 1000 → 1171875 → 1.2 GHz = cur
        assert_eq!(
            g.update(&pol, 1, Hook::Wakeup, 1, &|_| sample(100, 1)),
            None
        ); // 125 < 1000
    }
}
