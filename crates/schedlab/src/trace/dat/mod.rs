//! trace.dat (`trace-cmd.dat.v6(5)`, `trace-cmd.dat.v7(5)`): what `trace-cmd record`
//! writes and `trace-cmd report`, KernelShark and LISA read. Each event becomes a record of
//! its kernel layout (`events.rs`, from the catalogue) in its CPU's ring-buffer pages (`ring_buffer.rs`); the
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
use self::events::Layout;
use self::file::Meta;
use self::ring_buffer::{CpuBuffer, PageStore, MAX_RECORD};
use self::spill::Spill;
use super::{span_hex, Observer, Tracepoint};
use crate::kernel::Kernel;
use crate::sched::task::SchedTask;
use crate::time::Ns;
use crate::tracepoint::{ksym, with_values, Format, TraceEvent, Val, EVENTS, TRACING_MARK_WRITE};

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
    sink: Sink,
    paths: Vec<String>,
    /// The root domain's CPUs, as `sched_overutilized` records them.
    span: String,
}

/// The CPUs' buffers and where their pages go, with the events' layouts.
struct Sink {
    cpus: Vec<CpuBuffer>,
    pages: Pages,
    /// By event code.
    layouts: Vec<Layout>,
}

impl Sink {
    /// Record `ev` on `cpu` in the context of `pid` with `flags`.
    fn emit(
        &mut self,
        now: Ns,
        cpu: usize,
        ctx: (u32, u8),
        ev: TraceEvent,
        vals: &[Val],
    ) -> io::Result<()> {
        let fmt = ev.format();
        let layout = &self.layouts[ev as usize];
        let len = fmt.size(layout, vals);
        let place = |place: &mut [u8]| fmt.write(layout, place, ctx, vals);
        self.cpus[cpu].write(now, len, &mut self.pages, place)
    }
}

/// Where full pages go: kept as they are (v6), or compressed (v7).
enum Pages {
    Raw(Vec<Spill>),
    Zstd(Compressor),
}

impl PageStore for Pages {
    fn store(&mut self, cpu: usize, pages: &mut Vec<u8>) -> io::Result<()> {
        match self {
            Pages::Raw(spills) => spills.store(cpu, pages),
            Pages::Zstd(c) => c.store(cpu, pages),
        }
    }
}

impl<W: Write> DatWriter<W> {
    pub fn new(
        out: W,
        nr_cpus: usize,
        kernel: Kernel,
        version: DatVersion,
    ) -> io::Result<DatWriter<W>> {
        let pages = match version {
            DatVersion::V6 => Pages::Raw((0..nr_cpus).map(|_| Spill::default()).collect()),
            DatVersion::V7 => Pages::Zstd(Compressor::start(nr_cpus)?),
        };
        Ok(DatWriter {
            out,
            kernel,
            sink: Sink {
                cpus: (0..nr_cpus).map(CpuBuffer::new).collect(),
                pages,
                layouts: EVENTS.iter().map(Format::layout).collect(),
            },
            paths: vec!["/".into()],
            span: span_hex(nr_cpus),
        })
    }

    /// The metadata of the file.
    fn meta(&self, tasks: &[SchedTask]) -> Meta {
        let kallsyms = format!("{TRACING_MARK_WRITE:016x} T {}\n", ksym(TRACING_MARK_WRITE));
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
        let sink = &mut self.sink;
        let flags = tp.common_flags();
        with_values(
            tp,
            tasks,
            &self.paths,
            &self.span,
            |ev, (_, pid, cpu), vals| match (ev, vals) {
                (TraceEvent::Print, &[ip, Val::S(text)]) => {
                    let mut end = text.len().min(MAX_RECORD - 32);
                    while !text.is_char_boundary(end) {
                        end -= 1;
                    }
                    sink.emit(now, cpu, (pid, flags), ev, &[ip, Val::S(&text[..end])])
                }
                _ => sink.emit(now, cpu, (pid, flags), ev, vals),
            },
        )
    }

    fn finish(&mut self, tasks: &[SchedTask]) -> io::Result<()> {
        let meta = self.meta(tasks);
        let Sink { cpus, pages, .. } = &mut self.sink;
        for cpu in std::mem::take(cpus) {
            cpu.finish(pages)?;
        }
        match std::mem::replace(pages, Pages::Raw(vec![])) {
            Pages::Raw(spills) => file::write_v6(&mut self.out, &meta, spills)?,
            Pages::Zstd(c) => file::write_v7(&mut self.out, &meta, c.finish()?)?,
        }
        self.out.flush()
    }
}
