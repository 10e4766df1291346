//! What an event's definition is made of, as `TRACE_EVENT` declares one: its fields with
//! their C types (`Ty`), its format (`Format`: the print fmt, Perfetto's message, the
//! DataFrames' row), and the values a record carries (`Val`).

use crate::sched::task::TASK_COMM_LEN;

/// The C type of a field, as the format file declares it.
#[derive(Debug, Clone, Copy)]
pub enum Ty {
    /// An integer: its C type name, size in bytes, signedness.
    Int(&'static str, u8, bool),
    /// `char name[16]` (`TASK_COMM_LEN`).
    Comm,
    /// `__data_loc char[] name`: a u32 of (length << 16 | offset) to a string after the
    /// fixed part.
    Str,
    /// `char name[]`: the rest of the record (`print`'s buffer).
    Buf,
}

pub(super) const PID: Ty = Ty::Int("pid_t", 4, true);
pub(super) const INT: Ty = Ty::Int("int", 4, true);
pub(super) const U32: Ty = Ty::Int("u32", 4, false);
pub(super) const UINT: Ty = Ty::Int("unsigned int", 4, false);
pub(super) const LONG: Ty = Ty::Int("long", 8, true);
pub(super) const ULONG: Ty = Ty::Int("unsigned long", 8, false);
pub(super) const ULL: Ty = Ty::Int("unsigned long long", 8, false);
pub(super) const S64: Ty = Ty::Int("s64", 8, true);
pub(super) const U64: Ty = Ty::Int("u64", 8, false);
pub(super) const SHORT: Ty = Ty::Int("short", 2, true);
pub(super) const BOOL: Ty = Ty::Int("bool", 1, false);

impl Ty {
    pub fn size(self) -> usize {
        match self {
            Ty::Int(_, size, _) => size as usize,
            Ty::Comm => TASK_COMM_LEN,
            Ty::Str => 4,
            Ty::Buf => 0,
        }
    }

    pub fn align(self) -> usize {
        match self {
            Ty::Comm | Ty::Buf => 1,
            t => t.size(),
        }
    }
}

/// One event's format.
#[derive(Debug)]
pub struct Format {
    pub system: &'static str,
    pub name: &'static str,
    pub id: u16,
    pub fields: &'static [(&'static str, Ty)],
    pub print_fmt: &'static str,
    /// Its message in Perfetto's `FtraceEvent`, if Perfetto has one.
    pub perfetto: Option<PerfettoEvent>,
    /// The values `with_values` hands after the fields, which only the DataFrames keep.
    pub extras: &'static [&'static str],
    /// Its row in the DataFrames.
    pub frame: Frame,
}

impl Format {
    /// The position of value `name`: a field's, else an extra's after the fields.
    pub fn value_index(&self, name: &str) -> usize {
        let fields = self.fields.iter().map(|(n, _)| n).chain(self.extras);
        (fields.into_iter().position(|n| *n == name))
            .unwrap_or_else(|| panic!("{} has no value {name:?}", self.name))
    }
}

/// Marks a value the DataFrames leave out (NA), in an extra and in the columns.
pub const NA: i64 = i64::MIN;

/// An event's row in schedlab's DataFrames (`trace/frames.rs`): which of its values fill
/// which columns, values named (`V = &str`) here and by position where a row is written.
#[derive(Debug, Clone, Copy)]
pub enum Frame<V = &'static str> {
    /// A row of the events columns.
    Event(Row<Col<V>>),
    /// A row of the events columns (its subject the context's task) and a marker's text.
    Marker(V),
    /// A row of the signals columns: whose signal it is (a task's pid, or a group's path
    /// id), then its load, runnable, util, enqueued, ewma and update_time.
    Signal {
        pid: Col<V>,
        path: Col<V>,
        values: [Col<V>; 6],
    },
}

/// The events columns of a row: its subject, the other task (a switch's next, a fork's
/// child), the switch's prev_state letter, a target CPU, and one value.
#[derive(Debug, Clone, Copy)]
pub struct Row<C = Col> {
    pub pid: C,
    pub other: C,
    pub state: C,
    pub target: C,
    pub value: C,
}

impl<C: Copy> Row<C> {
    /// Each column through `f`.
    #[inline(always)]
    pub fn map<D>(self, f: impl Fn(C) -> D) -> Row<D> {
        Row {
            pid: f(self.pid),
            other: f(self.other),
            state: f(self.state),
            target: f(self.target),
            value: f(self.value),
        }
    }
}

/// Where a DataFrame column takes its value.
#[derive(Debug, Clone, Copy)]
pub enum Col<V = &'static str> {
    Na,
    /// The pid of the current task: the one the event fires in the context of.
    Current,
    Value(V),
    /// A u32 value read as signed (`cpu_idle`'s exit, `PWR_EVENT_EXIT`, is −1 to LISA).
    Signed(V),
    /// The letter of a task state value (`task_index_to_char`: "RSDTtXZPI" by its highest
    /// bit).
    StateChar(V),
}

impl Col {
    /// The same column, its value named by position in `f`'s values.
    pub fn at(self, f: &Format) -> Col<usize> {
        match self {
            Col::Na => Col::Na,
            Col::Current => Col::Current,
            Col::Value(n) => Col::Value(f.value_index(n)),
            Col::Signed(n) => Col::Signed(f.value_index(n)),
            Col::StateChar(n) => Col::StateChar(f.value_index(n)),
        }
    }
}

impl Frame {
    /// The same row, its values named by position in `f`'s values.
    pub fn at(self, f: &Format) -> Frame<usize> {
        match self {
            Frame::Event(r) => Frame::Event(r.map(|c| c.at(f))),
            Frame::Marker(text) => Frame::Marker(f.value_index(text)),
            Frame::Signal { pid, path, values } => Frame::Signal {
                pid: pid.at(f),
                path: path.at(f),
                values: values.map(|c| c.at(f)),
            },
        }
    }
}

use Col::{Na, Value};

impl<V> Row<Col<V>> {
    /// A row about the current task, its other columns NA.
    pub const CURRENT: Self = Row {
        pid: Col::Current,
        other: Col::Na,
        state: Col::Na,
        target: Col::Na,
        value: Col::Na,
    };
}

pub(super) const ROW: Row = Row::CURRENT;

/// An events row about the task of field `pid` with value `value`.
pub(super) const fn task_row(value: Col) -> Frame {
    Frame::Event(Row {
        pid: Value("pid"),
        value,
        ..ROW
    })
}

/// A row of one of the CPU's own events (the context is whoever runs): its `value`.
pub(super) const fn cpu_row(value: Col) -> Frame {
    Frame::Event(Row { value, ..ROW })
}

/// The signals of a PELT layout: load, runnable, util, update_time.
pub(super) const PELT_VALUES: [Col; 6] = [
    Value("load"),
    Value("runnable"),
    Value("util"),
    Na,
    Na,
    Value("update_time"),
];

/// An event's message in Perfetto's trace protos (protos/perfetto/trace/ftrace/*.proto): the
/// `FtraceEvent` oneof's field number, each catalogue field's number in the message, and the
/// message's fields that the kernel's format lacks, with the values schedlab gives them.
#[derive(Debug)]
pub struct PerfettoEvent {
    pub id: u32,
    pub fields: &'static [u32],
    pub extra: &'static [(u32, i64)],
}

/// Perfetto's message numbers its fields as the kernel's format orders them.
pub(super) const fn perfetto(id: u32, fields: &'static [u32]) -> Option<PerfettoEvent> {
    Some(PerfettoEvent {
        id,
        fields,
        extra: &[],
    })
}

/// A field's value.
#[derive(Debug, Clone, Copy)]
pub enum Val<'a> {
    I(i64),
    S(&'a str),
}
