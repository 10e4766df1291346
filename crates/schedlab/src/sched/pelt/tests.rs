//! Expected values come from the definitions (Documentation/scheduler/sched-pelt.c), from
//! real-valued closed forms, or from recurrences worked out by hand from the kernel's rules.

use super::*;
use proptest::prelude::*;

const PERIOD_NS: u64 = 1024 * 1024;

fn y() -> f64 {
    0.5f64.powf(1.0 / LOAD_AVG_PERIOD as f64)
}

#[test]
fn inverse_table_rederived_from_its_definition() {
    // sched-pelt.c: x = ((1UL<<32)-1) * pow(y, i), truncated to unsigned int.
    for (n, &entry) in RUNNABLE_AVG_YN_INV.iter().enumerate() {
        let x = (((1u64 << 32) - 1) as f64 * y().powf(n as f64)) as u32;
        assert_eq!(entry, x, "runnable_avg_yN_inv[{n}]");
    }
}

#[test]
fn load_avg_max_is_the_fixed_point_of_the_integer_series() {
    // sched-pelt.c calc_converged_max: max = ((max * y_inv) >> 32) + 1024 from 1024.
    let y_inv = (((1u64 << 32) - 1) as f64 * y()) as u64;
    let (mut max, mut last, mut n) = (1024u64, 0u64, -1i32);
    loop {
        if n > -1 {
            max = ((max * y_inv) >> 32) + 1024;
        }
        if last == max {
            break;
        }
        last = max;
        n += 1;
    }
    assert_eq!(max, LOAD_AVG_MAX as u64);
    assert_eq!(n - 1, 345, "the old LOAD_AVG_MAX_N");
    assert_eq!(PELT_MIN_DIVIDER, 46718);
    assert_eq!(LOAD_AVG_PERIOD, 32);
}

#[test]
fn decay_load_halves_every_32_periods_and_vanishes_past_2016() {
    let v = 1u64 << 30;
    for k in 1..=20u64 {
        // x·(2^32 − 1) >> 32 = x − 1 for a power of two 1 ≤ x < 2^32.
        assert_eq!(decay_load(v, 32 * k), (v >> k) - 1);
    }
    assert_eq!(decay_load(u64::MAX, 2017), 0);
    assert_eq!(
        decay_load(12345, 0),
        12345 - 1,
        "inv[0] is 2^32 - 1, not 2^32"
    );
}

#[test]
fn decay_load_follows_y_to_the_n() {
    for n in 0..200u64 {
        let v = 47742u64 * 1024;
        let exact = v as f64 * y().powf(n as f64);
        let got = decay_load(v, n) as f64;
        // At most one unit lost per truncation (the shift, then the multiply).
        assert!(
            (exact - got).abs() <= 2.0 + (n / 32) as f64,
            "n={n}: {got} vs {exact}"
        );
    }
}

/// Always running from zero, updated at each period boundary: each update crosses one
/// period with period_contrib = 0, so d1 = 1024, c1 = decay_load(1024, 1) = 1002, c2 = 0,
/// d3 = 0: util_sum' = decay_load(util_sum, 1) + 1002·1024, load_sum' = decay_load(load_sum, 1)
/// + 1002 (its own truncations), and the averages divide by 46718.
#[test]
fn always_running_integer_series_at_period_boundaries() {
    assert_eq!((1024u64 * RUNNABLE_AVG_YN_INV[1] as u64) >> 32, 1002);
    let mut sa = SchedAvg::default();
    let (mut expect_sum, mut expect_load): (u64, u64) = (0, 0);
    for n in 1..=400u64 {
        assert!(update_load_sum(
            n * PERIOD_NS,
            &mut sa,
            1,
            1,
            true,
            ContribScale::NONE
        ));
        update_load_avg(&mut sa, 1024);
        expect_sum = ((expect_sum * RUNNABLE_AVG_YN_INV[1] as u64) >> 32) + 1002 * 1024;
        expect_load = ((expect_load * RUNNABLE_AVG_YN_INV[1] as u64) >> 32) + 1002;
        assert_eq!(sa.util_sum as u64, expect_sum, "period {n}");
        assert_eq!(sa.util_avg, expect_sum / 46718);
        assert_eq!(sa.runnable_avg, expect_sum / 46718);
        assert_eq!(sa.load_avg, 1024 * expect_load / 46718);
        assert_eq!(sa.period_contrib, 0);
    }
    // Converged: the fixed point of s = s·y + 1002·1024 in the integers, ≈ 1025 once averaged.
    assert!((1024..=1026).contains(&sa.util_avg));
}

#[test]
fn three_segments_match_the_real_series() {
    // From period_contrib = 300, run 5220 units: d1 = 724 ends the current period, then
    // four full periods, then d3 = 400 (5220 + 300 = 5·1024 + 400).
    let mut sa = SchedAvg {
        period_contrib: 300,
        ..SchedAvg::default()
    };
    assert!(update_load_sum(
        5220 << 10,
        &mut sa,
        1,
        1,
        true,
        ContribScale::NONE
    ));
    assert_eq!(sa.period_contrib, 400);
    let (d1, p) = (724.0, 5.0);
    let full: f64 = (1..5).map(|n| 1024.0 * y().powf(n as f64)).sum();
    let exact = d1 * y().powf(p) + full + 400.0;
    // LOAD_AVG_MAX is the integer series (47742, not 1024/(1-y) = 47788), hence the slack.
    assert!(
        (sa.load_sum as f64 - exact).abs() < 6.0,
        "{} vs {exact}",
        sa.load_sum
    );
    assert_eq!(sa.util_sum as u64, sa.load_sum << 10);
    assert_eq!(sa.runnable_sum, sa.load_sum << 10);
}

#[test]
fn sub_unit_time_is_kept_and_clock_going_back_resyncs() {
    let mut sa = SchedAvg::default();
    assert!(!update_load_sum(
        1023,
        &mut sa,
        1,
        1,
        true,
        ContribScale::NONE
    ));
    assert_eq!(
        sa.last_update_time, 0,
        "less than one 1024-ns unit: nothing happens"
    );
    update_load_sum(3000, &mut sa, 1, 1, true, ContribScale::NONE);
    assert_eq!(sa.last_update_time, 2048, "advanced by whole units only");
    assert_eq!(sa.load_sum, 2);
    assert!(!update_load_sum(
        100,
        &mut sa,
        1,
        1,
        true,
        ContribScale::NONE
    ));
    assert_eq!(sa.last_update_time, 100);
}

#[test]
fn dequeued_curr_is_neither_runnable_nor_running() {
    let mut sa = SchedAvg::default();
    update_load_sum(10 * PERIOD_NS, &mut sa, 0, 1, true, ContribScale::NONE);
    assert_eq!((sa.load_sum, sa.runnable_sum, sa.util_sum), (0, 0, 0));
}

#[test]
fn legacy_scaling_scales_the_contribution() {
    // Half frequency on a 512-capacity CPU, 1000 units within one period:
    // contrib = cap_scale(1000, 512) = 500; util_sum += 500·512; load_sum += 500.
    let scale = ContribScale {
        freq: 512,
        cpu: 512,
    };
    let mut sa = SchedAvg::default();
    update_load_sum(1000 << 10, &mut sa, 1, 1, true, scale);
    assert_eq!(sa.load_sum, 500);
    assert_eq!(sa.util_sum, 500 * 512);
    assert_eq!(sa.runnable_sum, 500 << 10);
}

/// A task entity's update: (delta in ns, on_rq, running).
fn updates() -> impl Strategy<Value = Vec<(u64, bool, bool)>> {
    let one =
        (0u64..80 * PERIOD_NS, any::<bool>(), any::<bool>()).prop_map(|(d, q, r)| (d, q, q && r));
    proptest::collection::vec(one, 1..60)
}

fn replay(updates: &[(u64, bool, bool)]) -> SchedAvg {
    let (mut sa, mut now) = (SchedAvg::default(), 0);
    for &(delta, on_rq, running) in updates {
        now += delta;
        update_load_avg_se(
            now,
            &mut sa,
            on_rq,
            on_rq as u64,
            running,
            1024,
            ContribScale::NONE,
        );
    }
    sa
}

proptest! {
    #[test]
    fn sums_and_averages_stay_within_their_maxima(updates in updates()) {
        let (mut sa, mut now) = (SchedAvg::default(), 0);
        for (delta, on_rq, running) in updates {
            now += delta;
            update_load_avg_se(now, &mut sa, on_rq, on_rq as u64, running, 1024, ContribScale::NONE);
            prop_assert!(sa.load_sum <= LOAD_AVG_MAX as u64);
            prop_assert!(sa.runnable_sum <= (LOAD_AVG_MAX as u64) << 10);
            prop_assert!(sa.util_sum <= LOAD_AVG_MAX << 10);
            prop_assert!(sa.util_sum as u64 <= sa.runnable_sum, "running is a subset of runnable");
            prop_assert!(sa.load_avg <= 1024 && sa.runnable_avg <= 1024 && sa.util_avg <= 1024);
            prop_assert!(sa.period_contrib < 1024);
        }
    }

    #[test]
    fn a_sleep_past_2016_periods_decays_everything_to_zero(updates in updates(), extra in 0u64..1000) {
        let mut sa = replay(&updates);
        let now = sa.last_update_time + (2017 * 1024 + extra) * 1024;
        update_load_avg_se(now, &mut sa, false, 0, false, 1024, ContribScale::NONE);
        prop_assert_eq!((sa.load_sum, sa.runnable_sum, sa.util_sum), (0, 0, 0));
        prop_assert_eq!((sa.load_avg, sa.runnable_avg, sa.util_avg), (0, 0, 0));
    }

    #[test]
    fn splitting_an_interval_changes_only_rounding(
        updates in updates(),
        whole in 1u64..300 * PERIOD_NS,
        cut in 0.0f64..1.0,
        on_rq in any::<bool>(),
        running in any::<bool>(),
    ) {
        let running = on_rq && running;
        let base = replay(&updates);
        let start = base.last_update_time;
        let mid = start + (whole as f64 * cut) as u64;
        let (mut one, mut two) = (base, base);
        update_load_avg_se(start + whole, &mut one, on_rq, on_rq as u64, running, 1024, ContribScale::NONE);
        update_load_avg_se(mid, &mut two, on_rq, on_rq as u64, running, 1024, ContribScale::NONE);
        update_load_avg_se(start + whole, &mut two, on_rq, on_rq as u64, running, 1024, ContribScale::NONE);
        prop_assert_eq!(one.last_update_time, two.last_update_time);
        prop_assert_eq!(one.period_contrib, two.period_contrib);
        // Each extra update can lose under one unit in each of c1, c2 and the decay of
        // the old sum (and one more for the shift in decay_load): at most 4 units of load_sum.
        prop_assert!(one.load_sum.abs_diff(two.load_sum) <= 4, "{} vs {}", one.load_sum, two.load_sum);
        prop_assert!((one.util_sum as u64).abs_diff(two.util_sum as u64) <= 4 << 10);
        prop_assert!(one.runnable_sum.abs_diff(two.runnable_sum) <= 4 << 10);
    }
}
