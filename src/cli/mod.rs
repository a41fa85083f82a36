//! The command line: clap definitions, and their conversion into the typed
//! requests `app` runs (flag checks included). Nothing below this module sees clap.

use crate::app::{AnalyzeRequest, CheckRequest, InputRequest, PlanRequest, QuerySource, Request, SampleRequest, WorkloadRequest};
use crate::error::{usage_error, Exit};
use crate::model::sharding::DEFAULT_CHUNK_SIZE_MIB;
use crate::model::{relaxed, Namespace, ShardKey};
use crate::report::Format;
use anyhow::Result;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(name = "shardkey", version, about = "Which MongoDB shard key to choose, and why.", after_help = EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// Colour in the table output: auto (when stdout is a terminal and NO_COLOR is unset), always, never.
    #[arg(long, value_enum, global = true, default_value_t = ColorArg::Auto)]
    pub color: ColorArg,

    /// Nothing on stderr on success (no progress bars, no notes).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Say on stderr what was read, from where, and how long each stage took.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ColorArg {
    Auto,
    Always,
    Never,
}

const EXAMPLES: &str = "Examples:
  shardkey analyze --docs fixtures/events.ndjson --queries fixtures/mongod.log --collection app.events
  shardkey analyze --uri mongodb://localhost:27017 --collection shop.orders
  shardkey workload --queries /var/log/mongodb/mongod.log --namespace 'shop.*'
  shardkey check --uri \"$MONGODB_URI\"
  shardkey completions bash > /etc/bash_completion.d/shardkey";

const ANALYZE_EXAMPLES: &str = "Examples:
  shardkey analyze --docs orders.ndjson --queries mongod.log --collection shop.orders --total-docs 50000000
  shardkey analyze --uri mongodb://host/ --collection shop.orders --key '{customerId: 1}' --key '{_id: \"hashed\"}'
  shardkey analyze --queries mongod.log --collection shop.orders            # logs only
  shardkey analyze --docs dump/shop/orders.bson --shards 8 --format markdown";

const CHECK_EXAMPLES: &str = "Examples:
  shardkey check --init > shardkey.toml
  shardkey check --uri \"$MONGODB_URI\"                  # finds shardkey.toml from the current directory up
  shardkey check --docs orders.ndjson --policy ci/shardkey.toml --format json";

const WORKLOAD_EXAMPLES: &str = "Examples:
  shardkey workload --queries mongod.log
  shardkey workload --queries mongod.log.gz --namespace 'shop.*' --since 2024-06-01 --until 2024-06-02 --format markdown
  shardkey workload --queries old-2.6-mongod.log --top 0 --format json";

const PLAN_EXAMPLES: &str = "Examples:
  shardkey plan --dump dump/shop --queries mongod.log
  shardkey plan --uri mongodb://host/ --database shop --queries /var/log/mongodb/mongod.log --format json
  shardkey plan --uri mongodb://host/ --database shop --queries profile --target-version 8.0";

const SAMPLE_EXAMPLES: &str = "Examples:
  shardkey sample --uri mongodb://primary/ --collection shop.orders --rate 0.01 --duration 10m --change-server-settings
  shardkey analyze --uri mongodb://primary/ --collection shop.orders --queries shardkey-sample-shop.orders.ndjson";

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Measure, score and rank candidate shard keys.
    #[command(after_help = ANALYZE_EXAMPLES)]
    Analyze(AnalyzeArgs),
    /// Gate CI on a policy file: exit 0 pass, 1 violated, 2 usage/configuration/connection error.
    #[command(after_help = CHECK_EXAMPLES)]
    Check(CheckArgs),
    /// Summarise query logs (any format, 2.2 to 8.x): per namespace and query shape, counts,
    /// commands, durations, documents examined per returned, COLLSCANs.
    #[command(after_help = WORKLOAD_EXAMPLES)]
    Workload(WorkloadArgs),
    /// Sample queries uniformly for a while (CHANGES SERVER SETTINGS, only with --change-server-settings):
    /// the profiler with slowms 0 and sampleRate on 4.0-6.x, configureQueryAnalyzer on 7.0+; restored at the end.
    #[command(after_help = SAMPLE_EXAMPLES)]
    Sample(SampleArgs),
    /// Plan a whole database: which collections to shard, on which keys chosen together so
    /// transactions and joins stay on one shard, the zones that co-locate them, what stays unsharded.
    #[command(after_help = PLAN_EXAMPLES)]
    Plan(PlanArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = "Example:\n  shardkey completions zsh > ~/.zfunc/_shardkey")]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff).
    #[command(after_help = "Example:\n  shardkey man > /usr/local/share/man/man1/shardkey.1")]
    Man,
}

#[derive(Args, Debug)]
pub struct SampleArgs {
    /// The deployment (its primary is used). Defaults to $MONGODB_URI.
    #[arg(long, value_name = "URI")]
    pub uri: Option<String>,

    /// The namespace to sample (db.coll).
    #[arg(long, value_name = "DB.COLL", required = true)]
    pub collection: String,

    /// 4.0-6.x: the share of operations profiled (profiler sampleRate), 0 < RATE <= 1.
    #[arg(long, value_name = "RATE", default_value_t = 0.01)]
    pub rate: f64,

    /// 7.0+: queries sampled per second (configureQueryAnalyzer samplesPerSecond, at most 50).
    #[arg(long, value_name = "N", default_value_t = 10.0)]
    pub samples_per_second: f64,

    /// How long to sample: 30s, 10m, 1h (Ctrl-C ends it early; settings are restored either way).
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub duration: String,

    /// Where the profiled operations go (NDJSON, read by `analyze --queries FILE`). 4.0-6.x.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Consent: this command changes server settings for the duration (README "Sampling queries").
    #[arg(long)]
    pub change_server_settings: bool,

    /// Seconds to find a server before giving up.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub server_selection_timeout: u64,

    /// maxTimeMS sent with every server operation.
    #[arg(long, value_name = "MS", default_value_t = 60_000)]
    pub max_time_ms: u64,
}

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// A mongodump database directory (`dump/<db>`: `<coll>.bson` and `<coll>.metadata.json` files).
    #[arg(long, value_name = "DIR", conflicts_with = "uri")]
    pub dump: Option<PathBuf>,

    /// A live deployment (read-only). Defaults to $MONGODB_URI when set and --dump is not given.
    #[arg(long, value_name = "URI")]
    pub uri: Option<String>,

    /// The database to plan (required with --uri; default with --dump: the directory's name).
    #[arg(long, value_name = "DB")]
    pub database: Option<String>,

    /// Query log with the database's operations, read once for every collection: a mongod JSON log (transactions
    /// and joins), a system.profile export, or with --uri `profile`. Repeatable.
    #[arg(long = "queries", value_name = "FILE|profile")]
    pub queries: Vec<String>,

    /// Shards to plan for (default: 4).
    #[arg(long, value_name = "N")]
    pub shards: Option<usize>,

    /// Chunk size in MiB.
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_CHUNK_SIZE_MIB)]
    pub chunk_size: u64,

    /// With --uri: documents to sample per collection ($sample).
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    pub sample_size: u64,

    /// Memory each collection's sample may hold, e.g. 512M, 2G.
    #[arg(long, value_name = "SIZE", default_value = "1G")]
    pub memory_limit: String,

    /// With --uri: seconds to find a server before giving up.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub server_selection_timeout: u64,

    /// With --uri: maxTimeMS sent with every server operation.
    #[arg(long, value_name = "MS", default_value_t = 60_000)]
    pub max_time_ms: u64,

    /// Only logged/profiled operations at or after this time (RFC 3339, or a date: 2024-06-01).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,

    /// Only logged/profiled operations before this time.
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,

    /// The data one shard should hold, e.g. 2T: the plan says how many shards the data needs.
    #[arg(long, value_name = "SIZE")]
    pub shard_size: Option<String>,

    /// Operations per second one shard sustains: with the logs' rate, how many shards the load needs.
    #[arg(long, value_name = "N")]
    pub shard_ops: Option<f64>,

    /// The MongoDB version the plan is for, e.g. 8.0 (live: the server's). moveCollection needs 8.0,
    /// a sharded $lookup target 5.1.
    #[arg(long, value_name = "X.Y")]
    pub target_version: Option<String>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
}

#[derive(Args, Debug)]
pub struct WorkloadArgs {
    /// Query log: mongod JSON or legacy text log, system.profile export, config.sampledQueries export. Repeatable.
    #[arg(long = "queries", value_name = "FILE", required = true)]
    pub queries: Vec<PathBuf>,

    /// Only namespaces matching this pattern (`*` matches anything), e.g. 'app.*'.
    #[arg(long, value_name = "PATTERN")]
    pub namespace: Option<String>,

    /// Only operations at or after this time (RFC 3339, or a date: 2024-06-01).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,

    /// Only operations before this time (RFC 3339, or a date).
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,

    /// Query shapes shown per namespace, most frequent first (0: all).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,

    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FormatArg {
    Table,
    Json,
    Markdown,
    Html,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Table => Format::Table,
            FormatArg::Json => Format::Json,
            FormatArg::Markdown => Format::Markdown,
            FormatArg::Html => Format::Html,
        }
    }
}

/// Where the documents and queries come from, and how to measure: shared by `analyze` and `check`.
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Documents: mongoexport JSON/NDJSON (relaxed or canonical Extended JSON) or mongodump .bson[.gz], in insertion order.
    #[arg(long, value_name = "FILE", conflicts_with = "uri")]
    pub docs: Option<PathBuf>,

    /// With --docs: the collection's indexes and options, as a mongodump `<coll>.metadata.json` or the JSON output of
    /// `db.coll.getIndexes()` (default: the metadata.json mongodump wrote beside a .bson file).
    #[arg(long, value_name = "FILE", requires = "docs")]
    pub indexes: Option<PathBuf>,

    /// A live deployment (read-only). Defaults to $MONGODB_URI when set and --docs is not given.
    #[arg(long, value_name = "URI")]
    pub uri: Option<String>,

    /// Query log: a file (mongod JSON log, system.profile export, config.sampledQueries[Diff] export), or with --uri
    /// `profile` (<db>.system.profile) or `sampled` (sampled queries, 7.0+). Repeatable.
    #[arg(long = "queries", value_name = "FILE|profile|sampled")]
    pub queries: Vec<String>,

    /// The analysed namespace (db.coll). Required with --uri; offline default: from a mongodump path, or the only one in the query logs.
    #[arg(long, value_name = "DB.COLL")]
    pub collection: Option<String>,

    /// The collection's default collation, e.g. '{locale: "en", strength: 2}' (read from the server with --uri).
    #[arg(long, value_name = "COLLATION")]
    pub collation: Option<String>,

    /// Chunk size in MiB (jumbo-chunk risk).
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_CHUNK_SIZE_MIB)]
    pub chunk_size: u64,

    /// Model the cluster with N shards (default: the cluster's own, else 4): data, reads, writes and inserts per shard, cost, growth, scale.
    #[arg(long, value_name = "N")]
    pub shards: Option<usize>,

    /// The collection's document count when --docs holds a sample of it (scales estimates and jumbo risk).
    #[arg(long, value_name = "N")]
    pub total_docs: Option<u64>,

    /// With --uri: documents to sample ($sample); the whole collection when it is smaller.
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    pub sample_size: u64,

    /// With --uri: where to read sharding metadata (config.collections/chunks/shards) when --uri is not a mongos,
    /// e.g. the config server replica set. Default: the --uri deployment.
    #[arg(long, value_name = "URI")]
    pub config_uri: Option<String>,

    /// With --uri: seconds to find a server before giving up.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub server_selection_timeout: u64,

    /// With --uri: maxTimeMS sent with every server operation.
    #[arg(long, value_name = "MS", default_value_t = 60_000)]
    pub max_time_ms: u64,

    /// How many most common values to report per key.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub top: usize,

    /// Replace every sampled value in the output with its BSON type and a stable short hash.
    #[arg(long)]
    pub redact: bool,

    /// Memory the sample may hold for exact counts and insertion order, e.g. 512M, 2G (default 1G).
    #[arg(long, value_name = "SIZE", default_value = "1G")]
    pub memory_limit: String,

    /// Only logged/profiled operations at or after this time (RFC 3339, or a date: 2024-06-01).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,

    /// Only logged/profiled operations before this time.
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
}

#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// Candidate key, e.g. '{projectId: 1, _id: 1}' or '{_id: "hashed"}' (repeatable). Without it, candidates are proposed.
    #[arg(long = "key", value_name = "KEY")]
    pub keys: Vec<String>,

    /// With --uri on MongoDB 7.0+: also run the server's analyzeShardKey per candidate and show its numbers.
    #[arg(long)]
    pub compare_server: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,

    /// Exit with code 1 when the best candidate scores below SCORE (0-100).
    #[arg(long, value_name = "SCORE")]
    pub fail_under: Option<u32>,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// The policy file (TOML). Default: shardkey.toml in the current directory or the nearest parent that has one.
    /// `shardkey check --init` prints one to start from.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,

    /// Print a starting policy and exit.
    #[arg(long)]
    pub init: bool,

    /// Output format: also sarif (SARIF 2.1.0, GitHub code scanning) and gitlab (code quality).
    #[arg(long, value_enum, default_value_t = CheckFormatArg::Table)]
    pub format: CheckFormatArg,

    /// A previous `check --format json` report: fail only on what got worse (a rule newly
    /// violated, a lower score), so the gate can be adopted on an existing cluster.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CheckFormatArg {
    Table,
    Json,
    Markdown,
    Html,
    Sarif,
    Gitlab,
}

impl From<CheckFormatArg> for Format {
    fn from(f: CheckFormatArg) -> Format {
        match f {
            CheckFormatArg::Table => Format::Table,
            CheckFormatArg::Json => Format::Json,
            CheckFormatArg::Markdown => Format::Markdown,
            CheckFormatArg::Html => Format::Html,
            CheckFormatArg::Sarif => Format::Sarif,
            CheckFormatArg::Gitlab => Format::Gitlab,
        }
    }
}

/// Parse the process's arguments. Help and version are printed here (exit 0);
/// a clap error becomes one line on stderr (exit 2).
pub fn parse() -> Result<Cli, Exit> {
    Cli::try_parse().map_err(|e| {
        use clap::error::ErrorKind;
        match e.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                let _ = e.print();
                Exit::Success
            }
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                let _ = e.print();
                Exit::UserError
            }
            _ => {
                let text = e.to_string();
                let first = text.lines().next().unwrap_or("invalid arguments").trim_start_matches("error: ");
                let secrets = crate::util::uri::secrets_in_environment();
                eprintln!("shardkey: {} (see shardkey --help)", crate::util::uri::scrub(&crate::error::printable(first), &secrets));
                Exit::UserError
            }
        }
    })
}

impl Cli {
    /// The typed request, every flag checked.
    pub fn into_request(self) -> Result<Request> {
        let color = match self.color {
            ColorArg::Auto => crate::util::term::ColorMode::Auto,
            ColorArg::Always => crate::util::term::ColorMode::Always,
            ColorArg::Never => crate::util::term::ColorMode::Never,
        };
        crate::util::term::set(color, self.quiet, self.verbose);
        Ok(match self.command {
            Command::Completions { shell } => {
                use clap::CommandFactory;
                let mut buf = Vec::new();
                clap_complete::generate(shell, &mut Cli::command(), "shardkey", &mut buf);
                Request::Text(String::from_utf8_lossy(&buf).into_owned())
            }
            Command::Man => {
                use clap::CommandFactory;
                let mut buf = Vec::new();
                clap_mangen::Man::new(Cli::command()).render(&mut buf)?;
                Request::Text(String::from_utf8_lossy(&buf).into_owned())
            }
            Command::Analyze(a) => {
                if a.fail_under.is_some_and(|s| s > 100) {
                    return Err(usage_error("--fail-under takes a score from 0 to 100"));
                }
                let keys = a.keys.iter().map(|k| parse_key(k)).collect::<Result<Vec<_>>>()?;
                Request::Analyze(AnalyzeRequest {
                    input: input_request(&a.input)?,
                    keys,
                    compare_server: a.compare_server,
                    format: a.format.into(),
                    fail_under: a.fail_under,
                })
            }
            Command::Sample(a) => {
                let uri = a
                    .uri
                    .clone()
                    .or_else(|| std::env::var("MONGODB_URI").ok())
                    .ok_or_else(|| usage_error("give --uri URI (or set MONGODB_URI)"))?;
                let namespace = Namespace::parse(&a.collection)
                    .map_err(|_| usage_error(format!("--collection {}: expected db.collection", a.collection)))?;
                if !(a.rate > 0.0 && a.rate <= 1.0) {
                    return Err(usage_error("--rate takes a share of operations above 0 and at most 1, e.g. 0.01"));
                }
                if !(a.samples_per_second > 0.0 && a.samples_per_second <= 50.0) {
                    return Err(usage_error("--samples-per-second takes a rate above 0 and at most 50 (the server's limit)"));
                }
                let duration = parse_duration(&a.duration)?;
                let out = a.out.clone().unwrap_or_else(|| PathBuf::from(format!("shardkey-sample-{namespace}.ndjson")));
                Request::Sample(SampleRequest {
                    uri,
                    namespace,
                    rate: a.rate,
                    samples_per_second: a.samples_per_second,
                    duration,
                    out,
                    change_server_settings: a.change_server_settings,
                    server_selection_timeout: Duration::from_secs(a.server_selection_timeout.max(1)),
                    max_time: Duration::from_millis(a.max_time_ms.max(1)),
                })
            }
            Command::Plan(p) => {
                let target_version = p
                    .target_version
                    .as_deref()
                    .map(|v| {
                        let mut it = v.split('.').map(|x| x.trim().parse::<u32>());
                        match (it.next(), it.next()) {
                            (Some(Ok(a)), Some(Ok(b))) => Ok((a, b)),
                            (Some(Ok(a)), None) => Ok((a, 0)),
                            _ => Err(usage_error(format!("--target-version {v}: expected a version such as 7.0 or 8.0"))),
                        }
                    })
                    .transpose()?;
                let as_input = InputArgs {
                    docs: None,
                    indexes: None,
                    uri: if p.dump.is_some() { None } else { p.uri.clone() },
                    queries: p.queries.clone(),
                    collection: None,
                    collation: None,
                    chunk_size: p.chunk_size,
                    shards: p.shards,
                    total_docs: None,
                    sample_size: p.sample_size,
                    config_uri: None,
                    server_selection_timeout: p.server_selection_timeout,
                    max_time_ms: p.max_time_ms,
                    top: 5,
                    redact: false,
                    memory_limit: p.memory_limit.clone(),
                    since: p.since.clone(),
                    until: p.until.clone(),
                };
                let mut input = input_request(&as_input)?;
                if p.dump.is_some() {
                    input.uri = None;
                }
                let shard_size_bytes = match p.shard_size.as_deref() {
                    Some(t) => Some(
                        parse_size(t)
                            .filter(|b| *b > 0)
                            .ok_or_else(|| usage_error(format!("--shard-size {t}: give a size such as 500G or 2T")))?,
                    ),
                    None => None,
                };
                if p.shard_ops.is_some_and(|x| !(x > 0.0 && x.is_finite())) {
                    return Err(usage_error("--shard-ops takes a positive number of operations per second"));
                }
                Request::Plan(PlanRequest {
                    input,
                    dump: p.dump,
                    database: p.database,
                    target_version,
                    shard_size_bytes,
                    shard_ops_per_second: p.shard_ops,
                    format: p.format.into(),
                })
            }
            Command::Workload(w) => Request::Workload(WorkloadRequest {
                queries: w.queries,
                namespace: w.namespace,
                window: window(w.since.as_deref(), w.until.as_deref())?,
                since_text: w.since,
                until_text: w.until,
                top: w.top,
                format: w.format.into(),
            }),
            Command::Check(c) => Request::Check(CheckRequest {
                // `--init` needs no input.
                input: if c.init { input_request_unchecked(&c.input) } else { input_request(&c.input)? },
                policy: match (c.policy, c.init) {
                    (Some(p), _) => p,
                    (None, true) => PathBuf::from("shardkey.toml"),
                    (None, false) => find_policy()?,
                },
                init: c.init,
                baseline: c.baseline,
                format: c.format.into(),
            }),
        })
    }
}

/// `shardkey.toml` in the current directory or the nearest parent that has one (as cargo finds Cargo.toml).
fn find_policy() -> Result<PathBuf> {
    let cwd = std::env::current_dir()?;
    // Shown relative to the current directory: shardkey.toml, ../shardkey.toml, ...
    let mut rel = PathBuf::new();
    for dir in cwd.ancestors() {
        if dir.join("shardkey.toml").is_file() {
            return Ok(rel.join("shardkey.toml"));
        }
        rel.push("..");
    }
    Err(usage_error(format!(
        "no shardkey.toml in {} or any parent directory: give --policy FILE (shardkey check --init prints one)",
        cwd.display()
    )))
}

/// A duration: 90, 90s, 10m, 1h.
fn parse_duration(text: &str) -> Result<Duration> {
    let t = text.trim();
    let (n, unit) = t.find(|c: char| !c.is_ascii_digit()).map(|i| t.split_at(i)).unwrap_or((t, "s"));
    let secs = match (n.parse::<u64>(), unit) {
        (Ok(n), "s") => Some(n),
        (Ok(n), "m") => n.checked_mul(60),
        (Ok(n), "h") => n.checked_mul(3600),
        _ => None,
    };
    match secs {
        Some(s) if s > 0 && s <= 7 * 86_400 => Ok(Duration::from_secs(s)),
        _ => Err(usage_error(format!("--duration {text}: expected a duration from 1s to 7 days, such as 30s, 10m or 1h"))),
    }
}

/// A time for --since/--until: RFC 3339, or a date (midnight UTC), in milliseconds since the epoch.
fn parse_time(flag: &str, text: &str) -> Result<i64> {
    let t = text.trim();
    let full = if t.len() == 10 { format!("{t}T00:00:00Z") } else { t.to_string() };
    bson::DateTime::parse_rfc3339_str(&full)
        .map(|d| d.timestamp_millis())
        .map_err(|_| usage_error(format!("{flag} {text}: expected a time such as 2024-06-01 or 2024-06-01T10:00:00Z")))
}

fn window(since: Option<&str>, until: Option<&str>) -> Result<(Option<i64>, Option<i64>)> {
    let s = since.map(|t| parse_time("--since", t)).transpose()?;
    let u = until.map(|t| parse_time("--until", t)).transpose()?;
    if let (Some(a), Some(b)) = (s, u) {
        if a >= b {
            return Err(usage_error("--since must be before --until"));
        }
    }
    Ok((s, u))
}

fn parse_key(text: &str) -> Result<ShardKey> {
    ShardKey::parse(text).map_err(|e| usage_error(e.to_string()))
}

fn parse_collation(text: &str) -> Result<bson::Document> {
    let v = relaxed::parse(text).map_err(|e| usage_error(format!("--collation {text}: {e}")))?;
    match bson::Bson::try_from(v) {
        Ok(bson::Bson::Document(d)) => {
            if !d.is_empty() && d.get_str("locale").is_err() {
                return Err(usage_error(format!("--collation {text}: a collation needs a locale")));
            }
            Ok(d)
        }
        _ => Err(usage_error(format!("--collation {text}: expected an object such as {{locale: \"en\", strength: 2}}"))),
    }
}

/// The URI to use: `--uri`, else `MONGODB_URI` when no --docs is given.
fn effective_uri(a: &InputArgs) -> Option<String> {
    a.uri.clone().or_else(|| if a.docs.is_none() { std::env::var("MONGODB_URI").ok() } else { None })
}

fn input_request_unchecked(a: &InputArgs) -> InputRequest {
    InputRequest {
        docs: a.docs.clone(),
        indexes: a.indexes.clone(),
        uri: effective_uri(a),
        queries: a.queries.iter().map(|q| QuerySource::parse(q)).collect(),
        namespace: None,
        collation: None,
        chunk_size_bytes: a.chunk_size.saturating_mul(1024 * 1024),
        shards: a.shards,
        total_docs: a.total_docs,
        sample_size: a.sample_size,
        config_uri: a.config_uri.clone(),
        server_selection_timeout: Duration::from_secs(a.server_selection_timeout.max(1)),
        max_time: Duration::from_millis(a.max_time_ms.max(1)),
        top: a.top,
        redact: a.redact,
        memory_limit: parse_size(&a.memory_limit).unwrap_or(crate::app::DEFAULT_MEMORY_LIMIT),
        window: (None, None),
    }
}

/// `512M`, `2G`, `1048576`: bytes (K, M, G, T in powers of 1024).
fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, mult) = match t.chars().last()?.to_ascii_uppercase() {
        'K' => (&t[..t.len() - 1], 1u64 << 10),
        'M' => (&t[..t.len() - 1], 1 << 20),
        'G' => (&t[..t.len() - 1], 1 << 30),
        'T' => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

fn input_request(a: &InputArgs) -> Result<InputRequest> {
    if a.chunk_size == 0 {
        return Err(usage_error("--chunk-size must be at least 1 MiB"));
    }
    // The server allows chunk sizes of 1 to 1024 MiB.
    if a.chunk_size > 1024 {
        return Err(usage_error("--chunk-size takes 1 to 1024 MiB (the range MongoDB allows)"));
    }
    if a.sample_size == 0 {
        return Err(usage_error("--sample-size must be at least 1"));
    }
    if parse_size(&a.memory_limit).is_none_or(|b| b < (64 << 20)) {
        return Err(usage_error(format!("--memory-limit {}: give a size of at least 64M, such as 512M or 2G", a.memory_limit)));
    }
    if a.shards.is_some_and(|n| n == 0 || n > 10_000) {
        return Err(usage_error("--shards takes a number of shards from 1 to 10000"));
    }
    let mut r = input_request_unchecked(a);
    r.window = window(a.since.as_deref(), a.until.as_deref())?;
    r.collation = a.collation.as_deref().map(parse_collation).transpose()?.filter(|d| !d.is_empty());
    r.namespace = a
        .collection
        .as_deref()
        .map(|ns| Namespace::parse(ns).map_err(|_| usage_error(format!("--collection {ns}: expected db.collection"))))
        .transpose()?;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(args: &[&str]) -> Result<Request> {
        let mut all = vec!["shardkey"];
        all.extend_from_slice(args);
        Cli::try_parse_from(all).map_err(|e| anyhow::anyhow!(e.to_string()))?.into_request()
    }

    #[test]
    fn flags_become_a_typed_request() {
        let r = request(&[
            "analyze",
            "--docs",
            "d.json",
            "--queries",
            "profile",
            "--queries",
            "q.log",
            "--key",
            "{a: 1}",
            "--collection",
            "x.y",
            "--format",
            "json",
        ])
        .unwrap();
        let Request::Analyze(a) = r else { panic!("analyze") };
        assert_eq!(a.input.queries, vec![QuerySource::Profile, QuerySource::File("q.log".into())]);
        assert_eq!(a.keys[0].to_string(), "{a: 1}");
        assert_eq!(a.input.namespace.unwrap().to_string(), "x.y");
        assert_eq!(a.input.chunk_size_bytes, 128 * 1024 * 1024);
        assert_eq!(a.format, Format::Json);
        assert_eq!(a.input.memory_limit, 1 << 30);
        assert_eq!(parse_size("512M"), Some(512 << 20));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("99999999999T"), None, "overflow");
    }

    #[test]
    fn bad_flags_are_usage_errors() {
        for (args, needle) in [
            (&["analyze", "--docs", "d", "--chunk-size", "0"][..], "--chunk-size"),
            (&["analyze", "--docs", "d", "--chunk-size", "17592186044416"][..], "1 to 1024 MiB"),
            (&["analyze", "--docs", "d", "--sample-size", "0"][..], "--sample-size"),
            (&["analyze", "--docs", "d", "--shards", "0"][..], "--shards"),
            (&["analyze", "--docs", "d", "--fail-under", "101"][..], "--fail-under"),
            (&["analyze", "--docs", "d", "--key", "{a: -1}"][..], "descending"),
            (&["analyze", "--docs", "d", "--collection", "nodot"][..], "expected db.collection"),
            (&["analyze", "--docs", "d", "--collation", "{strength: 2}"][..], "needs a locale"),
            (&["analyze", "--docs", "d", "--memory-limit", "lots"][..], "--memory-limit"),
            (&["analyze", "--docs", "d", "--memory-limit", "1M"][..], "at least 64M"),
        ] {
            let e = request(args).unwrap_err();
            assert!(e.to_string().contains(needle), "{args:?}: {e}");
            assert_eq!(crate::error::exit_code(&e), Exit::UserError, "{args:?}");
        }
    }
}
