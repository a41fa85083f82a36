//! `shardkey sample`: uniform query sampling on a live deployment for a while, the
//! one use case that changes server settings, and only with `--change-server-settings`.
//! The previous settings are restored at the end, on Ctrl-C and on error; the samples
//! are written to a file that `analyze --queries FILE` reads.

use super::request::SampleRequest;
use crate::error::{input_error, usage_error, Outcome};
use crate::sources::live::query_sampling::ProfilerSettings;
use crate::sources::live::{LiveOptions, LiveSession};
use anyhow::Result;
use std::io::Write;
use std::time::{Duration, Instant};

/// What `sample` changes, for the refusal without the flag and for README.
pub(crate) const CHANGES: &str = "on MongoDB 4.0-6.x it sets the database's profiler to level 1 with slowms 0 and sampleRate RATE \
(slowms and sampleRate apply to the whole mongod: that share of all its operations is also written to its log); \
on 7.0+ it runs configureQueryAnalyzer (mode full, samplesPerSecond N) on the collection; \
the previous settings are restored at the end, on Ctrl-C and on error";

/// SIGINT (Ctrl-C) and SIGTERM listeners, installed before any setting changes so that
/// neither can end the process between the change and its restore.
struct Interrupts {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
}

impl Interrupts {
    fn install() -> Result<Interrupts> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Interrupts { int: signal(SignalKind::interrupt())?, term: signal(SignalKind::terminate())? })
    }

    /// Wait `d`, or until a signal; true when interrupted.
    async fn wait(&mut self, d: Duration) -> bool {
        tokio::select! {
            _ = tokio::time::sleep(d) => false,
            _ = self.int.recv() => true,
            _ = self.term.recv() => true,
        }
    }
}

/// The profiler after a sampling window, as read: what decides whether it kept the window.
#[derive(Debug, Clone, PartialEq)]
struct AfterWindow {
    start_millis: i64,
    /// Its oldest entry, any namespace.
    oldest_millis: Option<i64>,
    full: Option<bool>,
    max_bytes: Option<u64>,
    /// Why its size could not be read.
    size_unknown: Option<String>,
    /// The window's entries on the namespace, and their mean BSON size.
    entries: u64,
    entry_bytes: Option<u64>,
}

impl AfterWindow {
    /// A warning when the capped profiler dropped entries of the window, and the profiler's
    /// capacity at the entry size measured here. A capped collection drops its oldest
    /// entries only once at its maximum: full, with its oldest entry later than the window's
    /// start, it dropped some of the window (a profiler that was empty before the window
    /// also starts after it, and lost nothing).
    fn words(&self) -> Vec<String> {
        let mut out = Vec::new();
        let late = self.oldest_millis.filter(|&o| o > self.start_millis).map(|o| (o - self.start_millis) as f64 / 1000.0);
        match (late, self.full) {
            (Some(s), Some(true)) => out.push(format!(
                "warning: the profiler wrapped during the window: it is at its maximum and its oldest entry is {s:.0} s after the window began, so the operations before that are lost and the file covers the rest of the window only"
            )),
            (Some(s), None) => out.push(format!(
                "warning: the profiler may have wrapped during the window: its oldest entry is {s:.0} s after the window began, and its size could not be read"
            )),
            (None, Some(true)) => out.push(
                "warning: system.profile is at its maximum: it kept this window, but is dropping its oldest entries, and a longer or busier window would lose some of its own".to_string(),
            ),
            _ => {}
        }
        if let (Some(avg), Some(max)) = (self.entry_bytes.filter(|&b| b > 0), self.max_bytes) {
            out.push(format!(
                "{} entries of {avg} bytes on average were written: system.profile ({}) holds about {} of them, so keep --rate × operations/s × duration under that, or enlarge it",
                self.entries,
                crate::util::text::bytes(max),
                crate::util::text::fmt_count(max / avg)
            ));
        }
        if let Some(why) = &self.size_unknown {
            out.push(format!("whether system.profile dropped entries of the window by its size: unknown ({why})"));
        }
        out
    }
}

pub(super) fn run(r: &SampleRequest, out: &mut dyn Write) -> Result<Outcome> {
    if !r.change_server_settings {
        return Err(usage_error(format!(
            "shardkey sample changes server settings and needs --change-server-settings to say so: {CHANGES}"
        )));
    }
    let lo = LiveOptions {
        uri: r.uri.clone(),
        namespace: r.namespace.clone(),
        server_selection_timeout: r.server_selection_timeout,
        max_time: r.max_time,
    };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let mut signals = rt.block_on(async { Interrupts::install() })?;
    let session = rt.block_on(LiveSession::open(&lo))?;
    let (major, minor) = rt.block_on(session.version())?;
    let started = Instant::now();
    let start_millis = bson::DateTime::now().timestamp_millis();
    let mut lines: Vec<String> = Vec::new();
    let (interrupted, entries, restored) = if major >= 7 {
        let previous = rt.block_on(session.query_analyzer())?;
        rt.block_on(session.set_query_analyzer("full", Some(r.samples_per_second)))?;
        let interrupted = rt.block_on(signals.wait(r.duration));
        let (mode, sps) = previous.clone().unwrap_or(("off".into(), None));
        let restore = rt.block_on(session.set_query_analyzer(&mode, if mode == "off" { None } else { sps }));
        restore?;
        let (log, how) = rt.block_on(session.read_sampled())?;
        lines.push(format!("read back through {how}: {} sampled operations", log.found));
        (interrupted, Vec::new(), format!("query analyzer restored to mode {mode}"))
    } else {
        let previous: ProfilerSettings = rt.block_on(session.profiler_settings())?;
        let sampling = ProfilerSettings { level: 1, slowms: 0, sample_rate: r.rate, filter: None };
        // Said before the change, so that a SIGKILL still leaves the way back on screen.
        crate::util::term::note(format!(
            "profiling {} at sampleRate {} for {} s; to restore by hand: db.getSiblingDB({:?}).setProfilingLevel({}, {{slowms: {}, sampleRate: {}}})",
            r.namespace,
            r.rate,
            r.duration.as_secs(),
            r.namespace.db(),
            previous.level,
            previous.slowms,
            previous.sample_rate
        ));
        rt.block_on(session.set_profiler(&sampling))?;
        // From here on, restore whatever happens.
        let interrupted = rt.block_on(signals.wait(r.duration));
        let restore = rt.block_on(session.set_profiler(&previous));
        let entries = rt.block_on(session.profile_entries_since(start_millis));
        restore?;
        let entries = entries?;
        // Did the capped profiler keep the whole window? Its oldest entry and its size say.
        let (oldest, sizes) = rt.block_on(session.profiler_after_window());
        let after = AfterWindow {
            start_millis,
            oldest_millis: oldest.map(|t| t.timestamp_millis()),
            full: sizes.as_ref().ok().and_then(|z| z.full()),
            max_bytes: sizes.as_ref().ok().and_then(|z| z.max_bytes),
            size_unknown: sizes.err(),
            entries: entries.len() as u64,
            entry_bytes: crate::sources::live::query_sampling::mean_bson_size(&entries),
        };
        for w in after.words() {
            crate::util::term::note(&w);
            lines.push(w);
        }
        (
            interrupted,
            entries,
            format!(
                "profiler restored: level {}, slowms {}, sampleRate {}{}",
                previous.level,
                previous.slowms,
                previous.sample_rate,
                if previous.filter.is_some() { ", filter" } else { "" }
            ),
        )
    };
    if major < 7 {
        let mut f = std::fs::File::create(&r.out).map_err(|e| input_error(format!("cannot write {}: {e}", r.out.display())))?;
        for d in &entries {
            let v = bson::Bson::Document(d.clone()).into_relaxed_extjson();
            writeln!(f, "{v}").map_err(|e| input_error(format!("cannot write {}: {e}", r.out.display())))?;
        }
        lines.push(format!("{} profiled operations on {} written to {}", entries.len(), r.namespace, r.out.display()));
    }
    writeln!(
        out,
        "sampled {} on MongoDB {major}.{minor} for {} s{}; {restored}",
        r.namespace,
        started.elapsed().as_secs(),
        if interrupted { " (interrupted)" } else { "" }
    )?;
    for l in lines {
        writeln!(out, "{l}")?;
    }
    let next = if major >= 7 { "sampled".to_string() } else { r.out.display().to_string() };
    writeln!(out, "next: shardkey analyze --uri <URI> --collection {} --queries {next}", r.namespace)?;
    // Interrupted: settings restored and what was sampled written, but the window was cut
    // short, which a script must be able to tell (README "Exit codes": 130).
    Ok(if interrupted { Outcome::Interrupted } else { Outcome::Success })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after() -> AfterWindow {
        AfterWindow {
            start_millis: 1_000_000,
            oldest_millis: Some(999_000),
            full: Some(false),
            max_bytes: Some(1 << 20),
            size_unknown: None,
            entries: 120,
            entry_bytes: Some(2_100),
        }
    }

    #[test]
    fn a_profiler_that_kept_the_window_says_its_capacity() {
        // 1,048,576 / 2,100 = 499 entries of this size.
        assert_eq!(after().words(), vec!["120 entries of 2100 bytes on average were written: system.profile (1.0 MiB) holds about 499 of them, so keep --rate × operations/s × duration under that, or enlarge it".to_string()]);
    }

    #[test]
    fn a_wrapped_profiler_is_warned_of() {
        // The run: the file started 82 s into a 240 s window.
        let w = AfterWindow { oldest_millis: Some(1_082_000), full: Some(true), ..after() }.words();
        assert!(
            w[0].starts_with("warning: the profiler wrapped during the window: it is at its maximum and its oldest entry is 82 s after"),
            "{w:?}"
        );
        let w = AfterWindow { full: Some(true), ..after() }.words();
        assert!(w[0].starts_with("warning: system.profile is at its maximum: it kept this window"), "{w:?}");
        // Empty before the window (its first entry came after the start) and not full: nothing lost.
        assert_eq!(AfterWindow { oldest_millis: Some(1_082_000), ..after() }.words().len(), 1);
        let w = AfterWindow {
            full: None,
            max_bytes: None,
            size_unknown: Some("not authorized: collStats on shop.system.profile".into()),
            ..after()
        }
        .words();
        assert_eq!(w, vec!["whether system.profile dropped entries of the window by its size: unknown (not authorized: collStats on shop.system.profile)".to_string()]);
    }
}
