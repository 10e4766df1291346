//! rt-app's per-thread logs: `<logdir>/<log_basename>-<thread>.log`, one row per phase
//! iteration, the columns and widths of rt-app's `log_timing`.

use std::io::Write;
use std::path::PathBuf;

use super::Observer;
use crate::sched::task::SchedTask;

/// The header line rt-app writes.
pub const LOG_HEADER: &str = "#idx     perf      run   period           start             end          rel_st      slack c_duration   c_period     wu_lat";

/// One phase iteration (all times in µs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LogRow {
    pub idx: u32,
    pub perf: u64,
    pub run: u64,
    pub period: u64,
    pub start: u64,
    pub end: u64,
    pub rel_st: u64,
    pub slack: i64,
    pub c_duration: u64,
    pub c_period: u64,
    pub wu_lat: u64,
}

impl LogRow {
    pub fn format(&self) -> String {
        format!(
            "{:4} {:8} {:8} {:8} {:15} {:15} {:15} {:10} {:10} {:10} {:10}",
            self.idx,
            self.perf,
            self.run,
            self.period,
            self.start,
            self.end,
            self.rel_st,
            self.slack,
            self.c_duration,
            self.c_period,
            self.wu_lat
        )
    }
}

/// Collects rows per thread and writes one file each at the end (rt-app's buffered mode;
/// file mode gives the same files once the run is over).
pub struct RtappLogs {
    dir: PathBuf,
    basename: String,
    rows: Vec<Vec<LogRow>>,
}

impl RtappLogs {
    pub fn new(dir: PathBuf, basename: String) -> RtappLogs {
        RtappLogs {
            dir,
            basename,
            rows: Vec::new(),
        }
    }
}

impl Observer for RtappLogs {
    fn log(&mut self, task: u32, row: LogRow) {
        let i = task as usize;
        if self.rows.len() <= i {
            self.rows.resize(i + 1, Vec::new());
        }
        self.rows[i].push(row);
    }

    fn finish(&mut self, tasks: &[SchedTask]) -> std::io::Result<()> {
        for (task, rows) in tasks
            .iter()
            .zip(self.rows.iter().chain(std::iter::repeat(&Vec::new())))
        {
            let path = self
                .dir
                .join(format!("{}-{}.log", self.basename, task.comm));
            let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
            writeln!(out, "{LOG_HEADER}")?;
            for r in rows {
                writeln!(out, "{}", r.format())?;
            }
            out.flush()?;
        }
        Ok(())
    }
}
