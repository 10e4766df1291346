//! Replay a sequence of task-entity updates through `___update_load_sum` /
//! `___update_load_avg`, exactly as the kernel would apply them.
//!
//! Each row is one update at `now`, with the arguments the kernel passes for a task entity:
//! `load` (on_rq), `runnable` (on_rq and not delayed) and `running` (is cfs_rq->curr),
//! describing the interval that ends at `now`. The first row only sets last_update_time;
//! the entity starts with every signal at zero.

use super::check_weight;
use crate::error::InputError;
use crate::sched::pelt::{update_load_avg_se, ContribScale, SchedAvg};
use crate::time::Ns;

/// The input columns (a CSV may give them in any order).
pub const INPUT_COLUMNS: [&str; 4] = ["now_ns", "load", "runnable", "running"];
/// The output header: now_ns, then the signals of [`SchedAvg::SIGNAL_NAMES`].
pub fn output_header() -> String {
    format!("now_ns,{}\n", SchedAvg::SIGNAL_NAMES.join(","))
}

/// One update of the entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub now: Ns,
    pub load: bool,
    pub runnable: bool,
    pub running: bool,
}

/// What is wrong with a row, and in which column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowError {
    pub column: &'static str,
    pub message: String,
}

/// The entity being replayed.
#[derive(Debug, Clone)]
pub struct Replay {
    avg: SchedAvg,
    weight: u64,
    prev_now: Option<Ns>,
}

impl Replay {
    pub fn new(weight: u64) -> Result<Replay, InputError> {
        check_weight(weight)?;
        Ok(Replay {
            avg: SchedAvg::default(),
            weight,
            prev_now: None,
        })
    }

    /// Apply one update; returns the signals after it.
    #[inline]
    pub fn step(&mut self, row: Row) -> Result<&SchedAvg, RowError> {
        if row.running && !row.runnable {
            return Err(RowError {
                column: "running",
                message: "running=1 with runnable=0: a running entity is runnable".into(),
            });
        }
        // The kernel resyncs silently on a clock going backwards; a replay refuses it.
        if let Some(prev) = self.prev_now.filter(|&prev| row.now < prev) {
            return Err(RowError {
                column: "now_ns",
                message: format!("{} is less than the previous now_ns {prev}", row.now),
            });
        }
        if self.prev_now.replace(row.now).is_none() {
            self.avg.last_update_time = row.now; // the first row only starts the clock
            return Ok(&self.avg);
        }
        let (avg, weight) = (&mut self.avg, self.weight);
        update_load_avg_se(
            row.now,
            avg,
            row.load,
            row.runnable as u64,
            row.running,
            weight,
            ContribScale::NONE,
        );
        Ok(&self.avg)
    }
}

/// Replay CSV text (header `now_ns,load,runnable,running`, columns in any order) and
/// return the output CSV. Errors name the line and the column.
pub fn replay_csv(input: &[u8], weight: u64) -> Result<Vec<u8>, InputError> {
    let mut replay = Replay::new(weight)?;
    let mut reader = csv::ReaderBuilder::new().from_reader(input);
    let columns = column_indices(&mut reader)?;
    // Output rows carry eight numbers to the input's four: about three times the bytes.
    let header = output_header();
    let mut out = Vec::with_capacity(3 * input.len() + header.len());
    out.extend_from_slice(header.as_bytes());
    let mut record = csv::ByteRecord::new();
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => return Err(csv_error(&e)),
        }
        let line = record.position().map_or(0, |p| p.line());
        let at = |column: &str| format!("line {line}, column {column}");
        let row =
            parse_row(&record, &columns).map_err(|e| InputError::new(at(e.column), e.message))?;
        let avg = replay
            .step(row)
            .map_err(|e| InputError::new(at(e.column), e.message))?;
        write_row(&mut out, row.now, avg);
    }
    Ok(out)
}

fn column_indices(reader: &mut csv::Reader<&[u8]>) -> Result<[usize; 4], InputError> {
    let header = reader.byte_headers().map_err(|e| csv_error(&e))?.clone();
    let names: Vec<&[u8]> = header.iter().map(<[u8]>::trim_ascii).collect();
    if let Some(extra) = names
        .iter()
        .find(|n| !INPUT_COLUMNS.iter().any(|c| c.as_bytes() == **n))
    {
        let extra = String::from_utf8_lossy(extra);
        return Err(InputError::new(
            "line 1",
            format!(
                "unknown column '{extra}' (expected {})",
                INPUT_COLUMNS.join(",")
            ),
        ));
    }
    let mut idx = [0; 4];
    for (slot, column) in idx.iter_mut().zip(INPUT_COLUMNS) {
        *slot = names
            .iter()
            .position(|n| *n == column.as_bytes())
            .ok_or_else(|| InputError::new("line 1", format!("missing column '{column}'")))?;
    }
    Ok(idx)
}

fn parse_row(record: &csv::ByteRecord, columns: &[usize; 4]) -> Result<Row, RowError> {
    let field = |i: usize| record[columns[i]].trim_ascii();
    let now = parse_u64(field(0))
        .ok_or_else(|| not_a(INPUT_COLUMNS[0], field(0), "non-negative integer"))?;
    let flag = |i: usize| match field(i) {
        b"0" => Ok(false),
        b"1" => Ok(true),
        other => Err(not_a(INPUT_COLUMNS[i], other, "0 or 1")),
    };
    Ok(Row {
        now,
        load: flag(1)?,
        runnable: flag(2)?,
        running: flag(3)?,
    })
}

fn not_a(column: &'static str, value: &[u8], what: &str) -> RowError {
    RowError {
        column,
        message: format!("'{}' is not a {what}", String::from_utf8_lossy(value)),
    }
}

#[inline]
fn parse_u64(field: &[u8]) -> Option<u64> {
    if field.is_empty() || field.len() > 20 {
        return None;
    }
    field.iter().try_fold(0u64, |acc, &b| {
        let digit = b.wrapping_sub(b'0');
        (digit < 10).then_some(())?;
        acc.checked_mul(10)?.checked_add(digit as u64)
    })
}

#[inline]
fn write_row(out: &mut Vec<u8>, now: Ns, avg: &SchedAvg) {
    let mut buf = itoa::Buffer::new();
    out.extend_from_slice(buf.format(now).as_bytes());
    for v in avg.signals() {
        out.push(b',');
        out.extend_from_slice(buf.format(v).as_bytes());
    }
    out.push(b'\n');
}

fn csv_error(e: &csv::Error) -> InputError {
    let line = e
        .position()
        .map_or_else(|| "input".to_string(), |p| format!("line {}", p.line()));
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => {
            format!("{len} fields where the header has {expected_len}")
        }
        csv::ErrorKind::Utf8 { .. } => "not UTF-8 text".to_string(),
        csv::ErrorKind::Io(io) => io.to_string(),
        _ => e.to_string(),
    };
    InputError::new(line, message)
}
