//! The RT class alone, through the recording `Hooks` (`sched/tests.rs`): the rules of
//! rt.c's `check_preempt_curr_rt`, `task_tick_rt` and `pick_next_rt_entity`, on scenarios
//! worked out from them.

use crate::kernel::Kernel;
use crate::sched::tests::{attr, fork_on, machine, Recorder, T0};
use crate::sched::uapi::{Policy, SchedAttr};
use crate::sched::Sched;
use crate::time::Ns;
use crate::tracepoint::PrevState;

/// `TICK_NSEC` at the presets' HZ=250.
const TICK: Ns = 4_000_000;

fn rt(policy: Policy, rt_priority: u32) -> SchedAttr {
    SchedAttr {
        rt_priority,
        ..attr(policy)
    }
}

/// One CPU (smp:1) under 6.12.
fn one_cpu() -> (Sched, Recorder) {
    machine("smp:1", Kernel::V6_12)
}

/// The tasks switched in on CPU 0, in order.
fn switched_in(h: &Recorder) -> Vec<Option<u32>> {
    h.switches.iter().map(|(_, sw)| sw.next).collect()
}

/// `n` ticks of CPU 0, one `TICK_NSEC` apart.
fn ticks(s: &mut Sched, h: &mut Recorder, n: u32) {
    for _ in 0..n {
        h.now += TICK;
        s.sched_tick(0, h);
    }
}

#[test]
fn an_rt_task_preempts_fair_work_and_only_a_higher_priority_preempts_it() {
    // Kernel priorities are 99 − rt_priority: FIFO 10 is 89, FIFO 20 is 79, FIFO 5 is 94.
    // check_preempt_curr_rt preempts when the woken task's prio is below curr's; any RT
    // task preempts a fair one (the class order).
    let (mut s, mut h) = one_cpu();
    let fair = fork_on(&mut s, &mut h, attr(Policy::Other), None);
    let ten = fork_on(&mut s, &mut h, rt(Policy::Fifo, 10), None);
    let twenty = fork_on(&mut s, &mut h, rt(Policy::Fifo, 20), None);
    let five = fork_on(&mut s, &mut h, rt(Policy::Fifo, 5), None);
    assert_eq!(
        switched_in(&h),
        [Some(fair), Some(ten), Some(twenty)],
        "FIFO 5 waits"
    );
    assert_eq!(s.rqs[0].curr, Some(twenty));
    let preempted = h.switches.iter().map(|(_, sw)| sw.prev_state);
    assert!(preempted.skip(1).all(|st| st == PrevState::Runnable));
    assert!(s.rts[five as usize].on_rq, "FIFO 5 is queued, not running");
}

#[test]
fn rr_tasks_of_one_priority_take_turns_when_a_slice_of_ticks_runs_out() {
    // sched_rr_timeslice: 100 ms at HZ=250 is 25 ticks. RR B, forked at A's priority,
    // does not preempt A (not a lower prio). task_tick_rt counts A's slice down one per
    // tick: after 24 ticks A still runs; the 25th empties it, requeues A behind B and
    // reschedules, and B runs with a full slice of its own.
    let (mut s, mut h) = one_cpu();
    let a = fork_on(&mut s, &mut h, rt(Policy::Rr, 10), None);
    let b = fork_on(&mut s, &mut h, rt(Policy::Rr, 10), None);
    assert_eq!(s.rqs[0].curr, Some(a));
    ticks(&mut s, &mut h, 24);
    assert_eq!(s.rqs[0].curr, Some(a), "one tick of A's slice is left");
    ticks(&mut s, &mut h, 1);
    assert_eq!(s.rqs[0].curr, Some(b));
    assert_eq!(h.now, T0 + 25 * TICK);
    ticks(&mut s, &mut h, 25);
    assert_eq!(s.rqs[0].curr, Some(a), "B's slice is 25 ticks too");
}

#[test]
fn a_fifo_task_keeps_the_cpu_from_an_equal_priority_one_at_every_tick() {
    // SCHED_FIFO has no slice: task_tick_rt returns before the RR count, so FIFO B at
    // A's priority waits however long A runs.
    let (mut s, mut h) = one_cpu();
    let a = fork_on(&mut s, &mut h, rt(Policy::Fifo, 10), None);
    fork_on(&mut s, &mut h, rt(Policy::Fifo, 10), None);
    ticks(&mut s, &mut h, 200);
    assert_eq!(s.rqs[0].curr, Some(a));
    assert_eq!(switched_in(&h), [Some(a)]);
}
