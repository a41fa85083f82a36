//! The one place that turns metrics into a 0–100 score, a verdict, reasons, and the
//! pairwise words of the ranking.
//!
//! The score comes from the cluster model (`metrics::cluster`) at N shards, at scale:
//! score = min(cap, 100 × Σ weight × component), rounded. The weights and caps are
//! the tables `WEIGHTS` and `CAPS` below (README "Score" prints the same tables).

pub mod apply;

use crate::metrics::cluster::{useful_shards_words, ClusterReport};
use crate::metrics::insert_order::{InsertKind, InsertOrder};
use crate::metrics::CandidateMetrics;
use crate::util::text::{fmt_count, mib, short_value};
use serde::Serialize;
use serde_json::Value;

/// One component of the score: a number from 0 to 1 and its weight.
#[derive(Debug, Clone, Copy)]
pub struct Weight {
    pub component: Component,
    pub weight: f64,
    /// How the component is computed, for README.
    pub rule: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Component {
    FanOut,
    DataSpread,
    InsertSpread,
    Growth,
}

pub const WEIGHTS: [Weight; 4] = [
    Weight {
        component: Component::FanOut,
        weight: 0.40,
        rule: "1 − mean over sampled operations of (shards reached − 1) / (N − 1), at scale; 0.5 with no queries",
    },
    Weight {
        component: Component::DataSpread,
        weight: 0.20,
        rule: "from the busiest shard's share s of the data at scale: 1 while s × N ≤ 2 (N = 2: 1.5), 0 at s = 1, linear between",
    },
    Weight { component: Component::InsertSpread, weight: 0.15, rule: "the same rule on the busiest shard's share of inserts at scale" },
    Weight {
        component: Component::Growth,
        weight: 0.25,
        rule: "log10(most useful shards) / 3, at most 1 (1,000+ = 1); useful shards = min(distinct values, 1 / top value share)",
    },
];

/// A ceiling on the score when a key has a problem no strength makes up for.
#[derive(Debug, Clone, Copy)]
pub struct Cap {
    pub cap: Capped,
    pub max_score: f64,
    pub when: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Capped {
    ArrayInKey,
    JumboRisk,
    HotValue,
    LowCardinality,
    InsertsOnOneShard,
}

pub const CAPS: [Cap; 5] = [
    Cap { cap: Capped::ArrayInKey, max_score: 0.0, when: "a sampled document holds an array in a key field (invalid key)" },
    Cap {
        cap: Capped::JumboRisk,
        max_score: 40.0,
        when: "a value's documents exceed the range size (jumbo chunk: never split, never moved)",
    },
    Cap { cap: Capped::HotValue, max_score: 45.0, when: "the top value holds 25% of documents or more" },
    Cap { cap: Capped::LowCardinality, max_score: 35.0, when: "fewer than 100 distinct values" },
    Cap {
        cap: Capped::InsertsOnOneShard,
        max_score: 50.0,
        when: "one shard takes 90% of inserts or more at scale (increasing or decreasing key)",
    },
];

/// The share of documents under one value from which the key is capped as hot.
pub const HOT_VALUE_CAP_SHARE: f64 = 0.25;
/// Fewer distinct values than this cap the score.
pub const LOW_CARDINALITY: u64 = 100;
/// One shard taking this share of inserts caps the score.
pub const ONE_SHARD_INSERTS: f64 = 0.9;

pub fn weight(c: Component) -> f64 {
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

/// The score's parts, in the report as `scoreBreakdown`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Breakdown {
    pub num_shards: usize,
    pub fan_out: f64,
    pub data_spread: f64,
    pub insert_spread: f64,
    pub growth: f64,
    /// 100 × Σ weight × component, before caps.
    pub weighted: f64,
    /// The lowest cap that applies, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capped_by: Option<Capped>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cap: Option<f64>,
    /// Each component's quantity in words, for the ranking's comparisons.
    #[serde(skip)]
    pub words: [String; 4],
}

impl Breakdown {
    pub fn component(&self, c: Component) -> f64 {
        match c {
            Component::FanOut => self.fan_out,
            Component::DataSpread => self.data_spread,
            Component::InsertSpread => self.insert_spread,
            Component::Growth => self.growth,
        }
    }

    fn words(&self, c: Component) -> &str {
        &self.words[WEIGHTS.iter().position(|w| w.component == c).unwrap_or(0)]
    }
}

#[derive(Debug, Clone)]
pub struct Score {
    pub score: u32,
    pub verdict: Verdict,
    /// Problems first, then strengths.
    pub reasons: Vec<String>,
    pub breakdown: Breakdown,
}

/// What the score reads, as plain numbers: built from a candidate's metrics by
/// `Facts::of`, or by hand in the tests.
#[derive(Debug, Clone)]
pub struct Facts {
    pub shards: usize,
    /// False for a queries-only run: data, insert (unless the queries' value types tell) and
    /// growth components are not measured and count 0.5.
    pub documents: bool,
    pub docs_with_arrays: u64,
    pub docs_sampled: u64,
    pub docs_missing_fields: u64,
    pub estimated_distinct: u64,
    /// Top value and its share of documents (0..1).
    pub top_value: Option<Value>,
    pub top_share: f64,
    /// The largest jumbo value: (value, documents, bytes), and how many values are at risk.
    pub jumbo: Option<(Value, u64, u64)>,
    pub jumbo_count: usize,
    pub chunk_size: u64,
    pub cost: crate::metrics::cluster::Cost,
    /// Server labels, for words beside ours.
    pub server_multi_reads: Option<f64>,
    pub data_max_share: f64,
    pub insert_max_share: f64,
    pub shards_taking_inserts: usize,
    pub insert_order: InsertOrder,
    pub server_record_id_coefficient: Option<f64>,
    pub growth: crate::metrics::cluster::Growth,
}

impl Facts {
    pub fn of(m: &CandidateMetrics) -> Facts {
        let kc = m.key_characteristics.as_ref();
        let cl: &ClusterReport = &m.cluster;
        let max = |f: &dyn Fn(&crate::metrics::cluster::ShardLoad) -> f64| cl.at_scale.shards.iter().map(f).fold(0.0, f64::max) / 100.0;
        Facts {
            shards: cl.num_shards,
            documents: kc.is_some(),
            docs_with_arrays: kc.map_or(0, |k| k.num_docs_with_array_key_values),
            docs_sampled: kc.map_or(0, |k| k.num_docs_sampled),
            docs_missing_fields: kc.map_or(0, |k| k.num_docs_missing_key_fields),
            estimated_distinct: kc.map_or(0, |k| k.estimated_num_distinct_values.value),
            top_value: kc.and_then(|k| k.most_common_values.first()).map(|v| v.value.clone()),
            top_share: kc.map_or(0.0, |k| k.top_value_percentage / 100.0),
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
        }
    }
}

/// Fan-out component; 0.5 (unknown) without sampled operations.
pub fn fan_out_component(fan_out: Option<f64>) -> f64 {
    fan_out.unwrap_or(0.5).clamp(0.0, 1.0)
}

/// Spread component from the busiest shard's share (0..1) with `n` shards: 1 while
/// that shard carries at most twice its even share (1.5× with 2 shards), 0 when it
/// carries everything, linear between. Twice the even share is what a tenant-keyed
/// cluster lives with; one shard carrying all is the failure the manual warns of.
pub fn spread_component(max_share: f64, n: usize) -> f64 {
    if n <= 1 {
        return 1.0;
    }
    let nf = n as f64;
    let tolerated = if n >= 3 { 2.0 } else { 1.5 };
    ((nf - max_share * nf) / (nf - tolerated)).clamp(0.0, 1.0)
}

/// Growth component: log10(useful shards) / 3 in 0..=1.
pub fn growth_component(max_useful_shards: u64) -> f64 {
    ((max_useful_shards.max(1) as f64).log10() / 3.0).clamp(0.0, 1.0)
}

pub fn score_metrics(m: &CandidateMetrics) -> Score {
    score(&Facts::of(m))
}

pub fn score(f: &Facts) -> Score {
    let n = f.shards.max(1);
    let mut problems: Vec<String> = Vec::new();
    let mut strengths: Vec<String> = Vec::new();
    let mut ceiling: Option<(Capped, f64)> = None;
    let mut cap_at = |c: Capped| {
        let v = cap(c);
        if ceiling.is_none_or(|(_, x)| v < x) {
            ceiling = Some((c, v));
        }
    };

    let fan = fan_out_component(f.cost.fan_out);
    let insert_known = f.documents || matches!(f.insert_order.kind, InsertKind::Increasing | InsertKind::Decreasing);
    let data = if f.documents { spread_component(f.data_max_share, n) } else { 0.5 };
    let hashed = f.insert_order.basis == "hashed first field";
    let ins = if !f.documents && hashed {
        1.0 // hashing spreads inserts by construction
    } else if insert_known {
        spread_component(f.insert_max_share, n)
    } else {
        0.5
    };
    let grow = if f.documents { growth_component(f.growth.max_useful_shards) } else { 0.5 };
    let c = &f.cost;
    let words = [
        match (c.mean_shards_per_op, c.percentage_of_single_shard_ops) {
            (Some(m), Some(p)) => format!("an operation reaches {m:.2} of {n} shards on average ({p:.1}% reach one)"),
            _ => "no sampled operations".into(),
        },
        format!("the busiest of {n} shards holds {:.1}% of the data", f.data_max_share * 100.0),
        format!("the busiest shard takes {:.1}% of inserts", f.insert_max_share * 100.0),
        format!("up to {} useful shards", fmt_count(f.growth.max_useful_shards)),
    ];
    let weighted = 100.0
        * (weight(Component::FanOut) * fan
            + weight(Component::DataSpread) * data
            + weight(Component::InsertSpread) * ins
            + weight(Component::Growth) * grow);

    if f.docs_with_arrays > 0 {
        let b = Breakdown {
            num_shards: n,
            fan_out: fan,
            data_spread: data,
            insert_spread: ins,
            growth: grow,
            weighted,
            capped_by: Some(Capped::ArrayInKey),
            cap: Some(cap(Capped::ArrayInKey)),
            words,
        };
        return Score {
            score: cap(Capped::ArrayInKey) as u32,
            verdict: Verdict::Invalid,
            reasons: vec![format!(
                "{} sampled documents hold an array in a key field: MongoDB refuses such a shard key (BadValue)",
                fmt_count(f.docs_with_arrays)
            )],
            breakdown: b,
        };
    }

    // Reads and writes under the model.
    match (c.num_reads + c.num_writes, c.percentage_of_single_shard_ops) {
        (0, _) | (_, None) => problems.push("no query sample for this collection: fan-out was not measured (score assumes 0.5)".into()),
        (_, Some(single)) => {
            let mut s =
                format!("with {n} shards, {single:.1}% of {} sampled operations reach one shard", fmt_count(c.num_reads + c.num_writes));
            if let Some(r) = c.mean_shards_per_read {
                s.push_str(&format!("; a read reaches {r:.2} shards on average"));
                if let Some(m) = f.server_multi_reads.filter(|m| *m > 0.0) {
                    s.push_str(&format!(" (the server labels {m:.1}% of reads multi-shard whatever they reach)"));
                }
            }
            if let Some(w) = c.mean_shards_per_write {
                s.push_str(&format!(", a write {w:.2}"));
            }
            let every = c.percentage_of_ops_to_every_shard.unwrap_or(0.0);
            if every > 0.0 {
                s.push_str(&format!("; {every:.1}% go to every shard"));
            }
            if fan >= 0.5 {
                strengths.push(s);
            } else {
                problems.push(s);
            }
            if let Some(wo) = c.percentage_of_writes_without_shard_key.filter(|w| *w >= 20.0) {
                problems.push(format!(
                    "{wo:.1}% of {} sampled writes do not carry the shard key (7.1+: a broadcast read then the write; before: broadcast or refused)",
                    fmt_count(c.num_writes)
                ));
            }
            if let Some(sku) = c.percentage_of_shard_key_updates.filter(|x| *x > 0.0) {
                problems.push(format!("{sku:.1}% of sampled writes change the shard key (the document moves to another shard)"));
            }
        }
    }

    if !f.documents {
        problems.push(format!(
            "key characteristics not measured: {}; data spread and growth count 0.5",
            crate::metrics::characteristics::NOT_MEASURED
        ));
    }
    // Cardinality, frequency, growth.
    let est = f.estimated_distinct.max(1);
    if !f.documents {
    } else if est < LOW_CARDINALITY {
        cap_at(Capped::LowCardinality);
        problems.push(format!(
            "low cardinality: only {} distinct values; one value is the smallest unit the balancer can move, so at most {} shards can ever hold data",
            fmt_count(est),
            fmt_count(est)
        ));
    } else {
        let s = format!("about {} distinct values", fmt_count(est));
        match useful_shards_words(&f.growth) {
            Some(w) if f.growth.max_useful_shards < 1000 => problems.push(format!("{s}; {w}")),
            _ => strengths.push(format!("high cardinality: {s}")),
        }
    }
    if let Some(top) = &f.top_value {
        if f.top_share >= HOT_VALUE_CAP_SHARE {
            cap_at(Capped::HotValue);
        }
        if f.top_share >= 0.10 {
            problems.push(format!(
                "hot value: {} holds {:.1}% of documents; they stay together on one shard",
                short_value(top),
                f.top_share * 100.0
            ));
        }
    }
    if let Some((v, docs, bytes)) = &f.jumbo {
        cap_at(Capped::JumboRisk);
        problems.push(format!(
            "jumbo chunk: value {} would hold about {} documents ({}), more than the {} range size; such a chunk cannot be split or moved{}",
            short_value(v),
            fmt_count(*docs),
            mib(*bytes),
            mib(f.chunk_size),
            if f.jumbo_count > 1 { format!(" ({} values at risk)", f.jumbo_count) } else { String::new() }
        ));
    }
    if f.docs_missing_fields > 0 && f.docs_sampled > 0 {
        problems.push(format!(
            "{} sampled documents ({:.1}%) lack a key field; MongoDB files them all under null",
            fmt_count(f.docs_missing_fields),
            f.docs_missing_fields as f64 * 100.0 / f.docs_sampled as f64
        ));
    }
    if f.documents && f.data_max_share * n as f64 > 2.0 && n > 1 {
        problems.push(format!("at scale the busiest of {n} shards holds {:.1}% of the data", f.data_max_share * 100.0));
    }

    // Inserts.
    let io = &f.insert_order;
    if insert_known && f.insert_max_share >= ONE_SHARD_INSERTS && n > 1 {
        cap_at(Capped::InsertsOnOneShard);
    }
    let by = match (io.basis, io.creation_time_correlation_coefficient, f.server_record_id_coefficient) {
        ("ObjectId creation time", Some(r), Some(rid)) => format!(
            "correlation {r:.2} with the creation time of the ObjectId _ids{}",
            if io.load_order_hides_it { format!("; the load order hides it (recordId correlation {rid:.2})") } else { String::new() }
        ),
        ("ObjectId creation time", Some(r), None) => format!("correlation {r:.2} with the creation time of the ObjectId _ids"),
        ("recordId order", _, Some(rid)) => format!("correlation {rid:.2} with insertion order"),
        ("value type", _, _) => {
            let t: Vec<String> = io.increasing_by_nature.iter().map(|x| format!("{} holds {}s", x.field, x.bson_type)).collect();
            format!("{}: increasing by nature", t.join(", "))
        }
        _ => String::new(),
    };
    match io.kind {
        InsertKind::Increasing | InsertKind::Decreasing => {
            let (dir, end) = if io.kind == InsertKind::Decreasing { ("decreasing", "lowest") } else { ("increasing", "highest") };
            problems.push(format!(
                "{dir} key ({by}): every insert lands in the {end} chunk, so one shard takes {:.0}% of inserts",
                f.insert_max_share * 100.0
            ));
        }
        InsertKind::TopOfEachGroup if !f.documents => strengths.push(format!(
            "inserts land at the top of each group of the leading field{} (increasing by nature: {})",
            if io.group_fields.unwrap_or(1) > 1 { "s" } else { "" },
            io.increasing_by_nature.iter().map(|x| x.field.as_str()).collect::<Vec<_>>().join(", ")
        )),
        InsertKind::TopOfEachGroup => {
            let s = format!(
                "inserts land at the top of each group of the leading field{} ({by}): {} of {n} shards take them, the busiest {:.1}%",
                if io.group_fields.unwrap_or(1) > 1 { "s" } else { "" },
                f.shards_taking_inserts,
                f.insert_max_share * 100.0
            );
            if ins >= 0.5 {
                strengths.push(s)
            } else {
                problems.push(s)
            }
        }
        InsertKind::Unknown => {}
        InsertKind::Spread if !f.documents => {
            if io.basis == "hashed first field" {
                strengths.push("hashed: inserts spread evenly over the shards".into());
            }
        }
        InsertKind::Spread => {
            let why = if io.basis == "hashed first field" { "hashed".to_string() } else { by };
            let s = format!(
                "inserts spread over {} of {n} shards, the busiest takes {:.1}%{}",
                f.shards_taking_inserts,
                f.insert_max_share * 100.0,
                if why.is_empty() { String::new() } else { format!(" ({why})") }
            );
            if ins >= 0.5 {
                strengths.push(s)
            } else {
                problems.push(s)
            }
        }
    }

    let score = match ceiling {
        Some((_, c)) => weighted.min(c),
        None => weighted,
    }
    .round()
    .clamp(0.0, 100.0) as u32;
    let mut reasons = problems;
    reasons.extend(strengths);
    Score {
        score,
        verdict: Verdict::of(score),
        reasons,
        breakdown: Breakdown {
            num_shards: n,
            fan_out: round3(fan),
            data_spread: round3(data),
            insert_spread: round3(ins),
            growth: round3(grow),
            weighted: round3(weighted),
            capped_by: ceiling.map(|c| c.0),
            cap: ceiling.map(|c| c.1),
            words,
        },
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn cap_words(c: Capped) -> &'static str {
    CAPS.iter().find(|x| x.cap == c).map(|x| x.when).unwrap_or("")
}

/// Why the candidate ranked `a` stands above the one ranked `b`, in words: the
/// component where `a` gains the most weighted points, a cap on `b`, and the
/// component where `a` loses the most ("at the cost of").
pub fn compare(a_rank: usize, a: &Score, b_rank: usize, b: &Score) -> String {
    let gains: Vec<(Component, f64)> = WEIGHTS
        .iter()
        .map(|w| (w.component, w.weight * (a.breakdown.component(w.component) - b.breakdown.component(w.component)) * 100.0))
        .collect();
    let best = gains.iter().cloned().filter(|g| g.1 > 0.5).max_by(|x, y| x.1.total_cmp(&y.1));
    let worst = gains.iter().cloned().filter(|g| g.1 < -0.5).min_by(|x, y| x.1.total_cmp(&y.1));
    let mut s = if a.score == b.score {
        format!("#{a_rank} ties with #{b_rank} at {}", a.score)
    } else {
        format!("#{a_rank} beats #{b_rank} ({} against {})", a.score, b.score)
    };
    let mut because = Vec::new();
    match (b.breakdown.capped_by, a.breakdown.capped_by) {
        (Some(cb), ca) if ca != Some(cb) && b.breakdown.cap.unwrap_or(100.0) < b.breakdown.weighted => {
            because.push(format!("#{b_rank} is capped at {:.0}: {}", b.breakdown.cap.unwrap_or(0.0), cap_words(cb)))
        }
        _ => {}
    }
    if let Some((c, _)) = best {
        because.push(format!("{} against {}", a.breakdown.words(c), b.breakdown.words(c)));
    }
    if !because.is_empty() {
        s.push_str(" because ");
        s.push_str(&because.join(", and "));
    }
    if let Some((c, _)) = worst {
        s.push_str(&format!(", at the cost of: {} against {}", a.breakdown.words(c), b.breakdown.words(c)));
    }
    s
}

#[cfg(test)]
mod tests;
