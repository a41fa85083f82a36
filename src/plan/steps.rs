//! The plan's commands as data, in the order they run: the mongosh lines the reports print
//! (`Step::command`) and the script `--format mongosh` writes (`report::mongosh`) come from
//! the same steps, so the two cannot say different things.

use crate::model::shell::shell_doc;
use crate::model::ShardKey;
use bson::Document;
use std::collections::BTreeSet;

/// One command of the plan. Shards are by position: zone i goes to shard i.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    EnableSharding {
        db: String,
    },
    AddShardToZone {
        shard: usize,
        zone: String,
    },
    /// `simple_collation`: the collection's default collation is not simple, so the index
    /// that supports a shard key must say `{locale: "simple"}` (SERVER-24751).
    CreateIndex {
        namespace: String,
        key: ShardKey,
        simple_collation: bool,
    },
    UpdateZoneKeyRange {
        namespace: String,
        min: Document,
        max: Document,
        zone: String,
    },
    ShardCollection {
        namespace: String,
        key: ShardKey,
        simple_collation: bool,
    },
    Refine {
        namespace: String,
        key: ShardKey,
    },
    Reshard {
        namespace: String,
        key: ShardKey,
        simple_collation: bool,
    },
    MoveCollection {
        namespace: String,
        shard: usize,
    },
}

/// The name the plan gives shard `i` (replace it with yours).
pub(crate) fn shard_name(i: usize) -> String {
    format!("shard{i}")
}

const SIMPLE: &str = "collation: {locale: \"simple\"}";

impl Step {
    /// The mongosh command, as the reports print it.
    pub(crate) fn command(&self) -> String {
        match self {
            Step::EnableSharding { db } => format!("sh.enableSharding({db:?})"),
            Step::AddShardToZone { shard, zone } => format!("sh.addShardToZone({:?}, {zone:?})", shard_name(*shard)),
            Step::CreateIndex { namespace, key, simple_collation } => {
                let (db, coll) = namespace.split_once('.').unwrap_or(("", namespace));
                let opts = if *simple_collation { format!(", {{{SIMPLE}}}") } else { String::new() };
                format!("db.getSiblingDB({db:?}).getCollection({coll:?}).createIndex({key}{opts})")
            }
            Step::UpdateZoneKeyRange { namespace, min, max, zone } => {
                format!("sh.updateZoneKeyRange({namespace:?}, {}, {}, {zone:?})", shell_doc(min), shell_doc(max))
            }
            Step::ShardCollection { namespace, key, simple_collation: false } => format!("sh.shardCollection({namespace:?}, {key})"),
            Step::ShardCollection { namespace, key, simple_collation: true } => {
                format!("sh.shardCollection({namespace:?}, {key}, false, {{{SIMPLE}}})")
            }
            Step::Refine { namespace, key } => format!("db.adminCommand({{refineCollectionShardKey: {namespace:?}, key: {key}}})"),
            Step::Reshard { namespace, key, simple_collation } => {
                let opts = if *simple_collation { format!(", {SIMPLE}") } else { String::new() };
                format!("db.adminCommand({{reshardCollection: {namespace:?}, key: {key}{opts}}})")
            }
            Step::MoveCollection { namespace, shard } => {
                format!("db.adminCommand({{moveCollection: {namespace:?}, toShard: {:?}}})", shard_name(*shard))
            }
        }
    }

    fn namespace(&self) -> Option<&str> {
        match self {
            Step::EnableSharding { .. } | Step::AddShardToZone { .. } => None,
            Step::CreateIndex { namespace, .. }
            | Step::UpdateZoneKeyRange { namespace, .. }
            | Step::ShardCollection { namespace, .. }
            | Step::Refine { namespace, .. }
            | Step::Reshard { namespace, .. }
            | Step::MoveCollection { namespace, .. } => Some(namespace),
        }
    }
}

/// Say the simple collation where a collection's default collation is not simple (the plan
/// learns the collections' options after it is built).
pub(crate) fn with_simple_collation(steps: &mut [Step], non_simple: &BTreeSet<String>) {
    for s in steps {
        let here = s.namespace().is_some_and(|ns| non_simple.contains(ns));
        if let Step::CreateIndex { simple_collation, .. }
        | Step::ShardCollection { simple_collation, .. }
        | Step::Reshard { simple_collation, .. } = s
        {
            *simple_collation = here;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{doc, Bson};

    /// The commands as the manual writes them (sh.addShardToZone, sh.updateZoneKeyRange,
    /// sh.shardCollection with its collation option, refineCollectionShardKey,
    /// reshardCollection, moveCollection), and as the analysis prints them (score/apply.rs).
    #[test]
    fn each_step_as_mongosh_reads_it() {
        let key = ShardKey::parse("{customerId: 1, _id: 1}").unwrap();
        let ns = "shop.orders".to_string();
        assert_eq!(Step::EnableSharding { db: "shop".into() }.command(), "sh.enableSharding(\"shop\")");
        assert_eq!(
            Step::AddShardToZone { shard: 1, zone: "shop-customerId-1".into() }.command(),
            "sh.addShardToZone(\"shard1\", \"shop-customerId-1\")"
        );
        assert_eq!(
            Step::CreateIndex { namespace: ns.clone(), key: key.clone(), simple_collation: true }.command(),
            "db.getSiblingDB(\"shop\").getCollection(\"orders\").createIndex({customerId: 1, _id: 1}, {collation: {locale: \"simple\"}})"
        );
        let (min, max) = (doc! {"customerId": Bson::MinKey, "_id": Bson::MinKey}, doc! {"customerId": 7, "_id": Bson::MinKey});
        assert_eq!(
            Step::UpdateZoneKeyRange { namespace: ns.clone(), min, max, zone: "z-0".into() }.command(),
            "sh.updateZoneKeyRange(\"shop.orders\", {customerId: MinKey, _id: MinKey}, {customerId: 7, _id: MinKey}, \"z-0\")"
        );
        assert_eq!(
            Step::ShardCollection { namespace: ns.clone(), key: key.clone(), simple_collation: true }.command(),
            "sh.shardCollection(\"shop.orders\", {customerId: 1, _id: 1}, false, {collation: {locale: \"simple\"}})"
        );
        assert_eq!(
            Step::Reshard { namespace: ns.clone(), key, simple_collation: false }.command(),
            "db.adminCommand({reshardCollection: \"shop.orders\", key: {customerId: 1, _id: 1}})"
        );
        assert_eq!(
            Step::MoveCollection { namespace: ns, shard: 3 }.command(),
            "db.adminCommand({moveCollection: \"shop.orders\", toShard: \"shard3\"})"
        );
    }
}
