//! The messages of Perfetto's trace format that schedlab writes: a subset of
//! `protos/perfetto/trace/perfetto_trace.proto` (Apache-2.0), each field with the proto's
//! number and type. A proto `oneof` of `TracePacket` is written as its one field set.

use prost::{Message, Oneof};

/// `TracePacket`.
#[derive(Clone, PartialEq, Message)]
pub struct TracePacket {
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    #[prost(message, optional, tag = "1")]
    pub ftrace_events: Option<FtraceEventBundle>,
    #[prost(message, optional, tag = "2")]
    pub process_tree: Option<ProcessTree>,
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
}

/// `TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED`.
pub const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;

/// `FtraceEventBundle`: one CPU's events.
#[derive(Clone, PartialEq, Message)]
pub struct FtraceEventBundle {
    #[prost(uint32, optional, tag = "1")]
    pub cpu: Option<u32>,
    #[prost(message, repeated, tag = "2")]
    pub event: Vec<FtraceEvent>,
}

/// `FtraceEvent`: the time, the pid of the context, and the event.
#[derive(Clone, PartialEq, Message)]
pub struct FtraceEvent {
    #[prost(uint64, optional, tag = "1")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "2")]
    pub pid: Option<u32>,
    #[prost(
        oneof = "Event",
        tags = "4, 11, 13, 17, 20, 114, 236, 238, 239, 353, 491"
    )]
    pub event: Option<Event>,
}

#[derive(Clone, PartialEq, Oneof)]
pub enum Event {
    #[prost(message, tag = "4")]
    SchedSwitch(SchedSwitch),
    #[prost(message, tag = "11")]
    CpuFrequency(CpuState),
    #[prost(message, tag = "13")]
    CpuIdle(CpuState),
    #[prost(message, tag = "17")]
    SchedWakeup(SchedWakeup),
    #[prost(message, tag = "20")]
    SchedWaking(SchedWakeup),
    #[prost(message, tag = "114")]
    SchedWakeupNew(SchedWakeup),
    #[prost(message, tag = "236")]
    TaskRename(TaskRename),
    #[prost(message, tag = "238")]
    SchedProcessExit(SchedProcessExit),
    #[prost(message, tag = "239")]
    SchedProcessFork(SchedProcessFork),
    #[prost(message, tag = "353")]
    SchedPiSetprio(SchedPiSetprio),
    #[prost(message, tag = "491")]
    SchedMigrateTask(SchedMigrateTask),
}

/// `SchedSwitchFtraceEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct SchedSwitch {
    #[prost(string, optional, tag = "1")]
    pub prev_comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub prev_pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prev_prio: Option<i32>,
    #[prost(int64, optional, tag = "4")]
    pub prev_state: Option<i64>,
    #[prost(string, optional, tag = "5")]
    pub next_comm: Option<String>,
    #[prost(int32, optional, tag = "6")]
    pub next_pid: Option<i32>,
    #[prost(int32, optional, tag = "7")]
    pub next_prio: Option<i32>,
}

/// `SchedWakeupFtraceEvent`, `SchedWakingFtraceEvent`, `SchedWakeupNewFtraceEvent` (one
/// layout).
#[derive(Clone, PartialEq, Message)]
pub struct SchedWakeup {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub success: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    pub target_cpu: Option<i32>,
}

/// `SchedMigrateTaskFtraceEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct SchedMigrateTask {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub orig_cpu: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    pub dest_cpu: Option<i32>,
}

/// `SchedProcessForkFtraceEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct SchedProcessFork {
    #[prost(string, optional, tag = "1")]
    pub parent_comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub parent_pid: Option<i32>,
    #[prost(string, optional, tag = "3")]
    pub child_comm: Option<String>,
    #[prost(int32, optional, tag = "4")]
    pub child_pid: Option<i32>,
}

/// `SchedProcessExitFtraceEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct SchedProcessExit {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub tgid: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub prio: Option<i32>,
}

/// `CpuFrequencyFtraceEvent`, `CpuIdleFtraceEvent` (one layout).
#[derive(Clone, PartialEq, Message)]
pub struct CpuState {
    #[prost(uint32, optional, tag = "1")]
    pub state: Option<u32>,
    #[prost(uint32, optional, tag = "2")]
    pub cpu_id: Option<u32>,
}

/// `SchedPiSetprioFtraceEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct SchedPiSetprio {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub newprio: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub oldprio: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub pid: Option<i32>,
}

/// `TaskRenameFtraceEvent`.
#[derive(Clone, PartialEq, Message)]
pub struct TaskRename {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub oldcomm: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub newcomm: Option<String>,
    #[prost(int32, optional, tag = "4")]
    pub oom_score_adj: Option<i32>,
}

/// `ProcessTree`.
#[derive(Clone, PartialEq, Message)]
pub struct ProcessTree {
    #[prost(message, repeated, tag = "1")]
    pub processes: Vec<Process>,
    #[prost(message, repeated, tag = "2")]
    pub threads: Vec<Thread>,
}

/// `ProcessTree.Process`.
#[derive(Clone, PartialEq, Message)]
pub struct Process {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub ppid: Option<i32>,
    #[prost(string, repeated, tag = "3")]
    pub cmdline: Vec<String>,
}

/// `ProcessTree.Thread`.
#[derive(Clone, PartialEq, Message)]
pub struct Thread {
    #[prost(int32, optional, tag = "1")]
    pub tid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(int32, optional, tag = "3")]
    pub tgid: Option<i32>,
}

/// `TrackDescriptor`: a counter track (with `counter`), or a thread's or process's track.
#[derive(Clone, PartialEq, Message)]
pub struct TrackDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    #[prost(message, optional, tag = "4")]
    pub thread: Option<ThreadDescriptor>,
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
}

/// `ProcessDescriptor`.
#[derive(Clone, PartialEq, Message)]
pub struct ProcessDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(string, optional, tag = "6")]
    pub process_name: Option<String>,
}

/// `ThreadDescriptor`.
#[derive(Clone, PartialEq, Message)]
pub struct ThreadDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int64, optional, tag = "2")]
    pub tid: Option<i64>,
    #[prost(string, optional, tag = "5")]
    pub thread_name: Option<String>,
}

/// `CounterDescriptor` (no field set: a plain counter).
#[derive(Clone, PartialEq, Message)]
pub struct CounterDescriptor {}

/// `TrackEvent`: a slice's begin or end, an instant, or a counter's value.
#[derive(Clone, PartialEq, Message)]
pub struct TrackEvent {
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    #[prost(string, optional, tag = "23")]
    pub name: Option<String>,
    #[prost(int64, optional, tag = "30")]
    pub counter_value: Option<i64>,
}

/// `TrackEvent.Type`.
pub const TYPE_SLICE_BEGIN: i32 = 1;
pub const TYPE_SLICE_END: i32 = 2;
pub const TYPE_INSTANT: i32 = 3;
pub const TYPE_COUNTER: i32 = 4;
