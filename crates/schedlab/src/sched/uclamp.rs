//! Utilization clamping (kernel/sched/core.c, 6.12, CONFIG_UCLAMP_TASK): each runqueue
//! max-aggregates the clamps of its RUNNABLE tasks through buckets, and schedutil reads the
//! result (`effective_cpu_util`). Simplified: no task-group or system-default restriction
//! (`uclamp_eff_get` returns the task's request).

use crate::sched::pelt::SCHED_CAPACITY_SCALE;

/// `CONFIG_UCLAMP_BUCKETS_COUNT`'s default.
const UCLAMP_BUCKETS: usize = 5;
/// `UCLAMP_BUCKET_DELTA`: DIV_ROUND_CLOSEST(1024, 5) = 205.
const UCLAMP_BUCKET_DELTA: u32 =
    (SCHED_CAPACITY_SCALE as u32 + UCLAMP_BUCKETS as u32 / 2) / UCLAMP_BUCKETS as u32;

/// Where `enqueue_task` counts a task's clamps (`--set uclamp.rq_inc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RqInc {
    /// ≤ 6.15: after the class's enqueue, whose frequency update misses the task's clamps.
    AfterEnqueue,
    /// 6.16+ (90ca9410dab2): before it, so that update sees them; a delayed task counts only
    /// when its wakeup requeues it (ENQUEUE_DELAYED).
    BeforeEnqueue,
}

pub const UCLAMP_MIN: usize = 0;
pub const UCLAMP_MAX: usize = 1;

/// `uclamp_none`.
const fn uclamp_none(clamp_id: usize) -> u32 {
    if clamp_id == UCLAMP_MIN {
        0
    } else {
        SCHED_CAPACITY_SCALE as u32
    }
}

/// `uclamp_bucket_id`.
fn uclamp_bucket_id(value: u32) -> usize {
    ((value / UCLAMP_BUCKET_DELTA) as usize).min(UCLAMP_BUCKETS - 1)
}

/// `struct uclamp_se`: one clamp of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UclampSe {
    pub value: u32,
    active: bool,
}

impl UclampSe {
    /// Counted in its runqueue's buckets.
    pub fn is_active(&self) -> bool {
        self.active
    }
}

/// A task's clamps, min and max: `p->uclamp`.
pub type TaskUclamp = [UclampSe; 2];

/// `sysctl_sched_uclamp_util_min_rt_default`: an RT (or deadline) task's default util_min.
const UCLAMP_MIN_RT_DEFAULT: u32 = SCHED_CAPACITY_SCALE as u32;

/// The clamps of a task that asked for `min`/`max`; None takes the default
/// (`__setscheduler_uclamp`: `uclamp_none`, but util_min is the RT default for `rt_task`).
pub fn task_uclamp(min: Option<u32>, max: Option<u32>, rt_task: bool) -> TaskUclamp {
    let se = |v: Option<u32>, id| UclampSe {
        value: v.unwrap_or(if rt_task && id == UCLAMP_MIN {
            UCLAMP_MIN_RT_DEFAULT
        } else {
            uclamp_none(id)
        }),
        active: false,
    };
    [se(min, UCLAMP_MIN), se(max, UCLAMP_MAX)]
}

#[derive(Debug, Clone, Copy, Default)]
struct Bucket {
    tasks: u32,
    value: u32,
}

/// `struct uclamp_rq` ×2 and `rq->uclamp_flags`.
#[derive(Debug, Clone)]
pub struct UclampRq {
    value: [u32; 2],
    buckets: [[Bucket; UCLAMP_BUCKETS]; 2],
    /// `UCLAMP_FLAG_IDLE`: no RUNNABLE task; the last max clamp is retained.
    idle: bool,
}

impl Default for UclampRq {
    /// `init_uclamp_rq`.
    fn default() -> UclampRq {
        UclampRq {
            value: [uclamp_none(UCLAMP_MIN), uclamp_none(UCLAMP_MAX)],
            buckets: [[Bucket::default(); UCLAMP_BUCKETS]; 2],
            idle: true,
        }
    }
}

impl UclampRq {
    /// `uclamp_rq_get`.
    pub fn get(&self, clamp_id: usize) -> u32 {
        self.value[clamp_id]
    }

    /// `uclamp_rq_is_idle`: no RUNNABLE task.
    pub fn is_idle(&self) -> bool {
        self.idle
    }

    /// `uclamp_rq_max_value`: the top non-empty bucket's value, else the idle value.
    fn max_value(&mut self, clamp_id: usize, clamp_value: u32) -> u32 {
        if let Some(b) = self.buckets[clamp_id].iter().rev().find(|b| b.tasks > 0) {
            return b.value;
        }
        // uclamp_idle_value: keep the last max clamp so blocked util does not raise freq.
        if clamp_id == UCLAMP_MAX {
            self.idle = true;
            return clamp_value;
        }
        uclamp_none(UCLAMP_MIN)
    }

    /// `uclamp_rq_inc`: a task became RUNNABLE here.
    pub fn inc(&mut self, p: &mut TaskUclamp) {
        for (clamp_id, se) in p.iter_mut().enumerate() {
            // uclamp_rq_inc_id
            let bucket = &mut self.buckets[clamp_id][uclamp_bucket_id(se.value)];
            bucket.tasks += 1;
            se.active = true;
            if bucket.tasks == 1 || se.value > bucket.value {
                bucket.value = se.value;
            }
            if self.idle {
                self.value[clamp_id] = se.value; // uclamp_idle_reset
            }
            if se.value > self.value[clamp_id] {
                self.value[clamp_id] = se.value;
            }
        }
        self.idle = false;
    }

    /// `uclamp_rq_dec`: the task is no longer RUNNABLE here.
    pub fn dec(&mut self, p: &mut TaskUclamp) {
        for (clamp_id, se) in p.iter_mut().enumerate() {
            // uclamp_rq_dec_id
            if !se.active {
                continue;
            }
            let bucket = &mut self.buckets[clamp_id][uclamp_bucket_id(se.value)];
            bucket.tasks = bucket.tasks.saturating_sub(1);
            se.active = false;
            // The bucket's value only falls back once it is empty (possible overboost).
            if bucket.tasks > 0 {
                continue;
            }
            if bucket.value >= self.value[clamp_id] {
                self.value[clamp_id] = self.max_value(clamp_id, se.value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_of_205_max_aggregate_the_runnable_tasks() {
        // DIV_ROUND_CLOSEST(1024, 5) = 205: 300 goes to bucket 1, 900 and 1024 to bucket 4.
        assert_eq!(UCLAMP_BUCKET_DELTA, 205);
        assert_eq!((uclamp_bucket_id(300), uclamp_bucket_id(1024)), (1, 4));
        let mut rq = UclampRq::default();
        let (mut a, mut b) = (
            task_uclamp(Some(300), Some(600), false),
            task_uclamp(Some(100), None, false),
        );
        rq.inc(&mut a);
        // Leaving idle resets the retained values to the first task's.
        assert_eq!((rq.get(UCLAMP_MIN), rq.get(UCLAMP_MAX)), (300, 600));
        rq.inc(&mut b);
        assert_eq!((rq.get(UCLAMP_MIN), rq.get(UCLAMP_MAX)), (300, 1024));
        rq.dec(&mut b);
        assert_eq!((rq.get(UCLAMP_MIN), rq.get(UCLAMP_MAX)), (300, 600));
        // The last one leaves: min drops to 0, max keeps 600 (UCLAMP_FLAG_IDLE).
        rq.dec(&mut a);
        assert_eq!((rq.get(UCLAMP_MIN), rq.get(UCLAMP_MAX)), (0, 600));
        // A second dequeue of an inactive task changes nothing.
        rq.dec(&mut a);
        assert_eq!(rq.get(UCLAMP_MAX), 600);
    }

    #[test]
    fn a_bucket_keeps_its_highest_value_until_it_empties() {
        let mut rq = UclampRq::default();
        // 420 and 600 share bucket 2 (410..614).
        let (mut a, mut b) = (
            task_uclamp(Some(420), None, false),
            task_uclamp(Some(600), None, false),
        );
        rq.inc(&mut a);
        rq.inc(&mut b);
        rq.dec(&mut b);
        assert_eq!(rq.get(UCLAMP_MIN), 600, "overboost accepted by the kernel");
        rq.dec(&mut a);
        assert_eq!(rq.get(UCLAMP_MIN), 0);
    }
}
