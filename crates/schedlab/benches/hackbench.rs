//! The wakeup-path benchmark (`make bench`): `hackbench -g 16 -f 20 -l 100 -s 100` (640
//! tasks, Unix sockets) on icelake-2s with the cost model on, and a periodic load of 100,
//! 1,000 and 10,000 tasks on smp:64 (each runs 50 µs per period; the period grows with the
//! number of tasks so that the CPUs stay half busy; the tasks' phases are spread), to show
//! the cost per event against the number of tasks. Prints events per wall second (median of 5 runs) and writes them to
//! target/hackbench.json. `cargo bench --bench hackbench -- hackbench` (or `-- periodic`)
//! runs one half, to profile it.

use std::time::Instant;

use schedlab::kernel::Kernel;
use schedlab::platform;
use schedlab::sched::features::Features;
use schedlab::sim::{RunOptions, Sim};
use schedlab::workload::{self, Dialect, Workload};

const RUNS: usize = 5;
const HACKBENCH: &str =
    r#"{"generators": {"hackbench": {"groups": 16, "fds": 20, "loops": 100, "datasize": 100}}}"#;
const PERIODIC_TASKS: [u64; 3] = [100, 1_000, 10_000];
const PERIODIC_CPUS: u64 = 64;
const RUN_US: u64 = 50;
const PERIODIC_S: u64 = 1;

/// N tasks running 50 µs every N · 50 / 32 µs: 64 CPUs half busy whatever N. Their first
/// periods are spread evenly over one period (task `i` starts `i · period / N` µs late), as
/// independent periodic loads would be, so that the runqueues stay as short whatever N.
fn periodic_json(n: u64) -> String {
    let period = n * RUN_US * 2 / PERIODIC_CPUS;
    let tasks: Vec<String> = (0..n)
        .map(|i| {
            let delay = i * period / n;
            format!(
                r#""t{i}": {{"delay": {delay}, "loop": -1, "run": {RUN_US}, "timer": {{"ref": "unique", "period": {period}}}}}"#
            )
        })
        .collect();
    format!(
        r#"{{"global": {{"duration": {PERIODIC_S}}}, "tasks": {{{}}}}}"#,
        tasks.join(", ")
    )
}

fn sim(wl: &Workload, platform: &str, overhead: bool) -> Sim {
    let plat = platform::load_builtin(platform).expect("a valid platform");
    let mut feat = Features::preset(Kernel::V6_12);
    feat.overhead = overhead;
    Sim::new(wl, plat, feat, &RunOptions::default()).expect("the workload is valid")
}

/// The median of `RUNS` runs: (wall seconds, events; every run is identical).
fn median(wl: &Workload, platform: &str, overhead: bool) -> (f64, u64) {
    let mut runs: Vec<(f64, u64)> = (0..RUNS)
        .map(|_| {
            let mut s = sim(wl, platform, overhead);
            let t = Instant::now();
            s.run(|_, _| true).expect("no output to fail");
            (t.elapsed().as_secs_f64(), s.totals().events)
        })
        .collect();
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    runs[RUNS / 2]
}

/// The 640-task hackbench case, as a JSON object.
fn hackbench() -> String {
    let hb = workload::parse(HACKBENCH, "hackbench", Dialect::Workgen).expect("valid JSON");
    let (wall, events) = median(&hb, "icelake-2s", true);
    format!(
        "{{\"platform\": \"icelake-2s\", \"tasks\": 640, \"events\": {events}, \"wall_s\": {wall:.3}, \"events_per_s\": {:.0}}}",
        events as f64 / wall
    )
}

/// The periodic loads, as a JSON array: cost per event against the number of tasks.
fn periodic() -> String {
    let mut first_ns = None;
    let cases: Vec<String> = PERIODIC_TASKS
        .into_iter()
        .map(|n| {
            let json = periodic_json(n);
            let wl = workload::parse(&json, "periodic", Dialect::Workgen).expect("valid JSON");
            let (wall, events) = median(&wl, "smp:64", false);
            let ns = wall * 1e9 / events as f64;
            let ratio = ns / *first_ns.get_or_insert(ns);
            format!(
                "{{\"tasks\": {n}, \"events\": {events}, \"wall_s\": {wall:.3}, \"ns_per_event\": {ns:.1}, \"vs_100\": {ratio:.2}}}"
            )
        })
        .collect();
    format!("[{}]", cases.join(", "))
}

fn main() {
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wants = |case: &str| only.as_deref().is_none_or(|o| o == case);
    let mut parts = Vec::new();
    if wants("hackbench") {
        parts.push(format!("\"hackbench\": {}", hackbench()));
    }
    if wants("periodic") {
        parts.push(format!("\"periodic\": {}", periodic()));
    }
    let report = format!("{{{}}}\n", parts.join(",\n "));
    print!("hackbench: {report}");
    if only.is_none() {
        let out =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/hackbench.json");
        std::fs::write(out, report).expect("target/ is writable");
    }
}
