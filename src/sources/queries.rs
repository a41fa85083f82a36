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

#[derive(Debug, Default)]
pub struct QueryLog {
    pub queries: Vec<Query>,
    pub diffs: Vec<KeyDiff>,
    /// Records (lines or documents) read.
    pub records: u64,
    /// Records not turned into a query, by reason.
    pub skipped: BTreeMap<String, u64>,
}

impl QueryLog {
    fn skip(&mut self, reason: &str) {
        *self.skipped.entry(reason.to_string()).or_default() += 1;
    }

    pub fn merge(&mut self, other: QueryLog) {
        self.queries.extend(other.queries);
        self.diffs.extend(other.diffs);
        self.records += other.records;
        for (k, v) in other.skipped {
            *self.skipped.entry(k).or_default() += v;
        }
    }
}

const NOT_SLOW_QUERY: &str = "log lines other than \"Slow query\"";
const NOT_CRUD: &str = "operations that are not find/aggregate/count/distinct/update/delete/findAndModify/insert";
const LEGACY: &str = "legacy text log lines (MongoDB < 4.4), not read";
const UNKNOWN: &str = "records in no known format";

/// Read one query file (any supported format).
pub fn read_query_file(path: &Path) -> Result<QueryLog> {
    let shown = path.display().to_string();
    let mut log = QueryLog::default();
    for_each_record(path, |rec| {
        log.records += 1;
        let doc = match rec {
            Record::Line(text, lineno) => {
                if !text.starts_with('{') {
                    log.skip(LEGACY);
                    return Ok(());
                }
                // Cheap pre-filter: most log lines are not slow queries.
                if text.starts_with("{\"t\":") && !text.contains("\"id\":51803") && !text.contains("Slow query") {
                    log.skip(NOT_SLOW_QUERY);
                    return Ok(());
                }
                parse_json_document_lenient(text)
                    .map_err(|e| input_error(format!("{shown}: line {lineno}: malformed JSON: {e}")))?
            }
            Record::Json(v, i) => json_to_document(v)
                .map_err(|e| input_error(format!("{shown}: array element {i}: {e}")))?,
            Record::Bson(d, _, _) => d,
        };
        add_record(&mut log, &doc);
        Ok(())
    })?;
    Ok(log)
}

/// Classify one record by its fields and add what it holds.
pub fn add_record(log: &mut QueryLog, d: &Document) {
    if d.contains_key("msg") && d.contains_key("t") {
        from_log_line(log, d);
    } else if d.contains_key("cmdName") && d.contains_key("cmd") {
        from_sampled_query(log, d);
    } else if d.contains_key("diff") && d.contains_key("ns") {
        match (d.get_str("ns"), d.get_document("diff")) {
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
    let ns = attr.get_str("ns").unwrap_or("");
    let Ok(cmd) = attr.get_document("command") else {
        log.skip(NOT_CRUD);
        return;
    };
    let before = log.queries.len();
    match attr.get_str("type").unwrap_or("command") {
        "update" => statement_update(log, cmd, ns, QueryOrigin::SlowQueryLog),
        "remove" => statement_delete(log, cmd, ns, QueryOrigin::SlowQueryLog),
        "insert" => {
            let mut q = Query::new(Op::Insert, ns, Document::new(), QueryOrigin::SlowQueryLog);
            q.count = get_i64(attr, "ninserted").unwrap_or(1).max(0) as u64;
            log.queries.push(q);
        }
        _ => {
            let cmd_name = cmd.keys().next().map(String::as_str).unwrap_or("");
            if cmd_name.eq_ignore_ascii_case("getMore") {
                match attr.get_document("originatingCommand") {
                    Ok(orig) => from_command(log, orig, ns, QueryOrigin::SlowQueryLog, Some(attr)),
                    Err(_) => log.skip(NOT_CRUD),
                }
            } else {
                from_command(log, cmd, ns, QueryOrigin::SlowQueryLog, Some(attr));
            }
        }
    }
    if log.queries.len() == before && !log.skipped.contains_key(NOT_CRUD) {
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
fn from_command(log: &mut QueryLog, cmd: &Document, ns_hint: &str, origin: QueryOrigin, attr: Option<&Document>) {
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
        "find" => log.queries.push(read_query(Op::Find, ns, filter_of("filter"), cmd, origin)),
        "count" => log.queries.push(read_query(Op::Count, ns, filter_of("query"), cmd, origin)),
        "distinct" => log.queries.push(read_query(Op::Distinct, ns, filter_of("query"), cmd, origin)),
        "aggregate" => {
            let filter = cmd
                .get_array("pipeline")
                .ok()
                .and_then(|p| p.first())
                .and_then(|s| s.as_document())
                .and_then(|s| s.get_document("$match").ok())
                .cloned()
                .unwrap_or_default();
            log.queries.push(read_query(Op::Aggregate, ns, filter, cmd, origin));
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
        n if n.eq_ignore_ascii_case("findAndModify") => log.queries.push(find_and_modify(cmd, ns, origin)),
        "insert" => {
            let n = cmd
                .get_array("documents")
                .map(|a| a.len() as i64)
                .ok()
                .or_else(|| attr.and_then(|a| get_i64(a, "ninserted")))
                .unwrap_or(1);
            let mut q = Query::new(Op::Insert, ns, Document::new(), origin);
            q.count = n.max(0) as u64;
            log.queries.push(q);
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
    log.queries.push(q);
}

fn statement_delete(log: &mut QueryLog, s: &Document, ns: &str, origin: QueryOrigin) {
    let mut q = read_query(Op::Delete, ns.to_string(), s.get_document("q").cloned().unwrap_or_default(), s, origin);
    q.multi = get_i64(s, "limit").unwrap_or(0) == 0;
    log.queries.push(q);
}

/// `<db>.system.profile` documents, 2.6 to 8.x.
fn from_profile(log: &mut QueryLog, d: &Document) {
    let ns = d.get_str("ns").unwrap_or("").to_string();
    let op = d.get_str("op").unwrap_or("");
    let origin = QueryOrigin::Profiler;
    let cmd = d.get_document("command").ok();
    match op {
        "query" | "command" => match cmd {
            Some(c) if !c.is_empty() => from_command(log, c, &ns, origin, Some(d)),
            // Before 3.2 a query was profiled as `query: {filter}` or `{$query: filter}`.
            _ if op == "query" => {
                let q = d.get_document("query").cloned().unwrap_or_default();
                let filter = q.get_document("$query").cloned().unwrap_or(q);
                log.queries.push(Query::new(Op::Find, ns, filter, origin));
            }
            _ => log.skip(NOT_CRUD),
        },
        "getmore" => match d.get_document("originatingCommand") {
            Ok(o) => from_command(log, o, &ns, origin, Some(d)),
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
            log.queries.push(q);
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
        "find" => log.queries.push(read_query(Op::Find, ns, filter_of("filter"), cmd, origin)),
        "aggregate" => log.queries.push(read_query(Op::Aggregate, ns, filter_of("filter"), cmd, origin)),
        "count" => log.queries.push(read_query(Op::Count, ns, filter_of("filter"), cmd, origin)),
        "distinct" => log.queries.push(read_query(Op::Distinct, ns, filter_of("filter"), cmd, origin)),
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
        "findAndModify" => log.queries.push(find_and_modify(cmd, ns, origin)),
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
