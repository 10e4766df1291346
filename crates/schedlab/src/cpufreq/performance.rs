//! `performance` (cpufreq_performance.c): the policy's highest frequency, always.

use super::{CpuSample, Governor, Hook, Policy, Relation};
use crate::time::Ns;

pub struct Performance;

impl Governor for Performance {
    fn start(&mut self, pol: &Policy, _now: Ns, _: &dyn Fn(usize) -> CpuSample) -> u32 {
        pol.resolve(pol.max, Relation::H)
    }

    fn update(&mut self, _: &Policy, _: usize, _: Hook, _: Ns, _: &dyn Fn(usize) -> CpuSample) -> Option<u32> {
        None
    }
}
