//! `schedutil` (kernel/sched/cpufreq_schedutil.c, 6.12): frequency from the CPU's
//! utilization with a 1.25 headroom, at most once per rate limit.
//!
//! Simplified: no IRQ contribution, no iowait boost (no rt-app event sleeps in iowait:
//! `iorun` writes to /dev/null and returns), and
//! the change is applied at once (fast switch) instead of through the sugov kthread.

use super::tunables::{or_default, set_some, Key};
use super::{CpuSample, Governor, Hook, Policy, Relation, Tunables};
use crate::time::Ns;

/// schedutil's tunables (`sugov_tunables`; None: the kernel's default for the policy).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SugovTunables {
    pub rate_limit_us: Option<u64>,
}

/// Its `--set schedutil.*` keys.
pub const KEYS: [Key; 1] = [Key {
    name: "schedutil.rate_limit_us",
    accepts: "µs between frequency updates (default: 1.5 × transition latency, else 1000)",
    set: |t, v| set_some(&mut t.schedutil.rate_limit_us, v, 0, u32::MAX as u64),
    get: |t| or_default(&t.schedutil.rate_limit_us),
}];

pub struct Schedutil {
    rate_limit_ns: Ns,
    last_freq_update_time: Ns,
    next_freq: u32,
    cached_raw_freq: u32,
    need_freq_update: bool,
    /// `limits_changed`: the next update comes at once and recomputes the frequency.
    limits_changed: bool,
    /// Per CPU of the policy (by position): `saved_idle_calls`.
    saved_idle_calls: Vec<u64>,
}

/// `map_util_perf`: util + util/4.
fn map_util_perf(util: u64) -> u64 {
    util + (util >> 2)
}

/// `sugov_get_util`: `effective_cpu_util` (cfs + rt + dl utilization; min from the deadline
/// bandwidth and uclamp, max from uclamp) → `sugov_effective_cpu_perf`: the headroom,
/// capped by max unless min asks for more.
pub fn cpu_perf(s: &CpuSample) -> u64 {
    if s.rt_max {
        return s.capacity;
    }
    let util = (s.util_boost + s.util_rt + s.util_dl).min(s.capacity);
    let (min, max) = (s.uclamp_min.max(s.dl_bw), s.capacity.min(s.uclamp_max));
    map_util_perf(util).min(max).max(min)
}

impl Schedutil {
    pub fn new(tun: &Tunables, pol: &Policy) -> Schedutil {
        Schedutil {
            rate_limit_ns: (tun.schedutil.rate_limit_us).unwrap_or(pol.transition_delay_us())
                * 1000,
            last_freq_update_time: 0,
            next_freq: 0,
            cached_raw_freq: 0,
            need_freq_update: false,
            limits_changed: false,
            saved_idle_calls: vec![0; pol.cpus.len()],
        }
    }

    /// `sugov_should_update_freq`.
    fn should_update_freq(&mut self, now: Ns) -> bool {
        if std::mem::take(&mut self.limits_changed) {
            self.need_freq_update = true;
            return true;
        }
        now - self.last_freq_update_time >= self.rate_limit_ns
    }

    /// `get_next_freq`: `max_freq · util / max_cap`, the lowest OPP at or above it.
    fn get_next_freq(&mut self, pol: &Policy, util: u64, max_cap: u64) -> u32 {
        let freq = (pol.freqs[pol.freqs.len() - 1] as u64 * util / max_cap) as u32;
        if freq == self.cached_raw_freq && !self.need_freq_update {
            return self.next_freq;
        }
        self.cached_raw_freq = freq;
        pol.resolve(freq, Relation::L)
    }

    /// `sugov_hold_freq`: the CPU has not been idle since the last update (and it is not
    /// capped by uclamp_max, which must be complied with at once).
    fn hold_freq(&mut self, pos: usize, s: &CpuSample) -> bool {
        if s.uclamp_capped {
            return false;
        }
        let held = s.idle_calls == self.saved_idle_calls[pos];
        self.saved_idle_calls[pos] = s.idle_calls;
        held
    }

    /// `sugov_update_next_freq`.
    fn update_next_freq(&mut self, now: Ns, next: u32) -> bool {
        if self.need_freq_update {
            self.need_freq_update = false;
        } else if self.next_freq == next {
            return false;
        }
        self.next_freq = next;
        self.last_freq_update_time = now;
        true
    }
}

impl Governor for Schedutil {
    fn update_util_hook(&self) -> bool {
        true
    }

    /// `sugov_limits` with fast switching: nothing now; the next update recomputes.
    fn limits(&mut self, _pol: &Policy) -> Option<u32> {
        self.limits_changed = true;
        None
    }

    /// `sugov_update_single_freq` or `sugov_update_shared`.
    fn update(
        &mut self,
        pol: &Policy,
        cpu: usize,
        hook: Hook,
        now: Ns,
        sample: &dyn Fn(usize) -> CpuSample,
    ) -> Option<u32> {
        if hook != Hook::UtilChange || !self.should_update_freq(now) {
            return None;
        }
        let next = if pol.cpus.len() == 1 {
            let (s, cached) = (sample(cpu), self.cached_raw_freq);
            let mut next = self.get_next_freq(pol, cpu_perf(&s), s.capacity);
            if self.hold_freq(0, &s) && next < self.next_freq && !self.need_freq_update {
                next = self.next_freq;
                self.cached_raw_freq = cached;
            }
            next
        } else {
            // sugov_next_freq_shared: each CPU's utilization once, the max capacity the
            // updating CPU's.
            let (util, max_cap) = pol.cpus.iter().fold((0, 0), |(util, cap), &j| {
                let s = sample(j);
                (
                    util.max(cpu_perf(&s)),
                    if j == cpu { s.capacity } else { cap },
                )
            });
            self.get_next_freq(pol, util, max_cap)
        };
        self.update_next_freq(now, next).then_some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::hikey;
    use super::*;

    fn sample(util: u64, idle_calls: u64) -> CpuSample {
        CpuSample {
            util_boost: util,
            capacity: 1024,
            idle_calls,
            ..Default::default()
        }
    }

    #[test]
    fn frequency_is_the_lowest_opp_above_one_and_a_quarter_util() {
        let pol = hikey(1);
        let mut g = Schedutil::new(&Tunables::default(), &pol);
        // util 300: 1.25 × 300 = 375; 1200000 × 375 / 1024 = 439453 → 729 MHz.
        assert_eq!(
            g.update(&pol, 0, Hook::UtilChange, 1_000_000, &|_| sample(300, 1)),
            Some(729_000)
        );
        // Within the 750 µs rate limit nothing changes.
        assert_eq!(
            g.update(&pol, 0, Hook::UtilChange, 1_500_000, &|_| sample(900, 2)),
            None
        );
        // util 819 → 1023 → 1198828 kHz → 1.2 GHz; util 820 → 1025 capped at 1024 → 1.2 GHz.
        assert_eq!(
            g.update(&pol, 0, Hook::UtilChange, 2_000_000, &|_| sample(819, 3)),
            Some(1_200_000)
        );
        // Lower util while the CPU never went idle: hold the frequency.
        assert_eq!(
            g.update(&pol, 0, Hook::UtilChange, 3_000_000, &|_| sample(100, 3)),
            None
        );
        // After an idle period it may drop: 125 → 146484 kHz → 208 MHz.
        assert_eq!(
            g.update(&pol, 0, Hook::UtilChange, 4_000_000, &|_| sample(100, 4)),
            Some(208_000)
        );
        // Other hooks are not schedutil's.
        assert_eq!(
            g.update(&pol, 0, Hook::Tick, 9_000_000, &|_| sample(1000, 9)),
            None
        );
    }

    #[test]
    fn a_shared_policy_follows_its_busiest_cpu() {
        let pol = hikey(4);
        let mut g = Schedutil::new(&Tunables::default(), &pol);
        let utils = [10, 500, 40, 0];
        // 1.25 × 500 = 625 → 732421 kHz → 960 MHz, whichever CPU asks.
        let asked = std::cell::RefCell::new(Vec::new());
        let f = g.update(&pol, 3, Hook::UtilChange, 1_000_000, &|j| {
            asked.borrow_mut().push(j);
            sample(utils[j], 0)
        });
        assert_eq!(f, Some(960_000));
        // sugov_next_freq_shared reads each CPU of the policy once.
        assert_eq!(*asked.borrow(), [0, 1, 2, 3]);
    }

    #[test]
    fn uclamp_bounds_the_performance_request() {
        let clamped = |util, min, max| {
            cpu_perf(&CpuSample {
                util_boost: util,
                uclamp_min: min,
                uclamp_max: max,
                ..Default::default()
            })
        };
        // util 100 → 125, raised to util_min 600.
        assert_eq!(clamped(100, 600, 1024), 600);
        // util 800 → 1000, capped at util_max 512; util_min wins over util_max.
        assert_eq!(clamped(800, 0, 512), 512);
        assert_eq!(clamped(800, 700, 512), 700);
        // Unclamped: 1.25 × util, at most the capacity.
        assert_eq!((clamped(400, 0, 1024), clamped(900, 0, 1024)), (500, 1024));
    }

    #[test]
    fn new_limits_bring_the_next_update_at_once() {
        // util 300 → 729 MHz at 1 ms (above). The cap lowers max to 432 MHz: sugov_limits
        // sets nothing itself (fast switch); the next update, 0.1 ms later and so within the
        // 750 µs rate limit, with the same util (the same raw frequency, cached), still
        // recomputes: 432 MHz, the highest the new limits allow.
        let mut pol = hikey(1);
        let mut g = Schedutil::new(&Tunables::default(), &pol);
        let at = |g: &mut Schedutil, pol: &Policy, ns| {
            g.update(pol, 0, Hook::UtilChange, ns, &|_| sample(300, 1))
        };
        assert_eq!(at(&mut g, &pol, 1_000_000), Some(729_000));
        pol.cur = 729_000;
        pol.max = 432_000;
        assert_eq!(g.limits(&pol), None);
        assert_eq!(at(&mut g, &pol, 1_100_000), Some(432_000));
        assert_eq!(at(&mut g, &pol, 1_200_000), None, "the rate limit again");
    }
}
