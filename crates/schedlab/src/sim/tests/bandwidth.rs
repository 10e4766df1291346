//! CFS bandwidth through the whole machine, with the invariants checked after every event:
//! hogs, sleepers (whose cfs_rqs give runtime back to the slack timer) and nested limits.

use super::*;
use crate::sched::fair::bandwidth::Throttle;

/// The machine at HZ=1000 with these groups, the guest's own threads left out.
fn build_in(json: &str, platform: &str, kernel: Kernel, cgroups: &[&str]) -> Sim {
    let wl = parse(json, "test.json", Dialect::Workgen).unwrap();
    let mut feat = alone(kernel);
    feat.set("hz=1000").unwrap();
    let opts = RunOptions {
        cgroups: cgroups.iter().map(|c| c.to_string()).collect(),
        ..RunOptions::default()
    };
    Sim::new(&wl, load_builtin(platform).unwrap(), feat, &opts).unwrap()
}

fn run_with(json: &str, platform: &str, kernel: Kernel, cgroups: &[&str]) -> Sim {
    let mut s = build_in(json, platform, kernel, cgroups);
    s.run(|_, _| true).unwrap();
    s
}

fn stat(s: &Sim, path: &str) -> (u64, u64, u64) {
    let tg = s
        .sched()
        .task_groups()
        .iter()
        .find(|g| g.path == path)
        .unwrap();
    let b = tg.bandwidth.as_deref().unwrap();
    (b.nr_periods, b.nr_throttled, b.throttled_time)
}

#[test]
fn two_hogs_under_50_of_100_ms_run_50_ms_a_period() {
    // HZ=1000: each CPU's update_curr charges 1 ms a tick; a throttle's reschedule switches
    // 1 ns after the tick (`Cpu::changed_at`), as an idle CPU does after a wakeup or an
    // unthrottle. Period 0: the hogs fork onto the idle CPUs, whose switch keeps the fork's
    // clock (rq_clock_skip_update: the idle task counts as queued), so each is charged from
    // 0 and takes 5 ms; at the 5 ms tick none is left and each tops up 5 ms, again at 10, 15
    // and 20 ms: the 50 ms are gone and both are throttled at the 25 ms tick: 25 + 25 ms of
    // running. Later periods: the refill gives each throttled cfs_rq what it overran plus
    // 1 ns; the unthrottled CPU switches 1 ns later and at the next tick each tops up (6 ms
    // − 2 ns), then 5 ms at 6, 11 and 16 ms; 8 ms are left at 21 ms, 5 for one CPU and 3
    // for the other: throttled at 24 and 26 ms, 50 ms of running. Over 1 s, 9 refills happen
    // inside the run (the 10th at its end), each finding both CPUs throttled: 75 + 75 ms
    // (period 0) or 76 + 74 ms, less 1 ns each, until the refill.
    // 6.18+ (task-based throttling): at each of the 10 throttles a CPU picks its hog again,
    // which leaves for the limbo list as it returns to user space and runs until the
    // reschedule this asks, 1 ns later: 20 ns more running, charged to no quota (the
    // dequeued entity's put_prev_entity charges nothing) and inside no throttled time (it
    // counts from the dequeue, at the throttle's instant).
    // (tests/test_bandwidth.py checks the throttle instants one by one.)
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "hog": {"instance": 2, "taskgroup": "/g", "run": 2000000}}}"#;
    for k in Kernel::ALL {
        let s = run_with(json, "smp:2", k, &["/g:max=50000/100000"]);
        let run: u64 = s.sched().tasks().iter().map(|t| t.stats.run_ns).sum();
        let way_out = if preset(k).throttle == Throttle::Task {
            20
        } else {
            0
        };
        assert_eq!(run, 10 * 50_000_000 + way_out, "{k:?}");
        let throttled = 9 * 150_000_000 - 9 * 2;
        assert_eq!(stat(&s, "/g"), (9, 9, throttled), "{k:?}");
    }
}

#[test]
fn sleepers_nested_limits_and_a_root_task_keep_the_invariants() {
    // /a (30 ms per 50 ms) holds /a/b (4 ms per 20 ms); periodic tasks sleep, so empty
    // cfs_rqs return runtime; a root hog competes on the same CPUs. Both limits bind:
    // /a/b's two 4-ms-per-5-ms tasks get at most 4 ms in each 20 ms.
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "p": {"instance": 2, "taskgroup": "/a/b", "run": 4000, "timer": {"ref": "p", "period": 5000}},
        "q": {"instance": 2, "taskgroup": "/a", "run": 3000, "sleep": 2000},
        "r": {"run": 1000000}}}"#;
    for k in Kernel::ALL {
        let s = run_with(
            json,
            "smp:2",
            k,
            &["/a:max=30000/50000", "/a/b:max=4000/20000"],
        );
        let ran = |prefix: &str| -> u64 {
            let t = s
                .sched()
                .tasks()
                .iter()
                .filter(|t| t.comm.starts_with(prefix));
            t.map(|t| t.stats.run_ns).sum()
        };
        // Runtime handed out never exceeds quota + one period's overrun (≤ a tick per CPU).
        assert!(
            ran("p") <= 50 * 4_000_000 + 2_000_000,
            "{k:?}: {}",
            ran("p")
        );
        assert!(ran("p") + ran("q") <= 20 * 30_000_000 + 2_000_000, "{k:?}");
        let (_, thr_a, _) = stat(&s, "/a");
        let (_, thr_b, _) = stat(&s, "/a/b");
        assert!(
            thr_a > 0 && thr_b > 0,
            "{k:?}: throttled {thr_a} and {thr_b} times"
        );
    }
}

#[test]
fn from_6_18_a_task_woken_in_a_throttled_group_runs_until_its_return_to_user_space() {
    // One CPU at HZ=1000, /g limited to 10 ms a 100 ms period. a runs alone from 0; each
    // tick charges it 1 ms, drawn in 5 ms slices: at the 10 ms tick the pool is empty and
    // the CPU reschedules 1 ns later, throttling /g (put_prev_entity). b's delay wakes it at
    // D = 30.05 ms (its timer's 50 µs slack). ≤6.17: b is queued on the throttled cfs_rq,
    // out of the hierarchy, and cannot run before the period timer's refill at 100 ms.
    // 6.18+: the hierarchy stayed, so the idle CPU picks b 1 ns after its wakeup; the pick
    // gives it the throttle work, which dequeues it as it returns to user space. Either
    // way a's cfs_rq counts as throttled from 10 ms + 1 ns (6.18: a's own way out, picked
    // again at that instant) to the refill: 90 ms − 1 ns. The run ends as its last thread
    // exits, after the refill at 100 ms (a's last 0.5 ms and b's 1 ms are still to run
    // then): one period, throttled.
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "a": {"taskgroup": "/g", "loop": 1, "run": 10500},
        "b": {"taskgroup": "/g", "loop": 1, "delay": 30000, "run": 1000}}}"#;
    const D: u64 = 30_050_000;
    for k in [Kernel::V6_12, Kernel::V6_18, Kernel::V7_3] {
        let s = run_with(json, "smp:1", k, &["/g:max=10000/100000"]);
        let b = &s.sched().task(1).stats.wakeup_latencies;
        assert_eq!(b.count(), 1, "{k:?}");
        if preset(k).throttle == Throttle::Task {
            assert_eq!(b.max(), 1, "{k:?}");
        } else {
            assert!(b.max() >= 100_000_000 - D, "{k:?}: {}", b.max());
        }
        assert_eq!(stat(&s, "/g"), (1, 1, 90_000_000 - 1), "{k:?}");
    }
}

#[test]
fn an_emulated_vcpu_takes_the_period_timer_as_late_as_a_tick() {
    // A hog pinned to CPU 0 in a group of 10 ms a 100 ms period (6.12): throttled at the
    // 10 ms tick, it waits for the period timer's refill at 100 ms, which unthrottles it; the
    // idle CPU switches to it 1 ns later. qemu-tcg:2 takes the timer's interrupt as late as a
    // tick's, a draw in [0, 200 µs) plus the CPU's in [0, 30 µs).
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "hog": {"cpus": [0], "taskgroup": "/g", "run": 1000000}}}"#;
    let back = |platform| {
        let mut s = build_in(json, platform, Kernel::V6_12, &["/g:max=10000/100000"]);
        runs_again(&mut s, 0, 50_000_000)
    };
    assert_eq!(back("smp:2"), 100_000_001);
    let late = back("qemu-tcg:2") - 100_000_001;
    assert!(late > 0 && late < 230_000, "{late}");
}
