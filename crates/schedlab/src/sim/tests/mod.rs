use std::io::Write;

use super::*;
use crate::kernel::Kernel;
use crate::platform::load_builtin;
use crate::trace::FtraceWriter;
use crate::workload::{parse, Dialect};

/// The kernel's preset on the idealized machine: every rt-app thread starting at once
/// (`rtapp.start_barrier=off`) and the kernel's work free (`overhead=off`): the hand
/// derivations here count from t = 0 in whole slices.
fn preset(kernel: Kernel) -> Features {
    let mut f = Features::preset(kernel);
    f.rtapp_start_barrier = false;
    f.overhead = false;
    f
}

fn build(json: &str, platform: &str, kernel: Kernel) -> Sim {
    let wl = parse(json, "test.json", Dialect::Workgen).unwrap();
    Sim::new(
        &wl,
        load_builtin(platform).unwrap(),
        preset(kernel),
        &RunOptions::default(),
    )
    .unwrap()
}

/// `preset` without the platform's own kernel threads, which would take the CPUs too.
fn alone(kernel: Kernel) -> Features {
    let mut f = preset(kernel);
    f.kthreads = false;
    f
}

/// `build` for `duration` ns rather than the workload's.
fn build_for(json: &str, platform: &str, kernel: Kernel, duration: Ns) -> Sim {
    build_with(json, platform, preset(kernel), duration)
}

/// `build_for` with these switches.
fn build_with(json: &str, platform: &str, feat: Features, duration: Ns) -> Sim {
    let wl = parse(json, "test.json", Dialect::Workgen).unwrap();
    let opts = RunOptions {
        duration: Some(duration),
        ..RunOptions::default()
    };
    Sim::new(&wl, load_builtin(platform).unwrap(), feat, &opts).unwrap()
}

/// When task `id`, off the CPUs at `off` ns into the run, runs again (ns into the run).
fn runs_again(s: &mut Sim, id: u32, off: Ns) -> Ns {
    let running = |s: &Sim| (0..s.sched().nr_cpu_ids()).any(|c| s.sched().cpu_curr(c) == Some(id));
    s.start();
    while s.now() < SIM_START + off {
        s.step().unwrap();
    }
    assert!(!running(s), "{id} runs at {off} ns");
    while !running(s) {
        s.step().unwrap();
    }
    s.now() - SIM_START
}

fn run(json: &str, platform: &str, kernel: Kernel) -> Sim {
    let mut s = build(json, platform, kernel);
    s.run(|_, _| true).unwrap();
    s
}

// Four seconds: the shares are the weights' once the first slices' start-up (a few ms with
// HRTICK's exact slices, 7.3) is small against the run.
const HOGS: &str = r#"{"global": {"duration": 4}, "tasks": {
    "a": {"loop": 1, "run": 5000000}, "b": {"loop": 1, "priority": NICE_B, "run": 5000000}}}"#;

fn shares(kernel: Kernel, nice_b: i32) -> (f64, f64) {
    let s = run(
        &HOGS.replace("NICE_B", &nice_b.to_string()),
        "smp:1",
        kernel,
    );
    assert_eq!(s.elapsed(), 4_000_000_000);
    let (a, b) = (
        s.sched().task(0).stats.run_ns as f64,
        s.sched().task(1).stats.run_ns as f64,
    );
    (a / 4e9, b / 4e9)
}

#[test]
fn two_nice0_hogs_share_a_cpu_half_and_half() {
    for k in Kernel::ALL {
        let (a, b) = shares(k, 0);
        assert!(
            (a - 0.5).abs() < 0.005 && (b - 0.5).abs() < 0.005,
            "{k:?}: {a} {b}"
        );
    }
}

#[test]
fn nice0_against_nice5_share_as_1024_to_335() {
    let want = 1024.0 / 335.0;
    for k in Kernel::ALL {
        let (a, b) = shares(k, 5);
        assert!((a + b - 1.0).abs() < 1e-9, "{k:?}: the CPU is never idle");
        assert!(
            (a / b / want - 1.0).abs() < 0.01,
            "{k:?}: ratio {} against {want}",
            a / b
        );
    }
}

const PERIODIC: &str = r#"{"global": {"duration": 2}, "tasks": {
    "p": {"run": 3000, "timer": {"ref": "unique", "period": 16000}},
    "q": {"instance": 3, "run": 7000, "timer": {"ref": "unique", "period": 10000}},
    "r": {"run": 1000, "sleep": 2500}}}"#;

#[test]
fn time_is_conserved_for_every_task() {
    for k in Kernel::ALL {
        let s = run(PERIODIC, "smp:2", k);
        for t in s.sched().tasks() {
            let lifetime = t.stats.ended_at.unwrap_or(s.totals().end) - t.stats.created_at;
            assert_eq!(
                t.stats.run_ns + t.stats.wait_ns + t.stats.sleep_ns,
                lifetime,
                "{}",
                t.comm
            );
        }
        let busy: u64 = s.eng.cpus.iter().map(|c| c.busy_ns).sum();
        let run: u64 = s.sched().tasks().iter().map(|t| t.stats.run_ns).sum();
        assert_eq!(busy, run, "{k:?}: CPU busy time is the tasks' run time");
    }
}

#[test]
fn a_periodic_task_alone_waits_only_the_reschedule_nanosecond() {
    let s = run(
        r#"{"global": {"duration": 1}, "tasks": {"p": {"run": 2000, "timer": {"ref": "unique", "period": 10000}}}}"#,
        "smp:1",
        Kernel::V6_12,
    );
    let lat = &s.sched().task(0).stats.wakeup_latencies;
    assert!(lat.count() >= 99, "{} wakeups", lat.count());
    // Its idle CPU schedules 1 ns after the timer's wakeup (`Cpu::changed_at`).
    assert_eq!((lat.percentile(0.0), lat.max()), (1, 1));
}

#[test]
fn eevdf_weighted_lags_sum_to_zero() {
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "a": {"instance": 3, "loop": 1, "run": 5000000}, "b": {"loop": 1, "priority": 7, "run": 5000000},
        "c": {"priority": -3, "run": 900, "sleep": 1300}}}"#;
    for secs in [1, 2] {
        let mut s = build(
            &json.replace("\"duration\": 1", &format!("\"duration\": {secs}")),
            "smp:1",
            Kernel::V6_12,
        );
        s.run(|_, _| true).unwrap();
        let (sum, w) = s.sched.weighted_lag_sum(0, &mut s.eng);
        // V is rounded down to an integer, so the sum is within one total weight of zero.
        assert!(sum.unsigned_abs() < w as u128, "Σ w·lag = {sum}, W = {w}");
    }
}

/// Phases that change nice while others run: the cfs_rq's sums follow the new weights.
#[test]
fn a_phase_nice_change_reweights_the_queued_entity() {
    let json = r#"{"global": {"duration": 1}, "tasks": {
        "a": {"instance": 2, "loop": -1, "run": 30000},
        "b": {"loop": -1, "phases": {"p0": {"priority": 5, "run": 7000}, "p1": {"priority": -3, "run": 11000}}}}}"#;
    for (kernel, ms) in [
        (Kernel::V6_12, 1000),
        (Kernel::V6_12, 1333),
        (Kernel::V6_1, 1000),
    ] {
        let mut s = build(json, "smp:1", kernel);
        s.eng.stop_at = Some(SIM_START + ms * 1_000_000);
        s.run(|_, _| true).unwrap();
        let on_rq: Vec<usize> = (0..s.sched().entities().len())
            .filter(|&i| s.sched().entities()[i].on_rq)
            .collect();
        let cfs = &s.sched().cfs_rq(0);
        let sum: u64 = on_rq
            .iter()
            .map(|&i| s.sched().entities()[i].load.weight)
            .sum();
        assert_eq!(cfs.load.weight, sum, "{kernel:?} at {ms} ms");
        let queued: u64 = cfs
            .timeline
            .iter()
            .map(|i| s.sched().entities()[i as usize].weight())
            .sum();
        if kernel == Kernel::V6_12 {
            assert_eq!(cfs.avg_load, queued);
        }
        // b's weight is its current phase's nice.
        let b = &s.sched().task(2);
        assert_eq!(
            s.sched().entities()[b.se as usize].load,
            crate::sched::weight::LoadWeight::of_nice(b.nice, false)
        );
        // The cfs_rq's load_avg holds the entities' load_avg (nothing lost on reweight).
        let se_load: u64 = on_rq
            .iter()
            .map(|&i| s.sched().entities()[i].avg.load_avg)
            .sum();
        assert!(
            cfs.avg.load_avg.abs_diff(se_load) <= on_rq.len() as u64 + 1,
            "{} vs {se_load}",
            cfs.avg.load_avg
        );
    }
}

#[test]
fn cpu_util_reads_the_cfs_rq_and_cpu_util_without_removes_the_task() {
    // One task, 3 ms every 10 ms on CPU 0; the run stops while it sleeps (at 1.005 s it has
    // run 3 ms and sleeps until 1.010 s) and while it runs (at 1.0115 s).
    let json = r#"{"global": {"duration": 1}, "tasks": {"t": {"cpus": [0], "loop": -1,
        "run": 3000, "timer": {"ref": "t", "period": 10000}}}}"#;
    for (ms, running) in [(1005.0, false), (1011.5, true)] {
        let mut s = build(json, "smp:2", Kernel::V6_1);
        s.eng.stop_at = Some(SIM_START + (ms * 1e6) as u64);
        s.run(|_, _| true).unwrap();
        let (cfs, se) = (
            &s.sched().cfs_rq(0),
            &s.sched().entities()[s.sched().task(0).se as usize],
        );
        assert_eq!(
            s.sched().task(0).state == crate::sched::task::TaskState::Running,
            running
        );
        // cpu_util_cfs: max(util_avg, util_est), capped by capacity.
        assert_eq!(
            s.sched().cpu_util(0),
            cfs.avg.util_avg.max(cfs.util_est as u64).min(1024)
        );
        // Without the task: its util_avg leaves, and its estimate too while it is queued.
        let est = if running {
            (cfs.util_est - se.util_est.task_util_est()) as u64
        } else {
            cfs.util_est as u64
        };
        let expected = cfs.avg.util_avg.saturating_sub(se.avg.util_avg).max(est);
        assert_eq!(s.sched().cpu_util_without(0, 0), expected);
        // CPU 1 never ran it: nothing to remove there.
        assert_eq!(s.sched().cpu_util_without(1, 0), s.sched().cpu_util(1));
    }
}

#[derive(Clone, Default)]
struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The ftrace text of a run.
pub(super) fn traced(json: &str, platform: &str) -> Vec<u8> {
    traced_run(build(json, platform, Kernel::V6_12))
}

/// The trace-cmd text of a whole run of `s`.
fn traced_run(mut s: Sim) -> Vec<u8> {
    let buf = Shared::default();
    let cpus = s.platform().nr_cpus();
    s.observe(Box::new(FtraceWriter::new(buf.clone(), cpus).unwrap()));
    s.run(|_, _| true).unwrap();
    let out = buf.0.lock().unwrap().clone();
    out
}

#[test]
fn same_inputs_give_byte_identical_traces() {
    let a = traced(PERIODIC, "hikey960");
    assert!(a.len() > 100_000);
    assert_eq!(a, traced(PERIODIC, "hikey960"));
    let text = String::from_utf8(a).unwrap();
    for ev in [
        "sched_switch:",
        "sched_wakeup:",
        "sched_waking:",
        "sched_wakeup_new:",
        "sched_pelt_se:",
        "sched_pelt_cfs:",
        "sched_util_est_se:",
        "cpu_idle:",
        "task_rename:",
    ] {
        assert!(text.contains(ev), "no {ev}");
    }
}

#[test]
fn refuses_cpus_outside_the_platform_and_endless_runs() {
    let refusal = |json: &str| {
        let wl = parse(json, "w.json", Dialect::Workgen).unwrap();
        let plat = load_builtin("smp:2").unwrap();
        let feat = preset(Kernel::V6_12);
        Sim::new(&wl, plat, feat, &RunOptions::default())
            .err()
            .unwrap()
            .to_string()
    };
    let e = refusal(r#"{"tasks": {"t": {"cpus": [9], "run": 1, "sleep": 1}}}"#);
    assert!(
        e.contains("tasks.t.cpus") && e.contains("CPU 9 is outside"),
        "{e}"
    );
    let e = refusal(r#"{"tasks": {"t": {"run": 1, "sleep": 1}}}"#);
    assert!(e.contains("loops for ever"), "{e}");
}

#[test]
fn a_loop_of_zero_length_events_is_reported_not_a_panic() {
    let json = r#"{"global": {"duration": 1}, "tasks": {"t": {"lock": "m", "unlock": "m"}}}"#;
    let s = run(json, "smp:1", Kernel::V6_12);
    let d = s.totals().deadlock.clone().expect("livelock");
    assert!(d.starts_with("livelock at 0.000000 s: t-0"), "{d}");
}

#[test]
fn a_barrier_cycle_is_reported_as_a_deadlock() {
    // Barrier "b" is used twice in one task: rt-app counts 2 users, only one can ever arrive.
    let json = r#"{"tasks": {"t": {"loop": 1, "phases": {"p1": {"run": 10, "barrier": "b"}, "p2": {"barrier": "b"}}}}}"#;
    let s = run(json, "smp:1", Kernel::V6_12);
    let d = s.totals().deadlock.clone().expect("deadlock");
    assert!(d.contains("t-0 (barrier b)"), "{d}");
}

/// Work calibrated at the highest OPP progresses at cur/max: 50 ms of work at 208 of
/// 1200 MHz takes 50 × 1200 / 208 = 288.46 ms; and the energy of that stretch is the OPP's
/// power times it (69 mW per CPU, 16 mW for its cluster, LISA's hikey620).
#[test]
fn work_runs_at_the_frequency_the_governor_sets() {
    let wl = parse(
        r#"{"tasks": {"t": {"cpus": [0], "loop": 1, "run": 50000}}}"#,
        "test.json",
        Dialect::Workgen,
    )
    .unwrap();
    let mut feat = preset(Kernel::V6_12);
    feat.set("cpufreq.governor=powersave").unwrap();
    let mut s = Sim::new(
        &wl,
        load_builtin("hikey").unwrap(),
        feat,
        &RunOptions::default(),
    )
    .unwrap();
    s.run(|_, _| true).unwrap();
    let expect = 50e6 * 1200.0 / 208.0;
    let run = s.sched().task(0).stats.run_ns as f64;
    assert!((run - expect).abs() < 1000.0, "{run} against {expect}");
    let mj = (69.0 + 16.0) * expect * 1e-9;
    assert!(
        (s.energy().total_mj() - mj).abs() < 1e-3 * mj,
        "{} against {mj}",
        s.energy().total_mj()
    );
}

#[test]
fn a_userspace_frequency_must_be_an_opp_and_a_policy_must_exist() {
    let wl = parse(
        r#"{"tasks": {"t": {"loop": 1, "run": 10}}}"#,
        "t.json",
        Dialect::Workgen,
    )
    .unwrap();
    let plat = load_builtin("hikey").unwrap();
    let mut feat = preset(Kernel::V6_12);
    feat.set("cpufreq.governor=userspace").unwrap();
    feat.set("userspace.khz=500000").unwrap();
    let e = Sim::new(&wl, plat.clone(), feat, &RunOptions::default())
        .err()
        .unwrap();
    assert!(e.to_string().contains("not an OPP"), "{e}");
    let mut feat = preset(Kernel::V6_12);
    feat.set("cpufreq.governor.big=schedutil").unwrap();
    let e = Sim::new(&wl, plat, feat, &RunOptions::default())
        .err()
        .unwrap();
    assert!(e.to_string().contains("no policy"), "{e}");
}

mod bandwidth;
mod deadline;
mod kernels;
mod kthread;
mod pi;
mod rt;
