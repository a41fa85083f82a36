//! The one place that turns metrics into a 0–100 score, a verdict and reasons.
//!
//! score = min(cap, 100 × Σ weight × component), rounded; the weights and caps are
//! the tables `WEIGHTS` and `CAPS` below (README "Score" prints the same tables).

use crate::metrics::characteristics::KeyCharacteristics;
use crate::metrics::distribution::{ReadDistribution, WriteDistribution};
use crate::metrics::monotonicity::MonotonicityType;
use crate::util::text::{fmt_count, mib, short_value};
use serde::Serialize;

/// One component of the score: a number from 0 to 1 and its weight.
#[derive(Debug, Clone, Copy)]
pub struct Weight {
    pub component: Component,
    pub weight: f64,
    /// How the component is computed, for README and `--help`.
    pub rule: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    Cardinality,
    Frequency,
    Monotonicity,
    Targeting,
}

pub const WEIGHTS: [Weight; 4] = [
    Weight {
        component: Component::Cardinality,
        weight: 0.25,
        rule: "log10(estimated distinct values) / 4, at most 1 (10,000+ values = 1)",
    },
    Weight {
        component: Component::Frequency,
        weight: 0.25,
        rule: "1 when the top value holds at most 2% of documents, 0 at 25% or more, linear between",
    },
    Weight { component: Component::Monotonicity, weight: 0.20, rule: "not monotonic 1, unknown 0.7, monotonic 0" },
    Weight {
        component: Component::Targeting,
        weight: 0.30,
        rule: "(single-shard + ½ multi-shard) / all sampled reads and writes; 0.5 with no queries",
    },
];

/// A ceiling on the score when a key has a problem no strength makes up for.
#[derive(Debug, Clone, Copy)]
pub struct Cap {
    pub cap: Capped,
    pub max_score: f64,
    pub when: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capped {
    ArrayInKey,
    JumboRisk,
    HotValue,
    LowCardinality,
    Monotonic,
}

pub const CAPS: [Cap; 5] = [
    Cap { cap: Capped::ArrayInKey, max_score: 0.0, when: "a sampled document holds an array in a key field (invalid key)" },
    Cap { cap: Capped::JumboRisk, max_score: 40.0, when: "a value's documents exceed the chunk size (jumbo-chunk risk)" },
    Cap { cap: Capped::HotValue, max_score: 45.0, when: "the top value holds 25% of documents or more" },
    Cap { cap: Capped::LowCardinality, max_score: 35.0, when: "fewer than 100 distinct values" },
    Cap { cap: Capped::Monotonic, max_score: 50.0, when: "monotonic (every insert lands in one chunk)" },
];

/// The share of documents under one value from which the key is capped as hot.
pub const HOT_VALUE_CAP_SHARE: f64 = 0.25;
/// Fewer distinct values than this cap the score.
pub const LOW_CARDINALITY: u64 = 100;

fn weight(c: Component) -> f64 {
    WEIGHTS.iter().find(|w| w.component == c).map(|w| w.weight).unwrap_or(0.0)
}

fn cap(c: Capped) -> f64 {
    CAPS.iter().find(|x| x.cap == c).map(|x| x.max_score).unwrap_or(100.0)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Good,
    Acceptable,
    Poor,
    Bad,
    Invalid,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Good => "good",
            Verdict::Acceptable => "acceptable",
            Verdict::Poor => "poor",
            Verdict::Bad => "bad",
            Verdict::Invalid => "invalid",
        }
    }

    /// good 75–100, acceptable 50–74, poor 25–49, bad 0–24.
    pub fn of(score: u32) -> Verdict {
        match score {
            75.. => Verdict::Good,
            50..=74 => Verdict::Acceptable,
            25..=49 => Verdict::Poor,
            _ => Verdict::Bad,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Score {
    pub score: u32,
    pub verdict: Verdict,
    /// Problems first, then strengths.
    pub reasons: Vec<String>,
}

/// Cardinality component: log10(distinct) / 4 in 0..=1.
pub fn cardinality_component(estimated_distinct: u64) -> f64 {
    ((estimated_distinct.max(1) as f64).log10() / 4.0).clamp(0.0, 1.0)
}

/// Frequency component from the top value's share (0..1) of documents.
pub fn frequency_component(top_share: f64) -> f64 {
    1.0 - ((top_share - 0.02) / 0.23).clamp(0.0, 1.0)
}

/// Monotonicity component.
pub fn monotonicity_component(kind: MonotonicityType) -> f64 {
    match kind {
        MonotonicityType::Monotonic => 0.0,
        MonotonicityType::NotMonotonic => 1.0,
        MonotonicityType::Unknown => 0.7,
    }
}

/// Targeting component: (single + ½ multi) over all sampled reads and writes; None without queries.
pub fn targeting_component(reads: &ReadDistribution, writes: &WriteDistribution) -> Option<f64> {
    let nr = reads.sample_size.total as f64;
    let nw = writes.sample_size.total as f64;
    if nr + nw == 0.0 {
        return None;
    }
    let p = |x: Option<f64>| x.unwrap_or(0.0) / 100.0;
    let single = p(reads.percentage_of_single_shard_reads) * nr + p(writes.percentage_of_single_shard_writes) * nw;
    let multi = p(reads.percentage_of_multi_shard_reads) * nr + p(writes.percentage_of_multi_shard_writes) * nw;
    Some((single + 0.5 * multi) / (nr + nw))
}

pub fn score(kc: &KeyCharacteristics, reads: &ReadDistribution, writes: &WriteDistribution) -> Score {
    let mut problems: Vec<String> = Vec::new();
    let mut strengths: Vec<String> = Vec::new();

    if kc.num_docs_with_array_key_values > 0 {
        return Score {
            score: cap(Capped::ArrayInKey) as u32,
            verdict: Verdict::Invalid,
            reasons: vec![format!(
                "{} sampled documents hold an array in a key field: MongoDB refuses such a shard key (BadValue)",
                fmt_count(kc.num_docs_with_array_key_values)
            )],
        };
    }
    let mut ceiling = 100.0f64;

    // Cardinality.
    let est = kc.estimated_num_distinct_values.value.max(1);
    let card = cardinality_component(est);
    if est < LOW_CARDINALITY {
        ceiling = ceiling.min(cap(Capped::LowCardinality));
        problems.push(format!(
            "low cardinality: only {} distinct values, so the collection can never be split into more than {} chunks and at most {} shards can hold data",
            fmt_count(est), fmt_count(est), fmt_count(est)
        ));
    } else if est < 1000 {
        problems.push(format!(
            "limited cardinality: about {} distinct values caps the collection at {} chunks",
            fmt_count(est),
            fmt_count(est)
        ));
    } else {
        strengths.push(format!("high cardinality: about {} distinct values", fmt_count(est)));
    }

    // Frequency.
    let share = kc.top_value_percentage / 100.0;
    let freq = frequency_component(share);
    if let Some(top) = kc.most_common_values.first() {
        if share >= HOT_VALUE_CAP_SHARE {
            ceiling = ceiling.min(cap(Capped::HotValue));
        }
        if share >= 0.10 {
            problems.push(format!(
                "hot value: {} holds {:.1}% of documents; all of them stay in one chunk on one shard",
                short_value(&top.value),
                kc.top_value_percentage
            ));
        }
    }
    if let Some(j) = kc.jumbo_chunk_risk.values.first() {
        ceiling = ceiling.min(cap(Capped::JumboRisk));
        problems.push(format!(
            "jumbo-chunk risk: value {} would hold about {} documents ({}), more than the {} chunk size; such a chunk cannot be split or moved{}",
            short_value(&j.value),
            fmt_count(j.estimated_docs),
            mib(j.estimated_bytes),
            mib(kc.jumbo_chunk_risk.chunk_size_bytes),
            if kc.jumbo_chunk_risk.values.len() > 1 {
                format!(" ({} values at risk)", kc.jumbo_chunk_risk.values.len())
            } else {
                String::new()
            }
        ));
    }
    if kc.num_docs_missing_key_fields > 0 && kc.num_docs_sampled > 0 {
        let p = kc.num_docs_missing_key_fields as f64 * 100.0 / kc.num_docs_sampled as f64;
        problems.push(format!(
            "{} sampled documents ({:.1}%) lack a key field; MongoDB files them all under null",
            fmt_count(kc.num_docs_missing_key_fields),
            p
        ));
    }

    // Monotonicity.
    let r = kc.monotonicity.record_id_correlation_coefficient;
    let mono = monotonicity_component(kc.monotonicity.kind);
    match kc.monotonicity.kind {
        MonotonicityType::Monotonic => {
            ceiling = ceiling.min(cap(Capped::Monotonic));
            let dir = if r.unwrap_or(1.0) < 0.0 { "decreasing" } else { "increasing" };
            let end = if r.unwrap_or(1.0) < 0.0 { "lowest (MinKey)" } else { "highest (MaxKey)" };
            problems.push(format!(
                "monotonic ({dir}, correlation {:.2} with insertion order): every insert lands in the {end} chunk, so one shard takes all inserts",
                r.unwrap_or(0.0)
            ));
        }
        MonotonicityType::NotMonotonic => strengths.push(match r {
            Some(r) if r != 0.0 => format!("not monotonic (correlation {r:.2}): inserts spread across chunks"),
            _ => "hashed: inserts spread evenly across chunks".to_string(),
        }),
        MonotonicityType::Unknown => {}
    }

    // Targeting.
    let (nr, nw) = (reads.sample_size.total, writes.sample_size.total);
    let targeting = match targeting_component(reads, writes) {
        None => {
            problems.push("no query sample for this collection: targeting was not measured (score assumes 50%)".into());
            0.5
        }
        Some(t) => {
            if nr > 0 {
                let sg = reads.percentage_of_scatter_gather_reads.unwrap_or(0.0);
                let s = reads.percentage_of_single_shard_reads.unwrap_or(0.0);
                if sg >= 20.0 {
                    problems.push(format!("{sg:.1}% of {} sampled reads are scatter-gather (sent to every shard)", fmt_count(nr)));
                }
                if s >= 50.0 {
                    strengths.push(format!("{s:.1}% of {} sampled reads target a single shard", fmt_count(nr)));
                }
            }
            if nw > 0 {
                let wo = writes.percentage_of_single_writes_without_shard_key.unwrap_or(0.0)
                    + writes.percentage_of_multi_writes_without_shard_key.unwrap_or(0.0);
                if wo >= 20.0 {
                    problems.push(format!(
                        "{wo:.1}% of {} sampled writes do not carry the shard key (broadcast or two-phase)",
                        fmt_count(nw)
                    ));
                }
                let sku = writes.percentage_of_shard_key_updates.unwrap_or(0.0);
                if sku > 0.0 {
                    problems.push(format!("{sku:.1}% of sampled writes change the shard key (documents move between shards)"));
                }
            }
            t
        }
    };

    let raw = 100.0
        * (weight(Component::Cardinality) * card
            + weight(Component::Frequency) * freq
            + weight(Component::Monotonicity) * mono
            + weight(Component::Targeting) * targeting);
    let s = raw.min(ceiling).round().clamp(0.0, 100.0) as u32;
    let mut reasons = problems;
    reasons.extend(strengths);
    Score { score: s, verdict: Verdict::of(s), reasons }
}

#[cfg(test)]
mod tests;
