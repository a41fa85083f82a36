//! What the user asked of the terminal: colour (`--color`, `NO_COLOR`), `--quiet` and
//! `--verbose`. Set once from the command line, read by the writers and the progress bars.

use std::sync::atomic::{AtomicU8, Ordering};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ColorMode {
    /// Colour when stdout is a terminal and `NO_COLOR` is not set.
    Auto,
    Always,
    Never,
}

static COLOR: AtomicU8 = AtomicU8::new(0);
/// 0 normal, 1 quiet, 2+ verbose levels (2 = -v).
static LEVEL: AtomicU8 = AtomicU8::new(1);

pub(crate) fn set(color: ColorMode, quiet: bool, verbose: u8) {
    COLOR.store(color as u8, Ordering::Relaxed);
    LEVEL.store(if quiet { 0 } else { 1 + verbose.min(3) }, Ordering::Relaxed);
}

pub(crate) fn color_mode() -> ColorMode {
    match COLOR.load(Ordering::Relaxed) {
        1 => ColorMode::Always,
        2 => ColorMode::Never,
        _ => ColorMode::Auto,
    }
}

/// Whether writers may add colour (the table still leaves it out when stdout is not a terminal in auto mode).
pub(crate) fn color_allowed() -> bool {
    match color_mode() {
        ColorMode::Always => true,
        ColorMode::Never => false,
        ColorMode::Auto => std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

pub(crate) fn quiet() -> bool {
    LEVEL.load(Ordering::Relaxed) == 0
}

pub(crate) fn verbose() -> bool {
    LEVEL.load(Ordering::Relaxed) >= 2
}

/// A line on stderr with `-v` (what was read, from where, how long it took).
pub(crate) fn detail(msg: impl AsRef<str>) {
    if verbose() {
        eprintln!("shardkey: {}", msg.as_ref());
    }
}

/// An informational line on stderr, left out with `-q`.
pub(crate) fn note(msg: impl AsRef<str>) {
    if !quiet() {
        eprintln!("shardkey: {}", msg.as_ref());
    }
}
