//! A collection already sharded keeps its key unless it is changed: `refineCollectionShardKey`
//! (4.4+) only adds suffix fields to the current key, its fields and kinds unchanged (manual,
//! "Refine a Shard Key": "Do not modify the range or hashed type for any of the current shard
//! key fields"); any other key needs `reshardCollection` (5.0+, manual "Reshard a
//! Collection"), which rewrites the whole collection; before 5.0 nothing else changes a key.
//! https://www.mongodb.com/docs/manual/core/sharding-change-a-shard-key/

use super::rule::{Context, Effect, Finding, Rule, RuleId};
use crate::model::ShardKey;

pub(super) const RULE: Rule = Rule {
    id: RuleId::ExistingShardKey,
    source: "https://www.mongodb.com/docs/manual/core/sharding-change-a-shard-key/",
    versions: "refine 4.4+ (suffix fields only); reshard 5.0+; before 4.4 a shard key never changes",
    check,
};

fn check(rule: &Rule, cx: &Context, key: &ShardKey) -> Vec<Finding> {
    let Some(current) = cx.current_key else { return Vec::new() };
    if key == current || key.refines(current) {
        return Vec::new();
    }
    // Same field names in front: what differs is a field's kind (refine keeps them).
    let starts_alike = key.fields.len() >= current.fields.len() && current.fields.iter().zip(&key.fields).all(|(a, b)| a.path == b.path);
    let why = if starts_alike {
        format!("it changes the range or hashed type of {current}'s fields, which refineCollectionShardKey keeps")
    } else {
        format!("it does not start with the current key {current}, so refineCollectionShardKey (suffix fields only) cannot reach it")
    };
    if let Some((major, minor)) = cx.server_version.filter(|v| *v < (5, 0)) {
        return vec![rule.finding(
            Effect::Refused,
            format!("the collection is sharded on {current} and {why}; this deployment's version ({major}.{minor}) has no reshardCollection (5.0+)"),
        )];
    }
    vec![rule.finding(
        Effect::Warning,
        format!("the collection is sharded on {current} and {why}: only reshardCollection (5.0+) changes to it, rewriting the whole collection (storage and oplog needs in the recommendation)"),
    )]
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{cx, key};
    use super::*;

    fn found(current: &str, k: &str, version: Option<(u32, u32)>) -> Vec<(Effect, String)> {
        let cur = key(current);
        let mut c = cx(None, None, &[]);
        c.current_key = Some(&cur);
        c.server_version = version;
        check(&RULE, &c, &key(k)).into_iter().map(|f| (f.effect, f.message)).collect()
    }

    /// The manual's own example: {customer_id: 1} refines to {customer_id: 1, order_id: 1},
    /// and must not become {customer_id: "hashed", order_id: 1}.
    #[test]
    fn refine_adds_suffix_fields_only_anything_else_reshards() {
        assert!(found("{customer_id: 1}", "{customer_id: 1}", None).is_empty());
        assert!(found("{customer_id: 1}", "{customer_id: 1, order_id: 1}", None).is_empty());
        assert!(found("{customer_id: 1}", "{customer_id: 1, order_id: \"hashed\"}", None).is_empty());
        let f = found("{customer_id: 1}", "{customer_id: \"hashed\", order_id: 1}", Some((6, 0)));
        assert_eq!(f[0].0, Effect::Warning);
        assert!(f[0].1.contains("it changes the range or hashed type of {customer_id: 1}'s fields"), "{}", f[0].1);
        let f = found("{customer_id: 1}", "{order_id: 1}", Some((7, 0)));
        assert!(f[0].1.contains("does not start with the current key {customer_id: 1}"), "{}", f[0].1);
        assert!(f[0].1.contains("only reshardCollection (5.0+)"), "{}", f[0].1);
        // The same field hashed instead of ranged: a change of kind, not of fields.
        let f = found("{customer_id: 1}", "{customer_id: \"hashed\"}", None);
        assert!(f[0].1.contains("it changes the range or hashed type of {customer_id: 1}'s fields"), "{}", f[0].1);
        // A shorter key is no refinement either.
        assert_eq!(found("{a: 1, b: 1}", "{a: 1}", None)[0].0, Effect::Warning);
        // Before 5.0 nothing but refine changes a key: refused.
        let f = found("{customer_id: 1}", "{order_id: 1}", Some((4, 4)));
        assert_eq!(f[0].0, Effect::Refused);
        assert!(f[0].1.ends_with("this deployment's version (4.4) has no reshardCollection (5.0+)"), "{}", f[0].1);
    }
}
