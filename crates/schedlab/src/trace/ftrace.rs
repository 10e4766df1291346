//! The `trace-cmd report` text format (what LISA's text parser and Perfetto's ftrace-text
//! import read): one line per event, `comm-pid [cpu] secs.nsecs: event: fields`.

use std::fmt::Write as _;
use std::io::Write;

use super::{switch_state, Observer, Tracepoint};
use crate::sched::deadline::DlNote;
use crate::sched::fair::{Note, NO_TASK};
use crate::sched::hooks::TraceEvent;
use crate::sched::task::SchedTask;
use crate::time::Ns;

/// Writes events as trace-cmd report text.
pub struct FtraceWriter<W: Write> {
    out: W,
    line: String,
    /// The task groups' cgroup paths.
    paths: Vec<String>,
}

impl<W: Write> FtraceWriter<W> {
    pub fn new(mut out: W, nr_cpus: usize) -> std::io::Result<FtraceWriter<W>> {
        writeln!(out, "# tracer: nop\n#\ncpus={nr_cpus}")?;
        Ok(FtraceWriter {
            out,
            line: String::with_capacity(256),
            paths: vec!["/".into()],
        })
    }

    /// `comm-pid [cpu] secs.nsecs: event: ` with the event's name and colon in 20 columns.
    fn head(&mut self, now: Ns, comm: &str, pid: u32, cpu: usize, event: TraceEvent) {
        let _ = write!(
            self.line,
            "{comm:>16}-{pid:<7} [{cpu:03}] {:>5}.{:09}: ",
            now / 1_000_000_000,
            now % 1_000_000_000
        );
        let name = event.name();
        self.line.push_str(name);
        self.line.push(':');
        let pad = 20usize.saturating_sub(name.len() + 1) + 1;
        self.line.extend(std::iter::repeat_n(' ', pad));
    }
}

/// The comm and pid of a context: a task, or the CPU's idle task.
fn who(tasks: &[SchedTask], task: Option<u32>) -> (&str, u32) {
    match task {
        Some(t) => (&tasks[t as usize].comm, tasks[t as usize].pid),
        None => ("<idle>", 0),
    }
}

impl<W: Write> Observer for FtraceWriter<W> {
    fn groups(&mut self, paths: &[String]) {
        self.paths = paths.to_vec();
    }

    fn record(&mut self, now: Ns, tp: &Tracepoint, tasks: &[SchedTask]) -> std::io::Result<()> {
        self.line.clear();
        let t = |id: u32| &tasks[id as usize];
        let ev = tp.event();
        match tp {
            Tracepoint::Switch {
                cpu,
                prev,
                prev_state,
                next,
            } => {
                let (pc, pp) = who(tasks, *prev);
                let (nc, np) = who(tasks, *next);
                let (pc, nc) = (swapper(pc, *cpu), swapper(nc, *cpu));
                let prio = |x: Option<u32>| x.map_or(120, |i| t(i).prio());
                self.head(now, who(tasks, *prev).0, pp, *cpu, ev);
                let _ = write!(
                    self.line,
                    "prev_comm={pc} prev_pid={pp} prev_prio={} prev_state={} ==> next_comm={nc} next_pid={np} next_prio={}",
                    prio(*prev),
                    switch_state(*prev, *prev_state),
                    prio(*next)
                );
            }
            Tracepoint::Waking { task, target, .. }
            | Tracepoint::Wakeup { task, target }
            | Tracepoint::WakeupNew { task, target, .. } => {
                let p = t(*task);
                let cpu = match tp {
                    Tracepoint::Waking { cpu, .. } => *cpu,
                    _ => *target,
                };
                self.head(now, &p.comm, p.pid, cpu, ev);
                let _ = write!(
                    self.line,
                    "comm={} pid={} prio={} target_cpu={target:03}",
                    p.comm,
                    p.pid,
                    p.prio()
                );
            }
            Tracepoint::Migrate { task, from, to } => {
                let p = t(*task);
                self.head(now, &p.comm, p.pid, *from, ev);
                let _ = write!(
                    self.line,
                    "comm={} pid={} prio={} orig_cpu={from} dest_cpu={to}",
                    p.comm,
                    p.pid,
                    p.prio()
                );
            }
            Tracepoint::Fork { parent, child, cpu } => {
                let (pc, pp) = who(tasks, *parent);
                let (pc, pp) = if parent.is_some() {
                    (pc, pp)
                } else {
                    ("rt-app", 1)
                };
                let c = t(*child);
                self.head(now, pc, pp, *cpu, ev);
                let _ = write!(
                    self.line,
                    "comm={pc} pid={pp} child_comm={pc} child_pid={}",
                    c.pid
                );
            }
            Tracepoint::Rename { task, cpu } => {
                let p = t(*task);
                self.head(now, &p.comm, p.pid, *cpu, ev);
                let _ = write!(
                    self.line,
                    "pid={} oldcomm=rt-app newcomm={} oom_score_adj=0",
                    p.pid, p.comm
                );
            }
            Tracepoint::Exit { task, cpu } => {
                let p = t(*task);
                self.head(now, &p.comm, p.pid, *cpu, ev);
                let _ = write!(self.line, "comm={} pid={} prio={}", p.comm, p.pid, p.prio());
            }
            Tracepoint::PiSetprio {
                task,
                cpu,
                oldprio,
                newprio,
            } => {
                let p = t(*task);
                self.head(now, &p.comm, p.pid, *cpu, ev);
                let _ = write!(
                    self.line,
                    "comm={} pid={} oldprio={oldprio} newprio={newprio}",
                    p.comm, p.pid
                );
            }
            Tracepoint::CpuIdle { cpu, state } => {
                self.head(now, "<idle>", 0, *cpu, ev);
                let _ = write!(self.line, "state={state} cpu_id={cpu}");
            }
            Tracepoint::CpuFrequency { cpu, khz } => {
                self.head(now, "<idle>", 0, *cpu, ev);
                let _ = write!(self.line, "state={khz} cpu_id={cpu}");
            }
            Tracepoint::CpuCapacity {
                cpu,
                capacity,
                orig,
                curr,
            } => {
                self.head(now, "<idle>", 0, *cpu, ev);
                let _ = write!(
                    self.line,
                    "cpu={cpu} capacity={capacity} capacity_orig={orig} capacity_curr={curr}"
                );
            }
            Tracepoint::Fair { cpu, task, note } => {
                let (comm, pid) = who(tasks, *task);
                match *note {
                    Note::PeltSe {
                        task: entity_task,
                        path,
                        load,
                        runnable,
                        util,
                        update_time,
                    } => {
                        self.head(now, comm, pid, *cpu, ev);
                        // A task prints path (null); a group its path, comm (null), pid -1.
                        let (path, comm, pid) = match entity_task {
                            NO_TASK => (self.paths[path as usize].as_str(), "(null)", -1),
                            p => ("(null)", t(p).comm.as_str(), t(p).pid as i64),
                        };
                        let _ = write!(self.line, "cpu={cpu} path={path} comm={comm} pid={pid} load={load} runnable={runnable} util={util} update_time={update_time}");
                    }
                    Note::PeltCfs {
                        path,
                        load,
                        runnable,
                        util,
                        update_time,
                    } => {
                        self.head(now, comm, pid, *cpu, ev);
                        let path = &self.paths[path as usize];
                        let _ = write!(self.line, "cpu={cpu} path={path} load={load} runnable={runnable} util={util} update_time={update_time}");
                    }
                    Note::UtilEstSe {
                        task: entity_task,
                        enqueued,
                        ewma,
                        util,
                    } => {
                        let p = t(entity_task);
                        self.head(now, comm, pid, *cpu, ev);
                        let _ = write!(self.line, "cpu={cpu} path=(null) comm={} pid={} enqueued={enqueued} ewma={ewma} util={util}", p.comm, p.pid);
                    }
                    Note::UtilEstCfs { enqueued, util } => {
                        self.head(now, comm, pid, *cpu, ev);
                        let _ = write!(
                            self.line,
                            "cpu={cpu} path=/ enqueued={enqueued} ewma=0 util={util}"
                        );
                    }
                }
            }
            Tracepoint::Dl { cpu, task, note } => {
                let p = t(*task);
                let (comm, pid) = (&p.comm, p.pid);
                match *note {
                    DlNote::Throttle { runtime, .. } => {
                        self.head(now, comm, pid, *cpu, ev);
                        let _ = write!(
                            self.line,
                            "comm={comm} pid={pid} cpu={cpu} runtime={runtime}"
                        );
                    }
                    DlNote::Replenish {
                        runtime, deadline, ..
                    } => {
                        self.head(now, comm, pid, *cpu, ev);
                        let _ = write!(
                            self.line,
                            "comm={comm} pid={pid} cpu={cpu} runtime={runtime} deadline={deadline}"
                        );
                    }
                    DlNote::Miss { deadline, .. } => {
                        self.head(now, comm, pid, *cpu, ev);
                        let _ = write!(
                            self.line,
                            "comm={comm} pid={pid} cpu={cpu} deadline={deadline}"
                        );
                    }
                }
            }
            Tracepoint::Print { task, cpu, text } => {
                let p = t(*task);
                self.head(now, &p.comm, p.pid, *cpu, ev);
                let _ = write!(self.line, "tracing_mark_write: {text}");
            }
        }
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())
    }

    fn finish(&mut self, _tasks: &[SchedTask]) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// The idle task's comm in `sched_switch` is `swapper/N`.
fn swapper(comm: &str, cpu: usize) -> std::borrow::Cow<'_, str> {
    if comm == "<idle>" {
        format!("swapper/{cpu}").into()
    } else {
        comm.into()
    }
}
