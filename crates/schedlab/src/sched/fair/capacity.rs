//! The capacity a CPU has left for fair tasks (`update_cpu_capacity`), refreshed when the
//! CPU balances its lowest domain (`sched/fair/balance`).

use crate::sched::rq::Rq;

/// `scale_rt_capacity`: the CPU's capacity less what RT and deadline tasks used by their PELT
/// signals, at least 1. schedlab has no IRQ time and no thermal pressure.
pub fn scale_rt_capacity(rq: &Rq) -> u64 {
    let used = rq.avg_rt.util_avg + rq.avg_dl.util_avg;
    rq.capacity.saturating_sub(used).max(1)
}
