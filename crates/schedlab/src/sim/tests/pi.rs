//! Priority inheritance through the engine: the classic inversion, with and without it.

use super::preset;
use crate::kernel::Kernel;
use crate::platform::load_builtin;
use crate::sched::uapi::Policy;
use crate::sim::{RunOptions, Sim};
use crate::workload::{parse, Dialect};

const MS: u64 = 1_000_000;

/// The rt-app JSON of `tasks` for 3 s.
fn workload(tasks: &str, pi: bool) -> String {
    format!(
        r#"{{"global": {{"duration": 3, "calibration": 100, "pi_enabled": {pi}}}, "tasks": {{{tasks}}}}}"#
    )
}

/// Run `tasks` on one CPU.
fn run(tasks: &str, pi: bool, kernel: Kernel) -> Sim {
    let wl = parse(&workload(tasks, pi), "pi.json", Dialect::Workgen).unwrap();
    let plat = load_builtin("smp:1").unwrap();
    let mut s = Sim::new(&wl, plat, preset(kernel), &RunOptions::default()).unwrap();
    s.run(|_, _| true).unwrap();
    s
}

/// When task `i` ended, in ms.
fn ended(s: &Sim, i: usize) -> u64 {
    (s.sched()
        .task(i as u32)
        .stats
        .ended_at
        .expect("the task ends")
        - crate::sim::SIM_START)
        / MS
}

/// A one-shot task: `delay` µs, then `run` µs of work holding mutex m.
fn locker(name: &str, policy: &str, delay: u64, run: u64) -> String {
    format!(
        r#""{name}": {{{policy} "loop": 1, "delay": {delay}, "lock": "m", "run": {run}, "unlock": "m"}}"#
    )
}

/// A SCHED_DEADLINE policy of `q` µs every `p` µs, for `locker`.
fn dl(q: u64, p: u64) -> String {
    format!(r#""policy": "SCHED_DEADLINE", "dl-runtime": {q}, "dl-period": {p},"#)
}

/// low (fair) holds m for 50 ms of work from 0; mid (FIFO 10) hogs the CPU from 10 ms;
/// high (FIFO 50) wants m at 20 ms for 1 ms.
fn inversion() -> String {
    [
        locker("low", "", 0, 50_000),
        r#""mid": {"policy": "SCHED_FIFO", "priority": 10, "delay": 10000, "run": -1}"#.into(),
        locker(
            "high",
            r#""policy": "SCHED_FIFO", "priority": 50,"#,
            20_000,
            1000,
        ),
    ]
    .join(",")
}

/// When high has finished, in ms.
fn high_done(pi: bool, kernel: Kernel) -> (u64, Sim) {
    let s = run(&inversion(), pi, kernel);
    (ended(&s, 2), s)
}

#[test]
fn the_lock_owner_inherits_the_waiters_priority_and_gives_it_back() {
    // At 20 ms high blocks on m: low runs at high's priority, ahead of mid, for the 40 ms of
    // work it has left, unlocks at 60 ms and falls back behind mid; high runs 60-61 ms.
    let (done, s) = high_done(true, Kernel::V6_12);
    assert_eq!(done, 61);
    let low = &s.sched().task(0);
    // Its 50 ms of work, and a nanosecond each (`Cpu::changed_at`) between its switch in
    // and its lock, its unlock and high's preemption, its switch in and its exit.
    assert_eq!(low.stats.run_ns, 50 * MS + 3);
    // Unboosted: back in its policy's own class.
    assert_eq!(low.policy, Policy::Other);
    assert_eq!(
        (low.pi_prio, low.class),
        (None, crate::sched::class::Class::of(low.policy))
    );
}

#[test]
fn the_trace_shows_each_priority_change() {
    // sched_pi_setprio: low (prio 120) to high's 99 − 50 = 49 when high blocks, 2 ns after
    // 20 ms (1 ns to its switch in, 1 ns to its lock); back when low unlocks: low began its
    // work at 4 ns (1 ns each for the reschedule after the forks, high's and mid's first
    // runs, and its own before its lock), was off the CPU from 10 ms + 1 ns to 20 ms + 2 ns,
    // so its 50 ms end at 60 ms + 5 ns.
    let text = String::from_utf8(crate::sim::tests::traced(
        &workload(&inversion(), true),
        "smp:1",
    ))
    .unwrap();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("sched_pi_setprio:"))
        .collect();
    assert_eq!(lines.len(), 2);
    for (line, (at, old, new)) in lines
        .iter()
        .zip([("1.020000002", 120, 49), ("1.060000005", 49, 120)])
    {
        let (head, fields) = line.split_once("sched_pi_setprio:").unwrap();
        assert!(head.trim_end().ends_with(&format!(" {at}:")), "{line}");
        assert!(fields.trim_start().starts_with("comm=low-0 pid="), "{line}");
        assert!(
            fields.ends_with(&format!(" oldprio={old} newprio={new}")),
            "{line}"
        );
    }
}

#[test]
fn without_inheritance_the_middle_priority_hog_delays_the_high_one() {
    // 6.12: low only runs again when the fair server serves it at zero laxity, d − q =
    // 1000 − 40 ms (its first 10 ms used the budget): 960-1000 ms; high then runs 1 ms.
    assert_eq!(high_done(false, Kernel::V6_12).0, 1001);
    // 6.1, RT throttling at HZ=250: RT runs from 10 ms; its 950 ms are exceeded at 960 ms,
    // seen at the 964 ms tick: low runs 964-1000 ms. The period timer leaves 954 − 950 = 4
    // ms charged, so RT is throttled again at the 1948 ms tick (952 ms): low's last 4 ms
    // end at 1952 ms, and high, woken by the unlock, waits for the period at 2000 ms.
    assert_eq!(high_done(false, Kernel::V6_1).0, 2001);
}

#[test]
fn a_deadline_waiter_lends_its_reservation_to_a_fair_owner() {
    // other (DL 20/1000 ms) wakes at 12 ms and preempts low; high (DL 10/100 ms) wakes at
    // 20 ms, preempts other (deadline 120 < 1012) and blocks on m. Boosted, low runs in
    // the deadline class by high's reservation (deadline 120 ms, before other's): its 38
    // ms left end at 58 ms, where high runs 58-59 ms. Its budget is exhausted at the 32,
    // 40 and 52 ms ticks (10 − 12, 8 − 8, 10 − 12 ms) and each time replenished at once.
    let tasks = [
        locker("low", "", 0, 50_000),
        format!(
            r#""other": {{{} "loop": 1, "delay": 12000, "run": 100000}}"#,
            dl(20_000, 1_000_000)
        ),
        locker("high", &dl(10_000, 100_000), 20_000, 1000),
    ]
    .join(",");
    let s = run(&tasks, true, Kernel::V6_12);
    assert_eq!(ended(&s, 2), 59);
    assert_eq!(s.sched().dl_of(0).stats.exhaustions, 3);
    assert_eq!(s.sched().dl_of(0).stats.throttled_ns, 0, "never throttled");
    let low = &s.sched().task(0);
    assert_eq!(low.policy, Policy::Other);
    assert_eq!(
        (low.class, s.sched().dl_of(0).pi),
        (crate::sched::class::Class::of(low.policy), None)
    );
    // Without PI low waits for other: other runs from 1 ns after 12 ms, so its 20 ms budget
    // runs out just after the 32 ms tick and the 36 ms tick throttles it; low runs 36-74 ms,
    // high 74-75 ms. (An RT boost would not put low ahead of other either.)
    assert_eq!(ended(&run(&tasks, false, Kernel::V6_12), 2), 75);
}

#[test]
fn a_deadline_owner_runs_by_an_earlier_waiters_reservation_never_throttled() {
    // owner (DL 20/1000 ms) needs 30 ms holding m; high (DL 10/100 ms) blocks on m at 12
    // ms (deadline 112 < 1000): the owner keeps its deadline and its 8 ms left, and at the
    // 20 ms tick its exhausted budget is replenished by high's (10 ms, deadline 1100)
    // instead of throttling it until 1000 ms. It unlocks at 30 ms; high runs 30-31 ms.
    let tasks = [
        locker("owner", &dl(20_000, 1_000_000), 0, 30_000),
        locker("high", &dl(10_000, 100_000), 12_000, 1000),
    ]
    .join(",");
    let s = run(&tasks, true, Kernel::V6_12);
    assert_eq!(ended(&s, 1), 31);
    assert_eq!(s.sched().dl_of(0).stats.throttled_ns, 0);
    // Without PI the owner, which began 3 ns in (1 ns each for the reschedule after the
    // forks, high's first run and its own before its lock), exhausts its budget 3 ns after
    // the 20 ms tick: the 24 ms tick throttles it until its next period at 1000 ms; it
    // ends its last 6 ms at 1006 ms, and high runs 1006-1007 ms.
    assert_eq!(ended(&run(&tasks, false, Kernel::V6_12), 1), 1007);
}

#[test]
fn deadline_waiters_take_the_mutex_in_deadline_order() {
    // w1 (DL 10/200 ms) blocks on m at 4 ms (deadline 204), w2 (DL 10/100 ms) at 8 ms
    // (deadline 108): the owner (30 ms of work) unlocks at 30 ms to w2, which runs 30-31
    // ms and hands m to w1, 31-32 ms.
    let tasks = [
        locker("owner", "", 0, 30_000),
        locker("w1", &dl(10_000, 200_000), 4000, 1000),
        locker("w2", &dl(10_000, 100_000), 8000, 1000),
    ]
    .join(",");
    let s = run(&tasks, true, Kernel::V6_12);
    assert_eq!((ended(&s, 2), ended(&s, 1)), (31, 32));
    // Without PI, in arrival order: w1 holds m 30-31 ms, w2 31-32 ms.
    assert_eq!(ended(&run(&tasks, false, Kernel::V6_12), 2), 32);
}
