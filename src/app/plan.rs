//! `shardkey plan`: every collection of a database analysed on the same query logs (read
//! once), then the keys chosen together (`crate::plan`).

use super::inputs::build_report_with;
use super::{PlanRequest, QuerySource};
use crate::error::{input_error, one_line, usage_error};
use crate::model::collection::CollectionOptions;
use crate::model::query::TxnId;
use crate::model::{KeyKind, Namespace, Op, Query, ShardKey};
use crate::pipeline::Candidates;
use crate::plan::outcome::{build, Plan, TxnEvidence};
use crate::plan::{links, search, single_shard_without, CandidateInput, CollectionInput, CollectionKind, Settings};
use crate::propose::{Origin, Proposal};
use crate::report::Report;
use crate::sources::live::{LiveOptions, LiveSession, ProfileScope};
use crate::sources::queries::sessions::Sessions;
use crate::sources::queries::{read_query_file_into, QueryLog, TXN_LINES};
use crate::util::text::count_of;
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

/// Documents read per collection to place the inserts the logs show without their document.
const DOC_VALUES_SAMPLE: usize = 5_000;

/// Each collection's fields and values in a sample of its documents (the first ones of a
/// dump, `$sample` live). A collection that cannot be read adds nothing: its analysis
/// says why.
fn document_values(db: &str, targets: &[Target], session: Option<&LiveSession>, rt: &tokio::runtime::Runtime) -> links::DocValues {
    use crate::sources::DocumentSource;
    let mut out = links::DocValues::default();
    for t in targets.iter().filter(|t| t.kind != CollectionKind::View) {
        let docs = match (&t.bson, session) {
            (Some(p), _) => crate::sources::files::FileSource::new(p.clone()).prescan(DOC_VALUES_SAMPLE),
            (None, Some(s)) => rt.block_on(s.sample_of(&t.name, DOC_VALUES_SAMPLE)),
            (None, None) => continue,
        };
        if let Ok(d) = docs {
            out.add(&format!("{db}.{}", t.name), &d);
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
                mean_shards_per_op: c.metrics.cluster.cost.mean_shards_per_op,
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
    // Live without --queries: the profiler, as analyze reads it by default.
    let by_default = input.queries.is_empty() && session.is_some();
    let queries = if by_default { vec![QuerySource::Profile] } else { input.queries.clone() };
    if by_default {
        tx_notes.push(format!("no --queries: read {db}.system.profile, as analyze does (give --queries LOG to read a mongod log)"));
    }
    for q in &queries {
        match (q, &session) {
            (QuerySource::File(p), _) => {
                read_query_file_into(p, &mut log)?;
                names.push(p.display().to_string());
            }
            (QuerySource::Profile, Some(s)) => {
                // Every member's profiler: a transaction's operations are on the primary, the
                // secondaries' reads on each secondary.
                let read = rt.block_on(s.read_profiles(ProfileScope::Database, &[], &mut log));
                match read.none_readable() {
                    // Read by default: a user who may not read it still gets a plan, told why.
                    Some(why) if by_default => tx_notes.push(format!("{db}.system.profile not read: {why}")),
                    Some(why) => return Err(input_error(format!("system.profile not read: {why}"))),
                    None => names.push(format!("{db}.system.profile")),
                }
                tx_notes.extend(super::inputs::member_notes(&read, &db));
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
    if queries.is_empty() {
        tx_notes.push("no query source: transactions and joins not read (give --queries LOG or --queries profile)".to_string());
    } else if sessions.transactions.is_empty() {
        tx_notes.push(if summary_lines > 0 {
            format!("{summary_lines} transaction summary lines but no operation of a transaction: operations are logged only when slower than slowms (set it to -1, or profile at level 2, while recording)")
        } else {
            "no transaction found: the logs show none (slowms may be too high; legacy 2.2–4.2 text logs carry no session ids)".to_string()
        });
    }
    if sessions.unplaced > 0 {
        let on: Vec<String> = sessions.unplaced_by_namespace.iter().map(|(ns, n)| format!("{ns} ({n})")).collect();
        tx_notes.push(format!(
            "{} update/delete statements from the profiler carry no session: their transactions show only their other operations (a JSON log ties them by connection); the plan cannot see which transactions write {}, so it cannot zone them with the collections those transactions read or insert into",
            sessions.unplaced,
            on.join(", ")
        ));
    }
    if sessions.is_sampled() {
        tx_notes.push(format!(
            "the log holds about {} transactions: a uniform sample of {} is kept whole (those whose session id hashes lowest), and the figures are the sample's",
            sessions.transactions_found(),
            sessions.transactions.len()
        ));
    }
    let transactions: Vec<(&TxnId, &Vec<Query>)> = sessions.transactions.iter().collect();
    let txn_ops: Vec<&[Query]> = transactions.iter().map(|(_, v)| v.as_slice()).collect();
    // What a transaction seen in part shows is true (its links count), but it never
    // counts as on one shard on the strength of that part: the share is of whole ones.
    let (in_part, whole): (Vec<&[Query]>, Vec<&[Query]>) = txn_ops.iter().partition(|ops| sessions.seen_in_part(ops));
    if !in_part.is_empty() {
        tx_notes.push(format!(
            "{} seen in part left out of the single-shard share: the profiler does not tie update/delete statements to their transaction, so each may hold writes it does not show (a mongod log recorded with slowms -1 shows them whole)",
            count_of(in_part.len() as u64, "transaction", "transactions")
        ));
    }
    let joins: Vec<&Query> = sessions.joins.iter().collect();
    let mut links = links::find(&txn_ops, &sessions.joins);
    if txn_ops.iter().any(|ops| ops.iter().any(|q| q.op == Op::Insert)) {
        let docs = document_values(&db, &targets, session.as_ref(), &rt);
        let more = links::inferred(&txn_ops, &docs, &links);
        links.extend(more);
        let together = links::co_inserted(&txn_ops, &docs, &links);
        links.extend(together);
    }
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
        let sampled: Vec<&Query> = log.queries.iter().filter(|q| q.ns == ns_text).collect();
        let write_share = match sampled.len() {
            0 => 0.0,
            n => sampled.iter().filter(|q| !q.op.is_read()).count() as f64 / n as f64,
        };
        let mut ci = CollectionInput {
            namespace: ns_text.clone(),
            kind: t.kind,
            data_bytes: 0,
            num_operations,
            write_share,
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
        range_bytes: input.chunk_size_bytes,
    };
    let found = search(&inputs, links, &whole, &in_part, &joins, &settings);
    let without: Vec<_> = (0..inputs.len()).map(|c| single_shard_without(&inputs, &found, c, &whole, &joins, &settings)).collect();
    let ev = TxnEvidence {
        found: sessions.transactions_found(),
        // Scaled to the log when the transactions kept are a sample of it.
        seen_in_part: (in_part.len() as f64 * sessions.transactions_found() as f64 / transactions.len().max(1) as f64).round() as u64,
        whole_kept: whole.len() as u64,
        sources: names.clone(),
        summary_lines,
        notes: tx_notes,
        joins_found: sessions.joins_seen,
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
