//! What schedlab accepts: every bound an input is checked against, in one place, so that
//! no input can exhaust memory, hang the run or make time arithmetic wrap (docs/inputs.md).

use std::io::Read;
use std::path::Path;

use crate::error::InputError;
use crate::time::Ns;

/// A CPU's or a cluster's power in a platform file, mW: a kilowatt, far above any core's
/// or cluster's, so that a year's energy stays a finite number in the summary's JSON.
pub const MAX_POWER_MW: f64 = 1_000_000.0;

/// Bytes of one input file (a workload, a platform, a trace to replay): rt-app's largest
/// workloads are tens of KiB and 10,000 generated tasks about 2 MiB, so 64 MiB is room to
/// spare while a device like /dev/zero is refused at once instead of read for ever.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// `path`'s bytes, at most `MAX_INPUT_BYTES`; errors name `path`.
pub fn read_input(path: &Path) -> Result<Vec<u8>, InputError> {
    let origin = path.display().to_string();
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| InputError::new(&origin, e.to_string()))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        let mib = MAX_INPUT_BYTES >> 20;
        let msg = format!("larger than {mib} MiB, the most schedlab reads from one input");
        return Err(InputError::new(&origin, msg));
    }
    Ok(bytes)
}

/// Nested objects and arrays in a workload: json-c's default tokener depth
/// (`JSON_TOKENER_DEFAULT_DEPTH`), which rt-app uses.
pub const MAX_JSON_DEPTH: usize = 32;

/// CPUs per platform, and the largest `smp:N` (x86's `CONFIG_NR_CPUS` default range ends at
/// 512 without MAXSMP and at 8192 with it; 4096 covers every machine a platform file
/// describes while bounding the per-CPU tables).
pub const NR_CPUS: usize = 4096;

/// Threads a workload starts (instances summed): the kernel's default `pid_max` (32768).
pub const MAX_THREADS: usize = 32_768;

/// The longest simulated time: 366 days. Every time value in a workload is at most this, so
/// that sums of a few of them stay far below `u64::MAX` ns (584 years).
pub const MAX_SIM_NS: Ns = 366 * 24 * 3600 * 1_000_000_000;

/// The same in µs, rt-app's unit for times.
pub const MAX_TIME_US: u64 = MAX_SIM_NS / 1000;

/// The same in seconds, `global.duration`'s unit.
pub const MAX_DURATION_S: u64 = MAX_SIM_NS / 1_000_000_000;

/// Task groups in a run, the root included (`--idle-cgroups` and the paths rt-app's
/// `taskgroup` names): each costs an entity and a cfs_rq per CPU (see `MAX_GROUP_CPUS`).
pub const MAX_GROUPS: usize = 100_000;

/// Groups × CPUs: the entities and cfs_rqs of all groups stay under about 1 GB.
pub const MAX_GROUP_CPUS: usize = 2_000_000;

/// Levels below the root of a cgroup path.
pub const MAX_GROUP_DEPTH: usize = 32;
