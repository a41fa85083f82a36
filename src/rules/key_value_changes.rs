//! Updates that change a document's shard key value without the full shard key by equality in
//! their filter: the shard refuses them with error 31025 ("Shard key update is not allowed
//! without specifying the full shard key in the query", `UpdateStage::
//! _checkRestrictionsOnUpdatingShardKeyAreNotViolated`, src/mongo/db/exec/update_stage.cpp).
//! 7.1+ lifts this only for a write sent through the two-phase protocol (mongos then sets
//! `$_allowShardKeyUpdatesWithoutFullShardKeyInQuery`), and `useTwoPhaseProtocol`
//! (src/mongo/s/write_ops/write_without_shard_key_util.cpp at mongodb/mongo 04bbde7: "updateOne
//! and deleteOne do not use the two phase protocol for single writes that specify _id in their
//! queries, unless a document is being upserted") never takes an updateOne that fixes `_id` by
//! equality, nor a multi update: those
//! are broadcast as before and refused on every version. A multi update that names the whole
//! key is refused too ("Multi-update operations are not allowed when updating the shard key
//! field", the same function). Before 4.2 a shard key value cannot change at all
//! (ImmutableField). The manual: "Change a Document's Shard Key Value"
//! (https://www.mongodb.com/docs/manual/core/sharding-change-shard-key-value/).
//! A single update without `_id` or the key is `single_writes`' (refused before 7.1, two-phase
//! from 7.1, where the key may change).

use super::upserts::failing;
use super::{Context, Effect, Finding, Rule, RuleId};
use crate::metrics::key_updates::update_touches_key;
use crate::model::{Op, Query, ShardKey};
use crate::targeting::{extract_key_by_equality, is_exact_id_query};

pub(super) const RULE: Rule = Rule {
    id: RuleId::ShardKeyChangeWithoutShardKey,
    source: "https://www.mongodb.com/docs/manual/core/sharding-change-shard-key-value/",
    versions: "4.2+ without the full key in the filter (error 31025), 7.1+ two-phase writes excepted; before 4.2 always",
    check,
};

fn check(rule: &Rule, cx: &Context, key: &ShardKey) -> Vec<Finding> {
    let before_4_2 = cx.server_version.is_some_and(|v| v < (4, 2));
    let default_collation = cx.options.and_then(|o| o.collation.as_ref());
    let changes_key = |q: &Query| {
        !q.upsert
            && matches!(q.op, Op::Update | Op::FindAndModify)
            && q.update.as_ref().is_some_and(|u| update_touches_key(key, &q.filter, u))
    };
    let refused = |q: &Query| {
        let full_key = extract_key_by_equality(key, &q.filter, q.let_vars.as_ref()).is_some();
        let by_id = q.op == Op::Update && is_exact_id_query(&q.filter, q.let_vars.as_ref(), q.collation.as_ref(), default_collation);
        before_4_2 || (q.multi && q.op == Op::Update) || (!full_key && by_id)
    };
    let what = "updates that change the shard key without the whole key by equality in their filter";
    let Some((percent, words)) = failing(cx, what, changes_key, refused) else {
        return Vec::new();
    };
    // The fix names the key's fields the refused filters leave unfixed (the `_id` of
    // `{assignedTo: 1, _id: 1}` is already there).
    let unfixed = |path: &str| {
        let one = ShardKey::single(path, crate::model::KeyKind::Range);
        cx.queries.iter().any(|q| changes_key(q) && refused(q) && extract_key_by_equality(&one, &q.filter, q.let_vars.as_ref()).is_none())
    };
    let fields: Vec<&str> = key.paths().filter(|p| unfixed(p)).collect();
    let tail = if before_4_2 {
        "this deployment's version (before 4.2) never changes a shard key value (ImmutableField); 4.2+ does with the whole key in the filter".to_string()
    } else {
        format!(
            "the server refuses each (error 31025) on every version, 7.1+ included (an updateOne by _id or a multi update is never a two-phase write); fix: add {} to the filter by equality, as updateOne, in a transaction or a retryable write",
            fields.join(" and ")
        )
    };
    let mut f = rule.finding(Effect::WritesFail, format!("{words}: {tail}"));
    f.percentage_of_writes = Some(percent);
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
            ..Query::new(Op::Update, "app.tickets", filter, QueryOrigin::Profiler)
        }
    }

    /// The tickets case of issue 48: reassignments by `_id` under `{assignedTo: 1, _id: 1}`.
    /// Hand count: 3 reassignments by _id of 5 writes; the one that names the whole key and the
    /// one that does not touch assignedTo pass.
    #[test]
    fn reassignments_by_id_are_refused_on_every_version() {
        let qs = [
            update(doc! {"_id": 1}, doc! {"assignedTo": "ann"}),
            update(doc! {"_id": 2}, doc! {"assignedTo": "bob"}),
            update(doc! {"_id": 3, "status": "open"}, doc! {"assignedTo.name": "cy"}),
            update(doc! {"_id": 4, "assignedTo": "ann"}, doc! {"assignedTo": "dan"}),
            update(doc! {"_id": 5}, doc! {"status": "closed"}),
        ];
        let refs: Vec<&Query> = qs.iter().collect();
        let mut c = cx(None, None, &refs);
        for v in [None, Some((6, 0)), Some((7, 1)), Some((8, 0))] {
            c.server_version = v;
            let f = check(&RULE, &c, &key("{assignedTo: 1, _id: 1}"));
            assert_eq!(f.len(), 1, "{v:?}");
            assert_eq!(f[0].effect, Effect::WritesFail);
            assert_eq!(f[0].percentage_of_writes, Some(60.0));
            assert!(f[0].message.contains("(2× update {_id: eq}, 1× update {_id: eq, status: eq})"), "{}", f[0].message);
            assert!(f[0].message.contains("error 31025") && f[0].message.contains("fix: add assignedTo to the filter"), "{}", f[0].message);
        }
        // Before 4.2 the one with the whole key fails too (the key never changes).
        c.server_version = Some((4, 0));
        assert_eq!(check(&RULE, &c, &key("{assignedTo: 1, _id: 1}"))[0].percentage_of_writes, Some(80.0));
        // Under a key the updates do not touch, nothing.
        c.server_version = Some((6, 0));
        assert!(check(&RULE, &c, &key("{status: 1}")).len() == 1, "status changes by _id: refused too");
        assert!(check(&RULE, &c, &key("{region: 1}")).is_empty());
    }

    /// updateMany that changes the key: refused whatever the filter; an updateOne by another
    /// field is single_writes' (two-phase from 7.1, where the key may change).
    #[test]
    fn multi_updates_always_single_without_id_left_to_the_single_writes_rule() {
        let qs = [
            Query { multi: true, ..update(doc! {"assignedTo": "ann"}, doc! {"assignedTo": "bob"}) },
            update(doc! {"email": "x"}, doc! {"assignedTo": "bob"}),
        ];
        let refs: Vec<&Query> = qs.iter().collect();
        let c = cx(None, None, &refs);
        let f = check(&RULE, &c, &key("{assignedTo: 1}"));
        assert_eq!(f[0].percentage_of_writes, Some(50.0));
        assert!(f[0].message.contains("1× update {assignedTo: eq}"), "{}", f[0].message);
    }
}
