//! A native Perfetto trace (`protos.rs`): the scheduler's events as ftrace event bundles
//! (what Perfetto's `sched`, `thread_state` and `cpu_frequency` tables come from), rt-app's
//! process and threads as a process tree, its markers as slices (task, loop iterations) and
//! instants on each thread's track, and counter tracks for what the kernel's text or
//! ftrace import would drop, named as sched-analyzer names them: "CPU0 util_avg",
//! "<comm>-<pid> util_avg", "CPU0 capacity", "overutilized".

mod protos;

use std::collections::HashMap;
use std::io::{self, Write};

use prost::Message;

use self::protos::*;
use super::{context, swapper, Observer, PrevState, Tracepoint};
use crate::sched::deadline::DlNote;
use crate::sched::fair::{Note, NO_TASK};
use crate::sched::task::SchedTask;
use crate::time::Ns;

/// The sequence of schedlab's track packets.
const SEQUENCE: u32 = 1;
/// rt-app's process (its main thread's pid).
const RTAPP_PID: i32 = 1;
/// Ftrace events a CPU's bundle gathers before it is written.
const BUNDLE: usize = 512;

/// What a counter or marker track belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    /// A task's counter (`signal` names it; by task id).
    Task(u32, &'static str),
    /// A CPU's counter, or a group's on it (path index).
    Cpu(usize, u32, &'static str),
    Overutilized,
    /// A thread's track (its slices and instants; by task id), rt-app's process's.
    Thread(u32),
    Process,
}

/// Writes a Perfetto protobuf trace.
pub struct PerfettoWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    /// Each CPU's ftrace events not yet written.
    bundles: Vec<Vec<FtraceEvent>>,
    tracks: HashMap<Key, u64>,
    paths: Vec<String>,
    started: bool,
}

/// `__trace_sched_switch_state`, as `trace.dat` records it.
fn prev_state(prev: Option<u32>, s: PrevState) -> i64 {
    match (prev, s) {
        (None, _) | (_, PrevState::Runnable) => 0,
        (_, PrevState::Sleeping) => 1,
        (_, PrevState::Dead) => 0x10,
    }
}

impl<W: Write> PerfettoWriter<W> {
    pub fn new(out: W, nr_cpus: usize) -> PerfettoWriter<W> {
        PerfettoWriter {
            out,
            buf: Vec::with_capacity(1024),
            bundles: vec![Vec::new(); nr_cpus],
            tracks: HashMap::new(),
            paths: vec!["/".into()],
            started: false,
        }
    }

    /// Append `p` to the trace: field 1 (`Trace.packet`) of the `Trace` message.
    fn packet(&mut self, mut p: TracePacket) -> io::Result<()> {
        if p.ftrace_events.is_none() && p.process_tree.is_none() {
            p.trusted_packet_sequence_id = Some(SEQUENCE);
            if !self.started {
                p.sequence_flags = Some(SEQ_INCREMENTAL_STATE_CLEARED);
                self.started = true;
            }
        }
        self.buf.clear();
        self.buf.push(0x0a);
        p.encode_length_delimited(&mut self.buf)
            .map_err(io::Error::other)?;
        self.out.write_all(&self.buf)
    }

    /// The name of `key`'s track.
    fn name(&self, key: Key, tasks: &[SchedTask]) -> String {
        let task = |id: u32| &tasks[id as usize];
        match key {
            Key::Task(id, signal) => format!("{}-{} {signal}", task(id).kcomm(), task(id).pid),
            Key::Cpu(cpu, 0, signal) => format!("CPU{cpu} {signal}"),
            Key::Cpu(cpu, path, signal) => {
                format!("CPU{cpu} {} {signal}", self.paths[path as usize])
            }
            Key::Overutilized => "overutilized".into(),
            Key::Thread(id) => task(id).kcomm().into(),
            Key::Process => "rt-app".into(),
        }
    }

    /// The track of `key`, described the first time.
    fn track(&mut self, now: Ns, key: Key, tasks: &[SchedTask]) -> io::Result<u64> {
        if let Some(&uuid) = self.tracks.get(&key) {
            return Ok(uuid);
        }
        let uuid = self.tracks.len() as u64 + 1;
        self.tracks.insert(key, uuid);
        let name = self.name(key, tasks);
        let mut d = TrackDescriptor {
            uuid: Some(uuid),
            ..Default::default()
        };
        match key {
            Key::Thread(id) => {
                d.thread = Some(ThreadDescriptor {
                    pid: Some(RTAPP_PID),
                    tid: Some(tasks[id as usize].pid as i64),
                    thread_name: Some(name),
                })
            }
            Key::Process => {
                d.process = Some(ProcessDescriptor {
                    pid: Some(RTAPP_PID),
                    process_name: Some(name),
                })
            }
            _ => {
                d.name = Some(name);
                d.counter = Some(CounterDescriptor {});
            }
        }
        let p = TracePacket {
            timestamp: Some(now),
            track_descriptor: Some(d),
            ..Default::default()
        };
        self.packet(p)?;
        Ok(uuid)
    }

    fn track_event(&mut self, now: Ns, uuid: u64, e: TrackEvent) -> io::Result<()> {
        let p = TracePacket {
            timestamp: Some(now),
            track_event: Some(TrackEvent {
                track_uuid: Some(uuid),
                ..e
            }),
            ..Default::default()
        };
        self.packet(p)
    }

    fn counter(&mut self, now: Ns, key: Key, v: u64, tasks: &[SchedTask]) -> io::Result<()> {
        let uuid = self.track(now, key, tasks)?;
        let e = TrackEvent {
            r#type: Some(TYPE_COUNTER),
            counter_value: Some(v as i64),
            ..Default::default()
        };
        self.track_event(now, uuid, e)
    }

    fn ftrace(&mut self, now: Ns, cpu: usize, pid: u32, event: Event) -> io::Result<()> {
        self.bundles[cpu].push(FtraceEvent {
            timestamp: Some(now),
            pid: Some(pid),
            event: Some(event),
        });
        if self.bundles[cpu].len() >= BUNDLE {
            self.flush_bundle(cpu)?;
        }
        Ok(())
    }

    fn flush_bundle(&mut self, cpu: usize) -> io::Result<()> {
        if self.bundles[cpu].is_empty() {
            return Ok(());
        }
        let event = std::mem::take(&mut self.bundles[cpu]);
        let p = TracePacket {
            ftrace_events: Some(FtraceEventBundle {
                cpu: Some(cpu as u32),
                event,
            }),
            ..Default::default()
        };
        self.packet(p)
    }

    /// A thread of rt-app's process, as a process tree knows it.
    fn thread(&mut self, now: Ns, t: &SchedTask) -> io::Result<()> {
        let tree = ProcessTree {
            processes: vec![Process {
                pid: Some(RTAPP_PID),
                ppid: Some(0),
                cmdline: vec!["rt-app".into()],
            }],
            threads: vec![Thread {
                tid: Some(t.pid as i32),
                name: Some(t.kcomm().into()),
                tgid: Some(RTAPP_PID),
            }],
        };
        let p = TracePacket {
            timestamp: Some(now),
            process_tree: Some(tree),
            ..Default::default()
        };
        self.packet(p)
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
        let key = task.map_or(Key::Process, Key::Thread);
        let uuid = self.track(now, key, tasks)?;
        let event = rest.split(' ').find_map(|f| f.strip_prefix("event="));
        let (ty, name) = match (kind, event) {
            ("rtapp_task" | "rtapp_loop", Some("start")) => {
                (TYPE_SLICE_BEGIN, slice_name(kind, rest))
            }
            ("rtapp_task" | "rtapp_loop", Some("end")) => (TYPE_SLICE_END, None),
            _ => (TYPE_INSTANT, Some(text.to_string())),
        };
        let e = TrackEvent {
            r#type: Some(ty),
            name,
            ..Default::default()
        };
        self.track_event(now, uuid, e)
    }

    /// PELT and util_est as counters: a task's, a CPU's root cfs_rq's, or a group's (its
    /// entity's, "se …", and its cfs_rq's) on a CPU.
    fn fair(&mut self, now: Ns, cpu: usize, note: &Note, tasks: &[SchedTask]) -> io::Result<()> {
        let (signals, task, path) = match *note {
            Note::PeltSe {
                task,
                path,
                load,
                runnable,
                util,
                ..
            } => {
                let names = if task == NO_TASK {
                    SE_NAMES
                } else {
                    PELT_NAMES
                };
                (zip3(names, [util, load, runnable]), task, path)
            }
            Note::PeltCfs {
                path,
                load,
                runnable,
                util,
                ..
            } => (zip3(PELT_NAMES, [util, load, runnable]), NO_TASK, path),
            Note::UtilEstSe { task, enqueued, .. } => {
                self.counter(now, Key::Task(task, "util_est"), enqueued as u64, tasks)?;
                return Ok(());
            }
            Note::UtilEstCfs { enqueued, .. } => {
                self.counter(now, Key::Cpu(cpu, 0, "util_est"), enqueued as u64, tasks)?;
                return Ok(());
            }
        };
        for (signal, v) in signals {
            let key = match task {
                NO_TASK => Key::Cpu(cpu, path, signal),
                t => Key::Task(t, signal),
            };
            self.counter(now, key, v, tasks)?;
        }
        Ok(())
    }
}

const PELT_NAMES: [&str; 3] = ["util_avg", "load_avg", "runnable_avg"];
const SE_NAMES: [&str; 3] = ["se util_avg", "se load_avg", "se runnable_avg"];

fn zip3(names: [&'static str; 3], values: [u64; 3]) -> [(&'static str, u64); 3] {
    [
        (names[0], values[0]),
        (names[1], values[1]),
        (names[2], values[2]),
    ]
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
        let (ctx_comm, pid, cpu) = context(tp, tasks);
        let t = |id: u32| &tasks[id as usize];
        let comm = |id: u32| Some(t(id).kcomm().to_string());
        let wakeup = |id: u32, target: usize| SchedWakeup {
            comm: comm(id),
            pid: Some(t(id).pid as i32),
            prio: Some(t(id).prio()),
            success: Some(1),
            target_cpu: Some(target as i32),
        };
        match tp {
            Tracepoint::Switch {
                prev,
                prev_state: s,
                next,
                ..
            } => {
                let side = |x: Option<u32>| match x {
                    Some(i) => (t(i).kcomm().to_string(), t(i).pid as i32, t(i).prio()),
                    None => (swapper("<idle>", cpu).into_owned(), 0, 120),
                };
                let ((pc, pp, pprio), (nc, np, nprio)) = (side(*prev), side(*next));
                let e = SchedSwitch {
                    prev_comm: Some(pc),
                    prev_pid: Some(pp),
                    prev_prio: Some(pprio),
                    prev_state: Some(prev_state(*prev, *s)),
                    next_comm: Some(nc),
                    next_pid: Some(np),
                    next_prio: Some(nprio),
                };
                self.ftrace(now, cpu, pid, Event::SchedSwitch(e))
            }
            Tracepoint::Waking { task, target, .. } => {
                self.ftrace(now, cpu, pid, Event::SchedWaking(wakeup(*task, *target)))
            }
            Tracepoint::Wakeup { task, target } => {
                self.ftrace(now, cpu, pid, Event::SchedWakeup(wakeup(*task, *target)))
            }
            Tracepoint::WakeupNew { task, target, .. } => {
                self.ftrace(now, cpu, pid, Event::SchedWakeupNew(wakeup(*task, *target)))
            }
            Tracepoint::Migrate { task, from, to } => {
                let e = SchedMigrateTask {
                    comm: comm(*task),
                    pid: Some(t(*task).pid as i32),
                    prio: Some(t(*task).prio()),
                    orig_cpu: Some(*from as i32),
                    dest_cpu: Some(*to as i32),
                };
                self.ftrace(now, cpu, pid, Event::SchedMigrateTask(e))
            }
            Tracepoint::Fork { child, .. } => {
                let e = SchedProcessFork {
                    parent_comm: Some(ctx_comm.into()),
                    parent_pid: Some(pid as i32),
                    child_comm: Some(ctx_comm.into()),
                    child_pid: Some(t(*child).pid as i32),
                };
                self.ftrace(now, cpu, pid, Event::SchedProcessFork(e))
            }
            Tracepoint::Rename { task, .. } => {
                self.thread(now, t(*task))?;
                let e = TaskRename {
                    pid: Some(t(*task).pid as i32),
                    oldcomm: Some("rt-app".into()),
                    newcomm: comm(*task),
                    oom_score_adj: Some(0),
                };
                self.ftrace(now, cpu, pid, Event::TaskRename(e))
            }
            Tracepoint::Exit { task, .. } => {
                let e = SchedProcessExit {
                    comm: comm(*task),
                    pid: Some(t(*task).pid as i32),
                    tgid: Some(RTAPP_PID),
                    prio: Some(t(*task).prio()),
                };
                self.ftrace(now, cpu, pid, Event::SchedProcessExit(e))
            }
            Tracepoint::PiSetprio {
                task,
                oldprio,
                newprio,
                ..
            } => {
                let e = SchedPiSetprio {
                    comm: comm(*task),
                    newprio: Some(*newprio),
                    oldprio: Some(*oldprio),
                    pid: Some(t(*task).pid as i32),
                };
                self.ftrace(now, cpu, pid, Event::SchedPiSetprio(e))
            }
            Tracepoint::CpuIdle { state, .. } => {
                let e = CpuState {
                    state: Some(*state),
                    cpu_id: Some(cpu as u32),
                };
                self.ftrace(now, cpu, pid, Event::CpuIdle(e))
            }
            Tracepoint::CpuFrequency { khz, .. } => {
                let e = CpuState {
                    state: Some(*khz),
                    cpu_id: Some(cpu as u32),
                };
                self.ftrace(now, cpu, pid, Event::CpuFrequency(e))
            }
            Tracepoint::CpuCapacity { capacity, .. } => {
                self.counter(now, Key::Cpu(cpu, 0, "capacity"), *capacity, tasks)
            }
            Tracepoint::Overutilized { overutilized, .. } => {
                self.counter(now, Key::Overutilized, *overutilized as u64, tasks)
            }
            Tracepoint::Fair { note, .. } => self.fair(now, cpu, note, tasks),
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
        }
    }

    fn finish(&mut self, _tasks: &[SchedTask]) -> io::Result<()> {
        for cpu in 0..self.bundles.len() {
            self.flush_bundle(cpu)?;
        }
        self.out.flush()
    }
}
