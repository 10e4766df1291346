//! The `trace-cmd report` text format (what LISA's text parser and Perfetto's ftrace-text
//! import read): `cpus=N`, then one line per event, `comm-pid [cpu] secs.nsecs: event:
//! fields`, as `trace-cmd report -N -t` prints the same run's trace.dat.

use std::io::Write;

use super::deferred::{Deferred, Render};
use super::print_fmt::PrintFmt;
use super::{span_hex, Observer, Tracepoint};
use crate::sched::task::SchedTask;
use crate::time::Ns;
use crate::tracepoint::{ksym, Context, TraceEvent, Val, EVENTS};

/// Writes events as trace-cmd report text, formatted on a thread of its own.
pub struct FtraceWriter<W: Write + Send + 'static> {
    lines: Deferred<Lines<W>>,
    /// The task groups' cgroup paths.
    paths: Vec<String>,
    /// The root domain's CPUs, as `sched_overutilized` prints them.
    span: String,
}

/// The formatting: one line per event.
struct Lines<W: Write> {
    out: W,
    line: String,
    /// Each event's print fmt, by code.
    fmts: Vec<PrintFmt>,
}

impl<W: Write + Send + 'static> FtraceWriter<W> {
    pub fn new(mut out: W, nr_cpus: usize) -> std::io::Result<FtraceWriter<W>> {
        writeln!(out, "cpus={nr_cpus}")?;
        let lines = Lines {
            out,
            line: String::with_capacity(256),
            fmts: EVENTS.iter().map(PrintFmt::of).collect(),
        };
        Ok(FtraceWriter {
            lines: Deferred::start("schedlab-txt", lines)?,
            paths: vec!["/".into()],
            span: span_hex(nr_cpus),
        })
    }
}

/// `comm-pid [cpu] secs.nsecs: event: `, spaced as `trace-cmd report -t` spaces it: the
/// comm right-aligned in 16 columns, the pid left-aligned in 5, the CPU and nanoseconds
/// zero-padded, the seconds in 5 columns, the event's name and colon in 21.
#[inline(always)]
fn head(l: &mut String, now: Ns, (comm, pid, cpu): Context, event: TraceEvent) {
    pad(l, 16 - columns(comm).min(16));
    put!(l; comm, "-", pid);
    pad(l, 5 - digits(pid as u64).min(5));
    put!(l; " [", Zeros(cpu as u64, 3), "] ");
    let secs = now / 1_000_000_000;
    pad(l, 5 - digits(secs).min(5));
    put!(l; secs, ".", Zeros(now % 1_000_000_000, 9), ": ", event.name(), ":");
    pad(l, 21 - (event.name().len() + 1).min(21) + 1);
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
int_text!(u32, u64);

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

impl<W: Write + Send + 'static> Render for Lines<W> {
    fn event(
        &mut self,
        now: Ns,
        ev: TraceEvent,
        ctx: Context,
        vals: &[Val],
    ) -> std::io::Result<()> {
        let line = &mut self.line;
        line.clear();
        head(line, now, ctx, ev);
        self.fmts[ev as usize].render(line, vals, ksym);
        line.push('\n');
        self.out.write_all(line.as_bytes())
    }
}

impl<W: Write + Send + 'static> Observer for FtraceWriter<W> {
    fn groups(&mut self, paths: &[String]) {
        self.paths = paths.to_vec();
    }

    fn record(&mut self, now: Ns, tp: &Tracepoint, tasks: &[SchedTask]) -> std::io::Result<()> {
        self.lines.record(now, tp, tasks, &self.paths, &self.span)
    }

    fn finish(&mut self, _tasks: &[SchedTask]) -> std::io::Result<()> {
        self.lines.finish()?.out.flush()
    }
}
