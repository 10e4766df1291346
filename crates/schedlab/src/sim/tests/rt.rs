//! The RT class through the engine: priorities, FIFO and RR, RT throttling.

use super::preset;
use crate::kernel::Kernel;
use crate::platform::load_builtin;
use crate::sched::features::Features;
use crate::sim::{RunOptions, Sim};
use crate::workload::{parse, Dialect};

const MS: u64 = 1_000_000;

fn run(tasks: &str, kernel: Kernel, seconds: u64) -> Sim {
    run_with(tasks, preset(kernel), seconds * 1000 * MS)
}

/// `tasks` on one CPU for `duration` ns.
fn run_with(tasks: &str, feat: Features, duration: u64) -> Sim {
    run_on("smp:1", tasks, feat, duration)
}

/// `tasks` on `platform` for `duration` ns from the instant they start: 1 ns after their
/// forks, when the idle CPUs reschedule (the engine's `Cpu::changed_at`).
fn run_on(platform: &str, tasks: &str, feat: Features, duration: u64) -> Sim {
    let json = format!(r#"{{"global": {{"calibration": 100}}, "tasks": {{{tasks}}}}}"#);
    let wl = parse(&json, "rt.json", Dialect::Workgen).unwrap();
    let opts = RunOptions {
        duration: Some(duration + 1),
        ..RunOptions::default()
    };
    let mut s = Sim::new(&wl, load_builtin(platform).unwrap(), feat, &opts).unwrap();
    s.run(|_, _| true).unwrap();
    s
}

/// `ns` to the nearest ms: the nanoseconds switches take (`Cpu::changed_at`) are no ms.
fn to_ms(ns: u64) -> u64 {
    (ns + MS / 2) / MS
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
    assert_eq!(s.sched().task(0).stats.run_ns, 500 * MS);
    assert_eq!(s.sched().task(1).stats.run_ns, 500 * MS);
    assert_eq!(
        s.sched().task(0).stats.preemptions + s.sched().task(1).stats.preemptions,
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
    assert_eq!(s.sched().task(0).stats.run_ns, 1000 * MS);
    assert_eq!(s.sched().task(1).stats.run_ns, 0);
}

#[test]
fn a_higher_priority_preempts_1_ns_after_its_wakeup() {
    let periodic = r#""hi": {"policy": "SCHED_FIFO", "priority": 50, "run": 2000, "timer": {"ref": "unique", "period": 10000}}"#;
    let tasks = [periodic.to_string(), hog("lo", "SCHED_FIFO", 10)].join(",");
    let s = run(&tasks, Kernel::V6_12, 1);
    assert_eq!(s.sched().task(0).stats.wakeup_latencies.max(), 1);
    assert_eq!(s.sched().task(0).stats.run_ns, 200 * MS);
    assert_eq!(s.sched().task(1).stats.run_ns, 800 * MS);
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
    let fair = s.sched().task(1).stats.run_ns;
    assert!(
        (3 * 46 * MS..=3 * 50 * MS).contains(&fair),
        "fair ran {fair} ns"
    );
    assert_eq!(s.sched().task(0).stats.run_ns + fair, 3000 * MS);
}

#[test]
fn the_fair_server_gives_fair_tasks_50_ms_per_second_under_6_12() {
    // The fair hog's first enqueue starts the deferred server at 0: d = 1000 ms, q = 50 ms,
    // zero-laxity timer at d − q = 950 ms. Then it serves the hog 950–1000 ms (exhausted at
    // the 4 ms tick of 1000 ms), is replenished at the next period, 1950 ms, and so on.
    let tasks = [hog("rt", "SCHED_FIFO", 10), r#""cfs": {"run": -1}"#.into()].join(",");
    let ran = |ms: u64| {
        let s = run_with(&tasks, preset(Kernel::V6_12), ms * MS);
        (
            to_ms(s.sched().task(1).stats.run_ns),
            to_ms(s.sched().task(0).stats.run_ns),
        )
    };
    assert_eq!(ran(950), (0, 950), "deferred until zero laxity");
    assert_eq!(ran(960), (10, 950), "served from 950 ms");
    assert_eq!(ran(3000), (150, 2850), "50 ms a second");
}

#[test]
fn without_the_fair_server_an_rt_hog_starves_fair_tasks_under_6_12() {
    let tasks = [hog("rt", "SCHED_FIFO", 10), r#""cfs": {"run": -1}"#.into()].join(",");
    let mut feat = preset(Kernel::V6_12);
    feat.set("dl.fair_server_runtime_ns=0").unwrap();
    let s = run_with(&tasks, feat, 2000 * MS);
    assert_eq!(s.sched().task(1).stats.run_ns, 0);
}

#[test]
fn a_fair_task_that_ran_its_50_ms_in_the_background_is_not_served() {
    // RT runs 900 ms of each second, the fair hog the other 100 ms: its running uses the
    // deferred server's budget up before the zero-laxity instant every period, so the
    // server never preempts the RT task and the shares stay 900/100.
    let rt = r#""rt": {"policy": "SCHED_FIFO", "priority": 10, "run": 900000, "timer": {"ref": "unique", "period": 1000000}}"#;
    let tasks = [rt.into(), r#""cfs": {"run": -1}"#.to_string()].join(",");
    let s = run_with(&tasks, preset(Kernel::V6_12), 3000 * MS);
    assert_eq!(s.sched().task(0).stats.run_ns, 2700 * MS);
    assert_eq!(s.sched().task(1).stats.run_ns, 300 * MS);
    // Woken on a CPU running the fair hog, it runs 1 ns later (`Cpu::changed_at`).
    assert_eq!(s.sched().task(0).stats.wakeup_latencies.max(), 1);
}

#[test]
fn idle_time_that_uses_the_fair_servers_budget_up_defers_it_a_whole_period_from_6_19() {
    // f runs 0-10 ms, sleeps to 905 ms and wants 5 ms more; the FIFO hog r arrives at 900 ms.
    // f's first enqueue starts the deferred server at 0: d = 1000 ms, q = 50 ms, zero-laxity
    // timer at d − q = 950 ms; f's 10 ms leave q = 40. The CPU idles from 10 to 900 ms, and
    // r's arrival puts the idle task, charging those 890 ms:
    // - clamp (6.12, 6.18): q is clamped at 0 in the same period. The timer at 950 ms finds
    //   d − q − 1 ms = 999 ms still ahead and moves to d − q = 1000 ms, where q = 0
    //   replenishes to d = 2000 ms, q = 50 ms: the server runs f at 1000 ms, 95 ms after its
    //   wakeup.
    // - idle_wait (7.3): q = 40 − 890 < 0 starts a new period at 900 ms (d = 1900 ms,
    //   q = 50 ms, timer at 1850 ms) and marks the server idle-waiting; f's wakeup at 905 ms
    //   clears the mark (dl_server_start), so at 1850 ms the timer starts serving: f waits
    //   945 ms.
    let waited = |kernel| served_after_idle(kernel, 900, 905);
    assert_eq!(waited(Kernel::V6_12), 95);
    assert_eq!(waited(Kernel::V6_18), 95);
    assert_eq!(waited(Kernel::V7_3), 945);
}

#[test]
fn a_whole_period_of_idle_time_stops_the_fair_server_at_its_timer_from_6_19() {
    // As above, but r arrives at 1195 ms and f wakes at 1200 ms, past the timer of 950 ms
    // (the CPU idle since 10 ms, q = 40 ms as last charged):
    // - clamp: the timer sees d − q − 1 ms = 959 ms ahead and moves to 960 ms, where the
    //   server, at zero laxity, starts serving: q/(d − t) = 40/40 > 50/1000 gives it
    //   d = 1960 ms, q = 50 ms. Queued on the idle CPU, its pick finds no fair task and it
    //   stops, dl_defer_running still set. r's arrival charges the idle time from 10 ms:
    //   q clamped at 0, dl_defer_running cleared. f's wakeup restarts it in the same period
    //   (q = 0 does not overflow): deferred to d − q = 1960 ms, where it runs f: 760 ms.
    // - idle_wait: the timer first charges the 940 ms idle: q < 0 starts a period
    //   (d = 1950 ms) idle-waiting, so the timer stops the server. f's wakeup starts it
    //   again: q/(d − t) = 50/750 > 50/1000 overflows, a new period d = 2200 ms deferred to
    //   d − q = 2150 ms: 950 ms.
    let waited = |kernel| served_after_idle(kernel, 1195, 1200);
    assert_eq!(waited(Kernel::V6_12), 760);
    assert_eq!(waited(Kernel::V7_3), 950);
}

/// One CPU: fair f runs 0-10 ms and again 5 ms from `wake` ms; a FIFO hog from `rt` ms. How
/// long f's second wakeup waits for the fair server, in ms.
fn served_after_idle(kernel: Kernel, rt: u64, wake: u64) -> u64 {
    let tasks = [
        format!(
            r#""r": {{"policy": "SCHED_FIFO", "priority": 10, "sleep": {}, "run": 2000000}}"#,
            rt * 1000
        ),
        format!(
            r#""f": {{"run0": 10000, "sleep0": {}, "run1": 5000, "sleep1": 5000000}}"#,
            (wake - 10) * 1000
        ),
    ]
    .join(",");
    let s = run_with(&tasks, preset(kernel), 2500 * MS);
    let f = &s.sched().task(1).stats;
    assert_eq!(to_ms(f.run_ns), 15, "f ran both its runs");
    to_ms(f.wakeup_latencies.max())
}

/// A FIFO thread of `prio` on `cpus` running `run` µs every `period` µs (a hog if None).
fn fifo(name: &str, prio: u32, cpus: &str, work: Option<(u64, u64)>) -> String {
    let body = match work {
        Some((run, period)) => {
            format!(r#""run": {run}, "timer": {{"ref": "unique", "period": {period}}}"#)
        }
        None => r#""run": -1"#.into(),
    };
    format!(r#""{name}": {{"policy": "SCHED_FIFO", "priority": {prio}, {cpus} {body}}}"#)
}

#[test]
fn a_preempted_rt_task_is_pushed_to_a_cpu_running_fair_work() {
    // CPU 0 runs mid (FIFO 20) when hi (FIFO 50, pinned there) forks and preempts it: the
    // push moves mid at once to CPU 1, where it preempts the fair hog for good.
    let tasks = [
        r#""cfs": {"cpus": [1], "run": -1}"#.to_string(),
        fifo("mid", 20, "", None),
        fifo("hi", 50, r#""cpus": [0],"#, Some((10_000, 100_000))),
    ]
    .join(",");
    let s = run_on("smp:2", &tasks, preset(Kernel::V6_12), 900 * MS);
    let ran = |i: usize| to_ms(s.sched().task(i as u32).stats.run_ns);
    assert_eq!((ran(0), ran(1), ran(2)), (0, 900, 90));
    assert_eq!(s.sched().task(1).stats.migrations(), 1);
    assert_eq!(s.sched().task(1).cpu, 1);
}

#[test]
fn a_cpu_whose_rt_task_sleeps_pulls_a_waiting_rt_task() {
    // mid (FIFO 20) waits on CPU 0 behind a FIFO 50 hog pinned there. Each time busy (FIFO
    // 60, pinned to CPU 1) sleeps, CPU 1 pulls mid; when busy wakes, mid waits there (no
    // CPU runs less important work). mid runs 50–100, 150–200, ... ms: 500 ms in 1 s.
    let tasks = [
        fifo("hog", 50, r#""cpus": [0],"#, None),
        fifo("busy", 60, r#""cpus": [1],"#, Some((50_000, 100_000))),
        fifo("mid", 20, "", None),
    ]
    .join(",");
    let s = run_on("smp:2", &tasks, preset(Kernel::V6_12), 1000 * MS);
    let ran = |i: usize| to_ms(s.sched().task(i as u32).stats.run_ns);
    assert_eq!((ran(0), ran(1), ran(2)), (1000, 500, 500));
    assert_eq!(
        s.sched().task(2).stats.migrations(),
        1,
        "pulled once, then it stays"
    );
}

#[test]
fn deadline_time_counts_against_rt_throttling_under_6_1() {
    // A 500/1000 ms reservation busy-looping, an RT hog and a fair hog. The deadline task's
    // 500 ms per second count in the root rt_rq's 950 ms: RT gets about 450 ms and the fair
    // hog its 50 ms (less up to a 4 ms tick of RT overrun per period).
    let dl = r#""dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 500000, "dl-period": 1000000, "run": -1}"#;
    let tasks = [
        dl.into(),
        hog("rt", "SCHED_FIFO", 10),
        r#""cfs": {"run": -1}"#.into(),
    ]
    .join(",");
    let s = run(&tasks, Kernel::V6_1, 3);
    let ran = |i: usize| to_ms(s.sched().task(i as u32).stats.run_ns);
    assert!(ran(0).abs_diff(1500) <= 4, "dl ran {} ms", ran(0));
    assert!(
        (3 * 46..=3 * 50).contains(&ran(2)),
        "fair ran {} ms",
        ran(2)
    );
    assert_eq!(ran(0) + ran(1) + ran(2), 3000);
}

#[test]
fn avg_rt_follows_pelt_while_rt_runs_and_decays_at_the_tick_after() {
    // An RT task runs 100 ms from 0, then a fair hog runs. PELT's closed form: util =
    // 1024·(1 − 2^(−t/32 periods)), a period being 1024 µs: 100 ms → 894; then ×2^(−t/32)
    // for 200 ms more → 13 (updated at the 4 ms ticks of the fair hog).
    let rt = r#""rt": {"policy": "SCHED_FIFO", "priority": 10, "run": 100000, "sleep": 10000000}"#;
    let tasks = [rt.to_string(), r#""cfs": {"run": -1}"#.into()].join(",");
    let closed = |t_ms: f64, from: f64| from * (-t_ms * 1e3 / 1024.0 / 32.0).exp2();
    let peak = 1024.0 - closed(100.0, 1024.0);
    let s = run_with(&tasks, preset(Kernel::V6_12), 100 * MS);
    let at_peak = s.sched().cpu_rq(0).avg_rt.util_avg as f64;
    assert!((at_peak - peak).abs() <= 8.0, "{at_peak} vs {peak:.0}");
    let s = run_with(&tasks, preset(Kernel::V6_12), 300 * MS);
    let decayed = s.sched().cpu_rq(0).avg_rt.util_avg as f64;
    assert!((decayed - closed(200.0, peak)).abs() <= 3.0, "{decayed}");
}

#[test]
fn the_periodic_balance_leaves_fair_tasks_what_rt_did_not_use() {
    // smp:2, both tasks on CPU 0: the RT task runs 100 ms from 0, then the fair hog. The
    // lowest domain spans 2 CPUs: a busy CPU balances at its first tick, then, the domain
    // balanced, with its interval backed off to max_interval (2·2 ms): every 4·16 ms = 16
    // jiffies − 1, 60 ms. Each time sched_cpu_capacity shows 1024 − avg_rt, by PELT's closed
    // form (see above): rising while RT runs, decaying after 100 ms. CPU 1 balances as an
    // idle CPU when CPU 0's tick kicks it (NOHZ): its whole capacity, no RT ran there.
    let rt = r#""rt": {"policy": "SCHED_FIFO", "priority": 10, "cpus": [0], "run": 100000, "sleep": 10000000}"#;
    let cfs = r#""cfs": {"cpus": [0], "run": -1}"#;
    let json =
        format!(r#"{{"global": {{"duration": 1, "calibration": 100}}, "tasks": {{{rt}, {cfs}}}}}"#);
    let text = String::from_utf8(crate::sim::tests::traced(&json, "smp:2")).unwrap();
    let lines: Vec<(f64, String)> = text
        .lines()
        .filter_map(|l| {
            let (head, fields) = l.split_once("sched_cpu_capacity:")?;
            let ts = head.trim_end().trim_end_matches(':').rsplit(' ').next()?;
            Some((ts.parse::<f64>().unwrap() - 1.0, fields.trim().to_string()))
        })
        .collect();
    let on = |cpu: usize| {
        lines
            .iter()
            .filter(move |(_, f)| f.starts_with(&format!("cpu={cpu} ")))
    };
    assert!(on(1).count() > 1 && on(1).all(|(_, f)| f.starts_with("cpu=1 capacity=1024 ")));
    let closed = |t_ms: f64, from: f64| from * (-t_ms * 1e3 / 1024.0 / 32.0).exp2();
    let util = |t_ms: f64| {
        let peak = 1024.0 - closed(100.0, 1024.0);
        if t_ms <= 100.0 {
            1024.0 - closed(t_ms, 1024.0)
        } else {
            closed(t_ms - 100.0, peak)
        }
    };
    let seen: Vec<(f64, f64)> = on(0)
        .skip(1) // boot
        .take(5)
        .map(|(t, f)| {
            let cap = f
                .split(' ')
                .find_map(|kv| kv.strip_prefix("capacity="))
                .unwrap();
            assert!(f.ends_with("capacity_orig=1024 capacity_curr=1024"), "{f}");
            (t * 1000.0, cap.parse().unwrap())
        })
        .collect();
    let times: Vec<u64> = seen.iter().map(|&(t, _)| t.round() as u64).collect();
    assert_eq!(times, [4, 64, 124, 184, 244]);
    for (t, cap) in seen {
        let want = 1024.0 - util(t);
        assert!(
            (cap - want).abs() <= 10.0,
            "{cap} at {t} ms, want {want:.0}"
        );
    }
}
