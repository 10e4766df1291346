//! trace.dat (`trace-cmd.dat.v6(5)`, `trace-cmd.dat.v7(5)`): what `trace-cmd record`
//! writes and `trace-cmd report`, KernelShark and LISA read. Each event becomes a record of
//! its kernel layout (`events.rs`) in its CPU's ring-buffer pages (`ring_buffer.rs`); the
//! file (`file.rs`) adds every event's format, the one kernel symbol a `print` needs, the
//! pids' comms and the CPU count.

mod compress;
mod events;
mod file;
mod ring_buffer;
mod spill;

use std::fmt::Write as _;
use std::io::{self, Write};

use self::compress::Compressor;
use self::events::{Format, Layout, Val, EVENTS, PRINT};
use self::file::Meta;
use self::ring_buffer::{CpuBuffer, MAX_RECORD};
use super::{context, pelt_se_who, span_hex, swapper, switch_state_value, Observer, Tracepoint};
use crate::kernel::Kernel;
use crate::sched::deadline::DlNote;
use crate::sched::fair::Note;
use crate::sched::task::SchedTask;
use crate::time::Ns;

/// Where `tracing_mark_write` is in the kallsyms the file carries: the `ip` of every
/// `print` (trace-cmd resolves it to the name, as LISA expects).
const TRACING_MARK_WRITE: u64 = 0xffff_ffff_8120_0000;

/// trace.dat's versions: 6, or 7 with the pages compressed (zstd).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatVersion {
    V6,
    V7,
}

/// Writes events as trace.dat.
pub struct DatWriter<W: Write> {
    out: W,
    kernel: Kernel,
    /// v7's compressor (None: v6).
    compressor: Option<Compressor>,
    sink: Sink,
    paths: Vec<String>,
    /// The root domain's CPUs, as `sched_overutilized` records them.
    span: String,
}

/// The CPUs' buffers, with the events' layouts.
struct Sink {
    cpus: Vec<CpuBuffer>,
    /// By event code (`EVENTS`), then `print`'s (`PRINT_CODE`).
    layouts: Vec<Layout>,
}

/// `print`'s index in `Sink::layouts`.
const PRINT_CODE: usize = EVENTS.len();

impl Sink {
    /// Record event `code` (a `TraceEvent`, or `PRINT_CODE`) on `cpu`.
    fn emit(&mut self, now: Ns, cpu: usize, pid: u32, code: usize, vals: &[Val]) -> io::Result<()> {
        let fmt = if code == PRINT_CODE {
            &PRINT
        } else {
            &EVENTS[code]
        };
        let layout = &self.layouts[code];
        let len = fmt.size(layout, vals);
        self.cpus[cpu].write(now, len, |place| fmt.write(layout, place, pid, vals))
    }
}

impl<W: Write> DatWriter<W> {
    pub fn new(
        out: W,
        nr_cpus: usize,
        kernel: Kernel,
        version: DatVersion,
    ) -> io::Result<DatWriter<W>> {
        let compressor = match version {
            DatVersion::V6 => None,
            DatVersion::V7 => Some(Compressor::start(nr_cpus)?),
        };
        let cpu = |i: usize| match &compressor {
            Some(c) => CpuBuffer::chunked(i, c.sender()),
            None => CpuBuffer::raw(),
        };
        let cpus = (0..nr_cpus).map(cpu).collect();
        Ok(DatWriter {
            out,
            kernel,
            compressor,
            sink: Sink {
                cpus,
                layouts: EVENTS.iter().chain([&PRINT]).map(Format::layout).collect(),
            },
            paths: vec!["/".into()],
            span: span_hex(nr_cpus),
        })
    }

    /// The metadata of the file.
    fn meta(&self, tasks: &[SchedTask]) -> Meta {
        let kallsyms = format!("{TRACING_MARK_WRITE:016x} T tracing_mark_write\n");
        let mut cmdlines = String::from("1 rt-app\n");
        for t in tasks {
            let _ = writeln!(cmdlines, "{} {}", t.pid, t.kcomm());
        }
        let uname = format!("Linux schedlab {}.0-schedlab schedlab", self.kernel.name());
        Meta::new(&kallsyms, &cmdlines, uname)
    }
}

impl<W: Write> Observer for DatWriter<W> {
    fn groups(&mut self, paths: &[String]) {
        self.paths = paths.to_vec();
    }

    fn record(&mut self, now: Ns, tp: &Tracepoint, tasks: &[SchedTask]) -> io::Result<()> {
        use Val::{I, S};
        let (_, pid, cpu) = context(tp, tasks);
        let t = |id: u32| &tasks[id as usize];
        let task = |id: u32| (t(id).kcomm(), t(id).pid as i64, t(id).prio() as i64);
        let ev = tp.event() as usize;
        match tp {
            Tracepoint::Switch {
                cpu,
                prev,
                prev_state: s,
                next,
            } => {
                let side = |x: Option<u32>| match x {
                    Some(i) => (std::borrow::Cow::from(t(i).kcomm()), task(i).1, task(i).2),
                    None => (swapper("<idle>", *cpu), 0, 120),
                };
                let (pc, pp, pprio) = side(*prev);
                let (nc, np, nprio) = side(*next);
                let vals = [
                    S(&pc),
                    I(pp),
                    I(pprio),
                    I(switch_state_value(*prev, *s)),
                    S(&nc),
                    I(np),
                    I(nprio),
                ];
                self.sink.emit(now, *cpu, pid, ev, &vals)
            }
            Tracepoint::Waking {
                task: id, target, ..
            }
            | Tracepoint::Wakeup {
                task: id, target, ..
            }
            | Tracepoint::WakeupNew {
                task: id, target, ..
            } => {
                let (c, p, prio) = task(*id);
                self.sink
                    .emit(now, cpu, pid, ev, &[S(c), I(p), I(prio), I(*target as i64)])
            }
            Tracepoint::Migrate {
                task: id, from, to, ..
            } => {
                let (c, p, prio) = task(*id);
                let vals = [S(c), I(p), I(prio), I(*from as i64), I(*to as i64)];
                self.sink.emit(now, cpu, pid, ev, &vals)
            }
            Tracepoint::Fork { child, .. } => {
                let (pc, pp, _) = context(tp, tasks);
                let vals = [S(pc), I(pp as i64), S(pc), I(t(*child).pid as i64)];
                self.sink.emit(now, cpu, pid, ev, &vals)
            }
            Tracepoint::Rename { task: id, .. } => {
                let vals = [I(t(*id).pid as i64), S("rt-app"), S(t(*id).kcomm()), I(0)];
                self.sink.emit(now, cpu, pid, ev, &vals)
            }
            Tracepoint::Exit { task: id, .. } => {
                let (c, p, prio) = task(*id);
                self.sink.emit(now, cpu, pid, ev, &[S(c), I(p), I(prio)])
            }
            Tracepoint::PiSetprio {
                task: id,
                oldprio,
                newprio,
                ..
            } => {
                let (c, p, _) = task(*id);
                let vals = [S(c), I(p), I(*oldprio as i64), I(*newprio as i64)];
                self.sink.emit(now, cpu, pid, ev, &vals)
            }
            Tracepoint::CpuIdle { state, .. } => {
                self.sink
                    .emit(now, cpu, pid, ev, &[I(*state as i64), I(cpu as i64)])
            }
            Tracepoint::CpuFrequency { khz, .. } => {
                self.sink
                    .emit(now, cpu, pid, ev, &[I(*khz as i64), I(cpu as i64)])
            }
            Tracepoint::CpuCapacity {
                capacity,
                orig,
                curr,
                ..
            } => {
                let vals = [
                    I(cpu as i64),
                    I(*capacity as i64),
                    I(*orig as i64),
                    I(*curr as i64),
                ];
                self.sink.emit(now, cpu, pid, ev, &vals)
            }
            Tracepoint::Fair { note, .. } => self.fair(now, cpu, pid, ev, note, tasks),
            Tracepoint::Dl { task: id, note, .. } => {
                let (c, p, _) = task(*id);
                let mut vals = [S(c), I(p), I(cpu as i64), I(0), I(0)];
                let n = match *note {
                    DlNote::Throttle { runtime } => {
                        vals[3] = I(runtime);
                        4
                    }
                    DlNote::Replenish { runtime, deadline } => {
                        (vals[3], vals[4]) = (I(runtime), I(deadline as i64));
                        5
                    }
                    DlNote::Miss { deadline } => {
                        vals[3] = I(deadline as i64);
                        4
                    }
                };
                self.sink.emit(now, cpu, pid, ev, &vals[..n])
            }
            Tracepoint::Overutilized { overutilized, .. } => {
                let vals = [I(*overutilized as i64), S(&self.span)];
                self.sink.emit(now, cpu, pid, ev, &vals)
            }
            Tracepoint::Print { text, .. } => {
                let mut end = text.len().min(MAX_RECORD - 32);
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                let vals = [I(TRACING_MARK_WRITE as i64), S(&text[..end])];
                self.sink.emit(now, cpu, pid, PRINT_CODE, &vals)
            }
        }
    }

    fn finish(&mut self, tasks: &[SchedTask]) -> io::Result<()> {
        let meta = self.meta(tasks);
        let mut raw = Vec::with_capacity(self.sink.cpus.len());
        for cpu in std::mem::take(&mut self.sink.cpus) {
            raw.extend(cpu.finish()?);
        }
        match self.compressor.take() {
            None => file::write_v6(&mut self.out, &meta, raw)?,
            Some(c) => file::write_v7(&mut self.out, &meta, c.finish()?)?,
        }
        self.out.flush()
    }
}

impl<W: Write> DatWriter<W> {
    /// The LISA module's PELT and util_est events (sched_tp's layouts).
    fn fair(
        &mut self,
        now: Ns,
        cpu: usize,
        pid: u32,
        ev: usize,
        note: &Note,
        tasks: &[SchedTask],
    ) -> io::Result<()> {
        use Val::{I, S};
        let c = cpu as i64;
        match *note {
            Note::PeltSe {
                task,
                path,
                load,
                runnable,
                util,
                update_time,
            } => {
                let (path, comm, p) = pelt_se_who(task, path, tasks, &self.paths);
                let vals = [
                    I(update_time as i64),
                    I(load as i64),
                    I(runnable as i64),
                    I(util as i64),
                    I(c),
                    I(p),
                    S(path),
                    S(comm),
                ];
                self.sink.emit(now, cpu, pid, ev, &vals)
            }
            Note::PeltCfs {
                path,
                load,
                runnable,
                util,
                update_time,
            } => {
                let path = &self.paths[path as usize];
                let vals = [
                    I(update_time as i64),
                    I(load as i64),
                    I(runnable as i64),
                    I(util as i64),
                    I(c),
                    S(path),
                ];
                self.sink.emit(now, cpu, pid, ev, &vals)
            }
            Note::UtilEstSe {
                task,
                enqueued,
                ewma,
                util,
            } => {
                let p = &tasks[task as usize];
                let vals = [
                    I(util as i64),
                    I(enqueued as i64),
                    I(ewma as i64),
                    I(c),
                    I(p.pid as i64),
                    S("(null)"),
                    S(p.kcomm()),
                ];
                self.sink.emit(now, cpu, pid, ev, &vals)
            }
            Note::UtilEstCfs { enqueued, util } => {
                let vals = [I(util as i64), I(enqueued as i64), I(0), I(c), S("/")];
                self.sink.emit(now, cpu, pid, ev, &vals)
            }
            Note::PeltRq {
                load,
                runnable,
                util,
                update_time,
                ..
            } => {
                let vals = [
                    I(update_time as i64),
                    I(load as i64),
                    I(runnable as i64),
                    I(util as i64),
                    I(c),
                ];
                self.sink.emit(now, cpu, pid, ev, &vals)
            }
        }
    }
}
