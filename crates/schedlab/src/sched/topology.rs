//! Scheduling domains (kernel/sched/topology.c), built once from the platform as 6.12's
//! `build_sched_domains` builds them: the levels of `default_topology` (SMT, CLS, MC, PKG)
//! and, on a machine of several NUMA nodes, `sched_init_numa`'s NODE and NUMA levels; each
//! domain set up by `sd_init`, then the degenerate ones removed (`cpu_attach_domain`).
//! Simplified: one NUMA distance level (every node at the same, local-reclaim distance), and
//! the cluster level follows arm64's `cpu_clustergroup_mask` (a cluster spanning the whole
//! LLC collapses to the SMT siblings).

pub mod perf_domain;

use std::cell::Cell;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::Hash;
use std::ops::Index;
use std::sync::Arc;

use crate::platform::{Cpu, Platform};
use crate::sched::fair::balance::ni_random::NewidleStats;
use crate::sched::stats::SdStats;
use crate::time::Ns;

// The `SD_*` flags in include/linux/sched/sd_flags.h order (bit i is the i-th).
pub const SD_BALANCE_NEWIDLE: u32 = 1 << 0;
pub const SD_BALANCE_EXEC: u32 = 1 << 1;
pub const SD_BALANCE_FORK: u32 = 1 << 2;
pub const SD_BALANCE_WAKE: u32 = 1 << 3;
pub const SD_WAKE_AFFINE: u32 = 1 << 4;
pub const SD_ASYM_CPUCAPACITY: u32 = 1 << 5;
pub const SD_ASYM_CPUCAPACITY_FULL: u32 = 1 << 6;
pub const SD_SHARE_CPUCAPACITY: u32 = 1 << 7;
pub const SD_CLUSTER: u32 = 1 << 8;
pub const SD_SHARE_LLC: u32 = 1 << 9;
pub const SD_SERIALIZE: u32 = 1 << 10;
pub const SD_ASYM_PACKING: u32 = 1 << 11;
pub const SD_PREFER_SIBLING: u32 = 1 << 12;
pub const SD_OVERLAP: u32 = 1 << 13;
pub const SD_NUMA: u32 = 1 << 14;

/// The flags' names, bit by bit (`sd_flag_debug`).
pub const SD_FLAG_NAMES: [&str; 15] = [
    "SD_BALANCE_NEWIDLE",
    "SD_BALANCE_EXEC",
    "SD_BALANCE_FORK",
    "SD_BALANCE_WAKE",
    "SD_WAKE_AFFINE",
    "SD_ASYM_CPUCAPACITY",
    "SD_ASYM_CPUCAPACITY_FULL",
    "SD_SHARE_CPUCAPACITY",
    "SD_CLUSTER",
    "SD_SHARE_LLC",
    "SD_SERIALIZE",
    "SD_ASYM_PACKING",
    "SD_PREFER_SIBLING",
    "SD_OVERLAP",
    "SD_NUMA",
];

/// `SD_DEGENERATE_GROUPS_MASK`: the flags marked SDF_NEEDS_GROUPS (all but SD_WAKE_AFFINE).
const SD_DEGENERATE_GROUPS_MASK: u32 = ((1 << SD_FLAG_NAMES.len()) - 1) & !SD_WAKE_AFFINE;

/// `struct sched_domain`, as far as schedlab uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedDomain {
    /// The topology level's name (`sd->name`).
    pub name: &'static str,
    /// The level it was built at (`sd->level`: SMT is 0), kept when lower levels degenerate.
    pub level: u32,
    /// The CPUs it spans, ascending.
    pub span: Span,
    /// Its groups, the one holding the domain's CPU first.
    pub groups: Groups,
    pub flags: u32,
    /// ms.
    pub min_interval: u64,
    pub max_interval: u64,
    pub busy_factor: u32,
    pub imbalance_pct: u32,
    pub cache_nice_tries: u32,
    /// ms, from `min_interval` up to `max_interval` as balancing finds nothing to do.
    pub balance_interval: u64,
    /// `last_balance`, ns.
    pub last_balance: Ns,
    pub nr_balance_failed: u32,
    /// `max_newidle_lb_cost` (ns) and the jiffy of its last decay (`last_decay_max_lb_cost`).
    pub max_newidle_lb_cost: u64,
    pub last_decay_max_lb_cost: u64,
    /// `sd->imb_numa_nr`: the tasks a NUMA level lets stay on one node before balancing.
    pub imb_numa_nr: u32,
    /// Its schedstat counters.
    pub stats: SdStats,
    /// How often its newly idle passes pull (NI_RANDOM).
    pub newidle: NewidleStats,
}

/// CPUs, ascending: one allocation shared by every domain and group that spans them, as
/// the kernel's domains of one level share their groups (`get_group`), so that a machine of
/// 4,096 CPUs holds its spans once, not once per CPU.
pub type Span = Arc<[usize]>;

/// `struct sched_group`: the CPUs a group spans, and its cores (`sg->cores`), counted once
/// when the domains are built (`init_sched_groups_capacity`), as the topology never changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedGroup {
    pub span: Span,
    pub cores: u32,
}

/// A group reads as its span (`sched_group_span`).
impl std::ops::Deref for SchedGroup {
    type Target = [usize];

    fn deref(&self) -> &[usize] {
        &self.span
    }
}

/// A domain's groups: the circular list every CPU of the span shares (`sg->next`), read
/// from the CPU's own group (`sd->groups`); index 0 is the local group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Groups {
    ring: Arc<[SchedGroup]>,
    local: usize,
}

impl Groups {
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// From the local group round the ring (`for each group` from `sd->groups`).
    pub fn iter(&self) -> impl Iterator<Item = &SchedGroup> + Clone {
        let (after, before) = self.ring.split_at(self.local);
        before.iter().chain(after)
    }
}

impl Index<usize> for Groups {
    type Output = SchedGroup;

    fn index(&self, i: usize) -> &SchedGroup {
        &self.ring[(self.local + i) % self.ring.len()]
    }
}

impl SchedDomain {
    /// The flags' names, space-separated, as debugfs `flags` prints them.
    pub fn flag_names(&self) -> String {
        SD_FLAG_NAMES
            .iter()
            .enumerate()
            .filter(|(i, _)| self.flags & 1 << i != 0)
            .map(|(_, n)| *n)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// `struct sched_domain_shared` of an LLC: what wakeups read of it. Its CPUs write it
/// while they only read the rest of the topology (the kernel's WRITE_ONCE), hence cells.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SdShared {
    /// Some core of the LLC is wholly idle (`__update_idle_core`), until a scan finds none.
    pub has_idle_cores: Cell<bool>,
    /// `nr_idle_scan`: how many CPUs `select_idle_cpu` may try (SIS_UTIL); zero at boot.
    pub nr_idle_scan: Cell<u32>,
}

/// How far apart two CPUs are, nearest first: what a migration between them loses of the
/// task's cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Distance {
    /// Hardware threads of one core (or the same CPU).
    Smt,
    Cluster,
    Llc,
    OtherLlc,
    OtherNode,
}

impl Distance {
    pub const NAMES: [&'static str; 5] = ["smt", "cluster", "llc", "other_llc", "other_node"];
}

/// Where a CPU's caches and siblings are (`update_top_cache_domain`'s per-CPU variables).
#[derive(Debug, Clone, Default)]
pub struct CacheDomains {
    /// `sd_llc`: the level (index into the CPU's domains) of its highest SD_SHARE_LLC domain.
    pub llc: Option<usize>,
    /// `sd_llc_size` and `sd_llc_id` (the LLC's first CPU, or the CPU alone).
    pub llc_size: u32,
    pub llc_id: usize,
    /// `sd_share_id`: its cluster's first CPU on a machine with clusters, else `llc_id`.
    pub share_id: usize,
    /// `sd_asym_cpucapacity`: the level of its lowest SD_ASYM_CPUCAPACITY_FULL domain.
    pub asym_cpucapacity: Option<usize>,
    /// `cpu_smt_mask`: its core's CPUs, itself included, ascending.
    pub smt: Vec<usize>,
}

/// Every CPU's domains, lowest first.
#[derive(Debug, Clone)]
pub struct Topology {
    pub domains: Vec<Vec<SchedDomain>>,
    /// Each CPU's cache domains.
    pub cache: Vec<CacheDomains>,
    /// Each LLC's shared state, by `llc_id`.
    pub shared: Vec<SdShared>,
    /// `sched_smt_present`: some core has several CPUs.
    pub smt_active: bool,
    /// `sched_cluster_active`: some CPU has a cluster domain.
    pub cluster_active: bool,
    /// Where each CPU sits on the platform.
    pub cpus: Vec<Cpu>,
    /// `sgc->imbalance` of the groups a child level could not balance because of affinity,
    /// by (level, the group's first CPU): shared, as a group's capacity is, by every CPU
    /// whose domain holds it.
    pub imbalanced: BTreeSet<(u32, usize)>,
}

/// A topology level: its name, what its CPUs have in common, and its `tl->sd_flags`.
struct Level {
    name: &'static str,
    key: fn(&Cpu) -> usize,
    flags: u32,
}

/// `default_topology` then the NUMA levels; `cpu_clustergroup_mask` is refined in `mask`.
const LEVELS: [Level; 6] = [
    Level {
        name: "SMT",
        key: |c| c.core,
        flags: SD_SHARE_CPUCAPACITY | SD_SHARE_LLC,
    },
    Level {
        name: "CLS",
        key: |c| c.cluster,
        flags: SD_CLUSTER | SD_SHARE_LLC,
    },
    Level {
        name: "MC",
        key: |c| c.llc,
        flags: SD_SHARE_LLC,
    },
    Level {
        name: "PKG",
        key: |c| c.numa,
        flags: 0,
    },
    Level {
        name: "NODE",
        key: |c| c.numa,
        flags: 0,
    },
    Level {
        name: "NUMA",
        key: |_| 0,
        flags: SD_NUMA,
    },
];

/// CPUs grouped by `keys` (CPU i's key is the i-th): each CPU's class, numbered in order
/// of first appearance, and each class's CPUs, ascending.
fn classes<K: Hash + Eq>(keys: impl Iterator<Item = K>) -> (Vec<usize>, Vec<Vec<usize>>) {
    let mut ids: HashMap<K, usize> = HashMap::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    let class = (keys.enumerate())
        .map(|(cpu, key)| {
            let n = ids.len();
            let i = *ids.entry(key).or_insert(n);
            if i == members.len() {
                members.push(Vec::new());
            }
            members[i].push(cpu);
            i
        })
        .collect();
    (class, members)
}

/// `tl->mask(cpu)` of every CPU, by class: each CPU's class, and each class's CPUs
/// (interned, so that equal spans of different levels are one).
fn masks(plat: &Platform, level: usize, interned: &mut Interner) -> (Vec<usize>, Vec<Span>) {
    let of = |l: usize| classes(plat.cpus.iter().map(LEVELS[l].key));
    let (mut class, mut members) = of(level);
    // arm64's cpu_clustergroup_mask: a cluster that is the whole LLC is no level of its own
    // (its CPUs' mask is their core's).
    if LEVELS[level].name == "CLS" {
        let ((llc, llcs), (smt, _)) = (of(2), of(0));
        let whole_llc = |cpu: usize| members[class[cpu]] == llcs[llc[cpu]];
        let keys: Vec<(bool, usize)> = (0..class.len())
            .map(|cpu| match whole_llc(cpu) {
                true => (true, smt[cpu]),
                false => (false, class[cpu]),
            })
            .collect();
        (class, members) = classes(keys.into_iter());
    }
    (
        class,
        members.into_iter().map(|m| interned.intern(m)).collect(),
    )
}

/// Spans by content: equal spans share one allocation.
#[derive(Default)]
struct Interner(HashMap<Vec<usize>, Span>);

impl Interner {
    fn intern(&mut self, cpus: Vec<usize>) -> Span {
        (self.0.entry(cpus))
            .or_insert_with_key(|s| s.as_slice().into())
            .clone()
    }
}

/// `asym_cpu_capacity_classify`: a span with several capacities is asymmetric, fully so when
/// it holds every capacity of the machine.
fn asym_cpu_capacity_classify(plat: &Platform, span: &[usize]) -> u32 {
    let caps = |cpus: &mut dyn Iterator<Item = usize>| -> BTreeSet<u32> {
        cpus.map(|c| plat.cpus[c].capacity_orig).collect()
    };
    let here = caps(&mut span.iter().copied()).len();
    match here {
        0 | 1 => 0,
        n if n < caps(&mut (0..plat.nr_cpus())).len() => SD_ASYM_CPUCAPACITY,
        _ => SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL,
    }
}

/// `sd_init` for a CPU at `level`, spanning `span` (the level's mask with the child's), in
/// `groups`; `asym`: the span's `asym_cpu_capacity_classify`.
fn sd_init(level: usize, span: Span, groups: Groups, asym: u32, now: Ns) -> SchedDomain {
    let weight = span.len() as u64;
    let mut flags = SD_BALANCE_NEWIDLE
        | SD_BALANCE_EXEC
        | SD_BALANCE_FORK
        | SD_WAKE_AFFINE
        | SD_PREFER_SIBLING
        | LEVELS[level].flags
        | asym;
    // Topological properties into behaviour.
    let (imbalance_pct, cache_nice_tries) = if flags & SD_SHARE_CPUCAPACITY != 0 {
        (110, 0)
    } else if flags & SD_NUMA != 0 {
        // One distance level, within node_reclaim_distance: fork, exec and wake-affine stay.
        flags = (flags & !SD_PREFER_SIBLING) | SD_SERIALIZE | SD_OVERLAP;
        (117, 2)
    } else {
        (117, 1)
    };
    SchedDomain {
        name: LEVELS[level].name,
        level: level as u32,
        span,
        groups,
        flags,
        min_interval: weight,
        max_interval: 2 * weight,
        busy_factor: 16,
        imbalance_pct,
        cache_nice_tries,
        balance_interval: weight,
        last_balance: now,
        nr_balance_failed: 0,
        max_newidle_lb_cost: 0,
        last_decay_max_lb_cost: 0,
        imb_numa_nr: 0,
        stats: SdStats::default(),
        newidle: NewidleStats::default(),
    }
}

/// `sd_degenerate`.
fn sd_degenerate(sd: &SchedDomain) -> bool {
    if sd.span.len() == 1 {
        return true;
    }
    if sd.flags & SD_DEGENERATE_GROUPS_MASK != 0 && sd.groups.len() > 1 {
        return false;
    }
    sd.flags & SD_WAKE_AFFINE == 0
}

/// `sd_parent_degenerate`.
fn sd_parent_degenerate(sd: &SchedDomain, parent: &SchedDomain) -> bool {
    if sd_degenerate(parent) {
        return true;
    }
    if sd.span != parent.span {
        return false;
    }
    let mut pflags = parent.flags;
    if parent.groups.len() == 1 {
        pflags &= !SD_DEGENERATE_GROUPS_MASK;
    }
    !sd.flags & pflags == 0
}

impl Topology {
    /// `build_sched_domains` over every CPU of `plat`; `now` stamps `last_balance`.
    pub fn build(plat: &Platform, now: Ns) -> Topology {
        let numa = plat.cpus.iter().any(|c| c.numa != plat.cpus[0].numa);
        let nr_levels = if numa { LEVELS.len() } else { 4 };
        let levels = build_levels(plat, nr_levels);
        let mut domains: Vec<Vec<SchedDomain>> = (0..plat.nr_cpus())
            .map(|cpu| {
                let mut doms: Vec<SchedDomain> = Vec::new();
                for (level, l) in levels.iter().enumerate() {
                    let (span, groups) = l.of(cpu);
                    let asym = l.asym[&span_key(&span)];
                    let sd = sd_init(level, span, groups, asym, now);
                    // Don't spread across CPUs of different capacities.
                    if sd.flags & SD_ASYM_CPUCAPACITY != 0 {
                        if let Some(child) = doms.last_mut() {
                            child.flags &= !SD_PREFER_SIBLING;
                        }
                    }
                    doms.push(sd);
                }
                doms
            })
            .collect();
        for doms in &mut domains {
            set_imb_numa_nr(doms);
            cpu_attach_domain(doms);
        }
        let cache: Vec<CacheDomains> = (0..plat.nr_cpus())
            .map(|cpu| update_top_cache_domain(&domains[cpu], &levels[0].spans[cpu], cpu))
            .collect();
        let cluster_active = domains
            .iter()
            .flatten()
            .any(|sd| sd.flags & SD_CLUSTER != 0);
        Topology {
            smt_active: cache.iter().any(|c| c.smt.len() > 1),
            cluster_active,
            shared: vec![SdShared::default(); plat.nr_cpus()],
            cpus: plat.cpus.clone(),
            domains,
            cache,
            imbalanced: BTreeSet::new(),
        }
    }

    /// How far a task moving from `a` to `b` goes.
    pub fn distance(&self, a: usize, b: usize) -> Distance {
        let (a, b) = (&self.cpus[a], &self.cpus[b]);
        if a.core == b.core {
            Distance::Smt
        } else if a.cluster == b.cluster {
            Distance::Cluster
        } else if a.llc == b.llc {
            Distance::Llc
        } else if a.numa == b.numa {
            Distance::OtherLlc
        } else {
            Distance::OtherNode
        }
    }

    /// `cpus_share_cache`.
    #[inline]
    pub fn share_cache(&self, a: usize, b: usize) -> bool {
        self.cache[a].llc_id == self.cache[b].llc_id
    }

    /// `cpus_share_resources`: the same cluster (the same LLC without clusters).
    #[inline]
    pub fn share_resources(&self, a: usize, b: usize) -> bool {
        self.cache[a].share_id == self.cache[b].share_id
    }

    /// `sd_llc_shared` of `cpu`.
    #[inline]
    pub fn llc_shared(&self, cpu: usize) -> &SdShared {
        &self.shared[self.cache[cpu].llc_id]
    }

    /// The lowest domain of `cpu`, if it has any.
    pub fn lowest(&self, cpu: usize) -> Option<&SchedDomain> {
        self.domains[cpu].first()
    }
}

/// `update_top_cache_domain` of `cpu` over its attached domains `doms`.
fn update_top_cache_domain(doms: &[SchedDomain], smt: &Span, cpu: usize) -> CacheDomains {
    let highest = |flag: u32| (0..doms.len()).rev().find(|&l| doms[l].flags & flag != 0);
    let lowest = |flag: u32| (0..doms.len()).find(|&l| doms[l].flags & flag != 0);
    let llc = highest(SD_SHARE_LLC);
    let (llc_size, llc_id) = llc.map_or((1, cpu), |l| (doms[l].span.len() as u32, doms[l].span[0]));
    CacheDomains {
        llc,
        llc_size,
        llc_id,
        share_id: lowest(SD_CLUSTER).map_or(llc_id, |l| doms[l].span[0]),
        asym_cpucapacity: lowest(SD_ASYM_CPUCAPACITY_FULL),
        smt: smt.to_vec(),
    }
}

/// A span's identity: its allocation, as equal spans share one.
fn span_key(span: &Span) -> usize {
    span.as_ptr() as usize
}

/// One topology level of every CPU: its span, its group ring and its place in it.
struct BuiltLevel {
    spans: Vec<Span>,
    /// Each distinct span's groups, by `span_key`.
    rings: HashMap<usize, Arc<[SchedGroup]>>,
    /// Each CPU's group in its span's ring.
    local: Vec<usize>,
    /// Each distinct span's `asym_cpu_capacity_classify`, by `span_key`.
    asym: HashMap<usize, u32>,
}

impl BuiltLevel {
    fn of(&self, cpu: usize) -> (Span, Groups) {
        let span = self.spans[cpu].clone();
        let ring = self.rings[&span_key(&span)].clone();
        (
            span,
            Groups {
                ring,
                local: self.local[cpu],
            },
        )
    }
}

/// Every level of every CPU, lowest first: the spans of each (interned: the CPUs of a span
/// share it), then each distinct span's groups once.
fn build_levels(plat: &Platform, nr_levels: usize) -> Vec<BuiltLevel> {
    let mut interned = Interner::default();
    let mut levels: Vec<BuiltLevel> = Vec::with_capacity(nr_levels);
    for level in 0..nr_levels {
        let (class, mask) = masks(plat, level, &mut interned);
        let spans: Vec<Span> = match levels.last() {
            None => class.iter().map(|&k| mask[k].clone()).collect(),
            Some(child) => {
                // The mask with the child's span, once per distinct pair.
                let mut with_child: HashMap<(usize, usize), Span> = HashMap::new();
                (0..plat.nr_cpus())
                    .map(|cpu| {
                        let (k, ch) = (class[cpu], &child.spans[cpu]);
                        let pair = (k, span_key(ch));
                        (with_child.entry(pair))
                            .or_insert_with(|| {
                                if ch.iter().all(|&d| class[d] == k) {
                                    return mask[k].clone();
                                }
                                let mut span = [&mask[k][..], &ch[..]].concat();
                                span.sort_unstable();
                                span.dedup();
                                interned.intern(span)
                            })
                            .clone()
                    })
                    .collect()
            }
        };
        let child = levels.last().map(|l| &l.spans[..]);
        levels.push(BuiltLevel::build(plat, spans, child));
    }
    levels
}

impl BuiltLevel {
    /// `build_sched_groups` (and `build_overlap_sched_groups` for NUMA) of each distinct
    /// span: one group per child span within it (single CPUs at the lowest level), in the
    /// order of their first CPUs from the span's first, round which each CPU starts at its
    /// own. Simplified: the kernel's ring is the one its last CPU built, the same as this
    /// one where the children's CPUs interleave regularly (SMT siblings n and n + N/2).
    fn build(plat: &Platform, spans: Vec<Span>, child: Option<&[Span]>) -> BuiltLevel {
        let mut rings = HashMap::new();
        let mut asym = HashMap::new();
        let mut local = vec![0; spans.len()];
        for span in &spans {
            let key = span_key(span);
            if rings.contains_key(&key) {
                continue;
            }
            let mut covered = HashSet::new();
            let mut ring = Vec::new();
            for &c in span.iter() {
                let group: Span = child.map_or_else(|| Arc::from([c]), |ch| ch[c].clone());
                if !covered.insert(span_key(&group)) {
                    continue;
                }
                for &d in group.iter() {
                    local[d] = ring.len();
                }
                let cores = group
                    .iter()
                    .map(|&d| plat.cpus[d].core)
                    .collect::<HashSet<_>>();
                ring.push(SchedGroup {
                    cores: cores.len() as u32,
                    span: group,
                });
            }
            rings.insert(key, ring.into());
            asym.insert(key, asym_cpu_capacity_classify(plat, span));
        }
        BuiltLevel {
            spans,
            rings,
            local,
            asym,
        }
    }
}

/// `build_sched_domains`' NUMA allowance over a CPU's whole chain (degenerate levels
/// included): the first level above the LLC allows 12.5% of its span when it holds one LLC,
/// else one task per LLC; higher levels scale that by their span over the first NUMA
/// level's.
fn set_imb_numa_nr(doms: &mut [SchedDomain]) {
    let (mut imb, mut imb_span) = (0, 1);
    for i in 0..doms.len() {
        let weight = doms[i].span.len() as u32;
        let llc_child = i > 0 && doms[i - 1].flags & SD_SHARE_LLC != 0;
        if doms[i].flags & SD_SHARE_LLC == 0 && llc_child {
            let nr_llcs = weight / doms[i - 1].span.len() as u32;
            imb = if nr_llcs == 1 { weight >> 3 } else { nr_llcs }.max(1);
            doms[i].imb_numa_nr = imb;
            imb_span = (doms[i + 1..].iter().find(|sd| sd.flags & SD_NUMA != 0))
                .map_or(weight, |sd| sd.span.len() as u32);
        } else {
            doms[i].imb_numa_nr = imb * (weight / imb_span).max(1);
        }
    }
}

/// `cpu_attach_domain`: remove the parents that add nothing to their child (moving
/// SD_PREFER_SIBLING down), then the lowest domain if it is degenerate.
fn cpu_attach_domain(doms: &mut Vec<SchedDomain>) {
    let mut i = 0;
    while i + 1 < doms.len() {
        if sd_parent_degenerate(&doms[i], &doms[i + 1]) {
            let parent = doms.remove(i + 1);
            doms[i].flags |= parent.flags & SD_PREFER_SIBLING;
        } else {
            i += 1;
        }
    }
    if doms.first().is_some_and(sd_degenerate) {
        doms.remove(0);
    }
}

#[cfg(test)]
mod tests;
