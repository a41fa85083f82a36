//! The bad-input and fault matrix: each row an input or a fault, the exit code
//! it must give and a part of its one-line message. Every row, success or
//! failure, is also checked for what must never happen: a panic, a backtrace,
//! more than one line on stderr, output on stdout after an error, a raw control
//! character, or a password from any URI form.
//!
//! Rows that need a deployment run against a real mongod started with `--auth`.

mod common;

use common::{fixture, rt, Mode, Mongod};
use mongodb::bson::doc;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// What a row must end in.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    Code(i32),
    /// A raw (unencoded) URI the driver may accept or refuse: 0 or 2, never a leak or a crash.
    SuccessOrUserError,
    /// A gate: 0 or 1.
    Gate,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Stdout {
    Piped,
    /// A full device (`/dev/full`).
    Full,
    /// Closed by the reader before anything is written.
    Closed,
}

struct Row {
    name: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    stdin: Option<Vec<u8>>,
    /// A FIFO to create and the bytes a writer thread feeds into it.
    fifo: Option<(PathBuf, Vec<u8>)>,
    stdout: Stdout,
    expect: Expect,
    /// A part of the stderr line (errors) or of stdout (success); empty for none.
    needle: String,
    /// Strings that must appear nowhere (passwords, in every form).
    secrets: Vec<String>,
}

fn row(name: &str, args: &[&str], expect: Expect, needle: &str) -> Row {
    Row {
        name: name.to_string(),
        args: args.iter().map(|s| s.to_string()).collect(),
        env: vec![],
        stdin: None,
        fifo: None,
        stdout: Stdout::Piped,
        expect,
        needle: needle.to_string(),
        secrets: vec![],
    }
}

/// Run one row; the list of what went wrong (empty when the row holds).
fn run(r: &Row) -> Vec<String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_shardkey"));
    cmd.args(&r.args).env_remove("MONGODB_URI").env_remove("GITHUB_ACTIONS").env_remove("GITHUB_STEP_SUMMARY");
    for (k, v) in &r.env {
        cmd.env(k, v);
    }
    cmd.stdin(if r.stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    cmd.stderr(Stdio::piped());
    match r.stdout {
        Stdout::Piped | Stdout::Closed => cmd.stdout(Stdio::piped()),
        Stdout::Full => cmd.stdout(std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full")),
    };
    let feeder = r.fifo.clone().map(|(path, bytes)| {
        assert!(Command::new("mkfifo").arg(&path).status().unwrap().success(), "mkfifo");
        std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            let _ = f.write_all(&bytes);
        })
    });
    let mut child = cmd.spawn().expect("run shardkey");
    if let Some(bytes) = &r.stdin {
        let mut sin = child.stdin.take().unwrap();
        let bytes = bytes.clone();
        std::thread::spawn(move || {
            let _ = sin.write_all(&bytes);
        });
    }
    if r.stdout == Stdout::Closed {
        drop(child.stdout.take());
    }
    let o = child.wait_with_output().unwrap();
    if let Some(f) = feeder {
        let _ = f.join();
    }
    let (out, err) = (String::from_utf8_lossy(&o.stdout).to_string(), String::from_utf8_lossy(&o.stderr).to_string());
    let code = o.status.code().unwrap_or(-1);
    let mut wrong = Vec::new();
    let ok_code = match r.expect {
        Expect::Code(c) => code == c,
        Expect::SuccessOrUserError => code == 0 || code == 2,
        Expect::Gate => code == 0 || code == 1,
    };
    if !ok_code {
        wrong.push(format!("exit {code}, expected {:?}", r.expect));
    }
    for bad in ["panicked", "RUST_BACKTRACE", "stack backtrace", "internal error"] {
        if err.contains(bad) || out.contains(bad) {
            wrong.push(format!("'{bad}' printed"));
        }
    }
    if o.stderr.contains(&0x1b) || o.stdout.contains(&0x1b) {
        wrong.push("a raw ESC control character reached the terminal".into());
    }
    for s in &r.secrets {
        if s.len() >= 3 && (out.contains(s.as_str()) || err.contains(s.as_str())) {
            wrong.push(format!("secret '{s}' printed"));
        }
    }
    if code == 2 || code == 3 {
        if err.trim_end().lines().count() != 1 {
            wrong.push(format!("{} lines on stderr", err.trim_end().lines().count()));
        }
        if !out.is_empty() && r.stdout == Stdout::Piped {
            wrong.push("output on stdout after an error".into());
        }
    }
    if code == 0 && !err.is_empty() {
        wrong.push("stderr on success".into());
    }
    if !r.needle.is_empty() && !out.contains(&r.needle) && !err.contains(&r.needle) {
        wrong.push(format!("'{}' not found", r.needle));
    }
    wrong.into_iter().map(|w| format!("{}: {w}\n    stderr: {}", r.name, err.trim_end())).collect()
}

fn run_all(rows: &[Row]) {
    let failures: Vec<String> = rows.iter().flat_map(run).collect();
    assert!(failures.is_empty(), "{} of {} rows failed:\n{}", failures.len(), rows.len(), failures.join("\n"));
}

/// A BSON document nested `levels` deep, written by hand (the bson crate would recurse).
fn deep_bson(levels: usize) -> Vec<u8> {
    // Level i (from the outside): len, 0x03 "a" 0x00, <inner>, 0x00; the innermost is {} (5 bytes).
    let mut lens = vec![5usize];
    for _ in 0..levels {
        lens.push(lens.last().unwrap() + 4 + 3 + 1);
    }
    let mut b = Vec::new();
    for l in lens.iter().rev().take(levels) {
        b.extend_from_slice(&(*l as i32).to_le_bytes());
        b.extend_from_slice(&[0x03, b'a', 0]);
    }
    b.extend_from_slice(&5i32.to_le_bytes());
    b.push(0);
    b.extend(std::iter::repeat_n(0u8, levels));
    b
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn offline_inputs_and_faults() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str, content: &[u8]| -> String {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        path.display().to_string()
    };
    let ok = p("ok.ndjson", b"{\"a\": 1, \"b\": 2}\n{\"a\": 2, \"b\": 3}\n");
    let events = fixture("events.ndjson");
    let log = fixture("mongod.log");
    let events_bytes = std::fs::read(&events).unwrap();
    let log_bytes = std::fs::read(&log).unwrap();
    let d = dir.path().display().to_string();
    let deep = deep_bson(5_000);
    let deep_docs = p("deep.bson", &deep);
    let deep_profile = p("deep_profile.bson", &deep);
    let mut bson_ok = Vec::new();
    doc! {"a": 1, "b": "x"}.to_writer(&mut bson_ok).unwrap();
    let mut truncated = bson_ok.clone();
    truncated.truncate(bson_ok.len() - 3);
    let mut corrupt_gz = gz(&events_bytes[..20_000]);
    let n = corrupt_gz.len();
    corrupt_gz[n / 2..n / 2 + 40].fill(0xAB);
    // mongoexport writes a control character in a field name as a JSON escape.
    // Distinct values: the field is proposed as a high-cardinality candidate and printed.
    let esc_field: String = (0..50).map(|i| format!("{{\"\\u001b[31mred\": {i}, \"x\": 2}}\n")).collect();
    let big_in = {
        let values: Vec<String> = (0..1_000_000).map(|i| i.to_string()).collect();
        format!(
            "{{\"t\":{{\"$date\":\"2024-01-01T00:00:00Z\"}},\"s\":\"I\",\"c\":\"COMMAND\",\"id\":51803,\"msg\":\"Slow query\",\"attr\":{{\"type\":\"command\",\"ns\":\"d.c\",\"command\":{{\"find\":\"c\",\"filter\":{{\"a\":{{\"$in\":[{}]}}}},\"$db\":\"d\"}}}}}}\n",
            values.join(",")
        )
    };
    let key_deep = format!("{}1{}", "{a: ".repeat(20_000), "}".repeat(20_000));
    let coll_deep = format!("{{locale: \"en\", x: {}1{}}}", "[".repeat(20_000), "]".repeat(20_000));
    let policy_deep = p("deep.toml", format!("[[collection]]\nnamespace = \"d.c\"\nkey = '{key_deep}'\n").as_bytes());
    let mut json_array = b"[\n".to_vec();
    for (i, l) in events_bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()).enumerate() {
        if i > 0 {
            json_array.extend_from_slice(b",\n");
        }
        json_array.extend_from_slice(l);
    }
    json_array.extend_from_slice(b"\n]\n");
    let mut bom = vec![0xEF, 0xBB, 0xBF];
    bom.extend_from_slice(&events_bytes);
    let fifo = dir.path().join("docs.fifo");
    let a = Expect::Code;

    let mut rows = vec![
        // a namespace the logs never name, one letter from one they name often: refused, as live
        // (1,469: the fixture's operations on app.events, its queriesUsed below)
        row(
            "queries: a misspelt --collection",
            &["analyze", "--docs", &events, "--queries", &log, "--collection", "app.event"],
            a(2),
            "app.event: the query logs hold no operation on it, and 1,469 on app.events: did you mean app.events?",
        ),
        // documents
        row("docs: a mongod log", &["analyze", "--docs", &log, "--key", "{a: 1}"], a(2), "is a mongod log line (t, s, c, id, ctx, msg), not a document: give the log to --queries"),
        row("docs: cut short", &["analyze", "--docs", &p("cut.ndjson", &events_bytes[..3000]), "--key", "{_id: 1}"], a(2), "was the file cut short?"),
        row(
            "docs: --total-docs below the documents read",
            &["analyze", "--docs", &events, "--key", "{_id: 1}", "--total-docs", "10"],
            a(0),
            "--total-docs 10 is below the 10,000 documents read",
        ),
        row("docs: missing file", &["analyze", "--docs", &format!("{d}/nope.json")], a(2), "cannot open"),
        row("docs: a directory", &["analyze", "--docs", &d, "--key", "{a: 1}"], a(2), "is a directory"),
        row("docs: empty file", &["analyze", "--docs", &p("empty.json", b""), "--key", "{a: 1}"], a(2), "is empty"),
        row("docs: blank file", &["analyze", "--docs", &p("blank.json", b"\n \n\t\n"), "--key", "{a: 1}"], a(2), "is empty"),
        row(
            "docs: malformed line 3",
            &["analyze", "--docs", &p("bad.ndjson", b"{\"a\":1}\n{\"a\":2}\n{\"a\": oops}\n"), "--key", "{a: 1}"],
            a(2),
            "line 3",
        ),
        row("docs: a scalar line", &["analyze", "--docs", &p("scalar.ndjson", b"{\"a\":1}\n42\n"), "--key", "{a: 1}"], a(2), "line 2"),
        row("docs: not UTF-8", &["analyze", "--docs", &p("latin1.ndjson", b"{\"a\": \"caf\xe9\"}\n"), "--key", "{a: 1}"], a(2), "line 1"),
        row("docs: truncated BSON", &["analyze", "--docs", &p("trunc.bson", &truncated), "--key", "{a: 1}"], a(2), "truncated BSON"),
        row("docs: not BSON", &["analyze", "--docs", &p("junk.bson", b"\xff\xff\xff\x7fjunk"), "--key", "{a: 1}"], a(2), "not BSON"),
        row("docs: BSON nested 5,000 levels", &["analyze", "--docs", &deep_docs, "--key", "{a: 1}"], a(2), "nested more than 100 levels"),
        row(
            "docs: corrupt gzip",
            &["analyze", "--docs", &p("corrupt.ndjson.gz", &corrupt_gz), "--key", "{a: 1}"],
            a(2),
            "corrupt.ndjson.gz",
        ),
        row(
            "docs: JSON array unclosed",
            &["analyze", "--docs", &p("open.json", b"[{\"a\": 1},\n{\"a\": 2}"), "--key", "{a: 1}"],
            a(2),
            "not closed",
        ),
        row(
            "docs: JSON array malformed element",
            &["analyze", "--docs", &p("badarr.json", b"[{\"a\": 1},\n{\"a\": }]"), "--key", "{a: 1}"],
            a(2),
            "line 2",
        ),
        row(
            "docs: JSON array of scalars",
            &["analyze", "--docs", &p("nums.json", b"[1, 2, 3]"), "--key", "{a: 1}"],
            a(2),
            "array element 1",
        ),
        row(
            "docs: junk after the array",
            &["analyze", "--docs", &p("after.json", b"[{\"a\": 1}] x"), "--key", "{a: 1}"],
            a(2),
            "after the array",
        ),
        row(
            "docs: arrays in the key field",
            &["analyze", "--docs", &p("arr.ndjson", b"{\"a\": [1]}\n{\"a\": 2}\n"), "--key", "{a: 1}"],
            a(2),
            "array in 'a'",
        ),
        row(
            "docs: a JSON array streams",
            &["analyze", "--docs", &p("events.json", &json_array), "--key", "{userId: 1}", "--format", "json"],
            a(0),
            "\"numDocsRead\": 10000",
        ),
        row(
            "docs: NDJSON with a byte-order mark",
            &["analyze", "--docs", &p("bom.ndjson", &bom), "--key", "{userId: 1}", "--format", "json"],
            a(0),
            "\"numDocsRead\": 10000",
        ),
        row(
            "docs: BSON without a .bson name",
            &["analyze", "--docs", &p("dump.dat", &bson_ok), "--key", "{a: 1}", "--format", "json"],
            a(0),
            "\"numDocsRead\": 1",
        ),
        row(
            "docs: gzip of NDJSON",
            &["analyze", "--docs", &p("events.ndjson.gz", &gz(&events_bytes)), "--key", "{userId: 1}", "--format", "json"],
            a(0),
            "\"numDocsRead\": 10000",
        ),
        row(
            "docs: control characters in field names",
            &["analyze", "--docs", &p("esc.ndjson", esc_field.as_bytes())],
            a(0),
            "\\u{1b}[31mred",
        ),
        // keys, collations, namespaces, flags
        row("key: descending", &["analyze", "--docs", &ok, "--key", "{a: -1}"], a(2), "descending"),
        row("key: 2d", &["analyze", "--docs", &ok, "--key", "{a: \"2d\"}"], a(2), "no other index types"),
        row("key: two hashed", &["analyze", "--docs", &ok, "--key", "{a: \"hashed\", b: \"hashed\"}"], a(2), "at most one field"),
        row("key: unterminated", &["analyze", "--docs", &ok, "--key", "{a: 1"], a(2), "key {a: 1"),
        row("key: not an object", &["analyze", "--docs", &ok, "--key", "a"], a(2), "key a"),
        row("key: empty", &["analyze", "--docs", &ok, "--key", "{}"], a(2), "at least one field"),
        row("key: overlapping fields", &["analyze", "--docs", &ok, "--key", "{a: 1, a.b: 1}"], a(2), "overlap"),
        row("key: a $ field", &["analyze", "--docs", &ok, "--key", "{$a: 1}"], a(2), "may not start with '$'"),
        row("key: nested 20,000 levels", &["analyze", "--docs", &ok, "--key", &key_deep], a(2), "nested more than 100 levels"),
        row("key: a non-ASCII character", &["analyze", "--docs", &ok, "--key", "{a: 1 é}"], a(2), "'é' at character 7"),
        row("key: control characters", &["analyze", "--docs", &ok, "--key", "{\"a\u{1b}[2J\": -1}"], a(2), "\\u{1b}[2J"),
        // Found by the key_syntax fuzz target: a quote in a field name printed unescaped.
        // (No document has that field: refused, the key printed back escaped.)
        row(
            "key: a quote in a field name prints back escaped",
            &["analyze", "--docs", &ok, "--key", "{\"c\\\"}c\": 1}"],
            a(2),
            "{\"c\\\"}c\": 1}",
        ),
        row(
            "key: a mistyped field",
            &["analyze", "--docs", &fixture("events.ndjson"), "--key", "{type: 1}", "--key", "{projctId: 1}"],
            a(2),
            "key {projctId: 1}: 10,000 of 10,000 sampled documents lack a key field, and none of the first 1,000 has 'projctId'; did you mean 'projectId'?",
        ),
        row("key: a field no document has", &["analyze", "--docs", &ok, "--key", "{zzz: 1}"], a(2), "none of the first 2 has 'zzz'"),
        row("collation: no locale", &["analyze", "--docs", &ok, "--key", "{a: 1}", "--collation", "{strength: 2}"], a(2), "locale"),
        row("collation: not an object", &["analyze", "--docs", &ok, "--key", "{a: 1}", "--collation", "[1]"], a(2), "expected an object"),
        row(
            "collation: nested 20,000 levels",
            &["analyze", "--docs", &ok, "--key", "{a: 1}", "--collation", &coll_deep],
            a(2),
            "nested more than 100 levels",
        ),
        row(
            "collection: not db.coll",
            &["analyze", "--docs", &ok, "--key", "{a: 1}", "--collection", "nodot"],
            a(2),
            "expected db.collection",
        ),
        row("flag: --chunk-size 0", &["analyze", "--docs", &ok, "--chunk-size", "0"], a(2), "--chunk-size"),
        row("flag: --chunk-size overflowing", &["analyze", "--docs", &ok, "--chunk-size", "17592186044416"], a(2), "1 to 1024 MiB"),
        row("flag: --sample-size 0", &["analyze", "--docs", &ok, "--sample-size", "0"], a(2), "--sample-size"),
        row("flag: --shards 0", &["analyze", "--docs", &ok, "--shards", "0"], a(2), "--shards"),
        row("flag: --shards 10001", &["analyze", "--docs", &ok, "--shards", "10001"], a(2), "--shards"),
        row("flag: --fail-under 101", &["analyze", "--docs", &ok, "--fail-under", "101"], a(2), "--fail-under"),
        row("flag: unknown", &["analyze", "--docs", &ok, "--bogus"], a(2), "--bogus"),
        row("flag: --docs and --uri", &["analyze", "--docs", &ok, "--uri", "mongodb://h"], a(2), "cannot be used with"),
        row("flag: no input", &["analyze", "--key", "{a: 1}"], a(2), "give --docs FILE, --uri URI"),
        row(
            "queries only: a log with no operation on the collection",
            &["analyze", "--queries", &log, "--collection", "x.y"],
            a(2),
            "nothing to analyse without documents",
        ),
        row(
            "queries: a data export given as a query log",
            &["analyze", "--queries", &ok, "--collection", "x.y"],
            a(2),
            "ok.ndjson: not a query log: none of its 2 records is a mongod log line, a profiler document or a sampled query",
        ),
        row(
            "queries: a text file given as a query log",
            &["analyze", "--docs", &ok, "--queries", &p("notes.md", b"# Notes\nThe orders [by customer] are slow.\nSee the log.\n"), "--collection", "x.y"],
            a(2),
            "notes.md: not a query log: none of its 3 records is a mongod log line, a profiler document or a sampled query; it looks like text (documentation?)",
        ),
        row(
            "queries: a Python file given as a query log",
            &["workload", "--queries", &p("gen.py", b"import pymongo\nc = pymongo.MongoClient()\nprint(c)\n")],
            a(2),
            "gen.py: not a query log: none of its 3 records is a mongod log line, a profiler document or a sampled query; it looks like Python source",
        ),
        row(
            "queries: a TOML file given as a query log",
            &["workload", "--queries", &p("Cargo.toml", b"[package]\nname = \"x\"\n")],
            a(2),
            "Cargo.toml: not a JSON array: it opens with '[' but its first element is not JSON",
        ),
        row(
            "flag: --uri without --collection",
            &["analyze", "--uri", "mongodb://127.0.0.1:1/", "--key", "{a: 1}"],
            a(2),
            "--uri needs --collection",
        ),
        row(
            "flag: --queries profile offline",
            &["analyze", "--docs", &ok, "--queries", "profile", "--key", "{a: 1}"],
            a(2),
            "reads from a live deployment",
        ),
        row(
            "flag: workload --queries profile (the live profiler is analyze's and plan's)",
            &["workload", "--queries", "profile"],
            a(2),
            "workload reads files: --queries profile is the live source of analyze and plan (with --uri); export it first (mongoexport -d DB -c system.profile -o profile.json) and give the file",
        ),
        // query logs
        // A lone malformed line is the file's last: a cut line (a log copied while written),
        // skipped with a note; a file of malformed lines is refused, naming the first.
        row(
            "log: malformed JSON line",
            &["analyze", "--docs", &ok, "--queries", &p("bad.log", b"{\"t\": 1, \"id\": 51803, \"msg\": \"Slow query\"\n")],
            a(0),
            "the log's last line was cut",
        ),
        row(
            "log: a file of malformed JSON lines",
            &["analyze", "--docs", &ok, "--queries", &p("bad2.log", "{\"t\": 1, \"id\": 51803, \"msg\": \"Slow query\"\n".repeat(150).as_bytes())],
            a(2),
            "149 of 150 lines are malformed (the first, line 1: malformed JSON",
        ),
        row("log: a directory", &["analyze", "--docs", &ok, "--queries", &d, "--key", "{a: 1}"], a(2), "is a directory"),
        row("log: two namespaces", &["analyze", "--docs", &ok, "--queries", &log, "--key", "{a: 1}"], a(2), "--collection"),
        row(
            "log: BSON profile nested 5,000 levels",
            &["analyze", "--docs", &ok, "--queries", &deep_profile, "--key", "{a: 1}"],
            a(2),
            "nested more than 100 levels",
        ),
        row(
            "log: $in with 1,000,000 values",
            &[
                "analyze",
                "--docs",
                &p("one.ndjson", b"{\"a\": 1}\n"),
                "--queries",
                &p("in.log", big_in.as_bytes()),
                "--key",
                "{a: 1}",
                "--format",
                "json",
            ],
            a(0),
            "\"percentageOfMultiShardReads\": 100.0",
        ),
        row(
            "log: a legacy text operation is read",
            &[
                "analyze",
                "--docs",
                &ok,
                "--queries",
                &p("legacy.log", b"2019-01-01T00:00:00.000+0000 I COMMAND [conn1] command d.c command: find { find: \"c\" } 120ms\n"),
                "--key",
                "{a: 1}",
                "--format",
                "json",
            ],
            a(0),
            "\"queriesRead\": 1",
        ),
        row(
            "log: other legacy lines are counted, not lost",
            &[
                "analyze",
                "--docs",
                &ok,
                "--queries",
                &p("legacy2.log", b"2019-01-01T00:00:00.000+0000 I NETWORK [listener] connection accepted\n"),
                "--key",
                "{a: 1}",
                "--format",
                "json",
            ],
            a(0),
            "legacy text log lines that are not operations",
        ),
        row(
            "log: a cut legacy object is counted, not lost",
            &[
                "analyze",
                "--docs",
                &ok,
                "--queries",
                &p(
                    "legacy3.log",
                    b"2019-01-01T00:00:00.000+0000 I COMMAND [conn1] command d.c command: find { find: \"c\", filter: { a: ... } 120ms\n",
                ),
                "--key",
                "{a: 1}",
                "--format",
                "json",
            ],
            a(0),
            "cannot be read",
        ),
        // policy files
        row("policy: missing", &["check", "--docs", &ok, "--policy", &format!("{d}/absent.toml")], a(2), "cannot read policy"),
        row("policy: not TOML", &["check", "--docs", &ok, "--policy", &p("bad.toml", b"[[collection\n")], a(2), "line 1"),
        row(
            "policy: unknown rule",
            &[
                "check",
                "--docs",
                &ok,
                "--policy",
                &p("unk.toml", b"[defaults]\nmin_scor = 5\n[[collection]]\nnamespace = \"d.c\"\nkey = \"{a: 1}\"\n"),
            ],
            a(2),
            "unknown field `min_scor`",
        ),
        row(
            "policy: wrong type",
            &[
                "check",
                "--docs",
                &ok,
                "--policy",
                &p("type.toml", b"[defaults]\nmin_score = \"high\"\n[[collection]]\nnamespace = \"d.c\"\nkey = \"{a: 1}\"\n"),
            ],
            a(2),
            "field min_score",
        ),
        row("policy: key nested 20,000 levels", &["check", "--docs", &ok, "--policy", &policy_deep], a(2), "nested more than 100 levels"),
        row(
            "policy: no collection",
            &["check", "--docs", &ok, "--policy", &p("none.toml", b"[defaults]\nmin_score = 5\n")],
            a(2),
            "no [[collection]]",
        ),
        row(
            "policy: a gate",
            &[
                "check",
                "--docs",
                &ok,
                "--policy",
                &p("gate.toml", b"[[collection]]\nnamespace = \"d.c\"\nkey = \"{a: 1}\"\nmin_score = 99\n"),
            ],
            a(1),
            "FAIL",
        ),
        // standard streams
        Row {
            stdout: Stdout::Full,
            ..row("stdout: a full device", &["analyze", "--docs", &events, "--key", "{userId: 1}"], a(2), "No space left on device")
        },
        Row {
            stdout: Stdout::Closed,
            ..row(
                "stdout: closed by the reader",
                &["analyze", "--docs", &events, "--queries", &log, "--collection", "app.events", "--format", "json"],
                a(0),
                "",
            )
        },
        Row {
            stdin: Some(events_bytes.clone()),
            ..row(
                "stdin: documents from '-'",
                &["analyze", "--docs", "-", "--key", "{userId: 1}", "--format", "json"],
                a(0),
                "\"numDocsRead\": 10000",
            )
        },
        Row {
            stdin: Some(log_bytes.clone()),
            ..row(
                "stdin: a log from /dev/stdin loses nothing",
                &[
                    "analyze",
                    "--docs",
                    &events,
                    "--queries",
                    "/dev/stdin",
                    "--collection",
                    "app.events",
                    "--key",
                    "{userId: 1}",
                    "--format",
                    "json",
                ],
                a(0),
                "\"queriesUsed\": 1469",
            )
        },
        Row {
            fifo: Some((fifo.clone(), events_bytes.clone())),
            ..row(
                "fifo: documents through a named pipe",
                &["analyze", "--docs", &fifo.display().to_string(), "--key", "{userId: 1}", "--format", "json"],
                a(0),
                "\"numDocsRead\": 10000",
            )
        },
        // offline runs never touch --config-uri, whatever its password holds
        row(
            "config-uri offline: raw % and a multi-byte character",
            &["analyze", "--docs", &ok, "--key", "{a: 1}", "--config-uri", "mongodb://admin:Pw%€uro99@127.0.0.1:1/"],
            a(0),
            "",
        ),
    ];
    rows.last_mut().unwrap().secrets = vec!["Pw%€uro99".into(), "uro99".into()];
    // The same file read as a file gives the same count as through stdin (checked by the needle above).
    assert!(rows.len() >= 60, "{} rows", rows.len());
    run_all(&rows);
}

/// Percent-encode every byte outside the unreserved set (RFC 3986).
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn no_uri_form_leaks_a_password() {
    let m = Mongod::start(Mode::StandaloneAuth);
    let passwords = ["Pw%€uro99", "Sec/ret11", "p@ss:w0rd", "Ünïcødé-Paß", "S3cret-Pa55word", "50%off%41"];
    let c = m.root_client();
    rt().block_on(async {
        for (i, pw) in passwords.iter().enumerate() {
            c.database("admin")
                .run_command(doc! {"createUser": format!("u{i}"), "pwd": *pw, "roles": [{"role": "read", "db": "app"}]})
                .await
                .unwrap();
        }
        let docs: Vec<_> = (0..500).map(|i| doc! {"k": i % 50, "v": i}).collect();
        c.database("app").collection("c").insert_many(docs).await.unwrap();
    });
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("p.toml");
    std::fs::write(&policy, "[[collection]]\nnamespace = \"app.c\"\nkey = \"{k: 1}\"\nmin_score = 1\n").unwrap();
    let policy = policy.display().to_string();
    let dead = common::free_port();
    let mut rows = Vec::new();
    for (i, pw) in passwords.iter().enumerate() {
        let enc = encode(pw);
        let raw_uri = format!("mongodb://u{i}:{pw}@127.0.0.1:{}/?authSource=admin", m.port);
        let uri = format!("mongodb://u{i}:{enc}@127.0.0.1:{}/?authSource=admin", m.port);
        let wrong = format!("mongodb://u{i}:{}@127.0.0.1:{}/?authSource=admin", encode(&format!("{pw}x")), m.port);
        let dead_uri = format!("mongodb://u{i}:{enc}@127.0.0.1:{dead}/?authSource=admin");
        let secrets = vec![pw.to_string(), enc.clone(), format!("{pw}x")];
        let base = ["--collection", "app.c", "--key", "{k: 1}", "--server-selection-timeout", "2"];
        let mut add = |name: &str, args: Vec<String>, env: Vec<(String, String)>, expect: Expect, needle: &str| {
            let mut r = row(&format!("password {i} ({pw}): {name}"), &[], expect, needle);
            r.args = args;
            r.env = env;
            r.secrets = secrets.clone();
            rows.push(r);
        };
        let with = |first: &[&str], uri: &str| -> Vec<String> {
            first
                .iter()
                .map(|s| s.to_string())
                .chain(["--uri".to_string(), uri.to_string()])
                .chain(base.iter().map(|s| s.to_string()))
                .collect()
        };
        add("raw in --uri", with(&["analyze"], &raw_uri), vec![], Expect::SuccessOrUserError, "");
        add(
            "encoded in --uri, JSON",
            [with(&["analyze"], &uri), vec!["--format".into(), "json".into()]].concat(),
            vec![],
            Expect::Code(0),
            "\"numDocsRead\": 500",
        );
        add("encoded in --uri, table", with(&["analyze"], &uri), vec![], Expect::Code(0), "{k: 1}");
        add(
            "encoded in MONGODB_URI",
            ["analyze", "--collection", "app.c", "--key", "{k: 1}"].iter().map(|s| s.to_string()).collect(),
            vec![("MONGODB_URI".into(), uri.clone())],
            Expect::Code(0),
            "{k: 1}",
        );
        add(
            "raw in MONGODB_URI",
            ["analyze", "--collection", "app.c", "--key", "{k: 1}", "--server-selection-timeout", "2"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            vec![("MONGODB_URI".into(), raw_uri.clone())],
            Expect::SuccessOrUserError,
            "",
        );
        add(
            "check --uri",
            ["check", "--uri", &uri, "--collection", "app.c", "--server-selection-timeout", "2", "--policy", &policy]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            vec![],
            Expect::Gate,
            "app.c",
        );
        add("wrong password", with(&["analyze"], &wrong), vec![], Expect::Code(2), "authentication failed");
        add("unreachable host", with(&["analyze"], &dead_uri), vec![], Expect::Code(2), "refused the connection");
        add(
            "raw in --config-uri",
            [with(&["analyze"], &uri), vec!["--config-uri".into(), raw_uri.clone()]].concat(),
            vec![],
            Expect::SuccessOrUserError,
            "",
        );
    }
    // The automatic query-log probe: a read-only user may not read system.profile; the run goes on and says so.
    let uri0 = format!("mongodb://u4:{}@127.0.0.1:{}/?authSource=admin", encode(passwords[4]), m.port);
    let mut r = row("read role: no system.profile, a note instead of a failure", &[], Expect::Code(0), "");
    r.args =
        ["analyze", "--uri", &uri0, "--collection", "app.c", "--key", "{k: 1}", "--format", "json"].iter().map(|s| s.to_string()).collect();
    r.secrets = vec![passwords[4].to_string()];
    rows.push(r);
    run_all(&rows);
    // And the note names what was not read.
    let o = Command::new(env!("CARGO_BIN_EXE_shardkey"))
        .args(["analyze", "--uri", &uri0, "--collection", "app.c", "--key", "{k: 1}", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains(&format!("system.profile of 127.0.0.1:{} (standalone) not read", m.port)) && notes.contains("not authorized"),
        "{notes}"
    );
}

/// The server killed, or stopped with SIGSTOP, in the middle of a read: one line,
/// exit 2, within the deadline (maxTimeMS + 5 s), nothing on stdout.
#[test]
fn the_server_dies_or_hangs_mid_read() {
    let m = Mongod::start(Mode::ReplicaSet);
    let c = m.client();
    rt().block_on(async {
        let coll = c.database("app").collection("big");
        for chunk in 0..20 {
            let docs: Vec<_> = (0..10_000).map(|i| doc! {"k": chunk * 10_000 + i, "pad": "x".repeat(200)}).collect();
            coll.insert_many(docs).await.unwrap();
        }
        // A profile to read.
        c.database("app").run_command(doc! {"profile": 2, "slowms": 0}).await.unwrap();
        for i in 0..200 {
            let _ = coll.find_one(doc! {"k": i}).await.unwrap();
        }
    });
    let uri = m.uri();
    let pid = m.pid();
    // Whether shardkey has a cursor open on `ns` (a read under way), asked of the server.
    let reading = |ns: &str| -> bool {
        rt().block_on(async {
            let pipeline = vec![
                doc! {"$currentOp": {"idleCursors": true, "allUsers": true}},
                doc! {"$match": {"ns": ns, "$or": [{"type": "idleCursor"}, {"command.getMore": {"$exists": true}}, {"cursor": {"$exists": true}}]}},
            ];
            let Ok(mut cur) = c.database("admin").aggregate(pipeline).await else { return false };
            cur.advance().await.unwrap_or(false)
        })
    };
    // Start shardkey, signal the server once it is reading `ns` (not at a guessed time: a
    // fast build may finish first). A run that ended before its read was caught is run again.
    let run = |stop: &str, ns: &str, args: &[&str]| -> (i32, String, String, std::time::Duration) {
        for _attempt in 0..10 {
            let start = std::time::Instant::now();
            let mut child =
                Command::new(env!("CARGO_BIN_EXE_shardkey")).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
            let caught = loop {
                if child.try_wait().unwrap().is_some() {
                    break false;
                }
                if reading(ns) {
                    break true;
                }
            };
            if !caught {
                let _ = child.wait_with_output();
                continue;
            }
            assert!(Command::new("kill").arg(format!("-{stop}")).arg(pid.to_string()).status().unwrap().success());
            let o = child.wait_with_output().unwrap();
            return (
                o.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&o.stdout).into(),
                String::from_utf8_lossy(&o.stderr).into(),
                start.elapsed(),
            );
        }
        panic!("ten runs finished before their read of {ns} could be caught");
    };
    // SIGSTOP while the whole collection streams; resumed afterwards.
    let args = ["analyze", "--uri", &uri, "--collection", "app.big", "--key", "{k: 1}", "--sample-size", "200000", "--max-time-ms", "2000"];
    let (code, out, err, took) = run("STOP", "app.big", &args);
    assert!(Command::new("kill").arg("-CONT").arg(pid.to_string()).status().unwrap().success());
    assert_eq!(code, 2, "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("no answer within 7 s"), "{err}");
    assert!(out.is_empty());
    assert!(took < std::time::Duration::from_secs(20), "{took:?}");
    // SIGSTOP while reading the profile (no --key: proposals read it first).
    let args = ["analyze", "--uri", &uri, "--collection", "app.big", "--queries", "profile", "--max-time-ms", "1000"];
    let (code, out, err, _) = run("STOP", "app.system.profile", &args);
    assert!(Command::new("kill").arg("-CONT").arg(pid.to_string()).status().unwrap().success());
    assert_eq!(code, 2, "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(out.is_empty());
    // Killed while sampling: the connection drops.
    let args = [
        "analyze",
        "--uri",
        &uri,
        "--collection",
        "app.big",
        "--key",
        "{k: 1}",
        "--sample-size",
        "200000",
        "--server-selection-timeout",
        "2",
    ];
    let (code, out, err, took) = run("KILL", "app.big", &args);
    assert_eq!(code, 2, "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(out.is_empty());
    assert!(took < std::time::Duration::from_secs(20), "{took:?}");
}
