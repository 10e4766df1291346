//! Mirrors kernel/sched: the class interface and the runqueue, PELT and its clock, util_est,
//! weights, uclamp, features, the deadline, rt, fair and idle classes.

pub mod class;
pub mod clock_pelt;
pub mod cpupri;
pub mod deadline;
pub mod fair;
pub mod features;
pub mod flags;
pub mod idle;
pub mod pelt;
pub mod rq;
pub mod rt;
pub mod uclamp;
pub mod util_est;
pub mod weight;
