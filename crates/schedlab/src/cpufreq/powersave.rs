//! `powersave` (cpufreq_powersave.c): the policy's lowest frequency, always.

use super::{CpuSample, Governor, Policy, Relation};
use crate::time::Ns;

pub struct Powersave;

impl Governor for Powersave {
    fn start(&mut self, pol: &Policy, _now: Ns, _: &dyn Fn(usize) -> CpuSample) -> u32 {
        pol.resolve(pol.min, Relation::L)
    }
}
