//! The CBS rules on hand-computed scenarios (times in ms from 0; budgets scaled at full
//! capacity and frequency, so budget time is wall time).

use super::*;
use crate::sched::tests::Recorder;

const MS: u64 = 1_000_000;
/// A clock origin far from 0, as in a run.
const T0: u64 = 1_000 * MS;

struct Cpu {
    dl: DlRq,
    /// The task's entity (0), then the CPU's fair server, disabled (1).
    ses: Vec<SchedDlEntity>,
    now: Ns,
    curr: Option<u32>,
    machine: Recorder,
}

impl Cpu {
    /// One CPU, Umax 95%, with one task of `q`/`d`/`p` ms (not yet queued).
    fn new(q: u64, d: u64, p: u64, reclaim: bool) -> Cpu {
        Cpu {
            dl: DlRq::new(Some((1_000_000, 950_000))),
            ses: vec![
                SchedDlEntity {
                    task: Some(0),
                    ..SchedDlEntity::new(q * MS, d * MS, p * MS, reclaim)
                },
                SchedDlEntity::default(),
            ],
            now: T0,
            curr: None,
            machine: Recorder::default(),
        }
    }

    fn at(&mut self, ms: u64) -> Dl<'_> {
        self.now = T0 + ms * MS;
        Dl {
            dl: &mut self.dl,
            ses: &mut self.ses,
            server: 1,
            now: self.now,
            clock_task: self.now,
            scale: CpuScale {
                cpu: 1024,
                freq: 1024,
            },
            curr: self.curr,
            hooks: RqHooks::new(&mut self.machine, &[], 0, None),
        }
    }

    /// The task becomes SCHED_DEADLINE and starts running at `ms`.
    fn start(&mut self, ms: u64) {
        self.at(ms).enqueue(0, ENQUEUE_INITIAL);
        self.curr = Some(0);
        self.ses[0].exec_start = self.now;
    }

    fn se(&self) -> &SchedDlEntity {
        &self.ses[0]
    }

    /// The timers armed since the last call: kind, and when (ms).
    fn timers(&mut self) -> Vec<(DlTimer, u64)> {
        self.machine
            .armed
            .drain(..)
            .map(|(at, t)| match t {
                SchedTimer::Dl { kind, .. } => (kind, (at - T0) / MS),
                t => panic!("{t:?} is not the task's"),
            })
            .collect()
    }
}

#[test]
fn setup_gives_a_full_budget_and_a_deadline_one_relative_deadline_ahead() {
    let mut c = Cpu::new(2, 10, 10, false);
    c.start(0);
    assert_eq!(
        (c.se().runtime, c.se().deadline),
        (2 * MS as i64, T0 + 10 * MS)
    );
    assert_eq!(
        (c.dl.this_bw, c.dl.running_bw),
        (to_ratio(10, 2), to_ratio(10, 2))
    );
    assert_eq!(c.dl.first(), Some(0));
}

#[test]
fn exhaustion_throttles_until_the_next_period_which_replenishes() {
    let mut c = Cpu::new(2, 10, 10, false);
    c.start(0);
    assert!(!c.at(1).update_curr(), "1 ms used, 1 ms left");
    assert_eq!(c.se().runtime, MS as i64);
    assert!(c.at(2).update_curr(), "budget gone: throttled, resched");
    assert!(c.se().throttled && !c.se().on_rq);
    assert_eq!(c.timers(), vec![(DlTimer::Replenish, 10)]);
    assert_eq!(c.se().stats.exhaustions, 1);
    c.curr = None;
    assert!(c.at(10).dl_timer(0, true));
    assert_eq!(
        (c.se().runtime, c.se().deadline),
        (2 * MS as i64, T0 + 20 * MS)
    );
    assert!(!c.se().throttled && c.se().on_rq);
    assert_eq!(c.se().stats.throttled_ns, 8 * MS);
}

#[test]
fn an_overrun_is_repaid_by_postponing_the_deadline() {
    // Checked at a 4 ms tick: 2 ms over budget. Replenishment adds Q per period until
    // the budget is positive: q = −2 + 2 = 0, again: q = 2, d = 10 + 2·10 = 30.
    let mut c = Cpu::new(2, 10, 10, false);
    c.start(0);
    assert!(c.at(4).update_curr());
    assert_eq!(c.se().runtime, -2 * MS as i64);
    assert!(c.at(10).dl_timer(0, true));
    assert_eq!(
        (c.se().runtime, c.se().deadline),
        (2 * MS as i64, T0 + 30 * MS)
    );
}

#[test]
fn the_wakeup_rule_keeps_a_budget_that_fits_and_renews_one_that_does_not() {
    // Q/D = 2/10. At 4 ms with 1 ms left and 6 ms to the deadline: 1/6 ≤ 2/10, kept.
    let mut c = Cpu::new(2, 10, 10, false);
    c.start(0);
    c.at(1).update_curr();
    c.at(1).dequeue(0, DEQUEUE_SLEEP);
    c.curr = None;
    c.timers();
    c.at(4).enqueue(0, ENQUEUE_WAKEUP);
    assert_eq!((c.se().runtime, c.se().deadline), (MS as i64, T0 + 10 * MS));
    // At 6 ms with 1 ms left and 4 ms to go: 1/4 > 2/10, a new period from now.
    let mut c = Cpu::new(2, 10, 10, false);
    c.start(0);
    c.at(1).update_curr();
    c.at(1).dequeue(0, DEQUEUE_SLEEP);
    c.curr = None;
    c.at(6).enqueue(0, ENQUEUE_WAKEUP);
    assert_eq!(
        (c.se().runtime, c.se().deadline),
        (2 * MS as i64, T0 + 16 * MS)
    );
}

#[test]
fn a_constrained_task_has_its_budget_cut_to_its_density_not_renewed() {
    // Q/D/P = 2/5/10, density 2/5. At 3 ms with 2 ms left and 2 ms to the deadline:
    // 2/2 > 2/5; revised rule: keep d, q = density·(d − t) = 0.4·2 ms.
    let mut c = Cpu::new(2, 5, 10, false);
    c.start(0);
    c.at(0).dequeue(0, DEQUEUE_SLEEP);
    c.curr = None;
    c.at(3).enqueue(0, ENQUEUE_WAKEUP);
    assert_eq!(c.se().deadline, T0 + 5 * MS);
    let expect = (to_ratio(5 * MS, 2 * MS) * 2 * MS) >> BW_SHIFT;
    assert_eq!(c.se().runtime, expect as i64);
    assert!((c.se().runtime - 800_000).abs() < 2);
}

#[test]
fn a_constrained_task_waking_between_deadline_and_next_period_waits() {
    // Q/D/P = 2/5/10: wakes at 7 ms, after its deadline 5, before its period ends at 10.
    let mut c = Cpu::new(2, 5, 10, false);
    c.start(0);
    c.at(0).dequeue(0, DEQUEUE_SLEEP);
    c.curr = None;
    c.timers();
    c.at(7).enqueue(0, ENQUEUE_WAKEUP);
    assert!(c.se().throttled && !c.se().on_rq);
    assert_eq!(c.se().runtime, 0);
    assert!(c.timers().contains(&(DlTimer::Replenish, 10)));
}

#[test]
fn the_inactive_timer_fires_at_the_zero_lag_time() {
    // Q/P = 2/10, blocks at 1 ms with 1 ms left: 0-lag t0 = d − q·P/Q = 10 − 5 = 5 ms.
    let mut c = Cpu::new(2, 10, 10, true);
    c.start(0);
    c.at(1).update_curr();
    let u = to_ratio(10, 2);
    let q_left = c.se().runtime as u64;
    c.at(1).dequeue(0, DEQUEUE_SLEEP);
    c.curr = None;
    let t0 = (c.se().deadline - q_left * 10 / 2 - T0) / MS;
    assert_eq!(c.timers(), vec![(DlTimer::Inactive, t0)]);
    assert!(c.se().non_contending);
    assert_eq!(c.dl.running_bw, u, "active non-contending: still counted");
    assert!(!c.at(t0).inactive_timer(0, false));
    assert_eq!(
        (c.dl.running_bw, c.dl.this_bw),
        (0, u),
        "inactive: Uinact = u"
    );
}

#[test]
fn a_wakeup_before_the_zero_lag_time_cancels_the_inactive_timer() {
    let mut c = Cpu::new(2, 10, 10, false);
    c.start(0);
    c.at(1).update_curr();
    c.at(1).dequeue(0, DEQUEUE_SLEEP);
    c.curr = None;
    let gen = c.se().inactive_timer.gen;
    c.at(3).enqueue(0, ENQUEUE_WAKEUP);
    assert!(!c.se().non_contending && !c.se().inactive_timer.armed);
    assert_ne!(
        c.se().inactive_timer.gen,
        gen,
        "the armed event is now stale"
    );
    assert_eq!(c.dl.running_bw, to_ratio(10, 2), "counted once");
}

#[test]
fn yield_drops_the_budget_until_the_next_period() {
    let mut c = Cpu::new(2, 10, 10, false);
    c.start(0);
    c.at(1).yield_task();
    assert!(c.se().throttled);
    assert_eq!(c.se().stats.exhaustions, 0, "a yield is not an exhaustion");
    c.curr = None;
    c.at(10).dl_timer(0, true);
    assert_eq!(
        (c.se().runtime, c.se().deadline),
        (2 * MS as i64, T0 + 20 * MS)
    );
}

#[test]
fn edf_queue_orders_by_deadline_and_keeps_arrival_order_on_ties() {
    let mut dl = DlRq::new(None);
    dl.insert(30, 1);
    dl.insert(10, 2);
    dl.insert(30, 3);
    dl.insert(20, 4);
    assert_eq!(
        dl.queued().map(|(_, p)| p).collect::<Vec<_>>(),
        vec![2, 4, 1, 3]
    );
    dl.remove(2);
    assert_eq!(dl.first(), Some(4));
}

#[test]
fn non_reclaiming_budgets_run_in_max_capacity_time() {
    // dl_scaled_delta_exec: at half frequency on a 512 CPU, 4 ms of running is 1 ms of budget.
    let mut c = Cpu::new(2, 10, 10, false);
    c.start(0);
    let mut d = c.at(4);
    d.scale = CpuScale {
        cpu: 512,
        freq: 512,
    };
    d.update_curr();
    assert_eq!(c.se().runtime, MS as i64);
}
