//! What the server does with one write under one shard key on one version: the one verdict
//! that analyze's words and score and `check` read (issue 48). Sources:
//! - A write whose filter fixes the whole key by equality goes to one shard (mongos targeting).
//! - An update that changes a document's shard key value: immutable before 4.2; 4.2–7.0 only
//!   when the filter fixes the whole key (error 31025, "Shard key update is not allowed without
//!   specifying the full shard key in the query", mongodb/mongo `src/mongo/db/exec/update_stage.cpp`
//!   at eda533b781990de451847a8bff5d22176fb9ea4b), in a retryable write or a transaction; 7.1+
//!   also without it, through the write-without-shard-key protocol
//!   (`jstests/sharding/updateOne_without_shard_key/would_change_owning_shard_test.js` at
//!   cf9ffb12c7dfa47bdc21adb47f932e86e6e89c9d). Manual: "Change a Document's Shard Key Value"
//!   (https://www.mongodb.com/docs/manual/core/sharding-change-shard-key-value/).
//! - A single updateOne/deleteOne/findAndModify whose filter fixes neither the key nor `_id`
//!   (findAndModify: the key only): refused before 7.1 (ShardKeyNotFound), a two-phase write
//!   7.1+ (see `single_writes.rs`).
//! - An upsert without the whole key: refused on every version to 8.0 (see `upserts.rs`).
//!
//! A version the deployment does not tell is taken as before 7.1, and the words say both.

use super::rule::{Context, Effect, Finding, Rule, RuleId};
use crate::metrics::key_updates::update_touches_key;
use crate::model::{Op, Query, ShardKey};
use crate::targeting::Equalities;

/// The server's error codes the verdicts name (`src/mongo/base/error_codes.yml`).
pub(crate) const SHARD_KEY_NOT_FOUND: i32 = 61;
pub(crate) const IMMUTABLE_FIELD: i32 = 66;
pub(crate) const SHARD_KEY_UPDATE_WITHOUT_FULL_KEY: i32 = 31025;
pub(crate) const INVALID_OPTIONS: i32 = 72;

/// Why the server refuses a write, from which version it accepts it, and what to add.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    pub(crate) code: i32,
    pub(crate) why: &'static str,
    /// The first version that runs it as it is; None: no version does.
    pub(crate) accepted_from: Option<(u32, u32)>,
    /// The key's fields the filter must fix by equality for every version to accept it.
    pub(crate) fix: Vec<String>,
}

/// What the server does with one write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Verdict {
    /// The filter fixes the whole key: one shard.
    Targeted,
    /// Sent to every shard the filter may match (a multi write, a single write by `_id`).
    Broadcast,
    /// 7.1+: a broadcast read, then the write (a write without the shard key).
    TwoPhase,
    Refused(Refusal),
}

/// Whether `q` changes a document's value of `key`, and whether this version allows it.
pub(crate) fn changes_key(q: &Query, key: &ShardKey) -> bool {
    q.update.as_ref().is_some_and(|u| update_touches_key(key, &q.filter, u))
}

/// The verdict for one write (reads and inserts: Targeted, they are not this rule's).
pub(crate) fn verdict(q: &Query, key: &ShardKey, version: Option<(u32, u32)>) -> Verdict {
    if q.op.is_read() || q.op == Op::Insert {
        return Verdict::Targeted;
    }
    let eqs = Equalities::of(&q.filter, q.let_vars.as_ref());
    let full_key = eqs.fix_key(key);
    let fix = || -> Vec<String> { key.paths().filter(|p| !q.filter.contains_key(*p)).map(str::to_string).collect() };
    let before_7_1 = version.is_none_or(|v| v < (7, 1));
    let single = !q.multi || q.op == Op::FindAndModify;
    let id_fixed = eqs.fix_id();
    // `_id` rescues updateOne/deleteOne only: findAndModify needs the shard key (DOCS-14854).
    let by_id = q.op != Op::FindAndModify && id_fixed;
    // mongos refuses first (its targeting), the shard then (update_stage.cpp): an upsert or
    // a single write without key or _id is refused before it could reach the 31025 check.
    if !full_key {
        if q.upsert && matches!(q.op, Op::Update | Op::FindAndModify) {
            return Verdict::Refused(Refusal {
                code: SHARD_KEY_NOT_FOUND,
                why: "an upsert must fix the whole shard key in its filter",
                accepted_from: None,
                fix: fix(),
            });
        }
        if single && !by_id && before_7_1 {
            return Verdict::Refused(Refusal {
                code: SHARD_KEY_NOT_FOUND,
                why: "a single-document write must fix the whole shard key (or _id, for updateOne/deleteOne) in its filter",
                accepted_from: Some((7, 1)),
                fix: fix(),
            });
        }
    }
    if changes_key(q, key) {
        if version.is_some_and(|v| v < (4, 2)) {
            return Verdict::Refused(Refusal {
                code: IMMUTABLE_FIELD,
                why: "before 4.2 a document's shard key value cannot change",
                accepted_from: Some((4, 2)),
                fix: Vec::new(),
            });
        }
        // useTwoPhaseProtocol (src/mongo/s/write_ops/write_without_shard_key_util.cpp at
        // mongodb/mongo 04bbde7): "updateOne and deleteOne do not use the two phase protocol for
        // single writes that specify _id in their queries, unless a document is being upserted";
        // a multi update never does. Only a two-phase write may change the key without the whole
        // key (update_stage.cpp's `$_allowShardKeyUpdatesWithoutFullShardKeyInQuery`), so these
        // are refused on every version; a multi update naming the whole key too
        // ("Multi-update operations are not allowed when updating the shard key field").
        let update_by_id = q.op == Op::Update && !q.multi && id_fixed;
        let multi_update = q.op == Op::Update && q.multi;
        if multi_update || (update_by_id && !full_key) {
            return Verdict::Refused(Refusal {
                code: if full_key { INVALID_OPTIONS } else { SHARD_KEY_UPDATE_WITHOUT_FULL_KEY },
                why: if multi_update {
                    "a multi update cannot change the shard key value"
                } else {
                    "an update that changes the shard key value must fix the whole shard key in its filter (an updateOne by _id is never a two-phase write)"
                },
                accepted_from: None,
                fix: if multi_update { Vec::new() } else { fix() },
            });
        }
        if !full_key {
            if before_7_1 {
                return Verdict::Refused(Refusal {
                    code: SHARD_KEY_UPDATE_WITHOUT_FULL_KEY,
                    why: "an update that changes the shard key value must fix the whole shard key in its filter",
                    accepted_from: Some((7, 1)),
                    fix: fix(),
                });
            }
            return Verdict::TwoPhase;
        }
    }
    if full_key {
        return Verdict::Targeted;
    }
    if single && !by_id {
        // 7.1+ (refused before, above).
        return Verdict::TwoPhase;
    }
    Verdict::Broadcast
}

/// What the server answers to the refused writes of a set: each distinct error code, and the
/// key's fields their filters lack (the fix), in the order the writes first show them.
#[derive(Default)]
pub(crate) struct Refusals {
    pub(crate) codes: Vec<i32>,
    pub(crate) fields: Vec<String>,
}

/// The refusals among `writes` under `key` on `version` that `keep` keeps: one verdict each.
pub(crate) fn refusals<'a>(
    writes: impl Iterator<Item = &'a Query>,
    key: &ShardKey,
    version: Option<(u32, u32)>,
    keep: impl Fn(&Refusal) -> bool,
) -> Refusals {
    merged(writes.filter_map(|q| match verdict(q, key, version) {
        Verdict::Refused(r) => keep(&r).then_some(r),
        _ => None,
    }))
}

/// The codes and fields of `refused`, each once, in the order they first show.
pub(crate) fn merged(refused: impl Iterator<Item = Refusal>) -> Refusals {
    let mut out = Refusals::default();
    for r in refused {
        if !out.codes.contains(&r.code) {
            out.codes.push(r.code);
        }
        for f in r.fix {
            if !out.fields.contains(&f) {
                out.fields.push(f);
            }
        }
    }
    out
}

/// "6.0" / "before 7.1": the version words of a refusal.
pub(crate) fn version_words(version: Option<(u32, u32)>) -> String {
    match version {
        Some((a, b)) => format!("this deployment's version ({a}.{b}) refuses them"),
        None => "versions before 7.1 refuse them".to_string(),
    }
}

pub(super) const RULE: Rule = Rule {
    id: RuleId::ShardKeyUpdateWithoutFullKey,
    source: "https://www.mongodb.com/docs/manual/core/sharding-change-shard-key-value/",
    versions: "immutable before 4.2; 4.2+ only with the whole key in the filter (31025), except 7.1+'s two-phase writes (never an updateOne by _id nor a multi update)",
    check,
};

/// Updates that change the key's value and that the version refuses (31025 or immutable):
/// writes that would fail, scored, when the deployment's version says so; said otherwise.
fn check(rule: &Rule, cx: &Context, key: &ShardKey) -> Vec<Finding> {
    let refused = |q: &Query| {
        matches!(verdict(q, key, cx.server_version), Verdict::Refused(Refusal { code, .. })
            if code == SHARD_KEY_UPDATE_WITHOUT_FULL_KEY || code == IMMUTABLE_FIELD || code == INVALID_OPTIONS)
    };
    let failed: Vec<&Query> = cx.queries.iter().copied().filter(|q| changes_key(q, key) && refused(q)).collect();
    let Some((percent, words)) = super::words::failing(cx, "updates that change the shard key value without fixing the whole key", &failed)
    else {
        return Vec::new();
    };
    // The key's fields the refused updates' filters lack, in key order.
    let Refusals { mut codes, fields: missing } =
        refusals(cx.queries.iter().copied().filter(|q| changes_key(q, key)), key, cx.server_version, |_| true);
    // Refused on every version (an updateOne by _id, a multi update) is a failing write
    // whatever the cluster will run; refused before 7.1 only, when the deployment says so.
    let everywhere = cx.queries.iter().filter(|q| changes_key(q, key)).any(|q| {
        matches!(verdict(q, key, Some((7, 1))), Verdict::Refused(Refusal { code, .. })
            if code == SHARD_KEY_UPDATE_WITHOUT_FULL_KEY || code == INVALID_OPTIONS)
    });
    let fix = if missing.is_empty() { String::new() } else { format!("; fix: add {} to the filter", missing.join(", ")) };
    // The codes the server answers with: 31025 without the whole key, 72 (InvalidOptions) for
    // a multi update, which may not change the key whatever its filter.
    codes.sort_unstable();
    // A multi update may never change the key (31025 without the whole key, 72 with it):
    // the fix is single-document writes, not a field added to its filter.
    let multi = cx.queries.iter().any(|q| changes_key(q, key) && q.multi && q.op == Op::Update);
    let fix = match (fix.is_empty(), multi) {
        (_, false) => fix,
        (true, true) => "; fix: change the key in single-document writes whose filter fixes the whole key".to_string(),
        (false, true) => format!("{fix} (a multi update: change the key in single-document writes whose filter fixes the whole key)"),
    };
    let error = match codes.as_slice() {
        [one] => format!("error {one}"),
        many => format!("errors {}", many.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let (effect, tail) = match cx.server_version {
        _ if everywhere => (
            Effect::WritesFail,
            format!(
                "refused ({error}) on every version: an updateOne by _id or a multi update is never a two-phase write, so its filter must fix the whole key (and a multi update cannot change it){fix}"
            ),
        ),
        Some(v) if v < (7, 1) => (
            Effect::WritesFail,
            format!("refused (error {SHARD_KEY_UPDATE_WITHOUT_FULL_KEY}): {}; accepted from 7.1{fix}", version_words(Some(v))),
        ),
        _ => (
            Effect::Warning,
            format!("refused (error {SHARD_KEY_UPDATE_WITHOUT_FULL_KEY}) before 7.1; 7.1+ runs them as a write without the shard key{fix}"),
        ),
    };
    let mut f = rule.finding(effect, format!("{words}: {tail}"));
    f.percentage_of_writes = Some(percent);
    f.refused_here = effect == Effect::WritesFail;
    f.accepted_from = (!everywhere).then_some((7, 1));
    f.refused_if_older = !everywhere && cx.server_version.is_none();
    f.filter_fix = missing;
    vec![f]
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{cx, key};
    use super::*;
    use crate::model::{QueryOrigin, UpdateSpec};
    use bson::doc;

    fn update(filter: bson::Document, set: bson::Document) -> Query {
        Query {
            update: Some(UpdateSpec::Modifiers(doc! {"$set": set})),
            ..Query::new(Op::Update, "help.tickets", filter, QueryOrigin::Profiler)
        }
    }

    fn code(v: Verdict) -> Option<(i32, Option<(u32, u32)>)> {
        match v {
            Verdict::Refused(r) => Some((r.code, r.accepted_from)),
            _ => None,
        }
    }

    /// The helpdesk case (issue 48): updateOne({_id}, {$set: {assignedTo}}) under
    /// {assignedTo: 1, _id: 1}. As jstests/sharding/updateOne_without_shard_key/
    /// write_without_shard_key_update_shard_key_errors.js (cbeb2d91d491c4fdb3f87ba794ee0e9bfe663725)
    /// and the 4.2+ shard key update tests: 31025 before 7.1, accepted 7.1+; immutable before 4.2.
    #[test]
    fn shard_key_value_change_per_version() {
        let k = key("{assignedTo: 1, _id: 1}");
        let q = update(doc! {"_id": 7}, doc! {"assignedTo": "ann"});
        assert_eq!(code(verdict(&q, &k, Some((4, 0)))), Some((IMMUTABLE_FIELD, Some((4, 2)))));
        assert_eq!(code(verdict(&q, &k, Some((4, 2)))), Some((SHARD_KEY_UPDATE_WITHOUT_FULL_KEY, None)));
        assert_eq!(code(verdict(&q, &k, Some((6, 0)))), Some((SHARD_KEY_UPDATE_WITHOUT_FULL_KEY, None)));
        assert_eq!(code(verdict(&q, &k, Some((7, 0)))), Some((SHARD_KEY_UPDATE_WITHOUT_FULL_KEY, None)));
        // An updateOne by _id is never a two-phase write (useTwoPhaseProtocol, 04bbde7): refused
        // on 7.1+ too; by another field it is two-phase there, and may change the key.
        assert_eq!(code(verdict(&q, &k, Some((7, 1)))), Some((SHARD_KEY_UPDATE_WITHOUT_FULL_KEY, None)));
        assert_eq!(code(verdict(&q, &k, Some((8, 0)))), Some((SHARD_KEY_UPDATE_WITHOUT_FULL_KEY, None)));
        let by_number = update(doc! {"number": 7}, doc! {"assignedTo": "ann"});
        assert_eq!(code(verdict(&by_number, &k, Some((6, 0)))), Some((SHARD_KEY_NOT_FOUND, Some((7, 1)))));
        assert_eq!(verdict(&by_number, &k, Some((7, 1))), Verdict::TwoPhase);
        let many = Query { multi: true, ..update(doc! {"_id": 7, "assignedTo": "bob"}, doc! {"assignedTo": "ann"}) };
        assert_eq!(code(verdict(&many, &k, Some((8, 0)))), Some((INVALID_OPTIONS, None)));
        // Unknown version: taken as before 7.1.
        match verdict(&q, &k, None) {
            Verdict::Refused(r) => assert_eq!(r.fix, vec!["assignedTo".to_string()]),
            v => panic!("{v:?}"),
        }
        // The whole key in the filter: allowed from 4.2 (one shard's document moves).
        let full = update(doc! {"_id": 7, "assignedTo": "bob"}, doc! {"assignedTo": "ann"});
        assert_eq!(verdict(&full, &k, Some((6, 0))), Verdict::Targeted);
        assert_eq!(code(verdict(&full, &k, Some((4, 0)))), Some((IMMUTABLE_FIELD, Some((4, 2)))));
        // Not touching the key: by _id is sent to the shards, never refused.
        let other = update(doc! {"_id": 7}, doc! {"status": "closed"});
        assert_eq!(verdict(&other, &k, Some((6, 0))), Verdict::Broadcast);
    }

    /// Single writes and upserts, as single_writes.rs and upserts.rs (updateOne_without_shard_key_basic.js,
    /// find_and_modify_without_shard_key.js at the commits listed for that folder).
    #[test]
    fn single_writes_and_upserts_per_version() {
        let k = key("{orderId: 1}");
        let by_number = update(doc! {"number": 3}, doc! {"shipped": true});
        assert_eq!(code(verdict(&by_number, &k, Some((6, 0)))), Some((SHARD_KEY_NOT_FOUND, Some((7, 1)))));
        assert_eq!(verdict(&by_number, &k, Some((7, 1))), Verdict::TwoPhase);
        let fam = Query { op: Op::FindAndModify, ..update(doc! {"_id": 3}, doc! {"shipped": true}) };
        assert!(code(verdict(&fam, &k, Some((6, 0)))).is_some(), "_id does not rescue findAndModify");
        let multi = Query { multi: true, ..by_number.clone() };
        assert_eq!(verdict(&multi, &k, Some((6, 0))), Verdict::Broadcast);
        let ups = Query { upsert: true, ..by_number.clone() };
        assert_eq!(code(verdict(&ups, &k, Some((8, 0)))), Some((SHARD_KEY_NOT_FOUND, None)));
        let targeted = update(doc! {"orderId": 1}, doc! {"shipped": true});
        assert_eq!(verdict(&targeted, &k, Some((6, 0))), Verdict::Targeted);
    }

    /// The helpdesk's 436 updates among 762 writes: refused on 6.0, capped as writes that fail;
    /// said, not scored, when the version is unknown.
    #[test]
    fn tickets_case_refused_on_6_0() {
        let k = key("{assignedTo: 1, _id: 1}");
        let mut qs: Vec<Query> = (0..436).map(|i| update(doc! {"_id": i}, doc! {"assignedTo": "ann"})).collect();
        qs.extend((0..326).map(|i| update(doc! {"_id": i}, doc! {"status": "open"})));
        let refs: Vec<&Query> = qs.iter().collect();
        let mut c = cx(None, None, &refs);
        c.server_version = Some((6, 0));
        let f = check(&RULE, &c, &k);
        assert_eq!(f[0].effect, Effect::WritesFail);
        assert!(f[0].refused_here);
        // 436 / 762 = 57.2%, by hand.
        assert_eq!(f[0].percentage_of_writes, Some(57.2));
        assert!(f[0].message.contains("refused (error 31025) on every version"), "{}", f[0].message);
        assert!(f[0].message.ends_with("fix: add assignedTo to the filter"), "{}", f[0].message);
        // By _id: no version accepts them, known or not.
        for v in [None, Some((7, 1)), Some((8, 0))] {
            c.server_version = v;
            assert_eq!(check(&RULE, &c, &k)[0].effect, Effect::WritesFail, "{v:?}");
        }
        // A multi update moving documents between keys (a helpdesk merging tickets: comments'
        // ticketId set by updateMany): 31025 without the whole key (update_stage.cpp checks it
        // before the multi rule, 72), on every version; no field added makes it run.
        let merge: Vec<Query> = (0..5).map(|i| Query { multi: true, ..update(doc! {"ticketId": i}, doc! {"ticketId": i + 100}) }).collect();
        let refs: Vec<&Query> = merge.iter().collect();
        let mut c = cx(None, None, &refs);
        c.server_version = Some((6, 0));
        let f = check(&RULE, &c, &key("{tenantId: 1, ticketId: 1}"));
        assert_eq!(f[0].effect, Effect::WritesFail);
        assert!(f[0].message.contains("refused (error 31025) on every version"), "{}", f[0].message);
        assert!(
            f[0].message.ends_with("fix: change the key in single-document writes whose filter fixes the whole key"),
            "{}",
            f[0].message
        );
        // By another field: mongos refuses them first before 7.1 (single_writes' finding, code
        // 61), 7.1+ runs them two-phase: not this rule's on any version.
        let by_agent: Vec<Query> = (0..10).map(|i| update(doc! {"ticketNo": i}, doc! {"assignedTo": "ann"})).collect();
        let refs: Vec<&Query> = by_agent.iter().collect();
        let mut c = cx(None, None, &refs);
        c.server_version = None;
        assert!(check(&RULE, &c, &k).is_empty());
        c.server_version = Some((7, 1));
        assert!(check(&RULE, &c, &k).is_empty(), "7.1+ runs them two-phase");
    }
}
