//! The one place that turns metrics into a 0–100 score, a verdict, reasons, and the
//! pairwise words of the ranking.
//!
//! The score comes from the cluster model (`metrics::cluster`) at N shards, at scale:
//! score = min(cap, 100 × Σ weight × component), rounded. The weights and caps are
//! the tables `WEIGHTS` and `CAPS` below (docs/reference.md "Score" prints the same tables).

pub(crate) mod apply;
pub(crate) mod choice;
mod compare;
pub(crate) mod residency;
pub(crate) use compare::compare;
pub(crate) mod reasons;

use crate::metrics::cluster::{useful_shards_words, ClusterReport};
use crate::metrics::insert_order::{InsertBasis, InsertEvidence, InsertKind, InsertOrder};
use crate::metrics::CandidateMetrics;
use crate::rules::{Effect, Finding};
use crate::util::text::{fmt_count, short_value};
use reasons::{Reason, Spread, Targeting, Witness};
use serde::Serialize;
use serde_json::Value;

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

fn cap(c: Capped) -> f64 {
    CAPS.iter().find(|x| x.cap == c).map(|x| x.max_score).unwrap_or(100.0)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Verdict {
    Good,
    Acceptable,
    Poor,
    Bad,
    /// The server refuses the key until something is changed first (a unique index dropped).
    Blocked,
    Invalid,
}

impl Verdict {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verdict::Good => "good",
            Verdict::Acceptable => "acceptable",
            Verdict::Poor => "poor",
            Verdict::Bad => "bad",
            Verdict::Blocked => "blocked",
            Verdict::Invalid => "invalid",
        }
    }

    /// The verdict of a score; `held` when a cap holds it down (the weighted sum reaches the
    /// cap). A cap is a ceiling the key stays under: held on a band's lower edge (25, 50, 75),
    /// the key takes the band below, so a key capped at 50 is poor, never acceptable.
    pub(crate) fn of_score(score: u32, held: bool) -> Verdict {
        Verdict::of(if held { score.saturating_sub(1) } else { score })
    }

    /// good 75–100, acceptable 50–74, poor 25–49, bad 0–24.
    pub(crate) fn of(score: u32) -> Verdict {
        match score {
            75.. => Verdict::Good,
            50..=74 => Verdict::Acceptable,
            25..=49 => Verdict::Poor,
            _ => Verdict::Bad,
        }
    }
}

/// The score's parts, in the report as `scoreBreakdown`. A component that was not
/// measured is `null` (None) and counts 0: what was not measured never counts in a key's favour.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Breakdown {
    pub(crate) num_shards: usize,
    /// Scaled down by the share of operations that change the key.
    pub(crate) fan_out: Option<f64>,
    pub(crate) data_spread: Option<f64>,
    pub(crate) load: Option<f64>,
    /// Scaled by the inserts' share of operations when the queries show inserts.
    pub(crate) insert_spread: Option<f64>,
    pub(crate) growth: Option<f64>,
    /// The inserts' share of operations (0..1) the insert penalty was scaled by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) insert_share_of_operations: Option<f64>,
    /// 100 × Σ weight × component, before caps.
    pub(crate) weighted: f64,
    /// The lowest cap that applies, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) capped_by: Option<Capped>,
    /// Capped by `writesFail`: the score were the failing writes fixed (their filters naming
    /// the key's fields), every other cap kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) if_writes_fixed: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cap: Option<f64>,
    /// Each component's quantity in words, for the ranking's comparisons.
    #[serde(skip)]
    pub(crate) words: [String; 5],
}

impl Breakdown {
    /// The component as measured; None when it was not.
    pub(crate) fn measured(&self, c: Component) -> Option<f64> {
        match c {
            Component::FanOut => self.fan_out,
            Component::DataSpread => self.data_spread,
            Component::Load => self.load,
            Component::InsertSpread => self.insert_spread,
            Component::Growth => self.growth,
        }
    }

    /// The component as the score counts it (0 when not measured).
    pub(crate) fn component(&self, c: Component) -> f64 {
        self.measured(c).unwrap_or(0.0)
    }

    fn words(&self, c: Component) -> &str {
        &self.words[WEIGHTS.iter().position(|w| w.component == c).unwrap_or(0)]
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Score {
    pub(crate) score: u32,
    pub(crate) verdict: Verdict,
    /// Problems first, then strengths.
    pub(crate) reasons: Vec<Reason>,
    pub(crate) breakdown: Breakdown,
}

/// What the score reads, as plain numbers: built from a candidate's metrics by
/// `Facts::of`, or by hand in the tests.
#[derive(Debug, Clone)]
pub(crate) struct Facts {
    pub(crate) shards: usize,
    /// False for a queries-only run: data, insert (unless the queries' value types tell) and
    /// growth components are not measured and count 0.5.
    pub(crate) documents: bool,
    pub(crate) docs_with_arrays: u64,
    pub(crate) docs_sampled: u64,
    pub(crate) docs_missing_fields: u64,
    /// The distinct count the verdict uses: the lower end of the estimate's range (pessimistic).
    pub(crate) estimated_distinct: u64,
    /// The estimate with its range, for the words; None when counted exactly.
    pub(crate) distinct_range: Option<crate::metrics::cardinality::DistinctRange>,
    /// Top value and the share of documents the verdict uses (0..1): the upper end of its
    /// 95% interval (pessimistic) when the documents are a sample.
    pub(crate) top_value: Option<Value>,
    pub(crate) top_share: f64,
    /// The top value's share in the sample, when it differs from `top_share` (words only).
    pub(crate) top_share_in_sample: Option<f64>,
    /// The largest jumbo value: (value, documents, bytes), and how many values are at risk.
    pub(crate) jumbo: Option<(Value, u64, u64)>,
    pub(crate) jumbo_count: usize,
    pub(crate) chunk_size: u64,
    pub(crate) cost: crate::metrics::cluster::Cost,
    /// Server labels, for words beside ours.
    pub(crate) server_multi_reads: Option<f64>,
    pub(crate) data_max_share: f64,
    pub(crate) insert_max_share: f64,
    pub(crate) shards_taking_inserts: usize,
    pub(crate) insert_order: InsertOrder,
    pub(crate) server_record_id_coefficient: Option<f64>,
    pub(crate) growth: crate::metrics::cluster::Growth,
    /// The operations per shard at scale; None without sampled operations.
    pub(crate) load: Option<crate::metrics::cluster::Load>,
    /// Queries only: the first field's values the filters name (`metrics::cardinality`).
    pub(crate) query_values: Option<crate::metrics::cardinality::QueryValues>,
    /// What the validity rules found (`crate::rules`).
    pub(crate) constraints: Vec<Finding>,
    /// Operations a non-simple default collation keeps from one shard.
    pub(crate) collation_spread: Option<crate::metrics::CollationSpread>,
    /// A hashed field's values before and after hashing.
    pub(crate) hashing: Option<crate::metrics::characteristics::Hashing>,
    /// Documents that take much of the sampled writes.
    pub(crate) hot_documents: Option<crate::metrics::hot_documents::HotDocuments>,
}

impl Facts {
    pub(crate) fn of(m: &CandidateMetrics) -> Facts {
        let kc = m.key_characteristics.as_ref();
        let cl: &ClusterReport = &m.cluster;
        let max = |f: &dyn Fn(&crate::metrics::cluster::ShardLoad) -> f64| cl.at_scale.shards.iter().map(f).fold(0.0, f64::max) / 100.0;
        Facts {
            shards: cl.num_shards,
            documents: kc.is_some(),
            docs_with_arrays: kc.map_or(0, |k| k.num_docs_with_array_key_values),
            docs_sampled: kc.map_or(0, |k| k.num_docs_sampled),
            docs_missing_fields: kc.map_or(0, |k| k.num_docs_missing_key_fields),
            estimated_distinct: kc.map_or(0, |k| k.estimated_num_distinct_values.range.lower),
            distinct_range: kc.map(|k| k.estimated_num_distinct_values.range).filter(|r| !r.is_exact()),
            top_value: kc.and_then(|k| k.most_common_values.first()).map(|v| v.value.clone()),
            top_share: kc.map_or(0.0, |k| k.top_value_percentage_range.upper / 100.0),
            top_share_in_sample: kc
                .filter(|k| k.top_value_percentage_range.upper != k.top_value_percentage)
                .map(|k| k.top_value_percentage / 100.0),
            jumbo: kc.and_then(|k| k.jumbo_chunk_risk.values.first()).map(|j| (j.value.clone(), j.estimated_docs, j.estimated_bytes)),
            jumbo_count: kc.map_or(0, |k| k.jumbo_chunk_risk.values.len()),
            chunk_size: cl.chunk_size_bytes,
            cost: cl.cost.clone(),
            server_multi_reads: m.read_distribution.percentage_of_multi_shard_reads,
            data_max_share: max(&|s| s.data_percent),
            insert_max_share: max(&|s| s.inserts_percent),
            shards_taking_inserts: cl.growth.shards_taking_inserts,
            insert_order: m.insert_order.clone(),
            server_record_id_coefficient: kc.and_then(|k| k.monotonicity.record_id_correlation_coefficient),
            growth: cl.growth.clone(),
            load: cl.load.clone(),
            query_values: m.query_values.clone(),
            collation_spread: m.collation_spread.clone(),
            constraints: Vec::new(),
            hashing: kc.and_then(|k| k.hashing.clone()),
            hot_documents: m.hot_documents.clone(),
        }
    }
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

/// Score a candidate from its metrics and what the validity rules found on it.
pub(crate) fn score_candidate(m: &CandidateMetrics, constraints: &[Finding]) -> Score {
    score(&Facts { constraints: constraints.to_vec(), ..Facts::of(m) })
}

/// Problems first, then strengths: the order `reasons` keeps.
#[derive(Default)]
struct Said {
    problems: Vec<Reason>,
    strengths: Vec<Reason>,
}

impl Said {
    fn problem(&mut self, r: Reason) {
        self.problems.push(r);
    }

    fn strength(&mut self, r: Reason) {
        self.strengths.push(r);
    }

    /// A strength when the component stands at 0.5 or above, else a problem.
    fn by(&mut self, component: f64, r: Reason) {
        if component >= 0.5 {
            self.strength(r)
        } else {
            self.problem(r)
        }
    }
}

/// The lowest cap, and the lowest but for `writesFail` (what the key would score with the
/// application's refused writes fixed: `Breakdown::if_writes_fixed`).
#[derive(Default)]
struct Ceiling(Option<(Capped, f64)>, Option<f64>);

impl Ceiling {
    fn at(&mut self, c: Capped) {
        self.at_most(c, cap(c))
    }

    /// A cap whose value depends on the facts (`insertsOnOneShard` scaled by the inserts' share).
    fn at_most(&mut self, c: Capped, v: f64) {
        if self.0.is_none_or(|(_, x)| v < x) {
            self.0 = Some((c, v));
        }
        if c != Capped::WritesFail && self.1.is_none_or(|x| v < x) {
            self.1 = Some(v);
        }
    }
}

pub(crate) fn score(f: &Facts) -> Score {
    let n = f.shards.max(1);
    let hashed = f.insert_order.basis == InsertBasis::HashedFirstField;
    let insert_known = f.documents || matches!(f.insert_order.kind, InsertKind::Increasing | InsertKind::Decreasing);
    // Each component as measured; None where it was not (it then counts 0).
    let updates = key_update_share(&f.cost);
    let fan = fan_out_component(f.cost.fan_out, updates);
    let data = f.documents.then(|| spread_component(f.data_max_share, n));
    let evidence = f.insert_order.inserts_in_workload;
    // Not judged with no insert sampled; hashing spreads inserts by construction.
    let ins = if evidence == InsertEvidence::NoneSampled || (!f.documents && hashed) {
        Some(1.0)
    } else if insert_known {
        Some(spread_component(f.insert_max_share, n))
    } else {
        None
    };
    // The shortfall counts as much as inserts weigh in the workload, when the queries show it:
    // nothing when they show operations and no insert.
    let insert_share = match evidence {
        InsertEvidence::NoneSampled => Some(0.0),
        _ => f.load.as_ref().and_then(|l| l.insert_percent).map(|p| p / 100.0),
    };
    let ins = ins.map(|i| 1.0 - insert_factor(insert_share) * (1.0 - i));
    let busiest_ops = f.load.as_ref().map(|l| l.busiest_shard_percent / 100.0);
    let load = busiest_ops.map(|s| spread_component(s, n));
    let grow = f.documents.then(|| growth_component(f.growth.max_useful_shards));
    let c = &f.cost;
    let not_measured = |what: &str| format!("{what} not measured");
    let words = [
        match (c.mean_shards_per_op, c.percentage_of_single_shard_ops) {
            (Some(m), Some(p)) => {
                format!(
                    "an operation reaches {m:.2} of {} on average ({p:.1}% reach one)",
                    crate::util::text::count_of(n as u64, "shard", "shards")
                )
            }
            _ => not_measured("targeting"),
        },
        match data {
            Some(_) => format!("the busiest of {n} shards holds {:.1}% of the data", f.data_max_share * 100.0),
            None => not_measured("the data's spread"),
        },
        match busiest_ops {
            Some(s) => format!("the busiest shard takes {:.1}% of operations", s * 100.0),
            None => not_measured("the load"),
        },
        match ins {
            _ if evidence == InsertEvidence::NoneSampled => "no insert sampled".to_string(),
            Some(_) if evidence.assumed() => format!("the busiest shard takes {:.1}% of the assumed inserts", f.insert_max_share * 100.0),
            Some(_) => format!("the busiest shard takes {:.1}% of inserts", f.insert_max_share * 100.0),
            None => not_measured("where inserts land"),
        },
        match grow {
            Some(_) => format!("up to {} useful shards", fmt_count(f.growth.max_useful_shards)),
            None => not_measured("growth"),
        },
    ];
    let counted = |x: Option<f64>| x.unwrap_or(0.0);
    let weighted = 100.0
        * (weight(Component::FanOut) * counted(fan)
            + weight(Component::DataSpread) * counted(data)
            + weight(Component::Load) * counted(load)
            + weight(Component::InsertSpread) * counted(ins)
            + weight(Component::Growth) * counted(grow));
    let breakdown = |ceiling: Option<(Capped, f64)>| Breakdown {
        num_shards: n,
        fan_out: fan.map(round3),
        data_spread: data.map(round3),
        load: load.map(round3),
        insert_spread: ins.map(round3),
        growth: grow.map(round3),
        insert_share_of_operations: insert_share.map(round3),
        weighted: round3(weighted),
        capped_by: ceiling.map(|c| c.0),
        if_writes_fixed: None,
        cap: ceiling.map(|c| c.1),
        words: words.clone(),
    };

    let refused: Vec<Reason> = f.constraints.iter().filter(|c| c.effect == Effect::Refused).cloned().map(Reason::Constraint).collect();
    if f.docs_with_arrays > 0 || !refused.is_empty() {
        let b = Breakdown {
            fan_out: fan,
            data_spread: data,
            load,
            insert_spread: ins,
            growth: grow,
            weighted,
            ..breakdown(Some((Capped::ArrayInKey, cap(Capped::ArrayInKey))))
        };
        return Score {
            score: cap(Capped::ArrayInKey) as u32,
            verdict: Verdict::Invalid,
            reasons: refused
                .into_iter()
                .chain((f.docs_with_arrays > 0).then_some(Reason::ArrayInKey { docs: f.docs_with_arrays }))
                .collect(),
            breakdown: b,
        };
    }

    let mut said = Said::default();
    let mut ceiling = Ceiling::default();
    for c in &f.constraints {
        if c.effect == Effect::WritesFail {
            ceiling.at(Capped::WritesFail);
        }
        said.problem(Reason::Constraint(c.clone()));
    }
    targeting(f, n, counted(fan), updates, &mut said, &mut ceiling);
    busiest_shard(f, n, &mut said, &mut ceiling);
    if !f.documents {
        said.problem(Reason::CharacteristicsNotMeasured);
        // What the filters name is a lower bound: few values there count as low cardinality.
        if let Some(q) = f.query_values.as_ref().filter(|q| q.num_distinct_named > 0 && q.estimated_num_distinct_values < LOW_CARDINALITY) {
            ceiling.at(Capped::FewValuesInQueries);
            said.problem(Reason::FewValuesInQueries { named: q.num_distinct_named, estimate: q.estimated_num_distinct_values });
        }
    } else {
        distribution(f, n, &mut said, &mut ceiling);
    }
    inserts(f, n, counted(ins), insert_known, insert_share, &mut said, &mut ceiling);

    let score = match ceiling.0 {
        Some((_, c)) => weighted.min(c),
        None => weighted,
    }
    .round()
    .clamp(0.0, 100.0) as u32;
    let mut reasons = said.problems;
    reasons.extend(said.strengths);
    let blocked = f.constraints.iter().any(|c| c.effect == Effect::Blocked);
    let held = ceiling.0.is_some_and(|(_, c)| weighted >= c);
    let verdict = if blocked { Verdict::Blocked } else { Verdict::of_score(score, held) };
    let mut b = breakdown(ceiling.0);
    if b.capped_by == Some(Capped::WritesFail) {
        b.if_writes_fixed = Some(ceiling.1.map_or(weighted, |c| weighted.min(c)).round().clamp(0.0, 100.0) as u32);
    }
    Score { score, verdict, reasons, breakdown: b }
}

/// Reads and writes under the model.
fn targeting(f: &Facts, n: usize, fan: f64, updates: f64, said: &mut Said, ceiling: &mut Ceiling) {
    let c = &f.cost;
    let Some(single) = c.percentage_of_single_shard_ops.filter(|_| c.num_reads + c.num_writes > 0) else {
        said.problem(Reason::NoQuerySample);
        return;
    };
    let t = Targeting {
        shards: n,
        single_percent: single,
        ops: c.num_reads + c.num_writes,
        mean_per_read: c.mean_shards_per_read,
        server_multi_reads: f.server_multi_reads.filter(|m| *m > 0.0),
        mean_per_write: c.mean_shards_per_write,
        to_every_shard_percent: c.percentage_of_ops_to_every_shard.unwrap_or(0.0),
    };
    said.by(fan, Reason::Targeting(t));
    if let Some(cs) = f.collation_spread.as_ref().filter(|cs| cs.operations > 0) {
        said.problem(Reason::CollationSpread { locale: cs.locale.clone(), operations: cs.operations, of: cs.of });
    }
    // No operation on one shard: every one is a multi-shard operation, whatever else the key does.
    if n > 1 && (c.fan_out == Some(0.0) || single <= 0.0) {
        ceiling.at(Capped::TargetsNothing);
    }
    if let Some(percent) = c.percentage_of_writes_without_shard_key.filter(|w| *w >= 20.0) {
        said.problem(Reason::WritesWithoutShardKey { percent, writes: c.num_writes, by: c.writes_without_shard_key });
    }
    if let Some(percent) = c.percentage_of_shard_key_updates.filter(|x| *x > 0.0) {
        if percent / 100.0 >= KEY_UPDATES_CAP_SHARE {
            ceiling.at(Capped::KeyUpdates);
        }
        let refused_by_id = c.writes_without_shard_key.map_or(0.0, |b| b.single_by_id_changing_key);
        said.problem(Reason::ShardKeyUpdates { percent, of_operations: updates, refused_by_id });
    }
}

/// The operations each shard takes at scale: a problem when one shard takes more than
/// twice its even share and twice the mean shard's (a hot spot, not broadcasts).
fn busiest_shard(f: &Facts, n: usize, said: &mut Said, ceiling: &mut Ceiling) {
    let Some(l) = &f.load else { return };
    let s = l.busiest_shard_percent / 100.0;
    if hot_shard(s, l.busiest_over_mean, n) {
        ceiling.at(Capped::HotShard);
    }
    if let Some(h) = &f.hot_documents {
        said.problem(Reason::HotDocuments {
            ids: h.documents.iter().map(|d| (short_value(&d.id.clone().into_relaxed_extjson()), d.percent_of_writes)).collect(),
            percent: h.percent_of_writes,
            writes: h.num_writes,
            sequences: h.sequences,
        });
    }
    if n > 1 && s * n as f64 > 2.0 && l.busiest_over_mean >= HOT_SHARD_OVER_MEAN {
        said.problem(Reason::BusiestShard {
            hot_documents: f.hot_documents.is_some(),
            shards: n,
            share: s,
            data_share: f.documents.then_some(l.busiest_shard_data_percent / 100.0),
            over_mean: l.busiest_over_mean,
            ops: l.num_operations,
        });
    }
}

/// Cardinality, frequency, growth and the data's spread (documents only).
fn distribution(f: &Facts, n: usize, said: &mut Said, ceiling: &mut Ceiling) {
    if let Some(h) = f
        .hashing
        .as_ref()
        .filter(|h| h.num_distinct_fractional_doubles > 0 && h.num_distinct_hashed_values < h.num_distinct_values_before_hashing)
    {
        said.problem(Reason::HashedDoublesTruncated {
            field: h.field.clone(),
            doubles: h.num_distinct_fractional_doubles,
            before: h.num_distinct_values_before_hashing,
            hashed: h.num_distinct_hashed_values,
        });
    }
    let distinct = f.estimated_distinct.max(1);
    let range = f.distinct_range;
    if distinct < LOW_CARDINALITY {
        ceiling.at(Capped::LowCardinality);
        said.problem(Reason::LowCardinality { distinct, range });
    } else if f.growth.max_useful_shards < 1000 && useful_shards_words(&f.growth).is_some() {
        said.problem(Reason::LimitedGrowth { distinct, range, growth: f.growth.clone() });
    } else {
        said.strength(Reason::HighCardinality { distinct, range });
    }
    if let Some(top) = &f.top_value {
        if f.top_share >= HOT_VALUE_CAP_SHARE {
            ceiling.at(Capped::HotValue);
        }
        if f.top_share >= 0.10 {
            said.problem(Reason::HotValue { value: short_value(top), share: f.top_share, in_sample: f.top_share_in_sample });
        }
    }
    if let Some((v, docs, bytes)) = &f.jumbo {
        ceiling.at(Capped::JumboRisk);
        said.problem(Reason::Jumbo {
            value: short_value(v),
            docs: *docs,
            bytes: *bytes,
            range_bytes: f.chunk_size,
            values_at_risk: f.jumbo_count,
        });
    }
    if f.docs_missing_fields > 0 && f.docs_sampled > 0 {
        said.problem(Reason::MissingKeyFields { docs: f.docs_missing_fields, share: f.docs_missing_fields as f64 / f.docs_sampled as f64 });
    }
    if f.data_max_share * n as f64 > 2.0 && n > 1 {
        said.problem(Reason::DataConcentrated { shards: n, share: f.data_max_share });
    }
}

/// What tells where inserts land, for the words.
fn witness(f: &Facts) -> Witness {
    let io = &f.insert_order;
    match (io.basis, io.creation_time_correlation_coefficient, f.server_record_id_coefficient) {
        (InsertBasis::CreationTime, Some(r), rid) => Witness::CreationTime { r, hidden_by_load: rid.filter(|_| io.load_order_hides_it) },
        (InsertBasis::RecordIdOrder, _, Some(r)) => Witness::RecordId { r },
        (InsertBasis::ValueType, _, _) => {
            Witness::ValueType(io.increasing_by_nature.iter().map(|x| (x.field.clone(), x.bson_type)).collect())
        }
        _ => Witness::None,
    }
}

/// Where inserts land.
fn inserts(f: &Facts, n: usize, ins: f64, insert_known: bool, insert_share: Option<f64>, said: &mut Said, ceiling: &mut Ceiling) {
    let io = &f.insert_order;
    let one_end = matches!(io.kind, InsertKind::Increasing | InsertKind::Decreasing);
    if io.inserts_in_workload == InsertEvidence::NoneSampled {
        // Growth by inserts is not evidenced: no cap, and the words say what was not judged.
        if one_end {
            said.problem(Reason::InsertsNotJudged {
                operations: f.cost.num_reads + f.cost.num_writes,
                decreasing: io.kind == InsertKind::Decreasing,
            });
        }
        return;
    }
    if insert_known && f.insert_max_share >= ONE_SHARD_INSERTS && n > 1 && insert_factor(insert_share) > 0.0 {
        let full = 100.0 - cap(Capped::InsertsOnOneShard);
        ceiling.at_most(Capped::InsertsOnOneShard, 100.0 - full * insert_factor(insert_share));
    }
    let plural = io.group_fields.unwrap_or(1) > 1;
    let hashed = io.basis == InsertBasis::HashedFirstField;
    match io.kind {
        InsertKind::Increasing | InsertKind::Decreasing => said.problem(Reason::InsertsAtOneEnd {
            decreasing: io.kind == InsertKind::Decreasing,
            witness: witness(f),
            share: f.insert_max_share,
            of_operations: insert_share,
            assumed: io.inserts_in_workload,
            operations: f.cost.num_reads + f.cost.num_writes,
        }),
        InsertKind::TopOfEachGroup if !f.documents => said
            .strength(Reason::TopOfEachGroupByNature { plural, fields: io.increasing_by_nature.iter().map(|x| x.field.clone()).collect() }),
        InsertKind::TopOfEachGroup => said.by(
            ins,
            Reason::TopOfEachGroup { plural, witness: witness(f), taking: f.shards_taking_inserts, shards: n, share: f.insert_max_share },
        ),
        InsertKind::Unknown => {}
        InsertKind::Spread if !f.documents => {
            if hashed {
                said.strength(Reason::HashedSpread);
            }
        }
        InsertKind::Spread => said.by(
            ins,
            Reason::InsertsSpread {
                taking: f.shards_taking_inserts,
                shards: n,
                share: f.insert_max_share,
                why: if hashed { Spread::Hashed } else { Spread::By(witness(f)) },
            },
        ),
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn cap_words(c: Capped) -> &'static str {
    CAPS.iter().find(|x| x.cap == c).map(|x| x.when).unwrap_or("")
}

#[cfg(test)]
mod tests;
