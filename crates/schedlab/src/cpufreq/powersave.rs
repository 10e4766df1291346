//! `powersave` (cpufreq_powersave.c): the policy's lowest frequency, always.

use super::{CpuSample, Governor, Hook, Policy, Relation};
use crate::time::Ns;

pub struct Powersave;

impl Governor for Powersave {
    fn start(&mut self, pol: &Policy, _now: Ns, _: &dyn Fn(usize) -> CpuSample) -> u32 {
        pol.resolve(pol.min, Relation::L)
    }

    fn update(&mut self, _: &Policy, _: usize, _: Hook, _: Ns, _: &dyn Fn(usize) -> CpuSample) -> Option<u32> {
        None
    }
}
