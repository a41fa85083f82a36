//! An already sharded collection as the config database describes it: its key,
//! its chunks (bounds in key order) and the cluster's shards. Plain data: read by
//! `sources::sharding`, measured by `metrics::audit` and `metrics::cluster`.

use super::ShardKey;

/// MongoDB's default chunk (range) size since 6.0, in MiB.
pub(crate) const DEFAULT_CHUNK_SIZE_MIB: u64 = 128;
use bson::Bson;

#[derive(Debug, Clone)]
pub(crate) struct ChunkDoc {
    pub(crate) min: Vec<Bson>,
    pub(crate) max: Vec<Bson>,
    pub(crate) shard: String,
    pub(crate) jumbo: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct ShardingMetadata {
    pub(crate) key: ShardKey,
    /// "uuid" (5.0+) or "ns" (before 5.0): how `config.chunks` names the collection.
    pub(crate) chunk_format: &'static str,
    pub(crate) chunks: Vec<ChunkDoc>,
    /// Every shard of the cluster (from `config.shards`), chunk owners included.
    pub(crate) shards: Vec<String>,
    /// Their `config.shards` hosts ("set/host:port,..."): where their profilers are.
    pub(crate) shard_hosts: Vec<String>,
}
