//! How the score is made, as data: its components and their `WEIGHTS`, the `CAPS` and the
//! thresholds that set them off, and each component's formula (docs/reference.md "Score"
//! prints the same tables).

use serde::Serialize;

/// One component of the score: a number from 0 to 1 and its weight.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Weight {
    pub(crate) component: Component,
    pub(crate) weight: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Component {
    FanOut,
    DataSpread,
    Load,
    InsertSpread,
    Growth,
}

pub(crate) const WEIGHTS: [Weight; 5] = [
    // 1 − mean over sampled operations of (shards reached − 1) / (N − 1), at scale; 0.5 with no queries
    Weight { component: Component::FanOut, weight: 0.35 },
    // from the busiest shard's share s of the data at scale: 1 while s × N ≤ 2 (N = 2: 1.5), 0 at s = 1, linear between
    Weight { component: Component::DataSpread, weight: 0.15 },
    // the same rule on the busiest shard's share of operations at scale (reads, writes, and inserts when the queries show them; an operation sent to several shards counts on each); 0.5 with no queries
    Weight { component: Component::Load, weight: 0.15 },
    // the same rule on the busiest shard's share of inserts at scale; when the queries show inserts, its shortfall from 1 is scaled by min(1, 2 × the inserts' share of operations); a log or the profiler with operations and no insert: share 0, not judged
    Weight { component: Component::InsertSpread, weight: 0.10 },
    // log10(most useful shards) / 3, at most 1 (1,000+ = 1); useful shards = min(distinct values, 1 / top value share)
    Weight { component: Component::Growth, weight: 0.25 },
];

/// A ceiling on the score when a key has a problem no strength makes up for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cap {
    pub(crate) cap: Capped,
    pub(crate) max_score: f64,
    pub(crate) when: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Capped {
    ArrayInKey,
    JumboRisk,
    HotValue,
    LowCardinality,
    InsertsOnOneShard,
    HotShard,
    WritesFail,
    KeyUpdates,
    FewValuesInQueries,
    TargetsNothing,
}

pub(crate) const CAPS: [Cap; 10] = [
    Cap { cap: Capped::ArrayInKey, max_score: 0.0, when: "a sampled document holds an array in a key field (invalid key)" },
    Cap {
        cap: Capped::JumboRisk,
        max_score: 40.0,
        when: "a value's documents exceed the range size (jumbo chunk: never split, never moved)",
    },
    Cap { cap: Capped::HotValue, max_score: 45.0, when: "the top value holds 25% of documents or more" },
    Cap { cap: Capped::LowCardinality, max_score: 35.0, when: "fewer than 100 distinct values" },
    Cap {
        cap: Capped::FewValuesInQueries,
        max_score: 35.0,
        when: "queries only: fewer than 100 values of every key field by Chao1 over the values the filters name (each a lower bound of the key's cardinality)",
    },
    Cap {
        cap: Capped::InsertsOnOneShard,
        max_score: 50.0,
        when: "one shard takes 90% of inserts or more at scale (increasing or decreasing key); when the queries show inserts, the cap is 100 − 50 × min(1, 2 × the inserts' share of operations)",
    },
    Cap {
        cap: Capped::HotShard,
        max_score: 60.0,
        when: "one shard takes half the operations or more at scale, at least twice its even share (N = 2: 75%) and twice the mean shard's: a hot key range",
    },
    Cap {
        cap: Capped::WritesFail,
        max_score: 20.0,
        when: "some sampled writes would fail under the key: on every version (upserts without the full key; updates by _id or multi updates that change the key without the full key in the filter), or on the deployment's version before 7.1 (single-document writes with neither the full key nor _id; key changes without the full key)",
    },
    Cap {
        cap: Capped::KeyUpdates,
        max_score: 45.0,
        when: "20% or more of sampled writes change the shard key (each moves its document to another shard in a distributed transaction)",
    },
    Cap {
        cap: Capped::TargetsNothing,
        max_score: 49.0,
        when: "no sampled operation reaches one shard at scale (0% single-shard; fan-out 0 when every one reaches every shard): the key targets nothing, whatever else it does well",
    },
];

/// The share of sampled writes changing the key from which the score is capped.
pub(crate) const KEY_UPDATES_CAP_SHARE: f64 = 0.2;

/// The share of documents under one value from which the key is capped as hot.
pub(crate) const HOT_VALUE_CAP_SHARE: f64 = 0.25;
/// Fewer distinct values than this cap the score.
pub(crate) const LOW_CARDINALITY: u64 = 100;
/// One shard taking this share of inserts caps the score.
pub(crate) const ONE_SHARD_INSERTS: f64 = 0.9;
/// One shard taking this share of operations, twice its even share and twice the mean
/// shard's, caps the score.
pub(crate) const HOT_SHARD_OPERATIONS: f64 = 0.5;
/// The busiest shard's operations over the mean shard's from which the load is a hot spot
/// (broadcasts load every shard alike: the fan-out weighs them).
pub(crate) const HOT_SHARD_OVER_MEAN: f64 = 2.0;

/// How much of the insert penalty counts: 1 when the inserts' share of operations is not
/// known or is half or more, falling linearly to 0 with it. An insert hot spot matters as
/// much as the inserts weigh in the workload.
pub(crate) fn insert_factor(insert_share: Option<f64>) -> f64 {
    insert_share.map_or(1.0, |s| (2.0 * s).clamp(0.0, 1.0))
}

/// True when the busiest shard's share `s` of operations caps the score on `n` shards.
/// Twice the even share, as `spread_component` tolerates (1.5× with 2 shards), and twice the mean shard's.
pub(crate) fn hot_shard(s: f64, over_mean: f64, n: usize) -> bool {
    let tolerated = if n >= 3 { 2.0 } else { 1.5 };
    n > 1 && s >= HOT_SHARD_OPERATIONS.max(tolerated / n as f64) && over_mean >= HOT_SHARD_OVER_MEAN
}

pub(crate) fn weight(c: Component) -> f64 {
    WEIGHTS.iter().find(|w| w.component == c).map(|w| w.weight).unwrap_or(0.0)
}

pub(super) fn cap(c: Capped) -> f64 {
    CAPS.iter().find(|x| x.cap == c).map(|x| x.max_score).unwrap_or(100.0)
}

/// Fan-out component: the model's fan-out, times the share of operations that do not
/// change the key (a write that moves its document is a distributed transaction, the
/// worst an operation can cost); None (not measured) without sampled operations.
pub(crate) fn fan_out_component(fan_out: Option<f64>, key_update_share: f64) -> Option<f64> {
    fan_out.map(|x| x.clamp(0.0, 1.0) * (1.0 - key_update_share.clamp(0.0, 1.0)))
}

/// The share (0..1) of sampled operations that change the key.
pub(crate) fn key_update_share(c: &crate::metrics::cluster::Cost) -> f64 {
    let ops = c.num_reads + c.num_writes;
    match c.percentage_of_shard_key_updates {
        Some(p) if ops > 0 => p / 100.0 * c.num_writes as f64 / ops as f64,
        _ => 0.0,
    }
}

/// Spread component from the busiest shard's share (0..1) with `n` shards: 1 while
/// that shard carries at most twice its even share (1.5× with 2 shards), 0 when it
/// carries everything, linear between. Twice the even share is what a tenant-keyed
/// cluster lives with; one shard carrying all is the failure the manual warns of.
pub(crate) fn spread_component(max_share: f64, n: usize) -> f64 {
    if n <= 1 {
        return 1.0;
    }
    let nf = n as f64;
    let tolerated = if n >= 3 { 2.0 } else { 1.5 };
    ((nf - max_share * nf) / (nf - tolerated)).clamp(0.0, 1.0)
}

/// Growth component: log10(useful shards) / 3 in 0..=1.
pub(crate) fn growth_component(max_useful_shards: u64) -> f64 {
    ((max_useful_shards.max(1) as f64).log10() / 3.0).clamp(0.0, 1.0)
}

/// The words of a cap, from `CAPS` (said in `comparedWithNext`).
pub(super) fn cap_words(c: Capped) -> &'static str {
    CAPS.iter().find(|x| x.cap == c).map(|x| x.when).unwrap_or("")
}
