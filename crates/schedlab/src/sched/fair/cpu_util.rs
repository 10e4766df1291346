//! `cpu_util`: a CPU's CFS utilization as placement and cpufreq read it: util_avg, or
//! util_est when larger, optionally with a task moved in or out; and `cpu_util_without`.
//! 6.12's `cpu_util(cpu, p, dst_cpu, boost)`; 6.1's `cpu_util_next`/`cpu_util_cfs` give the
//! same values without boost.

use super::{CfsRq, SchedEntity};

/// What `cpu_util` reads of a task.
#[derive(Debug, Clone, Copy)]
pub struct TaskView<'a> {
    pub se: &'a SchedEntity,
    /// `task_cpu(p)`.
    pub cpu: usize,
    /// `task_on_rq_queued(p) || current == p`.
    pub queued: bool,
}

/// `lsub_positive`: subtract, stopping at zero.
fn lsub_positive(a: u64, b: u64) -> u64 {
    a.saturating_sub(b)
}

/// `cpu_util(cpu, p, dst_cpu, boost)`: `cfs` and `capacity` are CPU `cpu`'s; `dst_cpu` None is
/// the kernel's -1 (p leaves `cpu`); `util_est` is sched_feat(UTIL_EST).
pub fn cpu_util(
    cpu: usize,
    cfs: &CfsRq,
    capacity: u64,
    p: Option<TaskView>,
    dst_cpu: Option<usize>,
    boost: bool,
    util_est: bool,
) -> u64 {
    let add = p.filter(|p| p.cpu != cpu && dst_cpu == Some(cpu));
    let sub = p.filter(|p| p.cpu == cpu && dst_cpu != Some(cpu));
    let moved = |v: u64, of: fn(&SchedEntity) -> u64| match (add, sub) {
        (Some(p), _) => v + of(p.se),
        (_, Some(p)) => lsub_positive(v, of(p.se)),
        _ => v,
    };
    let mut util = moved(cfs.avg.util_avg, |se| se.avg.util_avg);
    if boost {
        util = util.max(moved(cfs.avg.runnable_avg, |se| se.avg.runnable_avg));
    }
    if util_est {
        let task_est = |p: TaskView| p.se.util_est.task_util_est() as u64;
        let mut est = cfs.util_est as u64;
        if dst_cpu == Some(cpu) {
            est += p.map_or(0, task_est);
        } else if let Some(p) = p.filter(|p| p.queued) {
            est = lsub_positive(est, task_est(p));
        }
        util = util.max(est);
    }
    util.min(capacity)
}

/// `cpu_util_without(cpu, p)`: `cpu`'s utilization if `p` were not there; a task on another
/// CPU, or new (no PELT update yet), contributes nothing to remove.
pub fn cpu_util_without(
    cpu: usize,
    cfs: &CfsRq,
    capacity: u64,
    p: TaskView,
    util_est: bool,
) -> u64 {
    let p = (p.cpu == cpu && p.se.avg.last_update_time != 0).then_some(p);
    cpu_util(cpu, cfs, capacity, p, None, false, util_est)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::util_est::UtilEst;
    use crate::sched::weight::LoadWeight;

    /// A cfs_rq with util_avg 300, runnable_avg 500, util_est 200; a task with util 120,
    /// runnable 150 and util_est max(ewma 90, enqueued 100) = 100, last updated.
    fn setup() -> (CfsRq, SchedEntity) {
        let mut cfs = CfsRq::default();
        cfs.avg.util_avg = 300;
        cfs.avg.runnable_avg = 500;
        cfs.util_est = 200;
        let mut se = SchedEntity::new(
            0,
            LoadWeight::of_nice(0, false),
            UtilEst::EnqueuedEwma {
                enqueued: 100,
                ewma: 90,
            },
        );
        se.avg.util_avg = 120;
        se.avg.runnable_avg = 150;
        se.avg.last_update_time = 1;
        (cfs, se)
    }

    #[test]
    fn plain_util_is_the_larger_of_util_avg_and_util_est_capped_at_capacity() {
        let (mut cfs, _) = setup();
        assert_eq!(cpu_util(0, &cfs, 1024, None, None, false, true), 300);
        assert_eq!(cpu_util(0, &cfs, 1024, None, None, true, true), 500);
        assert_eq!(cpu_util(0, &cfs, 256, None, None, false, true), 256);
        cfs.util_est = 700;
        assert_eq!(cpu_util(0, &cfs, 1024, None, None, false, true), 700);
        assert_eq!(cpu_util(0, &cfs, 1024, None, None, false, false), 300);
    }

    #[test]
    fn a_task_moving_in_adds_util_and_its_estimate() {
        let (cfs, se) = setup();
        let p = TaskView {
            se: &se,
            cpu: 1,
            queued: false,
        };
        // util 300 + 120 = 420 against util_est 200 + 100 = 300.
        assert_eq!(cpu_util(0, &cfs, 1024, Some(p), Some(0), false, true), 420);
        // boost: runnable 500 + 150.
        assert_eq!(cpu_util(0, &cfs, 1024, Some(p), Some(0), true, true), 650);
    }

    #[test]
    fn cpu_util_without_removes_a_queued_task_and_ignores_others() {
        let (mut cfs, se) = setup();
        cfs.util_est = 400;
        let here = TaskView {
            se: &se,
            cpu: 0,
            queued: true,
        };
        // max(300 − 120, 400 − 100) = 300.
        assert_eq!(cpu_util_without(0, &cfs, 1024, here, true), 300);
        // Sleeping: its estimate is not in the CPU's sum, only its util_avg is removed.
        let asleep = TaskView {
            queued: false,
            ..here
        };
        assert_eq!(cpu_util_without(0, &cfs, 1024, asleep, true), 400);
        // On another CPU, or new: nothing to remove.
        let there = TaskView { cpu: 3, ..here };
        assert_eq!(cpu_util_without(0, &cfs, 1024, there, true), 400);
        let mut new = se.clone();
        new.avg.last_update_time = 0;
        assert_eq!(
            cpu_util_without(0, &cfs, 1024, TaskView { se: &new, ..here }, true),
            400
        );
        // util_avg never goes below zero.
        cfs.avg.util_avg = 50;
        assert_eq!(cpu_util_without(0, &cfs, 1024, here, false), 0);
    }
}
