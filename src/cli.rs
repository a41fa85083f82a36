//! Command-line options → a run of the pipeline → an exported report.

use crate::analyze::{self, FileSource, Options, DEFAULT_CHUNK_MIB};
use crate::error::{exit_code_for, input_error, one_line, EXIT_GATE_FAILED, EXIT_OK};
use crate::propose;
use crate::sources::{live, server_compare};
use std::time::Duration;
use crate::model::ShardKey;
use crate::report;
use crate::sources::queries::{read_query_file_into, QueryLog};
use anyhow::Result;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(name = "shardkey", version, about = "Which MongoDB shard key to choose, and why.")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Measure, score and rank candidate shard keys.
    Analyze(AnalyzeArgs),
    /// Gate CI on a policy file: exit 0 pass, 1 violated, 2 usage/configuration/connection error.
    Check(crate::check::CheckArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Markdown,
}

/// Where the documents and queries come from, and how to measure: shared by `analyze` and `check`.
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Documents: mongoexport JSON/NDJSON (relaxed or canonical Extended JSON) or mongodump .bson[.gz], in insertion order.
    #[arg(long, value_name = "FILE", conflicts_with = "uri")]
    pub docs: Option<PathBuf>,

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
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_CHUNK_MIB)]
    pub chunk_size: u64,

    /// Predict the cluster with N shards: chunks, jumbo chunks, and each shard's share of data, reads, writes and inserts.
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
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// Exit with code 1 when the best candidate scores below SCORE (0-100).
    #[arg(long, value_name = "SCORE")]
    pub fail_under: Option<u32>,
}

fn parse_collation(text: &str) -> Result<bson::Document> {
    let v = crate::model::relaxed::parse(text).map_err(|e| input_error(format!("--collation {text}: {e}")))?;
    match bson::Bson::try_from(v) {
        Ok(bson::Bson::Document(d)) => {
            if !d.is_empty() && d.get_str("locale").is_err() {
                return Err(input_error(format!("--collation {text}: a collation needs a locale")));
            }
            Ok(d)
        }
        _ => Err(input_error(format!("--collation {text}: expected an object such as {{locale: \"en\", strength: 2}}"))),
    }
}

fn check_namespace(ns: &str) -> Result<()> {
    match ns.split_once('.') {
        Some((db, coll)) if !db.is_empty() && !coll.is_empty() && !db.contains(['/', '\\', ' ', '"', '$']) => Ok(()),
        _ => Err(input_error(format!("--collection {ns}: expected db.collection"))),
    }
}

/// The URI to use: `--uri`, else `MONGODB_URI` when no --docs is given.
pub fn effective_uri(input: &InputArgs) -> Option<String> {
    input.uri.clone().or_else(|| if input.docs.is_none() { std::env::var("MONGODB_URI").ok() } else { None })
}

/// Run `f` so that no error it returns carries a credential from the URIs.
pub fn scrubbed<T>(input: &InputArgs, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let mut secrets = effective_uri(input).as_deref().map(live::secrets_of).unwrap_or_default();
    secrets.extend(input.config_uri.as_deref().map(live::secrets_of).unwrap_or_default());
    f().map_err(|e| {
        let msg = live::scrub(&one_line(&e), &secrets);
        if exit_code_for(&e) == crate::error::EXIT_USER_ERROR {
            input_error(msg)
        } else {
            anyhow::anyhow!(msg)
        }
    })
}

pub fn parse_keys(keys: &[String]) -> Result<Vec<ShardKey>> {
    keys.iter().map(|k| ShardKey::parse(k).map_err(|e| input_error(e.to_string()))).collect()
}

/// Run `analyze`; returns the process exit code. Errors carry no credentials.
pub fn run_analyze(a: &AnalyzeArgs, out: &mut dyn std::io::Write) -> Result<i32> {
    scrubbed(&a.input, || {
        if a.fail_under.is_some_and(|s| s > 100) {
            return Err(input_error("--fail-under takes a score from 0 to 100"));
        }
        let keys = parse_keys(&a.keys)?;
        let r = build_report(&a.input, a.input.collection.clone(), keys, a.compare_server)?;
        out.write_all(render(&r, a.format).as_bytes())?;
        if let (Some(min), Some(best)) = (a.fail_under, r.candidates.first()) {
            if best.score < min {
                eprintln!("shardkey: best candidate scores {} (below --fail-under {min})", best.score);
                return Ok(EXIT_GATE_FAILED);
            }
        }
        Ok(EXIT_OK)
    })
}

pub fn render(r: &report::Report, format: Format) -> String {
    match format {
        Format::Table => report::table::render(r),
        Format::Json => report::json::render(r),
        Format::Markdown => report::markdown::render(r),
    }
}

/// One report for a namespace: named keys, or proposals when there are none.
pub fn build_report(input: &InputArgs, namespace: Option<String>, keys: Vec<ShardKey>, compare_server: bool) -> Result<report::Report> {
    let a = input;
    if a.chunk_size == 0 {
        return Err(input_error("--chunk-size must be at least 1 MiB"));
    }
    if a.sample_size == 0 {
        return Err(input_error("--sample-size must be at least 1"));
    }
    if a.shards.is_some_and(|n| n == 0 || n > 10_000) {
        return Err(input_error("--shards takes a number of shards from 1 to 10000"));
    }
    let given_collation = a.collation.as_deref().map(parse_collation).transpose()?.filter(|d| !d.is_empty());
    let mut opts = Options {
        keys,
        proposals: vec![],
        namespace: None,
        chunk_size_bytes: a.chunk_size * 1024 * 1024,
        num_most_common: a.top,
        default_collation: given_collation,
        total_docs: a.total_docs,
        shards: a.shards,
        redact: a.redact,
    };
    let mut notes = Vec::new();
    let mut r = match (&a.docs, effective_uri(a)) {
        (Some(docs), _) => {
            let namespace = namespace.or_else(|| crate::sources::docs::namespace_from_dump_path(docs));
            if let Some(ns) = &namespace {
                check_namespace(ns)?;
            }
            let mut log = QueryLog::for_namespace(namespace.clone());
            for q in &a.queries {
                if (q == "profile" || q == "sampled") && !std::path::Path::new(q).exists() {
                    return Err(input_error(format!("--queries {q} reads from a live deployment: give --uri")));
                }
                read_query_file_into(std::path::Path::new(q), &mut log)?;
            }
            opts.namespace = namespace;
            let mut source = FileSource { path: docs.clone() };
            analyze::run(&mut source, &log, a.queries.clone(), &opts)?
        }
        (None, Some(uri)) => run_live(a, &uri, namespace, compare_server, &mut opts, &mut notes)?,
        (None, None) => return Err(input_error("give --docs FILE or --uri URI (or set MONGODB_URI)")),
    };
    r.notes.extend(notes);
    if a.redact {
        r.notes.push("--redact: values are shown as <BSON type>#<hash>; the hash is stable across runs, not secret for values that are easy to guess".into());
    }
    Ok(r)
}

/// The live path: connect, read what the deployment holds, then the same pipeline.
fn run_live(
    a: &InputArgs,
    uri: &str,
    namespace: Option<String>,
    compare_server: bool,
    opts: &mut Options,
    notes: &mut Vec<String>,
) -> Result<report::Report> {
    let ns = namespace.ok_or_else(|| input_error("--uri needs --collection db.coll"))?;
    check_namespace(&ns)?;
    opts.namespace = Some(ns.clone());
    let lo = live::LiveOptions {
        uri: uri.to_string(),
        namespace: ns.clone(),
        server_selection_timeout: Duration::from_secs(a.server_selection_timeout.max(1)),
        max_time: Duration::from_millis(a.max_time_ms.max(1)),
    };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    // Connect and read what the deployment holds; the sample then streams during the pass.
    let (session, info, log, sources, sharding, prescan, keys) = rt.block_on(async {
        let session = live::LiveSession::open(&lo).await?;
        let info = session.collection_info().await?;
        if info.count == 0 {
            return Err(input_error(format!("collection {ns} on {} is empty: nothing to analyse", session.redacted)));
        }
        if opts.default_collation.is_none() {
            opts.default_collation = info.default_collation.clone();
        }
        // Already sharded? Then audit its chunks and analyse its key beside the candidates.
        let sharding = match session.read_sharding(a.config_uri.as_deref(), lo.server_selection_timeout).await {
            Ok(m) => m,
            Err(e) if a.config_uri.is_none() => {
                notes.push(format!("sharding metadata not read: {}", one_line(&e)));
                None
            }
            Err(e) => return Err(e),
        };
        if let Some(m) = &sharding {
            notes.push(format!(
                "{ns} is sharded on {} ({} chunks on {} shards, config.chunks by {}); the current key is analysed on its real chunks",
                m.key,
                m.chunks.len(),
                m.shards.len(),
                m.chunk_format
            ));
            if !opts.keys.is_empty() && !opts.keys.contains(&m.key) {
                opts.keys.push(m.key.clone());
            }
        }
        // Query logs: what was asked for, or whatever exists.
        let mut log = QueryLog::for_namespace(Some(ns.clone()));
        let mut sources = Vec::new();
        let auto = a.queries.is_empty();
        let wanted: Vec<String> = if auto { vec!["profile".into(), "sampled".into()] } else { a.queries.clone() };
        for q in &wanted {
            match q.as_str() {
                "profile" => {
                    let l = session.read_profile().await?;
                    let n = l.queries.len();
                    if n > 0 || !auto {
                        sources.push(format!("{}.system.profile", ns.split('.').next().unwrap_or("")));
                        notes.push(format!("read {n} operations on {ns} from system.profile"));
                        log.merge(l);
                    }
                }
                "sampled" => {
                    let (l, how) = session.read_sampled().await?;
                    let n = l.queries.len() + l.diffs.len();
                    if n > 0 || !auto {
                        sources.push(how.to_string());
                        notes.push(format!("read {n} sampled queries and diffs on {ns} through {how}"));
                        log.merge(l);
                    }
                }
                file => {
                    sources.push(file.to_string());
                    read_query_file_into(std::path::Path::new(file), &mut log)?;
                }
            }
        }
        if auto && sources.is_empty() {
            notes.push(format!("no query sample found for {ns} (system.profile and sampled queries are empty): targeting is not measured"));
        }
        let prescan = if opts.keys.is_empty() { session.prescan(1000).await? } else { vec![] };
        if opts.keys.is_empty() {
            let queries: Vec<&crate::model::Query> = log.queries.iter().filter(|q| q.ns == ns).collect();
            let current: Vec<propose::Proposal> =
                sharding.iter().map(|m| propose::Proposal { key: m.key.clone(), why: "current shard key".into() }).collect();
            opts.proposals = propose::merge([current, propose::propose(&prescan, &queries), propose::from_indexes(&info.indexes)]);
        }
        let keys: Vec<ShardKey> = if opts.keys.is_empty() { opts.proposals.iter().map(|p| p.key.clone()).collect() } else { opts.keys.clone() };
        Ok::<_, anyhow::Error>((session, info, log, sources, sharding, prescan, keys))
    })?;
    let coll_name = ns.split_once('.').map(|(_, c)| c.to_string()).unwrap_or_default();
    let mut source = live::LiveSource {
        name: format!("{} ({ns})", session.redacted),
        coll_name,
        session: &session,
        rt: &rt,
        keys,
        info: info.clone(),
        sample_size: a.sample_size,
        prescan,
        sharding: sharding.clone(),
    };
    let mut r = analyze::run(&mut source, &log, sources, opts)?;
    r.audit = sharding.as_ref().map(|m| m.audit_report(opts.redact));
    if compare_server {
        if info.server_version >= (7, 0) {
            for c in &mut r.candidates {
                let key = ShardKey::parse(&c.key.to_string())?;
                match rt.block_on(session.analyze_shard_key(&key)).and_then(|reply| server_compare::summarize_reply(&reply)) {
                    Ok(v) => c.server_analyze_shard_key = Some(v),
                    Err(e) => notes.push(format!("analyzeShardKey for {key}: {}", one_line(&e))),
                }
            }
        } else {
            notes.push(format!(
                "--compare-server: the server is MongoDB {}.{}; analyzeShardKey needs 7.0 or newer",
                info.server_version.0, info.server_version.1
            ));
        }
    }
    Ok(r)
}
