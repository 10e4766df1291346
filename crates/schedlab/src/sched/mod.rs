//! The scheduler's mechanisms, named and split as in kernel/sched.

pub mod clock_pelt;
pub mod pelt;
pub mod util_est;
