//! Query logs in every format we read, turned into `Query` values:
//! - mongod 4.4+ JSON log "Slow query" lines (id 51803), including per-statement
//!   `WRITE` lines and `getMore` through `originatingCommand`;
//! - `system.profile` documents (exported as JSON lines, a JSON array or BSON);
//! - 7.0 `config.sampledQueries` and `config.sampledQueriesDiff` documents.
//!
//! The format is detected per record, so one file may mix them.

use super::records::{for_each_record, json_to_document, parse_json_document_lenient, Record};
use crate::error::input_error;
use crate::model::{Op, Query, QueryOrigin, UpdateSpec};
use anyhow::Result;
use bson::{Bson, Document};
use std::collections::BTreeMap;
use std::path::Path;

/// A shard key update diff from `config.sampledQueriesDiff`.
#[derive(Debug, Clone)]
pub struct KeyDiff {
    pub ns: String,
    pub diff: Document,
}

/// Operations read from query logs. Memory stays bounded: at most `limit`
/// operations are kept, a uniform sample (Algorithm R) of those offered; every
/// operation is still counted per namespace.
#[derive(Debug)]
pub struct QueryLog {
    pub queries: Vec<Query>,
    pub diffs: Vec<KeyDiff>,
    /// Records (lines or documents) read.
    pub records: u64,
    /// Records not turned into a query, by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Operations found, per namespace.
    pub by_namespace: BTreeMap<String, u64>,
    /// When set, only this namespace's operations are kept.
    pub only: Option<String>,
    /// Operations offered to the sample (after the namespace filter).
    pub offered: u64,
    /// Operations found (before the namespace filter).
    pub found: u64,
    pub limit: usize,
    rng: crate::rand::SplitMix64,
}

/// Operations kept for classification; beyond, a uniform sample.
pub const QUERY_SAMPLE: usize = 100_000;

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
            rng: crate::rand::SplitMix64(0x9e37_79b9),
        }
    }
}

impl QueryLog {
    /// A log that keeps only `ns`'s operations (all when None).
    pub fn for_namespace(ns: Option<String>) -> Self {
        QueryLog { only: ns, ..Default::default() }
    }

    fn skip(&mut self, reason: &str) {
        *self.skipped.entry(reason.to_string()).or_default() += 1;
    }

    /// Count an operation and offer it to the sample.
    pub fn push(&mut self, q: Query) {
        self.found += 1;
        match self.by_namespace.get_mut(&q.ns) {
            Some(n) => *n += 1,
            None => {
                self.by_namespace.insert(q.ns.clone(), 1);
            }
        }
        self.offer(q);
    }

    fn offer(&mut self, q: Query) {
        if self.only.as_ref().is_some_and(|ns| ns != &q.ns) {
            return;
        }
        self.offered += 1;
        if self.queries.len() < self.limit {
            self.queries.push(q);
        } else {
            let j = self.rng.below(self.offered);
            if (j as usize) < self.limit {
                self.queries[j as usize] = q;
            }
        }
    }

    pub fn merge(&mut self, other: QueryLog) {
        for q in other.queries {
            self.offer(q);
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

const NOT_SLOW_QUERY: &str = "log lines other than \"Slow query\"";
const NOT_CRUD: &str = "operations that are not find/aggregate/count/distinct/update/delete/findAndModify/insert";
const LEGACY: &str = "legacy text log lines (MongoDB < 4.4), not read";
const UNKNOWN: &str = "records in no known format";

/// What one line of a text file holds.
enum Line<'a> {
    Skip(&'static str),
    Doc(Document),
    Slow(SlowQuery<'a>),
}

/// The fields of a slow-query line we use. Parsed in one pass straight into
/// these types (bson reads Extended JSON itself); everything else is skipped.
#[derive(serde::Deserialize)]
struct FastLogLine<'a> {
    id: Option<i64>,
    #[serde(borrow)]
    attr: Option<SlowQuery<'a>>,
}

#[derive(serde::Deserialize)]
struct SlowQuery<'a> {
    #[serde(rename = "type", borrow)]
    typ: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    ns: Option<std::borrow::Cow<'a, str>>,
    ninserted: Option<i64>,
    command: Option<Document>,
    #[serde(rename = "originatingCommand")]
    originating_command: Option<Document>,
}

fn classify_line<'a>(text: &'a str, lineno: u64, shown: &str) -> Result<Line<'a>> {
    if !text.starts_with('{') {
        return Ok(Line::Skip(LEGACY));
    }
    // Cheap pre-filter: most log lines are not slow queries.
    if text.starts_with("{\"t\":") {
        if !text.contains("\"id\":51803") && !text.contains("Slow query") {
            return Ok(Line::Skip(NOT_SLOW_QUERY));
        }
        if let Ok(FastLogLine { id: Some(51803), attr: Some(sq) }) = serde_json::from_str::<FastLogLine>(text) {
            return Ok(Line::Slow(sq));
        }
    }
    parse_json_document_lenient(text)
        .map(Line::Doc)
        .map_err(|e| input_error(format!("{shown}: line {lineno}: malformed JSON: {e}")))
}

/// Process a block of whole lines in parallel; results merge in file order.
fn process_block(block: &[u8], first_line: u64, shown: &str, log: &mut QueryLog) -> Result<u64> {
    use rayon::prelude::*;
    let (lines, last_line) = super::records::numbered_lines(block, first_line);
    let parts: Vec<Result<QueryLog>> = lines
        .par_chunks(2048)
        .map(|chunk| {
            let mut part = QueryLog { limit: usize::MAX, ..Default::default() };
            for (lineno, raw) in chunk {
                let text = std::str::from_utf8(raw)
                    .map_err(|_| input_error(format!("{shown}: line {lineno}: not UTF-8 text")))?;
                part.records += 1;
                match classify_line(text, *lineno, shown)? {
                    Line::Skip(why) => part.skip(why),
                    Line::Doc(d) => add_record(&mut part, &d),
                    Line::Slow(sq) => from_slow_query(&mut part, sq),
                }
            }
            Ok(part)
        })
        .collect();
    for p in parts {
        log.merge(p?);
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
pub fn read_query_file_into(path: &Path, log: &mut QueryLog) -> Result<()> {
    let shown = path.display().to_string();
    if super::records::for_each_line_block(path, |block, first_line| process_block(block, first_line, &shown, log))? {
        return Ok(());
    }
    for_each_record(path, |rec| {
        log.records += 1;
        match rec {
            Record::Json(v, i) => {
                let d = json_to_document(v).map_err(|e| input_error(format!("{shown}: array element {i}: {e}")))?;
                add_record(log, &d);
            }
            Record::Bson(d, _, _) => add_record(log, &d),
        }
        Ok(())
    })?;
    Ok(())
}

/// Classify one record by its fields and add what it holds.
pub fn add_record(log: &mut QueryLog, d: &Document) {
    if d.contains_key("msg") && d.contains_key("t") {
        from_log_line(log, d);
    } else if d.contains_key("cmdName") && d.contains_key("cmd") {
        from_sampled_query(log, d);
    } else if d.contains_key("diff") && d.contains_key("ns") {
        match (d.get_str("ns"), d.get_document("diff")) {
            (Ok(ns), Ok(_)) if log.only.as_ref().is_some_and(|o| o != ns) => {}
            (Ok(ns), Ok(diff)) => log.diffs.push(KeyDiff { ns: ns.to_string(), diff: diff.clone() }),
            _ => log.skip(UNKNOWN),
        }
    } else if d.contains_key("op") && d.contains_key("ns") {
        from_profile(log, d);
    } else {
        log.skip(UNKNOWN);
    }
}

fn get_i64(d: &Document, k: &str) -> Option<i64> {
    match d.get(k)? {
        Bson::Int32(i) => Some(*i as i64),
        Bson::Int64(i) => Some(*i),
        Bson::Double(f) => Some(*f as i64),
        _ => None,
    }
}

fn from_log_line(log: &mut QueryLog, d: &Document) {
    if get_i64(d, "id") != Some(51803) {
        log.skip(NOT_SLOW_QUERY);
        return;
    }
    let Ok(attr) = d.get_document("attr") else {
        log.skip(UNKNOWN);
        return;
    };
    from_slow_query(
        log,
        SlowQuery {
            typ: attr.get_str("type").ok().map(Into::into),
            ns: attr.get_str("ns").ok().map(Into::into),
            ninserted: get_i64(attr, "ninserted"),
            command: attr.get_document("command").ok().cloned(),
            originating_command: attr.get_document("originatingCommand").ok().cloned(),
        },
    );
}

fn from_slow_query(log: &mut QueryLog, sq: SlowQuery) {
    let ns = sq.ns.as_deref().unwrap_or("");
    let Some(cmd) = &sq.command else {
        log.skip(NOT_CRUD);
        return;
    };
    let (found, skipped) = (log.found, log.skipped.values().sum::<u64>());
    let origin = QueryOrigin::SlowQueryLog;
    match sq.typ.as_deref().unwrap_or("command") {
        "update" => statement_update(log, cmd, ns, origin),
        "remove" => statement_delete(log, cmd, ns, origin),
        "insert" => {
            let mut q = Query::new(Op::Insert, ns, Document::new(), origin);
            q.count = sq.ninserted.unwrap_or(1).max(0) as u64;
            log.push(q);
        }
        _ => {
            let cmd_name = cmd.keys().next().map(String::as_str).unwrap_or("");
            if cmd_name.eq_ignore_ascii_case("getMore") {
                match &sq.originating_command {
                    Some(orig) => from_command(log, orig, ns, origin, sq.ninserted),
                    None => log.skip(NOT_CRUD),
                }
            } else {
                from_command(log, cmd, ns, origin, sq.ninserted);
            }
        }
    }
    if log.found == found && log.skipped.values().sum::<u64>() == skipped {
        log.skip(NOT_CRUD);
    }
}

/// The collection namespace of a command: `<db>.<value of the first field>`.
fn command_ns(cmd: &Document, ns_hint: &str) -> Option<String> {
    let coll = cmd.values().next()?.as_str()?;
    let db = cmd
        .get_str("$db")
        .ok()
        .map(str::to_string)
        .or_else(|| ns_hint.split_once('.').map(|(db, _)| db.to_string()))?;
    Some(format!("{db}.{coll}"))
}

fn opt_doc(d: &Document, k: &str) -> Option<Document> {
    d.get_document(k).ok().filter(|c| !c.is_empty()).cloned()
}

fn read_query(op: Op, ns: String, filter: Document, cmd: &Document, origin: QueryOrigin) -> Query {
    let mut q = Query::new(op, ns, filter, origin);
    q.collation = opt_doc(cmd, "collation");
    q.let_vars = opt_doc(cmd, "let");
    q
}

/// A command document (as logged, profiled or stored in `originatingCommand`).
fn from_command(log: &mut QueryLog, cmd: &Document, ns_hint: &str, origin: QueryOrigin, ninserted: Option<i64>) {
    let Some(name) = cmd.keys().next().cloned() else {
        log.skip(NOT_CRUD);
        return;
    };
    // A write statement profiled on its own: {q, u, multi, upsert} / {q, limit}.
    if name == "q" {
        if cmd.contains_key("u") {
            statement_update(log, cmd, ns_hint, origin);
        } else {
            statement_delete(log, cmd, ns_hint, origin);
        }
        return;
    }
    let Some(ns) = command_ns(cmd, ns_hint) else {
        log.skip(NOT_CRUD);
        return;
    };
    let filter_of = |k: &str| cmd.get_document(k).cloned().unwrap_or_default();
    match name.as_str() {
        "find" => log.push(read_query(Op::Find, ns, filter_of("filter"), cmd, origin)),
        "count" => log.push(read_query(Op::Count, ns, filter_of("query"), cmd, origin)),
        "distinct" => log.push(read_query(Op::Distinct, ns, filter_of("query"), cmd, origin)),
        "aggregate" => {
            let filter = cmd
                .get_array("pipeline")
                .ok()
                .and_then(|p| p.first())
                .and_then(|s| s.as_document())
                .and_then(|s| s.get_document("$match").ok())
                .cloned()
                .unwrap_or_default();
            log.push(read_query(Op::Aggregate, ns, filter, cmd, origin));
        }
        "update" => match cmd.get_array("updates") {
            Ok(stmts) => {
                for s in stmts.iter().filter_map(|s| s.as_document()) {
                    statement_update(log, &with_outer(s, cmd), &ns, origin);
                }
            }
            Err(_) => log.skip("update commands logged without their statements (counted from their WRITE lines)"),
        },
        "delete" => match cmd.get_array("deletes") {
            Ok(stmts) => {
                for s in stmts.iter().filter_map(|s| s.as_document()) {
                    statement_delete(log, &with_outer(s, cmd), &ns, origin);
                }
            }
            Err(_) => log.skip("delete commands logged without their statements (counted from their WRITE lines)"),
        },
        n if n.eq_ignore_ascii_case("findAndModify") => log.push(find_and_modify(cmd, ns, origin)),
        "insert" => {
            let n = cmd
                .get_array("documents")
                .map(|a| a.len() as i64)
                .ok()
                .or(ninserted)
                .unwrap_or(1);
            let mut q = Query::new(Op::Insert, ns, Document::new(), origin);
            q.count = n.max(0) as u64;
            log.push(q);
        }
        _ => log.skip(NOT_CRUD),
    }
}

/// findAndModify: `query`, `update` or `remove`, `upsert`; always a single write.
fn find_and_modify(cmd: &Document, ns: String, origin: QueryOrigin) -> Query {
    let mut q = read_query(Op::FindAndModify, ns, cmd.get_document("query").cloned().unwrap_or_default(), cmd, origin);
    q.upsert = cmd.get_bool("upsert").unwrap_or(false);
    q.update = if cmd.get_bool("remove").unwrap_or(false) {
        Some(UpdateSpec::Remove)
    } else {
        cmd.get("update").and_then(UpdateSpec::from_bson)
    };
    q
}

/// A statement inherits the command's `let` (and nothing else).
fn with_outer(stmt: &Document, cmd: &Document) -> Document {
    let mut s = stmt.clone();
    if let (false, Ok(l)) = (s.contains_key("let"), cmd.get_document("let")) {
        s.insert("let", l.clone());
    }
    s
}

fn statement_update(log: &mut QueryLog, s: &Document, ns: &str, origin: QueryOrigin) {
    let mut q = read_query(Op::Update, ns.to_string(), s.get_document("q").cloned().unwrap_or_default(), s, origin);
    q.multi = s.get_bool("multi").unwrap_or(false);
    q.upsert = s.get_bool("upsert").unwrap_or(false);
    q.update = s.get("u").and_then(UpdateSpec::from_bson);
    log.push(q);
}

fn statement_delete(log: &mut QueryLog, s: &Document, ns: &str, origin: QueryOrigin) {
    let mut q = read_query(Op::Delete, ns.to_string(), s.get_document("q").cloned().unwrap_or_default(), s, origin);
    q.multi = get_i64(s, "limit").unwrap_or(0) == 0;
    log.push(q);
}

/// `<db>.system.profile` documents, 2.6 to 8.x.
fn from_profile(log: &mut QueryLog, d: &Document) {
    let ns = d.get_str("ns").unwrap_or("").to_string();
    let op = d.get_str("op").unwrap_or("");
    let origin = QueryOrigin::Profiler;
    let cmd = d.get_document("command").ok();
    match op {
        "query" | "command" => match cmd {
            Some(c) if !c.is_empty() => from_command(log, c, &ns, origin, get_i64(d, "ninserted")),
            // Before 3.2 a query was profiled as `query: {filter}` or `{$query: filter}`.
            _ if op == "query" => {
                let q = d.get_document("query").cloned().unwrap_or_default();
                let filter = q.get_document("$query").cloned().unwrap_or(q);
                log.push(Query::new(Op::Find, ns, filter, origin));
            }
            _ => log.skip(NOT_CRUD),
        },
        "getmore" => match d.get_document("originatingCommand") {
            Ok(o) => from_command(log, o, &ns, origin, None),
            Err(_) => log.skip(NOT_CRUD),
        },
        "update" => match cmd.filter(|c| c.contains_key("q")) {
            Some(c) => statement_update(log, c, &ns, origin),
            None => {
                let mut s = Document::new();
                s.insert("q", d.get_document("query").cloned().unwrap_or_default());
                if let Some(u) = d.get("updateobj") {
                    s.insert("u", u.clone());
                }
                s.insert("multi", d.get_bool("multi").unwrap_or(false));
                s.insert("upsert", d.get_bool("upsert").unwrap_or(false));
                statement_update(log, &s, &ns, origin);
            }
        },
        "remove" => match cmd.filter(|c| c.contains_key("q")) {
            Some(c) => statement_delete(log, c, &ns, origin),
            None => {
                let mut s = Document::new();
                s.insert("q", d.get_document("query").cloned().unwrap_or_default());
                s.insert("limit", 0);
                statement_delete(log, &s, &ns, origin);
            }
        },
        "insert" => {
            let mut q = Query::new(Op::Insert, ns, Document::new(), origin);
            q.count = get_i64(d, "ninserted").unwrap_or(1).max(0) as u64;
            log.push(q);
        }
        _ => log.skip(NOT_CRUD),
    }
}

/// A 7.0 `config.sampledQueries` document.
fn from_sampled_query(log: &mut QueryLog, d: &Document) {
    let ns = d.get_str("ns").unwrap_or("").to_string();
    let Ok(cmd) = d.get_document("cmd") else {
        log.skip(UNKNOWN);
        return;
    };
    let origin = QueryOrigin::SampledQueries;
    let filter_of = |k: &str| cmd.get_document(k).cloned().unwrap_or_default();
    match d.get_str("cmdName").unwrap_or("") {
        "find" => log.push(read_query(Op::Find, ns, filter_of("filter"), cmd, origin)),
        "aggregate" => log.push(read_query(Op::Aggregate, ns, filter_of("filter"), cmd, origin)),
        "count" => log.push(read_query(Op::Count, ns, filter_of("filter"), cmd, origin)),
        "distinct" => log.push(read_query(Op::Distinct, ns, filter_of("filter"), cmd, origin)),
        "update" => {
            for s in cmd.get_array("updates").map(|a| a.as_slice()).unwrap_or(&[]).iter().filter_map(|s| s.as_document()) {
                statement_update(log, &with_outer(s, cmd), &ns, origin);
            }
        }
        "delete" => {
            for s in cmd.get_array("deletes").map(|a| a.as_slice()).unwrap_or(&[]).iter().filter_map(|s| s.as_document()) {
                statement_delete(log, &with_outer(s, cmd), &ns, origin);
            }
        }
        "findAndModify" => log.push(find_and_modify(cmd, ns, origin)),
        _ => log.skip(NOT_CRUD),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
