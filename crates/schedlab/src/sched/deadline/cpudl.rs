//! Global EDF across the root domain (`cpudeadline.c`, `find_later_rq`,
//! `select_task_rq_dl`, the choices of `push_dl_task` and `pull_dl_task`). The engine moves
//! the tasks; this file decides which and where.

use super::{before, SchedDlEntity, BW_SHIFT};
use crate::sched::rq::Rq;

/// `dl_task_fits_capacity`: the CPU's capacity covers the task's density.
pub fn fits(se: &SchedDlEntity, capacity: u64) -> bool {
    capacity >= se.dl_density >> (BW_SHIFT - 10)
}

/// `cpudl_find` + `find_later_rq`: a CPU where `se` would run at once — a free one (no
/// deadline task; on asymmetric platforms one that fits, else the biggest free), else the
/// one whose earliest deadline is the latest, if later than `se`'s. The task's own CPU is
/// preferred. Simplified: the kernel's wake-affine domain walk and
/// cpumask_any_and_distribute become "the next CPU after the task's".
pub fn find_later_rq(
    rqs: &[Rq],
    se: &SchedDlEntity,
    allowed: &[bool],
    task_cpu: usize,
    asym: bool,
) -> Option<usize> {
    let n = rqs.len();
    let order = (0..n).map(|i| (task_cpu + i) % n);
    let free = |c: usize| allowed[c] && rqs[c].dl.nr_running() == 0;
    if asym {
        let fitting = order
            .clone()
            .find(|&c| free(c) && fits(se, rqs[c].capacity));
        let biggest = order
            .clone()
            .filter(|&c| free(c))
            .max_by_key(|&c| (rqs[c].capacity, std::cmp::Reverse((c + n - task_cpu) % n)));
        if let Some(c) = fitting.or(biggest) {
            return Some(c);
        }
    } else if let Some(c) = order.clone().find(|&c| free(c)) {
        return Some(c);
    }
    // cpudl_maximum: the heap's top, over every CPU with a deadline task.
    let (cpu, latest) = (0..n)
        .filter_map(|c| rqs[c].dl.earliest().map(|d| (c, d)))
        .fold(None, |best: Option<(usize, u64)>, (c, d)| match best {
            Some((_, bd)) if !before(bd, d) => best,
            _ => Some((c, d)),
        })?;
    (allowed[cpu] && before(se.deadline, latest)).then_some(cpu)
}

/// `dl_task_is_earliest_deadline`.
pub fn is_earliest(rq: &Rq, se: &SchedDlEntity) -> bool {
    rq.dl.earliest().is_none_or(|d| before(se.deadline, d))
}

/// `pick_earliest_pushable_dl_task` / `pick_next_pushable_dl_task`: the earliest queued,
/// not running (`curr`: the running task's entity) and migratable task of `rq` that
/// `allowed` lets go, and its entity (the fair server is not migratable).
pub fn earliest_pushable(
    rq: &Rq,
    curr: Option<u32>,
    ses: &[SchedDlEntity],
    allowed: impl Fn(u32) -> bool,
) -> Option<(u32, u32)> {
    rq.dl.queued().find_map(|(_, e)| {
        if curr == Some(e) {
            return None;
        }
        let se = &ses[e as usize];
        let p = se.task.filter(|&p| se.migratable && allowed(p))?;
        Some((p, e))
    })
}
