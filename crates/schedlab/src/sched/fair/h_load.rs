//! `task_h_load`: a task's load as its CPU's root sees it, its share of each group's share
//! up the hierarchy (the load balancer moves this much). Two ways to keep the groups'
//! `h_load`, the same values for different work (`--set fair.h_load`, seed 001):
//! - lazy (3.12+): `update_cfs_rq_h_load` along the task's path when it is asked for,
//!   cached per jiffy per cfs_rq;
//! - eager (≤ 3.11): `update_h_load` walks every group top-down (`tg_load_down`), at most
//!   once per jiffy per CPU, before a balance pass moves tasks and whenever a value is
//!   stale.
//!
//! Simplified: jiffies are read from the CPU's rq clock.

use super::group::{TaskGroup, ROOT_TG};
use super::{CfsRq, CfsRqId, SchedEntity, SeId};
use crate::sched::features::HLoad;
use crate::sched::ops::{CpuOps, Op};
use crate::sched::rq::Rq;
use crate::sched::Sched;

/// What a cfs_rq's h_load is computed from, and the counters of the work.
pub struct HLoadCtx<'a> {
    pub cfs_rqs: &'a mut [Box<CfsRq>],
    pub ses: &'a [SchedEntity],
    pub tgs: &'a [TaskGroup],
    pub cpu: usize,
    /// The current jiffy.
    pub now: u64,
    /// `rq->h_load_throttle` (eager): the jiffy of the CPU's last full walk.
    pub throttle: &'a mut u64,
    /// Where the work is counted: the CPU doing it.
    pub ops: CpuOps<'a>,
}

impl<'a> HLoadCtx<'a> {
    /// `cpu`'s groups (its runqueue `rq`) at the current jiffy, the work counted in `ops`.
    pub fn new(
        rq: &'a mut Rq,
        cfs_rqs: &'a mut [Box<CfsRq>],
        ses: &'a [SchedEntity],
        tgs: &'a [TaskGroup],
        cpu: usize,
        tick_ns: u64,
        ops: CpuOps<'a>,
    ) -> HLoadCtx<'a> {
        HLoadCtx {
            cfs_rqs,
            ses,
            tgs,
            cpu,
            now: rq.clock.clock_task / tick_ns,
            throttle: &mut rq.h_load_throttle,
            ops,
        }
    }
}

/// `h_load × load / (cfs_rq's load_avg + 1)`: a share of a cfs_rq's h_load.
#[inline]
fn share(h_load: u64, load: u64, cfs_load_avg: u64) -> u64 {
    h_load * load / (cfs_load_avg + 1)
}

impl HLoadCtx<'_> {
    /// `update_cfs_rq_h_load(cfs_rq)`: from the first level up already computed this jiffy
    /// (or the root, which takes its own load_avg) down to `q`, each level's h_load its
    /// entity's share of its parent's. (The kernel marks the path on its way up with
    /// `cfs_rq->h_load_next`; schedlab recurses, a call per level.)
    fn update_cfs_rq_h_load(&mut self, q: CfsRqId) {
        let now = self.now;
        let c = &self.cfs_rqs[q as usize];
        if c.last_h_load_update == now {
            return;
        }
        let Some(e) = self.tgs[c.tg as usize].se(self.cpu) else {
            let c = &mut self.cfs_rqs[q as usize];
            c.h_load = c.avg.load_avg;
            c.last_h_load_update = now;
            return;
        };
        let parent = self.ses[e as usize].cfs_rq;
        self.update_cfs_rq_h_load(parent);
        let up = &self.cfs_rqs[parent as usize];
        let load = share(
            up.h_load,
            self.ses[e as usize].avg.load_avg,
            up.avg.load_avg,
        );
        let g = &mut self.cfs_rqs[q as usize];
        g.h_load = load;
        g.last_h_load_update = now;
        self.ops.add(Op::HLoadStep, 1);
    }

    /// `update_h_load(cpu)` → `walk_tg_tree(tg_load_down)`: every group's h_load on this
    /// CPU, parents first (groups are created after their parents), once per jiffy.
    pub fn update_h_load(&mut self) {
        if *self.throttle == self.now {
            return;
        }
        *self.throttle = self.now;
        self.ops.add(Op::UpdateHLoad, 1);
        for tg in self.tgs {
            let q = tg.cfs_rq(self.cpu);
            let load = match (tg.parent, tg.se(self.cpu)) {
                (Some(parent), Some(se)) => {
                    let pq = &self.cfs_rqs[self.tgs[parent as usize].cfs_rq(self.cpu) as usize];
                    share(
                        pq.h_load,
                        self.ses[se as usize].avg.load_avg,
                        pq.avg.load_avg,
                    )
                }
                _ => self.cfs_rqs[q as usize].avg.load_avg,
            };
            let c = &mut self.cfs_rqs[q as usize];
            c.h_load = load;
            c.last_h_load_update = self.now;
        }
        self.ops.add(Op::TgLoadDown, self.tgs.len() as u64);
    }

    /// `task_h_load(p)` of the task whose entity is `se`.
    pub fn task_h_load(&mut self, se: SeId, mode: HLoad) -> u64 {
        let e = &self.ses[se as usize];
        let q = e.cfs_rq;
        if self.cfs_rqs[q as usize].tg == ROOT_TG && self.tgs.len() == 1 {
            // No groups: the root's h_load is its load_avg, nothing to walk.
            let c = &self.cfs_rqs[q as usize];
            return share(c.avg.load_avg, e.avg.load_avg, c.avg.load_avg);
        }
        match mode {
            HLoad::Lazy => self.update_cfs_rq_h_load(q),
            HLoad::Eager if self.cfs_rqs[q as usize].last_h_load_update != self.now => {
                self.update_h_load()
            }
            HLoad::Eager => {}
        }
        let c = &self.cfs_rqs[q as usize];
        share(c.h_load, self.ses[se as usize].avg.load_avg, c.avg.load_avg)
    }
}

impl Sched {
    /// The h_load context of `cpu`'s groups now, the work done (and counted) by CPU `by`:
    /// the balancing CPU computes its source's values.
    fn h_load_ctx(&mut self, cpu: usize, by: usize) -> HLoadCtx<'_> {
        let rq = &mut self.rqs[cpu];
        let ops = self.ops.cpu(by);
        HLoadCtx::new(
            rq,
            &mut self.cfs_rqs,
            &self.ses,
            &self.tgs,
            cpu,
            self.tun.tick_ns,
            ops,
        )
    }

    /// `task_h_load(p)`, computed by CPU `by`.
    pub fn task_h_load(&mut self, p: u32, by: usize) -> u64 {
        let (se, cpu, mode) = (
            self.tasks[p as usize].se,
            self.tasks[p as usize].cpu,
            self.feat.h_load,
        );
        self.h_load_ctx(cpu, by).task_h_load(se, mode)
    }

    /// Eager h_load (≤ 3.11): `update_h_load(src_cpu)` before a balance pass moves tasks,
    /// walked by the balancing CPU `by`.
    pub fn update_h_load(&mut self, cpu: usize, by: usize) {
        if self.feat.h_load == HLoad::Eager {
            self.h_load_ctx(cpu, by).update_h_load();
        }
    }
}
