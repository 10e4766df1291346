//! The capacity a CPU has left for fair tasks (`update_cpu_capacity`), refreshed when the
//! periodic load balance visits the CPU's lowest domain. Simplified: only that visit is
//! modelled (no task moves), at the interval a balanced busy domain settles to.

use crate::sched::features::Features;
use crate::sched::rq::Rq;
use crate::time::Ns;

/// A CPU's periodic balance of its lowest domain, as far as schedlab models it.
#[derive(Debug, Clone, Copy)]
pub struct PeriodicBalance {
    /// The busy balance interval of the domain (None: the CPU has no domain).
    pub interval: Option<Ns>,
    /// When the domain is next balanced (`sd->last_balance` + interval).
    pub next: Ns,
}

impl PeriodicBalance {
    /// The balance of a CPU whose lowest domain spans `weight` CPUs.
    pub fn new(weight: Option<usize>, feat: &Features) -> PeriodicBalance {
        PeriodicBalance {
            interval: weight
                .map(|w| busy_balance_interval(w as u64, feat.hz as u64) * feat.tick_ns()),
            next: 0,
        }
    }

    /// Is the domain due at `now`? Then its next balance is one interval away.
    pub fn due(&mut self, now: Ns) -> bool {
        match self.interval {
            Some(i) if now >= self.next => {
                self.next = now + i;
                true
            }
            _ => false,
        }
    }
}

/// `scale_rt_capacity`: the CPU's capacity less what RT and deadline tasks used by their PELT
/// signals, at least 1. schedlab has no IRQ time and no thermal pressure.
pub fn scale_rt_capacity(rq: &Rq) -> u64 {
    let used = rq.avg_rt.util_avg + rq.avg_dl.util_avg;
    rq.capacity.saturating_sub(used).max(1)
}

/// `get_sd_balance_interval` of a busy CPU's lowest domain, in jiffies: the domain's
/// interval backed off to its maximum, 2·`sd_weight` ms (a balanced domain doubles it up
/// to there), times busy_factor 16, less a jiffy. That stays below
/// `max_load_balance_interval`, HZ·#CPUs/10, as the domain spans at most #CPUs.
pub fn busy_balance_interval(sd_weight: u64, hz: u64) -> u64 {
    let ms = 2 * sd_weight * 16;
    (ms * hz).div_ceil(1000) - 1 // msecs_to_jiffies
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busy_interval_is_32_ms_per_cpu_of_the_domain_less_a_jiffy() {
        // HZ=250: 2 CPUs, 64 ms = 16 jiffies; 4 CPUs, 128 ms = 32; 16 CPUs, 512 ms = 128.
        assert_eq!(busy_balance_interval(2, 250), 15);
        assert_eq!(busy_balance_interval(4, 250), 31);
        assert_eq!(busy_balance_interval(16, 250), 127);
        // HZ=100: 64 ms is 6.4 jiffies, rounded up to 7; HZ=300: 128 ms is 38.4, so 39.
        assert_eq!(busy_balance_interval(2, 100), 6);
        assert_eq!(busy_balance_interval(4, 300), 38);
    }
}
