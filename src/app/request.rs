//! The typed requests `cli` builds and the use cases read: one file below them all, so a use
//! case imports its request from here and never from the module that dispatches to it.

use crate::metrics::workload::ShapeOrder;
use crate::model::{Namespace, ShardKey};
use crate::report::Format;
use bson::Document;
use std::path::PathBuf;
use std::time::Duration;

/// Where a query log comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum QuerySource {
    /// A file (any format `sources::queries` reads).
    File(PathBuf),
    /// `<db>.system.profile` on the deployment.
    Profile,
    /// The 7.0+ sampled queries on the deployment.
    Sampled,
}

impl QuerySource {
    /// `profile` and `sampled` name the deployment's logs; anything else is a file.
    pub(crate) fn parse(text: &str) -> QuerySource {
        match text {
            "profile" => QuerySource::Profile,
            "sampled" => QuerySource::Sampled,
            f => QuerySource::File(PathBuf::from(f)),
        }
    }
}

/// Where the documents and queries come from, and how to measure: shared by `analyze` and `check`.
#[derive(Debug, Clone)]
pub(crate) struct InputRequest {
    pub(crate) docs: Option<PathBuf>,
    /// `--indexes FILE` (else a mongodump metadata.json beside `docs`).
    pub(crate) indexes: Option<PathBuf>,
    /// `--uri`, or `MONGODB_URI` when neither it nor `--docs` is given.
    pub(crate) uri: Option<String>,
    pub(crate) queries: Vec<QuerySource>,
    pub(crate) namespace: Option<Namespace>,
    /// `--collation`: the collection's default collation (live: read from the server).
    pub(crate) collation: Option<Document>,
    pub(crate) chunk_size_bytes: u64,
    pub(crate) shards: Option<usize>,
    pub(crate) total_docs: Option<u64>,
    pub(crate) sample_size: u64,
    pub(crate) config_uri: Option<String>,
    pub(crate) server_selection_timeout: Duration,
    pub(crate) max_time: Duration,
    pub(crate) top: usize,
    pub(crate) redact: bool,
    /// `--memory-limit` in bytes.
    pub(crate) memory_limit: u64,
    /// `--since`/`--until`: logged operations outside are left out (milliseconds since the epoch).
    pub(crate) window: (Option<i64>, Option<i64>),
    /// `--residency` (or a policy's `residency`): where the zone field's values must stay.
    pub(crate) residency: Option<crate::model::residency::Residency>,
    /// The version the rules follow whatever the sources say: a plan's (`--target-version`,
    /// else what its inputs say), so that a write its cluster would refuse is said refused.
    pub(crate) rules_version: Option<crate::model::version::ServerVersion>,
}

#[derive(Debug, Clone)]
pub(crate) struct AnalyzeRequest {
    pub(crate) input: InputRequest,
    pub(crate) keys: Vec<ShardKey>,
    pub(crate) compare_server: bool,
    pub(crate) format: Format,
    pub(crate) fail_under: Option<u32>,
}

#[derive(Debug, Clone)]
pub(crate) struct CheckRequest {
    pub(crate) input: InputRequest,
    /// `--dump`: a mongodump database directory (the `[plan]`'s database, the collections' documents).
    pub(crate) dump: Option<PathBuf>,
    pub(crate) policy: PathBuf,
    /// A previous `check --format json` report: fail only on what got worse.
    pub(crate) baseline: Option<PathBuf>,
    /// `--changed-files`: where the annotations may point.
    pub(crate) changed_files: Vec<PathBuf>,
    /// `--write-baseline FILE`: this run's JSON report, for a later `--baseline`.
    pub(crate) write_baseline: Option<PathBuf>,
    /// `--output-file FILE`: the `--format` report goes there, the table to stdout.
    pub(crate) output_file: Option<PathBuf>,
    /// Print a starting policy and stop.
    pub(crate) init: bool,
    pub(crate) format: Format,
}

/// `shardkey plan`: keys for a whole database, chosen together.
#[derive(Debug, Clone)]
pub(crate) struct PlanRequest {
    /// Query sources, shards, sampling and connection settings (its `docs` and `namespace` unused).
    pub(crate) input: InputRequest,
    /// A mongodump database directory.
    pub(crate) dump: Option<PathBuf>,
    pub(crate) database: Option<String>,
    /// `--target-version`: the server version the plan is for (live: the server's).
    pub(crate) target_version: Option<(u32, u32)>,
    /// `--shard-size`: the data one shard should hold, in bytes.
    pub(crate) shard_size_bytes: Option<u64>,
    /// `--shard-ops`: operations per second one shard sustains.
    pub(crate) shard_ops_per_second: Option<f64>,
    /// `--key`, `--unsharded`: choices kept as given (what if).
    pub(crate) given: Vec<GivenChoice>,
    pub(crate) format: Format,
}

/// A choice the DBA fixes for one collection (`plan --key`, `--unsharded`, a policy's `[plan]`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GivenChoice {
    /// Where it was given, for the words of an error: `--key`, `--unsharded`, a policy's field.
    pub(crate) origin: &'static str,
    /// As given: `db.coll`, or a collection of the plan's database.
    pub(crate) collection: String,
    /// None: kept unsharded.
    pub(crate) key: Option<ShardKey>,
}

impl GivenChoice {
    /// `--key NS={KEY}`: the collection, then the key document after the first `=` that opens one.
    pub(crate) fn parse_key(text: &str) -> Result<GivenChoice, String> {
        let at = text.match_indices('=').map(|(i, _)| i).find(|i| text[i + 1..].trim_start().starts_with('{'));
        let Some(at) = at else { return Err(format!("--key {text}: expected COLL={{field: 1, ...}}, e.g. shop.orders={{customerId: 1}}")) };
        let (name, key) = (text[..at].trim(), &text[at + 1..]);
        if name.is_empty() {
            return Err(format!("--key {text}: name the collection before '='"));
        }
        let key = ShardKey::parse(key).map_err(|e| format!("--key {text}: {e}"))?;
        Ok(GivenChoice { origin: "--key", collection: name.to_string(), key: Some(key) })
    }
}

/// `shardkey workload`: summarise query logs.
#[derive(Debug, Clone)]
pub(crate) struct WorkloadRequest {
    pub(crate) queries: Vec<PathBuf>,
    /// A namespace pattern (`*` wildcards).
    pub(crate) namespace: Option<String>,
    /// `--since`/`--until` in milliseconds since the epoch, and as given.
    pub(crate) window: (Option<i64>, Option<i64>),
    pub(crate) since_text: Option<String>,
    pub(crate) until_text: Option<String>,
    /// Shapes per namespace (0: all).
    pub(crate) top: usize,
    /// How shapes are ordered.
    pub(crate) sort: ShapeOrder,
    pub(crate) format: Format,
}

/// `shardkey sample`: uniform query sampling for a while (changes server settings).
#[derive(Debug, Clone)]
pub(crate) struct SampleRequest {
    pub(crate) uri: String,
    pub(crate) namespace: Namespace,
    /// 4.0–6.x: the profiler's sampleRate (0 < rate ≤ 1).
    pub(crate) rate: f64,
    /// 7.0+: configureQueryAnalyzer's samplesPerSecond.
    pub(crate) samples_per_second: f64,
    pub(crate) duration: Duration,
    pub(crate) out: PathBuf,
    /// The explicit consent to change server settings.
    pub(crate) change_server_settings: bool,
    pub(crate) server_selection_timeout: Duration,
    pub(crate) max_time: Duration,
}

#[derive(Debug, Clone)]
pub(crate) enum Request {
    Analyze(AnalyzeRequest),
    Check(CheckRequest),
    Workload(WorkloadRequest),
    Sample(SampleRequest),
    Plan(PlanRequest),
    /// Text the command line made itself (completions, a man page).
    Text(String),
    /// Files the command line made itself (`man --out-dir`): written, their paths listed.
    Files(Vec<(std::path::PathBuf, String)>),
}
