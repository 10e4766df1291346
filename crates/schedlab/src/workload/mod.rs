//! Workloads: rt-app's JSON grammar (json.rs), its task/phase/event model and printed
//! structure (`schedlab check`) (rtapp.rs), its compiler (rtapp/compile.rs) into the program
//! format the engine interprets (program.rs).

pub mod cgroups;
pub mod gen;
pub mod json;
pub mod program;
pub mod replay;
pub mod rtapp;

pub use rtapp::*;
