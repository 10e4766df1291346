//! LISA's description of the machine a trace comes from (`plat_info.yml`, read by
//! `lisa.platforms.platinfo.PlatformInfo.from_yaml_map`), written beside a run's trace so
//! that LISA's capacity, frequency-domain and cluster analyses run on it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::kernel::Kernel;
use crate::platform::Platform;

/// Where the description of trace `trace` goes: `NAME.plat_info.yml` beside `NAME.EXT`.
pub fn path_for(trace: &Path) -> PathBuf {
    let stem = trace
        .file_stem()
        .map_or_else(|| "trace".into(), |s| s.to_string_lossy());
    trace.with_file_name(format!("{stem}.plat_info.yml"))
}

/// `s` as a YAML double-quoted scalar, so that any platform name reads back as itself:
/// quotes and backslashes escaped, and the characters YAML does not allow printed (C0 and C1
/// controls, DEL, the line and paragraph separators, the byte-order mark) as escapes.
fn quoted(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                q.push('\\');
                q.push(c);
            }
            '\0'..='\x1f' | '\x7f'..='\u{9f}' => {
                let _ = write!(q, "\\x{:02x}", c as u32);
            }
            '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}' => {
                let _ = write!(q, "\\u{:04x}", c as u32);
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// The YAML text: CPU count, frequency domains and each CPU's frequencies, the capacities,
/// the kernel's version, and rt-app's calibration (`pload_ns` on the biggest CPU at its
/// highest frequency, scaled by capacity for the others, as LISA derives rt-app capacities
/// from it).
pub fn render(plat: &Platform, kernel: Kernel, pload_ns: u64) -> String {
    let mut y =
        String::from("# schedlab: the simulated platform, as LISA's PlatformInfo reads it\n");
    y.push_str("platform-info:\n    conf:\n");
    let _ = writeln!(y, "        name: {}", quoted(&plat.name));
    y.push_str("        os: linux\n");
    let _ = writeln!(y, "        cpus-count: {}", plat.nr_cpus());
    let nodes = plat.cpus.iter().map(|c| c.numa + 1).max().unwrap_or(1);
    let _ = writeln!(y, "        numa-nodes-count: {nodes}");
    let domains: Vec<String> = plat.freq_domains.iter().map(|d| list(&d.cpus)).collect();
    let _ = writeln!(y, "        freq-domains: [{}]", domains.join(", "));
    y.push_str("        freqs:\n");
    for c in &plat.cpus {
        let khz: Vec<u32> = plat.freq_domains[c.freq_domain]
            .opps
            .iter()
            .map(|o| o.khz)
            .collect();
        let _ = writeln!(y, "            {}: {}", c.id, list(&khz));
    }
    y.push_str("        cpu-capacities:\n            writeable: false\n            orig:\n");
    for c in &plat.cpus {
        let _ = writeln!(y, "                {}: {}", c.id, c.capacity_orig);
    }
    y.push_str("        kernel:\n            version: !call:devlib.target.KernelVersion\n");
    let _ = writeln!(
        y,
        "                version_string: '{}.0-schedlab #1 SMP PREEMPT'",
        kernel.name()
    );
    y.push_str("        rtapp:\n            calib:\n");
    for c in &plat.cpus {
        let calib = (pload_ns * 1024).div_ceil(c.capacity_orig.max(1) as u64);
        let _ = writeln!(y, "                {}: {calib}", c.id);
    }
    y
}

fn list<T: ToString>(xs: &[T]) -> String {
    let items: Vec<String> = xs.iter().map(T::to_string).collect();
    format!("[{}]", items.join(", "))
}
