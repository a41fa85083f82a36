//! `shardkey plan` and small collections (issue 38, item 2): a generated multi-tenant task
//! tracker (a mongodump directory and a mongod 6.0 JSON log in the server's own line format,
//! with `lsid`/`txnNumber` transactions).
//!
//! The database: `tasks` (20,000 documents) and `projects` (2,000) by tenant; `tenants` (200
//! documents, a unique index on `slug`) and `plans` (5 documents), both read by `_id` and
//! written rarely (about 11% of their operations: more than the 5% that makes reference data
//! by the read share alone). Transactions: a new task (60%) reads its tenant and the tenant's
//! plan by `_id`, inserts the task and increments its project (by tenant and `_id`); a comment
//! (40%) reads and updates one task by tenant and `_id`.
//!
//! First principles. Unsharded, a collection lives on the primary shard and every operation on
//! it reaches that one shard. Sharded, an operation by `_id` reaches one shard only when the key
//! starts with `_id`. `tenants`' unique index on `slug` lets the server accept only keys that
//! start with `slug` (manual "Unique Indexes" on sharded collections): every read by `_id` would
//! then reach every shard, so it stays unsharded. `plans` on `{_id: 1}` or hashed `_id` keeps its
//! reads on one shard, but the five documents are one range whatever the key (the balancer moves
//! nothing below three ranges), and a new-task transaction reading a plan placed apart from the
//! primary shard, where `tenants` is, can only lose its single shard: nothing is gained, so it
//! stays unsharded. The single-shard share follows by hand from the plan's zones: a comment's two
//! operations name one tenant's task (one zone: one shard); a new task reads `tenants` and
//! `plans` on the primary shard (shard0) and writes in its tenant's zone: one shard exactly when
//! that zone is on shard0.

mod common;
use common::txn_log::{write_dump_collection, SlowLog, TxnLines};
use common::{shardkey, Lcg};

use bson::{doc, Document};
use serde_json::{json, Value};
use std::path::Path;

const TENANTS: i64 = 200;
const PLANS: [&str; 5] = ["free", "team", "business", "enterprise", "partner"];
const PROJECTS: i64 = 2_000;
const TASKS: i64 = 20_000;
const TRANSACTIONS: usize = 1_000;
const READS: i64 = 2_000;

/// What a generated transaction touches, for the hand count.
enum Txn {
    NewTask { tenant: i64 },
    Comment,
}

/// The dump in `dir/saas`, the log `dir/mongod.log`; the transactions as generated.
fn generate(dir: &Path, unique_slug: bool) -> Vec<Txn> {
    let db = dir.join("saas");
    std::fs::create_dir_all(&db).unwrap();
    let mut rng = Lcg(38);
    let plan_of = |t: i64| PLANS[(t % PLANS.len() as i64) as usize];
    let tenants: Vec<Document> = (0..TENANTS)
        .map(|t| doc! {"_id": t, "slug": format!("tenant-{t:03}"), "name": format!("Tenant {t}"), "planId": plan_of(t), "seats": 10})
        .collect();
    let plans: Vec<Document> = PLANS.iter().map(|p| doc! {"_id": *p, "maxSeats": 100, "price": 9.5}).collect();
    let projects: Vec<Document> =
        (0..PROJECTS).map(|p| doc! {"_id": p, "tenantId": p % TENANTS, "name": format!("project {p}"), "tasks": 0}).collect();
    let mut tasks: Vec<Document> = (0..TASKS)
        .map(|i| {
            let p = rng.below(PROJECTS as u64) as i64;
            doc! {"_id": i, "tenantId": p % TENANTS, "projectId": p, "title": format!("task {i}"), "note": "n".repeat(80)}
        })
        .collect();
    let mut txns = Vec::new();
    let mut sessions = Vec::new();
    for t in 0..TRANSACTIONS {
        let lsid = json!({"id": {"$uuid": format!("{:08x}-0000-4000-8000-{:012x}", t, t)}});
        let mut x = TxnLines { lsid, n: 1 + t as i64, db: "saas", lines: Vec::new() };
        if rng.below(100) < 60 {
            let p = rng.below(PROJECTS as u64) as i64;
            let tenant = p % TENANTS;
            x.find("plans", json!({"_id": plan_of(tenant)}));
            let id = tasks.len() as i64;
            tasks.push(doc! {"_id": id, "tenantId": tenant, "projectId": p, "title": format!("task {id}"), "note": "n".repeat(80)});
            x.insert("tasks");
            x.update("projects", json!({"tenantId": tenant, "_id": p}), json!({"$inc": {"tasks": 1}}));
            txns.push(Txn::NewTask { tenant });
        } else {
            let k = rng.below(TASKS as u64) as i64;
            let tenant = tasks[k as usize].get_i64("tenantId").unwrap();
            x.find("tasks", json!({"tenantId": tenant, "_id": k}));
            x.update("tasks", json!({"tenantId": tenant, "_id": k}), json!({"$set": {"done": true}}));
            txns.push(Txn::Comment);
        }
        sessions.push(x);
    }
    let mut log = SlowLog::new("saas", 8);
    // Two connections, their transactions' lines interleaved as the server writes them.
    for pair in sessions.chunks(2) {
        let longest = pair.iter().map(|x| x.lines.len()).max().unwrap_or(0);
        for i in 0..longest {
            for (j, x) in pair.iter().enumerate() {
                if let Some((c, attr)) = x.lines.get(i) {
                    log.line(&format!("conn{}", 10 + j), c, attr.clone());
                }
            }
        }
    }
    // Outside transactions: tenants and plans read by _id and now and then updated; tasks listed by tenant.
    for i in 0..READS {
        log.find("tenants", json!({"_id": i % TENANTS}));
        log.find("plans", json!({"_id": PLANS[(i % 5) as usize]}));
        log.find("tasks", json!({"tenantId": rng.below(TENANTS as u64) as i64}));
        if i % 10 < 3 {
            log.update("tenants", json!({"_id": i % TENANTS}), json!({"$set": {"seats": 11}}));
            log.update("plans", json!({"_id": PLANS[(i % 5) as usize]}), json!({"$set": {"price": 10.5}}));
        }
    }
    let id_index = json!({"v": 2, "key": {"_id": 1}, "name": "_id_"});
    let slug_index = json!({"v": 2, "key": {"slug": 1}, "name": "slug_1", "unique": unique_slug});
    write_dump_collection(&db, "tenants", &tenants, json!([id_index, slug_index]));
    write_dump_collection(&db, "plans", &plans, json!([id_index]));
    write_dump_collection(&db, "projects", &projects, json!([id_index]));
    write_dump_collection(&db, "tasks", &tasks, json!([id_index]));
    std::fs::write(dir.join("mongod.log"), log.text).unwrap();
    txns
}

fn collection<'a>(p: &'a Value, ns: &str) -> &'a Value {
    p["collections"].as_array().unwrap().iter().find(|c| c["namespace"] == ns).unwrap_or_else(|| panic!("no {ns} in {p:#}"))
}

/// A zone bound's first field as a number (None for MinKey/MaxKey).
fn bound(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| v.get("$numberLong").and_then(|n| n.as_str()).and_then(|n| n.parse().ok()))
}

/// The shard a tenant's documents of `ns` are zoned to (ranged tenantId zones).
fn zone_shard(c: &Value, tenant: i64) -> usize {
    let zones = c["zones"].as_array().unwrap_or_else(|| panic!("{} has no zones: {c:#}", c["namespace"]));
    let z = zones
        .iter()
        .find(|z| bound(&z["min"]["tenantId"]).is_none_or(|m| m <= tenant) && bound(&z["max"]["tenantId"]).is_none_or(|m| tenant < m))
        .unwrap_or_else(|| panic!("no zone holds tenant {tenant}: {zones:#?}"));
    z["shard"].as_str().unwrap().trim_start_matches("shard").parse().unwrap()
}

/// The plan of the generated tracker, as JSON held to the published schema.
fn plan_of(dir: &Path) -> Value {
    let (dump, log) = (dir.join("saas"), dir.join("mongod.log"));
    let o = shardkey(&[
        "plan",
        "--dump",
        dump.to_str().unwrap(),
        "--queries",
        log.to_str().unwrap(),
        "--shards",
        "4",
        "--target-version",
        "6.0",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let p: Value = serde_json::from_slice(&o.stdout).unwrap();
    common::assert_schema("plan", &p);
    p
}

#[test]
fn small_reference_collections_read_by_id_stay_unsharded() {
    let tmp = tempfile::tempdir().unwrap();
    let txns = generate(tmp.path(), true);
    if let Ok(keep) = std::env::var("SHARDKEY_KEEP_SMALL") {
        let _ = std::process::Command::new("cp").arg("-r").arg(tmp.path()).arg(&keep).status();
    }
    let p = plan_of(tmp.path());
    assert_eq!(p["transactions"]["found"], TRANSACTIONS as u64, "{:#}", p["transactions"]);
    for ns in ["saas.tenants", "saas.plans"] {
        let c = collection(&p, ns);
        assert_eq!((c["action"].as_str(), c["shard"].as_str()), (Some("unsharded"), Some("shard0")), "{c:#}");
        assert!(c.get("tradeOff").is_none(), "{c:#}");
    }
    let cmds = p["commands"].to_string();
    assert!(!cmds.contains("saas.tenants") && !cmds.contains("saas.plans"), "{cmds}");
    // tasks and projects zoned together on the tenant: the share by hand from their zones.
    let (tasks, projects) = (collection(&p, "saas.tasks"), collection(&p, "saas.projects"));
    for c in [tasks, projects] {
        let first = c["key"].as_object().unwrap().keys().next().unwrap().clone();
        assert_eq!((c["action"].as_str(), first.as_str()), (Some("shard"), "tenantId"), "{c:#}");
    }
    let one = txns
        .iter()
        .filter(|t| match t {
            Txn::Comment => true,
            Txn::NewTask { tenant } => zone_shard(projects, *tenant) == 0 && zone_shard(tasks, *tenant) == 0,
        })
        .count();
    let share = p["transactions"]["singleShardShare"].as_f64().unwrap();
    assert!((share - one as f64 / TRANSACTIONS as f64).abs() < 1e-9, "plan {share}, hand {one}/{TRANSACTIONS}");
    // Every trade-off sentence states a gain: each "A% ... instead of B%" before its costs has A > B.
    for c in p["collections"].as_array().unwrap() {
        let Some(t) = c["tradeOff"].as_str() else { continue };
        let gains = t.split(", at the cost of").next().unwrap();
        for clause in gains.split(", ").filter(|x| x.contains("% of") && x.contains(" instead of ")) {
            let pct = |x: &str| x.trim_start_matches("and ").split('%').next().unwrap().trim().parse::<u32>().unwrap();
            let (a, b) = clause.split_once(" instead of ").unwrap();
            assert!(pct(a) > pct(b), "{t}");
        }
    }
}

/// Without the unique index, `tenants` may take `{_id: 1}` or hashed `_id`: its reads stay on one
/// shard, its score is high, and at scale its operations would leave the primary shard. But 200
/// documents are one range whatever the key (below the three ranges the balancer waits for), so
/// sharding it moves no load in fact; and the new-task transactions, which read no tenant, gain
/// nothing on one shard by it. It stays unsharded, and so does `plans`.
#[test]
fn a_small_collection_is_not_sharded_for_balance_alone() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path(), false);
    let p = plan_of(tmp.path());
    for ns in ["saas.tenants", "saas.plans"] {
        let c = collection(&p, ns);
        assert_eq!((c["action"].as_str(), c["shard"].as_str()), (Some("unsharded"), Some("shard0")), "{c:#}");
    }
}
