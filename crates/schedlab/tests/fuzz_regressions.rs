//! Every fuzz seed, and every input a fuzzer crashed on (fuzz/regressions/TARGET, kept
//! once fixed), through the fuzz targets' bodies: none may panic.

use std::path::Path;

fn replay(target: &str, body: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut n = 0;
    for dir in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        let mut paths: Vec<_> = entries
            .map(|e| e.expect("a readable entry").path())
            .collect();
        paths.sort();
        for path in paths.iter().filter(|p| p.is_file()) {
            let data = std::fs::read(path).expect("a readable file");
            let caught = std::panic::catch_unwind(|| body(&data));
            assert!(caught.is_ok(), "{} panics {target}", path.display());
            n += 1;
        }
    }
    assert!(n > 0, "no seed for {target}");
}

#[test]
fn json_inputs() {
    replay("json", schedlab::fuzzing::json);
}

#[test]
fn rtapp_inputs() {
    replay("rtapp", schedlab::fuzzing::rtapp);
}

#[test]
fn platform_inputs() {
    replay("platform", schedlab::fuzzing::platform);
}
