//! `shardkey sample`: uniform query sampling on a live deployment for a while, the
//! one use case that changes server settings, and only with `--change-server-settings`.
//! The previous settings are restored at the end, on Ctrl-C and on error; the samples
//! are written to a file that `analyze --queries FILE` reads.

use super::SampleRequest;
use crate::error::{input_error, usage_error};
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

pub(super) fn run(r: &SampleRequest, out: &mut dyn Write) -> Result<()> {
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
    Ok(())
}
