//! Errors for bad user input: where it is, and what is wrong.

use thiserror::Error;

/// Input that schedlab refuses: `location` names the line/row and column or the
/// parameter; `message` says what is wrong. Front ends prefix the file name.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{location}: {message}")]
pub struct InputError {
    pub location: String,
    pub message: String,
}

impl InputError {
    pub fn new(location: impl Into<String>, message: impl Into<String>) -> InputError {
        InputError {
            location: location.into(),
            message: message.into(),
        }
    }

    /// The same error, located in file `origin`.
    pub fn within(self, origin: &str) -> InputError {
        InputError::new(format!("{origin}: {}", self.location), self.message)
    }
}
