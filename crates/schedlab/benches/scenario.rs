//! The engine's scenario benchmark (`make bench`): 200 periodic rt-app tasks (periods 4–100 ms,
//! duty 1–30 %, seeded) on hikey960 for 60 simulated seconds, with tracing off, then with each
//! trace format written to a file (text, trace.dat, Perfetto), then keeping the DataFrames'
//! columns (what `schedlab.run` does by default), then untraced with schedutil on
//! every policy instead of the fixed maximum frequency. Prints events per wall second, the
//! real-time factor, each trace's slowdown and size, and schedutil's slowdown, and writes them
//! to target/scenario.json. `events` are the event queue's live events (wakeups, ends of
//! work, busy ticks); `records` the scheduler events they produce (switches, wakeups, PELT and
//! util_est updates...), one per trace line.

use std::fmt::Write as _;
use std::io::BufWriter;
use std::time::Instant;

use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;
use schedlab::kernel::Kernel;
use schedlab::platform;
use schedlab::sched::features::Features;
use schedlab::sim::{RunOptions, Sim};
use schedlab::trace::{DatVersion, DatWriter, Frames, FtraceWriter, Observer, PerfettoWriter};
use schedlab::workload::{self, Dialect, Workload};

const TASKS: usize = 200;
const SIMULATED_S: u64 = 60;
const SEED: u64 = 0x5c4ed1ab;
const RUNS: usize = 5;
/// `cpus=N`.
const HEADER_LINES: usize = 1;

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

/// The median wall time of a run writing its trace with `writer` to a temporary file, and
/// the file.
fn traced(
    wl: &Workload,
    ext: &str,
    writer: impl Fn(BufWriter<std::fs::File>, usize) -> Box<dyn Observer>,
) -> (f64, Vec<u8>) {
    let path = std::env::temp_dir().join(format!("schedlab-scenario-trace.{ext}"));
    let (wall, _) = median(|| {
        let mut s = sim(wl);
        let file = std::fs::File::create(&path).expect("temp file");
        let nr_cpus = s.platform().nr_cpus();
        s.observe(writer(BufWriter::with_capacity(1 << 20, file), nr_cpus));
        s
    });
    let bytes = std::fs::read(&path).expect("trace written");
    let _ = std::fs::remove_file(&path);
    (wall, bytes)
}

fn main() {
    let wl = workload::parse(&workload_json(), "scenario", Dialect::Workgen).expect("valid JSON");
    let (wall, events) = median(|| sim(&wl));
    struct Null;
    impl Observer for Null {
        fn finish(&mut self, _: &[schedlab::sched::task::SchedTask]) -> std::io::Result<()> {
            Ok(())
        }
    }
    let (wall_null, _) = traced(&wl, "null", |_, _| Box::new(Null));
    eprintln!("NULL observer: {wall_null:.3} s ({:.2}x)", wall_null / wall);
    // What schedlab.run keeps by default: the events and signals DataFrames' columns.
    let (wall_fr, _) = traced(&wl, "frames", |_, _| Box::new(Frames::shared()));
    let (wall_t, text) = traced(&wl, "txt", |f, n| {
        Box::new(FtraceWriter::new(f, n).expect("temp file"))
    });
    let (wall_dat, dat) = traced(&wl, "dat", |f, n| {
        Box::new(DatWriter::new(f, n, Kernel::V6_12, DatVersion::V7).expect("zstd"))
    });
    let (wall_pf, pf) = traced(&wl, "perfetto-trace", |f, n| {
        Box::new(PerfettoWriter::new(f, n))
    });
    let (wall_su, events_su) = median(|| sim_with(&wl, "schedutil"));
    let lines = text.iter().filter(|&&b| b == b'\n').count();
    // The scheduler events the run produced (tracepoints), the same with tracing off.
    let records = lines - HEADER_LINES;
    let format = |name: &str, w: f64, bytes: &[u8]| {
        format!(
            " \"{name}\": {{\"wall_s\": {w:.3}, \"slowdown\": {:.2}, \"mb\": {:.1}, \"smaller_than_text\": {:.2}, \"records_per_s\": {:.0}}}",
            w / wall,
            bytes.len() as f64 / 1e6,
            text.len() as f64 / bytes.len() as f64,
            records as f64 / w
        )
    };
    let report = format!(
        concat!(
            "{{\"tasks\": {}, \"platform\": \"hikey960\", \"simulated_s\": {}, \"events\": {}, \"records\": {},\n",
            " \"untraced\": {{\"wall_s\": {:.3}, \"events_per_s\": {:.0}, \"records_per_s\": {:.0}, \"realtime_factor\": {:.0}}},\n",
            "{},\n{},\n{},\n",
            " \"frames\": {{\"wall_s\": {:.3}, \"slowdown\": {:.2}}},\n",
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
        format("text", wall_t, &text),
        format("dat", wall_dat, &dat),
        format("perfetto", wall_pf, &pf),
        wall_fr,
        wall_fr / wall,
        wall_su,
        events_su,
        wall_su / wall,
    );
    print!("scenario: {report}");
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/scenario.json");
    std::fs::write(out, report).expect("target/ is writable");
}
