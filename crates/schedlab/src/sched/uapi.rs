//! The scheduler's user API (include/uapi/linux/sched.h): the policies a thread asks for.

use super::fair::group::TgId;

/// What a cgroup's cpu files accept: cpu.shares' range (v1), and the nice levels' weights
/// that cpu.weight.nice maps to.
pub use super::fair::group::{MAX_SHARES, MIN_SHARES};
pub use super::weight::SCHED_PRIO_TO_WEIGHT;

/// `SCHED_*`: a thread's scheduling policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Other,
    Batch,
    Idle,
    Fifo,
    Rr,
    Deadline,
}

impl Policy {
    /// The policies by their UAPI names.
    const NAMES: [(&'static str, Policy); 6] = [
        ("SCHED_OTHER", Policy::Other),
        ("SCHED_BATCH", Policy::Batch),
        ("SCHED_IDLE", Policy::Idle),
        ("SCHED_FIFO", Policy::Fifo),
        ("SCHED_RR", Policy::Rr),
        ("SCHED_DEADLINE", Policy::Deadline),
    ];

    /// The policy named `name` (SCHED_OTHER, ...).
    pub fn from_name(name: &str) -> Option<Policy> {
        Policy::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, p)| *p)
    }

    pub fn name(self) -> &'static str {
        Policy::NAMES
            .iter()
            .find(|(_, p)| *p == self)
            .map_or("?", |(n, _)| n)
    }

    pub fn is_fair(self) -> bool {
        matches!(self, Policy::Other | Policy::Batch | Policy::Idle)
    }
}

/// A SCHED_DEADLINE reservation (ns), as `sched_attr` gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DlAttr {
    pub runtime: u64,
    pub deadline: u64,
    pub period: u64,
    /// SCHED_FLAG_RECLAIM.
    pub reclaim: bool,
}

/// `struct sched_attr`: what a thread asks of the scheduler, already checked as
/// `sched_setattr` checks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedAttr {
    pub policy: Policy,
    /// Fair policies' nice value.
    pub nice: i32,
    /// `sched_priority` of FIFO and RR (1..99).
    pub rt_priority: u32,
    pub dl: Option<DlAttr>,
    /// A fair task's custom slice (ns; `sched_runtime` of a fair task).
    pub slice: Option<u64>,
    /// util_min and util_max (None: the default).
    pub util_min: Option<u32>,
    pub util_max: Option<u32>,
    /// The task group it starts in (its cgroup; not a `sched_attr` field).
    pub group: TgId,
}

impl SchedAttr {
    /// `policy` with every other field at its default (nice 0, no clamps), in the root group.
    pub fn of(policy: Policy) -> SchedAttr {
        SchedAttr {
            policy,
            nice: 0,
            rt_priority: 0,
            dl: None,
            slice: None,
            util_min: None,
            util_max: None,
            group: 0,
        }
    }
}
