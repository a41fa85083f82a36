//! `cluster`: the model of what one key does to a cluster of N shards: where data,
//! reads, writes and inserts go today and at scale, what the workload costs (shards
//! per operation), how far the key can grow, and whether the collection is large
//! enough for sharding to help. The rules, with the manual page of each, are in `model.rs`.

pub(crate) mod layout;

use self::layout::{Chunk, DataLine, InsertPattern};
use super::distribution::WritesWithoutKey;
use crate::model::sharding::ShardingMetadata;
use crate::model::KeySpace;
use crate::model::ShardKey;
use crate::util::text::{count_of, fmt_count, mib};
use bson::Bson;
use serde::Serialize;
use serde_json::Value;

/// Shards modelled when neither `--shards` nor a sharded cluster says: docs/reference.md "Cluster model" gives why.
pub(crate) const DEFAULT_SHARDS: usize = 4;

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
}

/// The first-field values at which the sampled data (`values`, in key order) crosses
/// 1/n, 2/n, … of its documents: each starts a zone (repeated values once).
pub(crate) fn zone_splits(values: &KeySpace, n: usize) -> Vec<Bson> {
    let total: u64 = values.counts().iter().sum();
    let mut out: Vec<Bson> = Vec::new();
    if n < 2 || total == 0 {
        return out;
    }
    let (mut cum, mut k) = (0u64, 1usize);
    for i in 0..values.len() {
        cum += values.count(i);
        while k < n && cum * n as u64 >= total * k as u64 {
            k += 1;
            if i + 1 < values.len() {
                let v = values.value(i + 1).into_iter().next().unwrap_or(Bson::Null);
                if out.last().is_none_or(|l| crate::bsonx::cmp_bson(l, &v) == std::cmp::Ordering::Less) {
                    out.push(v);
                }
            }
        }
    }
    out
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
    /// Documents inserted in the sampled workload; 0 when the queries show no insert.
    pub(crate) num_inserts: u64,
    /// Whether inserts were sampled, none were, or they are assumed (the verdict's words).
    pub(crate) insert_evidence: super::insert_order::InsertEvidence,
    pub(crate) redact: bool,
}

fn pct(part: f64, whole: f64) -> f64 {
    if whole <= 0.0 {
        0.0
    } else {
        (part * 1000.0 / whole).round() / 10.0
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Loads and per-query fan-out of one placement.
struct Spread {
    data: Vec<f64>,
    chunks: Vec<usize>,
    reads: Vec<f64>,
    writes: Vec<f64>,
    inserts: Vec<f64>,
    /// Operations reaching each shard: reads, writes, and inserts by their share.
    ops: Vec<f64>,
    /// Shards reached by each query, in `queries` order.
    hits: Vec<usize>,
    owners: usize,
}

fn spread(chunks: &[Chunk], n: usize, inp: &Inputs) -> Spread {
    let mut data = vec![0.0; n];
    let mut nchunks = vec![0usize; n];
    for c in chunks {
        data[c.shard] += c.bytes;
        nchunks[c.shard] += 1;
    }
    let (mut reads, mut writes) = (vec![0.0; n], vec![0.0; n]);
    let mut hits = Vec::with_capacity(inp.queries.len());
    for q in inp.queries {
        let hit = layout::shards_touched(chunks, &q.touched, n);
        let acc = if q.is_read { &mut reads } else { &mut writes };
        for (a, h) in acc.iter_mut().zip(&hit) {
            *a += *h as u8 as f64;
        }
        hits.push(hit.iter().filter(|h| **h).count());
    }
    let inserts = layout::insert_shares(chunks, n, inp.inserts, inp.recent);
    let owners = nchunks.iter().filter(|c| **c > 0).count();
    let ni = inp.num_inserts as f64;
    let ops = (0..n).map(|i| reads[i] + writes[i] + ni * inserts[i]).collect();
    Spread { data, chunks: nchunks, reads, writes, inserts, ops, hits, owners }
}

fn placement(s: &Spread, names: &[String], nr: f64, nw: f64, ni: f64, migrations: Option<u64>) -> Placement {
    let total: f64 = s.data.iter().sum();
    let nops = nr + nw + ni;
    Placement {
        num_chunks: s.chunks.iter().sum(),
        shards_with_data: s.data.iter().filter(|d| **d > 0.0).count(),
        migrations,
        shards: (0..names.len())
            .map(|i| ShardLoad {
                shard: names[i].clone(),
                num_chunks: s.chunks[i],
                data_bytes: s.data[i].round() as u64,
                data_percent: pct(s.data[i], total),
                reads_percent: pct(s.reads[i], nr),
                writes_percent: pct(s.writes[i], nw),
                inserts_percent: pct(s.inserts[i], 1.0),
                operations_percent: pct(s.ops[i], nops),
            })
            .collect(),
        imbalance: Imbalance {
            data: layout::ratio(&s.data),
            reads: (nr > 0.0).then(|| layout::ratio(&s.reads)).flatten(),
            writes: (nw > 0.0).then(|| layout::ratio(&s.writes)).flatten(),
            inserts: layout::ratio(&s.inserts),
            operations: (nops > 0.0).then(|| layout::ratio(&s.ops)).flatten(),
        },
    }
}

fn cost(s: &Spread, inp: &Inputs, n: usize) -> Cost {
    let (mut nr, mut nw, mut single_r, mut single_w, mut sum_r, mut sum_w, mut every, mut fan, mut fan_ops) =
        (0u64, 0u64, 0u64, 0u64, 0u64, 0u64, 0u64, 0.0, 0u64);
    for (q, &h) in inp.queries.iter().zip(&s.hits) {
        if q.is_read {
            nr += 1;
            sum_r += h as u64;
            single_r += (h == 1) as u64;
        } else {
            nw += 1;
            sum_w += h as u64;
            single_w += (h == 1) as u64;
        }
        every += (h >= s.owners && s.owners > 1) as u64;
        if !q.retention {
            fan_ops += 1;
            fan += if n > 1 { (h.max(1) - 1) as f64 / (n - 1) as f64 } else { 0.0 };
        }
    }
    let ops = nr + nw;
    let p = |a: u64, b: u64| (b > 0).then(|| pct(a as f64, b as f64));
    Cost {
        num_reads: nr,
        num_writes: nw,
        percentage_of_single_shard_ops: p(single_r + single_w, ops),
        percentage_of_single_shard_reads: p(single_r, nr),
        percentage_of_single_shard_writes: p(single_w, nw),
        mean_shards_per_read: (nr > 0).then(|| round2(sum_r as f64 / nr as f64)),
        mean_shards_per_write: (nw > 0).then(|| round2(sum_w as f64 / nw as f64)),
        mean_shards_per_op: (ops > 0).then(|| round2((sum_r + sum_w) as f64 / ops as f64)),
        percentage_of_ops_to_every_shard: p(every, ops),
        percentage_of_writes_without_shard_key: inp.writes_without_shard_key_percent.filter(|_| nw > 0),
        writes_without_shard_key: inp.writes_without_key.filter(|_| nw > 0),
        percentage_of_shard_key_updates: inp.shard_key_updates_percent.filter(|_| nw > 0),
        fan_out: (fan_ops > 0).then(|| ((1.0 - fan / fan_ops as f64).clamp(0.0, 1.0) * 1e6).round() / 1e6),
    }
}

fn growth(inp: &Inputs, at_scale: &Spread) -> Growth {
    let by_top = if inp.top_share > 0.0 { (1.0 / inp.top_share).floor() as u64 } else { u64::MAX };
    let distinct = inp.estimated_distinct.max(1);
    let (max, limited_by) = if distinct <= by_top && distinct < 100_000 {
        (distinct, GrowthLimit::DistinctValues)
    } else if by_top < distinct && by_top < 100_000 {
        (by_top, GrowthLimit::TopValueShare)
    } else {
        (distinct.min(by_top), GrowthLimit::None)
    };
    let largest = at_scale.inserts.iter().cloned().fold(0.0, f64::max);
    Growth {
        max_useful_shards: max,
        limited_by,
        shards_taking_inserts: at_scale.inserts.iter().filter(|s| **s >= 0.01).count(),
        largest_insert_share_percent: pct(largest, 1.0),
    }
}

fn scale(data_bytes: f64, n: usize, range: f64, today_with_data: usize) -> Scale {
    let (start, all) = layout::scale_thresholds(n, range);
    let b = |x: f64| mib(x.round() as u64);
    let (benefit, words) = if n <= 1 {
        (Benefit::NoneYet, "one shard modelled: give --shards N to see a cluster".to_string())
    } else if data_bytes < start {
        (
            Benefit::NoneYet,
            format!(
                "sharding brings no benefit yet: at {} the collection is below the balancer's migration threshold (3 × {} range size = {}), so all of it stays on the primary shard; migrations start from {} and all {n} shards hold data from {}",
                b(data_bytes), b(range), b(start), b(start), b(all)
            ),
        )
    } else if today_with_data < n {
        (
            Benefit::Partial,
            format!(
                "at {} only {today_with_data} of {n} shards hold data (the balancer tolerates 3 range sizes of difference); all {n} do from {}",
                b(data_bytes), b(all)
            ),
        )
    } else {
        (Benefit::Full, format!("at {} the data spreads over all {n} shards", b(data_bytes)))
    };
    Scale {
        data_bytes: data_bytes.round() as u64,
        migrations_start_bytes: start.round() as u64,
        all_shards_from_bytes: all.round() as u64,
        benefit,
        words,
    }
}

fn assumptions(n: usize, from: ShardsFrom, range: u64, actual: bool) -> Vec<String> {
    let mut a = vec![
        format!("{} ({from}); range size {} (the unit one migration moves, 6.0.3+)", count_of(n as u64, "shard", "shards"), mib(range)),
        "the balancer evens data size per shard and starts a round only while two shards differ by 3 range sizes (6.0.3+)".into(),
        "chunks are not split on insert (6.0.3+); the AutoMerger joins contiguous chunks of a shard (7.0+)".into(),
        "a value whose documents exceed the range size cannot be split: jumbo, never moved".into(),
        "today: the collection as sampled, sharded while populated (one chunk on the primary, no pre-split, hashed keys included)".into(),
        "at scale: each shard owns a contiguous, equal share of the data in key order; cost and score use it".into(),
        "an operation reaches the shards owning the chunks its key bounds overlap; without bounds, every shard owning data".into(),
    ];
    if actual {
        a.push("the collection is sharded: cost uses its real chunks (config.chunks), data estimated from the sample".into());
    }
    a
}

pub(crate) fn predict(inp: &Inputs, actual: Option<&ActualChunks>) -> ClusterReport {
    let range = inp.chunk_size as f64;
    let line = DataLine {
        values: inp.values,
        key_len: inp.key.fields.len(),
        docs_per_sampled: inp.docs_per_sampled,
        avg_doc_size: inp.avg_doc_size as f64,
        jumbo_values: inp.jumbo_values.clone(),
    };
    let n = actual.map(|a| a.shard_names.len()).unwrap_or(inp.shards).max(1);
    let names: Vec<String> = match actual {
        Some(a) => a.shard_names.clone(),
        None => (0..n).map(|i| format!("shard{i}")).collect(),
    };
    let (today_chunks, migrations, basis) = match actual {
        Some(a) => {
            let mut chunks = a.chunks.clone();
            // Each value decoded to find its chunk: only a sharded collection's own key comes here.
            for (i, &c) in inp.values.counts().iter().enumerate() {
                let k = layout::chunk_of(&chunks, &inp.values.value(i));
                chunks[k].docs += c as f64 * inp.docs_per_sampled;
                chunks[k].bytes += c as f64 * inp.docs_per_sampled * inp.avg_doc_size as f64;
            }
            chunks.iter_mut().for_each(|c| c.shard = c.shard.min(n - 1));
            (chunks, None, ClusterBasis::ActualChunks)
        }
        None => {
            let (c, m) = layout::today(&line, n, range);
            (c, Some(m), ClusterBasis::Simulated)
        }
    };
    let scale_chunks = match actual {
        Some(_) => today_chunks.clone(),
        None => layout::at_scale(&line, n),
    };
    let (nr, nw) = inp.queries.iter().fold((0.0, 0.0), |(r, w), q| if q.is_read { (r + 1.0, w) } else { (r, w + 1.0) });
    let today_s = spread(&today_chunks, n, inp);
    let scale_s = spread(&scale_chunks, n, inp);
    let ni = inp.num_inserts as f64;
    let today = placement(&today_s, &names, nr, nw, ni, migrations);
    let at_scale = placement(&scale_s, &names, nr, nw, ni, None);
    let load = load(&at_scale, nr + nw, inp.num_inserts);
    let cost = cost(&scale_s, inp, n);
    let growth = growth(inp, &scale_s);
    let scale = if inp.documents {
        scale(line.total_bytes(), n, range, today.shards_with_data)
    } else {
        Scale {
            data_bytes: 0,
            migrations_start_bytes: layout::scale_thresholds(n, range).0.round() as u64,
            all_shards_from_bytes: layout::scale_thresholds(n, range).1.round() as u64,
            benefit: Benefit::Unknown,
            words: "no documents: the data size and its spread are not known; the key space is cut at the values the sampled queries name"
                .into(),
        }
    };
    let jumbo_chunks: Vec<JumboChunkReport> = today_chunks
        .iter()
        .filter(|c| c.jumbo)
        .map(|c| JumboChunkReport {
            min: inp.key.value_json(&c.min, inp.redact),
            max: inp.key.value_json(&c.max, inp.redact),
            shard: names[c.shard].clone(),
            estimated_bytes: c.bytes.round() as u64,
            estimated_docs: c.docs.round() as u64,
        })
        .collect();
    let verdict = verdict(n, &cost, (&growth, inp.insert_evidence), &scale, &jumbo_chunks, load.as_ref());
    let from = if actual.is_some() { ShardsFrom::Cluster } else { inp.shards_from };
    ClusterReport {
        basis,
        num_shards: n,
        num_shards_from: from,
        chunk_size_bytes: inp.chunk_size,
        assumptions: {
            let mut a = assumptions(n, from, inp.chunk_size, actual.is_some());
            if !inp.documents {
                a.push("no documents: each value the sampled queries name counts as one unit of data; data, insert and growth figures are not measured".into());
            }
            a
        },
        today,
        at_scale,
        cost,
        growth,
        scale,
        jumbo_chunks,
        load,
        verdict,
        zone_splits: zone_splits(inp.values, n),
    }
}

impl ClusterReport {
    /// Said again once the collection's insert evidence is settled (`InsertEvidence::with_keys`).
    pub(crate) fn reword_inserts(&mut self, inserts: super::insert_order::InsertEvidence) {
        self.verdict = verdict(self.num_shards, &self.cost, (&self.growth, inserts), &self.scale, &self.jumbo_chunks, self.load.as_ref());
    }
}

/// The busiest shard at scale by operations; None without operations.
fn load(at_scale: &Placement, queries: f64, num_inserts: u64) -> Option<Load> {
    let ops = queries + num_inserts as f64;
    if ops <= 0.0 {
        return None;
    }
    let busiest = at_scale.shards.iter().reduce(|a, b| if b.operations_percent > a.operations_percent { b } else { a })?;
    let mean = at_scale.shards.iter().map(|s| s.operations_percent).sum::<f64>() / at_scale.shards.len() as f64;
    Some(Load {
        busiest_over_mean: if mean > 0.0 { round2(busiest.operations_percent / mean) } else { 1.0 },
        num_operations: ops as u64,
        busiest_shard: busiest.shard.clone(),
        busiest_shard_percent: busiest.operations_percent,
        busiest_shard_data_percent: busiest.data_percent,
        num_inserts: (num_inserts > 0).then_some(num_inserts),
        insert_percent: (num_inserts > 0).then(|| pct(num_inserts as f64, ops)),
    })
}

fn verdict(
    n: usize,
    c: &Cost,
    (g, inserts): (&Growth, super::insert_order::InsertEvidence),
    s: &Scale,
    jumbo: &[JumboChunkReport],
    load: Option<&Load>,
) -> String {
    use super::insert_order::InsertEvidence;
    let mut parts = Vec::new();
    if let Some(p) = c.percentage_of_single_shard_ops {
        parts.push(format!("{p:.1}% of operations reach one shard"));
    }
    if let Some(r) = c.mean_shards_per_read {
        parts.push(format!("a read reaches {r:.2} of {} on average", count_of(n as u64, "shard", "shards")));
    }
    if let Some(w) = c.mean_shards_per_write {
        parts.push(format!("a write {w:.2}"));
    }
    // Where inserts go, when the workload shows them or is not known (then said assumed).
    let taking = count_of(g.shards_taking_inserts as u64, "shard", "shards");
    match inserts {
        InsertEvidence::Sampled => parts.push(format!("inserts go to {taking}")),
        InsertEvidence::NoneSampled => {}
        _ => parts.push(format!("inserts (assumed) go to {taking}")),
    }
    if let Some(l) = load {
        parts.push(format!("the busiest shard takes {:.1}% of operations", l.busiest_shard_percent));
    }
    if !jumbo.is_empty() {
        parts.push(format!("{} jumbo chunk{}", jumbo.len(), if jumbo.len() > 1 { "s" } else { "" }));
    }
    let today = match s.benefit {
        Benefit::Full => format!("today, at {}, the data spreads over every shard", mib(s.data_bytes)),
        Benefit::Partial => format!("today, at {}, only some shards hold data", mib(s.data_bytes)),
        Benefit::NoneYet => format!("today, at {}, one shard holds it all (below the balancer's threshold)", mib(s.data_bytes)),
        Benefit::Unknown => "today's data size is not known".to_string(),
    };
    format!("with {} at scale: {}; {today}", count_of(n as u64, "shard", "shards"), parts.join(", "))
}

/// Words for a share of the largest shard and the useful-shard limit, for the score's reasons.
pub(crate) fn useful_shards_words(g: &Growth) -> Option<String> {
    match g.limited_by {
        GrowthLimit::DistinctValues => {
            Some(format!("at most {} shards can ever hold its data (one per distinct value)", fmt_count(g.max_useful_shards)))
        }
        GrowthLimit::TopValueShare => Some(format!(
            "beyond {} shards the shard holding the top value stays the busiest: adding shards no longer spreads the load",
            fmt_count(g.max_useful_shards)
        )),
        GrowthLimit::None => None,
    }
}

#[cfg(test)]
mod tests {

    /// Ten values 0..9 of one document each, four zones: the data crosses 1/4 (2.5 docs)
    /// after value 2, 2/4 after value 4, 3/4 (7.5) after value 7: zones start at 3, 5, 8.
    #[test]
    fn zone_splits_cut_the_data_in_equal_parts() {
        let ks = KeySpace::from_values((0..10).map(|i| (vec![Bson::Int32(i)], 1)).collect());
        assert_eq!(zone_splits(&ks, 4), vec![Bson::Int32(3), Bson::Int32(5), Bson::Int32(8)]);
        // One value holding 8 of 10 documents crosses 1/4, 2/4 and 3/4 at once: one split, after it.
        let ks = KeySpace::from_values(vec![(vec![Bson::Int32(0)], 1), (vec![Bson::Int32(1)], 8), (vec![Bson::Int32(2)], 1)]);
        assert_eq!(zone_splits(&ks, 4), vec![Bson::Int32(2)]);
        assert!(zone_splits(&ks, 1).is_empty());
    }
    use super::*;
    use crate::model::{KeyKind, KeyRange};

    fn at(v: i32) -> QueryTouch {
        QueryTouch { is_read: true, retention: false, touched: vec![KeyRange::point(vec![Bson::Int32(v)])] }
    }

    /// Values 0..100, one document each, 4 shards: at scale shard k owns 25k..25k+25.
    fn predict_with(queries: &[QueryTouch], num_inserts: u64) -> ClusterReport {
        let key = ShardKey::single("k", KeyKind::Range);
        let values = KeySpace::from_values((0..100).map(|i| (vec![Bson::Int32(i)], 1)).collect());
        let recent: Vec<Vec<Bson>> = (0..100).map(|i| vec![Bson::Int32(i)]).collect();
        let inp = Inputs {
            key: &key,
            values: &values,
            jumbo_values: vec![],
            docs_per_sampled: 1.0,
            avg_doc_size: 1000,
            documents: true,
            chunk_size: 128 << 20,
            shards: 4,
            shards_from: ShardsFrom::Flag,
            queries,
            inserts: InsertPattern::LikeRecent,
            recent: &recent,
            estimated_distinct: 100,
            top_share: 0.01,
            writes_without_shard_key_percent: None,
            writes_without_key: None,
            shard_key_updates_percent: None,
            num_inserts,
            insert_evidence: crate::metrics::insert_order::InsertEvidence::Sampled,
            redact: false,
        };
        predict(&inp, None)
    }

    /// Hand computation: 70 reads of value 3 (shard0) and 10 each of 30, 55, 80 (shards
    /// 1, 2, 3); 100 inserts like the recent values 0..99, 25 per shard. Operations: 200;
    /// shard0 takes 70 + 25 = 95 (47.5%), the others 10 + 25 = 35 (17.5%); mean 25%:
    /// 47.5 / 25 = 1.9. Inserts are 100 of 200 operations: 50%.
    #[test]
    fn load_counts_reads_writes_and_inserts_where_they_land() {
        let mut q: Vec<QueryTouch> = (0..70).map(|_| at(3)).collect();
        for v in [30, 55, 80] {
            q.extend((0..10).map(|_| at(v)));
        }
        let r = predict_with(&q, 100);
        let ops: Vec<f64> = r.at_scale.shards.iter().map(|s| s.operations_percent).collect();
        assert_eq!(ops, vec![47.5, 17.5, 17.5, 17.5]);
        let l = r.load.unwrap();
        assert_eq!(
            (l.num_operations, l.busiest_shard.as_str(), l.busiest_shard_percent, l.busiest_shard_data_percent),
            (200, "shard0", 47.5, 25.0)
        );
        assert_eq!((l.busiest_over_mean, l.num_inserts, l.insert_percent), (1.9, Some(100), Some(50.0)));
        assert!(r.verdict.contains("the busiest shard takes 47.5% of operations"), "{}", r.verdict);
    }

    /// A broadcast reaches every shard: each takes 100% of operations, the mean too (1.0×);
    /// without inserts seen, inserts are left out.
    #[test]
    fn a_broadcast_loads_every_shard_and_no_operations_means_no_load() {
        let all =
            QueryTouch { is_read: false, retention: false, touched: vec![KeyRange { min: vec![Bson::MinKey], max: vec![Bson::MaxKey] }] };
        let r = predict_with(&[all], 0);
        let l = r.load.unwrap();
        assert_eq!((l.busiest_shard_percent, l.busiest_over_mean, l.num_inserts, l.insert_percent), (100.0, 1.0, None, None));
        assert!(r.at_scale.shards.iter().all(|s| s.operations_percent == 100.0));
        assert_eq!(predict_with(&[], 0).load, None);
    }

    /// A retention delete below value 10 reaches shard0 only, a read of 60 shard2: the fan-out
    /// counts the read alone (1.0), the means count both.
    #[test]
    fn a_retention_delete_is_left_out_of_the_fan_out() {
        let old =
            QueryTouch { is_read: false, retention: true, touched: vec![KeyRange { min: vec![Bson::MinKey], max: vec![Bson::Int32(10)] }] };
        let r = predict_with(&[old, at(60)], 0);
        assert_eq!((r.cost.fan_out, r.cost.mean_shards_per_op), (Some(1.0), Some(1.0)));
        let r = predict_with(&[every_shard(), at(60)], 0);
        assert_eq!((r.cost.fan_out, r.cost.mean_shards_per_op), (Some(1.0), Some(2.5)));
        let r = predict_with(&[QueryTouch { retention: false, ..every_shard() }, at(60)], 0);
        assert_eq!(r.cost.fan_out, Some(0.5));
    }

    fn every_shard() -> QueryTouch {
        QueryTouch { is_read: false, retention: true, touched: vec![KeyRange { min: vec![Bson::MinKey], max: vec![Bson::MaxKey] }] }
    }
}
