//! `audit`: the real chunks of an already sharded collection: chunks per shard,
//! jumbo-flagged chunks and the chunk-count imbalance.

use crate::model::sharding::ShardingMetadata;
use crate::model::ShardKey;
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AuditReport {
    pub(crate) shard_key: ShardKey,
    /// "uuid" (5.0+) or "ns" (before 5.0): how config.chunks names the collection.
    pub(crate) chunk_format: String,
    pub(crate) num_chunks: usize,
    pub(crate) shards: Vec<AuditShard>,
    pub(crate) jumbo_flagged_chunks: Vec<AuditChunk>,
    /// Most over fewest chunks per shard; null when a shard holds none.
    pub(crate) chunk_count_imbalance: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AuditShard {
    pub(crate) shard: String,
    pub(crate) num_chunks: usize,
    pub(crate) num_jumbo_chunks: usize,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AuditChunk {
    pub(crate) min: Value,
    pub(crate) max: Value,
    pub(crate) shard: String,
}

/// Chunks per shard, jumbo-flagged chunks and chunk-count imbalance.
pub(crate) fn audit(m: &ShardingMetadata, redact: bool) -> AuditReport {
    let json = |t: &[bson::Bson]| m.key.value_json(t, redact);
    let shards: Vec<AuditShard> = m
        .shards
        .iter()
        .map(|s| AuditShard {
            shard: s.clone(),
            num_chunks: m.chunks.iter().filter(|c| &c.shard == s).count(),
            num_jumbo_chunks: m.chunks.iter().filter(|c| &c.shard == s && c.jumbo).count(),
        })
        .collect();
    let counts: Vec<f64> = shards.iter().map(|s| s.num_chunks as f64).collect();
    AuditReport {
        shard_key: m.key.clone(),
        chunk_format: m.chunk_format.to_string(),
        num_chunks: m.chunks.len(),
        jumbo_flagged_chunks: m
            .chunks
            .iter()
            .filter(|c| c.jumbo)
            .map(|c| AuditChunk { min: json(&c.min), max: json(&c.max), shard: c.shard.clone() })
            .collect(),
        chunk_count_imbalance: super::cluster::layout::ratio(&counts),
        shards,
    }
}
