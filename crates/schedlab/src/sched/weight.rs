//! Load weights and the fixed-point `calc_delta` (kernel/sched/core.c, fair.c).

/// `sched_prio_to_weight[nice + 20]` (core.c).
pub const SCHED_PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87,
    70, 56, 45, 36, 29, 23, 18, 15,
];

/// `sched_prio_to_wmult[nice + 20]` ≈ 2^32 / weight (core.c; the kernel's own table).
pub const SCHED_PRIO_TO_WMULT: [u32; 40] = [
    48388, 59856, 76040, 92818, 118348, 147320, 184698, 229616, 287308, 360437, 449829, 563644,
    704093, 875809, 1099582, 1376151, 1717300, 2157191, 2708050, 3363326, 4194304, 5237765,
    6557202, 8165337, 10153587, 12820798, 15790321, 19976592, 24970740, 31350126, 39045157,
    49367440, 61356676, 76695844, 95443717, 119304647, 148102320, 186737708, 238609294, 286331153,
];

/// `WEIGHT_IDLEPRIO` and `WMULT_IDLEPRIO` (sched.h): SCHED_IDLE tasks.
pub const WEIGHT_IDLEPRIO: u64 = 3;
pub const WMULT_IDLEPRIO: u32 = 1431655765;

/// 64-bit kernels keep 10 extra bits of weight resolution (`SCHED_FIXEDPOINT_SHIFT`).
pub const SCHED_FIXEDPOINT_SHIFT: u32 = 10;
/// `NICE_0_LOAD` = scale_load(1024).
pub const NICE_0_LOAD: u64 = 1024 << SCHED_FIXEDPOINT_SHIFT;

const WMULT_CONST: u64 = u32::MAX as u64;
const WMULT_SHIFT: u32 = 32;

/// `scale_load(w)`.
#[inline(always)]
pub fn scale_load(w: u64) -> u64 {
    w << SCHED_FIXEDPOINT_SHIFT
}

/// `scale_load_down(w)`: at least 2 for a non-zero weight (sched.h).
#[inline(always)]
pub fn scale_load_down(w: u64) -> u64 {
    if w == 0 {
        0
    } else {
        (w >> SCHED_FIXEDPOINT_SHIFT).max(2)
    }
}

/// `struct load_weight`: a scaled weight and its cached inverse (0 = to be computed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoadWeight {
    pub weight: u64,
    pub inv_weight: u32,
}

impl LoadWeight {
    /// A task's weight for a nice value (`set_load_weight`), or SCHED_IDLE's.
    pub fn of_nice(nice: i32, idle_policy: bool) -> LoadWeight {
        if idle_policy {
            return LoadWeight {
                weight: scale_load(WEIGHT_IDLEPRIO),
                inv_weight: WMULT_IDLEPRIO,
            };
        }
        let i = (nice.clamp(-20, 19) + 20) as usize;
        LoadWeight {
            weight: scale_load(SCHED_PRIO_TO_WEIGHT[i]),
            inv_weight: SCHED_PRIO_TO_WMULT[i],
        }
    }

    /// `update_load_add`/`update_load_sub`: the inverse must be recomputed.
    #[inline]
    pub fn add(&mut self, w: u64) {
        self.weight += w;
        self.inv_weight = 0;
    }

    #[inline]
    pub fn sub(&mut self, w: u64) {
        self.weight -= w;
        self.inv_weight = 0;
    }

    /// `__update_inv_weight`.
    #[inline]
    fn inv(&self) -> u32 {
        if self.inv_weight != 0 {
            return self.inv_weight;
        }
        let w = scale_load_down(self.weight);
        if w >= WMULT_CONST {
            return 1;
        }
        WMULT_CONST
            .checked_div(w)
            .map_or(WMULT_CONST as u32, |i| i as u32)
    }
}

/// Position of the highest set bit, 1-based (`fls`).
#[inline(always)]
fn fls(x: u32) -> u32 {
    32 - x.leading_zeros()
}

/// `__calc_delta(delta_exec, weight, lw)`: delta·weight/lw.weight in fixed point (fair.c).
#[inline]
pub fn calc_delta(delta_exec: u64, weight: u64, lw: &LoadWeight) -> u64 {
    let mut fact = scale_load_down(weight);
    let mut shift = WMULT_SHIFT as i32;
    let hi = (fact >> 32) as u32;
    if hi != 0 {
        let fs = fls(hi);
        shift -= fs as i32;
        fact >>= fs;
    }
    fact = (fact as u32 as u64) * lw.inv() as u64;
    let hi = (fact >> 32) as u32;
    if hi != 0 {
        let fs = fls(hi);
        shift -= fs as i32;
        fact >>= fs;
    }
    // mul_u64_u32_shr
    ((delta_exec as u128 * fact as u128) >> shift) as u64
}

/// `calc_delta_fair(delta, se)`: wall time to virtual time for an entity of weight `lw`.
#[inline]
pub fn calc_delta_fair(delta: u64, lw: &LoadWeight) -> u64 {
    if lw.weight != NICE_0_LOAD {
        calc_delta(delta, NICE_0_LOAD, lw)
    } else {
        delta
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wmult_is_two_to_the_32_over_weight_within_one() {
        for (w, m) in SCHED_PRIO_TO_WEIGHT.iter().zip(SCHED_PRIO_TO_WMULT) {
            let exact = (1u64 << 32) as f64 / *w as f64;
            assert!((m as f64 - exact).abs() < 1.0, "weight {w}");
        }
    }

    #[test]
    fn each_nice_step_is_about_ten_percent() {
        for w in SCHED_PRIO_TO_WEIGHT.windows(2) {
            let r = w[0] as f64 / w[1] as f64;
            assert!((1.15..1.35).contains(&r), "{r}");
        }
    }

    #[test]
    fn calc_delta_fair_scales_by_nice0_over_weight() {
        let nice5 = LoadWeight::of_nice(5, false);
        // 1 ms at weight 335: 1e6 * 1024 / 335 = 3056716.4, truncated by the fixed point.
        let v = calc_delta_fair(1_000_000, &nice5);
        assert!((3_056_715..=3_056_717).contains(&v), "{v}");
        assert_eq!(
            calc_delta_fair(12345, &LoadWeight::of_nice(0, false)),
            12345
        );
        // A cfs_rq load with no cached inverse: 6 ms split between two nice-0 tasks.
        let mut rq = LoadWeight::default();
        rq.add(NICE_0_LOAD);
        rq.add(NICE_0_LOAD);
        // inv = (2^32 - 1) / 2048 = 2097151; 6e6 · 1024 · 2097151 >> 32 = 2999998.6
        assert_eq!(calc_delta(6_000_000, NICE_0_LOAD, &rq), 2_999_998);
    }
}
