//! `userspace` (cpufreq_userspace.c): the frequency written to `scaling_setspeed`
//! (`--set userspace.khz=F`, which must be one of the policy's OPPs).

use super::tunables::{or_default, set_some, Key};
use super::{CpuSample, Governor, Policy, Relation};
use crate::time::Ns;

/// userspace's tunable: the frequency written to `scaling_setspeed` (None: the one found).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UserspaceTunables {
    pub khz: Option<u32>,
}

/// Its `--set userspace.*` key.
pub const KEYS: [Key; 1] = [Key {
    name: "userspace.khz",
    accepts: "an OPP of the policy (default: the frequency it finds)",
    set: |t, v| set_some(&mut t.userspace.khz, v, 1, u32::MAX as u64),
    get: |t| or_default(&t.userspace.khz),
}];

pub struct Userspace {
    /// `scaling_setspeed`: as written, or the frequency found at the start.
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
        *self.khz.get_or_insert(pol.cur)
    }

    /// `cpufreq_userspace_policy_limits`: `scaling_setspeed` within the new limits.
    fn limits(&mut self, pol: &Policy) -> Option<u32> {
        self.khz.map(|setspeed| pol.resolve(setspeed, Relation::L))
    }
}
