//! How to apply the ranking's choice: the commands for an unsharded collection
//! (`createIndex`, `shardCollection`), and for a sharded one whose current key
//! loses, `refineCollectionShardKey` (the new key extends the current one) or
//! `reshardCollection`, with the manual's storage and oplog requirements.

use crate::model::{KeyKind, ShardKey};
use crate::util::text::mib;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Recommendation {
    pub(crate) key: ShardKey,
    /// What the choice does not rest on (targeting or the data not measured), said before
    /// the commands.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) caveats: Vec<String>,
    /// "shardCollection", "refineCollectionShardKey", "reshardCollection" or "keep".
    pub(crate) action: &'static str,
    /// mongosh commands, in order, to run through mongos.
    pub(crate) commands: Vec<String>,
    pub(crate) notes: Vec<String>,
}

/// What the recommendation needs to know about the collection.
pub(crate) struct Target<'a> {
    pub(crate) namespace: &'a str,
    pub(crate) winner: &'a ShardKey,
    /// Whether an index supports the winner: Some(true/false) live, None offline.
    pub(crate) has_supporting_index: Option<bool>,
    /// An index on the winner's exact pattern that cannot support it (sparse, partial, a
    /// collation): dropped before the supporting one is created (the server refuses two).
    pub(crate) replace_index: Option<&'a str>,
    pub(crate) current_key: Option<&'a ShardKey>,
    pub(crate) shards: usize,
    pub(crate) data_bytes: u64,
    pub(crate) index_bytes: Option<u64>,
    /// The collection holds no documents (shardCollection pre-splits a hashed key then).
    pub(crate) empty: bool,
    /// What blocks the winner (every candidate is blocked): their fixes run first.
    pub(crate) blocked_by: Vec<&'a crate::rules::Finding>,
}

fn index_spec(key: &ShardKey) -> String {
    key.to_string()
}

pub(crate) fn recommend(t: &Target) -> Recommendation {
    let (db, coll) = t.namespace.split_once('.').unwrap_or((t.namespace, ""));
    let create = format!("db.getSiblingDB({db:?}).getCollection({coll:?}).createIndex({})", index_spec(t.winner));
    let mut notes = Vec::new();
    let mut commands = Vec::new();
    let action = match t.current_key {
        Some(cur) if cur == t.winner => {
            notes.push("the collection is already sharded on the recommended key".into());
            "keep"
        }
        Some(cur) if t.winner.refines(cur) => {
            if t.has_supporting_index != Some(true) {
                commands.push(create);
            }
            commands.push(format!("db.adminCommand({{refineCollectionShardKey: {:?}, key: {}}})", t.namespace, t.winner));
            notes.push(format!(
                "{} extends the current key {cur}: refineCollectionShardKey (4.4+) adds the suffix fields without moving data; the index must exist first",
                t.winner
            ));
            notes.push("https://www.mongodb.com/docs/manual/core/sharding-refine-a-shard-key/".into());
            "refineCollectionShardKey"
        }
        Some(cur) => {
            commands.push(format!("db.adminCommand({{reshardCollection: {:?}, key: {}}})", t.namespace, t.winner));
            let need = t.index_bytes.map(|ix| (t.data_bytes + ix) * 2 / t.shards.max(1) as u64);
            notes.push(match need {
                Some(b) => format!(
                    "reshardCollection (5.0+) rewrites the collection from {cur}: each of the {} shards needs about {} free storage ((collection size {} + index size {}) × 2 / shards)",
                    t.shards, mib(b), mib(t.data_bytes), mib(t.index_bytes.unwrap_or(0))
                ),
                None => format!(
                    "reshardCollection (5.0+) rewrites the collection from {cur}: each shard needs about (collection size + index size) × 2 / shards of free storage"
                ),
            });
            notes.push(
                "the oplog must cover at least 24 hours (the manual's requirement); writes block for up to 2 seconds at the end".into(),
            );
            notes.push("https://www.mongodb.com/docs/manual/core/sharding-reshard-a-collection/".into());
            "reshardCollection"
        }
        None => {
            match t.has_supporting_index {
                Some(true) => {}
                Some(false) => {
                    if let Some(name) = t.replace_index {
                        commands.push(format!("db.getSiblingDB({db:?}).getCollection({coll:?}).dropIndex({name:?})"));
                        notes.push(format!(
                            "index {name} has the key's fields but cannot support it (sparse, partial or a collation): it is dropped and created again as a plain index (the server keeps one index per pattern)"
                        ));
                    }
                    commands.push(create)
                }
                None => {
                    notes.push(format!("create the index unless one already starts with {}'s fields", t.winner));
                    commands.push(create);
                }
            }
            commands.push(format!("sh.shardCollection({:?}, {})", t.namespace, t.winner));
            notes.push("run through mongos; before 6.0 run sh.enableSharding(\"".to_string() + db + "\") first");
            let hashed = t.winner.fields.first().is_some_and(|f| f.kind == KeyKind::Hashed);
            match (hashed, t.empty) {
                (true, true) => notes.push(
                    "the collection is empty: shardCollection pre-splits a hashed key into chunks on every shard at once (2 per shard; numInitialChunks for more), so inserts spread from the first one".into(),
                ),
                (true, false) => notes.push(
                    "a populated collection is not pre-split: the balancer moves its data from the primary shard (https://www.mongodb.com/docs/manual/core/hashed-sharding/)".into(),
                ),
                (false, true) => notes.push(
                    "the collection is empty: a ranged key starts as one chunk on the primary shard, split as it grows; sh.splitAt before loading spreads it sooner".into(),
                ),
                (false, false) => {}
            }
            "shardCollection"
        }
    };
    if !t.blocked_by.is_empty() {
        // The server refuses the key until these run: they come first, and the notes say why.
        let fixes: Vec<String> = t.blocked_by.iter().flat_map(|f| f.fix.iter().cloned()).collect();
        commands.splice(0..0, fixes);
        for f in &t.blocked_by {
            notes.insert(0, format!("every candidate is blocked; this one needs a change first: {}", f.message));
        }
    }
    Recommendation { key: t.winner.clone(), caveats: Vec::new(), action, commands, notes }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> ShardKey {
        ShardKey::parse(s).unwrap()
    }

    #[test]
    fn unsharded_gets_create_index_and_shard_collection() {
        let w = k("{projectId: 1, _id: 1}");
        let r = recommend(&Target {
            namespace: "app.events",
            winner: &w,
            has_supporting_index: Some(false),
            replace_index: None,
            current_key: None,
            shards: 4,
            data_bytes: 0,
            index_bytes: None,
            empty: false,
            blocked_by: vec![],
        });
        assert_eq!(r.action, "shardCollection");
        assert_eq!(
            r.commands,
            vec![
                "db.getSiblingDB(\"app\").getCollection(\"events\").createIndex({projectId: 1, _id: 1})".to_string(),
                "sh.shardCollection(\"app.events\", {projectId: 1, _id: 1})".to_string()
            ]
        );
    }

    #[test]
    fn a_longer_key_refines_and_another_reshards_with_the_manual_storage_estimate() {
        let (cur, w) = (k("{projectId: 1}"), k("{projectId: 1, _id: 1}"));
        let r = recommend(&Target {
            namespace: "app.events",
            winner: &w,
            has_supporting_index: Some(true),
            replace_index: None,
            current_key: Some(&cur),
            shards: 4,
            data_bytes: 0,
            index_bytes: None,
            empty: false,
            blocked_by: vec![],
        });
        assert_eq!(r.action, "refineCollectionShardKey");
        assert_eq!(r.commands, vec!["db.adminCommand({refineCollectionShardKey: \"app.events\", key: {projectId: 1, _id: 1}})"]);
        let h = k("{_id: \"hashed\"}");
        // (6,000 MiB + 2,000 MiB) × 2 / 4 shards = 4,000 MiB per shard.
        let r = recommend(&Target {
            namespace: "app.events",
            winner: &h,
            has_supporting_index: Some(false),
            replace_index: None,
            current_key: Some(&cur),
            shards: 4,
            data_bytes: 6000 << 20,
            index_bytes: Some(2000 << 20),
            empty: false,
            blocked_by: vec![],
        });
        assert_eq!(r.action, "reshardCollection");
        assert!(r.notes[0].contains("about 4000 MiB free storage"), "{:?}", r.notes);
    }

    #[test]
    fn an_index_on_the_pattern_that_cannot_serve_is_replaced_not_duplicated() {
        let w = k("{sku: 1}");
        let r = recommend(&Target {
            namespace: "shop.items",
            winner: &w,
            has_supporting_index: Some(false),
            replace_index: Some("sku_1"),
            current_key: None,
            shards: 4,
            data_bytes: 0,
            index_bytes: None,
            empty: false,
            blocked_by: vec![],
        });
        assert_eq!(
            r.commands[..2],
            [
                "db.getSiblingDB(\"shop\").getCollection(\"items\").dropIndex(\"sku_1\")".to_string(),
                "db.getSiblingDB(\"shop\").getCollection(\"items\").createIndex({sku: 1})".to_string()
            ]
        );
    }
}
