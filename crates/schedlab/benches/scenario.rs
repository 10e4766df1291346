//! The engine's scenario benchmark (`make bench`): 200 periodic rt-app tasks (periods 4–100 ms,
//! duty 1–30 %, seeded) on hikey960 for 60 simulated seconds, with tracing off and then with
//! the text trace written to a file, then untraced with schedutil on every policy instead of
//! the fixed maximum frequency. Prints events per wall second, the real-time factor, trace
//! lines per second and schedutil's slowdown, and writes them to target/scenario.json. `events` are the event
//! queue's live events (wakeups, ends of work, busy ticks); `records` the scheduler events
//! they produce (switches, wakeups, PELT and util_est updates...), one per trace line.

use std::fmt::Write as _;
use std::io::BufWriter;
use std::time::Instant;

use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;
use schedlab::kernel::Kernel;
use schedlab::platform;
use schedlab::sched::features::Features;
use schedlab::sim::{RunOptions, Sim};
use schedlab::trace::FtraceWriter;
use schedlab::workload::{self, Dialect, Workload};

const TASKS: usize = 200;
const SIMULATED_S: u64 = 60;
const SEED: u64 = 0x5c4ed1ab;
const RUNS: usize = 5;
/// `# tracer: nop`, `#`, `cpus=N`.
const HEADER_LINES: usize = 3;

/// A uniform draw in [lo, hi].
fn draw(rng: &mut XorShiftRng, lo: u64, hi: u64) -> u64 {
    lo + rng.next_u64() % (hi - lo + 1)
}

/// The workload as rt-app JSON: task i runs duty·period every period, timers independent.
fn workload_json() -> String {
    let mut rng = XorShiftRng::seed_from_u64(SEED);
    let mut tasks = String::new();
    for i in 0..TASKS {
        let period_us = draw(&mut rng, 4_000, 100_000);
        let duty_pct = draw(&mut rng, 1, 30);
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(
            tasks,
            r#"{sep}"t{i}": {{"loop": -1, "run": {}, "timer": {{"ref": "t{i}", "period": {period_us}}}}}"#,
            period_us * duty_pct / 100
        );
    }
    format!(r#"{{"global": {{"duration": {SIMULATED_S}}}, "tasks": {{{tasks}}}}}"#)
}

/// The scenario under `governor` on every policy.
fn sim_with(wl: &Workload, governor: &str) -> Sim {
    let plat = platform::load_builtin("hikey960").expect("built-in platform");
    let mut feat = Features::preset(Kernel::V6_12);
    feat.cpufreq
        .set_governor(governor)
        .expect("a known governor");
    Sim::new(wl, plat, feat, &RunOptions::default()).expect("the scenario is valid")
}

fn sim(wl: &Workload) -> Sim {
    sim_with(wl, "performance")
}

/// Run once; returns (wall seconds, events that did something; stale ones are not counted).
fn timed(mut s: Sim) -> (f64, u64) {
    let t = Instant::now();
    s.run(|_, _| true).expect("the trace file is writable");
    (t.elapsed().as_secs_f64(), s.totals().events)
}

/// The median wall time of `RUNS` runs, and the events of one (every run is identical).
fn median(mut make: impl FnMut() -> Sim) -> (f64, u64) {
    let mut runs: Vec<(f64, u64)> = (0..RUNS).map(|_| timed(make())).collect();
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    runs[RUNS / 2]
}

fn main() {
    let wl = workload::parse(&workload_json(), "scenario", Dialect::Workgen).expect("valid JSON");
    let (wall, events) = median(|| sim(&wl));
    let path = std::env::temp_dir().join("schedlab-scenario-trace.txt");
    let (wall_t, events_t) = median(|| {
        let mut traced = sim(&wl);
        let file = std::fs::File::create(&path).expect("temp file");
        let w = FtraceWriter::new(
            BufWriter::with_capacity(1 << 20, file),
            traced.platform().nr_cpus(),
        )
        .expect("temp file");
        traced.observe(Box::new(w));
        traced
    });
    let (wall_su, events_su) = median(|| sim_with(&wl, "schedutil"));
    let text = std::fs::read(&path).expect("trace written");
    let lines = text.iter().filter(|&&b| b == b'\n').count();
    // The scheduler events the run produced (tracepoints), the same with tracing off.
    let records = lines - HEADER_LINES;
    let _ = std::fs::remove_file(&path);
    let report = format!(
        concat!(
            "{{\"tasks\": {}, \"platform\": \"hikey960\", \"simulated_s\": {}, \"events\": {}, \"records\": {},\n",
            " \"untraced\": {{\"wall_s\": {:.3}, \"events_per_s\": {:.0}, \"records_per_s\": {:.0}, \"realtime_factor\": {:.0}}},\n",
            " \"traced\": {{\"wall_s\": {:.3}, \"events_per_s\": {:.0}, \"realtime_factor\": {:.0}, ",
            "\"trace_lines\": {}, \"trace_mb\": {:.1}, \"lines_per_s\": {:.0}}},\n",
            " \"schedutil\": {{\"wall_s\": {:.3}, \"events\": {}, \"slowdown\": {:.2}}}}}\n"
        ),
        TASKS,
        SIMULATED_S,
        events,
        records,
        wall,
        events as f64 / wall,
        records as f64 / wall,
        SIMULATED_S as f64 / wall,
        wall_t,
        events_t as f64 / wall_t,
        SIMULATED_S as f64 / wall_t,
        lines,
        text.len() as f64 / 1e6,
        lines as f64 / wall_t,
        wall_su,
        events_su,
        wall_su / wall,
    );
    print!("scenario: {report}");
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/scenario.json");
    std::fs::write(out, report).expect("target/ is writable");
}
