//! Issue 52: the log readers' speed-ups change no figure. Every log the tests read (the real
//! logs under ../shared/real-logs and the test workloads' captured logs in tests/data/logs)
//! gives, byte for byte, the workload and analyze JSON recorded before the speed work
//! (tests/data/expected: recorded by main's binary at a537613, analyze's again after issue 48's
//! rule changed the words of refused writes, after issue 49's proposals added candidates, and
//! after issue 47 withheld the recommendation of a log with fewer than 30 operations on the
//! collection, one reason's words after an insert-only collection was said as such, and the
//! logs-only keys whose values no query names after they were spread over every shard at
//! scale (`metrics::cluster::layout::even_cuts`: such a key had put every operation on one
//! shard), the note that says a log's version is not known, and the words of a tie in
//! `comparedWithNext` ("ties ... and ranks above it because", no component whose words read the
//! same for both keys; no rank moved; "ranks first" until a trial read it of #3 against #4),
//! and the load counting an insert command once, on the shards its documents reach, and
//! inserts no document places not at all (logs only: they had diluted every shard's share of
//! operations, scores 0 to 15 points lower, every recommendation the same); never by the code
//! under change).

mod common;

use common::{root, shardkey};
use std::path::{Path, PathBuf};

/// The log an expected file was recorded from, as the path given on the command line.
fn log_of(name: &str) -> String {
    let shared = root().join("../shared/real-logs").join(name);
    if shared.is_file() {
        return shared.display().to_string();
    }
    let captured = Path::new("tests/data/logs").join(name);
    assert!(root().join(&captured).is_file(), "no log {name} in ../shared/real-logs nor tests/data/logs");
    captured.display().to_string()
}

fn expected(kind: &str) -> Vec<(String, PathBuf)> {
    let dir = root().join("tests/data/expected").join(kind);
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    out.sort();
    assert!(out.len() >= 15, "{kind}: the expected outputs are missing ({} files)", out.len());
    out
}

/// Runs shardkey on the log and returns its stdout with the log's path written `LOG`, as in the
/// recorded files (the path differs between checkouts; nothing else may).
fn output(args: &[&str], log: &str) -> String {
    let o = shardkey(args);
    assert!(o.status.success(), "{args:?}: exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().replace(log, "LOG")
}

fn compare(kind: &str, name: &str, got: &str, want_path: &Path) -> Option<String> {
    let want = std::fs::read_to_string(want_path).unwrap();
    if got == want {
        return None;
    }
    let line = got.lines().zip(want.lines()).position(|(a, b)| a != b).unwrap_or(0);
    let at = |s: &str| s.lines().nth(line).unwrap_or("<end>").to_string();
    Some(format!("{kind} {name}: first difference at line {}: got `{}`, recorded `{}`", line + 1, at(got), at(&want)))
}

#[test]
fn workload_json_is_unchanged_on_every_log() {
    let mut diffs = Vec::new();
    for (name, path) in expected("workload") {
        let log = log_of(&name);
        let got = output(&["workload", "--queries", &log, "--top", "0", "--format", "json", "-q"], &log);
        diffs.extend(compare("workload", &name, &got, &path));
    }
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

#[test]
fn analyze_json_is_unchanged_on_every_log() {
    let mut diffs = Vec::new();
    for (name, path) in expected("analyze") {
        let log = log_of(&name);
        let ns = std::fs::read_to_string(path.with_extension("ns")).unwrap();
        let args = ["analyze", "--queries", &log, "--collection", ns.trim(), "--format", "json", "-q"];
        let got = output(&args, &log);
        diffs.extend(compare("analyze", &name, &got, &path));
    }
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// The two commands count the same operations on the same log: `analyze`'s operations read
/// (its collection's and the others') are `workload`'s, the server's own databases left out
/// of both and said under the same reason (they were among analyze's "other collections").
/// Read from the recorded outputs, which the two tests above hold to what each command prints.
#[test]
fn analyze_and_workload_count_the_same_operations() {
    let read = |p: &Path| -> serde_json::Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    let own = |skipped: &serde_json::Value| {
        skipped.as_object().unwrap().iter().find(|(k, _)| k.starts_with("operations on the server's own")).map(|(_, v)| v.as_u64().unwrap())
    };
    let mut diffs = Vec::new();
    for (name, path) in expected("analyze") {
        let a = read(&path);
        let w = read(&root().join("tests/data/expected/workload").join(format!("{name}.json")));
        let q = &a["inputs"]["queries"];
        if (&q["queriesRead"], own(&q["skipped"])) != (&w["operationsRead"], own(&w["skipped"])) {
            diffs.push(format!(
                "{name}: analyze {} read ({:?} the server's own), workload {} ({:?})",
                q["queriesRead"],
                own(&q["skipped"]),
                w["operationsRead"],
                own(&w["skipped"])
            ));
        }
    }
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}
