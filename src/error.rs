//! Errors and exit codes, the same for every subcommand (README "Exit codes"):
//! 0 success, 1 a gate failed, 2 usage / input / connection error, 3 internal
//! error (a bug: please report it).
//!
//! Errors travel as `anyhow::Error`; what the user did wrong carries a typed
//! `Error` with its `ErrorKind`, and `exit_code` decides the code once, at the
//! end, from the whole chain: any I/O error (a file that cannot be read, a
//! directory, a full device) is the user's to fix, and a closed stdout (broken
//! pipe) is success, as for every well-behaved command-line tool.

use std::fmt;
use std::process::ExitCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    /// Arguments or flags that do not fit together.
    Usage,
    /// A file, a policy, a document or a deployment's data we cannot use.
    Input,
    /// A deployment we cannot reach or authenticate to.
    Connection,
}

/// An error caused by what the user gave us; its message is one line.
#[derive(Debug)]
pub(crate) struct Error {
    pub(crate) kind: ErrorKind,
    message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

fn error(kind: ErrorKind, msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Error { kind, message: msg.into() })
}

/// Input the user gave that we cannot use (exit 2).
pub(crate) fn input_error(msg: impl Into<String>) -> anyhow::Error {
    error(ErrorKind::Input, msg)
}

/// Arguments that do not fit together (exit 2).
pub(crate) fn usage_error(msg: impl Into<String>) -> anyhow::Error {
    error(ErrorKind::Usage, msg)
}

/// A deployment that cannot be reached or used (exit 2).
pub(crate) fn connection_error(msg: impl Into<String>) -> anyhow::Error {
    error(ErrorKind::Connection, msg)
}

/// How a command that ran to the end went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    /// `check` found a violation, or `analyze --fail-under` was not met.
    GateFailed,
    /// Ended early by SIGINT or SIGTERM, cleanly (`sample`: settings restored, file written).
    Interrupted,
}

/// The process exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Success = 0,
    GateFailed = 1,
    UserError = 2,
    Internal = 3,
    /// 128 + SIGINT, as shells report a process ended by Ctrl-C.
    Interrupted = 130,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e as u8)
    }
}

impl From<Outcome> for Exit {
    fn from(o: Outcome) -> Exit {
        match o {
            Outcome::Success => Exit::Success,
            Outcome::GateFailed => Exit::GateFailed,
            Outcome::Interrupted => Exit::Interrupted,
        }
    }
}

/// The kind of the first typed error in the chain.
pub(crate) fn kind_of(e: &anyhow::Error) -> Option<ErrorKind> {
    e.chain().find_map(|c| c.downcast_ref::<Error>()).map(|x| x.kind)
}

/// Is this error a closed stdout (`shardkey ... | head`)?
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

/// The exit code for an error.
pub fn exit_code(e: &anyhow::Error) -> Exit {
    if is_broken_pipe(e) {
        return Exit::Success;
    }
    let user = e.chain().any(|c| c.downcast_ref::<Error>().is_some() || c.downcast_ref::<std::io::Error>().is_some());
    if user {
        Exit::UserError
    } else {
        Exit::Internal
    }
}

/// One line: the error and its causes, joined, with no line breaks and no
/// control characters (input may hold terminal escapes).
pub fn one_line(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in e.chain() {
        let s = printable(&c.to_string());
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
    }
    parts.join(": ")
}

/// Text safe for a terminal, on one line.
pub fn printable(s: &str) -> String {
    crate::util::text::printable(s, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_by_kind() {
        assert_eq!(exit_code(&input_error("x")), Exit::UserError);
        assert_eq!(exit_code(&usage_error("x").context("while parsing")), Exit::UserError);
        assert_eq!(exit_code(&connection_error("x")), Exit::UserError);
        assert_eq!(exit_code(&anyhow::anyhow!("a bug")), Exit::Internal);
        let dir = std::io::Error::other("Is a directory");
        assert_eq!(exit_code(&anyhow::Error::new(dir).context("reading fixtures")), Exit::UserError);
        let pipe = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert_eq!(exit_code(&anyhow::Error::new(pipe)), Exit::Success);
    }

    #[test]
    fn one_line_escapes_control_characters() {
        let e = input_error("field \u{1b}[31mred\nnext");
        assert_eq!(one_line(&e), "field \\u{1b}[31mred next");
    }
}
