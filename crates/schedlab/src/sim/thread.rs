//! rt-app's `run_event` and phase loop over the program format (`workload::program`): what
//! each operation does to a simulated thread. Zero-length operations (lock, signal, ...)
//! take no time. Mutexes hand over to waiters in FIFO order, or, under `pi_enabled`, by
//! priority with inheritance (`sched/rtmutex.rs`).

use std::collections::{HashMap, VecDeque};
use std::ops::Range;

use smallvec::SmallVec;

use super::cache::Warm;
use super::channel::{Blocked, Channel, Wakes};
use super::cyclictest::Cyclic;
use super::engine::{Action, Engine};
use super::kernel_preempt::Syscall;
use super::schbench::Schbench;
use super::SIM_START;
use crate::limits::MAX_THREADS;
use crate::sched::flags::WF_SYNC;
use crate::sched::ops::Op as SchedOp;
use crate::sched::task::TaskState;
use crate::sched::uapi::{Policy, SchedAttr};
use crate::sched::Sched;
use crate::time::Ns;
use crate::trace::{LogRow, RTAPP_MAIN_PID};
use crate::tracepoint::Tracepoint;
use crate::workload::program::{ChanKind, Op, Program, SchOp, TaskProgram, TimerRef};

const PID_BASE: u32 = 1000;
/// Zero-length events one thread may run without time moving before the run is stopped.
const MAX_EVENTS_AT_ONE_INSTANT: u32 = 100_000;
/// Runs of one thread's program, each a few ns after the last, before the run is a
/// livelock.
const MAX_IDLE_RUNS: u32 = 1 << 16;

/// The time a run of a program that does nothing but schedule may take: the engine's
/// nanosecond per scheduling event (`Cpu::changed_at`), for its switch in, its wakeup
/// and its sleep.
const IDLE_RUN_NS: u64 = 4;

/// Synchronisation objects, global by (name, kind) as in rt-app (the mutexes are the
/// scheduler's: `sched::rtmutex`).
pub(super) struct Resources {
    /// Waiters and the mutex each must take back.
    conds: Vec<Vec<(u32, u32)>>,
    /// Users needed, threads waiting.
    barriers: Vec<(u32, Vec<u32>)>,
    /// rt-app's start barrier: every thread it starts (less those refused), those waiting.
    pub(super) start_barrier: (u32, Vec<u32>),
    sems: Vec<(u64, VecDeque<u32>)>,
    suspends: Vec<Vec<u32>>,
    /// Next expiry of each shared timer.
    timers: Vec<Option<u64>>,
    /// What each blocked thread (by pid) waits for, for deadlock reports.
    waiting: HashMap<u32, String>,
    /// Threads forked so far, per task definition (they name the next one).
    forks: Vec<u32>,
    /// The pipes and sockets.
    chans: Vec<Channel>,
    /// `t_zero`, the time base of rt-app's threads: when its first thread started (the run's
    /// start without rt-app's main thread).
    t_zero: Ns,
    /// The threads rt-app's main thread created that have not exited, and the main thread
    /// once it waits for them (`pthread_join`).
    created: u32,
    pub(super) joiner: Option<u32>,
    /// A schbench process's shared memory.
    pub(super) schbench: Option<Box<Schbench>>,
}

impl Resources {
    /// None taken, none waiting.
    pub(super) fn new(prog: &Program, nr_cpus: usize) -> Resources {
        let n = &prog.names;
        Resources {
            conds: vec![Vec::new(); n.conds.len()],
            barriers: prog
                .barrier_users
                .iter()
                .map(|&u| (u, Vec::new()))
                .collect(),
            start_barrier: (
                prog.tasks[..prog.start_barrier_tasks]
                    .iter()
                    .map(|t| t.instance)
                    .sum(),
                Vec::new(),
            ),
            sems: vec![(0, VecDeque::new()); n.sems.len()],
            suspends: vec![Vec::new(); n.suspends.len()],
            timers: vec![None; n.timers.len()],
            waiting: HashMap::new(),
            forks: vec![0; prog.tasks.len()],
            chans: prog.channels.iter().map(|&k| Channel::new(k)).collect(),
            t_zero: SIM_START,
            created: 0,
            joiner: None,
            schbench: (prog.schbench.as_ref()).map(|sh| Box::new(Schbench::new(sh, nr_cpus))),
        }
    }

    /// What thread `id` (`pid`) waits for, as a deadlock report names it.
    pub(super) fn blocked_on(&self, id: u32, pid: u32) -> String {
        let chan = (self.chans.iter().enumerate()).find_map(|(i, c)| {
            let dir = if c.readers.contains(&id) {
                "read"
            } else if c.writers.contains(&id) {
                "write"
            } else if c.pollers.contains(&id) {
                "poll"
            } else {
                return None;
            };
            let kind = match c.kind {
                ChanKind::Pipe => "pipe",
                ChanKind::Unix => "socket",
            };
            Some(format!("{dir} on {kind} {i}"))
        });
        (self.waiting.get(&pid).cloned().or(chan)).unwrap_or_else(|| "?".into())
    }
}

/// rt-app's figures of a thread: timer events reached late, and the slack of every timer
/// event (µs).
#[derive(Debug, Clone, Default)]
pub struct RtappStats {
    pub overruns: u64,
    pub slack_sum_us: i64,
    pub timer_events: u64,
}

/// A thread's own `unique*` timer: its next expiry, and whether any use of it is absolute.
#[derive(Debug, Clone, Copy)]
struct UniqueTimer {
    next: Option<u64>,
    absolute: bool,
}

/// A thread as the machine runs it: where it is in its task's phases, and its work.
pub(super) struct Thread {
    def: u32,
    idx: u32,
    /// Created by rt-app's main thread (it sets itself up before the start barrier).
    created: bool,
    /// A forked process (`Op::Spawn`): its first steps and its exit cost its CPU's time.
    process: bool,
    /// The thread that spawned it (`Op::Spawn`), which reaps it; its own spawned children
    /// not yet reaped, of which `zombies` have exited; waiting in `Op::Reap`.
    parent: Option<u32>,
    children: u32,
    zombies: u32,
    reaping: bool,
    phase: usize,
    phase_iter: i64,
    task_iter: i64,
    /// The phase's operations (`Program::code`) and loops, kept here so that a step reads
    /// no program structure; the next operation's index among them.
    code: Range<u32>,
    phase_loops: i64,
    /// The phase is its task's last in its last loop: the phase's last iteration ends it.
    final_phase: bool,
    op: usize,
    /// The iteration has begun (its settings applied; the thread may have moved since).
    in_iteration: bool,
    /// Its next iteration's start changes its scheduling (`Engine::changes_scheduling`),
    /// kept so that a step reads neither its phase's settings nor its CPUs.
    setup: bool,
    start: Start,
    /// Its delay (and the seed's start delay): its timers' anchor `t_first` is `t_zero` plus
    /// this (`Engine::t_first`).
    pub(super) start_offset: Ns,
    /// Its `unique*` timers, inline: a periodic thread's timer costs no pointer chase.
    unique: SmallVec<[UniqueTimer; 2]>,
    row: LogRow,
    iter_start: u64,
    run_from: Option<u64>,
    wait_mutex: Option<u32>,
    pub(super) action: Action,
    /// When the current stint on the CPU began (for work accounting).
    pub(super) run_start: Ns,
    /// System time the cost model charged it.
    pub(super) sys_ns: Ns,
    /// Its cache footprint; the stall its refills cost, and the part not yet taken.
    pub(super) warm: Warm,
    pub(super) refill_ns: Ns,
    pub(super) stall_pending: Ns,
    /// Its system call's kernel work, under way or cut by a preemption.
    pub(super) syscall: Syscall,
    /// Wake event generation: a later sleep makes older wake events stale.
    pub(super) wake_gen: u32,
    /// Since when it has run its program no more than `IDLE_RUN_NS` apart, and how often.
    idle_runs: (Ns, u32),
    /// Where its pipe or socket call is.
    chan: ChanCall,
    /// The expiry of a sleep whose system call's kernel time is under way.
    sleep_at: Option<Ns>,
    timer_expiry: Option<Ns>,
    pub(super) stats: RtappStats,
    /// A cyclictest measuring thread's period and statistics (boxed: most threads have none).
    pub(super) cyclic: Option<Box<Cyclic>>,
}

impl Thread {
    /// Whether the iteration it is ending is its task's last: the thread exits.
    fn last_iteration(&self) -> bool {
        self.final_phase && self.phase_iter + 1 == self.phase_loops
    }

    /// Enter `phase` of `ct`, the next operation its first.
    fn enter_phase(&mut self, ct: &TaskProgram, phase: usize) {
        self.phase = phase;
        self.code = ct.phases[phase].ops.clone();
        self.phase_loops = ct.phases[phase].loops;
        self.final_phase = phase + 1 == ct.phases.len() && self.task_iter + 1 == ct.loops;
    }

    /// It is to wait at rt-app's start barrier.
    pub(super) fn meets_start_barrier(&self) -> bool {
        self.start == Start::Fresh(true)
    }

    /// Back at `now` from its timer's sleep, if it slept on one: rt-app's `wu_lat` counts
    /// the µs from the expiry (rounded); cyclictest's thread takes the time.
    fn timer_woken(&mut self, now: Ns) {
        if let Some(exp) = self.timer_expiry.take() {
            self.row.wu_lat += (now - exp + 500) / 1000;
            if let Some(c) = &mut self.cyclic {
                c.record(now, exp);
            }
        }
    }
}

/// How far a thread is into its start-up (`Thread::thread_start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// Not started; true: it meets the others at rt-app's start barrier (every thread rt-app
    /// starts; not a forked one, nor a generator's).
    Fresh(bool),
    /// Its set-up's kernel time spent (what it costs when rt-app's main thread created it):
    /// its own policy to set, then on to the barrier (true) or its delay.
    SetUp(bool),
    /// Its policy set: on to the barrier or its delay.
    Set(bool),
    /// Past it: its delay, if any, is still to sleep.
    Synced,
    Running,
}

/// How far a thread is into a system call whose kernel time comes first (a pipe or socket
/// call, the creation of a thread or process, a process's exit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ChanCall {
    /// Not started: the system call is counted and its kernel time spent first.
    Fresh,
    /// Its kernel time spent: the call goes on now (the bytes move).
    Entered,
    /// Back from waiting on the channel: it tries again.
    Waited,
}

/// What the program does next with the thread.
pub(super) enum Step {
    /// It stays on the CPU with work to do.
    Busy,
    /// It left the CPU (sleep, block, exit, yield).
    Off,
}

impl Engine {
    /// A new thread of task `def` (`forked` by another thread, or at start): its pid,
    /// comm, attributes at its creation and affinity, and its program state.
    pub(super) fn new_thread(
        &mut self,
        def: usize,
        id: u32,
        forked: bool,
        now: u64,
    ) -> (u32, String, SchedAttr, Option<Vec<bool>>, Thread) {
        let kthread = self.is_kthread_def(def);
        let t = &self.prog.tasks[def];
        // rt-app's index of a thread: its main thread (when there is one) is not one.
        let idx = id.saturating_sub(self.kthreads() + self.prog.main.is_some() as u32);
        let main = Some(def) == self.prog.main;
        let comm = if main || kthread {
            t.name.clone()
        } else if forked {
            let forks = &mut self.res.forks[def];
            *forks += 1;
            format!("{}-{idx}-{:04}", t.name, *forks - 1)
        } else {
            format!("{}-{idx}", t.name)
        };
        let created = self.prog.main.is_some() && !forked && def < self.prog.start_barrier_tasks;
        let mut attr = t.attr;
        if created {
            // rt-app's main thread's (SCHED_OTHER, nice 0) until its set-up sets its own (its
            // nice, or SCHED_FIFO/RR). Simplified: a deadline thread has its reservation (and
            // its admission) from its creation.
            if attr.policy.is_fair() {
                attr.nice = 0;
            } else if attr.policy != Policy::Deadline {
                attr.policy = Policy::Other;
                attr.rt_priority = 0;
            }
        }
        let mut thread = Thread {
            def: def as u32,
            idx,
            created,
            process: false,
            parent: None,
            children: 0,
            zombies: 0,
            reaping: false,
            phase: 0,
            phase_iter: 0,
            task_iter: 0,
            // (its phase's: `enter_phase` below)
            code: 0..0,
            phase_loops: 0,
            final_phase: false,
            // (a kernel thread is created asleep in its first operation, its timeout)
            op: usize::from(kthread),
            in_iteration: false,
            setup: self.changes_scheduling(def, 0, t.cpus.as_ref().unwrap_or(&self.all_cpus)),
            // A barrier of one returns at once: no scheduling event. A kernel thread has no
            // set-up of rt-app's to go through.
            start: match kthread {
                true => Start::Running,
                false => Start::Fresh(
                    !forked && def < self.prog.start_barrier_tasks && self.res.start_barrier.0 > 1,
                ),
            },
            // Forked threads skip the start barrier but keep t_zero + delay as their anchor.
            start_offset: t.delay,
            unique: (t.unique_absolute.iter())
                .map(|&absolute| UniqueTimer {
                    next: None,
                    absolute,
                })
                .collect(),
            row: LogRow::default(),
            iter_start: now,
            run_from: None,
            wait_mutex: None,
            action: Action::Continue,
            run_start: now,
            sys_ns: 0,
            warm: Warm::new(t.working_set),
            refill_ns: 0,
            stall_pending: 0,
            syscall: Syscall::default(),
            wake_gen: 0,
            idle_runs: (0, 0),
            chan: ChanCall::Fresh,
            sleep_at: None,
            timer_expiry: None,
            stats: RtappStats::default(),
            cyclic: None,
        };
        thread.enter_phase(t, 0);
        let pid = if main { RTAPP_MAIN_PID } else { PID_BASE + idx };
        (pid, comm, attr, t.cpus.clone(), thread)
    }

    /// The running thread `id` has the CPU and nothing to finish: run its program on.
    pub(super) fn thread_runs(&mut self, s: &mut Sched, id: u32) {
        if self.threads[id as usize].action != Action::Continue
            || s.task(id).state != TaskState::Running
            || self.totals.deadlock.is_some()
        {
            return;
        }
        let now = self.now;
        self.last_thread = id;
        // A thread that hands its CPU over with nothing between (yields, zero-length sleeps)
        // runs for ever, time moving only by the nanoseconds its scheduling takes: count its
        // runs while time moves no faster than that.
        let th = &mut self.threads[id as usize];
        let (since, runs) = th.idle_runs;
        if now - since > IDLE_RUN_NS * runs as u64 {
            th.idle_runs = (now, 0);
        }
        th.idle_runs.1 += 1;
        if th.idle_runs.1 > MAX_IDLE_RUNS {
            let since = th.idle_runs.0;
            self.livelock(s, since);
            return;
        }
        if let Some(from) = th.run_from.take() {
            th.row.run += now - from;
        }
        // Back from its timer's sleep (not from the system call that begins it), in user
        // space once its CPU's kernel work (the wakeup's, the switch's) is done.
        if th.sleep_at.is_none() && th.timer_expiry.is_some() {
            let pending = self.kernel_pending(s, s.task_cpu(id));
            let th = &mut self.threads[id as usize];
            if pending > 0 {
                th.action = Action::Until(now + pending);
                return;
            }
            th.timer_woken(now);
        }
        for _ in 0..MAX_EVENTS_AT_ONE_INSTANT {
            if let Step::Off = self.step(s, id) {
                return;
            }
            // Busy, or preempted by what the event woke: it goes on when it runs again.
            if self.threads[id as usize].action != Action::Continue
                || s.task(id).state != TaskState::Running
            {
                return;
            }
        }
        // Only zero-length events, for ever: simulated time could never move on.
        self.livelock(s, now);
    }

    /// Report that the thread that last ran its program keeps simulated time from moving
    /// on since `since`.
    pub(super) fn livelock(&mut self, s: &Sched, since: Ns) {
        let comm = &s.task(self.last_thread).comm;
        self.totals.deadlock = Some(format!(
            "livelock at {:.6} s: {comm} loops on events that take no time",
            (since - SIM_START) as f64 / 1e9
        ));
    }

    fn marker(&mut self, s: &Sched, id: u32, text: String) {
        if !self.rtapp_thread(id) {
            return;
        }
        let cpu = s.task_cpu(id);
        let task = Some(id);
        self.emit(s.tasks(), &Tracepoint::Print { task, cpu, text });
    }

    /// A marker of rt-app's main thread (`rtapp_main: event=…`), on CPU 0 in its context
    /// (pid 1). Simplified: at the run's start and end, whether or not the main thread is
    /// modelled (with `--set rtapp.start_barrier=off` it is not).
    pub(super) fn main_marker(&mut self, s: &Sched, event: &str) {
        if self.tracing && self.prog.ftrace.main {
            let text = format!("rtapp_main: event={event}");
            self.emit(
                s.tasks(),
                &Tracepoint::Print {
                    task: None,
                    cpu: 0,
                    text,
                },
            );
        }
    }

    /// The system call of a write or read on a channel of `kind`.
    fn syscall(kind: ChanKind, write: bool) -> SchedOp {
        match (kind, write) {
            (ChanKind::Pipe, true) => SchedOp::PipeWrite,
            (ChanKind::Pipe, false) => SchedOp::PipeRead,
            (ChanKind::Unix, true) => SchedOp::UnixSend,
            (ChanKind::Unix, false) => SchedOp::UnixRecv,
        }
    }

    /// `id` stays on the CPU if it still runs after what it just did.
    fn busy_if_running(s: &Sched, id: u32) -> Step {
        if s.task(id).state == TaskState::Running {
            Step::Busy
        } else {
            Step::Off
        }
    }

    /// Wake the threads in `all`, in order, from the CPU of `id`.
    pub(super) fn wake_all(&mut self, s: &mut Sched, id: u32, all: Vec<u32>) {
        for w in all {
            self.wake_one(s, id, w);
        }
    }

    /// Wake the blocked thread `w` from the CPU of `id`.
    pub(super) fn wake_one(&mut self, s: &mut Sched, id: u32, w: u32) {
        let cpu = s.task_cpu(id);
        self.res.waiting.remove(&s.task(w).pid);
        self.wake(s, w, cpu, 0);
    }

    /// One event, or the end of a phase iteration.
    fn step(&mut self, s: &mut Sched, id: u32) -> Step {
        let now = self.now;
        let cpu = s.task_cpu(id);
        if self.cpus[cpu].changed_at == now && self.schedules(id) {
            // Not at the instant of the CPU's last scheduling event (`Cpu::changed_at`).
            self.threads[id as usize].action = Action::Until(now + 1);
            return Step::Busy;
        }
        let th = &self.threads[id as usize];
        let (op_i, pc) = (th.op, th.code.start as usize + th.op);
        if th.start != Start::Running {
            return self.thread_start(s, id);
        }
        if pc == th.code.end as usize {
            return self.iteration_end(s, id);
        }
        if op_i == 0 && !self.threads[id as usize].in_iteration {
            self.threads[id as usize].in_iteration = true;
            let cpu = s.task_cpu(id);
            self.iteration_start(s, id);
            if s.task_cpu(id) != cpu {
                // Moved away by its new affinity: it goes on where it runs next (perhaps
                // already, from the switch that put it there).
                return Step::Off;
            }
        }
        let op = self.prog.code.ops[pc];
        if self.tracing && self.prog.ftrace.event && !self.reentering(id) {
            let (ty, desc) = self.prog.code.markers[pc].clone();
            self.marker(
                s,
                id,
                format!("rtapp_event: id={op_i} type={ty} desc={desc}"),
            );
        }
        let th = &mut self.threads[id as usize];
        th.op += 1;
        match op {
            Op::Work { units, us, perf } => {
                th.row.perf += perf;
                th.row.c_duration += us;
                th.run_from = Some(now);
                self.work(id, units);
                Step::Busy
            }
            Op::Runtime { ns, us } => {
                th.row.c_duration += us;
                th.run_from = Some(now);
                th.action = Action::Until(now.saturating_add(ns));
                Step::Busy
            }
            Op::Sleep(_) | Op::Timer { .. } | Op::Cyclic { .. } | Op::Schbench(SchOp::Nap(_))
                if self.threads[id as usize].sleep_at.is_some() =>
            {
                self.nanosleep_return(s, id)
            }
            Op::Sleep(ns) => self.nanosleep(s, id, now + ns),
            Op::Timeout { period, phase } => self.timeout(s, id, period, phase),
            Op::Timer { timer, period } => self.timer(s, id, timer, period),
            Op::Cyclic {
                interval,
                hist,
                nsecs,
            } => {
                let th = &mut self.threads[id as usize];
                let new = || Box::new(Cyclic::new(interval, hist, nsecs));
                let expiry = th.cyclic.get_or_insert_with(new).arm(now);
                th.timer_expiry = Some(expiry);
                if expiry > now {
                    self.nanosleep(s, id, expiry)
                } else {
                    th.timer_woken(now); // clock_nanosleep returns at once
                    Step::Busy
                }
            }
            Op::Lock(m) => self.lock(s, id, m),
            Op::Unlock(m) => {
                self.unlock(s, id, m);
                Step::Busy
            }
            Op::Wait { cond, mutex } => self.cond_wait(s, id, cond, mutex),
            Op::Signal(c) => {
                self.cond_wake(s, id, c, false);
                Step::Busy
            }
            Op::Broad(c) => {
                self.cond_wake(s, id, c, true);
                Step::Busy
            }
            Op::Sync { cond, mutex } => {
                self.cond_wake(s, id, cond, false);
                self.cond_wait(s, id, cond, mutex)
            }
            Op::Barrier(b) => {
                let (needed, waiting) = &mut self.res.barriers[b as usize];
                if waiting.len() as u32 + 1 >= *needed {
                    let all = std::mem::take(waiting);
                    self.wake_all(s, id, all);
                    Step::Busy
                } else {
                    waiting.push(id);
                    let name = format!("barrier {}", self.prog.names.barriers[b as usize]);
                    self.block(s, id, name)
                }
            }
            Op::Suspend(n) => {
                self.res.suspends[n as usize].push(id);
                let name = format!("suspend {}", self.prog.names.suspends[n as usize]);
                self.block(s, id, name)
            }
            Op::Resume(n) => {
                let all = std::mem::take(&mut self.res.suspends[n as usize]);
                self.wake_all(s, id, all);
                Step::Busy
            }
            Op::SemPost(n) => {
                let (count, waiters) = &mut self.res.sems[n as usize];
                match waiters.pop_front() {
                    Some(w) => self.wake_all(s, id, vec![w]),
                    None => *count += 1,
                }
                Step::Busy
            }
            Op::SemWait(n) => {
                let (count, waiters) = &mut self.res.sems[n as usize];
                if *count > 0 {
                    *count -= 1;
                    Step::Busy
                } else {
                    waiters.push_back(id);
                    let name = format!("semaphore {}", self.prog.names.sems[n as usize]);
                    self.block(s, id, name)
                }
            }
            Op::Yield => {
                s.sched_yield(id, self);
                Self::busy_if_running(s, id)
            }
            Op::Fork(target) if s.tasks().len() < MAX_THREADS => {
                self.fork_thread(s, target as usize, Some(id), true);
                Self::busy_if_running(s, id)
            }
            Op::Create(target) => self.create(s, id, target as usize),
            Op::Join if self.res.created > 0 => {
                self.res.joiner = Some(id);
                self.block(s, id, "its threads (pthread_join)".into())
            }
            Op::Join => Step::Busy,
            Op::Write { chan, bytes } => self.chan_io(s, id, chan, bytes, true),
            Op::Read { chan, bytes } => self.chan_io(s, id, chan, bytes, false),
            Op::Poll(chan) => self.poll(s, id, chan),
            Op::Spawn { def, process } => self.spawn(s, id, def as usize, process),
            Op::Reap => self.reap(s, id),
            Op::Clock => {
                self.totals.bench_start = Some(now);
                Step::Busy
            }
            Op::Schbench(op) => self.schbench(s, id, op),
            Op::Fork(_) => {
                // fork() fails with EAGAIN past pid_max: the run stops there.
                self.totals.deadlock = Some(format!(
                    "at {:.6} s: {} forks a thread past the limit of {MAX_THREADS} threads",
                    (self.now - SIM_START) as f64 / 1e9,
                    s.task(id).comm
                ));
                Step::Off
            }
        }
    }

    /// The affinity of task `def`'s iterations of `phase`: the phase's, else the task's, else
    /// every CPU (not sticky).
    fn allowed(&self, def: usize, phase: usize) -> &Vec<bool> {
        let ct = &self.prog.tasks[def];
        (ct.phases[phase].cpus.as_ref().or(ct.cpus.as_ref())).unwrap_or(&self.all_cpus)
    }

    /// Whether starting an iteration of `phase` changes the scheduling of a thread of task
    /// `def` on CPUs `mask`: the phase sets a nice, uclamp or group, or other CPUs.
    fn changes_scheduling(&self, def: usize, phase: usize, mask: &[bool]) -> bool {
        let p = &self.prog.tasks[def].phases[phase];
        let settings = p.nice.is_some() || p.uclamp != (None, None) || p.group.is_some();
        settings || mask != self.allowed(def, phase).as_slice()
    }

    /// Whether the next step of thread `id` is a scheduling event: it may wake a thread,
    /// change its own scheduling or leave its CPU (a sleep until its start, an iteration
    /// that changes its settings, any operation but work, its exit).
    fn schedules(&self, id: u32) -> bool {
        let th = &self.threads[id as usize];
        let pc = th.code.start as usize + th.op;
        match th.start {
            Start::SetUp(_) if self.own_policy(id).is_some() => return true,
            Start::Fresh(barrier) | Start::SetUp(barrier) | Start::Set(barrier) => {
                return barrier || self.t_first(id) > self.now
            }
            Start::Synced => return self.t_first(id) > self.now,
            Start::Running => {}
        }
        if pc == th.code.end as usize {
            return th.last_iteration();
        }
        if th.op == 0 && !th.in_iteration && th.setup {
            return true;
        }
        !self.prog.code.ops[pc].is_work()
    }

    /// `pthread_create` by rt-app's main thread `id` of a thread of task `def` that meets the
    /// start barrier: the `clone` costs its CPU's kernel time first, and before the first
    /// one the main thread's own set-up.
    fn create(&mut self, s: &mut Sched, id: u32, def: usize) -> Step {
        let init = u64::from(self.res.created == 0);
        if self
            .entering(s, id, &[(SchedOp::AppInit, init), (SchedOp::Clone, 1)])
            .is_none()
        {
            return self.again(id);
        }
        if self.fork_thread(s, def, Some(id), false) {
            self.res.created += 1;
        }
        Self::busy_if_running(s, id)
    }

    /// `fork` (`process`) or `pthread_create` by the running thread `id` of a thread of task
    /// `def`, its child: the system call costs its CPU's kernel time first, and a process's
    /// first steps cost the child's CPU before its program.
    fn spawn(&mut self, s: &mut Sched, id: u32, def: usize, process: bool) -> Step {
        let op = if process {
            SchedOp::Fork
        } else {
            SchedOp::Clone
        };
        if self.entering(s, id, &[(op, 1)]).is_none() {
            return self.again(id);
        }
        let child = s.tasks().len();
        if self.fork_thread(s, def, Some(id), false) {
            self.threads[id as usize].children += 1;
            let c = &mut self.threads[child];
            c.parent = Some(id);
            c.process = process;
        }
        Self::busy_if_running(s, id)
    }

    /// `wait` by the running thread `id`: reap an exited child, or sleep until one exits
    /// (none left: it returns at once, ECHILD).
    fn reap(&mut self, s: &mut Sched, id: u32) -> Step {
        let th = &mut self.threads[id as usize];
        if th.zombies > 0 {
            th.zombies -= 1;
            th.children -= 1;
            return Step::Busy;
        }
        if th.children == 0 {
            return Step::Busy;
        }
        th.reaping = true;
        th.op -= 1; // it waits again when woken: the child it finds is reaped then
        self.block(s, id, "a child's exit (wait)".into())
    }

    /// `poll` for input on channel `chan` by the running thread `id`: on at once if there is
    /// some, else it waits on the channel and polls again when woken.
    fn poll(&mut self, s: &mut Sched, id: u32, chan: u32) -> Step {
        let c = &mut self.res.chans[chan as usize];
        if c.readable() {
            return Step::Busy;
        }
        c.pollers.push(id);
        self.threads[id as usize].op -= 1;
        self.block_current(s, id, TaskState::Blocked);
        Step::Off
    }

    /// Thread `id` comes back to an operation it began (its kernel time done): no new event.
    fn reentering(&self, id: u32) -> bool {
        let th = &self.threads[id as usize];
        th.sleep_at.is_some() || th.chan == ChanCall::Entered
    }

    /// `clock_nanosleep` until `at` by the running thread `id`: the system call, which arms
    /// the timer, costs the CPU's kernel time before the thread leaves it (in its own time,
    /// as the kernel charges it).
    pub(super) fn nanosleep(&mut self, s: &mut Sched, id: u32, at: Ns) -> Step {
        if self.kernel_time(s, id, &[(SchedOp::Nanosleep, 1)]) {
            self.threads[id as usize].sleep_at = Some(at);
            return self.again(id);
        }
        self.sleep_until(s, id, at);
        Step::Off
    }

    /// Thread `id` back from its sleep's system call: it sleeps, unless the expiry has passed
    /// meanwhile (do_nanosleep returns without sleeping).
    fn nanosleep_return(&mut self, s: &mut Sched, id: u32) -> Step {
        let now = self.now;
        let th = &mut self.threads[id as usize];
        let at = th.sleep_at.take().expect("a sleep's call under way");
        if at > now {
            self.sleep_until(s, id, at);
            return Step::Off;
        }
        th.timer_woken(now);
        Step::Busy
    }

    /// The running thread `id` enters a system call of kernel work `ops`: None while that
    /// work takes its CPU's time (it comes back past the entry), else where the call was.
    pub(super) fn entering(
        &mut self,
        s: &mut Sched,
        id: u32,
        ops: &[(SchedOp, u64)],
    ) -> Option<ChanCall> {
        let call = std::mem::replace(&mut self.threads[id as usize].chan, ChanCall::Fresh);
        if call == ChanCall::Fresh && self.kernel_time(s, id, ops) {
            self.threads[id as usize].chan = ChanCall::Entered;
            return None;
        }
        Some(call)
    }

    /// Thread `id` does its operation again (once its kernel time is done, or when woken).
    pub(super) fn again(&mut self, id: u32) -> Step {
        self.rewind(id);
        Step::Busy
    }

    /// Thread `id` works `units` now, stretched as its job's draw from its task's own
    /// quantiles or else the platform's says (a kernel thread's time is as measured: none).
    pub(super) fn work(&mut self, id: u32, units: u128) {
        let stretch = match self.is_kthread(id) {
            true => 1000,
            false => {
                let own = &self.prog.tasks[self.threads[id as usize].def as usize].work_stretch;
                let q = if own.is_empty() {
                    &self.work_stretch
                } else {
                    own
                };
                super::jitter::work_stretch(self.seed, q, self.workload_index(id), self.now)
            }
        };
        // (work for ever stays for ever; any other fits: ns × rate, times at most 4000)
        self.threads[id as usize].action = Action::Work {
            left: match units {
                u128::MAX => units,
                _ => units * stretch as u128 / 1000,
            },
        };
    }

    /// Thread `id` returns to user space from a system call (`exit_to_user_mode`): a
    /// reschedule its CPU was asked for (by a wakeup the call made; a lazy one too) preempts
    /// it there, 1 ns after the CPU's last scheduling event, before its next step. True then.
    pub(super) fn user_return(&mut self, s: &Sched, id: u32) -> bool {
        let cpu = s.task_cpu(id);
        if !s.need_resched(cpu) {
            return false;
        }
        let at = (self.cpus[cpu].changed_at + 1).max(self.now);
        self.threads[id as usize].action = Action::Until(at);
        true
    }

    /// Thread `id`'s next operation is the one it is doing.
    pub(super) fn rewind(&mut self, id: u32) {
        self.threads[id as usize].op -= 1;
    }

    /// Thread `id` goes on at operation `op` of its phase.
    pub(super) fn jump(&mut self, id: u32, op: usize) {
        self.threads[id as usize].op = op;
    }

    /// `break` out of thread `id`'s phase: its iteration ends now, as its phase's last.
    pub(super) fn break_loop(&mut self, id: u32) {
        let th = &mut self.threads[id as usize];
        th.phase_loops = th.phase_iter + 1;
        th.op = th.code.len();
    }

    /// Count `ops` on the CPU of the running thread `id`; true when the kernel's time on that
    /// CPU is not yet done: the thread waits for it.
    fn kernel_time(&mut self, s: &mut Sched, id: u32, ops: &[(SchedOp, u64)]) -> bool {
        let cpu = s.task_cpu(id);
        for &(op, n) in ops {
            s.count_op(cpu, op, n);
        }
        let pending = self.kernel_pending(s, cpu);
        if pending > 0 {
            let end = self.now + pending;
            self.threads[id as usize].action = Action::Until(end);
            if s.feat().preempt.kernel() {
                self.syscall_begins(id, self.overhead.price_of(ops), end);
            }
        }
        pending > 0
    }

    /// A `write` (or `read`) of `bytes` on channel `chan` by the running thread `id`: the
    /// system call is counted and, under the cost model, its kernel time spent on the CPU
    /// first; then the bytes move and the readers or writers waiting are woken. A thread
    /// that must wait queues on the channel and tries again when woken.
    fn chan_io(&mut self, s: &mut Sched, id: u32, chan: u32, bytes: u32, write: bool) -> Step {
        let kind = self.res.chans[chan as usize].kind;
        let ops = [
            (Self::syscall(kind, write), 1),
            (SchedOp::CopyLine, bytes.div_ceil(64) as u64),
        ];
        let Some(call) = self.entering(s, id, &ops) else {
            return self.again(id);
        };
        let waited = call == ChanCall::Waited;
        let c = &mut self.res.chans[chan as usize];
        let done = if write {
            c.write(bytes, waited).map_err(|Blocked(w)| w)
        } else {
            c.read(bytes, waited).ok_or(Wakes::default())
        };
        match done {
            Ok(wakes) => {
                self.chan_wake(s, id, chan, wakes);
                Self::busy_if_running(s, id)
            }
            Err(wakes) => {
                self.chan_wake(s, id, chan, wakes);
                let c = &mut self.res.chans[chan as usize];
                if write {
                    &mut c.writers
                } else {
                    &mut c.readers
                }
                .push_back(id);
                let th = &mut self.threads[id as usize];
                th.op -= 1;
                th.chan = ChanCall::Waited;
                self.block_current(s, id, TaskState::Blocked);
                Step::Off
            }
        }
    }

    /// Wake the channel's readers and writers as `wakes` says, from the CPU of `id`: one of
    /// each for a pipe (exclusive waits), all for a socket; sync wakeups.
    fn chan_wake(&mut self, s: &mut Sched, id: u32, chan: u32, wakes: Wakes) {
        let cpu = s.task_cpu(id);
        let c = &mut self.res.chans[chan as usize];
        let all = c.kind == ChanKind::Unix;
        let mut woken = std::mem::take(&mut self.woken);
        if wakes.readers {
            woken.extend(c.pollers.drain(..).rev());
        }
        for (wake, queue) in [
            (wakes.readers, &mut c.readers),
            (wakes.writers, &mut c.writers),
        ] {
            if wake {
                let n = if all { queue.len() } else { queue.len().min(1) };
                woken.extend(queue.drain(..n));
            }
        }
        for &w in &woken {
            self.wake(s, w, cpu, WF_SYNC);
        }
        woken.clear();
        self.woken = woken;
    }

    pub(super) fn block(&mut self, s: &mut Sched, id: u32, what: String) -> Step {
        self.res.waiting.insert(s.task(id).pid, what);
        self.block_current(s, id, TaskState::Blocked);
        Step::Off
    }

    /// Thread start as rt-app 1.0's `thread_body` does it: `rtapp_task: event=start`, its
    /// own policy set at the end of its set-up, wait at the start barrier for every thread
    /// rt-app starts (`pthread_barrier_wait`: the last to come wakes the others from its
    /// CPU), then sleep until t_zero + delay.
    fn thread_start(&mut self, s: &mut Sched, id: u32) -> Step {
        if let Start::Fresh(barrier) = self.threads[id as usize].start {
            // Created by rt-app's main thread: its set-up costs its CPU's time first.
            self.threads[id as usize].start = Start::SetUp(barrier);
            let th = &self.threads[id as usize];
            let init = if th.created {
                Some(SchedOp::ThreadInit)
            } else {
                th.process.then_some(SchedOp::ForkChild)
            };
            if let Some(op) = init {
                if self.kernel_time(s, id, &[(op, 1)]) {
                    return Step::Busy;
                }
            }
        }
        if let Start::SetUp(barrier) = self.threads[id as usize].start {
            self.threads[id as usize].start = Start::Set(barrier);
            if let Some(attr) = self.own_policy(id) {
                // (the oracle's icount traces: a nice'd thread's priority falls 82 µs into
                // its 91 µs before the barrier, and its CPU reschedules there)
                if !attr.policy.is_fair() {
                    s.sched_setscheduler_rt(id, &attr, self);
                } else if s.set_user_nice(id, attr.nice, self) {
                    return Step::Busy; // preempted as the call returns
                }
            }
        }
        if let Start::Set(barrier) = self.threads[id as usize].start {
            if self.threads[id as usize].created && self.threads[id as usize].idx == 0 {
                self.res.t_zero = self.now; // thread 0 takes t_zero before the barrier
            }
            self.threads[id as usize].start = Start::Synced;
            self.start_markers(s, id);
            if barrier {
                let (needed, waiting) = &mut self.res.start_barrier;
                if waiting.len() as u32 + 1 < *needed {
                    waiting.push(id);
                    return self.block(s, id, "rt-app's start barrier".into());
                }
                let all = std::mem::take(waiting);
                self.wake_all(s, id, all);
                return Step::Busy; // on, 1 ns after waking them (a scheduling event)
            }
        }
        self.threads[id as usize].start = Start::Running;
        let t_first = self.t_first(id);
        if t_first > self.now {
            // Simplified: the sleep's system call costs after the thread has left its CPU.
            s.count_op(s.task_cpu(id), SchedOp::Nanosleep, 1);
            self.sleep_until(s, id, t_first);
            return Step::Off;
        }
        Step::Busy
    }

    /// The policy thread `id`, created by rt-app's main thread as SCHED_OTHER at nice 0,
    /// sets itself at its start: its nice, or SCHED_FIFO/RR (None: it keeps the creator's).
    fn own_policy(&self, id: u32) -> Option<SchedAttr> {
        let th = &self.threads[id as usize];
        let attr = self.prog.tasks[th.def as usize].attr;
        let own = (attr.policy.is_fair() && attr.nice != 0)
            || matches!(attr.policy, Policy::Fifo | Policy::Rr);
        (th.created && own).then_some(attr)
    }

    /// rt-app's `t_first` of thread `id`: `t_zero` plus its delay, its timers' anchor.
    fn t_first(&self, id: u32) -> Ns {
        self.res.t_zero + self.threads[id as usize].start_offset
    }

    /// Thread `id` is rt-app's main thread.
    fn is_main(&self, id: u32) -> bool {
        Some(self.threads[id as usize].def as usize) == self.prog.main
    }

    /// Thread `id` writes rt-app's markers and log rows: not its main thread (which writes
    /// only its rtapp_main markers, `main_marker`), nor a kernel thread.
    fn rtapp_thread(&self, id: u32) -> bool {
        !self.is_main(id) && !self.is_kthread(id)
    }

    fn start_markers(&mut self, s: &mut Sched, id: u32) {
        if self.tracing && self.prog.ftrace.task {
            if self.threads[id as usize].idx == 0 {
                // Thread 0 takes t_zero, the time base of every thread (µs).
                let clock_ref = format!("rtapp_main: event=clock_ref data={}", self.now / 1000);
                self.marker(s, id, clock_ref);
            }
            self.marker(s, id, "rtapp_task: event=start".into());
        }
    }

    fn iteration_start(&mut self, s: &mut Sched, id: u32) {
        let now = self.now;
        let th = &mut self.threads[id as usize];
        th.row = LogRow {
            idx: th.idx,
            ..Default::default()
        };
        th.iter_start = now;
        let (def, phase) = (th.def as usize, th.phase);
        let (task_iter, phase_iter, setup) = (th.task_iter, th.phase_iter, th.setup);
        if setup {
            self.set_params(s, id, def, phase);
        }
        if self.tracing && self.prog.ftrace.loop_ {
            self.marker(s, id, format!("rtapp_loop: event=start thread_loop={task_iter} phase={phase} phase_loop={phase_iter}"));
        }
        if setup {
            self.set_placement(s, id, def, phase);
        }
    }

    /// Thread `id`'s nice and uclamp for an iteration of task `def`'s `phase`.
    fn set_params(&mut self, s: &mut Sched, id: u32, def: usize, phase: usize) {
        let p = &self.prog.tasks[def].phases[phase];
        let (nice, uclamp) = (p.nice, p.uclamp);
        if let Some(nice) = nice {
            s.set_user_nice(id, nice, self);
        }
        if uclamp != (None, None) {
            s.sched_setattr_uclamp(id, uclamp.0, uclamp.1);
        }
    }

    /// Thread `id`'s group and CPUs for an iteration of task `def`'s `phase`, last: the
    /// thread may move to another CPU, where it goes on when it runs.
    fn set_placement(&mut self, s: &mut Sched, id: u32, def: usize, phase: usize) {
        if let Some(g) = self.prog.tasks[def].phases[phase].group {
            s.sched_move_task(id, g, self);
        }
        let allowed = self.allowed(def, phase);
        if s.task(id).cpus_mask != *allowed {
            s.set_cpus_allowed(id, allowed.clone(), self);
        }
        self.threads[id as usize].setup =
            self.changes_scheduling(def, phase, &s.task(id).cpus_mask);
    }

    /// End of a phase iteration: the log row, then the loop counters.
    fn iteration_end(&mut self, s: &mut Sched, id: u32) -> Step {
        let start = self.threads[id as usize].iter_start;
        let (st, e) = ((start + 500) / 1000, self.now_us());
        let rel = self.rel_us(start);
        let th = &mut self.threads[id as usize];
        th.row.start = st;
        th.row.end = e;
        th.row.period = e - st;
        th.row.rel_st = rel;
        th.row.run = (th.row.run + 500) / 1000;
        let row = th.row;
        let (def, phase) = (th.def as usize, th.phase);
        let (task_iter, phase_iter) = (th.task_iter, th.phase_iter);
        if self.tracing && self.rtapp_thread(id) {
            if self.prog.ftrace.loop_ {
                self.marker(s, id, format!("rtapp_loop: event=end thread_loop={task_iter} phase={phase} phase_loop={phase_iter}"));
            }
            if self.prog.ftrace.stats {
                self.marker(
                    s,
                    id,
                    format!(
                        "rtapp_stats: period={} run={} wu_lat={} slack={} c_period={} c_run={}",
                        row.period, row.run, row.wu_lat, row.slack, row.c_period, row.c_duration
                    ),
                );
            }
            if self.prog.logs {
                self.log(id, row);
            }
        }
        let th = &mut self.threads[id as usize];
        if th.last_iteration() {
            return self.exit(s, id);
        }
        th.op = 0;
        th.in_iteration = false;
        th.phase_iter += 1;
        if th.phase_iter == th.phase_loops {
            let ct = &self.prog.tasks[def];
            th.phase_iter = 0;
            let mut phase = th.phase + 1;
            if phase == ct.phases.len() {
                phase = 0;
                th.task_iter += 1;
            }
            th.enter_phase(ct, phase);
            self.threads[id as usize].setup =
                self.changes_scheduling(def, phase, &s.task(id).cpus_mask);
        }
        Step::Busy
    }

    fn exit(&mut self, s: &mut Sched, id: u32) -> Step {
        // A process releases its address space and files first (exit_mm, exit_files); its
        // iteration ends again once that is done.
        if self.threads[id as usize].process
            && self.entering(s, id, &[(SchedOp::Exit, 1)]).is_none()
        {
            return Step::Busy;
        }
        if self.tracing && self.prog.ftrace.task {
            self.marker(s, id, "rtapp_task: event=end".into());
        }
        if self.threads[id as usize].created {
            // One of the threads rt-app's main thread created (not one a `fork` made).
            self.res.created -= 1;
            if let Some(main) = self.res.joiner.filter(|_| self.res.created == 0) {
                self.wake_all(s, id, vec![main]); // pthread_join returns
            }
        }
        // do_exit: its tracepoint, then the parent told (exit_notify), then its last switch.
        if self.tracing {
            let cpu = s.task_cpu(id);
            self.emit(s.tasks(), &Tracepoint::Exit { task: id, cpu });
        }
        if let Some(p) = self.threads[id as usize].parent {
            // A parent in wait() is woken (__wake_up_parent, a sync wakeup).
            let parent = &mut self.threads[p as usize];
            parent.zombies += 1;
            if std::mem::take(&mut parent.reaping) {
                self.res.waiting.remove(&s.task(p).pid);
                let cpu = s.task_cpu(id);
                self.wake(s, p, cpu, WF_SYNC);
            }
        }
        self.alive -= 1;
        self.block_current(s, id, TaskState::Dead);
        Step::Off
    }

    /// rt-app's timer event: sleep to the next expiry, or record an overrun.
    fn timer(&mut self, s: &mut Sched, id: u32, timer: TimerRef, period: u64) -> Step {
        let now = self.now;
        let t_first = self.t_first(id);
        let (slot, absolute) = match timer {
            TimerRef::Unique(i) => {
                let u = &mut self.threads[id as usize].unique[i as usize];
                (&mut u.next, u.absolute)
            }
            TimerRef::Shared(i) => (
                &mut self.res.timers[i as usize],
                self.prog.timer_absolute[i as usize],
            ),
        };
        let next = slot.get_or_insert(t_first);
        *next += period;
        let expiry = *next;
        let slack_us = (expiry as i64 - now as i64) / 1000;
        if now >= expiry && !absolute {
            *next = now; // relative: re-anchor at the late instant
        }
        let th = &mut self.threads[id as usize];
        th.stats.timer_events += 1;
        th.stats.slack_sum_us += slack_us;
        th.stats.overruns += (now >= expiry) as u64;
        th.row.c_period += period / 1000;
        th.row.slack = if self.prog.cumulative_slack {
            th.row.slack + slack_us
        } else {
            slack_us
        };
        if now < expiry {
            th.timer_expiry = Some(expiry);
            return self.nanosleep(s, id, expiry);
        }
        th.row.wu_lat = 0; // an overrun wipes the iteration's latency (rt-app)
        Step::Busy
    }

    fn lock(&mut self, s: &mut Sched, id: u32, m: u32) -> Step {
        if s.rt_mutex_trylock(id, m) {
            return Step::Busy;
        }
        // rt_mutex_slowlock: the owner it boosts preempts it only when it sleeps.
        self.going_to_sleep[s.task_cpu(id)] = true;
        s.rt_mutex_block(id, m, self);
        let name = format!("mutex {}", self.prog.names.mutexes[m as usize]);
        self.block(s, id, name)
    }

    /// Unlock, handing the mutex to the first waiter, who wakes.
    fn unlock(&mut self, s: &mut Sched, id: u32, m: u32) {
        let cpu = s.task_cpu(id);
        s.rt_mutex_unlock(id, m, self, |s, e, w| {
            e.res.waiting.remove(&s.task(w).pid);
            e.wake(s, w, cpu, 0);
        });
    }

    /// Simplified: the unlock and the sleep are one step, so the thread the mutex goes to
    /// runs once the caller sleeps (glibc unlocks before its futex wait, and may be
    /// preempted in between).
    fn cond_wait(&mut self, s: &mut Sched, id: u32, c: u32, m: u32) -> Step {
        self.going_to_sleep[s.task_cpu(id)] = true;
        self.unlock(s, id, m);
        self.res.conds[c as usize].push((id, m));
        self.threads[id as usize].wait_mutex = Some(m);
        let name = format!("condition {}", self.prog.names.conds[c as usize]);
        self.block(s, id, name)
    }

    /// Signal (one waiter) or broadcast; a waiter takes its mutex back before it runs.
    fn cond_wake(&mut self, s: &mut Sched, id: u32, c: u32, all: bool) {
        let cpu = s.task_cpu(id);
        let n = if all {
            self.res.conds[c as usize].len()
        } else {
            1.min(self.res.conds[c as usize].len())
        };
        let woken: Vec<(u32, u32)> = self.res.conds[c as usize].drain(..n).collect();
        for (w, m) in woken {
            self.threads[w as usize].wait_mutex = None;
            if s.rt_mutex_trylock(w, m) {
                self.res.waiting.remove(&s.task(w).pid);
                self.wake(s, w, cpu, 0);
            } else {
                s.rt_mutex_block(w, m, self);
                let name = format!("mutex {}", self.prog.names.mutexes[m as usize]);
                self.res.waiting.insert(s.task(w).pid, name);
            }
        }
    }
}
