//! Admission control per root domain (`struct dl_bw`, `__dl_overflow`, `__dl_add`,
//! `__dl_sub`): Σu ≤ rt_runtime/rt_period · Σ capacity/1024. schedlab has one root domain,
//! every CPU of the platform.

use super::{to_ratio, SchedDlEntity};
use crate::sched::pelt::cap_scale;
use crate::sched::rq::Rq;
use crate::sched::task::TaskState;
use crate::sched::Sched;
use crate::time::Ns;

#[derive(Debug, Clone)]
pub struct DlBw {
    /// `dl_b->bw`: None is −1 (sched_rt_runtime_us = −1, no admission test).
    pub bw: Option<u64>,
    pub total_bw: u64,
    /// `dl_bw_capacity`: Σ arch_scale_cpu_capacity.
    pub cap: u64,
    /// `dl_bw_cpus`.
    pub cpus: i32,
}

impl DlBw {
    /// `init_dl_bw`; `rt` is (rt_period, rt_runtime) µs, None for RUNTIME_INF.
    pub fn new(rt: Option<(u64, u64)>, capacities: impl Iterator<Item = u64>) -> DlBw {
        let (mut cap, mut cpus) = (0, 0);
        for c in capacities {
            cap += c;
            cpus += 1;
        }
        DlBw {
            bw: rt.map(|(period, runtime)| to_ratio(period, runtime)),
            total_bw: 0,
            cap,
            cpus,
        }
    }

    /// `__dl_overflow(dl_b, cap, old_bw, new_bw)`.
    pub fn overflow(&self, old_bw: u64, new_bw: u64) -> bool {
        self.bw
            .is_some_and(|bw| cap_scale(bw, self.cap) < self.total_bw - old_bw + new_bw)
    }

    /// `__dl_add`: the change every CPU's extra_bw takes (`__dl_update`).
    pub fn add(&mut self, bw: u64) -> i64 {
        self.total_bw += bw;
        -((bw as i32 / self.cpus) as i64)
    }

    /// `__dl_sub`.
    pub fn sub(&mut self, bw: u64) -> i64 {
        self.total_bw -= bw;
        (bw as i32 / self.cpus) as i64
    }
}

/// `__dl_overflow` then `__dl_add`: admit `bw` to the root domain (every CPU's extra_bw
/// shrinks by its share), or refuse it (false).
fn dl_add(rqs: &mut [Rq], dl_bw: &mut DlBw, bw: u64) -> bool {
    if dl_bw.overflow(0, bw) {
        return false;
    }
    let delta = dl_bw.add(bw);
    rqs.iter_mut().for_each(|rq| rq.dl.update_extra(delta));
    true
}

/// `dl_server_apply_params(init)` for every CPU: the kernel does it at the CPU's first fair
/// enqueue, which boot's kthreads make happen everywhere before any workload starts. A
/// server the admission test refuses stays disabled, as the kernel's.
pub fn attach_fair_servers(
    rqs: &mut [Rq],
    servers: &mut [SchedDlEntity],
    dl_bw: &mut DlBw,
    runtime: u64,
    period: u64,
) {
    for cpu in 0..rqs.len() {
        let server = SchedDlEntity::fair_server(runtime, period);
        let bw = server.server_bw();
        if dl_add(rqs, dl_bw, bw) {
            servers[cpu] = server;
            rqs[cpu].dl.this_bw += bw;
        }
    }
}

impl Sched {
    /// `sched_dl_overflow` at the thread's sched_setattr: admit its bandwidth to the root
    /// domain, or refuse it (false), as the kernel's EBUSY.
    pub(crate) fn dl_admit(&mut self, id: u32) -> bool {
        let bw = self.dl_of(id).dl_bw;
        dl_add(&mut self.rqs, &mut self.dl_bw, bw)
    }

    /// `__dl_sub`: a dead task's bandwidth leaves the root domain.
    pub(crate) fn dl_release(&mut self, id: u32) {
        let bw = self.dl_of(id).dl_bw;
        let delta = self.dl_bw.sub(bw);
        self.rqs.iter_mut().for_each(|rq| rq.dl.update_extra(delta));
    }

    /// sched_setattr refused the thread (admission control): rt-app reports it, the thread
    /// never runs, the others go on.
    pub(crate) fn refuse(&mut self, id: u32, now: Ns) {
        let t = &mut self.tasks[id as usize];
        t.stats.refused = true;
        t.stats.ended_at = Some(now);
        self.set_state(id, TaskState::Dead, now);
        let (t, se) = (&self.tasks[id as usize], self.dl_of(id));
        self.refusals.push(format!(
            "{}: sched_setattr(SCHED_DEADLINE, runtime {} µs, period {} µs) refused by admission control (EBUSY): {:.3} of {:.3} CPUs already reserved; the thread does not run",
            t.comm,
            se.dl_runtime / 1000,
            se.dl_period / 1000,
            self.dl_bw.total_bw as f64 / (1 << 20) as f64,
            self.dl_bw.bw.map_or(f64::INFINITY, |bw| ((bw * self.dl_bw.cap) >> 10) as f64 / (1 << 20) as f64),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_exactly_up_to_the_limit() {
        // Two CPUs at 95%: cap_scale(996147, 2048) = 1992294.
        let mut b = DlBw::new(Some((1_000_000, 950_000)), [1024, 1024].into_iter());
        assert_eq!(b.bw, Some(996_147));
        let u = to_ratio(10_000_000, 9_000_000); // 0.9
        assert!(!b.overflow(0, u));
        assert_eq!(b.add(u), -((u / 2) as i64));
        let rest = 1_992_294 - u;
        assert!(!b.overflow(0, rest), "exactly at the limit is admitted");
        assert!(b.overflow(0, rest + 1), "one unit above is refused");
        b.sub(u);
        assert_eq!(b.total_bw, 0);
        let unlimited = DlBw::new(None, [1024].into_iter());
        assert!(!unlimited.overflow(0, 10 << 20));
    }
}
