//! The version `plan` follows (issue 38, item 3): read from a log's build-info line (id 23403),
//! a text log's startup line, a mongodump's prelude.json or the live server, said in the
//! report's header with where it came from, and overridden by `--target-version`.
//!
//! The rule that shows it, by hand (docs/reference.md "plan", manual "$lookup: sharded
//! collections"): before 5.1 a `$lookup`'s target must stay unsharded. The generated
//! database holds two collections of equal size, orders and payments, and the log joins
//! orders to payments. A collection holding 10% of the data or more is never left unsharded
//! by choice, so at 6.0.5 payments (half the data) is sharded; at 4.4 the rule keeps it
//! unsharded. Nothing else differs between the two runs but the version line.

mod common;
use common::{shardkey, Lcg};

use bson::{doc, Document};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Output;

fn plan_json(o: &Output) -> Value {
    assert!(o.status.success(), "exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    let v = serde_json::from_slice(&o.stdout).unwrap();
    common::assert_schema("plan", &v);
    v
}

fn write_collection(dir: &Path, name: &str, docs: &[Document]) {
    common::dump_collection(dir, name, docs, None)
}

/// A mongod 4.4+ JSON log line, in the server's field order.
fn line(out: &mut String, ms: &mut u64, ctx: &str, id: u32, msg: &str, attr: Value) {
    *ms += 1;
    let t = format!("2026-11-24T07:{:02}:{:02}.{:03}+00:00", (*ms / 60_000) % 60, (*ms / 1000) % 60, *ms % 1000);
    writeln!(out, r#"{{"t":{{"$date":"{t}"}},"s":"I","c":"COMMAND","id":{id},"ctx":"{ctx}","msg":"{msg}","attr":{attr}}}"#).unwrap();
}

/// `dir/shop/` (orders and payments, 2,000 documents each) and the log's operations (joins
/// from orders to payments, reads of both by customer), without a version line.
fn generate(dir: &Path) -> String {
    let db = dir.join("shop");
    std::fs::create_dir_all(&db).unwrap();
    let mut rng = Lcg(5);
    let orders: Vec<Document> =
        (0..2000i64).map(|i| doc! {"_id": i, "customerId": rng.below(300) as i64, "total": 2.5, "note": "x".repeat(40)}).collect();
    let payments: Vec<Document> =
        (0..2000i64).map(|i| doc! {"_id": i, "orderId": i, "customerId": rng.below(300) as i64, "note": "y".repeat(40)}).collect();
    write_collection(&db, "orders", &orders);
    write_collection(&db, "payments", &payments);
    let mut log = String::new();
    let mut ms = 0;
    for _ in 0..150 {
        let c = rng.below(300) as i64;
        let slow = |command: Value, ns: &str| json!({"type": "command", "ns": ns, "command": command, "durationMillis": 0});
        let join = json!({"aggregate": "orders", "pipeline": [{"$match": {"customerId": c}}, {"$lookup": {"from": "payments", "localField": "customerId", "foreignField": "customerId", "as": "p"}}], "cursor": {}, "$db": "shop"});
        line(&mut log, &mut ms, "conn9", 51803, "Slow query", slow(join, "shop.orders"));
        line(
            &mut log,
            &mut ms,
            "conn9",
            51803,
            "Slow query",
            slow(json!({"find": "payments", "filter": {"customerId": c}, "$db": "shop"}), "shop.payments"),
        );
    }
    log
}

/// The log with the build-info line mongod writes at startup (id 23403) first.
fn with_build_info(ops: &str, version: &str) -> String {
    let mut s = String::new();
    let attr = json!({"buildInfo": {"version": version, "gitVersion": "0", "modules": [], "allocator": "tcmalloc", "environment": {"distarch": "x86_64"}}});
    line(&mut s, &mut 0, "initandlisten", 23403, "Build Info", attr);
    s + ops
}

fn collection<'a>(p: &'a Value, ns: &str) -> &'a Value {
    p["collections"].as_array().unwrap().iter().find(|c| c["namespace"] == ns).unwrap_or_else(|| panic!("no {ns} in {p:#}"))
}

#[test]
fn the_log_build_info_line_sets_the_lookup_rule() {
    let tmp = tempfile::tempdir().unwrap();
    let ops = generate(tmp.path());
    let dump = tmp.path().join("shop");
    let dump = dump.to_str().unwrap();
    let plan = |log: &Path, extra: &[&str], format: &str| {
        let mut a = vec!["plan", "--dump", dump, "--queries", log.to_str().unwrap(), "--shards", "4", "--format", format];
        a.extend_from_slice(extra);
        shardkey(&a)
    };
    let new = tmp.path().join("mongod-6.0.5.log");
    let old = tmp.path().join("mongod-4.4.log");
    std::fs::write(&new, with_build_info(&ops, "6.0.5")).unwrap();
    std::fs::write(&old, with_build_info(&ops, "4.4.18")).unwrap();

    // 6.0.5: a $lookup target may be sharded; payments holds half the data, so it is.
    let p = plan_json(&plan(&new, &[], "json"));
    assert_eq!(p["joins"]["found"], 150, "{:#}", p["joins"]);
    assert_eq!(p["targetVersion"], "6.0");
    assert_eq!(p["version"]["version"], "6.0.5");
    assert_eq!(p["version"]["source"], "log");
    let words = format!("MongoDB 6.0.5, from the log's build-info line ({})", new.display());
    assert_eq!(p["version"]["words"], words.as_str());
    assert_eq!(collection(&p, "shop.payments")["action"], "shard", "{:#}", p["collections"]);
    // The header says it, second line, in every format.
    let table = String::from_utf8(plan(&new, &[], "table").stdout).unwrap();
    assert_eq!(table.lines().find(|l| l.starts_with("MongoDB")), Some(words.as_str()), "{table}");
    for fmt in ["markdown", "html"] {
        let text = String::from_utf8(plan(&new, &[], fmt).stdout).unwrap();
        assert!(text.contains("MongoDB 6.0.5, from the log&#39;s build-info line") || text.contains(&words), "{fmt}: {text}");
    }

    // 4.4: the rule keeps the $lookup target unsharded, on the primary shard.
    let p = plan_json(&plan(&old, &[], "json"));
    assert_eq!((p["targetVersion"].as_str(), p["version"]["version"].as_str()), (Some("4.4"), Some("4.4.18")));
    assert_eq!(collection(&p, "shop.payments")["action"], "unsharded", "{:#}", p["collections"]);
    assert!(collection(&p, "shop.payments")["why"].as_str().unwrap().contains("$lookup"), "{:#}", collection(&p, "shop.payments"));

    // --target-version overrides the log, and says so.
    let p = plan_json(&plan(&old, &["--target-version", "6.0"], "json"));
    assert_eq!(collection(&p, "shop.payments")["action"], "shard");
    assert_eq!(p["version"]["source"], "flag");
    let words =
        format!("MongoDB 6.0, from --target-version (overriding MongoDB 4.4.18 from the log's build-info line ({}))", old.display());
    assert_eq!(p["version"]["words"], words.as_str());

    // No version anywhere: the rule assumes the older servers, and the header says why.
    let bare = tmp.path().join("mongod.log");
    std::fs::write(&bare, &ops).unwrap();
    let p = plan_json(&plan(&bare, &[], "json"));
    assert_eq!(p["version"]["source"], "unknown");
    assert!(p.get("targetVersion").is_none());
    assert!(p["version"]["words"].as_str().unwrap().starts_with("MongoDB version not known (give --target-version"), "{:#}", p["version"]);
    assert_eq!(collection(&p, "shop.payments")["action"], "unsharded");

    // mongodump's prelude.json (mongo-tools 100.12+) names the version when the log does not;
    // a log that names it wins (it is what the server wrote about itself).
    std::fs::write(tmp.path().join("prelude.json"), r#"{"ServerVersion":"6.0.5","ToolVersion":"100.12.0"}"#).unwrap();
    let p = plan_json(&plan(&bare, &[], "json"));
    assert_eq!((p["version"]["source"].as_str(), p["version"]["version"].as_str()), (Some("dump"), Some("6.0.5")));
    assert!(
        p["version"]["words"].as_str().unwrap().starts_with("MongoDB 6.0.5, from the mongodump's prelude.json ("),
        "{:#}",
        p["version"]
    );
    assert_eq!(collection(&p, "shop.payments")["action"], "shard");
    let p = plan_json(&plan(&old, &[], "json"));
    assert_eq!((p["version"]["source"].as_str(), p["version"]["version"].as_str()), (Some("log"), Some("4.4.18")));
    // analyze on one of the dump's collections follows the prelude too, and says so.
    let orders = tmp.path().join("shop").join("orders.bson");
    let r = common::json_ok(&shardkey(&["analyze", "--docs", orders.to_str().unwrap(), "--format", "json"]));
    let notes = r["notes"].to_string();
    assert!(notes.contains("MongoDB 6.0.5, from the mongodump's prelude.json ("), "{notes}");
}

/// A 2.2–4.2 text log names its version on its startup line: the real 4.0.10 log of
/// ../shared/real-logs (mtools), analysed logs-only, says the version its rules followed.
#[test]
fn a_text_log_startup_line_names_the_version() {
    let log = common::root().join("../shared/real-logs/mtools__mongod.log");
    assert!(log.is_file(), "the team's shared/real-logs must sit beside the project: {}", log.display());
    let o = shardkey(&["analyze", "--queries", log.to_str().unwrap(), "--collection", "local.myCollection", "--format", "json"]);
    let r = common::json_ok(&o);
    let notes = r["notes"].to_string();
    assert!(
        notes.contains(&format!("MongoDB 4.0.10, from the log's startup line \\\"db version v4.0.10\\\" ({})", log.display())),
        "{notes}"
    );
}

/// Live, the version is the server's own (buildInfo on the real mongod 6.0.5).
#[test]
fn live_the_version_is_the_servers() {
    use common::{rt, Mode, Mongod};
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    rt().block_on(async {
        let c = client.database("shop").collection::<Document>("orders");
        c.insert_many((0..50i64).map(|i| doc! {"_id": i, "customerId": i % 7})).await.unwrap();
    });
    let uri = m.uri();
    let p = plan_json(&shardkey(&["plan", "--uri", &uri, "--database", "shop", "--format", "json"]));
    assert_eq!(p["version"]["version"], "6.0.5");
    assert_eq!(p["version"]["source"], "server");
    assert_eq!(p["version"]["words"], "MongoDB 6.0.5, from the server (buildInfo)");
    assert_eq!(p["targetVersion"], "6.0");
    let p = plan_json(&shardkey(&["plan", "--uri", &uri, "--database", "shop", "--target-version", "8.0", "--format", "json"]));
    assert_eq!(p["version"]["words"], "MongoDB 8.0, from --target-version (overriding MongoDB 6.0.5 from the server (buildInfo))");
}
