//! The `trace-cmd report` text format (what LISA's text parser and Perfetto's ftrace-text
//! import read): `cpus=N`, then one line per event, `comm-pid [cpu] secs.nsecs: event:
//! fields`, as `trace-cmd report -N -t` prints the same run's trace.dat.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::Write;

use super::{context, pelt_se_who, span_hex, swapper, switch_state, Observer, Tracepoint};
use crate::sched::deadline::DlNote;
use crate::sched::fair::Note;
use crate::sched::hooks::TraceEvent;
use crate::sched::task::SchedTask;
use crate::time::Ns;

/// Writes events as trace-cmd report text.
pub struct FtraceWriter<W: Write> {
    out: W,
    line: String,
    /// The task groups' cgroup paths.
    paths: Vec<String>,
    /// The root domain's CPUs, as `sched_overutilized` prints them.
    span: String,
}

impl<W: Write> FtraceWriter<W> {
    pub fn new(mut out: W, nr_cpus: usize) -> std::io::Result<FtraceWriter<W>> {
        writeln!(out, "cpus={nr_cpus}")?;
        Ok(FtraceWriter {
            out,
            line: String::with_capacity(256),
            paths: vec!["/".into()],
            span: span_hex(nr_cpus),
        })
    }

    /// `comm-pid [cpu] secs.nsecs: event: `, spaced as `trace-cmd report -t` spaces it (the
    /// event's name and colon left-justified in 21 columns).
    fn head(&mut self, now: Ns, comm: &str, pid: u32, cpu: usize, event: TraceEvent) {
        let _ = write!(
            self.line,
            "{comm:>16}-{pid:<5} [{cpu:03}] {:>5}.{:09}: ",
            now / 1_000_000_000,
            now % 1_000_000_000
        );
        let name = event.name();
        self.line.push_str(name);
        self.line.push(':');
        let pad = 21usize.saturating_sub(name.len() + 1) + 1;
        self.line.extend(std::iter::repeat_n(' ', pad));
    }
}

impl<W: Write> Observer for FtraceWriter<W> {
    fn groups(&mut self, paths: &[String]) {
        self.paths = paths.to_vec();
    }

    fn record(&mut self, now: Ns, tp: &Tracepoint, tasks: &[SchedTask]) -> std::io::Result<()> {
        self.line.clear();
        let (comm, pid, cpu) = context(tp, tasks);
        self.head(now, comm, pid, cpu, tp.event());
        let t = |id: u32| &tasks[id as usize];
        let l = &mut self.line;
        let _ = match tp {
            Tracepoint::Switch {
                prev,
                prev_state,
                next,
                ..
            } => {
                let side = |x: Option<u32>| match x {
                    Some(i) => (Cow::from(t(i).kcomm()), t(i).pid, t(i).prio()),
                    None => (swapper("<idle>", cpu), 0, 120),
                };
                let ((pc, pp, pprio), (nc, np, nprio)) = (side(*prev), side(*next));
                let ps = switch_state(*prev, *prev_state);
                write!(l, "prev_comm={pc} prev_pid={pp} prev_prio={pprio} prev_state={ps} ==> next_comm={nc} next_pid={np} next_prio={nprio}")
            }
            Tracepoint::Waking { task, target, .. }
            | Tracepoint::Wakeup { task, target }
            | Tracepoint::WakeupNew { task, target, .. } => {
                let p = t(*task);
                write!(
                    l,
                    "comm={} pid={} prio={} target_cpu={target:03}",
                    p.kcomm(),
                    p.pid,
                    p.prio()
                )
            }
            Tracepoint::Migrate { task, from, to } => {
                let p = t(*task);
                write!(
                    l,
                    "comm={} pid={} prio={} orig_cpu={from} dest_cpu={to}",
                    p.kcomm(),
                    p.pid,
                    p.prio()
                )
            }
            Tracepoint::Fork { child, .. } => {
                write!(
                    l,
                    "comm={comm} pid={pid} child_comm={comm} child_pid={}",
                    t(*child).pid
                )
            }
            Tracepoint::Rename { task, .. } => {
                let p = t(*task);
                write!(
                    l,
                    "pid={} oldcomm=rt-app newcomm={} oom_score_adj=0",
                    p.pid,
                    p.kcomm()
                )
            }
            Tracepoint::Exit { task, .. } => {
                let p = t(*task);
                write!(l, "comm={} pid={} prio={}", p.kcomm(), p.pid, p.prio())
            }
            Tracepoint::PiSetprio {
                task,
                oldprio,
                newprio,
                ..
            } => {
                let p = t(*task);
                write!(
                    l,
                    "comm={} pid={} oldprio={oldprio} newprio={newprio}",
                    p.kcomm(),
                    p.pid
                )
            }
            Tracepoint::CpuIdle { state, .. } => write!(l, "state={state} cpu_id={cpu}"),
            Tracepoint::CpuFrequency { khz, .. } => write!(l, "state={khz} cpu_id={cpu}"),
            Tracepoint::CpuCapacity {
                capacity,
                orig,
                curr,
                ..
            } => write!(
                l,
                "cpu={cpu} capacity={capacity} capacity_orig={orig} capacity_curr={curr}"
            ),
            Tracepoint::Fair { note, .. } => match *note {
                Note::PeltSe {
                    task: entity_task,
                    path,
                    load,
                    runnable,
                    util,
                    update_time,
                } => {
                    let (path, comm, pid) = pelt_se_who(entity_task, path, tasks, &self.paths);
                    write!(l, "cpu={cpu} path={path} comm={comm} pid={pid} load={load} runnable={runnable} util={util} update_time={update_time}")
                }
                Note::PeltCfs {
                    path,
                    load,
                    runnable,
                    util,
                    update_time,
                } => {
                    let path = &self.paths[path as usize];
                    write!(l, "cpu={cpu} path={path} load={load} runnable={runnable} util={util} update_time={update_time}")
                }
                Note::UtilEstSe {
                    task: entity_task,
                    enqueued,
                    ewma,
                    util,
                } => {
                    let p = t(entity_task);
                    write!(l, "cpu={cpu} path=(null) comm={} pid={} enqueued={enqueued} ewma={ewma} util={util}", p.kcomm(), p.pid)
                }
                Note::UtilEstCfs { enqueued, util } => {
                    write!(l, "cpu={cpu} path=/ enqueued={enqueued} ewma=0 util={util}")
                }
                Note::PeltRq {
                    load,
                    runnable,
                    util,
                    update_time,
                    ..
                } => write!(l, "cpu={cpu} load={load} runnable={runnable} util={util} update_time={update_time}"),
            },
            Tracepoint::Dl { note, .. } => match *note {
                DlNote::Throttle { runtime, .. } => {
                    write!(l, "comm={comm} pid={pid} cpu={cpu} runtime={runtime}")
                }
                DlNote::Replenish {
                    runtime, deadline, ..
                } => write!(
                    l,
                    "comm={comm} pid={pid} cpu={cpu} runtime={runtime} deadline={deadline}"
                ),
                DlNote::Miss { deadline, .. } => {
                    write!(l, "comm={comm} pid={pid} cpu={cpu} deadline={deadline}")
                }
            },
            Tracepoint::Overutilized { overutilized, .. } => {
                write!(
                    l,
                    "overutilized={} span=0x{}",
                    *overutilized as u8, self.span
                )
            }
            Tracepoint::Print { text, .. } => write!(l, "tracing_mark_write: {text}"),
        };
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())
    }

    fn finish(&mut self, _tasks: &[SchedTask]) -> std::io::Result<()> {
        self.out.flush()
    }
}
