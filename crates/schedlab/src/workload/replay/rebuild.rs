//! A trace's threads rebuilt as programs (`schedlab replay`): each running stretch becomes
//! work in capacity-invariant units (its time × the CPU's capacity / 1024 × its frequency /
//! its highest, what rt-app's `run` counts), and each sleep is either a dependency or a
//! time. A thread woken by another (the task running on the waking CPU, outside interrupt
//! context) waits for it: the sleeper waits on its own semaphore (`sem_wait`) and the waker
//! posts it (`sem_post`) at that point of its own program, so the order survives another
//! kernel or machine. A thread woken from an interrupt (or an idle CPU) sleeps for the time
//! it slept, on a timer of its own expiring when it woke: absolute times, which do not drift
//! when a run takes longer than in the trace. Simplified: the timer expires at the observed
//! wakeup (its slack and interrupt latency included).
//!
//! A thread preempted by one it woke in that stretch, and run again only once that one's
//! stretch ended, is taken to wait for its reply when the two wake each other elsewhere in
//! the trace (a pipe's or socket's ping-pong: on one CPU the wakee preempts the writer,
//! replies and blocks, and the writer's read finds the reply without sleeping, so the trace
//! shows no wakeup that would make the writer wait; without the wait the writer would run
//! ahead of its reader). Otherwise (a thread resuming workers that never wake it) it yields
//! there (`sched_yield`): the wakee runs first if it is queued on the same CPU, as in the
//! trace, and nothing waits. Simplified: the reply is posted at the end of the wakee's
//! stretch.
//!
//! A running stretch in the trace holds what a run of the rebuild adds again (`RunAdds`):
//! the kernel's own work done in it (the switch that ran the thread, the wakeups it did,
//! the sleep's system call), which the cost model charges at the platform's costs
//! (`sim/overhead.rs`), and the platform's work stretch (an emulator's, `sim/jitter.rs`).
//! The rebuild takes the charges off each stretch, as the cost model prices them for the
//! trace's kernel, and divides the rest by the mean stretch. The ticks that came during a
//! stretch and a timer's interrupt on a busy CPU (its entry, an emulator's, and its work)
//! are taken off too. Simplified: PELT and balancing work stay in the stretches (under 1%
//! of a stretch at the default costs), a sleep taken as a timer only where interrupt
//! context is unknown keeps its system call, ticks are counted on the trace's clock from
//! 0, and every stretch is divided by the same mean.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::error::InputError;
use crate::kernel::Kernel;
use crate::platform::{OpCosts, Platform};
use crate::sched::features::Features;
use crate::sched::latency::Latencies;
use crate::sched::ops::Op;
use crate::time::Ns;

/// `prev_state`'s task-state bits (`TASK_REPORT`); 0 is a preempted, runnable task.
const STATE_MASK: i64 = 0xff;
/// `EXIT_DEAD` and `EXIT_ZOMBIE`, as `sched_switch` reports them.
const DEAD: i64 = 0x10 | 0x20;

/// One step of a rebuilt thread's program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Work, in ns at the largest capacity and the highest frequency.
    Run(Ns),
    /// A sleep of this long (its end unseen: woken before the trace said how).
    Sleep(Ns),
    /// A sleep until this time from the trace's start (an interrupt's wakeup).
    Timer(Ns),
    /// Wait until another thread posts this one's semaphore (the trace saw the wakeup at
    /// this time from its start).
    Wait(Ns),
    /// Post the semaphore of this thread (its index among the rebuilt threads).
    Post(usize),
    /// Give the CPU to the thread it just woke (`sched_yield`).
    Yield,
}

/// What the trace shows of a thread, to set beside a run of its rebuild (`--check`).
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// Time on a CPU.
    pub run_ns: Ns,
    /// Wakeups from a sleep.
    pub wakeups: u64,
    /// From each wakeup to the switch that ran it.
    pub latency: Latencies,
    /// Moves to another CPU (`sched_migrate_task`; without it, switches in on another CPU
    /// than its last).
    pub migrations: u64,
    /// Wakeups after which it ran on the CPU it ran on last (placement: same CPU).
    pub wake_prev: u64,
    /// Switches in on another CPU than its last.
    moved: u64,
    woken_at: Option<Ns>,
    last_cpu: Option<usize>,
}

/// A rebuilt thread.
#[derive(Debug, Clone)]
pub struct Thread {
    pub pid: i32,
    /// Earlier threads of this pid (a pid reused after an exit).
    pub reuse: u32,
    pub comm: String,
    /// `prio` as `sched_switch` reports it (120 + nice for a fair task, 99 − priority for a
    /// real-time one).
    pub prio: i32,
    /// When it first appears, from the trace's start.
    pub start: Ns,
    pub steps: Vec<Step>,
    pub observed: Observed,
    /// Work not yet a step.
    pending: f64,
    /// The kernel's work in it, which a run charges again.
    kernel: f64,
    /// Since when it sleeps (None: running or runnable).
    asleep: Option<Ns>,
    /// Woken by an idle CPU at least once (an interrupt's wakeup).
    idle_woken: bool,
    /// Where its current stretch's steps start.
    stretch: usize,
    /// Preempted by this thread, which it woke (the index of the preemption in
    /// `Rebuild::preempted`).
    after: Option<(usize, usize)>,
    /// The thread it preempted after being woken by it.
    then_post: Option<usize>,
}

impl Thread {
    /// Its task's name in the workload: `<comm>-<pid>`, and `.N` for the pid's N-th reuse.
    pub fn name(&self) -> String {
        match self.reuse {
            0 => format!("{}-{}", self.comm, self.pid),
            n => format!("{}-{}.{n}", self.comm, self.pid),
        }
    }
}

/// `sched_switch`'s fields the rebuild reads.
#[derive(Debug, Clone, Copy)]
pub struct Switch<'a> {
    pub prev: i32,
    pub prev_comm: &'a str,
    pub prev_state: i64,
    pub prev_prio: i32,
    pub next: i32,
    pub next_comm: &'a str,
    pub next_prio: i32,
}

/// A scheduler event as the rebuild reads it, from either trace format.
#[derive(Debug, Clone, Copy)]
pub enum SchedEvent<'a> {
    Switch(Switch<'a>),
    /// `sched_waking` of `target` in the context of `waker` (0: idle; None: not recorded,
    /// the task running on the CPU, as Perfetto's compact_sched implies it), in a hard
    /// interrupt or not (`common_flags`).
    Waking {
        waker: Option<i32>,
        target: i32,
        irq: bool,
    },
    /// `task_rename`.
    Rename {
        pid: i32,
        comm: &'a str,
    },
    /// `cpu_frequency`.
    Frequency {
        cpu: usize,
        khz: u64,
    },
    /// `sched_migrate_task` of `pid`.
    Migrate {
        pid: i32,
    },
}

/// What a run of the rebuild adds to a stretch's time, to be taken off.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunAdds {
    /// The cost model's prices (None: it is off).
    pub costs: Option<OpCosts>,
    /// The work's mean stretch (None: none).
    pub stretch: Option<f64>,
    /// The tick's period (0: no ticks taken off).
    pub tick_ns: Ns,
    /// The mean time a running CPU takes to enter a timer's interrupt (an emulator's).
    pub irq_entry_ns: f64,
}

impl RunAdds {
    /// What a run on `plat` under `kernel` with switches `f` adds.
    pub fn of(plat: &Platform, kernel: Kernel, f: &Features) -> RunAdds {
        let mean =
            |q: &[u64]| (!q.is_empty()).then(|| q.iter().sum::<u64>() as f64 / q.len() as f64);
        RunAdds {
            costs: f.overhead.then(|| plat.costs_for(kernel)),
            stretch: mean(&plat.work_stretch)
                .filter(|_| f.work_jitter)
                .map(|m| m / 1000.0),
            tick_ns: 1_000_000_000 / f.hz as Ns,
            irq_entry_ns: mean(&plat.irq_entry_ns).unwrap_or(0.0),
        }
    }
}

/// A trace rebuilt.
pub struct Rebuilt {
    pub threads: Vec<Thread>,
    /// From its first record to its last.
    pub length: Ns,
    /// Each CPU's time running a thread.
    pub cpu_busy: Vec<Ns>,
    /// Each CPU's time at each frequency (kHz, ns), from `cpu_frequency` (none without).
    pub residency: Vec<Vec<(u64, Ns)>>,
    /// What the rebuild assumed.
    pub notes: Vec<String>,
}

/// A thread preempted by one it had just woken.
struct Preemption {
    /// The thread it woke, and that thread's post of its reply (a step), if taken as one.
    by: usize,
    reply: Option<usize>,
    /// The thread preempted, and its step there (a yield, or the wait for the reply).
    thread: usize,
    step: usize,
}

/// The rebuild as the trace is read.
pub struct Rebuild {
    threads: Vec<Thread>,
    by_pid: HashMap<i32, usize>,
    /// Each pid's threads that exited.
    reused: HashMap<i32, u32>,
    /// Each CPU's running thread (index) and since when it runs there.
    running: Vec<Option<(usize, Ns)>>,
    /// Each CPU's capacity at its highest frequency, that frequency and its frequency now.
    capacity: Vec<u32>,
    max_khz: Vec<u64>,
    khz: Vec<u64>,
    start: Option<Ns>,
    last: Ns,
    /// Each CPU's time at each frequency, and since when it is at its frequency now (None:
    /// no `cpu_frequency` event yet).
    residency: Vec<BTreeMap<u64, Ns>>,
    freq_since: Vec<Option<Ns>>,
    /// A `sched_migrate_task` event was seen.
    migrates: bool,
    /// Each CPU's time running a thread.
    busy: Vec<Ns>,
    /// The trace says which wakings ran in an interrupt.
    contexts: bool,
    /// What a run adds.
    adds: RunAdds,
    /// Each preemption by a thread just woken.
    preempted: Vec<Preemption>,
    /// Each (waker, wakee) pair of a task's wakeup.
    woke: HashSet<(usize, usize)>,
}

impl Rebuild {
    /// A rebuild of the trace `origin` of `nr_cpus` CPUs, its CPUs those of `plat`, what a
    /// run `adds` taken off the stretches.
    pub fn new(
        nr_cpus: usize,
        plat: &Platform,
        adds: RunAdds,
        origin: &str,
    ) -> Result<Rebuild, InputError> {
        if nr_cpus > plat.cpus.len() {
            let msg = format!(
                "the trace has {} CPUs, platform {} has {}",
                nr_cpus,
                plat.name,
                plat.cpus.len()
            );
            return Err(InputError::new(origin, msg));
        }
        let max_khz: Vec<u64> = (plat.cpus.iter())
            .map(|c| {
                plat.freq_domains[c.freq_domain]
                    .opps
                    .last()
                    .map_or(1, |o| o.khz as u64)
            })
            .collect();
        Ok(Rebuild {
            threads: vec![],
            by_pid: HashMap::new(),
            reused: HashMap::new(),
            running: vec![None; plat.cpus.len()],
            capacity: plat.cpus.iter().map(|c| c.capacity_orig).collect(),
            khz: max_khz.clone(),
            max_khz,
            start: None,
            last: 0,
            residency: vec![BTreeMap::new(); plat.cpus.len()],
            freq_since: vec![None; plat.cpus.len()],
            migrates: false,
            busy: vec![0; plat.cpus.len()],
            contexts: true,
            adds,
            preempted: vec![],
            woke: HashSet::new(),
        })
    }

    /// Thread `pid`'s index, added (starting at `start` from the trace's start) when first
    /// seen; `comm` names it if nothing has yet, and `prio` is its prio now.
    fn thread(&mut self, pid: i32, comm: &str, prio: i32, start: Ns) -> usize {
        let reuse = self.reused.get(&pid).copied().unwrap_or(0);
        let t = *self.by_pid.entry(pid).or_insert_with(|| {
            self.threads.push(Thread {
                pid,
                reuse,
                comm: comm.to_string(),
                prio,
                start,
                steps: vec![],
                observed: Observed::default(),
                pending: 0.0,
                kernel: 0.0,
                asleep: None,
                idle_woken: false,
                stretch: 0,
                after: None,
                then_post: None,
            });
            self.threads.len() - 1
        });
        let th = &mut self.threads[t];
        if th.comm.is_empty() {
            th.comm = comm.to_string();
        }
        th.prio = prio;
        t
    }

    /// CPU `cpu`'s time at its frequency, up to `now`.
    fn at_frequency(&mut self, cpu: usize, now: Ns) {
        let since = self.freq_since[cpu]
            .replace(now)
            .or(self.start)
            .unwrap_or(now);
        *self.residency[cpu].entry(self.khz[cpu]).or_default() += now - since;
    }

    /// The work CPU `cpu` does per ns now.
    fn scale(&self, cpu: usize) -> f64 {
        self.capacity[cpu] as f64 / 1024.0 * self.khz[cpu] as f64 / self.max_khz[cpu] as f64
    }

    /// The work CPU `cpu` did from `since` to `now`.
    fn work(&self, cpu: usize, since: Ns, now: Ns) -> f64 {
        (now - since) as f64 * self.scale(cpu)
    }

    /// Operation `op` on `cpu`, as work: what a run charges for it.
    fn charge(&self, cpu: usize, op: Op) -> f64 {
        (self.adds.costs).map_or(0.0, |c| c.get(op) as f64 * self.scale(cpu))
    }

    /// What ran on `cpu` until `now` counted to its thread.
    fn account(&mut self, cpu: usize, now: Ns) {
        if let Some((t, since)) = self.running[cpu] {
            let w = self.work(cpu, since, now);
            self.threads[t].pending += w;
            // The ticks that came while it ran, each charged to it.
            if let Some(tick) = std::num::NonZeroU64::new(self.adds.tick_ns) {
                let ticks = now / tick - since / tick;
                self.threads[t].kernel += ticks as f64 * self.charge(cpu, Op::Tick);
            }
            self.threads[t].observed.run_ns += now - since;
            self.busy[cpu] += now - since;
            self.running[cpu] = Some((t, now));
        }
    }

    /// Thread `t`'s pending work, what a run adds taken off, as a step.
    fn flush(&mut self, t: usize) {
        let stretch = self.adds.stretch.unwrap_or(1.0);
        let th = &mut self.threads[t];
        let work = (th.pending - std::mem::take(&mut th.kernel)).max(0.0) / stretch;
        let ns = work.round();
        if ns >= 1.0 {
            th.steps.push(Step::Run(ns as Ns));
        }
        th.pending = (work - ns) * stretch;
    }

    /// One event, at `ts` on `cpu`.
    pub fn event(&mut self, ts: Ns, cpu: usize, ev: SchedEvent) {
        self.start.get_or_insert(ts);
        self.last = ts;
        match ev {
            SchedEvent::Switch(sw) => {
                self.switch_out(ts, cpu, &sw);
                self.switch_in(ts, cpu, &sw);
            }
            SchedEvent::Waking { waker, target, irq } => self.waking(ts, cpu, waker, target, irq),
            SchedEvent::Rename { pid, comm } => {
                if let Some(&t) = self.by_pid.get(&pid) {
                    self.threads[t].comm = comm.to_string();
                }
            }
            SchedEvent::Frequency { cpu: c, khz } => {
                if c < self.khz.len() {
                    self.account(c, ts);
                    self.at_frequency(c, ts);
                    self.khz[c] = khz.min(self.max_khz[c]);
                }
            }
            SchedEvent::Migrate { pid } => {
                self.migrates = true;
                if let Some(&t) = self.by_pid.get(&pid) {
                    self.threads[t].observed.migrations += 1;
                }
            }
        }
    }

    /// `prev` (0: idle) leaves `cpu` at `ts` in state `prev_state`: asleep, dead, or still
    /// runnable (preempted).
    fn switch_out(&mut self, ts: Ns, cpu: usize, sw: &Switch) {
        self.account(cpu, ts);
        self.running[cpu] = None;
        let prev = sw.prev;
        if prev == 0 {
            return;
        }
        // First seen leaving the CPU: it ran from before the trace.
        let t = self.thread(prev, sw.prev_comm, sw.prev_prio, 0);
        let state = sw.prev_state & STATE_MASK;
        if state & DEAD != 0 {
            // Its last switch, where its program ends: the pid's next thread is another.
            self.flush(t);
            self.by_pid.remove(&prev);
            *self.reused.entry(prev).or_default() += 1;
        } else if state != 0 {
            self.flush(t);
            self.threads[t].asleep = Some(ts);
        } else if let Some(&next) = self.by_pid.get(&sw.next) {
            // Preempted by the thread it woke: it yields to it there, or waits for its reply.
            let th = &self.threads[t];
            if th.steps[th.stretch..].contains(&Step::Post(next)) {
                self.flush(t);
                self.threads[t].steps.push(Step::Yield);
                self.threads[t].after = Some((next, self.preempted.len()));
                self.preempted.push(Preemption {
                    by: next,
                    reply: None,
                    thread: t,
                    step: self.threads[t].steps.len() - 1,
                });
                self.threads[next].then_post = Some(t);
            }
        }
        self.reply(ts, t);
    }

    /// Thread `b`'s stretch ended at `ts`: a thread it preempted after being woken by it,
    /// and that has not run since, waits there for a post at this point of `b`'s program
    /// (kept in `finish` if the two wake each other elsewhere).
    fn reply(&mut self, ts: Ns, b: usize) {
        let Some(a) = self.threads[b].then_post.take() else {
            return;
        };
        let Some((_, i)) = self.threads[a].after.take_if(|(w, _)| *w == b) else {
            return;
        };
        self.flush(b);
        self.threads[b].steps.push(Step::Post(a));
        let at = ts - self.start.unwrap_or(ts);
        let p = &mut self.preempted[i];
        p.reply = Some(self.threads[b].steps.len() - 1);
        self.threads[a].steps[p.step] = Step::Wait(at);
    }

    /// `next` (0: idle) runs on `cpu` from `ts`.
    fn switch_in(&mut self, ts: Ns, cpu: usize, sw: &Switch) {
        if sw.next == 0 {
            return;
        }
        let since_start = ts - self.start.unwrap_or(ts);
        let t = self.thread(sw.next, sw.next_comm, sw.next_prio, since_start);
        // On again before the one it woke ended its stretch: it did not wait for it.
        if let Some((b, _)) = self.threads[t].after.take() {
            self.threads[b].then_post = None;
        }
        let th = &mut self.threads[t];
        // Woken unseen (before the trace, or its waking not recorded): its sleep ends now.
        if let Some(since) = th.asleep.take() {
            th.steps.push(Step::Sleep(ts - since));
        }
        th.stretch = th.steps.len();
        let seen = &mut th.observed;
        if let Some(w) = seen.woken_at.take() {
            seen.latency.record(ts - w);
            seen.wake_prev += (seen.last_cpu == Some(cpu)) as u64;
        }
        seen.moved += seen.last_cpu.is_some_and(|c| c != cpu) as u64;
        seen.last_cpu = Some(cpu);
        self.running[cpu] = Some((t, ts));
        self.threads[t].kernel += self.charge(cpu, Op::ContextSwitch);
    }

    /// `waker` (the pid running on `cpu`, 0: idle; None: whichever runs there) wakes
    /// `target`, in interrupt context or not.
    fn waking(&mut self, ts: Ns, cpu: usize, waker: Option<i32>, target: i32, irq: bool) {
        let Some(&t) = self.by_pid.get(&target) else {
            // First seen asleep: its program starts with this wakeup.
            let since_start = ts - self.start.unwrap_or(ts);
            self.thread(target, "", 120, since_start);
            return;
        };
        if self.threads[t].asleep.take().is_none() {
            return; // not asleep: nothing to wait for
        }
        let at = ts - self.start.unwrap_or(ts);
        let th = &mut self.threads[t];
        th.idle_woken |= waker.map_or(self.running[cpu].is_none(), |w| w == 0);
        th.observed.wakeups += 1;
        th.observed.woken_at = Some(ts);
        // The wakeup's work, done on this CPU after `sched_waking` (the start of
        // try_to_wake_up): in the stretch of the task running there, from the waking on;
        // none for a wakeup queued to another, idle CPU (`ttwu_queue_cond`), which that CPU
        // does. Simplified: the wakee's last CPU is taken as its target.
        let target_cpu = th.observed.last_cpu.unwrap_or(cpu);
        let wakeup = match (target_cpu == cpu, self.running[target_cpu].is_none()) {
            (true, _) => self.charge(cpu, Op::WakeupLocal),
            (false, false) => self.charge(cpu, Op::WakeupRemote),
            (false, true) => 0.0,
        };
        let running = self.running[cpu].filter(|&(w, _)| w != t);
        if running.is_some() {
            self.account(cpu, ts);
        }
        match running.filter(|&(w, _)| !irq && waker.is_none_or(|p| self.threads[w].pid == p)) {
            Some((w, _)) => {
                self.flush(w);
                self.threads[w].steps.push(Step::Post(t));
                self.threads[w].kernel += wakeup;
                self.threads[t].steps.push(Step::Wait(at));
                self.woke.insert((w, t));
            }
            None => {
                // A timer's interrupt on a busy CPU: its entry and its work, and the wakeup.
                if let Some((w, _)) = running {
                    let entry = self.adds.irq_entry_ns * self.scale(cpu);
                    self.threads[w].kernel += wakeup + entry + self.charge(cpu, Op::HrtimerIrq);
                }
                let cpu = self.threads[t].observed.last_cpu.unwrap_or(cpu);
                let stretch = self.adds.stretch.unwrap_or(1.0);
                self.sleep_call(t, self.charge(cpu, Op::Nanosleep) / stretch);
                self.threads[t].steps.push(Step::Timer(at));
            }
        }
    }

    /// The system call of thread `t`'s sleep, `work` long, taken off the stretch before it.
    fn sleep_call(&mut self, t: usize, work: f64) {
        if let Some(Step::Run(ns)) = self.threads[t].steps.last_mut() {
            *ns -= (work.round() as Ns).min(*ns - 1);
        }
    }

    /// The trace recorded `sched_migrate_task` (its format is in a trace.dat), whether or not
    /// any thread migrated.
    pub fn migrations_recorded(&mut self) {
        self.migrates = true;
    }

    /// The trace does not say which wakings ran in an interrupt (text without latency
    /// columns): a waking on a CPU running a task was taken as that task's.
    pub fn contexts_unknown(&mut self) {
        self.contexts = false;
    }

    /// The threads, their last work counted, and what else the trace showed.
    pub fn finish(mut self) -> Rebuilt {
        let frequencies = self.freq_since.iter().any(Option::is_some);
        for cpu in 0..self.running.len() {
            self.account(cpu, self.last);
            if frequencies {
                self.at_frequency(cpu, self.last);
            }
        }
        for t in 0..self.threads.len() {
            self.flush(t);
        }
        let length = self.last - self.start.unwrap_or(self.last);
        let mut notes = vec![];
        if !frequencies {
            notes.push("no cpu_frequency event: every CPU at its highest frequency".into());
        }
        if !self.migrates {
            notes.push(
                "no sched_migrate_task event: a migration is a switch-in on another CPU".into(),
            );
            for th in &mut self.threads {
                th.observed.migrations = th.observed.moved;
            }
        }
        let timed: Vec<bool> = (self.threads.iter())
            .map(|t| !self.contexts && t.idle_woken)
            .collect();
        self.unreplied(&timed);
        if !self.contexts {
            let n = self.idle_woken_by_timers(&timed);
            notes.push(format!(
                "the trace does not say which wakings ran in an interrupt (trace-cmd report -l \
                 does): {n} threads an idle CPU woke are taken as woken by timers throughout"
            ));
        }
        let residency = (self.residency.into_iter())
            .map(|r| r.into_iter().collect())
            .collect();
        Rebuilt {
            threads: self.threads,
            length,
            cpu_busy: self.busy,
            residency,
            notes,
        }
    }

    /// A reply taken as waited for between two threads that never wake each other
    /// otherwise goes: the waiter yields there instead. Where one of them is `timed` (the
    /// "wakeup" that preempted may have been an interrupt's), neither stays.
    fn unreplied(&mut self, timed: &[bool]) {
        for p in &self.preempted {
            let timed = timed[p.thread] || timed[p.by];
            if p.reply.is_some() && !timed && self.woke.contains(&(p.by, p.thread)) {
                continue; // the wait for the reply stays
            }
            if let Some(post) = p.reply {
                self.threads[p.by].steps[post] = Step::Run(0);
            }
            self.threads[p.thread].steps[p.step] = if timed { Step::Run(0) } else { Step::Yield };
        }
        for th in &mut self.threads {
            th.steps.retain(|s| *s != Step::Run(0));
        }
    }

    /// Where interrupt context is unknown, a thread that an idle CPU woke (which only an
    /// interrupt does) is taken as woken by interrupts throughout: an interrupt on a busy
    /// CPU shows the task it interrupted as the waker. Its waits become timers at the
    /// observed wakeups, and its wakers' posts go (`unreplied` has taken the yields to it
    /// and its replies away). Simplified: a thread woken both by interrupts and by tasks
    /// loses its dependencies. Returns how many threads.
    fn idle_woken_by_timers(&mut self, timed: &[bool]) -> usize {
        for (i, th) in self.threads.iter_mut().enumerate() {
            let mut steps = Vec::with_capacity(th.steps.len());
            for step in th.steps.drain(..) {
                let step = match step {
                    Step::Post(t) if timed[t] => continue,
                    Step::Wait(at) if timed[i] => Step::Timer(at),
                    step => step,
                };
                match (steps.last_mut(), &step) {
                    (Some(Step::Run(a)), Step::Run(b)) => *a += b,
                    _ => steps.push(step),
                }
            }
            th.steps = steps;
        }
        timed.iter().filter(|&&t| t).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform;

    const US: Ns = 1000;
    const A: i32 = 101;
    const B: i32 = 102;
    const C: i32 = 103;
    /// `prev_state` of a task going to sleep (TASK_INTERRUPTIBLE) and of one exiting.
    const SLEEP: i64 = 1;
    const EXIT: i64 = 0x10;

    /// A, B and C's comms.
    fn comm(pid: i32) -> &'static str {
        ["", "a", "b", "c"][(pid - 100).clamp(0, 3) as usize]
    }

    fn switch(prev: i32, prev_state: i64, next: i32) -> SchedEvent<'static> {
        SchedEvent::Switch(Switch {
            prev,
            prev_comm: comm(prev),
            prev_state,
            prev_prio: 120,
            next,
            next_comm: comm(next),
            next_prio: 120,
        })
    }

    fn waking(waker: i32, target: i32, irq: bool) -> SchedEvent<'static> {
        SchedEvent::Waking {
            waker: Some(waker),
            target,
            irq,
        }
    }

    fn rebuild(
        platform: &str,
        events: &[(Ns, usize, SchedEvent)],
    ) -> (Vec<Thread>, Ns, Vec<Ns>, Vec<String>) {
        rebuild_with(platform, RunAdds::default(), true, events)
    }

    /// The rebuild with what a run `adds` taken off, the wakings' `contexts` known or not.
    fn rebuild_with(
        platform: &str,
        adds: RunAdds,
        contexts: bool,
        events: &[(Ns, usize, SchedEvent)],
    ) -> (Vec<Thread>, Ns, Vec<Ns>, Vec<String>) {
        let plat = platform::load_builtin(platform).unwrap();
        let mut rb = Rebuild::new(plat.cpus.len(), &plat, adds, "t.dat").unwrap();
        for &(ts, cpu, ev) in events {
            rb.event(ts, cpu, ev);
        }
        if !contexts {
            rb.contexts_unknown();
        }
        let r = rb.finish();
        (r.threads, r.length, r.cpu_busy, r.notes)
    }

    /// Each thread's steps, by pid.
    fn steps(threads: &[Thread], pid: i32) -> Vec<Step> {
        threads.iter().find(|t| t.pid == pid).unwrap().steps.clone()
    }

    /// One CPU's pipe ping-pong as the kernel traces it, µs: B runs 0–10 and sleeps; A runs
    /// 10–32, waking B at 30; B preempts A at 32 (A runnable, `R`), replies and sleeps at
    /// 40; A, on again, finds the reply without sleeping, wakes B at 45 and sleeps at 50;
    /// B runs and wakes A at 55 (the two wake each other), sleeping at 60; A runs to 70.
    /// A waits for B's reply: a post at B's 40.
    #[test]
    fn a_writer_preempted_by_its_reader_waits_for_the_reply() {
        let events = [
            (0, 0, switch(0, 0, B)),
            (10 * US, 0, switch(B, SLEEP, A)),
            (30 * US, 0, waking(A, B, false)),
            (32 * US, 0, switch(A, 0, B)),
            (40 * US, 0, switch(B, SLEEP, A)),
            (45 * US, 0, waking(A, B, false)),
            (50 * US, 0, switch(A, SLEEP, B)),
            (55 * US, 0, waking(B, A, false)),
            (60 * US, 0, switch(B, SLEEP, A)),
            (70 * US, 0, switch(A, SLEEP, 0)),
        ];
        let (threads, ..) = rebuild("smp:1", &events);
        use Step::*;
        let (b, a) = (0, 1); // their indices: B first seen
        assert_eq!(
            steps(&threads, A),
            [
                Run(20 * US),
                Post(b),
                Run(2 * US),
                Wait(40 * US),
                Run(5 * US),
                Post(b),
                Run(5 * US),
                Wait(55 * US),
                Run(10 * US)
            ]
        );
        assert_eq!(
            steps(&threads, B),
            [
                Run(10 * US),
                Wait(30 * US),
                Run(8 * US),
                Post(a),
                Wait(45 * US),
                Run(5 * US),
                Post(a),
                Run(5 * US)
            ]
        );
        // B never wakes A (a thread resuming a worker): A yields to B instead, B posts nothing.
        let (threads, ..) = rebuild("smp:1", &events[..7]);
        assert_eq!(steps(&threads, A)[3], Yield);
        assert_eq!(
            steps(&threads, B),
            [Run(10 * US), Wait(30 * US), Run(8 * US), Wait(45 * US)]
        );
        // A runs again (on CPU 1) before B's stretch ends: it did not wait; it yielded.
        let mut moved = events.to_vec();
        moved.insert(4, (35 * US, 1, switch(0, 0, A)));
        moved.insert(5, (38 * US, 1, switch(A, 0, 0)));
        let (threads, ..) = rebuild("smp:2", &moved);
        assert_eq!(steps(&threads, A)[3], Yield);
        // Preempted by another thread than the one it woke: neither.
        let mut other = events;
        other[3] = (32 * US, 0, switch(A, 0, C));
        let (threads, ..) = rebuild("smp:1", &other);
        let a_steps = steps(&threads, A);
        assert!(!a_steps.contains(&Yield) && !a_steps.contains(&Wait(40 * US)));
    }

    /// What a run adds, taken off (smp:1, capacity 1024 at its highest frequency: 1 ns of
    /// work per ns; the default costs: a context switch 610 ns, a local wakeup 305, a
    /// nanosleep 549; a work stretch of 1.25). B: 0–10 µs less its switch, / 1.25 = 7512. A:
    /// 10–30 less its switch, / 1.25 = 15512; then 30–40 less its wakeup of B (after the
    /// waking), / 1.25 = 7756, less its sleep's call of 549 / 1.25 (439) = 7317, before its
    /// timer.
    #[test]
    fn what_a_run_adds_is_taken_off_the_stretches() {
        let adds = RunAdds {
            costs: Some(OpCosts::default()),
            stretch: Some(1.25),
            ..RunAdds::default()
        };
        let events = [
            (0, 0, switch(0, 0, B)),
            (10 * US, 0, switch(B, SLEEP, A)),
            (30 * US, 0, waking(A, B, false)),
            (40 * US, 0, switch(A, SLEEP, 0)),
            (100 * US, 0, waking(0, A, true)),
        ];
        let (threads, ..) = rebuild_with("smp:1", adds, true, &events);
        use Step::*;
        assert_eq!(
            steps(&threads, A),
            [Run(15_512), Post(0), Run(7_317), Timer(100 * US)]
        );
        assert_eq!(steps(&threads, B), [Run(7_512), Wait(30 * US)]);
    }

    /// A text trace without latency columns: C, woken once by an idle CPU (at 20 µs), is
    /// taken as woken by interrupts throughout, so A's waking of it at 50 µs (a timer
    /// interrupting A, as far as the trace tells) is a timer too; A's post goes and its
    /// stretches join. Known contexts keep the dependency.
    #[test]
    fn without_contexts_a_thread_an_idle_cpu_woke_is_woken_by_timers() {
        let events = [
            (0, 0, switch(0, 0, A)),
            (0, 1, switch(0, 0, C)),
            (10 * US, 1, switch(C, SLEEP, 0)),
            (20 * US, 1, waking(0, C, false)),
            (22 * US, 1, switch(0, 0, C)),
            (30 * US, 1, switch(C, SLEEP, 0)),
            (50 * US, 0, waking(A, C, false)),
            (52 * US, 1, switch(0, 0, C)),
            (60 * US, 1, switch(C, SLEEP, 0)),
            (70 * US, 0, switch(A, SLEEP, 0)),
        ];
        use Step::*;
        let (threads, _, _, notes) = rebuild_with("smp:2", RunAdds::default(), false, &events);
        assert_eq!(steps(&threads, A), [Run(70 * US)]);
        assert_eq!(
            steps(&threads, C),
            [
                Run(10 * US),
                Timer(20 * US),
                Run(8 * US),
                Timer(50 * US),
                Run(8 * US)
            ]
        );
        let last = notes.last().unwrap();
        assert!(
            last.ends_with("1 threads an idle CPU woke are taken as woken by timers throughout")
        );
        let (threads, ..) = rebuild("smp:2", &events);
        assert_eq!(steps(&threads, A), [Run(50 * US), Post(1), Run(20 * US)]);
        assert_eq!(steps(&threads, C)[3], Wait(50 * US));
    }

    /// A pipe ping-pong worked out by hand on smp:4, µs from 0. CPU 1: B runs 0–50 and
    /// sleeps; CPU 0: A runs from 0, wakes B at 100, sleeps at 120. CPU 1: B runs 105–185,
    /// waking A at 180. CPU 0: A runs 190–200. CPU 2: C runs 0–10 and sleeps; a timer
    /// interrupt on CPU 0 (A running) wakes it at 150; it runs 152–160 and exits.
    #[test]
    fn a_ping_pong_becomes_waits_and_posts_and_an_interrupt_a_timer() {
        let (threads, length, busy, notes) = rebuild(
            "smp:4",
            &[
                (0, 0, switch(0, 0, A)),
                (0, 1, switch(0, 0, B)),
                (0, 2, switch(0, 0, C)),
                (10 * US, 2, switch(C, SLEEP, 0)),
                (50 * US, 1, switch(B, SLEEP, 0)),
                (100 * US, 0, waking(A, B, false)),
                (105 * US, 1, switch(0, 0, B)),
                (120 * US, 0, switch(A, SLEEP, 0)),
                (150 * US, 0, waking(A, C, true)),
                (152 * US, 2, switch(0, 0, C)),
                (160 * US, 2, switch(C, EXIT, 0)),
                (180 * US, 1, waking(B, A, false)),
                (185 * US, 1, switch(B, SLEEP, 0)),
                (190 * US, 0, switch(0, 0, A)),
                (200 * US, 3, switch(0, 0, 0)),
            ],
        );
        assert_eq!(length, 200 * US);
        // CPU 0: A 0–120 and 190–200; CPU 1: B 0–50, 105–185; CPU 2: C 0–10, 152–160.
        assert_eq!(busy, [130 * US, 130 * US, 18 * US, 0]);
        assert_eq!(
            notes,
            [
                "no cpu_frequency event: every CPU at its highest frequency",
                "no sched_migrate_task event: a migration is a switch-in on another CPU"
            ]
        );
        let thread = |pid: i32| threads.iter().find(|t| t.pid == pid).unwrap();
        let index = |pid: i32| threads.iter().position(|t| t.pid == pid).unwrap();
        use Step::*;
        let (a, b) = (index(A), index(B));
        assert_eq!(
            thread(A).steps,
            [
                Run(100 * US),
                Post(b),
                Run(20 * US),
                Wait(180 * US),
                Run(10 * US)
            ]
        );
        assert_eq!(
            thread(B).steps,
            [
                Run(50 * US),
                Wait(100 * US),
                Run(75 * US),
                Post(a),
                Run(5 * US)
            ]
        );
        assert_eq!(
            thread(C).steps,
            [Run(10 * US), Timer(150 * US), Run(8 * US)]
        );
        let names: Vec<_> = threads.iter().map(Thread::name).collect();
        assert_eq!(names, ["a-101", "b-102", "c-103"]);
        // A woken at 180, on at 190: 10 µs; B at 100, on at 105: 5 µs; C at 150, on at 152.
        let seen = |pid: i32| {
            let o = &thread(pid).observed;
            (o.run_ns, o.wakeups, o.latency.max(), o.migrations)
        };
        assert_eq!(seen(A), (130 * US, 1, 10 * US, 0));
        assert_eq!(seen(B), (130 * US, 1, 5 * US, 0));
        assert_eq!(seen(C), (18 * US, 1, 2 * US, 0));
    }

    /// On hikey960 a big CPU (capacity 1024) at half its highest frequency does half the
    /// work per ns, a LITTLE one (462) at its highest 462/1024 of it.
    #[test]
    fn work_is_scaled_by_capacity_and_frequency() {
        let plat = platform::load_builtin("hikey960").unwrap();
        let big = plat
            .cpus
            .iter()
            .position(|c| c.capacity_orig == 1024)
            .unwrap();
        let max = plat.freq_domains[plat.cpus[big].freq_domain]
            .opps
            .last()
            .unwrap()
            .khz as u64;
        let (threads, _, _, notes) = rebuild(
            "hikey960",
            &[
                (
                    0,
                    big,
                    SchedEvent::Frequency {
                        cpu: big,
                        khz: max / 2,
                    },
                ),
                (0, big, switch(0, 0, A)),
                (0, 0, switch(0, 0, B)),
                (1024 * US, big, switch(A, SLEEP, 0)),
                (1024 * US, 0, switch(B, SLEEP, 0)),
            ],
        );
        assert_eq!(
            notes,
            ["no sched_migrate_task event: a migration is a switch-in on another CPU"]
        );
        assert_eq!(threads[0].steps, [Step::Run(512 * US)]);
        assert_eq!(threads[1].steps, [Step::Run(462 * US)]);
    }

    /// Pid 101 runs 0–10 µs and exits; a new thread of pid 101 runs 20–50 µs: two threads.
    #[test]
    fn a_pid_reused_after_an_exit_is_another_thread() {
        let (threads, ..) = rebuild(
            "smp:4",
            &[
                (0, 0, switch(0, 0, A)),
                (10 * US, 0, switch(A, EXIT, 0)),
                (20 * US, 0, switch(0, 0, A)),
                (50 * US, 0, switch(A, SLEEP, 0)),
            ],
        );
        let runs: Vec<_> = threads
            .iter()
            .map(|t| (t.name(), t.steps.clone()))
            .collect();
        let (first, second) = (vec![Step::Run(10 * US)], vec![Step::Run(30 * US)]);
        assert_eq!(runs, [("a-101".into(), first), ("a-101.1".into(), second)]);
    }

    /// B is first seen leaving CPU 1 at 5 µs: it ran from before the trace (its start is
    /// the trace's), named by `prev_comm`; what it ran before the trace is unseen.
    #[test]
    fn a_thread_first_seen_leaving_a_cpu_started_with_the_trace() {
        let (threads, ..) = rebuild(
            "smp:4",
            &[(0, 0, switch(0, 0, A)), (5 * US, 1, switch(B, SLEEP, 0))],
        );
        let b = &threads[1];
        assert_eq!((b.name(), b.start, b.steps.len()), ("b-102".into(), 0, 0));
    }

    /// With `sched_migrate_task` recorded, a thread's migrations are its events: two here,
    /// though it switches in on another CPU once.
    #[test]
    fn migrations_are_sched_migrate_task_events_when_recorded() {
        let migrate = SchedEvent::Migrate { pid: A };
        let (threads, _, _, notes) = rebuild(
            "smp:2",
            &[
                (0, 0, switch(0, 0, A)),
                (10 * US, 0, switch(A, SLEEP, 0)),
                (20 * US, 1, waking(0, A, true)),
                (20 * US, 1, migrate),
                (21 * US, 1, migrate),
                (22 * US, 1, switch(0, 0, A)),
            ],
        );
        assert_eq!(threads[0].observed.migrations, 2);
        assert_eq!(
            notes,
            ["no cpu_frequency event: every CPU at its highest frequency"]
        );
    }

    #[test]
    fn a_trace_with_more_cpus_than_the_platform_is_refused() {
        let plat = platform::load_builtin("smp:2").unwrap();
        let err = (Rebuild::new(4, &plat, RunAdds::default(), "t.dat").err())
            .unwrap()
            .to_string();
        assert_eq!(err, "t.dat: the trace has 4 CPUs, platform smp:2 has 2");
    }
}
