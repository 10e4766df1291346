//! The RT class through the engine: priorities, FIFO and RR, RT throttling.

use crate::kernel::Kernel;
use crate::platform::load_builtin;
use crate::sched::features::Features;
use crate::sim::{RunOptions, Sim};
use crate::workload::{parse, Dialect};

const MS: u64 = 1_000_000;

fn run(tasks: &str, kernel: Kernel, seconds: u64) -> Sim {
    run_with(tasks, Features::preset(kernel), seconds * 1000 * MS)
}

/// `tasks` on one CPU for `duration` ns.
fn run_with(tasks: &str, feat: Features, duration: u64) -> Sim {
    let json = format!(r#"{{"global": {{"calibration": 100}}, "tasks": {{{tasks}}}}}"#);
    let wl = parse(&json, "rt.json", Dialect::Workgen).unwrap();
    let opts = RunOptions {
        duration: Some(duration),
    };
    let mut s = Sim::new(&wl, load_builtin("smp:1").unwrap(), feat, &opts).unwrap();
    s.run(|_, _| {}).unwrap();
    s
}

fn hog(name: &str, policy: &str, prio: u32) -> String {
    format!(r#""{name}": {{"policy": "{policy}", "priority": {prio}, "run": -1}}"#)
}

#[test]
fn round_robin_rotates_equal_priorities_every_100_ms() {
    let s = run(
        &[hog("a", "SCHED_RR", 10), hog("b", "SCHED_RR", 10)].join(","),
        Kernel::V6_12,
        1,
    );
    // a runs 0-100 ms, b 100-200 ms, ...: nine rotations in a second, half each.
    assert_eq!(s.tasks[0].stats.run_ns, 500 * MS);
    assert_eq!(s.tasks[1].stats.run_ns, 500 * MS);
    assert_eq!(
        s.tasks[0].stats.preemptions + s.tasks[1].stats.preemptions,
        9
    );
}

#[test]
fn fifo_is_never_preempted_by_an_equal_priority() {
    let s = run(
        &[hog("a", "SCHED_FIFO", 10), hog("b", "SCHED_FIFO", 10)].join(","),
        Kernel::V6_12,
        1,
    );
    assert_eq!(s.tasks[0].stats.run_ns, 1000 * MS);
    assert_eq!(s.tasks[1].stats.run_ns, 0);
}

#[test]
fn a_higher_priority_preempts_at_once() {
    let periodic = r#""hi": {"policy": "SCHED_FIFO", "priority": 50, "run": 2000, "timer": {"ref": "unique", "period": 10000}}"#;
    let tasks = [periodic.to_string(), hog("lo", "SCHED_FIFO", 10)].join(",");
    let s = run(&tasks, Kernel::V6_12, 1);
    assert!(s.tasks[0].stats.wakeup_latencies.iter().all(|&l| l == 0));
    assert_eq!(s.tasks[0].stats.run_ns, 200 * MS);
    assert_eq!(s.tasks[1].stats.run_ns, 800 * MS);
}

#[test]
fn rt_throttling_leaves_five_percent_to_fair_tasks_under_6_1() {
    // 950 ms of RT per 1 s period; the budget is checked at the 4 ms tick, so RT overruns it
    // by at most a tick and the fair hog gets 50 ms per second, less up to a tick.
    let s = run(
        &[hog("rt", "SCHED_FIFO", 10), r#""cfs": {"run": -1}"#.into()].join(","),
        Kernel::V6_1,
        3,
    );
    let fair = s.tasks[1].stats.run_ns;
    assert!(
        (3 * 46 * MS..=3 * 50 * MS).contains(&fair),
        "fair ran {fair} ns"
    );
    assert_eq!(s.tasks[0].stats.run_ns + fair, 3000 * MS);
}

#[test]
fn the_fair_server_gives_fair_tasks_50_ms_per_second_under_6_12() {
    // The fair hog's first enqueue starts the deferred server at 0: d = 1000 ms, q = 50 ms,
    // zero-laxity timer at d − q = 950 ms. Then it serves the hog 950–1000 ms (exhausted at
    // the 4 ms tick of 1000 ms), is replenished at the next period, 1950 ms, and so on.
    let tasks = [hog("rt", "SCHED_FIFO", 10), r#""cfs": {"run": -1}"#.into()].join(",");
    let ran = |ms: u64| {
        let s = run_with(&tasks, Features::preset(Kernel::V6_12), ms * MS);
        (s.tasks[1].stats.run_ns / MS, s.tasks[0].stats.run_ns / MS)
    };
    assert_eq!(ran(950), (0, 950), "deferred until zero laxity");
    assert_eq!(ran(960), (10, 950), "served from 950 ms");
    assert_eq!(ran(3000), (150, 2850), "50 ms a second");
}

#[test]
fn without_the_fair_server_an_rt_hog_starves_fair_tasks_under_6_12() {
    let tasks = [hog("rt", "SCHED_FIFO", 10), r#""cfs": {"run": -1}"#.into()].join(",");
    let mut feat = Features::preset(Kernel::V6_12);
    feat.set("dl.fair_server_runtime_ns=0").unwrap();
    let s = run_with(&tasks, feat, 2000 * MS);
    assert_eq!(s.tasks[1].stats.run_ns, 0);
}

#[test]
fn a_fair_task_that_ran_its_50_ms_in_the_background_is_not_served() {
    // RT runs 900 ms of each second, the fair hog the other 100 ms: its running uses the
    // deferred server's budget up before the zero-laxity instant every period, so the
    // server never preempts the RT task and the shares stay 900/100.
    let rt = r#""rt": {"policy": "SCHED_FIFO", "priority": 10, "run": 900000, "timer": {"ref": "unique", "period": 1000000}}"#;
    let tasks = [rt.into(), r#""cfs": {"run": -1}"#.to_string()].join(",");
    let s = run_with(&tasks, Features::preset(Kernel::V6_12), 3000 * MS);
    assert_eq!(s.tasks[0].stats.run_ns, 2700 * MS);
    assert_eq!(s.tasks[1].stats.run_ns, 300 * MS);
    assert!(s.tasks[0].stats.wakeup_latencies.iter().all(|&l| l == 0));
}
