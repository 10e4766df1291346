//! What tells the newer presets apart, each against the preset before it (docs/kernels.md).

use super::{build_for, run};
use crate::kernel::Kernel;

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
