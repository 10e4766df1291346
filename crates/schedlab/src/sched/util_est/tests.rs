//! Hand-worked sequences of dequeues, following fair.c's util_est_update step by step.

use super::*;

const F: u32 = UTIL_AVG_UNCHANGED;

/// A new sample: PELT moved (cfs_se_util_change), then the task sleeps.
fn sleep(ue: &mut UtilEst, util: u64, runnable: u64, capacity: u64) {
    ue.util_change();
    ue.update(util, runnable, Some(capacity), true);
}

#[test]
fn ewma_follows_increases_at_once_and_decreases_by_a_quarter() {
    let mut ue = UtilEstForm::Ewma.initial();
    sleep(&mut ue, 300, 300, 1024);
    assert_eq!(ue, UtilEst::Ewma(300 | F));
    // 300 → 200: diff 100; (300·4 − 100) / 4 = 275.
    sleep(&mut ue, 200, 200, 1024);
    assert_eq!(ue, UtilEst::Ewma(275 | F));
    assert_eq!(ue.task_util_est(), 275);
    // Within the 1% margin (diff 5 < 10): kept, flagged.
    sleep(&mut ue, 270, 270, 1024);
    assert_eq!(ue, UtilEst::Ewma(275 | F));
    // Truncation: 301 → 0 gives (1204 − 301) >> 2 = 225 (225.75 in the reals).
    let mut ue = UtilEst::Ewma(301);
    ue.update(0, 0, Some(1024), true);
    assert_eq!(ue, UtilEst::Ewma(225 | F));
}

#[test]
fn ewma_skips_repeats_migrations_saturation_and_starvation() {
    // No PELT change since the last sample: no update.
    let mut ue = UtilEst::Ewma(300 | F);
    ue.update(100, 100, Some(1024), true);
    assert_eq!(ue, UtilEst::Ewma(300 | F));
    // Not a sleep (migration): no update.
    let mut ue = UtilEst::Ewma(300);
    ue.update(100, 100, Some(1024), false);
    assert_eq!(ue, UtilEst::Ewma(300));
    // util above the CPU's capacity: return without flagging.
    let mut ue = UtilEst::Ewma(600);
    ue.update(550, 550, Some(512), true);
    assert_eq!(ue, UtilEst::Ewma(600));
    // Starved (util + 10 < runnable): keep the estimate, flag it.
    let mut ue = UtilEst::Ewma(275);
    ue.update(200, 300, Some(1024), true);
    assert_eq!(ue, UtilEst::Ewma(275 | F));
}

#[test]
fn enqueued_ewma_pair_as_in_6_1() {
    let mut ue = UtilEstForm::EnqueuedEwma.initial();
    sleep(&mut ue, 300, 300, 1024); // FASTUP: ewma 0 < 300
    assert_eq!(
        ue,
        UtilEst::EnqueuedEwma {
            enqueued: 300 | F,
            ewma: 300
        }
    );
    sleep(&mut ue, 200, 200, 1024); // ewma += (200 − 300) / 4
    assert_eq!(
        ue,
        UtilEst::EnqueuedEwma {
            enqueued: 200 | F,
            ewma: 275
        }
    );
    assert_eq!(ue.task_util_est(), 275, "max(ewma, enqueued)");
    // ewma within margin (−5) but enqueued moved by 70: store enqueued only.
    sleep(&mut ue, 270, 270, 1024);
    assert_eq!(
        ue,
        UtilEst::EnqueuedEwma {
            enqueued: 270 | F,
            ewma: 275
        }
    );
    // Both within margin (−3, −2): the kernel returns before storing its copy.
    sleep(&mut ue, 272, 272, 1024);
    assert_eq!(
        ue,
        UtilEst::EnqueuedEwma {
            enqueued: 270,
            ewma: 275
        }
    );
    // Above capacity: nothing stored either.
    let mut ue = UtilEst::EnqueuedEwma {
        enqueued: 700,
        ewma: 700,
    };
    ue.update(600, 600, Some(512), true);
    assert_eq!(
        ue,
        UtilEst::EnqueuedEwma {
            enqueued: 700,
            ewma: 700
        }
    );
    // 6.1 has no starvation rule: a starved sample still moves the ewma.
    let mut ue = UtilEst::EnqueuedEwma {
        enqueued: 275,
        ewma: 275,
    };
    ue.update(200, 300, Some(1024), true);
    assert_eq!(
        ue,
        UtilEst::EnqueuedEwma {
            enqueued: 200 | F,
            ewma: 256
        }
    );
}

#[test]
fn root_cfs_rq_sum_follows_enqueue_and_dequeue() {
    let (a, b) = (
        UtilEst::Ewma(275 | F),
        UtilEst::EnqueuedEwma {
            enqueued: 100 | F,
            ewma: 50,
        },
    );
    let mut rq = 0;
    util_est_enqueue(&mut rq, &a);
    util_est_enqueue(&mut rq, &b);
    assert_eq!(rq, 375);
    util_est_dequeue(&mut rq, &a);
    assert_eq!(rq, 100);
    rq = 30; // the task's estimate grew while it was queued: clamp at zero
    util_est_dequeue(&mut rq, &b);
    assert_eq!(rq, 0);
}

#[test]
fn the_margin_is_one_percent_and_the_weight_a_quarter() {
    assert_eq!(UTIL_EST_MARGIN, 10);
    assert_eq!(1 << UTIL_EST_WEIGHT_SHIFT, 4);
    assert!(within_margin(9, 10) && within_margin(-9, 10));
    assert!(!within_margin(10, 10) && !within_margin(-10, 10));
}

#[test]
fn from_7_2_a_sample_above_the_cpus_capacity_is_taken() {
    // ewma 600, a sleep at util 550 on a CPU of capacity 512 (not starved: runnable 550).
    // To 7.1 the sample is not trusted, no idle time could be granted: kept, unflagged.
    // 7.2+ has no such rule: 50 below, (600·4 − 50) / 4 = 587, flagged.
    for (capacity, want) in [(Some(512), 600), (None, 587 | F)] {
        let mut ue = UtilEst::Ewma(600);
        ue.update(550, 550, capacity, true);
        assert_eq!(ue, UtilEst::Ewma(want), "{capacity:?}");
    }
}
