//! `shardkey plan`: every collection of a database analysed on the same query logs (read
//! once), then the keys chosen together (`crate::plan`).

use super::inputs::build_report_with;
use super::{PlanRequest, QuerySource};
use crate::error::{input_error, one_line, usage_error};
use crate::model::collection::CollectionOptions;
use crate::model::query::TxnId;
use crate::model::{KeyKind, Namespace, Query, ShardKey};
use crate::pipeline::Candidates;
use crate::plan::outcome::{build, Plan, TxnEvidence};
use crate::plan::{links, search, single_shard_without, CandidateInput, CollectionInput, CollectionKind, Settings};
use crate::propose::{Origin, Proposal};
use crate::report::Report;
use crate::sources::live::{LiveOptions, LiveSession, ProfileScope};
use crate::sources::queries::sessions::Sessions;
use crate::sources::queries::{read_query_file_into, QueryLog, TXN_LINES};
use anyhow::Result;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

/// One collection to analyse: where its documents are (offline) and what it is.
struct Target {
    name: String,
    kind: CollectionKind,
    bson: Option<PathBuf>,
}

pub(super) fn run(req: &PlanRequest, out: &mut dyn Write) -> Result<()> {
    let plan = plan(req)?;
    crate::report::write_plan(&plan, req.format, out)?;
    Ok(())
}

fn kind_of(typ: &str, options: &CollectionOptions) -> CollectionKind {
    if typ == "view" || options.view_on.is_some() {
        CollectionKind::View
    } else if typ == "timeseries" || options.time_series.is_some() {
        CollectionKind::TimeSeries
    } else if options.capped {
        CollectionKind::Capped
    } else {
        CollectionKind::Collection
    }
}

/// The collections of a mongodump database directory: `<coll>.bson` and `<coll>.metadata.json`.
fn dump_targets(dir: &std::path::Path) -> Result<Vec<Target>> {
    let entries = std::fs::read_dir(dir).map_err(|e| input_error(format!("--dump {}: {e}", dir.display())))?;
    let mut by_name: BTreeMap<String, Target> = BTreeMap::new();
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().to_string();
        let (name, is_bson) = if let Some(n) = file.strip_suffix(".bson").or_else(|| file.strip_suffix(".bson.gz")) {
            (n.to_string(), true)
        } else if let Some(n) = file.strip_suffix(".metadata.json").or_else(|| file.strip_suffix(".metadata.json.gz")) {
            (n.to_string(), false)
        } else {
            continue;
        };
        if name.starts_with("system.") {
            continue;
        }
        let t = by_name.entry(name.clone()).or_insert(Target { name, kind: CollectionKind::Collection, bson: None });
        if is_bson {
            t.bson = Some(e.path());
        } else {
            let m = crate::sources::files::read_metadata(&e.path())?;
            t.kind = kind_of("", &m.options);
        }
    }
    if by_name.is_empty() {
        return Err(input_error(format!(
            "--dump {}: no <collection>.bson or .metadata.json files (a mongodump database directory)",
            dir.display()
        )));
    }
    Ok(by_name.into_values().collect())
}

/// Keys on the fields other collections share values with (co-location candidates).
fn linked_keys(links: &[links::Link]) -> BTreeMap<String, Vec<Proposal>> {
    let mut out: BTreeMap<String, Vec<Proposal>> = BTreeMap::new();
    for l in links {
        for (me, other) in [(&l.a, &l.b), (&l.b, &l.a)] {
            let why = format!("its values are {}.{}'s ({})", other.0, other.1, l.seen_in);
            let f = &me.1;
            let mut keys = vec![ShardKey::single(f, KeyKind::Range), ShardKey::single(f, KeyKind::Hashed)];
            if f != "_id" {
                if let Ok(k) = ShardKey::parse(&format!("{{\"{f}\": 1, _id: 1}}")) {
                    keys.push(k);
                }
            }
            let v = out.entry(me.0.clone()).or_default();
            for key in keys {
                if !v.iter().any(|p| p.key == key) {
                    v.push(Proposal { key, origin: Origin::Proposed(why.clone()) });
                }
            }
        }
    }
    out
}

fn candidate_inputs(r: &Report) -> Vec<CandidateInput> {
    r.candidates
        .iter()
        .map(|c| {
            let shards = &c.metrics.cluster.at_scale.shards;
            CandidateInput {
                key: c.key.clone(),
                score: c.score,
                valid: !matches!(c.verdict, crate::score::Verdict::Invalid | crate::score::Verdict::Blocked),
                data_share: shards.iter().map(|s| s.data_percent / 100.0).collect(),
                ops_share: shards.iter().map(|s| s.operations_percent / 100.0).collect(),
                zone_splits: c.metrics.cluster.zone_splits.clone(),
                needs_index: c.metrics.supporting_index.as_ref().map(|s| s.name.is_none()),
                max_useful_shards: c.metrics.cluster.growth.max_useful_shards,
            }
        })
        .collect()
}

fn plan(req: &PlanRequest) -> Result<Plan> {
    let input = &req.input;
    // The targets, and for a live run the session that lists them.
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let (db, targets, session) = match (&req.dump, &input.uri) {
        (Some(dir), _) => {
            let db = req
                .database
                .clone()
                .or_else(|| dir.canonicalize().ok()?.file_name().map(|n| n.to_string_lossy().to_string()))
                .ok_or_else(|| usage_error("--dump DIR: give --database DB"))?;
            (db, dump_targets(dir)?, None)
        }
        (None, Some(uri)) => {
            let db = req
                .database
                .clone()
                .ok_or_else(|| usage_error("--uri needs --database DB (or the database in the URI: mongodb://host/DB)"))?;
            let ns = Namespace::parse(&format!("{db}.system.profile"))
                .map_err(|_| usage_error(format!("--database {db}: not a database name")))?;
            let lo = LiveOptions {
                uri: uri.clone(),
                namespace: ns,
                server_selection_timeout: input.server_selection_timeout,
                max_time: input.max_time,
            };
            let session = rt.block_on(LiveSession::open(&lo))?;
            let listed = rt.block_on(session.list_collections())?;
            let targets = listed
                .into_iter()
                .map(|(name, typ, options)| {
                    let o = CollectionOptions::from_entry(&bson::doc! {"type": typ.clone(), "options": options});
                    Target { name, kind: kind_of(&typ, &o), bson: None }
                })
                .collect();
            (db, targets, Some(session))
        }
        (None, None) => return Err(usage_error("give --dump DIR (a mongodump database directory) or --uri URI with --database DB")),
    };

    // The query logs, once, for every collection; transactions and joins beside.
    let mut log = QueryLog::default();
    log.window = input.window;
    log.sink = Some(Box::new(Sessions::default()));
    let mut names = Vec::new();
    let mut tx_notes = Vec::new();
    for q in &input.queries {
        match (q, &session) {
            (QuerySource::File(p), _) => {
                read_query_file_into(p, &mut log)?;
                names.push(p.display().to_string());
            }
            (QuerySource::Profile, Some(s)) => {
                // Every member's profiler: a transaction's operations are on the primary, the
                // secondaries' reads on each secondary.
                let read = rt.block_on(s.read_profiles(ProfileScope::Database, &[], &mut log));
                if let Some(why) = read.none_readable() {
                    return Err(input_error(format!("system.profile not read: {why}")));
                }
                tx_notes.extend(super::inputs::member_notes(&read, &db));
                names.push(format!("{db}.system.profile"));
            }
            (QuerySource::Profile, None) => return Err(usage_error("--queries profile reads from a live deployment: give --uri")),
            (QuerySource::Sampled, _) => {
                return Err(usage_error(
                    "plan reads logs and the profiler; sampled queries carry no transactions: export them and give the file",
                ))
            }
        }
    }
    let sessions: Sessions = match log.sink.take().map(|s| s.as_any().downcast::<Sessions>()) {
        Some(Ok(s)) => *s,
        _ => Sessions::default(),
    };
    let summary_lines = log.skipped.get(TXN_LINES).copied().unwrap_or(0);
    if input.queries.is_empty() {
        tx_notes.push("no query source: transactions and joins not read (give --queries LOG or --queries profile)".to_string());
    } else if sessions.transactions.is_empty() {
        tx_notes.push(if summary_lines > 0 {
            format!("{summary_lines} transaction summary lines but no operation of a transaction: operations are logged only when slower than slowms (set it to -1, or profile at level 2, while recording)")
        } else {
            "no transaction found: the logs show none (slowms may be too high; legacy 2.2–4.2 text logs carry no session ids)".to_string()
        });
    }
    if sessions.unplaced > 0 {
        tx_notes.push(format!(
            "{} update/delete statements from the profiler carry no session: their transactions show only their other operations (a JSON log ties them by connection)",
            sessions.unplaced
        ));
    }
    if sessions.transactions_not_kept > 0 {
        tx_notes.push(format!(
            "{} transactions past the first {} were counted, not kept",
            sessions.transactions_not_kept,
            crate::sources::queries::sessions::MAX_TRANSACTIONS
        ));
    }
    let transactions: Vec<(&TxnId, &Vec<Query>)> = sessions.transactions.iter().collect();
    let txn_ops: Vec<&[Query]> = transactions.iter().map(|(_, v)| v.as_slice()).collect();
    let joins: Vec<&Query> = sessions.joins.iter().collect();
    let links = links::find(&txn_ops, &sessions.joins);
    let extra = linked_keys(&links);

    // Each collection on its own, on the shared log.
    let shared = (&log, &names[..]);
    let mut inputs = Vec::new();
    let mut notes = Vec::new();
    let mut version = req.target_version;
    let mut shards_from = None;
    for t in &targets {
        let ns_text = format!("{db}.{}", t.name);
        let num_operations = log.by_namespace.get(&ns_text).copied().unwrap_or(0);
        let mut ci = CollectionInput {
            namespace: ns_text.clone(),
            kind: t.kind,
            data_bytes: 0,
            num_operations,
            candidates: Vec::new(),
            not_analysed: None,
            current_key: None,
        };
        if t.kind == CollectionKind::View {
            inputs.push(ci);
            continue;
        }
        let ns = Namespace::parse(&ns_text).map_err(|_| input_error(format!("{ns_text}: not a namespace")))?;
        let mut one = input.clone();
        one.docs = t.bson.clone();
        one.indexes = None;
        let more = extra.get(&ns_text).cloned().unwrap_or_default();
        let cands = if more.is_empty() { Candidates::FromPrescan } else { Candidates::FromPrescanAnd(more) };
        match build_report_with(&one, Some(ns), cands, false, Some(shared)) {
            Ok(r) => {
                if let Some(best) = r.candidates.first() {
                    ci.data_bytes = best.metrics.cluster.scale.data_bytes;
                    shards_from.get_or_insert_with(|| best.metrics.cluster.num_shards_from.to_string());
                }
                ci.current_key = r.audit.as_ref().map(|a| a.shard_key.clone());
                ci.candidates = candidate_inputs(&r);
            }
            Err(e) => {
                notes.push(format!("{ns_text}: not analysed: {}", one_line(&e)));
                ci.not_analysed = Some(one_line(&e));
            }
        }
        inputs.push(ci);
    }
    if version.is_none() {
        if let Some(s) = &session {
            version = rt.block_on(s.version()).ok();
        }
    }
    let shards = inputs.iter().flat_map(|c| c.candidates.first()).map(|c| c.data_share.len()).next().unwrap_or(input.shards.unwrap_or(4));
    // The logs' rate: operations found over the time the sampled operations span.
    let times: Vec<i64> = log.queries.iter().filter_map(|q| q.stats.as_ref().and_then(|s| s.ts_millis)).collect();
    let ops_per_second = match (times.iter().min(), times.iter().max()) {
        (Some(a), Some(b)) if b > a => Some(log.found as f64 * 1000.0 / (b - a) as f64),
        _ => None,
    };
    let settings = Settings {
        shards,
        shards_from: shards_from.unwrap_or_else(|| format!("{shards}")),
        target_version: version,
        shard_size_bytes: req.shard_size_bytes,
        shard_ops_per_second: req.shard_ops_per_second,
        ops_per_second,
    };
    let found = search(&inputs, &txn_ops, &joins, &settings);
    let without: Vec<_> = (0..inputs.len()).map(|c| single_shard_without(&inputs, &found, c, &txn_ops, &joins, &settings)).collect();
    let ev = TxnEvidence {
        found: transactions.len() as u64 + sessions.transactions_not_kept,
        sources: names.clone(),
        summary_lines,
        notes: tx_notes,
        joins_found: sessions.joins.len() as u64 + sessions.joins_not_kept,
    };
    let mut p = build(&db, &inputs, &found, &settings, ev, &without);
    if version.is_none() {
        p.notes.push(
            "target version not known (give --target-version): moveCollection (8.0) and sharded $lookup targets (5.1) are not used".into(),
        );
    }
    let total: u64 = inputs.iter().map(|c| c.data_bytes).sum();
    if total < (settings.shards as u64) * input.chunk_size_bytes {
        p.notes.push(format!(
            "the database holds {} of data, less than one range ({} MiB) per shard: it fits on one replica set today; the plan is for when it grows (figures at scale)",
            crate::util::text::mib(total),
            input.chunk_size_bytes >> 20
        ));
    }
    p.notes.extend(notes);
    Ok(p)
}
