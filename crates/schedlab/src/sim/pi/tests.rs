//! Priority inheritance through the engine: the classic inversion, with and without it.

use crate::kernel::Kernel;
use crate::platform::load_builtin;
use crate::sched::features::Features;
use crate::sim::{RunOptions, Sim};
use crate::workload::{parse, Dialect};

const MS: u64 = 1_000_000;

/// low (fair) holds m for 50 ms of work from 0; mid (FIFO 10) hogs the CPU from 10 ms;
/// high (FIFO 50) wants m at 20 ms for 1 ms. When high has finished, in ms.
fn high_done(pi: bool, kernel: Kernel) -> (u64, Sim) {
    let json = format!(
        r#"{{"global": {{"duration": 3, "calibration": 100, "pi_enabled": {pi}}}, "tasks": {{
            "low": {{"loop": 1, "lock": "m", "run": 50000, "unlock": "m"}},
            "mid": {{"policy": "SCHED_FIFO", "priority": 10, "delay": 10000, "run": -1}},
            "high": {{"policy": "SCHED_FIFO", "priority": 50, "loop": 1, "delay": 20000,
                      "lock": "m", "run": 1000, "unlock": "m"}}}}}}"#
    );
    let wl = parse(&json, "pi.json", Dialect::Workgen).unwrap();
    let plat = load_builtin("smp:1").unwrap();
    let mut s = Sim::new(&wl, plat, Features::preset(kernel), &RunOptions::default()).unwrap();
    s.run(|_, _| {}).unwrap();
    let end = s.tasks[2].stats.ended_at.expect("high ends") - crate::sim::SIM_START;
    (end / MS, s)
}

#[test]
fn the_lock_owner_inherits_the_waiters_priority_and_gives_it_back() {
    // At 20 ms high blocks on m: low runs at high's priority, ahead of mid, for the 40 ms of
    // work it has left, unlocks at 60 ms and falls back behind mid; high runs 60-61 ms.
    let (done, s) = high_done(true, Kernel::V6_12);
    assert_eq!(done, 61);
    let low = &s.tasks[0];
    assert_eq!(low.stats.run_ns, 50 * MS);
    assert_eq!(
        (low.pi_prio, low.class),
        (None, crate::sched::class::Class::Fair)
    );
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
