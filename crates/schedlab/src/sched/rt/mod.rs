//! The RT class (kernel/sched/rt.c): SCHED_FIFO and SCHED_RR, one FIFO list per priority,
//! round-robin slices, and RT throttling (`sched_rt_runtime_us` per `sched_rt_period_us`,
//! the root rt_rq's bandwidth of ≤ 6.11).

use std::collections::VecDeque;

use super::class::{Dequeued, Env, Placement, SchedClass, Wake};
use super::cpupri;
use super::flags::*;
use super::rq::{Rq, RqAvg};
use super::Sched;
use crate::time::Ns;

/// `MAX_RT_PRIO`: kernel priorities 0 (highest) to 99.
pub const MAX_RT_PRIO: usize = 100;

/// `struct sched_rt_entity`.
#[derive(Debug, Clone, Default)]
pub struct SchedRtEntity {
    /// `p->prio` = 99 − rt_priority.
    pub prio: u32,
    /// SCHED_RR (a time slice) rather than SCHED_FIFO.
    pub rr: bool,
    /// Ticks left of the RR slice.
    pub time_slice: u32,
    pub on_rq: bool,
    pub exec_start: Ns,
    /// `nr_cpus_allowed > 1`.
    pub migratable: bool,
    /// min(util_min, util_max): the capacity a CPU needs for the task to fit it.
    pub uclamp_cap: u32,
}

impl SchedRtEntity {
    pub fn new(rt_priority: u32, rr: bool) -> SchedRtEntity {
        SchedRtEntity {
            prio: 99 - rt_priority,
            rr,
            ..Default::default()
        }
    }

    /// `rt_task_fits_capacity`: on asymmetric platforms, a CPU of at least the task's
    /// clamped need (util_min defaults to 1024 for RT: the biggest CPUs).
    pub fn fits(&self, capacity: u64, asym: bool) -> bool {
        !asym || capacity >= self.uclamp_cap as u64
    }
}

/// `struct rt_rq` of the root group.
#[derive(Debug, Clone)]
pub struct RtRq {
    /// `rt_prio_array`: a FIFO per priority and the bitmap of the non-empty ones.
    queue: Vec<VecDeque<u32>>,
    bitmap: u128,
    pub nr_running: u32,
    /// RT running time in the current period, and the budget (None: no throttling).
    pub rt_time: Ns,
    pub rt_runtime: Option<Ns>,
    pub throttled: bool,
    /// `sched_rr_timeslice` in ticks.
    pub rr_timeslice: u32,
}

impl RtRq {
    pub fn new(rt_runtime: Option<Ns>, rr_timeslice: u32) -> RtRq {
        RtRq {
            queue: vec![VecDeque::new(); MAX_RT_PRIO],
            bitmap: 0,
            nr_running: 0,
            rt_time: 0,
            rt_runtime,
            throttled: false,
            rr_timeslice,
        }
    }

    /// `sched_find_first_bit`: the highest priority queued.
    pub fn highest_prio(&self) -> Option<u32> {
        (self.bitmap != 0).then(|| self.bitmap.trailing_zeros())
    }

    fn push(&mut self, prio: u32, p: u32, head: bool) {
        let q = &mut self.queue[prio as usize];
        if head {
            q.push_front(p);
        } else {
            q.push_back(p);
        }
        self.bitmap |= 1 << prio;
    }

    fn remove(&mut self, prio: u32, p: u32) {
        let q = &mut self.queue[prio as usize];
        if let Some(i) = q.iter().position(|&x| x == p) {
            q.remove(i);
        }
        if q.is_empty() {
            self.bitmap &= !(1 << prio);
        }
    }

    /// `requeue_task_rt` to the tail of its list.
    fn requeue(&mut self, prio: u32, p: u32) {
        self.remove(prio, p);
        self.push(prio, p, false);
    }

    /// `pick_next_pushable_task` / `pick_highest_pushable_task`: the most important queued
    /// RT task that is not `curr`, can move, and `allowed` lets go.
    pub fn pushable(
        &self,
        ses: &[SchedRtEntity],
        curr: Option<u32>,
        allowed: impl Fn(u32) -> bool,
    ) -> Option<u32> {
        let mut bits = self.bitmap;
        while bits != 0 {
            let prio = bits.trailing_zeros();
            bits &= bits - 1;
            let found = self.queue[prio as usize]
                .iter()
                .copied()
                .find(|&p| curr != Some(p) && ses[p as usize].migratable && allowed(p));
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// Queued tasks, the running one included, most important first.
    pub fn queued(&self) -> impl Iterator<Item = u32> + '_ {
        self.queue.iter().flatten().copied()
    }

    /// `rt_rq->highest_prio.curr`: MAX_RT_PRIO − 1 with no RT task.
    pub fn highest_prio_curr(&self) -> u32 {
        self.highest_prio().unwrap_or(MAX_RT_PRIO as u32 - 1)
    }

    /// `rt_rq_is_runnable`: RT tasks queued and not throttled.
    pub fn runnable(&self) -> bool {
        self.nr_running > 0 && !self.throttled
    }

    /// `do_sched_rt_period_timer` for this rq (one period elapsed, no overrun): pay back a
    /// period's budget, unthrottle when under it. True when RT tasks may run again.
    pub fn period_timer(&mut self) -> bool {
        let Some(runtime) = self.rt_runtime else {
            return false;
        };
        self.rt_time -= self.rt_time.min(runtime);
        if self.throttled && self.rt_time < runtime {
            self.throttled = false;
            return self.nr_running > 0;
        }
        false
    }
}

pub struct RtClass;

pub static RT: RtClass = RtClass;

/// `update_curr_rt`: charge the running RT task to the rq's period budget; true when that
/// throttles the rq (`sched_rt_runtime_exceeded`).
fn update_curr(rq: &mut Rq, env: &mut Env, p: u32) -> bool {
    let now = rq.clock.clock_task;
    let se = &mut env.rt[p as usize];
    let delta = now.saturating_sub(se.exec_start);
    se.exec_start = now;
    let rt = &mut rq.rt;
    let Some(runtime) = rt.rt_runtime else {
        return false;
    };
    rt.rt_time += delta;
    if !rt.throttled && rt.rt_time > runtime {
        rt.throttled = true;
        return true;
    }
    false
}

impl SchedClass for RtClass {
    /// `enqueue_task_rt`: at the tail of its priority's list (the head for ENQUEUE_HEAD).
    fn enqueue_task(&self, rq: &mut Rq, env: &mut Env, p: u32, flags: u32) {
        let se = &mut env.rt[p as usize];
        se.on_rq = true;
        if se.time_slice == 0 {
            se.time_slice = rq.rt.rr_timeslice;
        }
        rq.rt.push(se.prio, p, flags & ENQUEUE_HEAD != 0);
        rq.rt.nr_running += 1;
        env.cfs().util_changed = true; // enqueue_top_rt_rq: cpufreq_update_util
    }

    fn dequeue_task(&self, rq: &mut Rq, env: &mut Env, p: u32, _flags: u32) -> Dequeued {
        if rq.curr == Some(p) {
            update_curr(rq, env, p);
        }
        let se = &mut env.rt[p as usize];
        se.on_rq = false;
        rq.rt.remove(se.prio, p);
        rq.rt.nr_running -= 1;
        env.cfs().util_changed = true; // dequeue_top_rt_rq: cpufreq_update_util
        Dequeued::Off
    }

    /// `yield_task_rt`: to the tail of its list.
    fn yield_task(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        rq.rt.requeue(env.rt[p as usize].prio, p);
    }

    /// `wakeup_preempt_rt`: a strictly higher priority preempts.
    fn wakeup_preempt(&self, rq: &mut Rq, env: &mut Env, p: u32, _wake_flags: u32) -> bool {
        let curr = rq.curr.expect("an RT task runs");
        env.rt[p as usize].prio < env.rt[curr as usize].prio
    }

    /// `pick_task_rt`: the head of the highest non-empty list, unless throttled.
    fn pick_task(&self, rq: &mut Rq, _env: &mut Env) -> Option<u32> {
        if rq.rt.throttled {
            return None;
        }
        let prio = rq.rt.highest_prio()?;
        rq.rt.queue[prio as usize].front().copied()
    }

    fn put_prev_task(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        update_curr(rq, env, p);
        env.update_rq_avg(rq, RqAvg::Rt, true);
    }

    /// `set_next_task_rt`: avg_rt catches up on the time no RT task ran (a no-op after an
    /// RT prev, whose put_prev_task just updated it).
    fn set_next_task(&self, rq: &mut Rq, env: &mut Env, p: u32) {
        env.rt[p as usize].exec_start = rq.clock.clock_task;
        env.update_rq_avg(rq, RqAvg::Rt, false);
    }

    /// `task_tick_rt`: charge the budget; an RR task's slice counts the tick, the one that
    /// throttles it too, and one whose slice ran out goes to the tail of its list if it is
    /// not alone there.
    fn task_tick(&self, rq: &mut Rq, env: &mut Env, p: u32) -> bool {
        let throttled = update_curr(rq, env, p);
        env.update_rq_avg(rq, RqAvg::Rt, true);
        let se = &mut env.rt[p as usize];
        if !se.rr {
            return throttled;
        }
        se.time_slice -= 1;
        if se.time_slice > 0 {
            return throttled;
        }
        se.time_slice = rq.rt.rr_timeslice;
        let prio = se.prio;
        if rq.rt.queue[prio as usize].len() > 1 {
            rq.rt.requeue(prio, p);
            return true;
        }
        throttled
    }

    fn update_curr(&self, rq: &mut Rq, env: &mut Env, p: u32) -> bool {
        update_curr(rq, env, p)
    }

    /// `select_task_rq_rt`: a task waking where an RT or deadline task runs that it would
    /// not preempt (or that cannot move) goes to the CPU of lowest priority, if that runs
    /// less important work. Simplified: the capacity check of a task woken on a CPU it does
    /// not fit, without that test, is not made (only `find_lowest_rq`'s fitness).
    fn select_task_rq(&self, s: &mut Sched, p: u32, prev: usize, _: Wake) -> (usize, Placement) {
        let (rqs, allowed) = (&s.rqs, &s.tasks[p as usize].cpus_mask);
        let se = &s.rts[p as usize];
        let test = rqs[prev].curr.is_some_and(|c| {
            let (dl, rt) = (s.dl_of(c), &s.rts[c as usize]);
            dl.dl_runtime != 0 // dl_task(curr): prio −1, above any RT
                || (rt.on_rq && (!rt.migratable || rt.prio <= se.prio))
        });
        if !test || !se.migratable {
            return (prev, Placement::Prev); // find_lowest_rq: a task that cannot move stays
        }
        let fits = |c: usize| se.fits(rqs[c].capacity, s.asym);
        cpupri::find_lowest_rq(rqs, se.prio, allowed, prev, prev, fits)
            .filter(|&t| se.prio < rqs[t].rt.highest_prio_curr())
            .map_or((prev, Placement::Prev), |t| (t, Placement::Class))
    }
}

mod push_pull;
#[cfg(test)]
mod tests;
