//! Kernel presets: the modelled kernel versions, and a default's history across them.

/// A modelled kernel version, oldest first (the order is the release order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kernel {
    V6_1,
    V6_6,
    V6_12,
    V6_18,
    V7_3,
}

impl Kernel {
    pub const ALL: [Kernel; 5] = [
        Kernel::V6_1,
        Kernel::V6_6,
        Kernel::V6_12,
        Kernel::V6_18,
        Kernel::V7_3,
    ];

    /// The preset a run takes when none is asked for.
    pub const DEFAULT: Kernel = Kernel::V6_12;

    pub fn name(self) -> &'static str {
        match self {
            Kernel::V6_1 => "6.1",
            Kernel::V6_6 => "6.6",
            Kernel::V6_12 => "6.12",
            Kernel::V6_18 => "6.18",
            Kernel::V7_3 => "7.3",
        }
    }

    pub fn from_name(name: &str) -> Option<Kernel> {
        Kernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The known names, for a refusal: "6.1, 6.6, 6.12, 6.18, 7.3".
    pub fn names() -> String {
        Kernel::ALL.map(Kernel::name).join(", ")
    }
}

/// One upstream change of a default: the first modelled kernel with it, the new value, and the
/// commit (abbreviated id and subject) that made it.
#[derive(Debug)]
pub struct Change<T: 'static> {
    pub since: Kernel,
    pub value: T,
    pub commit: &'static str,
}

/// A default through the modelled kernels: its value in the oldest, then each change.
#[derive(Debug)]
pub struct History<T: 'static> {
    pub base: T,
    pub changes: &'static [Change<T>],
}

impl<T: Copy> History<T> {
    /// The value under `kernel`: the last change it has, else the base.
    pub fn at(&self, kernel: Kernel) -> T {
        (self.changes.iter().rev())
            .find(|c| c.since <= kernel)
            .map_or(self.base, |c| c.value)
    }

    /// The changes a kernel newer than `a` up to `b` has (or, going back, the ones undone).
    pub fn between(&self, a: Kernel, b: Kernel) -> impl Iterator<Item = &'static Change<T>> {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        self.changes
            .iter()
            .filter(move |c| lo < c.since && c.since <= hi)
    }
}

/// `history![BASE; KERNEL => VALUE, "commit"; ...]`: a [`History`] in a `const`.
#[macro_export]
macro_rules! history {
    ($base:expr $(; $since:ident => $value:expr, $commit:expr)* $(;)?) => {
        $crate::kernel::History {
            base: $base,
            changes: &[$($crate::kernel::Change {
                since: $crate::kernel::Kernel::$since,
                value: $value,
                commit: $commit,
            }),*],
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_holds_from_its_change_on() {
        let h: History<u32> = history![1; V6_6 => 2, "a"; V7_3 => 3, "b"];
        let at: Vec<u32> = Kernel::ALL.iter().map(|&k| h.at(k)).collect();
        assert_eq!(at, vec![1, 2, 2, 2, 3]);
        let between = |a, b| h.between(a, b).map(|c| c.commit).collect::<Vec<_>>();
        assert_eq!(between(Kernel::V6_1, Kernel::V6_12), vec!["a"]);
        assert_eq!(between(Kernel::V6_6, Kernel::V7_3), vec!["b"]);
        assert_eq!(between(Kernel::V7_3, Kernel::V6_1), vec!["a", "b"]);
        assert!(between(Kernel::V6_12, Kernel::V6_18).is_empty());
    }
}
