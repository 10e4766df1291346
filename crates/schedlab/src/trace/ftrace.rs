//! The `trace-cmd report` text format (what LISA's text parser and Perfetto's ftrace-text
//! import read): `cpus=N`, then one line per event, `comm-pid [cpu] secs.nsecs: event:
//! fields`, as `trace-cmd report -N -t` prints the same run's trace.dat.

use std::borrow::Cow;
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

    /// `comm-pid [cpu] secs.nsecs: event: `, spaced as `trace-cmd report -t` spaces it: the
    /// comm right-aligned in 16 columns, the pid left-aligned in 5, the CPU and nanoseconds
    /// zero-padded, the seconds in 5 columns, the event's name and colon in 21.
    fn head(&mut self, now: Ns, comm: &str, pid: u32, cpu: usize, event: TraceEvent) {
        let l = &mut self.line;
        pad(l, 16 - columns(comm).min(16));
        put!(l; comm, "-", pid);
        pad(l, 5 - digits(pid as u64).min(5));
        put!(l; " [", Zeros(cpu as u64, 3), "] ");
        let secs = now / 1_000_000_000;
        pad(l, 5 - digits(secs).min(5));
        put!(l; secs, ".", Zeros(now % 1_000_000_000, 9), ": ", event.name(), ":");
        pad(l, 21 - (event.name().len() + 1).min(21) + 1);
    }
}

/// `n` spaces (at most 32: the widest column).
fn pad(l: &mut String, n: usize) {
    l.push_str(&"                                "[..n]);
}

/// The columns `s` takes (its characters).
fn columns(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

fn digits(mut n: u64) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// A value in the text trace, appended without `fmt`'s machinery (this writer's cost is
/// formatting: one line per event).
trait Text {
    fn put(&self, l: &mut String);
}

impl Text for &str {
    #[inline]
    fn put(&self, l: &mut String) {
        l.push_str(self)
    }
}

impl Text for &String {
    #[inline]
    fn put(&self, l: &mut String) {
        l.push_str(self)
    }
}

impl Text for Cow<'_, str> {
    #[inline]
    fn put(&self, l: &mut String) {
        l.push_str(self)
    }
}

macro_rules! int_text {
    ($($t:ty),*) => {$(
        impl Text for $t {
            #[inline]
            fn put(&self, l: &mut String) {
                l.push_str(itoa::Buffer::new().format(*self))
            }
        }
    )*};
}
int_text!(u8, u32, u64, i32, i64, usize);

/// A number zero-padded to a width (`%03d`, `%09llu`).
struct Zeros(u64, usize);

impl Text for Zeros {
    #[inline]
    fn put(&self, l: &mut String) {
        pad_zeros(l, self.1 - digits(self.0).min(self.1));
        self.0.put(l);
    }
}

/// `n` zeros (at most 9: nanoseconds).
fn pad_zeros(l: &mut String, n: usize) {
    l.push_str(&"000000000"[..n]);
}

/// Append each value to the line.
macro_rules! put {
    ($l:expr; $($x:expr),* $(,)?) => {{
        $( Text::put(&$x, $l); )*
    }};
}
use put;

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
        match tp {
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
                put!(l; "prev_comm=", pc, " prev_pid=", pp, " prev_prio=", pprio, " prev_state=", ps,
                     " ==> next_comm=", nc, " next_pid=", np, " next_prio=", nprio)
            }
            Tracepoint::Waking { task, target, .. }
            | Tracepoint::Wakeup { task, target, .. }
            | Tracepoint::WakeupNew { task, target, .. } => {
                let p = t(*task);
                put!(l; "comm=", p.kcomm(), " pid=", p.pid, " prio=", p.prio(), " target_cpu=",
                     Zeros(*target as u64, 3))
            }
            Tracepoint::Migrate { task, from, to, .. } => {
                let p = t(*task);
                put!(l; "comm=", p.kcomm(), " pid=", p.pid, " prio=", p.prio(), " orig_cpu=", *from,
                     " dest_cpu=", *to)
            }
            Tracepoint::Fork { child, .. } => {
                put!(l; "comm=", comm, " pid=", pid, " child_comm=", comm, " child_pid=", t(*child).pid)
            }
            Tracepoint::Rename { task, .. } => {
                let p = t(*task);
                put!(l; "pid=", p.pid, " oldcomm=rt-app newcomm=", p.kcomm(), " oom_score_adj=0")
            }
            Tracepoint::Exit { task, .. } => {
                let p = t(*task);
                put!(l; "comm=", p.kcomm(), " pid=", p.pid, " prio=", p.prio())
            }
            Tracepoint::PiSetprio {
                task,
                oldprio,
                newprio,
                ..
            } => {
                let p = t(*task);
                put!(l; "comm=", p.kcomm(), " pid=", p.pid, " oldprio=", *oldprio, " newprio=", *newprio)
            }
            Tracepoint::CpuIdle { state, .. } => put!(l; "state=", *state, " cpu_id=", cpu),
            Tracepoint::CpuFrequency { khz, .. } => put!(l; "state=", *khz, " cpu_id=", cpu),
            Tracepoint::CpuCapacity {
                capacity,
                orig,
                curr,
                ..
            } => put!(l; "cpu=", cpu, " capacity=", *capacity, " capacity_orig=", *orig,
                      " capacity_curr=", *curr),
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
                    put!(l; "cpu=", cpu, " path=", path, " comm=", comm, " pid=", pid, " load=", load,
                         " runnable=", runnable, " util=", util, " update_time=", update_time)
                }
                Note::PeltCfs {
                    path,
                    load,
                    runnable,
                    util,
                    update_time,
                } => {
                    let path = &self.paths[path as usize];
                    put!(l; "cpu=", cpu, " path=", path, " load=", load, " runnable=", runnable,
                         " util=", util, " update_time=", update_time)
                }
                Note::UtilEstSe {
                    task: entity_task,
                    enqueued,
                    ewma,
                    util,
                } => {
                    let p = t(entity_task);
                    put!(l; "cpu=", cpu, " path=(null) comm=", p.kcomm(), " pid=", p.pid,
                         " enqueued=", enqueued, " ewma=", ewma, " util=", util)
                }
                Note::UtilEstCfs { enqueued, util } => {
                    put!(l; "cpu=", cpu, " path=/ enqueued=", enqueued, " ewma=0 util=", util)
                }
                Note::PeltRq {
                    load,
                    runnable,
                    util,
                    update_time,
                    ..
                } => put!(l; "cpu=", cpu, " load=", load, " runnable=", runnable, " util=", util,
                          " update_time=", update_time),
            },
            Tracepoint::Dl { note, .. } => {
                put!(l; "comm=", comm, " pid=", pid, " cpu=", cpu);
                match *note {
                    DlNote::Throttle { runtime, .. } => put!(l; " runtime=", runtime),
                    DlNote::Replenish {
                        runtime, deadline, ..
                    } => put!(l; " runtime=", runtime, " deadline=", deadline),
                    DlNote::Miss { deadline, .. } => put!(l; " deadline=", deadline),
                }
            }
            Tracepoint::Overutilized { overutilized, .. } => {
                put!(l; "overutilized=", *overutilized as u8, " span=0x", &self.span)
            }
            Tracepoint::Print { text, .. } => put!(l; "tracing_mark_write: ", text),
        };
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())
    }

    fn finish(&mut self, _tasks: &[SchedTask]) -> std::io::Result<()> {
        self.out.flush()
    }
}
