//! The Energy Model's performance table of a frequency domain (`em_perf_state`), as
//! kernel/power/energy_model.c builds it at registration (6.12).

use crate::platform::FreqDomain;

/// `struct em_perf_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfState {
    pub khz: u32,
    /// Active power of one CPU in µW (the platform's mW × 1000).
    pub power_uw: u64,
    /// `max_cap · f / f_max`.
    pub performance: u64,
    /// `10 · power / performance`.
    pub cost: u64,
    /// `EM_PERF_STATE_INEFFICIENT`: a faster state costs no more.
    pub inefficient: bool,
}

/// The domain's EM table, ascending frequency; `None` if the platform gives no power.
pub fn perf_table(dom: &FreqDomain, max_cap: u64) -> Option<Vec<PerfState>> {
    let fmax = dom.max_khz() as u64;
    let mut table = dom
        .opps
        .iter()
        .map(|o| {
            Some(PerfState {
                khz: o.khz,
                power_uw: (o.power_mw? * 1000.0).round() as u64,
                performance: max_cap * o.khz as u64 / fmax, // em_init_performance
                cost: 0,
                inefficient: false,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    compute_costs(&mut table);
    Some(table)
}

/// `em_compute_costs`: from the top down, a state whose cost is not below every faster
/// state's is inefficient.
fn compute_costs(table: &mut [PerfState]) {
    let mut prev_cost = u64::MAX;
    for ps in table.iter_mut().rev() {
        ps.cost = ps.power_uw * 10 / ps.performance.max(1);
        ps.inefficient = ps.cost >= prev_cost;
        if !ps.inefficient {
            prev_cost = ps.cost;
        }
    }
}

/// `em_cpu_energy` (6.12): a perf domain's energy when its busiest CPU asks for `max_util`
/// (at most `allowed_cap`) and its CPUs are busy `sum_util` in all: the cost of the lowest
/// state performing `max_util`, times the busy time. Simplified: inefficient states are not
/// skipped (`EM_PERF_DOMAIN_SKIP_INEFFICIENCIES`), as schedlab's cpufreq does not skip them;
/// 6.1 computes the same energies divided by 10, rounded differently, and schedlab uses
/// 6.12's arithmetic for both.
pub fn em_cpu_energy(table: &[PerfState], max_util: u64, sum_util: u64, allowed_cap: u64) -> u64 {
    if sum_util == 0 {
        return 0;
    }
    let max_util = max_util.min(allowed_cap);
    let ps = (table.iter().find(|ps| ps.performance >= max_util)).or(table.last());
    ps.map_or(0, |ps| ps.cost * sum_util)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::load_builtin;

    #[test]
    fn hikey_costs_are_ten_power_over_performance() {
        let p = load_builtin("hikey").unwrap();
        let t = perf_table(&p.freq_domains[0], 1024).unwrap();
        // performance = 1024·f/1200000; cost = 10·P(µW)/performance, by hand.
        let perf = [177, 368, 622, 819, 1024];
        let power = [69_000, 124_000, 224_000, 367_000, 670_000];
        for (i, ps) in t.iter().enumerate() {
            assert_eq!(ps.performance, perf[i]);
            assert_eq!(ps.cost, 10 * power[i] / perf[i]);
        }
        // 3898, 3369, 3601, 4481, 6542: 208 MHz costs more than 432 MHz.
        let ineff: Vec<bool> = t.iter().map(|s| s.inefficient).collect();
        assert_eq!(ineff, [true, false, false, false, false]);
    }

    #[test]
    fn energy_is_the_cost_of_the_state_meeting_max_util_times_busy_time() {
        let p = load_builtin("hikey").unwrap();
        let t = perf_table(&p.freq_domains[0], 1024).unwrap();
        // max_util 400: the first state performing ≥ 400 is 622 (cost 10·224000/622 = 3601).
        assert_eq!(em_cpu_energy(&t, 400, 700, 1024), 3601 * 700);
        // 368 performs exactly 368; above 1024 the top state; a cap of 300 picks 368.
        assert_eq!(em_cpu_energy(&t, 368, 1, 1024), 124_000 * 10 / 368);
        assert_eq!(em_cpu_energy(&t, 2000, 1, 1024), 6542);
        assert_eq!(em_cpu_energy(&t, 1000, 1, 300), 124_000 * 10 / 368);
        assert_eq!(em_cpu_energy(&t, 1000, 0, 1024), 0);
    }

    #[test]
    fn no_power_no_table() {
        let p = crate::platform::Platform::smp(2);
        assert!(perf_table(&p.freq_domains[0], 1024).is_none());
    }
}
