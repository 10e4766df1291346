//! `struct rq`: one CPU's scheduler state, with a runqueue per class.

use super::clock_pelt::RqClock;
use super::deadline::DlRq;
use super::fair::CfsRq;
use super::pelt::{update_class_avg, SchedAvg};
use super::rt::RtRq;
use super::uclamp::UclampRq;

pub struct Rq {
    pub clock: RqClock,
    pub cfs: CfsRq,
    pub dl: DlRq,
    pub rt: RtRq,
    /// `rq->dl_server`: the fair server picked the next task.
    pub dl_server: bool,
    /// TIF_NEED_RESCHED: a class asked for a resched outside a return value (`resched_curr`).
    pub need_resched: bool,
    /// The idle task's `se.exec_start`.
    pub idle_exec_start: u64,
    /// `rq->avg_rt`, `rq->avg_dl`: the time RT and deadline tasks ran, as PELT signals.
    pub avg_rt: SchedAvg,
    pub avg_dl: SchedAvg,
    /// The running task; `None` is the CPU's idle task.
    pub curr: Option<u32>,
    /// `arch_scale_cpu_capacity`.
    pub capacity: u64,
    /// `rq->cpu_capacity`: what RT and deadline tasks leave of it to fair ones.
    pub cpu_capacity: u64,
    /// `rq->uclamp`: the clamps of the RUNNABLE tasks, max-aggregated.
    pub uclamp: UclampRq,
}

impl Rq {
    pub fn new(clock: RqClock, capacity: u64, dl: DlRq, rt: RtRq) -> Rq {
        let avg = SchedAvg {
            last_update_time: clock.pelt_now(),
            ..SchedAvg::default()
        };
        Rq {
            idle_exec_start: clock.clock_task,
            avg_rt: avg,
            avg_dl: avg,
            clock,
            cfs: CfsRq::default(),
            dl,
            rt,
            dl_server: false,
            need_resched: false,
            curr: None,
            capacity,
            cpu_capacity: capacity,
            uclamp: UclampRq::default(),
        }
    }

    /// `rq->nr_running`: tasks queued in every class, curr and delayed ones included (the
    /// fair class's share is its h_nr_queued, not its root cfs_rq's nr_running), and the
    /// fair server while queued (6.12's `inc_dl_tasks` counts it).
    pub fn nr_running(&self) -> u32 {
        self.cfs.h_nr_queued + self.dl.nr_running() + self.rt.nr_running
    }

    /// `update_rt_rq_load_avg`.
    pub fn update_rt_avg(&mut self, running: bool) {
        let (now, scale) = (self.clock.pelt_now(), self.clock.contrib_scale());
        update_class_avg(now, &mut self.avg_rt, running, scale);
    }

    /// `update_dl_rq_load_avg`.
    pub fn update_dl_avg(&mut self, running: bool) {
        let (now, scale) = (self.clock.pelt_now(), self.clock.contrib_scale());
        update_class_avg(now, &mut self.avg_dl, running, scale);
    }

    /// `idle_cpu`: the idle task runs and nothing is queued.
    pub fn idle(&self) -> bool {
        self.curr.is_none() && self.nr_running() == 0
    }
}
