//! The scheduler's user API (include/uapi/linux/sched.h): the policies a thread asks for.

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
