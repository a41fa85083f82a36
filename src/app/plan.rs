//! `shardkey plan`: every collection of a database analysed on the same query logs (read
//! once), then the keys chosen together (`crate::plan`).

use super::inputs::{build_report_with, SharedLog};
use super::{GivenChoice, PlanRequest, QuerySource};
use crate::error::{input_error, one_line, usage_error};
use crate::model::collection::CollectionOptions;
use crate::model::query::TxnId;
use crate::model::{KeyKind, Namespace, Op, Query, ShardKey};
use crate::pipeline::Candidates;
use crate::plan::bounds::{Seen, Unplaced};
use crate::plan::outcome::{build, Plan, TxnEvidence};
use crate::plan::{
    given, links, search, single_shard_without, CandidateInput, CandidateNotes, CollectionInput, CollectionKind, Settings, UniqueIndex,
};
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

/// Each choice given, with the index of the collection it names (`plan::given::resolve`).
fn given_targets<'a>(db: &str, namespaces: &[String], given: &'a [GivenChoice]) -> Result<Vec<(usize, &'a GivenChoice)>> {
    let names: Vec<(&str, &str)> = given.iter().map(|g| (g.origin, g.collection.as_str())).collect();
    let at = given::resolve(db, namespaces, &names).map_err(usage_error)?;
    Ok(at.into_iter().zip(given).collect())
}

/// A key as given, measured as `analyze --key` measures it: refused (in one line) when the
/// documents lack its fields or hold arrays there.
fn given_candidate(one: &super::InputRequest, ns: &Namespace, key: &ShardKey, origin: &str, shared: SharedLog) -> Result<CandidateInput> {
    let refused = |why: String| input_error(format!("{origin} {ns}={key}: {why}"));
    let r = build_report_with(one, Some(ns.clone()), Candidates::Named(vec![key.clone()]), false, Some(shared))
        .map_err(|e| refused(one_line(&e)))?;
    let at = r.candidates.iter().position(|c| c.key == *key).ok_or_else(|| refused("not measured".into()))?;
    Ok(candidate_inputs(&r).swap_remove(at))
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

/// Rounds of placement by values (each may find links that place more).
const PLACE_ROUNDS: usize = 4;

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
                notes: candidate_notes(r, c),
                mean_shards_per_op: c.metrics.cluster.cost.mean_shards_per_op,
            }
        })
        .collect()
}

/// What a candidate's analysis warns of and what refuses it, for the plan's words.
fn candidate_notes(r: &Report, c: &crate::report::CandidateReport) -> CandidateNotes {
    use crate::rules::Effect;
    let blocked_by = c
        .constraints
        .iter()
        .filter(|f| f.effect == Effect::Blocked)
        .filter_map(|f| f.index.as_ref())
        .map(|ix| UniqueIndex { name: ix.name.clone(), pattern: ix.pattern(), fields: ix.key.keys().cloned().collect() })
        .collect();
    let invalid = (c.verdict == crate::score::Verdict::Invalid).then(|| match c.constraints.iter().find(|f| f.effect == Effect::Refused) {
        Some(f) => f.message.clone(),
        None => c.reasons.first().map(|x| x.to_string()).unwrap_or_default(),
    });
    CandidateNotes { warning: crate::report::text::first_warning(r, c), blocked_by, invalid }
}

pub(super) fn plan(req: &PlanRequest) -> Result<Plan> {
    let input = &req.input;
    // The targets, and for a live run the session that lists them.
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let mut detected = super::version::Detected::default();
    let mut dump_dir = None;
    let (db, targets, session) = match (&req.dump, &input.uri) {
        (Some(dir), _) => {
            let (db_dir, db) = crate::sources::dump::database_dir(dir, req.database.as_deref())?;
            detected.dump = crate::sources::dump::prelude_version(&db_dir);
            let targets = dump_targets(&db_dir)?;
            dump_dir = Some(db_dir);
            (db, targets, None)
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
            if listed.is_empty() {
                return Err(rt.block_on(session.no_collection_in(&db)));
            }
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
    let files: Vec<&PathBuf> = queries.iter().filter_map(|q| if let QuerySource::File(p) = q { Some(p) } else { None }).collect();
    super::overlap::refuse_repeated_files(&files)?;
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
    if names.len() > 1 {
        super::overlap::refuse_log_and_profile(&log, &names)?;
    }
    let mut sessions: Sessions = match log.sink.take().map(|s| s.as_any().downcast::<Sessions>()) {
        Some(Ok(s)) => *s,
        _ => Sessions::default(),
    };
    sessions.place();
    if sessions.aborted_left_out > 0 {
        tx_notes.push(format!(
            "{} left out: the log's summary lines (id 51802) say they aborted (a write conflict, a timeout); a driver's retry runs as a new transaction and is counted",
            count_of(sessions.aborted_left_out, "aborted transaction", "aborted transactions")
        ));
    }
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
    if sessions.is_sampled() {
        tx_notes.push(format!(
            "the log holds about {} transactions: a uniform sample of {} is kept whole (those whose session id hashes lowest), and the figures are the sample's",
            sessions.transactions_found(),
            sessions.transactions.len()
        ));
    }
    // Links first (placed writes, and the likely ones beside a single transaction), then
    // the writes time left open are placed by the values the open transactions fix.
    let inserts = sessions.transactions.values().any(|ops| ops.iter().any(|q| q.op == Op::Insert));
    let docs = inserts.then(|| document_values(&db, &targets, session.as_ref(), &rt));
    let mut links = find_links(&sessions, docs.as_ref());
    // Each write placed may link its collection to the transaction's others, which places
    // more: again while a round places any (a few rounds in practice).
    for _ in 0..PLACE_ROUNDS {
        if sessions.place_by(|w, could| links::holder_by_values(w, could, &links)) == 0 {
            break;
        }
        links = find_links(&sessions, docs.as_ref());
    }
    // A log holds every database's operations: the plan counts this one's.
    sessions.only_database(&db);
    let prefix = format!("{db}.");
    links.retain(|l| l.a.0.starts_with(&prefix) && l.b.0.starts_with(&prefix));
    tx_notes.extend(super::inputs::profiled_writes_notes(&sessions));
    let transactions: Vec<(&TxnId, &Vec<Query>)> = sessions.transactions.iter().collect();
    // What a transaction seen in part shows is true (its links count), but it never
    // counts as on one shard on the strength of that part: the share is of whole ones.
    let (in_part, whole): (Vec<_>, Vec<_>) = transactions.iter().partition(|(t, ops)| sessions.seen_in_part(t, ops));
    let unbounded: Vec<bool> = in_part.iter().map(|(t, _)| sessions.unbounded(t)).collect();
    // Each statement left open, with the transactions in part that could hold it.
    let at: std::collections::HashMap<&TxnId, usize> = in_part.iter().enumerate().map(|(i, (t, _))| (*t, i)).collect();
    let open: Vec<Unplaced> =
        sessions.open_writes().map(|(q, could)| Unplaced { q, could: could.iter().filter_map(|t| at.get(t).copied()).collect() }).collect();
    let (in_part, whole): (Vec<&[Query]>, Vec<&[Query]>) =
        (in_part.iter().map(|(_, v)| v.as_slice()).collect(), whole.iter().map(|(_, v)| v.as_slice()).collect());
    // Unplaced statements over the kept transactions' share of those found (a sample).
    let kept_share = transactions.len() as f64 / sessions.transactions_found().max(1) as f64;
    let anywhere = (sessions.untimed() as f64 * kept_share.min(1.0)).ceil() as u64;
    if !in_part.is_empty() {
        tx_notes.push(format!(
            "{} seen in part: the profiler writes update/delete statements without their session, and {} could not be placed in one (by client and time, or by the values the transactions fix), so the single-shard share is the range it may take over every placement of them (lowest: each unplaced statement takes off one shard one more of the transactions open on its client then, where its shard differs; highest: each transaction as shown{}); the log of the same window recorded with slowms -1 shows every transaction whole and gives one figure",
            count_of(in_part.len() as u64, "transaction", "transactions"),
            sessions.unplaced(),
            match unbounded.iter().filter(|u| **u).count() {
                0 => String::new(),
                n => format!("; {n} begun before the profiler's first operation may miss statements it never held, and count off one shard at the lowest"),
            }
        ));
    }
    if names.iter().any(|n| n.ends_with(".system.profile")) && !sessions.transactions.is_empty() {
        tx_notes.push(format!(
            "the profiler does not show whether a transaction committed or aborted (commitTransaction and abortTransaction run on admin, and {db}'s profiler holds neither): aborted ones are counted as if they ran, and a transaction of updates and deletes only is not seen at all; the log of the same window (its summary lines, id 51802) tells them apart"
        ));
    }
    let joins: Vec<&Query> = sessions.joins.iter().collect();
    let extra = linked_keys(&links);

    // What if: the collections given (--key, --unsharded), known before any is read.
    let namespaces: Vec<String> = targets.iter().map(|t| format!("{db}.{}", t.name)).collect();
    let given_at = given_targets(&db, &namespaces, &req.given)?;
    let mut given_inputs = Vec::new();
    for (at, g) in &given_at {
        match &g.key {
            None => given_inputs.push((*at, None)),
            Some(_) if targets[*at].kind == CollectionKind::View => {
                return Err(usage_error(format!("{} {}: a view, not a collection: it cannot be sharded", g.origin, namespaces[*at])))
            }
            Some(_) => {}
        }
    }

    // Each collection on its own, on the shared log.
    let shared = (&log, &names[..]);
    let mut inputs = Vec::new();
    let mut notes = Vec::new();
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
        if let Some((at, g @ GivenChoice { key: Some(key), .. })) = given_at.iter().find(|(at, _)| namespaces[*at] == ns_text) {
            given_inputs.push((*at, Some(given_candidate(&one, &ns, key, g.origin, shared)?)));
        }
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
    if let Some(s) = &session {
        detected.live = rt.block_on(s.deployment_version()).ok();
    }
    detected.logs = log.versions.clone();
    let (version, version_report) = super::version::resolve(req.target_version, &detected);
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
        target_version: version.as_ref().map(|v| v.major_minor()),
        shard_size_bytes: req.shard_size_bytes,
        shard_ops_per_second: req.shard_ops_per_second,
        ops_per_second,
        range_bytes: input.chunk_size_bytes,
    };
    if let Some((c, g)) = given_at.iter().find(|(c, g)| g.key.is_none() && inputs[*c].current_key.is_some()) {
        return Err(usage_error(format!(
            "{} {}: sharded already: a plan keeps it sharded (keep, refine or reshard its key)",
            g.origin, inputs[*c].namespace
        )));
    }
    let what_if_links = (!given_at.is_empty()).then(|| links.clone());
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
    let seen = Seen { whole: &whole, in_part: &in_part, unbounded: &unbounded, unplaced: &open, anywhere };
    let mut p = build(&db, &inputs, &found, &settings, ev.clone(), &without, &seen);
    if let Some(links) = what_if_links {
        let (given_inputs, fixed) = given::with_given(&inputs, given_inputs);
        let w = given::Workload { links, transactions: &whole, in_part: &in_part, joins: &joins, seen };
        p.given = Some(given::what_if(&p, &given_inputs, &fixed, w, &settings, ev));
    }
    p.version = version_report;
    // What the plan was made from, for the script to check; the commands say the simple
    // collation where a collection's default is another.
    let planned: Vec<super::basis::Planned> = inputs
        .iter()
        .map(|c| super::basis::Planned {
            name: c.namespace.split_once('.').map_or(&c.namespace[..], |x| x.1),
            current_key: c.current_key.as_ref(),
        })
        .collect();
    p.basis = super::basis::read(&db, &planned, dump_dir.as_deref(), session.as_ref(), &rt);
    let non_simple = p.basis.non_simple_collation();
    crate::plan::steps::with_simple_collation(&mut p, &non_simple);
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

/// Links from the transactions (with the writes likely theirs), the joins, and for
/// inserts the collections' documents.
fn find_links(sessions: &Sessions, docs: Option<&links::DocValues>) -> Vec<links::Link> {
    // The links also read the writes a transaction alone could hold (just before or after
    // its span): likely its own, they tell which collections it writes.
    let likely = sessions.likely();
    let with_likely: Vec<Vec<Query>> = likely
        .iter()
        .filter_map(|(t, more)| Some(sessions.transactions.get(*t)?.iter().chain(more.iter().copied()).cloned().collect()))
        .collect();
    let ops: Vec<&[Query]> = sessions
        .transactions
        .iter()
        .filter(|(t, _)| !likely.contains_key(t))
        .map(|(_, v)| v.as_slice())
        .chain(with_likely.iter().map(Vec::as_slice))
        .collect();
    let mut links = links::find(&ops, &sessions.joins);
    if let Some(docs) = docs {
        let more = links::inferred(&ops, docs, &links);
        links.extend(more);
        let together = links::co_inserted(&ops, docs, &links);
        links.extend(together);
    }
    links
}
