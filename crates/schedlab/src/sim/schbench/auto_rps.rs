//! schbench's `-A` (`auto_scale_rps`): each second the main thread reads the machine's busy
//! share from /proc/stat's `cpu` line (`read_busy`) and scales RPS mode's rate toward the
//! target, in smaller steps as it nears it; the RPS histogram starts over once it is near.

/// `USER_HZ`: /proc/stat counts clock ticks of 10 ms (`nsec_to_clock_t`).
const NSEC_PER_CLOCK_T: u64 = 10_000_000;

/// The controller's state: the last /proc/stat read (None before the first) and whether the
/// target has been reached (`auto_rps_target_hit`).
#[derive(Debug, Clone, Copy, Default)]
pub struct AutoRps {
    last: Option<(u64, u64)>,
    pub target_hit: bool,
}

impl AutoRps {
    /// `read_busy`: the busy percentage since the last read (None at the first), from the
    /// machine's idle and total time so far (ns, all CPUs), each in clock ticks as
    /// /proc/stat prints them. Simplified: /proc/stat's busy columns (user, system, irq...)
    /// are counted as one, truncated once.
    pub fn read_busy(&mut self, idle_ns: u64, busy_ns: u64) -> Option<f32> {
        let idle = idle_ns / NSEC_PER_CLOCK_T;
        let total = idle + busy_ns / NSEC_PER_CLOCK_T;
        let (last_total, last_idle) = self.last.replace((total, idle))?;
        let (delta, delta_idle) = (total - last_total, idle - last_idle);
        // as C computes it: a float quotient scaled by a double, returned as a float
        Some((100.0 - (delta_idle as f32 / delta as f32) as f64 * 100.0) as f32)
    }

    /// `auto_scale_rps` once /proc/stat is read: the new requests per second for `rps`
    /// when the machine was `busy` percent busy and `target` is wanted, in C's float
    /// arithmetic (its literals with a point are doubles). True when the target was
    /// reached now (the caller zeroes the RPS histogram).
    pub fn scale(&mut self, rps: u32, busy: f32, target: u32) -> (u32, bool) {
        let (rps, wanted) = (rps as f32, target as f32);
        let mut near = false;
        let goal = if busy < wanted {
            let mut delta = wanted / busy;
            if delta > 3.0 {
                delta = 3.0;
            } else if f64::from(delta) < 1.2 {
                delta = 1.0 + (delta - 1.0) / 8.0;
                near = f64::from(delta) < 1.05;
            } else if f64::from(delta) < 1.5 {
                delta = 1.0 + (delta - 1.0) / 4.0;
            }
            let goal = (rps * delta).ceil();
            // not enough threads to reach it
            if goal >= (1u64 << 31) as f32 {
                rps
            } else {
                goal
            }
        } else if busy > wanted {
            let mut delta = wanted / busy;
            if f64::from(delta) < 0.3 {
                delta = 0.3;
            } else if f64::from(delta) > 0.9 {
                delta += (1.0 - delta) / 8.0;
                near = f64::from(delta) > 0.95;
            } else if f64::from(delta) > 0.8 {
                delta += (1.0 - delta) / 4.0;
            }
            (rps * delta).floor().max(0.0)
        } else {
            near = true;
            rps
        };
        let reached = near && !std::mem::replace(&mut self.target_hit, true);
        (goal as u32, reached)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_is_the_idle_share_of_the_ticks_since_the_last_read() {
        let mut a = AutoRps::default();
        assert_eq!(
            a.read_busy(0, 0),
            None,
            "the first read only takes the counters"
        );
        // A second later on 2 CPUs: 1.5 s idle, 0.5 s busy (150 and 50 ticks):
        // 100 − 150/200·100 = 25. The idle counter truncates: 1.509 s is 150 ticks.
        assert_eq!(a.read_busy(1_509_000_000, 500_000_000), Some(25.0));
    }

    #[test]
    fn the_rate_grows_at_most_threefold_then_in_smaller_steps_near_the_target() {
        let mut a = AutoRps::default();
        // 1% busy against 50: 50/1 clamps to 3: 10 → 30 → 90 → 270.
        assert_eq!(a.scale(10, 1.0, 50), (30, false));
        assert_eq!(a.scale(90, 9.0, 50), (270, false));
        // 27%: 50/27 = 1.8518518 (f32), whose product with 270 rounds to 500.0.
        assert_eq!(a.scale(270, 27.0, 50), (500, false));
        // 40%: 1.25 is below 1.5: 1 + 0.25/4 = 1.0625: ⌈500 · 1.0625⌉ = 532 (not near).
        assert_eq!(a.scale(500, 40.0, 50), (532, false));
        // 49%: 50/49 = 1.0204 < 1.2: 1 + 0.0204/8 = 1.00255 < 1.05, the target first
        // reached: ⌈500 · 1.00255⌉ = ⌈501.28⌉ = 502.
        assert_eq!(a.scale(500, 49.0, 50), (502, true));
        // Exactly at it: the rate stays, and the target counts as reached once only.
        assert_eq!(a.scale(502, 50.0, 50), (502, false));
    }

    #[test]
    fn the_rate_shrinks_to_no_less_than_three_tenths() {
        let mut a = AutoRps::default();
        // 100% against 20: 0.2 clamps to 0.3: ⌊100 · 0.3⌋ = 30.
        assert_eq!(a.scale(100, 100.0, 20), (30, false));
        // 50 against 45: 0.9 is not above .9 (f32 0.9 is 0.899999976), but above .8:
        // 0.9 + 0.1/4 = 0.925: ⌊100 · 0.925⌋ = 92.
        assert_eq!(a.scale(100, 50.0, 45), (92, false));
        // 50 against 48: 0.96 > .9: 0.96 + 0.04/8 = 0.965 > .95, reached: ⌊96.5⌋ = 96.
        assert_eq!(a.scale(100, 50.0, 48), (96, true));
        // A rate of 1 scaled by 0.3 is 0, where it stays.
        assert_eq!(a.scale(1, 90.0, 20), (0, false));
        assert_eq!(a.scale(0, 0.0, 20), (0, false));
    }
}
