//! `shardkey plan` on a generated multi-tenant tracker (a mongodump directory and a mongod
//! 6.0 JSON log): each collection carries the warning of its own analysis and the rule that
//! forced or forbade its key (docs/reference.md "plan"), and `check` holds the database to a
//! plan declared in the policy (`[plan]`).
//!
//! The data, and what a DBA knows from it by hand:
//! - `tasks`: 2,000 documents; tenant 0 holds 600 of them (30.0%), tenants 1..=100 hold 14
//!   each. Read by tenant, updated by tenant and `_id`. On a key led by the tenant id alone
//!   the top value holds 600 / 2,000 = 30.0% of the documents.
//! - `comments`: 2,000 documents, read by tenant; of its 400 updates, every fourth names the
//!   comment by `_id` alone: on a key led by the tenant id 100 / 400 = 25.0% of its writes do
//!   not carry the key.
//! - `tenants`: 300 documents with a unique index on `slug` (its metadata.json), read and
//!   updated by `_id`. A unique index must start with the shard key's fields
//!   (mongodb/mongo 49802bc src/mongo/s/shard_key_pattern.cpp, isIndexUniquenessCompatible):
//!   every key not starting with `slug`, `{_id: ...}` among them, is blocked while it exists.

mod common;
use common::{shardkey, Lcg};

use bson::{doc, Document};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::Path;

pub const TASKS: i64 = 2000;
pub const HOT_TASKS: i64 = 600;
pub const TENANTS: i64 = 300;
/// Task and comment updates in the log (each); one comment update in four names it by _id alone.
pub const WRITES: i64 = 400;

fn write_collection(dir: &Path, name: &str, docs: &[Document], indexes: Value) {
    common::dump_collection(dir, name, docs, Some(indexes))
}

/// One mongod 6.0 slow-query line (the server's field order: t, s, c, id, ctx, msg, attr).
fn slow(out: &mut String, ms: &mut u64, ns: &str, command: Value) {
    *ms += 1;
    let t = format!("2026-11-24T06:{:02}:{:02}.{:03}+00:00", (*ms / 60_000) % 60, (*ms / 1000) % 60, *ms % 1000);
    let attr = json!({"type": "command", "ns": ns, "command": command, "durationMillis": 0});
    writeln!(out, r#"{{"t":{{"$date":"{t}"}},"s":"I","c":"COMMAND","id":51803,"ctx":"conn7","msg":"Slow query","attr":{attr}}}"#).unwrap();
}

/// The tracker: documents in `dir/saas/*.bson`, the log in `dir/mongod.log`.
pub fn generate(dir: &Path) {
    let db = dir.join("saas");
    std::fs::create_dir_all(&db).unwrap();
    let id_index = json!([{"v": 2, "key": {"_id": 1}, "name": "_id_"}]);
    // Task j belongs to tenant 0 when (j × 7) mod 2,000 < 600 (600 of them, spread through
    // the file so the tenant id does not grow with insertion order), else to one of tenants
    // 1..=100, 14 each. Its _id: an ObjectId of random bytes (no creation-time order).
    let tenant_of = |j: i64| match (j * 7) % TASKS {
        r if r < HOT_TASKS => 0,
        r => 1 + (r - HOT_TASKS) / 14,
    };
    let mut rng = Lcg(5);
    let ids: Vec<bson::oid::ObjectId> = (0..TASKS)
        .map(|_| {
            let mut b = [0u8; 12];
            b.iter_mut().for_each(|x| *x = rng.below(256) as u8);
            bson::oid::ObjectId::from_bytes(b)
        })
        .collect();
    let tasks: Vec<Document> = (0..TASKS)
        .map(|j| doc! {"_id": ids[j as usize], "tenantId": tenant_of(j), "title": format!("task {j}"), "pad": "t".repeat(60)})
        .collect();
    // Comments: the same tenants and _ids (another collection: its own values).
    let comments: Vec<Document> =
        (0..TASKS).map(|j| doc! {"_id": ids[j as usize], "tenantId": tenant_of(j), "body": "c".repeat(60)}).collect();
    let tenants: Vec<Document> =
        (0..TENANTS).map(|i| doc! {"_id": i, "slug": format!("tenant-{i}"), "plan": "pro", "pad": "p".repeat(600)}).collect();
    write_collection(&db, "tasks", &tasks, id_index.clone());
    write_collection(&db, "comments", &comments, id_index);
    write_collection(
        &db,
        "tenants",
        &tenants,
        json!([{"v": 2, "key": {"_id": 1}, "name": "_id_"}, {"v": 2, "key": {"slug": 1}, "name": "slug_1", "unique": true}]),
    );
    let mut log = String::new();
    let mut ms = 0u64;
    // 400 rounds: a find of a tenant's tasks and an update of one task (by tenant and _id);
    // the same for comments, but in every fourth round the comment is updated by _id alone
    // (100 of the 400 comment writes lack the tenant id, 25.0%); a find and an update of a
    // tenant by _id.
    for round in 0..WRITES {
        let j = rng.below(TASKS as u64) as i64;
        let (t, oid) = (tenant_of(j), json!({"$oid": ids[j as usize].to_hex()}));
        slow(&mut log, &mut ms, "saas.tasks", json!({"find": "tasks", "filter": {"tenantId": t}, "$db": "saas"}));
        let q = json!({"tenantId": t, "_id": oid});
        slow(
            &mut log,
            &mut ms,
            "saas.tasks",
            json!({"update": "tasks", "updates": [{"q": q, "u": {"$set": {"title": "x"}}}], "$db": "saas"}),
        );
        slow(&mut log, &mut ms, "saas.comments", json!({"find": "comments", "filter": {"tenantId": t}, "$db": "saas"}));
        let q = if round % 4 == 0 { json!({"_id": oid}) } else { json!({"tenantId": t, "_id": oid}) };
        slow(
            &mut log,
            &mut ms,
            "saas.comments",
            json!({"update": "comments", "updates": [{"q": q, "u": {"$set": {"body": "x"}}}], "$db": "saas"}),
        );
        let n = rng.below(TENANTS as u64) as i64;
        slow(&mut log, &mut ms, "saas.tenants", json!({"find": "tenants", "filter": {"_id": n}, "$db": "saas"}));
        slow(
            &mut log,
            &mut ms,
            "saas.tenants",
            json!({"update": "tenants", "updates": [{"q": {"_id": n}, "u": {"$set": {"plan": "pro"}}}], "$db": "saas"}),
        );
    }
    std::fs::write(dir.join("mongod.log"), log).unwrap();
}

fn plan_json(dir: &Path, extra: &[&str]) -> Value {
    let dump = dir.join("saas");
    let log = dir.join("mongod.log");
    let mut args = vec!["plan", "--dump", dump.to_str().unwrap(), "--queries", log.to_str().unwrap(), "--shards", "4", "--format", "json"];
    args.extend_from_slice(extra);
    let o = shardkey(&args);
    assert!(o.status.success(), "exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    common::assert_schema("plan", &v);
    v
}

fn collection<'a>(p: &'a Value, ns: &str) -> &'a Value {
    p["collections"].as_array().unwrap().iter().find(|c| c["namespace"] == ns).unwrap_or_else(|| panic!("no {ns} in {p:#}"))
}

fn first_field(c: &Value) -> String {
    c["key"].as_object().and_then(|k| k.keys().next().cloned()).unwrap_or_else(|| panic!("no key: {c:#}"))
}

#[test]
fn each_collection_carries_its_warning_and_the_rule_that_forced_its_key() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path());
    let p = plan_json(tmp.path(), &[]);
    // comments, on a key led by the tenant id: its analysis warns that the updates by _id
    // alone (by hand: 100 of the 400 comment writes, 25.0%) do not carry the key.
    let comments = collection(&p, "saas.comments");
    assert_eq!(first_field(comments), "tenantId", "{comments:#}");
    let warning = comments["warning"].as_str().unwrap_or_else(|| panic!("no warning: {comments:#}"));
    assert!(warning.starts_with(&format!("25.0% of {WRITES} sampled writes do not carry the shard key")), "{warning}");
    assert_eq!(comments["constraints"], json!([]));
    // tenants is read and written by _id, but the unique index on slug blocks every key not
    // led by slug: the plan shards it on slug, and names the index that forbade the _id key.
    let tenants = collection(&p, "saas.tenants");
    assert_eq!(first_field(tenants), "slug", "{tenants:#}");
    let rules = tenants["constraints"].as_array().unwrap();
    assert_eq!(rules.len(), 1, "{tenants:#}");
    let rule = rules[0].as_str().unwrap();
    assert!(rule.starts_with("the unique index slug_1 {slug: 1} allows only a shard key of its leading fields (slug): {_id: "), "{rule}");
    assert!(rule.ends_with("is blocked (shardCollection refuses it while the index exists)"), "{rule}");

    // What if tasks were sharded on the tenant id alone, and tenants on its _id? Both kept;
    // the _id key flagged with the index that blocks it. tasks' own analysis then warns, by
    // hand: 101 tenant ids (0 to 100), and the top one holds 30.0%, so from 4 shards on (1 /
    // 0.30 = 3.3) its shard stays the busiest.
    let w = plan_json(tmp.path(), &["--key", "saas.tasks={tenantId: 1}", "--key", "tenants={_id: \"hashed\"}"]);
    let g = &w["given"];
    assert_eq!(g["choices"][0]["namespace"], "saas.tasks", "{g:#}");
    assert!(g["choices"][0].get("refused").is_none(), "{g:#}");
    assert_eq!(g["choices"][1]["key"], json!({"_id": "hashed"}));
    assert!(g["choices"][1]["refused"].as_str().is_some_and(|r| r.contains("slug_1 {slug: 1}")), "{g:#}");
    let tasks = collection(g, "saas.tasks");
    assert_eq!(tasks["key"], json!({"tenantId": 1}));
    assert_eq!(
        tasks["warning"],
        "101 distinct values; beyond 3 shards the shard holding the top value stays the busiest: adding shards no longer spreads the load"
    );
    let kept = collection(g, "saas.tenants");
    assert_eq!(kept["key"], json!({"_id": "hashed"}));
    assert!(kept["why"].as_str().unwrap().starts_with("kept as given: "), "{kept:#}");
    assert!(kept["constraints"][0].as_str().unwrap().ends_with("; kept as given"), "{kept:#}");
    // shardkey's own plan is unchanged by the question.
    assert_eq!(collection(&w, "saas.tenants")["key"], tenants["key"]);

    // The other formats say the same.
    let dump = tmp.path().join("saas");
    let log = tmp.path().join("mongod.log");
    for (fmt, warn) in [("table", "! 25.0% of"), ("markdown", "warning: 25.0% of"), ("html", "warning: 25.0% of")] {
        let o = shardkey(&["plan", "--dump", dump.to_str().unwrap(), "--queries", log.to_str().unwrap(), "--shards", "4", "--format", fmt]);
        let text = String::from_utf8_lossy(&o.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(o.status.success() && text.contains(warn) && text.contains("rule: the unique index slug_1"), "{fmt}: {text}");
    }
}

/// `check` with a policy that declares the plan: a declared key the unique index blocks fails
/// `forbid_refused_keys`, named with the index, annotated at the key's line; turned off, it passes.
#[test]
fn check_fails_a_declared_key_that_a_unique_index_blocks() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path());
    let policy = tmp.path().join("shardkey.toml");
    let run = |text: &str, format: &str| {
        std::fs::write(&policy, text).unwrap();
        let dump = tmp.path().join("saas");
        let log = tmp.path().join("mongod.log");
        let args = ["check", "--policy", policy.to_str().unwrap(), "--dump", dump.to_str().unwrap(), "--queries", log.to_str().unwrap()];
        shardkey(&[&args[..], &["--shards", "4", "--format", format]].concat())
    };
    let declared = "[plan]\nunsharded = [\"comments\"]\n\n[plan.keys]\ntasks = \"{tenantId: 1, _id: 1}\"\ntenants = '{_id: \"hashed\"}'\n";
    let o = run(declared, "json");
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    common::assert_schema("check", &v);
    let rules = v["databaseRules"].as_array().unwrap();
    let r = rules.iter().find(|r| r["rule"] == "forbid_refused_keys").unwrap();
    assert_eq!((r["passed"].as_bool(), r["actual"].as_u64()), (Some(false), Some(1)), "{r:#}");
    assert!(
        r["message"].as_str().unwrap().starts_with(
            "saas.tenants: the unique index slug_1 {slug: 1} allows only a shard key of its leading fields (slug): {_id: \"hashed\"} is blocked"
        ),
        "{r:#}"
    );
    assert_eq!(r["culprit"]["names"], json!(["slug_1", "slug", "tenants"]));
    assert_eq!(r["location"], json!({"file": policy.to_str().unwrap(), "line": 6}), "the declared key's line");
    // No transaction in the logs: the share rule has nothing to compare, and says so.
    let loss = rules.iter().find(|r| r["rule"] == "max_single_shard_loss_percent").unwrap();
    assert_eq!(loss["skipped"], "no transaction in the logs: no single-shard share to compare");
    // The table says it too; turned off, the gate passes.
    let o = run(declared, "table");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("FAIL  forbid_refused_keys") && text.contains("slug_1"), "{text}");
    let o = run(&declared.replace("[plan]\n", "[plan]\nforbid_refused_keys = false\n"), "table");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    // A rule on each collection's key does not go in [plan], nor a plan rule in [defaults].
    for (text, needle) in [
        (
            "[plan]\nmin_score = 60\n",
            "line 2: field min_score: a rule on each collection's key: set it in [defaults] or a [[collection]], not [plan]",
        ),
        (
            "[defaults]\nforbid_refused_keys = true\n[plan]\n",
            "line 2: field forbid_refused_keys: a rule on the whole database's plan: set it in [plan]",
        ),
        ("[plan.keys]\ntasks = \"{tenantId: -1}\"\n", "field keys: tasks: "),
    ] {
        let o = run(text, "table");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!((o.status.code(), err.lines().count()), (Some(2), 1), "{text}: {err}");
        assert!(err.contains(needle), "{text}: {err}");
    }
}
