//! Command-line options → a run of the pipeline → an exported report.

use crate::analyze::{self, FileSource, Options, DEFAULT_CHUNK_MIB};
use crate::error::{input_error, EXIT_GATE_FAILED, EXIT_OK};
use crate::model::ShardKey;
use crate::report;
use crate::sources::queries::{read_query_file, QueryLog};
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
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Markdown,
}

#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// Documents: mongoexport JSON/NDJSON (relaxed or canonical Extended JSON) or mongodump .bson[.gz], in insertion order.
    #[arg(long, value_name = "FILE")]
    pub docs: PathBuf,

    /// Query log: mongod JSON log, system.profile export, config.sampledQueries[Diff] export (repeatable).
    #[arg(long = "queries", value_name = "FILE")]
    pub queries: Vec<PathBuf>,

    /// Candidate key, e.g. '{projectId: 1, _id: 1}' or '{_id: "hashed"}' (repeatable). Without it, candidates are proposed.
    #[arg(long = "key", value_name = "KEY")]
    pub keys: Vec<String>,

    /// The analysed namespace (db.coll). Default: from a mongodump path, or the only one in the query logs.
    #[arg(long, value_name = "DB.COLL")]
    pub collection: Option<String>,

    /// The collection's default collation, e.g. '{locale: "en", strength: 2}'.
    #[arg(long, value_name = "COLLATION")]
    pub collation: Option<String>,

    /// Chunk size in MiB (jumbo-chunk risk).
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_CHUNK_MIB)]
    pub chunk_size: u64,

    /// The collection's document count when --docs holds a sample of it (scales estimates and jumbo risk).
    #[arg(long, value_name = "N")]
    pub total_docs: Option<u64>,

    /// How many most common values to report per key.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub top: usize,

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

/// Run `analyze`; returns the process exit code.
pub fn run_analyze(a: &AnalyzeArgs, out: &mut dyn std::io::Write) -> Result<i32> {
    let keys = a.keys.iter().map(|k| ShardKey::parse(k).map_err(|e| input_error(e.to_string()))).collect::<Result<Vec<_>>>()?;
    if a.chunk_size == 0 {
        return Err(input_error("--chunk-size must be at least 1 MiB"));
    }
    if a.fail_under.is_some_and(|s| s > 100) {
        return Err(input_error("--fail-under takes a score from 0 to 100"));
    }
    let default_collation = a.collation.as_deref().map(parse_collation).transpose()?.filter(|d| !d.is_empty());
    let mut log = QueryLog::default();
    for q in &a.queries {
        log.merge(read_query_file(q)?);
    }
    let namespace = a.collection.clone().or_else(|| crate::sources::docs::namespace_from_dump_path(&a.docs));
    if let Some(ns) = &namespace {
        if !ns.contains('.') || ns.starts_with('.') || ns.ends_with('.') {
            return Err(input_error(format!("--collection {ns}: expected db.collection")));
        }
    }
    let opts = Options {
        keys,
        namespace,
        chunk_size_bytes: a.chunk_size * 1024 * 1024,
        num_most_common: a.top,
        default_collation,
        total_docs: a.total_docs,
    };
    let mut source = FileSource { path: a.docs.clone() };
    let sources = a.queries.iter().map(|p| p.display().to_string()).collect();
    let r = analyze::run(&mut source, &log, sources, &opts)?;
    let text = match a.format {
        Format::Table => report::table::render(&r),
        Format::Json => report::json::render(&r),
        Format::Markdown => report::markdown::render(&r),
    };
    out.write_all(text.as_bytes())?;
    if let (Some(min), Some(best)) = (a.fail_under, r.candidates.first()) {
        if best.score < min {
            eprintln!("shardkey: best candidate scores {} (below --fail-under {min})", best.score);
            return Ok(EXIT_GATE_FAILED);
        }
    }
    Ok(EXIT_OK)
}
