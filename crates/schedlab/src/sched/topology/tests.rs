//! Domains derived by hand from `sd_init`, `sd_degenerate` and `sd_parent_degenerate`.

use super::*;
use crate::platform::load_builtin;

const BASE: u32 = SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE;

fn build(name: &str) -> Topology {
    Topology::build(&load_builtin(name).unwrap(), 0)
}

fn range(a: usize, b: usize) -> Vec<usize> {
    (a..=b).collect()
}

#[test]
fn smp4_has_one_mc_domain_of_four_single_cpu_groups() {
    // SMT spans the CPU alone (degenerate); CLS is the whole LLC, so arm64 folds it to SMT;
    // PKG spans what MC spans with one group: it adds nothing (only SD_WAKE_AFFINE counts).
    let t = build("smp:4");
    for cpu in 0..4 {
        let d = &t.domains[cpu];
        assert_eq!(d.len(), 1);
        let mc = &d[0];
        assert_eq!(
            (mc.name, mc.level, &mc.span[..]),
            ("MC", 2, &range(0, 3)[..])
        );
        assert_eq!(mc.flags, BASE | SD_SHARE_LLC | SD_PREFER_SIBLING);
        assert_eq!(
            (mc.imbalance_pct, mc.cache_nice_tries, mc.busy_factor),
            (117, 1, 16)
        );
        assert_eq!(
            (mc.min_interval, mc.max_interval, mc.balance_interval),
            (4, 8, 4)
        );
        // for_each_cpu_wrap from the CPU itself.
        let first: Vec<usize> = mc.groups.iter().map(|g| g[0]).collect();
        assert_eq!(first, (0..4).map(|i| (cpu + i) % 4).collect::<Vec<_>>());
    }
}

#[test]
fn hikey960_has_mc_per_cluster_and_an_asymmetric_pkg() {
    // MC: each cluster (its own LLC). PKG: all eight, both capacities (462 and 1024), so
    // SD_ASYM_CPUCAPACITY | _FULL, and its child MC loses SD_PREFER_SIBLING.
    let t = build("hikey960");
    for cpu in 0..8 {
        let d = &t.domains[cpu];
        let (mine, other) = if cpu < 4 {
            (range(0, 3), range(4, 7))
        } else {
            (range(4, 7), range(0, 3))
        };
        assert_eq!(d.len(), 2);
        assert_eq!(
            (d[0].name, d[0].level, &d[0].span[..]),
            ("MC", 2, &mine[..])
        );
        assert_eq!(d[0].flags, BASE | SD_SHARE_LLC);
        assert_eq!(d[0].groups.len(), 4);
        assert_eq!(
            (d[1].name, d[1].level, &d[1].span[..]),
            ("PKG", 3, &range(0, 7)[..])
        );
        let asym = SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL;
        assert_eq!(d[1].flags, BASE | asym | SD_PREFER_SIBLING);
        assert_eq!(spans(&d[1]), vec![mine, other]);
        // No SMT: a cluster's four CPUs are four cores (sg->cores).
        assert!(d[1].groups.iter().all(|g| g.cores == 4));
        assert_eq!((d[1].min_interval, d[1].max_interval), (8, 16));
        assert_eq!(
            d[1].flag_names(),
            "SD_BALANCE_NEWIDLE SD_BALANCE_EXEC SD_BALANCE_FORK SD_WAKE_AFFINE SD_ASYM_CPUCAPACITY SD_ASYM_CPUCAPACITY_FULL SD_PREFER_SIBLING"
        );
    }
}

#[test]
fn icelake_2s_has_smt_mc_and_numa() {
    // CPU n and n+72 are SMT siblings; the LLC is the package (0-35,72-107 and 36-71,
    // 108-143), which is the NUMA node: PKG and NODE add nothing to MC. NUMA spans both
    // nodes: SD_NUMA, SD_SERIALIZE, SD_OVERLAP, no SD_PREFER_SIBLING, cache_nice_tries 2.
    let t = build("icelake-2s");
    let node0: Vec<usize> = (0..36).chain(72..108).collect();
    let node1: Vec<usize> = (36..72).chain(108..144).collect();
    for (cpu, node, other) in [
        (0, &node0, &node1),
        (37, &node1, &node0),
        (100, &node0, &node1),
    ] {
        let d = &t.domains[cpu];
        let names: Vec<&str> = d.iter().map(|s| s.name).collect();
        assert_eq!(names, ["SMT", "MC", "NUMA"], "cpu {cpu}");
        let sibling = if cpu < 72 { cpu + 72 } else { cpu - 72 };
        let mut smt = [cpu, sibling];
        smt.sort_unstable();
        assert_eq!((d[0].level, &d[0].span[..]), (0, &smt[..]));
        assert_eq!(
            d[0].flags,
            BASE | SD_SHARE_CPUCAPACITY | SD_SHARE_LLC | SD_PREFER_SIBLING
        );
        assert_eq!((d[0].imbalance_pct, d[0].cache_nice_tries), (110, 0));
        assert_eq!(spans(&d[0]), vec![vec![cpu], vec![sibling]]);
        assert_eq!((d[1].level, &d[1].span[..]), (2, &node[..]));
        assert_eq!(d[1].flags, BASE | SD_SHARE_LLC | SD_PREFER_SIBLING);
        assert_eq!(d[1].groups.len(), 36);
        assert!(d[1].groups[0].contains(&cpu));
        assert_eq!((d[2].level, d[2].span.len()), (5, 144));
        assert_eq!(d[2].flags, BASE | SD_SERIALIZE | SD_OVERLAP | SD_NUMA);
        assert_eq!((d[2].imbalance_pct, d[2].cache_nice_tries), (117, 2));
        assert_eq!(spans(&d[2]), vec![node.clone(), other.clone()]);
        // sg->cores: an SMT pair is one core, each node's 72 CPUs are 36.
        assert!(d[1].groups.iter().all(|g| g.cores == 1));
        assert_eq!(
            d[2].groups.iter().map(|g| g.cores).collect::<Vec<_>>(),
            [36, 36]
        );
        assert_eq!((d[2].min_interval, d[2].max_interval), (144, 288));
    }
}

#[test]
fn one_cpu_has_no_domain() {
    let t = build("smp:1");
    assert!(t.domains[0].is_empty() && t.lowest(0).is_none());
}

#[test]
fn the_numa_allowance_is_an_eighth_of_a_node_of_one_llc() {
    // icelake-2s: PKG (72 CPUs) is the first level above the LLC (MC, 72 CPUs): one LLC, so
    // 72 >> 3 = 9; the NUMA level (144 CPUs) is the first NUMA one: factor 144/144 = 1.
    let topo = Topology::build(&load_builtin("icelake-2s").unwrap(), 0);
    let numa = topo.domains[0].iter().find(|sd| sd.name == "NUMA").unwrap();
    assert_eq!(numa.imb_numa_nr, 9);
    // hikey960: PKG (8 CPUs) over two LLCs (MC, the clusters of 4): one task per LLC, 2;
    // the LLC level below it allows nothing.
    let topo = Topology::build(&load_builtin("hikey960").unwrap(), 0);
    let imb: Vec<(&str, u32)> = topo.domains[0]
        .iter()
        .map(|sd| (sd.name, sd.imb_numa_nr))
        .collect();
    assert_eq!(imb, [("MC", 0), ("PKG", 2)]);
}

/// A domain's groups' spans.
fn spans(sd: &crate::sched::topology::SchedDomain) -> Vec<Vec<usize>> {
    sd.groups.iter().map(|g| g.to_vec()).collect()
}

/// `build_sched_groups(sd, cpu)` as the kernel walks it for one CPU: `for_each_cpu_wrap`
/// over the span from `cpu`, a group for each CPU not yet covered, the child's span (the CPU
/// alone at the lowest level).
fn kernel_walk(t: &Topology, cpu: usize, level: usize) -> Vec<Vec<usize>> {
    let sd = &t.domains[cpu][level];
    let span = &sd.span;
    let start = span.iter().position(|&c| c == cpu).unwrap();
    let child_of = |c: usize| -> Vec<usize> {
        // The child domain of `c` under this one: the highest of its domains below `sd`'s
        // level, or `c` alone.
        (t.domains[c].iter().rev())
            .find(|d| d.level < sd.level)
            .map_or(vec![c], |d| d.span.to_vec())
    };
    let mut out: Vec<Vec<usize>> = Vec::new();
    for &c in span[start..].iter().chain(&span[..start]) {
        if !out.iter().any(|g| g.contains(&c)) {
            out.push(child_of(c));
        }
    }
    out
}

#[test]
fn every_cpu_reads_its_groups_in_the_order_the_kernel_walks_them() {
    // The shared ring, read from each CPU's own group, is the kernel's per-CPU walk on every
    // built-in machine (SMT siblings n and n + 72 on icelake-2s interleave regularly).
    let names = crate::platform::builtin_names().chain(["smp:6"]);
    for name in names {
        let t = build(name);
        for cpu in 0..t.domains.len() {
            for level in 0..t.domains[cpu].len() {
                let walked = kernel_walk(&t, cpu, level);
                assert_eq!(
                    spans(&t.domains[cpu][level]),
                    walked,
                    "{name} cpu {cpu} level {level}"
                );
            }
        }
    }
}

#[test]
fn the_cpus_of_a_domain_share_its_span_and_groups() {
    // icelake-2s: node 0's 72 CPUs hold one MC span and one ring of 36 SMT groups, not 72.
    let t = build("icelake-2s");
    let (a, b) = (&t.domains[0][1], &t.domains[1][1]);
    assert_eq!((a.name, b.name), ("MC", "MC"));
    assert!(Arc::ptr_eq(&a.span, &b.span));
    assert!(Arc::ptr_eq(&a.groups.ring, &b.groups.ring));
    assert_eq!((a.groups.local, b.groups.local), (0, 1));
    assert_eq!(b.groups[0][..], [1, 73]);
}
