//! Mirrors kernel/sched: PELT and its clock, util_est, weights, features, the fair class.

pub mod clock_pelt;
pub mod fair;
pub mod features;
pub mod pelt;
pub mod util_est;
pub mod weight;
