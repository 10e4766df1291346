//! The fair server (`dl_server` in deadline.c, 6.12+): one deferred deadline entity per CPU
//! that runs fair tasks when RT tasks would starve them. Fair running time and idle time use
//! its budget up in the background; only a CPU that gave fair tasks less than its runtime
//! by the zero-laxity instant d − q has it queued, by EDF, to run them (`fair_server_pick_task`).
//! It stops when its pick finds no fair task (6.12.y and 6.17+: not at the last fair
//! dequeue) and, under `idle_wait`, when a whole period of idle time used its budget up.

use super::sched_class::fair_server;
use super::{before, to_ratio, Dl, DlTimer, SchedDlEntity};
use crate::sched::class::{self, Env};
use crate::sched::flags::*;
use crate::sched::rq::Rq;
use crate::time::Ns;

/// How idle time counts against the server's budget (`--set dl.server_idle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerIdle {
    /// ≤ 6.18 (`dl_server_update_idle_time`): charged when the idle task is put or a fair
    /// task comes to an empty CPU, the budget clamped at zero; the zero-laxity timer acts on
    /// the budget as last charged.
    Clamp,
    /// 6.19+ (`update_curr_idle` → `dl_server_update_idle`): charged as fair time is, and
    /// by the timer before it acts. Idle time that uses the budget up starts one new period
    /// and marks the server idle-waiting (`dl_defer_idle`); its timer then stops it unless
    /// fair time ran meanwhile.
    IdleWait,
}

/// `dl_server_start` from the fair class (its first task queued): the idle-wait mark
/// cleared and, under idle_wait, a stopped server's start first accounts the running
/// class's time (`update_curr`). True when the server is queued and should preempt.
pub fn dl_server_start(rq: &mut Rq, env: &mut Env) -> bool {
    let se = &mut env.dl[fair_server(env) as usize];
    se.defer_idle = false;
    let starts = !se.server_active && se.dl_runtime != 0;
    if starts && env.feat.server_idle == ServerIdle::IdleWait {
        class::update_curr(rq, env);
    }
    Dl::on(rq, env).server_start()
}

/// `dl_server_min_res`: a zero-laxity timer is pushed forward only by more than this.
const DL_SERVER_MIN_RES: u64 = 1_000_000;

impl SchedDlEntity {
    /// `dl_server_apply_params(init)`: a deferred server of `runtime`/`period` ns, its budget
    /// and deadline zero until it starts.
    pub fn fair_server(runtime: u64, period: u64) -> SchedDlEntity {
        SchedDlEntity {
            defer: true,
            ..SchedDlEntity::new(runtime, period, period, false)
        }
    }

    /// The bandwidth the server reserves (0 when disabled).
    pub fn server_bw(&self) -> u64 {
        to_ratio(self.dl_period, self.dl_runtime)
    }
}

impl Dl<'_> {
    /// This CPU's fair server.
    fn server(&self) -> &SchedDlEntity {
        &self.ses[self.server as usize]
    }

    fn server_mut(&mut self) -> &mut SchedDlEntity {
        &mut self.ses[self.server as usize]
    }

    /// `dl_server_start`: the CPU's first fair task is enqueued. True when the server is
    /// queued at once and should preempt the running task.
    pub fn server_start(&mut self) -> bool {
        if self.server().dl_runtime == 0 || self.server().server_active {
            return false;
        }
        self.server_mut().server_active = true;
        self.enqueue(self.server, ENQUEUE_WAKEUP);
        self.server().on_rq && self.server_preempts()
    }

    /// `!dl_task(curr) || dl_entity_preempt(server, curr)`.
    pub fn server_preempts(&self) -> bool {
        self.curr.is_none_or(|c| {
            let curr = &self.ses[c as usize];
            curr.dl_runtime == 0 || before(self.server().deadline, curr.deadline)
        })
    }

    /// `dl_server_stop`: picked with no fair task to run.
    pub fn server_stop(&mut self) {
        if self.server().dl_runtime == 0 {
            return;
        }
        self.dequeue(self.server, DEQUEUE_SLEEP);
        let now = self.now;
        let se = self.server_mut();
        se.dl_timer.cancel();
        se.defer_armed = false;
        se.defer_idle = false;
        se.set_throttled(false, now);
        se.server_active = false;
    }

    /// `dl_server_update` (from `update_curr_fair`): fair tasks ran `delta` ns, served or
    /// not. True asks for a resched.
    pub fn server_update(&mut self, delta: u64) -> bool {
        if !self.server().server_active || self.server().dl_runtime == 0 {
            return false;
        }
        self.update_curr_se(self.server, delta as i64, false)
    }

    /// `dl_server_update_idle` (idle_wait): the CPU idled `delta` ns.
    pub fn server_update_idle(&mut self, delta: u64) {
        let se = self.server();
        if se.server_active && se.dl_runtime != 0 && se.defer {
            self.update_curr_se(self.server, delta as i64, true);
        }
    }

    /// `dl_server_update_idle_time`: idle time since `exec_start` (the idle task's) counts
    /// as time fair tasks could have had. Returns the new `exec_start`.
    pub fn server_update_idle_time(&mut self, exec_start: Ns) -> Ns {
        let clock_task = self.clock_task;
        let se = self.server_mut();
        if !se.defer || se.runtime < 0 || clock_task < exec_start {
            return exec_start;
        }
        se.runtime -= (clock_task - exec_start) as i64;
        if se.runtime < 0 {
            se.defer_running = false;
            se.runtime = 0;
        }
        clock_task
    }

    /// `dl_server_timer`'s first test: a throttled server the timer may act on (the timer
    /// is spent either way).
    pub fn server_timer_due(&mut self) -> bool {
        let se = self.server_mut();
        se.dl_timer.armed = false;
        se.throttled && se.dl_runtime != 0
    }

    /// `dl_server_timer`, once due and the running class's time accounted: an idle-waiting
    /// server stops; at its zero-laxity instant one starts serving (unless its budget went
    /// down in the meantime: the timer then moves on); at its next period it is
    /// replenished. True when it was queued: the caller checks preemption and pushes.
    pub fn server_timer(&mut self) -> bool {
        if self.server().defer_idle {
            self.server_stop();
            return false;
        }
        let now = self.now;
        let se = self.server_mut();
        if se.defer_armed {
            let zero_laxity = se.zero_laxity();
            if before(now, zero_laxity.wrapping_sub(DL_SERVER_MIN_RES)) {
                self.arm(self.server, DlTimer::Replenish, zero_laxity);
                return false;
            }
            se.defer_running = true;
        }
        self.enqueue(self.server, ENQUEUE_REPLENISH);
        true
    }
}
