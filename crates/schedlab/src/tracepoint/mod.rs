//! The tracepoint catalogue: every event the scheduler reports, defined once, as
//! include/trace/events/*.h define the kernel's. `Tracepoint` is what fires (the scheduler
//! builds one only while an observer listens); each `TraceEvent` code has its definition here
//! (system, name, fields with their C types, `TP_printk`'s print fmt, Perfetto's message, the
//! DataFrames' row) and what it records (`with_values`, its `TP_fast_assign`), from which
//! trace.dat's layouts, format files and records, the text trace, Perfetto's messages and the
//! DataFrames' rows all follow. Layouts are 6.12's (x86_64, `-funsigned-char`); the PELT,
//! util_est, capacity and overutilized events are the LISA module's (sched_tp field order,
//! with `runnable`); schedlab's deadline events have no kernel counterpart. What a definition
//! is made of is in `format.rs`.

mod format;

use self::format::*;
pub use self::format::{Col, Format, Frame, PerfettoEvent, Row, Ty, Val, NA};
use Col::{Na, Value};

use std::sync::OnceLock;

use crate::limits::NR_CPUS;
use crate::sched::class::Placement;
use crate::sched::fair::group::{TgId, ROOT_TG};
use crate::sched::fair::NO_TASK;
use crate::sched::rq::RqAvg;
use crate::sched::task::SchedTask;

/// rt-app's main thread's pid: the one task that is not a thread of the workload (it creates
/// them, and the rtapp_main markers are its).
pub const RTAPP_MAIN_PID: u32 = 1;
/// `common_flags`' bits (`enum trace_flag_type`): interrupts off, in a hard interrupt, in a
/// soft interrupt, in an NMI.
const TRACE_FLAG_IRQS_OFF: u8 = 0x01;
const TRACE_FLAG_HARDIRQ: u8 = 0x08;
const TRACE_FLAG_SOFTIRQ: u8 = 0x10;
const TRACE_FLAG_NMI: u8 = 0x40;

/// Whether an event with `common_flags` came from interrupt context (hard or soft
/// interrupt, NMI), as a trace reader tells it.
pub fn in_interrupt(common_flags: u64) -> bool {
    common_flags & (TRACE_FLAG_HARDIRQ | TRACE_FLAG_SOFTIRQ | TRACE_FLAG_NMI) as u64 != 0
}

/// What a PELT or util_est tracepoint saw, captured when it fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Note {
    /// The entity of task `task`.
    PeltSe {
        task: u32,
        /// A group entity's group.
        path: TgId,
        load: u64,
        runnable: u64,
        util: u64,
        update_time: u64,
    },
    PeltCfs {
        path: TgId,
        load: u64,
        runnable: u64,
        util: u64,
        update_time: u64,
    },
    UtilEstSe {
        task: u32,
        enqueued: u32,
        ewma: u32,
        util: u64,
    },
    UtilEstCfs {
        enqueued: u32,
        util: u64,
    },
    /// `sched_pelt_rt` / `sched_pelt_dl`: the runqueue's RT or deadline signal.
    PeltRq {
        class: RqAvg,
        load: u64,
        runnable: u64,
        util: u64,
        update_time: u64,
    },
}

/// What the trace shows of a reservation (custom events, see docs/deadline.md).
#[derive(Debug, Clone, Copy)]
pub enum DlNote {
    Throttle { runtime: i64 },
    Replenish { runtime: i64, deadline: u64 },
    Miss { deadline: u64 },
}

/// `prev_state` of a switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrevState {
    /// Preempted: still runnable.
    Runnable,
    Sleeping,
    Dead,
}

/// The tracepoints of a run, as the kernel's (and the LISA module's) would report them.
#[derive(Debug, Clone)]
pub enum Tracepoint {
    Switch {
        cpu: usize,
        prev: Option<u32>,
        prev_state: PrevState,
        next: Option<u32>,
    },
    /// On the waker's `cpu`, whose current task (`curr`: the waker, the task an interrupt
    /// came in, or none: idle) is the event's context; `target`: the task's CPU before
    /// `select_task_rq` (`task_cpu(p)`). `how`: the rule that chose where it goes (not in the
    /// kernel's event; the events frame keeps it).
    Waking {
        task: u32,
        cpu: usize,
        curr: Option<u32>,
        target: usize,
        how: Placement,
        /// In a timer's hard interrupt (`common_flags` say so).
        irq: bool,
    },
    /// On `cpu`, which queues the task (the waker's, or the target's from its wake list),
    /// in the context of its current task `curr`.
    Wakeup {
        task: u32,
        target: usize,
        cpu: usize,
        curr: Option<u32>,
    },
    /// On the parent's CPU `cpu`, in its context (none: rt-app's main thread).
    WakeupNew {
        task: u32,
        target: usize,
        how: Placement,
        cpu: usize,
        parent: Option<u32>,
    },
    /// On `cpu`, which moves the task (the waker, the balancing or pushing CPU), in the
    /// context of its current task `curr`.
    Migrate {
        task: u32,
        from: usize,
        to: usize,
        cpu: usize,
        curr: Option<u32>,
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
    /// Task `task`'s reservation throttled, replenished or missed its deadline on `cpu`.
    Dl {
        cpu: usize,
        task: u32,
        note: DlNote,
    },
    /// `sched_pi_setprio`: a PI change of `task`'s priority.
    PiSetprio {
        task: u32,
        cpu: usize,
        oldprio: i32,
        newprio: i32,
    },
    /// `sched_overutilized_tp` (the LISA module's `sched_overutilized`): `cpu`, running
    /// `task` (None: idle), set the root domain's overutilized flag to `overutilized`.
    Overutilized {
        cpu: usize,
        task: Option<u32>,
        overutilized: bool,
    },
    /// `print`: text `task` wrote to trace_marker (rt-app's markers; None: rt-app's main
    /// thread).
    Print {
        task: Option<u32>,
        cpu: usize,
        text: String,
    },
}

impl TraceEvent {
    /// Every name, in code order (the catalogue's).
    pub const NAMES: [&'static str; EVENT_COUNT] = {
        let mut names = [""; EVENT_COUNT];
        let mut i = 0;
        while i < EVENT_COUNT {
            names[i] = CATALOGUE[i].name;
            i += 1;
        }
        names
    };
    /// The first signal: events' codes are below it, signals' count from it.
    pub const FIRST_SIGNAL: TraceEvent = TraceEvent::SchedPeltSe;

    pub fn name(self) -> &'static str {
        EVENTS[self as usize].name
    }

    /// Its definition.
    pub fn format(self) -> &'static Format {
        &EVENTS[self as usize]
    }
}

impl Tracepoint {
    /// The event it reports.
    /// `common_flags` (`tracing_gen_ctx`): TRACE_FLAG_HARDIRQ and TRACE_FLAG_IRQS_OFF for a
    /// wakeup in a timer's hard interrupt. Simplified: other events carry none (their
    /// irqs-off bit is not kept).
    pub fn common_flags(&self) -> u8 {
        match self {
            Tracepoint::Waking { irq: true, .. } => TRACE_FLAG_HARDIRQ | TRACE_FLAG_IRQS_OFF,
            _ => 0,
        }
    }

    pub fn event(&self) -> TraceEvent {
        match self {
            Tracepoint::Switch { .. } => TraceEvent::SchedSwitch,
            Tracepoint::Waking { .. } => TraceEvent::SchedWaking,
            Tracepoint::Wakeup { .. } => TraceEvent::SchedWakeup,
            Tracepoint::WakeupNew { .. } => TraceEvent::SchedWakeupNew,
            Tracepoint::Migrate { .. } => TraceEvent::SchedMigrateTask,
            Tracepoint::Fork { .. } => TraceEvent::SchedProcessFork,
            Tracepoint::Rename { .. } => TraceEvent::TaskRename,
            Tracepoint::Exit { .. } => TraceEvent::SchedProcessExit,
            Tracepoint::CpuIdle { .. } => TraceEvent::CpuIdle,
            Tracepoint::CpuFrequency { .. } => TraceEvent::CpuFrequency,
            Tracepoint::CpuCapacity { .. } => TraceEvent::SchedCpuCapacity,
            Tracepoint::Fair { note, .. } => match note {
                Note::PeltSe { .. } => TraceEvent::SchedPeltSe,
                Note::PeltCfs { .. } => TraceEvent::SchedPeltCfs,
                Note::UtilEstSe { .. } => TraceEvent::SchedUtilEstSe,
                Note::UtilEstCfs { .. } => TraceEvent::SchedUtilEstCfs,
                Note::PeltRq {
                    class: RqAvg::Rt, ..
                } => TraceEvent::SchedPeltRt,
                Note::PeltRq {
                    class: RqAvg::Dl, ..
                } => TraceEvent::SchedPeltDl,
            },
            Tracepoint::Dl { note, .. } => match note {
                DlNote::Throttle { .. } => TraceEvent::SchedDlThrottle,
                DlNote::Replenish { .. } => TraceEvent::SchedDlReplenish,
                DlNote::Miss { .. } => TraceEvent::SchedDlMiss,
            },
            Tracepoint::PiSetprio { .. } => TraceEvent::SchedPiSetprio,
            Tracepoint::Overutilized { .. } => TraceEvent::SchedOverutilized,
            Tracepoint::Print { .. } => TraceEvent::Print,
        }
    }
}

/// Values a trace shows as counters that no kernel tracepoint reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Counter {
    /// GRUB's `running_bw` and the root domain share `this_bw` of a CPU's deadline
    /// runqueue, as fractions of the CPU.
    DlRunningBw,
    DlThisBw,
    /// A CPU's energy so far, in mJ.
    Energy,
    /// The runqueue's clamps (`rq->uclamp[UCLAMP_MIN/MAX].value`).
    UclampMin,
    UclampMax,
}

impl Counter {
    pub fn name(self) -> &'static str {
        match self {
            Counter::DlRunningBw => "dl running_bw",
            Counter::DlThisBw => "dl this_bw",
            Counter::Energy => "energy_mj",
            Counter::UclampMin => "uclamp_min",
            Counter::UclampMax => "uclamp_max",
        }
    }
}

/// `SchedWakeupFtraceEvent` and kin (message `id`): comm 1, pid 2, prio 3, success 4
/// (always 1 since 4.x), target_cpu 5.
const fn wakeup_perfetto(id: u32) -> Option<PerfettoEvent> {
    Some(PerfettoEvent {
        id,
        fields: &[1, 2, 3, 5],
        extra: &[(4, 1)],
    })
}

/// A wakeup's row: the woken task, where it was, and (sched_waking, sched_wakeup_new) the
/// placement rule that chose its CPU.
const WAKEUP_ROW_COLUMNS: Row = Row {
    pid: Value("pid"),
    target: Value("target_cpu"),
    value: Value("placement"),
    ..ROW
};
const WAKEUP_ROW: Frame = Frame::Event(WAKEUP_ROW_COLUMNS);

/// `__trace_sched_switch_state`'s encoding, as the print fmt decodes it (`TASK_REPORT_MAX`
/// marks a preemption in kernel mode: "R+").
const SWITCH_FMT: &str = concat!(
    "\"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d\", ",
    "REC->prev_comm, REC->prev_pid, REC->prev_prio, ",
    "(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? ",
    "__print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", ",
    "{ 0x00000001, \"S\" }, { 0x00000002, \"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, { 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", ",
    "REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", ",
    "REC->next_comm, REC->next_pid, REC->next_prio"
);

const WAKEUP_FIELDS: &[(&str, Ty)] = &[
    ("comm", Ty::Comm),
    ("pid", PID),
    ("prio", INT),
    ("target_cpu", INT),
];
const WAKEUP_FMT: &str =
    "\"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, REC->target_cpu";
/// The LISA module's `sched_pelt_rq_template` (`sched_pelt_rt`, `sched_pelt_dl`).
const PELT_RQ_FIELDS: &[(&str, Ty)] = &[
    ("update_time", ULL),
    ("load", ULONG),
    ("runnable", ULONG),
    ("util", ULONG),
    ("cpu", INT),
];
const PELT_RQ_FMT: &str = "\"cpu=%d load=%lu runnable=%lu util=%lu update_time=%llu\", REC->cpu, REC->load, REC->runnable, REC->util, REC->update_time";
const CPU_FIELDS: &[(&str, Ty)] = &[("state", U32), ("cpu_id", U32)];
const CPU_FMT: &str =
    "\"state=%lu cpu_id=%lu\", (unsigned long)REC->state, (unsigned long)REC->cpu_id";

/// Declares the catalogue once: each event's `TraceEvent` code and its definition, in code
/// order (the text trace's event names, the DataFrames' `event` and `signal` codes).
macro_rules! catalogue {
    ($($(#[$doc:meta])* $variant:ident => $format:expr,)*) => {
        /// The kernel's name of every event a `Tracepoint` reports, once for every
        /// observer, by its code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(u8)]
        pub enum TraceEvent {
            $($(#[$doc])* $variant,)*
        }

        /// How many events there are.
        pub const EVENT_COUNT: usize = [$(TraceEvent::$variant),*].len();

        /// The catalogue, for the constants derived from it.
        const CATALOGUE: [Format; EVENT_COUNT] = [$($format),*];
    };
}

/// Every event, by `TraceEvent` code (ids from 300, in code order, as a kernel numbers its
/// events dynamically; `print` has ftrace's own, 5).
pub static EVENTS: [Format; EVENT_COUNT] = CATALOGUE;

catalogue! {
    SchedSwitch => Format {
        system: "sched",
        name: "sched_switch",
        id: 300,
        fields: &[
            ("prev_comm", Ty::Comm),
            ("prev_pid", PID),
            ("prev_prio", INT),
            ("prev_state", LONG),
            ("next_comm", Ty::Comm),
            ("next_pid", PID),
            ("next_prio", INT),
        ],
        print_fmt: SWITCH_FMT,
        perfetto: perfetto(4, &[1, 2, 3, 4, 5, 6, 7]),
        extras: &[],
        frame: Frame::Event(Row {
            pid: Value("prev_pid"),
            other: Value("next_pid"),
            state: Col::StateChar("prev_state"),
            ..ROW
        }),
    },
    SchedWaking => Format {
        system: "sched",
        name: "sched_waking",
        id: 301,
        fields: WAKEUP_FIELDS,
        print_fmt: WAKEUP_FMT,
        perfetto: wakeup_perfetto(20),
        extras: &["placement"],
        frame: WAKEUP_ROW,
    },
    SchedWakeup => Format {
        system: "sched",
        name: "sched_wakeup",
        id: 302,
        fields: WAKEUP_FIELDS,
        print_fmt: WAKEUP_FMT,
        perfetto: wakeup_perfetto(17),
        extras: &[],
        frame: Frame::Event(Row {
            value: Na,
            ..WAKEUP_ROW_COLUMNS
        }),
    },
    SchedWakeupNew => Format {
        system: "sched",
        name: "sched_wakeup_new",
        id: 303,
        fields: WAKEUP_FIELDS,
        print_fmt: WAKEUP_FMT,
        perfetto: wakeup_perfetto(114),
        extras: &["placement"],
        frame: WAKEUP_ROW,
    },
    SchedMigrateTask => Format {
        system: "sched",
        name: "sched_migrate_task",
        id: 304,
        fields: &[
            ("comm", Ty::Comm),
            ("pid", PID),
            ("prio", INT),
            ("orig_cpu", INT),
            ("dest_cpu", INT),
        ],
        print_fmt: "\"comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d\", REC->comm, REC->pid, REC->prio, REC->orig_cpu, REC->dest_cpu",
        perfetto: perfetto(491, &[1, 2, 3, 4, 5]),
        extras: &[],
        frame: Frame::Event(Row {
            pid: Value("pid"),
            target: Value("dest_cpu"),
            value: Value("orig_cpu"),
            ..ROW
        }),
    },
    SchedProcessFork => Format {
        system: "sched",
        name: "sched_process_fork",
        id: 305,
        fields: &[
            ("parent_comm", Ty::Comm),
            ("parent_pid", PID),
            ("child_comm", Ty::Comm),
            ("child_pid", PID),
        ],
        print_fmt: "\"comm=%s pid=%d child_comm=%s child_pid=%d\", REC->parent_comm, REC->parent_pid, REC->child_comm, REC->child_pid",
        perfetto: perfetto(239, &[1, 2, 3, 4]),
        extras: &[],
        frame: Frame::Event(Row {
            pid: Value("parent_pid"),
            other: Value("child_pid"),
            ..ROW
        }),
    },
    SchedProcessExit => Format {
        system: "sched",
        name: "sched_process_exit",
        id: 306,
        fields: &[("comm", Ty::Comm), ("pid", PID), ("prio", INT)],
        print_fmt: "\"comm=%s pid=%d prio=%d\", REC->comm, REC->pid, REC->prio",
        perfetto: // tgid 3: rt-app's process, whose threads they all are.
        Some(PerfettoEvent {
            id: 238,
            fields: &[1, 2, 4],
            extra: &[(3, 1)],
        }),
        extras: &[],
        frame: task_row(Na),
    },
    TaskRename => Format {
        system: "task",
        name: "task_rename",
        id: 307,
        fields: &[
            ("pid", PID),
            ("oldcomm", Ty::Comm),
            ("newcomm", Ty::Comm),
            ("oom_score_adj", SHORT),
        ],
        print_fmt: "\"pid=%d oldcomm=%s newcomm=%s oom_score_adj=%hd\", REC->pid, REC->oldcomm, REC->newcomm, REC->oom_score_adj",
        perfetto: perfetto(236, &[1, 2, 3, 4]),
        extras: &[],
        frame: task_row(Na),
    },
    CpuIdle => Format {
        system: "power",
        name: "cpu_idle",
        id: 308,
        fields: CPU_FIELDS,
        print_fmt: CPU_FMT,
        perfetto: perfetto(13, &[1, 2]),
        extras: &[],
        frame: cpu_row(Col::Signed("state")),
    },
    CpuFrequency => Format {
        system: "power",
        name: "cpu_frequency",
        id: 309,
        fields: CPU_FIELDS,
        print_fmt: CPU_FMT,
        perfetto: perfetto(11, &[1, 2]),
        extras: &[],
        frame: cpu_row(Value("state")),
    },
    SchedCpuCapacity => Format {
        system: "lisa",
        name: "sched_cpu_capacity",
        id: 310,
        fields: &[
            ("cpu", INT),
            ("capacity", ULONG),
            ("capacity_orig", ULONG),
            ("capacity_curr", ULONG),
        ],
        print_fmt: "\"cpu=%d capacity=%lu capacity_orig=%lu capacity_curr=%lu\", REC->cpu, REC->capacity, REC->capacity_orig, REC->capacity_curr",
        perfetto: None,
        extras: &[],
        frame: cpu_row(Value("capacity")),
    },
    // The `ftrace` system's `print` (`TRACE_PRINT`): what a write to trace_marker records.
    Print => Format {
        system: "ftrace",
        name: "print",
        id: 5,
        fields: &[("ip", ULONG), ("buf", Ty::Buf)],
        print_fmt: "\"%ps: %s\", (void *)REC->ip, REC->buf",
        perfetto: None,
        extras: &[],
        frame: Frame::Marker("buf"),
    },
    SchedDlThrottle => Format {
        system: "schedlab",
        name: "sched_dl_throttle",
        id: 312,
        fields: &[("comm", Ty::Comm), ("pid", PID), ("cpu", INT), ("runtime", S64)],
        print_fmt: "\"comm=%s pid=%d cpu=%d runtime=%lld\", REC->comm, REC->pid, REC->cpu, REC->runtime",
        perfetto: None,
        extras: &[],
        frame: task_row(Value("runtime")),
    },
    SchedDlReplenish => Format {
        system: "schedlab",
        name: "sched_dl_replenish",
        id: 313,
        fields: &[
            ("comm", Ty::Comm),
            ("pid", PID),
            ("cpu", INT),
            ("runtime", S64),
            ("deadline", U64),
        ],
        print_fmt: "\"comm=%s pid=%d cpu=%d runtime=%lld deadline=%llu\", REC->comm, REC->pid, REC->cpu, REC->runtime, REC->deadline",
        perfetto: None,
        extras: &[],
        frame: task_row(Value("runtime")),
    },
    SchedDlMiss => Format {
        system: "schedlab",
        name: "sched_dl_miss",
        id: 314,
        fields: &[("comm", Ty::Comm), ("pid", PID), ("cpu", INT), ("deadline", U64)],
        print_fmt: "\"comm=%s pid=%d cpu=%d deadline=%llu\", REC->comm, REC->pid, REC->cpu, REC->deadline",
        perfetto: None,
        extras: &[],
        frame: task_row(Value("deadline")),
    },
    SchedPiSetprio => Format {
        system: "sched",
        name: "sched_pi_setprio",
        id: 315,
        fields: &[
            ("comm", Ty::Comm),
            ("pid", PID),
            ("oldprio", INT),
            ("newprio", INT),
        ],
        print_fmt: "\"comm=%s pid=%d oldprio=%d newprio=%d\", REC->comm, REC->pid, REC->oldprio, REC->newprio",
        perfetto: perfetto(353, &[1, 4, 3, 2]),
        extras: &[],
        frame: task_row(Value("newprio")),
    },
    SchedOverutilized => Format {
        system: "lisa",
        name: "sched_overutilized",
        id: 316,
        fields: &[("overutilized", BOOL), ("span", Ty::Str)],
        print_fmt: "\"overutilized=%d span=0x%s\", REC->overutilized, __get_str(span)",
        perfetto: None,
        extras: &[],
        frame: cpu_row(Value("overutilized")),
    },
    // The LISA module's PELT and util_est tracepoints: the signals, after the events.
    SchedPeltSe => Format {
        system: "lisa",
        name: "sched_pelt_se",
        id: 317,
        fields: &[
            ("update_time", ULL),
            ("load", ULONG),
            ("runnable", ULONG),
            ("util", ULONG),
            ("cpu", INT),
            ("pid", INT),
            ("path", Ty::Str),
            ("comm", Ty::Str),
        ],
        print_fmt: "\"cpu=%d path=%s comm=%s pid=%d load=%lu runnable=%lu util=%lu update_time=%llu\", REC->cpu, __get_str(path), __get_str(comm), REC->pid, REC->load, REC->runnable, REC->util, REC->update_time",
        perfetto: None,
        extras: &["subject_pid", "path_id"],
        frame: Frame::Signal {
            pid: Value("subject_pid"),
            path: Value("path_id"),
            values: PELT_VALUES,
        },
    },
    SchedPeltCfs => Format {
        system: "lisa",
        name: "sched_pelt_cfs",
        id: 318,
        fields: &[
            ("update_time", ULL),
            ("load", ULONG),
            ("runnable", ULONG),
            ("util", ULONG),
            ("cpu", INT),
            ("path", Ty::Str),
        ],
        print_fmt: "\"cpu=%d path=%s load=%lu runnable=%lu util=%lu update_time=%llu\", REC->cpu, __get_str(path), REC->load, REC->runnable, REC->util, REC->update_time",
        perfetto: None,
        extras: &["path_id"],
        frame: Frame::Signal {
            pid: Na,
            path: Value("path_id"),
            values: PELT_VALUES,
        },
    },
    SchedUtilEstSe => Format {
        system: "lisa",
        name: "sched_util_est_se",
        id: 319,
        fields: &[
            ("util", ULONG),
            ("enqueued", UINT),
            ("ewma", UINT),
            ("cpu", INT),
            ("pid", INT),
            ("path", Ty::Str),
            ("comm", Ty::Str),
        ],
        print_fmt: "\"cpu=%d path=%s comm=%s pid=%d enqueued=%u ewma=%u util=%lu\", REC->cpu, __get_str(path), __get_str(comm), REC->pid, REC->enqueued, REC->ewma, REC->util",
        perfetto: None,
        extras: &[],
        frame: Frame::Signal {
            pid: Value("pid"),
            path: Na,
            values: [Na, Na, Value("util"), Value("enqueued"), Value("ewma"), Na],
        },
    },
    SchedUtilEstCfs => Format {
        system: "lisa",
        name: "sched_util_est_cfs",
        id: 320,
        fields: &[
            ("util", ULONG),
            ("enqueued", UINT),
            ("ewma", UINT),
            ("cpu", INT),
            ("path", Ty::Str),
        ],
        print_fmt: "\"cpu=%d path=%s enqueued=%u ewma=%u util=%lu\", REC->cpu, __get_str(path), REC->enqueued, REC->ewma, REC->util",
        perfetto: None,
        extras: &["path_id"],
        frame: // A cfs_rq's util_est has no ewma (the field is 0).
        Frame::Signal {
            pid: Na,
            path: Value("path_id"),
            values: [Na, Na, Value("util"), Value("enqueued"), Na, Na],
        },
    },
    SchedPeltRt => Format {
        system: "lisa",
        name: "sched_pelt_rt",
        id: 321,
        fields: PELT_RQ_FIELDS,
        print_fmt: PELT_RQ_FMT,
        perfetto: None,
        extras: &[],
        frame: Frame::Signal {
            pid: Na,
            path: Na,
            values: PELT_VALUES,
        },
    },
    SchedPeltDl => Format {
        system: "lisa",
        name: "sched_pelt_dl",
        id: 322,
        fields: PELT_RQ_FIELDS,
        print_fmt: PELT_RQ_FMT,
        perfetto: None,
        extras: &[],
        frame: Frame::Signal {
            pid: Na,
            path: Na,
            values: PELT_VALUES,
        },
    },
}

// What each tracepoint records (`TP_fast_assign`): its values in its event's field order,
// then its extras (`Format::extras`), the one mapping from which trace.dat's records, the
// text trace's fields, Perfetto's messages and the DataFrames' rows are written, and the
// context it fires in.

/// A record's context: the current task's comm and pid, and the CPU that records it.
pub type Context<'a> = (&'a str, u32, usize);

/// Where `tracing_mark_write` is in the kallsyms a trace.dat carries: the `ip` of every
/// `print` (trace-cmd resolves it to the name, as LISA expects).
pub const TRACING_MARK_WRITE: u64 = 0xffff_ffff_8120_0000;

/// The kernel symbol at `addr` (`%ps`): the one a trace names.
pub fn ksym(addr: u64) -> &'static str {
    debug_assert_eq!(addr, TRACING_MARK_WRITE);
    "tracing_mark_write"
}

/// The values of `tp` (its tasks in `tasks`, task groups' paths in `paths`, the root
/// domain's span as `span`), handed to `f` with its event and context (`trace::context`).
#[inline(always)]
pub fn with_values<R>(
    tp: &Tracepoint,
    tasks: &[SchedTask],
    paths: &[String],
    span: &str,
    f: impl FnOnce(TraceEvent, Context, &[Val]) -> R,
) -> R {
    use Val::{I, S};
    let ctx = context(tp, tasks);
    let (ccomm, cpid, cpu) = ctx;
    let f = |ev, vals: &[Val]| f(ev, ctx, vals);
    let ev = tp.event();
    let t = |id: u32| &tasks[id as usize];
    let task = |id: u32| (t(id).kcomm(), t(id).pid as i64, t(id).prio() as i64);
    let c = cpu as i64;
    match tp {
        Tracepoint::Switch {
            prev,
            prev_state,
            next,
            ..
        } => {
            let side = |x: Option<u32>| match x {
                Some(i) => task(i),
                None => (swapper(cpu), 0, 120),
            };
            let ((pc, pp, pprio), (nc, np, nprio)) = (side(*prev), side(*next));
            let state = switch_state_value(*prev, *prev_state);
            f(
                ev,
                &[S(pc), I(pp), I(pprio), I(state), S(nc), I(np), I(nprio)],
            )
        }
        Tracepoint::Waking {
            task: id,
            target,
            how,
            ..
        }
        | Tracepoint::WakeupNew {
            task: id,
            target,
            how,
            ..
        } => {
            let (comm, pid, prio) = task(*id);
            let placement = *how as i64;
            f(
                ev,
                &[S(comm), I(pid), I(prio), I(*target as i64), I(placement)],
            )
        }
        Tracepoint::Wakeup {
            task: id, target, ..
        } => {
            let (comm, pid, prio) = task(*id);
            f(ev, &[S(comm), I(pid), I(prio), I(*target as i64)])
        }
        Tracepoint::Migrate {
            task: id, from, to, ..
        } => {
            let (comm, pid, prio) = task(*id);
            f(
                ev,
                &[S(comm), I(pid), I(prio), I(*from as i64), I(*to as i64)],
            )
        }
        Tracepoint::Fork { child, .. } => f(
            ev,
            &[S(ccomm), I(cpid as i64), S(ccomm), I(t(*child).pid as i64)],
        ),
        Tracepoint::Rename { task: id, .. } => f(
            ev,
            &[I(t(*id).pid as i64), S("rt-app"), S(t(*id).kcomm()), I(0)],
        ),
        Tracepoint::Exit { task: id, .. } => {
            let (comm, pid, prio) = task(*id);
            f(ev, &[S(comm), I(pid), I(prio)])
        }
        Tracepoint::PiSetprio {
            task: id,
            oldprio,
            newprio,
            ..
        } => {
            let (comm, pid, _) = task(*id);
            f(
                ev,
                &[S(comm), I(pid), I(*oldprio as i64), I(*newprio as i64)],
            )
        }
        Tracepoint::CpuIdle { state, .. } => f(ev, &[I(*state as i64), I(c)]),
        Tracepoint::CpuFrequency { khz, .. } => f(ev, &[I(*khz as i64), I(c)]),
        Tracepoint::CpuCapacity {
            capacity,
            orig,
            curr,
            ..
        } => f(
            ev,
            &[I(c), I(*capacity as i64), I(*orig as i64), I(*curr as i64)],
        ),
        Tracepoint::Fair { note, .. } => fair(ev, c, note, tasks, paths, f),
        Tracepoint::Dl { task: id, note, .. } => {
            let (comm, pid, _) = task(*id);
            match *note {
                DlNote::Throttle { runtime } => f(ev, &[S(comm), I(pid), I(c), I(runtime)]),
                DlNote::Replenish { runtime, deadline } => {
                    f(ev, &[S(comm), I(pid), I(c), I(runtime), I(deadline as i64)])
                }
                DlNote::Miss { deadline } => f(ev, &[S(comm), I(pid), I(c), I(deadline as i64)]),
            }
        }
        Tracepoint::Overutilized { overutilized, .. } => f(ev, &[I(*overutilized as i64), S(span)]),
        Tracepoint::Print { text, .. } => f(ev, &[I(TRACING_MARK_WRITE as i64), S(text)]),
    }
}

/// The LISA module's PELT and util_est events (sched_tp's layouts) on CPU `c`.
#[inline(always)]
fn fair<R>(
    ev: TraceEvent,
    c: i64,
    note: &Note,
    tasks: &[SchedTask],
    paths: &[String],
    f: impl FnOnce(TraceEvent, &[Val]) -> R,
) -> R {
    use Val::{I, S};
    match *note {
        Note::PeltSe {
            task,
            path,
            load,
            runnable,
            util,
            update_time,
        } => {
            let (name, comm, pid) = pelt_se_who(task, path, tasks, paths);
            let [t, l, r, u, cpu] = pelt([update_time, load, runnable, util], c);
            // The DataFrames' subject: a task's pid, or a group's path id.
            let (subject, path) = match task {
                NO_TASK => (NA, path as i64),
                _ => (pid, NA),
            };
            f(
                ev,
                &[
                    t,
                    l,
                    r,
                    u,
                    cpu,
                    I(pid),
                    S(name),
                    S(comm),
                    I(subject),
                    I(path),
                ],
            )
        }
        Note::PeltCfs {
            path,
            load,
            runnable,
            util,
            update_time,
        } => {
            let [t, l, r, u, cpu] = pelt([update_time, load, runnable, util], c);
            f(
                ev,
                &[t, l, r, u, cpu, S(&paths[path as usize]), I(path as i64)],
            )
        }
        Note::UtilEstSe {
            task,
            enqueued,
            ewma,
            util,
        } => {
            let p = &tasks[task as usize];
            f(
                ev,
                &[
                    I(util as i64),
                    I(enqueued as i64),
                    I(ewma as i64),
                    I(c),
                    I(p.pid as i64),
                    S("(null)"),
                    S(p.kcomm()),
                ],
            )
        }
        Note::UtilEstCfs { enqueued, util } => f(
            ev,
            &[
                I(util as i64),
                I(enqueued as i64),
                I(0),
                I(c),
                S("/"),
                I(ROOT_TG as i64),
            ],
        ),
        Note::PeltRq {
            load,
            runnable,
            util,
            update_time,
            ..
        } => f(ev, &pelt([update_time, load, runnable, util], c)),
    }
}

/// sched_tp's PELT layouts start alike: update_time, load, runnable, util, then the CPU.
#[inline(always)]
fn pelt<'a>([update_time, load, runnable, util]: [u64; 4], cpu: i64) -> [Val<'a>; 5] {
    let v = |x: u64| Val::I(x as i64);
    [v(update_time), v(load), v(runnable), v(util), Val::I(cpu)]
}

/// The context a tracepoint fires in, as a trace's header shows it: the current task's comm
/// and pid (the idle task's "<idle>", 0; rt-app's main thread "rt-app", 1, for the threads
/// it forks at start), and the CPU whose buffer records it.
#[inline(always)]
fn context<'a>(tp: &Tracepoint, tasks: &'a [SchedTask]) -> (&'a str, u32, usize) {
    let who = |task: Option<u32>| match task {
        Some(t) => (tasks[t as usize].kcomm(), tasks[t as usize].pid),
        None => ("<idle>", 0),
    };
    let ((comm, pid), cpu) = match *tp {
        Tracepoint::Switch { cpu, prev, .. } => (who(prev), cpu),
        Tracepoint::Waking { curr, cpu, .. } => (who(curr), cpu),
        Tracepoint::Wakeup { curr, cpu, .. } | Tracepoint::Migrate { curr, cpu, .. } => {
            (who(curr), cpu)
        }
        Tracepoint::Fork {
            parent: None, cpu, ..
        }
        | Tracepoint::WakeupNew {
            parent: None, cpu, ..
        } => (("rt-app", RTAPP_MAIN_PID), cpu),
        Tracepoint::Fork { parent, cpu, .. } | Tracepoint::WakeupNew { parent, cpu, .. } => {
            (who(parent), cpu)
        }
        Tracepoint::Rename { task, cpu }
        | Tracepoint::Exit { task, cpu }
        | Tracepoint::PiSetprio { task, cpu, .. }
        | Tracepoint::Dl { task, cpu, .. } => (who(Some(task)), cpu),
        Tracepoint::Print {
            task: None, cpu, ..
        } => (("rt-app", RTAPP_MAIN_PID), cpu),
        Tracepoint::Print { task, cpu, .. } => (who(task), cpu),
        Tracepoint::CpuIdle { cpu, .. }
        | Tracepoint::CpuFrequency { cpu, .. }
        | Tracepoint::CpuCapacity { cpu, .. } => (who(None), cpu),
        Tracepoint::Fair { cpu, task, .. } | Tracepoint::Overutilized { cpu, task, .. } => {
            (who(task), cpu)
        }
    };
    (comm, pid, cpu)
}

/// The idle task's comm in `sched_switch`: `swapper/N` (made once for every CPU there can be).
fn swapper(cpu: usize) -> &'static str {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    let names = NAMES.get_or_init(|| (0..NR_CPUS).map(|c| format!("swapper/{c}")).collect());
    &names[cpu]
}

/// `__trace_sched_switch_state`'s value, as trace.dat and Perfetto record `prev_state`: a
/// preempted user task calls `schedule()` running (0, "R"); a sleeper is
/// `TASK_INTERRUPTIBLE` (1); an exiting thread, reaped at once, `EXIT_DEAD` (0x10).
fn switch_state_value(prev: Option<u32>, s: PrevState) -> i64 {
    match (prev, s) {
        (None, _) | (_, PrevState::Runnable) => 0,
        (_, PrevState::Sleeping) => 0x1,
        (_, PrevState::Dead) => 0x10,
    }
}

/// Who a `sched_pelt_se` is about, as the LISA module prints it: a task's path is "(null)"
/// with its comm and pid; a group entity's its cgroup path (of `paths`) with comm "(null)"
/// and pid −1.
#[inline(always)]
fn pelt_se_who<'a>(
    task: u32,
    path: TgId,
    tasks: &'a [SchedTask],
    paths: &'a [String],
) -> (&'a str, &'a str, i64) {
    match task {
        NO_TASK => (paths[path as usize].as_str(), "(null)", -1),
        t => (
            "(null)",
            tasks[t as usize].kcomm(),
            tasks[t as usize].pid as i64,
        ),
    }
}
