//! What a plan was made from, as read: the shards it is for, the version it follows, and
//! each collection with its indexes, default collation and current shard key. A script that
//! applies the plan (`--format mongosh`) checks the cluster still looks so before it changes
//! anything.

use crate::model::collection::CollectionOptions;
use crate::model::index::IndexSpec;
use crate::model::ShardKey;
use bson::Document;

/// One collection as the plan read it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CollectionBasis {
    pub(crate) namespace: String,
    /// `listCollections`' type: `collection`, `view` or `timeseries`.
    pub(crate) kind: String,
    pub(crate) capped: bool,
    /// Its indexes (none for a view); None when they were not read.
    pub(crate) indexes: Option<Vec<IndexSpec>>,
    /// Its default collation, when not simple.
    pub(crate) collation: Option<Document>,
    /// Its shard key, when it is sharded.
    pub(crate) shard_key: Option<ShardKey>,
}

impl CollectionBasis {
    pub(crate) fn new(namespace: String, kind: &str, options: &CollectionOptions, indexes: Option<Vec<IndexSpec>>) -> Self {
        let kind = if options.view_on.is_some() || kind == "view" {
            "view"
        } else if options.time_series.is_some() || kind == "timeseries" {
            "timeseries"
        } else {
            "collection"
        };
        CollectionBasis {
            namespace,
            kind: kind.to_string(),
            capped: options.capped,
            indexes,
            collation: options.collation.clone().filter(|c| c.get_str("locale").is_ok_and(|l| l != "simple")),
            shard_key: None,
        }
    }
}

/// The plan's basis: empty when the plan was not made from a database (a test's).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Basis {
    pub(crate) collections: Vec<CollectionBasis>,
}

impl Basis {
    /// The collections whose default collation is not simple.
    pub(crate) fn non_simple_collation(&self) -> std::collections::BTreeSet<String> {
        self.collections.iter().filter(|c| c.collation.is_some()).map(|c| c.namespace.clone()).collect()
    }
}
