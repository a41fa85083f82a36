//! The application: the use cases (`analyze`, `check`) run on typed requests
//! that `cli` built. It opens the inputs (`inputs`: files or a live deployment),
//! runs the pipeline and hands the report to a writer; it never parses flags.

mod analyze;
mod check;
mod github;
mod inputs;
mod plan;
mod sample;
mod workload;

pub use crate::sample::DEFAULT_MEMORY_LIMIT;

use crate::error::{exit_code, input_error, one_line, Exit, Outcome};
use crate::model::{Namespace, ShardKey};
use crate::report::Format;
use crate::util::uri::{scrub, secrets_of};
use anyhow::Result;
use bson::Document;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// Where a query log comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuerySource {
    /// A file (any format `sources::queries` reads).
    File(PathBuf),
    /// `<db>.system.profile` on the deployment.
    Profile,
    /// The 7.0+ sampled queries on the deployment.
    Sampled,
}

impl QuerySource {
    /// `profile` and `sampled` name the deployment's logs; anything else is a file.
    pub fn parse(text: &str) -> QuerySource {
        match text {
            "profile" => QuerySource::Profile,
            "sampled" => QuerySource::Sampled,
            f => QuerySource::File(PathBuf::from(f)),
        }
    }
}

/// Where the documents and queries come from, and how to measure: shared by `analyze` and `check`.
#[derive(Debug, Clone)]
pub struct InputRequest {
    pub docs: Option<PathBuf>,
    /// `--indexes FILE` (else a mongodump metadata.json beside `docs`).
    pub indexes: Option<PathBuf>,
    /// `--uri`, or `MONGODB_URI` when neither it nor `--docs` is given.
    pub uri: Option<String>,
    pub queries: Vec<QuerySource>,
    pub namespace: Option<Namespace>,
    /// `--collation`: the collection's default collation (live: read from the server).
    pub collation: Option<Document>,
    pub chunk_size_bytes: u64,
    pub shards: Option<usize>,
    pub total_docs: Option<u64>,
    pub sample_size: u64,
    pub config_uri: Option<String>,
    pub server_selection_timeout: Duration,
    pub max_time: Duration,
    pub top: usize,
    pub redact: bool,
    /// `--memory-limit` in bytes.
    pub memory_limit: u64,
    /// `--since`/`--until`: logged operations outside are left out (milliseconds since the epoch).
    pub window: (Option<i64>, Option<i64>),
}

#[derive(Debug, Clone)]
pub struct AnalyzeRequest {
    pub input: InputRequest,
    pub keys: Vec<ShardKey>,
    pub compare_server: bool,
    pub format: Format,
    pub fail_under: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct CheckRequest {
    pub input: InputRequest,
    pub policy: PathBuf,
    /// A previous `check --format json` report: fail only on what got worse.
    pub baseline: Option<PathBuf>,
    /// Print a starting policy and stop.
    pub init: bool,
    pub format: Format,
}

/// `shardkey plan`: keys for a whole database, chosen together.
#[derive(Debug, Clone)]
pub struct PlanRequest {
    /// Query sources, shards, sampling and connection settings (its `docs` and `namespace` unused).
    pub input: InputRequest,
    /// A mongodump database directory.
    pub dump: Option<PathBuf>,
    pub database: Option<String>,
    /// `--target-version`: the server version the plan is for (live: the server's).
    pub target_version: Option<(u32, u32)>,
    /// `--shard-size`: the data one shard should hold, in bytes.
    pub shard_size_bytes: Option<u64>,
    /// `--shard-ops`: operations per second one shard sustains.
    pub shard_ops_per_second: Option<f64>,
    pub format: Format,
}

/// `shardkey workload`: summarise query logs.
#[derive(Debug, Clone)]
pub struct WorkloadRequest {
    pub queries: Vec<PathBuf>,
    /// A namespace pattern (`*` wildcards).
    pub namespace: Option<String>,
    /// `--since`/`--until` in milliseconds since the epoch, and as given.
    pub window: (Option<i64>, Option<i64>),
    pub since_text: Option<String>,
    pub until_text: Option<String>,
    /// Shapes per namespace (0: all).
    pub top: usize,
    pub format: Format,
}

/// `shardkey sample`: uniform query sampling for a while (changes server settings).
#[derive(Debug, Clone)]
pub struct SampleRequest {
    pub uri: String,
    pub namespace: Namespace,
    /// 4.0–6.x: the profiler's sampleRate (0 < rate ≤ 1).
    pub rate: f64,
    /// 7.0+: configureQueryAnalyzer's samplesPerSecond.
    pub samples_per_second: f64,
    pub duration: Duration,
    pub out: PathBuf,
    /// The explicit consent to change server settings.
    pub change_server_settings: bool,
    pub server_selection_timeout: Duration,
    pub max_time: Duration,
}

#[derive(Debug, Clone)]
pub enum Request {
    Analyze(AnalyzeRequest),
    Check(CheckRequest),
    Workload(WorkloadRequest),
    Sample(SampleRequest),
    Plan(PlanRequest),
    /// Text the command line made itself (completions, the man page).
    Text(String),
}

/// Run a request, writing its report to `out`.
pub fn run(req: &Request, out: &mut dyn Write) -> Result<Outcome> {
    match req {
        Request::Analyze(a) => scrubbed(&a.input, || analyze::run(a, out)),
        Request::Check(c) if c.init => {
            out.write_all(crate::policy::default_policy().as_bytes())?;
            Ok(Outcome::Success)
        }
        Request::Check(c) => scrubbed(&c.input, || check::run(c, out)),
        Request::Workload(w) => workload::run(w, out).map(|_| Outcome::Success),
        Request::Plan(p) => scrubbed(&p.input, || plan::run(p, out).map(|_| Outcome::Success)),
        Request::Text(t) => {
            out.write_all(t.as_bytes())?;
            Ok(Outcome::Success)
        }
        Request::Sample(sr) => scrub_errors(secrets_of(&sr.uri), || sample::run(sr, out).map(|_| Outcome::Success)),
    }
}

/// Run `f` so that no error it returns carries a credential from the URIs.
fn scrubbed<T>(input: &InputRequest, f: impl FnOnce() -> Result<T>) -> Result<T> {
    scrub_errors(input.uri.iter().chain(&input.config_uri).flat_map(|u| secrets_of(u)).collect(), f)
}

/// Run `f` so that no error it returns carries one of `secrets`, its kind (exit code) kept.
fn scrub_errors<T>(secrets: Vec<String>, f: impl FnOnce() -> Result<T>) -> Result<T> {
    f().map_err(|e| {
        if secrets.is_empty() {
            return e;
        }
        let msg = scrub(&one_line(&e), &secrets);
        match exit_code(&e) {
            Exit::Success => e, // a closed stdout carries no message worth keeping
            Exit::Internal => anyhow::anyhow!(msg),
            _ => input_error(msg),
        }
    })
}
