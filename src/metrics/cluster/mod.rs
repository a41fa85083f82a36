//! `cluster` (`--shards N`, or an already sharded collection): the prediction for
//! one key: chunk layout (simulated, or the real chunks from `config.chunks`),
//! shard placement, and the share of data, reads, writes and inserts each shard
//! gets. The layout and balancer rules are in `layout.rs`.

pub mod layout;

use self::layout::{Chunk, InsertPattern, ValueCounts};
use crate::model::sharding::ShardingMetadata;
use crate::model::{KeyKind, KeyRange, ShardKey};
use bson::Bson;
use serde::Serialize;
use serde_json::Value;

use self::layout as cluster;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterReport {
    /// "simulated" (our layout and balancer model) or "actual chunks" (config.chunks).
    pub basis: String,
    pub num_shards: usize,
    pub chunk_size_bytes: u64,
    pub num_chunks: usize,
    pub shards: Vec<ShardLoad>,
    pub jumbo_chunks: Vec<JumboChunkReport>,
    /// Largest over smallest shard; null when a shard gets none.
    pub imbalance: Imbalance,
    pub verdict: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShardLoad {
    pub shard: String,
    pub num_chunks: usize,
    pub data_bytes: u64,
    pub data_percent: f64,
    /// Percentage of sampled reads (writes) sent to this shard; a query sent to several shards counts on each.
    pub reads_percent: f64,
    pub writes_percent: f64,
    pub inserts_percent: f64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JumboChunkReport {
    pub min: Value,
    pub max: Value,
    pub shard: String,
    pub estimated_bytes: u64,
    pub estimated_docs: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Imbalance {
    pub data: Option<f64>,
    pub reads: Option<f64>,
    pub writes: Option<f64>,
    pub inserts: Option<f64>,
}

/// What one sampled query touches, in key space.
pub struct QueryTouch {
    pub is_read: bool,
    pub touched: Vec<KeyRange>,
}

/// Real chunks read from `config.chunks` (key-space bounds), with their shard names.
#[derive(Debug, Clone)]
pub struct ActualChunks {
    pub shard_names: Vec<String>,
    /// `bytes`/`docs` are zero here; they are estimated from the sample.
    pub chunks: Vec<Chunk>,
}

/// The chunks of an already sharded collection as the prediction uses them.
pub fn actual_chunks(m: &ShardingMetadata) -> ActualChunks {
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

pub struct Inputs<'a> {
    pub key: &'a ShardKey,
    pub values: &'a ValueCounts,
    pub docs_per_sampled: f64,
    pub avg_doc_size: u64,
    pub chunk_size: u64,
    pub shards: usize,
    pub queries: &'a [QueryTouch],
    pub inserts: InsertPattern,
    pub recent: &'a [Vec<Bson>],
    pub redact: bool,
}

fn pct(part: f64, whole: f64) -> f64 {
    if whole <= 0.0 {
        0.0
    } else {
        (part * 1000.0 / whole).round() / 10.0
    }
}

fn fmt_ratio(name: &str, r: Option<f64>, shares: &[f64], names: &[String]) -> String {
    let busy = shares.iter().filter(|s| **s > 0.0).count();
    match r {
        _ if shares.iter().all(|s| *s == 0.0) => format!("{name}: none sampled"),
        Some(r) => format!("{name} {r:.1}×"),
        None if busy == 1 => {
            let i = shares.iter().position(|s| *s > 0.0).unwrap_or(0);
            format!("{name}: all on {}", names[i])
        }
        None => format!("{name}: {} of {} shards get none", shares.len() - busy, shares.len()),
    }
}

pub fn predict(inp: &Inputs, actual: Option<&ActualChunks>) -> ClusterReport {
    let chunk_size = inp.chunk_size as f64;
    let avg = inp.avg_doc_size as f64;
    let (mut chunks, names, basis) = match actual {
        Some(a) => {
            let mut chunks = a.chunks.clone();
            for (v, c) in inp.values {
                let i = cluster::chunk_of(&chunks, v);
                chunks[i].docs += *c as f64 * inp.docs_per_sampled;
                chunks[i].bytes += *c as f64 * inp.docs_per_sampled * avg;
            }
            (chunks, a.shard_names.clone(), "actual chunks (config.chunks), data estimated from the sample".to_string())
        }
        None => {
            let n = inp.shards.max(1);
            let hashed_first = inp.key.fields.first().is_some_and(|f| f.kind == KeyKind::Hashed);
            let mut chunks = if hashed_first {
                cluster::layout_hashed(inp.values, inp.key.fields.len(), n, inp.docs_per_sampled, avg, chunk_size)
            } else {
                cluster::layout_range(inp.values, inp.key.fields.len(), inp.docs_per_sampled, avg, chunk_size)
            };
            cluster::balance(&mut chunks, n, chunk_size);
            (chunks, (0..n).map(|i| format!("shard{i}")).collect::<Vec<_>>(), "simulated".to_string())
        }
    };
    let n = names.len().max(1);
    chunks.iter_mut().for_each(|c| c.shard = c.shard.min(n - 1));

    let mut data = vec![0.0; n];
    let mut nchunks = vec![0usize; n];
    for c in &chunks {
        data[c.shard] += c.bytes;
        nchunks[c.shard] += 1;
    }
    let (mut reads, mut writes) = (vec![0.0; n], vec![0.0; n]);
    let (mut nr, mut nw) = (0.0, 0.0);
    for q in inp.queries {
        let hit = cluster::shards_touched(&chunks, &q.touched, n);
        let (acc, count) = if q.is_read { (&mut reads, &mut nr) } else { (&mut writes, &mut nw) };
        *count += 1.0;
        for (a, h) in acc.iter_mut().zip(hit) {
            *a += h as u8 as f64;
        }
    }
    let inserts = cluster::insert_shares(&chunks, n, inp.inserts, inp.recent);
    let total: f64 = data.iter().sum();
    let shards: Vec<ShardLoad> = (0..n)
        .map(|i| ShardLoad {
            shard: names[i].clone(),
            num_chunks: nchunks[i],
            data_bytes: data[i].round() as u64,
            data_percent: pct(data[i], total),
            reads_percent: pct(reads[i], nr),
            writes_percent: pct(writes[i], nw),
            inserts_percent: pct(inserts[i], 1.0),
        })
        .collect();
    let jumbo_chunks: Vec<JumboChunkReport> = chunks
        .iter()
        .filter(|c| c.jumbo || c.bytes > chunk_size)
        .map(|c| JumboChunkReport {
            min: inp.key.value_json(&c.min, inp.redact),
            max: inp.key.value_json(&c.max, inp.redact),
            shard: names[c.shard].clone(),
            estimated_bytes: c.bytes.round() as u64,
            estimated_docs: c.docs.round() as u64,
        })
        .collect();
    let imbalance = Imbalance {
        data: cluster::ratio(&data),
        reads: (nr > 0.0).then(|| cluster::ratio(&reads)).flatten(),
        writes: (nw > 0.0).then(|| cluster::ratio(&writes)).flatten(),
        inserts: cluster::ratio(&inserts),
    };
    let mut parts = vec![fmt_ratio("data", imbalance.data, &data, &names)];
    parts.push(fmt_ratio("reads", imbalance.reads, &reads, &names));
    parts.push(fmt_ratio("inserts", imbalance.inserts, &inserts, &names));
    if !jumbo_chunks.is_empty() {
        parts.push(format!("{} jumbo chunk{}", jumbo_chunks.len(), if jumbo_chunks.len() > 1 { "s" } else { "" }));
    }
    let verdict = format!("largest/smallest shard with {n} shards: {}", parts.join(", "));
    ClusterReport {
        basis,
        num_shards: n,
        chunk_size_bytes: inp.chunk_size,
        num_chunks: chunks.len(),
        shards,
        jumbo_chunks,
        imbalance,
        verdict,
    }
}
