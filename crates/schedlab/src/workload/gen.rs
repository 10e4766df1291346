//! Workload generators compiled to the program format: hackbench (rt-tests' `hackbench`,
//! the kernel's tools/perf/bench/sched-messaging.c), perf bench sched pipe
//! (tools/perf/bench/sched-pipe.c) and cyclictest (rt-tests' cyclictest.c), with the real
//! tools' structure and defaults. A run file names them in its `generators` object;
//! `schedlab hackbench`, `schedlab perf-bench-pipe` and `schedlab cyclictest` write one for
//! a command line.

use super::program::{ChanKind, Op, Phase, Program, TaskProgram};
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

/// A generator entry of a run file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Generator {
    Hackbench(Hackbench),
    PipeBench(PipeBench),
    Cyclictest(Cyclictest),
}

impl Generator {
    /// The threads it creates.
    pub fn nr_threads(&self) -> usize {
        match self {
            Generator::Hackbench(h) => h.kick as usize + 2 * h.groups as usize * h.fds as usize,
            Generator::PipeBench(p) => 2 + p.threaded as usize,
            Generator::Cyclictest(c) => 1 + c.threads.max(1) as usize,
        }
    }

    /// The cgroup its tasks run in.
    pub fn taskgroup(&self) -> Option<&str> {
        match self {
            Generator::Hackbench(h) => h.taskgroup.as_deref(),
            Generator::PipeBench(p) => p.taskgroup.as_deref(),
            Generator::Cyclictest(c) => c.taskgroup.as_deref(),
        }
    }

    /// Add its tasks and channels to `prog`, its tasks in the task group `group`, for a
    /// machine of `nr_cpus` CPUs; a CPU it names that is not there is refused.
    pub fn append(&self, prog: &mut Program, group: u32, nr_cpus: usize) -> Result<(), usize> {
        match self {
            Generator::Hackbench(h) => h.append(prog, group),
            Generator::PipeBench(p) => p.append(prog, group),
            Generator::Cyclictest(c) => return c.append(prog, group, nr_cpus),
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
fn task(
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
    fn append(&self, prog: &mut Program, group: u32, nr_cpus: usize) -> Result<(), usize> {
        let all: Vec<usize> = (0..nr_cpus).collect();
        let set = self.affinity.as_deref().unwrap_or(&all);
        if let Some(&cpu) = set.iter().find(|&&c| c >= nr_cpus) {
            return Err(cpu);
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
