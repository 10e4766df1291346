//! The rt-app grammar, as rt-app's `parse_global`, `parse_task_data`, `parse_task_phase_data`
//! and `parse_task_event_data` read it (scheduler-tools/rt-app, doc/tutorial.txt).
//!
//! Two dialects (`Dialect`): `Workgen` keeps repeated keys in file order, as the workgen
//! preprocessor makes them unique, and fills a bare `"suspend",` with the task's name (WA's
//! workgen); `JsonC` reads the file as rt-app does, a repeated key keeping its first position
//! and its last value. Both warn, and so do keys that neither rt-app nor schedlab knows.

use std::collections::HashMap;

use super::gen::{
    Cyclictest, Generator, Hackbench, PipeBench, Schbench, HIST_MAX, MAX_DATASIZE, MAX_LOOPS,
    PIPE_TRANSFER_BUFFER,
};
use super::json::{self, Node, Value};
use crate::error::InputError;
use crate::limits::{MAX_DURATION_S, MAX_THREADS, MAX_TIME_US};
use crate::platform::work_stretch;
use crate::sched::uapi::Policy;
use crate::time::Ns;

/// How repeated keys are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Workgen,
    JsonC,
}

/// `calibration`: ns per loop of rt-app's busy function, or the CPU it measures on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calibration {
    PLoad(u64),
    Cpu(usize),
}

/// `log_size`: one row per phase iteration written as it ends, a ring buffer written at the
/// end (MB), or no logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogSize {
    File,
    Buffer(u64),
    Disable,
}

/// The ftrace marker categories (`ftrace`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ftrace {
    pub main: bool,
    pub task: bool,
    pub loop_: bool,
    pub event: bool,
    pub stats: bool,
    pub attrs: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Global {
    /// `duration` > 0: the run stops then; otherwise when every thread has ended.
    pub duration: Option<Ns>,
    pub calibration: Calibration,
    pub default_policy: Policy,
    pub pi_enabled: bool,
    pub lock_pages: bool,
    pub logdir: String,
    pub log_basename: String,
    pub log_size: LogSize,
    pub ftrace: Ftrace,
    pub gnuplot: bool,
    pub io_device: String,
    pub mem_buffer_size: u64,
    pub cumulative_slack: bool,
}

impl Default for Global {
    fn default() -> Global {
        Global {
            duration: None,
            calibration: Calibration::Cpu(0),
            default_policy: Policy::Other,
            pi_enabled: false,
            lock_pages: true,
            logdir: "./".into(),
            log_basename: "rt-app".into(),
            log_size: LogSize::File,
            ftrace: Ftrace::default(),
            gnuplot: false,
            io_device: "/dev/null".into(),
            mem_buffer_size: 4 * 1024 * 1024,
            cumulative_slack: false,
        }
    }
}

/// Scheduling settings of a task or phase; `None` keeps what is in force (they stick).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SchedParams {
    pub policy: Option<Policy>,
    /// Nice for fair policies, rt priority for FIFO/RR.
    pub priority: Option<i32>,
    pub dl_runtime_us: Option<u64>,
    pub dl_period_us: Option<u64>,
    pub dl_deadline_us: Option<u64>,
    /// SCHED_FLAG_RECLAIM (GRUB), the rt-app GRUB branch's `"dl-reclaim"`.
    pub dl_reclaim: Option<bool>,
    pub util_min: Option<u32>,
    pub util_max: Option<u32>,
}

/// Work of a `run` or `runtime` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    Us(u64),
    /// `-1`: for ever (a 100% hog).
    Forever,
}

/// `memrun` access pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Memrun {
    pub kind: String,
    pub size: u64,
    pub count: u64,
    pub stride: u64,
    pub random: bool,
    pub shared: Option<String>,
}

/// One event of a phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Run(Work),
    Runtime(Work),
    Sleep(u64),
    Timer {
        name: String,
        period_us: u64,
        absolute: bool,
    },
    Lock(String),
    Unlock(String),
    Wait {
        cond: String,
        mutex: String,
    },
    Signal(String),
    Broad(String),
    Sync {
        cond: String,
        mutex: String,
    },
    Barrier(String),
    Suspend(String),
    Resume(String),
    SemPost(String),
    SemWait(String),
    Yield,
    Fork(String),
    Mem(u64),
    Iorun(u64),
    Memrun(Memrun),
}

impl Event {
    /// rt-app's ftrace `desc` of the event.
    pub fn desc(&self) -> String {
        match self {
            Event::Run(_) => "run".into(),
            Event::Runtime(_) => "runtime".into(),
            Event::Sleep(_) => "sleep".into(),
            Event::Timer { name, .. } => format!("timer:{name}"),
            Event::Lock(m) => format!("lock:{m}"),
            Event::Unlock(m) => format!("unlock:{m}"),
            Event::Wait { cond, mutex } => format!("wait:{cond}:{mutex}"),
            Event::Signal(c) => format!("signal:{c}"),
            Event::Broad(c) => format!("broad:{c}"),
            Event::Sync { cond, mutex } => format!("sync:{cond}:{mutex}"),
            Event::Barrier(b) => format!("barrier:{b}"),
            Event::Suspend(s) => format!("suspend:{s}"),
            Event::Resume(s) => format!("resume:{s}"),
            Event::SemPost(s) => format!("sem_post:{s}"),
            Event::SemWait(s) => format!("sem_wait:{s}"),
            Event::Yield => "yield".into(),
            Event::Fork(t) => format!("fork:{t}"),
            Event::Mem(_) => "mem".into(),
            Event::Iorun(_) => "iorun".into(),
            Event::Memrun(m) => format!("memrun:{}", m.kind),
        }
    }

    /// rt-app's `resource_t` number (HEAD, April 2026 numbering) for `rtapp_event` markers.
    pub fn type_number(&self) -> u32 {
        match self {
            Event::Wait { .. } => 2,
            Event::Signal(_) => 3,
            Event::Broad(_) => 4,
            Event::Sleep(_) => 5,
            Event::Run(_) => 6,
            Event::Sync { .. } => 7,
            Event::Lock(_) => 8,
            Event::Unlock(_) => 9,
            Event::Timer { name, .. } if name.starts_with("unique") => 11,
            Event::Timer { .. } => 10,
            Event::Suspend(_) => 12,
            Event::Resume(_) => 13,
            Event::Mem(_) => 14,
            Event::Memrun(m) if m.kind == "write" => 15,
            Event::Memrun(m) if m.kind == "read" => 16,
            Event::Memrun(_) => 17,
            Event::Iorun(_) => 18,
            Event::Runtime(_) => 19,
            Event::Yield => 20,
            Event::Barrier(_) => 21,
            Event::Fork(_) => 22,
            Event::SemWait(_) => 23,
            Event::SemPost(_) => 24,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    pub name: String,
    /// Iterations; 0 or negative repeats for ever.
    pub loops: i64,
    pub params: SchedParams,
    /// Affinity for this phase (does not stick: a phase without it uses the task's).
    pub cpus: Option<Vec<usize>>,
    /// Sticks once set.
    pub taskgroup: Option<String>,
    pub events: Vec<Event>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub name: String,
    pub instance: u32,
    pub delay_us: u64,
    /// Passes over the phase list; -1 for ever.
    pub loops: i64,
    /// Task-level settings, policy and priority resolved.
    pub params: SchedParams,
    pub cpus: Option<Vec<usize>>,
    pub taskgroup: Option<String>,
    pub phases: Vec<Phase>,
}

/// A parsed workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub global: Global,
    pub tasks: Vec<Task>,
    /// Generated workloads (hackbench, perf bench pipe) run beside the tasks.
    pub generators: Vec<Generator>,
    /// The file it came from, for messages.
    pub origin: String,
    pub dialect: Dialect,
    pub warnings: Vec<String>,
}

impl Workload {
    /// Total threads created at start (instances and generated; forked threads aside).
    pub fn nr_threads(&self) -> usize {
        let gen: usize = self.generators.iter().map(Generator::nr_threads).sum();
        self.tasks
            .iter()
            .map(|t| t.instance as usize)
            .sum::<usize>()
            + gen
    }

    pub fn task(&self, name: &str) -> Option<usize> {
        self.tasks.iter().position(|t| t.name == name)
    }
}

/// Event kinds by key prefix, in the order rt-app tests them (`obj_is_event`).
const EVENT_PREFIXES: [&str; 20] = [
    "runtime", "run", "sleep", "memrun", "mem", "iorun", "lock", "unlock", "signal", "broad",
    "wait", "sync", "barrier", "timer", "resume", "suspend", "yield", "fork", "sem_post",
    "sem_wait",
];

fn event_kind(key: &str) -> Option<&'static str> {
    EVENT_PREFIXES.iter().copied().find(|p| key.starts_with(p))
}

/// Task keys of the pre-2014 grammar (doc/examples/merge, WA taskset.json).
const OLD_GRAMMAR_KEYS: [&str; 3] = ["exec", "lock_order", "resources"];

/// A task's (or a phase's) scheduling keys.
pub const SCHED_KEYS: [&str; 11] = [
    "policy",
    "priority",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "dl-reclaim",
    "util_min",
    "util_max",
    "cpus",
    "taskgroup",
    "nodes_membind",
];

/// Parse a workload file's text; `origin` names it in messages.
pub fn parse(text: &str, origin: &str, dialect: Dialect) -> Result<Workload, InputError> {
    let doc = json::parse(text, dialect == Dialect::Workgen).map_err(|e| {
        InputError::new(
            format!("{origin}: line {}, column {}", e.line, e.col),
            e.message,
        )
    })?;
    let mut r = Reader {
        origin,
        dialect,
        warnings: Vec::new(),
    };
    let w = r.workload(&doc)?;
    Ok(w)
}

/// Read a workload file.
pub fn load(path: &std::path::Path, dialect: Dialect) -> Result<Workload, InputError> {
    let origin = path.display().to_string();
    let bytes = crate::limits::read_input(path)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let before = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let col = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
        InputError::new(
            format!("{origin}: line {line}, column {col}"),
            "not UTF-8 text (json-c refuses invalid UTF-8)",
        )
    })?;
    parse(&text, &origin, dialect)
}

struct Reader<'a> {
    origin: &'a str,
    dialect: Dialect,
    warnings: Vec<String>,
}

type Entries<'n> = Vec<(&'n str, &'n Node)>;

impl<'a> Reader<'a> {
    fn err(&self, path: &str, node: &Node, message: impl Into<String>) -> InputError {
        InputError::new(
            format!(
                "{}: {path} (line {}, column {})",
                self.origin, node.line, node.col
            ),
            message,
        )
    }

    fn warn(&mut self, path: &str, node: &Node, message: impl AsRef<str>) {
        self.warnings.push(format!(
            "{}: {path} (line {}): {}",
            self.origin,
            node.line,
            message.as_ref()
        ));
    }

    /// An object's entries under the dialect's reading of repeated keys. `repeatable` keys
    /// (events, phases) stay repeated under workgen.
    fn entries<'n>(
        &mut self,
        path: &str,
        node: &'n Node,
        repeatable: fn(&str) -> bool,
    ) -> Result<Entries<'n>, InputError> {
        let Value::Object(raw) = &node.value else {
            return Err(self.err(
                path,
                node,
                format!("expected an object, found {}", node.value.kind()),
            ));
        };
        let mut out: Entries<'n> = Vec::with_capacity(raw.len());
        // Each key's first position: a look-up per key keeps reading linear in the keys.
        let mut firsts: HashMap<&str, usize> = HashMap::with_capacity(raw.len());
        for (key, value) in raw {
            let Some(&first) = firsts.get(key.as_str()) else {
                firsts.insert(key, out.len());
                out.push((key, value));
                continue;
            };
            let at = format!("{path}.{key}");
            match self.dialect {
                Dialect::JsonC => {
                    self.warn(
                        &at,
                        value,
                        "repeated key: json-c keeps its first position and this last value",
                    );
                    out[first].1 = value;
                }
                Dialect::Workgen if repeatable(key) => out.push((key, value)),
                Dialect::Workgen => {
                    self.warn(
                        &at,
                        value,
                        "repeated key: workgen renames the copy, which rt-app then ignores",
                    );
                }
            }
        }
        Ok(out)
    }

    fn workload(&mut self, doc: &Node) -> Result<Workload, InputError> {
        let top = self.entries("(top level)", doc, |_| false)?;
        let mut global = Global::default();
        let mut tasks_node = None;
        let mut generators = Vec::new();
        for (key, node) in &top {
            match *key {
                "global" => global = self.global(node)?,
                "tasks" => tasks_node = Some(*node),
                "generators" => generators = self.generators(node)?,
                "resources" => {} // legacy: only pre-creates objects, which events find anyway
                _ => self.warn(key, node, "unknown top-level key, ignored"),
            }
        }
        let mut tasks = Vec::new();
        match tasks_node {
            Some(node) => {
                for (name, node) in self.entries("tasks", node, |_| false)? {
                    tasks.push(self.task(name, node, &global)?);
                }
                if tasks.is_empty() && generators.is_empty() {
                    return Err(self.err("tasks", node, "no task is defined"));
                }
            }
            None if generators.is_empty() => {
                return Err(InputError::new(
                    self.origin,
                    "no \"tasks\" object: rt-app needs one (or a \"generators\" one)",
                ))
            }
            None => {}
        }
        let gen: usize = generators.iter().map(Generator::nr_threads).sum();
        let threads: usize = tasks.iter().map(|t| t.instance as usize).sum::<usize>() + gen;
        if threads > MAX_THREADS {
            return Err(InputError::new(
                self.origin,
                format!("{threads} threads (instances and generated): at most {MAX_THREADS}, the kernel's default pid_max"),
            ));
        }
        for t in &tasks {
            for p in &t.phases {
                for e in &p.events {
                    if let Event::Fork(target) = e {
                        if !tasks.iter().any(|t| &t.name == target) {
                            return Err(InputError::new(
                                format!("{}: tasks.{}.phases.{}", self.origin, t.name, p.name),
                                format!("fork of unknown task {target:?}"),
                            ));
                        }
                    }
                }
            }
        }
        Ok(Workload {
            global,
            tasks,
            generators,
            origin: self.origin.to_string(),
            dialect: self.dialect,
            warnings: std::mem::take(&mut self.warnings),
        })
    }

    /// The `generators` object: `hackbench`, `perf_bench_pipe`, `cyclictest` and
    /// `schbench`, each with the real tool's options by their long names.
    fn generators(&mut self, node: &Node) -> Result<Vec<Generator>, InputError> {
        let mut out = Vec::new();
        for (key, v) in self.entries("generators", node, |_| false)? {
            let path = format!("generators.{key}");
            out.push(match key {
                "hackbench" => Generator::Hackbench(self.hackbench(&path, v)?),
                "perf_bench_pipe" => Generator::PipeBench(self.pipe_bench(&path, v)?),
                "cyclictest" => Generator::Cyclictest(self.cyclictest(&path, v)?),
                "schbench" => Generator::Schbench(self.schbench(&path, v)?),
                _ => {
                    return Err(self.err(
                        &path,
                        v,
                        "unknown generator: hackbench, perf_bench_pipe, cyclictest or schbench",
                    ))
                }
            });
        }
        Ok(out)
    }

    fn hackbench(&mut self, at: &str, node: &Node) -> Result<Hackbench, InputError> {
        let mut h = Hackbench::default();
        for (key, v) in self.entries(at, node, |_| false)? {
            let path = format!("{at}.{key}");
            match key {
                "groups" => h.groups = self.count(&path, v, MAX_THREADS as u64 / 2)? as u32,
                "fds" => h.fds = self.count(&path, v, MAX_THREADS as u64 / 2)? as u32,
                "loops" => h.loops = self.count(&path, v, MAX_LOOPS)?,
                "datasize" => h.datasize = self.count(&path, v, MAX_DATASIZE as u64)? as u32,
                "pipe" => h.pipe = self.boolean(&path, v)?,
                "threads" => h.threads = self.boolean(&path, v)?,
                "kick" => h.kick = self.boolean(&path, v)?,
                "taskgroup" => h.taskgroup = Some(self.string(&path, v)?),
                _ => return Err(self.err(&path, v, "unknown hackbench option: groups, fds, loops, datasize, pipe, threads, kick, taskgroup")),
            }
        }
        Ok(h)
    }

    fn pipe_bench(&mut self, at: &str, node: &Node) -> Result<PipeBench, InputError> {
        let mut p = PipeBench::default();
        for (key, v) in self.entries(at, node, |_| false)? {
            let path = format!("{at}.{key}");
            match key {
                "loops" => p.loops = self.count(&path, v, MAX_LOOPS)?,
                "threaded" => p.threaded = self.boolean(&path, v)?,
                "taskgroup" => p.taskgroup = Some(self.string(&path, v)?),
                _ => {
                    return Err(self.err(
                        &path,
                        v,
                        "unknown perf bench pipe option: loops, threaded, taskgroup",
                    ))
                }
            }
        }
        Ok(p)
    }

    fn cyclictest(&mut self, at: &str, node: &Node) -> Result<Cyclictest, InputError> {
        let mut c = Cyclictest::default();
        let max_us = MAX_DURATION_S * 1_000_000;
        for (key, v) in self.entries(at, node, |_| false)? {
            let path = format!("{at}.{key}");
            match key {
                "threads" => c.threads = self.ranged(&path, v, 0, MAX_THREADS as u64 - 1)? as u32,
                "priority" => c.priority = self.ranged(&path, v, 0, 99)? as u32,
                "policy" => c.policy = self.cyclictest_policy(&path, v)?,
                "priospread" => c.priospread = self.boolean(&path, v)?,
                "interval" => c.interval = self.count(&path, v, max_us)?,
                "distance" => c.distance = self.ranged(&path, v, 0, max_us)?,
                "loops" => c.loops = self.ranged(&path, v, 0, MAX_LOOPS)?,
                // (cyclictest cuts a longer histogram to HIST_MAX buckets)
                "histogram" => c.histogram = self.non_negative(&path, v)?.min(HIST_MAX as u64) as u32,
                "nsecs" => c.nsecs = self.boolean(&path, v)?,
                "affinity" => c.affinity = Some(self.cpus(&path, v)?),
                "taskgroup" => c.taskgroup = Some(self.string(&path, v)?),
                _ => return Err(self.err(&path, v, "unknown cyclictest option: threads, priority, policy, priospread, interval, distance, loops, histogram, nsecs, affinity, taskgroup")),
            }
        }
        Ok(c)
    }

    fn schbench(&mut self, at: &str, node: &Node) -> Result<Schbench, InputError> {
        let mut b = Schbench::default();
        let threads = MAX_THREADS as u64 - 1;
        for (key, v) in self.entries(at, node, |_| false)? {
            let path = format!("{at}.{key}");
            let p = path.as_str();
            match key {
                "message_threads" => b.message_threads = self.count(p, v, threads)? as u32,
                "threads" => b.workers = self.ranged(p, v, 0, threads)? as u32,
                "runtime" => b.runtime = self.count(p, v, MAX_DURATION_S)?,
                "warmuptime" => b.warmup = self.ranged(p, v, 0, MAX_DURATION_S)?,
                "intervaltime" => b.interval = self.ranged(p, v, 0, MAX_DURATION_S)?,
                "zerotime" => b.zero = self.ranged(p, v, 0, MAX_DURATION_S)?,
                "cache_footprint" => b.footprint_kb = self.ranged(p, v, 0, 1 << 20)?,
                "operations" => b.operations = self.ranged(p, v, 0, 1_000_000)?,
                "sleep_usec" => b.sleep_usec = self.ranged(p, v, 0, MAX_DURATION_S * 1_000_000)?,
                "rps" => b.rps = self.ranged(p, v, 0, 1 << 30)? as u32,
                "auto_rps" => b.auto_rps = self.ranged(p, v, 0, 100)? as u32,
                "pipe" => b.pipe = self.ranged(p, v, 0, PIPE_TRANSFER_BUFFER as u64)? as u32,
                "calibrate" => b.calibrate = self.boolean(p, v)?,
                "no_locking" => b.no_locking = self.boolean(p, v)?,
                "split" => b.split = Some(self.ranged(p, v, 0, 100)? as u32),
                "auto_pin" => b.auto_pin = self.boolean(p, v)?,
                "message_cpus" => b.message_cpus = Some(self.cpus(p, v)?),
                "worker_cpus" => b.worker_cpus = Some(self.cpus(p, v)?),
                "matrix_ps" => b.matrix_ps = self.ranged(p, v, 0, 1_000_000_000)?,
                "memset_ps" => b.memset_ps = self.ranged(p, v, 0, 1_000_000_000)?,
                "work_stretch" => b.work_stretch = self.work_stretch(p, v)?,
                "taskgroup" => b.taskgroup = Some(self.string(p, v)?),
                _ => return Err(self.err(p, v, "unknown schbench option: message_threads, threads, runtime, warmuptime, intervaltime, zerotime, cache_footprint, operations, sleep_usec, rps, auto_rps, pipe, calibrate, no_locking, split, auto_pin, message_cpus, worker_cpus, matrix_ps, memset_ps, work_stretch, taskgroup")),
            }
        }
        Ok(b)
    }

    /// cyclictest's `--policy` names (`handlepolicy`).
    fn cyclictest_policy(&self, path: &str, v: &Node) -> Result<Policy, InputError> {
        Ok(match self.string(path, v)?.as_str() {
            "other" | "normal" => Policy::Other,
            "batch" => Policy::Batch,
            "idle" => Policy::Idle,
            "fifo" => Policy::Fifo,
            "rr" => Policy::Rr,
            name => {
                return Err(self.err(
                    path,
                    v,
                    format!("unknown policy {name:?}: other, normal, batch, idle, fifo or rr"),
                ))
            }
        })
    }

    /// An integer from 1 to `max`.
    fn count(&self, path: &str, v: &Node, max: u64) -> Result<u64, InputError> {
        self.ranged(path, v, 1, max)
    }

    /// An integer from `lo` to `hi`.
    fn ranged(&self, path: &str, v: &Node, lo: u64, hi: u64) -> Result<u64, InputError> {
        match self.int(path, v)? {
            n if n >= lo as i64 && n as u64 <= hi => Ok(n as u64),
            n => Err(self.err(path, v, format!("{n} is out of range: {lo} to {hi}"))),
        }
    }

    fn global(&mut self, node: &Node) -> Result<Global, InputError> {
        let mut g = Global::default();
        for (key, v) in self.entries("global", node, |_| false)? {
            let path = format!("global.{key}");
            match key {
                "duration" => {
                    let d = self.int(&path, v)?;
                    if d > MAX_DURATION_S as i64 {
                        return Err(self.err(
                            &path,
                            v,
                            format!("{d} s is out of range: at most {MAX_DURATION_S} s (366 days)"),
                        ));
                    }
                    g.duration = (d > 0).then(|| d as u64 * 1_000_000_000);
                }
                "calibration" => {
                    g.calibration = match &v.value {
                        Value::Int(n) if *n > 0 => Calibration::PLoad(*n as u64),
                        Value::Str(s) => match s.strip_prefix("CPU").and_then(|n| n.parse().ok()) {
                            Some(cpu) => Calibration::Cpu(cpu),
                            None => {
                                return Err(self.err(&path, v, format!("{s:?} is not \"CPU<n>\"")))
                            }
                        },
                        _ => {
                            return Err(self.err(
                                &path,
                                v,
                                "expected a positive integer (ns per loop) or \"CPU<n>\"",
                            ))
                        }
                    }
                }
                "default_policy" => g.default_policy = self.policy(&path, v)?,
                "pi_enabled" => g.pi_enabled = self.boolean(&path, v)?,
                "lock_pages" => g.lock_pages = self.boolean(&path, v)?,
                "logdir" => g.logdir = self.string(&path, v)?,
                "log_basename" => g.log_basename = self.string(&path, v)?,
                "log_size" => g.log_size = self.log_size(&path, v)?,
                "ftrace" => g.ftrace = self.ftrace(&path, v)?,
                "gnuplot" => g.gnuplot = self.boolean(&path, v)?,
                "io_device" => g.io_device = self.string(&path, v)?,
                "mem_buffer_size" => g.mem_buffer_size = self.non_negative(&path, v)?,
                "cumulative_slack" => g.cumulative_slack = self.boolean(&path, v)?,
                _ => self.warn(&path, v, "unknown global key, ignored (as rt-app does)"),
            }
        }
        Ok(g)
    }

    fn log_size(&mut self, path: &str, v: &Node) -> Result<LogSize, InputError> {
        match &v.value {
            Value::Int(mb) if *mb >= 0 => Ok(LogSize::Buffer(*mb as u64)),
            Value::Str(s) => Ok(match s.as_str() {
                "file" | "auto" => LogSize::File,
                "disable" => LogSize::Disable,
                other => {
                    self.warn(path, v, format!("{other:?} is not \"file\", \"disable\" or \"auto\" (lower case): rt-app then writes no logs"));
                    LogSize::Disable
                }
            }),
            _ => Err(self.err(
                path,
                v,
                "expected a size in MB or \"file\"/\"disable\"/\"auto\"",
            )),
        }
    }

    fn ftrace(&mut self, path: &str, v: &Node) -> Result<Ftrace, InputError> {
        let mut f = Ftrace::default();
        match &v.value {
            Value::Bool(on) => {
                let on = *on;
                f = Ftrace {
                    main: on,
                    task: on,
                    loop_: on,
                    event: on,
                    stats: on,
                    attrs: on,
                };
            }
            Value::Str(s) => {
                for cat in s.split(',').map(|c| c.trim().to_ascii_lowercase()) {
                    match cat.as_str() {
                        "main" => f.main = true,
                        "task" => f.task = true,
                        "loop" => f.loop_ = true,
                        "event" => f.event = true,
                        "stats" => f.stats = true,
                        "none" | "" => {}
                        other => return Err(self.err(path, v, format!("invalid ftrace category {other:?}: use main, task, loop, event, stats or none"))),
                    }
                }
            }
            _ => return Err(self.err(path, v, "expected a comma-separated string of categories")),
        }
        Ok(f)
    }

    fn task(&mut self, name: &str, node: &Node, global: &Global) -> Result<Task, InputError> {
        let path = format!("tasks.{name}");
        let entries = self.entries(&path, node, |k| k == "phases" || event_kind(k).is_some())?;
        let mut t = Task {
            name: name.to_string(),
            instance: 1,
            delay_us: 0,
            loops: -1,
            params: SchedParams::default(),
            cpus: None,
            taskgroup: None,
            phases: Vec::new(),
        };
        if let Some((_, v)) = entries.iter().find(|(k, _)| OLD_GRAMMAR_KEYS.contains(k)) {
            return Err(self.err(&path, v, "old rt-app grammar (exec/lock_order/resources, before 2014): not supported; rewrite it with run, timer and lock events"));
        }
        let has_phases = entries.iter().any(|(k, _)| *k == "phases");
        let mut legacy_dl = [None; 3];
        let mut loop_key = None;
        let mut single_phase_keys: Entries = Vec::new();
        for &(key, v) in &entries {
            let at = format!("{path}.{key}");
            match key {
                "instance" => {
                    let n = self.int(&at, v)?;
                    t.instance = u32::try_from(n)
                        .ok()
                        .filter(|&i| i as usize <= MAX_THREADS)
                        .ok_or_else(|| {
                            self.err(&at, v, format!("{n} is outside 0..={MAX_THREADS}"))
                        })?;
                }
                "delay" => t.delay_us = self.micros(&at, v)?,
                "loop" => loop_key = Some(self.int(&at, v)?),
                "phases" => {
                    for (pname, pnode) in self.entries(&at, v, |_| true)? {
                        let phase = self.phase(&format!("{at}.{pname}"), pname, pnode, name)?;
                        t.phases.push(phase);
                    }
                }
                "period" | "deadline" => {
                    legacy_dl[if key == "period" { 1 } else { 2 }] = Some(self.micros(&at, v)?)
                }
                k if SCHED_KEYS.contains(&k) => single_phase_keys.push((key, v)),
                k if event_kind(k).is_some() => {
                    if key.starts_with("runtime") {
                        if let Value::Int(rt) = v.value {
                            legacy_dl[0] = legacy_dl[0].or(u64::try_from(rt).ok());
                        }
                    }
                    single_phase_keys.push((key, v));
                }
                _ => self.warn(&at, v, "unknown task key, ignored (as rt-app does)"),
            }
        }
        // Task-level settings are read from the task object in both shapes.
        let (params, cpus, taskgroup) = self.settings(&path, &single_phase_keys)?;
        t.params = params;
        t.cpus = cpus;
        t.taskgroup = taskgroup;
        if has_phases {
            t.loops = loop_key.unwrap_or(-1);
            let stray: Vec<_> = single_phase_keys
                .iter()
                .filter(|(k, _)| event_kind(k).is_some())
                .collect();
            if let Some((k, v)) = stray.first() {
                self.warn(
                    &format!("{path}.{k}"),
                    v,
                    "an event beside \"phases\" is not run (rt-app reads only the phases)",
                );
            }
        } else {
            // The task object is its single phase.
            let events = self.events(&path, &single_phase_keys, name)?;
            let (loops, phase_loops) = match loop_key {
                Some(n) => (1, n),
                None => (-1, 1),
            };
            t.loops = loops;
            t.phases.push(Phase {
                name: "0".into(),
                loops: phase_loops,
                params: SchedParams::default(),
                cpus: None,
                taskgroup: None,
                events,
            });
        }
        if t.phases.is_empty() {
            return Err(self.err(&path, node, "no phase: \"phases\" is empty"));
        }
        for p in &t.phases {
            if p.events.is_empty() {
                return Err(self.err(
                    &format!("{path}.phases.{}", p.name),
                    node,
                    "no events found: a phase must have events",
                ));
            }
        }
        self.resolve_task_params(&mut t, global, legacy_dl);
        Ok(t)
    }

    /// Defaults of the task-level policy and priority, and the legacy DL keys.
    fn resolve_task_params(&mut self, t: &mut Task, global: &Global, legacy_dl: [Option<u64>; 3]) {
        let policy = *t.params.policy.get_or_insert(global.default_policy);
        t.params.priority.get_or_insert(match policy {
            Policy::Fifo | Policy::Rr => 10,
            _ => 0,
        });
        if t.params.dl_runtime_us.unwrap_or(0) == 0 {
            // A phase-less task's `runtime` event is also read as the legacy key: a fair
            // task's custom slice where the modelled rt-app asks one (rtapp.custom_slice).
            t.params.dl_runtime_us = legacy_dl[0].or(t.params.dl_runtime_us);
        }
        if t.params.dl_period_us.unwrap_or(0) == 0 {
            t.params.dl_period_us = legacy_dl[1].or(t.params.dl_period_us);
        }
        if t.params.dl_deadline_us.unwrap_or(0) == 0 {
            t.params.dl_deadline_us = legacy_dl[2].or(t.params.dl_deadline_us);
        }
    }

    fn phase(
        &mut self,
        path: &str,
        name: &str,
        node: &Node,
        task: &str,
    ) -> Result<Phase, InputError> {
        let entries = self.entries(path, node, |k| event_kind(k).is_some())?;
        let mut loops = 1;
        let mut rest: Entries = Vec::new();
        for &(key, v) in &entries {
            let at = format!("{path}.{key}");
            match key {
                "loop" => loops = self.int(&at, v)?,
                "delay" | "instance" => self.warn(
                    &at,
                    v,
                    "has no effect in a phase (task level only), ignored as rt-app does",
                ),
                k if SCHED_KEYS.contains(&k) || event_kind(k).is_some() => rest.push((key, v)),
                _ => self.warn(&at, v, "unknown phase key, ignored (as rt-app does)"),
            }
        }
        let (params, cpus, taskgroup) = self.settings(path, &rest)?;
        let events = self.events(path, &rest, task)?;
        Ok(Phase {
            name: name.to_string(),
            loops,
            params,
            cpus,
            taskgroup,
            events,
        })
    }

    #[allow(clippy::type_complexity)]
    fn settings(
        &mut self,
        path: &str,
        entries: &Entries,
    ) -> Result<(SchedParams, Option<Vec<usize>>, Option<String>), InputError> {
        let mut p = SchedParams::default();
        let (mut cpus, mut taskgroup) = (None, None);
        for &(key, v) in entries {
            let at = format!("{path}.{key}");
            match key {
                "policy" => p.policy = Some(self.policy(&at, v)?),
                "priority" => {
                    p.priority = Some(
                        i32::try_from(self.int(&at, v)?)
                            .map_err(|_| self.err(&at, v, "out of range"))?,
                    )
                }
                "dl-runtime" => p.dl_runtime_us = Some(self.micros(&at, v)?),
                "dl-period" => p.dl_period_us = Some(self.micros(&at, v)?),
                "dl-deadline" => p.dl_deadline_us = Some(self.micros(&at, v)?),
                "dl-reclaim" => p.dl_reclaim = Some(self.boolean(&at, v)?),
                "util_min" => p.util_min = self.uclamp(&at, v)?,
                "util_max" => p.util_max = self.uclamp(&at, v)?,
                "cpus" => cpus = Some(self.cpus(&at, v)?),
                "taskgroup" => {
                    let tg = self.string(&at, v)?;
                    if !tg.starts_with('/') {
                        return Err(self.err(&at, v, format!("{tg:?} must start with '/'")));
                    }
                    taskgroup = Some(tg);
                }
                "nodes_membind" => {
                    self.cpus(&at, v)?; // a list of NUMA nodes: memory placement is not modelled
                }
                _ => {}
            }
        }
        Ok((p, cpus, taskgroup))
    }

    fn uclamp(&mut self, path: &str, v: &Node) -> Result<Option<u32>, InputError> {
        match self.int(path, v)? {
            -1 => Ok(None),
            n @ 0..=1024 => Ok(Some(n as u32)),
            n => Err(self.err(
                path,
                v,
                format!("{n} is outside 0..1024 (or -1 for unchanged)"),
            )),
        }
    }

    /// A stretch's quantiles (1/1000), as a platform's `work_stretch` takes them.
    fn work_stretch(&mut self, path: &str, v: &Node) -> Result<Vec<u64>, InputError> {
        let Value::Array(items) = &v.value else {
            let found = v.value.kind();
            return Err(self.err(
                path,
                v,
                format!("expected an array of quantiles, found {found}"),
            ));
        };
        let q = (items.iter().enumerate())
            .map(|(i, item)| self.non_negative(&format!("{path}[{i}]"), item))
            .collect::<Result<Vec<u64>, _>>()?;
        work_stretch(q).map_err(|e| self.err(path, v, e))
    }

    fn cpus(&mut self, path: &str, v: &Node) -> Result<Vec<usize>, InputError> {
        let Value::Array(items) = &v.value else {
            return Err(self.err(
                path,
                v,
                format!("expected an array of CPU numbers, found {}", v.value.kind()),
            ));
        };
        let mut cpus = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let n = self.int(&format!("{path}[{i}]"), item)?;
            cpus.push(usize::try_from(n).map_err(|_| {
                self.err(&format!("{path}[{i}]"), item, "a CPU number must be ≥ 0")
            })?);
        }
        cpus.sort_unstable();
        cpus.dedup();
        if cpus.is_empty() {
            return Err(self.err(path, v, "an empty CPU list"));
        }
        Ok(cpus)
    }

    fn events(
        &mut self,
        path: &str,
        entries: &Entries,
        task: &str,
    ) -> Result<Vec<Event>, InputError> {
        let mut events = Vec::new();
        for &(key, v) in entries {
            if let Some(kind) = event_kind(key) {
                events.push(self.event(&format!("{path}.{key}"), kind, v, task)?);
            }
        }
        Ok(events)
    }

    fn event(&mut self, path: &str, kind: &str, v: &Node, task: &str) -> Result<Event, InputError> {
        Ok(match kind {
            "run" => Event::Run(self.work(path, v)?),
            "runtime" => Event::Runtime(self.work(path, v)?),
            "sleep" => Event::Sleep(self.micros(path, v)?),
            "mem" => Event::Mem(self.non_negative(path, v)?),
            "iorun" => Event::Iorun(self.non_negative(path, v)?),
            "lock" => Event::Lock(self.event_string(path, kind, v)?),
            "unlock" => Event::Unlock(self.event_string(path, kind, v)?),
            "signal" => Event::Signal(self.event_string(path, kind, v)?),
            "broad" => Event::Broad(self.event_string(path, kind, v)?),
            "barrier" => Event::Barrier(self.event_string(path, kind, v)?),
            "resume" => Event::Resume(self.event_string(path, kind, v)?),
            "fork" => Event::Fork(self.event_string(path, kind, v)?),
            "sem_post" => Event::SemPost(self.event_string(path, kind, v)?),
            "sem_wait" => Event::SemWait(self.event_string(path, kind, v)?),
            "yield" => Event::Yield,
            // A name given is the pre-2025 meaning (the browser files rely on it); a bare or
            // empty suspend waits on the task's own name (rt-app since May 2025, WA workgen).
            "suspend" => Event::Suspend(match &v.value {
                Value::Str(s) if !s.is_empty() => s.clone(),
                _ => task.to_string(),
            }),
            "wait" | "sync" => {
                let (cond, mutex) = self.cond_ref(path, v)?;
                if kind == "wait" {
                    Event::Wait { cond, mutex }
                } else {
                    Event::Sync { cond, mutex }
                }
            }
            "timer" => self.timer(path, v)?,
            "memrun" => Event::Memrun(self.memrun(path, v)?),
            _ => unreachable!("event kinds come from EVENT_PREFIXES"),
        })
    }

    fn work(&mut self, path: &str, v: &Node) -> Result<Work, InputError> {
        match self.int(path, v)? {
            -1 => Ok(Work::Forever),
            n if n >= 0 => self.micros(path, v).map(Work::Us),
            n => Err(self.err(
                path,
                v,
                format!("a negative duration ({n} µs); only -1 (for ever) is accepted"),
            )),
        }
    }

    fn event_string(&mut self, path: &str, kind: &str, v: &Node) -> Result<String, InputError> {
        match &v.value {
            Value::Str(s) => Ok(s.clone()),
            other => Err(self.err(path, v, format!("a {kind:?} event needs a string (a resource name), found {} (rt-app reads every key starting with {kind:?} as that event)", other.kind()))),
        }
    }

    /// `wait`/`sync`: `{ref, mutex}`; a non-object reads as defaults, as in rt-app.
    fn cond_ref(&mut self, path: &str, v: &Node) -> Result<(String, String), InputError> {
        let (mut cond, mut mutex) = ("unknown".to_string(), "unknown".to_string());
        if matches!(v.value, Value::Object(_)) {
            for (key, n) in self.entries(path, v, |_| false)? {
                let at = format!("{path}.{key}");
                match key {
                    "ref" => cond = self.string(&at, n)?,
                    "mutex" => mutex = self.string(&at, n)?,
                    _ => self.warn(&at, n, "unknown key, ignored"),
                }
            }
        } else {
            self.warn(
                path,
                v,
                "not an object: rt-app reads ref and mutex as \"unknown\"",
            );
        }
        Ok((cond, mutex))
    }

    fn timer(&mut self, path: &str, v: &Node) -> Result<Event, InputError> {
        let (mut name, mut period_us, mut absolute) = ("unknown".to_string(), 0, false);
        if matches!(v.value, Value::Object(_)) {
            for (key, n) in self.entries(path, v, |_| false)? {
                let at = format!("{path}.{key}");
                match key {
                    "ref" => name = self.string(&at, n)?,
                    "period" => period_us = self.micros(&at, n)?,
                    "mode" => {
                        absolute = match self.string(&at, n)?.as_str() {
                            "absolute" => true,
                            "relative" => false,
                            m => {
                                return Err(self.err(
                                    &at,
                                    n,
                                    format!("{m:?} is not \"relative\" or \"absolute\""),
                                ))
                            }
                        }
                    }
                    _ => self.warn(&at, n, "unknown timer key, ignored"),
                }
            }
        } else {
            self.warn(
                path,
                v,
                "not an object: rt-app reads ref \"unknown\" and period 0",
            );
        }
        Ok(Event::Timer {
            name,
            period_us,
            absolute,
        })
    }

    fn memrun(&mut self, path: &str, v: &Node) -> Result<Memrun, InputError> {
        let mut m = Memrun {
            kind: String::new(),
            size: 0,
            count: 0,
            stride: 64,
            random: true,
            shared: None,
        };
        let (mut has_size, mut has_count) = (false, false);
        for (key, n) in self.entries(path, v, |_| false)? {
            let at = format!("{path}.{key}");
            match key {
                "type" => m.kind = self.string(&at, n)?,
                "size" => (m.size, has_size) = (self.non_negative(&at, n)?, true),
                "count" => (m.count, has_count) = (self.non_negative(&at, n)?, true),
                "stride" => m.stride = self.non_negative(&at, n)?.max(1),
                "pattern" => m.random = self.string(&at, n)? != "sequential",
                "ref" => m.shared = Some(self.string(&at, n)?),
                _ => self.warn(&at, n, "unknown memrun key, ignored"),
            }
        }
        if !matches!(m.kind.as_str(), "read" | "write" | "chase") || !has_size || !has_count {
            return Err(self.err(
                path,
                v,
                "memrun needs \"type\" (read, write or chase), \"size\" and \"count\"",
            ));
        }
        Ok(m)
    }

    fn int(&self, path: &str, v: &Node) -> Result<i64, InputError> {
        match v.value {
            Value::Int(n) => Ok(n),
            ref other => Err(self.err(
                path,
                v,
                format!("expected an integer, found {}", other.kind()),
            )),
        }
    }

    fn non_negative(&self, path: &str, v: &Node) -> Result<u64, InputError> {
        let n = self.int(path, v)?;
        u64::try_from(n).map_err(|_| self.err(path, v, format!("must not be negative (found {n})")))
    }

    /// A time in µs: non-negative and at most `MAX_TIME_US`, so that it converts to ns
    /// without wrapping.
    fn micros(&self, path: &str, v: &Node) -> Result<u64, InputError> {
        let us = self.non_negative(path, v)?;
        if us > MAX_TIME_US {
            return Err(self.err(
                path,
                v,
                format!("{us} µs is out of range: at most {MAX_TIME_US} µs (366 days)"),
            ));
        }
        Ok(us)
    }

    fn boolean(&self, path: &str, v: &Node) -> Result<bool, InputError> {
        match v.value {
            Value::Bool(b) => Ok(b),
            ref other => Err(self.err(
                path,
                v,
                format!("expected true or false, found {}", other.kind()),
            )),
        }
    }

    fn string(&self, path: &str, v: &Node) -> Result<String, InputError> {
        match &v.value {
            Value::Str(s) => Ok(s.clone()),
            other => Err(self.err(
                path,
                v,
                format!("expected a string, found {}", other.kind()),
            )),
        }
    }

    fn policy(&self, path: &str, v: &Node) -> Result<Policy, InputError> {
        let name = self.string(path, v)?;
        Policy::from_name(&name)
            .ok_or_else(|| self.err(path, v, format!("unknown policy {name:?}: use SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR or SCHED_DEADLINE")))
    }
}

mod compile;
pub use compile::{compile, pload_ns, RtappModel, NOMINAL_PLOAD_NS};

#[cfg(test)]
mod tests;
