//! Kernel presets: which behaviour each modelled kernel version has.

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
}
