//! Simulated threads: scheduling state, work in progress and accounting.

use crate::sched::class::Class;
use crate::sched::uclamp::{TaskUclamp, UCLAMP_MAX, UCLAMP_MIN};
use crate::time::Ns;
use crate::workload::Policy;

/// `p->__state` as schedlab tracks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Created, waiting for its `delay`.
    New,
    Running,
    Runnable,
    /// In a sleep or a timer.
    Sleeping,
    /// Waiting on a mutex, condition, barrier, semaphore or resume.
    Blocked,
    Dead,
}

/// What the thread is doing with the CPU when it has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing left: run the program on.
    Continue,
    /// rt-app `run` (and mem/iorun): work units left, 2^20 units = 1 ns on the reference CPU.
    Work { left: u128 },
    /// rt-app `runtime`: busy until this instant, whatever the CPU gives.
    Until(Ns),
}

/// Unit of `Action::Work`: one ns of the biggest CPU at its highest frequency.
pub const WORK_UNITS_PER_NS: u128 = 1 << 20;

/// Per-thread accounting for the run summary.
#[derive(Debug, Clone, Default)]
pub struct TaskStats {
    pub run_ns: Ns,
    pub wait_ns: Ns,
    pub sleep_ns: Ns,
    pub wakeup_latencies: Vec<Ns>,
    pub migrations: u64,
    pub preemptions: u64,
    /// rt-app timer events reached late, and the slack of every timer event (µs).
    pub overruns: u64,
    pub slack_sum_us: i64,
    pub timer_events: u64,
    pub created_at: Ns,
    /// SCHED_DEADLINE admission control refused the thread: it never ran.
    pub refused: bool,
    pub ended_at: Option<Ns>,
}

#[derive(Debug, Clone)]
pub struct Task {
    pub pid: u32,
    pub comm: String,
    /// Index of the rt-app task it was made from.
    pub def: usize,
    pub state: State,
    pub state_since: Ns,
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
    /// Allowed CPUs.
    pub allowed: Vec<bool>,
    pub action: Action,
    /// When the current stint on the CPU began (for work accounting).
    pub run_start: Ns,
    /// Wake event generation: a later sleep makes older wake events stale.
    pub wake_gen: u32,
    /// When it became runnable after a sleep (wakeup latency, rt-app's wu_lat).
    pub woken_at: Option<Ns>,
    pub timer_expiry: Option<Ns>,
    pub stats: TaskStats,
}

impl Task {
    /// `p->normal_prio`: −1 for deadline tasks, 99 − rt_priority for RT, 120 + nice for fair.
    pub fn normal_prio(&self) -> i32 {
        match Class::of(self.policy) {
            Class::Deadline => -1,
            Class::Rt => 99 - self.rt_priority as i32,
            Class::Fair => 120 + self.nice,
        }
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

    /// Move to `state` at `now`, charging the time spent in the old one.
    pub fn set_state(&mut self, state: State, now: Ns) {
        let spent = now - self.state_since;
        match self.state {
            State::Running => self.stats.run_ns += spent,
            State::Runnable => self.stats.wait_ns += spent,
            State::Sleeping | State::Blocked | State::New => self.stats.sleep_ns += spent,
            State::Dead => {}
        }
        self.state = state;
        self.state_since = now;
    }
}
