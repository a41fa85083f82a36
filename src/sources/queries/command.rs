//! The command documents every format logs (`find`, `aggregate`, `count`,
//! `distinct`, `update`, `delete`, `findAndModify`, `insert`), turned into queries.

use super::log::QueryLog;
use super::reasons::NOT_CRUD;
use crate::model::query::{Join, JoinStage, SessionRef, TxnId};
use crate::model::{Op, Query, QueryOrigin, UpdateSpec};
use bson::{Bson, Document};

/// The collection namespace of a command: `<db>.<value of the first field>`.
fn command_ns(cmd: &Document, ns_hint: &str) -> Option<String> {
    let coll = cmd.values().next()?.as_str()?;
    let db = cmd.get_str("$db").ok().map(str::to_string).or_else(|| ns_hint.split_once('.').map(|(db, _)| db.to_string()))?;
    Some(format!("{db}.{coll}"))
}

fn opt_doc(d: &Document, k: &str) -> Option<Document> {
    d.get_document(k).ok().filter(|c| !c.is_empty()).cloned()
}

/// Documents of one insert kept for `plan` (a batch beyond goes where its first ones go).
const MAX_INSERTED: usize = 16;

pub(super) fn read_query(op: Op, ns: String, filter: Document, cmd: &Document, origin: QueryOrigin) -> Query {
    let mut q = Query::new(op, ns, filter, origin);
    q.collation = opt_doc(cmd, "collation");
    q.let_vars = opt_doc(cmd, "let");
    if let Some(txn) = txn_of(cmd) {
        let starts = cmd.get_bool("startTransaction").unwrap_or(false);
        q.session = Some(Box::new(SessionRef { txn: Some(txn), starts, ..Default::default() }));
    }
    q
}

/// The multi-document transaction a command runs in: `lsid`, `txnNumber` and
/// `autocommit: false` (a retryable write has the first two only: it is not a transaction).
pub(super) fn txn_of(cmd: &Document) -> Option<TxnId> {
    if cmd.get_bool("autocommit").ok() != Some(false) {
        return None;
    }
    let lsid = match cmd.get_document("lsid").ok()?.get("id")? {
        Bson::Binary(b) => match uuid_text(&b.bytes) {
            Some(t) => t,
            None => b.bytes.iter().map(|x| format!("{x:02x}")).collect(),
        },
        Bson::Document(d) => d.get_str("$uuid").ok()?.to_string(),
        Bson::String(s) => s.clone(),
        other => other.to_string(),
    };
    Some(TxnId { lsid, txn_number: get_i64(cmd, "txnNumber")? })
}

/// A 16-byte UUID as `8-4-4-4-12` hex digits (how the JSON log writes `$uuid`).
fn uuid_text(b: &[u8]) -> Option<String> {
    if b.len() != 16 {
        return None;
    }
    // One allocation per id (the workload path meets one per logged command; a format! per
    // byte was 2.6% of its profile): 8-4-4-4-12 lowercase hex digits, as the log writes it.
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(36);
    for (i, x) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push(HEX[usize::from(x >> 4)] as char);
        s.push(HEX[usize::from(x & 0xf)] as char);
    }
    Some(s)
}

/// The other collections an aggregation pipeline reads, stage by stage (top level only).
/// A join's local field is the collection's own only while no earlier stage has made or
/// remade that name: after `$group` (its `_id` is the group key), `$project` of expressions,
/// `$replaceRoot` and the like, a `$lookup`'s `localField` names the stage's output, and no
/// link between the two collections' fields follows from it (manual: each stage passes its
/// output documents to the next).
fn joins_of(db: &str, pipeline: &[Bson]) -> Vec<Join> {
    let field = |d: &Document, k: &str| d.get_str(k).ok().map(str::to_string);
    let ns_of = |v: Option<&Bson>| match v {
        Some(Bson::String(c)) => Some(format!("{db}.{c}")),
        Some(Bson::Document(d)) => Some(format!("{}.{}", d.get_str("db").unwrap_or(db), d.get_str("coll").ok()?)),
        _ => None,
    };
    let mut out = Vec::new();
    let mut names = StageNames::default();
    for stage in pipeline.iter().filter_map(Bson::as_document) {
        let Some((name, spec)) = stage.iter().next() else { continue };
        let own = |f: Option<String>| f.filter(|f| names.own(f));
        let join = match (name.as_str(), spec) {
            ("$lookup", Bson::Document(s)) => ns_of(s.get("from")).map(|from| Join {
                stage: JoinStage::Lookup,
                from,
                local_field: own(field(s, "localField")),
                foreign_field: field(s, "foreignField"),
            }),
            ("$graphLookup", Bson::Document(s)) => ns_of(s.get("from")).map(|from| Join {
                stage: JoinStage::GraphLookup,
                from,
                local_field: own(field(s, "connectFromField")),
                foreign_field: field(s, "connectToField"),
            }),
            ("$unionWith", Bson::String(_)) => {
                ns_of(Some(spec)).map(|from| Join { stage: JoinStage::UnionWith, from, local_field: None, foreign_field: None })
            }
            ("$unionWith", Bson::Document(s)) => {
                ns_of(s.get("coll")).map(|from| Join { stage: JoinStage::UnionWith, from, local_field: None, foreign_field: None })
            }
            _ => None,
        };
        out.extend(join);
        names.after(name, spec);
    }
    out
}

/// Which top-level names of a pipeline's documents still hold the collection's fields.
#[derive(Default)]
struct StageNames {
    /// A stage made new documents: no name is the collection's any more.
    reshaped: bool,
    /// Names a stage set, removed or added (`$addFields`, a `$lookup`'s `as`, ...).
    made: Vec<String>,
}

/// A path's top-level name (`a` of `a.b`).
fn top(path: &str) -> String {
    path.split('.').next().unwrap_or(path).to_string()
}

impl StageNames {
    fn own(&self, path: &str) -> bool {
        !self.reshaped && !self.made.contains(&top(path))
    }

    fn after(&mut self, stage: &str, spec: &Bson) {
        let keys = |b: &Bson| b.as_document().map(|d| d.keys().map(|k| top(k)).collect::<Vec<_>>()).unwrap_or_default();
        match stage {
            "$group" | "$replaceRoot" | "$replaceWith" | "$bucket" | "$bucketAuto" | "$facet" | "$count" | "$sortByCount" => {
                self.reshaped = true
            }
            // Inclusion and exclusion keep the names they keep; an expression makes its name.
            "$project" => {
                if let Some(d) = spec.as_document() {
                    let made = d.iter().filter(|(_, v)| !matches!(v, Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Boolean(_)));
                    self.made.extend(made.map(|(k, _)| top(k)));
                }
            }
            "$addFields" | "$set" => self.made.extend(keys(spec)),
            "$unset" => match spec {
                Bson::String(k) => self.made.push(top(k)),
                Bson::Array(ks) => self.made.extend(ks.iter().filter_map(Bson::as_str).map(top)),
                _ => {}
            },
            "$lookup" | "$graphLookup" => self.made.extend(spec.as_document().and_then(|d| d.get_str("as").ok()).map(top)),
            "$unwind" => self.made.extend(spec.as_document().and_then(|d| d.get_str("includeArrayIndex").ok()).map(top)),
            _ => {}
        }
    }
}

/// A command document (as logged, profiled or stored in `originatingCommand`).
pub(super) fn add_command(log: &mut QueryLog, cmd: &Document, ns_hint: &str, origin: QueryOrigin, ninserted: Option<i64>) {
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
            // What the server's optimiser runs first: mongos targets the optimised pipeline.
            let filter = cmd.get_array("pipeline").map(|p| crate::model::pipeline::leading_match(p)).unwrap_or_default();
            let mut q = read_query(Op::Aggregate, ns, filter, cmd, origin);
            if let (Ok(p), Some((db, _))) = (cmd.get_array("pipeline"), q.ns.split_once('.')) {
                q.joins = joins_of(db, p);
            }
            log.push(q);
        }
        "update" => match cmd.get_array("updates") {
            Ok(stmts) => {
                // The command carries its statements and their session: the connection's WRITE
                // lines just before (counted, `once`) ran in its transaction.
                log.claim_statements(txn_of(cmd));
                for s in stmts.iter().filter_map(|s| s.as_document()) {
                    statement_update(log, &with_outer(s, cmd), &ns, origin);
                }
            }
            Err(_) => {
                log.claim_statements(txn_of(cmd));
                log.skip("update commands logged without their statements (counted from their WRITE lines)")
            }
        },
        "delete" => match cmd.get_array("deletes") {
            Ok(stmts) => {
                log.claim_statements(txn_of(cmd));
                for s in stmts.iter().filter_map(|s| s.as_document()) {
                    statement_delete(log, &with_outer(s, cmd), &ns, origin);
                }
            }
            Err(_) => {
                log.claim_statements(txn_of(cmd));
                log.skip("delete commands logged without their statements (counted from their WRITE lines)")
            }
        },
        n if n.eq_ignore_ascii_case("findAndModify") => log.push(find_and_modify(cmd, ns, origin)),
        "insert" => {
            let n = cmd.get_array("documents").map(|a| a.len() as i64).ok().or(ninserted).unwrap_or(1);
            let mut q = read_query(Op::Insert, ns, Document::new(), cmd, origin);
            q.collation = None;
            q.let_vars = None;
            q.count = n.max(0) as u64;
            // Kept for a transaction reader only (memory): the values that place the insert.
            if log.sink.is_some() && q.session.is_some() {
                if let Ok(docs) = cmd.get_array("documents") {
                    q.inserted = docs.iter().filter_map(Bson::as_document).take(MAX_INSERTED).cloned().collect();
                }
            }
            log.push(q);
        }
        _ => log.skip(NOT_CRUD),
    }
}

/// findAndModify: `query`, `update` or `remove`, `upsert`; always a single write.
pub(super) fn find_and_modify(cmd: &Document, ns: String, origin: QueryOrigin) -> Query {
    let mut q = read_query(Op::FindAndModify, ns, cmd.get_document("query").cloned().unwrap_or_default(), cmd, origin);
    q.upsert = cmd.get_bool("upsert").unwrap_or(false);
    q.update =
        if cmd.get_bool("remove").unwrap_or(false) { Some(UpdateSpec::Remove) } else { cmd.get("update").and_then(UpdateSpec::from_bson) };
    q
}

/// A statement inherits the command's `let` and its session (`lsid`, `txnNumber`,
/// `autocommit`, `startTransaction`), nothing else.
pub(super) fn with_outer(stmt: &Document, cmd: &Document) -> Document {
    let mut s = stmt.clone();
    if let (false, Ok(l)) = (s.contains_key("let"), cmd.get_document("let")) {
        s.insert("let", l.clone());
    }
    for k in ["lsid", "txnNumber", "autocommit", "startTransaction"] {
        if let (false, Some(v)) = (s.contains_key(k), cmd.get(k)) {
            s.insert(k, v.clone());
        }
    }
    s
}

pub(super) fn statement_update(log: &mut QueryLog, s: &Document, ns: &str, origin: QueryOrigin) {
    let mut q = read_query(Op::Update, ns.to_string(), s.get_document("q").cloned().unwrap_or_default(), s, origin);
    q.multi = s.get_bool("multi").unwrap_or(false);
    q.upsert = s.get_bool("upsert").unwrap_or(false);
    q.update = s.get("u").and_then(UpdateSpec::from_bson);
    log.push(q);
}

pub(super) fn statement_delete(log: &mut QueryLog, s: &Document, ns: &str, origin: QueryOrigin) {
    let mut q = read_query(Op::Delete, ns.to_string(), s.get_document("q").cloned().unwrap_or_default(), s, origin);
    q.multi = get_i64(s, "limit").unwrap_or(0) == 0;
    log.push(q);
}

/// An integer field of any BSON number type.
pub(crate) fn get_i64(d: &Document, k: &str) -> Option<i64> {
    d.get(k).and_then(crate::bsonx::number::as_i64)
}

#[cfg(test)]
mod uuid_tests {
    /// Hand-written: the bytes 00 01 .. 0e ff in the 8-4-4-4-12 grouping.
    #[test]
    fn uuid_text_groups_lowercase_hex() {
        let b: Vec<u8> = (0u8..15).chain([0xff]).collect();
        assert_eq!(super::uuid_text(&b).as_deref(), Some("00010203-0405-0607-0809-0a0b0c0d0eff"));
        assert_eq!(super::uuid_text(&b[..15]), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lookup_after_a_stage_that_remakes_its_field_names_no_field_of_the_collection() {
        let p = |stages: Vec<Document>| joins_of("db", &stages.into_iter().map(Bson::Document).collect::<Vec<_>>());
        let lookup = |local: &str| bson::doc! {"$lookup": {"from": "r", "localField": local, "foreignField": "city", "as": "x"}};
        let local = |js: Vec<Join>| js.into_iter().map(|j| j.local_field).collect::<Vec<_>>();
        // The trial's pipeline: grouped by city, then joined on the group key.
        assert_eq!(local(p(vec![bson::doc! {"$group": {"_id": "$city", "n": {"$sum": 1}}}, lookup("_id")])), vec![None]);
        // Untouched names stay the collection's; a match, sort or unwind keeps them.
        let kept = vec![
            bson::doc! {"$match": {"a": 1}},
            bson::doc! {"$unwind": "$tags"},
            bson::doc! {"$project": {"city": 1, "_id": 0}},
            lookup("city.name"),
        ];
        assert_eq!(local(p(kept)), vec![Some("city.name".to_string())]);
        // Names a stage makes: a computed projection, $set, an earlier join's `as`, $unset.
        for made in [
            bson::doc! {"$project": {"city": {"$toUpper": "$town"}}},
            bson::doc! {"$set": {"city": "$town"}},
            bson::doc! {"$lookup": {"from": "q", "localField": "a", "foreignField": "b", "as": "city"}},
            bson::doc! {"$unset": ["city"]},
            bson::doc! {"$replaceRoot": {"newRoot": "$inner"}},
        ] {
            let js = p(vec![made.clone(), lookup("city")]);
            assert_eq!(js.last().unwrap().local_field, None, "{made}");
        }
    }
}
