//! schedlab: a deterministic, Linux-faithful simulator of the kernel's CPU scheduler.
//!
//! `sched` mirrors kernel/sched (PELT, util_est, ...); `solo` drives one task alone on one
//! CPU at the kernel's update points; `time` holds the units.

#[macro_use]
pub mod columns;
pub mod cpufreq;
pub mod energy;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod kernel;
pub mod limits;
pub mod output;
pub mod platform;
pub mod run;
pub mod sched;
pub mod sim;
pub mod solo;
pub mod time;
pub mod trace;
pub mod tracepoint;
pub mod workload;

pub use error::InputError;
