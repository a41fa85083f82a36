//! `_id` on a sharded collection: the server enforces its uniqueness per shard only unless
//! the key starts with `_id`. ObjectIds are unique by construction; `_id` values the
//! application chooses must be kept unique across shards by the application. Manual, "Unique
//! Indexes" (Sharded Clusters and Unique Indexes: "If the _id field is not the shard key or the
//! prefix of the shard key, _id index only enforces the uniqueness constraint per shard and not
//! across shards") and "Shard Keys"; every version.

use super::rule::{Context, Effect, Finding, Rule, RuleId};
use crate::model::ShardKey;

pub(super) const RULE: Rule = Rule {
    id: RuleId::IdUniqueness,
    source: "https://www.mongodb.com/docs/manual/core/index-unique/#sharded-clusters-and-unique-indexes and https://www.mongodb.com/docs/manual/core/sharding-shard-key/",
    versions: "every version",
    check,
};

fn check(rule: &Rule, cx: &Context, key: &ShardKey) -> Vec<Finding> {
    let Some(share) = cx.application_ids.filter(|s| *s > 0.0) else { return Vec::new() };
    // Measurements of a time series have no _id of their own.
    if key.fields.first().is_some_and(|f| f.path == "_id") || cx.options.is_some_and(|o| o.time_series.is_some()) {
        return Vec::new();
    }
    vec![rule.finding(
        Effect::Warning,
        format!(
            "_id is chosen by the application ({:.1}% of sampled documents hold an _id that is not an ObjectId) and the key does not start with _id: the server then keeps _id unique per shard only, so two documents on two shards may share one; the application must keep _id unique across shards (or shard on a key that starts with _id)",
            share * 100.0
        ),
    )]
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{cx, key};
    use super::*;

    #[test]
    fn said_when_ids_are_not_object_ids_and_the_key_does_not_start_with_id() {
        let mut c = cx(None, None, &[]);
        c.application_ids = Some(1.0);
        let f = check(&RULE, &c, &key("{tenantId: 1}"));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].effect, Effect::Warning);
        assert!(f[0].message.starts_with("_id is chosen by the application (100.0% of sampled documents"), "{}", f[0].message);
        // The key starts with _id (hashed too): unique across shards.
        assert!(check(&RULE, &c, &key("{_id: \"hashed\"}")).is_empty());
        assert!(check(&RULE, &c, &key("{_id: 1, a: 1}")).is_empty());
        // ObjectIds, or no documents read: nothing said.
        c.application_ids = Some(0.0);
        assert!(check(&RULE, &c, &key("{tenantId: 1}")).is_empty());
        c.application_ids = None;
        assert!(check(&RULE, &c, &key("{tenantId: 1}")).is_empty());
    }
}
