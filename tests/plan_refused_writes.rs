//! Writes the plan's version refuses outside transactions: a plan says them (`refusedWrites`)
//! and its mongosh script stops on them, as it stops on the transactions' refused writes; and
//! on a unique index that blocks a key kept as given, before changing anything.
//! A real mongod 6.0.5 replica set logs every operation (slowms -1) of an application written
//! through two drivers: the Rust driver reads orders by customer and takes an order by its
//! number (`findOneAndUpdate({number})`), mongosh (the Node driver) updates orders by customer
//! and `_id`. The real mongosh runs the script.
//!
//! By hand, under `{customerId: 1, _id: 1}`: the sampled updates and deletes are the 120
//! findAndModify by `number` and the 40 updates by `{customerId, _id}`. A findAndModify must
//! name the shard key by equality before 7.1 (manual `db.collection.findOneAndUpdate()`
//! "Sharded Collections"; `rules/single_writes.rs`), so 6.0 refuses 120 of the 160: 75.0%,
//! their fix `customerId, _id`, accepted from 7.1 (which runs each as a broadcast read then
//! the write). The updates name the whole key: targeted, accepted. Order numbers are unique
//! (`number_1`), and a unique index must start with the shard key's fields (mongodb/mongo
//! 49802bc src/mongo/s/shard_key_pattern.cpp, isIndexUniquenessCompatible): shardCollection
//! refuses the key while it exists, so the script stops on it too, before its first step.

mod common;
use common::{rt, shardkey, Lcg, Mode, Mongod};

use bson::{doc, Document};
use serde_json::Value;

const ORDERS: i64 = 1200;
const TAKEN: i64 = 120;
const UPDATED: i64 = 40;

fn mongosh_file(uri: &str, script: &std::path::Path) -> String {
    let o = std::process::Command::new(common::mongosh_binary())
        .args(["--quiet", "--norc", uri, script.to_str().unwrap()])
        .env("DO_NOT_TRACK", "1")
        .output()
        .expect("run mongosh");
    assert_eq!(o.status.code(), Some(1), "a replica set, not mongos: the script stops");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn orders(collections: &Value) -> &Value {
    collections.as_array().unwrap().iter().find(|c| c["namespace"] == "shop.orders").unwrap()
}

#[test]
fn a_plan_says_and_its_script_stops_on_refused_single_writes_and_a_blocking_unique_index() {
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    let uri = m.uri();
    rt().block_on(async {
        let db = client.database("shop");
        db.run_command(doc! {"profile": 0, "slowms": -1}).await.unwrap();
        let orders = db.collection::<Document>("orders");
        let docs = (0..ORDERS).map(|i| doc! {"_id": i, "customerId": i % 100, "number": format!("N{i:05}"), "status": "new"});
        orders.insert_many(docs).await.unwrap();
        db.run_command(doc! {"createIndexes": "orders", "indexes": [{"key": {"number": 1}, "name": "number_1", "unique": true}]})
            .await
            .unwrap();
        let mut rng = Lcg(3);
        for _ in 0..300 {
            orders.find_one(doc! {"customerId": rng.below(100) as i64}).await.unwrap();
        }
        for _ in 0..TAKEN {
            let n = rng.below(ORDERS as u64) as i64;
            let taken = orders.find_one_and_update(doc! {"number": format!("N{n:05}")}, doc! {"$set": {"status": "taken"}}).await;
            assert!(taken.unwrap().is_some());
        }
    });
    // The other driver: mongosh's updateOne by the whole key.
    let updates: String = (0..UPDATED)
        .map(|i| format!("db.getSiblingDB('shop').orders.updateOne({{customerId: {}, _id: {i}}}, {{$set: {{status: 'paid'}}}});", i % 100))
        .collect();
    let o = common::mongosh(&uri, &updates);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    common::block(client.database("shop").run_command(doc! {"profile": 0, "slowms": 100})).unwrap();
    let log = m.dir.path().join("mongod.log");
    let plan = |extra: &[&str], format: &str| {
        let mut a = vec!["plan", "--uri", &uri, "--database", "shop", "--queries", log.to_str().unwrap(), "--format", format];
        a.extend_from_slice(extra);
        let o = shardkey(&a);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    let given = ["--key", "orders={customerId: 1, _id: 1}"];

    // On the server's 6.0.5: said with the share, the version that runs them and the fix.
    let p: Value = serde_json::from_slice(&plan(&given, "json")).unwrap();
    common::assert_schema("plan", &p);
    let refused = &orders(&p["given"]["collections"])["refusedWrites"];
    assert_eq!(refused.as_array().map(Vec::len), Some(1), "{:#}", p["given"]);
    let r = &refused[0];
    let share = (TAKEN as f64 * 1000.0 / (TAKEN + UPDATED) as f64).round() / 10.0;
    assert_eq!(r["percentageOfWrites"].as_f64(), Some(share), "{r:#}");
    assert_eq!((r["acceptedFrom"].as_str(), r["filterFix"].clone()), (Some("7.1"), serde_json::json!(["customerId", "_id"])), "{r:#}");
    let words = format!("75.0% of {} sampled updates and deletes", TAKEN + UPDATED);
    assert!(r["message"].as_str().unwrap().starts_with(&words), "{r:#}");
    assert!(r["message"].as_str().unwrap().contains(&format!("{TAKEN}× findAndModify {{number: eq}}")), "{r:#}");

    // The table says them once, under the collection (the key's first warning here).
    let table = String::from_utf8(plan(&given, "table")).unwrap().replace('\n', " ");
    let table = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(table.matches(&format!("! {words}")).count(), 1, "{table}");
    // And before the commands that would shard it: a list of commands alone did not say it.
    let first = "// first: 75.0% of shop.orders's sampled updates and deletes must name customerId and _id in their filters, or the server refuses them once it is sharded";
    assert_eq!(table.matches(first).count(), 1, "{table}");

    // Planned for 8.0, the same writes run (each a broadcast read, then the write): a
    // warning, nothing refused, though the server the plan read runs 6.0.5.
    let eight: Value = serde_json::from_slice(&plan(&[&given[..], &["--target-version", "8.0"]].concat(), "json")).unwrap();
    let o8 = orders(&eight["given"]["collections"]);
    assert!(o8.get("refusedWrites").is_none(), "{o8:#}");
    assert!(
        o8["warning"].as_str().is_some_and(|w| w.starts_with(&words) && w.contains("7.1+ runs each as a broadcast read then the write")),
        "{o8:#}"
    );

    // The script (the plan as given, for 6.0.5) names them and stops until the application is
    // fixed; with REFUSED_WRITES_FIXED set, that check passes (mongos is still missing).
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("plan.js");
    let js = String::from_utf8(plan(&given, "mongosh")).unwrap();
    std::fs::write(&script, &js).unwrap();
    let out = mongosh_file(&uri, &script);
    let differs = format!("  BLOCKED  shop.orders (MongoDB 6.0.5): {words}");
    assert!(
        out.contains(&differs)
            && out.contains("fix: add customerId, _id to the filter; once the application is fixed, set REFUSED_WRITES_FIXED = true"),
        "{out}"
    );
    let blocked = "  BLOCKED  shop.orders: the unique index number_1 {number: 1} exists: shardCollection refuses {customerId: 1, _id: 1} while it does";
    assert!(out.contains(blocked), "{out}");
    // Not connected to mongos differs from what the plan read; the refused writes and the index
    // are changes the plan needs first: told apart.
    assert!(
        out.contains(
            "shardkey: stopped before changing anything: 1 check differs from what the plan was made from; 2 changes must come first:"
        ),
        "{out}"
    );
    std::fs::write(&script, js.replace("const REFUSED_WRITES_FIXED = false;", "const REFUSED_WRITES_FIXED = true;")).unwrap();
    let out = mongosh_file(&uri, &script);
    assert!(out.contains(&format!("  ok       shop.orders: its writes refused under the planned key ({share:.1}% of its sampled writes) are fixed in the application (REFUSED_WRITES_FIXED)")), "{out}");
    assert!(
        !out.contains("BLOCKED  shop.orders (MongoDB")
            && out.contains(blocked)
            && out.contains("1 check differs from what the plan was made from; 1 change must come first:"),
        "{out}"
    );
}
