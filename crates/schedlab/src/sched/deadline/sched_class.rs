//! `dl_sched_class`: the deadline class behind the core's `SchedClass` interface.

use super::{cpudl, Dl};
use crate::sched::class::{Dequeued, Env, Placement, SchedClass, Wake};
use crate::sched::fair::sched_class::FAIR;
use crate::sched::features::Feat;
use crate::sched::flags::*;
use crate::sched::hrtick;
use crate::sched::rq::{Rq, RqAvg};
use crate::sched::Sched;

pub struct DeadlineClass;

pub static DEADLINE: DeadlineClass = DeadlineClass;

impl<'a> Dl<'a> {
    /// The deadline class of `rq`.
    pub fn on(rq: &'a mut Rq, env: &'a mut Env) -> Dl<'a> {
        let (server, curr) = (fair_server(env), rq.curr.map(|c| dl_of(env, c)));
        Dl {
            dl: &mut rq.dl,
            ses: &mut *env.dl,
            server,
            now: rq.clock.clock_task,
            clock_task: rq.clock.clock_task,
            scale: rq.clock.scale,
            curr,
            hooks: env.hooks.reborrow(),
        }
    }
}

/// `&p->dl`.
#[inline]
pub fn dl_of(env: &Env, p: u32) -> u32 {
    env.tasks()[p as usize].dl
}

/// `rq->fair_server` of the operation's CPU: the first entities are the CPUs' servers.
#[inline]
pub fn fair_server(env: &Env) -> u32 {
    env.hooks.cpu as u32
}

/// `start_hrtick_dl` (HRTICK_DL, 7.x): the hrtick at entity `se`'s remaining runtime (an
/// overrun one at `hrtick_start`'s floor), so its budget ends there, not at the tick past it.
fn start_hrtick_dl(rq: &mut Rq, env: &mut Env, se: u32) {
    if env.feat.has(Feat::HrtickDl) {
        let runtime = env.dl[se as usize].runtime.max(0) as u64;
        hrtick::start(rq, env, runtime);
    }
}

/// `task_tick_dl` with `queued` set (the hrtick's): the budget charged, and the hrtick armed
/// again for what is left while the task is still the leftmost. True asks for a resched.
pub fn hrtick_tick_dl(rq: &mut Rq, env: &mut Env, p: u32) -> bool {
    let resched = DEADLINE.task_tick(rq, env, p);
    let se = dl_of(env, p);
    if env.dl[se as usize].runtime > 0 && rq.dl.first() == Some(se) {
        start_hrtick_dl(rq, env, se);
    }
    resched
}

/// `update_curr_dl`; the time run also counts against the root rt_rq's budget, which
/// deadline tasks share with RT tasks where RT throttling is on (≤ 6.11). Simplified: the
/// kernel stops counting it once over budget while its period timer is idle.
fn update_curr(rq: &mut Rq, env: &mut Env) -> bool {
    let mut dl = Dl::on(rq, env);
    let ran = dl
        .curr
        .map(|c| &dl.ses[c as usize])
        .filter(|se| se.on_rq)
        .map_or(0, |se| dl.clock_task.saturating_sub(se.exec_start));
    let resched = dl.update_curr();
    if rq.rt.rt_runtime.is_some() {
        rq.rt.rt_time += ran;
    }
    resched
}

impl SchedClass for DeadlineClass {
    /// `enqueue_task_dl`.
    fn enqueue_task(&self, rq: &mut Rq, env: &mut Env, p: u32, flags: u32) {
        let se = dl_of(env, p);
        Dl::on(rq, env).enqueue(se, flags);
    }

    /// `dequeue_task_dl`: charge the budget first. A dead task's bandwidth leaving the
    /// root domain is the core's business (it owns the root domain).
    fn dequeue_task(&self, rq: &mut Rq, env: &mut Env, p: u32, flags: u32) -> Dequeued {
        if rq.curr == Some(p) {
            update_curr(rq, env);
        }
        let se = dl_of(env, p);
        if Dl::on(rq, env).dequeue(se, flags) {
            Dequeued::Released
        } else {
            Dequeued::Off
        }
    }

    fn yield_task(&self, rq: &mut Rq, env: &mut Env, _p: u32) {
        update_curr(rq, env);
        Dl::on(rq, env).yield_task();
    }

    /// `wakeup_preempt_dl`: earliest deadline first.
    fn wakeup_preempt(&self, rq: &mut Rq, env: &mut Env, p: u32, _wake_flags: u32) -> bool {
        let curr = dl_of(env, rq.curr.expect("a deadline task runs"));
        let se = dl_of(env, p);
        super::before(env.dl[se as usize].deadline, env.dl[curr as usize].deadline)
    }

    /// `pick_task_dl`: the leftmost entity; when that is the fair server, the fair task it
    /// serves (`rq->dl_server` marks it), or, with none, the server stops.
    fn pick_task(&self, rq: &mut Rq, env: &mut Env) -> Option<u32> {
        loop {
            let first = rq.dl.first()?;
            if first != fair_server(env) {
                return env.dl[first as usize].task;
            }
            if let Some(p) = FAIR.pick_task(rq, env) {
                rq.dl_server = true;
                return Some(p);
            }
            Dl::on(rq, env).server_stop();
        }
    }

    /// `put_prev_task_dl`.
    fn put_prev_task(&self, rq: &mut Rq, env: &mut Env, _p: u32) {
        update_curr(rq, env);
        env.update_rq_avg(rq, RqAvg::Dl, true);
    }

    /// `set_next_task_dl`: avg_dl catches up on the time no deadline task ran; under
    /// HRTICK_DL the hrtick is armed for the task's remaining runtime.
    fn set_next_task(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        let se = dl_of(env, p);
        env.dl[se as usize].exec_start = rq.clock.clock_task;
        env.update_rq_avg(rq, RqAvg::Dl, false);
        start_hrtick_dl(rq, env, se);
    }

    /// `task_tick_dl`: without HRTICK_DL (off by default) the budget is checked here, so a
    /// task may overrun it by up to a tick (repaid at replenishment).
    fn task_tick(&self, rq: &mut Rq, env: &mut Env, _p: u32) -> bool {
        let resched = update_curr(rq, env);
        env.update_rq_avg(rq, RqAvg::Dl, true);
        resched
    }

    fn update_curr(&self, rq: &mut Rq, env: &mut Env, _p: u32) -> bool {
        update_curr(rq, env)
    }

    /// `migrate_task_rq_dl`: only for a waking task.
    fn migrate_task_rq(&self, rq: &mut Rq, env: &mut Env, p: u32, migrating: bool) {
        if migrating {
            return;
        }
        let se = dl_of(env, p);
        Dl::on(rq, env).migrate_task_rq(se);
    }

    /// `select_task_rq_dl`: on a wakeup, leave a CPU whose running deadline task would not
    /// be preempted (or cannot move), or that `p` does not fit, for `find_later_rq`. A new
    /// thread is placed as the SCHED_OTHER thread rt-app creates before its sched_setattr.
    fn select_task_rq(&self, s: &mut Sched, p: u32, prev: usize, wake: Wake) -> (usize, Placement) {
        if wake.flags & WF_TTWU == 0 {
            return FAIR.select_task_rq(s, p, prev, wake);
        }
        let (rqs, allowed) = (&s.rqs, &s.tasks[p as usize].cpus_mask);
        let se = s.dl_of(p);
        let rq = &rqs[prev];
        let mut select = se.migratable
            && rq.curr.is_some_and(|c| {
                let curr = s.dl_of(c);
                curr.dl_runtime != 0 // dl_task(curr)
                    && (!curr.migratable || !super::before(se.deadline, curr.deadline))
            });
        if s.asym {
            select |= !cpudl::fits(se, rq.capacity);
        }
        if select {
            if let Some(t) = cpudl::find_later_rq(rqs, se, allowed, prev, s.asym) {
                if cpudl::is_earliest(&rqs[t], se) {
                    return (t, Placement::Class);
                }
            }
        }
        (prev, Placement::Prev)
    }
}
