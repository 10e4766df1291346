//! The idle class (kernel/sched/idle.c): no queue, just what a CPU runs when no class has a
//! task.

use super::rq::Rq;

/// `set_next_task_idle`: the CPU goes idle, so clock_pelt may have lost idle time
/// (`update_idle_rq_clock_pelt`).
pub fn set_next_task_idle(rq: &mut Rq) {
    let util_sum = rq.cfs.avg.util_sum;
    rq.clock.update_idle(util_sum);
}
