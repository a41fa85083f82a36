//! The main product output pinned as snapshots: `shardkey analyze` on the bundled
//! fixtures in every format, with and without the cluster model, and redacted.
//! Any change to these files must be one a commit explains.

mod common;
use common::{assert_schema, root};

use std::process::Command;

/// The README's main command (relative paths, so the snapshot holds no machine path), plus `extra`.
fn analyze(extra: &[&str]) -> String {
    let mut args = vec![
        "analyze",
        "--docs",
        "fixtures/events.ndjson",
        "--queries",
        "fixtures/mongod.log",
        "--collection",
        "app.events",
        "--total-docs",
        "5000000",
    ];
    args.extend_from_slice(extra);
    let o = Command::new(env!("CARGO_BIN_EXE_shardkey")).current_dir(root()).args(&args).output().expect("run shardkey");
    assert!(o.status.success(), "exit {:?}, stderr: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    assert!(o.stderr.is_empty(), "stderr on success: {}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).expect("UTF-8 output");
    // Every JSON report holds to the published schema (schemas/analyze.schema.json).
    if extra.windows(2).any(|w| w == ["--format", "json"]) {
        assert_schema("analyze", &serde_json::from_str(&out).expect("JSON"));
    }
    out
}

/// The schema can fail: a report with an unknown verdict or without its candidates is rejected.
#[test]
fn the_analyze_schema_rejects_what_it_does_not_describe() {
    let mut v: serde_json::Value = serde_json::from_str(&analyze(&["--format", "json"])).unwrap();
    v["candidates"][0]["verdict"] = "great".into();
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("schemas/analyze.schema.json")).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(!validator.is_valid(&v));
    v.as_object_mut().unwrap().remove("candidates");
    assert!(!validator.is_valid(&v));
}

#[test]
fn analyze_table() {
    insta::assert_snapshot!(analyze(&[]));
}

/// Issue 27: the default output fits 100 columns and leads with the answer; --wide keeps the full table.
#[test]
fn the_table_leads_with_the_answer_in_100_columns() {
    let text = analyze(&[]);
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 100, "a line of {widest} columns");
    // the first lines: what was read, then the key, why, the warning and the commands
    let head: Vec<&str> = text.lines().take(14).collect();
    let at = |needle: &str| head.iter().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle} not in {head:#?}"));
    let rec = at("recommended: {projectId: 1, _id: 1}");
    assert!(rec < at("why: ") && at("why: ") < at("  ! ") && at("  ! ") < at("createIndex({projectId: 1, _id: 1})"));
    assert!(at("createIndex(") < at("sh.shardCollection(\"app.events\", {projectId: 1, _id: 1})"));
    // the ranking comes after the answer, the details after the ranking
    let ranking = text.find("*1 ┆ {projectId: 1, _id: 1}").unwrap();
    assert!(text.find("recommended:").unwrap() < ranking && ranking < text.find("#1 {projectId: 1, _id: 1}: 71").unwrap());
    assert_eq!(text.matches("recommended:").count(), 1, "the answer is said once");

    // workload's tables too.
    let o = common::shardkey(&["workload", "--queries", "fixtures/mongod.log"]);
    let text = String::from_utf8_lossy(&o.stdout);
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 100 && text.contains("exam/ret"), "workload: a line of {widest} columns");

    let wide = analyze(&["--wide"]);
    assert!(wide.contains("shards per read /") && wide.contains("monotonicity") && wide.contains("top value"), "the full table");
    assert!(wide.lines().any(|l| l.chars().count() > 100));
    let o = common::shardkey(&["analyze", "--docs", "fixtures/events.ndjson", "--wide", "--format", "json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--wide shapes the table output"));
}

#[test]
fn analyze_json() {
    insta::assert_snapshot!(analyze(&["--format", "json"]));
}

#[test]
fn analyze_markdown() {
    insta::assert_snapshot!(analyze(&["--format", "markdown"]));
}

#[test]
fn analyze_table_shards_4() {
    insta::assert_snapshot!(analyze(&["--shards", "4"]));
}

#[test]
fn analyze_json_shards_4() {
    insta::assert_snapshot!(analyze(&["--shards", "4", "--format", "json"]));
}

#[test]
fn analyze_markdown_shards_4() {
    insta::assert_snapshot!(analyze(&["--shards", "4", "--format", "markdown"]));
}

#[test]
fn analyze_table_redacted() {
    insta::assert_snapshot!(analyze(&["--shards", "4", "--redact"]));
}

#[test]
fn analyze_json_redacted() {
    insta::assert_snapshot!(analyze(&["--shards", "4", "--redact", "--format", "json"]));
}

#[test]
fn analyze_markdown_redacted() {
    insta::assert_snapshot!(analyze(&["--shards", "4", "--redact", "--format", "markdown"]));
}

/// Named keys (no proposals) in JSON: the path every `check` takes.
#[test]
fn analyze_json_named_keys() {
    insta::assert_snapshot!(analyze(&[
        "--key",
        "{projectId: 1, _id: 1}",
        "--key",
        "{_id: \"hashed\"}",
        "--key",
        "{ts: 1}",
        "--key",
        "{country: 1}",
        "--shards",
        "4",
        "--format",
        "json"
    ]));
}

/// Issue 30's words: no "1 shards" / "1 shapes"; a note the notes already give is not repeated
/// under every candidate; the per-shard shares say why they add up to more than 100%.
#[test]
fn plain_words_in_the_table() {
    let one = analyze(&["--shards", "1"]);
    assert!(!one.contains("1 shards") && one.contains("1 shard"), "{one}");
    let text = analyze(&[]);
    assert!(text.contains("so those shares add up to more than 100%"));
    for line in text.lines().filter(|l| l.starts_with("note: ")) {
        let body = &line["note: ".len()..];
        assert!(text.matches(body).count() == 1, "said more than once: {body}");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_shardkey"))
        .current_dir(root())
        .args(["workload", "--queries", "fixtures/mongod.log", "--namespace", "app.other*"])
        .output()
        .unwrap();
    let w = String::from_utf8_lossy(&o.stdout);
    assert!(!w.contains(" 1 shapes") && !w.contains(" 1 operations"), "{w}");
}

/// `--top N` says how many most common values (and jumbo values) to list, nothing more: the
/// scores, reasons and ranking are the same for 0, 1 and 5 (with 0 the hot value and the
/// jumbo risk were once lost, and {projectId: 1} rose from 45 to 69).
#[test]
fn top_lists_values_and_changes_no_score() {
    let judged = |top: &str| {
        let v: serde_json::Value = serde_json::from_str(&analyze(&["--format", "json", "--top", top])).unwrap();
        let c: Vec<(String, u64, String)> = v["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["key"].to_string(), c["score"].as_u64().unwrap(), c["reasons"].to_string()))
            .collect();
        let listed = v["candidates"][0]["keyCharacteristics"]["mostCommonValues"].as_array().map(Vec::len);
        (c, listed)
    };
    let (five, n5) = judged("5");
    assert_eq!(n5, Some(5));
    for top in ["0", "1"] {
        let (c, n) = judged(top);
        assert_eq!(n, Some(top.parse().unwrap()));
        assert_eq!(c, five, "--top {top}");
    }
    let project = five.iter().find(|c| c.0 == r#"{"projectId":1}"#).expect("{projectId: 1} is a candidate");
    assert!(project.2.contains("hot value"), "{}", project.2);
}
