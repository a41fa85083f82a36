//! The binary on the bundled fixtures, on the shared real logs, and on bad input.

mod common;
use common::{fixture, root};

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shardkey"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run shardkey")
}

/// A JSON report; an analyze report (it has candidates) is held to schemas/analyze.schema.json.
fn json_of(o: &Output) -> Value {
    assert!(o.status.success(), "stderr: {}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    if v.get("candidates").is_some() {
        common::assert_schema("analyze", &v);
    }
    v
}

const KEYS: [&str; 5] = ["{projectId: 1, _id: 1}", "{_id: \"hashed\"}", "{projectId: 1}", "{ts: 1}", "{country: 1}"];

fn analyze_fixtures(extra: &[&str]) -> Value {
    let docs = fixture("events.ndjson");
    let log = fixture("mongod.log");
    let mut args = vec!["analyze", "--docs", &docs, "--queries", &log, "--collection", "app.events", "--format", "json"];
    for k in KEYS.iter() {
        args.push("--key");
        args.push(k);
    }
    args.extend_from_slice(extra);
    json_of(&run(&args))
}

fn find<'a>(r: &'a Value, key: &str) -> &'a Value {
    let want: Value = shardkey::model::ShardKey::parse(key).unwrap().to_json();
    r["candidates"].as_array().unwrap().iter().find(|c| common::same_key(&c["key"], &want)).unwrap_or_else(|| panic!("{key} missing"))
}

fn reasons(c: &Value) -> String {
    c["reasons"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect::<Vec<_>>().join(" | ")
}

#[test]
fn fixtures_rank_good_keys_above_bad_ones_with_reasons() {
    let r = analyze_fixtures(&["--total-docs", "5000000"]);
    assert_eq!(r["schemaVersion"], 1);
    assert_eq!(r["namespace"], "app.events");
    let rank = |k: &str| find(&r, k)["rank"].as_u64().unwrap();
    // The Bugsnag answer (docs/reference.md "Scenarios"): the tenant first, then _id.
    assert_eq!(rank("{projectId: 1, _id: 1}"), 1);
    for good in ["{projectId: 1, _id: 1}", "{_id: \"hashed\"}"] {
        for bad in ["{projectId: 1}", "{ts: 1}"] {
            assert!(rank(good) < rank(bad), "{good} (#{}) should rank above {bad} (#{})", rank(good), rank(bad));
        }
    }
    // Its reasons give the read fan-out with N shards in words, beside the server's label.
    let best = reasons(find(&r, "{projectId: 1, _id: 1}"));
    assert!(best.contains("with 4 shards") && best.contains("a read reaches 2.73 shards on average"), "{best}");
    assert!(best.contains("the server labels 48.5% of reads multi-shard"), "{best}");
    assert!(find(&r, "{projectId: 1, _id: 1}")["comparedWithNext"].as_str().unwrap().starts_with("#1 beats #2"));
    let p = reasons(find(&r, "{projectId: 1}"));
    assert!(p.contains("hot value") && p.contains("proj-0000"), "{p}");
    assert!(p.contains("jumbo chunk: value"), "{p}");
    assert!(!find(&r, "{projectId: 1}")["keyCharacteristics"]["jumboChunkRisk"]["values"].as_array().unwrap().is_empty());
    let t = reasons(find(&r, "{ts: 1}"));
    assert!(t.contains("increasing key (correlation 1.00 with the creation time"), "{t}");
    assert_eq!(find(&r, "{ts: 1}")["keyCharacteristics"]["monotonicity"]["type"], "monotonic");
    assert_eq!(r["recommendation"]["commands"][1], "sh.shardCollection(\"app.events\", {projectId: 1, _id: 1})");
    // query accounting: other namespaces and non-query lines are reported, not used
    let q = &r["inputs"]["queries"];
    assert!(q["queriesUsed"].as_u64().unwrap() > 1000);
    assert!(q["queriesOtherNamespaces"].as_u64().unwrap() > 0);
    assert!(q["skipped"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum::<u64>() > 0);
    // every candidate carries the server-named fields
    for c in r["candidates"].as_array().unwrap() {
        for f in ["key", "score", "rank", "reasons", "keyCharacteristics", "readDistribution", "writeDistribution", "queryShapes"] {
            assert!(c.get(f).is_some(), "{f} missing");
        }
        let rd = &c["readDistribution"];
        let sum = rd["percentageOfSingleShardReads"].as_f64().unwrap()
            + rd["percentageOfMultiShardReads"].as_f64().unwrap()
            + rd["percentageOfScatterGatherReads"].as_f64().unwrap();
        assert!((sum - 100.0).abs() < 1e-6);
        assert!(rd["numReadsByRange"].as_array().unwrap().len() <= 100);
    }
}

#[test]
fn without_keys_candidates_are_proposed() {
    let docs = fixture("events.ndjson");
    let log = fixture("mongod.log");
    let r = json_of(&run(&["analyze", "--docs", &docs, "--queries", &log, "--collection", "app.events", "--format", "json"]));
    let keys: Vec<String> = r["candidates"].as_array().unwrap().iter().map(|c| c["key"].to_string()).collect();
    for want in [r#"{"_id":"hashed"}"#, r#"{"projectId":1}"#, r#"{"projectId":1,"_id":1}"#, r#"{"userId":1}"#] {
        assert!(keys.contains(&want.to_string()), "{want} not in {keys:?}");
    }
    assert!(r["candidates"][0]["proposedBecause"].is_string());
}

#[test]
fn sampled_queries_and_diffs_are_read() {
    let docs = fixture("events.ndjson");
    let sq = fixture("sampledQueries.ndjson");
    let sqd = fixture("sampledQueriesDiff.ndjson");
    let r =
        json_of(&run(&["analyze", "--docs", &docs, "--queries", &sq, "--queries", &sqd, "--key", "{projectId: 1}", "--format", "json"]));
    assert_eq!(r["namespace"], "app.events");
    let c = &r["candidates"][0];
    let wd = &c["writeDistribution"];
    assert!(wd["sampleSize"]["findAndModify"].as_u64().unwrap() > 0);
    assert!(wd["percentageOfShardKeyUpdates"].as_f64().unwrap() > 0.0, "diffs on projectId count as key updates");
    assert!(r["inputs"]["queries"]["shardKeyUpdateDiffs"].as_u64().unwrap() > 0);
    // the same statements read from the slow-query log classify the same way
    let shapes = c["queryShapes"].as_array().unwrap();
    let label_of = |shape: &str| shapes.iter().find(|s| s["shape"] == shape).map(|s| s["label"].clone());
    assert_eq!(label_of("{projectId: eq}"), Some(Value::from("singleShard")));
    assert_eq!(label_of("{_id: eq}"), Some(Value::from("scatterGather")));
}

#[test]
fn table_and_markdown_formats() {
    let docs = fixture("events.ndjson");
    let o = run(&["analyze", "--docs", &docs, "--key", "{country: 1}", "--key", "{_id: 1}"]);
    assert!(o.status.success());
    let t = String::from_utf8(o.stdout).unwrap();
    assert!(t.contains("{country: 1}") && t.contains("low cardinality"), "{t}");
    let o = run(&["analyze", "--docs", &docs, "--key", "{country: 1}", "--format", "markdown"]);
    let m = String::from_utf8(o.stdout).unwrap();
    assert!(m.contains("| rank | key |") && m.contains("`{country: 1}`"), "{m}");
}

#[test]
fn mongodump_bson_gives_the_same_numbers_as_the_export() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("app");
    std::fs::create_dir_all(&dump).unwrap();
    let mut bytes = Vec::new();
    for line in std::fs::read_to_string(fixture("events.ndjson")).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let bson::Bson::Document(d) = bson::Bson::try_from(v).unwrap() else { panic!() };
        d.to_writer(&mut bytes).unwrap();
    }
    let path = dump.join("events.bson");
    std::fs::write(&path, &bytes).unwrap();
    let from_json =
        json_of(&run(&["analyze", "--docs", &fixture("events.ndjson"), "--key", "{projectId: 1}", "--key", "{ts: 1}", "--format", "json"]));
    let from_bson =
        json_of(&run(&["analyze", "--docs", path.to_str().unwrap(), "--key", "{projectId: 1}", "--key", "{ts: 1}", "--format", "json"]));
    assert_eq!(from_bson["namespace"], "app.events", "namespace from the dump path");
    for i in 0..2 {
        assert_eq!(from_json["candidates"][i]["keyCharacteristics"], from_bson["candidates"][i]["keyCharacteristics"]);
    }
    // gzip too
    let gz = dump.join("events.bson.gz");
    let mut enc = flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, &bytes).unwrap();
    enc.finish().unwrap();
    let from_gz =
        json_of(&run(&["analyze", "--docs", gz.to_str().unwrap(), "--key", "{projectId: 1}", "--key", "{ts: 1}", "--format", "json"]));
    assert_eq!(from_gz["candidates"][0]["keyCharacteristics"], from_bson["candidates"][0]["keyCharacteristics"]);
}

/// A failing run: exit code 2, exactly one line on stderr, nothing on stdout.
fn expect_user_error(args: &[&str], needle: &str) {
    let o = run(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "args {args:?}: stderr {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains(needle), "'{needle}' not in: {err}");
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"));
    assert!(o.stdout.is_empty());
}

#[test]
fn bad_input_gives_one_line_and_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str, content: &[u8]| -> String {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        path.display().to_string()
    };
    let bad_line = p("bad.ndjson", b"{\"a\": 1}\n{\"a\": 2}\n{\"a\": oops}\n");
    expect_user_error(&["analyze", "--docs", &bad_line, "--key", "{a: 1}"], "line 3");
    let empty = p("empty.json", b"");
    expect_user_error(&["analyze", "--docs", &empty, "--key", "{a: 1}"], "is empty");
    let blank = p("blank.json", b"\n  \n");
    expect_user_error(&["analyze", "--docs", &blank, "--key", "{a: 1}"], "is empty");
    let arrays = p("arrays.ndjson", b"{\"a\": 1}\n{\"a\": [1, 2]}\n{\"a\": [3]}\n");
    expect_user_error(&["analyze", "--docs", &arrays, "--key", "{a: 1}"], "2 documents hold an array in 'a'");
    let ok = p("ok.ndjson", b"{\"a\": 1}\n");
    expect_user_error(&["analyze", "--docs", &ok, "--key", "{a: 1"], "key {a: 1");
    expect_user_error(&["analyze", "--docs", &ok, "--key", "{a: -1}"], "descending");
    expect_user_error(&["analyze", "--docs", &ok, "--key", "{a: \"2d\"}"], "no other index types");
    expect_user_error(&["analyze", "--docs", &ok, "--key", "{a: \"hashed\", b: \"hashed\"}"], "at most one field");
    expect_user_error(&["analyze", "--docs", &ok, "--key", "a"], "key a");
    expect_user_error(&["analyze", "--docs", &ok, "--collation", "{strength: 2}"], "locale");
    expect_user_error(&["analyze", "--docs", &dir.path().join("nope.json").display().to_string()], "cannot open");
    expect_user_error(&["analyze", "--docs", &ok, "--bogus"], "--bogus");
    let mut bson_bytes = Vec::new();
    bson::doc! {"a": 1, "b": "hello"}.to_writer(&mut bson_bytes).unwrap();
    bson::doc! {"a": 2, "b": "world"}.to_writer(&mut bson_bytes).unwrap();
    bson_bytes.truncate(bson_bytes.len() - 5);
    let trunc = p("trunc.bson", &bson_bytes);
    expect_user_error(&["analyze", "--docs", &trunc, "--key", "{a: 1}"], "truncated BSON");
    // A file of malformed lines (one alone would be a cut last line, skipped).
    let bad_log = p("bad.log", "{\"t\": 1, \"id\": 51803, \"msg\": \"Slow query\"\n".repeat(150).as_bytes());
    expect_user_error(&["analyze", "--docs", &ok, "--queries", &bad_log], "line 1");
    let two_ns = p("two.ndjson", b"{\"op\":\"query\",\"ns\":\"a.x\",\"command\":{\"find\":\"x\",\"filter\":{},\"$db\":\"a\"}}\n{\"op\":\"query\",\"ns\":\"a.y\",\"command\":{\"find\":\"y\",\"filter\":{},\"$db\":\"a\"}}\n");
    expect_user_error(&["analyze", "--docs", &ok, "--queries", &two_ns], "--collection");
    // A directory where a file is expected: the user's to fix (2), not a bug (3).
    let d = dir.path().display().to_string();
    expect_user_error(&["analyze", "--docs", &d, "--key", "{a: 1}"], &d);
    expect_user_error(&["analyze", "--docs", &ok, "--queries", &d, "--key", "{a: 1}"], &d);
}

/// `shardkey analyze ... | head -c 10`: the reader closing the pipe early is success,
/// as for every well-behaved command-line tool; nothing on stderr.
#[test]
fn a_closed_stdout_is_success() {
    use std::io::Read;
    use std::process::Stdio;
    let (docs, log) = (fixture("events.ndjson"), fixture("mongod.log"));
    let mut child = bin()
        .args(["analyze", "--docs", &docs, "--queries", &log, "--collection", "app.events", "--total-docs", "5000000"])
        .args(["--shards", "4", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read 10 bytes, then close our end, as `head -c 10` does.
    let mut first = [0u8; 10];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(&first[..1], b"{");
    assert_eq!(status.code(), Some(0), "stderr: {err}");
    assert!(err.is_empty(), "stderr: {err}");
    // And through a real shell pipe, as a user types it (pipefail: shardkey's own exit code counts).
    let sh = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -o pipefail; '{}' analyze --docs '{docs}' --queries '{log}' --collection app.events --total-docs 5000000 --shards 4 --format json | head -c 10 >/dev/null",
            env!("CARGO_BIN_EXE_shardkey")
        ))
        .output()
        .unwrap();
    assert!(sh.status.success(), "{:?} {}", sh.status, String::from_utf8_lossy(&sh.stderr));
    assert!(sh.stderr.is_empty(), "{}", String::from_utf8_lossy(&sh.stderr));
}

#[test]
fn fail_under_is_a_gate() {
    let docs = fixture("events.ndjson");
    let o = run(&["analyze", "--docs", &docs, "--key", "{country: 1}", "--fail-under", "90", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!o.stdout.is_empty(), "the report is still printed");
    let o = run(&["analyze", "--docs", &docs, "--key", "{country: 1}", "--fail-under", "1", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
}

fn shared_logs() -> PathBuf {
    let p = root().join("../shared/real-logs");
    assert!(p.is_dir(), "the team's shared/real-logs must sit beside the project (as in CI): {}", p.display());
    p
}

fn read_log(path: &Path) -> Value {
    let docs = fixture("events.ndjson");
    // A namespace that does not occur: every query is read and counted, none used.
    json_of(&run(&[
        "analyze",
        "--docs",
        &docs,
        "--key",
        "{_id: 1}",
        "--collection",
        "none.none",
        "--format",
        "json",
        "--queries",
        path.to_str().unwrap(),
    ]))
}

#[test]
fn real_mongod_logs_and_profiles_are_read() {
    let dir = shared_logs();
    // (file, at least this many operations found)
    let expect: &[(&str, u64)] = &[
        ("hatchet__sample-mongod.log.gz", 10_000),
        ("hatchet__replica.tar.gz__rs1.log.gz", 100),
        ("mongo-log-parser__cluster0-shard-00-01.ufghn.mongodb.net_2025-08-17T19_50_00_2025-08-18T19_55_21_MONGODB.log.gz", 1000),
        ("integrations-core__system.profile", 4),
        ("percona-toolkit__profiles__all-ops_3.6.2.jsonl", 8),
        ("percona-toolkit__profiles__all-ops_2.6.12.jsonl", 8),
    ];
    for (name, min) in expect {
        let r = read_log(&dir.join(name));
        let q = &r["inputs"]["queries"];
        let n = q["queriesRead"].as_u64().unwrap();
        assert!(n >= *min, "{name}: {n} operations read, expected at least {min}");
        assert_eq!(q["queriesUsed"], 0);
    }
}

/// An independent count of a legacy (2.2–4.2) log's CRUD operation lines: `] <op> <ns> ... <N>ms`
/// for query/getmore/update/remove/insert, and `command` lines running find, count, distinct,
/// aggregate, findAndModify or getMore (write commands are counted from their statement lines).
fn legacy_crud_lines(text: &str) -> u64 {
    let mut n = 0;
    for line in text.lines() {
        let Some(rest) = line.split_once("] ").map(|x| x.1) else { continue };
        let ends_ms = line
            .rsplit(' ')
            .next()
            .and_then(|t| t.strip_suffix("ms"))
            .is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()));
        let mut words = rest.split(' ');
        let (Some(op), Some(ns)) = (words.next(), words.next()) else { continue };
        if !ends_ms || !ns.contains('.') {
            continue;
        }
        match op {
            "query" | "getmore" | "update" | "remove" | "insert" => n += 1,
            "command" => {
                let after = rest.split_once("command: ").map(|x| x.1).unwrap_or("");
                let name = after.trim_start_matches("{ ").split([' ', ':']).next().unwrap_or("");
                if ["find", "count", "distinct", "aggregate", "findAndModify", "findandmodify", "getMore"].contains(&name) {
                    n += 1;
                }
            }
            _ => {}
        }
    }
    n
}

/// Every file of ../shared/real-logs is read: legacy text logs (2.2–4.2) yield exactly the
/// operations an independent count of their CRUD lines finds, with namespaces and filters;
/// every other line is skipped with a reason.
#[test]
fn every_real_log_is_read_legacy_text_included() {
    let dir = shared_logs();
    let mut legacy_files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name == "README.md" {
            continue;
        }
        let r = read_log(&path);
        let q = &r["inputs"]["queries"];
        let skipped: u64 = q["skipped"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
        assert!(q["recordsRead"].as_u64().unwrap() > 0, "{name}: nothing read");
        if name.starts_with("mtools__") {
            legacy_files += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            let expected = legacy_crud_lines(&text);
            // The server's own (admin, local, config, system.profile) are said under their reason.
            let own = q["skipped"]
                .as_object()
                .unwrap()
                .iter()
                .find(|(k, _)| k.starts_with("operations on the server's own"))
                .map_or(0, |(_, v)| v.as_u64().unwrap());
            assert_eq!(q["queriesRead"].as_u64().unwrap() + own, expected, "{name}: {q}");
            // Every line is accounted for: an operation or a skip reason.
            assert_eq!(q["recordsRead"].as_u64().unwrap(), text.lines().filter(|l| !l.trim().is_empty()).count() as u64, "{name}");
            assert!(skipped + expected >= q["recordsRead"].as_u64().unwrap(), "{name}: {q}");
        }
    }
    assert_eq!(legacy_files, 6);
    // 2.4's OP_QUERY lines: namespaces and filters (the {query: ..., orderby: ...} wrapper undone).
    let log = dir.join("mtools__collscans.log");
    let o = run(&["analyze", "--queries", log.to_str().unwrap(), "--collection", "test.docs", "--key", "{foo: 1}", "--format", "json"]);
    let r = json_of(&o);
    assert_eq!(r["inputs"]["queries"]["queriesUsed"], 3);
    let shapes = r["candidates"][0]["queryShapes"].to_string();
    assert!(shapes.contains("{foo: eq}"), "{shapes}");
    // Two equalities on foo and one $in of three values: 2 of 3 single-shard, 1 multi-shard
    // (the server rounds up at the 10th decimal).
    let rd = &r["candidates"][0]["readDistribution"];
    assert_eq!(rd["percentageOfSingleShardReads"], 66.6666666667);
    assert_eq!(rd["percentageOfMultiShardReads"], 33.3333333334);
    // 4.0's WRITE lines: update and remove statements on their namespace.
    let r = read_log(&dir.join("mtools__mongod.log"));
    assert!(r["inputs"]["queries"]["skipped"].to_string().contains("legacy text log lines that are not operations"));
}

#[test]
fn real_log_classification_on_one_namespace() {
    // hatchet's sample log: testdb.__examples is read, updated and deleted by email
    // (queries only: the log's collection has no documents here).
    let dir = shared_logs();
    let log = dir.join("hatchet__sample-mongod.log.gz");
    let args = |key: &'static str| {
        vec![
            "analyze".to_string(),
            "--key".into(),
            key.into(),
            "--collection".into(),
            "testdb.__examples".into(),
            "--format".into(),
            "json".into(),
            "--queries".into(),
            log.display().to_string(),
        ]
    };
    let by_email = json_of(&bin().args(args("{email: 1}")).output().unwrap());
    let c = &by_email["candidates"][0];
    assert_eq!(c["writeDistribution"]["sampleSize"]["update"], 2988);
    assert_eq!(c["writeDistribution"]["sampleSize"]["delete"], 2988);
    assert_eq!(c["readDistribution"]["percentageOfSingleShardReads"], 100.0);
    assert_eq!(c["writeDistribution"]["percentageOfSingleShardWrites"], 100.0);
    let by_id = json_of(&bin().args(args("{_id: 1}")).output().unwrap());
    let c = &by_id["candidates"][0];
    assert_eq!(c["writeDistribution"]["percentageOfScatterGatherWrites"], 100.0);
    assert_eq!(c["writeDistribution"]["percentageOfSingleWritesWithoutShardKey"], 100.0);
}

#[test]
fn cluster_prediction_with_four_shards() {
    let r = analyze_fixtures(&["--total-docs", "5000000", "--shards", "4"]);
    let cl = |k: &str| find(&r, k)["cluster"].clone();
    let inserts: Vec<f64> =
        cl("{ts: 1}")["atScale"]["shards"].as_array().unwrap().iter().map(|s| s["insertsPercent"].as_f64().unwrap()).collect();
    assert_eq!(inserts.iter().filter(|p| **p == 100.0).count(), 1, "{inserts:?}");
    assert_eq!(inserts.iter().filter(|p| **p == 0.0).count(), 3, "{inserts:?}");
    // The fixture log reads no insert; the events' ObjectIds span 3 days: inserts taken from the data, said assumed.
    assert!(cl("{ts: 1}")["verdict"].as_str().unwrap().contains("inserts (assumed) go to 1 shard, the busiest shard takes"));
    let hashed = cl("{_id: \"hashed\"}");
    let data: Vec<f64> = hashed["atScale"]["shards"].as_array().unwrap().iter().map(|s| s["dataBytes"].as_f64().unwrap()).collect();
    let (max, min) = (data.iter().cloned().fold(0.0, f64::max), data.iter().cloned().fold(f64::MAX, f64::min));
    assert!(max / min <= 1.10, "hashed _id data within 10%: {data:?}");
    assert!(hashed["jumboChunks"].as_array().unwrap().is_empty());
    let p = cl("{projectId: 1}");
    let jumbo = p["jumboChunks"].as_array().unwrap();
    assert_eq!(jumbo.len(), 1, "{p}");
    assert_eq!(jumbo[0]["min"]["projectId"], "proj-0000");
    assert!(jumbo[0]["estimatedBytes"].as_u64().unwrap() > 128 * 1024 * 1024);
    assert_eq!(p["numShards"], 4);
    // the same numbers draw bars in the table
    let docs = fixture("events.ndjson");
    let o = run(&[
        "analyze",
        "--docs",
        &docs,
        "--collection",
        "app.events",
        "--total-docs",
        "5000000",
        "--shards",
        "4",
        "--key",
        "{projectId: 1}",
    ]);
    let t = String::from_utf8(o.stdout).unwrap();
    assert!(t.contains("jumbo chunk {\"projectId\":\"proj-0000\"}") && t.contains("█"), "{t}");
}

/// Queries alone (issue: log-only analysis): no --docs, no --uri. The read/write
/// distribution equals the one measured with the documents (targeting needs no data),
/// key characteristics are reported as not measured, never invented, and candidates are
/// proposed from the filters.
#[test]
fn queries_only_analysis_gives_the_same_read_write_distribution() {
    let log = fixture("mongod.log");
    let mut args = vec!["analyze", "--queries", &log, "--collection", "app.events", "--format", "json"];
    for k in KEYS.iter() {
        args.extend(["--key", k]);
    }
    let o = run(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let q: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let d = analyze_fixtures(&[]);
    let mut compared = 0;
    for c in q["candidates"].as_array().unwrap() {
        assert!(c["keyCharacteristics"]["notMeasured"].as_str().unwrap().contains("no documents"), "{}", c["keyCharacteristics"]);
        assert!(c["readDistribution"].get("numReadsByRange").is_none(), "no split points without documents");
        let Some(with_docs) = d["candidates"].as_array().unwrap().iter().find(|x| common::same_key(&x["key"], &c["key"])) else {
            continue;
        };
        for f in ["sampleSize", "percentageOfSingleShardReads", "percentageOfMultiShardReads", "percentageOfScatterGatherReads"] {
            assert_eq!(c["readDistribution"][f], with_docs["readDistribution"][f], "{} {f}", c["key"]);
        }
        for f in [
            "sampleSize",
            "percentageOfSingleShardWrites",
            "percentageOfMultiShardWrites",
            "percentageOfScatterGatherWrites",
            "percentageOfShardKeyUpdates",
            "percentageOfSingleWritesWithoutShardKey",
            "percentageOfMultiWritesWithoutShardKey",
        ] {
            assert_eq!(c["writeDistribution"][f], with_docs["writeDistribution"][f], "{} {f}", c["key"]);
        }
        compared += 1;
    }
    assert_eq!(compared, KEYS.len());
    let o = run(&["analyze", "--queries", &log, "--collection", "app.events", "--format", "json"]);
    let q: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let keys: Vec<String> = q["candidates"].as_array().unwrap().iter().map(|c| c["key"].to_string()).collect();
    assert!(keys.iter().any(|k| k.contains("projectId")), "proposed from the filters: {keys:?}");
    assert!(q["notes"].to_string().contains("no documents"));
    // The table says "not measured" where the documents would speak.
    let o = run(&["analyze", "--queries", &log, "--collection", "app.events"]);
    let t = String::from_utf8(o.stdout).unwrap();
    assert!(t.contains("not measured") && t.starts_with("app.events: no documents (query logs only)"), "{t}");
}

/// `shardkey workload` on the JSON logs of ../shared/real-logs: per namespace, the `find`
/// commands and the update/remove statement lines match an independent count made here
/// with serde_json over the lines (id 51803, `attr.type`, `attr.command`'s first field);
/// durations are the lines' own `durationMillis`.
#[test]
fn workload_summary_counts_match_an_independent_count() {
    use std::collections::BTreeMap;
    use std::io::Read;
    let dir = shared_logs();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".log.gz") {
            continue;
        }
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(std::fs::File::open(&path).unwrap()).read_to_string(&mut text).unwrap();
        // (ns, op) → count; ns → max duration of its finds.
        let mut expect: BTreeMap<(String, &str), u64> = BTreeMap::new();
        let mut max_find: BTreeMap<String, i64> = BTreeMap::new();
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
            if v["id"] != 51803 {
                continue;
            }
            let attr = &v["attr"];
            let ns = attr["ns"].as_str().unwrap_or("").to_string();
            let op = match attr["type"].as_str() {
                Some("update") => "update",
                Some("remove") => "delete",
                _ => match attr["command"].as_object().and_then(|c| c.keys().next()).map(String::as_str) {
                    Some("find") => "find",
                    _ => continue,
                },
            };
            // A find names its collection; the line's ns may be the database's $cmd.
            let ns = match (op, attr["command"]["find"].as_str(), attr["command"]["$db"].as_str()) {
                ("find", Some(c), Some(db)) => format!("{db}.{c}"),
                _ => ns,
            };
            if op == "find" {
                let d = attr["durationMillis"].as_i64().unwrap_or(0);
                let m = max_find.entry(ns.clone()).or_insert(0);
                *m = (*m).max(d);
            }
            *expect.entry((ns, op)).or_default() += 1;
        }
        assert!(!expect.is_empty(), "{name}: the independent count found nothing");
        let o = run(&["workload", "--queries", path.to_str().unwrap(), "--top", "0", "--format", "json"]);
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        let r = json_of(&o);
        let got = |ns: &str, op: &str| -> u64 {
            r["namespaces"]
                .as_array()
                .unwrap()
                .iter()
                .find(|n| n["namespace"] == ns)
                .map(|n| n["operations"][op].as_u64().unwrap_or(0))
                .unwrap_or(0)
        };
        // The server's own databases are left out unless --namespace names them, counted
        // under a skip reason.
        let internal = |ns: &str| ["local.", "config.", "admin."].iter().any(|p| ns.starts_with(p));
        let on_internal: u64 = expect.iter().filter(|((ns, _), _)| internal(ns)).map(|(_, n)| *n).sum();
        assert!(r["namespaces"].as_array().unwrap().iter().all(|n| !internal(n["namespace"].as_str().unwrap())), "{name}");
        if on_internal > 0 {
            let said = r["skipped"].as_object().unwrap().iter().find(|(k, _)| k.contains("the server's own databases"));
            assert!(said.is_some_and(|(_, v)| v.as_u64().unwrap() >= on_internal), "{name}: {}", r["skipped"]);
            let shown = json_of(&run(&["workload", "--queries", path.to_str().unwrap(), "--namespace", "admin.*", "--format", "json"]));
            let admin: u64 = expect.iter().filter(|((ns, _), _)| ns.starts_with("admin.")).map(|(_, n)| *n).sum();
            let listed: u64 = shown["namespaces"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n["operations"].as_object().unwrap().values().filter_map(Value::as_u64).sum::<u64>())
                .sum();
            assert!(listed >= admin, "{name}: --namespace 'admin.*' lists {listed} < {admin}");
        }
        for ((ns, op), n) in expect.iter().filter(|((ns, _), _)| !internal(ns)) {
            // A getMore whose cursor's opening line was not logged counts as its find: at least the direct finds.
            if *op == "find" {
                assert!(got(ns, op) >= *n, "{name} {ns} find: {} < {n}", got(ns, op));
            } else {
                assert_eq!(got(ns, op), *n, "{name} {ns} {op}");
            }
        }
        for (ns, max) in max_find.iter().filter(|(ns, _)| !internal(ns)) {
            let shapes = r["namespaces"].as_array().unwrap().iter().find(|n| n["namespace"] == ns.as_str()).unwrap()["shapes"]
                .as_array()
                .unwrap()
                .clone();
            let seen = shapes
                .iter()
                .filter(|s| s["commands"]["find"].as_u64().unwrap_or(0) > 0)
                .filter_map(|s| s["durationMillis"]["max"].as_i64())
                .max()
                .unwrap_or(0);
            assert!(seen >= *max, "{name} {ns}: slowest find {seen} ms, the lines say {max}");
        }
    }
    // A namespace pattern and a time window keep only what they match.
    let log = fixture("mongod.log");
    let r = json_of(&run(&["workload", "--queries", &log, "--namespace", "app.inv*", "--format", "json"]));
    assert_eq!(r["namespaces"].as_array().unwrap().len(), 1);
    assert_eq!(r["namespaces"][0]["namespace"], "app.inventory");
    // Its headline counts one namespace in the singular.
    let text = run(&["workload", "--queries", &log, "--namespace", "app.inv*"]);
    let head = String::from_utf8_lossy(&text.stdout).lines().next().unwrap_or_default().to_string();
    assert!(head.contains(" in 1 namespace from "), "{head}");
    let all = json_of(&run(&["workload", "--queries", &log, "--format", "json"]))["operationsRead"].as_u64().unwrap();
    let r = json_of(&run(&["workload", "--queries", &log, "--until", "2000-01-01", "--format", "json"]));
    assert_eq!(r["operationsRead"], 0);
    assert_eq!(r["skipped"]["operations outside --since/--until"], all);
    // analyze takes the same window.
    let r = analyze_fixtures(&["--since", "2000-01-01", "--until", "2000-01-02"]);
    assert_eq!(r["inputs"]["queries"]["queriesRead"], 0);
    assert!(r["inputs"]["queries"]["skipped"]["operations outside --since/--until"].as_u64().unwrap() > 1000);
    let o = run(&["workload", "--queries", &log, "--since", "yesterday"]);
    assert_eq!(o.status.code(), Some(2));
}

/// Issue 29: the less is measured, the less confident the answer. Without a query source the
/// fixtures' keys tied at 80 "good" (fan-out and load counted 0.5); now the unmeasured
/// components count 0, the first reason says so, the ties say what would break them, and the
/// recommendation says first what it does not rest on.
#[test]
fn unmeasured_evidence_never_counts_in_a_keys_favour() {
    let docs = fixture("events.ndjson");
    let r = json_of(&run(&["analyze", "--docs", &docs, "--collection", "app.events", "--total-docs", "5000000", "--format", "json"]));
    let cands = r["candidates"].as_array().unwrap();
    for c in cands {
        assert_ne!(c["verdict"], "good", "{}", c["key"]);
        assert!(c["score"].as_u64().unwrap() <= 50, "fan-out and load are 50 of 100 points: {}", c["key"]);
        assert_eq!((&c["scoreBreakdown"]["fanOut"], &c["scoreBreakdown"]["load"]), (&Value::Null, &Value::Null));
        assert!(reasons(c).starts_with("targeting not measured"), "{}", reasons(c));
    }
    let first = &cands[0];
    if first["score"] == cands[1]["score"] {
        let w = first["comparedWithNext"].as_str().unwrap();
        assert!(w.contains("ties with #2") && w.ends_with("sampled queries would separate them"), "{w}");
    }
    let note = r["recommendation"]["caveats"][0].as_str().unwrap();
    assert!(note.starts_with("this choice rests on the data alone"), "{note}");
    // The table says it before the commands.
    let table = String::from_utf8(run(&["analyze", "--docs", &docs, "--collection", "app.events", "--color", "never"]).stdout).unwrap();
    let (caveat, command) = (table.find("! this choice rests on the data alone").unwrap(), table.find("sh.shardCollection(").unwrap());
    assert!(caveat < command, "{table}");

    // Queries only: cardinality from the values the filters name is a lower bound. `country`
    // takes 10 values there (Chao1 11): capped as low cardinality, never above a key the
    // queries show many values of.
    let log = fixture("mongod.log");
    let r = json_of(&run(&[
        "analyze",
        "--queries",
        &log,
        "--collection",
        "app.events",
        "--format",
        "json",
        "--key",
        "{country: 1}",
        "--key",
        "{projectId: 1, _id: 1}",
    ]));
    let country = find(&r, "{country: 1}");
    assert_eq!(country["queryValues"]["numDistinctNamed"], 10, "{}", country["queryValues"]);
    // The log's 6.0 also refuses its findAndModify by {projectId, _id} under {country: 1}
    // (writesFail, 20); with those writes fixed the low-cardinality cap (35) still holds it.
    assert_eq!(country["scoreBreakdown"]["cappedBy"], "writesFail");
    assert!(country["scoreBreakdown"]["ifWritesFixed"].as_u64().unwrap() <= 35, "{}", country["scoreBreakdown"]);
    assert!(reasons(country).contains("their filters name 10 values of the key's most varied field"), "{}", reasons(country));
    assert_eq!(find(&r, "{projectId: 1, _id: 1}")["scoreBreakdown"]["cappedBy"], Value::Null);
    assert!(r["recommendation"]["caveats"][0].as_str().unwrap().starts_with("this choice rests on the queries alone"));
    // The proposals' words do not speak of documents there were none of.
    let r = json_of(&run(&["analyze", "--queries", &log, "--collection", "app.events", "--format", "json"]));
    for c in r["candidates"].as_array().unwrap() {
        let why = c["proposedBecause"].as_str().unwrap_or("");
        assert!(!why.contains("pre-scanned documents"), "{why}");
    }
}

/// Issue 29.6: an invalid key (here proposed from a multikey index) says why and shows no
/// performance figures; no index is advised where none can support the key.
#[test]
fn an_invalid_key_shows_why_and_no_figures() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("items.ndjson");
    let lines: Vec<String> = (0..2000).map(|i| format!(r#"{{"_id":{i},"items":[{{"sku":"s{}"}}],"c":"c{}"}}"#, i % 50, i % 300)).collect();
    std::fs::write(&docs, lines.join("\n") + "\n").unwrap();
    let indexes = dir.path().join("indexes.json");
    std::fs::write(&indexes, r#"[{"v":2,"key":{"_id":1},"name":"_id_"},{"v":2,"key":{"items.sku":1},"name":"items.sku_1"}]"#).unwrap();
    let (d, i) = (docs.display().to_string(), indexes.display().to_string());
    let o = run(&["analyze", "--docs", &d, "--indexes", &i, "--collection", "shop.items", "--color", "never"]);
    let table = String::from_utf8(o.stdout).unwrap();
    let row = table.lines().find(|l| l.contains("\"items.sku\": 1") && l.contains("invalid")).expect("the invalid key is ranked");
    let cells: Vec<&str> = row.split('┆').map(str::trim).collect();
    assert!(cells[4..].iter().all(|c| c.starts_with('-')), "{row}");
    let detail = &table[table.find("{\"items.sku\": 1}: 0 (invalid)").unwrap()..];
    let detail = &detail[..detail.find("\n\n").unwrap_or(detail.len())];
    assert!(detail.contains("MongoDB refuses such a shard key"), "{detail}");
    assert!(!detail.contains("cluster (") && !detail.contains("createIndex"), "{detail}");
}

/// Issue 30: a log copied while mongod writes it ends in half a line; that line is skipped,
/// counted and said in a note, and the rest is analysed as before.
#[test]
fn a_log_cut_mid_line_is_read_up_to_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let whole = std::fs::read(fixture("mongod.log")).unwrap();
    let cut = dir.path().join("mongod.log");
    std::fs::write(&cut, &whole[..whole.len() - 40]).unwrap();
    let docs = fixture("events.ndjson");
    let args = |log: &str| {
        run(&[
            "analyze",
            "--docs",
            &docs,
            "--queries",
            log,
            "--collection",
            "app.events",
            "--format",
            "json",
            "--key",
            "{projectId: 1, _id: 1}",
        ])
    };
    let (full, part) = (json_of(&args(&fixture("mongod.log"))), json_of(&args(&cut.display().to_string())));
    let q = &part["inputs"]["queries"];
    assert_eq!(q["skipped"]["a cut last line (the log was copied while being written)"], 1, "{q}");
    assert_eq!(q["recordsRead"], full["inputs"]["queries"]["recordsRead"]);
    let notes: Vec<&str> = part["notes"].as_array().unwrap().iter().filter_map(|n| n.as_str()).collect();
    assert!(notes.iter().any(|n| n.starts_with("the log's last line was cut")), "{notes:?}");
    // One operation fewer at most (the cut line's), the rest the same.
    let ops = |r: &Value| r["inputs"]["queries"]["queriesRead"].as_u64().unwrap();
    assert!(ops(&full) - ops(&part) <= 1, "{} against {}", ops(&part), ops(&full));
}

/// Issue 29.7: a mongodump of an empty collection (an empty .bson beside its metadata.json)
/// gets advice from its schema, not an error; an empty file without metadata is still refused.
#[test]
fn an_empty_dumped_collection_gets_advice_from_its_schema() {
    let dir = tempfile::tempdir().unwrap();
    let shop = dir.path().join("dump/shop");
    std::fs::create_dir_all(&shop).unwrap();
    std::fs::write(shop.join("orders.bson"), b"").unwrap();
    std::fs::write(
        shop.join("orders.metadata.json"),
        r#"{"options":{"validator":{"$jsonSchema":{"required":["customerId"]}}},"indexes":[{"v":2,"key":{"_id":1},"name":"_id_"},{"v":2,"key":{"customerId":1,"createdAt":1},"name":"customerId_1_createdAt_1"}],"collectionName":"orders"}"#,
    )
    .unwrap();
    let bson = shop.join("orders.bson").display().to_string();
    let r = json_of(&run(&["analyze", "--docs", &bson, "--format", "json"]));
    let keys: Vec<String> = r["candidates"].as_array().unwrap().iter().map(|c| c["key"].to_string()).collect();
    for want in [r#"{"_id":"hashed"}"#, r#"{"customerId":1,"createdAt":1}"#, r#"{"customerId":1}"#] {
        assert!(keys.contains(&want.to_string()), "{want} not in {keys:?}");
    }
    assert_eq!(r["recommendation"]["key"], serde_json::json!({"_id": "hashed"}));
    assert!(r["recommendation"]["caveats"][0].as_str().unwrap().starts_with("nothing was measured"));
    assert!(r["notes"].to_string().contains("holds no documents"), "{}", r["notes"]);
    std::fs::remove_file(shop.join("orders.metadata.json")).unwrap();
    let o = run(&["analyze", "--docs", &bson]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn each_members_log_is_counted_with_its_host() {
    // A second member's log: its startup line, then three slow queries on app.events
    // (the fixture's first three lines on the collection: counted by hand, 3).
    let dir = tempfile::tempdir().unwrap();
    let second = dir.path().join("db2.log");
    let startup = r#"{"t":{"$date":"2024-06-04T11:00:00.000Z"},"s":"I","c":"CONTROL","id":4615611,"ctx":"initandlisten","msg":"MongoDB starting","attr":{"pid":7,"port":27018,"dbPath":"/data/db","architecture":"64-bit","host":"db2"}}"#;
    let fixture_log = std::fs::read_to_string(fixture("mongod.log")).unwrap();
    let three: Vec<&str> =
        fixture_log.lines().filter(|l| l.contains(r#""id":51803"#) && l.contains(r#""ns":"app.events""#)).take(3).collect();
    std::fs::write(&second, format!("{startup}\n{}\n", three.join("\n"))).unwrap();
    let second = second.display().to_string();
    let v = json_of(&run(&[
        "analyze",
        "--queries",
        &fixture("mongod.log"),
        "--queries",
        &second,
        "--collection",
        "app.events",
        "--format",
        "json",
    ]));
    let members = v["inputs"]["queries"]["members"].as_array().unwrap();
    assert_eq!(members.len(), 2);
    assert_eq!(members[1]["host"], "db2:27018");
    assert_eq!(members[1]["operations"], 3);
    assert!(members[0].get("host").is_none(), "the fixture log has no startup line: {}", members[0]);
    let used = v["inputs"]["queries"]["queriesUsed"].as_u64().unwrap();
    assert_eq!(members[0]["operations"].as_u64().unwrap() + 3, used);
    assert!(v["notes"].to_string().contains("(db2:27018) 3 operations"), "{}", v["notes"]);
}
