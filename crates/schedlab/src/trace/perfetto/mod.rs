//! A native Perfetto trace (`protos.rs`): the scheduler's events as ftrace event bundles
//! (what Perfetto's `sched`, `thread_state` and `cpu_frequency` tables come from), rt-app's
//! process and threads as a process tree, its markers as slices (task, loop iterations) and
//! instants on each thread's track, and counter tracks for what the kernel's text or
//! ftrace import would drop, named as sched-analyzer names them: "CPU0 util_avg",
//! "<comm>-<pid> util_avg", "CPU0 capacity", "overutilized", and the machine's own:
//! "CPU0 dl running_bw", "CPU0 dl this_bw", "CPU0 energy_mj". A PELT update's three signals
//! travel in one packet (the first counter and two extra ones). A CPU's counters sit under a
//! "CPU<n>" track, a task's under its thread's; each names its unit; a counter's track starts
//! at its first non-zero value (a class or a bandwidth never used shows no flat track). The
//! trace starts with the system (uname, as a kernel of the preset's version) and its CPUs
//! (frequencies, capacity), as Perfetto's traced records them.

pub(crate) mod protos;

use std::collections::HashMap;
use std::io::{self, Write};

use self::protos::*;
use super::{Counter, Observer, Tracepoint};
use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::sched::fair::NO_TASK;
use crate::sched::rq::RqAvg;
use crate::sched::task::SchedTask;
use crate::time::Ns;
use crate::tracepoint::{with_values, DlNote, Note, PerfettoEvent, Val, EVENTS};

/// The sequence of schedlab's track packets.
const SEQUENCE: u64 = 1;
/// rt-app's process (its main thread's pid).
const RTAPP_PID: i64 = super::RTAPP_MAIN_PID as i64;
/// The bytes of ftrace events a CPU's bundle gathers before it is written.
const BUNDLE_BYTES: usize = 32 << 10;

/// The counters' names, by `Signal`.
const SIGNALS: [&str; 10] = [
    "util_avg",
    "load_avg",
    "runnable_avg",
    "util_est",
    "capacity",
    "se util_avg",
    "se load_avg",
    "se runnable_avg",
    "rt util_avg",
    "dl util_avg",
];
const UTIL: usize = 0;
const UTIL_EST: usize = 3;
const CAPACITY: usize = 4;
/// A group entity's signals follow a cfs_rq's.
const SE: usize = 5;
/// Then the RT and deadline classes' utilization.
const RT_UTIL: usize = 8;
const DL_UTIL: usize = 9;

/// What a track belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    /// Counter `SIGNALS[s]` of a task (by id).
    Task(u32, usize),
    /// Counter `SIGNALS[s]` of a CPU (path 0: its root cfs_rq) or of a group on it.
    Cpu(usize, u32, usize),
    Overutilized,
    /// A CPU's counter that no tracepoint reports.
    Machine(usize, Counter),
    /// A thread's track (its slices and instants; by task id), rt-app's process's.
    Thread(u32),
    Process,
    /// The track a CPU's counters sit under.
    CpuGroup(usize),
}

impl Key {
    /// The track this one sits under, if any.
    fn parent(self) -> Option<Key> {
        match self {
            Key::Task(id, _) => Some(Key::Thread(id)),
            Key::Cpu(cpu, _, _) | Key::Machine(cpu, _) => Some(Key::CpuGroup(cpu)),
            _ => None,
        }
    }

    /// A counter's unit, as Perfetto shows it.
    fn unit(self) -> &'static str {
        match self {
            Key::Task(_, s) | Key::Cpu(_, _, s) if SIGNALS[s].contains("load") => "load (weight)",
            Key::Machine(_, Counter::Energy) => "mJ",
            Key::Machine(_, Counter::DlRunningBw | Counter::DlThisBw) => "fraction of the CPU",
            Key::Overutilized => "flag",
            _ => "of 1024 (SCHED_CAPACITY_SCALE)",
        }
    }
}

/// The machine's counters, by `Counter as usize`.
const MACHINE: usize = Counter::UclampMax as usize + 1;

/// `v[i]`, grown with defaults to hold it.
fn at<T: Default + Copy>(v: &mut Vec<T>, i: usize) -> &mut T {
    if v.len() <= i {
        v.resize(i + 1, T::default());
    }
    &mut v[i]
}

/// The tracks' uuids (0: not described yet): arrays for tasks' and CPUs' counters, a map
/// for the rest.
#[derive(Default)]
struct Tracks {
    tasks: Vec<[u64; SIGNALS.len()]>,
    cpus: Vec<[u64; SIGNALS.len()]>,
    machine: Vec<[u64; MACHINE]>,
    others: HashMap<Key, u64>,
    count: u64,
}

impl Tracks {
    fn slot(&mut self, key: Key) -> &mut u64 {
        match key {
            Key::Task(t, s) => &mut at(&mut self.tasks, t as usize)[s],
            Key::Cpu(cpu, 0, s) => &mut at(&mut self.cpus, cpu)[s],
            Key::Machine(cpu, c) => &mut at(&mut self.machine, cpu)[c as usize],
            k => self.others.entry(k).or_insert(0),
        }
    }
}

/// Where a field of an event's Perfetto message comes from.
#[derive(Debug, Clone, Copy)]
enum Src {
    /// The catalogue's value of this index.
    Value(usize),
    /// A field the kernel's format lacks (`PerfettoEvent::extra`).
    Const(i64),
}

/// How an event's values become its Perfetto message (`PerfettoEvent`): the message's
/// number in `FtraceEvent` and its fields in number order.
struct Plan {
    id: u32,
    fields: Vec<(u32, Src)>,
}

impl Plan {
    fn of(p: &PerfettoEvent) -> Plan {
        let values = (p.fields.iter().enumerate()).map(|(i, &f)| (f, Src::Value(i)));
        let consts = p.extra.iter().map(|&(f, x)| (f, Src::Const(x)));
        let mut fields: Vec<_> = values.chain(consts).collect();
        fields.sort_by_key(|&(f, _)| f);
        Plan { id: p.id, fields }
    }
}

/// Writes a Perfetto protobuf trace.
pub struct PerfettoWriter<W: Write> {
    out: W,
    /// The packet being written.
    buf: Vec<u8>,
    /// Each CPU's ftrace events not yet written (`FtraceEventBundle.event` fields).
    bundles: Vec<Vec<u8>>,
    tracks: Tracks,
    /// The last value of each CPU's machine counters, written only when it changes.
    machine: Vec<[Option<f64>; MACHINE]>,
    paths: Vec<String>,
    started: bool,
    /// Each event's message, by code (None: a counter, slice or instant).
    plans: Vec<Option<Plan>>,
}

impl<W: Write> PerfettoWriter<W> {
    pub fn new(out: W, nr_cpus: usize) -> PerfettoWriter<W> {
        PerfettoWriter {
            out,
            buf: Vec::with_capacity(BUNDLE_BYTES + 1024),
            bundles: vec![Vec::new(); nr_cpus],
            tracks: Tracks::default(),
            machine: Vec::new(),
            paths: vec!["/".into()],
            started: false,
            plans: EVENTS
                .iter()
                .map(|f| f.perfetto.as_ref().map(Plan::of))
                .collect(),
        }
    }

    /// Append a packet at `now` (None: no time) whose data `body` writes; a track packet
    /// carries schedlab's sequence id, the first one saying its state starts cleared.
    fn packet(
        &mut self,
        now: Option<Ns>,
        track: bool,
        body: impl FnOnce(&mut Msg),
    ) -> io::Result<()> {
        self.buf.clear();
        let first = track && !self.started;
        self.started |= track;
        Msg::new(&mut self.buf).nested(TRACE_PACKET, |p| {
            if let Some(t) = now {
                p.uint(packet::TIMESTAMP, t);
            }
            if track {
                p.uint(packet::TRUSTED_PACKET_SEQUENCE_ID, SEQUENCE);
            }
            if first {
                p.uint(
                    packet::SEQUENCE_FLAGS,
                    packet::SEQ_INCREMENTAL_STATE_CLEARED,
                );
            }
            body(p);
        });
        self.out.write_all(&self.buf)
    }

    /// The name of `key`'s track.
    fn name(&self, key: Key, tasks: &[SchedTask]) -> String {
        let task = |id: u32| &tasks[id as usize];
        match key {
            Key::Task(id, s) => format!("{}-{} {}", task(id).kcomm(), task(id).pid, SIGNALS[s]),
            Key::Cpu(cpu, 0, s) => format!("CPU{cpu} {}", SIGNALS[s]),
            Key::Cpu(cpu, path, s) => {
                format!("CPU{cpu} {} {}", self.paths[path as usize], SIGNALS[s])
            }
            Key::Overutilized => "overutilized".into(),
            Key::Machine(cpu, c) => format!("CPU{cpu} {}", c.name()),
            Key::Thread(id) => task(id).kcomm().into(),
            Key::Process => "rt-app".into(),
            Key::CpuGroup(cpu) => format!("CPU{cpu}"),
        }
    }

    /// The system and its CPUs: what Perfetto's traced writes first, and trace_processor
    /// reads the kernel's version (its task-state encoding) from.
    pub fn system(&mut self, plat: &Platform, kernel: Kernel) -> io::Result<()> {
        self.packet(None, false, |p| {
            p.nested(packet::SYSTEM_INFO, |s| {
                s.nested(system::UTSNAME, |u| {
                    u.str(system::SYSNAME, "Linux")
                        .str(system::RELEASE, &format!("{}.0-schedlab", kernel.name()))
                        .str(system::VERSION, "#1 SMP PREEMPT schedlab");
                })
                .uint(system::NUM_CPUS, plat.nr_cpus() as u64);
            });
        })?;
        self.packet(None, false, |p| {
            p.nested(packet::CPU_INFO, |info| {
                for c in &plat.cpus {
                    let domain = &plat.freq_domains[c.freq_domain];
                    info.nested(system::CPUS, |cpu| {
                        cpu.str(system::PROCESSOR, &domain.name);
                        for o in &domain.opps {
                            cpu.uint(system::FREQUENCIES, o.khz as u64);
                        }
                        cpu.uint(system::CAPACITY, c.capacity_orig as u64);
                    });
                }
            });
        })
    }

    /// The track of `key`, described the first time.
    fn track(&mut self, now: Ns, key: Key, tasks: &[SchedTask]) -> io::Result<u64> {
        let uuid = *self.tracks.slot(key);
        if uuid != 0 {
            return Ok(uuid);
        }
        let parent = match key.parent() {
            Some(k) => self.track(now, k, tasks)?,
            None => 0,
        };
        self.tracks.count += 1;
        let uuid = self.tracks.count;
        *self.tracks.slot(key) = uuid;
        let name = self.name(key, tasks);
        self.packet(Some(now), true, |p| {
            p.nested(packet::TRACK_DESCRIPTOR, |d| {
                d.uint(track::UUID, uuid);
                if parent != 0 {
                    d.uint(track::PARENT_UUID, parent);
                }
                match key {
                    Key::Thread(id) => {
                        d.nested(track::THREAD, |t| {
                            t.int(track::THREAD_PID, RTAPP_PID)
                                .int(track::THREAD_TID, tasks[id as usize].pid as i64)
                                .str(track::THREAD_NAME, &name);
                        });
                    }
                    Key::Process => {
                        d.nested(track::PROCESS, |t| {
                            t.int(track::PROCESS_PID, RTAPP_PID)
                                .str(track::PROCESS_NAME, &name);
                        });
                    }
                    Key::CpuGroup(_) => {
                        d.str(track::NAME, &name);
                    }
                    _ => {
                        d.str(track::NAME, &name).nested(track::COUNTER, |c| {
                            c.str(track::UNIT_NAME, key.unit());
                        });
                    }
                }
            });
        })?;
        Ok(uuid)
    }

    /// Counter values at `now`: the first on its track, the others as extra counters.
    fn counters(&mut self, now: Ns, values: &[(Key, u64)], tasks: &[SchedTask]) -> io::Result<()> {
        if let [(key, 0)] = values {
            if *self.tracks.slot(*key) == 0 {
                return Ok(()); // its track starts at its first non-zero value
            }
        }
        let mut uuids = [0; 3];
        for (u, (key, _)) in uuids.iter_mut().zip(values) {
            *u = self.track(now, *key, tasks)?;
        }
        self.packet(Some(now), true, |p| {
            p.nested(packet::TRACK_EVENT, |e| {
                e.uint(event::TYPE, event::COUNTER)
                    .uint(event::TRACK_UUID, uuids[0])
                    .int(event::COUNTER_VALUE, values[0].1 as i64);
                for (u, (_, v)) in uuids.iter().zip(values).skip(1) {
                    e.uint(event::EXTRA_COUNTER_TRACK_UUIDS, *u)
                        .int(event::EXTRA_COUNTER_VALUES, *v as i64);
                }
            });
        })
    }

    /// An ftrace event in `pid`'s context on `cpu`: `id` and the fields `body` writes.
    /// `tp` as its ftrace event in its CPU's bundle: its message's fields from the
    /// catalogue's values, in field-number order. (No message of Perfetto's has the root
    /// domain's span.)
    fn ftrace(&mut self, now: Ns, tp: &Tracepoint, tasks: &[SchedTask]) -> io::Result<()> {
        let (bundles, plans) = (&mut self.bundles, &self.plans);
        let flags = tp.common_flags();
        let cpu = with_values(tp, tasks, &self.paths, "", |ev, (_, pid, cpu), vals| {
            // An event Perfetto has no message for is left out, unless `record` draws it.
            let plan = plans[ev as usize].as_ref()?;
            Msg::new(&mut bundles[cpu]).nested(bundle::EVENT, |e| {
                e.uint(ftrace::TIMESTAMP, now).uint(ftrace::PID, pid as u64);
                if flags != 0 {
                    e.uint(ftrace::COMMON_FLAGS, flags as u64);
                }
                e.nested(plan.id, |m| {
                    for &(field, src) in &plan.fields {
                        match src {
                            Src::Const(x) => m.int(field, x),
                            Src::Value(i) => match vals[i] {
                                Val::S(s) => m.str(field, s),
                                Val::I(x) => m.int(field, x),
                            },
                        };
                    }
                });
            });
            Some(cpu)
        });
        if let Some(cpu) = cpu.filter(|&c| self.bundles[c].len() >= BUNDLE_BYTES) {
            self.flush_bundle(cpu)?;
        }
        Ok(())
    }

    /// CPU `cpu`'s bundle as a packet: its head, then its events as they are.
    fn flush_bundle(&mut self, cpu: usize) -> io::Result<()> {
        let events = &self.bundles[cpu];
        if events.is_empty() {
            return Ok(());
        }
        let fields = uint_size(bundle::CPU, cpu as u64) + events.len();
        let data = head_size(packet::FTRACE_EVENTS, fields) + fields;
        self.buf.clear();
        Msg::new(&mut self.buf)
            .nested_head(TRACE_PACKET, data)
            .nested_head(packet::FTRACE_EVENTS, fields)
            .uint(bundle::CPU, cpu as u64);
        self.out.write_all(&self.buf)?;
        self.out.write_all(events)?;
        self.bundles[cpu].clear();
        Ok(())
    }

    /// A thread of rt-app's process, as a process tree knows it.
    fn thread(&mut self, now: Ns, t: &SchedTask) -> io::Result<()> {
        self.packet(Some(now), false, |p| {
            p.nested(packet::PROCESS_TREE, |tr| {
                tr.nested(tree::PROCESSES, |pr| {
                    pr.int(tree::PROCESS_PID, RTAPP_PID)
                        .int(tree::PROCESS_PPID, 0)
                        .str(tree::PROCESS_CMDLINE, "rt-app");
                })
                .nested(tree::THREADS, |th| {
                    th.int(tree::THREAD_TID, t.pid as i64)
                        .str(tree::THREAD_NAME, t.kcomm())
                        .int(tree::THREAD_TGID, RTAPP_PID);
                });
            });
        })
    }

    /// An rt-app marker: `rtapp_task` and `rtapp_loop` start and end slices, the others
    /// instants, on the thread's track (the process's for `rtapp_main`).
    fn marker(
        &mut self,
        now: Ns,
        task: Option<u32>,
        text: &str,
        tasks: &[SchedTask],
    ) -> io::Result<()> {
        let (kind, rest) = text.split_once(": ").unwrap_or((text, ""));
        let uuid = self.track(now, task.map_or(Key::Process, Key::Thread), tasks)?;
        let event = rest.split(' ').find_map(|f| f.strip_prefix("event="));
        let (ty, name) = match (kind, event) {
            ("rtapp_task" | "rtapp_loop", Some("start")) => {
                (event::SLICE_BEGIN, slice_name(kind, rest))
            }
            ("rtapp_task" | "rtapp_loop", Some("end")) => (event::SLICE_END, None),
            _ => (event::INSTANT, Some(text.to_string())),
        };
        self.packet(Some(now), true, |p| {
            p.nested(packet::TRACK_EVENT, |e| {
                e.uint(event::TYPE, ty).uint(event::TRACK_UUID, uuid);
                if let Some(n) = &name {
                    e.str(event::NAME, n);
                }
            });
        })
    }

    /// PELT and util_est as counters: a task's, a CPU's root cfs_rq's, or a group's (its
    /// entity's, "se …", and its cfs_rq's) on a CPU.
    fn fair(&mut self, now: Ns, cpu: usize, note: &Note, tasks: &[SchedTask]) -> io::Result<()> {
        let key = |task: u32, path: u32, s: usize| match task {
            NO_TASK => Key::Cpu(cpu, path, s),
            t => Key::Task(t, s),
        };
        match *note {
            Note::PeltSe {
                task,
                path,
                load,
                runnable,
                util,
                ..
            } => {
                let base = if task == NO_TASK { SE } else { UTIL };
                let values = [util, load, runnable];
                let v = |i: usize| (key(task, path, base + i), values[i]);
                self.counters(now, &[v(0), v(1), v(2)], tasks)
            }
            Note::PeltCfs {
                path,
                load,
                runnable,
                util,
                ..
            } => {
                let v = |i: usize, x: u64| (Key::Cpu(cpu, path, UTIL + i), x);
                self.counters(now, &[v(0, util), v(1, load), v(2, runnable)], tasks)
            }
            Note::UtilEstSe { task, enqueued, .. } => {
                self.counters(now, &[(Key::Task(task, UTIL_EST), enqueued as u64)], tasks)
            }
            Note::UtilEstCfs { enqueued, .. } => {
                self.counters(now, &[(Key::Cpu(cpu, 0, UTIL_EST), enqueued as u64)], tasks)
            }
            Note::PeltRq { class, util, .. } => {
                let s = match class {
                    RqAvg::Rt => RT_UTIL,
                    RqAvg::Dl => DL_UTIL,
                };
                self.counters(now, &[(Key::Cpu(cpu, 0, s), util)], tasks)
            }
        }
    }
}

/// A start marker's slice name: "task", or "phase P loop K" of thread loop N.
fn slice_name(kind: &str, fields: &str) -> Option<String> {
    if kind == "rtapp_task" {
        return Some("task".into());
    }
    let get = |k: &str| {
        fields
            .split(' ')
            .find_map(|f| f.strip_prefix(k).and_then(|v| v.strip_prefix('=')))
            .unwrap_or("?")
    };
    Some(format!(
        "phase {} loop {} (thread loop {})",
        get("phase"),
        get("phase_loop"),
        get("thread_loop")
    ))
}

impl<W: Write> Observer for PerfettoWriter<W> {
    fn groups(&mut self, paths: &[String]) {
        self.paths = paths.to_vec();
    }

    fn record(&mut self, now: Ns, tp: &Tracepoint, tasks: &[SchedTask]) -> io::Result<()> {
        match tp {
            Tracepoint::CpuCapacity { cpu, capacity, .. } => {
                self.counters(now, &[(Key::Cpu(*cpu, 0, CAPACITY), *capacity)], tasks)
            }
            Tracepoint::Overutilized { overutilized, .. } => {
                self.counters(now, &[(Key::Overutilized, *overutilized as u64)], tasks)
            }
            Tracepoint::Fair { cpu, note, .. } => self.fair(now, *cpu, note, tasks),
            Tracepoint::Dl { task, note, .. } => {
                let text = match note {
                    DlNote::Throttle { runtime } => format!("dl throttle runtime={runtime}"),
                    DlNote::Replenish { runtime, deadline } => {
                        format!("dl replenish runtime={runtime} deadline={deadline}")
                    }
                    DlNote::Miss { deadline } => format!("dl miss deadline={deadline}"),
                };
                self.marker(now, Some(*task), &text, tasks)
            }
            Tracepoint::Print { task, text, .. } => self.marker(now, *task, text, tasks),
            Tracepoint::Rename { task, .. } => {
                self.thread(now, &tasks[*task as usize])?;
                self.ftrace(now, tp, tasks)
            }
            _ => self.ftrace(now, tp, tasks),
        }
    }

    fn counter(&mut self, now: Ns, cpu: usize, c: Counter, value: f64) -> io::Result<()> {
        if at(&mut self.machine, cpu)[c as usize].replace(value) == Some(value)
            || (value == 0.0 && *self.tracks.slot(Key::Machine(cpu, c)) == 0)
        {
            return Ok(());
        }
        let uuid = self.track(now, Key::Machine(cpu, c), &[])?;
        self.packet(Some(now), true, |p| {
            p.nested(packet::TRACK_EVENT, |e| {
                e.uint(event::TYPE, event::COUNTER)
                    .uint(event::TRACK_UUID, uuid)
                    .double(event::DOUBLE_COUNTER_VALUE, value);
            });
        })
    }

    fn finish(&mut self, _tasks: &[SchedTask]) -> io::Result<()> {
        for cpu in 0..self.bundles.len() {
            self.flush_bundle(cpu)?;
        }
        self.out.flush()
    }
}
