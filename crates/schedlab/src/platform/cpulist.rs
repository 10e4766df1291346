//! The kernel's cpulist syntax ("0-3,8,10-11"), as in sysfs and `taskset -c`.

use crate::limits::NR_CPUS;

/// Parse a cpulist into ascending, distinct CPU ids.
pub fn parse_cpulist(text: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim) {
        let bad = || format!("bad cpulist {text:?}: {part:?} is not N or N-M");
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (
                a.trim().parse().map_err(|_| bad())?,
                b.trim().parse().map_err(|_| bad())?,
            ),
            None => {
                let n: usize = part.parse().map_err(|_| bad())?;
                (n, n)
            }
        };
        if hi >= NR_CPUS {
            return Err(format!(
                "bad cpulist {text:?}: CPU {hi} is out of range (at most {} CPUs: 0-{})",
                NR_CPUS,
                NR_CPUS - 1
            ));
        }
        if lo > hi {
            return Err(format!(
                "bad cpulist {text:?}: {part:?} is a decreasing range"
            ));
        }
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    let n = cpus.len();
    cpus.dedup();
    if cpus.len() != n {
        return Err(format!("bad cpulist {text:?}: a CPU is listed twice"));
    }
    Ok(cpus)
}

/// Format ascending CPU ids as a cpulist, with ranges.
pub fn format_cpulist(cpus: &[usize]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        if j == i {
            out += &cpus[i].to_string();
        } else {
            out += &format!("{}-{}", cpus[i], cpus[j]);
        }
        i = j + 1;
    }
    out
}
