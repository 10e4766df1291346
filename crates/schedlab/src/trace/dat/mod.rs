//! trace.dat, version 6 (`trace-cmd.dat.v6(5)`): what `trace-cmd record` writes and
//! `trace-cmd report`, KernelShark and LISA read. The header carries the ring buffer's
//! layout, every event's format, the one kernel symbol a `print` needs, the pids' comms and
//! the CPU count; then each CPU's ring-buffer pages (`ring_buffer.rs`), page aligned.

mod events;
mod ring_buffer;

use std::io::{self, Write};

use self::events::{Format, Val, EVENTS, EXIT_DEAD, PRINT, TASK_INTERRUPTIBLE};
use self::ring_buffer::{CpuBuffer, MAX_RECORD, PAGE_HEADER, PAGE_SIZE};
use super::{context, span_hex, swapper, Observer, PrevState, Tracepoint};
use crate::kernel::Kernel;
use crate::sched::deadline::DlNote;
use crate::sched::fair::{Note, NO_TASK};
use crate::sched::task::SchedTask;
use crate::time::Ns;

/// Where `tracing_mark_write` is in the kallsyms the file carries: the `ip` of every
/// `print` (trace-cmd resolves it to the name, as LISA expects).
const TRACING_MARK_WRITE: u64 = 0xffff_ffff_8120_0000;

/// trace-cmd's option ids (`TRACECMD_OPTION_*`).
const OPTION_TRACECLOCK: u16 = 4;
const OPTION_UNAME: u16 = 5;
const OPTION_CPUCOUNT: u16 = 8;

/// Writes events as trace.dat.
pub struct DatWriter<W: Write> {
    out: W,
    kernel: Kernel,
    sink: Sink,
    paths: Vec<String>,
    /// The root domain's CPUs, as `sched_overutilized` records them.
    span: String,
}

/// The CPUs' buffers, with the record being built.
struct Sink {
    cpus: Vec<CpuBuffer>,
    rec: Vec<u8>,
}

impl Sink {
    fn emit(
        &mut self,
        now: Ns,
        cpu: usize,
        pid: u32,
        fmt: &Format,
        vals: &[Val],
    ) -> io::Result<()> {
        self.rec.clear();
        fmt.encode(&mut self.rec, pid, vals);
        self.cpus[cpu].write(now, &self.rec)
    }
}

impl<W: Write> DatWriter<W> {
    pub fn new(out: W, nr_cpus: usize, kernel: Kernel) -> DatWriter<W> {
        DatWriter {
            out,
            kernel,
            sink: Sink {
                cpus: (0..nr_cpus).map(|_| CpuBuffer::new()).collect(),
                rec: Vec::with_capacity(256),
            },
            paths: vec!["/".into()],
            span: span_hex(nr_cpus),
        }
    }

    /// The header up to the CPUs' data offsets.
    fn header(&self, tasks: &[SchedTask]) -> Vec<u8> {
        let mut h = Vec::with_capacity(64 * 1024);
        h.extend_from_slice(b"\x17\x08\x44tracing6\0");
        h.push(0); // little endian
        h.push(8); // userspace long size
        h.extend_from_slice(&(PAGE_SIZE as u32).to_le_bytes());
        section(&mut h, b"header_page\0", 8, &header_page());
        section(&mut h, b"header_event\0", 8, HEADER_EVENT.as_bytes());
        // Ftrace's own events, then the systems with theirs.
        h.extend_from_slice(&1u32.to_le_bytes());
        section(&mut h, b"", 8, PRINT.file().as_bytes());
        let systems = ["sched", "task", "power", "lisa", "schedlab"];
        h.extend_from_slice(&(systems.len() as u32).to_le_bytes());
        for system in systems {
            h.extend_from_slice(system.as_bytes());
            h.push(0);
            let of = || EVENTS.iter().filter(move |f| f.system == system);
            h.extend_from_slice(&(of().count() as u32).to_le_bytes());
            for f in of() {
                section(&mut h, b"", 8, f.file().as_bytes());
            }
        }
        let kallsyms = format!("{TRACING_MARK_WRITE:016x} T tracing_mark_write\n");
        section(&mut h, b"", 4, kallsyms.as_bytes());
        section(&mut h, b"", 4, b"");
        let mut cmdlines = String::from("1 rt-app\n");
        for t in tasks {
            cmdlines.push_str(&format!("{} {}\n", t.pid, t.kcomm()));
        }
        section(&mut h, b"", 8, cmdlines.as_bytes());
        h.extend_from_slice(&(self.sink.cpus.len() as u32).to_le_bytes());
        h.extend_from_slice(b"options  \0");
        let uname = format!(
            "Linux schedlab {}.0-schedlab schedlab\0",
            self.kernel.name()
        );
        option(
            &mut h,
            OPTION_TRACECLOCK,
            b"[local] global counter uptime perf mono mono_raw boot\n\0",
        );
        option(&mut h, OPTION_UNAME, uname.as_bytes());
        option(
            &mut h,
            OPTION_CPUCOUNT,
            &(self.sink.cpus.len() as u32).to_le_bytes(),
        );
        h.extend_from_slice(&0u16.to_le_bytes());
        h.extend_from_slice(b"flyrecord\0");
        h
    }
}

/// `header_page`: `ring_buffer_print_page_header` for 4 KiB pages on a 64-bit kernel.
fn header_page() -> Vec<u8> {
    format!(
        "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
         \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
         \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
         \tfield: char data;\toffset:{PAGE_HEADER};\tsize:{};\tsigned:0;\n",
        PAGE_SIZE - PAGE_HEADER
    )
    .into_bytes()
}

/// `header_event`: `ring_buffer_print_entry_header`.
const HEADER_EVENT: &str = "# compressed entry header\n\
    \ttype_len    :    5 bits\n\
    \ttime_delta  :   27 bits\n\
    \tarray       :   32 bits\n\
    \n\
    \tpadding     : type == 29\n\
    \ttime_extend : type == 30\n\
    \ttime_stamp : type == 31\n\
    \tdata max type_len  == 28\n";

/// A tag, the size of `data` in `width` bytes, and `data`.
fn section(h: &mut Vec<u8>, tag: &[u8], width: usize, data: &[u8]) {
    h.extend_from_slice(tag);
    h.extend_from_slice(&(data.len() as u64).to_le_bytes()[..width]);
    h.extend_from_slice(data);
}

fn option(h: &mut Vec<u8>, id: u16, data: &[u8]) {
    h.extend_from_slice(&id.to_le_bytes());
    h.extend_from_slice(&(data.len() as u32).to_le_bytes());
    h.extend_from_slice(data);
}

/// `__trace_sched_switch_state`: a preempted user task calls `schedule()` running (0,
/// "R"); a sleeper is `TASK_INTERRUPTIBLE`; an exiting thread `EXIT_DEAD`.
fn prev_state(prev: Option<u32>, s: PrevState) -> i64 {
    match (prev, s) {
        (None, _) | (_, PrevState::Runnable) => 0,
        (_, PrevState::Sleeping) => TASK_INTERRUPTIBLE,
        (_, PrevState::Dead) => EXIT_DEAD,
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
        let ev = &EVENTS[tp.event() as usize];
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
                    I(prev_state(*prev, *s)),
                    S(&nc),
                    I(np),
                    I(nprio),
                ];
                self.sink.emit(now, *cpu, pid, ev, &vals)
            }
            Tracepoint::Waking {
                task: id, target, ..
            }
            | Tracepoint::Wakeup { task: id, target }
            | Tracepoint::WakeupNew {
                task: id, target, ..
            } => {
                let (c, p, prio) = task(*id);
                self.sink
                    .emit(now, cpu, pid, ev, &[S(c), I(p), I(prio), I(*target as i64)])
            }
            Tracepoint::Migrate { task: id, from, to } => {
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
                let head = [S(c), I(p), I(cpu as i64)];
                match *note {
                    DlNote::Throttle { runtime } => {
                        self.sink
                            .emit(now, cpu, pid, ev, &[head[0], head[1], head[2], I(runtime)])
                    }
                    DlNote::Replenish { runtime, deadline } => {
                        let vals = [head[0], head[1], head[2], I(runtime), I(deadline as i64)];
                        self.sink.emit(now, cpu, pid, ev, &vals)
                    }
                    DlNote::Miss { deadline } => {
                        let vals = [head[0], head[1], head[2], I(deadline as i64)];
                        self.sink.emit(now, cpu, pid, ev, &vals)
                    }
                }
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
                self.sink.emit(now, cpu, pid, &PRINT, &vals)
            }
        }
    }

    fn finish(&mut self, tasks: &[SchedTask]) -> io::Result<()> {
        let header = self.header(tasks);
        let mut done = Vec::with_capacity(self.sink.cpus.len());
        for cpu in std::mem::take(&mut self.sink.cpus) {
            done.push(cpu.finish()?);
        }
        let table = header.len() + 16 * done.len();
        let mut at = table.next_multiple_of(PAGE_SIZE) as u64;
        self.out.write_all(&header)?;
        for (size, _) in &done {
            self.out.write_all(&at.to_le_bytes())?;
            self.out.write_all(&size.to_le_bytes())?;
            at += size;
        }
        self.out
            .write_all(&vec![0; table.next_multiple_of(PAGE_SIZE) - table])?;
        for (_, pages) in done {
            if let Some(mut f) = pages {
                io::copy(&mut f, &mut self.out)?;
            }
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
        ev: &Format,
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
                // A task prints path (null); a group its path, comm (null), pid -1.
                let (path, comm, p) = match task {
                    NO_TASK => (self.paths[path as usize].as_str(), "(null)", -1),
                    t => (
                        "(null)",
                        tasks[t as usize].kcomm(),
                        tasks[t as usize].pid as i64,
                    ),
                };
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
        }
    }
}
