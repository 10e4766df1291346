//! kernel/sched/core.c's part: wake-ups, placement, schedule(), the tick, and how running
//! threads progress through their work.

use super::event::Ev;
use super::task::{Action, State};
use super::{Sim, SIM_START};
use crate::sched::fair::flags::*;
use crate::sched::fair::load_avg;
use crate::sched::fair::Fair;
use crate::sched::weight::LoadWeight;
use crate::trace::{PrevState, Record};
use crate::workload::Policy;

/// The fair class of one CPU, borrowing the engine's fields disjointly.
macro_rules! fair {
    ($sim:expr, $cpu:expr) => {{
        let rq = &mut $sim.rqs[$cpu];
        Fair {
            cfs: &mut rq.cfs,
            ses: &mut $sim.ses,
            clock: &rq.clock,
            feat: &$sim.feat,
            tun: &$sim.tun,
            capacity: rq.capacity,
            notes: if $sim.tracing {
                Some(&mut rq.notes)
            } else {
                None
            },
        }
    }};
}

/// `cpu_idle` state printed when a CPU leaves idle.
const PWR_EVENT_EXIT: u32 = u32::MAX;

impl Sim {
    /// `update_rq_clock`.
    #[inline]
    fn update_rq_clock(&mut self, cpu: usize) {
        let rq = &mut self.rqs[cpu];
        rq.clock.update(self.now, rq.curr.is_none());
    }

    /// Hand the fair class's tracepoint records to the observers.
    fn drain_notes(&mut self, cpu: usize) {
        if !self.tracing || self.rqs[cpu].notes.is_empty() {
            return;
        }
        let notes = std::mem::take(&mut self.rqs[cpu].notes);
        let task = self.rqs[cpu].curr;
        for &note in &notes {
            self.emit(Record::Fair { cpu, task, note });
        }
        let mut notes = notes;
        notes.clear();
        self.rqs[cpu].notes = notes;
    }

    /// Boot: announce the CPUs, then fork every thread.
    pub(super) fn start(&mut self) {
        if self.tracing {
            for cpu in 0..self.rqs.len() {
                let (khz, cap) = (self.rqs[cpu].max_khz, self.rqs[cpu].capacity);
                self.emit(Record::CpuFrequency { cpu, khz });
                self.emit(Record::CpuCapacity {
                    cpu,
                    capacity: cap,
                    orig: cap,
                    curr: cap,
                });
            }
        }
        for def in 0..self.prog.tasks.len() {
            for _ in 0..self.prog.tasks[def].instance {
                self.fork_thread(def, None);
            }
        }
    }

    /// Create a thread from rt-app task `def` and `wake_up_new_task` it.
    pub(super) fn fork_thread(&mut self, def: usize, parent: Option<u32>) {
        let id = self.tasks.len() as u32;
        let (task, se, thread) = self.prog.new_thread(
            def,
            id,
            parent.map(|p| &self.tasks[p as usize]),
            self.now,
            self.plat.nr_cpus(),
            &self.feat,
        );
        self.tasks.push(task);
        self.ses.push(se);
        self.threads.push(thread);
        let cpu = self.select_idlest(id);
        self.tasks[id as usize].cpu = cpu;
        if self.tracing {
            self.emit(Record::Fork {
                parent,
                child: id,
                cpu,
            });
            self.emit(Record::Rename { task: id, cpu });
        }
        self.update_rq_clock(cpu);
        {
            let mut f = fair!(self, cpu);
            load_avg::init_new_task(&mut f, id);
            f.task_fork(id);
        }
        self.activate(id, cpu, ENQUEUE_INITIAL);
        if self.tracing {
            self.emit(Record::WakeupNew {
                task: id,
                target: cpu,
            });
        }
        self.check_preempt(cpu, id, true);
    }

    /// Fork and first placement: the idlest allowed CPU.
    fn select_idlest(&self, id: u32) -> usize {
        let allowed = &self.tasks[id as usize].allowed;
        (0..self.rqs.len())
            .filter(|&c| allowed[c])
            .min_by_key(|&c| {
                (
                    self.rqs[c].curr.is_some() as u32 + self.rqs[c].cfs.h_nr_queued,
                    c,
                )
            })
            .expect("an allowed CPU exists")
    }

    /// Placement for now (`select_task_rq`): the previous CPU if it is allowed and idle, else
    /// the idlest allowed CPU. The kernel's wake_affine/select_idle_sibling come later.
    fn select_task_rq(&self, id: u32) -> usize {
        let t = &self.tasks[id as usize];
        let prev = t.cpu;
        if t.allowed[prev] && self.idle_cpu(prev) {
            return prev;
        }
        self.select_idlest(id)
    }

    /// `set_user_nice` for the running thread `id`: the new weight through
    /// `reweight_task_fair`. Simplified: the kernel's sched_setattr also dequeues and
    /// re-enqueues the task around it (DEQUEUE_SAVE / ENQUEUE_RESTORE).
    pub(super) fn set_nice(&mut self, id: u32, nice: i32) {
        let t = &mut self.tasks[id as usize];
        t.nice = nice;
        let (cpu, lw) = (t.cpu, LoadWeight::of_nice(nice, t.policy == Policy::Idle));
        self.update_rq_clock(cpu);
        fair!(self, cpu).reweight_task(id, lw);
        self.drain_notes(cpu);
    }

    /// `idle_cpu`: nothing running and nothing queued.
    fn idle_cpu(&self, cpu: usize) -> bool {
        self.rqs[cpu].curr.is_none() && self.rqs[cpu].cfs.h_nr_queued == 0
    }

    /// `activate_task`: enqueue, and mark runnable.
    fn activate(&mut self, id: u32, cpu: usize, flags: u32) {
        fair!(self, cpu).enqueue_task(id, flags);
        self.drain_notes(cpu);
        self.tasks[id as usize].set_state(State::Runnable, self.now);
    }

    /// `try_to_wake_up`.
    pub(super) fn wake_up(&mut self, id: u32, waker_cpu: usize) {
        let now = self.now;
        let t = &mut self.tasks[id as usize];
        if !matches!(t.state, State::Sleeping | State::Blocked) {
            return;
        }
        t.woken_at = Some(now);
        t.wake_gen = t.wake_gen.wrapping_add(1);
        let prev = t.cpu;
        if self.ses[id as usize].on_rq {
            // ttwu_runnable: still queued (delayed dequeue); requeue where it is.
            self.update_rq_clock(prev);
            self.activate(id, prev, ENQUEUE_WAKEUP);
            if self.tracing {
                self.emit(Record::Waking {
                    task: id,
                    cpu: waker_cpu,
                    target: prev,
                });
                self.emit(Record::Wakeup {
                    task: id,
                    target: prev,
                });
            }
            self.check_preempt(prev, id, false);
            return;
        }
        let cpu = self.select_task_rq(id);
        if self.tracing {
            self.emit(Record::Waking {
                task: id,
                cpu: waker_cpu,
                target: cpu,
            });
        }
        let mut flags = ENQUEUE_WAKEUP;
        if cpu != prev {
            self.update_rq_clock(prev);
            fair!(self, prev).migrate_task_rq(id);
            self.drain_notes(prev);
            let t = &mut self.tasks[id as usize];
            t.cpu = cpu;
            t.stats.migrations += 1;
            flags |= ENQUEUE_MIGRATED;
            if self.tracing {
                self.emit(Record::Migrate {
                    task: id,
                    from: prev,
                    to: cpu,
                });
            }
        }
        self.update_rq_clock(cpu);
        self.activate(id, cpu, flags);
        if self.tracing {
            self.emit(Record::Wakeup {
                task: id,
                target: cpu,
            });
        }
        self.check_preempt(cpu, id, false);
    }

    /// `wakeup_preempt`: an idle CPU always reschedules; a busy one asks the class.
    fn check_preempt(&mut self, cpu: usize, id: u32, fork: bool) {
        let resched = match self.rqs[cpu].curr {
            None => true,
            Some(curr) => {
                let r = fair!(self, cpu).check_preempt_wakeup(curr, id, fork);
                self.drain_notes(cpu);
                r
            }
        };
        if resched {
            self.schedule(cpu);
        }
    }

    /// Charge the running thread for the work done since it last started.
    fn progress(&mut self, id: u32, cpu: usize) {
        let now = self.now;
        let rate = self.rqs[cpu].rate;
        let t = &mut self.tasks[id as usize];
        if let Action::Work { left } = &mut t.action {
            *left = left.saturating_sub((now - t.run_start) as u128 * rate);
        }
        t.run_start = now;
    }

    /// (Re)arm the event that ends the running thread's current work.
    fn arm_done(&mut self, cpu: usize) {
        let rq = &mut self.rqs[cpu];
        rq.done_gen = rq.done_gen.wrapping_add(1);
        let Some(id) = rq.curr else { return };
        let now = self.now;
        let at = match self.tasks[id as usize].action {
            Action::Continue => Some(now),
            Action::Until(t) => Some(t.max(now)),
            Action::Work { left } => {
                let ns = left.div_ceil(rq.rate);
                (ns < (u64::MAX / 4) as u128).then(|| now + ns as u64)
            }
        };
        if let Some(at) = at {
            self.queue.push(
                at,
                now,
                Ev::Done {
                    cpu: cpu as u32,
                    gen: rq.done_gen,
                },
            );
        }
    }

    /// `__schedule`: put the running thread back (if still queued), pick the next one.
    pub(super) fn schedule(&mut self, cpu: usize) {
        self.update_rq_clock(cpu);
        let prev = self.rqs[cpu].curr;
        if let Some(p) = prev {
            self.progress(p, cpu);
            fair!(self, cpu).put_prev_entity(p);
        }
        // A delayed sleeper picked here finishes its dequeue inside pick_next_entity.
        let (next, _) = fair!(self, cpu).pick_next_entity();
        if let Some(n) = next {
            fair!(self, cpu).set_next_entity(n);
        }
        self.drain_notes(cpu);
        self.rqs[cpu].curr = next;
        if next != prev {
            self.switch(cpu, prev, next);
        }
        if next.is_some() {
            self.arm_done(cpu);
            self.arm_tick(cpu);
        } else {
            self.rqs[cpu].done_gen = self.rqs[cpu].done_gen.wrapping_add(1);
        }
    }

    /// Bookkeeping of a context switch.
    fn switch(&mut self, cpu: usize, prev: Option<u32>, next: Option<u32>) {
        let now = self.now;
        let mut prev_state = PrevState::Runnable;
        if let Some(p) = prev {
            let t = &mut self.tasks[p as usize];
            match t.state {
                State::Running => {
                    t.set_state(State::Runnable, now);
                    t.stats.preemptions += 1;
                }
                State::Dead => prev_state = PrevState::Dead,
                _ => prev_state = PrevState::Sleeping,
            }
        }
        if let Some(n) = next {
            let t = &mut self.tasks[n as usize];
            t.set_state(State::Running, now);
            t.run_start = now;
            if let Some(w) = t.woken_at.take() {
                t.stats.wakeup_latencies.push(now - w);
            }
            self.thread_runs(n);
        }
        let rq = &mut self.rqs[cpu];
        match (prev.is_some(), next.is_some()) {
            (false, true) => rq.busy_since = Some(now),
            (true, false) => {
                if let Some(s) = rq.busy_since.take() {
                    rq.busy_ns += now - s;
                }
                // pick_next_task_idle → update_idle_rq_clock_pelt
                let util_sum = rq.cfs.avg.util_sum;
                rq.clock.update_idle(util_sum);
            }
            _ => {}
        }
        if self.tracing {
            if prev.is_none() {
                self.emit(Record::CpuIdle {
                    cpu,
                    state: PWR_EVENT_EXIT,
                });
            }
            self.emit(Record::Switch {
                cpu,
                prev,
                prev_state,
                next,
            });
            if next.is_none() {
                self.emit(Record::CpuIdle { cpu, state: 0 });
            }
        }
    }

    /// NO_HZ idle: a busy CPU ticks at the jiffy boundaries; an idle one does not.
    fn arm_tick(&mut self, cpu: usize) {
        if !self.rqs[cpu].tick_armed {
            self.rqs[cpu].tick_armed = true;
            let tick = self.tun.tick_ns;
            let at = (self.now / tick + 1) * tick;
            self.queue.push(at, self.now, Ev::Tick { cpu: cpu as u32 });
        }
    }

    /// `sched_tick` → `task_tick_fair` → `entity_tick`.
    pub(super) fn tick(&mut self, cpu: usize) -> bool {
        let Some(curr) = self.rqs[cpu].curr else {
            self.rqs[cpu].tick_armed = false;
            return false;
        };
        self.update_rq_clock(cpu);
        let resched = fair!(self, cpu).entity_tick(curr);
        self.drain_notes(cpu);
        if resched {
            self.schedule(cpu);
        }
        if self.rqs[cpu].curr.is_some() {
            let at = self.now + self.tun.tick_ns;
            self.queue.push(at, self.now, Ev::Tick { cpu: cpu as u32 });
        } else {
            self.rqs[cpu].tick_armed = false;
        }
        true
    }

    /// The running thread finished its piece of work: its program goes on.
    pub(super) fn work_done(&mut self, cpu: usize, gen: u32) -> bool {
        if self.rqs[cpu].done_gen != gen {
            return false;
        }
        let Some(id) = self.rqs[cpu].curr else {
            return false;
        };
        self.progress(id, cpu);
        self.tasks[id as usize].action = Action::Continue;
        self.thread_runs(id);
        if self.tasks[id as usize].state == State::Running {
            self.arm_done(cpu);
        }
        true
    }

    /// The running thread stops: sleep, block or exit (`deactivate_task` + `__schedule`).
    pub(super) fn block_current(&mut self, id: u32, state: State) {
        let cpu = self.tasks[id as usize].cpu;
        debug_assert_eq!(self.rqs[cpu].curr, Some(id));
        self.update_rq_clock(cpu);
        self.progress(id, cpu);
        let flags = if state == State::Dead {
            DEQUEUE_SLEEP | DEQUEUE_SPECIAL
        } else {
            DEQUEUE_SLEEP
        };
        fair!(self, cpu).dequeue_task(id, flags);
        if state == State::Dead {
            load_avg::remove_entity_load_avg(&mut fair!(self, cpu), id);
        }
        self.drain_notes(cpu);
        let now = self.now;
        let t = &mut self.tasks[id as usize];
        t.set_state(state, now);
        if state == State::Dead {
            t.stats.ended_at = Some(now);
            if self.tracing {
                self.emit(Record::Exit { task: id, cpu });
            }
        }
        self.schedule(cpu);
    }

    /// `sched_yield()`.
    pub(super) fn yield_current(&mut self, id: u32) {
        let cpu = self.tasks[id as usize].cpu;
        self.update_rq_clock(cpu);
        fair!(self, cpu).yield_task(id);
        self.schedule(cpu);
    }

    /// A sleep or timer of `id` ends.
    pub(super) fn timer_fired(&mut self, id: u32, gen: u32) -> bool {
        let t = &self.tasks[id as usize];
        if t.wake_gen != gen || t.state != State::Sleeping {
            return false;
        }
        let cpu = t.cpu;
        self.wake_up(id, cpu);
        true
    }

    /// Sleep the running thread `id` until `at`.
    pub(super) fn sleep_until(&mut self, id: u32, at: u64) {
        let gen = self.tasks[id as usize].wake_gen;
        self.queue.push(at, self.now, Ev::Wake { task: id, gen });
        self.block_current(id, State::Sleeping);
    }

    /// Simulated µs since boot, rt-app's CLOCK_MONOTONIC reading.
    pub(super) fn now_us(&self) -> u64 {
        (self.now + 500) / 1000
    }

    /// µs since the run started (rt-app's `rel_st` base).
    pub(super) fn rel_us(&self, at: u64) -> u64 {
        (at - SIM_START + 500) / 1000
    }
}
