//! A kernel trace as a workload (`schedlab replay`): reading the trace (`dat/`: trace.dat as
//! `trace-cmd record` writes it), so far.

pub mod dat;
