//! What the cluster model reads for one key: the sampled key space and sizes, the queries'
//! touches in key space (or, without documents, the key space they name), an already sharded
//! collection's real chunks, and the workload's write figures.

use super::layout::{Chunk, InsertPattern};
use super::report::ShardsFrom;
use crate::metrics::distribution::WritesWithoutKey;
use crate::model::sharding::ShardingMetadata;
use crate::model::{KeySpace, ShardKey};
use bson::Bson;

/// The sampled insert commands by the documents each carries, as (documents, commands): an
/// insert is one operation, like a find, however many documents it carries (`workload` counts
/// them so), and it reaches each shard one of its documents lands on (mongos sends one batch
/// per shard), as a read counts on each shard it reaches.
#[derive(Debug, Clone, Default)]
pub(crate) struct InsertBatches(pub(crate) Vec<(u64, u64)>);

impl InsertBatches {
    pub(crate) fn of<'q>(queries: impl IntoIterator<Item = &'q crate::model::Query>) -> Self {
        let mut by_docs = std::collections::BTreeMap::<u64, u64>::new();
        for q in queries.into_iter().filter(|q| q.op == crate::model::Op::Insert) {
            *by_docs.entry(q.count.max(1)).or_default() += 1;
        }
        InsertBatches(by_docs.into_iter().collect())
    }

    pub(crate) fn commands(&self) -> u64 {
        self.0.iter().map(|(_, c)| c).sum()
    }

    /// The commands expected to reach a shard that takes share `p` of the inserted documents:
    /// one of `d` documents misses it with probability 1 - p, all of them with (1 - p)^d
    /// (taken as independent: a batch of one group's documents reaches fewer shards).
    pub(crate) fn reaching(&self, p: f64) -> f64 {
        self.0.iter().map(|&(d, c)| c as f64 * (1.0 - (1.0 - p.clamp(0.0, 1.0)).powi(d.min(i32::MAX as u64) as i32))).sum()
    }
}

/// What one sampled query touches, in key space.
pub(crate) struct QueryTouch {
    pub(crate) is_read: bool,
    /// `Query::is_retention_delete`: not counted in the fan-out.
    pub(crate) retention: bool,
    pub(crate) touched: Vec<crate::model::KeyRange>,
}

/// Without documents, the key space as the sampled queries name it: every point and every
/// finite range bound, sorted, each counted as often as queries name it.
pub(crate) fn query_key_space(touches: &[QueryTouch]) -> KeySpace<'static> {
    let mut all: Vec<Vec<Bson>> = Vec::new();
    for t in touches {
        for r in &t.touched {
            for b in [&r.min, &r.max] {
                if !b.iter().all(|v| matches!(v, Bson::MinKey | Bson::MaxKey)) {
                    all.push(b.clone());
                }
            }
        }
    }
    all.sort_by(|a, b| crate::bsonx::cmp_tuple(a, b));
    let mut out: Vec<(Vec<Bson>, u64)> = Vec::new();
    for v in all {
        match out.last_mut() {
            Some((last, c)) if crate::bsonx::cmp_tuple(last, &v) == std::cmp::Ordering::Equal => *c += 1,
            _ => out.push((v, 1)),
        }
    }
    KeySpace::from_values(out)
}

/// Real chunks read from `config.chunks` (key-space bounds), with their shard names.
#[derive(Debug, Clone)]
pub(crate) struct ActualChunks {
    pub(crate) shard_names: Vec<String>,
    /// `bytes`/`docs` are zero here; they are estimated from the sample.
    pub(crate) chunks: Vec<Chunk>,
}

/// The chunks of an already sharded collection as the model uses them.
pub(crate) fn actual_chunks(m: &ShardingMetadata) -> ActualChunks {
    let chunks = m
        .chunks
        .iter()
        .map(|c| Chunk {
            min: c.min.clone(),
            max: c.max.clone(),
            shard: m.shards.iter().position(|s| s == &c.shard).unwrap_or(0),
            bytes: 0.0,
            docs: 0.0,
            jumbo: c.jumbo,
        })
        .collect();
    ActualChunks { shard_names: m.shards.clone(), chunks }
}

pub(crate) struct Inputs<'a> {
    pub(crate) key: &'a ShardKey,
    /// Sampled key-space values, sorted, with counts.
    pub(crate) values: &'a KeySpace<'a>,
    /// Indices into `values` of single values whose documents exceed the range size.
    pub(crate) jumbo_values: Vec<usize>,
    pub(crate) docs_per_sampled: f64,
    pub(crate) avg_doc_size: u64,
    /// False for a queries-only analysis: `values` are the values the queries name, the
    /// data size is unknown, and only the placement at scale (fan-out) means anything.
    pub(crate) documents: bool,
    pub(crate) chunk_size: u64,
    pub(crate) shards: usize,
    pub(crate) shards_from: ShardsFrom,
    pub(crate) queries: &'a [QueryTouch],
    pub(crate) inserts: InsertPattern,
    pub(crate) recent: &'a [Vec<Bson>],
    pub(crate) estimated_distinct: u64,
    /// The top value's share of documents (0..1).
    pub(crate) top_share: f64,
    pub(crate) writes_without_shard_key_percent: Option<f64>,
    pub(crate) writes_without_key: Option<WritesWithoutKey>,
    pub(crate) shard_key_updates_percent: Option<f64>,
    /// The sampled insert commands; none when the queries show no insert.
    pub(crate) inserts_sampled: &'a InsertBatches,
    /// Whether inserts were sampled, none were, or they are assumed (the verdict's words).
    pub(crate) insert_evidence: crate::metrics::insert_order::InsertEvidence,
    pub(crate) redact: bool,
}
