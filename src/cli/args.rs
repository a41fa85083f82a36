//! The clap definitions: flags, their help and examples. Turned into typed requests by
//! `cli::request` (the parent module); nothing else sees these types.

use crate::model::sharding::DEFAULT_CHUNK_SIZE_MIB;
use crate::report::Format;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(name = "shardkey", version, about = "Which MongoDB shard key to choose, and why.", after_help = EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,

    /// Colour in the table output: auto (when stdout is a terminal and NO_COLOR is unset), always, never.
    #[arg(long, value_enum, global = true, default_value_t = ColorArg::Auto)]
    pub(crate) color: ColorArg,

    /// Nothing on stderr on success (no progress bars, no notes).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub(crate) quiet: bool,

    /// Say on stderr what was read, from where, and how long each stage took.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum ColorArg {
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
  shardkey plan --uri mongodb://host/ --database shop --queries profile --target-version 8.0
  shardkey plan --dump dump/shop --queries mongod.log --key 'orders={customerId: 1, _id: 1}' --unsharded events   # what if
  shardkey plan --dump dump/shop --queries mongod.log --format mongosh > plan.js && mongosh \"mongodb://mongos/\" plan.js";

const SAMPLE_EXAMPLES: &str = "Examples:
  shardkey sample --uri mongodb://primary/ --collection shop.orders --rate 0.01 --duration 10m --change-server-settings
  shardkey analyze --uri mongodb://primary/ --collection shop.orders --queries shardkey-sample-shop.orders.ndjson";

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
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
    /// Print a man page (roff), or write them all to a directory.
    #[command(after_help = "Examples:\n  shardkey man analyze | man -l -\n  shardkey man --out-dir /usr/local/share/man/man1")]
    Man {
        /// The subcommand whose page to print (analyze, check, plan, workload, sample, ...); none: shardkey(1).
        #[arg(value_name = "SUBCOMMAND")]
        page: Option<String>,
        /// Write every page (shardkey.1, shardkey-analyze.1, ...) into DIR instead, and list them.
        #[arg(long, value_name = "DIR", conflicts_with = "page")]
        out_dir: Option<PathBuf>,
    },
}

#[derive(Args, Debug)]
pub(crate) struct SampleArgs {
    /// The deployment (its primary is used): --uri (default $MONGODB_URI) or --host, with -u/-p.
    #[command(flatten)]
    pub(crate) conn: ConnectionArgs,

    /// The namespace to sample (db.coll).
    #[arg(long, value_name = "DB.COLL", required = true)]
    pub(crate) collection: String,

    /// 4.0-6.x: the share of operations profiled (profiler sampleRate), 0 < RATE <= 1.
    #[arg(long, value_name = "RATE", default_value_t = 0.01)]
    pub(crate) rate: f64,

    /// 7.0+: queries sampled per second (configureQueryAnalyzer samplesPerSecond, at most 50).
    #[arg(long, value_name = "N", default_value_t = 10.0)]
    pub(crate) samples_per_second: f64,

    /// How long to sample: 30s, 10m, 1h (Ctrl-C ends it early; settings are restored either way).
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub(crate) duration: String,

    /// Where the profiled operations go (NDJSON, read by `analyze --queries FILE`). 4.0-6.x.
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,

    /// Consent: this command changes server settings for the duration (README "Sampling queries").
    #[arg(long)]
    pub(crate) change_server_settings: bool,

    /// Seconds to find a server before giving up.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub(crate) server_selection_timeout: u64,

    /// maxTimeMS sent with every server operation.
    #[arg(long, value_name = "MS", default_value_t = 60_000)]
    pub(crate) max_time_ms: u64,
}

#[derive(Args, Debug)]
pub(crate) struct PlanArgs {
    /// A mongodump database directory (`dump/<db>`: `<coll>.bson` and `<coll>.metadata.json` files).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["uri", "host", "port"])]
    pub(crate) dump: Option<PathBuf>,

    /// A live deployment (read-only): --uri (default $MONGODB_URI when --dump is not given) or --host.
    #[command(flatten)]
    pub(crate) conn: ConnectionArgs,

    /// The database to plan (required with --uri; default with --dump: the directory's name).
    #[arg(long, value_name = "DB")]
    pub(crate) database: Option<String>,

    /// Query log with the database's operations, read once for every collection: a mongod JSON log (transactions
    /// and joins), a system.profile export, or with --uri `profile` (every member's profiler; the default with
    /// --uri). Repeatable: each mongod writes its own log, give every member's.
    #[arg(long = "queries", value_name = "FILE|profile")]
    pub(crate) queries: Vec<String>,

    /// Shards to plan for (default: 4).
    #[arg(long, value_name = "N")]
    pub(crate) shards: Option<usize>,

    /// Chunk size in MiB.
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_CHUNK_SIZE_MIB)]
    pub(crate) chunk_size: u64,

    /// With --uri: documents to sample per collection (expected size of a uniform sample read in one scan).
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    pub(crate) sample_size: u64,

    /// Memory each collection's sample may hold, e.g. 512M, 2G.
    #[arg(long, value_name = "SIZE", default_value = "1G")]
    pub(crate) memory_limit: String,

    /// With --uri: seconds to find a server before giving up.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub(crate) server_selection_timeout: u64,

    /// With --uri: maxTimeMS sent with every server operation.
    #[arg(long, value_name = "MS", default_value_t = 60_000)]
    pub(crate) max_time_ms: u64,

    /// Only logged/profiled operations at or after this time (RFC 3339, or a date: 2024-06-01).
    #[arg(long, value_name = "TIME")]
    pub(crate) since: Option<String>,

    /// Only logged/profiled operations before this time.
    #[arg(long, value_name = "TIME")]
    pub(crate) until: Option<String>,

    /// The data one shard should hold, e.g. 2T: the plan says how many shards the data needs.
    #[arg(long, value_name = "SIZE")]
    pub(crate) shard_size: Option<String>,

    /// Operations per second one shard sustains: with the logs' rate, how many shards the load needs.
    #[arg(long, value_name = "N")]
    pub(crate) shard_ops: Option<f64>,

    /// The MongoDB version the plan is for, e.g. 8.0 (default: the server's, else a log's build-info line, else the
    /// dump's prelude.json). moveCollection needs 8.0, a sharded $lookup target 5.1.
    #[arg(long, value_name = "X.Y")]
    pub(crate) target_version: Option<String>,

    /// What if: keep this key for a collection and choose the rest around it, e.g.
    /// 'shop.orders={customerId: 1, _id: 1}' (a bare collection name is in the plan's database).
    /// The report gives your plan beside the one shardkey chooses. Repeatable.
    #[arg(long = "key", value_name = "COLL={KEY}")]
    pub(crate) keys: Vec<String>,

    /// What if: keep this collection unsharded (db.coll, or a bare name). Repeatable.
    #[arg(long, value_name = "COLL")]
    pub(crate) unsharded: Vec<String>,

    /// Output format; mongosh: a script that checks the cluster is what the plan was made from,
    /// then applies the plan through mongos (safe to run again).
    #[arg(long, value_enum, default_value_t = PlanFormatArg::Table)]
    pub(crate) format: PlanFormatArg,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum PlanFormatArg {
    Table,
    Json,
    Markdown,
    Html,
    Mongosh,
}

impl From<PlanFormatArg> for Format {
    fn from(f: PlanFormatArg) -> Format {
        match f {
            PlanFormatArg::Table => Format::Table,
            PlanFormatArg::Json => Format::Json,
            PlanFormatArg::Markdown => Format::Markdown,
            PlanFormatArg::Html => Format::Html,
            PlanFormatArg::Mongosh => Format::Mongosh,
        }
    }
}

#[derive(Args, Debug)]
pub(crate) struct WorkloadArgs {
    /// Query log: mongod JSON or legacy text log, system.profile export, config.sampledQueries export. Repeatable:
    /// each mongod writes its own log, give every member's.
    #[arg(long = "queries", value_name = "FILE", required = true)]
    pub(crate) queries: Vec<PathBuf>,

    /// Only namespaces matching this pattern (`*` matches anything), e.g. 'app.*'.
    #[arg(long, value_name = "PATTERN")]
    pub(crate) namespace: Option<String>,

    /// Only operations at or after this time (RFC 3339, or a date: 2024-06-01).
    #[arg(long, value_name = "TIME")]
    pub(crate) since: Option<String>,

    /// Only operations before this time (RFC 3339, or a date).
    #[arg(long, value_name = "TIME")]
    pub(crate) until: Option<String>,

    /// Query shapes shown per namespace (0: all).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub(crate) top: usize,

    /// Order of the shapes: count (most frequent first), total (most time spent first: where
    /// tuning pays most), p95 (slowest first), examined (most documents examined first).
    #[arg(long, value_enum, default_value_t = SortArg::Count)]
    pub(crate) sort: SortArg,

    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub(crate) format: FormatArg,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum SortArg {
    Count,
    Total,
    P95,
    Examined,
}

impl From<SortArg> for crate::app::ShapeOrder {
    fn from(s: SortArg) -> Self {
        use crate::app::ShapeOrder;
        match s {
            SortArg::Count => ShapeOrder::Count,
            SortArg::Total => ShapeOrder::Total,
            SortArg::P95 => ShapeOrder::P95,
            SortArg::Examined => ShapeOrder::Examined,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum FormatArg {
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
pub(crate) struct InputArgs {
    /// Documents: mongoexport JSON/NDJSON (relaxed or canonical Extended JSON) or mongodump .bson[.gz], in insertion order.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["uri", "host", "port"])]
    pub(crate) docs: Option<PathBuf>,

    /// With --docs: the collection's indexes and options, as a mongodump `<coll>.metadata.json` or the JSON output of
    /// `db.coll.getIndexes()` (default: the metadata.json mongodump wrote beside a .bson file).
    #[arg(long, value_name = "FILE", requires = "docs")]
    pub(crate) indexes: Option<PathBuf>,

    /// A live deployment (read-only): --uri (default $MONGODB_URI when --docs is not given) or --host.
    #[command(flatten)]
    pub(crate) conn: ConnectionArgs,

    /// Query log: a file (mongod JSON log, system.profile export, config.sampledQueries[Diff] export), or with --uri
    /// `profile` (<db>.system.profile of every member: the profiler is per mongod) or `sampled` (sampled queries,
    /// 7.0+). Repeatable: each mongod writes its own log, give every member's (counted per file in the report).
    #[arg(long = "queries", value_name = "FILE|profile|sampled")]
    pub(crate) queries: Vec<String>,

    /// The analysed namespace (db.coll). Required with --uri; offline default: from a mongodump path, or the only one in the query logs.
    #[arg(long, value_name = "DB.COLL")]
    pub(crate) collection: Option<String>,

    /// The collection's default collation, e.g. '{locale: "en", strength: 2}' (read from the server with --uri).
    #[arg(long, value_name = "COLLATION")]
    pub(crate) collation: Option<String>,

    /// Chunk size in MiB (jumbo-chunk risk).
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_CHUNK_SIZE_MIB)]
    pub(crate) chunk_size: u64,

    /// The MongoDB version the rules follow, e.g. 6.0 (default: the server's, else a log's build-info line, else a
    /// dump's prelude.json): before 7.1 a single write without the shard key is refused.
    #[arg(long, value_name = "X.Y")]
    pub(crate) target_version: Option<String>,

    /// Model the cluster with N shards (default: the cluster's own, else 4): data, reads, writes and inserts per shard, cost, growth, scale.
    #[arg(long, value_name = "N")]
    pub(crate) shards: Option<usize>,

    /// The collection's document count when --docs holds a sample of it (scales estimates and jumbo risk).
    #[arg(long, value_name = "N")]
    pub(crate) total_docs: Option<u64>,

    /// With --uri: documents to sample (expected size of a uniform sample read in one scan); the whole collection when it is smaller.
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    pub(crate) sample_size: u64,

    /// With --uri: where to read sharding metadata (config.collections/chunks/shards) when --uri is not a mongos,
    /// e.g. the config server replica set. Default: the --uri deployment.
    #[arg(long, value_name = "URI")]
    pub(crate) config_uri: Option<String>,

    /// With --uri: seconds to find a server before giving up.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub(crate) server_selection_timeout: u64,

    /// With --uri: maxTimeMS sent with every server operation.
    #[arg(long, value_name = "MS", default_value_t = 60_000)]
    pub(crate) max_time_ms: u64,

    /// How many most common values to report per key.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub(crate) top: usize,

    /// Replace every sampled value in the output with its BSON type and a stable short hash.
    #[arg(long)]
    pub(crate) redact: bool,

    /// Memory the sample may hold for exact counts and insertion order, e.g. 512M, 2G (default 1G).
    #[arg(long, value_name = "SIZE", default_value = "1G")]
    pub(crate) memory_limit: String,

    /// Only logged/profiled operations at or after this time (RFC 3339, or a date: 2024-06-01).
    #[arg(long, value_name = "TIME")]
    pub(crate) since: Option<String>,

    /// Only logged/profiled operations before this time.
    #[arg(long, value_name = "TIME")]
    pub(crate) until: Option<String>,
}

const CONNECTION: &str = "Connection (as mongosh and mongodump take them)";

/// How to reach a deployment: mongosh's and mongodump's connection flags, merged into `--uri`
/// by `cli::connection` (which says which wins).
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct ConnectionArgs {
    /// A live deployment (read-only): mongodb://... or mongodb+srv://... Default: $MONGODB_URI.
    #[arg(long, value_name = "URI", help_heading = CONNECTION)]
    pub(crate) uri: Option<String>,

    /// Hosts instead of a URI: [replicaSet/]host[:port][,host[:port]...] (default 127.0.0.1:27017).
    #[arg(long, value_name = "HOST", conflicts_with = "uri", help_heading = CONNECTION)]
    pub(crate) host: Option<String>,

    /// The port of hosts given without one.
    #[arg(long, value_name = "PORT", conflicts_with = "uri", help_heading = CONNECTION)]
    pub(crate) port: Option<u16>,

    /// User name (replaces the URI's).
    #[arg(short = 'u', long, value_name = "USER", help_heading = CONNECTION)]
    pub(crate) username: Option<String>,

    /// Password; without a value, asked on the terminal without echo (or read from standard input
    /// when that is not a terminal). Prefer the prompt or --config: a value here shows in `ps`.
    #[arg(short = 'p', long, value_name = "PASSWORD", num_args = 0..=1, default_missing_value = "", help_heading = CONNECTION)]
    pub(crate) password: Option<String>,

    /// The database that holds the user (authSource).
    #[arg(long = "authenticationDatabase", visible_alias = "authentication-database", value_name = "DB", help_heading = CONNECTION)]
    pub(crate) authentication_database: Option<String>,

    /// SCRAM-SHA-1, SCRAM-SHA-256, MONGODB-X509, PLAIN, GSSAPI, MONGODB-AWS (authMechanism).
    #[arg(long = "authenticationMechanism", visible_alias = "authentication-mechanism", value_name = "MECHANISM", help_heading = CONNECTION)]
    pub(crate) authentication_mechanism: Option<String>,

    /// Connect with TLS.
    #[arg(long, help_heading = CONNECTION)]
    pub(crate) tls: bool,

    /// The CA certificates (PEM) that sign the servers' certificates.
    #[arg(long = "tlsCAFile", visible_alias = "tls-ca-file", value_name = "FILE", help_heading = CONNECTION)]
    pub(crate) tls_ca_file: Option<PathBuf>,

    /// The client's certificate and key (PEM), for MONGODB-X509 or servers that ask for one.
    #[arg(long = "tlsCertificateKeyFile", visible_alias = "tls-certificate-key-file", value_name = "FILE", help_heading = CONNECTION)]
    pub(crate) tls_certificate_key_file: Option<PathBuf>,

    /// Accept any server certificate (testing only).
    #[arg(long = "tlsAllowInvalidCertificates", visible_alias = "tls-allow-invalid-certificates", help_heading = CONNECTION)]
    pub(crate) tls_allow_invalid_certificates: bool,

    /// Accept a server certificate issued for another host name (testing only).
    #[arg(long = "tlsAllowInvalidHostnames", visible_alias = "tls-allow-invalid-hostnames", help_heading = CONNECTION)]
    pub(crate) tls_allow_invalid_hostnames: bool,

    /// primary, primaryPreferred, secondary, secondaryPreferred or nearest (readPreference).
    #[arg(long = "readPreference", visible_alias = "read-preference", value_name = "MODE", help_heading = CONNECTION)]
    pub(crate) read_preference: Option<String>,

    /// A YAML file with `password` and/or `uri` (mongodump's --config): secrets off the command line.
    #[arg(long, value_name = "FILE", help_heading = CONNECTION)]
    pub(crate) config: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(crate) struct AnalyzeArgs {
    #[command(flatten)]
    pub(crate) input: InputArgs,

    /// Candidate key, e.g. '{projectId: 1, _id: 1}' or '{_id: "hashed"}' (repeatable). Without it, candidates are proposed.
    #[arg(long = "key", value_name = "KEY")]
    pub(crate) keys: Vec<String>,

    /// With --uri on MongoDB 7.0+: also run the server's analyzeShardKey per candidate and show its numbers.
    #[arg(long)]
    pub(crate) compare_server: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub(crate) format: FormatArg,

    /// Exit with code 1 when the best candidate scores below SCORE (0-100).
    #[arg(long, value_name = "SCORE")]
    pub(crate) fail_under: Option<u32>,

    /// Data residency: FIELD's values must stay on these shards, e.g. 'region=EU:shardEU,US:shardUS'
    /// (a zone per value, named after it or VALUE@ZONE; several shards as shardA+shardB). Only keys led by FIELD
    /// are recommended, and the commands add the zones and their ranges.
    #[arg(long, value_name = "FIELD=VALUE:SHARD,...")]
    pub(crate) residency: Option<String>,

    /// Table output: the full ranking (11 columns, about 180 wide) and lines left unwrapped,
    /// instead of the answer-first report that fits 100 columns.
    #[arg(long)]
    pub(crate) wide: bool,
}

#[derive(Args, Debug)]
pub(crate) struct CheckArgs {
    #[command(flatten)]
    pub(crate) input: InputArgs,

    /// A mongodump database directory: the policy's [plan] plans it whole, and each [[collection]]
    /// without --docs reads its <coll>.bson there.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["uri", "host", "port", "docs"])]
    pub(crate) dump: Option<PathBuf>,

    /// The policy file (TOML). Default: shardkey.toml in the current directory or the nearest parent that has one.
    /// `shardkey check --init` prints one to start from.
    #[arg(long, value_name = "FILE")]
    pub(crate) policy: Option<PathBuf>,

    /// Print a starting policy and exit.
    #[arg(long)]
    pub(crate) init: bool,

    /// Output format: also sarif (SARIF 2.1.0, GitHub code scanning) and gitlab (code quality).
    #[arg(long, value_enum, default_value_t = CheckFormatArg::Table)]
    pub(crate) format: CheckFormatArg,

    /// A previous `check --format json` report: fail only on what got worse (a rule newly
    /// violated, a lower score), so the gate can be adopted on an existing cluster.
    #[arg(long, value_name = "FILE")]
    pub(crate) baseline: Option<PathBuf>,

    /// The files of the change under review (a pull request's diff): a violation is annotated
    /// on the first line of one that names its culprit (the index, a field, the collection),
    /// else on the collection's block of the policy.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub(crate) changed_files: Vec<PathBuf>,

    /// Also write this run's report as JSON to FILE: the baseline a later `--baseline FILE`
    /// compares with (whatever --format prints).
    #[arg(long, value_name = "FILE")]
    pub(crate) write_baseline: Option<PathBuf>,

    /// Write the --format report to FILE and the table to stdout, so a CI job's log shows the
    /// table beside the annotations while the SARIF or GitLab report goes to its file.
    #[arg(long, value_name = "FILE")]
    pub(crate) output_file: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum CheckFormatArg {
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
