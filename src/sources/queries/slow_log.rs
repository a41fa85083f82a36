//! mongod 4.4+ JSON log "Slow query" lines (id 51803), including per-statement
//! `WRITE` lines and `getMore` through `originatingCommand`.

use super::command::{add_command, statement_delete, statement_update};
use super::{get_i64, QueryLog, NOT_CRUD, NOT_SLOW_QUERY, UNKNOWN};
use crate::model::{Op, Query, QueryOrigin};
use bson::Document;

/// The fields of a slow-query line we use. Parsed in one pass straight into
/// these types (bson reads Extended JSON itself); everything else is skipped.
#[derive(serde::Deserialize)]
pub(super) struct FastLogLine<'a> {
    pub(super) id: Option<i64>,
    #[serde(borrow)]
    pub(super) attr: Option<SlowQuery<'a>>,
}

#[derive(serde::Deserialize)]
pub(super) struct SlowQuery<'a> {
    #[serde(rename = "type", borrow)]
    typ: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    ns: Option<std::borrow::Cow<'a, str>>,
    ninserted: Option<i64>,
    command: Option<Document>,
    #[serde(rename = "originatingCommand")]
    originating_command: Option<Document>,
}

/// A log line parsed as a document (the slow path; see `super::classify_line`).
pub(super) fn add_log_line(log: &mut QueryLog, d: &Document) {
    if get_i64(d, "id") != Some(51803) {
        log.skip(NOT_SLOW_QUERY);
        return;
    }
    let Ok(attr) = d.get_document("attr") else {
        log.skip(UNKNOWN);
        return;
    };
    add_slow_query(
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

/// One slow operation.
pub(super) fn add_slow_query(log: &mut QueryLog, sq: SlowQuery) {
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
                    Some(orig) => add_command(log, orig, ns, origin, sq.ninserted),
                    None => log.skip(NOT_CRUD),
                }
            } else {
                add_command(log, cmd, ns, origin, sq.ninserted);
            }
        }
    }
    if log.found == found && log.skipped.values().sum::<u64>() == skipped {
        log.skip(NOT_CRUD);
    }
}

