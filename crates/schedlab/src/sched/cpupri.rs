//! `cpupri.c` and `find_lowest_rq`: each CPU's priority as RT placement sees it, and the
//! search for a CPU running less important work than a task. Simplified: the sched-domain
//! walk and `cpumask_any_distribute` become "the task's CPU, this CPU, then the next CPUs
//! after the task's".

use super::rq::Rq;
use super::rt::MAX_RT_PRIO;

/// `CPUPRI_HIGHER`: a CPU with a deadline entity queued.
const CPUPRI_HIGHER: u32 = 100;

/// `convert_prio(rq->rt.highest_prio.curr)`, or CPUPRI_HIGHER: 0 for a CPU running fair
/// tasks or idle, 99 − prio for its most important RT task, 100 with deadline work.
pub fn cpu_level(rq: &Rq) -> u32 {
    if rq.dl.nr_running() > 0 {
        return CPUPRI_HIGHER;
    }
    rq.rt
        .highest_prio()
        .map_or(0, |h| MAX_RT_PRIO as u32 - 1 - h)
}

/// `cpupri_find_fitness` + `find_lowest_rq`: among the allowed CPUs (those that `fits`
/// first, then any), the lowest level if below the task's (`prio`); of the CPUs at that
/// level, the task's own, else this CPU, else the next one after the task's. None when no CPU
/// runs less important work (callers first check that the task can move).
pub fn find_lowest_rq(
    rqs: &[Rq],
    prio: u32,
    allowed: &[bool],
    task_cpu: usize,
    this_cpu: usize,
    fits: impl Fn(usize) -> bool,
) -> Option<usize> {
    let task_level = MAX_RT_PRIO as u32 - 1 - prio;
    let n = rqs.len();
    let candidate = |c: usize, fit: bool| allowed[c] && (!fit || fits(c));
    [true, false].into_iter().find_map(|fit| {
        let lowest = (0..n)
            .filter(|&c| candidate(c, fit))
            .map(|c| cpu_level(&rqs[c]))
            .min()
            .filter(|&l| l < task_level)?;
        [task_cpu, this_cpu]
            .into_iter()
            .chain((1..n).map(|i| (task_cpu + i) % n))
            .find(|&c| candidate(c, fit) && cpu_level(&rqs[c]) == lowest)
    })
}
