//! What the scheduler did on a CPU, counted by kind of operation: the work a cost model
//! charges as system time (`sim/overhead.rs`) and the summary reports.

/// A CPU's operation counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpCounts {
    /// Steps of the lazy h_load walk (`update_cfs_rq_h_load`, one per group level).
    pub h_load_steps: u64,
    /// Full walks of the groups (`update_h_load`), and the groups they visited
    /// (`tg_load_down`).
    pub update_h_load: u64,
    pub tg_load_down: u64,
}
