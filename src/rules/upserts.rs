//! Upserts (`update` with `upsert: true`, `findAndModify` with `upsert: true`) on a sharded
//! collection must fix the whole shard key by equality in the filter, or the server refuses
//! them (ShardKeyNotFound) — in every version to 8.0, 7.1's writes without a shard key
//! included. Manual: `db.collection.updateOne()` "Upsert on a Sharded Collection",
//! `db.collection.findAndModify()` "Upsert with a sharded collection"
//! (https://www.mongodb.com/docs/manual/reference/method/db.collection.updateOne/#upsert-on-a-sharded-collection).
//! A hashed field counts when its value is fixed by equality (the server hashes it).

use super::rule::{Context, Effect, Finding, Rule, RuleId};
use super::words::failing;
use crate::model::{Op, Query, ShardKey};
use crate::targeting::Equalities;

pub(super) const RULE: Rule = Rule {
    id: RuleId::UpsertWithoutShardKey,
    source: "https://www.mongodb.com/docs/manual/reference/method/db.collection.updateOne/#upsert-on-a-sharded-collection",
    versions: "every version to 8.0",
    check,
};

fn check(rule: &Rule, cx: &Context, key: &ShardKey) -> Vec<Finding> {
    let is_upsert = |q: &Query| q.upsert && matches!(q.op, Op::Update | Op::FindAndModify);
    let lacks_key = |q: &Query| !Equalities::of(&q.filter, q.let_vars.as_ref()).fix_key(key);
    let failed: Vec<&Query> = cx.queries.iter().copied().filter(|q| is_upsert(q) && lacks_key(q)).collect();
    let Some((percent, words)) = failing(cx, "upserts whose filter does not fix the whole key by equality", &failed) else {
        return Vec::new();
    };
    let mut f = rule.finding(
        Effect::WritesFail,
        format!("{words}: a sharded collection refuses them (an upsert must carry the full shard key); the application's writes would fail until they name {key}'s fields"),
    );
    f.percentage_of_writes = Some(percent);
    // Refused on every version (write_targeting: ShardKeyNotFound, accepted by none).
    f.refused_here = true;
    f.filter_fix = super::write_targeting::refusals(failed.into_iter(), key, None, |_| true).fields;
    vec![f]
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{cx, key};
    use super::*;
    use crate::model::QueryOrigin;
    use bson::doc;

    fn upsert(filter: bson::Document) -> Query {
        Query { upsert: true, ..Query::new(Op::Update, "app.devices", filter, QueryOrigin::Profiler) }
    }

    #[test]
    fn upserts_that_do_not_fix_the_key_fail() {
        // 6 upserts by deviceId, 4 plain updates by _id: 10 writes.
        let mut qs: Vec<Query> = (0..6).map(|i| upsert(doc! {"deviceId": i})).collect();
        qs.extend((0..4).map(|i| Query::new(Op::Update, "app.devices", doc! {"_id": i}, QueryOrigin::Profiler)));
        let refs: Vec<&Query> = qs.iter().collect();
        let c = cx(None, None, &refs);
        assert!(check(&RULE, &c, &key("{deviceId: 1}")).is_empty(), "the upserts fix the whole key");
        assert!(check(&RULE, &c, &key("{deviceId: \"hashed\"}")).is_empty(), "a hashed field fixed by equality counts");
        let f = check(&RULE, &c, &key("{siteId: 1, deviceId: 1}"));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].effect, Effect::WritesFail);
        assert_eq!(f[0].percentage_of_writes, Some(60.0));
        assert!(
            f[0].message.starts_with("60.0% of 10 sampled updates and deletes are upserts whose filter does not fix the whole key by equality (6× update {deviceId: eq})"),
            "{}",
            f[0].message
        );
        assert_eq!(check(&RULE, &c, &key("{_id: \"hashed\"}"))[0].percentage_of_writes, Some(60.0));
    }
}
