//! Observers of the tracepoint catalogue (`crate::tracepoint`) and of rt-app's log
//! rows: the writers that turn them into files (ftrace text, rt-app logs) and DataFrame
//! columns. The engine builds records only when an observer is attached.

mod dat;
mod deferred;
mod frames;
mod ftrace;
pub(crate) mod perfetto;
pub mod plat_info;
mod print_fmt;
mod rtapp_log;
pub mod schedstat;

pub use dat::{DatVersion, DatWriter};
pub use frames::{EventColumns, Frames, SharedFrames, SignalColumns, EVENT_NAMES, SIGNAL_NAMES};
pub use ftrace::FtraceWriter;
pub use perfetto::PerfettoWriter;
pub use rtapp_log::{LogRow, RtappLogs, LOG_HEADER};

use crate::sched::task::SchedTask;
use crate::time::Ns;
pub use crate::tracepoint::{Counter, PrevState, Tracepoint, RTAPP_MAIN_PID};

/// The formats `--trace` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFormat {
    /// `trace-cmd report`'s text.
    Txt,
    /// trace.dat, version 7 with its pages compressed.
    Dat,
    /// trace.dat, version 6 (for readers older than trace-cmd 3.0).
    Dat6,
    /// A Perfetto protobuf trace.
    Perfetto,
}

impl TraceFormat {
    pub const NAMES: [&'static str; 4] = ["txt", "dat", "dat6", "perfetto"];

    pub fn from_name(name: &str) -> Option<TraceFormat> {
        let i = Self::NAMES.iter().position(|n| *n == name)?;
        Some(
            [
                TraceFormat::Txt,
                TraceFormat::Dat,
                TraceFormat::Dat6,
                TraceFormat::Perfetto,
            ][i],
        )
    }

    /// The format a file's extension names: `.txt`, `.dat`, `.perfetto-trace` or `.pftrace`.
    pub fn of_path(path: &std::path::Path) -> Option<TraceFormat> {
        match path.extension()?.to_str()? {
            "txt" => Some(TraceFormat::Txt),
            "dat" => Some(TraceFormat::Dat),
            "perfetto-trace" | "pftrace" => Some(TraceFormat::Perfetto),
            _ => None,
        }
    }
}

/// The root domain's span as `cpumap_print_to_pagebuf` prints a mask of CPUs 0..`nr_cpus`:
/// hexadecimal in 32-bit groups, most significant first, separated by commas.
pub fn span_hex(nr_cpus: usize) -> String {
    let groups: Vec<String> = (0..nr_cpus.div_ceil(32))
        .rev()
        .map(|g| {
            let bits = (nr_cpus - 32 * g).min(32);
            let word = if bits == 32 {
                u32::MAX
            } else {
                (1u32 << bits) - 1
            };
            if g + 1 == nr_cpus.div_ceil(32) {
                format!("{word:x}")
            } else {
                format!("{word:08x}")
            }
        })
        .collect();
    groups.join(",")
}

/// Something that listens to a run.
pub trait Observer {
    /// A tracepoint fired at `now`; `tasks` names its tasks.
    fn record(&mut self, _now: Ns, _tp: &Tracepoint, _tasks: &[SchedTask]) -> std::io::Result<()> {
        Ok(())
    }
    /// Counter `c` of `cpu` is `value` at `now` (values no tracepoint reports).
    fn counter(&mut self, _now: Ns, _cpu: usize, _c: Counter, _value: f64) -> std::io::Result<()> {
        Ok(())
    }
    /// The task groups' paths, indexed by group id, when the observer is attached.
    fn groups(&mut self, _paths: &[String]) {}
    /// One rt-app log row of `task`.
    fn log(&mut self, _task: u32, _row: LogRow) {}
    /// The run is over: flush, write what was buffered.
    fn finish(&mut self, tasks: &[SchedTask]) -> std::io::Result<()>;
}

#[cfg(test)]
mod tests {
    #[test]
    fn spans_print_as_the_kernel_prints_cpumasks() {
        // `%*pb`: 32-bit groups, the first without leading zeros.
        assert_eq!(super::span_hex(8), "ff");
        assert_eq!(super::span_hex(32), "ffffffff");
        assert_eq!(super::span_hex(33), "1,ffffffff");
        assert_eq!(
            super::span_hex(144),
            "ffff,ffffffff,ffffffff,ffffffff,ffffffff"
        );
    }
}
