//! The machine the scheduler runs on: the clock and the event queue, each CPU's work rate
//! and busy time, ticks, context switches, and the observers. It implements `sched::Hooks`.

use super::cache::CacheModel;
use super::cpuidle::{self, NextTimers};
use super::event::{Ev, EventQueue};
use super::hrtimer::HrTimers;
use super::jitter::Draw;
use super::overhead::Overhead;
use super::thread::{Resources, Thread};
use super::{Cpufreq, Totals, SIM_START};
use crate::cpufreq::Hook;
use crate::energy::Meter;
use crate::platform::Platform;
use crate::sched::hooks::{Hooks, SchedTimer, Switch};
use crate::sched::ops::Op;
use crate::sched::task::{SchedTask, TaskState};
use crate::sched::topology::Topology;
use crate::sched::{Sched, Ttwu};
use crate::time::Ns;
use crate::trace::{LogRow, Observer};
use crate::tracepoint::{Counter, Tracepoint};
use crate::workload::program::Program;

/// `cpu_idle` state printed when a CPU leaves idle.
const PWR_EVENT_EXIT: u32 = u32::MAX;

/// Threads run from inside a context switch, nested (each leaves its CPU at once, which
/// switches to the next): past this depth the next one runs from its `Done` event instead,
/// so that a chain of zero-length programs cannot exhaust the stack.
const MAX_NESTED_RUNS: u32 = 64;

/// What the machine keeps per CPU.
pub(super) struct Cpu {
    /// Work units per ns: capacity·freq_scale (both /1024).
    pub(super) rate: u128,
    /// Generation of the pending `Done` event.
    pub(super) done_gen: u32,
    pub(super) tick_armed: bool,
    pub(super) busy_ns: Ns,
    pub(super) busy_since: Option<Ns>,
    /// Times the CPU went idle (`tick_nohz_get_idle_calls_cpu`).
    pub(super) idle_calls: u64,
    /// The instant of its last scheduling event: a context switch, a wakeup it made or
    /// received, a reschedule request. Simplified: what a real CPU takes time for takes
    /// schedlab's 1 ns, the trace clock's resolution: its thread does not leave it, nor
    /// does it switch again, at that instant, so that no run, wakeup latency or idle period
    /// in a trace lasts 0 ns and each task's events have distinct times, as on a real CPU.
    /// The cost model charges the real price on top.
    pub(super) changed_at: Ns,
    /// Idle, but out of its idle state for an interrupt: it enters one again 1 ns later.
    pub(super) awake: bool,
    /// Idle in an idle state, until a wakeup of a task there takes it out (`resched_curr`).
    pub(super) asleep: bool,
    /// Its own sleepers it is waking, not yet queued (`Engine::ttwu_queue`): idle to the
    /// other CPUs meanwhile, as the kernel's is until `ttwu_do_activate`.
    pub(super) waking: u32,
    /// The sleepers its timer interrupt wakes after the one it is waking (with their wake
    /// generations): the interrupt goes on once that one is queued.
    pub(super) irq_rest: Vec<(u32, u32)>,
}

impl Cpu {
    /// Its busy time up to `now`, the current stretch included.
    pub(super) fn busy_at(&self, now: Ns) -> Ns {
        self.busy_ns + self.busy_since.map_or(0, |t| now - t)
    }
}

/// What the thread is doing with the CPU when it has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Action {
    /// Nothing left: run the program on.
    Continue,
    /// rt-app `run` (and mem/iorun): work units left, 2^20 units = 1 ns on the reference CPU.
    Work { left: u128 },
    /// rt-app `runtime`: busy until this instant, whatever the CPU gives.
    Until(Ns),
}

/// The machine, and the threads it runs.
pub(super) struct Engine {
    pub(super) now: Ns,
    pub(super) plat: Platform,
    pub(super) cpus: Vec<Cpu>,
    pub(super) cpufreq: Cpufreq,
    pub(super) energy: Meter,
    pub(super) queue: EventQueue,
    pub(super) prog: Program,
    pub(super) threads: Vec<Thread>,
    pub(super) res: Resources,
    pub(super) observers: Vec<Box<dyn Observer>>,
    pub(super) tracing: bool,
    /// `TICK_NSEC`.
    pub(super) tick_ns: Ns,
    /// The run's seed and the spread of a timer interrupt's entry latency (`sim/jitter.rs`).
    pub(super) seed: u64,
    pub(super) irq_jitter_ns: Ns,
    /// The quantiles a job's `run` stretch is drawn from (empty: as calibrated).
    pub(super) work_stretch: Vec<u64>,
    pub(super) stop_at: Option<Ns>,
    pub(super) totals: Totals,
    pub(super) io_error: Option<std::io::Error>,
    /// The thread whose program ran last (named by a livelock report).
    pub(super) last_thread: u32,
    /// Threads running their programs from nested context switches.
    pub(super) nested_runs: u32,
    /// The threads a pipe or socket call wakes (scratch, kept to reuse its memory).
    pub(super) woken: Vec<u32>,
    /// Per CPU: its running thread is on its way to block (`set_current_state`). One flag
    /// per CPU, as threads on other CPUs may run (and block) meanwhile.
    pub(super) going_to_sleep: Vec<bool>,
    /// Wakeups on their way (`Ev::Wakeup`): their threads are not deadlocked.
    pub(super) deferred_wakes: u32,
    /// A timer interrupt's wakeup is under way (`Hooks::in_interrupt`).
    pub(super) in_irq: bool,
    /// Inside `start`: frequency changes are traced when it ends, as the state boot leaves.
    pub(super) booting: bool,
    /// Threads created and not yet exited: the run ends when none is left (the kernel's
    /// own timers, a fair server's or a bandwidth period's, and its own threads do not keep
    /// it going).
    pub(super) alive: u32,
    /// Fair tasks' sleep timers, with their slack.
    pub(super) hrtimers: HrTimers,
    /// Each CPU's pending sleep timers, for the cpuidle governor.
    pub(super) next_timers: NextTimers,
    /// The timers an interrupt runs (kept to reuse its allocation).
    pub(super) fired: Vec<(u32, u32)>,
    /// The scheduler's work as system time.
    pub(super) overhead: Overhead,
    /// The cache-affinity model, when on.
    pub(super) cache: Option<CacheModel>,
    /// Every CPU: the affinity of a thread that asks for none.
    pub(super) all_cpus: Vec<bool>,
}

impl Hooks for Engine {
    #[inline(always)]
    fn now(&self) -> Ns {
        self.now
    }

    #[inline(always)]
    fn tracing(&self) -> bool {
        self.tracing
    }

    fn in_interrupt(&self) -> bool {
        self.in_irq
    }

    /// Out of line: untraced runs keep it out of the hot paths' code.
    #[inline(never)]
    fn trace(&mut self, tasks: &[SchedTask], tp: Tracepoint) {
        self.emit(tasks, &tp);
    }

    fn arm(&mut self, at: Ns, timer: SchedTimer) {
        self.queue.push(at, self.now, Ev::Sched(timer));
    }

    fn counter(&mut self, cpu: usize, c: Counter, value: f64) {
        for o in &mut self.observers {
            if let Err(e) = o.counter(self.now, cpu, c, value) {
                self.io_error.get_or_insert(e);
            }
        }
    }

    /// TIF_NEED_RESCHED: the CPU schedules at its next preemption point, 1 ns later
    /// (`Cpu::changed_at`); a thread on its way to sleep switches with the sleep, as
    /// `schedule()` follows `set_current_state()`.
    #[inline]
    fn resched_curr(&mut self, s: &mut Sched, cpu: usize) {
        s.set_need_resched(cpu);
        if std::mem::take(&mut self.cpus[cpu].asleep) {
            // The interrupt or IPI wakes it first (a halted vCPU's host thread).
            let exit = self.cpu_draw(&self.plat.halt_exit_ns, Draw::HaltExit, cpu, self.now);
            self.overhead.hold(cpu, self.now, exit);
        }
        if !self.going_to_sleep[cpu] {
            self.cpus[cpu].changed_at = self.now;
            self.arm_done(s, cpu);
        }
    }

    #[inline]
    fn context_switch(&mut self, s: &mut Sched, cpu: usize, sw: Switch) {
        if let Some(p) = sw.prev {
            self.progress(s, p, cpu);
        }
        if sw.next != sw.prev {
            self.switch(s, cpu, sw);
        }
        if sw.next.is_some() {
            self.arm_tick(cpu);
        } else {
            self.cpus[cpu].done_gen = self.cpus[cpu].done_gen.wrapping_add(1);
        }
    }

    #[inline]
    fn switched_in(&mut self, s: &mut Sched, cpu: usize, sw: Switch) {
        let Some(n) = sw.next else {
            return;
        };
        // A thread a preemption took from its system call goes on with it first. Else it
        // runs its program, and may sleep at once, which switches again: deep in such a
        // chain its `Done` event, at this instant, runs it instead.
        if sw.next != sw.prev && !self.resume_syscall(cpu, n) && self.nested_runs < MAX_NESTED_RUNS
        {
            self.nested_runs += 1;
            self.thread_runs(s, n);
            self.nested_runs -= 1;
        }
        self.arm_done(s, cpu);
    }

    #[inline]
    fn cpufreq_update_util(&mut self, s: &mut Sched, cpu: usize, hook: Hook) {
        self.cpufreq_hook(s, cpu, hook);
    }

    /// A draw from the platform's `newidle_stall_ns`, held on the CPU (none with the cost
    /// model off: the pass takes no time at all then).
    fn newidle_stall(&mut self, cpu: usize) -> Ns {
        if !self.overhead.on() {
            return 0;
        }
        let ns = self.cpu_draw(
            &self.plat.newidle_stall_ns,
            Draw::NewidleStall,
            cpu,
            self.now,
        );
        self.overhead.hold(cpu, self.now, ns);
        ns
    }

    fn kernel_pending(&mut self, s: &Sched, cpu: usize) -> Ns {
        Engine::kernel_pending(self, s, cpu)
    }
}

impl Engine {
    /// Tell the observers; an I/O error stops the run at the next event.
    #[inline]
    pub(super) fn emit(&mut self, tasks: &[SchedTask], tp: &Tracepoint) {
        for o in &mut self.observers {
            if let Err(e) = o.record(self.now, tp, tasks) {
                self.io_error.get_or_insert(e);
            }
        }
    }

    /// Hand an rt-app log row to the observers.
    pub(super) fn log(&mut self, task: u32, row: LogRow) {
        for o in &mut self.observers {
            o.log(task, row);
        }
    }

    /// The machine's side of a context switch: busy time, energy, `cpu_idle` and
    /// `sched_switch` (the thread switched to goes on in `switched_in`).
    #[inline]
    fn switch(&mut self, s: &mut Sched, cpu: usize, sw: Switch) {
        let now = self.now;
        self.cpus[cpu].changed_at = now;
        if let Some(n) = sw.next {
            self.threads[n as usize].run_start = now;
            self.overhead.stolen(cpu, now); // what was done before it came is not its loss
        }
        if let Some(cache) = &self.cache {
            cache_switch(
                cache,
                s.topology(),
                &mut self.threads,
                &mut self.overhead,
                (cpu, sw, now),
            );
        }
        let c = &mut self.cpus[cpu];
        // The idle state the CPU enters (cpuidle's choice), when it goes idle.
        let mut idle_state = 0;
        match (sw.prev.is_some(), sw.next.is_some()) {
            (false, true) => {
                c.asleep = false;
                c.busy_since = Some(now);
                self.energy.set_idle(cpu, None, now);
                self.energy_counter(cpu);
            }
            (true, false) => {
                if let Some(since) = c.busy_since.take() {
                    c.busy_ns += now - since;
                }
                c.idle_calls += 1;
                idle_state = self.idle_select(cpu);
                self.enter_state(cpu, idle_state);
                self.energy_counter(cpu);
            }
            _ => {}
        }
        let awake = std::mem::take(&mut self.cpus[cpu].awake);
        if self.tracing {
            if sw.prev.is_none() && !awake {
                let exit = Tracepoint::CpuIdle {
                    cpu,
                    state: PWR_EVENT_EXIT,
                };
                self.emit(s.tasks(), &exit);
            }
            let switch = Tracepoint::Switch {
                cpu,
                prev: sw.prev,
                prev_state: sw.prev_state,
                next: sw.next,
            };
            self.emit(s.tasks(), &switch);
            if sw.next.is_none() {
                let state = idle_state as u32;
                self.emit(s.tasks(), &Tracepoint::CpuIdle { cpu, state });
            }
        }
    }

    /// Charge the running thread for the work done since it last started, less the time
    /// the kernel took from it (its system time).
    pub(super) fn progress(&mut self, s: &Sched, id: u32, cpu: usize) {
        let now = self.now;
        // Only the cost model and cache stalls take time from a running thread.
        let stolen = if self.overhead.on() || self.cache.is_some() {
            self.overhead.sync(cpu, now, s.ops().of(cpu));
            self.overhead.stolen(cpu, now)
        } else {
            0
        };
        let rate = self.cpus[cpu].rate;
        let t = &mut self.threads[id as usize];
        // Simplified: a cache stall is taken first from what the CPU did not give it.
        let stall = stolen.min(t.stall_pending);
        t.stall_pending -= stall;
        t.sys_ns += stolen - stall;
        if let Action::Work { left } = &mut t.action {
            let ran = (now - t.run_start).saturating_sub(stolen);
            *left = left.saturating_sub(ran as u128 * rate);
        }
        t.run_start = now;
    }

    /// (Re)arm the event that ends the running thread's current work.
    pub(super) fn arm_done(&mut self, s: &Sched, cpu: usize) {
        let c = &mut self.cpus[cpu];
        c.done_gen = c.done_gen.wrapping_add(1);
        let now = self.now;
        let at = match s.cpu_curr(cpu).map(|id| self.threads[id as usize].action) {
            None => None,
            Some(Action::Continue) => Some(now),
            Some(Action::Until(t)) => Some(t.max(now)),
            Some(Action::Work { left }) => {
                let ns = div_ceil(left, c.rate) + self.overhead.pending(cpu, now) as u128;
                (ns < (u64::MAX / 4) as u128).then(|| now + ns as u64)
            }
        };
        // A reschedule request the CPU was told of, or an idle state to enter again, 1 ns
        // after the CPU's last scheduling event.
        let at = if s.resched_due(cpu) || c.awake {
            let due = (c.changed_at + 1).max(now);
            Some(at.map_or(due, |t| t.min(due)))
        } else {
            at
        };
        if let Some(at) = at {
            let ev = Ev::Done {
                cpu: cpu as u32,
                gen: c.done_gen,
            };
            self.queue.push(at, now, ev);
        }
    }

    /// NO_HZ idle: a busy CPU ticks at the jiffy boundaries; an idle one does not.
    fn arm_tick(&mut self, cpu: usize) {
        if !self.cpus[cpu].tick_armed {
            self.cpus[cpu].tick_armed = true;
            let at = self.tick_at(cpu, self.now / self.tick_ns + 1);
            self.queue.push(at, self.now, Ev::Tick { cpu: cpu as u32 });
        }
    }

    /// When `cpu`'s tick of jiffy `n` comes: the jiffy boundary, and its interrupt's entry
    /// latency.
    fn tick_at(&self, cpu: usize, n: u64) -> Ns {
        n * self.tick_ns + self.irq_delay(cpu, n * self.tick_ns)
    }

    /// The run's draw for `what` on `cpu` at `at` from the platform's `quantiles`
    /// (`sim/jitter.rs`): an emulated CPU's timing, 0 on hardware.
    fn cpu_draw(&self, quantiles: &[Ns], what: Draw, cpu: usize, at: Ns) -> Ns {
        super::jitter::cpu_draw(self.seed, quantiles, what, cpu, at)
    }

    /// How late the interrupt of a timer expiring at `at` on `cpu` comes.
    fn irq_delay(&self, cpu: usize, at: Ns) -> Ns {
        super::jitter::irq_delay(
            self.seed,
            (self.irq_jitter_ns, self.plat.irq_skew_ns),
            cpu,
            at,
        )
    }

    /// The tick of a busy CPU; it stops once the CPU idles.
    pub(super) fn tick(&mut self, s: &mut Sched, cpu: usize) -> bool {
        if !s.sched_tick(cpu, self) {
            self.cpus[cpu].tick_armed = false;
            return false;
        }
        self.hrtimer_interrupt(s, cpu, None); // the tick is one of the CPU's hrtimers
        if s.cpu_curr(cpu).is_some() {
            let at = self.tick_at(cpu, self.now / self.tick_ns + 1);
            self.queue.push(at, self.now, Ev::Tick { cpu: cpu as u32 });
        } else {
            self.cpus[cpu].tick_armed = false;
        }
        true
    }

    /// The running thread finished its piece of work: its program goes on.
    pub(super) fn work_done(&mut self, s: &mut Sched, cpu: usize, gen: u32) -> bool {
        if self.cpus[cpu].done_gen != gen {
            return false;
        }
        if self.now > self.cpus[cpu].changed_at && s.need_resched(cpu) {
            // The preemption point after a reschedule request (`resched_curr`): the return
            // from the interrupt or system call that set it, once its work is done.
            self.preempt_syscall(s, cpu);
            if self.kernel_busy(s, cpu, gen) {
                return true;
            }
            if let Some(id) = s.cpu_curr(cpu) {
                self.progress(s, id, cpu);
            }
            s.schedule(cpu, self);
            self.idle_enter(s, cpu);
            return true;
        }
        let Some(id) = s.cpu_curr(cpu) else {
            if s.need_resched(cpu) {
                // A wakeup it made at this instant: it schedules 1 ns later.
                self.arm_done(s, cpu);
                return true;
            }
            return self.idle_enter(s, cpu);
        };
        self.progress(s, id, cpu);
        if matches!(self.threads[id as usize].action, Action::Work { left } if left > 0) {
            self.arm_done(s, cpu); // the kernel took some of its time
            return true;
        }
        self.threads[id as usize].action = Action::Continue;
        self.thread_runs(s, id);
        if s.task(id).state == TaskState::Running {
            self.arm_done(s, cpu);
        }
        true
    }

    /// Whether `cpu`'s kernel is still at work (the cost model's pending time): its
    /// preemption point is then put off (event `gen`) until the work is done.
    fn kernel_busy(&mut self, s: &Sched, cpu: usize, gen: u32) -> bool {
        let pending = self.kernel_pending(s, cpu);
        if pending > 0 {
            let ev = Ev::Done {
                cpu: cpu as u32,
                gen,
            };
            self.queue.push(self.now + pending, self.now, ev);
        }
        pending > 0
    }

    /// The kernel work `cpu` has still to do, what its scheduler counted charged first.
    pub(super) fn kernel_pending(&mut self, s: &Sched, cpu: usize) -> Ns {
        self.overhead.sync(cpu, self.now, s.ops().of(cpu));
        self.overhead.pending(cpu, self.now)
    }

    /// `try_to_wake_up` of thread `id` from `waker_cpu` with `wake_flags` (`WF_SYNC`): its
    /// pending sleep events go stale. True when its enqueue comes later (`ttwu_queue`).
    #[inline]
    pub(super) fn wake(
        &mut self,
        s: &mut Sched,
        id: u32,
        waker_cpu: usize,
        wake_flags: u32,
    ) -> bool {
        if matches!(s.task(id).state, TaskState::Sleeping | TaskState::Blocked) {
            if s.task(id).state_since == self.now || self.going_to_sleep[waker_cpu] {
                // It went to sleep at this instant, or its waker is on its way to sleep (a
                // condition wait's unlock, one step with the sleep): the wakeup comes 1 ns
                // later (`Cpu::changed_at`), after the sleep.
                let ev = Ev::Wakeup {
                    task: id,
                    gen: self.threads[id as usize].wake_gen,
                    waker: waker_cpu as u16, // NR_CPUS is 4096
                    flags: wake_flags as u8,
                    irq: self.in_irq,
                };
                self.queue.push(self.now + 1, self.now, ev);
                self.deferred_wakes += 1;
                return false;
            }
            let th = &mut self.threads[id as usize];
            th.wake_gen = th.wake_gen.wrapping_add(1);
            self.cpus[waker_cpu].changed_at = self.now;
            let ttwu = s.ttwu_select(id, waker_cpu, wake_flags, self);
            if let Ttwu::Waking {
                flags,
                wake_flags,
                queued,
            } = ttwu
            {
                return self.ttwu_queue(s, id, (waker_cpu, queued), (flags, wake_flags));
            }
            self.cpus[s.task_cpu(id)].changed_at = self.now;
        }
        false
    }

    /// The enqueue of TASK_WAKING `id` (`ttwu_queue`), woken from `waker_cpu` and `queued`
    /// on its CPU's wake list or not; true when it comes later (`Ev::Activate`). An idle
    /// CPU waking a sleeper of its own (its timer interrupt) stays idle to the others'
    /// placement until the enqueue, which comes after the kernel work it has queued (the
    /// interrupt's, `select_task_rq`'s). Elsewhere the target is busy, or marked by its wake
    /// list (`ttwu_pending`), from the start: the enqueue is at once (simplified: a queued
    /// wakeup's enqueue is the waker's, not the target's after its IPI).
    fn ttwu_queue(
        &mut self,
        s: &mut Sched,
        id: u32,
        (waker_cpu, queued): (usize, bool),
        (flags, wake_flags): (u32, u32),
    ) -> bool {
        let cpu = s.task_cpu(id);
        // (the cheap tests first: this is every wakeup's path)
        let own_idle = cpu == waker_cpu && s.cpu_curr(cpu).is_none() && s.nr_running(cpu) == 0;
        if own_idle && self.overhead.on() {
            let pending = self.kernel_pending(s, cpu);
            if pending > 0 {
                debug_assert!(flags <= u8::MAX as u32, "ENQUEUE_WAKEUP | ENQUEUE_MIGRATED");
                let ev = Ev::Activate {
                    task: id,
                    flags: flags as u8,
                };
                self.queue.push(self.now + pending, self.now, ev);
                self.cpus[cpu].waking += 1;
                return true;
            }
        }
        s.ttwu_activate(id, (flags, wake_flags), (waker_cpu, queued), self);
        self.cpus[cpu].changed_at = self.now;
        false
    }

    /// The enqueue of TASK_WAKING `id` with `flags` comes (`Engine::ttwu_queue`); its CPU's
    /// timer interrupt goes on with the sleepers after it.
    pub(super) fn ttwu_activate(&mut self, s: &mut Sched, id: u32, flags: u32) {
        let cpu = s.task_cpu(id);
        self.cpus[cpu].waking -= 1;
        let before = self.kernel_pending(s, cpu);
        s.ttwu_activate(id, (flags, 0), (cpu, false), self); // its own CPU's timer's
        self.cpus[cpu].changed_at = self.now;
        if !self.cpus[cpu].irq_rest.is_empty() {
            let step = (self.kernel_pending(s, cpu) - before).max(1);
            let mut rest = std::mem::take(&mut self.cpus[cpu].irq_rest);
            self.wake_in_turn(cpu, &rest, step);
            rest.clear(); // (its memory kept for the next interrupt)
            self.cpus[cpu].irq_rest = rest;
        }
    }

    /// A wakeup of `id` from `waker_cpu` (in its timer interrupt or not) deferred to now
    /// (`Ev::Wakeup`), unless it woke meanwhile.
    pub(super) fn deferred_wake(
        &mut self,
        s: &mut Sched,
        id: u32,
        gen: u32,
        (waker_cpu, irq): (usize, bool),
        flags: u32,
    ) -> bool {
        self.deferred_wakes -= 1;
        if self.threads[id as usize].wake_gen != gen {
            return false;
        }
        self.in_irq = irq;
        self.wake(s, id, waker_cpu, flags);
        self.in_irq = false;
        true
    }

    /// A timer the scheduler armed expires. Its interrupt comes as late as a tick's
    /// (`irq_delay`: none on hardware), the running task going on meanwhile. In runs recorded
    /// with the timer events (2026-11-28, qemu-tcg:2@0.43-0.44, whose draws lie in 0-99 µs,
    /// median 49) `hrtimer_expire_entry` came after the expiry by 26-35 and 53-69 µs at p10 and
    /// p50 for the hrtick (periodic-4@7.3), 22, 45 and 77 µs at p10, p50 and p90 for
    /// `sched_cfs_period_timer` (cpumax-root@7.3), 35 and 60 µs at p10 and p50 for
    /// `dl_task_timer` and 29 and 44 µs for `inactive_task_timer` (deadline-2@7.3), as the
    /// tick's 24-26 and 42-47 µs.
    pub(super) fn sched_timer(&mut self, s: &mut Sched, t: SchedTimer) -> bool {
        let late = self.irq_delay(s.timer_cpu(t), self.now);
        if late == 0 {
            return s.timer(t, self);
        }
        (self.queue).push(self.now + late, self.now, Ev::SchedIrq(t));
        true
    }

    /// A sleep or timer of `id` ends.
    pub(super) fn timer_fired(&mut self, s: &mut Sched, id: u32, gen: u32, kicked: bool) -> bool {
        if !self.sleeping(s, id, gen) {
            return false;
        }
        let cpu = s.task_cpu(id);
        // (none on the idealized machine, which wakes at once, as `Overhead::hold`)
        let kick = if kicked || !self.cpus[cpu].asleep || !self.overhead.on() {
            0
        } else {
            self.cpu_draw(&self.plat.halt_exit_ns, Draw::Kick, cpu, self.now)
        };
        if kick > 0 {
            // A halted vCPU takes the interrupt once the emulator's kick has it running.
            let ev = Ev::Wake {
                task: id,
                gen,
                kicked: true,
            };
            self.queue.push(self.now + kick, self.now, ev);
            return true;
        }
        s.count_op(cpu, Op::HrtimerIrq, 1);
        if !self.cpus[cpu].asleep {
            // A running vCPU takes the interrupt when the emulator gets to it.
            let entry = self.cpu_draw(&self.plat.irq_entry_ns, Draw::IrqEntry, cpu, self.now);
            self.overhead.hold(cpu, self.now, entry);
        }
        self.hrtimer_interrupt(s, cpu, Some((id, gen)));
        let c = &self.cpus[cpu];
        if s.cpu_curr(cpu).is_none() && !s.need_resched(cpu) && c.waking == 0 {
            self.idle_exit(s, cpu);
        }
        true
    }

    /// `cpuidle_select` for `cpu` going idle now: the state its next timer allows.
    fn idle_select(&mut self, cpu: usize) -> usize {
        let threads = &self.threads;
        let live = |task: u32, gen: u32| threads[task as usize].wake_gen == gen;
        let sleep = self.next_timers.sleep_length(cpu, self.now, live);
        let domain = self.plat.cpus[cpu].freq_domain;
        cpuidle::select(&self.plat.freq_domains[domain].idle_states, sleep)
    }

    /// Idle `cpu` enters idle state `state`.
    fn enter_state(&mut self, cpu: usize, state: usize) {
        self.energy.set_idle(cpu, Some(state), self.now);
        self.cpus[cpu].asleep = true;
    }

    /// A timer interrupt woke idle `cpu`, which stays idle (the sleeper went elsewhere): it
    /// leaves its idle state, and enters the one its next timer allows 1 ns later.
    fn idle_exit(&mut self, s: &Sched, cpu: usize) {
        self.energy.set_idle(cpu, None, self.now);
        self.cpus[cpu].asleep = false;
        if self.tracing {
            let exit = Tracepoint::CpuIdle {
                cpu,
                state: PWR_EVENT_EXIT,
            };
            self.emit(s.tasks(), &exit);
        }
        let c = &mut self.cpus[cpu];
        c.awake = true;
        c.changed_at = self.now;
        self.arm_done(s, cpu);
    }

    /// Idle `cpu`, out of its idle state for an interrupt, enters the one its next timer
    /// allows; false when it is not out of one.
    fn idle_enter(&mut self, s: &Sched, cpu: usize) -> bool {
        if s.cpu_curr(cpu).is_some() || !std::mem::take(&mut self.cpus[cpu].awake) {
            return false;
        }
        let state = self.idle_select(cpu);
        self.enter_state(cpu, state);
        if self.tracing {
            let state = state as u32;
            self.emit(s.tasks(), &Tracepoint::CpuIdle { cpu, state });
        }
        true
    }

    /// Thread `id` still sleeps the sleep of wake generation `gen`.
    fn sleeping(&self, s: &Sched, id: u32, gen: u32) -> bool {
        self.threads[id as usize].wake_gen == gen && s.task(id).state == TaskState::Sleeping
    }

    /// `hrtimer_interrupt` on `cpu`, for the timer `firing` (if any): `__hrtimer_run_queues`
    /// takes every timer whose range has begun, then their sleepers wake in expiry order (a
    /// woken thread runs only after the interrupt: a sleep it starts is not in this one).
    /// Each wakeup is a scheduling event of `cpu` (`Ev::Wakeup`), and `try_to_wake_up` takes
    /// its time: the k-th comes k times the first one's kernel work after the first is
    /// queued (k ns on the idealized machine), so two CPUs whose interrupts come close
    /// together wake their sleepers in turn, as the kernel's CPUs do at once: a second
    /// sleeper's placement sees the other CPU's first one, not one CPU's whole batch placed
    /// before the other's. Its return acts on a lazy reschedule (`Sched::irq_exit`).
    pub(super) fn hrtimer_interrupt(
        &mut self,
        s: &mut Sched,
        cpu: usize,
        firing: Option<(u32, u32)>,
    ) {
        let mut fired = std::mem::take(&mut self.fired);
        fired.extend(firing);
        while let Some(t) = self.hrtimers.expired(cpu, self.now) {
            if Some(t) != firing {
                fired.push(t);
            }
        }
        fired.retain(|&(id, gen)| self.sleeping(s, id, gen));
        // The sleepers after the first: their own expiries' events go stale, this interrupt
        // takes them.
        for (task, gen) in fired.iter_mut().skip(1) {
            let th = &mut self.threads[*task as usize];
            th.wake_gen = th.wake_gen.wrapping_add(1);
            *gen = th.wake_gen;
        }
        if let Some((&(first, _), rest)) = fired.split_first() {
            let before = self.kernel_pending(s, cpu); // the interrupt's own work
            self.in_irq = true;
            let later = self.wake(s, first, cpu, 0);
            self.in_irq = false;
            if later {
                self.cpus[cpu].irq_rest.extend_from_slice(rest);
            } else {
                let step = (self.kernel_pending(s, cpu) - before).max(1);
                self.wake_in_turn(cpu, rest, step);
            }
        }
        fired.clear();
        self.fired = fired;
        s.irq_exit(cpu, self);
    }

    /// An interrupt's sleepers `rest` (with their wake generations) wake one after the
    /// other from `cpu`, the k-th k `step`s from now (`Ev::Wakeup`).
    fn wake_in_turn(&mut self, cpu: usize, rest: &[(u32, u32)], step: Ns) {
        for (k, &(task, gen)) in rest.iter().enumerate() {
            let ev = Ev::Wakeup {
                task,
                gen,
                waker: cpu as u16, // NR_CPUS is 4096
                flags: 0,
                irq: true,
            };
            self.queue
                .push(self.now + (k as Ns + 1) * step, self.now, ev);
            self.deferred_wakes += 1;
        }
    }

    /// The running thread stops: sleep, block or exit.
    #[inline]
    pub(super) fn block_current(&mut self, s: &mut Sched, id: u32, state: TaskState) {
        let cpu = s.task_cpu(id);
        self.going_to_sleep[cpu] = false;
        self.progress(s, id, cpu);
        s.deactivate(id, state, self);
    }

    /// Sleep the running thread `id` until `at` (`hrtimer_nanosleep`, its system call
    /// counted by the caller): a fair task's timer may end up to its slack later; an RT or
    /// deadline task's has none.
    pub(super) fn sleep_until(&mut self, s: &mut Sched, id: u32, at: u64) {
        let slack = s.timer_slack_ns(id);
        self.sleep_between(s, id, at, at + slack);
    }

    /// Sleep the running thread `id` on a timer that may fire from `at` to `hard`.
    pub(super) fn sleep_between(&mut self, s: &mut Sched, id: u32, at: u64, hard: u64) {
        self.arm_sleep(s, id, at, hard);
        self.block_current(s, id, TaskState::Sleeping);
    }

    /// Arm thread `id`'s sleep timer: it may fire from `at` to `hard`.
    pub(super) fn arm_sleep(&mut self, s: &Sched, id: u32, at: u64, hard: u64) {
        let gen = self.threads[id as usize].wake_gen;
        let cpu = s.task(id).cpu;
        self.hrtimers.start(cpu, at, hard, id, gen);
        self.next_timers.arm(cpu, self.now, hard, id, gen);
        // The interrupt comes its entry latency after the hard expiry (`sim/jitter.rs`).
        let irq = hard + self.irq_delay(cpu, hard);
        let ev = Ev::Wake {
            task: id,
            gen,
            kicked: false,
        };
        self.queue.push(irq, self.now, ev);
    }

    /// Create a thread from rt-app task `def` (by `parent`, or at start; `forked` by a
    /// thread's `fork` event); false when the scheduler refused it.
    pub(super) fn fork_thread(
        &mut self,
        s: &mut Sched,
        def: usize,
        parent: Option<u32>,
        forked: bool,
    ) -> bool {
        let id = s.tasks().len() as u32;
        let (pid, comm, attr, cpus, mut thread) = self.new_thread(def, id, forked, self.now);
        let index = self.workload_index(id);
        thread.start_offset +=
            super::jitter::start_delay(s.feat().seed, s.feat().start_spread_ns, index);
        let barrier = thread.meets_start_barrier();
        self.threads.push(thread);
        let accepted = s.wake_up_new_task(pid, comm, &attr, cpus, parent, self);
        self.alive += accepted as u32;
        if !accepted && barrier {
            // Refused: it never runs and the others no longer wait for it; when they all
            // already do, the barrier opens, from its creator's CPU.
            let (needed, waiting) = &mut self.res.start_barrier;
            *needed -= 1;
            if let Some(p) =
                parent.filter(|_| !waiting.is_empty() && waiting.len() as u32 == *needed)
            {
                let all = std::mem::take(waiting);
                self.wake_all(s, p, all);
            }
        }
        accepted
    }

    /// Boot: the governors take their policies over, then every thread is forked.
    pub(super) fn start(&mut self, s: &mut Sched) {
        self.booting = true;
        self.start_governors(s);
        self.start_caps();
        s.sched_init_smp(self);
        self.boot_newidle_costs(s);
        self.fork_kthreads(s);
        self.main_marker(s, "start");
        self.alive = 1; // the workload to come: the machine's threads alone do not end the run
        let phase = s.feat().rtapp_start_ns;
        if phase == 0 {
            self.begin(s);
        } else {
            self.queue.push(self.now + phase, self.now, Ev::Begin);
        }
        self.booting = false;
        self.boot_states(s);
    }

    /// Each CPU's newly idle cost as boot leaves it (with the cost model on: passes take
    /// no time otherwise).
    fn boot_newidle_costs(&mut self, s: &mut Sched) {
        let q = self.plat.start_newidle_cost_for(s.feat().kernel);
        if !self.overhead.on() || q.is_empty() {
            return;
        }
        for cpu in 0..s.nr_cpu_ids() {
            s.inherit_newidle_cost(cpu, self.cpu_draw(q, Draw::BootNewidle, cpu, 0));
        }
    }

    /// The workload begins: rt-app's main thread, when there is one, creates the threads of
    /// the tasks before it; generators' threads start at once.
    pub(super) fn begin(&mut self, s: &mut Sched) {
        let first = self.prog.main.unwrap_or(0);
        for def in first..self.prog.tasks.len() {
            for _ in 0..self.prog.tasks[def].instance {
                self.fork_thread(s, def, None, false);
            }
        }
        self.alive -= 1; // (its threads, if any, keep it going now)
    }

    /// Every CPU's frequency and idle state as boot leaves them, so that a CPU whose
    /// frequency never changes, or that stays idle, has them in the trace too.
    fn boot_states(&mut self, s: &Sched) {
        if !self.tracing {
            return;
        }
        for cpu in 0..s.nr_cpu_ids() {
            let d = self.plat.cpus[cpu].freq_domain;
            let khz = self.cpufreq.policies[d].cur;
            self.emit(s.tasks(), &Tracepoint::CpuFrequency { cpu, khz });
        }
        for cpu in 0..s.nr_cpu_ids() {
            if s.cpu_curr(cpu).is_none() {
                let state = self.energy.idle_state(cpu) as u32;
                self.emit(s.tasks(), &Tracepoint::CpuIdle { cpu, state });
            }
        }
    }

    /// A CPU's energy when it has just been charged (at each idle entry and exit).
    fn energy_counter(&mut self, cpu: usize) {
        if self.tracing {
            self.counter(cpu, Counter::Energy, self.energy.cpu_mj[cpu]);
        }
    }

    /// Name the threads that can never proceed, as the kernel's hung-task detector would.
    pub(super) fn report_deadlock(&mut self, s: &Sched) {
        let stuck: Vec<String> = (s.tasks().iter().zip(0..))
            .filter(|(t, _)| t.state == TaskState::Blocked)
            .filter(|&(_, id)| self.res.joiner != Some(id)) // it waits for these
            .map(|(t, id)| format!("{} ({})", t.comm, self.res.blocked_on(id, t.pid)))
            .collect();
        self.totals.deadlock = Some(format!(
            "deadlock at {:.6} s: {} can never proceed",
            (self.now - SIM_START) as f64 / 1e9,
            stuck.join(", ")
        ));
    }

    /// The end (`shutdown`: the duration expired): time charged up to now everywhere,
    /// observers flushed.
    pub(super) fn finish(&mut self, s: &mut Sched, shutdown: bool) -> std::io::Result<()> {
        if shutdown {
            self.main_marker(s, "shutdown");
        }
        self.main_marker(s, "end");
        let end = self.now;
        for cpu in 0..s.nr_cpu_ids() {
            match s.cpu_curr(cpu) {
                Some(id) => self.progress(s, id, cpu), // charges the CPU, then the thread
                None => _ = self.overhead.sync(cpu, end, s.ops().of(cpu)),
            }
        }
        self.totals.end = end;
        s.account_states(end);
        for c in &mut self.cpus {
            if let Some(since) = c.busy_since.take() {
                c.busy_ns += end - since;
            }
        }
        self.cpufreq.finish(end);
        self.energy.finish(end);
        let mut result = Ok(());
        for o in &mut self.observers {
            if let Err(e) = o.finish(s.tasks()) {
                result = Err(e);
            }
        }
        result
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

/// The cache-affinity model at a context switch `sw` on `cpu` at `now`: the thread leaving
/// marks where its working set is; the one arriving stalls while it refills.
fn cache_switch(
    cache: &CacheModel,
    topo: &Topology,
    threads: &mut [Thread],
    overhead: &mut Overhead,
    (cpu, sw, now): (usize, Switch, Ns),
) {
    if let Some(p) = sw.prev {
        // A refill cut short by the thread leaving (or exiting at once) is not finished.
        let t = &mut threads[p as usize];
        let undone = overhead.unstall(cpu, now, t.stall_pending);
        t.refill_ns -= undone;
        t.stall_pending = 0;
        t.warm.leave(cpu, now);
    }
    if let Some(n) = sw.next {
        let t = &mut threads[n as usize];
        let moved = (t.warm.left).map(|(last, at)| (topo.distance(last, cpu), now - at));
        let ns = cache.refill_ns(t.warm.bytes, moved);
        t.refill_ns += ns;
        t.stall_pending += ns;
        overhead.stall(cpu, now, ns);
    }
}

/// `a / b` rounded up, by a 64-bit division when both fit: a 128-bit one is a library call
/// several times slower, on every piece of work armed.
#[inline]
fn div_ceil(a: u128, b: u128) -> u128 {
    match (u64::try_from(a), u64::try_from(b)) {
        (Ok(a), Ok(b)) => a.div_ceil(b) as u128,
        _ => a.div_ceil(b),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// The 64-bit path rounds up exactly as the 128-bit division does, either side of
        /// 2^64.
        #[test]
        fn div_ceil_is_the_128_bit_division(a in any::<u128>(), b in 1..u128::MAX, shift in 0u32..128) {
            for (a, b) in [(a, b), (a >> shift, b >> shift.min(b.ilog2())), (a >> 64, b >> 64 | 1)] {
                prop_assert_eq!(super::div_ceil(a, b), a.div_ceil(b));
            }
        }
    }
}
