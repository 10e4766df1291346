//! The speed-at-scale benchmark (`make bench`): each figure with its goal (issue 39) and its
//! ratio to the previous `make bench` (target/scale.toml). The default (realistic) machine,
//! untraced; each figure the median of 3 runs of the simulation alone (set-up excluded).
//! - short: 640 fair tasks, each an rt-app loop of run 50 µs and sleep 200 µs, on icelake-2s
//!   for 2 s: events per second (≥ 10 M) and the real-time factor (≥ 1).
//! - hackbench: `hackbench -g 16 -f 20 -l 100 -s 100` on icelake-2s: events per second
//!   (≥ 10 M).
//! - tasks: N periodic tasks (periods 10–100 ms, seeded) whose utilizations add up to 48
//!   CPUs, on smp:64 for 1 s, N = 100, 1,000 and 10,000: ns per event, and 10,000's over
//!   100's (≤ 1.3).
//! - cpus: the 10,000 tasks on smp:512 for 1 s and smp:4096 for 0.1 s: ns per event, and
//!   smp:512's over smp:64's (≤ 1.3).
//! - queues: 40 and 4,000 of the short tasks on smp:4 for 5 s (10 and 1,000 queued per
//!   CPU): ns per event, and 4,000's over 40's (the fair runqueue's cost as it grows; no
//!   goal of the issue's).
//! - replay: a trace.dat (v7, zstd chunks; and v6) of 64 short tasks on smp:8 for 5 s read
//!   back (`workload::replay::dat`): records per second (issue 40: ≥ 5 M).
//!
//! `cargo bench --bench scale -- short` (or hackbench, tasks, cpus, queues, replay) runs
//! one, to profile it.

use std::fmt::Write as _;
use std::time::Instant;

use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;
use schedlab::kernel::Kernel;
use schedlab::platform;
use schedlab::run::{run, RunSpec, WorkloadSource};
use schedlab::sched::features::Features;
use schedlab::sim::{RunOptions, Sim};
use schedlab::trace::TraceFormat;
use schedlab::workload::replay::dat::Trace;
use schedlab::workload::{self, Dialect, Workload};

const RUNS: usize = 3;
const SEED: u64 = 0x5ca1e;
const HACKBENCH: &str =
    r#"{"generators": {"hackbench": {"groups": 16, "fds": 20, "loops": 100, "datasize": 100}}}"#;
const TASKS: [u64; 3] = [100, 1_000, 10_000];
/// The periodic tasks' utilizations add up to this many CPUs.
const BUSY_CPUS: u64 = 48;

/// `n` tasks of run 50 µs, sleep 200 µs.
fn short_json(n: u64) -> String {
    let tasks: Vec<String> = (0..n)
        .map(|i| format!(r#""t{i}": {{"loop": -1, "run": 50, "sleep": 200}}"#))
        .collect();
    format!(r#"{{"tasks": {{{}}}}}"#, tasks.join(", "))
}

/// `n` tasks, each running `BUSY_CPUS / n` of its period (drawn in 10–100 ms) every period.
fn periodic_json(n: u64) -> String {
    let mut rng = XorShiftRng::seed_from_u64(SEED);
    let mut tasks = String::new();
    for i in 0..n {
        let period = 10_000 + rng.next_u64() % 90_001;
        let run = (period * BUSY_CPUS / n).max(1);
        let sep = if i == 0 { "" } else { ", " };
        let _ = write!(
            tasks,
            r#"{sep}"p{i}": {{"loop": -1, "run": {run}, "timer": {{"ref": "p{i}", "period": {period}}}}}"#
        );
    }
    format!(r#"{{"tasks": {{{tasks}}}}}"#)
}

/// The median of `RUNS` runs of `json` on `platform` for `ms` (else to its end): (wall
/// seconds, events).
fn median(json: &str, platform: &str, ms: Option<u64>) -> (f64, u64) {
    let opts = RunOptions {
        duration: ms.map(|ms| ms * 1_000_000),
        ..RunOptions::default()
    };
    let wl: Workload = workload::parse(json, "scale", Dialect::Workgen).expect("valid JSON");
    let mut runs: Vec<(f64, u64)> = (0..RUNS)
        .map(|_| {
            let plat = platform::load_builtin(platform).expect("a valid platform");
            let feat = Features::preset(Kernel::V6_12);
            let mut s = Sim::new(&wl, plat, feat, &opts).expect("valid");
            let t = Instant::now();
            s.run(|_, _| true).expect("no output to fail");
            (t.elapsed().as_secs_f64(), s.totals().events)
        })
        .collect();
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    runs[RUNS / 2]
}

fn ns_per_event((wall, events): (f64, u64)) -> f64 {
    wall * 1e9 / events as f64
}

/// The figures measured, by name, with their goals.
#[derive(Default)]
struct Report {
    figures: Vec<(String, f64, &'static str)>,
}

impl Report {
    fn add(&mut self, name: &str, value: f64, goal: &'static str) {
        self.figures.push((name.to_string(), value, goal));
    }

    fn short(&mut self) {
        let (wall, events) = median(&short_json(640), "icelake-2s", Some(2_000));
        self.add("short.events_per_s", events as f64 / wall, ">= 10e6");
        self.add("short.realtime_factor", 2.0 / wall, ">= 1");
    }

    fn hackbench(&mut self) {
        let (wall, events) = median(HACKBENCH, "icelake-2s", None);
        self.add("hackbench.events_per_s", events as f64 / wall, ">= 10e6");
    }

    fn tasks(&mut self) {
        let ns: Vec<f64> = (TASKS.iter())
            .map(|&n| ns_per_event(median(&periodic_json(n), "smp:64", Some(1_000))))
            .collect();
        for (n, ns) in TASKS.iter().zip(&ns) {
            self.add(&format!("tasks.{n}.ns_per_event"), *ns, "");
        }
        self.add("tasks.10000_over_100", ns[2] / ns[0], "<= 1.3");
    }

    fn cpus(&mut self) {
        let on = |platform: &str, ms: u64| {
            ns_per_event(median(&periodic_json(10_000), platform, Some(ms)))
        };
        let (ns64, ns512) = (on("smp:64", 1_000), on("smp:512", 1_000));
        self.add("cpus.512.ns_per_event", ns512, "");
        self.add("cpus.4096.ns_per_event", on("smp:4096", 100), "runs");
        self.add("cpus.512_over_64", ns512 / ns64, "<= 1.3");
    }

    fn queues(&mut self) {
        let on = |n: u64| ns_per_event(median(&short_json(n), "smp:4", Some(5_000)));
        let (few, many) = (on(40), on(4_000));
        self.add("queues.40.ns_per_event", few, "");
        self.add("queues.4000.ns_per_event", many, "");
        self.add("queues.4000_over_40", many / few, "");
    }

    fn replay(&mut self) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        for (name, format) in [("dat", TraceFormat::Dat), ("dat6", TraceFormat::Dat6)] {
            let path = dir.path().join(format!("{name}.dat"));
            let workload = WorkloadSource::Text {
                text: short_json(64),
                origin: "scale".into(),
            };
            let spec = RunSpec {
                duration: Some(5_000_000_000),
                trace: Some(path.clone()),
                trace_format: Some(format),
                ..RunSpec::new(workload, "smp:8")
            };
            run(&spec, |_, _| true).expect("a traced run");
            let mut rates: Vec<f64> = (0..RUNS)
                .map(|_| {
                    let t = Instant::now();
                    let trace = Trace::open(&path).expect("its own trace");
                    let mut n = 0u64;
                    let count = trace.for_each(|_, _, _| {
                        n += 1;
                        Ok(())
                    });
                    count.expect("readable");
                    n as f64 / t.elapsed().as_secs_f64()
                })
                .collect();
            rates.sort_by(f64::total_cmp);
            self.add(
                &format!("replay.{name}.records_per_s"),
                rates[RUNS / 2],
                ">= 5e6",
            );
        }
    }

    /// The figures as a TOML table, and as lines with the ratio to `previous`'s.
    fn render(&self, previous: &toml::Table) -> (String, String) {
        let mut table = toml::Table::new();
        let mut lines = String::new();
        for (name, value, goal) in &self.figures {
            table.insert(name.clone(), toml::Value::Float(*value));
            let ratio = (previous.get(name).and_then(toml::Value::as_float))
                .map_or("-".to_string(), |p| format!("{:.3}", value / p));
            let _ = writeln!(lines, "{name:28} {value:>14.3} {goal:>9} {ratio:>10}");
        }
        (toml::to_string(&table).expect("numbers serialize"), lines)
    }
}

/// A figure's measurement, added to the report.
type Case = fn(&mut Report);

fn main() {
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wants = |case: &str| only.as_deref().is_none_or(|o| o == case);
    let mut report = Report::default();
    let cases: [(&str, Case); 6] = [
        ("short", Report::short),
        ("hackbench", Report::hackbench),
        ("tasks", Report::tasks),
        ("cpus", Report::cpus),
        ("queues", Report::queues),
        ("replay", Report::replay),
    ];
    for (name, case) in cases {
        if wants(name) {
            case(&mut report);
        }
    }
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/scale.toml");
    let previous = (std::fs::read_to_string(&out).ok())
        .and_then(|s| s.parse::<toml::Table>().ok())
        .unwrap_or_default();
    let (toml, lines) = report.render(&previous);
    println!(
        "scale: {:28} {:>14} {:>9} {:>10}",
        "figure", "value", "goal", "vs previous"
    );
    print!("{lines}");
    if only.is_none() {
        std::fs::write(out, toml).expect("target/ is writable");
    }
}
