//! Which tasks a balance pass moves (fair.c, 6.12): `detach_tasks` from the busiest CPU's
//! least recently run end, `can_migrate_task` (affinity, running, cache hotness against
//! `sysctl_sched_migration_cost`), `attach_tasks` on the destination.

use super::stats::{CpuIdleType, Imbalance, MigrationType};
use super::MIGRATION_COST_NS;
use crate::sched::class::Class;
use crate::sched::explain::About;
use crate::sched::explain::Kind;
use crate::sched::fair::bandwidth::Throttle;
use crate::sched::fair::capacity::{task_fits_cpu, task_util_est};
use crate::sched::hooks::Hooks;
use crate::sched::ops::Op;
use crate::sched::topology::{SchedDomain, SD_SHARE_CPUCAPACITY};
use crate::sched::Sched;
use smallvec::smallvec;

/// `sysctl_sched_nr_migrate` and `SCHED_NR_MIGRATE_BREAK`: tasks examined per pass, and
/// between breathers.
const NR_MIGRATE: u32 = 32;

const LBF_ALL_PINNED: u32 = 0x01;
const LBF_NEED_BREAK: u32 = 0x02;
const LBF_DST_PINNED: u32 = 0x04;
const LBF_SOME_PINNED: u32 = 0x08;

/// Part of `struct lb_env`: one pass's source, destination and progress.
pub(super) struct LbEnv {
    /// The CPU balancing, which does the work (`this_cpu`; `dst_cpu` may move off it).
    this_cpu: usize,
    dst_cpu: usize,
    src_cpu: usize,
    idle: CpuIdleType,
    imb: Imbalance,
    flags: u32,
    new_dst_cpu: usize,
    /// The local group's CPUs still candidates (`dst_grpmask` ∩ `env->cpus`).
    dst_group: Vec<usize>,
    sd_flags: u32,
    cache_nice_tries: u32,
    nr_balance_failed: u32,
    loops: u32,
    loop_max: u32,
    loop_break: u32,
    /// The task being examined is cache hot but may go (`p->sched_task_hot`), and how many
    /// such went (`lb_hot_gained`).
    task_hot: bool,
    pub(super) hot_gained: u32,
}

impl LbEnv {
    pub(super) fn new(
        dst: usize,
        src: usize,
        idle: CpuIdleType,
        imb: Imbalance,
        sd: &SchedDomain,
    ) -> LbEnv {
        LbEnv {
            this_cpu: dst,
            dst_cpu: dst,
            src_cpu: src,
            idle,
            imb,
            flags: LBF_ALL_PINNED,
            new_dst_cpu: dst,
            dst_group: sd.groups[0].to_vec(),
            sd_flags: sd.flags,
            cache_nice_tries: sd.cache_nice_tries,
            nr_balance_failed: sd.nr_balance_failed,
            loops: 0,
            loop_max: 0,
            loop_break: NR_MIGRATE,
            task_hot: false,
            hot_gained: 0,
        }
    }

    /// Every task examined was pinned away from the destination.
    pub(super) fn all_pinned(&self) -> bool {
        self.flags & LBF_ALL_PINNED != 0
    }

    /// Some task examined could not come here (LBF_SOME_PINNED).
    pub(super) fn some_pinned(&self) -> bool {
        self.flags & LBF_SOME_PINNED != 0
    }

    pub(super) fn src_cpu(&self) -> usize {
        self.src_cpu
    }

    pub(super) fn imbalance(&self) -> Imbalance {
        self.imb
    }

    pub(super) fn idle(&self) -> CpuIdleType {
        self.idle
    }
}

impl Sched {
    /// `sched_balance_rq`'s moves from `env.src_cpu`: detach and attach in rounds of
    /// `NR_MIGRATE` tasks, then again to another CPU of the local group for tasks pinned
    /// away from this one (`LBF_DST_PINNED`). Returns the tasks moved.
    pub(super) fn detach_attach<H: Hooks>(&mut self, env: &mut LbEnv, h: &mut H) -> u32 {
        env.loop_max = NR_MIGRATE.min(self.nr_running(env.src_cpu));
        let mut moved = 0;
        loop {
            self.update_rq_clock(env.src_cpu, h.now());
            let tasks = self.detach_tasks(env, h);
            moved += tasks.len() as u32;
            self.update_rq_clock(env.dst_cpu, h.now());
            for &p in tasks.iter().rev() {
                self.attach_task(p, (env.src_cpu, env.dst_cpu), env.this_cpu, h);
                // A newly idle CPU is inside schedule(): its pick comes next.
                if env.idle != CpuIdleType::NewlyIdle {
                    self.wakeup_preempt(env.dst_cpu, p, 0, h);
                }
            }
            if env.flags & LBF_NEED_BREAK != 0 {
                env.flags &= !LBF_NEED_BREAK;
                continue;
            }
            if env.flags & LBF_DST_PINNED != 0 && env.imb.imbalance > 0 {
                env.dst_group.retain(|&c| c != env.dst_cpu);
                (env.dst_cpu, env.flags) = (env.new_dst_cpu, env.flags & !LBF_DST_PINNED);
                (env.loops, env.loop_break) = (0, NR_MIGRATE);
                continue;
            }
            return moved;
        }
    }

    /// `detach_tasks`: up to the imbalance, from the source's least recently run tasks;
    /// one skipped goes back to the most recent end. Returns the tasks detached, in order.
    fn detach_tasks<H: Hooks>(&mut self, env: &mut LbEnv, h: &mut H) -> Vec<u32> {
        let src = env.src_cpu;
        let mut detached = Vec::new();
        if self.nr_running(src) <= 1 {
            env.flags &= !LBF_ALL_PINNED;
            return detached;
        }
        while let Some(p) = self.rqs[src].cfs_tasks.first() {
            if env.imb.imbalance <= 0 || (env.idle.idle() && self.nr_running(src) <= 1) {
                break;
            }
            env.loops += 1;
            self.ops.add(env.this_cpu, Op::BalanceTask, 1);
            if env.loops > env.loop_max {
                break;
            }
            if env.loops > env.loop_break {
                env.loop_break += NR_MIGRATE;
                env.flags |= LBF_NEED_BREAK;
                break;
            }
            if !self.can_migrate_task(p, env) || !self.takes_imbalance(p, env) {
                (self.rqs[src].cfs_tasks).move_to_recent(&mut self.group_nodes, p);
                continue;
            }
            self.note("detach_tasks", || {
                let imb = &env.imb;
                let values = smallvec![
                    ("src_cpu", src as i64),
                    ("migration_type", imb.migration_type as i64),
                    ("imbalance_left", imb.imbalance),
                    ("idle", env.idle as i64),
                ];
                (About::Subject, values)
            });
            self.decide(
                Kind::DetachTasks,
                (h.now(), env.this_cpu),
                Some(p),
                env.dst_cpu as i64,
                "",
            );
            self.detach_task(p, src, h);
            detached.push(p);
            env.hot_gained += std::mem::take(&mut env.task_hot) as u32;
            // A preemptible kernel stops a newly idle pass at the first task.
            if env.idle == CpuIdleType::NewlyIdle || env.imb.imbalance <= 0 {
                break;
            }
        }
        detached
    }

    /// `detach_tasks`' accounting of task `p` against the imbalance: false to skip it.
    fn takes_imbalance(&mut self, p: u32, env: &mut LbEnv) -> bool {
        let failed = env.nr_balance_failed;
        // shr_bound: ease the limit as passes fail.
        let over = |v: u64| (v >> failed.min(63)) as i64 > env.imb.imbalance;
        match env.imb.migration_type {
            MigrationType::Load => {
                let load = self.task_h_load(p, env.this_cpu).max(1);
                if over(load) {
                    return false;
                }
                env.imb.imbalance -= load as i64;
            }
            MigrationType::Util => {
                let util = task_util_est(&self.ses[self.tasks[p as usize].se as usize]);
                if over(util) {
                    return false;
                }
                env.imb.imbalance -= util as i64;
            }
            MigrationType::Task => env.imb.imbalance -= 1,
            MigrationType::Misfit => {
                if self.rqs[env.src_cpu].misfit_task_load == 0 || self.task_fits_cpu(p, env.src_cpu)
                {
                    return false; // not the misfit
                }
                env.imb.imbalance = 0;
            }
        }
        true
    }

    /// `task_fits_cpu` of `p` on `cpu`.
    fn task_fits_cpu(&self, p: u32, cpu: usize) -> bool {
        let t = &self.tasks[p as usize];
        task_fits_cpu(
            t,
            &self.ses[t.se as usize],
            &self.rqs[cpu],
            self.uclamp_used,
        )
    }

    /// `can_migrate_task`: allowed on the destination (else remember another CPU of the local
    /// group that is, `LBF_DST_PINNED`), not running, and cache cold or too many failures.
    fn can_migrate_task(&self, p: u32, env: &mut LbEnv) -> bool {
        env.task_hot = false;
        let t = &self.tasks[p as usize];
        if self.throttled_lb_pair(t.se, env.src_cpu, env.dst_cpu) {
            return false;
        }
        if !t.cpus_mask[env.dst_cpu] {
            env.flags |= LBF_SOME_PINNED;
            if env.idle == CpuIdleType::NewlyIdle || env.flags & LBF_DST_PINNED != 0 {
                return false;
            }
            if let Some(&c) = env.dst_group.iter().find(|&&c| t.cpus_mask[c]) {
                env.flags |= LBF_DST_PINNED;
                env.new_dst_cpu = c;
            }
            return false;
        }
        env.flags &= !LBF_ALL_PINNED;
        if self.rqs[env.src_cpu].curr == Some(p) {
            return false;
        }
        let hot = self.task_hot(p, env);
        env.task_hot = hot;
        !hot || env.nr_balance_failed > env.cache_nice_tries
    }

    /// `throttled_lb_pair`: is the task's group throttled (from itself up) on either CPU?
    /// 6.18+ asks of the destination only (`lb_throttled_hierarchy`, 0d4eaf8caf8c): a task
    /// still queued in a throttled hierarchy may leave it.
    fn throttled_lb_pair(&self, se: u32, src: usize, dst: usize) -> bool {
        let tg = &self.tgs[self.cfs_rqs[self.ses[se as usize].cfs_rq as usize].tg as usize];
        let cpus = if self.feat.throttle == Throttle::Task {
            &[dst][..]
        } else {
            &[src, dst][..]
        };
        (cpus.iter()).any(|&c| self.cfs_rqs[tg.cfs_rq(c) as usize].throttle_count != 0)
    }

    /// `task_hot`: a fair task that ran on its CPU within `sysctl_sched_migration_cost`, or
    /// its cfs_rq's next buddy while the destination has work (CACHE_HOT_BUDDY), is hot;
    /// SCHED_IDLE tasks and SMT siblings (which share caches) never are.
    fn task_hot(&self, p: u32, env: &LbEnv) -> bool {
        let t = &self.tasks[p as usize];
        let se = &self.ses[t.se as usize];
        if t.class != Class::Fair || se.idle || env.sd_flags & SD_SHARE_CPUCAPACITY != 0 {
            return false;
        }
        if self.nr_running(env.dst_cpu) > 0 && self.cfs_rqs[t.cpu].next == Some(t.se) {
            return true;
        }
        let now = self.rqs[env.src_cpu].clock.clock_task;
        (now as i64 - se.exec_start as i64) < MIGRATION_COST_NS as i64
    }
}

#[cfg(test)]
mod tests {
    use crate::sched::fair::bandwidth::Throttle;
    use crate::sched::tests::task_in_group;

    #[test]
    fn from_6_18_a_task_may_leave_a_throttled_hierarchy_but_not_join_one() {
        // smp:2, a task of /g (no quota needed: the test marks /g's cfs_rqs throttled as
        // throttle_cfs_rq would). ≤6.17 `throttled_lb_pair` refuses the move when /g is
        // throttled on either CPU; 6.18's `lb_throttled_hierarchy` asks of the destination
        // only (0d4eaf8caf8c): the task, still queued in a throttled hierarchy, may leave it.
        for (throttle, from_throttled) in [(Throttle::CfsRq, true), (Throttle::Task, false)] {
            let (mut s, _h, g, p) = task_in_group("smp:2", throttle);
            let se = s.tasks[p as usize].se;
            for (cpu, src_to_dst, dst_to_src) in
                [(0, from_throttled, true), (1, true, from_throttled)]
            {
                let q = s.tgs[g as usize].cfs_rq(cpu) as usize;
                s.cfs_rqs[q].throttle_count = 1;
                assert_eq!(
                    s.throttled_lb_pair(se, 0, 1),
                    src_to_dst,
                    "{throttle:?}, /g throttled on {cpu}"
                );
                assert_eq!(
                    s.throttled_lb_pair(se, 1, 0),
                    dst_to_src,
                    "{throttle:?}, /g throttled on {cpu}"
                );
                s.cfs_rqs[q].throttle_count = 0;
            }
        }
    }
}
