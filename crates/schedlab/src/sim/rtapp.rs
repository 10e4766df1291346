//! rt-app's `run_event` and phase loop: what each event does to a simulated thread.
//!
//! Cost model: `run` is work at the reference speed (the biggest CPU at its highest OPP);
//! `mem`, `iorun` and `memrun` are CPU work of one reference ns per byte touched (per
//! access for `memrun`); `runtime` is wall-clock busy time. Zero-length events (lock, signal,
//! ...) take no time. Mutexes hand over to waiters in FIFO order, or, under `pi_enabled`, by
//! priority with inheritance (`sched/rtmutex.rs`).

use std::collections::{HashMap, VecDeque};

use super::engine::{Action, Engine, WORK_UNITS_PER_NS};
use super::SIM_START;
use crate::error::InputError;
use crate::platform::Platform;
use crate::sched::hooks::Tracepoint;
use crate::sched::task::TaskState;
use crate::sched::uapi::{DlAttr, Policy, SchedAttr};
use crate::sched::Sched;
use crate::time::Ns;
use crate::trace::LogRow;
use crate::workload::{Calibration, Event, Ftrace, LogSize, SchedParams, Work, Workload};

/// rt-app's pLoad when `calibration` names a CPU: a nominal value (no busy loop to measure).
pub const NOMINAL_PLOAD_NS: u64 = 100;
const PID_BASE: u32 = 1000;
/// Zero-length events one thread may run without time moving before the run is stopped.
const MAX_EVENTS_AT_ONE_INSTANT: u32 = 1_000_000;

/// A compiled event, resources resolved to indices.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Work { units: u128, us: u64, perf: u64 },
    Runtime { ns: u64, us: u64 },
    Sleep(u64),
    Timer { timer: TimerRef, period: u64 },
    Lock(u32),
    Unlock(u32),
    Wait { cond: u32, mutex: u32 },
    Signal(u32),
    Broad(u32),
    Sync { cond: u32, mutex: u32 },
    Barrier(u32),
    Suspend(u32),
    Resume(u32),
    SemPost(u32),
    SemWait(u32),
    Yield,
    Fork(u32),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum TimerRef {
    /// Index among the task's `unique*` timers: one per thread.
    Unique(u32),
    Shared(u32),
}

struct CPhase {
    loops: i64,
    ops: Vec<Op>,
    /// rt-app `rtapp_event` type and desc of each op.
    markers: Vec<(u32, String)>,
    nice: Option<i32>,
    /// util_min/util_max to set at the phase's start (None: unchanged).
    uclamp: Clamps,
    cpus: Option<Vec<bool>>,
}

/// Requested util_min and util_max; None leaves a clamp as it is.
type Clamps = (Option<u32>, Option<u32>);

pub(super) struct CTask {
    name: String,
    pub(super) instance: u32,
    delay: u64,
    loops: i64,
    /// What its threads ask of the scheduler.
    attr: SchedAttr,
    cpus: Option<Vec<bool>>,
    phases: Vec<CPhase>,
    unique_timers: u32,
    forks: u32,
}

/// The whole workload, compiled.
pub(super) struct Program {
    pub(super) tasks: Vec<CTask>,
    names: Names,
    barrier_users: Vec<u32>,
    timer_absolute: Vec<bool>,
    unique_absolute: Vec<Vec<bool>>,
    pub(super) ftrace: Ftrace,
    pub(super) logs: bool,
    cumulative_slack: bool,
    /// `pi_enabled`: mutexes are PTHREAD_PRIO_INHERIT, rt_mutexes in the kernel.
    pub(super) pi: bool,
    /// Settings the engine does not simulate yet, one message each.
    pub(super) warnings: Vec<String>,
}

/// What the workload asks for that the engine does not simulate yet: policy changes between
/// phases, task groups.
fn unsimulated(wl: &Workload) -> Vec<String> {
    let mut out = Vec::new();
    let mut check = |path: String, p: &SchedParams, group: &Option<String>, phase: bool| {
        if phase && (p.policy.is_some() || p.dl_runtime_us.is_some()) {
            out.push(format!(
                "{path}: a phase's policy or deadline parameters are ignored: the thread keeps the task's (changes between phases are not simulated yet)"
            ));
        }
        if let Some(g) = group {
            out.push(format!(
                "{path}: taskgroup {g:?} ignored: the task runs in the root group (task groups are not simulated yet)"
            ));
        }
    };
    for t in &wl.tasks {
        check(format!("tasks.{}", t.name), &t.params, &t.taskgroup, false);
        for p in &t.phases {
            check(
                format!("tasks.{}.phases.{}", t.name, p.name),
                &p.params,
                &p.taskgroup,
                true,
            );
        }
    }
    out
}

/// Resource names, by kind, in order of first use.
#[derive(Default)]
struct Names {
    mutexes: Vec<String>,
    conds: Vec<String>,
    barriers: Vec<String>,
    sems: Vec<String>,
    suspends: Vec<String>,
    timers: Vec<String>,
}

fn intern(list: &mut Vec<String>, index: &mut HashMap<String, u32>, name: &str) -> u32 {
    *index.entry(name.to_string()).or_insert_with(|| {
        list.push(name.to_string());
        list.len() as u32 - 1
    })
}

fn mask(cpus: &[usize], n: usize) -> Vec<bool> {
    let mut m = vec![false; n];
    for &c in cpus {
        m[c] = true;
    }
    m
}

/// `sched_setattr`'s checks of a task's policy and parameters (`__checkparam_dl`,
/// `valid_policy`/priority range, the root-domain span of a deadline task) and the
/// reservation it asks for.
fn dl_attr(
    t: &crate::workload::Task,
    policy: Policy,
    n: usize,
) -> Result<Option<DlAttr>, InputError> {
    let at = |key: &str| format!("tasks.{}.{key}", t.name);
    let p = &t.params;
    if matches!(policy, Policy::Fifo | Policy::Rr) {
        let prio = p.priority.unwrap_or(10);
        if !(1..=99).contains(&prio) {
            return Err(InputError::new(
                at("priority"),
                format!("{} priority {prio} is outside 1..99", policy.name()),
            ));
        }
    }
    if policy != Policy::Deadline {
        if p.dl_reclaim == Some(true) {
            return Err(InputError::new(
                at("dl-reclaim"),
                format!(
                    "reclaiming (SCHED_FLAG_RECLAIM) needs SCHED_DEADLINE, the task is {}",
                    policy.name()
                ),
            ));
        }
        return Ok(None);
    }
    // rt-app's defaults: period = runtime, deadline = period.
    let runtime = p.dl_runtime_us.unwrap_or(0) * 1000;
    let period = p
        .dl_period_us
        .filter(|&v| v > 0)
        .map_or(runtime, |v| v * 1000);
    let deadline = p
        .dl_deadline_us
        .filter(|&v| v > 0)
        .map_or(period, |v| v * 1000);
    let us = |ns: u64| ns / 1000;
    let bad = |key: &str, msg: String| Err(InputError::new(at(key), msg));
    if period == 0 {
        return bad(
            "dl-period",
            "SCHED_DEADLINE needs a non-zero period (or dl-runtime)".into(),
        );
    }
    if runtime < 1024 {
        return bad(
            "dl-runtime",
            format!("runtime {} ns is below 1024 ns (__checkparam_dl)", runtime),
        );
    }
    if runtime > deadline {
        return bad(
            "dl-runtime",
            format!(
                "runtime {} µs exceeds the deadline {} µs",
                us(runtime),
                us(deadline)
            ),
        );
    }
    if deadline > period {
        return bad(
            "dl-deadline",
            format!(
                "deadline {} µs exceeds the period {} µs",
                us(deadline),
                us(period)
            ),
        );
    }
    if !(100_000..=(1 << 22) * 1000).contains(&period) {
        return bad(
            "dl-period",
            format!(
                "period {} µs is outside 100 µs .. 4194304 µs (sched_dl_period_min/max)",
                us(period)
            ),
        );
    }
    if t.cpus
        .as_ref()
        .is_some_and(|c| (0..n).any(|cpu| !c.contains(&cpu)))
    {
        return bad(
            "cpus",
            format!("a SCHED_DEADLINE task's affinity must span its root domain (CPUs 0-{}): the kernel refuses it (EPERM)", n - 1),
        );
    }
    Ok(Some(DlAttr {
        runtime,
        deadline,
        period,
        reclaim: p.dl_reclaim == Some(true),
    }))
}

impl Program {
    pub(super) fn compile(wl: &Workload, plat: &Platform) -> Result<Program, InputError> {
        let n = plat.nr_cpus();
        let pload = match wl.global.calibration {
            Calibration::PLoad(p) => p,
            Calibration::Cpu(_) => NOMINAL_PLOAD_NS,
        };
        let mut idx: [HashMap<String, u32>; 6] = Default::default();
        let mut names = Names::default();
        let mut barrier_users: Vec<u32> = Vec::new();
        let mut timer_absolute = Vec::new();
        let mut unique_absolute = Vec::new();
        let mut tasks = Vec::new();
        for t in &wl.tasks {
            let check_cpus =
                |cpus: &Option<Vec<usize>>, at: &str| -> Result<Option<Vec<bool>>, InputError> {
                    match cpus {
                        Some(c) if c.iter().any(|&x| x >= n) => Err(InputError::new(
                            format!("tasks.{}{at}.cpus", t.name),
                            format!(
                                "CPU {} is outside the platform {} (CPUs 0-{})",
                                c.iter().max().unwrap(),
                                plat.name,
                                n - 1
                            ),
                        )),
                        Some(c) => Ok(Some(mask(c, n))),
                        None => Ok(None),
                    }
                };
            // uclamp_validate: sched_setattr refuses util_min above util_max.
            let check_uclamp = |p: &SchedParams, at: &str| -> Result<Clamps, InputError> {
                match (p.util_min, p.util_max) {
                    (Some(lo), Some(hi)) if lo > hi => Err(InputError::new(
                        format!("tasks.{}{at}.util_min", t.name),
                        format!("util_min {lo} is above util_max {hi}"),
                    )),
                    clamps => Ok(clamps),
                }
            };
            let mut uniq: HashMap<String, u32> = HashMap::new();
            let mut uabs = Vec::new();
            let mut phases = Vec::new();
            for p in &t.phases {
                let mut ops = Vec::new();
                let mut markers = Vec::new();
                for e in &p.events {
                    let op = match e {
                        Event::Run(w) => work(*w, pload, 1000),
                        Event::Mem(b) | Event::Iorun(b) => work(Work::Us(*b), pload, 1),
                        Event::Memrun(m) => work(Work::Us(m.count), pload, 1),
                        Event::Runtime(Work::Us(us)) => Op::Runtime {
                            ns: us * 1000,
                            us: *us,
                        },
                        Event::Runtime(Work::Forever) => Op::Runtime {
                            ns: u64::MAX / 4,
                            us: 0,
                        },
                        Event::Sleep(us) => Op::Sleep(us * 1000),
                        Event::Timer {
                            name,
                            period_us,
                            absolute,
                        } => {
                            let timer = if name.starts_with("unique") {
                                let fresh = uniq.len() as u32;
                                let i = *uniq.entry(name.clone()).or_insert(fresh);
                                if i == fresh {
                                    uabs.push(false);
                                }
                                uabs[i as usize] |= *absolute;
                                TimerRef::Unique(i)
                            } else {
                                let i = intern(&mut names.timers, &mut idx[5], name);
                                if timer_absolute.len() <= i as usize {
                                    timer_absolute.push(false);
                                }
                                timer_absolute[i as usize] |= *absolute;
                                TimerRef::Shared(i)
                            };
                            Op::Timer {
                                timer,
                                period: period_us * 1000,
                            }
                        }
                        Event::Lock(m) => Op::Lock(intern(&mut names.mutexes, &mut idx[0], m)),
                        Event::Unlock(m) => Op::Unlock(intern(&mut names.mutexes, &mut idx[0], m)),
                        Event::Wait { cond, mutex } | Event::Sync { cond, mutex } => {
                            let c = intern(&mut names.conds, &mut idx[1], cond);
                            let m = intern(&mut names.mutexes, &mut idx[0], mutex);
                            if matches!(e, Event::Wait { .. }) {
                                Op::Wait { cond: c, mutex: m }
                            } else {
                                Op::Sync { cond: c, mutex: m }
                            }
                        }
                        Event::Signal(c) => Op::Signal(intern(&mut names.conds, &mut idx[1], c)),
                        Event::Broad(c) => Op::Broad(intern(&mut names.conds, &mut idx[1], c)),
                        Event::Barrier(b) => {
                            let i = intern(&mut names.barriers, &mut idx[2], b);
                            if barrier_users.len() <= i as usize {
                                barrier_users.push(0);
                            }
                            barrier_users[i as usize] += t.instance; // per textual use, as rt-app counts
                            Op::Barrier(i)
                        }
                        Event::SemPost(s) => Op::SemPost(intern(&mut names.sems, &mut idx[3], s)),
                        Event::SemWait(s) => Op::SemWait(intern(&mut names.sems, &mut idx[3], s)),
                        Event::Suspend(s) => {
                            Op::Suspend(intern(&mut names.suspends, &mut idx[4], s))
                        }
                        Event::Resume(s) => Op::Resume(intern(&mut names.suspends, &mut idx[4], s)),
                        Event::Yield => Op::Yield,
                        Event::Fork(name) => {
                            Op::Fork(wl.task(name).expect("checked by the parser") as u32)
                        }
                    };
                    ops.push(op);
                    markers.push((e.type_number(), e.desc()));
                }
                phases.push(CPhase {
                    loops: p.loops,
                    ops,
                    markers,
                    nice: p
                        .params
                        .priority
                        .filter(|_| p.params.policy.is_none_or(|x| x.is_fair())),
                    uclamp: check_uclamp(&p.params, &format!(".phases.{}", p.name))?,
                    cpus: check_cpus(&p.cpus, &format!(".phases.{}", p.name))?,
                });
            }
            let policy = t.params.policy.unwrap_or(Policy::Other);
            tasks.push(CTask {
                name: t.name.clone(),
                instance: t.instance,
                delay: t.delay_us * 1000,
                loops: t.loops,
                attr: {
                    let (util_min, util_max) = check_uclamp(&t.params, "")?;
                    SchedAttr {
                        policy,
                        nice: if policy.is_fair() {
                            t.params.priority.unwrap_or(0)
                        } else {
                            0
                        },
                        rt_priority: match policy {
                            Policy::Fifo | Policy::Rr => t.params.priority.unwrap_or(10) as u32,
                            _ => 0,
                        },
                        dl: dl_attr(t, policy, n)?,
                        slice: t
                            .params
                            .dl_runtime_us
                            .filter(|&r| r > 0 && policy.is_fair())
                            .map(|r| r * 1000),
                        util_min,
                        util_max,
                    }
                },
                cpus: check_cpus(&t.cpus, "")?,
                phases,
                unique_timers: uniq.len() as u32,
                forks: 0,
            });
            unique_absolute.push(uabs);
        }
        Ok(Program {
            tasks,
            names,
            barrier_users,
            timer_absolute,
            unique_absolute,
            ftrace: wl.global.ftrace,
            logs: wl.global.log_size != LogSize::Disable,
            cumulative_slack: wl.global.cumulative_slack,
            pi: wl.global.pi_enabled,
            warnings: unsimulated(wl),
        })
    }

    /// `sched_uclamp_used`: some task sets a clamp (until then the kernel skips the
    /// runqueues' clamp accounting).
    pub(super) fn uses_uclamp(&self) -> bool {
        let set = |c: &Clamps| *c != (None, None);
        self.tasks.iter().any(|t| {
            set(&(t.attr.util_min, t.attr.util_max)) || t.phases.iter().any(|p| set(&p.uclamp))
        })
    }

    /// A task whose loops never end, if any.
    pub(super) fn runs_for_ever(&self) -> Option<&str> {
        self.tasks
            .iter()
            .find(|t| {
                t.instance > 0
                    && (t.loops < 0
                        || t.phases.iter().any(|p| p.loops <= 0)
                        || t.phases.iter().flat_map(|p| &p.ops).any(|o| {
                            matches!(
                                o,
                                Op::Work {
                                    units: u128::MAX,
                                    ..
                                }
                            )
                        }))
            })
            .map(|t| t.name.as_str())
    }

    pub(super) fn resources(&self) -> Resources {
        let n = &self.names;
        Resources {
            conds: vec![Vec::new(); n.conds.len()],
            barriers: self
                .barrier_users
                .iter()
                .map(|&u| (u, Vec::new()))
                .collect(),
            sems: vec![(0, VecDeque::new()); n.sems.len()],
            suspends: vec![Vec::new(); n.suspends.len()],
            timers: vec![None; n.timers.len()],
            waiting: HashMap::new(),
        }
    }

    /// How many mutexes the workload names.
    pub(super) fn nr_mutexes(&self) -> usize {
        self.names.mutexes.len()
    }

    /// A new thread of task `def` (`forked` by another thread, or at start): its pid,
    /// comm, attributes and affinity, and its program state.
    pub(super) fn new_thread(
        &mut self,
        def: usize,
        id: u32,
        forked: bool,
        now: u64,
    ) -> (u32, String, &SchedAttr, Option<Vec<bool>>, Thread) {
        let t = &mut self.tasks[def];
        let comm = if forked {
            t.forks += 1;
            format!("{}-{id}-{:04}", t.name, t.forks - 1)
        } else {
            format!("{}-{id}", t.name)
        };
        let thread = Thread {
            def: def as u32,
            idx: id,
            phase: 0,
            phase_iter: 0,
            task_iter: 0,
            op: 0,
            started: false,
            // Forked threads skip the start barrier but keep t_zero + delay as their anchor.
            t_first: SIM_START + t.delay,
            unique: vec![None; t.unique_timers as usize],
            row: LogRow::default(),
            iter_start: now,
            run_from: None,
            wait_mutex: None,
            action: Action::Continue,
            run_start: now,
            wake_gen: 0,
            timer_expiry: None,
            stats: RtappStats::default(),
        };
        (PID_BASE + id, comm, &t.attr, t.cpus.clone(), thread)
    }
}

/// `run` work: `us` × `scale` reference ns (`scale` 1000 for µs, 1 for bytes).
fn work(w: Work, pload: u64, scale: u128) -> Op {
    match w {
        Work::Us(us) => Op::Work {
            units: us as u128 * scale * WORK_UNITS_PER_NS,
            us: if scale == 1000 { us } else { 0 },
            perf: if scale == 1000 { us / pload } else { 0 },
        },
        Work::Forever => Op::Work {
            units: u128::MAX,
            us: 0,
            perf: 0,
        },
    }
}

/// Synchronisation objects, global by (name, kind) as in rt-app (the mutexes are the
/// scheduler's: `sched::rtmutex`).
pub(super) struct Resources {
    /// Waiters and the mutex each must take back.
    conds: Vec<Vec<(u32, u32)>>,
    /// Users needed, threads waiting.
    barriers: Vec<(u32, Vec<u32>)>,
    sems: Vec<(u64, VecDeque<u32>)>,
    suspends: Vec<Vec<u32>>,
    /// Next expiry of each shared timer.
    timers: Vec<Option<u64>>,
    /// What each blocked thread (by pid) waits for, for deadlock reports.
    waiting: HashMap<u32, String>,
}

impl Resources {
    pub(super) fn blocked_on(&self, pid: u32) -> String {
        self.waiting
            .get(&pid)
            .cloned()
            .unwrap_or_else(|| "?".into())
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

/// A thread as the machine runs it: where it is in its task's phases, and its work.
pub(super) struct Thread {
    def: u32,
    idx: u32,
    phase: usize,
    phase_iter: i64,
    task_iter: i64,
    op: usize,
    started: bool,
    t_first: u64,
    unique: Vec<Option<u64>>,
    row: LogRow,
    iter_start: u64,
    run_from: Option<u64>,
    wait_mutex: Option<u32>,
    pub(super) action: Action,
    /// When the current stint on the CPU began (for work accounting).
    pub(super) run_start: Ns,
    /// Wake event generation: a later sleep makes older wake events stale.
    pub(super) wake_gen: u32,
    timer_expiry: Option<Ns>,
    pub(super) stats: RtappStats,
}

/// What the program does next with the thread.
enum Step {
    /// It stays on the CPU with work to do.
    Busy,
    /// It left the CPU (sleep, block, exit, yield).
    Off,
}

impl Engine {
    /// The running thread `id` has the CPU and nothing to finish: run its program on.
    pub(super) fn thread_runs(&mut self, s: &mut Sched, id: u32) {
        if self.threads[id as usize].action != Action::Continue
            || s.tasks[id as usize].state != TaskState::Running
        {
            return;
        }
        let now = self.now;
        let th = &mut self.threads[id as usize];
        if let Some(from) = th.run_from.take() {
            th.row.run += now - from;
        }
        if let Some(exp) = th.timer_expiry.take() {
            th.row.wu_lat += (now - exp + 500) / 1000;
        }
        for _ in 0..MAX_EVENTS_AT_ONE_INSTANT {
            if let Step::Off = self.step(s, id) {
                return;
            }
            // Busy, or preempted by what the event woke: it goes on when it runs again.
            if self.threads[id as usize].action != Action::Continue
                || s.tasks[id as usize].state != TaskState::Running
            {
                return;
            }
        }
        // Only zero-length events, for ever: simulated time could never move on.
        let comm = &s.tasks[id as usize].comm;
        self.totals.deadlock = Some(format!(
            "livelock at {:.6} s: {comm} loops on events that take no time",
            (self.now - SIM_START) as f64 / 1e9
        ));
    }

    fn marker(&mut self, s: &Sched, id: u32, text: String) {
        let cpu = s.tasks[id as usize].cpu;
        self.emit(
            &s.tasks,
            &Tracepoint::Print {
                task: id,
                cpu,
                text,
            },
        );
    }

    /// `id` stays on the CPU if it still runs after what it just did.
    fn busy_if_running(s: &Sched, id: u32) -> Step {
        if s.tasks[id as usize].state == TaskState::Running {
            Step::Busy
        } else {
            Step::Off
        }
    }

    /// Wake the threads in `all`, in order, from the CPU of `id`.
    fn wake_all(&mut self, s: &mut Sched, id: u32, all: Vec<u32>) {
        let cpu = s.tasks[id as usize].cpu;
        for w in all {
            self.res.waiting.remove(&s.tasks[w as usize].pid);
            self.wake(s, w, cpu);
        }
    }

    /// One event, or the end of a phase iteration.
    fn step(&mut self, s: &mut Sched, id: u32) -> Step {
        let now = self.now;
        let (def, phase, op_i) = {
            let th = &self.threads[id as usize];
            (th.def as usize, th.phase, th.op)
        };
        if !self.threads[id as usize].started {
            return self.thread_start(s, id);
        }
        let nr_ops = self.prog.tasks[def].phases[phase].ops.len();
        if op_i == nr_ops {
            return self.iteration_end(s, id);
        }
        if op_i == 0 {
            self.iteration_start(s, id);
        }
        let op = self.prog.tasks[def].phases[phase].ops[op_i];
        if self.tracing && self.prog.ftrace.event {
            let (ty, desc) = self.prog.tasks[def].phases[phase].markers[op_i].clone();
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
                th.action = Action::Work { left: units };
                Step::Busy
            }
            Op::Runtime { ns, us } => {
                th.row.c_duration += us;
                th.run_from = Some(now);
                th.action = Action::Until(now.saturating_add(ns));
                Step::Busy
            }
            Op::Sleep(ns) => {
                self.sleep_until(s, id, now + ns);
                Step::Off
            }
            Op::Timer { timer, period } => self.timer(s, id, def, timer, period),
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
            Op::Fork(target) => {
                self.fork_thread(s, target as usize, Some(id));
                Self::busy_if_running(s, id)
            }
        }
    }

    fn block(&mut self, s: &mut Sched, id: u32, what: String) -> Step {
        self.res.waiting.insert(s.tasks[id as usize].pid, what);
        self.block_current(s, id, TaskState::Blocked);
        Step::Off
    }

    /// Thread start: `rtapp_task: event=start`, then sleep until t_zero + delay.
    fn thread_start(&mut self, s: &mut Sched, id: u32) -> Step {
        self.threads[id as usize].started = true;
        if self.tracing && self.prog.ftrace.task {
            self.marker(s, id, "rtapp_task: event=start".into());
        }
        let t_first = self.threads[id as usize].t_first;
        if t_first > self.now {
            self.sleep_until(s, id, t_first);
            return Step::Off;
        }
        Step::Busy
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
        let (task_iter, phase_iter) = (th.task_iter, th.phase_iter);
        // Affinity per iteration: the phase's, else the task's, else every CPU (not sticky).
        let ct = &self.prog.tasks[def];
        let allowed = ct.phases[phase]
            .cpus
            .clone()
            .or_else(|| ct.cpus.clone())
            .unwrap_or_else(|| vec![true; s.rqs.len()]);
        let (nice, uclamp) = (ct.phases[phase].nice, ct.phases[phase].uclamp);
        s.set_cpus_allowed(id, allowed);
        if let Some(nice) = nice {
            s.set_user_nice(id, nice, self);
        }
        if uclamp != (None, None) {
            s.sched_setattr_uclamp(id, uclamp.0, uclamp.1);
        }
        if self.tracing && self.prog.ftrace.loop_ {
            self.marker(s, id, format!("rtapp_loop: event=start thread_loop={task_iter} phase={phase} phase_loop={phase_iter}"));
        }
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
        if self.tracing {
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
        let ct = &self.prog.tasks[def];
        let th = &mut self.threads[id as usize];
        th.op = 0;
        th.phase_iter += 1;
        if th.phase_iter == ct.phases[phase].loops {
            th.phase_iter = 0;
            th.phase += 1;
            if th.phase == ct.phases.len() {
                th.phase = 0;
                th.task_iter += 1;
                if th.task_iter == ct.loops {
                    return self.exit(s, id);
                }
            }
        }
        Step::Busy
    }

    fn exit(&mut self, s: &mut Sched, id: u32) -> Step {
        if self.tracing && self.prog.ftrace.task {
            self.marker(s, id, "rtapp_task: event=end".into());
        }
        self.block_current(s, id, TaskState::Dead);
        Step::Off
    }

    /// rt-app's timer event: sleep to the next expiry, or record an overrun.
    fn timer(&mut self, s: &mut Sched, id: u32, def: usize, timer: TimerRef, period: u64) -> Step {
        let now = self.now;
        let t_first = self.threads[id as usize].t_first;
        let (slot, absolute) = match timer {
            TimerRef::Unique(i) => (
                &mut self.threads[id as usize].unique[i as usize],
                self.prog.unique_absolute[def][i as usize],
            ),
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
            self.sleep_until(s, id, expiry);
            return Step::Off;
        }
        th.row.wu_lat = 0; // an overrun wipes the iteration's latency (rt-app)
        Step::Busy
    }

    fn lock(&mut self, s: &mut Sched, id: u32, m: u32) -> Step {
        if s.rt_mutex_trylock(id, m) {
            return Step::Busy;
        }
        s.rt_mutex_block(id, m, self);
        let name = format!("mutex {}", self.prog.names.mutexes[m as usize]);
        self.block(s, id, name)
    }

    /// Unlock, handing the mutex to the first waiter, who wakes.
    fn unlock(&mut self, s: &mut Sched, id: u32, m: u32) {
        let cpu = s.tasks[id as usize].cpu;
        s.rt_mutex_unlock(id, m, self, |s, e, w| {
            e.res.waiting.remove(&s.tasks[w as usize].pid);
            e.wake(s, w, cpu);
        });
    }

    fn cond_wait(&mut self, s: &mut Sched, id: u32, c: u32, m: u32) -> Step {
        self.unlock(s, id, m);
        self.res.conds[c as usize].push((id, m));
        self.threads[id as usize].wait_mutex = Some(m);
        let name = format!("condition {}", self.prog.names.conds[c as usize]);
        self.block(s, id, name)
    }

    /// Signal (one waiter) or broadcast; a waiter takes its mutex back before it runs.
    fn cond_wake(&mut self, s: &mut Sched, id: u32, c: u32, all: bool) {
        let cpu = s.tasks[id as usize].cpu;
        let n = if all {
            self.res.conds[c as usize].len()
        } else {
            1.min(self.res.conds[c as usize].len())
        };
        let woken: Vec<(u32, u32)> = self.res.conds[c as usize].drain(..n).collect();
        for (w, m) in woken {
            self.threads[w as usize].wait_mutex = None;
            if s.rt_mutex_trylock(w, m) {
                self.res.waiting.remove(&s.tasks[w as usize].pid);
                self.wake(s, w, cpu);
            } else {
                s.rt_mutex_block(w, m, self);
                let name = format!("mutex {}", self.prog.names.mutexes[m as usize]);
                self.res.waiting.insert(s.tasks[w as usize].pid, name);
            }
        }
    }
}
