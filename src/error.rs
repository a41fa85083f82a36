//! Exit codes, the same for every subcommand (documented in README):
//! 0 success, 1 a gate failed (`--fail-under`), 2 usage / input / connection
//! error, 3 internal error (a bug: please report it).

use std::fmt;

pub const EXIT_OK: i32 = 0;
pub const EXIT_GATE_FAILED: i32 = 1;
pub const EXIT_USER_ERROR: i32 = 2;
pub const EXIT_INTERNAL: i32 = 3;

/// An error caused by what the user gave us (arguments, files, the deployment).
#[derive(Debug)]
pub struct UserError(pub String);

impl fmt::Display for UserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UserError {}

pub fn input_error(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UserError(msg.into()))
}

/// The exit code for an error: user errors anywhere in the chain are 2, anything else 3.
pub fn exit_code_for(e: &anyhow::Error) -> i32 {
    if e.chain().any(|c| c.downcast_ref::<UserError>().is_some()) {
        EXIT_USER_ERROR
    } else {
        EXIT_INTERNAL
    }
}

/// One line: the error and its causes, joined, with no line breaks.
pub fn one_line(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in e.chain() {
        let s = c.to_string().replace(['\n', '\r'], " ");
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
    }
    parts.join(": ")
}
