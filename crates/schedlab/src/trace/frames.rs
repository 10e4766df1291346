//! Column arrays for `schedlab.run`'s events and signals DataFrames: the same records the
//! text trace prints, kept as numbers so that Python builds frames without parsing text.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::OnceLock;

use super::{Observer, Tracepoint};
use crate::sched::task::SchedTask;
use crate::time::Ns;
use crate::tracepoint::{with_values, Col, Frame, Row, TraceEvent, Val, EVENTS, NA};

/// The names of the events columns' `event` codes (`TraceEvent as u8`).
pub const EVENT_NAMES: &[&str] = TraceEvent::NAMES
    .split_at(TraceEvent::FIRST_SIGNAL as usize)
    .0;

/// The names of the signals columns' `signal` codes (`TraceEvent as u8 − FIRST_SIGNAL`), the
/// LISA module's tracepoints.
pub const SIGNAL_NAMES: &[&str] = TraceEvent::NAMES
    .split_at(TraceEvent::FIRST_SIGNAL as usize)
    .1;

columnar! {
    /// One row per scheduler event. `pid` is the subject (switch: prev, fork: parent, 0 for
    /// the idle task); `other_pid` is the switch's next or the fork's child; `target_cpu` the
    /// wakeup's target or the migration's destination; `value` the placement rule of a waking
    /// or wakeup_new (an index of `Placement::NAMES`), the idle state (-1 on exit, as
    /// LISA reads it), the frequency in kHz, the capacity, a deadline task's runtime left
    /// (throttle, replenish) or its missed absolute deadline, or a PI change's new priority.
    #[derive(Debug, Clone, Default)]
    pub struct EventColumns {
        pub ts: Vec<u64>,
        /// Its code: an index of `EVENT_NAMES`.
        pub event: Vec<u8>,
        pub cpu: Vec<u32>,
        pub pid: Vec<i64>,
        pub other_pid: Vec<i64>,
        /// `prev_state` letter of a switch (b'R', b'S', b'X'), 0 otherwise.
        pub prev_state: Vec<u8>,
        pub target_cpu: Vec<i64>,
        pub value: Vec<i64>,
        /// The text of `print` rows: (row, text).
        pub markers: Vec<(usize, String)>,
    }
}

columnar! {
    /// One row per PELT or util_est tracepoint; `pid` is NA for a cfs_rq or a group
    /// entity, `path` (an index of `Frames::paths`) NA for a task.
    #[derive(Debug, Clone, Default)]
    pub struct SignalColumns {
        pub ts: Vec<u64>,
        /// Its code: an index of `SIGNAL_NAMES`.
        pub signal: Vec<u8>,
        pub cpu: Vec<u32>,
        pub pid: Vec<i64>,
        pub path: Vec<i64>,
        pub load: Vec<i64>,
        pub runnable: Vec<i64>,
        pub util: Vec<i64>,
        pub enqueued: Vec<i64>,
        pub ewma: Vec<i64>,
        pub update_time: Vec<i64>,
    }
}

/// Events and signals of a run. Shared (`Rc`) so that the caller reads it back once the
/// engine that owns the observer is done.
#[derive(Debug, Clone, Default)]
pub struct Frames {
    pub events: EventColumns,
    pub signals: SignalColumns,
    /// The task groups' cgroup paths, by group id.
    pub paths: Vec<String>,
}

/// Frames an observer fills while the run's owner keeps a handle on them.
pub type SharedFrames = Rc<RefCell<Frames>>;

impl Frames {
    pub fn shared() -> SharedFrames {
        Rc::new(RefCell::new(Frames::default()))
    }
}

impl EventColumns {
    #[inline(always)]
    fn push(&mut self, now: Ns, event: TraceEvent, cpu: usize, row: Row<i64>) {
        self.ts.push(now);
        self.event.push(event as u8);
        self.cpu.push(cpu as u32);
        self.pid.push(row.pid);
        self.other_pid.push(row.other);
        self.prev_state
            .push(if row.state == NA { 0 } else { row.state as u8 });
        self.target_cpu.push(row.target);
        self.value.push(row.value);
    }
}

impl SignalColumns {
    #[inline(always)]
    fn push(&mut self, now: Ns, signal: TraceEvent, cpu: usize, who: [i64; 2], v: [i64; 6]) {
        self.ts.push(now);
        self.signal
            .push(signal as u8 - TraceEvent::FIRST_SIGNAL as u8);
        self.cpu.push(cpu as u32);
        self.pid.push(who[0]);
        self.path.push(who[1]);
        self.load.push(v[0]);
        self.runnable.push(v[1]);
        self.util.push(v[2]);
        self.enqueued.push(v[3]);
        self.ewma.push(v[4]);
        self.update_time.push(v[5]);
    }
}

/// Each event's row with its values by position (the catalogue names them), resolved once.
fn plans() -> &'static [Frame<usize>] {
    static PLANS: OnceLock<Vec<Frame<usize>>> = OnceLock::new();
    PLANS.get_or_init(|| EVENTS.iter().map(|f| f.frame.at(f)).collect())
}

/// `task_index_to_char`: a task state's letter, by its highest bit ("R" for 0).
fn task_state_char(state: i64) -> i64 {
    let index = (64 - (state as u64).leading_zeros()) as usize;
    b"RSDTtXZPI"[index] as i64
}

/// Column `c`'s value, of `vals`, the current task's pid `pid`.
#[inline(always)]
fn value(c: Col<usize>, vals: &[Val], pid: u32) -> i64 {
    let int = |i: usize| match vals[i] {
        Val::I(x) => x,
        Val::S(_) => unreachable!("a DataFrame column of a string"),
    };
    match c {
        Col::Na => NA,
        Col::Current => pid as i64,
        Col::Value(i) => int(i),
        Col::Signed(i) => int(i) as i32 as i64,
        Col::StateChar(i) => task_state_char(int(i)),
    }
}

impl Frames {
    fn add(&mut self, now: Ns, tp: &Tracepoint, tasks: &[SchedTask]) {
        let plans = plans();
        let (events, signals) = (&mut self.events, &mut self.signals);
        with_values(tp, tasks, &self.paths, "", |ev, (_, pid, cpu), vals| {
            let v = |c: Col<usize>| value(c, vals, pid);
            match &plans[ev as usize] {
                Frame::Event(r) => events.push(now, ev, cpu, r.map(v)),
                Frame::Marker(text) => {
                    let Val::S(text) = vals[*text] else {
                        unreachable!("a marker's text is a string")
                    };
                    events.markers.push((events.ts.len(), text.to_string()));
                    events.push(now, ev, cpu, Row::CURRENT.map(v));
                }
                Frame::Signal {
                    pid: p,
                    path,
                    values,
                } => {
                    signals.push(now, ev, cpu, [v(*p), v(*path)], values.map(v));
                }
            }
        });
    }
}

impl Observer for Rc<RefCell<Frames>> {
    fn groups(&mut self, paths: &[String]) {
        self.borrow_mut().paths = paths.to_vec();
    }

    fn record(&mut self, now: Ns, tp: &Tracepoint, tasks: &[SchedTask]) -> std::io::Result<()> {
        self.borrow_mut().add(now, tp, tasks);
        Ok(())
    }

    fn finish(&mut self, _tasks: &[SchedTask]) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{task_state_char, Frame, EVENTS};
    use crate::tracepoint::TraceEvent;

    #[test]
    fn every_row_names_values_its_event_has_and_the_signals_follow_the_events() {
        for (code, f) in EVENTS.iter().enumerate() {
            let signal = matches!(f.frame.at(f), Frame::Signal { .. }); // an unknown name panics
            assert_eq!(
                signal,
                code >= TraceEvent::FIRST_SIGNAL as usize,
                "{}",
                f.name
            );
        }
    }

    #[test]
    fn a_state_letter_is_task_index_to_char_of_its_highest_bit() {
        // TASK_RUNNING 0, TASK_INTERRUPTIBLE 1, TASK_UNINTERRUPTIBLE 2, EXIT_DEAD 0x10,
        // TASK_REPORT_IDLE 0x80 (include/linux/sched.h, TASK_REPORT's order).
        let letters: Vec<u8> = [0, 0x1, 0x2, 0x10, 0x80]
            .map(|s| task_state_char(s) as u8)
            .to_vec();
        assert_eq!(letters, b"RSDXI");
    }
}
