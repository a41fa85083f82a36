//! A capped collection cannot be sharded. Manual, "Sharding Reference > Operational
//! Restrictions" and `sh.shardCollection()`: "You cannot shard a capped collection"; the
//! server's shardCollection path answers InvalidOptions "can't shard a capped collection"
//! (mongodb/mongo, `src/mongo/db/s/`, every version since 3.x).

use super::rule::{Context, Effect, Finding, Rule, RuleId};
use crate::model::ShardKey;

pub(super) const RULE: Rule = Rule {
    id: RuleId::Capped,
    source: "https://www.mongodb.com/docs/manual/core/capped-collections/ (capped collections cannot be sharded)",
    versions: "every version",
    check,
};

fn check(rule: &Rule, cx: &Context, _key: &ShardKey) -> Vec<Finding> {
    if !cx.options.is_some_and(|o| o.capped) {
        return Vec::new();
    }
    vec![rule.finding(
        Effect::Refused,
        "capped collection: MongoDB cannot shard a capped collection (InvalidOptions) whatever the key; copy it into an uncapped collection (a TTL index keeps it bounded) before sharding".into(),
    )]
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{cx, key};
    use super::*;
    use crate::model::collection::CollectionOptions;

    #[test]
    fn a_capped_collection_refuses_every_key() {
        let capped = CollectionOptions { capped: true, ..Default::default() };
        let f = check(&RULE, &cx(None, Some(&capped), &[]), &key("{_id: \"hashed\"}"));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].effect, Effect::Refused);
        assert!(f[0].message.starts_with("capped collection: MongoDB cannot shard"), "{}", f[0].message);
        assert!(check(&RULE, &cx(None, Some(&CollectionOptions::default()), &[]), &key("{a: 1}")).is_empty());
        assert!(check(&RULE, &cx(None, None, &[]), &key("{a: 1}")).is_empty(), "unknown options: nothing said");
    }
}
