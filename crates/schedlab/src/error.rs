//! Errors for bad user input: where it is, and what is wrong.

use thiserror::Error;

/// Input that schedlab refuses: `location` names the line/row and column or the run
/// option; `message` says what is wrong. Front ends prefix the file name, and spell a run
/// option their own way (the CLI's `--idle-cgroups` is `idle_cgroups` here).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{location}: {message}")]
pub struct InputError {
    pub location: String,
    pub message: String,
    /// `location` is a run option's key (`RunSpec`'s name for it; `a/b` for two), with the
    /// value at fault after a space where it names one.
    pub option: bool,
}

impl InputError {
    pub fn new(location: impl Into<String>, message: impl Into<String>) -> InputError {
        InputError {
            location: location.into(),
            message: message.into(),
            option: false,
        }
    }

    /// Bad input in run option `key`.
    pub fn option(key: impl Into<String>, message: impl Into<String>) -> InputError {
        InputError {
            option: true,
            ..InputError::new(key, message)
        }
    }

    /// Where it is, a run option's key spelled by `spell`.
    pub fn location_as(&self, spell: impl Fn(&str) -> String) -> String {
        if !self.option {
            return self.location.clone();
        }
        let (keys, value) = match self.location.split_once(' ') {
            Some((k, v)) => (k, Some(v)),
            None => (self.location.as_str(), None),
        };
        let keys: Vec<String> = keys.split('/').map(spell).collect();
        match value {
            Some(v) => format!("{} {v}", keys.join("/")),
            None => keys.join("/"),
        }
    }

    /// The same error, located in file `origin`.
    pub fn within(self, origin: &str) -> InputError {
        InputError::new(format!("{origin}: {}", self.location), self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::InputError;

    #[test]
    fn a_front_end_spells_a_run_options_keys_and_keeps_its_value_and_other_locations() {
        let cli = |key: &str| format!("--{}", key.replace('_', "-"));
        let cases = [
            (InputError::option("idle_cgroups", "m"), "--idle-cgroups"),
            (
                InputError::option("capacity/freq_ratio", "m"),
                "--capacity/--freq-ratio",
            ),
            (
                InputError::option("cgroup /a_b:weight=0", "m"),
                "--cgroup /a_b:weight=0",
            ),
            (
                InputError::new("w.json: tasks.a_b", "m"),
                "w.json: tasks.a_b",
            ),
        ];
        for (e, spelt) in cases {
            assert_eq!(e.location_as(cli), spelt);
        }
        let core = InputError::option("idle_cgroups", "m").to_string();
        assert_eq!(core, "idle_cgroups: m");
    }
}
