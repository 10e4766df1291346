//! The cache-affinity model (`--set cache=on`): a thread that starts running on a CPU whose
//! caches no longer hold its working set stalls while they refill. What is still there
//! depends on where it ran last (the same core or cluster shares the private level, the
//! same LLC domain the last-level cache, another node only memory) and on how long ago: the
//! share left in the private level halves every `half_life_ns` (by default the kernel's own
//! cache-hot estimate, `sysctl_sched_migration_cost`), and in the LLC every half-life scaled
//! by its size per core against the private level's (the cores sharing it turn it over
//! together). The stall is CPU time in which the thread makes no progress, queued on the CPU
//! like the cost model's kernel time.
//!
//! Simplified: the share left depends only on the time the thread was away, not on what
//! ran meanwhile; a working set is touched once per stint on a CPU; caches are inclusive;
//! SMT siblings running together do not compete for the private level.

use crate::platform::cache::{CacheSpec, Scope};
use crate::platform::Platform;
use crate::sched::topology::Distance;
use crate::sched::MIGRATION_COST_NS;
use crate::time::Ns;

/// A thread's cache footprint: its working set, and where and when it last left a CPU.
#[derive(Debug, Clone, Copy, Default)]
pub struct Warm {
    pub bytes: u64,
    pub left: Option<(usize, Ns)>,
}

impl Warm {
    pub fn new(bytes: u64) -> Warm {
        Warm { bytes, left: None }
    }

    /// It leaves `cpu` at `now`.
    pub fn leave(&mut self, cpu: usize, now: Ns) {
        self.left = Some((cpu, now));
    }
}

/// The platform's caches, and the half-lives of a working set in them.
pub struct CacheModel {
    spec: CacheSpec,
    half_life: Ns,
    llc_half_life: Ns,
}

/// Out of 1024: the share of a working set still in a cache `away` ns after its thread left
/// it, halving every `half_life` (linear between halvings, in integers).
fn warmth(away: Ns, half_life: Ns) -> u64 {
    let halvings = away / half_life;
    if halvings > 10 {
        return 0;
    }
    let hi = 1024 >> halvings;
    hi - (hi / 2) * (away % half_life) / half_life
}

impl CacheModel {
    /// The model of `plat`'s caches `spec`; the half-life is by default the kernel's
    /// `sysctl_sched_migration_cost`.
    pub fn new(spec: CacheSpec, plat: &Platform) -> CacheModel {
        let llc = plat.cpus[0].llc;
        let mut cores: Vec<usize> = (plat.cpus.iter().filter(|c| c.llc == llc))
            .map(|c| c.core)
            .collect();
        cores.sort_unstable();
        cores.dedup();
        let half_life = spec.half_life_ns.unwrap_or(MIGRATION_COST_NS);
        let per_core = spec.llc_bytes.unwrap_or(0) / cores.len() as u64;
        let llc_half_life = (half_life as u128 * per_core as u128 / spec.private_bytes as u128)
            .clamp(1, u64::MAX as u128) as Ns;
        CacheModel {
            spec,
            half_life,
            llc_half_life,
        }
    }

    /// The stall (ns) of a thread with a working set of `bytes` starting to run after
    /// `moved`: how far from the CPU it last left, and how long ago (None: it never ran).
    pub fn refill_ns(&self, bytes: u64, moved: Option<(Distance, Ns)>) -> Ns {
        let s = &self.spec;
        let private = bytes.min(s.private_bytes);
        let llc = s.llc_bytes.map_or(private, |l| bytes.min(l).max(private));
        let (f_private, f_llc, shares_private, shares_llc, remote) = match moved {
            None => (0, 0, false, false, false), // all cold
            Some((d, away)) => {
                let private = match s.private_scope {
                    Scope::Core => d == Distance::Smt,
                    Scope::Cluster => d <= Distance::Cluster,
                };
                let llc = s.llc_bytes.is_some() && d <= Distance::Llc;
                let f = (
                    warmth(away, self.half_life),
                    warmth(away, self.llc_half_life),
                );
                (f.0, f.1, private, llc, d == Distance::OtherNode)
            }
        };
        let share = |bytes: u64, f: u64, kept: bool| if kept { bytes * f / 1024 } else { 0 };
        let warm_private = share(private, f_private, shares_private);
        // The private level refills from the LLC what it still holds, else from memory.
        let missing = private - warm_private;
        let from_llc = share(private, f_llc, shares_llc).saturating_sub(warm_private);
        // The LLC's part beyond the private level refills from memory when cold.
        let beyond = llc - private;
        let beyond_cold = beyond - share(beyond, f_llc, shares_llc);
        let memory = if remote {
            s.remote_ns_per_kib
        } else {
            s.memory_ns_per_kib
        };
        (from_llc * s.llc_ns_per_kib + (missing - from_llc + beyond_cold) * memory) / 1024
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::load_builtin;

    /// icelake-2s's caches: 1.25 MiB per core, 54 MiB per package of 36 cores, refills at
    /// 50/100/170 ns per KiB, half-life 0.5 ms (the LLC's 0.5 · 1.5 MiB / 1.25 MiB = 0.6 ms).
    fn model() -> CacheModel {
        let plat = load_builtin("icelake-2s").unwrap();
        let m = CacheModel::new(plat.cache.unwrap(), &plat);
        assert_eq!((m.half_life, m.llc_half_life), (500_000, 600_000));
        m
    }

    #[test]
    fn warmth_halves_every_half_life() {
        assert_eq!(warmth(0, 500), 1024);
        assert_eq!(warmth(250, 500), 768); // halfway to the first halving
        assert_eq!(warmth(500, 500), 512);
        assert_eq!(warmth(1000, 500), 256);
        assert_eq!(warmth(5000, 500), 1);
        assert_eq!(warmth(5500, 500), 0);
    }

    #[test]
    fn the_refill_grows_with_distance() {
        // A 256 KiB working set back after 0.5 ms on the same core (or its SMT sibling), another
        // core of the LLC, or another package (LLC and node): 512/1024 left in the private
        // level, 1024 − 512 · 5/6 = 598/1024 in the LLC (153088 of 262144 bytes).
        // Same core: 131072 bytes missing, 153088 − 131072 = 22016 from the LLC, 109056 from
        // memory: (22016 · 50 + 109056 · 100) / 1024 = 11725 ns. Another core of the LLC:
        // (153088 · 50 + 109056 · 100) / 1024 = 18125. Another package: 256 · 170 = 43520.
        // Never ran: 256 · 100 = 25600.
        let m = model();
        let kib256 = 256 << 10;
        assert_eq!(m.refill_ns(kib256, Some((Distance::Smt, 500_000))), 11725);
        assert_eq!(m.refill_ns(kib256, Some((Distance::Llc, 500_000))), 18125);
        assert_eq!(
            m.refill_ns(kib256, Some((Distance::OtherNode, 500_000))),
            43520
        );
        assert_eq!(m.refill_ns(kib256, None), 25600);
        // At once on the same core: nothing; no working set: nothing.
        assert_eq!(m.refill_ns(kib256, Some((Distance::Smt, 0))), 0);
        assert_eq!(m.refill_ns(0, Some((Distance::OtherNode, 9))), 0);
    }

    #[test]
    fn a_working_set_beyond_the_private_level_refills_the_llc_part_from_memory() {
        // 3 MiB: 1.25 MiB private, 1.75 MiB more in the LLC. Another core of the LLC, at
        // once: the private 1280 KiB from the LLC, 1280 · 50 = 64000. Another package:
        // 3072 KiB from the other node, · 170 = 522240.
        let m = model();
        assert_eq!(m.refill_ns(3 << 20, Some((Distance::Llc, 0))), 64000);
        assert_eq!(
            m.refill_ns(3 << 20, Some((Distance::OtherNode, 0))),
            522_240
        );
    }
}
