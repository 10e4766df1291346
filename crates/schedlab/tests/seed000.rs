//! Seed 000 (V. Guittot, "sched/fair: update scale invariance of PELT", 2018): the periodic
//! task's bounds and the time-to-reach table, against closed forms, the seed's published
//! figures, and integer recurrences worked out by hand from the kernel's rules.

use schedlab::sched::clock_pelt::{CpuScale, Invariance};
use schedlab::sched::pelt::RUNNABLE_AVG_YN_INV;
use schedlab::sched::util_est::{UtilEstForm, UtilEstSample};
use schedlab::solo::periodic::Periodic;
use schedlab::solo::ramp::Ramp;
use schedlab::solo::SoloConfig;

const MS: u64 = 1_000_000;
const PERIOD_NS: u64 = 1 << 20;

fn config(invariance: Invariance, cpu: u64, freq: u64) -> SoloConfig {
    SoloConfig {
        invariance,
        scale: CpuScale { cpu, freq },
        util_est: UtilEstForm::Ewma,
        util_est_sample: UtilEstSample::BeforeDequeue,
        weight: 1024,
    }
}

fn y() -> f64 {
    0.5f64.powf(1.0 / 32.0)
}

/// U·(1−y^r)/(1−y^p)·y^i < util < U·(1−y^r)/(1−y^p), r and p in periods, i = p − r.
fn seed_bounds(u: f64, r: f64, p: f64) -> (f64, f64) {
    let max = u * (1.0 - y().powf(r)) / (1.0 - y().powf(p));
    (max * y().powf(p - r), max)
}

#[test]
fn periodic_task_settles_within_two_of_the_closed_form() {
    for (run, period) in [
        (20, 200),
        (8, 16),
        (5, 100),
        (50, 100),
        (90, 100),
        (1, 10),
        (30, 33),
    ] {
        for (invariance, cpu, freq) in [
            (Invariance::ClockPelt, 1024, 1024),
            (Invariance::ClockPelt, 512, 1024),
            (Invariance::ClockPelt, 1024, 512),
            (Invariance::Legacy, 1024, 1024),
        ] {
            let (run_ns, period_ns) = (run * MS, period * MS);
            let scenario = Periodic {
                config: config(invariance, cpu, freq),
                run: run_ns,
                period: period_ns,
                duration: 3000 * MS,
                tick: 4 * MS,
            };
            let Ok(result) = scenario.simulate() else {
                assert!(
                    run * 2 >= period && cpu * freq < 1 << 20,
                    "{run}/{period} refused"
                );
                continue;
            };
            // clock_pelt: invariant, so the bounds of the work at full capacity.
            let r = run_ns as f64 / PERIOD_NS as f64;
            let (lo, hi) = seed_bounds(1024.0, r, period_ns as f64 / PERIOD_NS as f64);
            let what = format!("{run}/{period} ms {invariance:?} cpu {cpu} freq {freq}");
            assert!(
                (result.settled.min - lo).abs() <= 2.0,
                "{what}: min {} vs {lo}",
                result.settled.min
            );
            assert!(
                (result.settled.max - hi).abs() <= 2.0,
                "{what}: max {} vs {hi}",
                result.settled.max
            );
        }
    }
}

#[test]
fn legacy_at_lower_capacity_follows_the_seeds_scaled_bounds() {
    // U·C·(1−y^r')/(1−y^p)·y^i' with r' the stretched run (seed 000, second formula).
    for (run, period, cpu) in [(20, 200, 512), (10, 100, 256), (30, 100, 768)] {
        let scenario = Periodic {
            config: config(Invariance::Legacy, cpu, 1024),
            run: run * MS,
            period: period * MS,
            duration: 3000 * MS,
            tick: 4 * MS,
        };
        let result = scenario.simulate().unwrap();
        let stretched = (run * MS * 1024).div_ceil(cpu) as f64 / PERIOD_NS as f64;
        let c = cpu as f64 / 1024.0;
        let (lo, hi) = seed_bounds(
            1024.0 * c,
            stretched,
            (period * MS) as f64 / PERIOD_NS as f64,
        );
        assert!(
            (result.settled.min - lo).abs() <= 2.0,
            "{run}/{period}@{cpu}: min {} vs {lo}",
            result.settled.min
        );
        assert!(
            (result.settled.max - hi).abs() <= 2.0,
            "{run}/{period}@{cpu}: max {} vs {hi}",
            result.settled.max
        );
        // And the reported closed form is that formula.
        assert!(
            (result.closed_form.max - hi).abs() < 1e-6
                && (result.closed_form.min - lo).abs() < 1e-6
        );
    }
}

/// First wall period at which the hand-derived integer recurrence reaches each target.
/// `per_update(s)` is one wall period's update of util_sum; util_avg = util_sum / 46718 is
/// recomputed only at updates that cross a PELT period (`crosses(k)`).
fn integer_crossings(
    targets: &[u64],
    per_update: impl Fn(u64, u64) -> u64,
    crosses: impl Fn(u64) -> bool,
) -> Vec<Option<u64>> {
    let (mut s, mut out) = (0u64, vec![None; targets.len()]);
    for k in 1..=8192 {
        s = per_update(s, k);
        if crosses(k) {
            for (o, &t) in out.iter_mut().zip(targets) {
                if o.is_none() && s / 46718 >= t {
                    *o = Some(k);
                }
            }
        }
    }
    out
}

fn decay1(x: u64) -> u64 {
    (x * RUNNABLE_AVG_YN_INV[1] as u64) >> 32
}

fn ramp(invariance: Invariance, cpu: u64) -> Vec<Option<u64>> {
    let targets = vec![972, 486, 256];
    let crossings = Ramp {
        config: config(invariance, cpu, 1024),
        targets,
        step: PERIOD_NS,
    }
    .simulate()
    .unwrap();
    crossings
        .iter()
        .map(|c| c.reached_at.map(|t| t / PERIOD_NS))
        .collect()
}

#[test]
fn time_to_reach_equals_the_hand_derived_integer_series() {
    let targets = [972, 486, 256];
    // Max capacity: each update crosses one period from period_contrib 0:
    // s' = decay(s) + decay_load(1024, 1)·1024 = decay(s) + 1002·1024.
    let full = integer_crossings(&targets, |s, _| decay1(s) + 1002 * 1024, |_| true);
    assert_eq!(ramp(Invariance::ClockPelt, 1024), full);
    assert_eq!(ramp(Invariance::Legacy, 1024), full);
    // Legacy at capacity 512: same time, util contribution scaled: s' = decay(s) + 1002·512.
    let legacy_half = integer_crossings(&targets, |s, _| decay1(s) + 1002 * 512, |_| true);
    assert_eq!(ramp(Invariance::Legacy, 512), legacy_half);
    // clock_pelt at capacity 512: 512 units a wall period; odd updates add 512·1024 inside
    // the period, even ones cross it: s' = decay(s) + decay_load(512, 1)·1024 = decay(s) + 501·1024.
    let pelt_half = integer_crossings(
        &targets,
        |s, k| {
            if k % 2 == 1 {
                s + 512 * 1024
            } else {
                decay1(s) + 501 * 1024
            }
        },
        |k| k % 2 == 0,
    );
    assert_eq!(ramp(Invariance::ClockPelt, 512), pelt_half);
}

#[test]
fn time_to_reach_is_within_one_period_of_the_continuous_series() {
    // 1024·(1 − y^n) = u  ⇔  n = 32·log2(1024 / (1024 − u)); at half capacity clock_pelt
    // needs twice the wall time, legacy needs 512·(1 − y^n) = u.
    let continuous = |u: f64, scale: f64| 32.0 * (scale / (scale - u)).log2();
    let got = ramp(Invariance::ClockPelt, 1024);
    let got_half = ramp(Invariance::ClockPelt, 512);
    let got_legacy = ramp(Invariance::Legacy, 512);
    for (i, u) in [972.0, 486.0, 256.0].into_iter().enumerate() {
        let n = continuous(u, 1024.0);
        assert!(
            (got[i].unwrap() as f64 - n).abs() <= 1.0,
            "{u}: {:?} vs {n}",
            got[i]
        );
        assert!(
            (got_half[i].unwrap() as f64 - 2.0 * n).abs() <= 2.0,
            "{u}: {:?} vs {}",
            got_half[i],
            2.0 * n
        );
        if u < 512.0 {
            let n = continuous(u, 512.0);
            assert!(
                (got_legacy[i].unwrap() as f64 - n).abs() <= 1.0,
                "{u}: {:?} vs {n}",
                got_legacy[i]
            );
        } else {
            assert_eq!(
                got_legacy[i], None,
                "{u} is above legacy's ceiling at half capacity"
            );
        }
    }
}

#[test]
fn time_to_reach_matches_the_seeds_table() {
    // Seed 000: 138/30/13 at max capacity; not reachable/138/32 at half capacity (mainline,
    // i.e. legacy); 276/60/26 with the patch (clock_pelt). ±1 period, ±2 wall periods for
    // clock_pelt at half capacity (one PELT period there lasts two wall periods).
    let seed = [
        (
            Invariance::ClockPelt,
            1024,
            [Some(138), Some(30), Some(13)],
            1,
        ),
        (Invariance::Legacy, 1024, [Some(138), Some(30), Some(13)], 1),
        (Invariance::Legacy, 512, [None, Some(138), Some(32)], 1),
        (
            Invariance::ClockPelt,
            512,
            [Some(276), Some(60), Some(26)],
            2,
        ),
    ];
    for (invariance, cpu, expected, tolerance) in seed {
        for (got, want) in ramp(invariance, cpu).into_iter().zip(expected) {
            match (got, want) {
                (Some(g), Some(w)) => assert!(
                    g.abs_diff(w) <= tolerance,
                    "{invariance:?}@{cpu}: {g} vs {w}"
                ),
                (g, w) => assert_eq!(g, w, "{invariance:?}@{cpu}"),
            }
        }
    }
}

#[test]
fn half_frequency_is_half_capacity_for_pelt() {
    for invariance in Invariance::ALL {
        assert_eq!(
            Ramp {
                config: config(invariance, 1024, 512),
                targets: vec![486, 256],
                step: PERIOD_NS
            }
            .simulate(),
            Ramp {
                config: config(invariance, 512, 1024),
                targets: vec![486, 256],
                step: PERIOD_NS
            }
            .simulate()
        );
    }
}

#[test]
fn impossible_scenarios_are_refused() {
    let base = Periodic {
        config: config(Invariance::ClockPelt, 512, 1024),
        run: 60 * MS,
        period: 100 * MS,
        duration: 1000 * MS,
        tick: 4 * MS,
    };
    let err = base.simulate().unwrap_err();
    assert_eq!(err.location, "run");
    assert!(err.message.contains("never sleep"), "{}", err.message);
    assert_eq!(
        Periodic { tick: 0, ..base }
            .simulate()
            .unwrap_err()
            .location,
        "tick"
    );
    let ramp = Ramp {
        config: config(Invariance::ClockPelt, 1, 1),
        targets: vec![100],
        step: PERIOD_NS,
    };
    assert!(
        ramp.simulate().is_err(),
        "a CPU at 1/2^20 of full speed would take 2^31 updates"
    );
    let ramp = Ramp {
        config: config(Invariance::ClockPelt, 1024, 1024),
        targets: vec![1025],
        step: PERIOD_NS,
    };
    assert_eq!(ramp.simulate().unwrap_err().location, "to");
}
