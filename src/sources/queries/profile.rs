//! `<db>.system.profile` documents, 2.6 to 8.x.

use super::command::{add_command, statement_delete, statement_update};
use super::{get_i64, QueryLog, NOT_CRUD};
use crate::model::{Op, OpStats, Query, QueryOrigin};
use bson::Document;

/// One profiler document.
pub(super) fn add_profile_doc(log: &mut QueryLog, d: &Document) {
    add_profile_shaped(log, d, QueryOrigin::Profiler)
}

/// A profiler-shaped document from another source (legacy log lines).
pub(super) fn add_profile_shaped(log: &mut QueryLog, d: &Document, origin: QueryOrigin) {
    if !log.wants_stats() {
        add_profile_inner(log, d, origin);
        return;
    }
    log.pending = Some(OpStats {
        millis: get_i64(d, "millis"),
        docs_examined: get_i64(d, "docsExamined").or_else(|| get_i64(d, "nscannedObjects")),
        keys_examined: get_i64(d, "keysExamined").or_else(|| get_i64(d, "nscanned")),
        nreturned: get_i64(d, "nreturned"),
        plan_summary: d.get_str("planSummary").ok().map(str::to_string),
        ts_millis: match d.get("ts") {
            Some(bson::Bson::DateTime(t)) => Some(t.timestamp_millis()),
            _ => get_i64(d, "tsMillis"),
        },
    });
    // Where and when it ran: the profiler ties no write statement to its session, its
    // client and time place it (`sessions::placement`).
    if origin == QueryOrigin::Profiler && log.sink.is_some() {
        log.pending_client = d.get_str("client").ok().map(str::to_string);
    }
    add_profile_inner(log, d, origin);
    log.pending = None;
    log.pending_client = None;
}

fn add_profile_inner(log: &mut QueryLog, d: &Document, origin: QueryOrigin) {
    if super::is_own(d.get_str("appName").ok()) {
        log.skip(super::OWN_OPERATIONS);
        return;
    }
    let ns = d.get_str("ns").unwrap_or("").to_string();
    let op = d.get_str("op").unwrap_or("");
    let cmd = d.get_document("command").ok();
    match op {
        "query" | "command" => match cmd {
            Some(c) if !c.is_empty() => add_command(log, c, &ns, origin, get_i64(d, "ninserted")),
            // Before 3.2 a query was profiled as `query: {filter}` or `{$query: filter}`.
            _ if op == "query" => {
                let q = d.get_document("query").cloned().unwrap_or_default();
                let filter = q.get_document("$query").cloned().unwrap_or(q);
                log.push(Query::new(Op::Find, ns, filter, origin));
            }
            _ => log.skip(NOT_CRUD),
        },
        "getmore" => match d.get_document("originatingCommand") {
            Ok(o) => add_command(log, o, &ns, origin, None),
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
        // The insert command (3.6+) carries the session (`lsid`, `txnNumber`, `autocommit`):
        // read it as a command so the insert joins its transaction.
        "insert" => match cmd.filter(|c| c.keys().next().is_some_and(|k| k == "insert")) {
            Some(c) => add_command(log, c, &ns, origin, get_i64(d, "ninserted")),
            None => {
                let mut q = Query::new(Op::Insert, ns, Document::new(), origin);
                q.count = get_i64(d, "ninserted").unwrap_or(1).max(0) as u64;
                log.push(q);
            }
        },
        _ => log.skip(NOT_CRUD),
    }
}
