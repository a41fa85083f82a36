//! Progress bars on stderr, only when stderr is a terminal (never in pipes or CI logs).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// A progress bar counting items.
pub(crate) fn progress(len: u64, what: &str) -> ProgressBar {
    progress_with(len, what, "{pos}/{len} {per_sec}")
}

/// A progress bar counting bytes.
pub(crate) fn progress_bytes(len: u64, what: &str) -> ProgressBar {
    progress_with(len, what, "{bytes}/{total_bytes} {bytes_per_sec}")
}

fn progress_with(len: u64, what: &str, counts: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() || super::term::quiet() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(&format!("{{msg:>22}} [{{bar:40}}] {counts} eta {{eta}}"))
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}
