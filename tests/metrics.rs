//! Cardinality, frequency and monotonicity against values computed by hand on small inputs,
//! read from the JSON report of the real binary (documents written as a mongodump .bson file).

use bson::{doc, Document};
use serde_json::{json, Value};
use std::process::Command;

/// The JSON report's candidates, by key, for `docs` analysed on `keys`.
fn analyse(docs: Vec<Document>, keys: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.bson");
    let mut bytes = Vec::new();
    for d in &docs {
        d.to_writer(&mut bytes).unwrap();
    }
    std::fs::write(&path, bytes).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_shardkey"));
    cmd.args(["analyze", "--collection", "d.c", "--format", "json", "--docs"]).arg(&path);
    for k in keys {
        cmd.args(["--key", k]);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// keyCharacteristics of the candidate whose key prints as `key` (shell notation, as the report does).
fn kc<'a>(r: &'a Value, key: &str) -> &'a Value {
    let quoted = key.replace('{', "{\"").replace(": ", "\": ").replace(", ", ", \"");
    let want: Value = serde_json::from_str(&quoted).unwrap();
    let c = r["candidates"].as_array().unwrap().iter().find(|c| serde_json::to_string(&c["key"]).ok() == serde_json::to_string(&want).ok());
    &c.unwrap_or_else(|| panic!("no candidate {key} in {}", r["candidates"]))["keyCharacteristics"]
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
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
    let kc = kc(&r, "{a: 1}");
    assert_eq!(kc["numDocsSampled"], 7);
    assert_eq!(kc["numDistinctValues"], 4);
    assert_eq!(kc["numDocsMissingKeyFields"], 1);
    // Three values tie at 2; ties are listed in key order: null < 2 < 3.
    let mcv: Vec<(Value, u64)> =
        kc["mostCommonValues"].as_array().unwrap().iter().map(|m| (m["value"].clone(), m["frequency"].as_u64().unwrap())).collect();
    assert_eq!(mcv, vec![(json!({"a": null}), 2), (json!({"a": 2}), 2), (json!({"a": 3}), 2), (json!({"a": 1}), 1)]);
    // 200/7 = 28.571...; the report gives two decimals.
    assert!((num(&kc["topValuePercentage"]) - 200.0 / 7.0).abs() < 0.005);
}

#[test]
fn monotonic_increasing_and_decreasing() {
    let docs: Vec<Document> = (0..50).map(|i| doc! {"_id": i, "up": i * 2, "down": 1000 - i}).collect();
    let r = analyse(docs, &["{up: 1}", "{down: 1}"]);
    let up = &kc(&r, "{up: 1}")["monotonicity"];
    assert_eq!(up["type"], "monotonic");
    assert!((num(&up["recordIdCorrelationCoefficient"]) - 1.0).abs() < 1e-9);
    let down = &kc(&r, "{down: 1}")["monotonicity"];
    assert_eq!(down["type"], "monotonic");
    assert!((num(&down["recordIdCorrelationCoefficient"]) + 1.0).abs() < 1e-9, "decreasing key: r = -1");
}

#[test]
fn monotonicity_by_hand_with_ties() {
    // values in insertion order: b, a, b, a -> key order (ties by insertion): a@1, a@3, b@0, b@2
    // positions [1, 3, 0, 2], means 1.5: sxy = (-1.5)(-0.5) + (-0.5)(1.5) + (0.5)(-1.5) + (1.5)(0.5) = 0 -> r = 0
    let docs = vec![doc! {"k": "b"}, doc! {"k": "a"}, doc! {"k": "b"}, doc! {"k": "a"}];
    let r = analyse(docs, &["{k: 1}"]);
    let m = &kc(&r, "{k: 1}")["monotonicity"];
    assert_eq!(m["recordIdCorrelationCoefficient"], 0.0);
    assert_eq!(m["type"], "not monotonic");
    // a, a, b, b -> positions [0, 1, 2, 3] -> r = 1
    let docs = vec![doc! {"k": "a"}, doc! {"k": "a"}, doc! {"k": "b"}, doc! {"k": "b"}];
    let r = analyse(docs, &["{k: 1}"]);
    let m = &kc(&r, "{k: 1}")["monotonicity"];
    assert!((num(&m["recordIdCorrelationCoefficient"]) - 1.0).abs() < 1e-9);
}

#[test]
fn hashed_keys_count_like_their_field_and_are_not_monotonic() {
    let docs: Vec<Document> = (0..40).map(|i| doc! {"_id": i, "g": i % 4}).collect();
    let r = analyse(docs, &["{_id: \"hashed\"}", "{g: \"hashed\"}", "{g: 1, _id: \"hashed\"}"]);
    let h = kc(&r, "{_id: \"hashed\"}");
    assert_eq!(h["numDistinctValues"], 40);
    assert_eq!(h["monotonicity"]["type"], "not monotonic");
    assert_eq!(h["monotonicity"]["recordIdCorrelationCoefficient"], 0.0);
    let g = kc(&r, "{g: \"hashed\"}");
    assert_eq!(g["numDistinctValues"], 4);
    assert_eq!(g["mostCommonValues"][0]["frequency"], 10);
    let c = kc(&r, "{g: 1, _id: \"hashed\"}");
    assert_eq!(c["monotonicity"]["type"], "unknown");
    assert_eq!(c["numDistinctValues"], 40);
}

#[test]
fn compound_keys() {
    // (g, x): g in {0, 1}, x in {0, 1, 2}; 12 docs, each pair twice
    let docs: Vec<Document> = (0..12).map(|i| doc! {"g": i % 2, "x": (i / 2) % 3}).collect();
    let r = analyse(docs, &["{g: 1, x: 1}", "{g: 1}"]);
    let c = kc(&r, "{g: 1, x: 1}");
    assert_eq!(c["numDistinctValues"], 6);
    assert_eq!(c["mostCommonValues"][0]["value"], json!({"g": 0, "x": 0}));
    assert_eq!(c["mostCommonValues"][0]["frequency"], 2);
    let g = kc(&r, "{g: 1}");
    assert_eq!(g["numDistinctValues"], 2);
    assert_eq!(g["topValuePercentage"], 50.0);
}

#[test]
fn average_document_size_is_integer_bson_bytes() {
    // {"_id": 1}: 4 + 1 + 4 ("_id\0") + 4 + 1 = 14 bytes; {"_id": 1, "a": 1}: 14 + 1 + 2 + 4 = 21
    let r = analyse(vec![doc! {"_id": 1}, doc! {"_id": 1, "a": 1}], &["{_id: 1}"]);
    assert_eq!(kc(&r, "{_id: 1}")["avgDocSizeBytes"], (14 + 21) / 2);
}

#[test]
fn one_value_everywhere_is_not_monotonic() {
    // calculateMonotonicity: a single distinct value among the scanned entries → "not monotonic", 0
    // (equal keys sit in insertion order, which alone would correlate perfectly).
    let docs: Vec<Document> = (0..50).map(|i| doc! {"_id": i, "k": "same"}).collect();
    let r = analyse(docs, &["{k: 1}"]);
    let m = &kc(&r, "{k: 1}")["monotonicity"];
    assert_eq!(m["type"], "not monotonic");
    assert_eq!(m["recordIdCorrelationCoefficient"], 0.0);
}
