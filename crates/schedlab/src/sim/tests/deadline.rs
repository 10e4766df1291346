//! SCHED_DEADLINE through the engine: admission, EDF on one CPU, the guarantees.

use super::preset;
use crate::kernel::Kernel;
use crate::platform::load_builtin;
use crate::sim::{RunOptions, Sim};
use crate::workload::{parse, Dialect};

fn sim(json: &str, platform: &str, kernel: Kernel) -> Result<Sim, String> {
    let wl = parse(json, "dl.json", Dialect::Workgen).map_err(|e| e.to_string())?;
    Sim::new(
        &wl,
        load_builtin(platform).unwrap(),
        preset(kernel),
        &RunOptions::default(),
    )
    .map_err(|e| e.to_string())
}

fn run_on(json: &str, platform: &str, kernel: Kernel) -> Sim {
    let mut s = sim(json, platform, kernel).unwrap();
    s.run(|_, _| true).unwrap();
    s
}

fn run(json: &str, platform: &str) -> Sim {
    run_on(json, platform, Kernel::V6_12)
}

/// A periodic rt-app thread with a reservation (µs).
fn periodic(name: &str, run: u64, period: u64, q: u64, p: u64) -> String {
    format!(
        r#""{name}": {{"policy": "SCHED_DEADLINE", "dl-runtime": {q}, "dl-period": {p},
            "run": {run}, "timer": {{"ref": "unique", "period": {period}}}}}"#
    )
}

#[test]
fn an_admitted_implicit_set_on_one_cpu_misses_no_deadline() {
    // Σ Q/P = 0.3 + 0.3 + 0.3 ≤ 0.95; each job needs less than its budget.
    let tasks = [
        periodic("a", 2000, 10_000, 3000, 10_000),
        periodic("b", 5000, 20_000, 6000, 20_000),
        periodic("c", 10_000, 50_000, 15_000, 50_000),
    ]
    .join(",");
    let json =
        format!(r#"{{"global": {{"duration": 2, "calibration": 100}}, "tasks": {{{tasks}}}}}"#);
    let s = run(&json, "smp:1");
    let jobs = [(2000, 10_000), (5000, 20_000), (10_000, 50_000)];
    let tasks = s.sched().tasks().iter().enumerate();
    for ((id, t), (run_us, period_us)) in tasks.zip(jobs) {
        let dl = s.sched().dl_of(id as u32);
        assert_eq!(dl.stats.misses, 0, "{}", t.comm);
        assert_eq!(dl.stats.exhaustions, 0, "{}: never over budget", t.comm);
        assert_eq!(
            s.eng.threads[id].stats.overruns, 0,
            "{}: every job ends within its period",
            t.comm
        );
        let want = 2_000_000_000 / (period_us * 1000) * run_us * 1000;
        assert!(
            t.stats.run_ns.abs_diff(want) <= run_us * 1000,
            "{}: {} vs {want}",
            t.comm,
            t.stats.run_ns
        );
    }
}

#[test]
fn admission_accepts_exactly_up_to_the_limit_and_refuses_beyond_without_stopping() {
    // to_ratio: 5/10 = 524288, 4.5/10 = 471859, sum 996147 = cap_scale(996147, 1024): in
    // under 6.1. Under 6.12 the CPU's fair server holds 50/1000 = 52428 of it: 4.5/10 is
    // refused (c, 1/100 = 10485, fits) and 4/10 (419430; 996146 in all) is admitted.
    let set = |b_us: u64| {
        format!(
            r#"{{"global": {{"duration": 1, "calibration": 100}}, "tasks": {{{}, {}, {}}}}}"#,
            periodic("a", 1000, 10_000, 5000, 10_000),
            periodic("b", 1000, 10_000, b_us, 10_000),
            periodic("c", 1000, 10_000, 100, 10_000),
        )
    };
    let cases = [
        (Kernel::V6_1, 4500, 996_147, [false, false, true]),
        (
            Kernel::V6_12,
            4500,
            52_428 + 524_288 + 10_485,
            [false, true, false],
        ),
        (Kernel::V6_12, 4000, 996_146, [false, false, true]),
    ];
    for (kernel, b_us, total, want) in cases {
        let s = run_on(&set(b_us), "smp:1", kernel);
        assert_eq!(
            s.sched().dl_bw().total_bw,
            total,
            "{kernel:?} b = {b_us} µs"
        );
        let refused: Vec<bool> = s.sched().tasks().iter().map(|t| t.stats.refused).collect();
        assert_eq!(refused, want, "{kernel:?} b = {b_us} µs");
        let out = want.iter().position(|&r| r).unwrap();
        assert_eq!(s.sched().task(out as u32).stats.run_ns, 0);
        assert!(
            s.sched().task(0).stats.run_ns >= 99_000_000,
            "the others go on"
        );
        assert_eq!(s.sched().refusals().len(), 1);
        assert!(
            s.sched().refusals()[0].contains(&s.sched().task(out as u32).comm)
                && s.sched().refusals()[0].contains("EBUSY")
        );
    }
}

#[test]
fn a_deadline_task_preempts_a_fair_hog_1_ns_after_its_wakeup() {
    let json = format!(
        r#"{{"global": {{"duration": 1, "calibration": 100}}, "tasks": {{{}, "hog": {{"run": -1}}}}}}"#,
        periodic("dl", 2000, 10_000, 3000, 10_000),
    );
    let s = run(&json, "smp:1");
    let dl = &s.sched().task(0);
    assert_eq!(dl.stats.wakeup_latencies.max(), 1);
    assert_eq!(dl.stats.run_ns, 100 * 2_000_000);
    // The hog has the rest, but for the nanosecond before its first run (`Cpu::changed_at`).
    assert_eq!(
        s.sched().task(1).stats.run_ns,
        1_000_000_000 - 200_000_000 - 1
    );
}

#[test]
fn bad_deadline_parameters_name_the_task() {
    let task = |extra: &str| {
        format!(
            r#"{{"global": {{"duration": 1}}, "tasks": {{"t": {{"policy": "SCHED_DEADLINE", {extra} "run": 1000}}}}}}"#
        )
    };
    let cases = [
        (task(r#""dl-runtime": 5000, "dl-deadline": 4000, "dl-period": 10000,"#), "exceeds the deadline"),
        (task(r#""dl-runtime": 5000, "dl-deadline": 20000, "dl-period": 10000,"#), "exceeds the period"),
        (task(""), "non-zero period"),
        (task(r#""dl-runtime": 50, "dl-period": 50,"#), "outside 100 µs"),
        (task(r#""dl-runtime": 1000, "dl-period": 10000, "cpus": [0],"#), "span its root domain"),
        (
            r#"{"global": {"duration": 1}, "tasks": {"t": {"dl-reclaim": true, "run": 1000}}}"#.into(),
            "needs SCHED_DEADLINE",
        ),
        (
            r#"{"global": {"duration": 1}, "tasks": {"t": {"policy": "SCHED_FIFO", "priority": 100, "run": 1000}}}"#.into(),
            "outside 1..99",
        ),
    ];
    for (json, msg) in cases {
        let e = sim(&json, "smp:2", Kernel::V6_12)
            .err()
            .unwrap_or_else(|| panic!("accepted: {json}"));
        assert!(e.contains("tasks.t") && e.contains(msg), "{e}");
    }
}

#[test]
fn an_emulated_vcpu_takes_the_replenishment_timer_as_late_as_a_tick() {
    // A reservation of 1 ms every 10 ms whose thread never sleeps (7.3: HRTICK_DL ends the
    // budget on time on hardware): throttled at 1 ms, it waits for its replenishment timer
    // at the next period, 10 ms, and its idle CPU switches to it 1 ns later. qemu-tcg:2
    // takes the timer's interrupt as late as a tick's: later, by less than the 230 µs its
    // draws allow.
    let json = r#"{"global": {"duration": 1}, "tasks": {"d": {"policy": "SCHED_DEADLINE",
        "dl-runtime": 1000, "dl-period": 10000, "run": 1000000}}}"#;
    let back = |platform| {
        let mut s = super::build_with(json, platform, super::alone(Kernel::V7_3), 1_000_000_000);
        super::runs_again(&mut s, 0, 5_000_000)
    };
    assert_eq!(back("smp:2"), 10_000_001);
    let late = back("qemu-tcg:2") - 10_000_001;
    assert!(late > 0 && late < 230_000, "{late}");
}
