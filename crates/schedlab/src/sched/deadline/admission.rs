//! Admission control per root domain (`struct dl_bw`, `__dl_overflow`, `__dl_add`,
//! `__dl_sub`): Σu ≤ rt_runtime/rt_period · Σ capacity/1024. schedlab has one root domain,
//! every CPU of the platform.

use super::to_ratio;
use crate::sched::pelt::cap_scale;

#[derive(Debug, Clone)]
pub struct DlBw {
    /// `dl_b->bw`: None is −1 (sched_rt_runtime_us = −1, no admission test).
    pub bw: Option<u64>,
    pub total_bw: u64,
    /// `dl_bw_capacity`: Σ arch_scale_cpu_capacity.
    pub cap: u64,
    /// `dl_bw_cpus`.
    pub cpus: i32,
}

impl DlBw {
    /// `init_dl_bw`; `rt` is (rt_period, rt_runtime) µs, None for RUNTIME_INF.
    pub fn new(rt: Option<(u64, u64)>, capacities: impl Iterator<Item = u64>) -> DlBw {
        let (mut cap, mut cpus) = (0, 0);
        for c in capacities {
            cap += c;
            cpus += 1;
        }
        DlBw {
            bw: rt.map(|(period, runtime)| to_ratio(period, runtime)),
            total_bw: 0,
            cap,
            cpus,
        }
    }

    /// `__dl_overflow(dl_b, cap, old_bw, new_bw)`.
    pub fn overflow(&self, old_bw: u64, new_bw: u64) -> bool {
        self.bw
            .is_some_and(|bw| cap_scale(bw, self.cap) < self.total_bw - old_bw + new_bw)
    }

    /// `__dl_add`: the change every CPU's extra_bw takes (`__dl_update`).
    pub fn add(&mut self, bw: u64) -> i64 {
        self.total_bw += bw;
        -((bw as i32 / self.cpus) as i64)
    }

    /// `__dl_sub`.
    pub fn sub(&mut self, bw: u64) -> i64 {
        self.total_bw -= bw;
        (bw as i32 / self.cpus) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_exactly_up_to_the_limit() {
        // Two CPUs at 95%: cap_scale(996147, 2048) = 1992294.
        let mut b = DlBw::new(Some((1_000_000, 950_000)), [1024, 1024].into_iter());
        assert_eq!(b.bw, Some(996_147));
        let u = to_ratio(10_000_000, 9_000_000); // 0.9
        assert!(!b.overflow(0, u));
        assert_eq!(b.add(u), -((u / 2) as i64));
        let rest = 1_992_294 - u;
        assert!(!b.overflow(0, rest), "exactly at the limit is admitted");
        assert!(b.overflow(0, rest + 1), "one unit above is refused");
        b.sub(u);
        assert_eq!(b.total_bw, 0);
        let unlimited = DlBw::new(None, [1024].into_iter());
        assert!(!unlimited.overflow(0, 10 << 20));
    }
}
