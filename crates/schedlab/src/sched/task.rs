//! `SchedTask`: the scheduler's half of a `task_struct`, what kernel/sched reads and writes
//! of a thread (the engine keeps the work it runs).

use super::class::Class;
use super::fair::group::TgId;
use super::fair::wakeup::Wakee;
use super::fair::SeId;
use super::uapi::Policy;
use super::uclamp::{TaskUclamp, UCLAMP_MAX, UCLAMP_MIN};
use crate::sched::latency::Latencies;
use crate::sched::stats::SchedInfo;
use crate::time::Ns;

/// `p->__state` as schedlab tracks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskState {
    /// Created, waiting for its `delay`.
    New,
    Running,
    Runnable,
    /// In a sleep or a timer.
    Sleeping,
    /// Waiting on a mutex, condition, barrier, semaphore or resume.
    Blocked,
    /// Woken and bound for its CPU, not yet queued there (TASK_WAKING: `try_to_wake_up`
    /// between `select_task_rq` and `ttwu_do_activate`).
    Waking,
    Dead,
}

/// Per-thread accounting (the kernel's `sched_info` and schedstats, in schedlab's terms).
#[derive(Debug, Clone, Default)]
pub struct SchedStats {
    pub run_ns: Ns,
    pub wait_ns: Ns,
    pub sleep_ns: Ns,
    pub wakeup_latencies: Latencies,
    /// Migrations by distance (`Distance` order).
    pub migrations_by: [u64; 5],
    /// Placements by the rule that chose the CPU (`Placement` order), wakeups and fork.
    pub placements: [u64; 10],
    pub preemptions: u64,
    pub created_at: Ns,
    /// SCHED_DEADLINE admission control refused the thread: it never ran.
    pub refused: bool,
    pub ended_at: Option<Ns>,
}

/// `TASK_COMM_LEN`: a comm's bytes with its terminating NUL.
pub const TASK_COMM_LEN: usize = 16;

/// A name as the kernel keeps it in `task_struct::comm`: at most `TASK_COMM_LEN - 1` bytes
/// (`__set_task_comm`), cut at a character boundary.
pub fn kernel_comm(name: &str) -> &str {
    if name.len() < TASK_COMM_LEN {
        return name;
    }
    let mut end = TASK_COMM_LEN - 1;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// The scheduler's half of `task_struct`.
#[derive(Debug, Clone)]
pub struct SchedTask {
    pub pid: u32,
    /// The thread's name (rt-app's, which names its log); traces print its `kcomm`.
    pub comm: String,
    pub state: TaskState,
    pub state_since: Ns,
    /// `task_cpu(p)`.
    pub cpu: usize,
    pub policy: Policy,
    /// `p->sched_class`: the policy's, or the one a PI boost lends.
    pub class: Class,
    /// The priority a PI boost lends (`rt_mutex_setprio`), when above the task's own.
    pub pi_prio: Option<i32>,
    pub nice: i32,
    /// `rt_priority` of a FIFO or RR thread (1..99).
    pub rt_priority: u32,
    /// `p->uclamp`: util_min and util_max.
    pub uclamp: TaskUclamp,
    /// `p->cpus_mask`.
    pub cpus_mask: Vec<bool>,
    /// `p->nr_cpus_allowed`: how many CPUs `cpus_mask` allows (`cpumask_weight`).
    pub nr_cpus_allowed: usize,
    /// `p->max_allowed_capacity`: the biggest capacity among the CPUs it may use.
    pub max_allowed_capacity: u64,
    /// `wakee_flips`, `wakee_flip_decay_ts`, `last_wakee`: whom it wakes, how varied.
    pub wakee: Wakee,
    /// `p->recent_used_cpu`: the CPU it was on before its last wakeup's.
    pub recent_used_cpu: usize,
    /// `p->se`: the task's fair entity.
    pub se: SeId,
    /// `task_group(p)`: its cgroup's task group.
    pub tg: TgId,
    /// `p->dl`: its deadline entity.
    pub dl: u32,
    /// When it became runnable after a sleep (wakeup latency, rt-app's wu_lat).
    pub woken_at: Option<Ns>,
    /// The mutex the thread waits to lock (`p->pi_blocked_on`).
    pub pi_blocked_on: Option<u32>,
    pub stats: SchedStats,
    /// `p->sched_info`: what schedstat's run_delay and rq_cpu_time are counted from.
    pub sched_info: SchedInfo,
}

impl SchedStats {
    /// Moves to another CPU, all distances.
    pub fn migrations(&self) -> u64 {
        self.migrations_by.iter().sum()
    }
}

impl SchedTask {
    /// `p->normal_prio`: −1 for deadline tasks, 99 − rt_priority for RT, 120 + nice for fair.
    pub fn normal_prio(&self) -> i32 {
        Class::of(self.policy).normal_prio(self.rt_priority, self.nice)
    }

    /// `p->comm`: the name cut to what the kernel keeps.
    pub fn kcomm(&self) -> &str {
        kernel_comm(&self.comm)
    }

    /// `p->prio`, as traces print it: the normal one or a PI boost's.
    pub fn prio(&self) -> i32 {
        self.pi_prio.unwrap_or_else(|| self.normal_prio())
    }

    /// min(util_min, util_max): the capacity the task needs (`rt_task_fits_capacity`).
    pub fn uclamp_cap(&self) -> u32 {
        self.uclamp[UCLAMP_MIN]
            .value
            .min(self.uclamp[UCLAMP_MAX].value)
    }

    /// `task_on_rq_queued`: runnable or running.
    pub fn queued(&self) -> bool {
        matches!(self.state, TaskState::Runnable | TaskState::Running)
    }

    /// Move to `state` at `now`, charging the time spent in the old one.
    pub fn set_state(&mut self, state: TaskState, now: Ns) {
        let spent = now - self.state_since;
        match self.state {
            TaskState::Running => self.stats.run_ns += spent,
            TaskState::Runnable => self.stats.wait_ns += spent,
            TaskState::Sleeping | TaskState::Blocked | TaskState::Waking | TaskState::New => {
                self.stats.sleep_ns += spent
            }
            TaskState::Dead => {}
        }
        self.state = state;
        self.state_since = now;
    }
}

/// `cpumask_weight`: how many CPUs `mask` holds.
pub fn cpumask_weight(mask: &[bool]) -> usize {
    mask.iter().filter(|&&a| a).count()
}
