//! Observers: what the engine reports, and the writers that turn it into files (ftrace text,
//! rt-app logs). The engine builds trace records only when an observer is attached.

mod frames;
mod ftrace;
mod rtapp_log;

pub use frames::{EventColumns, Frames, SignalColumns, EVENT_NAMES, NONE, SIGNAL_NAMES};
pub use ftrace::FtraceWriter;
pub use rtapp_log::{LogRow, RtappLogs, LOG_HEADER};

use crate::sched::fair::Note;
use crate::sim::task::Task;
use crate::time::Ns;

/// `prev_state` of a switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrevState {
    /// Preempted: still runnable.
    Runnable,
    Sleeping,
    Dead,
}

/// A switch's `prev_state` letter (`__trace_sched_switch_state`); the idle task is "R".
pub fn switch_state(prev: Option<u32>, s: PrevState) -> &'static str {
    match (prev, s) {
        (None, _) | (_, PrevState::Runnable) => "R",
        (_, PrevState::Sleeping) => "S",
        (_, PrevState::Dead) => "X",
    }
}

/// One engine event, as the kernel's tracepoints and rt-app's markers would report it.
#[derive(Debug, Clone)]
pub enum Record {
    Switch {
        cpu: usize,
        prev: Option<u32>,
        prev_state: PrevState,
        next: Option<u32>,
    },
    Waking {
        task: u32,
        cpu: usize,
        target: usize,
    },
    Wakeup {
        task: u32,
        target: usize,
    },
    WakeupNew {
        task: u32,
        target: usize,
    },
    Migrate {
        task: u32,
        from: usize,
        to: usize,
    },
    Fork {
        parent: Option<u32>,
        child: u32,
        cpu: usize,
    },
    Rename {
        task: u32,
        cpu: usize,
    },
    Exit {
        task: u32,
        cpu: usize,
    },
    CpuIdle {
        cpu: usize,
        state: u32,
    },
    CpuFrequency {
        cpu: usize,
        khz: u32,
    },
    CpuCapacity {
        cpu: usize,
        capacity: u64,
        orig: u64,
        curr: u64,
    },
    /// A PELT or util_est tracepoint on `cpu`, fired in the context of `task` (None: idle).
    Fair {
        cpu: usize,
        task: Option<u32>,
        note: Note,
    },
    /// A deadline reservation's throttle, replenishment or missed deadline on `cpu`.
    Dl {
        cpu: usize,
        note: crate::sched::deadline::DlNote,
    },
    /// `sched_pi_setprio`: a PI change of `task`'s priority.
    PiSetprio {
        task: u32,
        cpu: usize,
        oldprio: i32,
        newprio: i32,
    },
    /// rt-app trace_marker text, written by `task`.
    Marker {
        task: u32,
        cpu: usize,
        text: String,
    },
    /// One rt-app log row of `task`.
    Log {
        task: u32,
        row: LogRow,
    },
}

/// Something that listens to a run.
pub trait Observer {
    fn record(&mut self, now: Ns, rec: &Record, tasks: &[Task]) -> std::io::Result<()>;
    /// The run is over: flush, write what was buffered.
    fn finish(&mut self, tasks: &[Task]) -> std::io::Result<()>;
}
