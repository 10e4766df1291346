//! `performance` (cpufreq_performance.c): the policy's highest frequency, always.

use super::{CpuSample, Governor, Policy, Relation};
use crate::time::Ns;

pub struct Performance;

impl Governor for Performance {
    fn start(&mut self, pol: &Policy, _now: Ns, _: &dyn Fn(usize) -> CpuSample) -> u32 {
        pol.resolve(pol.max, Relation::H)
    }

    /// `cpufreq_gov_performance_limits`: the highest frequency the new limits allow.
    fn limits(&mut self, pol: &Policy) -> Option<u32> {
        Some(pol.resolve(pol.max, Relation::H))
    }
}
