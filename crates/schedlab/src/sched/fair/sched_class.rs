//! `fair_sched_class`: the fair class behind the core's `SchedClass` interface.

use super::capacity::task_fits_cpu;
use super::{load_avg, CfsRqId, Fair, SeId};
use crate::sched::class::{Dequeued, Env, SchedClass};
use crate::sched::deadline::sched_class::fair_server;
use crate::sched::deadline::Dl;
use crate::sched::flags::{WF_FORK, WF_TTWU};
use crate::sched::idle;
use crate::sched::rq::Rq;
use crate::sched::weight::LoadWeight;
use crate::sched::Sched;

pub struct FairClass;

pub static FAIR: FairClass = FairClass;

impl<'a, 'n> Fair<'a, 'n> {
    /// The fair class of `rq` at work on its cfs_rq `cfs_rq`.
    pub fn on(rq: &'a mut Rq, env: &'a mut Env<'n>, cfs_rq: CfsRqId) -> Fair<'a, 'n> {
        Fair {
            cfs: &mut env.cfs_rqs[cfs_rq as usize],
            cfs_tasks: &mut rq.cfs_tasks,
            ses: &mut *env.ses,
            clock: &rq.clock,
            feat: env.feat,
            tun: env.tun,
            capacity: rq.capacity,
            trace: env.hooks.tracing.then_some(&mut env.hooks),
        }
    }
}

/// `update_misfit_status`: on CPUs of different capacities, the running task `p` marks
/// its CPU with its load (`task_h_load`, at least 1) when a bigger CPU is allowed and it
/// does not fit this one (`task_fits_cpu`: util_est against `capacity_of` with headroom).
fn update_misfit_status(rq: &mut Rq, env: &Env, p: u32) {
    if !env.asym {
        return;
    }
    let t = &env.tasks()[p as usize];
    let se = &env.ses[t.se as usize];
    let fits = task_fits_cpu(t, se, rq, env.uclamp_used);
    let single = t.cpus_mask.iter().filter(|&&a| a).count() == 1;
    rq.misfit_task_load = if single || rq.capacity == t.max_allowed_capacity || fits {
        0
    } else {
        let cfs_load = env.cfs_rqs[env.root() as usize].avg.load_avg;
        load_avg::task_h_load(se.avg.load_avg, cfs_load).max(1)
    };
}

/// `&p->se`, and `cfs_rq_of(&p->se)`.
#[inline]
fn se_of(env: &Env, p: u32) -> (SeId, CfsRqId) {
    let se = env.tasks()[p as usize].se;
    (se, env.ses[se as usize].cfs_rq)
}

/// Run a fair operation on `rq`'s cfs_rq `cfs_rq`, then charge the fair server for the
/// running time it accounted (`update_curr_fair` → `dl_server_update`); its exhaustion asks
/// for a resched.
#[inline]
fn fair<R>(rq: &mut Rq, env: &mut Env, cfs_rq: CfsRqId, op: impl FnOnce(&mut Fair) -> R) -> R {
    let mut f = Fair::on(rq, env, cfs_rq);
    let r = op(&mut f);
    let delta = std::mem::take(&mut f.cfs.server_delta);
    if delta != 0 && env.dl[fair_server(env) as usize].server_active {
        rq.need_resched |= Dl::on(rq, env).server_update(delta);
    }
    r
}

impl SchedClass for FairClass {
    /// `enqueue_task_fair`; the CPU's first fair task starts the fair server, charging it
    /// first for the idle time if the CPU was idle.
    fn enqueue_task(&self, rq: &mut Rq, env: &mut Env, p: u32, flags: u32) {
        let first = env.cfs().h_nr_queued == 0;
        let (se, cfs_rq) = se_of(env, p);
        fair(rq, env, cfs_rq, |f| f.enqueue_task(se, flags));
        if first && env.cfs().h_nr_queued > 0 && env.dl[fair_server(env) as usize].dl_runtime != 0 {
            if rq.nr_running_rt_dl() == 0 {
                idle::put_prev_task_idle(rq, env);
            }
            rq.need_resched |= Dl::on(rq, env).server_start();
        }
    }

    fn dequeue_task(&self, rq: &mut Rq, env: &mut Env, p: u32, flags: u32) -> Dequeued {
        let (se, cfs_rq) = se_of(env, p);
        if fair(rq, env, cfs_rq, |f| f.dequeue_task(se, flags)) {
            Dequeued::Off
        } else {
            Dequeued::Delayed
        }
    }

    fn yield_task(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        let (se, cfs_rq) = se_of(env, p);
        fair(rq, env, cfs_rq, |f| f.yield_task(se));
    }

    /// `check_preempt_wakeup_fair`.
    fn wakeup_preempt(&self, rq: &mut Rq, env: &mut Env, p: u32, wake_flags: u32) -> bool {
        let (curr, _) = se_of(env, rq.curr.expect("a fair task runs"));
        let (se, cfs_rq) = se_of(env, p);
        fair(rq, env, cfs_rq, |f| {
            f.check_preempt_wakeup(curr, se, wake_flags & WF_FORK != 0)
        })
    }

    /// `pick_task_fair`: curr is charged first (its put_prev_entity may not have run); a
    /// delayed sleeper reached first finishes its dequeue here.
    fn pick_task(&self, rq: &mut Rq, env: &mut Env) -> Option<u32> {
        let se = fair(rq, env, env.root(), |f| {
            if f.cfs.curr.is_some_and(|c| f.ses[c as usize].on_rq) {
                f.update_curr();
            }
            f.pick_next_entity().0
        })?;
        Some(env.ses[se as usize].task)
    }

    fn put_prev_task(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        let (se, cfs_rq) = se_of(env, p);
        fair(rq, env, cfs_rq, |f| f.put_prev_entity(se));
    }

    /// `set_next_task_fair`: a queued task moves to the head of `rq->cfs_tasks` (most
    /// recently picked), then `set_next_entity`.
    fn set_next_task(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        let (se, cfs_rq) = se_of(env, p);
        if let Some(i) = rq.cfs_tasks.iter().position(|&t| t == p) {
            rq.cfs_tasks.remove(i);
            rq.cfs_tasks.push(p);
        }
        fair(rq, env, cfs_rq, |f| f.set_next_entity(se));
        update_misfit_status(rq, env, p);
    }

    /// `task_tick_fair` → `entity_tick`.
    fn task_tick(&self, rq: &mut Rq, env: &mut Env, p: u32) -> bool {
        let (se, cfs_rq) = se_of(env, p);
        let resched = fair(rq, env, cfs_rq, |f| f.entity_tick(se));
        update_misfit_status(rq, env, p);
        resched
    }

    /// `init_entity_runnable_average` (sched_fork) and `post_init_entity_util_avg`
    /// (wake_up_new_task) together, since schedlab places a new task before either; then
    /// `task_fork_fair`.
    fn task_fork(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        let (se, cfs_rq) = se_of(env, p);
        fair(rq, env, cfs_rq, |f| {
            load_avg::init_new_task(f, se);
            f.task_fork(se);
        });
    }

    fn migrate_task_rq(&self, rq: &mut Rq, env: &mut Env, p: u32, migrating: bool) {
        let (se, cfs_rq) = se_of(env, p);
        fair(rq, env, cfs_rq, |f| f.migrate_task_rq(se, migrating));
    }

    /// `task_dead_fair`.
    fn task_dead(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        let (se, cfs_rq) = se_of(env, p);
        fair(rq, env, cfs_rq, |f| load_avg::remove_entity_load_avg(f, se));
    }

    /// `reweight_task_fair`.
    fn reweight_task(&self, rq: &mut Rq, env: &mut Env, p: u32, lw: LoadWeight) {
        let (se, cfs_rq) = se_of(env, p);
        fair(rq, env, cfs_rq, |f| f.reweight_task(se, lw));
    }

    /// Placement for now, not `select_task_rq_fair` (its wake_affine and
    /// select_idle_sibling come with a later issue): a wakeup stays on an idle previous CPU,
    /// otherwise (and at fork) the allowed CPU with the fewest tasks, lowest number first.
    fn select_task_rq(&self, s: &Sched, p: u32, prev: usize, wake_flags: u32) -> usize {
        let (rqs, allowed) = (&s.rqs, &s.tasks[p as usize].cpus_mask);
        if wake_flags & WF_TTWU != 0 && allowed[prev] && s.idle_cpu(prev) {
            return prev;
        }
        (0..rqs.len())
            .filter(|&c| allowed[c])
            .min_by_key(|&c| (rqs[c].curr.is_some() as u32 + s.nr_running(c), c))
            .expect("an allowed CPU exists")
    }
}
