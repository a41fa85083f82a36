//! The cluster model's output, as the JSON's `cluster` object says it: where the chunks and
//! the shard count come from, the placements today and at scale, the workload's cost, growth,
//! scale and the busiest shard (computed in `mod.rs`).

use crate::metrics::distribution::WritesWithoutKey;
use bson::Bson;
use serde::Serialize;
use serde_json::Value;

crate::labels! {
    /// Where the model's chunks come from.
    pub(crate) enum ClusterBasis {
        Simulated => "simulated",
        ActualChunks => "actual chunks (config.chunks), data estimated from the sample",
    }
}

crate::labels! {
    /// Where the number of shards N comes from.
    pub(crate) enum ShardsFrom {
        Flag => "--shards",
        Cluster => "the cluster's shards",
        Default => "default",
    }
}

crate::labels! {
    /// How much sharding helps the collection at its size today.
    pub(crate) enum Benefit {
        NoneYet => "none yet",
        Partial => "partial",
        Full => "full",
        /// No documents: the data size is not known.
        Unknown => "unknown",
    }
}

crate::labels! {
    /// What bounds the useful shards.
    pub(crate) enum GrowthLimit {
        DistinctValues => "distinct values",
        TopValueShare => "top value share",
        None => "none",
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClusterReport {
    /// Our model's chunks, or the cluster's own.
    pub(crate) basis: ClusterBasis,
    pub(crate) num_shards: usize,
    /// Where N comes from.
    pub(crate) num_shards_from: ShardsFrom,
    pub(crate) chunk_size_bytes: u64,
    /// The rules the model follows and what it assumes, in words.
    pub(crate) assumptions: Vec<String>,
    /// The collection as it is today, sharded while populated.
    pub(crate) today: Placement,
    /// The steady state once the collection fills the shards: what the cost is computed on.
    pub(crate) at_scale: Placement,
    pub(crate) cost: Cost,
    pub(crate) growth: Growth,
    pub(crate) scale: Scale,
    pub(crate) jumbo_chunks: Vec<JumboChunkReport>,
    /// How the operations spread over the shards at scale; None without sampled operations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) load: Option<Load>,
    pub(crate) verdict: String,
    /// Where zones over the key's first field would cut it into N parts of equal data:
    /// the first field's value (hashed when hashed) that starts zone 1, 2, … N−1. For
    /// `shardkey plan`'s co-location; not in the analysis report.
    #[serde(skip)]
    pub(crate) zone_splits: Vec<Bson>,
    /// First-field values above one zone's fair share (`pinned`): for the plan's zones.
    #[serde(skip)]
    pub(crate) pinned: Vec<crate::model::pinned::Pinned>,
}

/// The operations each shard takes at scale. The balancer evens data size and never
/// operations, so a contiguous key range that is small in data and hot in use stays on
/// one shard whatever the balancer does.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Load {
    /// Operations counted: sampled reads and writes, and the inserted documents when the
    /// queries show inserts.
    pub(crate) num_operations: u64,
    pub(crate) busiest_shard: String,
    /// The busiest shard's share of operations: an operation sent to several shards counts
    /// on each, so a key that broadcasts everything gives every shard 100%.
    pub(crate) busiest_shard_percent: f64,
    /// The busiest shard's share of the data, for contrast.
    pub(crate) busiest_shard_data_percent: f64,
    /// The busiest shard's operations over the mean shard's: about 1 when the work is even
    /// (broadcasts included), 2 or more on a hot key range.
    pub(crate) busiest_over_mean: f64,
    /// Inserted documents seen in the queries; None when they show none (sampled queries
    /// never do), and then inserts are left out of the operations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) num_inserts: Option<u64>,
    /// Inserts' share of the operations (0..100), when counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) insert_percent: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Placement {
    pub(crate) num_chunks: usize,
    pub(crate) shards_with_data: usize,
    /// Migrations the balancer makes to reach it (today only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) migrations: Option<u64>,
    pub(crate) shards: Vec<ShardLoad>,
    /// Largest over smallest shard; null when a shard gets none.
    pub(crate) imbalance: Imbalance,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ShardLoad {
    pub(crate) shard: String,
    pub(crate) num_chunks: usize,
    pub(crate) data_bytes: u64,
    pub(crate) data_percent: f64,
    /// Percentage of sampled reads (writes) sent to this shard; a query sent to several shards counts on each.
    pub(crate) reads_percent: f64,
    pub(crate) writes_percent: f64,
    pub(crate) inserts_percent: f64,
    /// Share of all operations (reads, writes, and inserts when counted) that reach this shard.
    pub(crate) operations_percent: f64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JumboChunkReport {
    pub(crate) min: Value,
    pub(crate) max: Value,
    pub(crate) shard: String,
    pub(crate) estimated_bytes: u64,
    pub(crate) estimated_docs: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Imbalance {
    pub(crate) data: Option<f64>,
    pub(crate) reads: Option<f64>,
    pub(crate) writes: Option<f64>,
    pub(crate) inserts: Option<f64>,
    pub(crate) operations: Option<f64>,
}

/// What the sampled workload costs under the model, each operation counted once as
/// often as it was sampled. The server's labels (`readDistribution`, `writeDistribution`)
/// stay beside these, unchanged.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Cost {
    pub(crate) num_reads: u64,
    pub(crate) num_writes: u64,
    /// Operations (reads and writes) that reach exactly one shard, whatever the server's label.
    pub(crate) percentage_of_single_shard_ops: Option<f64>,
    pub(crate) percentage_of_single_shard_reads: Option<f64>,
    pub(crate) percentage_of_single_shard_writes: Option<f64>,
    pub(crate) mean_shards_per_read: Option<f64>,
    pub(crate) mean_shards_per_write: Option<f64>,
    pub(crate) mean_shards_per_op: Option<f64>,
    /// Operations sent to every shard that owns data of the collection.
    pub(crate) percentage_of_ops_to_every_shard: Option<f64>,
    /// Writes that do not carry the whole shard key (the server's two counts summed):
    /// 7.1+ runs a single one in two phases (a broadcast read, then a targeted write);
    /// before 7.1 a single one needs `_id`, a multi one is broadcast.
    pub(crate) percentage_of_writes_without_shard_key: Option<f64>,
    /// The same writes by what the cluster does with each (refused before 7.1 or not).
    pub(crate) writes_without_shard_key: Option<WritesWithoutKey>,
    /// Writes that change the key: the document moves to another shard (a distributed transaction).
    pub(crate) percentage_of_shard_key_updates: Option<f64>,
    /// 1 − mean over operations of (shards reached − 1) / (N − 1): 1 when all reach one shard,
    /// 0 when all reach every shard. The score's fan-out component. Retention deletes are
    /// left out: they remove the same documents under every key, so reaching fewer shards
    /// saves nothing (one shard then does all of it).
    pub(crate) fan_out: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Growth {
    /// The most shards that can ever share the data evenly: at most one per distinct
    /// value, and no more than 1 / (top value's share), past which the shard holding
    /// the top value stays the busiest whatever is added.
    pub(crate) max_useful_shards: u64,
    pub(crate) limited_by: GrowthLimit,
    /// Shards that take at least 1% of new documents at scale.
    pub(crate) shards_taking_inserts: usize,
    /// The busiest shard's share of inserts at scale.
    pub(crate) largest_insert_share_percent: f64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Scale {
    pub(crate) data_bytes: u64,
    /// Below this the balancer moves nothing: all data stays on the primary shard.
    pub(crate) migrations_start_bytes: u64,
    /// From this size every one of the N shards holds data.
    pub(crate) all_shards_from_bytes: u64,
    pub(crate) benefit: Benefit,
    pub(crate) words: String,
}
