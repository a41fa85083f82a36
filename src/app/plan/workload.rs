//! The plan's workload: the query logs (or the profiler) read once for every collection,
//! their transactions gathered by session and the profiler's sessionless writes placed in
//! them (`sources::queries::sessions`), the links between collections' fields, and the notes
//! on what the logs could not show. `Transactions` is the view the search reads.

use super::database::{Database, Target};
use crate::app::inputs::member_notes;
use crate::app::overlap;
use crate::app::request::{InputRequest, QuerySource};
use crate::error::{input_error, usage_error};
use crate::model::query::TxnId;
use crate::model::{Op, Query};
use crate::plan::bounds::{Seen, Unplaced};
use crate::plan::input::CollectionKind;
use crate::plan::links::{self, DocValues, Link};
use crate::plan::outcome::TxnEvidence;
use crate::sources::live::{LiveSession, ProfileScope};
use crate::sources::queries::sessions::Sessions;
use crate::sources::queries::{read_query_file_into, QueryLog, TXN_LINES};
use crate::util::text::count_of;
use anyhow::Result;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

/// Rounds of placement by values (each may find links that place more).
const PLACE_ROUNDS: usize = 4;

/// Documents read per collection to place the inserts the logs show without their document.
const DOC_VALUES_SAMPLE: usize = 5_000;

/// The query logs read, their transactions placed, and the database's links.
pub(super) struct Workload {
    pub(super) log: QueryLog,
    /// The sources read, by name (files, `<db>.system.profile`).
    pub(super) names: Vec<String>,
    /// The transactions and joins of the plan's database.
    pub(super) sessions: Sessions,
    /// Fields of two of the database's collections that hold the same values.
    pub(super) links: Vec<Link>,
    /// What the logs could not show about transactions, so far (`evidence` adds the rest).
    pub(super) notes: Vec<String>,
    /// Transaction summary lines (id 51802) in the logs.
    pub(super) summary_lines: u64,
}

/// The logs' transactions as the plan counts them: seen whole, or in part (the profiler's
/// sessionless statements), with the statements left unplaced.
pub(super) struct Transactions<'a> {
    whole: Vec<&'a [Query]>,
    in_part: Vec<&'a [Query]>,
    /// Per transaction in part: it may have begun before the profiler's first operation.
    unbounded: Vec<bool>,
    open: Vec<Unplaced<'a>>,
    /// Statements without client or time, over the kept transactions' share of those found.
    anywhere: u64,
    pub(super) joins: Vec<&'a Query>,
    /// Transactions kept (a sample when the log held more).
    kept: usize,
}

impl<'a> Transactions<'a> {
    pub(super) fn seen(&'a self) -> Seen<'a> {
        Seen { whole: &self.whole, in_part: &self.in_part, unbounded: &self.unbounded, unplaced: &self.open, anywhere: self.anywhere }
    }
}

/// Read every query source once, place the transactions' statements, and find the links.
pub(super) fn read(input: &InputRequest, db: &Database, rt: &tokio::runtime::Runtime) -> Result<Workload> {
    let name = &db.name;
    let mut log = QueryLog::default();
    log.window = input.window;
    log.sink = Some(Box::new(Sessions::default()));
    let mut notes = Vec::new();
    // Live without --queries: the profiler, as analyze reads it by default.
    let by_default = input.queries.is_empty() && db.session.is_some();
    let queries = if by_default { vec![QuerySource::Profile] } else { input.queries.clone() };
    if by_default {
        notes.push(format!("no --queries: read {name}.system.profile, as analyze does (give --queries LOG to read a mongod log)"));
    }
    let mut none_why = NoneFound::Logs;
    let names = read_sources(&queries, by_default, db, rt, &mut log, &mut notes, &mut none_why)?;
    let mut sessions: Sessions = match log.sink.take().map(|s| s.as_any().downcast::<Sessions>()) {
        Some(Ok(s)) => *s,
        _ => Sessions::default(),
    };
    sessions.place();
    let summary_lines = log.skipped.get(TXN_LINES).copied().unwrap_or(0);
    notes.extend(found_notes(&sessions, queries.is_empty(), summary_lines, none_why));
    // Links first (placed writes, and the likely ones beside a single transaction), then
    // the writes time left open are placed by the values the open transactions fix.
    let inserts = sessions.transactions.values().any(|ops| ops.iter().any(|q| q.op == Op::Insert));
    let docs = inserts.then(|| document_values(name, &db.targets, db.session.as_ref(), rt));
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
    sessions.only_database(name);
    let prefix = format!("{name}.");
    links.retain(|l| l.a.0.starts_with(&prefix) && l.b.0.starts_with(&prefix));
    notes.extend(profiled_writes_notes(&sessions));
    Ok(Workload { log, names, sessions, links, notes, summary_lines })
}

/// Each source into `log` (transactions into its sink); their names. Profilers read by
/// default that cannot be read leave a note, not an error.
fn read_sources(
    queries: &[QuerySource],
    by_default: bool,
    db: &Database,
    rt: &tokio::runtime::Runtime,
    log: &mut QueryLog,
    notes: &mut Vec<String>,
    none_why: &mut NoneFound,
) -> Result<Vec<String>> {
    let name = &db.name;
    let mut names = Vec::new();
    let files: Vec<&PathBuf> = queries.iter().filter_map(|q| if let QuerySource::File(p) = q { Some(p) } else { None }).collect();
    overlap::refuse_repeated_files(&files)?;
    for q in queries {
        match (q, &db.session) {
            (QuerySource::File(p), _) => {
                read_query_file_into(p, log)?;
                names.push(p.display().to_string());
            }
            (QuerySource::Profile, Some(s)) => {
                // Every member's profiler: a transaction's operations are on the primary, the
                // secondaries' reads on each secondary.
                let read = rt.block_on(s.read_profiles(ProfileScope::Database, &[], log));
                let unreadable = read.none_readable();
                match &unreadable {
                    // Read by default: a user who may not read it still gets a plan, told why.
                    Some(why) if by_default => {
                        notes.push(format!("{name}.system.profile not read: {why}"));
                        *none_why = NoneFound::Unreadable;
                    }
                    Some(why) => return Err(input_error(format!("system.profile not read: {why}"))),
                    None => names.push(format!("{name}.system.profile")),
                }
                notes.extend(member_notes(&read, name));
                // Only the profiler read: what it records says why it may hold no transaction.
                if queries.len() == 1 && unreadable.is_none() {
                    let levels: Vec<i32> =
                        read.members.iter().filter(|m| m.error.is_none()).filter_map(|m| m.profiler.as_ref().map(|p| p.level)).collect();
                    *none_why = NoneFound::Profiler { off: !levels.is_empty() && levels.iter().all(|l| *l == 0) };
                }
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
        overlap::refuse_log_and_profile(log, &names)?;
    }
    Ok(names)
}

/// What the one source read says when it holds no transaction.
#[derive(Clone, Copy)]
enum NoneFound {
    Logs,
    /// The profiler alone; `off`: at level 0 on every member read (it records nothing).
    Profiler {
        off: bool,
    },
    /// The profiler, read by default, could not be read on any member (privileges).
    Unreadable,
}

/// What the logs say of the transactions found: aborted ones left out, none found (and why
/// that may be), a sample kept.
fn found_notes(sessions: &Sessions, no_source: bool, summary_lines: u64, none_why: NoneFound) -> Vec<String> {
    let mut notes = Vec::new();
    if sessions.aborted_left_out > 0 {
        notes.push(format!(
            "{} left out: the log's summary lines (id 51802) say they aborted (the application's abortTransaction, a write conflict, a timeout): their writes were rolled back; a driver's retry runs as a new transaction and is counted",
            count_of(sessions.aborted_left_out, "aborted transaction", "aborted transactions")
        ));
    }
    if no_source {
        notes.push("no query source: transactions and joins not read (give --queries LOG or --queries profile)".to_string());
    } else if sessions.transactions.is_empty() {
        notes.push(if summary_lines > 0 {
            format!("{summary_lines} transaction summary lines but no operation of a transaction: operations are logged only when slower than slowms (set it to -1, or profile at level 2, while recording)")
        } else {
            match none_why {
                NoneFound::Logs => {
                    "no transaction found: the logs show none (slowms may be too high; legacy 2.2–4.2 text logs carry no session ids)".to_string()
                }
                NoneFound::Profiler { off: true } => "no transaction found: the profiler is off (level 0) on every member read, so it recorded nothing; profile at level 2 while the application runs (db.setProfilingLevel(2) on each member), or give --queries LOG".to_string(),
                NoneFound::Unreadable => "no transaction found because none could be read: system.profile is not readable with these privileges (the note above says which role reads it), so the transactions and joins, and every collection's operations, are not known; give --queries LOG, or connect as a user who may read it".to_string(),
                NoneFound::Profiler { off: false } => "no transaction found: the profiler holds none (level 1 records only operations slower than slowms: profile at level 2 while the application runs, or give --queries LOG)".to_string(),
            }
        });
    }
    if sessions.is_sampled() {
        notes.push(format!(
            "the log holds about {} transactions: a uniform sample of {} is kept whole (those whose session id hashes lowest), and the figures are the sample's",
            sessions.transactions_found(),
            sessions.transactions.len()
        ));
    }
    notes
}

impl Workload {
    /// The transactions as the plan counts them. What a transaction seen in part shows is
    /// true (its links count), but it never counts as on one shard on the strength of that
    /// part: the share is of whole ones.
    pub(super) fn transactions(&self) -> Transactions<'_> {
        let s = &self.sessions;
        let transactions: Vec<(&TxnId, &Vec<Query>)> = s.transactions.iter().collect();
        let (in_part, whole): (Vec<_>, Vec<_>) = transactions.iter().partition(|(t, ops)| s.seen_in_part(t, ops));
        let unbounded: Vec<bool> = in_part.iter().map(|(t, _)| s.unbounded(t)).collect();
        // Each statement left open, with the transactions in part that could hold it.
        let at: HashMap<&TxnId, usize> = in_part.iter().enumerate().map(|(i, (t, _))| (*t, i)).collect();
        let open: Vec<Unplaced> =
            s.open_writes().map(|(q, could)| Unplaced { q, could: could.iter().filter_map(|t| at.get(t).copied()).collect() }).collect();
        // Unplaced statements over the kept transactions' share of those found (a sample).
        let kept_share = transactions.len() as f64 / s.transactions_found().max(1) as f64;
        let anywhere = (s.untimed() as f64 * kept_share.min(1.0)).ceil() as u64;
        Transactions {
            whole: whole.iter().map(|(_, v)| v.as_slice()).collect(),
            in_part: in_part.iter().map(|(_, v)| v.as_slice()).collect(),
            unbounded,
            open,
            anywhere,
            joins: s.joins.iter().collect(),
            kept: transactions.len(),
        }
    }

    /// What the logs said about transactions, for the report: the counts, and the notes on
    /// what they could not show (transactions seen in part, the profiler's blind spots).
    pub(super) fn evidence(&self, t: &Transactions, db: &str) -> TxnEvidence {
        let s = &self.sessions;
        let mut notes = self.notes.clone();
        if !t.in_part.is_empty() {
            notes.push(format!(
                "{} seen in part: the profiler writes update/delete statements without their session, and {} could not be placed in one (by client and time, or by the values the transactions fix), so the single-shard share is the range it may take over every placement of them (lowest: each unplaced statement takes off one shard one more of the transactions open on its client then, where its shard differs; highest: each transaction as shown{}); the log of the same window recorded with slowms -1 shows every transaction whole and gives one figure",
                count_of(t.in_part.len() as u64, "transaction", "transactions"),
                s.unplaced(),
                match t.unbounded.iter().filter(|u| **u).count() {
                    0 => String::new(),
                    n => format!("; {n} begun before the profiler's first operation may miss statements it never held, and count off one shard at the lowest"),
                }
            ));
        }
        if self.names.iter().any(|n| n.ends_with(".system.profile")) && !s.transactions.is_empty() {
            notes.push(format!(
                "the profiler does not show whether a transaction committed or aborted (commitTransaction and abortTransaction run on admin, and {db}'s profiler holds neither): aborted ones are counted as if they ran, and a transaction of updates and deletes only is not seen at all; the log of the same window (its summary lines, id 51802) tells them apart"
            ));
        }
        TxnEvidence {
            found: s.transactions_found(),
            // Scaled to the log when the transactions kept are a sample of it.
            seen_in_part: (t.in_part.len() as f64 * s.transactions_found() as f64 / t.kept.max(1) as f64).round() as u64,
            whole_kept: t.whole.len() as u64,
            sources: self.names.clone(),
            summary_lines: self.summary_lines,
            notes,
            joins_found: s.joins_seen,
        }
    }

    /// The logs' rate at their busiest, from the sampled operations' times.
    pub(super) fn load(&self) -> Option<crate::plan::rate::LoadRate> {
        let times: Vec<i64> = self.log.queries.iter().filter_map(|q| q.stats.as_ref().and_then(|s| s.ts_millis)).collect();
        crate::plan::rate::busiest(&times, self.log.found)
    }
}

/// Each collection's fields and values in a sample of its documents (the first ones of a
/// dump, `$sample` live). A collection that cannot be read adds nothing: its analysis
/// says why.
fn document_values(db: &str, targets: &[Target], session: Option<&LiveSession>, rt: &tokio::runtime::Runtime) -> DocValues {
    use crate::sources::DocumentSource;
    let mut out = DocValues::default();
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

/// Links from the transactions (with the writes likely theirs), the joins, and for
/// inserts the collections' documents.
fn find_links(sessions: &Sessions, docs: Option<&DocValues>) -> Vec<Link> {
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
    // The fields each transaction fixes, worked out once (in parallel) for both readers.
    let txns = links::with_fixed(&ops);
    let mut links = links::find(&txns, &sessions.joins);
    if let Some(docs) = docs {
        let more = links::inferred(&txns, docs, &links);
        links.extend(more);
        let together = links::co_inserted(&ops, docs, &links);
        links.extend(together);
    }
    links
}

fn namespaces_counted(by_ns: &BTreeMap<String, u64>) -> String {
    by_ns.iter().map(|(ns, n)| format!("{ns} ({n})")).collect::<Vec<_>>().join(", ")
}
/// What the profiler's sessionless write statements became: placed in their transaction
/// by client and time, or by the values it fixes, or not, and what the plan then cannot see.
fn profiled_writes_notes(s: &Sessions) -> Vec<String> {
    let mut out = Vec::new();
    let by_values: u64 = s.by_values_by_namespace.values().sum();
    let unplaced = s.unplaced();
    let total = s.placed() + by_values + unplaced;
    if s.placed() > 0 {
        out.push(format!(
            "{total} update/delete statements from the profiler carry no session; {} were placed in their transaction by client and time (each ran inside one transaction's span on a client that runs one transaction at a time): {}",
            s.placed(),
            namespaces_counted(&s.placed_by_namespace)
        ));
    }
    if by_values > 0 {
        out.push(format!(
            "{by_values} {} placed in the one transaction of their client open then that fixes the values they write by (its own reads of that document, or of a linked field): {}",
            if s.placed() > 0 { "more were" } else { "update/delete statements from the profiler carry no session and were" },
            namespaces_counted(&s.by_values_by_namespace)
        ));
    }
    if unplaced > 0 {
        let likely: usize = s.likely().values().map(Vec::len).sum();
        out.push(format!(
            "{} update/delete statements from the profiler carry no session and could not be placed in one transaction (by client and time, or by the values the transactions open then fix): {}; {}the plan cannot see which transactions write them{}",
            unplaced,
            namespaces_counted(&s.unplaced_by_namespace()),
            if likely > 0 { format!("{likely} ran just before or after one transaction of their client and count for the links as likely its own; otherwise ") } else { String::new() },
            if likely > 0 { "" } else { ", so it cannot zone those collections with the collections the transactions read or insert into" },
        ));
    }
    out
}
