//! The program format the engine interprets: per task definition, its threads' scheduling
//! attributes and phases of operations, with every resource (mutex, condition, barrier,
//! semaphore, suspend point, timer) resolved to an index. The rt-app front end compiles into
//! it (`workload::rtapp::compile`); workload generators target it too.
//!
//! Cost model: `Work` is work at the reference speed (the biggest CPU at its highest OPP) in
//! `WORK_UNITS_PER_NS` units per ns; `Runtime` is wall-clock busy time; the other operations
//! take no time (`sim` spaces them by the trace clock's 1 ns).

use super::Ftrace;
use crate::sched::uapi::SchedAttr;
use crate::workload::cgroups::Cgroups;
use std::ops::Range;

/// Work units per reference ns (fixed point: a slower CPU consumes fewer per ns).
pub const WORK_UNITS_PER_NS: u128 = 1 << 20;

/// One operation of a thread, resources resolved to indices (times in ns).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    /// CPU work of `units` (u128::MAX: for ever); `us` and `perf` are what rt-app's log
    /// reports for it (the requested µs, and the loops of `pLoad` that are).
    Work {
        units: u128,
        us: u64,
        perf: u64,
    },
    /// Busy for `ns` of wall-clock time, whatever the CPU's speed.
    Runtime {
        ns: u64,
        us: u64,
    },
    Sleep(u64),
    /// A kernel thread's `schedule_timeout` on a timer-wheel timer: sleep until the next
    /// `phase + k·period` after the workload's start that is still to come (no slack, no
    /// system call).
    Timeout {
        period: u64,
        phase: u64,
    },
    /// Sleep until the timer's next expiry, then arm it `period` later.
    Timer {
        timer: TimerRef,
        period: u64,
    },
    /// cyclictest's period (rt-tests' `timerthread`): `clock_nanosleep(TIMER_ABSTIME)` to
    /// the next expiry, `interval` ns after the last (the first after the thread's start;
    /// missed ones skipped), then the latency from the expiry to the thread's return, in µs
    /// (`nsecs`: ns), counted in its statistics and its histogram of `hist` buckets.
    Cyclic {
        interval: u64,
        hist: u32,
        nsecs: bool,
    },
    Lock(u32),
    Unlock(u32),
    /// `pthread_cond_wait`: release the mutex, wait for a signal, take the mutex back.
    Wait {
        cond: u32,
        mutex: u32,
    },
    Signal(u32),
    /// Signal every waiter.
    Broad(u32),
    /// Signal, then wait, atomically.
    Sync {
        cond: u32,
        mutex: u32,
    },
    /// Wait until every user has reached it.
    Barrier(u32),
    /// Sleep until another thread resumes this point.
    Suspend(u32),
    Resume(u32),
    SemPost(u32),
    SemWait(u32),
    Yield,
    /// Create a thread of task definition `n`.
    Fork(u32),
    /// rt-app's main thread: `pthread_create` of a thread of task definition `n`, which
    /// meets the others at the start barrier.
    Create(u32),
    /// rt-app's main thread: `pthread_join` of every thread it created.
    Join,
    /// `write` `bytes` to channel `chan` (a pipe or socket), waiting for room.
    Write {
        chan: u32,
        bytes: u32,
    },
    /// `read` `bytes` from channel `chan`, waiting until that many are there.
    Read {
        chan: u32,
        bytes: u32,
    },
    /// `poll` of channel `chan` for input: wait until it holds a byte, which stays there.
    Poll(u32),
    /// `fork` (`process`) or `pthread_create` of a thread of task definition `def`, a child
    /// of this one: the kernel's time on the creator's CPU first.
    Spawn {
        def: u32,
        process: bool,
    },
    /// `wait`: until a child has exited (at once if one has and is not yet reaped, or if
    /// none is left).
    Reap,
    /// A benchmark's `gettimeofday` before it starts its tasks: the start of the time it
    /// reports (`RunResult::bench_start_ns`).
    Clock,
    /// A step of schbench's threads (`sim/schbench.rs`).
    Schbench(SchOp),
}

/// What a schbench thread does (schbench.c), message thread `m` or worker `w` by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchOp {
    /// The main thread's second (`sleep_for_runtime`): an RPS sample, a report at each
    /// interval, and at the runtime's end `stopping`, which ends its loop.
    Tick,
    /// `fpost` of message thread `m`'s futex (the main thread's, before it joins `m`).
    PostMessage(u32),
    /// The main thread's last report, once every thread has been joined.
    End,
    /// `run_msg_thread`'s loop: wake every worker on its list, then wait on its futex.
    Message(u32),
    /// `run_rps_thread`'s loop: queue the second's next request on a worker and wake it,
    /// or sleep (`Nap`) until the second is over.
    Rps(u32),
    /// The sleep `Rps` chose.
    Nap(u32),
    /// `fpost` of worker `w`'s futex (its message thread's, before it joins `w`).
    PostWorker(u32),
    /// `msg_and_wait`: enlist with the message thread, wake it, wait to be woken; count the
    /// wakeup latency. (In RPS mode: take the requests queued.)
    Request(u32),
    /// `gettimeofday(&work_start)`.
    WorkStart(u32),
    /// `lock_this_cpu`: spin on the CPU's lock until it is free.
    Lock(u32),
    Unlock(u32),
    /// The request's end: count it and its latency; on to the next request queued.
    Done(u32),
}

/// A schbench run's shape (the state its threads share is `sim/schbench.rs`'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchbenchShape {
    pub message_threads: u32,
    /// Worker threads per message thread.
    pub workers: u32,
    /// Requests per second per message thread (0: not RPS mode).
    pub rps: u32,
    /// `-A`: the busy percentage the rate is scaled to (0: fixed rate).
    pub auto_rps: u32,
    /// `-r`, `-w`, `-i`, `-z` (s).
    pub runtime: u64,
    pub warmup: u64,
    pub interval: u64,
    pub zero: u64,
    /// `-p`: a pipe test's transfer (bytes; 0: not one), and the work of its `memset`.
    pub pipe: u32,
    pub memset_units: u128,
}

impl Op {
    /// Whether the operation is CPU work (the others wake threads, wait or leave the CPU).
    pub fn is_work(self) -> bool {
        matches!(self, Op::Work { .. } | Op::Runtime { .. })
    }
}

/// A kernel object that carries bytes between threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChanKind {
    /// A pipe (64 KiB of page buffers).
    Pipe,
    /// A connected pair of Unix stream sockets, written on one side and read on the other.
    Unix,
}

/// Which timer a `Timer` operation waits on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimerRef {
    /// Index among the task's `unique*` timers: one per thread.
    Unique(u32),
    Shared(u32),
}

/// One phase: its operations, run `loops` times (≤ 0: for ever), and the attributes it
/// sets as it starts.
pub struct Phase {
    pub loops: i64,
    /// Its operations: a range of `Program::code`.
    pub ops: Range<u32>,
    pub nice: Option<i32>,
    /// util_min/util_max to set at the phase's start (None: unchanged).
    pub uclamp: Clamps,
    pub cpus: Option<Vec<bool>>,
    /// The task group to move to at the phase's start (rt-app's `taskgroup`, which sticks).
    pub group: Option<u32>,
}

/// Requested util_min and util_max; None leaves a clamp as it is.
pub type Clamps = (Option<u32>, Option<u32>);

/// A task definition: `instance` threads, each starting after `delay` ns and running the
/// phases `loops` times (< 0: for ever) with the scheduling attributes `attr`.
pub struct TaskProgram {
    pub name: String,
    pub instance: u32,
    pub delay: u64,
    pub loops: i64,
    /// What its threads ask of the scheduler.
    pub attr: SchedAttr,
    pub cpus: Option<Vec<bool>>,
    pub phases: Vec<Phase>,
    /// Its `unique*` timers, one of each per thread: absolute (else relative to the
    /// thread's last wakeup)?
    pub unique_absolute: Vec<bool>,
    /// The bytes each of its threads touches when it runs (the cache-affinity model's
    /// working set).
    pub working_set: u64,
    /// Its work's own stretch quantiles (1/1000, as the platform's `work_stretch`), in place
    /// of the platform's; empty: the platform's.
    pub work_stretch: Vec<u64>,
}

/// Every phase's operations, one after the other (a phase has a range): the engine
/// reaches a thread's next operation in one step.
#[derive(Default)]
pub struct Code {
    pub ops: Vec<Op>,
    /// rt-app's `rtapp_event` type and desc of each operation.
    pub markers: Vec<(u32, String)>,
}

impl Code {
    /// Append `ops` with their `markers`: their range.
    pub fn push(&mut self, ops: Vec<Op>, markers: Vec<(u32, String)>) -> Range<u32> {
        let start = self.ops.len() as u32;
        self.ops.extend(ops);
        self.markers.extend(markers);
        start..self.ops.len() as u32
    }

    /// The operations of `phase`.
    pub fn of(&self, phase: &Phase) -> &[Op] {
        &self.ops[phase.ops.start as usize..phase.ops.end as usize]
    }
}

/// The whole workload, compiled.
pub struct Program {
    pub tasks: Vec<TaskProgram>,
    pub code: Code,
    pub names: Names,
    /// Each barrier's users (threads that must reach it).
    pub barrier_users: Vec<u32>,
    /// How many task definitions (the first ones: rt-app's, not generators') have their
    /// threads meet at rt-app's start barrier (`threads_barrier`) before their first phase.
    pub start_barrier_tasks: usize,
    /// rt-app's main thread, which creates those threads one by one (its task definition),
    /// when they meet at the barrier.
    pub main: Option<usize>,
    /// The pipes and sockets, by index.
    pub channels: Vec<ChanKind>,
    /// Each shared timer: absolute (else relative to the thread's last wakeup)?
    pub timer_absolute: Vec<bool>,
    pub ftrace: Ftrace,
    pub logs: bool,
    pub cumulative_slack: bool,
    /// `pi_enabled`: mutexes are PTHREAD_PRIO_INHERIT, rt_mutexes in the kernel.
    pub pi: bool,
    /// The cgroup hierarchy: the taskgroups named, then what the run describes.
    pub groups: Cgroups,
    /// Settings the engine does not simulate yet, one message each.
    pub warnings: Vec<String>,
    /// A schbench generator's shape, if the workload has one.
    pub schbench: Option<SchbenchShape>,
    /// The pids of the machine's own kernel threads (`sim/kthread.rs`), whose task
    /// definitions are the last ones.
    pub kthreads: Vec<u32>,
}

/// Resource names, by kind, in order of first use.
#[derive(Default)]
pub struct Names {
    pub mutexes: Vec<String>,
    pub conds: Vec<String>,
    pub barriers: Vec<String>,
    pub sems: Vec<String>,
    pub suspends: Vec<String>,
    pub timers: Vec<String>,
}

impl Program {
    /// `sched_uclamp_used`: some task sets a clamp (until then the kernel skips the
    /// runqueues' clamp accounting).
    pub fn uses_uclamp(&self) -> bool {
        let set = |c: &Clamps| *c != (None, None);
        self.tasks.iter().any(|t| {
            set(&(t.attr.util_min, t.attr.util_max)) || t.phases.iter().any(|p| set(&p.uclamp))
        })
    }

    /// A task whose loops never end, if any (schbench's end theirs at its runtime's end).
    pub fn runs_for_ever(&self) -> Option<&str> {
        let schbench = |t: &TaskProgram| {
            (t.phases.iter().flat_map(|p| self.code.of(p))).any(|o| matches!(o, Op::Schbench(_)))
        };
        self.tasks
            .iter()
            .find(|t| {
                t.instance > 0
                    && !schbench(t)
                    && (t.loops < 0
                        || t.phases.iter().any(|p| p.loops <= 0)
                        || t.phases.iter().flat_map(|p| self.code.of(p)).any(|o| {
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

    /// How many mutexes the workload names.
    pub fn nr_mutexes(&self) -> usize {
        self.names.mutexes.len()
    }
}
