//! Unique indexes: on a sharded collection only `_id` and indexes whose fields start with
//! the whole shard key can stay unique, so `shardCollection` refuses a collection holding any
//! other unique index (InvalidOptions: "Uniqueness can't be maintained unless shard key is a
//! prefix").
//!
//! Ported from mongodb/mongo 49802bc44a41271ae1dac871b28bdf1146f77ece:
//! `src/mongo/db/s/shard_key_util.cpp` (validShardKeyIndexExists, check 1: every index with
//! `unique` or `prepareUnique` must satisfy `isIndexUniquenessCompatible`) and
//! `src/mongo/s/shard_key_pattern.cpp` (a unique index whose first field is `_id` is always
//! compatible; otherwise the key's field *names* must be a prefix of the index's, so a hashed
//! key `{a: "hashed"}` keeps a unique `{a: 1}`, and `{a: "hashed", b: 1}` does not keep `{b: 1}`).

use super::rule::{Context, Effect, Finding, Rule, RuleId};
use crate::model::index::IndexSpec;
use crate::model::ShardKey;

pub(super) const RULE: Rule = Rule {
    id: RuleId::UniqueIndex,
    source: "mongodb/mongo 49802bc src/mongo/db/s/shard_key_util.cpp (validShardKeyIndexExists) and src/mongo/s/shard_key_pattern.cpp (isIndexUniquenessCompatible); https://www.mongodb.com/docs/manual/core/sharding-choose-a-shard-key/#unique-indexes",
    versions: "every version",
    check,
};

/// The server's `isIndexUniquenessCompatible`.
pub(crate) fn keeps_unique(key: &ShardKey, index: &IndexSpec) -> bool {
    let names: Vec<&str> = index.key.keys().map(String::as_str).collect();
    if names.first() == Some(&"_id") {
        return true;
    }
    key.fields.len() <= names.len() && key.fields.iter().zip(&names).all(|(f, n)| f.path == *n)
}

fn check(rule: &Rule, cx: &Context, key: &ShardKey) -> Vec<Finding> {
    let Some(indexes) = cx.indexes else { return Vec::new() };
    indexes
        .iter()
        .filter(|ix| ix.unique && !keeps_unique(key, ix))
        .map(|ix| {
            let spec = ix.pattern();
            let mut f = rule.finding(
                Effect::Blocked,
                format!(
                    "unique index {} {spec} does not start with the key's fields: shardCollection refuses the collection while it exists (only _id and indexes prefixed by the shard key can be unique on a sharded collection); it keeps {}: to drop it, keep that in a proxy collection (the manual's way; the recommendation prints it), or choose a key its fields start with",
                    ix.name,
                    ix.guarantees().unwrap_or_default()
                ),
            );
            f.fix.push(format!("{}.dropIndex({:?})", cx.collection_handle(), ix.name));
            f.index = Some(Box::new(ix.clone()));
            f
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{cx, key};
    use super::*;
    use bson::{doc, Document};

    fn unique(name: &str, key: Document) -> IndexSpec {
        IndexSpec { name: name.into(), key, unique: true, ..IndexSpec::default() }
    }

    /// The cases of the server's own comment on isUniqueIndexCompatible (shard_key_pattern.h).
    #[test]
    fn the_servers_examples() {
        assert!(keeps_unique(&key("{a: 1}"), &unique("a", doc! {"a": 1})));
        assert!(keeps_unique(&key("{a: 1}"), &unique("ab", doc! {"a": 1, "b": 1})));
        assert!(keeps_unique(&key("{a: \"hashed\"}"), &unique("a", doc! {"a": 1})));
        assert!(!keeps_unique(&key("{a: 1}"), &unique("b", doc! {"b": 1})));
        assert!(!keeps_unique(&key("{a: \"hashed\", b: 1}"), &unique("b", doc! {"b": 1})));
        // _id-prefixed unique indexes are enforced by _id itself.
        assert!(keeps_unique(&key("{b: 1}"), &unique("_id_a", doc! {"_id": 1, "a": 1})));
        // The key longer than the index: not a prefix.
        assert!(!keeps_unique(&key("{a: 1, b: 1}"), &unique("a", doc! {"a": 1})));
    }

    #[test]
    fn each_conflicting_unique_index_blocks_with_its_drop_command() {
        let ix = vec![
            unique("_id_", doc! {"_id": 1}),
            unique("email_1", doc! {"email": 1}),
            unique("tenantId_1_username_1", doc! {"tenantId": 1, "username": 1}),
        ];
        let f = check(&RULE, &cx(Some(&ix), None, &[]), &key("{tenantId: 1, _id: 1}"));
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(f.iter().all(|x| x.effect == Effect::Blocked));
        assert!(f[0].message.starts_with("unique index email_1 {email: 1} does not start with the key's fields"), "{}", f[0].message);
        assert_eq!(f[0].fix, ["db.getSiblingDB(\"app\").getCollection(\"accounts\").dropIndex(\"email_1\")"]);
        // {tenantId: 1} keeps the compound one, not email_1.
        let f = check(&RULE, &cx(Some(&ix), None, &[]), &key("{tenantId: 1}"));
        assert_eq!(f.len(), 1);
        assert!(f[0].message.contains("email_1"));
        // {email: "hashed"} keeps email_1 but not the compound one.
        let f = check(&RULE, &cx(Some(&ix), None, &[]), &key("{email: \"hashed\"}"));
        assert_eq!(f.len(), 1);
        assert!(f[0].message.contains("tenantId_1_username_1"));
        // Indexes unknown: nothing said.
        assert!(check(&RULE, &cx(None, None, &[]), &key("{x: 1}")).is_empty());
    }
}
