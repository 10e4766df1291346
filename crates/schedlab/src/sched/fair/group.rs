//! Task groups (CONFIG_FAIR_GROUP_SCHED): the cgroup hierarchy's cpu controller. A group
//! has an entity and a cfs_rq on every CPU (`init_tg_cfs_entry`); its entity's weight is
//! its share of `tg->shares`, in proportion to the load it has on that CPU
//! (`calc_group_shares`), recomputed as the load changes (`update_cfs_group`).

use super::bandwidth::CfsBandwidth;
use super::{CfsRq, CfsRqId, Fair, SchedEntity, SeId, NO_TASK};
use crate::sched::util_est::UtilEst;
use crate::sched::weight::{scale_load, scale_load_down, LoadWeight, NICE_0_LOAD, WEIGHT_IDLEPRIO};
use crate::sched::Sched;

/// A task group's id in `Sched::tgs`.
pub type TgId = u32;
/// `root_task_group`.
pub const ROOT_TG: TgId = 0;

const NSEC_PER_MSEC: u64 = 1_000_000;

/// `MIN_SHARES` and `MAX_SHARES` (unscaled): cpu.shares' range (v1).
pub const MIN_SHARES: u64 = 2;
pub const MAX_SHARES: u64 = 1 << 18;

/// `struct task_group`.
#[derive(Debug, Clone)]
pub struct TaskGroup {
    /// Its cgroup path, as `sched_pelt_cfs` prints it ("/" for the root).
    pub path: String,
    pub parent: Option<TgId>,
    /// `tg->shares` (scaled).
    pub shares: u64,
    /// `tg->load_avg`: Σ of its cfs_rqs' `tg_load_avg_contrib`.
    pub load_avg: i64,
    /// cpu.idle: its entities are SCHED_IDLE-like (`tg->idle`).
    pub idle: bool,
    /// `tg->se[0]` (none for the root) and `tg->cfs_rq[0]`: a group's entities and cfs_rqs
    /// are made CPU by CPU in a row, so each CPU's is the first's id plus the CPU's number.
    first_se: Option<SeId>,
    first_cfs_rq: CfsRqId,
    pub children: Vec<TgId>,
    /// `tg->cfs_bandwidth` when cpu.max sets a quota.
    pub bandwidth: Option<Box<CfsBandwidth>>,
}

impl TaskGroup {
    /// `tg->se[cpu]`: its entity on `cpu` (none for the root).
    #[inline(always)]
    pub fn se(&self, cpu: usize) -> Option<SeId> {
        self.first_se.map(|e| e + cpu as SeId)
    }

    /// `tg->cfs_rq[cpu]`.
    #[inline(always)]
    pub fn cfs_rq(&self, cpu: usize) -> CfsRqId {
        self.first_cfs_rq + cpu as CfsRqId
    }

    /// The group or one above it is idle (`cfs_rq_is_idle` on the task's path: the
    /// kernel's `idle_h_nr_running` counts its tasks).
    pub fn in_idle_group(&self, tgs: &[TaskGroup]) -> bool {
        self.idle
            || self
                .parent
                .is_some_and(|p| tgs[p as usize].in_idle_group(tgs))
    }

    /// The root group: each CPU's `rq->cfs`, cfs_rqs 0 to the CPU count.
    pub fn root() -> TaskGroup {
        TaskGroup {
            path: "/".into(),
            parent: None,
            shares: NICE_0_LOAD,
            load_avg: 0,
            idle: false,
            first_se: None,
            first_cfs_rq: 0,
            children: Vec::new(),
            bandwidth: None,
        }
    }
}

impl Sched {
    /// `sched_create_group` + `init_tg_cfs_entry` on every CPU: group `path` under `parent`,
    /// with cpu.shares `shares` (unscaled), cpu.idle `idle` (an idle group weighs
    /// WEIGHT_IDLEPRIO, `sched_group_set_idle`) and cpu.max `max` (quota and period, ns).
    /// On each CPU its entity is queued on its parent's cfs_rq there and owns a new cfs_rq;
    /// it starts at NICE_0_LOAD with no load (`init_entity_runnable_average` gives tasks
    /// only).
    pub fn sched_create_group(
        &mut self,
        path: String,
        parent: TgId,
        shares: u64,
        idle: bool,
        max: Option<(u64, u64)>,
    ) -> TgId {
        let id = self.tgs.len() as TgId;
        let nr_cpus = self.rqs.len();
        let tg = TaskGroup {
            path,
            parent: Some(parent),
            shares: scale_load(if idle { WEIGHT_IDLEPRIO } else { shares }),
            load_avg: 0,
            idle,
            first_se: Some(self.ses.len() as SeId),
            first_cfs_rq: self.cfs_rqs.len() as CfsRqId,
            children: Vec::new(),
            bandwidth: max
                .map(|(quota, period)| Box::new(CfsBandwidth::new(quota, period, nr_cpus))),
        };
        let up = &self.tgs[parent as usize];
        for cpu in 0..nr_cpus {
            let q = self.cfs_rqs.len() as CfsRqId;
            self.cfs_rqs.push(Box::new(CfsRq {
                tg: id,
                ..CfsRq::default()
            }));
            let load = LoadWeight {
                weight: NICE_0_LOAD,
                inv_weight: 0,
            };
            let mut se = SchedEntity::new(NO_TASK, load, UtilEst::Ewma(0));
            se.cfs_rq = up.cfs_rq(cpu);
            se.parent = up.se(cpu);
            se.depth = se.parent.map_or(0, |p| self.ses[p as usize].depth + 1);
            se.my_q = Some(q);
            se.idle = idle;
            self.ses.push(se);
        }
        self.tgs.push(tg);
        self.tgs[parent as usize].children.push(id);
        self.sched_idle_used |= idle;
        id
    }
}

/// `calc_group_shares`: the group's weight on this CPU, its share of `tg->shares` by the
/// load it has here against its load everywhere, the local part taken at its largest
/// (runnable weight or average), between MIN_SHARES and the group's shares.
pub fn calc_group_shares(tg_shares: u64, tg_load_avg: i64, gcfs: &CfsRq) -> u64 {
    let load = scale_load_down(gcfs.load.weight).max(gcfs.avg.load_avg) as i64;
    let tg_weight = tg_load_avg - gcfs.tg_load_avg_contrib as i64 + load;
    let mut shares = tg_shares as i64 * load;
    if tg_weight != 0 {
        shares /= tg_weight;
    }
    shares.clamp(MIN_SHARES as i64, tg_shares as i64) as u64
}

impl Fair<'_, '_> {
    /// `update_cfs_group`: reweight a group entity to its group's share on this CPU; an
    /// empty group keeps its weight (for DELAY_DEQUEUE), and so does a throttled one
    /// (≤6.17; fcd394866e3d, 6.18, reweights it).
    pub fn update_cfs_group(&mut self, id: SeId) {
        let tgs = &*self.tgs;
        // group_cfs_rq(se): never this level's, which is out while the class works on it.
        let Some(q) = self.ses[id as usize].my_q else {
            return;
        };
        let gcfs = &self.cfs_rqs[q as usize];
        let throttle_frozen = gcfs.throttle_count != 0 && !self.feat.task_throttle();
        if gcfs.load.weight == 0 || throttle_frozen {
            return;
        }
        let tg = &tgs[gcfs.tg as usize];
        let shares = calc_group_shares(tg.shares, tg.load_avg, gcfs);
        if self.ses[id as usize].load.weight != shares {
            self.reweight_entity(
                id,
                LoadWeight {
                    weight: shares,
                    inv_weight: 0,
                },
            );
        }
    }

    /// `se_update_runnable`: a group entity is as runnable as its cfs_rq's tasks.
    pub fn se_update_runnable(&mut self, id: SeId) {
        if let Some(q) = self.ses[id as usize].my_q {
            self.ses[id as usize].runnable_weight = self.cfs_rqs[q as usize].h_nr_runnable;
        }
    }

    /// `update_tg_load_avg`: pass this cfs_rq's load change to `tg->load_avg` when it moved
    /// by more than 1/64 of what was passed last (and, 6.7+, at most once per ms).
    pub fn update_tg_load_avg(&mut self) {
        let cfs = &mut *self.cfs;
        if cfs.tg == ROOT_TG {
            return;
        }
        let now = self.clock.clock_task;
        if self.feat.tg_load_avg_ratelimit
            && now.saturating_sub(cfs.last_update_tg_load_avg) < NSEC_PER_MSEC
        {
            return;
        }
        let delta = cfs.avg.load_avg as i64 - cfs.tg_load_avg_contrib as i64;
        if delta.unsigned_abs() > cfs.tg_load_avg_contrib / 64 {
            self.tgs[cfs.tg as usize].load_avg += delta;
            cfs.tg_load_avg_contrib = cfs.avg.load_avg;
            cfs.last_update_tg_load_avg = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gcfs(weight: u64, load_avg: u64, contrib: u64) -> CfsRq {
        let mut c = CfsRq {
            tg_load_avg_contrib: contrib,
            ..CfsRq::default()
        };
        c.load.weight = scale_load(weight);
        c.avg.load_avg = load_avg;
        c
    }

    #[test]
    fn calc_group_shares_by_hand() {
        let tg = scale_load(1024); // tg->shares of cpu.weight 100
                                   // All the group's load here: shares = tg->shares · load / load.
        assert_eq!(calc_group_shares(tg, 1024, &gcfs(1024, 1024, 1024)), tg);
        // Half of it elsewhere: tg_weight = 2048 − 1024 + 1024, shares = tg/2.
        assert_eq!(calc_group_shares(tg, 2048, &gcfs(1024, 1024, 1024)), tg / 2);
        // A task just arrived (weight 1024, load_avg still 100, contrib 100) while 3000 of
        // load is elsewhere: load = max(1024, 100) = 1024, tg_weight = 3100 − 100 + 1024 =
        // 4024, shares = 1048576 · 1024 / 4024 = 266834 (integer division).
        assert_eq!(calc_group_shares(tg, 3100, &gcfs(1024, 100, 100)), 266_834);
        // Nothing here: clamped up to MIN_SHARES (unscaled 2).
        assert_eq!(calc_group_shares(tg, 5000, &gcfs(0, 0, 0)), MIN_SHARES);
    }

    use crate::sched::fair::bandwidth::Throttle;
    use crate::sched::fair::sched_class::{fair, level_of};
    use crate::sched::tests::task_in_group;

    #[test]
    fn from_6_18_a_throttled_group_entity_is_reweighted() {
        // smp:1, one task in /g, so /g holds all of its group's load on the CPU and its
        // entity's share is tg->shares · load / load = tg->shares (calc_group_shares). With
        // /g's cfs_rq throttled, cpu.weight doubles its shares: ≤6.17 update_cfs_group
        // returns early for a throttled hierarchy and the entity keeps 1024; 6.18
        // (fcd394866e3d) reweights it to 2048.
        for (throttle, want) in [(Throttle::CfsRq, 1024), (Throttle::Task, 2048)] {
            let (mut s, mut h, g, _) = task_in_group("smp:1", throttle);
            let ge = s.tgs[g as usize].se(0).expect("/g's entity on CPU 0");
            let q = s.tgs[g as usize].cfs_rq(0) as usize;
            assert_eq!(s.ses[ge as usize].load.weight, scale_load(1024));
            s.cfs_rqs[q].throttle_count = 1;
            s.tgs[g as usize].shares = scale_load(2048);
            s.on_rq(0, &mut h, |rq, env| {
                let parent = level_of(env, ge).0;
                fair(rq, env, parent, |f| f.update_cfs_group(ge));
            });
            let got = s.ses[ge as usize].load.weight;
            assert_eq!(got, scale_load(want), "{throttle:?}");
        }
    }
}
