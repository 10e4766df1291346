//! rt-app's per-thread logs: `<logdir>/<log_basename>-<thread>.log`, one row per phase
//! iteration, the columns and widths of rt-app's `log_timing`.

use std::cell::RefCell;
use std::fs::OpenOptions;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::rc::Rc;

use super::Observer;
use crate::output::Staged;
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

/// Rows kept in memory before they are appended to the threads' files (about 6 MB): a
/// run's memory does not grow with simulated time.
const MAX_BUFFERED_ROWS: usize = 1 << 16;

/// Writes one file per thread (rt-app's buffered mode; file mode gives the same files once
/// the run is over), under temporary names: `finish` hands the files over in `done`, and
/// the caller moves them into place once the whole run has succeeded.
pub struct RtappLogs {
    dir: PathBuf,
    basename: String,
    rows: Vec<Vec<LogRow>>,
    buffered: usize,
    files: Vec<Option<Staged>>,
    error: Option<std::io::Error>,
    done: Rc<RefCell<Vec<Staged>>>,
}

impl RtappLogs {
    /// The logs, and where their finished files will be.
    pub fn new(dir: PathBuf, basename: String) -> (RtappLogs, Rc<RefCell<Vec<Staged>>>) {
        let done = Rc::new(RefCell::new(Vec::new()));
        let logs = RtappLogs {
            dir,
            basename,
            rows: Vec::new(),
            buffered: 0,
            files: Vec::new(),
            error: None,
            done: done.clone(),
        };
        (logs, done)
    }

    /// Append task `i`'s buffered rows to its file, created with rt-app's header first.
    fn spill(&mut self, i: usize) -> std::io::Result<()> {
        if self.files.len() <= i {
            self.files.resize_with(i + 1, || None);
        }
        let file = match &self.files[i] {
            Some(staged) => OpenOptions::new().append(true).open(staged.tmp())?,
            None => {
                let name = format!("{}-{i}.log", self.basename);
                let (staged, mut file) = Staged::create(&self.dir.join(name))?;
                self.files[i] = Some(staged);
                writeln!(file, "{LOG_HEADER}")?;
                file
            }
        };
        let mut out = BufWriter::new(file);
        for r in self.rows.get_mut(i).map(std::mem::take).unwrap_or_default() {
            writeln!(out, "{}", r.format())?;
        }
        out.flush()
    }

    fn spill_all(&mut self) -> std::io::Result<()> {
        for i in 0..self.rows.len() {
            if !self.rows[i].is_empty() {
                self.spill(i)?;
            }
        }
        self.buffered = 0;
        Ok(())
    }
}

impl Observer for RtappLogs {
    fn log(&mut self, task: u32, row: LogRow) {
        let i = task as usize;
        if self.rows.len() <= i {
            self.rows.resize(i + 1, Vec::new());
        }
        self.rows[i].push(row);
        self.buffered += 1;
        if self.buffered >= MAX_BUFFERED_ROWS && self.error.is_none() {
            self.error = self.spill_all().err();
        }
    }

    fn finish(&mut self, tasks: &[SchedTask]) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        for (i, task) in tasks.iter().enumerate() {
            if task.pid == super::RTAPP_MAIN_PID {
                continue; // it has no log
            }
            self.spill(i)?;
            let mut staged = self.files[i].take().expect("spill creates the file");
            staged.retarget(
                self.dir
                    .join(format!("{}-{}.log", self.basename, task.comm)),
            );
            self.done.borrow_mut().push(staged);
        }
        Ok(())
    }
}
