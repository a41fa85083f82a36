//! `<db>.system.profile` documents, 2.6 to 8.x.

use super::command::get_i64;
use super::command::{add_command, statement_delete, statement_update};
use super::log::QueryLog;
use super::once::Fate;
use super::reasons::NOT_CRUD;
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
    if super::reasons::is_own(d.get_str("appName").ok()) {
        log.skip(super::reasons::OWN_OPERATIONS);
        return;
    }
    if origin == QueryOrigin::Profiler && is_mirrored_read(d) {
        log.skip(MIRRORED_READS);
        return;
    }
    let cursor = d.get("cursorid").and_then(crate::bsonx::number::as_i64).filter(|id| *id != 0);
    match (origin, d.get_str("op"), cursor) {
        (QueryOrigin::Profiler, Ok("getmore"), Some(c)) => match log.once.getmore(c) {
            Fate::Twice(why) => {
                log.skip(why);
                return;
            }
            // Its opening document may be in an earlier part (`once`): held for the merge.
            Fate::Wait => {
                log.gate = vec![Fate::Wait];
                add_profile_ops(log, d, origin);
                log.gate.clear();
                let ops = std::mem::take(&mut log.held);
                log.once.heads.push(super::once::Head::GetMore { cursor: c, ops });
                return;
            }
            Fate::Count => {}
        },
        (QueryOrigin::Profiler, _, Some(c)) => log.once.opens(c),
        _ => {}
    }
    add_profile_ops(log, d, origin);
}

fn add_profile_ops(log: &mut QueryLog, d: &Document, origin: QueryOrigin) {
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

/// Mirrored reads (4.4+): a primary copies a share of its reads (find, count, distinct, and the
/// filters of updates and findAndModify, all as reads) to electable secondaries to warm their
/// caches. They land in the secondary's profiler, but the application sent them once, to the
/// primary. The server builds them with `$readPreference: secondaryPreferred`, `readConcern:
/// local` and `maxTimeMS`, from an internal client: no session, no appName (mongodb/mongo
/// src/mongo/db/mirror_maestro.cpp at 019afd89c77629a3cabf93803314dd77f451276b, `_mirror`).
pub(crate) fn is_mirrored_read(d: &Document) -> bool {
    let Ok(c) = d.get_document("command") else { return false };
    is_mirrored_command(c) && !d.contains_key("appName")
}

/// The command of a mirrored read, as the secondary logs or profiles it (mongod 6.0.5 logs
/// `{find: <coll>, batchSize: 1, singleBatch: true, maxTimeMS: 1000, $readPreference: {mode:
/// "secondaryPreferred"}, readConcern: {level: "local"}, $db}` with no `appName` and no
/// `lsid`: captured from a two-member replica set with `mirrorReads: {samplingRate: 1.0}`).
/// `maxTimeMS` is part of it: `_mirror` always appends it (mirror_maestro.cpp above). A
/// member's initial sync reads its sync source with the same read preference and read
/// concern but without it (`local.oplog.rs`, `config.transactions`, each collection's clone):
/// those are the server's own, not mirrored (captured: `tests/replica_set.rs`).
pub(crate) fn is_mirrored_command(c: &Document) -> bool {
    let mode = c.get_document("$readPreference").ok().and_then(|r| r.get_str("mode").ok());
    let level = c.get_document("readConcern").ok().and_then(|r| r.get_str("level").ok());
    mode == Some("secondaryPreferred") && level == Some("local") && c.contains_key("maxTimeMS") && !c.contains_key("lsid")
}

/// Why profiler entries are not counted, beside the reasons every query source has.
pub(crate) const MIRRORED_READS: &str = "mirrored reads (a primary's reads copied to a secondary to warm its cache)";
#[cfg(test)]
mod tests {
    use super::super::once::GETMORE_OF_COUNTED;
    use super::*;
    use bson::doc;

    #[test]
    fn mirrored_reads_are_told_from_the_applications() {
        // A mirrored find as mongod 6.0.5 profiled it on a secondary (trimmed), and the same
        // find from a driver (a session, an appName).
        let mirrored = doc! {"op": "query", "ns": "shop.orders", "command": {"find": "orders", "filter": {"customerId": 8},
        "batchSize": 1, "singleBatch": true, "maxTimeMS": 1000, "$readPreference": {"mode": "secondaryPreferred"},
        "readConcern": {"level": "local"}, "$db": "shop"}};
        assert!(is_mirrored_read(&mirrored));
        let mut app = mirrored.clone();
        app.get_document_mut("command").unwrap().insert("lsid", doc! {"id": 1});
        app.insert("appName", "dashboard");
        assert!(!is_mirrored_read(&app));
        assert!(!is_mirrored_read(&doc! {"op": "query", "ns": "shop.orders", "command": {"find": "orders"}}));
    }

    /// A find whose cursor stayed open and its two getMores, as a profiler export holds them:
    /// one read; a getMore whose find this source did not see is counted (it is all there is).
    #[test]
    fn a_getmore_of_a_counted_find_is_the_same_read() {
        let mut log = QueryLog::default();
        let find = doc! {"op": "query", "ns": "shop.orders", "command": {"find": "orders", "filter": {"customerId": 3}, "$db": "shop"}, "cursorid": 77i64};
        let more = doc! {"op": "getmore", "ns": "shop.orders", "command": {"getMore": 77i64, "collection": "orders"}, "cursorid": 77i64,
        "originatingCommand": {"find": "orders", "filter": {"customerId": 3}, "$db": "shop"}};
        let lone = doc! {"op": "getmore", "ns": "shop.orders", "command": {"getMore": 78i64, "collection": "orders"}, "cursorid": 78i64,
        "originatingCommand": {"find": "orders", "filter": {"customerId": 4}, "$db": "shop"}};
        for d in [&find, &more, &more, &lone] {
            add_profile_doc(&mut log, d);
        }
        assert_eq!(log.found, 2);
        assert_eq!(log.skipped.get(GETMORE_OF_COUNTED), Some(&2));
    }

    /// A profiler export read from a file is read in parallel parts: a find in one part, its
    /// getMores in later ones, is still one read; a cursor whose find is not in the export
    /// counts once, at its first getMore.
    #[test]
    fn an_exported_cursor_is_one_read_across_parts() {
        let find = r#"{"op":"query","ns":"shop.orders","command":{"find":"orders","filter":{"customerId":3},"$db":"shop"},"cursorid":77}"#;
        let more = |id: i64| {
            format!(
                r#"{{"op":"getmore","ns":"shop.orders","command":{{"getMore":{id},"collection":"orders"}},"cursorid":{id},"originatingCommand":{{"find":"orders","filter":{{"customerId":{id}}},"$db":"shop"}}}}"#
            )
        };
        let pad = r#"{"op":"command","ns":"shop.$cmd","command":{"hello":1}}"#;
        let mut lines = vec![find.to_string()];
        for l in [more(77), more(78), more(77), more(78)] {
            lines.extend(std::iter::repeat_n(pad.to_string(), 3000));
            lines.push(l);
        }
        let text = lines.join("\n") + "\n";
        let mut log = QueryLog::default();
        let input =
            crate::sources::records::from_reader(Box::new(std::io::Cursor::new(text.into_bytes())), "p.json".into(), 0, false).unwrap();
        super::super::read_queries_in(input, &mut log).unwrap();
        assert_eq!(log.found, 2, "{:?}", log.skipped);
        assert_eq!(log.skipped.get(GETMORE_OF_COUNTED), Some(&3));
    }
}
