//! What tells the newer presets apart, each against the preset before it (docs/kernels.md).

use super::{alone, build_for, build_with, preset, run, Features};
use crate::kernel::Kernel;
use crate::sched::fair::protect_slice::ProtectSlice;
use crate::sched::fair::WakeupPreempt;
use crate::sched::preempt::Preempt;

/// Two nice-0 hogs on one CPU for 1 ms. Each starts with half a base slice to its deadline
/// (PLACE_DEADLINE_INITIAL: 0.35 ms on one CPU). Under 7.3 the hrtick ends the first one's
/// slice there and the second runs from 0.35 ms; under 6.18 the slice ends at the first tick
/// past it, 4 ms (HZ=250), after the run: the second never runs.
#[test]
fn hrtick_ends_a_slice_at_its_deadline_not_at_the_tick() {
    const TWO_HOGS: &str = r#"{"global": {"duration": 1}, "tasks": {
        "h": {"instance": 2, "loop": -1, "run": 100000}}}"#;
    let runs = |k| {
        let mut s = build_for(TWO_HOGS, "smp:1", k, 1_000_000);
        s.run(|_, _| true).unwrap();
        let run = |id| s.sched().task(id).stats.run_ns;
        (run(0), run(1))
    };
    let (first, second) = runs(Kernel::V7_3);
    assert!(
        first >= 350_000 && second >= 350_000 - 2,
        "{first} {second}"
    );
    // The first runs from the switch 1 ns after the start.
    assert_eq!(runs(Kernel::V6_18), (1_000_000 - 1, 0));
}

/// The same two hogs, both on CPU 0 of a two-CPU machine (idealized: no costs), under 7.3.
/// On hardware the hrtick's interrupt comes on its expiry: the first runs half the 1.4 ms
/// slice of two CPUs, and the reschedule's nanosecond. qemu-tcg:2 takes it as late as a
/// tick's, a draw in [0, 200 µs) plus the CPU's in [0, 30 µs): the first runs on meanwhile.
#[test]
fn an_emulated_vcpu_takes_the_hrtick_as_late_as_a_tick() {
    const PINNED: &str = r#"{"global": {"duration": 1}, "tasks": {
        "h": {"instance": 2, "cpus": [0], "loop": -1, "run": 100000}}}"#;
    let first = |platform| {
        let mut s = build_with(PINNED, platform, alone(Kernel::V7_3), 1_000_000);
        s.run(|_, _| true).unwrap();
        s.sched().task(0).stats.run_ns
    };
    assert_eq!(first("smp:2"), 700_001);
    let late = first("qemu-tcg:2") - 700_001;
    assert!(late > 0 && late < 230_000, "{late}");
}

/// Three tasks of 1 ms every 2 ms on two CPUs: a CPU going idle finds the other overloaded
/// now and then and balances newly idle. 6.18 (NI_RANDOM) starts each domain at sd_init's
/// ratio of 512/1024: while fewer than 512 passes have been asked for, about (512 + 1) / 1024
/// of them run, against every one under 6.12.
#[test]
fn ni_random_runs_about_half_the_first_newly_idle_passes() {
    const PERIODIC: &str = r#"{"global": {"duration": 1}, "tasks": {
        "p": {"instance": 3, "loop": -1, "run": 1000, "sleep": 1000}}}"#;
    let passes = |k| {
        let s = run(PERIODIC, "smp:2", k);
        let doms = &s.sched().topology().domains;
        let n: u32 = doms.iter().flatten().map(|sd| sd.stats.lb_count[2]).sum();
        let asked: u32 = (doms.iter().flatten())
            .map(|sd| sd.newidle.call - 512)
            .sum();
        (n, asked)
    };
    let (all, _) = passes(Kernel::V6_12);
    let (some, asked) = passes(Kernel::V6_18);
    assert!(all > 100 && asked < 2 * 512, "{all} passes, {asked} asked");
    let ran = some as f64 / asked as f64;
    assert!((ran - 513.0 / 1024.0).abs() < 0.1, "{some} of {asked}");
}

/// A nice-2 hog asking a 20 ms slice (`l`, rt-app's dl-runtime as a custom slice; weight
/// 655, so a ms of its run is 1024/655 = 1.563 ms of vruntime) and a nice-0 hog of the base
/// slice (`s`, 0.7 ms on one CPU) on one CPU for 14 ms at HZ=250. Both start at v0 with half
/// their slice to their deadline (PLACE_DEADLINE_INITIAL): `s` at v0 + 0.35 ms, `l` at
/// v0 + 15.63 ms (10 ms of its run), so `s` runs first, from 1 ns, to the 4 ms tick (its
/// request served at 0.35 ms, seen there). Then `l` (v0, eligible; `s` at v0 + 4 ms past
/// V = v0 + 2.44 ms):
/// - 6.12 protects `l` until its deadline, 10 ms of its run: it runs to the 16 ms tick, so
///   `l` 10 ms and `s` 4 ms;
/// - 6.18 protects it for the shortest queued slice, 0.7 ms of its run. At the 8 ms tick that
///   has passed and `update_curr` reschedules: `l` at v0 + 6.25 ms, `s` at v0 + 4 ms, V =
///   v0 + 4.88 ms, so `s` (eligible, deadline v0 + 4.7 ms) runs to the 12 ms tick, where it
///   is at v0 + 8 ms past V = v0 + 7.32 ms and `l` runs again: `l` 6 ms, `s` 8 ms.
#[test]
fn run_to_parity_stops_at_the_shortest_queued_slice_from_6_18() {
    let runs = |k| long_and_short(preset(k), 2, 14_000_000);
    assert_near(runs(Kernel::V6_12), [10_000_000, 4_000_000]);
    assert_near(runs(Kernel::V6_18), [6_000_000, 8_000_000]);
}

/// The same pair, both nice 0, under 7.3, whose HRTICK ends each pick's slice at its
/// deadline: `l` starts at v0 + 10 ms; `s` runs from 1 ns to 0.35 ms; then `s` is
/// ineligible (V = v0 + 0.175 ms) and `l` runs.
/// - Protected until its deadline (`fair.protect_slice=deadline`), `l` runs to the end.
/// - 7.3 protects `l` while it is eligible against `s` alone, up to v_s + 1 = v0 + 0.35 ms:
///   at the 4 ms tick it has passed; `s` (v0 + 0.35, deadline v0 + 1.05; V = v0 + 2 ms)
///   runs, its hrtick at 4.7 ms serves its request and picks it again (deadline v0 + 1.75),
///   to the 8 ms tick, where it is at v0 + 4.35 ms and `l` (v0 + 3.65) is the eligible one.
///   `l` runs 0.35 to 4 ms and 8 to 10 ms: 5.65 ms.
#[test]
fn under_7_3_a_longer_slice_is_protected_while_it_is_eligible() {
    let runs = |form| {
        let mut f = preset(Kernel::V7_3);
        f.protect_slice = form;
        long_and_short(f, 0, 10_000_000)
    };
    assert_near(runs(ProtectSlice::Deadline), [9_650_000, 350_000]);
    assert_near(runs(ProtectSlice::Ineligible), [5_650_000, 4_350_000]);
}

/// A deadline task asking 1.5 ms every 10 ms that never sleeps, alone on one CPU for 10 ms
/// at HZ=250: it runs from 1 ns and is throttled where its budget is seen spent. Under 6.18
/// that is the 4 ms tick (an overrun of 2.5 ms, repaid at the replenishment); under 7.3
/// HRTICK_DL ends it on its remaining runtime, at 1.5 ms.
#[test]
fn hrtick_dl_ends_a_deadline_budget_on_its_runtime_not_at_the_tick() {
    const DL_HOG: &str = r#"{"global": {"duration": 1}, "tasks": {"d": {"policy": "SCHED_DEADLINE",
        "dl-runtime": 1500, "dl-period": 10000, "loop": -1, "run": 100000}}}"#;
    let ran = |k| {
        let mut s = build_for(DL_HOG, "smp:1", k, 10_000_000);
        s.run(|_, _| true).unwrap();
        [s.sched().task(0).stats.run_ns]
    };
    assert_near(ran(Kernel::V6_18), [4_000_000]);
    assert_near(ran(Kernel::V7_3), [1_500_000]);
}

/// A hog `h` on CPU 1; `w`, also on CPU 1, asks a 0.1 ms custom slice, is suspended, and
/// then runs 50 µs (within its slice: its whole wait is its wakeup's); `k`
/// on CPU 0 sleeps 5 ms, woken at 5.05 ms (a fair task's 50 µs timer slack), and resumes
/// it, a remote wakeup (CPU 1 is busy and shares CPU 0's cache: no wake list). `w` wakes
/// with lag 0 (DELAY_ZERO) at the average vruntime, so it is eligible, and shorter: it
/// preempts `h` (PREEMPT_SHORT). How long it waits for CPU 1:
/// - full preemption: the IPI, at once;
/// - lazy, without HRTICK: TIF_NEED_RESCHED_LAZY sends none, and CPU 1 takes no interrupt
///   until its tick at 8 ms (HZ=250), which promotes it: 2.95 ms;
/// - lazy with HRTICK (the 7.3 preset): `w` is CPU 1's second fair task, so its enqueue arms
///   the hrtick of `h`'s slice, on CPU 1 by an IPI, whose return reschedules: at once.
#[test]
fn under_lazy_preemption_a_remote_wakeup_waits_for_the_cpus_next_interrupt() {
    const REMOTE: &str = r#"{"global": {"duration": 1}, "tasks": {
        "h": {"cpus": [1], "loop": -1, "run": 100000},
        "w": {"cpus": [1], "loop": 1, "suspend": "w", "run": 50, "dl-runtime": 100},
        "k": {"cpus": [0], "loop": 1, "sleep": 5000, "resume": "w"}}}"#;
    let waited = |preempt, hrtick: &str| {
        let mut f = preset(Kernel::V7_3);
        f.rtapp_custom_slice = true;
        f.preempt = preempt;
        f.set_feature(hrtick).unwrap();
        let mut s = build_with(REMOTE, "smp:2", f, 10_000_000);
        s.run(|_, _| true).unwrap();
        [s.sched().task(1).stats.wait_ns]
    };
    assert_near(waited(Preempt::Full, "NO_HRTICK"), [0]);
    assert_near(waited(Preempt::Lazy, "NO_HRTICK"), [2_950_000]);
    assert_near(waited(Preempt::Lazy, "HRTICK"), [0]);
}

/// A hog `p` alone on one CPU forks `c` after 0.4 ms, under 7.3 (HZ=250, HRTICK). `p` began
/// at v0 with half a slice to its deadline, v0 + 0.35 ms, and protection to there; the
/// fork's enqueue sees it served and asks a new one, to v0 + 1.1 ms. `c` is placed at V =
/// v0 + 0.4 ms with half a slice, deadline v0 + 0.75 ms: eligible with the earlier
/// deadline, and `p` no longer protected.
/// - `pick` (6.6 to 6.18): EEVDF picks `c`, which preempts at once;
/// - `rework` (7.x): a fork does not preempt; `c` waits for `p`'s hrtick at the end of its
///   request, 0.7 ms (`p` at v0 + 1.1 ms past V = v0 + 0.75 ms).
#[test]
fn from_7_3_a_fork_does_not_preempt_its_parent() {
    const FORK: &str = r#"{"global": {"duration": 1}, "tasks": {
        "p": {"loop": 1, "run": 400, "fork": "c", "run2": 100000},
        "c": {"instance": 0, "loop": 1, "run": 100}}}"#;
    let waited = |form| {
        let mut f = preset(Kernel::V7_3);
        f.wakeup_preempt = form;
        let mut s = build_with(FORK, "smp:1", f, 2_000_000);
        s.run(|_, _| true).unwrap();
        [s.sched().task(1).stats.wait_ns]
    };
    assert_near(waited(WakeupPreempt::Pick), [0]);
    assert_near(waited(WakeupPreempt::Rework), [700_000]);
}

#[test]
fn from_6_10_a_capped_policy_lowers_its_cpus_capacity() {
    // hikey960 under the performance governor, the A73 policy's scaling_max_freq at
    // 1421000 kHz of its 2362000: it runs at 1421000 (the highest OPP the limit allows)
    // under every kernel. From 6.10 (cpufreq_update_pressure) the limit also takes
    // 1024 - 1024 * 1421000 / 2362000 = 1024 - 616 = 408 off each A73's capacity, which
    // its next update_cpu_capacity (a periodic balance: one hog a CPU keeps them busy) makes
    // capacity_of: 616 under 6.12; 1024 under 6.6. The A53s (462) are not limited.
    let json = r#"{"global": {"duration": 1}, "tasks": {"hog": {"instance": 8, "run": 1000000}}}"#;
    for (kernel, big) in [(Kernel::V6_6, 1024), (Kernel::V6_12, 616)] {
        let mut f = preset(kernel);
        f.set("cpufreq.scaling_max_freq.a73=1421000").unwrap();
        let mut s = build_with(json, "hikey960", f, 100_000_000);
        s.run(|_, _| true).unwrap();
        let caps: Vec<u64> = (0..8).map(|c| s.sched().cpu_rq(c).cpu_capacity).collect();
        assert_eq!(caps, [[462; 4], [big; 4]].concat(), "{kernel:?}");
        assert_eq!(s.eng.cpufreq.policies[1].cur, 1421000, "{kernel:?}");
    }
}

/// hikey960 under the performance governor, a hog on each CPU, the A73 policy capped at
/// 1421000 kHz of its 2362000 from 100 ms and the cap lifted at 300 ms, by its cooling
/// device or by a hardware throttle. Under every kernel the A73s run at 1421000 from 100 ms
/// (the governor's `limits`) and at 2362000 again from 300 ms. The capacity the cap takes
/// away is 1024 − 1024 · 1421 / 2362 = 1024 − 616 = 408 (in MHz ≤6.9, kHz from 6.10: the
/// same). A busy A73 refreshes `capacity_of` (`update_cpu_capacity`) at its MC-level
/// periodic balances, at most 128 ms apart (an 8 ms `max_interval` × busy_factor 16), so at
/// least once in (171, 299] ms:
/// - the cooling device from 6.10 (cpufreq pressure) takes it off at once: `capacity_of` is
///   616 at 299 ms;
/// - ≤6.9 (thermal pressure, either source) and the hardware's from 6.10 (hw pressure) as a
///   PELT average of the time it holds, 408 · (1 − y^t) after t ms (y^32 = ½), updated at
///   each 4 ms tick: 402 at the tick at 296 ms; `capacity_of` takes off what it was at that
///   balance, 320 to 402 (t from 71 to 199): 622 to 704. After the lift the average
///   decays: 402.5 at 300 ms, · y^96 = 50 at the tick at 396 ms.
#[test]
fn a_cap_is_cpufreq_pressure_from_6_10_and_an_averaged_pressure_before_or_from_hardware() {
    let json = r#"{"global": {"duration": 1}, "tasks": {"hog": {"instance": 8, "run": 1000000}}}"#;
    let run = |kernel, source, ms: u64| {
        let mut f = preset(kernel);
        let caps = "a73=1421000@100ms,cpuinfo_max_freq@300ms";
        f.set(&format!("cpufreq.{source}_max_freq.{caps}")).unwrap();
        let mut s = build_with(json, "hikey960", f, ms * 1_000_000);
        s.run(|_, _| true).unwrap();
        s
    };
    for (kernel, source) in [
        (Kernel::V6_1, "cooling"),
        (Kernel::V6_1, "hw"),
        (Kernel::V6_12, "cooling"),
        (Kernel::V6_12, "hw"),
    ] {
        let at = |ms| run(kernel, source, ms);
        let (s, what) = (at(299), format!("{kernel:?} {source}"));
        let rq = s.sched().cpu_rq(4);
        assert_eq!(s.eng.cpufreq.policies[1].cur, 1421000, "{what}");
        assert_eq!(
            s.sched().cpu_rq(0).cpu_capacity,
            462,
            "the A53s are not capped"
        );
        let pressures = (rq.cpufreq_pressure, rq.hw_pressure);
        if (kernel, source) == (Kernel::V6_12, "cooling") {
            assert_eq!((pressures, rq.cpu_capacity), ((408, 0), 616));
        } else {
            assert_eq!(pressures, (0, 408), "{what}");
            let (cap, avg) = (rq.cpu_capacity, rq.avg_hw.load_avg);
            assert!(
                (622..=704).contains(&cap) && (401..=403).contains(&avg),
                "{what}: {cap} {avg}"
            );
        }
        let s = at(399);
        let rq = s.sched().cpu_rq(4);
        assert_eq!(s.eng.cpufreq.policies[1].cur, 2362000, "{what}");
        assert_eq!((rq.cpufreq_pressure, rq.hw_pressure), (0, 0), "{what}");
        if (kernel, source) != (Kernel::V6_12, "cooling") {
            assert!((49..=51).contains(&rq.avg_hw.load_avg), "{what}");
        }
    }
}

/// Run times within the few nanoseconds each switch takes (the reschedule after a tick or
/// an hrtick, 1 ns each).
fn assert_near<const N: usize>(got: [u64; N], want: [u64; N]) {
    let near = got.iter().zip(&want).all(|(a, b)| a.abs_diff(*b) <= 3);
    assert!(near, "{got:?} against {want:?}");
}

/// `l`'s (at nice `nice_l`) and `s`'s run times after `duration` ns with these switches
/// (rt-app's dl-runtime asked as a custom slice).
fn long_and_short(mut f: Features, nice_l: i32, duration: u64) -> [u64; 2] {
    f.rtapp_custom_slice = true;
    let json = LONG_AND_SHORT.replace("NICE_L", &nice_l.to_string());
    let mut s = build_with(&json, "smp:1", f, duration);
    s.run(|_, _| true).unwrap();
    let run = |id| s.sched().task(id).stats.run_ns;
    [run(0), run(1)]
}

const LONG_AND_SHORT: &str = r#"{"global": {"duration": 1}, "tasks": {
    "l": {"loop": -1, "run": 100000, "dl-runtime": 20000, "priority": NICE_L},
    "s": {"loop": -1, "run": 100000}}}"#;

/// One CPU whose kernel work is free but for a `nanosleep` call, 10 ms.
const SLOW_SLEEP_CALL: &str = r#"name = "slow-sleep-call"
description = "one CPU whose nanosleep takes 10 ms of kernel work"
[[freq_domain]]
name = "p0"
cpus = "0"
capacity = 1024
opps = [{ khz = 1000000 }]
[overhead]
scale = 0.000001
nanosleep_ns = 10000000
"#;

/// `p` and the hog `h` start at 0 on one CPU (HZ=250, 6.12's EEVDF, no HRTICK); `p` runs
/// first and calls `nanosleep`, 10 ms of kernel work here (its 0.1 ms sleep is over when
/// the call returns). The tick at 4 ms sees `p`'s request (half a slice, 0.35 ms) long
/// served and reschedules for `h`. Where `p` is preempted, so how long `h` has run by
/// 9.99 ms:
/// - voluntary (≤ 6.18's Debian kernels): at its call's end: not at all;
/// - full: inside the call, at the tick's return: from 4 ms, 5.99 ms;
/// - lazy (7.x): the tick's reschedule is lazy, which a task in the kernel does not take,
///   and the next tick makes it full: from 8 ms, 1.99 ms.
///
/// Either way `p`'s system time over the run is the call's 10 ms, the rest of it done when
/// `p` runs again.
#[test]
fn under_kernel_preemption_a_system_call_is_preempted_inside_it() {
    const CALL: &str = r#"{"global": {"duration": 1}, "tasks": {
        "p": {"loop": 1, "sleep": 100, "run": 10},
        "h": {"loop": 1, "run": 20000}}}"#;
    let wl = crate::workload::parse(CALL, "test.json", crate::workload::Dialect::Workgen);
    let plat = crate::platform::parse(SLOW_SLEEP_CALL, "slow-sleep-call.toml").unwrap();
    let run = |preempt, duration| {
        let mut f = preset(Kernel::V6_12);
        f.overhead = true;
        f.preempt = preempt;
        let opts = super::RunOptions {
            duration: Some(duration),
            ..super::RunOptions::default()
        };
        let mut s = super::Sim::new(wl.as_ref().unwrap(), plat.clone(), f, &opts).unwrap();
        s.run(|_, _| true).unwrap();
        s
    };
    for (preempt, ran) in [
        (Preempt::Voluntary, 0),
        (Preempt::Full, 5_990_000),
        (Preempt::Lazy, 1_990_000),
    ] {
        let s = run(preempt, 9_990_000);
        let h = s.sched().task(1).stats.run_ns;
        assert!(h.abs_diff(ran) <= 10, "{preempt:?}: h ran {h}");
        let sys = run(preempt, 40_000_000).eng.threads[0].sys_ns;
        assert!(
            sys.abs_diff(10_000_000) <= 10,
            "{preempt:?}: p's system time {sys}"
        );
    }
}
