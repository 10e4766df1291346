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
use self::ring_buffer::{CpuBuffer, MAX_RECORD};
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
    /// By event code.
    layouts: Vec<Layout>,
}

impl Sink {
    /// Record `ev` on `cpu`.
    fn emit(
        &mut self,
        now: Ns,
        cpu: usize,
        pid: u32,
        ev: TraceEvent,
        vals: &[Val],
    ) -> io::Result<()> {
        let fmt = ev.format();
        let layout = &self.layouts[ev as usize];
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
                    sink.emit(now, cpu, pid, ev, &[ip, Val::S(&text[..end])])
                }
                _ => sink.emit(now, cpu, pid, ev, vals),
            },
        )
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
