//! Which tasks a balance pass moves (fair.c, 6.12): `detach_tasks` from the busiest CPU's
//! least recently run end, `can_migrate_task` (6.14+: delayed and ineligible tasks; affinity,
//! running, cache hotness against `sysctl_sched_migration_cost`), `attach_tasks` on the
//! destination.

use super::stats::{CpuIdleType, Imbalance, MigrationType};
use super::{BalanceDelayed, MIGRATION_COST_NS};
use crate::sched::class::Class;
use crate::sched::explain::About;
use crate::sched::explain::Kind;
use crate::sched::fair::capacity::{task_fits_cpu, task_util_est};
use crate::sched::fair::eevdf::eligible_on;
use crate::sched::features::Feat;
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

    /// `can_migrate_task`: (6.14+) not delayed unless the pass balances load, eligible or
    /// after a failed pass; allowed on the destination (else remember another CPU of the
    /// local group that is, `LBF_DST_PINNED`), not running, and cache cold or too many
    /// failures.
    fn can_migrate_task(&self, p: u32, env: &mut LbEnv) -> bool {
        env.task_hot = false;
        let t = &self.tasks[p as usize];
        if self.feat.balance_delayed == BalanceDelayed::Runnable
            && self.ses[t.se as usize].sched_delayed
            && env.imb.migration_type != MigrationType::Load
        {
            return false;
        }
        if self.throttled_lb_pair(t.se, env.src_cpu, env.dst_cpu) {
            return false;
        }
        if self.feat.balance_eligible_first
            && env.nr_balance_failed == 0
            && self.task_is_ineligible_on_dst_cpu(t.se, env.dst_cpu)
        {
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

    /// `task_is_ineligible_on_dst_cpu`: under PLACE_LAG, entity `se` is not eligible where
    /// EEVDF queues it and `dst` has some queued there, so it would arrive ineligible there
    /// too: its cfs_rq and its group's on `dst` (6.14 to 6.18), the two CPUs' roots under
    /// 7.x's flat runqueue.
    fn task_is_ineligible_on_dst_cpu(&self, se: u32, dst: usize) -> bool {
        let flat = self.feat.flat();
        let h_loads = flat.then_some(&*self.h_loads);
        let (cfs, dst_queued) = if flat {
            let src = self.tasks[self.ses[se as usize].task as usize].cpu;
            (&*self.cfs_rqs[src], self.cfs_rqs[dst].h_nr_queued)
        } else {
            let cfs = &self.cfs_rqs[self.ses[se as usize].cfs_rq as usize];
            let dst_cfs = &self.cfs_rqs[self.tgs[cfs.tg as usize].cfs_rq(dst) as usize];
            (&**cfs, dst_cfs.nr_running)
        };
        self.feat.has(Feat::PlaceLag)
            && dst_queued != 0
            && !eligible_on(cfs, &self.ses, se, h_loads)
    }

    /// `throttled_lb_pair`: is the task's group throttled (from itself up) on either CPU?
    /// 6.18+ asks of the destination only (`lb_throttled_hierarchy`, 0d4eaf8caf8c): a task
    /// still queued in a throttled hierarchy may leave it.
    fn throttled_lb_pair(&self, se: u32, src: usize, dst: usize) -> bool {
        let tg = &self.tgs[self.cfs_rqs[self.ses[se as usize].cfs_rq as usize].tg as usize];
        let cpus = if self.feat.task_throttle() {
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
    use super::super::stats::{CpuIdleType, Imbalance, MigrationType};
    use super::super::BalanceDelayed;
    use super::LbEnv;
    use crate::kernel::Kernel;
    use crate::sched::fair::bandwidth::Throttle;
    use crate::sched::fair::Runqueue;
    use crate::sched::task::TaskState;
    use crate::sched::tests::{attr, fork_on, machine, task_in_group, Recorder, T0};
    use crate::sched::uapi::Policy;
    use crate::sched::Sched;

    const MS: u64 = 1_000_000;

    /// smp:2 under 6.18: a on CPU 0, and `extra` + 2 tasks forked on CPU 1 (the first one,
    /// c, then freed to run anywhere), its fair runqueue `runqueue`. (scheduler, recorder, a, c.)
    fn cpu1_shared(extra: usize, runqueue: Runqueue) -> (Sched, Recorder, u32, u32) {
        let (mut s, mut h) = machine("smp:2", Kernel::V6_18);
        s.feat.runqueue = runqueue;
        let a = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[0]));
        let c = fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[1]));
        for _ in 0..=extra {
            fork_on(&mut s, &mut h, attr(Policy::Other), Some(&[1]));
        }
        s.set_cpus_allowed(c, vec![true, true], &mut h);
        assert_eq!((s.tasks[a as usize].cpu, s.tasks[c as usize].cpu), (0, 1));
        (s, h, a, c)
    }

    /// Whether a pass of CPU 1 → CPU 0 (the lowest domain, `nr_balance_failed` as given)
    /// moving by `migration_type` may take `p`.
    fn may_pull(s: &Sched, p: u32, migration_type: MigrationType, failed: u32) -> bool {
        let imb = Imbalance {
            migration_type,
            imbalance: 1,
        };
        let mut env = LbEnv::new(0, 1, CpuIdleType::Idle, imb, &s.topo.domains[0][0]);
        env.nr_balance_failed = failed;
        s.can_migrate_task(p, &mut env)
    }

    #[test]
    fn from_6_14_a_newly_idle_cpu_leaves_a_delayed_task_where_it_is() {
        // CPU 1 runs c then e, forked at T0 (v0). At T0 + 1 ms c sleeps: V = v0 + 0.5 ms,
        // its lag −0.5 ms, not eligible: delayed, still queued (nr_running 2, e running);
        // e's tick at T0 + 1.6 ms (within its deadline) leaves c cold. At T0 + 2 ms a, alone
        // on CPU 0, sleeps at lag 0: CPU 0 balances newly idle (the root domain overloaded by
        // CPU 1's two). ≤6.13 counts c (h_nr_queued 2): the groups have spare capacity, one
        // CPU each, so the imbalance is half their difference, (2 − 0) / 2 = 1 task, and c,
        // the only one not running and cold (1 ms off its CPU), is pulled. 6.14+ counts the
        // runnable only (h_nr_runnable 1): CPU 1 has no task waiting, no busiest group
        // (lb_nobusyg); and were the pass moving tasks, c would be refused, except to balance
        // load.
        for (form, pulled) in [
            (BalanceDelayed::Queued, true),
            (BalanceDelayed::Runnable, false),
        ] {
            let (mut s, mut h, a, c) = cpu1_shared(0, Runqueue::Hier);
            s.feat.balance_delayed = form;
            s.feat.balance_eligible_first = false; // c, ineligible, would be refused by it
            h.now = T0 + MS;
            s.deactivate(c, TaskState::Sleeping, &mut h);
            assert!(s.ses[s.tasks[c as usize].se as usize].sched_delayed);
            assert_eq!(s.nr_running(1), 2);
            h.now = T0 + 1_600_000;
            s.sched_tick(1, &mut h);
            let by_task = may_pull(&s, c, MigrationType::Task, 0);
            assert_eq!(by_task, form == BalanceDelayed::Queued, "{form:?}");
            assert!(may_pull(&s, c, MigrationType::Load, 0), "{form:?}");
            h.now = T0 + 2 * MS;
            s.deactivate(a, TaskState::Sleeping, &mut h);
            let stats = &s.topo.domains[0][0].stats;
            let newly = CpuIdleType::NewlyIdle as usize;
            let (passes, nobusyg) = (stats.lb_count[newly], stats.lb_nobusyg[newly]);
            assert_eq!((passes, nobusyg), (1, !pulled as u32), "{form:?}");
            let t = &s.tasks[c as usize];
            assert_eq!(
                (t.cpu, t.stats.migrations()),
                ([1, 0][pulled as usize], pulled as u64),
                "{form:?}"
            );
        }
    }

    #[test]
    fn a_delayed_sleeper_the_balancer_moves_stays_delayed_until_its_wakeup() {
        // As above, under 6.13's rule (BALANCE_DELAYED queued): CPU 0's newly idle pass at
        // T0 + 2 ms pulls c, delayed on CPU 1. The move dequeues it without DEQUEUE_DELAYED,
        // so it stays delayed (clear_delayed comes with that flag only, in either runqueue's
        // kernel: dequeue_entities ≤6.18, 7.x's __dequeue_task); CPU 0's pick then finds it
        // delayed and dequeues it for good, and goes idle: nothing queued there. Its wakeup at
        // T0 + 3 ms enqueues it on CPU 0 once: one task queued and runnable, on the root's
        // tree or running.
        for runqueue in [Runqueue::Hier, Runqueue::Flat] {
            let (mut s, mut h, a, c) = cpu1_shared(0, runqueue);
            s.feat.balance_delayed = BalanceDelayed::Queued;
            s.feat.balance_eligible_first = false;
            h.now = T0 + MS;
            s.deactivate(c, TaskState::Sleeping, &mut h);
            h.now = T0 + 1_600_000;
            s.sched_tick(1, &mut h);
            h.now = T0 + 2 * MS;
            s.deactivate(a, TaskState::Sleeping, &mut h);
            let se = s.tasks[c as usize].se;
            assert_eq!(s.tasks[c as usize].cpu, 0, "{runqueue:?}");
            assert_eq!(s.rqs[0].curr, None, "{runqueue:?}");
            let root = &s.cfs_rqs[0];
            assert_eq!(
                (root.h_nr_queued, root.h_nr_runnable),
                (0, 0),
                "{runqueue:?}"
            );
            h.now = T0 + 3 * MS;
            assert!(s.try_to_wake_up(c, 0, 0, &mut h), "{runqueue:?}");
            let root = &s.cfs_rqs[0];
            assert_eq!(
                (root.h_nr_queued, root.h_nr_runnable),
                (1, 1),
                "{runqueue:?}"
            );
            let queued = root.timeline.iter().filter(|&e| e == se).count();
            let running = (s.rqs[0].curr == Some(c)) as usize;
            assert_eq!(queued + running, 1, "{runqueue:?}");
        }
    }

    #[test]
    fn from_6_14_a_task_ineligible_where_it_waits_moves_only_after_a_failed_pass() {
        // CPU 1 runs c, then e and f (all at v0). The tick at T0 + 1 ms finds c past its
        // deadline (v0 + 0.7 ms: half the 1.4 ms slice of two CPUs) and e is picked: c
        // waits at v0 + 1 ms. At T0 + 1.6 ms e's tick (0.6 ms run, within its deadline)
        // brings CPU 1's clock there: V = (1 + 0.6 + 0) / 3 = v0 + 0.53 ms, c still
        // ineligible, and cold (0.6 ms off its CPU). CPU 0 has a queued (running). Before
        // 6.14 c may go; with 873199d27bb2 only once the domain's balance failed.
        let (mut s, mut h, _, c) = cpu1_shared(1, Runqueue::Hier);
        h.now = T0 + MS;
        s.sched_tick(1, &mut h);
        assert_ne!(s.rqs[1].curr, Some(c));
        h.now = T0 + 1_600_000;
        s.sched_tick(1, &mut h);
        assert_ne!(s.rqs[1].curr, Some(c));
        for (eligible_first, failed, may) in [(false, 0, true), (true, 0, false), (true, 1, true)] {
            s.feat.balance_eligible_first = eligible_first;
            let pull = may_pull(&s, c, MigrationType::Task, failed);
            assert_eq!(
                pull, may,
                "eligible_first {eligible_first}, {failed} failed"
            );
        }
    }

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
