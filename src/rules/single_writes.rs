//! Single-document writes (`updateOne`, `deleteOne`, `findAndModify`, without `upsert`) whose
//! filter fixes neither the whole shard key nor `_id` by equality: before 7.1 a sharded
//! collection refuses them ("must contain the shard key" / ShardKeyNotFound); 7.1+ runs them
//! as writes without a shard key (a broadcast read, then the write). Manual,
//! `db.collection.updateOne()` "Sharded Collections" and the 7.1 release notes
//! (https://www.mongodb.com/docs/manual/reference/method/db.collection.updateOne/#sharded-collections).
//! The `_id` alternative is updateOne's and deleteOne's only: findAndModify (findOneAndUpdate)
//! must carry an equality on the shard key (manual `db.collection.findOneAndUpdate()` "Sharded
//! Collections", DOCS-14854; SERVER-44422 in 5.0.20/6.0.9/7.0 also accepts a filter that targets
//! one shard, which an equality on the key is, so the rule asks for the key).

use super::rule::{Context, Effect, Finding, Rule, RuleId};
use super::words::failing;
use super::write_targeting::{merged, verdict, Refusal, Verdict, SHARD_KEY_NOT_FOUND};
use crate::model::{Op, Query, ShardKey};

pub(super) const RULE: Rule = Rule {
    id: RuleId::SingleWriteWithoutShardKey,
    source: "https://www.mongodb.com/docs/manual/reference/method/db.collection.updateOne/#sharded-collections",
    versions: "before 7.1 they fail; 7.1+ broadcasts them",
    check,
};

fn check(rule: &Rule, cx: &Context, key: &ShardKey) -> Vec<Finding> {
    let single = |q: &Query| !q.upsert && !q.multi && matches!(q.op, Op::Update | Op::Delete | Op::FindAndModify);
    // The one verdict (`write_targeting`), asked as before 7.1: a write refused for naming
    // neither the key nor _id. A key value change is `write_targeting`'s own finding (31025).
    // Each refusal kept for its fix below: the verdict asked once per write (it was asked
    // twice, 2-3% of `plan`'s CPU).
    let refused: Vec<(&Query, Refusal)> = cx
        .queries
        .iter()
        .copied()
        .filter(|q| single(q))
        .filter_map(|q| match verdict(q, key, None) {
            Verdict::Refused(r) if r.code == SHARD_KEY_NOT_FOUND => Some((q, r)),
            _ => None,
        })
        .collect();
    let failed: Vec<&Query> = refused.iter().map(|x| x.0).collect();
    let Some((percent, words)) =
        failing(cx, "single-document writes that fix neither the whole key nor, for an updateOne or deleteOne, _id", &failed)
    else {
        return Vec::new();
    };
    // Capped as writes that fail when the deployment says it runs a version before 7.1 (as
    // the 31025 rule and upserts are); said only, with both versions, when it does not tell.
    let before_7_1 = cx.server_version.is_some_and(|v| v < (7, 1));
    let tail = if before_7_1 {
        "this deployment's version (before 7.1) refuses them on a sharded collection (error 61, ShardKeyNotFound); accepted from 7.1, which runs each as a broadcast read then the write"
    } else {
        "they fail before 7.1 (error 61, ShardKeyNotFound); 7.1+ runs each as a broadcast read then the write"
    };
    // The key's fields the refused writes' filters lack (the refusal's own fix), in key order.
    let missing = merged(refused.into_iter().map(|x| x.1)).fields;
    let fix = format!("fix: add {} to the filter", missing.join(", "));
    let effect = if before_7_1 { Effect::WritesFail } else { Effect::Warning };
    let mut f = rule.finding(effect, format!("{words}: {tail}; {fix}"));
    f.percentage_of_writes = Some(percent);
    f.refused_here = before_7_1;
    f.accepted_from = Some((7, 1));
    f.refused_if_older = cx.server_version.is_none();
    f.filter_fix = missing;
    vec![f]
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{cx, key};
    use super::*;
    use crate::model::QueryOrigin;
    use bson::doc;

    #[test]
    fn said_with_the_deployments_version_and_the_fix() {
        let qs = [
            Query::new(Op::Delete, "app.a", doc! {"email": "x"}, QueryOrigin::Profiler),
            Query::new(Op::Update, "app.a", doc! {"_id": 1}, QueryOrigin::Profiler),
            Query { multi: true, ..Query::new(Op::Update, "app.a", doc! {"status": "x"}, QueryOrigin::Profiler) },
            Query::new(Op::Update, "app.a", doc! {"tenantId": 3}, QueryOrigin::Profiler),
            // findAndModify by _id: _id does not rescue it.
            Query::new(Op::FindAndModify, "app.a", doc! {"_id": 2}, QueryOrigin::Profiler),
        ];
        let refs: Vec<&Query> = qs.iter().collect();
        let mut c = cx(None, None, &refs);
        // Under {tenantId: 1}: the delete by email and the findAndModify by _id (the _id update
        // targets, the multi is not single): 2 of 5 writes.
        let f = check(&RULE, &c, &key("{tenantId: 1}"));
        assert_eq!(f[0].effect, Effect::Warning);
        assert_eq!(f[0].percentage_of_writes, Some(40.0));
        assert!(f[0].message.contains("1× delete {email: eq}, 1× findAndModify {_id: eq}"), "{}", f[0].message);
        // Under {_id: 1} the findAndModify carries the key; the delete by email and the update
        // by tenantId fix neither: 2 of 5.
        let f = check(&RULE, &c, &key("{_id: 1}"));
        assert!(f[0].message.contains("1× delete {email: eq}, 1× update {tenantId: eq}"), "{}", f[0].message);
        c.server_version = Some((6, 0));
        let f = check(&RULE, &c, &key("{tenantId: 1}"));
        // Refused by 6.0 (mongos' ShardKeyNotFound): writes that fail, capped.
        assert_eq!(f[0].effect, Effect::WritesFail);
        assert!(
            f[0].message.contains(
                "this deployment's version (before 7.1) refuses them on a sharded collection (error 61, ShardKeyNotFound); accepted from 7.1"
            ),
            "{}",
            f[0].message
        );
        assert!(f[0].message.ends_with("fix: add tenantId to the filter"), "{}", f[0].message);
        // The fix names only the fields the filters lack: the update names tenantId already.
        let f = check(&RULE, &c, &key("{tenantId: 1, region: 1}"));
        assert!(f[0].message.ends_with("fix: add tenantId, region to the filter"), "{}", f[0].message);
        let only_update = [Query::new(Op::Update, "app.a", doc! {"tenantId": 3}, QueryOrigin::Profiler)];
        let refs1: Vec<&Query> = only_update.iter().collect();
        let mut c1 = cx(None, None, &refs1);
        c1.server_version = Some((6, 0));
        let f = check(&RULE, &c1, &key("{tenantId: 1, region: 1}"));
        assert!(f[0].message.ends_with("fix: add region to the filter"), "{}", f[0].message);
        c.server_version = Some((7, 1));
        assert_eq!(check(&RULE, &c, &key("{tenantId: 1}"))[0].effect, Effect::Warning);
        assert!(check(&RULE, &c, &key("{email: 1}")).len() == 1, "the update by tenantId now");
    }
}
