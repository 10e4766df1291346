//! What schedlab accepts: every bound an input is checked against, in one place, so that
//! no input can exhaust memory, hang the run or make time arithmetic wrap (docs/inputs.md).

use crate::time::Ns;

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
