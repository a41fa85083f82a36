//! Progress bars on stderr, only when stderr is a terminal (never in pipes or CI logs).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// A progress bar counting items.
pub(crate) fn progress(len: u64, what: &str) -> ProgressBar {
    progress_with(len, what, "{human_pos}/{human_len} {rate}")
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
            // indicatif's {per_sec} prints "19,687.0896/s": whole items per second read better.
            .with_key("rate", |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{}/s", crate::util::text::fmt_count(s.per_sec().round() as u64));
            })
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}
