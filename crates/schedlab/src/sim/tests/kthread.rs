//! The machine's own kernel threads (sim/kthread.rs): qemu-tcg:N's Debian guest's.

use super::*;

/// A workload thread that sleeps 1.2 s on qemu-tcg:1 (6.12, the idealized machine: every
/// timer on time).
const SLEEPER: &str = r#"{"tasks": {"t": {"loop": 1, "sleep": 1200000}}}"#;

/// When each `sched_wakeup` of `comm` came, in ms after the simulated start.
fn wakeups_ms(trace: &str, comm: &str) -> Vec<f64> {
    let field = format!("comm={comm} ");
    (trace.lines())
        .filter(|l| l.contains("sched_wakeup:") && l.contains(&field))
        .map(|l| {
            let at = l.split(": sched_wakeup:").next().unwrap();
            let s: f64 = at.rsplit(' ').next().unwrap().parse().unwrap();
            ((s - SIM_START as f64 / 1e9) * 1e3 * 1e3).round() / 1e3
        })
        .collect()
}

/// Each thread wakes at its times, whole jiffies and µs past a tick, from the tick nearest
/// 0.474 ms after the workload's start (under 6.12), repeating every span, with no slack
/// (the idealized machine's preset starts the workload at the simulated start, a tick, so
/// that tick is the start): kcompactd0 every 512 ms from 480.003 ms (480.003 and 992.003
/// before the sleeper's 1200), kworker/0:1 at 416.003, 512.003 and 864.003 ms of its 3.2 s
/// span, rcu_preempt at 4.003, 8.015 and 12.003, kworker/u4:3 first at 1440.007 (none); and
/// the run ends with the sleeper, their next wakeups still to come.
#[test]
fn the_guests_threads_wake_at_their_times_and_the_run_ends_with_the_workload() {
    let trace = String::from_utf8(traced(SLEEPER, "qemu-tcg:1")).unwrap();
    assert_eq!(wakeups_ms(&trace, "kcompactd0"), [480.003, 992.003]);
    assert_eq!(
        wakeups_ms(&trace, "kworker/0:1"),
        [416.003, 512.003, 864.003]
    );
    assert_eq!(wakeups_ms(&trace, "rcu_preempt"), [4.003, 8.015, 12.003]);
    assert!(wakeups_ms(&trace, "kworker/u4:3").is_empty());
    let last = (trace.lines().rev())
        .find(|l| l.contains("sched_switch:"))
        .unwrap();
    assert!(
        last.contains("prev_comm=t-0 ") && last.contains("prev_state=X"),
        "{last}"
    );
}

/// kcompactd0's first wakeup (ms after the simulated start) when the workload starts
/// `start_ns` after it and the threads' timeline is shifted by `shift_ns` (6.12).
fn first_kcompactd_ms(start_ns: u64, shift_ns: i64) -> f64 {
    let mut feat = preset(Kernel::V6_12);
    (feat.rtapp_start_ns, feat.kthreads_shift_ns) = (start_ns, shift_ns);
    let s = build_with(SLEEPER, "qemu-tcg:1", feat, 900_000_000);
    let trace = String::from_utf8(traced_run(s)).unwrap();
    wakeups_ms(&trace, "kcompactd0")[0]
}

/// Their timer-wheel wakeups fall on ticks (every 4 ms from the simulated start) whatever
/// phase of a jiffy the workload starts at: the timeline counts from the tick nearest 0.474
/// ms after the start, which for a start 1 ms in is the simulated start's (1.474 ms: 480.003
/// ms, as above), and for one 2 ms in the next tick's (2.474 ms: 4 ms, so 484.003); a shift
/// moves that tick, here two ticks earlier (472.003), or 300 ms later (the tick nearest
/// 300.474 ms, 300 ms: 780.003).
#[test]
fn they_wake_on_ticks_whatever_the_workloads_phase_and_the_shift_moves_them() {
    assert_eq!(first_kcompactd_ms(1_000_000, 0), 480.003);
    assert_eq!(first_kcompactd_ms(2_000_000, 0), 484.003);
    assert_eq!(first_kcompactd_ms(0, -8_000_000), 472.003);
    assert_eq!(first_kcompactd_ms(0, 300_000_000), 780.003);
}

/// Each wakeup works its time: kcompactd0 1.78 µs under 6.12 on the idealized machine (the
/// cost model off), one run a wakeup.
#[test]
fn each_wakeup_works_its_time() {
    let mut s = build(SLEEPER, "qemu-tcg:1", Kernel::V6_12);
    s.run(|_, _| true).unwrap();
    let k = s
        .sched()
        .tasks()
        .iter()
        .find(|t| t.comm == "kcompactd0")
        .unwrap();
    assert_eq!(k.stats.run_ns, 2 * 1_780);
}

/// They are the machine's, not the workload's: a run's task summaries leave them out, and
/// with `kthreads=off` there are none.
#[test]
fn the_summaries_leave_them_out_and_kthreads_off_has_none() {
    let mut s = build(SLEEPER, "qemu-tcg:1", Kernel::V6_12);
    s.run(|_, _| true).unwrap();
    let comms: Vec<String> = s.task_summaries().into_iter().map(|t| t.comm).collect();
    assert_eq!(comms, ["t-0"]);
    assert_eq!(
        s.sched().tasks().len(),
        5,
        "four guest threads and the sleeper"
    );
    let mut feat = preset(Kernel::V6_12);
    feat.kthreads = false;
    let mut s = build_with(SLEEPER, "qemu-tcg:1", feat, 2_000_000_000);
    s.run(|_, _| true).unwrap();
    assert_eq!(s.sched().tasks().len(), 1);
}

/// A workload that can never proceed is still a deadlock, though the guest's threads sleep
/// on their timers for ever.
#[test]
fn a_deadlock_is_found_with_the_guests_threads_asleep() {
    let json = r#"{"tasks": {"t": {"loop": 1, "phases": {"p1": {"run": 10, "barrier": "b"}, "p2": {"barrier": "b"}}}}}"#;
    let mut s = build(json, "qemu-tcg:1", Kernel::V6_12);
    s.run(|_, _| true).unwrap();
    let d = s.totals().deadlock.clone().expect("deadlock");
    assert!(d.contains("t-0 (barrier b)"), "{d}");
}
