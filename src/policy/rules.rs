//! Every rule of the policy file, once, as data: its name in `shardkey.toml`, the
//! report field it reads, the type of its threshold, its line in the starting
//! policy, and how it judges a candidate. Parsing, `--init` and evaluation all
//! read this table; adding a rule is adding one entry.

use crate::metrics::monotonicity::MonotonicityType;
use crate::metrics::CandidateMetrics;
use serde_json::{json, Value};

/// The threshold a rule takes.
/// Why a rule on key characteristics is skipped in a queries-only run.
const NO_DOCUMENTS: &str = "not measured: no documents (query logs only)";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ValueType {
    /// A score from 0 to 100 (an integer).
    Score,
    /// A count (a non-negative integer).
    Count,
    /// A percentage from 0 to 100.
    Percent,
    /// true turns the rule on; false leaves it off.
    Flag,
}

/// A threshold as read from the policy file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Threshold {
    Int(u64),
    Percent(f64),
    Flag(bool),
}

impl Threshold {
    pub(crate) fn to_json(self) -> Value {
        match self {
            Threshold::Int(n) => json!(n),
            Threshold::Percent(p) => json!(p),
            Threshold::Flag(b) => json!(b),
        }
    }

    /// The number to compare with (flags are never compared).
    fn number(self) -> f64 {
        match self {
            Threshold::Int(n) => n as f64,
            Threshold::Percent(p) => p,
            Threshold::Flag(_) => 0.0,
        }
    }

    /// Is the rule on? Numbers always are; a flag when true.
    pub(crate) fn is_on(self) -> bool {
        !matches!(self, Threshold::Flag(false))
    }
}

/// What a rule reads: the candidate's score and metrics.
pub(crate) struct RuleInput<'a> {
    pub(crate) score: u32,
    pub(crate) metrics: &'a CandidateMetrics,
}

/// A rule's finding on one candidate.
pub(crate) enum Finding {
    Measured {
        actual: Value,
        passed: bool,
        message: String,
    },
    /// The metric was not measured; the rule passes and says why.
    Skipped(&'static str),
}

pub(crate) struct RuleDef {
    pub(crate) name: &'static str,
    /// The report field the rule reads (JSON path in the analyze report).
    pub(crate) metric: &'static str,
    pub(crate) value: ValueType,
    /// The comment and the value in the starting policy (`check --init`).
    pub(crate) doc: &'static str,
    pub(crate) default: &'static str,
    pub(crate) judge: fn(Threshold, &RuleInput) -> Finding,
}

fn at_most(p: Option<f64>, max: f64, why_missing: &'static str, message: impl Fn(f64) -> String) -> Finding {
    match p {
        // `actual` as a reader compares it: 100.0, not 100.0000000001 (the test is on `p` itself).
        Some(p) => Finding::Measured { actual: json!((p * 1e4).round() / 1e4), passed: p <= max, message: message(p) },
        None => Finding::Skipped(why_missing),
    }
}

pub(crate) const RULES: &[RuleDef] = &[
    RuleDef {
        name: "min_score",
        metric: "score",
        value: ValueType::Score,
        doc: "0-100 score from `shardkey analyze` (docs/reference.md \"Score\").",
        default: "60",
        judge: |t, c| {
            let min = t.number() as u32;
            Finding::Measured { actual: json!(c.score), passed: c.score >= min, message: format!("score {} (minimum {min})", c.score) }
        },
    },
    RuleDef {
        name: "max_scatter_gather_reads_percent",
        metric: "readDistribution.percentageOfScatterGatherReads",
        value: ValueType::Percent,
        doc: "readDistribution.percentageOfScatterGatherReads",
        default: "50.0",
        judge: |t, c| {
            let max = t.number();
            at_most(c.metrics.read_distribution.percentage_of_scatter_gather_reads, max, "no sampled reads", |p| {
                format!("{p:.1}% of reads scatter-gather (maximum {max}%)")
            })
        },
    },
    RuleDef {
        name: "max_writes_without_shard_key_percent",
        metric: "writeDistribution.percentageOf{Single,Multi}WritesWithoutShardKey",
        value: ValueType::Percent,
        doc: "writeDistribution: single + multi writes without shard key, percent of sampled writes",
        default: "50.0",
        judge: |t, c| {
            let max = t.number();
            let wd = &c.metrics.write_distribution;
            let p = match (wd.percentage_of_single_writes_without_shard_key, wd.percentage_of_multi_writes_without_shard_key) {
                (Some(s), Some(m)) => Some(s + m),
                _ => None,
            };
            at_most(p, max, "no sampled writes", |p| format!("{p:.1}% of writes without the shard key (maximum {max}%)"))
        },
    },
    RuleDef {
        name: "forbid_monotonic",
        metric: "keyCharacteristics.monotonicity.type",
        value: ValueType::Flag,
        doc: "keyCharacteristics.monotonicity.type == \"monotonic\" fails",
        default: "true",
        judge: |_, c| {
            let Some(kc) = &c.metrics.key_characteristics else { return Finding::Skipped(NO_DOCUMENTS) };
            let t = kc.monotonicity.kind;
            Finding::Measured {
                actual: json!(t.as_str()),
                passed: t != MonotonicityType::Monotonic,
                message: format!("monotonicity: {}", t.as_str()),
            }
        },
    },
    RuleDef {
        name: "max_top_value_percent",
        metric: "keyCharacteristics.topValuePercentage",
        value: ValueType::Percent,
        doc: "keyCharacteristics.topValuePercentage",
        default: "25.0",
        judge: |t, c| {
            let max = t.number();
            at_most(c.metrics.key_characteristics.as_ref().map(|k| k.top_value_percentage), max, NO_DOCUMENTS, |p| {
                format!("top value holds {p:.1}% of documents (maximum {max}%)")
            })
        },
    },
    RuleDef {
        name: "forbid_jumbo_risk",
        metric: "keyCharacteristics.jumboChunkRisk.values",
        value: ValueType::Flag,
        doc: "keyCharacteristics.jumboChunkRisk: any value larger than a chunk fails",
        default: "true",
        judge: |_, c| {
            let Some(kc) = &c.metrics.key_characteristics else { return Finding::Skipped(NO_DOCUMENTS) };
            let n = kc.jumbo_chunk_risk.values.len();
            Finding::Measured { actual: json!(n), passed: n == 0, message: format!("{n} values larger than a chunk") }
        },
    },
    RuleDef {
        name: "min_distinct_values",
        metric: "keyCharacteristics.estimatedNumDistinctValues",
        value: ValueType::Count,
        doc: "keyCharacteristics.estimatedNumDistinctValues",
        default: "100",
        judge: |t, c| {
            let min = t.number() as u64;
            let Some(kc) = &c.metrics.key_characteristics else { return Finding::Skipped(NO_DOCUMENTS) };
            let d = kc.estimated_num_distinct_values.value;
            Finding::Measured { actual: json!(d), passed: d >= min, message: format!("about {d} distinct values (minimum {min})") }
        },
    },
    RuleDef {
        name: "max_shard_key_updates_percent",
        metric: "writeDistribution.percentageOfShardKeyUpdates",
        value: ValueType::Percent,
        doc: "writeDistribution.percentageOfShardKeyUpdates",
        default: "10.0",
        judge: |t, c| {
            let max = t.number();
            at_most(c.metrics.write_distribution.percentage_of_shard_key_updates, max, "no sampled writes", |p| {
                format!("{p:.1}% of writes change the shard key (maximum {max}%)")
            })
        },
    },
    RuleDef {
        name: "require_supporting_index",
        metric: "supportingIndex.name",
        value: ValueType::Flag,
        doc: "supportingIndex (live only): the key needs an index that can support it",
        default: "false",
        judge: |_, c| match &c.metrics.supporting_index {
            Some(si) => Finding::Measured {
                actual: json!(si.name),
                passed: si.name.is_some(),
                message: match (&si.name, &si.create_index) {
                    (Some(n), _) => format!("supporting index {n}"),
                    (None, Some(cmd)) => format!("no supporting index; {cmd}"),
                    _ => "no supporting index".into(),
                },
            },
            None => Finding::Skipped("indexes are only known with --uri"),
        },
    },
];

/// The rule of that name.
pub(crate) fn rule(name: &str) -> Option<&'static RuleDef> {
    RULES.iter().find(|r| r.name == name)
}
