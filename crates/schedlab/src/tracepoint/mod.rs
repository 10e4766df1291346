//! The tracepoint catalogue: every event the scheduler reports, defined once. `Tracepoint`
//! is what fires (the scheduler builds one only while an observer listens); each
//! `TraceEvent` code has its kernel definition here (system, name, fields with their C
//! types, `TP_printk`'s print fmt), from which trace.dat's layouts and format files, the text
//! trace and the DataFrames' event names follow. Layouts are 6.12's (x86_64,
//! `-funsigned-char`); the PELT, util_est, capacity and overutilized events are the LISA
//! module's (sched_tp field order, with `runnable`); schedlab's deadline events have no
//! kernel counterpart.

mod assign;

pub use self::assign::{ksym, with_values, Context, TRACING_MARK_WRITE};

use crate::sched::class::Placement;
use crate::sched::fair::group::TgId;
use crate::sched::rq::RqAvg;
use crate::sched::task::TASK_COMM_LEN;

/// rt-app's main thread's pid: the one task that is not a thread of the workload (it creates
/// them, and the rtapp_main markers are its).
pub const RTAPP_MAIN_PID: u32 = 1;

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

const PID: Ty = Ty::Int("pid_t", 4, true);
const INT: Ty = Ty::Int("int", 4, true);
const U32: Ty = Ty::Int("u32", 4, false);
const UINT: Ty = Ty::Int("unsigned int", 4, false);
const LONG: Ty = Ty::Int("long", 8, true);
const ULONG: Ty = Ty::Int("unsigned long", 8, false);
const ULL: Ty = Ty::Int("unsigned long long", 8, false);
const S64: Ty = Ty::Int("s64", 8, true);
const U64: Ty = Ty::Int("u64", 8, false);
const SHORT: Ty = Ty::Int("short", 2, true);
const BOOL: Ty = Ty::Int("bool", 1, false);

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
}

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
const fn perfetto(id: u32, fields: &'static [u32]) -> Option<PerfettoEvent> {
    Some(PerfettoEvent {
        id,
        fields,
        extra: &[],
    })
}

/// `SchedWakeupFtraceEvent` and kin: comm 1, pid 2, prio 3, success 4 (always 1 since
/// 4.x), target_cpu 5.
const WAKEUP_PERFETTO: [u32; 4] = [1, 2, 3, 5];

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
    },
    SchedWaking => Format {
        system: "sched",
        name: "sched_waking",
        id: 301,
        fields: WAKEUP_FIELDS,
        print_fmt: WAKEUP_FMT,
        perfetto: Some(PerfettoEvent {
            id: 20,
            fields: &WAKEUP_PERFETTO,
            extra: &[(4, 1)],
        }),
    },
    SchedWakeup => Format {
        system: "sched",
        name: "sched_wakeup",
        id: 302,
        fields: WAKEUP_FIELDS,
        print_fmt: WAKEUP_FMT,
        perfetto: Some(PerfettoEvent {
            id: 17,
            fields: &WAKEUP_PERFETTO,
            extra: &[(4, 1)],
        }),
    },
    SchedWakeupNew => Format {
        system: "sched",
        name: "sched_wakeup_new",
        id: 303,
        fields: WAKEUP_FIELDS,
        print_fmt: WAKEUP_FMT,
        perfetto: Some(PerfettoEvent {
            id: 114,
            fields: &WAKEUP_PERFETTO,
            extra: &[(4, 1)],
        }),
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
    },
    CpuIdle => Format {
        system: "power",
        name: "cpu_idle",
        id: 308,
        fields: CPU_FIELDS,
        print_fmt: CPU_FMT,
        perfetto: perfetto(13, &[1, 2]),
    },
    CpuFrequency => Format {
        system: "power",
        name: "cpu_frequency",
        id: 309,
        fields: CPU_FIELDS,
        print_fmt: CPU_FMT,
        perfetto: perfetto(11, &[1, 2]),
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
    },
    // The `ftrace` system's `print` (`TRACE_PRINT`): what a write to trace_marker records.
    Print => Format {
        system: "ftrace",
        name: "print",
        id: 5,
        fields: &[("ip", ULONG), ("buf", Ty::Buf)],
        print_fmt: "\"%ps: %s\", (void *)REC->ip, REC->buf",
        perfetto: None,
    },
    SchedDlThrottle => Format {
        system: "schedlab",
        name: "sched_dl_throttle",
        id: 312,
        fields: &[("comm", Ty::Comm), ("pid", PID), ("cpu", INT), ("runtime", S64)],
        print_fmt: "\"comm=%s pid=%d cpu=%d runtime=%lld\", REC->comm, REC->pid, REC->cpu, REC->runtime",
        perfetto: None,
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
    },
    SchedDlMiss => Format {
        system: "schedlab",
        name: "sched_dl_miss",
        id: 314,
        fields: &[("comm", Ty::Comm), ("pid", PID), ("cpu", INT), ("deadline", U64)],
        print_fmt: "\"comm=%s pid=%d cpu=%d deadline=%llu\", REC->comm, REC->pid, REC->cpu, REC->deadline",
        perfetto: None,
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
    },
    SchedOverutilized => Format {
        system: "lisa",
        name: "sched_overutilized",
        id: 316,
        fields: &[("overutilized", BOOL), ("span", Ty::Str)],
        print_fmt: "\"overutilized=%d span=0x%s\", REC->overutilized, __get_str(span)",
        perfetto: None,
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
    },
    SchedPeltRt => Format {
        system: "lisa",
        name: "sched_pelt_rt",
        id: 321,
        fields: PELT_RQ_FIELDS,
        print_fmt: PELT_RQ_FMT,
        perfetto: None,
    },
    SchedPeltDl => Format {
        system: "lisa",
        name: "sched_pelt_dl",
        id: 322,
        fields: PELT_RQ_FIELDS,
        print_fmt: PELT_RQ_FMT,
        perfetto: None,
    },
}

/// A field's value.
#[derive(Debug, Clone, Copy)]
pub enum Val<'a> {
    I(i64),
    S(&'a str),
}
