//! Each placement rule on a scenario derived by hand from fair.c.

use super::*;
use crate::kernel::Kernel;
use crate::platform::parse;
use crate::sched::class::SchedClass;
use crate::sched::fair::balance::nr_idle_scan;
use crate::sched::features::Features;
use crate::sched::task::TaskState;
use crate::sched::tests::{attr, fork_on, machine, Recorder, T0};
use crate::sched::uapi::Policy;

/// 4 cores × 2 SMT threads (CPU n and n + 4), one LLC: SMT and MC domains.
const SMT8: &str = r#"
name = "smt8"
description = "4 cores x 2 SMT, one LLC"
smt_sibling_stride = 4
[[freq_domain]]
name = "cpus"
cpus = "0-7"
capacity = 1024
llc = "package"
opps = [{ khz = 1000000 }]
"#;

fn smt8() -> (Sched, Recorder) {
    let plat = parse(SMT8, "smt8").unwrap();
    let s = Sched::new(&plat, Features::preset(Kernel::V6_12), false, T0);
    let h = Recorder {
        now: T0,
        ..Recorder::default()
    };
    (s, h)
}

/// Keep each of `cpus` busy with a task pinned there.
fn busy(s: &mut Sched, h: &mut Recorder, cpus: &[usize]) {
    for &c in cpus {
        fork_on(s, h, attr(Policy::Other), Some(&[c]));
        assert_eq!(s.rqs[c].curr.map(|t| s.tasks[t as usize].cpu), Some(c));
    }
}

/// A task that ran on `prev` and sleeps, free to go anywhere.
fn sleeper(s: &mut Sched, h: &mut Recorder, prev: usize) -> u32 {
    let p = fork_on(s, h, attr(Policy::Other), Some(&[prev]));
    s.deactivate(p, TaskState::Sleeping, h);
    s.set_cpus_allowed(p, vec![true; s.rqs.len()], h);
    s.tasks[p as usize].recent_used_cpu = prev;
    p
}

#[test]
fn select_idle_sibling_takes_an_idle_target_then_an_idle_prev_then_the_recent_cpu() {
    // smt8, CPUs 1 and 2 busy. Target 0 idle: itself. Target 1 busy, prev 2 busy, recent 3
    // idle and sharing the LLC: the recent CPU, which then becomes prev. Prev 3 idle: prev.
    let (mut s, mut h) = smt8();
    let p = sleeper(&mut s, &mut h, 2);
    busy(&mut s, &mut h, &[1, 2]);
    assert_eq!(s.select_idle_sibling(p, 2, 0, 0), (0, Placement::Affine));
    s.tasks[p as usize].recent_used_cpu = 3;
    assert_eq!(s.select_idle_sibling(p, 2, 1, 1), (3, Placement::Recent));
    assert_eq!(s.tasks[p as usize].recent_used_cpu, 2);
    assert_eq!(s.select_idle_sibling(p, 3, 1, 1), (3, Placement::Prev));
}

#[test]
fn an_idle_core_is_preferred_to_an_idle_smt_sibling_while_one_is_known() {
    // smt8, CPUs 1 and 2 busy (cores {1,5} and {2,6} half busy; {3,7}, {0,4} idle). Target 1,
    // prev 2. With has_idle_cores the scan from CPU 2 skips core {2,6} (noting 6 as idle)
    // and returns CPU 3, the first wholly idle core. Without it, select_idle_smt gives
    // prev's idle sibling 6 first.
    let (mut s, mut h) = smt8();
    let p = sleeper(&mut s, &mut h, 2);
    busy(&mut s, &mut h, &[1, 2]);
    s.topo.llc_shared(1).nr_idle_scan.set(8);
    s.topo.llc_shared(1).has_idle_cores.set(true);
    assert_eq!(
        s.select_idle_sibling(p, 2, 1, 1),
        (3, Placement::IdleSibling)
    );
    assert!(s.topo.llc_shared(1).has_idle_cores.get());
    s.topo.llc_shared(1).has_idle_cores.set(false);
    assert_eq!(
        s.select_idle_sibling(p, 2, 1, 1),
        (6, Placement::IdleSibling)
    );
}

#[test]
fn going_idle_with_every_sibling_idle_marks_the_llc_as_having_an_idle_core() {
    let (mut s, mut h) = smt8();
    busy(&mut s, &mut h, &[1, 5]);
    s.topo.llc_shared(0).has_idle_cores.set(false);
    s.update_idle_core(5); // CPU 1, its sibling, still runs
    assert!(!s.topo.llc_shared(0).has_idle_cores.get());
    s.update_idle_core(4); // CPU 0 idle
    assert!(s.topo.llc_shared(0).has_idle_cores.get());
}

#[test]
fn the_llc_scan_stops_after_nr_idle_scan_cpus() {
    // smt8, every CPU busy but 7, no idle core known (CPU 1 going idle set has_idle_cores
    // while its sibling was idle). Target = prev = 1 (its sibling 5 busy). The scan goes
    // 2, 3, 4, 5, 6, 7 with nr = nr_idle_scan + 1 decremented before each: CPU 7, the
    // sixth, is reached with nr still above zero iff nr_idle_scan >= 6. Zero: no scan.
    let (mut s, mut h) = smt8();
    let p = sleeper(&mut s, &mut h, 1);
    busy(&mut s, &mut h, &[0, 1, 2, 3, 4, 5, 6]);
    for (scan, want) in [(0, 1), (5, 1), (6, 7), (8, 7)] {
        s.topo.llc_shared(1).has_idle_cores.set(false);
        s.topo.llc_shared(1).nr_idle_scan.set(scan);
        let got = s.select_idle_sibling(p, 1, 1, 1).0;
        assert_eq!(got, want, "nr_idle_scan {scan}");
    }
    let mut f = s.feat.clone();
    f.set_feature("NO_SIS_UTIL").unwrap();
    s.feat = f;
    s.topo.llc_shared(1).nr_idle_scan.set(0);
    assert_eq!(
        s.select_idle_sibling(p, 1, 1, 1).0,
        7,
        "no budget without SIS_UTIL"
    );
}

#[test]
fn the_scan_depth_falls_with_the_square_of_the_llc_utilization() {
    // update_idle_cpu_scan, 8 CPUs, imbalance_pct 117: x = sum_util / 8;
    // y = 1024 - min(1024, x² · 117² / (10000 · 1024)); nr = y · 8 / 1024.
    // x = 0: 8. x = 512: 512² · 13689 / 10240000 = 350 -> (674 · 8) / 1024 = 5.
    // x = 876 (> 85.5%): 1025 -> capped at 1024 -> 0.
    for (x, want) in [(0, 8), (512, 5), (876, 0)] {
        assert_eq!(nr_idle_scan(8 * x, 8, 117), want, "x = {x}");
    }
}

#[test]
fn wake_wide_needs_llc_size_flips_on_one_side_and_that_factor_more_on_the_other() {
    // smp:4: sd_llc_size 4. Waker (idle task of CPU 0) and wakee flips.
    let (mut s, mut h) = machine("smp:4", Kernel::V6_12);
    let p = sleeper(&mut s, &mut h, 1);
    for (waker, wakee, wide) in [(16, 4, true), (15, 4, false), (16, 3, false), (4, 16, true)] {
        s.rqs[0].idle_wakee.flips = waker;
        s.tasks[p as usize].wakee.flips = wakee;
        assert_eq!(s.wake_wide(p, 0), wide, "{waker} / {wakee}");
    }
}

#[test]
fn record_wakee_counts_a_flip_per_change_of_wakee_and_halves_once_a_second() {
    // HZ 250: a jiffy is 4 ms. The waker is CPU 0's idle task.
    let (mut s, mut h) = machine("smp:2", Kernel::V6_12);
    let (a, b) = (sleeper(&mut s, &mut h, 1), sleeper(&mut s, &mut h, 1));
    s.rqs[0].idle_wakee = Wakee::default();
    let jiffy = s.tun.tick_ns;
    s.rqs[0].idle_wakee.decay_ts = T0 / jiffy;
    for p in [a, a, b, a, b] {
        s.record_wakee(p, 0, T0);
    }
    assert_eq!(s.rqs[0].idle_wakee.flips, 4, "a, b, a, b");
    // 251 jiffies later (after decay_ts + HZ): 4 >> 1, then b again is no flip.
    s.record_wakee(b, 0, T0 + 251 * jiffy);
    assert_eq!(s.rqs[0].idle_wakee.flips, 2);
}

#[test]
fn wake_affine_weight_moves_the_task_when_this_cpu_is_lighter_by_the_bias_margin() {
    // smp:2, MC imbalance_pct 117 (WA_BIAS: prev weighs 100 + 17/2 = 108 against 100).
    // The task's load 1024 on prev: task_h_load = 1024 · L_prev / (L_prev + 1).
    // L_this = 1024, L_prev = 2048: h = 1023; this = (1024 + 1023) · 100 · 1024 =
    // 209612800; prev = (2048 − 1023) · 108 · 1024 = 113356800: prev stays.
    // L_prev = 4096: h = 1023; prev = 3073 · 108 · 1024 = 339849216 > this: this CPU.
    let (mut s, mut h) = machine("smp:2", Kernel::V6_12);
    let p = sleeper(&mut s, &mut h, 1);
    let se = s.tasks[p as usize].se as usize;
    for (l_prev, want) in [(2048, None), (4096, Some(0))] {
        s.ses[se].avg.load_avg = 1024;
        s.cfs_rqs[0].avg.load_avg = 1024;
        s.cfs_rqs[1].avg.load_avg = l_prev;
        s.cfs_rqs[1].last_h_load_update = u64::MAX; // recompute h_load
        assert_eq!(s.wake_affine_weight(0, p, 0, 1, false), want, "{l_prev}");
    }
}

#[test]
fn a_sync_wakeup_from_a_cpu_running_only_the_waker_stacks_on_it() {
    // smp:2: the waker runs alone on CPU 0, the wakee's prev CPU 1 is busy. wake_affine_idle:
    // sync and one task on CPU 0 -> CPU 0; select_idle_sibling finds CPU 0 busy, prev busy,
    // and no scan budget at boot (nr_idle_scan 0): the waker's CPU.
    let (mut s, mut h) = machine("smp:2", Kernel::V6_12);
    let p = sleeper(&mut s, &mut h, 1);
    busy(&mut s, &mut h, &[0, 1]);
    let sync = Wake {
        cpu: 0,
        flags: WF_TTWU | WF_SYNC,
        now: T0,
    };
    assert_eq!(s.select_task_rq_fair(p, 1, sync), (0, Placement::Affine));
    let plain = Wake {
        flags: WF_TTWU,
        ..sync
    };
    assert_eq!(s.select_task_rq_fair(p, 1, plain), (1, Placement::Prev));
    let current = Wake {
        flags: WF_TTWU | WF_CURRENT_CPU,
        ..sync
    };
    assert_eq!(
        s.select_task_rq_fair(p, 1, current),
        (0, Placement::CurrentCpu)
    );
}

#[test]
fn a_fork_goes_to_the_idlest_group_then_its_first_idle_cpu() {
    // hikey: clusters 0-3 and 4-7 (MC each, PKG both). CPUs 0, 1, 2 and 4 busy; a fork from
    // CPU 0 starts at PKG: local {0-3} has 1 idle CPU, {4-7} has 3, both have spare:
    // {4-7}. Its CPUs share one idle state (WFI): the first idle one, 5. Then MC of CPU 5:
    // its own group {5} is idle, as idle as {6} and {7}: stay on 5.
    let (mut s, mut h) = machine("hikey", Kernel::V6_12);
    busy(&mut s, &mut h, &[0, 1, 2, 4]);
    let id = s.tasks.len() as u32;
    assert!(s.wake_up_new_task(2000, "new".into(), &attr(Policy::Other), None, None, &mut h));
    assert_eq!(s.tasks[id as usize].cpu, 5);
    assert_eq!(
        s.tasks[id as usize].stats.placements[Placement::SlowPath as usize],
        1
    );
    // Another fork from CPU 0: {4-7} now has 2 idle CPUs, still more than {0-3}'s one.
    assert!(s.wake_up_new_task(2001, "new".into(), &attr(Policy::Other), None, None, &mut h));
    assert_eq!(s.tasks[id as usize + 1].cpu, 6);
}

/// smp:2 with the bias on under `variant`, and a task that slept on CPU 1 (so CPU 0's load
/// holds none of it).
fn biased(variant: &str) -> (Sched, u32) {
    let (mut s, mut h) = machine("smp:2", Kernel::V6_12);
    let p = sleeper(&mut s, &mut h, 1);
    let mut f = s.feat.clone();
    f.set_feature("WAKEUP_BIAS_PREV_IDLE").unwrap();
    f.set(&format!("fair.prev_idle_bias={variant}")).unwrap();
    s.feat = f;
    (s, p)
}

#[test]
fn each_almost_idle_definition_accepts_at_its_threshold_and_refuses_above() {
    // CPU 0's root cfs_rq load_avg: the RFC accepts ≤ LOAD_AVG_MAX / 1000 = 47742 / 1000 =
    // 47, Chen Yu's ALMOST_IDLE_CPU_LOAD ≤ 50. The seed's nice −20 hog (load_avg 88763) is
    // refused by both, and accepted by `util_avg ≤ 10 · capacity` at full utilization
    // (1024 ≤ 10240: every CPU passes).
    for (variant, load, util, accept) in [
        ("load_avg_max", 47, 0, true),
        ("load_avg_max", 48, 0, false),
        ("almost_idle_load", 50, 0, true),
        ("almost_idle_load", 51, 0, false),
        ("almost_idle_load", 88763, 1024, false),
        ("util_avg", 88763, 1024, true),
    ] {
        let (mut s, p) = biased(variant);
        (s.cfs_rqs[0].avg.load_avg, s.cfs_rqs[0].avg.util_avg) = (load, util);
        assert_eq!(s.almost_idle_cpu(0, p, 0), accept, "{variant} at {load}");
    }
    // load_sum ≤ 10 · get_pelt_divider = 10 · (47742 − 1024 + period_contrib).
    let (mut s, p) = biased("load_sum");
    s.cfs_rqs[0].avg.period_contrib = 100;
    for (sum, accept) in [(10 * 46818, true), (10 * 46818 + 1, false)] {
        s.cfs_rqs[0].avg.load_sum = sum;
        assert_eq!(s.almost_idle_cpu(0, p, 0), accept, "load_sum {sum}");
    }
    // Off, nothing is almost idle.
    let (mut s, p) = biased("almost_idle_load");
    s.feat.set_feature("NO_WAKEUP_BIAS_PREV_IDLE").unwrap();
    s.cfs_rqs[0].avg.load_avg = 0;
    assert!(!s.almost_idle_cpu(0, p, 0));
}

#[test]
fn util_fits_capacity_adds_the_task_to_the_runnable_estimate_against_80_percent() {
    // fits_capacity(util_est + task, scale_rt_capacity): x · 1280 < cap · 1024.
    // 500 + 300 = 800: 1024000 < 1048576. 520 + 300 = 820: 1049600, refused. With RT using
    // 100 of CPU 0, the capacity left is 924: 800 · 1280 > 924 · 1024 = 946176, refused.
    let (mut s, _) = biased("util_fits_capacity");
    s.cfs_rqs[0].util_est = 500;
    assert!(s.fits_remaining_capacity(300, 0));
    s.cfs_rqs[0].util_est = 520;
    assert!(!s.fits_remaining_capacity(300, 0));
    s.cfs_rqs[0].util_est = 500;
    s.rqs[0].avg_rt.util_avg = 100;
    assert!(!s.fits_remaining_capacity(300, 0));
}

#[test]
fn the_bias_keeps_a_wakeup_on_an_almost_idle_busy_prev() {
    // smp:2, prev CPU 1 runs a task of load 40 (≤ 47), the waker's CPU 0 is idle: without
    // the bias, wake_affine_idle sends the task to the idle CPU 0; with the RFC's bias
    // prev counts as idle, and select_idle_sibling accepts it as the bias's choice.
    let (mut s, p) = biased("load_avg_max");
    let mut h = Recorder {
        now: T0,
        ..Recorder::default()
    };
    busy(&mut s, &mut h, &[1]);
    s.cfs_rqs[1].avg.load_avg = 40;
    let w = Wake {
        cpu: 0,
        flags: WF_TTWU,
        now: T0,
    };
    assert_eq!(s.select_task_rq_fair(p, 1, w), (1, Placement::Bias));
    s.feat.set_feature("NO_WAKEUP_BIAS_PREV_IDLE").unwrap();
    assert_eq!(s.select_task_rq_fair(p, 1, w), (0, Placement::Affine));
}

/// hikey960 (A53s 0–3 of capacity 462, A73s 4–7 of 1024) under `governor`.
fn hikey960(governor: &str) -> (Sched, Recorder) {
    let plat = crate::platform::load_builtin("hikey960").unwrap();
    let mut f = Features::preset(Kernel::V6_12);
    f.set(&format!("cpufreq.governor={governor}")).unwrap();
    let s = Sched::new(&plat, f, false, T0);
    let h = Recorder {
        now: T0,
        ..Recorder::default()
    };
    (s, h)
}

/// A task asleep after running on `prev`, its util_avg and util_est `util` (still counted
/// in prev's util_avg, as a sleeper's blocked utilization is), on an otherwise idle machine.
fn eas_sleeper(s: &mut Sched, h: &mut Recorder, prev: usize, util: u64) -> u32 {
    let p = sleeper(s, h, prev);
    for q in &mut s.cfs_rqs {
        (q.avg.util_avg, q.avg.runnable_avg, q.util_est) = (0, 0, 0);
    }
    s.cfs_rqs[prev].avg.util_avg = util;
    let se = &mut s.ses[s.tasks[p as usize].se as usize];
    (se.avg.util_avg, se.avg.runnable_avg) = (util, 0);
    se.util_est = crate::sched::util_est::UtilEst::Ewma(util as u32);
    p
}

#[test]
fn eas_is_on_only_where_the_kernel_builds_perf_domains() {
    // build_perf_domains: schedutil on every policy, asymmetric capacities, no SMT, an EM,
    // sched_energy_aware. The kernel's list is last domain first: a73, then a53.
    let (s, _) = hikey960("schedutil");
    let pds: Vec<&[usize]> = s.pd.iter().map(|pd| pd.cpus.as_slice()).collect();
    assert_eq!(pds, [&[4, 5, 6, 7][..], &[0, 1, 2, 3][..]]);
    assert!(hikey960("performance").0.pd.is_empty());
    let plat = crate::platform::load_builtin("hikey960").unwrap();
    let mut f = Features::preset(Kernel::V6_12);
    f.set("cpufreq.governor=schedutil").unwrap();
    f.set("sched.energy_aware=off").unwrap();
    assert!(Sched::new(&plat, f.clone(), false, T0).pd.is_empty());
    let plat = parse(SMT8, "smt8").unwrap(); // symmetric, SMT
    f.set("sched.energy_aware=on").unwrap();
    assert!(Sched::new(&plat, f, false, T0).pd.is_empty());
}

#[test]
fn eas_puts_a_small_task_on_a_little_cpu() {
    // Util 100, prev CPU 4 (A73), all idle. Every candidate's util is 100 and fits.
    // A73 domain: CPUs 5–7 have no more spare capacity (924) than prev, so only prev is
    // priced: max_util = 1.25 · 100 = 125 ≤ performance 391 of 903 MHz (1024 · 903/2362),
    // cost 10 · 404000 / 391 = 10332, delta 10332 · 100 = 1033200 over an empty base.
    // A53 domain: CPU 0 (first with spare 362): 125 ≤ 133 (462 · 533/1844), cost
    // 10 · 87000 / 133 = 6541, delta 654100 < 1033200: CPU 0.
    let (mut s, mut h) = hikey960("schedutil");
    let p = eas_sleeper(&mut s, &mut h, 4, 100);
    assert_eq!(s.find_energy_efficient_cpu(p, 4, 4), Some(0));
    let w = Wake {
        cpu: 4,
        flags: WF_TTWU,
        now: T0,
    };
    assert_eq!(s.select_task_rq_fair(p, 4, w), (0, Placement::Eas));
}

#[test]
fn eas_puts_a_big_task_on_a_big_cpu_and_stands_aside_when_overutilized() {
    // Util 600 does not fit an A53 (600 · 1280 = 768000 ≥ 462 · 1024 = 473088), so no A53
    // is a candidate, prev CPU 0 included (prev_fits stays −1); CPU 4, the first A73 with
    // the most spare capacity, fits: best_fits 1 > −1.
    let (mut s, mut h) = hikey960("schedutil");
    let p = eas_sleeper(&mut s, &mut h, 0, 600);
    assert_eq!(s.find_energy_efficient_cpu(p, 0, 0), Some(4));
    // CPU 6, running a task, at util 900 is overutilized (900 · 1280 ≥ 1024 · 1024): its
    // tick raises the root domain's flag, and the wakeup takes the ordinary path.
    busy(&mut s, &mut h, &[6]);
    assert!(!s.is_rd_overutilized()); // a new task's first enqueue does not count
    s.cfs_rqs[6].avg.util_avg = 900;
    assert!(s.cpu_overutilized(6) && !s.cpu_overutilized(5));
    let curr = s.rqs[6].curr.unwrap();
    s.on_rq(6, &mut h, |rq, env| Class::Fair.task_tick(rq, env, curr)); // task_tick_fair
    assert!(s.is_rd_overutilized());
    let w = Wake {
        cpu: 0,
        flags: WF_TTWU,
        now: T0,
    };
    assert_ne!(s.select_task_rq_fair(p, 0, w).1, Placement::Eas);
    // Without EAS the flag always reads as set and CPUs are never overutilized.
    let (s, _) = hikey960("performance");
    assert!(s.is_rd_overutilized() && !s.cpu_overutilized(6));
}

#[test]
fn a_task_allowed_one_cpu_is_placed_without_its_class_and_flips_no_wakee() {
    // smp:2, within one jiffy (no wakee decay). k1, k2, m1 and m2 each run on CPU 1 and
    // sleep there; k1 and k2 may run there only (a per-CPU kernel thread's affinity), m1
    // and m2 anywhere. w, running on CPU 0, wakes k1, m1, k2, m2. select_task_rq asks the
    // fair class only for m1 and m2 (nr_cpus_allowed 2): record_wakee counts w's changes
    // of wakee over their wakeups alone, two (none -> m1 -> m2); were k1's and k2's
    // counted, four. k1 and k2 go to their one CPU, their previous: `prev`, not `affine`.
    let (mut s, mut h) = machine("smp:2", Kernel::V6_12);
    let mut asleep = |free: bool| {
        let p = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[1]));
        s.deactivate(p, TaskState::Sleeping, &mut h);
        if free {
            s.set_cpus_allowed(p, vec![true, true], &mut h);
        }
        p
    };
    let (k1, m1, k2, m2) = (asleep(false), asleep(true), asleep(false), asleep(true));
    let w = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[0]));
    assert_eq!(s.rqs[0].curr, Some(w));
    assert_eq!(s.tasks[k1 as usize].nr_cpus_allowed, 1);
    for p in [k1, m1, k2, m2] {
        h.now += 1_000;
        assert!(s.try_to_wake_up(p, 0, 0, &mut h));
    }
    assert_eq!(s.tasks[w as usize].wakee.flips, 2);
    for k in [k1, k2] {
        let placed = &s.tasks[k as usize].stats.placements;
        assert_eq!(placed[Placement::Prev as usize], 1);
        assert_eq!(placed[Placement::Affine as usize], 0);
    }
}
