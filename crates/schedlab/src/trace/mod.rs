//! Observers of the tracepoint catalogue (`sched::hooks::Tracepoint`) and of rt-app's log
//! rows: the writers that turn them into files (ftrace text, rt-app logs) and DataFrame
//! columns. The engine builds records only when an observer is attached.

mod frames;
mod ftrace;
mod rtapp_log;
pub mod schedstat;

pub use frames::{
    EventColumns, Frames, SharedFrames, SignalColumns, EVENT_NAMES, NONE, SIGNAL_NAMES,
};
pub use ftrace::FtraceWriter;
pub use rtapp_log::{LogRow, RtappLogs, LOG_HEADER};

pub use crate::sched::hooks::{PrevState, Tracepoint};
use crate::sched::task::SchedTask;
use crate::time::Ns;

/// A switch's `prev_state` letter (`__trace_sched_switch_state`); the idle task is "R".
pub fn switch_state(prev: Option<u32>, s: PrevState) -> &'static str {
    match (prev, s) {
        (None, _) | (_, PrevState::Runnable) => "R",
        (_, PrevState::Sleeping) => "S",
        (_, PrevState::Dead) => "X",
    }
}

/// Something that listens to a run.
pub trait Observer {
    /// A tracepoint fired at `now`; `tasks` names its tasks.
    fn record(&mut self, _now: Ns, _tp: &Tracepoint, _tasks: &[SchedTask]) -> std::io::Result<()> {
        Ok(())
    }
    /// The task groups' paths, indexed by group id, when the observer is attached.
    fn groups(&mut self, _paths: &[String]) {}
    /// One rt-app log row of `task`.
    fn log(&mut self, _task: u32, _row: LogRow) {}
    /// The run is over: flush, write what was buffered.
    fn finish(&mut self, tasks: &[SchedTask]) -> std::io::Result<()>;
}
