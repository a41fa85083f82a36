//! 7.0 `config.sampledQueries` and `config.sampledQueriesDiff` documents.

use super::command::{find_and_modify, read_query, statement_delete, statement_update, with_outer};
use super::log::{KeyDiff, QueryLog};
use super::reasons::{NOT_CRUD, UNKNOWN};
use crate::model::{Op, QueryOrigin};
use bson::Document;

/// A 7.0 `config.sampledQueries` document.
pub(super) fn add_sampled_query(log: &mut QueryLog, d: &Document) {
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

/// A 7.0 `config.sampledQueriesDiff` document (a shard key update's diff).
pub(super) fn add_diff(log: &mut QueryLog, d: &Document) {
    match (d.get_str("ns"), d.get_document("diff")) {
        (Ok(ns), Ok(_)) if log.only.as_ref().is_some_and(|o| o != ns) => {}
        (Ok(ns), Ok(diff)) => log.diffs.push(KeyDiff { ns: ns.to_string(), diff: diff.clone() }),
        _ => log.skip(UNKNOWN),
    }
}
