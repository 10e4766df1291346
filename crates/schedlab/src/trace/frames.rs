//! Column arrays for `schedlab.run`'s events and signals DataFrames: the same records the
//! text trace prints, kept as numbers so that Python builds frames without parsing text.

use std::cell::RefCell;
use std::rc::Rc;

use super::{switch_state, Observer, Tracepoint};
use crate::sched::fair::group::ROOT_TG;
use crate::sched::fair::NO_TASK;
use crate::sched::task::SchedTask;
use crate::time::Ns;
use crate::tracepoint::{DlNote, Note, TraceEvent};

/// The names of the events columns' `event` codes (`TraceEvent as u8`).
pub const EVENT_NAMES: &[&str] = TraceEvent::NAMES
    .split_at(TraceEvent::FIRST_SIGNAL as usize)
    .0;

/// The names of the signals columns' `signal` codes (`TraceEvent as u8 − FIRST_SIGNAL`), the
/// LISA module's tracepoints.
pub const SIGNAL_NAMES: &[&str] = TraceEvent::NAMES
    .split_at(TraceEvent::FIRST_SIGNAL as usize)
    .1;

/// Marks a value the event or signal does not carry (NA in the DataFrame).
pub const NONE: i64 = i64::MIN;

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
    /// One row per PELT or util_est tracepoint; `pid` is NONE for a cfs_rq or a group
    /// entity, `path` (an index of `Frames::paths`) NONE for a task.
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

/// A row of the events columns, before it is pushed.
struct EventRow {
    event: u8,
    cpu: usize,
    pid: i64,
    other_pid: i64,
    prev_state: u8,
    target_cpu: i64,
    value: i64,
}

impl EventRow {
    fn of(event: TraceEvent, cpu: usize, pid: i64) -> EventRow {
        EventRow {
            event: event as u8,
            cpu,
            pid,
            other_pid: NONE,
            prev_state: 0,
            target_cpu: NONE,
            value: NONE,
        }
    }
}

impl EventColumns {
    fn push(&mut self, now: Ns, r: EventRow) {
        self.ts.push(now);
        self.event.push(r.event);
        self.cpu.push(r.cpu as u32);
        self.pid.push(r.pid);
        self.other_pid.push(r.other_pid);
        self.prev_state.push(r.prev_state);
        self.target_cpu.push(r.target_cpu);
        self.value.push(r.value);
    }
}

/// A row of the signals columns: (load, runnable, util, enqueued, ewma, update_time).
type SignalValues = [i64; 6];

/// Whose signal a row is: a task's pid, or a group's (or cfs_rq's) path id.
type Subject = (i64, i64);

impl SignalColumns {
    fn push(&mut self, now: Ns, signal: TraceEvent, cpu: usize, who: Subject, v: SignalValues) {
        self.ts.push(now);
        self.signal
            .push(signal as u8 - TraceEvent::FIRST_SIGNAL as u8);
        self.cpu.push(cpu as u32);
        self.pid.push(who.0);
        self.path.push(who.1);
        self.load.push(v[0]);
        self.runnable.push(v[1]);
        self.util.push(v[2]);
        self.enqueued.push(v[3]);
        self.ewma.push(v[4]);
        self.update_time.push(v[5]);
    }
}

fn pid_of(tasks: &[SchedTask], task: Option<u32>) -> i64 {
    task.map_or(0, |t| tasks[t as usize].pid as i64)
}

/// The entity pid and values of a fair-class note.
fn signal_of(note: &Note, tasks: &[SchedTask]) -> (Subject, SignalValues) {
    let task = |task: u32| (tasks[task as usize].pid as i64, NONE);
    match *note {
        Note::PeltSe {
            task: t,
            path,
            load,
            runnable,
            util,
            update_time,
        } => (
            if t == NO_TASK {
                (NONE, path as i64)
            } else {
                task(t)
            },
            [
                load as i64,
                runnable as i64,
                util as i64,
                NONE,
                NONE,
                update_time as i64,
            ],
        ),
        Note::PeltCfs {
            path,
            load,
            runnable,
            util,
            update_time,
        } => (
            (NONE, path as i64),
            [
                load as i64,
                runnable as i64,
                util as i64,
                NONE,
                NONE,
                update_time as i64,
            ],
        ),
        Note::UtilEstSe {
            task: t,
            enqueued,
            ewma,
            util,
        } => (
            task(t),
            [NONE, NONE, util as i64, enqueued as i64, ewma as i64, NONE],
        ),
        Note::UtilEstCfs { enqueued, util } => (
            (NONE, ROOT_TG as i64),
            [NONE, NONE, util as i64, enqueued as i64, NONE, NONE],
        ),
        Note::PeltRq {
            load,
            runnable,
            util,
            update_time,
            ..
        } => (
            (NONE, NONE),
            [
                load as i64,
                runnable as i64,
                util as i64,
                NONE,
                NONE,
                update_time as i64,
            ],
        ),
    }
}

impl Frames {
    fn add(&mut self, now: Ns, tp: &Tracepoint, tasks: &[SchedTask]) {
        let pid = |t: u32| tasks[t as usize].pid as i64;
        let ev = tp.event();
        let row = match tp {
            Tracepoint::Switch {
                cpu,
                prev,
                prev_state,
                next,
            } => EventRow {
                other_pid: pid_of(tasks, *next),
                prev_state: switch_state(*prev, *prev_state).as_bytes()[0],
                ..EventRow::of(ev, *cpu, pid_of(tasks, *prev))
            },
            Tracepoint::Waking {
                task,
                cpu,
                target,
                how,
                ..
            } => EventRow {
                target_cpu: *target as i64,
                value: *how as i64,
                ..EventRow::of(ev, *cpu, pid(*task))
            },
            Tracepoint::Wakeup {
                task, target, cpu, ..
            } => EventRow {
                target_cpu: *target as i64,
                ..EventRow::of(ev, *cpu, pid(*task))
            },
            Tracepoint::WakeupNew {
                task,
                target,
                how,
                cpu,
                ..
            } => EventRow {
                target_cpu: *target as i64,
                value: *how as i64,
                ..EventRow::of(ev, *cpu, pid(*task))
            },
            Tracepoint::Migrate {
                task,
                from,
                to,
                cpu,
                ..
            } => EventRow {
                target_cpu: *to as i64,
                value: *from as i64,
                ..EventRow::of(ev, *cpu, pid(*task))
            },
            Tracepoint::Fork { parent, child, cpu } => EventRow {
                other_pid: pid(*child),
                ..EventRow::of(ev, *cpu, parent.map_or(1, pid))
            },
            Tracepoint::Exit { task, cpu } => EventRow::of(ev, *cpu, pid(*task)),
            Tracepoint::Rename { task, cpu } => EventRow::of(ev, *cpu, pid(*task)),
            Tracepoint::CpuIdle { cpu, state } => EventRow {
                value: *state as i32 as i64,
                ..EventRow::of(ev, *cpu, 0)
            },
            Tracepoint::CpuFrequency { cpu, khz } => EventRow {
                value: *khz as i64,
                ..EventRow::of(ev, *cpu, 0)
            },
            Tracepoint::CpuCapacity { cpu, capacity, .. } => EventRow {
                value: *capacity as i64,
                ..EventRow::of(ev, *cpu, 0)
            },
            Tracepoint::Print { task, cpu, text } => {
                let row = self.events.ts.len();
                self.events.markers.push((row, text.clone()));
                EventRow::of(ev, *cpu, task.map_or(1, pid))
            }
            Tracepoint::Dl { cpu, task, note } => {
                let value = match *note {
                    DlNote::Throttle { runtime, .. } | DlNote::Replenish { runtime, .. } => runtime,
                    DlNote::Miss { deadline, .. } => deadline as i64,
                };
                EventRow {
                    value,
                    ..EventRow::of(ev, *cpu, pid(*task))
                }
            }
            Tracepoint::PiSetprio {
                task, cpu, newprio, ..
            } => EventRow {
                value: *newprio as i64,
                ..EventRow::of(ev, *cpu, pid(*task))
            },
            Tracepoint::Overutilized {
                cpu,
                task,
                overutilized,
            } => EventRow {
                value: *overutilized as i64,
                ..EventRow::of(ev, *cpu, pid_of(tasks, *task))
            },
            Tracepoint::Fair { cpu, note, .. } => {
                let (who, values) = signal_of(note, tasks);
                self.signals.push(now, ev, *cpu, who, values);
                return;
            }
        };
        self.events.push(now, row);
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
