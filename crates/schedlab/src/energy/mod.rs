//! Energy: power integrated over time, per CPU and per cluster, from the platform's OPP and
//! idle-state powers; and the Energy Model's cost table (`em`) for energy-aware placement.
//!
//! A busy CPU draws its OPP's active power; its cluster draws the OPP's cluster power while
//! any of its CPUs is busy. An idle CPU draws the power of the idle state the cpuidle
//! governor chose when it went idle (`sim/cpuidle.rs`); an all-idle cluster the cluster
//! power of the shallowest state its CPUs are in.

pub mod em;

use crate::platform::{IdleState, Platform};
use crate::time::Ns;

/// mW × ns in mJ.
const MJ_PER_MW_NS: f64 = 1e-9;

struct CpuMeter {
    domain: usize,
    cluster: usize,
    busy: bool,
    /// The idle state it is in while not busy.
    state: usize,
    since: Ns,
}

struct ClusterMeter {
    domain: usize,
    nr_busy: u32,
    /// The idle state it is in while all its CPUs are idle.
    state: usize,
    since: Ns,
}

/// Energy so far, in mJ.
pub struct Meter {
    cpus: Vec<CpuMeter>,
    clusters: Vec<ClusterMeter>,
    /// Per domain: the current OPP index, its OPP (cpu, cluster) powers and idle states.
    opp: Vec<usize>,
    power: Vec<Vec<(f64, f64)>>,
    idle: Vec<Vec<IdleState>>,
    pub cpu_mj: Vec<f64>,
    pub cluster_mj: Vec<f64>,
}

impl Meter {
    /// Every CPU idle at `now` in its deepest state (it has no timer yet), each domain at
    /// `opp[d]`.
    pub fn new(plat: &Platform, opp: Vec<usize>, now: Ns) -> Meter {
        let nr_clusters = plat.cpus.iter().map(|c| c.cluster + 1).max().unwrap_or(0);
        let mut clusters: Vec<ClusterMeter> = (0..nr_clusters)
            .map(|_| ClusterMeter {
                domain: 0,
                nr_busy: 0,
                state: 0,
                since: now,
            })
            .collect();
        let deepest = |d: usize| plat.freq_domains[d].idle_states.len().saturating_sub(1);
        for c in &plat.cpus {
            clusters[c.cluster].domain = c.freq_domain;
            clusters[c.cluster].state = deepest(c.freq_domain);
        }
        Meter {
            cpus: plat
                .cpus
                .iter()
                .map(|c| CpuMeter {
                    domain: c.freq_domain,
                    cluster: c.cluster,
                    busy: false,
                    state: deepest(c.freq_domain),
                    since: now,
                })
                .collect(),
            clusters,
            opp,
            power: plat
                .freq_domains
                .iter()
                .map(|d| {
                    let p = |v: Option<f64>| v.unwrap_or(0.0);
                    d.opps
                        .iter()
                        .map(|o| (p(o.power_mw), p(o.cluster_power_mw)))
                        .collect()
                })
                .collect(),
            idle: plat
                .freq_domains
                .iter()
                .map(|d| d.idle_states.clone())
                .collect(),
            cpu_mj: vec![0.0; plat.cpus.len()],
            cluster_mj: vec![0.0; nr_clusters],
        }
    }

    /// The powers of idle state `state` of `domain` (cpu, cluster); none without states.
    fn idle_power(&self, domain: usize, state: usize) -> (f64, f64) {
        self.idle[domain].get(state).map_or((0.0, 0.0), |s| {
            (s.power_mw.unwrap_or(0.0), s.cluster_power_mw.unwrap_or(0.0))
        })
    }

    /// Charge CPU `cpu` up to `now` in its current state.
    fn settle_cpu(&mut self, cpu: usize, now: Ns) {
        let c = &self.cpus[cpu];
        let dt = now - c.since;
        let mw = if c.busy {
            self.power[c.domain][self.opp[c.domain]].0
        } else {
            self.idle_power(c.domain, c.state).0
        };
        self.cpu_mj[cpu] += mw * dt as f64 * MJ_PER_MW_NS;
        self.cpus[cpu].since = now;
    }

    fn settle_cluster(&mut self, cl: usize, now: Ns) {
        let c = &self.clusters[cl];
        let dt = now - c.since;
        let mw = if c.nr_busy > 0 {
            self.power[c.domain][self.opp[c.domain]].1
        } else {
            self.idle_power(c.domain, c.state).1
        };
        self.cluster_mj[cl] += mw * dt as f64 * MJ_PER_MW_NS;
        self.clusters[cl].since = now;
    }

    /// The idle state CPU `cpu` is in (while idle).
    pub fn idle_state(&self, cpu: usize) -> usize {
        self.cpus[cpu].state
    }

    /// CPU `cpu` leaves idle (`idle`: None) or enters idle state `idle`.
    pub fn set_idle(&mut self, cpu: usize, idle: Option<usize>, now: Ns) {
        let busy = idle.is_none();
        if self.cpus[cpu].busy == busy {
            return;
        }
        self.settle_cpu(cpu, now);
        self.cpus[cpu].busy = busy;
        self.cpus[cpu].state = idle.unwrap_or(0);
        let cl = self.cpus[cpu].cluster;
        let nr = self.clusters[cl].nr_busy;
        if (busy && nr == 0) || (!busy && nr == 1) {
            self.settle_cluster(cl, now); // its first CPU wakes or its last one sleeps
        }
        self.clusters[cl].nr_busy = if busy { nr + 1 } else { nr - 1 };
        if self.clusters[cl].nr_busy == 0 {
            let members = self.cpus.iter().filter(|c| c.cluster == cl);
            self.clusters[cl].state = members.map(|c| c.state).min().unwrap_or(0);
        }
    }

    /// Domain `domain` moves to OPP index `opp`.
    pub fn set_opp(&mut self, domain: usize, opp: usize, now: Ns) {
        for cpu in 0..self.cpus.len() {
            if self.cpus[cpu].domain == domain && self.cpus[cpu].busy {
                self.settle_cpu(cpu, now);
            }
        }
        for cl in 0..self.clusters.len() {
            if self.clusters[cl].domain == domain && self.clusters[cl].nr_busy > 0 {
                self.settle_cluster(cl, now);
            }
        }
        self.opp[domain] = opp;
    }

    /// Charge everything up to the end of the run.
    pub fn finish(&mut self, now: Ns) {
        for cpu in 0..self.cpus.len() {
            self.settle_cpu(cpu, now);
        }
        for cl in 0..self.clusters.len() {
            self.settle_cluster(cl, now);
        }
    }

    pub fn total_mj(&self) -> f64 {
        self.cpu_mj.iter().chain(&self.cluster_mj).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::load_builtin;

    const MS: Ns = 1_000_000;

    /// hikey, CPU 0 alone: 10 ms busy at 432 MHz, 4 ms busy at 1.2 GHz, 2 ms idle in
    /// cpu-sleep, 5 ms in cluster-sleep (the other CPUs idle in cluster-sleep from the
    /// start). Powers (LISA hikey620): CPU 124 and 670 mW busy, cluster 29 and 112 mW;
    /// cpu-sleep: CPU 0 mW, cluster 47 mW; cluster-sleep 0 mW.
    #[test]
    fn two_opps_integrate_to_the_hand_computed_energy() {
        let plat = load_builtin("hikey").unwrap();
        let mut m = Meter::new(&plat, vec![1], 0);
        m.set_idle(0, None, 0);
        m.set_opp(0, 4, 10 * MS);
        m.set_idle(0, Some(1), 14 * MS);
        m.set_idle(0, None, 16 * MS);
        m.set_idle(0, Some(2), 16 * MS);
        m.finish(21 * MS);
        let cpu0 = 124.0 * 10.0 + 670.0 * 4.0 + 0.0 * 2.0 + 0.0 * 5.0; // mW·ms = µJ
        let cluster0 = 29.0 * 10.0 + 112.0 * 4.0 + 47.0 * 2.0 + 0.0 * 5.0;
        assert!(
            (m.cpu_mj[0] * 1000.0 - cpu0).abs() < 1e-6,
            "{}",
            m.cpu_mj[0]
        );
        assert!(
            (m.cluster_mj[0] * 1000.0 - cluster0).abs() < 1e-6,
            "{} {}",
            m.cluster_mj[0],
            cluster0
        );
        // CPU 1 slept 21 ms in cluster-sleep (0 mW); cluster 1 (CPUs 4-7) likewise.
        assert_eq!(m.cpu_mj[1], 0.0);
        assert_eq!(m.cluster_mj[1], 0.0);
    }
}
