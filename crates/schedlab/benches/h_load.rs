//! Seed 001's load as a benchmark (`make bench`): 1,000 fair tasks waking every millisecond
//! on smp:8 at HZ=1000 (the 6.1 preset) for 1 simulated second, with no cgroups and with
//! 10,000 idle ones, h_load lazy and eager. The runs alternate (no groups, then groups, …)
//! so that a drifting machine affects both alike; prints the best and median wall time of
//! each and the ratios to the no-group run, and writes them to target/h_load.json.

use std::time::Instant;

use schedlab::kernel::Kernel;
use schedlab::platform;
use schedlab::sched::features::Features;
use schedlab::sim::{RunOptions, Sim};
use schedlab::workload::{self, Dialect, Workload};

const RUNS: usize = 7;
const IDLE_GROUPS: u64 = 10_000;
const WAKERS: &str = r#"{"global": {"duration": 1, "default_policy": "SCHED_OTHER"},
 "tasks": {"waker-1us": {"instance": 500, "loop": -1, "run": 1, "sleep": 1000},
           "waker-2us": {"instance": 500, "loop": -1, "run": 2, "sleep": 1000}}}"#;

/// The cases: (name, idle cgroups, h_load).
const CASES: [(&str, u64, &str); 3] = [
    ("no_groups", 0, "lazy"),
    ("lazy_10k", IDLE_GROUPS, "lazy"),
    ("eager_10k", IDLE_GROUPS, "eager"),
];

/// One run's wall seconds.
fn timed(wl: &Workload, groups: u64, h_load: &str) -> f64 {
    let mut feat = Features::preset(Kernel::V6_1);
    feat.set("hz=1000").expect("a valid switch");
    feat.set(&format!("fair.h_load={h_load}"))
        .expect("a valid switch");
    let opts = RunOptions {
        idle_cgroups: groups,
        ..RunOptions::default()
    };
    let plat = platform::load_builtin("smp:8").expect("built-in platform");
    let t = Instant::now();
    let mut s = Sim::new(wl, plat, feat, &opts).expect("the workload is valid");
    s.run(|_, _| true).expect("no output to write");
    t.elapsed().as_secs_f64()
}

fn main() {
    let wl = workload::parse(WAKERS, "wakers", Dialect::Workgen).expect("valid JSON");
    let mut walls = vec![Vec::new(); CASES.len()];
    for _ in 0..RUNS {
        for (i, &(_, groups, h_load)) in CASES.iter().enumerate() {
            walls[i].push(timed(&wl, groups, h_load));
        }
    }
    for w in &mut walls {
        w.sort_by(f64::total_cmp);
    }
    let (best0, median0) = (walls[0][0], walls[0][RUNS / 2]);
    let rows: Vec<String> = (CASES.iter().zip(&walls))
        .map(|(&(name, _, _), w)| {
            format!(
                "\"{name}\": {{\"best_s\": {:.3}, \"median_s\": {:.3}, \"best_ratio\": {:.2}, \"median_ratio\": {:.2}}}",
                w[0],
                w[RUNS / 2],
                w[0] / best0,
                w[RUNS / 2] / median0
            )
        })
        .collect();
    let report = format!("{{{}}}\n", rows.join(",\n "));
    print!("h_load: {report}");
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/h_load.json");
    std::fs::write(out, report).expect("target/ is writable");
}
