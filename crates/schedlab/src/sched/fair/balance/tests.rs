//! The balancer's decisions on hand-built domains, worked out from fair.c's rules.

use super::stats::*;
use crate::sched::topology::{SD_PREFER_SIBLING, SD_SHARE_CPUCAPACITY, SD_SHARE_LLC};

/// A CPU running `nr` always-running fair tasks (load 1024 and util 1024 each, util capped
/// at the CPU's 1024, runnable one per task).
fn busy(nr: u32) -> CpuStats {
    CpuStats {
        load: 1024 * nr as u64,
        util: 1024,
        runnable: 1024 * nr as u64,
        h_nr_running: nr,
        nr_running: nr,
        ..CpuStats::default()
    }
}

fn idle() -> CpuStats {
    CpuStats {
        idle: true,
        ..CpuStats::default()
    }
}

/// A group of `cpus` CPUs of capacity 1024, one core each, its child's `flags`.
fn group(cpus: u32, flags: u32) -> GroupInfo {
    GroupInfo {
        capacity: 1024 * cpus as u64,
        min_capacity: 1024,
        max_capacity: 1024,
        weight: cpus,
        flags,
        imbalance: false,
        cores: cpus,
    }
}

/// An MC domain (LLC shared, imbalance_pct 117) balanced for a CPU `idle`.
fn mc(idle: CpuIdleType) -> Dst {
    Dst {
        sd_flags: SD_SHARE_LLC,
        imbalance_pct: 117,
        imb_numa_nr: 0,
        idle,
        capacity: 1024,
        core_idle: true,
    }
}

/// `update_sd_lb_stats` over groups of (info, CPUs); the local group is the first.
fn domain(dst: &Dst, groups: &[(GroupInfo, Vec<CpuStats>)]) -> SdLbStats {
    let mut sds = SdLbStats::new();
    for (i, (g, cpus)) in groups.iter().enumerate() {
        let (s, _, _) = update_sg_lb_stats(dst, g, i == 0, cpus.iter().copied());
        sds.add_group(dst, i, *g, s, i == 0);
    }
    sds
}

#[test]
fn groups_are_classified_by_tasks_and_capacity() {
    let dst = mc(CpuIdleType::Idle);
    let stats = |cpus: Vec<CpuStats>| {
        update_sg_lb_stats(&dst, &group(cpus.len() as u32, 0), false, cpus.into_iter()).0
    };
    // 2 tasks on 1 CPU: more tasks than CPUs, and util 1024·117 > capacity 1024·100.
    assert_eq!(stats(vec![busy(2)]).group_type, GroupType::Overloaded);
    // 1 task on 1 CPU: not more tasks than CPUs; util 1024·117 ≥ 1024·100, so no capacity left.
    assert_eq!(stats(vec![busy(1)]).group_type, GroupType::FullyBusy);
    // 1 task on 2 CPUs: fewer tasks than CPUs.
    assert_eq!(stats(vec![busy(1), idle()]).group_type, GroupType::HasSpare);
    // A light task (util 300, runnable 300) alone: capacity left (1024·100 > 300·117).
    let light = CpuStats {
        load: 300,
        util: 300,
        runnable: 300,
        h_nr_running: 1,
        nr_running: 1,
        ..CpuStats::default()
    };
    assert_eq!(stats(vec![light]).group_type, GroupType::HasSpare);
    // avg_load only for an overloaded group: 2048 load on 1024 capacity = 2048.
    assert_eq!(stats(vec![busy(2)]).avg_load, 2048);
    assert_eq!(stats(vec![busy(1)]).avg_load, 0);
}

#[test]
fn an_idle_cpu_pulls_half_the_excess_tasks_of_a_single_cpu_group() {
    // smp:2, CPU 1 idle, four hogs on CPU 0. Busiest = CPU 0's group, overloaded (4 tasks on
    // 1 CPU). Local has spare; the domain shares its LLC, so not by util: the busiest group
    // has one CPU, so by sibling_imbalance: same core counts, 4 − 0 = 4 tasks, halved: 2.
    let dst = mc(CpuIdleType::Idle);
    let mut sds = domain(
        &dst,
        &[(group(1, 0), vec![idle()]), (group(1, 0), vec![busy(4)])],
    );
    let want = Imbalance {
        migration_type: MigrationType::Task,
        imbalance: 2,
    };
    assert_eq!(find_src_group(&dst, &mut sds, false), Some((1, want)));
    // Not when EAS places tasks (an energy model, not overutilized) and nothing is misfit.
    let mut sds = domain(
        &dst,
        &[(group(1, 0), vec![idle()]), (group(1, 0), vec![busy(4)])],
    );
    assert_eq!(find_src_group(&dst, &mut sds, true), None);
}

#[test]
fn a_busy_cpu_leaves_a_not_overloaded_group_to_idle_ones() {
    // CPU 0 runs one task, CPU 1 one task: both fully busy, nothing to pull.
    let dst = mc(CpuIdleType::NotIdle);
    let mut sds = domain(
        &dst,
        &[(group(1, 0), vec![busy(1)]), (group(1, 0), vec![busy(1)])],
    );
    assert_eq!(find_src_group(&dst, &mut sds, false), None);
    // Two tasks each: both overloaded at avg_load 2048 = the domain's: balanced.
    let mut sds = domain(
        &dst,
        &[(group(1, 0), vec![busy(2)]), (group(1, 0), vec![busy(2)])],
    );
    assert_eq!(find_src_group(&dst, &mut sds, false), None);
}

#[test]
fn overloaded_groups_balance_load_down_to_the_average() {
    // Local: 2 hogs on 1 CPU (avg_load 2048); busiest: 4 hogs (4096). The domain's average:
    // 6144·1024/2048 = 3072. 100·4096 > 117·2048, so pull min((4096−3072)·1024,
    // (3072−2048)·1024)/1024 = 1024 of load: one hog.
    let dst = mc(CpuIdleType::NotIdle);
    let mut sds = domain(
        &dst,
        &[(group(1, 0), vec![busy(2)]), (group(1, 0), vec![busy(4)])],
    );
    let want = Imbalance {
        migration_type: MigrationType::Load,
        imbalance: 1024,
    };
    assert_eq!(find_src_group(&dst, &mut sds, false), Some((1, want)));
    // 2 against 2.2 (within imbalance_pct: 100·2253 ≤ 117·2048): balanced.
    let mut heavier = busy(2);
    heavier.load = 2253;
    let mut sds = domain(
        &dst,
        &[(group(1, 0), vec![busy(2)]), (group(1, 0), vec![heavier])],
    );
    assert_eq!(find_src_group(&dst, &mut sds, false), None);
}

#[test]
fn without_a_shared_llc_an_idle_group_fills_its_spare_capacity() {
    // A PKG-like domain (no SD_SHARE_LLC) of two 2-CPU groups: local idle (capacity 2048,
    // util 0), busiest overloaded (3 hogs on 2 CPUs: util 2048·117 > 2048·100). Pull util up
    // to the local capacity: 2048.
    let mut dst = mc(CpuIdleType::Idle);
    dst.sd_flags = 0;
    let mut sds = domain(
        &dst,
        &[
            (group(2, 0), vec![idle(), idle()]),
            (group(2, 0), vec![busy(2), busy(1)]),
        ],
    );
    let want = Imbalance {
        migration_type: MigrationType::Util,
        imbalance: 2048,
    };
    assert_eq!(find_src_group(&dst, &mut sds, false), Some((1, want)));
}

#[test]
fn idle_cpus_are_evened_out_between_groups_with_spare_capacity() {
    // Two 4-CPU groups (no prefer_sibling): local all idle, busiest with 2 lone tasks. Not
    // overloaded; local has 4 idle CPUs, busiest 2: 4 > 2 + 1, so pull (4 − 2) / 2 = 1 task.
    let dst = mc(CpuIdleType::Idle);
    let idle4 = vec![idle(); 4];
    let two = vec![busy(1), busy(1), idle(), idle()];
    let mut sds = domain(&dst, &[(group(4, 0), idle4.clone()), (group(4, 0), two)]);
    let want = Imbalance {
        migration_type: MigrationType::Task,
        imbalance: 1,
    };
    assert_eq!(find_src_group(&dst, &mut sds, false), Some((1, want)));
    // With 3 idle there against 4 here: 4 ≤ 3 + 1, balanced.
    let one = vec![busy(1), idle(), idle(), idle()];
    let mut sds = domain(&dst, &[(group(4, 0), idle4), (group(4, 0), one)]);
    assert_eq!(find_src_group(&dst, &mut sds, false), None);
}

#[test]
fn prefer_sibling_spreads_tasks_evenly_over_child_domains() {
    // Groups are SMT cores (child flags: SD_SHARE_CPUCAPACITY | SD_PREFER_SIBLING), 2 CPUs
    // and 1 core each. Busiest runs 2 tasks (has spare? no: 2 = weight and util 2048·117 >
    // 2048·100: fully busy); local is idle. sibling_imbalance: same core counts, 2 − 0 = 2 >
    // 1: force; then by tasks: 2 >> 1 = 1.
    let flags = SD_SHARE_CPUCAPACITY | SD_PREFER_SIBLING;
    let core = GroupInfo {
        cores: 1,
        ..group(2, flags)
    };
    let dst = mc(CpuIdleType::Idle);
    let mut sds = domain(
        &dst,
        &[(core, vec![idle(), idle()]), (core, vec![busy(1), busy(1)])],
    );
    assert!(sds.prefer_sibling);
    let want = Imbalance {
        migration_type: MigrationType::Task,
        imbalance: 1,
    };
    assert_eq!(find_src_group(&dst, &mut sds, false), Some((1, want)));
}

#[test]
fn the_busiest_of_two_overloaded_groups_has_the_higher_avg_load() {
    let dst = mc(CpuIdleType::Idle);
    let sds = domain(
        &dst,
        &[
            (group(1, 0), vec![idle()]),
            (group(1, 0), vec![busy(3)]),
            (group(1, 0), vec![busy(5)]),
        ],
    );
    assert_eq!(sds.busiest.map(|(i, _)| i), Some(2));
    // Among fully busy groups avg_load is not computed (0 = 0): the later group replaces the
    // earlier unless the earlier is made of SMT siblings (the code, whatever its comment says).
    let one = |flags| (group(1, flags), vec![busy(1)]);
    let sds = domain(&dst, &[(group(1, 0), vec![idle()]), one(0), one(0)]);
    assert_eq!(sds.busiest.map(|(i, _)| i), Some(2));
    let sds = domain(
        &dst,
        &[
            (group(1, 0), vec![idle()]),
            one(SD_SHARE_CPUCAPACITY),
            one(0),
        ],
    );
    assert_eq!(sds.busiest.map(|(i, _)| i), Some(1));
}

mod hot {
    use super::super::stats::CpuIdleType;
    use crate::kernel::Kernel;
    use crate::sched::tests::{attr, fork_on, machine, T0};
    use crate::sched::uapi::Policy;

    const US: u64 = 1_000;

    /// smp:2: t0 and t1 forked on CPU 0 (then allowed everywhere), t0 running; at 1 ms t0
    /// yields to t1, which charges t0 up to then (exec_start = 1 ms). CPU 1, idle, balances
    /// `after` µs later: CPU 0's group has spare capacity but two tasks (the fresh tasks'
    /// util is half a CPU) against none, one CPU each: by tasks, one. The least recently
    /// picked queued task is t0. Returns the balancer and the tasks' ids.
    fn two_on_cpu0(after: u64) -> (crate::sched::Sched, crate::sched::tests::Recorder) {
        let (mut s, mut h) = machine("smp:2", Kernel::V6_12);
        for _ in 0..2 {
            let t = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[0]));
            s.set_cpus_allowed(t, vec![true, true], &mut h);
        }
        assert_eq!(s.rqs[0].curr, Some(0));
        h.now = T0 + 1000 * US;
        s.sched_yield(0, &mut h);
        assert_eq!(s.rqs[0].curr, Some(1));
        h.now += after * US;
        (s, h)
    }

    #[test]
    fn a_task_that_ran_within_the_migration_cost_stays_until_balancing_fails_enough() {
        // 200 µs after it ran, t0 is hot (< 500 µs). MC's cache_nice_tries is 1: the first
        // two passes fail (nr_balance_failed 0, then 1, not above 1), the third takes it.
        let (mut s, mut h) = two_on_cpu0(200);
        for failed in 0..2 {
            assert_eq!(s.topo.domains[1][0].nr_balance_failed, failed);
            assert_eq!(s.sched_balance_rq(1, 0, CpuIdleType::Idle, &mut h).0, 0);
        }
        assert_eq!(s.sched_balance_rq(1, 0, CpuIdleType::Idle, &mut h).0, 1);
        assert_eq!(
            (s.tasks[0].cpu, s.topo.domains[1][0].nr_balance_failed),
            (1, 0)
        );
    }

    #[test]
    fn a_task_that_ran_longer_ago_than_the_migration_cost_moves_at_once() {
        let (mut s, mut h) = two_on_cpu0(600);
        assert_eq!(s.sched_balance_rq(1, 0, CpuIdleType::Idle, &mut h).0, 1);
        assert_eq!(s.tasks[0].cpu, 1);
    }

    #[test]
    fn tasks_pinned_away_from_the_idle_cpu_stay() {
        // t0 allowed on CPU 0 only again: it cannot go (LBF_SOME_PINNED; no other CPU in CPU
        // 1's group to try instead). t1 is allowed but running: not all pinned, so a failure
        // (nr_balance_failed 1) with the interval at its minimum, 2 ms.
        let (mut s, mut h) = two_on_cpu0(600);
        s.set_cpus_allowed(0, vec![true, false], &mut h);
        assert_eq!(s.sched_balance_rq(1, 0, CpuIdleType::Idle, &mut h).0, 0);
        let sd = &s.topo.domains[1][0];
        assert_eq!(
            (s.tasks[0].cpu, sd.nr_balance_failed, sd.balance_interval),
            (0, 1, 2)
        );
        // Both pinned: LBF_ALL_PINNED, balanced at this level (no failure), interval doubled.
        s.set_cpus_allowed(1, vec![true, false], &mut h);
        assert_eq!(s.sched_balance_rq(1, 0, CpuIdleType::Idle, &mut h).0, 0);
        let sd = &s.topo.domains[1][0];
        assert_eq!((sd.nr_balance_failed, sd.balance_interval), (0, 4));
    }
}

mod pinned {
    use super::super::stats::CpuIdleType;
    use crate::kernel::Kernel;
    use crate::sched::tests::{attr, fork_on, machine, T0};
    use crate::sched::uapi::Policy;

    #[test]
    fn a_task_pinned_away_from_the_balancing_cpu_goes_to_another_of_its_group() {
        // hikey: PKG's groups are the clusters {0-3} and {4-7}. t0, t1, t2 forked on CPU 4
        // (t0 runs), then t1 allowed on CPUs 1 and 4. 1 ms later CPU 0, idle, balances PKG:
        // the busy cluster has spare capacity but more tasks per core than the idle one
        // (prefer_sibling), so it pulls by tasks. From the least recently picked: t1 may not
        // come to CPU 0 (LBF_SOME_PINNED) but may go to CPU 1 of the local group
        // (LBF_DST_PINNED, new_dst_cpu 1); t2 and t0 are pinned to CPU 4. The pass then tries
        // again for CPU 1 and moves t1 there.
        let (mut s, mut h) = machine("hikey", Kernel::V6_12);
        for _ in 0..3 {
            fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[4]));
        }
        let mask = (0..8).map(|c| c == 1 || c == 4).collect();
        s.set_cpus_allowed(1, mask, &mut h);
        assert_eq!((s.rqs[4].curr, s.tasks[1].cpu), (Some(0), 4));
        h.now = T0 + 1_000_000;
        assert_eq!(s.sched_balance_rq(0, 1, CpuIdleType::Idle, &mut h).0, 1);
        assert_eq!([s.tasks[0].cpu, s.tasks[1].cpu, s.tasks[2].cpu], [4, 1, 4]);
    }
}

mod all_pinned {
    use super::super::stats::CpuIdleType;
    use crate::kernel::Kernel;
    use crate::sched::tests::{attr, fork_on, machine, Recorder, T0};
    use crate::sched::uapi::Policy;
    use crate::sched::Sched;

    /// hikey: three tasks pinned to CPU 4 (0, 1, 2), two forked on CPU 5 then free (3, 4).
    fn loaded() -> (Sched, Recorder) {
        let (mut s, mut h) = machine("hikey", Kernel::V6_12);
        for cpu in [4, 4, 4, 5, 5] {
            fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[cpu]));
        }
        for t in [3, 4] {
            s.set_cpus_allowed(t, vec![true; 8], &mut h);
        }
        h.now = T0 + 1_000_000;
        (s, h)
    }

    #[test]
    fn a_cpu_whose_tasks_are_all_pinned_is_left_out_and_the_pass_redone() {
        // CPU 0, idle, balances PKG by tasks: the busiest queue is CPU 4 (three tasks), all
        // pinned there (LBF_ALL_PINNED), so the pass starts again without CPU 4 and takes
        // CPU 5's waiting task (4; 3, forked first, runs).
        let (mut s, mut h) = loaded();
        assert_eq!(s.rqs[5].curr, Some(3));
        assert_eq!(s.sched_balance_rq(0, 1, CpuIdleType::Idle, &mut h).0, 1);
        assert_eq!((s.tasks[3].cpu, s.tasks[4].cpu), (5, 0));
    }

    #[test]
    fn pinned_tasks_left_behind_mark_the_parent_group_imbalanced() {
        // CPU 7, idle, balances its cluster (MC): CPU 4 is busiest, its three tasks pinned
        // (some pinned, imbalance left): the parent level's group of CPU 7, {4-7}, becomes
        // sgc->imbalance, for PKG to classify as group_imbalanced. The redo then takes CPU
        // 5's waiting task; the mark stays, as only a balanced pass clears it.
        let (mut s, mut h) = loaded();
        let pkg = s.topo.domains[7][1].level;
        assert_eq!(s.sched_balance_rq(7, 0, CpuIdleType::Idle, &mut h).0, 1);
        assert!(s.topo.imbalanced.contains(&(pkg, 4)));
        let cluster = s.topo.domains[0][1]
            .groups
            .iter()
            .find(|g| g[0] == 4)
            .unwrap();
        assert_eq!(cluster[..], [4, 5, 6, 7]);
        let g = s.lb_group_info(0, 1, cluster);
        assert!(g.imbalance);
    }
}

mod intervals {
    use crate::kernel::Kernel;
    use crate::sched::tests::machine;

    #[test]
    fn a_busy_cpu_balances_busy_factor_times_less_often_less_a_jiffy() {
        // smp:n's MC domain: balance_interval starts at n ms (min_interval), max 2n ms.
        // HZ=250 (4 ms jiffies): busy, 2 ms × 16 = 32 ms = 8 jiffies, less one: 7; backed off
        // to 4 ms: 64 ms = 16 − 1 = 15; idle: 2 ms rounds up to 1 jiffy. smp:16 backed off:
        // 32 ms × 16 = 512 ms = 128 jiffies − 1, under max_load_balance_interval (HZ·16/10 =
        // 400). HZ=100: 32 ms is 3.2 jiffies, rounded up to 4, less one: 3.
        let (mut s, _) = machine("smp:2", Kernel::V6_12);
        let sd = s.topo.domains[0][0].clone();
        assert_eq!(
            (
                s.sd_balance_interval(&sd, true),
                s.sd_balance_interval(&sd, false)
            ),
            (7, 1)
        );
        let backed = crate::sched::topology::SchedDomain {
            balance_interval: sd.max_interval,
            ..sd.clone()
        };
        assert_eq!(s.sd_balance_interval(&backed, true), 15);
        let (s16, _) = machine("smp:16", Kernel::V6_12);
        let sd16 = &s16.topo.domains[0][0];
        let sd16 = crate::sched::topology::SchedDomain {
            balance_interval: sd16.max_interval,
            ..sd16.clone()
        };
        assert_eq!(s16.sd_balance_interval(&sd16, true), 127);
        s.feat.set("hz=100").unwrap();
        assert_eq!(s.sd_balance_interval(&sd, true), 3);
    }
}

mod overloaded {
    use super::super::stats::CpuIdleType;
    use crate::kernel::Kernel;
    use crate::sched::tests::{attr, fork_on, machine};
    use crate::sched::uapi::Policy;

    #[test]
    fn set_by_an_enqueue_that_makes_a_second_task_cleared_by_a_root_balance_finding_none() {
        // add_nr_running sets rd->overloaded when a CPU goes from one task to two; only a
        // balance pass over the root domain (smp:2's MC, its only level) writes it back, to
        // whether some CPU of the pass has more than one task (update_sd_lb_stats).
        let (mut s, mut h) = machine("smp:2", Kernel::V6_1);
        let t0 = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[0]));
        assert!(!s.overloaded.get(), "one task on CPU 0");
        let t1 = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[0]));
        assert!(s.overloaded.get(), "CPU 0 has its second task");
        // t1 goes to CPU 1 (its mask): each CPU has one task, the flag stays set
        s.set_cpus_allowed(t1, vec![false, true], &mut h);
        assert_eq!((s.tasks[t0 as usize].cpu, s.tasks[t1 as usize].cpu), (0, 1));
        assert!(s.overloaded.get(), "nothing but a root balance clears it");
        // CPU 1's pass over the root domain finds one task per CPU: cleared
        s.sched_balance_rq(1, 0, CpuIdleType::NotIdle, &mut h);
        assert!(!s.overloaded.get());
        // a third task on CPU 1 makes it two there: set again
        fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[1]));
        assert!(s.overloaded.get());
    }
}

#[test]
fn newidle_cost_is_the_max_and_decays_1_percent_a_second() {
    // update_newidle_cost: a bigger cost replaces the max; an HZ later (strictly after)
    // the max decays by 253/256: 1000 → 988 (integer division), then 988 → 976.
    let plat = crate::platform::load_builtin("smp:2").unwrap();
    let mut sd = crate::sched::topology::Topology::build(&plat, 0).domains[0][0].clone();
    assert!(!super::update_newidle_cost(&mut sd, 1000, 5, 250));
    assert_eq!(
        (sd.max_newidle_lb_cost, sd.last_decay_max_lb_cost),
        (1000, 5)
    );
    assert!(!super::update_newidle_cost(&mut sd, 0, 255, 250));
    assert!(super::update_newidle_cost(&mut sd, 0, 256, 250));
    assert_eq!(
        (sd.max_newidle_lb_cost, sd.last_decay_max_lb_cost),
        (988, 256)
    );
    assert!(!super::update_newidle_cost(&mut sd, 500, 300, 250));
    assert!(super::update_newidle_cost(&mut sd, 0, 507, 250));
    assert_eq!(sd.max_newidle_lb_cost, 976);
}

#[test]
fn avg_idle_moves_an_eighth_of_the_way_and_older_kernels_jump_to_the_cap() {
    use super::update_avg_idle;
    use crate::sched::features::NewidleGate::{Cost, MigrationCost};
    // (avg_idle, idle stretch, max_idle_balance_cost, gate) → avg_idle after, by hand:
    let cases = [
        // 1 ms, then a stretch of 0: 1,000,000 − 1,000,000/8.
        (1_000_000, 0, 500_000, Cost, 875_000),
        // 900 µs + (5 ms − 900 µs)/8 = 1,412,500, capped at twice the longest pass (1 ms) ...
        (900_000, 5_000_000, 500_000, Cost, 1_000_000),
        // ... or at twice a longer one (1.6 ms).
        (900_000, 5_000_000, 800_000, Cost, 1_412_500),
        // 100 µs and a 1 ms + 1 ns stretch: 3.13+ moves an eighth (900,001/8 truncates to
        // 112,500); ≤ 3.12 jumps to twice the migration cost, where exactly 1 ms is ordinary.
        (100_000, 1_000_001, 500_000, Cost, 212_500),
        (100_000, 1_000_001, 500_000, MigrationCost, 1_000_000),
        (100_000, 1_000_000, 500_000, MigrationCost, 212_500),
    ];
    for (avg, sample, max_cost, gate, after) in cases {
        assert_eq!(
            update_avg_idle(avg, sample, max_cost, gate),
            after,
            "{avg} {sample} {gate:?}"
        );
    }
}
