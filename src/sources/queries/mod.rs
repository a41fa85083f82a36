//! Query logs in every format we read, turned into `Query` values:
//! - mongod 4.4+ JSON log "Slow query" lines (id 51803), including per-statement
//!   `WRITE` lines and `getMore` through `originatingCommand`;
//! - `system.profile` documents (exported as JSON lines, a JSON array or BSON);
//! - 7.0 `config.sampledQueries` and `config.sampledQueriesDiff` documents;
//! - legacy text logs of MongoDB 2.2 to 4.2 (`legacy`).
//!
//! The format is detected per record, so one file may mix them.

//!
//! One file per format (`slow_log`, `profile`, `sampled`), sharing the command
//! parser (`command`); `FORMATS` lists them in detection order.

mod command;
mod legacy;
mod light;
pub use light::hand_scan_agrees;
mod profile;
mod sampled;
pub(crate) mod sessions;
mod slow_log;

use super::records::{json_to_document, numbered_lines, open, parse_json_document_lenient, Layout, Record};
use crate::error::input_error;
use crate::model::{OpStats, Query};
use anyhow::Result;
use bson::{Bson, Document};
use slow_log::{FastLogLine, SlowQuery};
use std::collections::BTreeMap;
use std::path::Path;

/// A shard key update diff from `config.sampledQueriesDiff`.
#[derive(Debug, Clone)]
pub(crate) struct KeyDiff {
    pub(crate) ns: String,
    pub(crate) diff: Document,
}

/// Operations read from query logs. Memory stays bounded: at most `limit`
/// operations are kept, a uniform sample (Algorithm R) of those offered; every
/// operation is still counted per namespace.
#[derive(Debug)]
pub struct QueryLog {
    pub queries: Vec<Query>,
    pub(crate) diffs: Vec<KeyDiff>,
    /// Records (lines or documents) read.
    pub(crate) records: u64,
    /// Records not turned into a query, by reason.
    pub(crate) skipped: BTreeMap<String, u64>,
    /// Operations found, per namespace.
    pub by_namespace: BTreeMap<String, u64>,
    /// When set, only this namespace's operations are kept.
    pub(crate) only: Option<String>,
    /// Operations offered to the sample (after the namespace filter).
    pub(crate) offered: u64,
    /// Operations found (before the namespace filter).
    pub(crate) found: u64,
    pub(crate) limit: usize,
    rng: crate::util::splitmix::SplitMix64,
    /// The cost figures of the record being read, attached to every operation it yields.
    pub(crate) pending: Option<OpStats>,
    /// The logging connection (`ctx`) of the line being read, when a sink wants sessions.
    pub(crate) pending_conn: Option<String>,
    /// `--since`/`--until` (milliseconds since the epoch): operations outside are skipped.
    pub(crate) window: (Option<i64>, Option<i64>),
    /// Sees every operation (not only the sample): `shardkey workload`.
    pub(crate) sink: Option<Box<dyn OpSink>>,
    /// While reading: `queries[j]` is a placeholder for the operation `deferred[j]` names,
    /// read in full once the file is read (`resolve`). Empty, or as long as `queries`.
    deferred: Vec<Option<Deferred>>,
    /// A part of a block read light: its operations in order, for `merge_block` to offer.
    staging: bool,
    staged: Vec<Staged>,
}

/// An operation a part holds for the merge: parsed (rare on the light path), or only
/// its namespace and line.
#[derive(Debug)]
enum Staged {
    Ready(Box<Query>),
    Light { ns: std::sync::Arc<str>, at: InBlock },
}

/// Where the line of an operation a light read counted is in the block being read.
#[derive(Debug)]
struct InBlock {
    start: usize,
    len: usize,
    lineno: u64,
    /// Which of the line's operations.
    index: u32,
}

/// What holds a deferred operation's slot until `resolve`. The empty filter is cloned
/// (a new `Document` draws a hasher seed).
fn placeholder(ns: String) -> Query {
    static EMPTY: std::sync::LazyLock<Document> = std::sync::LazyLock::new(Document::new);
    Query::new(crate::model::Op::Find, ns, EMPTY.clone(), crate::model::QueryOrigin::SlowQueryLog)
}

/// An operation counted from a light read of its line (`light`), parsed only if kept: its
/// line copied out of its block (checked as UTF-8 there; `resolve` checks it again, in parallel).
#[derive(Debug, Clone)]
struct Deferred {
    text: std::sync::Arc<[u8]>,
    lineno: u64,
    index: u32,
}

/// Something that sees every operation read, in parallel parts merged in file order.
pub(crate) trait OpSink: Send + Sync + std::fmt::Debug {
    fn op(&mut self, q: &Query);
    /// A write command logged without its statements, on connection `conn`: the statements
    /// logged just before on that connection (its `WRITE` lines) ran in `txn` (None: in none).
    fn claim(&mut self, _conn: &str, _txn: Option<crate::model::query::TxnId>) {}
    /// An empty sink of the same kind, for a parallel part.
    fn fresh(&self) -> Box<dyn OpSink>;
    /// Take in a part's sink (made by `fresh`).
    fn merge(&mut self, other: Box<dyn OpSink>);
    fn as_any(self: Box<Self>) -> Box<dyn std::any::Any>;
}

/// Why an operation outside `--since`/`--until` was left out.
pub(crate) const OUTSIDE_WINDOW: &str = "operations outside --since/--until";

/// Operations kept for classification; beyond, a uniform sample.
pub(crate) const QUERY_SAMPLE: usize = 100_000;

impl Default for QueryLog {
    fn default() -> Self {
        QueryLog {
            queries: Vec::new(),
            diffs: Vec::new(),
            records: 0,
            skipped: BTreeMap::new(),
            by_namespace: BTreeMap::new(),
            only: None,
            offered: 0,
            found: 0,
            limit: QUERY_SAMPLE,
            rng: crate::util::splitmix::SplitMix64(0x9e37_79b9),
            pending: None,
            pending_conn: None,
            window: (None, None),
            sink: None,
            deferred: Vec::new(),
            staging: false,
            staged: Vec::new(),
        }
    }
}

impl QueryLog {
    /// A log that keeps only `ns`'s operations (all when None).
    pub(crate) fn for_namespace(ns: Option<String>) -> Self {
        QueryLog { only: ns, ..Default::default() }
    }

    pub(crate) fn skip(&mut self, reason: &str) {
        match self.skipped.get_mut(reason) {
            Some(n) => *n += 1,
            None => {
                self.skipped.insert(reason.to_string(), 1);
            }
        }
    }

    /// Whether operations need their cost figures and time (`workload`, `--since`/`--until`).
    pub(crate) fn wants_stats(&self) -> bool {
        self.sink.is_some() || self.window != (None, None)
    }

    /// A part for a parallel chunk: no sample limit, the same window, a fresh sink.
    fn part(&self) -> QueryLog {
        QueryLog { limit: usize::MAX, window: self.window, sink: self.sink.as_ref().map(|s| s.fresh()), ..Default::default() }
    }

    /// A part that stages its operations for `merge_block` to offer, light ones compact.
    fn staging_part(&self) -> QueryLog {
        QueryLog { staging: true, ..self.part() }
    }

    /// Count an operation and offer it to the sample.
    pub(crate) fn push(&mut self, mut q: Query) {
        if let Some(s) = &self.pending {
            q.stats = Some(Box::new(s.clone()));
        }
        if let (Some(t), (since, until)) = (q.stats.as_ref().and_then(|s| s.ts_millis), self.window) {
            if since.is_some_and(|x| t < x) || until.is_some_and(|x| t >= x) {
                self.skip(OUTSIDE_WINDOW);
                return;
            }
        } else if self.window != (None, None) {
            self.skip("operations without a time (--since/--until cannot place them)");
            return;
        }
        if let Some(sink) = &mut self.sink {
            if let Some(conn) = &self.pending_conn {
                q.session.get_or_insert_with(Default::default).conn = Some(conn.clone());
            }
            sink.op(&q);
        }
        self.count(&q.ns);
        self.offer_parsed(q);
    }

    /// A write command without its statements: tell the sink which transaction the
    /// connection's preceding statements belong to.
    pub(crate) fn claim_statements(&mut self, txn: Option<crate::model::query::TxnId>) {
        if let (Some(sink), Some(conn)) = (&mut self.sink, &self.pending_conn) {
            sink.claim(conn, txn);
        }
    }

    /// An operation found on `ns`.
    fn count(&mut self, ns: &str) {
        self.found += 1;
        match self.by_namespace.get_mut(ns) {
            Some(n) => *n += 1,
            None => {
                self.by_namespace.insert(ns.to_string(), 1);
            }
        }
    }

    /// Offer a parsed operation: the slot it takes no longer waits for a line.
    fn offer_parsed(&mut self, q: Query) {
        if let Some(j) = self.offer(q) {
            self.set_deferred(j, None);
        }
    }

    /// Offer to the sample; the slot it took, if any.
    fn offer(&mut self, q: Query) -> Option<usize> {
        if self.staging {
            self.staged.push(Staged::Ready(Box::new(q)));
            return None;
        }
        let j = self.slot_for(&q.ns)?;
        self.place(j, q);
        Some(j)
    }

    /// Algorithm R's decision for an operation on `ns`: the slot it takes (the end when
    /// the sample is not full yet), if any. The operation is built only when it has one.
    fn slot_for(&mut self, ns: &str) -> Option<usize> {
        if self.only.as_ref().is_some_and(|only| only != ns) {
            return None;
        }
        self.offered += 1;
        if self.queries.len() < self.limit {
            return Some(self.queries.len());
        }
        let j = self.rng.below(self.offered) as usize;
        (j < self.limit).then_some(j)
    }

    fn place(&mut self, j: usize, q: Query) {
        if self.queries.capacity() == 0 && self.limit < usize::MAX {
            // The sample's room at once (pages are touched only as it fills), not grown by copies.
            self.queries.reserve_exact(self.limit);
        }
        if j == self.queries.len() {
            self.queries.push(q);
        } else {
            self.queries[j] = q;
        }
    }

    /// Count an operation a light read found (`push` without a window or a sink, which
    /// need the parsed line) and stage it: a part read light does (`process_block`), and
    /// `merge_block` offers it, a placeholder holding its place until `resolve`.
    fn push_deferred(&mut self, ns: std::sync::Arc<str>, at: InBlock) {
        debug_assert!(self.staging, "only a staging part reads light");
        self.count(&ns);
        self.staged.push(Staged::Light { ns, at });
    }

    /// Slot `j` waits for `d`'s line. A slot that already waits keeps its placeholder
    /// (writing a fresh one cost more than the rest of the merge).
    fn place_deferred(&mut self, j: usize, ns: &str, d: Deferred) {
        match self.queries.get_mut(j) {
            Some(q) if self.deferred.get(j).is_some_and(Option::is_some) => {
                if q.ns != ns {
                    q.ns.clear();
                    q.ns.push_str(ns);
                }
            }
            _ => self.place(j, placeholder(ns.to_string())),
        }
        self.set_deferred(j, Some(d));
    }

    fn set_deferred(&mut self, j: usize, d: Option<Deferred>) {
        if d.is_none() && self.deferred.is_empty() {
            return;
        }
        if self.deferred.len() < self.queries.len() {
            self.deferred.resize(self.queries.len(), None);
        }
        self.deferred[j] = d;
    }

    pub(crate) fn merge(&mut self, other: QueryLog) {
        self.merge_block(other, &[]);
    }

    /// `merge` of a part read from `block`: its deferred operations that the sample
    /// takes get their own copy of their line.
    fn merge_block(&mut self, mut other: QueryLog, block: &[u8]) {
        if let (Some(mine), Some(theirs)) = (&mut self.sink, other.sink.take()) {
            mine.merge(theirs);
        }
        let mut last: Option<(usize, std::sync::Arc<[u8]>)> = None;
        // A deferred operation the sample takes gets its own copy of its line (shared by
        // the line's operations).
        let mut own = |at: InBlock| {
            let text = match &last {
                Some((s, t)) if *s == at.start => t.clone(),
                _ => {
                    let t: std::sync::Arc<[u8]> = block[at.start..at.start + at.len].into();
                    last = Some((at.start, t.clone()));
                    t
                }
            };
            Deferred { text, lineno: at.lineno, index: at.index }
        };
        for item in std::mem::take(&mut other.staged) {
            match item {
                Staged::Ready(q) => self.offer_parsed(*q),
                Staged::Light { ns, at } => {
                    if let Some(j) = self.slot_for(&ns) {
                        self.place_deferred(j, &ns, own(at));
                    }
                }
            }
        }
        // Only the log being read holds placeholders (`resolve` empties it): a merged log's
        // queries are parsed.
        debug_assert!(other.deferred.is_empty(), "a log is merged before its kept lines are parsed");
        for q in other.queries {
            self.offer_parsed(q);
        }
        self.diffs.extend(other.diffs.into_iter().filter(|d| self.only.as_ref().is_none_or(|ns| ns == &d.ns)));
        self.records += other.records;
        self.found += other.found;
        for (k, v) in other.skipped {
            *self.skipped.entry(k).or_default() += v;
        }
        for (k, v) in other.by_namespace {
            *self.by_namespace.entry(k).or_default() += v;
        }
    }
}

impl QueryLog {
    /// Parse in full the lines of the operations the sample kept from light reads,
    /// each line once, on every core.
    fn resolve(&mut self, shown: &str) -> Result<()> {
        use rayon::prelude::*;
        use std::sync::Arc;
        if self.deferred.is_empty() {
            return Ok(());
        }
        let deferred = std::mem::take(&mut self.deferred);
        let mut lines: Vec<(Arc<[u8]>, u64)> = Vec::new();
        let mut line_of: std::collections::HashMap<*const u8, usize> = std::collections::HashMap::new();
        let mut slots: Vec<(usize, usize, u32)> = Vec::new();
        for (j, d) in deferred.into_iter().enumerate() {
            let Some(Deferred { text, lineno, index }) = d else { continue };
            let l = *line_of.entry(Arc::as_ptr(&text) as *const u8).or_insert_with(|| {
                lines.push((text.clone(), lineno));
                lines.len() - 1
            });
            slots.push((j, l, index));
        }
        let disagree =
            |lineno: u64| anyhow::anyhow!("{shown}: line {lineno}: internal error: the light and the full read of a slow query disagree");
        let parsed: Vec<Result<Vec<Query>>> = lines
            .par_iter()
            .map(|(text, lineno)| {
                let mut part = QueryLog { limit: usize::MAX, ..Default::default() };
                let text = simdutf8::basic::from_utf8(text).map_err(|_| disagree(*lineno))?;
                match classify_line(text, *lineno, shown)? {
                    Line::Slow(sq) => slow_log::add_slow_query(&mut part, *sq),
                    _ => return Err(disagree(*lineno)),
                }
                Ok(part.queries)
            })
            .collect();
        // Moved into place (not copied): the parsed lines and the sample are never held twice.
        let mut parsed: Vec<Vec<Option<Query>>> =
            parsed.into_iter().map(|r| r.map(|qs| qs.into_iter().map(Some).collect())).collect::<Result<_>>()?;
        for (j, l, index) in slots {
            let q = parsed[l].get_mut(index as usize).and_then(Option::take).ok_or_else(|| disagree(lines[l].1))?;
            self.queries[j] = q;
        }
        Ok(())
    }
}

pub(crate) const NOT_SLOW_QUERY: &str = "log lines other than \"Slow query\"";
/// mongod 4.4+ logs one line (id 51802) per transaction that is slow, with its session.
pub(crate) const TXN_LINES: &str = "transaction summary lines (id 51802)";
pub(crate) const NOT_CRUD: &str = "operations that are not find/aggregate/count/distinct/update/delete/findAndModify/insert";
pub(crate) const UNKNOWN: &str = "records in no known format";

/// What one line of a text file holds.
enum Line<'a> {
    Skip(&'static str),
    Doc(Document),
    /// A legacy (2.2–4.2) text log operation, as a profiler-shaped document.
    Legacy(Document),
    Slow(Box<SlowQuery<'a>>),
}

fn classify_line<'a>(text: &'a str, lineno: u64, shown: &str) -> Result<Line<'a>> {
    if !text.starts_with('{') {
        return Ok(match legacy::parse_line(text) {
            legacy::Legacy::Op(d) => Line::Legacy(d),
            legacy::Legacy::Skip(why) => Line::Skip(why),
        });
    }
    // Cheap pre-filter: most log lines are not slow queries.
    if text.starts_with("{\"t\":") {
        if text.contains("\"id\":51802,") {
            return Ok(Line::Skip(TXN_LINES));
        }
        if !text.contains("\"id\":51803") && !text.contains("Slow query") {
            return Ok(Line::Skip(NOT_SLOW_QUERY));
        }
        if let Ok(FastLogLine { id: Some(51803), attr: Some(sq), t, ctx }) = serde_json::from_str::<FastLogLine>(text) {
            return Ok(Line::Slow(Box::new(sq.at(t, ctx))));
        }
    }
    parse_json_document_lenient(text).map(Line::Doc).map_err(|e| input_error(format!("{shown}: line {lineno}: malformed JSON: {e}")))
}

/// Process a block of whole lines in parallel; results merge in file order.
/// Slow-query lines are read light when no operation needs its figures or time
/// (`workload`, `--since`/`--until`): counted, and parsed in full only if the sample
/// keeps one of their operations (`QueryLog::resolve`).
fn process_block(block: &[u8], first_line: u64, shown: &str, log: &mut QueryLog) -> Result<u64> {
    use rayon::prelude::*;
    let (lines, last_line) = numbered_lines(block, first_line);
    let lazy = !log.wants_stats();
    let parts: Vec<Result<QueryLog>> = lines
        .par_chunks(2048)
        .map(|chunk| {
            let mut part = if lazy { log.staging_part() } else { log.part() };
            // The namespace of the last light line, shared by the next ones on it.
            let mut last_ns: Option<std::sync::Arc<str>> = None;
            for (lineno, raw) in chunk {
                let text = simdutf8::basic::from_utf8(raw).map_err(|_| input_error(format!("{shown}: line {lineno}: not UTF-8 text")))?;
                part.records += 1;
                if lazy && light::is_candidate(text) {
                    if let Some(found) = light::read(text) {
                        if let Some(why) = found.skip {
                            part.skip(why);
                        }
                        if found.ops > 0 {
                            let ns = match &last_ns {
                                Some(n) if found.ns.is(n) => n.clone(),
                                _ => last_ns.insert(found.ns.to_string().into()).clone(),
                            };
                            let start = raw.as_ptr() as usize - block.as_ptr() as usize;
                            for index in 0..found.ops {
                                let at = InBlock { start, len: raw.len(), lineno: *lineno, index: index as u32 };
                                part.push_deferred(ns.clone(), at);
                            }
                        }
                        continue;
                    }
                }
                match classify_line(text, *lineno, shown)? {
                    Line::Skip(why) => part.skip(why),
                    Line::Doc(d) => add_record(&mut part, &d),
                    Line::Legacy(d) => {
                        let before = (part.found, part.skipped.values().sum::<u64>());
                        profile::add_profile_shaped(&mut part, &d, crate::model::QueryOrigin::SlowQueryLog);
                        if (part.found, part.skipped.values().sum::<u64>()) == before {
                            part.skip(NOT_CRUD);
                        }
                    }
                    Line::Slow(sq) => slow_log::add_slow_query(&mut part, *sq),
                }
            }
            Ok(part)
        })
        .collect();
    for p in parts {
        log.merge_block(p?, block);
    }
    Ok(last_line)
}

/// Read one query file (any supported format) into a new log.
pub fn read_query_file(path: &Path) -> Result<QueryLog> {
    let mut log = QueryLog::default();
    read_query_file_into(path, &mut log)?;
    Ok(log)
}

/// Read one query file into `log`. Line files are read in blocks and parsed on every core.
pub(crate) fn read_query_file_into(path: &Path, log: &mut QueryLog) -> Result<()> {
    read_queries_in(open(path)?, log)
}

/// Read one opened input (any supported format) into `log`.
pub fn read_queries_in(input: super::records::Input, log: &mut QueryLog) -> Result<()> {
    let shown = input.shown.clone();
    if input.layout == Layout::Lines {
        input.for_each_line_block(|block, first_line| process_block(block, first_line, &shown, log))?;
        return log.resolve(&shown);
    }
    input.for_each_record(|rec| {
        log.records += 1;
        match rec {
            Record::Json(v, i) => {
                let d = json_to_document(v).map_err(|e| input_error(format!("{shown}: array element {i}: {e}")))?;
                add_record(log, &d);
            }
            Record::Bson { doc, .. } => add_record(log, &doc),
        }
        Ok(())
    })?;
    Ok(())
}

/// One record format: how to recognise it by its fields, and how to read it.
struct RecordFormat {
    detect: fn(&Document) -> bool,
    add: fn(&mut QueryLog, &Document),
}

/// The record formats, in detection order (a record is read by the first that matches).
const FORMATS: &[RecordFormat] = &[
    // mongod 4.4+ JSON log line
    RecordFormat { detect: |d| d.contains_key("msg") && d.contains_key("t"), add: slow_log::add_log_line },
    // 7.0 config.sampledQueries
    RecordFormat { detect: |d| d.contains_key("cmdName") && d.contains_key("cmd"), add: sampled::add_sampled_query },
    // 7.0 config.sampledQueriesDiff
    RecordFormat { detect: |d| d.contains_key("diff") && d.contains_key("ns"), add: sampled::add_diff },
    // <db>.system.profile
    RecordFormat { detect: |d| d.contains_key("op") && d.contains_key("ns"), add: profile::add_profile_doc },
];

/// Classify one record by its fields and add what it holds.
pub(crate) fn add_record(log: &mut QueryLog, d: &Document) {
    match FORMATS.iter().find(|f| (f.detect)(d)) {
        Some(f) => (f.add)(log, d),
        None => log.skip(UNKNOWN),
    }
}

/// An integer field of any BSON number type.
pub(crate) fn get_i64(d: &Document, k: &str) -> Option<i64> {
    match d.get(k)? {
        Bson::Int32(i) => Some(*i as i64),
        Bson::Int64(i) => Some(*i),
        Bson::Double(f) => Some(*f as i64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Op;
    use bson::doc;

    fn one(d: Document) -> QueryLog {
        let mut log = QueryLog::default();
        add_record(&mut log, &d);
        log
    }

    #[test]
    fn slow_query_find_and_write_statement() {
        let log = one(doc! {"t": {"$date": "2024-01-01T00:00:00Z"}, "id": 51803, "msg": "Slow query",
        "attr": {"type": "command", "ns": "shop.orders", "command": {"find": "orders", "filter": {"a": 1}, "$db": "shop"}}});
        assert_eq!(log.queries.len(), 1);
        assert_eq!(log.queries[0].ns, "shop.orders");
        assert_eq!(log.queries[0].filter, doc! {"a": 1});
        let log = one(doc! {"t": 1, "id": 51803, "msg": "Slow query", "c": "WRITE",
        "attr": {"type": "update", "ns": "shop.orders", "command": {"q": {"_id": 1}, "u": {"$set": {"x": 1}}, "multi": true, "upsert": false}}});
        assert_eq!(log.queries[0].op, Op::Update);
        assert!(log.queries[0].multi);
    }

    #[test]
    fn sampled_queries_7_0_format() {
        let log = one(doc! {"_id": 1, "ns": "shop.orders", "collectionUuid": 1, "cmdName": "delete",
        "cmd": {"delete": "orders", "deletes": [{"q": {"a": 1}, "limit": 1}], "$db": "shop"}});
        assert_eq!(log.queries[0].op, Op::Delete);
        assert!(!log.queries[0].multi);
        let log = one(doc! {"_id": 1, "ns": "shop.orders", "collectionUuid": 1, "diff": {"a": "u"}});
        assert_eq!(log.diffs.len(), 1);
    }
}
