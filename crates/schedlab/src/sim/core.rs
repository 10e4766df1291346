//! kernel/sched/core.c's part: wake-ups, placement, schedule(), the tick, and how running
//! threads progress through their work.

use super::event::Ev;
use super::task::{Action, State};
use super::{Sim, SIM_START};
use crate::cpufreq::Hook;
use crate::sched::class::{self, Class, Env, SchedClass};
use crate::sched::fair::capacity;
use crate::sched::flags::*;
use crate::sched::idle;
use crate::sched::pelt::cap_scale;
use crate::sched::rq::Rq;
use crate::sched::uclamp::{UCLAMP_MAX, UCLAMP_MIN};
use crate::sched::weight::LoadWeight;
use crate::trace::{PrevState, Record};
use crate::workload::Policy;

/// `cpu_idle` state printed when a CPU leaves idle.
const PWR_EVENT_EXIT: u32 = u32::MAX;

impl Sim {
    /// `update_rq_clock`.
    #[inline]
    pub(super) fn update_rq_clock(&mut self, cpu: usize) {
        let rq = &mut self.rqs[cpu];
        rq.clock.update(self.now, rq.curr.is_none());
    }

    /// Run a class operation on `cpu`'s runqueue, then pass on the tracepoints it recorded
    /// and, if it changed the root cfs_rq's signals, tell cpufreq.
    #[inline]
    pub(super) fn on_rq<R>(&mut self, cpu: usize, op: impl FnOnce(&mut Rq, &mut Env) -> R) -> R {
        let (rqs, mut env, _) = self.sched_parts();
        let r = op(&mut rqs[cpu], &mut env);
        self.drain_notes(cpu);
        self.drain_dl(cpu);
        self.util_change(cpu);
        r
    }

    /// The runqueues, what their classes share, and the threads (for their affinities).
    #[inline]
    fn sched_parts(&mut self) -> (&mut [Rq], Env<'_>, &[super::task::Task]) {
        let env = Env {
            ses: &mut self.ses,
            dl: &mut self.dls,
            rt: &mut self.rts,
            feat: &self.feat,
            tun: &self.tun,
            tracing: self.tracing,
            asym: self.asym,
        };
        (&mut self.rqs, env, &self.tasks)
    }

    /// `p->sched_class`.
    #[inline]
    pub(super) fn class(&self, p: u32) -> &'static dyn SchedClass {
        self.tasks[p as usize].class.ops()
    }

    /// Hand the classes' tracepoint records to the observers.
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

    /// `sched_cpu_capacity`: the capacity left to fair tasks, the original, and the current
    /// one (at the present frequency).
    fn trace_cpu_capacity(&mut self, cpu: usize) {
        let rq = &self.rqs[cpu];
        self.emit(Record::CpuCapacity {
            cpu,
            capacity: rq.cpu_capacity,
            orig: rq.capacity,
            curr: cap_scale(rq.capacity, rq.clock.scale.freq),
        });
    }

    /// `sched_balance_trigger` on a busy CPU: when its lowest domain is due, the periodic
    /// balance refreshes the CPU's capacity (`update_cpu_capacity`). The NOHZ idle balance of
    /// idle CPUs is not modelled: an idle CPU's capacity stays as it is.
    fn sched_balance_trigger(&mut self, cpu: usize) {
        let c = &mut self.cpus[cpu];
        let Some(interval) = c.balance_interval.filter(|_| self.now >= c.next_balance) else {
            return;
        };
        c.next_balance = self.now + interval;
        let rq = &mut self.rqs[cpu];
        rq.cpu_capacity = capacity::scale_rt_capacity(rq);
        if self.tracing {
            self.trace_cpu_capacity(cpu);
        }
    }

    /// Boot: announce the CPUs, then fork every thread.
    pub(super) fn start(&mut self) {
        self.start_governors();
        if self.tracing {
            for cpu in 0..self.rqs.len() {
                self.trace_cpu_capacity(cpu);
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
        let (task, se, dl, rt, thread) = self.prog.new_thread(
            def,
            id,
            parent.map(|p| &self.tasks[p as usize]),
            self.now,
            self.plat.nr_cpus(),
            &self.feat,
        );
        self.tasks.push(task);
        self.ses.push(se);
        self.dls.push(dl);
        self.rts.push(rt);
        self.threads.push(thread);
        if self.tasks[id as usize].class == Class::Deadline && !self.dl_admit(id) {
            self.refuse(id);
            return;
        }
        let parent_cpu = parent.map_or(0, |p| self.tasks[p as usize].cpu);
        let cpu = self.select_task_rq(id, parent_cpu, WF_FORK);
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
        let class = self.class(id);
        self.on_rq(cpu, |rq, env| class.task_fork(rq, env, id));
        self.activate(id, cpu, ENQUEUE_INITIAL);
        if self.tracing {
            self.emit(Record::WakeupNew {
                task: id,
                target: cpu,
            });
        }
        self.wakeup_preempt(cpu, id, WF_FORK);
        self.task_woken(cpu, id);
    }

    /// `task_woken` (and `switched_to_dl`/`switched_to_rt` for a new thread): a deadline
    /// or RT task that will not run here may be pushed to another CPU.
    fn task_woken(&mut self, cpu: usize, id: u32) {
        match self.tasks[id as usize].class {
            Class::Deadline => self.task_woken_dl(cpu, id),
            Class::Rt => self.task_woken_rt(cpu, id),
            Class::Fair => {}
        }
    }

    /// `select_task_rq`: the task's class chooses; a CPU the task may not run on gives way to
    /// the first one it may (`select_fallback_rq`).
    fn select_task_rq(&mut self, id: u32, prev: usize, wake_flags: u32) -> usize {
        let class = self.class(id);
        let (rqs, env, tasks) = self.sched_parts();
        let allowed = &tasks[id as usize].allowed;
        let cpu = class.select_task_rq(rqs, &env, id, allowed, prev, wake_flags);
        if allowed[cpu] {
            return cpu;
        }
        allowed
            .iter()
            .position(|&a| a)
            .expect("an allowed CPU exists")
    }

    /// sched_setattr refused the thread (admission control): rt-app reports it, the thread
    /// never runs, the others go on.
    fn refuse(&mut self, id: u32) {
        let now = self.now;
        let t = &mut self.tasks[id as usize];
        t.stats.refused = true;
        t.stats.ended_at = Some(now);
        t.set_state(State::Dead, now);
        let se = &self.dls[id as usize];
        self.refusals.push(format!(
            "{}: sched_setattr(SCHED_DEADLINE, runtime {} µs, period {} µs) refused by admission control (EBUSY): {:.3} of {:.3} CPUs already reserved; the thread does not run",
            t.comm,
            se.dl_runtime / 1000,
            se.dl_period / 1000,
            self.dl_bw.total_bw as f64 / (1 << 20) as f64,
            self.dl_bw.bw.map_or(f64::INFINITY, |bw| ((bw * self.dl_bw.cap) >> 10) as f64 / (1 << 20) as f64),
        ));
    }

    /// `uclamp_rq_inc` for `id` entering `cpu`'s runqueue.
    pub(super) fn uclamp_inc(&mut self, id: u32, cpu: usize) {
        if self.uclamp_used && !self.ses[id as usize].sched_delayed {
            self.rqs[cpu]
                .uclamp
                .inc(&mut self.tasks[id as usize].uclamp);
        }
    }

    /// `uclamp_rq_dec`, before the class dequeue.
    pub(super) fn uclamp_dec(&mut self, id: u32, cpu: usize) {
        if self.uclamp_used {
            self.rqs[cpu]
                .uclamp
                .dec(&mut self.tasks[id as usize].uclamp);
        }
    }

    /// `set_user_nice` for the running thread `id`: the new weight through
    /// `reweight_task_fair`. Simplified: the kernel's sched_setattr also dequeues and
    /// re-enqueues the task around it (DEQUEUE_SAVE / ENQUEUE_RESTORE).
    pub(super) fn set_nice(&mut self, id: u32, nice: i32) {
        let t = &mut self.tasks[id as usize];
        t.nice = nice;
        let (cpu, lw) = (t.cpu, LoadWeight::of_nice(nice, t.policy == Policy::Idle));
        self.update_rq_clock(cpu);
        let class = self.class(id);
        self.on_rq(cpu, |rq, env| class.reweight_task(rq, env, id, lw));
    }

    /// `sched_setattr` with SCHED_FLAG_UTIL_CLAMP for thread `id` (None: unchanged), then
    /// `uclamp_update_active`: a RUNNABLE task's clamps move to their new buckets at once.
    pub(super) fn set_uclamp(&mut self, id: u32, min: Option<u32>, max: Option<u32>) {
        let t = &mut self.tasks[id as usize];
        let rq = &mut self.rqs[t.cpu].uclamp;
        let active = t.uclamp[UCLAMP_MIN].is_active();
        if active {
            rq.dec(&mut t.uclamp);
        }
        for (clamp_id, v) in [(UCLAMP_MIN, min), (UCLAMP_MAX, max)] {
            if let Some(v) = v {
                t.uclamp[clamp_id].value = v;
            }
        }
        if active {
            rq.inc(&mut t.uclamp);
        }
        self.rts[id as usize].uclamp_cap = t.uclamp_cap();
    }

    /// `activate_task`: enqueue, and mark runnable.
    fn activate(&mut self, id: u32, cpu: usize, flags: u32) {
        let class = self.class(id);
        self.on_rq(cpu, |rq, env| class.enqueue_task(rq, env, id, flags));
        // enqueue_task: uclamp_rq_inc after the class (a delayed task is not RUNNABLE).
        self.uclamp_inc(id, cpu);
        self.tasks[id as usize].set_state(State::Runnable, self.now);
        if flags & ENQUEUE_WAKEUP != 0 {
            self.cpufreq_hook(cpu, Hook::Wakeup);
        }
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
            self.wakeup_preempt(prev, id, WF_TTWU);
            self.task_woken(prev, id);
            return;
        }
        let cpu = self.select_task_rq(id, prev, WF_TTWU);
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
            let class = self.class(id);
            self.on_rq(prev, |rq, env| class.migrate_task_rq(rq, env, id));
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
        self.wakeup_preempt(cpu, id, WF_TTWU);
        self.task_woken(cpu, id);
    }

    /// `move_queued_task` (push and pull): `deactivate_task` + `set_task_cpu` +
    /// `activate_task` of a queued, not running task.
    pub(super) fn move_queued_task(&mut self, id: u32, from: usize, to: usize) {
        self.update_rq_clock(from);
        self.update_rq_clock(to);
        let class = self.class(id);
        self.uclamp_dec(id, from);
        self.on_rq(from, |rq, env| {
            class.dequeue_task(rq, env, id, DEQUEUE_MIGRATING);
        });
        let t = &mut self.tasks[id as usize];
        t.cpu = to;
        t.stats.migrations += 1;
        if self.tracing {
            self.emit(Record::Migrate { task: id, from, to });
        }
        self.on_rq(to, |rq, env| {
            class.enqueue_task(rq, env, id, ENQUEUE_MIGRATING)
        });
        self.uclamp_inc(id, to);
    }

    /// `wakeup_preempt`: the idle task always yields; a task of the same class asks the
    /// class; a task of a higher class is preempted by any of a lower one's.
    pub(super) fn wakeup_preempt(&mut self, cpu: usize, id: u32, wake_flags: u32) {
        let p = self.tasks[id as usize].class;
        let resched = match self.rqs[cpu].curr {
            None => true,
            Some(curr) if self.tasks[curr as usize].class == p => self.on_rq(cpu, |rq, env| {
                p.ops().wakeup_preempt(rq, env, id, wake_flags)
            }),
            Some(curr) => p.above(self.tasks[curr as usize].class),
        };
        if resched || self.rqs[cpu].need_resched {
            self.schedule(cpu);
        }
    }

    /// Charge the running thread for the work done since it last started.
    pub(super) fn progress(&mut self, id: u32, cpu: usize) {
        let now = self.now;
        let rate = self.cpus[cpu].rate;
        let t = &mut self.tasks[id as usize];
        if let Action::Work { left } = &mut t.action {
            *left = left.saturating_sub((now - t.run_start) as u128 * rate);
        }
        t.run_start = now;
    }

    /// (Re)arm the event that ends the running thread's current work.
    pub(super) fn arm_done(&mut self, cpu: usize) {
        let c = &mut self.cpus[cpu];
        c.done_gen = c.done_gen.wrapping_add(1);
        let Some(id) = self.rqs[cpu].curr else { return };
        let now = self.now;
        let at = match self.tasks[id as usize].action {
            Action::Continue => Some(now),
            Action::Until(t) => Some(t.max(now)),
            Action::Work { left } => {
                let ns = left.div_ceil(c.rate);
                (ns < (u64::MAX / 4) as u128).then(|| now + ns as u64)
            }
        };
        if let Some(at) = at {
            self.queue.push(
                at,
                now,
                Ev::Done {
                    cpu: cpu as u32,
                    gen: c.done_gen,
                },
            );
        }
    }

    /// `__schedule`: put the running thread back (if still queued), pick the next one.
    /// As 6.1's generic path: put_prev_task first, so the pick sees prev in its class's queue;
    /// then set_next_task on the one picked (prev again included).
    pub(super) fn schedule(&mut self, cpu: usize) {
        self.update_rq_clock(cpu);
        let prev = self.rqs[cpu].curr;
        if let Some(p) = prev {
            self.balance(cpu, p);
        }
        let prev_class = prev.map(|p| {
            self.progress(p, cpu);
            self.class(p)
        });
        let next = self.on_rq(cpu, |rq, env| {
            if let (Some(p), Some(c)) = (prev, prev_class) {
                c.put_prev_task(rq, env, p);
            }
            let next = class::pick_next_task(rq, env);
            match next {
                Some((c, n)) => {
                    if prev.is_none() {
                        idle::put_prev_task_idle(rq, env);
                    }
                    c.ops().set_next_task(rq, env, n)
                }
                None if prev.is_some() => idle::set_next_task_idle(rq),
                None => {}
            }
            rq.need_resched = false;
            next.map(|(_, n)| n)
        });
        self.rqs[cpu].curr = next;
        if next != prev {
            self.switch(cpu, prev, next);
        }
        if next.is_some() {
            self.arm_done(cpu);
            self.arm_tick(cpu);
        } else {
            self.cpus[cpu].done_gen = self.cpus[cpu].done_gen.wrapping_add(1);
        }
        // set_next_task_{dl,rt} → {deadline,rt}_queue_push_tasks.
        if next != prev {
            match next.map(|n| self.tasks[n as usize].class) {
                Some(Class::Deadline) => self.push_dl_tasks(cpu),
                Some(Class::Rt) => self.push_rt_tasks(cpu),
                _ => {}
            }
        }
    }

    /// `prev_balance`, from prev's class down while none has work: a deadline task that left
    /// the queue (blocked, throttled) may let this CPU pull an earlier one (`balance_dl`);
    /// with no deadline work left, or after an RT task that left the queue, this CPU may pull
    /// RT tasks more important than any it has (`balance_rt`, `need_pull_rt_task`).
    fn balance(&mut self, cpu: usize, prev: u32) {
        let class = self.tasks[prev as usize].class;
        if class == Class::Deadline {
            if !self.dls[prev as usize].on_rq {
                self.pull_dl_task(cpu);
            }
            if self.rqs[cpu].dl.nr_running() > 0 {
                return;
            }
        }
        if class != Class::Fair
            && !self.rts[prev as usize].on_rq
            && (self.rqs[cpu].rt.highest_prio_curr() as i32) > self.tasks[prev as usize].prio()
        {
            self.pull_rt_task(cpu);
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
        }
        let c = &mut self.cpus[cpu];
        match (prev.is_some(), next.is_some()) {
            (false, true) => {
                c.busy_since = Some(now);
                self.energy.set_busy(cpu, true, now);
            }
            (true, false) => {
                if let Some(s) = c.busy_since.take() {
                    c.busy_ns += now - s;
                }
                c.idle_calls += 1;
                self.energy.set_busy(cpu, false, now);
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
        // Last: the thread may sleep at once, which switches again.
        if let Some(n) = next {
            self.thread_runs(n);
        }
    }

    /// NO_HZ idle: a busy CPU ticks at the jiffy boundaries; an idle one does not.
    fn arm_tick(&mut self, cpu: usize) {
        if !self.cpus[cpu].tick_armed {
            self.cpus[cpu].tick_armed = true;
            let tick = self.tun.tick_ns;
            let at = (self.now / tick + 1) * tick;
            self.queue.push(at, self.now, Ev::Tick { cpu: cpu as u32 });
        }
    }

    /// `sched_tick` → the running task's `task_tick`.
    pub(super) fn tick(&mut self, cpu: usize) -> bool {
        let Some(curr) = self.rqs[cpu].curr else {
            self.cpus[cpu].tick_armed = false;
            return false;
        };
        self.update_rq_clock(cpu);
        let c = self.tasks[curr as usize].class;
        // The RT and deadline signals of a CPU running other work decay here, where the
        // kernel's periodic balancing does it (`__update_blocked_others`); the running
        // class's own is its task_tick's.
        let rq = &mut self.rqs[cpu];
        if c != Class::Rt {
            rq.update_rt_avg(false);
        }
        if c != Class::Deadline {
            rq.update_dl_avg(false);
        }
        let class = c.ops();
        let resched = self.on_rq(cpu, |rq, env| class.task_tick(rq, env, curr));
        self.cpufreq_hook(cpu, Hook::Tick);
        self.sched_balance_trigger(cpu);
        if resched || self.rqs[cpu].need_resched {
            self.schedule(cpu);
        }
        if self.rqs[cpu].curr.is_some() {
            let at = self.now + self.tun.tick_ns;
            self.queue.push(at, self.now, Ev::Tick { cpu: cpu as u32 });
        } else {
            self.cpus[cpu].tick_armed = false;
        }
        true
    }

    /// The running thread finished its piece of work: its program goes on.
    pub(super) fn work_done(&mut self, cpu: usize, gen: u32) -> bool {
        if self.cpus[cpu].done_gen != gen {
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
        let class = self.class(id);
        self.uclamp_dec(id, cpu);
        self.on_rq(cpu, |rq, env| {
            class.dequeue_task(rq, env, id, flags);
            if state == State::Dead {
                class.task_dead(rq, env, id);
            }
        });
        self.cpufreq_hook(cpu, Hook::Sleep);
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
        let class = self.class(id);
        self.on_rq(cpu, |rq, env| class.yield_task(rq, env, id));
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
