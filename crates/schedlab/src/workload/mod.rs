//! rt-app workloads: the JSON grammar (json.rs), the task/phase/event model (rtapp.rs), and
//! its printed structure (`schedlab check`).

pub mod json;
mod rtapp;

pub use rtapp::*;
