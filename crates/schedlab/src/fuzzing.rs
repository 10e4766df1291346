//! The fuzz targets' bodies (`fuzz/`, `make fuzz`), shared with the test that replays their
//! seeds and every input a fuzzer ever crashed (`tests/fuzz_regressions.rs`). Each takes
//! arbitrary bytes: an error is the expected answer to bad input, a panic is a bug.

use crate::kernel::Kernel;
use crate::platform::{self, Platform};
use crate::sched::features::Features;
use crate::sim::{RunOptions, Sim};
use crate::workload::{self, json, Dialect};

/// Simulated time of a fuzzed run: enough for wakeups, ticks and a balance, short enough
/// for thousands of inputs a second.
const RUN_NS: u64 = 5_000_000;

/// The JSON reader, both dialects.
pub fn json(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = json::parse(text, false);
        let _ = json::parse(text, true);
    }
}

/// The rt-app reader and compiler, then a short run on smp:2.
pub fn rtapp(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for dialect in [Dialect::Workgen, Dialect::JsonC] {
        if let Ok(wl) = workload::parse(text, "<fuzz>", dialect) {
            simulate(&wl, Platform::smp(2));
        }
    }
}

/// The platform loader, then a short run of two tasks on the platform.
pub fn platform(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(plat) = platform::parse(text, "<fuzz>") {
        let wl = workload::parse(
            r#"{"tasks": {"a": {"instance": 2, "run": 700, "sleep": 300}}}"#,
            "<fuzz>",
            Dialect::Workgen,
        )
        .expect("the fixed workload parses");
        simulate(&wl, plat);
    }
}

fn simulate(wl: &workload::Workload, plat: Platform) {
    let opts = RunOptions {
        duration: Some(RUN_NS),
        ..RunOptions::default()
    };
    if let Ok(mut sim) = Sim::new(wl, plat, Features::preset(Kernel::V6_12), &opts) {
        sim.run(|_, _| true).expect("no output to fail");
    }
}
