//! The root domain's performance domains (`build_perf_domains`, topology.c, 6.12): the
//! frequency domains with their Energy Model tables, when energy-aware scheduling can work.

use super::Topology;
use crate::cpufreq::GovName;
use crate::energy::em::{perf_table, PerfState};
use crate::platform::Platform;
use crate::sched::features::Features;

/// `struct perf_domain`: CPUs that change frequency together, and their EM table.
#[derive(Debug, Clone)]
pub struct PerfDomain {
    pub cpus: Vec<usize>,
    pub table: Vec<PerfState>,
}

/// `build_perf_domains`: none unless `sched_energy_aware` is on and `sched_is_eas_possible`
/// (asymmetric capacities, no SMT, schedutil on every policy; schedlab's load tracking is
/// always frequency invariant) and every CPU has an EM. The kernel pushes each new domain on
/// the front of its list, so the last frequency domain comes first.
pub fn build_perf_domains(plat: &Platform, feat: &Features, topo: &Topology) -> Vec<PerfDomain> {
    let asym = topo.cache.iter().any(|c| c.asym_cpucapacity.is_some());
    let schedutil =
        (plat.freq_domains.iter()).all(|d| feat.cpufreq.governor_of(&d.name) == GovName::Schedutil);
    if !feat.energy_aware || !asym || topo.smt_active || !schedutil {
        return Vec::new();
    }
    let pds = plat.freq_domains.iter().rev().map(|d| {
        let cap = plat.cpus[d.cpus[0]].capacity_orig as u64;
        Some(PerfDomain {
            cpus: d.cpus.clone(),
            table: perf_table(d, cap)?,
        })
    });
    pds.collect::<Option<Vec<_>>>().unwrap_or_default()
}
