//! Every weight and every cap on hand-computed values.
//!
//! The base key is perfect on every component: 10,000 distinct values
//! (log10(10,000)/4 = 1), top value 1% (≤ 2% → 1), not monotonic (1), every
//! sampled read single-shard (1): 100 × (0.25 + 0.25 + 0.20 + 0.30) = 100.
//! Each test changes one thing and works out the expected score by hand.

use super::*;
use crate::metrics::characteristics::{Estimate, JumboRisk, JumboValueReport, MostCommonValue};
use crate::metrics::distribution::{ReadSampleSize, WriteSampleSize};
use crate::metrics::monotonicity::Monotonicity;
use serde_json::json;

fn kc() -> KeyCharacteristics {
    KeyCharacteristics {
        num_docs_total: 100_000,
        num_docs_sampled: 100_000,
        avg_doc_size_bytes: 100,
        num_distinct_values: 10_000,
        most_common_values: vec![MostCommonValue { value: json!({"k": "top"}), frequency: 1_000 }],
        is_unique: None,
        monotonicity: Monotonicity { record_id_correlation_coefficient: Some(0.01), kind: MonotonicityType::NotMonotonic },
        estimated_num_distinct_values: Estimate { value: 10_000, estimator: "test" },
        top_value_percentage: 1.0,
        num_docs_missing_key_fields: 0,
        num_docs_with_array_key_values: 0,
        jumbo_chunk_risk: JumboRisk { chunk_size_bytes: 128 << 20, values: vec![] },
        sketch: None,
    }
}

/// `n` reads split single / multi / scatter-gather in percent.
fn reads(n: u64, single: f64, multi: f64, sg: f64) -> ReadDistribution {
    ReadDistribution {
        sample_size: ReadSampleSize { total: n, find: n, ..Default::default() },
        percentage_of_single_shard_reads: Some(single),
        percentage_of_multi_shard_reads: Some(multi),
        percentage_of_scatter_gather_reads: Some(sg),
        num_reads_by_range: vec![],
    }
}

fn writes(n: u64, single: f64, multi: f64, sg: f64) -> WriteDistribution {
    WriteDistribution {
        sample_size: WriteSampleSize { total: n, update: n, ..Default::default() },
        percentage_of_single_shard_writes: Some(single),
        percentage_of_multi_shard_writes: Some(multi),
        percentage_of_scatter_gather_writes: Some(sg),
        percentage_of_shard_key_updates: Some(0.0),
        percentage_of_single_writes_without_shard_key: Some(0.0),
        percentage_of_multi_writes_without_shard_key: Some(sg),
        ..Default::default()
    }
}

fn no_writes() -> WriteDistribution {
    WriteDistribution::default()
}

fn score_of(k: &KeyCharacteristics) -> Score {
    score(k, &reads(100, 100.0, 0.0, 0.0), &no_writes())
}

#[test]
fn weights_add_up_to_one() {
    let sum: f64 = WEIGHTS.iter().map(|w| w.weight).sum();
    assert!((sum - 1.0).abs() < 1e-12, "{sum}");
}

#[test]
fn a_perfect_key_scores_100() {
    let s = score_of(&kc());
    assert_eq!(s.score, 100);
    assert_eq!(s.verdict, Verdict::Good);
    assert!(s.reasons.iter().any(|r| r.starts_with("high cardinality: about 10,000")), "{:?}", s.reasons);
}

#[test]
fn cardinality_weight() {
    // 1,000 values: log10(1000)/4 = 0.75 → 100 × (0.25 × 0.75 + 0.75) = 93.75 → 94
    let mut k = kc();
    k.estimated_num_distinct_values.value = 1_000;
    assert_eq!(score_of(&k).score, 94);
    // 500 values: log10(500)/4 = 0.6747 → 100 × (0.16868 + 0.75) = 91.87 → 92, "limited cardinality"
    k.estimated_num_distinct_values.value = 500;
    let s = score_of(&k);
    assert_eq!(s.score, 92);
    assert!(s.reasons[0].starts_with("limited cardinality: about 500"), "{:?}", s.reasons);
}

#[test]
fn frequency_weight() {
    // top value 7.75%: 1 − (0.0775 − 0.02)/0.23 = 0.75 → 100 × (0.25 × 0.75 + 0.75) = 93.75 → 94
    let mut k = kc();
    k.top_value_percentage = 7.75;
    assert_eq!(score_of(&k).score, 94);
    // 20%: 1 − 0.18/0.23 = 0.21739 → 100 × (0.054348 + 0.75) = 80.43 → 80, and a "hot value" reason (≥ 10%)
    k.top_value_percentage = 20.0;
    let s = score_of(&k);
    assert_eq!(s.score, 80);
    assert!(s.reasons[0].starts_with("hot value: \"top\" holds 20.0%"), "{:?}", s.reasons);
}

#[test]
fn monotonicity_weight() {
    // unknown: 0.7 → 100 × (0.25 + 0.25 + 0.2 × 0.7 + 0.3) = 94
    let mut k = kc();
    k.monotonicity = Monotonicity { record_id_correlation_coefficient: None, kind: MonotonicityType::Unknown };
    assert_eq!(score_of(&k).score, 94);
}

#[test]
fn targeting_weight() {
    let k = kc();
    // every read multi-shard: ½ → 100 × (0.7 + 0.3 × 0.5) = 85
    assert_eq!(score(&k, &reads(100, 0.0, 100.0, 0.0), &no_writes()).score, 85);
    // every read scatter-gather: 0 → 70, and the scatter-gather reason
    let s = score(&k, &reads(100, 0.0, 0.0, 100.0), &no_writes());
    assert_eq!(s.score, 70);
    assert!(s.reasons[0].starts_with("100.0% of 100 sampled reads are scatter-gather"), "{:?}", s.reasons);
    // 100 single-shard reads and 400 scatter-gather writes: 100 / 500 = 0.2 → 100 × (0.7 + 0.06) = 76
    let s = score(&k, &reads(100, 100.0, 0.0, 0.0), &writes(400, 0.0, 0.0, 100.0));
    assert_eq!(s.score, 76);
    assert!(s.reasons.iter().any(|r| r.starts_with("100.0% of 400 sampled writes do not carry the shard key")), "{:?}", s.reasons);
    // no queries at all: targeting assumed ½ → 85, and said
    let s = score(&k, &ReadDistribution::default(), &no_writes());
    assert_eq!(s.score, 85);
    assert!(s.reasons[0].starts_with("no query sample"), "{:?}", s.reasons);
}

#[test]
fn cap_array_in_key_is_invalid() {
    let mut k = kc();
    k.num_docs_with_array_key_values = 3;
    let s = score_of(&k);
    assert_eq!((s.score, s.verdict), (0, Verdict::Invalid));
    assert_eq!(s.reasons.len(), 1);
}

#[test]
fn cap_jumbo_risk() {
    // otherwise perfect (100), capped at 40
    let mut k = kc();
    k.jumbo_chunk_risk.values.push(JumboValueReport { value: json!({"k": "big"}), estimated_docs: 2_000_000, estimated_bytes: 200 << 20 });
    let s = score_of(&k);
    assert_eq!((s.score, s.verdict), (40, Verdict::Poor));
    assert!(s.reasons[0].starts_with("jumbo-chunk risk: value \"big\" would hold about 2,000,000 documents (200 MiB), more than the 128 MiB"), "{:?}", s.reasons);
}

#[test]
fn cap_hot_value() {
    // top value 30%: frequency 0 → raw 75, capped at 45
    let mut k = kc();
    k.top_value_percentage = 30.0;
    assert_eq!(score_of(&k).score, 45);
    // just under the cap's 25%: 1 − 0.2299/0.23 ≈ 0.0004 → raw 75.01 → 75, not capped
    k.top_value_percentage = 24.99;
    assert_eq!(score_of(&k).score, 75);
}

#[test]
fn cap_low_cardinality() {
    // 50 values: log10(50)/4 = 0.4247 → raw 85.6, capped at 35
    let mut k = kc();
    k.estimated_num_distinct_values.value = 50;
    let s = score_of(&k);
    assert_eq!((s.score, s.verdict), (35, Verdict::Poor));
    assert!(s.reasons[0].starts_with("low cardinality: only 50 distinct values"), "{:?}", s.reasons);
    // 100 values is not capped: log10(100)/4 = 0.5 → 100 × (0.125 + 0.75) = 87.5 → 88 (or 87 by rounding error); above 35 either way
    k.estimated_num_distinct_values.value = 100;
    assert!(score_of(&k).score >= 87);
}

#[test]
fn cap_monotonic() {
    // monotonic: component 0 → raw 80, capped at 50
    let mut k = kc();
    k.monotonicity = Monotonicity { record_id_correlation_coefficient: Some(0.99), kind: MonotonicityType::Monotonic };
    let s = score_of(&k);
    assert_eq!((s.score, s.verdict), (50, Verdict::Acceptable));
    assert!(s.reasons[0].starts_with("monotonic (increasing, correlation 0.99"), "{:?}", s.reasons);
    // decreasing
    k.monotonicity.record_id_correlation_coefficient = Some(-0.95);
    assert!(score_of(&k).reasons[0].contains("decreasing") && score_of(&k).reasons[0].contains("lowest (MinKey)"));
}

#[test]
fn the_lowest_cap_wins() {
    // monotonic (50) and jumbo (40): 40
    let mut k = kc();
    k.monotonicity = Monotonicity { record_id_correlation_coefficient: Some(0.99), kind: MonotonicityType::Monotonic };
    k.jumbo_chunk_risk.values.push(JumboValueReport { value: json!({"k": 1}), estimated_docs: 1, estimated_bytes: 1 });
    assert_eq!(score_of(&k).score, 40);
    // and a cap never raises a score: low cardinality (35) on a key whose raw score is 25 (everything bad)
    let mut k = kc();
    k.estimated_num_distinct_values.value = 1; // 0
    k.top_value_percentage = 100.0; // 0
    k.monotonicity = Monotonicity { record_id_correlation_coefficient: None, kind: MonotonicityType::Unknown }; // 0.7
    let s = score(&k, &reads(100, 0.0, 0.0, 100.0), &no_writes()); // 0
    assert_eq!(s.score, 14, "100 × 0.2 × 0.7 = 14");
    assert_eq!(s.verdict, Verdict::Bad);
}

#[test]
fn every_cap_is_in_the_table() {
    for c in [Capped::ArrayInKey, Capped::JumboRisk, Capped::HotValue, Capped::LowCardinality, Capped::Monotonic] {
        assert!(CAPS.iter().any(|x| x.cap == c), "{c:?}");
    }
    assert_eq!(cap(Capped::JumboRisk), 40.0);
    assert_eq!(cap(Capped::HotValue), 45.0);
    assert_eq!(cap(Capped::LowCardinality), 35.0);
    assert_eq!(cap(Capped::Monotonic), 50.0);
}

#[test]
fn verdict_bands() {
    assert_eq!(Verdict::of(100), Verdict::Good);
    assert_eq!(Verdict::of(75), Verdict::Good);
    assert_eq!(Verdict::of(74), Verdict::Acceptable);
    assert_eq!(Verdict::of(50), Verdict::Acceptable);
    assert_eq!(Verdict::of(49), Verdict::Poor);
    assert_eq!(Verdict::of(25), Verdict::Poor);
    assert_eq!(Verdict::of(24), Verdict::Bad);
}
