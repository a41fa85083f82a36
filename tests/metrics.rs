//! Cardinality, frequency and monotonicity against values computed by hand on small inputs.

use bson::{doc, Document};
use serde_json::json;
use shardkey::metrics::monotonicity::MonotonicityType;
use shardkey::metrics::Settings;
use shardkey::model::ShardKey;
use shardkey::pipeline::{run, Candidates, Options};
use shardkey::report::{CandidateReport, Report};
use shardkey::sources::files::MemorySource;
use shardkey::sources::queries::QueryLog;

fn analyse(docs: Vec<Document>, keys: &[&str]) -> Report {
    let mut src = MemorySource { name: "memory".into(), docs };
    let opts = Options {
        candidates: Candidates::Named(keys.iter().map(|k| ShardKey::parse(k).unwrap()).collect()),
        namespace: Some("d.c".into()),
        settings: Settings { chunk_size_bytes: 128 << 20, num_most_common: 3, default_collation: None, shards: None, redact: false },
        total_docs: None,
        memory_limit: shardkey::sample::DEFAULT_MEMORY_LIMIT,
    };
    run(&mut src, &QueryLog::default(), vec![], &opts).unwrap()
}

fn cand<'a>(r: &'a Report, key: &str) -> &'a CandidateReport {
    let want = ShardKey::parse(key).unwrap();
    r.candidates.iter().find(|c| c.key == want).unwrap()
}

#[test]
fn ties_missing_fields_and_most_common_values() {
    // a: 1, 2, 2, 3, 3, missing, null -> values {null: 2, 2: 2, 3: 2, 1: 1}
    let docs = vec![
        doc! {"_id": 0, "a": 1},
        doc! {"_id": 1, "a": 2},
        doc! {"_id": 2, "a": 2},
        doc! {"_id": 3, "a": 3},
        doc! {"_id": 4, "a": 3.0},
        doc! {"_id": 5},
        doc! {"_id": 6, "a": null},
    ];
    let r = analyse(docs, &["{a: 1}"]);
    let kc = &cand(&r, "{a: 1}").metrics.key_characteristics.as_ref().unwrap();
    assert_eq!(kc.num_docs_sampled, 7);
    assert_eq!(kc.num_distinct_values, 4);
    assert_eq!(kc.num_docs_missing_key_fields, 1);
    // Three values tie at 2; ties are listed in key order: null < 2 < 3.
    let mcv: Vec<(serde_json::Value, u64)> = kc.most_common_values.iter().map(|m| (m.value.clone(), m.frequency)).collect();
    assert_eq!(mcv, vec![(json!({"a": null}), 2), (json!({"a": 2}), 2), (json!({"a": 3}), 2)]);
    assert!((kc.top_value_percentage - 200.0 / 7.0).abs() < 1e-9);
}

#[test]
fn monotonic_increasing_and_decreasing() {
    let docs: Vec<Document> = (0..50).map(|i| doc! {"_id": i, "up": i * 2, "down": 1000 - i}).collect();
    let r = analyse(docs, &["{up: 1}", "{down: 1}"]);
    let up = &cand(&r, "{up: 1}").metrics.key_characteristics.as_ref().unwrap().monotonicity;
    assert_eq!(up.kind, MonotonicityType::Monotonic);
    assert!((up.record_id_correlation_coefficient.unwrap() - 1.0).abs() < 1e-12);
    let down = &cand(&r, "{down: 1}").metrics.key_characteristics.as_ref().unwrap().monotonicity;
    assert_eq!(down.kind, MonotonicityType::Monotonic);
    assert!((down.record_id_correlation_coefficient.unwrap() + 1.0).abs() < 1e-12, "decreasing key: r = -1");
}

#[test]
fn monotonicity_by_hand_with_ties() {
    // values in insertion order: b, a, b, a -> key order (ties by insertion): a@1, a@3, b@0, b@2
    // positions [1, 3, 0, 2], means 1.5: sxy = (-1.5)(-0.5) + (-0.5)(1.5) + (0.5)(-1.5) + (1.5)(0.5) = 0 -> r = 0
    let docs = vec![doc! {"k": "b"}, doc! {"k": "a"}, doc! {"k": "b"}, doc! {"k": "a"}];
    let r = analyse(docs, &["{k: 1}"]);
    let m = &cand(&r, "{k: 1}").metrics.key_characteristics.as_ref().unwrap().monotonicity;
    assert_eq!(m.record_id_correlation_coefficient, Some(0.0));
    assert_eq!(m.kind, MonotonicityType::NotMonotonic);
    // a, a, b, b -> positions [0, 1, 2, 3] -> r = 1
    let docs = vec![doc! {"k": "a"}, doc! {"k": "a"}, doc! {"k": "b"}, doc! {"k": "b"}];
    let r = analyse(docs, &["{k: 1}"]);
    let m = &cand(&r, "{k: 1}").metrics.key_characteristics.as_ref().unwrap().monotonicity;
    assert!((m.record_id_correlation_coefficient.unwrap() - 1.0).abs() < 1e-12);
}

#[test]
fn hashed_keys_count_like_their_field_and_are_not_monotonic() {
    let docs: Vec<Document> = (0..40).map(|i| doc! {"_id": i, "g": i % 4}).collect();
    let r = analyse(docs, &["{_id: \"hashed\"}", "{g: \"hashed\"}", "{g: 1, _id: \"hashed\"}"]);
    let h = &cand(&r, "{_id: \"hashed\"}").metrics.key_characteristics.as_ref().unwrap();
    assert_eq!(h.num_distinct_values, 40);
    assert_eq!(h.monotonicity.kind, MonotonicityType::NotMonotonic);
    assert_eq!(h.monotonicity.record_id_correlation_coefficient, Some(0.0));
    let g = &cand(&r, "{g: \"hashed\"}").metrics.key_characteristics.as_ref().unwrap();
    assert_eq!(g.num_distinct_values, 4);
    assert_eq!(g.most_common_values[0].frequency, 10);
    let c = &cand(&r, "{g: 1, _id: \"hashed\"}").metrics.key_characteristics.as_ref().unwrap();
    assert_eq!(c.monotonicity.kind, MonotonicityType::Unknown);
    assert_eq!(c.num_distinct_values, 40);
}

#[test]
fn compound_keys() {
    // (g, x): g in {0, 1}, x in {0, 1, 2}; 12 docs, each pair twice
    let docs: Vec<Document> = (0..12).map(|i| doc! {"g": i % 2, "x": (i / 2) % 3}).collect();
    let r = analyse(docs, &["{g: 1, x: 1}", "{g: 1}"]);
    let c = &cand(&r, "{g: 1, x: 1}").metrics.key_characteristics.as_ref().unwrap();
    assert_eq!(c.num_distinct_values, 6);
    assert_eq!(c.most_common_values[0].value, json!({"g": 0, "x": 0}));
    assert_eq!(c.most_common_values[0].frequency, 2);
    let g = &cand(&r, "{g: 1}").metrics.key_characteristics.as_ref().unwrap();
    assert_eq!(g.num_distinct_values, 2);
    assert_eq!(g.top_value_percentage, 50.0);
}

#[test]
fn average_document_size_is_integer_bson_bytes() {
    // {"_id": 1}: 4 + 1 + 4 ("_id\0") + 4 + 1 = 14 bytes; {"_id": 1, "a": 1}: 14 + 1 + 2 + 4 = 21
    let r = analyse(vec![doc! {"_id": 1}, doc! {"_id": 1, "a": 1}], &["{_id: 1}"]);
    assert_eq!(cand(&r, "{_id: 1}").metrics.key_characteristics.as_ref().unwrap().avg_doc_size_bytes, (14 + 21) / 2);
}

#[test]
fn one_value_everywhere_is_not_monotonic() {
    // calculateMonotonicity: a single distinct value among the scanned entries → "not monotonic", 0
    // (equal keys sit in insertion order, which alone would correlate perfectly).
    let docs: Vec<Document> = (0..50).map(|i| doc! {"_id": i, "k": "same"}).collect();
    let r = analyse(docs, &["{k: 1}"]);
    let m = &cand(&r, "{k: 1}").metrics.key_characteristics.as_ref().unwrap().monotonicity;
    assert_eq!(m.kind, MonotonicityType::NotMonotonic);
    assert_eq!(m.record_id_correlation_coefficient, Some(0.0));
}

#[test]
fn sketch_mode_stays_consistent_with_the_collection() {
    // 30,000 unique values (past the exact limit) sampled from 100,000 documents.
    let docs: Vec<Document> = (0..30_000).map(|i| doc! {"u": i}).collect();
    let mut src = MemorySource { name: "memory".into(), docs };
    let opts = Options {
        candidates: Candidates::Named(vec![ShardKey::parse("{u: 1}").unwrap()]),
        namespace: Some("d.c".into()),
        settings: Settings { chunk_size_bytes: 128 << 20, num_most_common: 3, default_collation: None, shards: None, redact: false },
        total_docs: Some(100_000),
        // The smallest budget: exact counts stop at 20,000 values.
        memory_limit: 0,
    };
    let r = run(&mut src, &QueryLog::default(), vec![], &opts).unwrap();
    let kc = &r.candidates[0].metrics.key_characteristics.as_ref().unwrap();
    assert!(kc.sketch.is_some(), "past the exact limit");
    assert!(kc.num_distinct_values <= kc.num_docs_sampled, "{} > {}", kc.num_distinct_values, kc.num_docs_sampled);
    // The sketch's ~30,000 distinct in 30,000 documents scale to about the whole collection, never past it.
    assert!(kc.estimated_num_distinct_values.value <= 100_000);
    assert!(kc.estimated_num_distinct_values.value >= 98_000, "{}", kc.estimated_num_distinct_values.value);
}
