//! `userspace` (cpufreq_userspace.c): the frequency written to `scaling_setspeed`
//! (`--set userspace.khz=F`, which must be one of the policy's OPPs).

use super::{CpuSample, Governor, Policy, Relation};
use crate::time::Ns;

pub struct Userspace {
    khz: Option<u32>,
}

impl Userspace {
    pub fn new(khz: Option<u32>, pol: &Policy) -> Result<Userspace, String> {
        match khz {
            Some(k) if !pol.freqs.contains(&k) => Err(format!(
                "userspace.khz={k} is not an OPP of this policy ({})",
                pol.freqs
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            _ => Ok(Userspace { khz }),
        }
    }
}

impl Governor for Userspace {
    fn start(&mut self, pol: &Policy, _now: Ns, _: &dyn Fn(usize) -> CpuSample) -> u32 {
        pol.resolve(self.khz.unwrap_or(pol.cur), Relation::L)
    }
}
