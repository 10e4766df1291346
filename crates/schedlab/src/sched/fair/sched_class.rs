//! `fair_sched_class`: the fair class behind the core's `SchedClass` interface.

use super::{load_avg, Fair};
use crate::sched::class::{Env, SchedClass};
use crate::sched::flags::{WF_FORK, WF_TTWU};
use crate::sched::rq::Rq;
use crate::sched::weight::LoadWeight;

pub struct FairClass;

pub static FAIR: FairClass = FairClass;

impl<'a> Fair<'a, 'a> {
    /// The fair class of `rq`.
    pub fn on(rq: &'a mut Rq, env: &'a mut Env) -> Fair<'a, 'a> {
        Fair {
            cfs: &mut rq.cfs,
            ses: &mut *env.ses,
            clock: &rq.clock,
            feat: env.feat,
            tun: env.tun,
            capacity: rq.capacity,
            notes: env.tracing.then_some(&mut rq.notes),
        }
    }
}

impl SchedClass for FairClass {
    fn enqueue_task(&self, rq: &mut Rq, env: &mut Env, p: u32, flags: u32) {
        Fair::on(rq, env).enqueue_task(p, flags);
    }

    fn dequeue_task(&self, rq: &mut Rq, env: &mut Env, p: u32, flags: u32) -> bool {
        Fair::on(rq, env).dequeue_task(p, flags)
    }

    fn yield_task(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        Fair::on(rq, env).yield_task(p);
    }

    /// `check_preempt_wakeup_fair`.
    fn wakeup_preempt(&self, rq: &mut Rq, env: &mut Env, p: u32, wake_flags: u32) -> bool {
        let curr = rq.curr.expect("a fair task runs");
        Fair::on(rq, env).check_preempt_wakeup(curr, p, wake_flags & WF_FORK != 0)
    }

    /// `pick_task_fair`; a delayed sleeper reached first finishes its dequeue here.
    fn pick_task(&self, rq: &mut Rq, env: &mut Env) -> Option<u32> {
        Fair::on(rq, env).pick_next_entity().0
    }

    fn put_prev_task(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        Fair::on(rq, env).put_prev_entity(p);
    }

    fn set_next_task(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        Fair::on(rq, env).set_next_entity(p);
    }

    /// `task_tick_fair` → `entity_tick`.
    fn task_tick(&self, rq: &mut Rq, env: &mut Env, p: u32) -> bool {
        Fair::on(rq, env).entity_tick(p)
    }

    /// `init_entity_runnable_average` (sched_fork) and `post_init_entity_util_avg`
    /// (wake_up_new_task) together, since schedlab places a new task before either; then
    /// `task_fork_fair`.
    fn task_fork(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        let mut f = Fair::on(rq, env);
        load_avg::init_new_task(&mut f, p);
        f.task_fork(p);
    }

    fn migrate_task_rq(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        Fair::on(rq, env).migrate_task_rq(p);
    }

    /// `task_dead_fair`.
    fn task_dead(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        load_avg::remove_entity_load_avg(&mut Fair::on(rq, env), p);
    }

    /// `reweight_task_fair`.
    fn reweight_task(&self, rq: &mut Rq, env: &mut Env, p: u32, lw: LoadWeight) {
        Fair::on(rq, env).reweight_task(p, lw);
    }

    /// Placement for now, not `select_task_rq_fair` (its wake_affine and
    /// select_idle_sibling come with a later issue): a wakeup stays on an idle previous CPU,
    /// otherwise (and at fork) the allowed CPU with the fewest tasks, lowest number first.
    fn select_task_rq(
        &self,
        rqs: &[Rq],
        _env: &Env,
        _p: u32,
        allowed: &[bool],
        prev: usize,
        wake_flags: u32,
    ) -> usize {
        if wake_flags & WF_TTWU != 0 && allowed[prev] && rqs[prev].idle() {
            return prev;
        }
        (0..rqs.len())
            .filter(|&c| allowed[c])
            .min_by_key(|&c| (rqs[c].curr.is_some() as u32 + rqs[c].nr_running(), c))
            .expect("an allowed CPU exists")
    }
}
