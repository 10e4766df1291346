//! `struct rq`: one CPU's scheduler state, with a runqueue per class.

use super::clock_pelt::RqClock;
use super::deadline::DlRq;
use super::fair::{CfsRq, Note};
use super::rt::RtRq;
use super::uclamp::UclampRq;

pub struct Rq {
    pub clock: RqClock,
    pub cfs: CfsRq,
    pub dl: DlRq,
    pub rt: RtRq,
    /// The running task; `None` is the CPU's idle task.
    pub curr: Option<u32>,
    /// `arch_scale_cpu_capacity`.
    pub capacity: u64,
    /// `rq->uclamp`: the clamps of the RUNNABLE tasks, max-aggregated.
    pub uclamp: UclampRq,
    /// The fair class's tracepoint records, when tracing.
    pub notes: Vec<Note>,
}

impl Rq {
    pub fn new(clock: RqClock, capacity: u64, dl: DlRq, rt: RtRq) -> Rq {
        Rq {
            clock,
            cfs: CfsRq::default(),
            dl,
            rt,
            curr: None,
            capacity,
            uclamp: UclampRq::default(),
            notes: Vec::new(),
        }
    }

    /// `rq->nr_running`: tasks queued in every class, curr and delayed ones included (the
    /// fair class's share is its h_nr_queued, not its root cfs_rq's nr_running).
    pub fn nr_running(&self) -> u32 {
        self.cfs.h_nr_queued + self.dl.nr_running() + self.rt.nr_running
    }

    /// `idle_cpu`: the idle task runs and nothing is queued.
    pub fn idle(&self) -> bool {
        self.curr.is_none() && self.nr_running() == 0
    }
}
