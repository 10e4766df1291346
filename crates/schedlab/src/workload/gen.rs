//! Workload generators compiled to the program format: hackbench (rt-tests' `hackbench`,
//! the kernel's tools/perf/bench/sched-messaging.c), perf bench sched pipe
//! (tools/perf/bench/sched-pipe.c), cyclictest (rt-tests' cyclictest.c) and schbench
//! (schbench.c), with the real tools' structure and defaults. A run file names them in its
//! `generators` object; `schedlab hackbench`, `schedlab perf-bench-pipe`,
//! `schedlab cyclictest` and `schedlab schbench` write one for a command line.

use super::program::{
    ChanKind, Op, Phase, Program, SchOp, SchbenchShape, TaskProgram, WORK_UNITS_PER_NS,
};
use crate::sched::uapi::{Policy, SchedAttr};

/// `PIPE_BUF`: the largest message, written in one atomic step (a pipe) or one skb.
pub const MAX_DATASIZE: u32 = 4096;
/// The most loops a generator may ask for (each is at least one system call per task).
pub const MAX_LOOPS: u64 = 1 << 40;
/// cyclictest's `HIST_MAX`: the most histogram buckets (`-h` above it is cut to it).
pub const HIST_MAX: u32 = 1_000_000;

/// `hackbench [-g GROUPS] [-f FDS] [-l LOOPS] [-s DATASIZE] [--pipe] [--threads]`: each group
/// has FDS receivers, each reading from its own pipe or socket, and FDS senders, each writing
/// LOOPS messages of DATASIZE bytes to every receiver of its group in turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hackbench {
    pub groups: u32,
    pub fds: u32,
    pub loops: u64,
    pub datasize: u32,
    pub pipe: bool,
    /// Threads of one process rather than processes: created by `pthread_create` and gone
    /// without a process's exit. Simplified: no mm switch is modelled.
    pub threads: bool,
    /// The main process forks the tasks, waits until each is ready and kicks them off
    /// together, as hackbench does. Off (an idealization): the tasks start at once, with no
    /// main process, so that a run of few loops has no start-up transient to scale up.
    pub kick: bool,
    /// The cgroup its tasks run in (`/a/b`; None: the root).
    pub taskgroup: Option<String>,
}

impl Default for Hackbench {
    /// rt-tests' defaults: 10 groups of 20, 100 loops, 100-byte messages, sockets, processes.
    fn default() -> Hackbench {
        Hackbench {
            groups: 10,
            fds: 20,
            loops: 100,
            datasize: 100,
            pipe: false,
            threads: false,
            kick: true,
            taskgroup: None,
        }
    }
}

/// `perf bench sched pipe [-l LOOPS] [-T]`: two tasks pass a 4-byte integer back and forth
/// over two pipes, LOOPS round trips: perf's process and the child it forks, or two threads
/// it creates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipeBench {
    pub loops: u64,
    pub threaded: bool,
    /// The cgroup both tasks run in (perf's `-G` with one group for both).
    pub taskgroup: Option<String>,
}

impl Default for PipeBench {
    fn default() -> PipeBench {
        PipeBench {
            loops: 1_000_000,
            threaded: false,
            taskgroup: None,
        }
    }
}

/// `cyclictest [-t [N]] [-p PRIO] [--policy P] [--priospread] [-i INTV] [-d DIST] [-l LOOPS]
/// [-h US] [-N] [-a CPUSET]` (rt-tests 2.x): measuring threads that each wake every interval
/// on an absolute timer and count how late they run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cyclictest {
    /// `-t`: measuring threads (0: one per CPU, `-t` without a number).
    pub threads: u32,
    /// `-p`: the (highest) thread's priority; 0 with an RT policy: threads + 1.
    pub priority: u32,
    /// `--policy` (`-p` makes it SCHED_FIFO unless it is SCHED_RR): with a priority, the
    /// threads' RT policy (SCHED_RR, else SCHED_FIFO); without, SCHED_OTHER.
    pub policy: Policy,
    /// `--priospread`: each thread one priority below the one before.
    pub priospread: bool,
    /// `-i`, `-d` (µs): thread i's interval is INTV + i·DIST (without a histogram).
    pub interval: u64,
    pub distance: u64,
    /// `-l`: periods per thread (0: until the run's end, `-D`).
    pub loops: u64,
    /// `-h`: histogram buckets (0: none).
    pub histogram: u32,
    /// `-N`: latencies in ns.
    pub nsecs: bool,
    /// `-a CPUSET`: pin thread i to the set's (i mod size)-th CPU (None: every CPU's, as
    /// rt-tests 2.x pins by default, `AFFINITY_USEALL`).
    pub affinity: Option<Vec<usize>>,
    /// The cgroup its threads run in.
    pub taskgroup: Option<String>,
}

impl Default for Cyclictest {
    /// cyclictest's defaults: one SCHED_OTHER thread, 1000 µs apart (`DEFAULT_INTERVAL`),
    /// 500 µs distance (`DEFAULT_DISTANCE`), endless.
    fn default() -> Cyclictest {
        Cyclictest {
            threads: 1,
            priority: 0,
            policy: Policy::Other,
            priospread: false,
            interval: 1000,
            distance: 500,
            loops: 0,
            histogram: 0,
            nsecs: false,
            affinity: None,
            taskgroup: None,
        }
    }
}

/// `schbench [-m M] [-t T] [-r S] [-w S] [-i S] [-z S] [-F KB] [-n OPS] [-s US] [-R RPS] [-A PCT]
/// [-p BYTES] [-C] [-L] [--split PCT] [-M CPUS] [-W CPUS]` (schbench 1.x): M message threads,
/// each waking its T workers; a worker sleeps, then multiplies matrices of the cache
/// footprint OPS times under its CPU's lock (`-p`: no sleep and no work; each side writes
/// BYTES of the worker's transfer buffer before it posts the other).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schbench {
    pub message_threads: u32,
    /// Workers per message thread (0: the CPUs shared out, `-t` not given).
    pub workers: u32,
    /// `-r`, `-w`, `-i`, `-z` (s).
    pub runtime: u64,
    pub warmup: u64,
    pub interval: u64,
    pub zero: u64,
    /// `-F` (KiB), `-n`, `-s` (µs).
    pub footprint_kb: u64,
    pub operations: u64,
    pub sleep_usec: u64,
    /// `-R`: requests per second, all message threads together (0: not RPS mode).
    pub rps: u32,
    /// `-A`: the CPU busy percentage RPS mode's rate is scaled to each second (0: none;
    /// it implies `-R 10` when no rate is given).
    pub auto_rps: u32,
    /// `-p`: the bytes of a pipe test's transfer (0: not a pipe test).
    pub pipe: u32,
    /// `-C`: the sleep before the request's clock starts, no locking.
    pub calibrate: bool,
    /// `-L`: no per-CPU lock around the work.
    pub no_locking: bool,
    /// `--split`: the share of the footprint private to each worker (None: all of it).
    pub split: Option<u32>,
    /// `-M auto` or `-W auto`: message thread i on CPU i, the workers on every CPU (as
    /// `thread_auto_pin` sets them).
    pub auto_pin: bool,
    /// `-M`, `-W`: the message threads' CPUs (thread i on the set's (i mod size)-th) and
    /// the workers' (None: unpinned).
    pub message_cpus: Option<Vec<usize>>,
    pub worker_cpus: Option<Vec<usize>>,
    /// schedlab's own: one multiply-add of the matrix work at the reference CPU's top
    /// speed, in ps.
    pub matrix_ps: u64,
    /// schedlab's own: a 64-byte line of `-p`'s `memset` at the reference CPU's top speed,
    /// in ps.
    pub memset_ps: u64,
    /// schedlab's own: how much longer than `matrix_ps` says a request's work takes, as
    /// quantiles (1/1000, as a platform's `work_stretch`) in place of the platform's (an
    /// emulated machine's `schbench -C` with every CPU working, against one worker's);
    /// empty: the platform's. A pipe test has no matrix work: none.
    pub work_stretch: Vec<u64>,
    pub taskgroup: Option<String>,
}

/// A multiply-add of `do_some_math` (ps): `schbench -C -m 1 -t 1 -r 3`, built with gcc -O2
/// on an x86-64 host, reports a request latency p50 of 2124 µs for 5 × 104³ of them.
pub const MATRIX_PS: u64 = 377;

/// `-p`'s `PIPE_TRANSFER_BUFFER`: the largest transfer (a larger `-p` is cut to it).
pub const PIPE_TRANSFER_BUFFER: u32 = 1 << 20;

/// A 64-byte line of `memset` (ps), the buffer in the CPU's cache: on one CPU of an x86-64
/// host, `schbench -m 1 -t 1 -r 3` transfers 57,615 loops a second with `-p 1048576` and
/// 268,649 with `-p 1` (medians of 7 alternated runs), two memsets of 2^14 lines a loop
/// apart: (1/57,615 − 1/268,649) s / 2^15 = 416 ps. Simplified: the same on any CPU (a
/// buffer the other side wrote on another CPU costs about twice as much on that host).
pub const MEMSET_PS: u64 = 416;

impl Default for Schbench {
    /// schbench's defaults: one message thread, a worker per CPU, 30 s, reports every 10 s,
    /// 256 KiB, 5 operations, 100 µs sleeps.
    fn default() -> Schbench {
        Schbench {
            message_threads: 1,
            workers: 0,
            runtime: 30,
            warmup: 0,
            interval: 10,
            zero: 0,
            footprint_kb: 256,
            operations: 5,
            sleep_usec: 100,
            rps: 0,
            auto_rps: 0,
            pipe: 0,
            calibrate: false,
            no_locking: false,
            split: None,
            auto_pin: false,
            message_cpus: None,
            worker_cpus: None,
            matrix_ps: MATRIX_PS,
            memset_ps: MEMSET_PS,
            work_stretch: Vec::new(),
            taskgroup: None,
        }
    }
}

/// A CPU an option names that the machine does not have: (the option, the CPU).
pub type OutsideCpu = (&'static str, usize);

/// A generator entry of a run file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Generator {
    Hackbench(Hackbench),
    PipeBench(PipeBench),
    Cyclictest(Cyclictest),
    Schbench(Schbench),
}

impl Generator {
    /// The threads it creates.
    pub fn nr_threads(&self) -> usize {
        match self {
            Generator::Hackbench(h) => h.kick as usize + 2 * h.groups as usize * h.fds as usize,
            Generator::PipeBench(p) => 2 + p.threaded as usize,
            Generator::Cyclictest(c) => 1 + c.threads.max(1) as usize,
            Generator::Schbench(b) => {
                1 + b.message_threads as usize * (1 + b.workers.max(1) as usize)
            }
        }
    }

    /// The cgroup its tasks run in.
    pub fn taskgroup(&self) -> Option<&str> {
        match self {
            Generator::Hackbench(h) => h.taskgroup.as_deref(),
            Generator::PipeBench(p) => p.taskgroup.as_deref(),
            Generator::Cyclictest(c) => c.taskgroup.as_deref(),
            Generator::Schbench(b) => b.taskgroup.as_deref(),
        }
    }

    /// Add its tasks and channels to `prog`, its tasks in the task group `group`, for a
    /// machine of `nr_cpus` CPUs; a CPU it names that is not there is refused (with the
    /// option that names it).
    pub fn append(&self, prog: &mut Program, group: u32, nr_cpus: usize) -> Result<(), OutsideCpu> {
        match self {
            Generator::Hackbench(h) => h.append(prog, group),
            Generator::PipeBench(p) => p.append(prog, group),
            Generator::Cyclictest(c) => return c.append(prog, group, nr_cpus),
            Generator::Schbench(b) => return b.append(prog, group, nr_cpus),
        }
        Ok(())
    }
}

/// `THREAD_SIZE` (x86-64, arm64): a thread's kernel stack, which every system call uses.
const THREAD_SIZE: u64 = 16 << 10;
/// `PAGE_SIZE`: a pipe buffer's page, or a socket buffer's, that a message is copied through.
const PAGE_SIZE: u64 = 4 << 10;

/// A benchmark thread's working set: its kernel stack, its message buffer, and a page of
/// each channel it writes or reads.
fn working_set(ops: &[Op]) -> u64 {
    let bytes = ops.iter().map(|op| match *op {
        Op::Write { bytes, .. } | Op::Read { bytes, .. } => bytes as u64,
        _ => 0,
    });
    THREAD_SIZE + bytes.max().unwrap_or(0) + PAGE_SIZE * ops.len() as u64
}

/// Add a SCHED_OTHER nice-0 task of `name` running its `phases` (operations, loops) in turn,
/// of `instance` threads at the start (0: one another spawns): its index.
pub(crate) fn task(
    prog: &mut Program,
    name: String,
    phases: Vec<(Vec<Op>, u64)>,
    instance: u32,
    group: u32,
) -> u32 {
    let working_set = phases.iter().map(|(ops, _)| working_set(ops)).max();
    let phases = (phases.into_iter())
        .map(|(ops, loops)| {
            let markers = ops.iter().map(|_| (0, String::new())).collect();
            Phase {
                loops: loops as i64,
                ops: prog.code.push(ops, markers),
                nice: None,
                uclamp: (None, None),
                cpus: None,
                group: None,
            }
        })
        .collect();
    prog.tasks.push(TaskProgram {
        name,
        instance,
        delay: 0,
        loops: 1,
        attr: SchedAttr {
            group,
            ..SchedAttr::of(Policy::Other)
        },
        cpus: None,
        phases,
        unique_absolute: Vec::new(),
        working_set: working_set.unwrap_or(0),
        work_stretch: Vec::new(),
    });
    prog.tasks.len() as u32 - 1
}

/// A new channel of `kind` in `prog`: its index.
fn channel(prog: &mut Program, kind: ChanKind) -> u32 {
    prog.channels.push(kind);
    prog.channels.len() as u32 - 1
}

impl Hackbench {
    /// hackbench's main process and its children (rt-tests' hackbench.c, perf's
    /// sched-messaging.c): it forks each group's receivers, then its senders; each child
    /// writes a byte to the ready pipe and polls the wake pipe; once it has read every
    /// child's byte the main process takes its start time, writes the wake pipe (waking
    /// them all) and reaps them one by one. Without `kick`, the children alone, started.
    fn append(&self, prog: &mut Program, group: u32) {
        let kind = if self.pipe {
            ChanKind::Pipe
        } else {
            ChanKind::Unix
        };
        let kick = self
            .kick
            .then(|| (channel(prog, ChanKind::Pipe), channel(prog, ChanKind::Pipe)));
        let process = !self.threads;
        let mut main = Vec::new();
        let mut child = |prog: &mut Program, name, ops, loops| match kick {
            Some((ready, wake)) => {
                let start = vec![w((ready, 1)), Op::Poll(wake)];
                let def = task(prog, name, vec![(start, 1), (ops, loops)], 0, group);
                main.push(Op::Spawn { def, process });
            }
            None => {
                task(prog, name, vec![(ops, loops)], 1, group);
            }
        };
        for g in 0..self.groups {
            let chans: Vec<u32> = (0..self.fds).map(|_| channel(prog, kind)).collect();
            let msg = |chan| (chan, self.datasize);
            for (i, &chan) in chans.iter().enumerate() {
                let loops = self.fds as u64 * self.loops;
                child(
                    prog,
                    format!("hackbench-g{g}-r{i}"),
                    vec![r(msg(chan))],
                    loops,
                );
            }
            for i in 0..self.fds {
                let writes = chans.iter().map(|&chan| w(msg(chan))).collect();
                child(prog, format!("hackbench-g{g}-s{i}"), writes, self.loops);
            }
        }
        if let Some((ready, wake)) = kick {
            let n = main.len();
            main.extend(std::iter::repeat_n(r((ready, 1)), n));
            main.extend([Op::Clock, w((wake, 1))]);
            main.extend(std::iter::repeat_n(Op::Reap, n));
            task(prog, "hackbench".into(), vec![(main, 1)], 1, group);
        }
    }
}

/// A `write` of (channel, bytes).
fn w((chan, bytes): (u32, u32)) -> Op {
    Op::Write { chan, bytes }
}

/// A `read` of (channel, bytes).
fn r((chan, bytes): (u32, u32)) -> Op {
    Op::Read { chan, bytes }
}

impl PipeBench {
    /// tools/perf/bench/sched-pipe.c: worker 0 reads pipe 1 and writes pipe 2, worker 1
    /// writes pipe 1 and reads pipe 2, LOOPS times. perf takes its start time, then forks
    /// worker 0 and runs worker 1 itself and waits for the child (processes), or creates
    /// both as threads and joins them (`-T`).
    fn append(&self, prog: &mut Program, group: u32) {
        let (there, back) = (channel(prog, ChanKind::Pipe), channel(prog, ChanKind::Pipe));
        let int = |chan| (chan, 4);
        let loops = self.loops;
        let worker = |prog: &mut Program, i: usize, ops: Vec<Op>| {
            task(
                prog,
                format!("sched-pipe-{i}"),
                vec![(ops, loops)],
                0,
                group,
            )
        };
        let zero = worker(prog, 0, vec![r(int(there)), w(int(back))]);
        let one = vec![w(int(there)), r(int(back))];
        let (name, main) = if self.threaded {
            let one = worker(prog, 1, one);
            let spawn = |def| Op::Spawn {
                def,
                process: false,
            };
            let ops = vec![Op::Clock, spawn(zero), spawn(one), Op::Reap, Op::Reap];
            ("sched-pipe", vec![(ops, 1)])
        } else {
            let fork = Op::Spawn {
                def: zero,
                process: true,
            };
            let phases = vec![
                (vec![Op::Clock, fork], 1),
                (one, loops),
                (vec![Op::Reap], 1),
            ];
            ("sched-pipe-1", phases)
        };
        task(prog, name.into(), main, 1, group);
    }
}

/// cyclictest's main thread polls its threads every 10 ms (`usleep(10000)`).
const POLL_NS: u64 = 10_000_000;
/// ... and sleeps 50 ms once they are done, before it joins them.
const SHUTDOWN_NS: u64 = 50_000_000;

impl Cyclictest {
    /// rt-tests' cyclictest: the main thread creates the measuring threads one by one
    /// (`pthread_create`), then polls every 10 ms until each has run its loops, sleeps 50 ms
    /// and joins them (without `-l`, it polls until the run ends). Thread i runs SCHED_FIFO
    /// (or RR) at the priority given (or one below thread i−1's, `--priospread`), or
    /// SCHED_OTHER, pinned to a CPU of the set in turn. Simplified: each thread is created
    /// with its policy and CPU (the real one sets them first thing), and the main thread
    /// polls for the time the threads take without a missed period.
    fn append(&self, prog: &mut Program, group: u32, nr_cpus: usize) -> Result<(), OutsideCpu> {
        let all: Vec<usize> = (0..nr_cpus).collect();
        let set = self.affinity.as_deref().unwrap_or(&all);
        if let Some(&cpu) = set.iter().find(|&&c| c >= nr_cpus) {
            return Err(("affinity", cpu));
        }
        let threads = if self.threads == 0 {
            set.len() as u32
        } else {
            self.threads
        };
        // process_options: an RT policy (or --priospread) without a priority takes
        // threads + 1; a priority makes the policy SCHED_FIFO unless it is SCHED_RR.
        let rt = matches!(self.policy, Policy::Fifo | Policy::Rr);
        let mut priority = match self.priority {
            0 if rt || self.priospread => threads + 1,
            p => p,
        };
        let policy = match self.policy {
            Policy::Rr => Policy::Rr,
            _ => Policy::Fifo,
        };
        let distance = if self.histogram > 0 { 0 } else { self.distance };
        let mut spawns = Vec::new();
        let mut longest = 0;
        for i in 0..threads {
            let interval = (self.interval + i as u64 * distance) * 1000;
            longest = longest.max(interval * self.loops);
            let op = Op::Cyclic {
                interval,
                hist: self.histogram,
                nsecs: self.nsecs,
            };
            // (loops 0: a phase of no loop count runs for ever, until the run's end)
            let def = task(
                prog,
                "cyclictest".into(),
                vec![(vec![op], self.loops)],
                0,
                group,
            );
            let t = &mut prog.tasks[def as usize];
            t.attr = SchedAttr {
                group,
                rt_priority: priority,
                ..SchedAttr::of(if priority > 0 { policy } else { Policy::Other })
            };
            let cpu = set[i as usize % set.len()];
            t.cpus = Some((0..nr_cpus).map(|c| c == cpu).collect());
            spawns.push(Op::Spawn {
                def,
                process: false,
            });
            if self.priospread {
                priority = priority.saturating_sub(1);
            }
        }
        let n = spawns.len();
        let poll = vec![Op::Sleep(POLL_NS)];
        let main = match self.loops {
            0 => vec![(spawns, 1), (poll, 0)],
            _ => vec![
                (spawns, 1),
                (poll, longest / POLL_NS + 1),
                (vec![Op::Sleep(SHUTDOWN_NS)], 1),
                (vec![Op::Reap; n], 1),
            ],
        };
        task(prog, "cyclictest".into(), main, 1, group);
        Ok(())
    }
}

/// The work units of a `memset` of `bytes` at `line_ps` a 64-byte line.
fn memset_units(bytes: u32, line_ps: u64) -> u128 {
    bytes as u128 * line_ps as u128 * WORK_UNITS_PER_NS / 64_000
}

/// schbench's main thread's `sleep(1)` between its rounds.
const SECOND_NS: u64 = 1_000_000_000;

impl Schbench {
    /// The workers per message thread: `-t`, else the CPUs shared out (`get_nprocs`).
    pub fn workers_on(&self, nr_cpus: usize) -> u32 {
        match self.workers {
            0 => (nr_cpus as u32).div_ceil(self.message_threads),
            t => t,
        }
    }

    /// `do_some_math` `-n` times (on a private and a shared matrix with `--split`): the
    /// multiply-adds, a matrix's side being sqrt(KiB·1024/3/8) truncated as schbench does.
    fn multiply_adds(&self) -> u64 {
        let side = |kb: u64| (((kb * 1024 / 3 / 8) as f64).sqrt() as u64).pow(3);
        match self.split {
            None => self.operations * side(self.footprint_kb),
            Some(pct) => {
                let private = self.operations * pct as u64 / 100;
                let shared_kb = self.footprint_kb * (100 - pct as u64) / 100;
                let private_kb = self.footprint_kb * pct as u64 / 100;
                (self.operations - private) * side(shared_kb) + private * side(private_kb)
            }
        }
    }

    /// A worker's loop (`worker_thread`): `msg_and_wait`, then for each request the clock
    /// started, the sleep, the work under its CPU's lock, the request counted (`-C`: the
    /// sleep before the clock, no lock; `-p`: neither sleep nor work).
    fn worker_ops(&self, w: u32) -> Vec<Op> {
        let mut ops = vec![Op::Schbench(SchOp::Request(w))];
        if self.pipe > 0 {
            // (the transfer's memset is `msg_and_wait`'s, inside the request step)
            ops.extend([SchOp::WorkStart(w), SchOp::Done(w)].map(Op::Schbench));
            return ops;
        }
        let sleep = (self.sleep_usec > 0).then_some(Op::Sleep(self.sleep_usec * 1000));
        let units =
            self.multiply_adds() as u128 * self.matrix_ps as u128 * WORK_UNITS_PER_NS / 1000;
        let work = (units > 0).then_some(Op::Work {
            units,
            us: 0,
            perf: 0,
        });
        let locking = !(self.no_locking || self.calibrate);
        let lock = |op| locking.then_some(Op::Schbench(op));
        let start = Some(Op::Schbench(SchOp::WorkStart(w)));
        let body = if self.calibrate {
            [sleep, start, None, work, None]
        } else {
            [
                start,
                sleep,
                lock(SchOp::Lock(w)),
                work,
                lock(SchOp::Unlock(w)),
            ]
        };
        ops.extend(body.into_iter().flatten());
        ops.push(Op::Schbench(SchOp::Done(w)));
        ops
    }

    /// schbench's process: the main thread creates the message threads and runs its rounds
    /// a second apart until the runtime is up, then posts and joins each message thread and
    /// reports; each message thread creates its workers, runs its loop (waking its listed
    /// workers, or queueing requests at the RPS rate) until `stopping`, then posts and joins
    /// them. Simplified: threads are created with their CPUs (`-M`, `-W`); a message thread
    /// is pinned at once, not after it has created its workers.
    fn append(&self, prog: &mut Program, group: u32, nr_cpus: usize) -> Result<(), OutsideCpu> {
        let (m, t) = (self.message_threads, self.workers_on(nr_cpus));
        let rps = match (self.rps, self.auto_rps) {
            (0, 1..) => 10, // parse_options: -A starts at 10 requests a second
            (rps, _) => rps,
        };
        let (message_cpus, worker_cpus): (Option<Vec<usize>>, _) = match self.auto_pin {
            true => (
                Some((0..m as usize).collect()),
                Some((0..nr_cpus).collect()),
            ),
            false => (self.message_cpus.clone(), self.worker_cpus.clone()),
        };
        for (key, set) in [
            ("message_cpus", &message_cpus),
            ("worker_cpus", &worker_cpus),
        ] {
            if let Some(&cpu) = set.iter().flatten().find(|&&c| c >= nr_cpus) {
                return Err((key, cpu));
            }
        }
        let mask = |cpus: &[usize]| (0..nr_cpus).map(|c| cpus.contains(&c)).collect::<Vec<_>>();
        let mut main = Vec::new();
        for i in 0..m {
            let mut spawns = Vec::new();
            let mut joins = Vec::new();
            for j in 0..t {
                let w = i * t + j;
                let def = task(
                    prog,
                    "schbench-worker".into(),
                    vec![(self.worker_ops(w), 0)],
                    0,
                    group,
                );
                prog.tasks[def as usize].cpus = worker_cpus.as_deref().map(mask);
                if self.pipe == 0 {
                    prog.tasks[def as usize].work_stretch = self.work_stretch.clone();
                }
                spawns.push(Op::Spawn {
                    def,
                    process: false,
                });
                joins.extend([Op::Schbench(SchOp::PostWorker(w)), Op::Reap]);
            }
            // (`requests_per_sec /= message_threads`: 0 is not RPS mode)
            let run = match rps / m {
                0 => vec![Op::Schbench(SchOp::Message(i))],
                _ => vec![Op::Schbench(SchOp::Rps(i)), Op::Schbench(SchOp::Nap(i))],
            };
            let phases = vec![(spawns, 1), (run, 0), (joins, 1)];
            let def = task(prog, "schbench-msg".into(), phases, 0, group);
            // pin_worker_cpus pins the message thread too, until pin_message_cpu
            let own = (message_cpus.as_deref()).map(|set| vec![set[i as usize % set.len()]]);
            prog.tasks[def as usize].cpus = own.or(worker_cpus.clone()).as_deref().map(mask);
            main.push(Op::Spawn {
                def,
                process: false,
            });
        }
        let joins = (0..m).flat_map(|i| [Op::Schbench(SchOp::PostMessage(i)), Op::Reap]);
        let end: Vec<Op> = joins.chain([Op::Schbench(SchOp::End)]).collect();
        let rounds = vec![Op::Schbench(SchOp::Tick), Op::Sleep(SECOND_NS)];
        task(
            prog,
            "schbench".into(),
            vec![(main, 1), (rounds, 0), (end, 1)],
            1,
            group,
        );
        prog.schbench = Some(SchbenchShape {
            message_threads: m,
            workers: t,
            rps: rps / m,
            auto_rps: self.auto_rps,
            // (schbench zeroes the warmup of a run shorter than 30 s)
            runtime: self.runtime,
            warmup: if self.runtime < 30 { 0 } else { self.warmup },
            interval: self.interval,
            zero: self.zero,
            pipe: self.pipe,
            memset_units: memset_units(self.pipe, self.memset_ps),
        });
        Ok(())
    }
}
