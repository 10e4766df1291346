//! Per-Entity Load Tracking, with Linux 6.12's integer arithmetic (kernel/sched/pelt.c).
//!
//! A [`SchedAvg`] is the kernel's `struct sched_avg` without util_est (see `util_est.rs`).
//! [`update_load_sum`] and [`update_load_avg`] are `___update_load_sum` and
//! `___update_load_avg`; every tracked signal (task and group entities, cfs_rq, rt_rq,
//! dl_rq, irq) is these two calls with its own `load`/`runnable`/`running` arguments.

use crate::time::{Ns, PELT_UNIT_SHIFT};

/// Half-life of the geometric series, in periods: y^32 = 1/2 (sched-pelt.h).
pub const LOAD_AVG_PERIOD: u32 = 32;
/// Fixed point of the integer series `max = (max * y) + 1024` (sched-pelt.h).
pub const LOAD_AVG_MAX: u32 = 47742;
/// Smallest PELT divider, at the start of a period (pelt.h).
pub const PELT_MIN_DIVIDER: u32 = LOAD_AVG_MAX - 1024;
/// `SCHED_CAPACITY_SHIFT`: capacities and utilizations are in 1/1024ths.
pub const SCHED_CAPACITY_SHIFT: u32 = 10;
/// `SCHED_CAPACITY_SCALE`.
pub const SCHED_CAPACITY_SCALE: u64 = 1 << SCHED_CAPACITY_SHIFT;
/// `decay_load` returns 0 past this many periods (`LOAD_AVG_PERIOD * 63`).
const DECAY_HORIZON: u64 = LOAD_AVG_PERIOD as u64 * 63;

/// `runnable_avg_yN_inv[n]` = trunc((2^32 - 1) * y^n), y = 2^(-1/32) (sched-pelt.h).
pub const RUNNABLE_AVG_YN_INV: [u32; 32] = [
    0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6, 0xe0ccdeeb, 0xdbfbb796,
    0xd744fcc9, 0xd2a81d91, 0xce248c14, 0xc9b9bd85, 0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46,
    0xb504f333, 0xb123f581, 0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9,
    0x9837f050, 0x94f4efa8, 0x91c3d373, 0x8ea4398a, 0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698,
];

/// `cap_scale(v, s)`: v·s/1024, truncated (sched.h).
#[inline(always)]
pub fn cap_scale(v: u64, s: u64) -> u64 {
    (v * s) >> SCHED_CAPACITY_SHIFT
}

/// The kernel's `struct sched_avg` signals (include/linux/sched.h), util_est excepted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchedAvg {
    pub last_update_time: Ns,
    pub load_sum: u64,
    pub runnable_sum: u64,
    pub util_sum: u32,
    pub period_contrib: u32,
    pub load_avg: u64,
    pub runnable_avg: u64,
    pub util_avg: u64,
}

impl SchedAvg {
    /// The signals' names, in the order of [`SchedAvg::signals`] (and of schedlab's CSV).
    pub const SIGNAL_NAMES: [&'static str; 7] = [
        "load_sum",
        "runnable_sum",
        "util_sum",
        "period_contrib",
        "load_avg",
        "runnable_avg",
        "util_avg",
    ];

    /// The sums, period_contrib and averages, widened to u64.
    #[inline]
    pub fn signals(&self) -> [u64; 7] {
        [
            self.load_sum,
            self.runnable_sum,
            self.util_sum as u64,
            self.period_contrib as u64,
            self.load_avg,
            self.runnable_avg,
            self.util_avg,
        ]
    }
}

/// How a contribution is scaled when it is accumulated.
///
/// Since Linux 5.1 time itself is scaled (clock_pelt) and contributions are not:
/// [`ContribScale::NONE`]. Before 5.1 `accumulate_sum` scaled the contribution by the
/// frequency (`arch_scale_freq_capacity`) and util additionally by the CPU capacity
/// (`arch_scale_cpu_capacity`). With both at 1024 the two forms are the same integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContribScale {
    pub freq: u64,
    pub cpu: u64,
}

impl ContribScale {
    pub const NONE: ContribScale = ContribScale {
        freq: SCHED_CAPACITY_SCALE,
        cpu: SCHED_CAPACITY_SCALE,
    };
}

/// `decay_load(val, n)`: val·y^n, truncating at every step as the kernel does (pelt.c).
#[inline]
pub fn decay_load(mut val: u64, n: u64) -> u64 {
    if n > DECAY_HORIZON {
        return 0;
    }
    let mut local_n = n as usize;
    if local_n >= LOAD_AVG_PERIOD as usize {
        val >>= local_n / LOAD_AVG_PERIOD as usize;
        local_n %= LOAD_AVG_PERIOD as usize;
    }
    // mul_u64_u32_shr(val, inv, 32)
    ((val as u128 * RUNNABLE_AVG_YN_INV[local_n] as u128) >> 32) as u64
}

/// `__accumulate_pelt_segments`: d1·y^p + 1024·Σ_{n=1}^{p-1} y^n + d3 (pelt.c).
#[inline]
fn accumulate_pelt_segments(periods: u64, d1: u32, d3: u32) -> u32 {
    let c1 = decay_load(d1 as u64, periods) as u32;
    let c2 = LOAD_AVG_MAX - decay_load(LOAD_AVG_MAX as u64, periods) as u32 - 1024;
    c1 + c2 + d3
}

/// `accumulate_sum`: decay the sums over the periods crossed and add the new
/// contribution; returns the number of periods crossed (pelt.c).
#[inline]
fn accumulate_sum(
    mut delta: u64,
    sa: &mut SchedAvg,
    load: u64,
    runnable: u64,
    running: bool,
    scale: ContribScale,
) -> u64 {
    let mut contrib = delta as u32; // no period crossed: delta < 1024
    delta += sa.period_contrib as u64;
    let periods = delta / 1024;
    if periods != 0 {
        sa.load_sum = decay_load(sa.load_sum, periods);
        sa.runnable_sum = decay_load(sa.runnable_sum, periods);
        sa.util_sum = decay_load(sa.util_sum as u64, periods) as u32;
        delta %= 1024;
        if load != 0 {
            contrib = accumulate_pelt_segments(periods, 1024 - sa.period_contrib, delta as u32);
        }
    }
    sa.period_contrib = delta as u32;

    let contrib = cap_scale(contrib as u64, scale.freq);
    if load != 0 {
        sa.load_sum += load * contrib;
    }
    if runnable != 0 {
        sa.runnable_sum += (runnable * contrib) << SCHED_CAPACITY_SHIFT;
    }
    if running {
        sa.util_sum = sa.util_sum.wrapping_add((contrib * scale.cpu) as u32);
    }
    periods
}

/// `___update_load_sum(now, sa, load, runnable, running)`: true when at least one period
/// boundary was crossed, i.e. when the averages must be recomputed (pelt.c).
#[inline]
pub fn update_load_sum(
    now: Ns,
    sa: &mut SchedAvg,
    load: u64,
    mut runnable: u64,
    mut running: bool,
    scale: ContribScale,
) -> bool {
    if now < sa.last_update_time {
        // The kernel tolerates a clock going backwards by resynchronising.
        sa.last_update_time = now;
        return false;
    }
    let delta = (now - sa.last_update_time) >> PELT_UNIT_SHIFT;
    if delta == 0 {
        return false;
    }
    sa.last_update_time += delta << PELT_UNIT_SHIFT;
    // A dequeued entity that is still cfs_rq->curr is neither runnable nor running.
    if load == 0 {
        runnable = 0;
        running = false;
    }
    accumulate_sum(delta, sa, load, runnable, running, scale) != 0
}

/// `get_pelt_divider(sa)`: the maximum sum reachable at this point of the period (pelt.h).
#[inline(always)]
pub fn get_pelt_divider(sa: &SchedAvg) -> u32 {
    PELT_MIN_DIVIDER + sa.period_contrib
}

/// `___update_load_avg(sa, load)`: the averages from the sums (pelt.c).
#[inline]
pub fn update_load_avg(sa: &mut SchedAvg, load: u64) {
    let divider = get_pelt_divider(sa) as u64;
    sa.load_avg = load * sa.load_sum / divider;
    sa.runnable_avg = sa.runnable_sum / divider;
    sa.util_avg = sa.util_sum as u64 / divider;
}

/// `__update_load_avg_se` for a task entity: `on_rq`, `runnable` (not delayed) and
/// `running` (is cfs_rq->curr) as the kernel passes them, `weight` = se_weight(se).
/// Returns true when the averages were recomputed.
#[inline]
pub fn update_load_avg_se(
    now: Ns,
    sa: &mut SchedAvg,
    on_rq: bool,
    runnable: u64,
    running: bool,
    weight: u64,
    scale: ContribScale,
) -> bool {
    if update_load_sum(now, sa, on_rq as u64, runnable, running, scale) {
        update_load_avg(sa, weight);
        return true;
    }
    false
}

/// `update_rt_rq_load_avg` / `update_dl_rq_load_avg`: a class's running time on the rq,
/// its load, runnable and util all "running" (the rq's other signals are the fair class's).
#[inline]
pub fn update_class_avg(now: Ns, sa: &mut SchedAvg, running: bool, scale: ContribScale) -> bool {
    let r = running as u64;
    if update_load_sum(now, sa, r, r, running, scale) {
        update_load_avg(sa, 1);
        return true;
    }
    false
}

/// `update_thermal_load_avg` / `update_hw_load_avg`: a capacity `pressure` as a PELT
/// signal of the time it holds (its `load_avg`), without invariance.
pub fn update_pressure_avg(now: Ns, sa: &mut SchedAvg, pressure: u64) -> bool {
    if update_load_sum(
        now,
        sa,
        pressure,
        pressure,
        pressure != 0,
        ContribScale::NONE,
    ) {
        update_load_avg(sa, 1);
        return true;
    }
    false
}

#[cfg(test)]
mod tests;
