//! `struct rq`: one CPU's scheduler state, with the RT and deadline runqueues (its root
//! cfs_rq is `Sched::cfs_rqs[cpu]`).

use super::clock_pelt::RqClock;
use super::deadline::DlRq;
use super::fair::balance::MIGRATION_COST_NS;
use super::fair::cfs_tasks::CfsTasks;
use super::fair::wakeup::Wakee;
use super::fair::CfsRqId;
use super::pelt::{update_class_avg, update_pressure_avg, SchedAvg};
use super::prandom::RndState;
use super::rt::RtRq;
use super::stats::RqStats;
use super::uclamp::UclampRq;
use crate::time::Ns;
use crate::tracepoint::{Note, Tracepoint};

/// A runqueue's RT or deadline PELT signal (`rq->avg_rt`, `rq->avg_dl`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RqAvg {
    Rt,
    Dl,
}

pub struct Rq {
    pub clock: RqClock,
    pub dl: DlRq,
    pub rt: RtRq,
    /// `rq->dl_server`: the fair server picked the next task.
    pub dl_server: bool,
    /// TIF_NEED_RESCHED: a class asked for a resched outside a return value (`resched_curr`).
    pub need_resched: bool,
    /// TIF_NEED_RESCHED_LAZY alone, not yet acted on (`sched/preempt.rs`): the fair class
    /// asked under the lazy model, and a remote CPU is not told.
    pub lazy: bool,
    /// TIF_NEED_RESCHED_LAZY alone, told or not: a task in a system call runs on to its end
    /// (or the next tick's promotion) rather than being preempted inside it.
    pub lazy_asked: bool,
    /// RQCF_REQ_SKIP (`rq_clock_skip_update`): a wakeup left curr queued and to be rescheduled,
    /// so the next `__schedule` keeps the clock where it was (the time until the switch is
    /// charged to the next task, at its first `update_curr`).
    pub clock_skip: bool,
    /// In `__schedule`, between prev and the pick: a resched asked for meanwhile (a task
    /// pulled by the newly idle balance) only sets TIF_NEED_RESCHED, which the pick clears.
    pub in_schedule: bool,
    /// `rq->next_balance`: when its periodic balance is next due.
    pub next_balance: Ns,
    /// The idle task's `se.exec_start`.
    pub idle_exec_start: u64,
    /// `rq->avg_rt`, `rq->avg_dl`: the time RT and deadline tasks ran, as PELT signals.
    pub avg_rt: SchedAvg,
    pub avg_dl: SchedAvg,
    /// The running task; `None` is the CPU's idle task.
    pub curr: Option<u32>,
    /// The idle task's wakee statistics (the waker of interrupt-context wakeups).
    pub idle_wakee: Wakee,
    /// `arch_scale_cpu_capacity`.
    pub capacity: u64,
    /// The exit latency of the idle state an idle CPU sits in (`idle_get_state`): the
    /// platform's shallowest, or none without cpuidle states.
    pub idle_exit_latency: Option<Ns>,
    /// `rq->cpu_capacity`: what RT and deadline tasks leave of it to fair ones.
    pub cpu_capacity: u64,
    /// `per_cpu(cpufreq_pressure)` (6.10+): the capacity its policy's `scaling_max_freq`
    /// takes away (`cpufreq_update_pressure`).
    pub cpufreq_pressure: u64,
    /// `per_cpu(hw_pressure)` (6.10+; ≤6.9 `thermal_pressure`): the capacity a hardware
    /// throttle (≤6.9: or the cpufreq cooling device's cap) takes away, and `rq->avg_hw`
    /// (`avg_thermal`), its PELT average (`load_avg`: `hw_load_avg`).
    pub hw_pressure: u64,
    pub avg_hw: SchedAvg,
    /// 6.10+: `get_actual_cpu_capacity` takes the larger of the hw pressure's average and
    /// the cpufreq pressure everywhere; ≤6.9 `util_fits_cpu` and EAS take the thermal
    /// pressure as it is now, the others its average.
    pub pressure_averaged: bool,
    /// `rq->uclamp`: the clamps of the RUNNABLE tasks, max-aggregated.
    pub uclamp: UclampRq,
    /// `rq->cfs_tasks`: the queued fair tasks, least recently picked first (the kernel's
    /// list read from its tail, where load balancing starts).
    pub cfs_tasks: CfsTasks,
    /// Its schedstat counters.
    pub stats: RqStats,
    /// `rq->misfit_task_load`: the running fair task's load when too big for this CPU.
    pub misfit_task_load: u64,
    /// `rq->h_load_throttle`: the jiffy of the last `update_h_load` (eager h_load).
    pub h_load_throttle: u64,
    /// `leaf_cfs_rq_list` (unordered here: `blocked.rs` sorts it), `has_blocked_load`, and
    /// the jiffy of the last blocked-load update.
    pub leaf_cfs_rq_list: Vec<CfsRqId>,
    /// `avg_idle` (ns), when the CPU last went newly idle (`idle_stamp`), and the most a
    /// newly idle balance of all its domains took (`max_idle_balance_cost`).
    pub avg_idle: u64,
    pub idle_stamp: Option<Ns>,
    pub max_idle_balance_cost: u64,
    pub has_blocked_load: bool,
    pub last_blocked_load_update_tick: u64,
    /// `rq->hrtick_timer`: its expiry while queued.
    pub hrtick: Option<Ns>,
    /// `rq->hrtick_sched` (`schedule_exit`): inside `schedule()`, an hrtick asked for is
    /// only noted, with its delay (`hrtick_delay`), until the switch is done.
    pub hrtick_sched: bool,
    pub hrtick_delay: Option<Ns>,
    /// `sched_rnd_state`: the CPU's generator (NI_RANDOM's die).
    pub rng: RndState,
}

impl Rq {
    pub fn new(clock: RqClock, capacity: u64, dl: DlRq, rt: RtRq) -> Rq {
        let avg = SchedAvg {
            last_update_time: clock.pelt_now(),
            ..SchedAvg::default()
        };
        Rq {
            idle_exec_start: clock.clock_task,
            next_balance: 0,
            avg_rt: avg,
            avg_dl: avg,
            clock,
            dl,
            rt,
            dl_server: false,
            need_resched: false,
            lazy: false,
            lazy_asked: false,
            clock_skip: false,
            in_schedule: false,
            curr: None,
            idle_wakee: Wakee::default(),
            capacity,
            idle_exit_latency: None,
            cpu_capacity: capacity,
            cpufreq_pressure: 0,
            hw_pressure: 0,
            avg_hw: SchedAvg {
                last_update_time: clock.clock_task,
                ..SchedAvg::default()
            },
            pressure_averaged: false,
            uclamp: UclampRq::default(),
            cfs_tasks: CfsTasks::default(),
            stats: RqStats::default(),
            misfit_task_load: 0,
            h_load_throttle: u64::MAX,
            leaf_cfs_rq_list: Vec::new(),
            avg_idle: 2 * MIGRATION_COST_NS,
            idle_stamp: None,
            max_idle_balance_cost: MIGRATION_COST_NS,
            has_blocked_load: false,
            last_blocked_load_update_tick: 0,
            hrtick: None,
            hrtick_sched: false,
            hrtick_delay: None,
            rng: RndState::seeded(0),
        }
    }

    /// `set_tsk_need_resched` (TIF_NEED_RESCHED): a reschedule the CPU is to act on at once.
    pub fn resched(&mut self) {
        (self.need_resched, self.lazy, self.lazy_asked) = (true, false, false);
    }

    /// The fair class's reschedule (`resched_curr_lazy`): TIF_NEED_RESCHED_LAZY under the
    /// lazy model, unless a reschedule is asked already.
    pub fn resched_lazy(&mut self, lazy: bool) {
        if !self.need_resched {
            (self.need_resched, self.lazy, self.lazy_asked) = (true, lazy, lazy);
        }
    }

    /// `rq->nr_running` less the fair class's share (its root cfs_rq's `h_nr_queued`,
    /// `Sched::nr_running`): the RT tasks, and the deadline entities, the fair server
    /// while queued included (6.12's `inc_dl_tasks` counts it).
    pub fn nr_running_rt_dl(&self) -> u32 {
        self.dl.nr_running() + self.rt.nr_running
    }

    /// `update_rt_rq_load_avg` / `update_dl_rq_load_avg`: true when the signal changed,
    /// where `trace_pelt_rt_tp` / `trace_pelt_dl_tp` fire.
    pub fn update_class_avg(&mut self, which: RqAvg, running: bool) -> bool {
        let (now, scale) = (self.clock.pelt_now(), self.clock.contrib_scale());
        let avg = match which {
            RqAvg::Rt => &mut self.avg_rt,
            RqAvg::Dl => &mut self.avg_dl,
        };
        update_class_avg(now, avg, running, scale)
    }

    /// `update_hw_load_avg(rq_clock_task)` (≤6.9 `update_thermal_load_avg(rq_clock_thermal)`,
    /// `sched_thermal_decay_shift` 0): the pressure now, weighted over the time since the
    /// last update.
    pub fn update_hw_avg(&mut self) -> bool {
        let (now, pressure) = (self.clock.clock_task, self.hw_pressure);
        update_pressure_avg(now, &mut self.avg_hw, pressure)
    }

    /// The tracepoint of `which`'s signal on CPU `cpu` (in its current task's context).
    pub fn pelt_tp(&self, cpu: usize, which: RqAvg) -> Tracepoint {
        let a = match which {
            RqAvg::Rt => &self.avg_rt,
            RqAvg::Dl => &self.avg_dl,
        };
        let note = Note::PeltRq {
            class: which,
            load: a.load_avg,
            runnable: a.runnable_avg,
            util: a.util_avg,
            update_time: a.last_update_time,
        };
        Tracepoint::Fair {
            cpu,
            task: self.curr,
            note,
        }
    }
}
