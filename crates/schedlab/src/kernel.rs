//! Kernel presets: which behaviour each modelled kernel version has.

use crate::sched::util_est::UtilEstForm;

/// A modelled kernel version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    V6_12,
    V6_1,
}

impl Kernel {
    pub const ALL: [Kernel; 2] = [Kernel::V6_12, Kernel::V6_1];

    pub fn name(self) -> &'static str {
        match self {
            Kernel::V6_12 => "6.12",
            Kernel::V6_1 => "6.1",
        }
    }

    pub fn from_name(name: &str) -> Option<Kernel> {
        Kernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// util_est was simplified to one EWMA in 6.8.
    pub fn util_est(self) -> UtilEstForm {
        match self {
            Kernel::V6_12 => UtilEstForm::Ewma,
            Kernel::V6_1 => UtilEstForm::EnqueuedEwma,
        }
    }
}
