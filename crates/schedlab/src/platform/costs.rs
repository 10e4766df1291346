//! What the kernel's operations cost on a platform (ns each): the cost model's table
//! (on unless `--set overhead=off`, `sim/overhead.rs`). A platform file's `[overhead]` table may scale
//! the defaults below (`scale = X`: its CPUs do the kernel's work X times as slowly as seed
//! 001's machine) and give any operation's cost (`NAME_ns = N`).

use std::collections::BTreeMap;

use crate::sched::ops::{Op, OpCounts, OPS};

/// The most one operation may cost (100 ms).
pub const MAX_OP_COST_NS: u64 = 100_000_000;
/// The widest scale of the defaults a platform may ask for.
pub const MAX_SCALE: f64 = 100.0;

/// ns per operation, indexed by [`Op`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpCosts(pub [u64; OPS.len()]);

impl Default for OpCosts {
    /// The seed 001 machine (an 8-CPU x86 server of 2013, Linux 3.11, HZ=1000): see
    /// docs/overhead.md for how each figure was found.
    fn default() -> OpCosts {
        let mut c = [0; OPS.len()];
        for op in OPS {
            c[op as usize] = match op {
                // Calibrated on seed 001's no-group run (24.3% sy, `__schedule` 7.57% and
                // `timerqueue_add` 7.08% of its cycles): docs/overhead.md.
                Op::ContextSwitch => 610,
                Op::Nanosleep => 549,
                Op::HrtimerIrq => 427,
                Op::WakeupLocal => 305,
                Op::WakeupRemote => 549,
                Op::Tick => 610,
                // Estimated from cache latencies (docs/overhead.md): a PELT update touches
                // two or three hot lines and does one 32-period decay.
                Op::PeltUpdate | Op::BlockedUpdate => 40,
                Op::PeltScale => 6,
                Op::ClockPelt => 6,
                Op::BalanceDomain => 400,
                Op::BalanceGroup => 100,
                Op::BalanceTask => 60,
                Op::Migration => 183,
                Op::UpdateHLoad => 50,
                // One visit: the sibling list's next group (an L3 hit) and its per-CPU
                // cfs_rq and entity (DRAM misses, overlapped): docs/overhead.md.
                Op::TgLoadDown => 20,
                Op::HLoadStep => 20,
                // First estimates, before calibration on the benchmark seeds
                // (docs/overhead.md): a pipe call locks the pipe and touches one buffer; a
                // socket call allocates or frees an skb and takes both sockets' locks.
                Op::PipeWrite | Op::PipeRead => 400,
                Op::UnixSend => 1_000,
                Op::UnixRecv => 800,
                // First estimate, as a pipe call's: a futex call hashes its address and takes
                // one bucket's lock.
                Op::Futex => 400,
                // A cache line copied at about 10 GB/s.
                Op::CopyLine => 6,
                // Estimated from the oracle's icount traces (docs/overhead.md): rt-app 1.0's
                // main thread forks a thread every 78-88 µs there, and each spends 60-111 µs
                // before the start barrier; divided by qemu-tcg:1's scale of 5.5.
                // The same traces: rt-app's main thread runs 1.21-1.51 ms (median 1.25) from
                // its exec to its first thread under 6.1; divided by 5.5.
                Op::AppInit => 227_000,
                Op::Clone => 15_000,
                Op::ThreadInit => 16_000,
                // The same traces of perf bench sched messaging (docs/overhead.md): perf forks
                // a process every 833 µs, each runs 224 µs before it waits for the start (less
                // its ready write) and 2.02 ms from its last read to its exit; divided by 5.5.
                Op::Fork => 151_000,
                Op::ForkChild => 40_700,
                Op::Exit => 367_000,
            };
        }
        OpCosts(c)
    }
}

impl OpCosts {
    #[inline(always)]
    pub fn get(&self, op: Op) -> u64 {
        self.0[op as usize]
    }

    /// What the work `ops` counts costs (ns).
    #[inline]
    pub fn price(&self, ops: &OpCounts) -> u64 {
        OPS.iter().map(|&op| ops.get(op) * self.get(op)).sum()
    }

    /// The defaults times `scale` (rounded to the ns), with a platform file's `[overhead]`
    /// entries (`NAME_ns = N`) over them.
    pub fn with(scale: f64, table: &BTreeMap<String, u64>) -> Result<OpCosts, String> {
        if !(scale > 0.0 && scale <= MAX_SCALE) {
            return Err(format!(
                "overhead.scale = {scale}: out of range, above 0 to {MAX_SCALE}"
            ));
        }
        let mut c = OpCosts::default();
        for ns in &mut c.0 {
            *ns = (*ns as f64 * scale).round() as u64;
        }
        for (key, &ns) in table {
            let op = (key.strip_suffix("_ns"))
                .and_then(|name| OPS.iter().find(|op| op.name() == name))
                .ok_or_else(|| {
                    let known: Vec<String> =
                        OPS.iter().map(|o| format!("{}_ns", o.name())).collect();
                    format!(
                        "overhead.{key}: unknown operation; known: {}",
                        known.join(", ")
                    )
                })?;
            if ns > MAX_OP_COST_NS {
                return Err(format!(
                    "overhead.{key} = {ns}: out of range, 0 to {MAX_OP_COST_NS} ns"
                ));
            }
            c.0[*op as usize] = ns;
        }
        Ok(c)
    }
}
