//! Load balancing of the fair class (fair.c, 6.12's `sched_balance_*`; 6.1's names where
//! they differ): the statistics and decisions of a pass (`stats`).

pub mod stats;

#[cfg(test)]
mod tests;
