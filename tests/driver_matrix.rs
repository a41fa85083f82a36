//! The five-driver matrix: the same counted workload (tests/drivers/: pymongo, Node.js, Rust,
//! Java, Go; each in its own database of one real mongod 6.0.5 two-member replica set, profiled
//! at level 2 with every operation logged) read back by shardkey from every source a DBA has:
//! the primary's log, an export of `<db>.system.profile` (JSON lines as mongoexport writes,
//! BSON as mongodump does) and the live profiler. For each driver and source, `workload` must
//! count per collection and command what the program says it sent, and `plan` must find
//! exactly the transactions it committed.
//!
//! Expected numbers come from the programs' own counters, checked first against the server:
//! the profiler's entries per collection and command (one per find, aggregate, count, distinct,
//! findAndModify and insert command, one per update or delete statement; getMores apart), and
//! serverStatus `transactions.totalCommitted` around each program. Never from shardkey.
//!
//! The outside drivers come from scripts/drivers.sh (SHARDKEY_DRIVERS; scripts/test.sh sets it).
//! Every mismatch of every driver and source is listed before the test fails.

mod common;
#[path = "drivers/workload.rs"]
mod rust_workload;

use common::{block, rt, shardkey, ReplSet};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, Document};
use mongodb::Client;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Per collection, per command: operations as the server receives them.
type Counts = BTreeMap<String, BTreeMap<String, u64>>;

/// The drivers, each with its own database (so one log holds them all).
const DRIVERS: [(&str, &str); 5] = [("python", "m_py"), ("node", "m_node"), ("rust", "m_rust"), ("java", "m_java"), ("go", "m_go")];

/// One program's run: what it says it sent, and what the server says it committed.
struct Run {
    driver: &'static str,
    db: &'static str,
    version: String,
    counts: Counts,
    transactions: u64,
    note: Option<String>,
}

/// Where scripts/drivers.sh put the outside drivers; the test fails without it.
fn drivers_dir() -> PathBuf {
    let d = std::env::var("SHARDKEY_DRIVERS")
        .expect("SHARDKEY_DRIVERS is not set: run scripts/drivers.sh (scripts/test.sh does) and export its output");
    PathBuf::from(d)
}

/// The command line running an outside driver's program, or why that driver is left out.
fn program(driver: &str, uri: &str, db: &str) -> Result<Command, String> {
    let dir = drivers_dir().join(driver);
    if let Ok(why) = std::fs::read_to_string(dir.join("SKIPPED")) {
        return Err(why.trim().to_string());
    }
    let src = common::root().join("tests/drivers");
    let mut c = match driver {
        "python" => {
            let mut c = Command::new("python3");
            c.arg(src.join("workload.py")).env("PYTHONPATH", &dir);
            c
        }
        "node" => {
            let mut c = Command::new("node");
            c.arg(src.join("workload.js")).env("NODE_PATH", dir.join("node_modules"));
            c
        }
        "go" => Command::new(dir.join("workload-go")),
        "java" => {
            let cp = std::fs::read_to_string(dir.join("classpath")).expect("java/classpath: run scripts/drivers.sh");
            let mut c = Command::new("java");
            c.arg("-cp").arg(cp.trim()).arg("Workload");
            c
        }
        _ => unreachable!(),
    };
    c.arg(uri).arg(db);
    Ok(c)
}

fn parse_counts(v: &Value) -> Counts {
    serde_json::from_value(v["collections"].clone()).unwrap_or_else(|e| panic!("counters {v}: {e}"))
}

fn committed(admin: &Client) -> u64 {
    let s = block(admin.database("admin").run_command(doc! {"serverStatus": 1})).unwrap();
    let t = s.get_document("transactions").unwrap();
    match t.get("totalCommitted") {
        Some(Bson::Int64(n)) => *n as u64,
        Some(Bson::Int32(n)) => *n as u64,
        other => panic!("transactions.totalCommitted: {other:?}"),
    }
}

/// The profiler's count per collection and command: what the server received.
fn profiled(admin: &Client, db: &str) -> Counts {
    let docs: Vec<Document> =
        block(async { admin.database(db).collection::<Document>("system.profile").find(doc! {}).await?.try_collect().await }).unwrap();
    let mut out = Counts::new();
    for d in docs {
        let ns = d.get_str("ns").unwrap_or_default();
        // The test's own reads of the profiler are profiled too: not the program's.
        let Some(coll) = ns.strip_prefix(&format!("{db}.")).filter(|c| !c.starts_with("system.")) else { continue };
        let cmd = match d.get_str("op").unwrap_or_default() {
            "query" => "find".to_string(),
            "insert" | "update" => d.get_str("op").unwrap().to_string(),
            "remove" => "delete".to_string(),
            // A command's first key: count, aggregate, distinct, findAndModify (any case).
            "command" => match d.get_document("command").ok().and_then(|c| c.keys().next().cloned()) {
                Some(k) if k.eq_ignore_ascii_case("findAndModify") => "findAndModify".to_string(),
                Some(k) if ["count", "aggregate", "distinct"].contains(&k.as_str()) => k,
                _ => continue,
            },
            _ => continue, // getmore, killcursors: a cursor's continuation, not an operation
        };
        *out.entry(coll.to_string()).or_default().entry(cmd).or_default() += 1;
    }
    out
}

/// Run every program in turn against the set; each run's counters checked against the server.
fn run_programs(set: &ReplSet, admin: &Client) -> (Vec<Run>, Vec<String>) {
    let uri = set.uri("");
    let (mut runs, mut skipped) = (Vec::new(), Vec::new());
    for (driver, db) in DRIVERS {
        let before = committed(admin);
        let v: Value = if driver == "rust" {
            rt().block_on(rust_workload::run(&uri, db)).unwrap_or_else(|e| panic!("rust workload: {e}"))
        } else {
            let mut cmd = match program(driver, &uri, db) {
                Ok(c) => c,
                Err(why) => {
                    skipped.push(format!("{driver}: {why}"));
                    continue;
                }
            };
            let o = cmd.output().unwrap_or_else(|e| panic!("{driver} program: {e}"));
            assert!(o.status.success(), "{driver} program exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
            serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{driver} output: {e}: {}", String::from_utf8_lossy(&o.stdout)))
        };
        let run = Run {
            driver,
            db,
            version: v["driver"].as_str().unwrap_or_default().to_string(),
            counts: parse_counts(&v),
            transactions: v["transactions"].as_u64().unwrap(),
            note: v["skipped"].as_str().map(str::to_string),
        };
        // The program's counters are what the server received, or the matrix proves nothing.
        assert_eq!(run.counts, profiled(admin, db), "{driver}: its counters against {db}.system.profile");
        assert_eq!(run.transactions, committed(admin) - before, "{driver}: transactions against serverStatus");
        runs.push(run);
    }
    (runs, skipped)
}

/// Every profiled operation of `db`, written as a DBA would: relaxed extended JSON lines (what
/// mongoexport writes) and concatenated BSON (what mongodump writes). Returns both paths.
fn export_profile(admin: &Client, db: &str, dir: &Path) -> [PathBuf; 2] {
    let docs: Vec<Document> = block(async {
        admin.database(db).collection::<Document>("system.profile").find(doc! {}).sort(doc! {"$natural": 1}).await?.try_collect().await
    })
    .unwrap();
    let (json, bson) = (dir.join(format!("{db}.system.profile.json")), dir.join(format!("{db}.system.profile.bson")));
    let mut j = std::io::BufWriter::new(std::fs::File::create(&json).unwrap());
    let mut b = std::io::BufWriter::new(std::fs::File::create(&bson).unwrap());
    for d in docs {
        d.to_writer(&mut b).unwrap();
        writeln!(j, "{}", Bson::Document(d).into_relaxed_extjson()).unwrap();
    }
    [json, bson]
}

fn json_of(args: &[&str]) -> Value {
    let o = shardkey(args);
    assert!(o.status.success(), "{args:?}: exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `workload`'s count per collection and command for `db` (its `system.*` left aside: the
/// test's own reads of the profiler may be logged).
fn workload_counts(report: &Value, db: &str) -> Counts {
    let mut out = Counts::new();
    for n in report["namespaces"].as_array().unwrap() {
        let ns = n["namespace"].as_str().unwrap();
        let Some(coll) = ns.strip_prefix(&format!("{db}.")) else { continue };
        if coll.starts_with("system.") {
            continue;
        }
        out.insert(coll.to_string(), serde_json::from_value(n["operations"].clone()).unwrap());
    }
    out
}

/// Each difference between expected and found, as "coll cmd: expected X, found Y (+d)".
fn differences(expected: &Counts, found: &Counts) -> Vec<String> {
    let mut out = Vec::new();
    let colls: std::collections::BTreeSet<&String> = expected.keys().chain(found.keys()).collect();
    for c in colls {
        let (e, f) = (expected.get(c).cloned().unwrap_or_default(), found.get(c).cloned().unwrap_or_default());
        let cmds: std::collections::BTreeSet<&String> = e.keys().chain(f.keys()).collect();
        for cmd in cmds {
            let (x, y) = (e.get(cmd).copied().unwrap_or(0), f.get(cmd).copied().unwrap_or(0));
            if x != y {
                out.push(format!("{c} {cmd}: expected {x}, found {y} ({:+})", y as i64 - x as i64));
            }
        }
    }
    out
}

#[test]
fn every_driver_and_every_source_counts_the_workload_the_server_received() {
    // Before any server starts: without the drivers the test fails and says which script to run.
    drivers_dir();
    let set = ReplSet::start(2, false, false);
    let admin = set.member_client(0);
    let primary = format!("mongodb://127.0.0.1:{}/?directConnection=true", set.members[0].port);
    let log = set.members[0].dir.path().join("mongod.log");
    // A profiler big enough for the whole run (the default 1 MiB cap would drop the oldest
    // entries), level 2 in every driver's database; slowms -1 logs every operation.
    for (_, db) in DRIVERS {
        let d = admin.database(db);
        block(d.create_collection("system.profile").capped(true).size(32 << 20)).unwrap();
        block(d.run_command(doc! {"profile": 2, "slowms": -1})).unwrap();
    }
    let (runs, skipped) = run_programs(&set, &admin);
    // Recording over: what the DBA does next (export, read) is neither profiled nor logged.
    for (_, db) in DRIVERS {
        block(admin.database(db).run_command(doc! {"profile": 0, "slowms": 100})).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let workload_has_uri = String::from_utf8_lossy(&shardkey(&["workload", "--help"]).stdout).contains("--uri");

    let mut table = String::new();
    let mut failures = Vec::new();
    for r in &runs {
        let [json, bson] = export_profile(&admin, r.db, dir.path());
        let pattern = format!("{}.*", r.db);
        let mut row = |source: &str, what: &str, diffs: Result<Vec<String>, &str>| {
            let verdict = match &diffs {
                Ok(d) if d.is_empty() => "ok".to_string(),
                Ok(d) => d.join("; "),
                Err(why) => why.to_string(),
            };
            writeln!(table, "{:<7} {:<5} {:<9} {verdict}", r.driver, source, what).unwrap();
            failures.extend(diffs.unwrap_or_default().into_iter().map(|d| format!("{} / {source} / {what}: {d}", r.driver)));
        };
        // The primary's log, the profiler exported both ways, the live profiler ("profile").
        for (source, queries) in [("log", log.as_path()), ("json", &json), ("bson", &bson), ("live", Path::new("profile"))] {
            let queries = queries.to_str().unwrap();
            if source != "live" {
                let w = json_of(&["workload", "--queries", queries, "--namespace", &pattern, "--top", "0", "--format", "json"]);
                row(source, "workload", Ok(differences(&r.counts, &workload_counts(&w, r.db))));
            } else if workload_has_uri {
                let w = json_of(&["workload", "--uri", &primary, "--namespace", &pattern, "--top", "0", "--format", "json"]);
                row(source, "workload", Ok(differences(&r.counts, &workload_counts(&w, r.db))));
            } else {
                row(source, "workload", Err("not offered: `shardkey workload` has no --uri"));
            }
            let p = json_of(&["plan", "--uri", &primary, "--database", r.db, "--queries", queries, "--format", "json"]);
            common::assert_schema("plan", &p);
            let found = p["transactions"]["found"].as_u64().unwrap();
            let diffs = if found == r.transactions {
                vec![]
            } else {
                vec![format!("transactions: expected {}, found {found} ({:+})", r.transactions, found as i64 - r.transactions as i64)]
            };
            row(source, "plan", Ok(diffs));
        }
    }
    println!("driver matrix (expected: each program's counters, checked against the profiler and serverStatus):");
    for r in &runs {
        println!("  {:<7} {:<7} {}{}", r.driver, r.db, r.version, r.note.as_deref().map(|n| format!("; {n}")).unwrap_or_default());
    }
    for s in &skipped {
        println!("  SKIPPED {s}");
    }
    print!("{table}");
    // In CI every driver installs (scripts/drivers.sh runs as root there): a skip is a failure.
    assert!(std::env::var_os("CI").is_none() || skipped.is_empty(), "drivers skipped in CI: {skipped:?}");
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
}
