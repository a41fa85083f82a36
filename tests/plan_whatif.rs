//! Issue 49 item 4: what-if zones for a given key. A shop database on a real mongod 6.0.5
//! replica set, run with the Rust driver and read from the server's log (`slowms: -1`):
//! - 60 "order" transactions: read shop `s`'s orders, update shop `s` (s = 1..20): the logs
//!   link orders.shopId and shops._id (the same value in every one, 20 values), so the plan
//!   zones them together on the shop id;
//! - 20 "counter" transactions: read shop `s`'s orders, update shop `s`'s counter, for two
//!   shops only (3 and 17): too few values for the logs to link counters.shopId (a link needs
//!   three), so today `--key counters={shopId: 1}` shards counters on the zone field but
//!   outside the zones, and those transactions count as cross-shard.
//!
//! Hand count: every statement of every transaction names one shop id; with counters zoned on
//! shopId beside orders and shops, each transaction is on the shard of its shop's zone: 80 of
//! 80, 100%. Before the fix the plan as given said 81.3%: 60 order transactions, and each
//! counter transaction on one shard only when counters' chunk meets the shop's zone, with
//! chance 1/4 (60 + 20/4) / 80 = 0.8125.

mod common;
use bson::{doc, Document};
use common::{rt, shardkey, Mode, Mongod};
use serde_json::Value;

const SHOPS: i64 = 20;

#[test]
fn a_given_key_on_the_zone_field_gets_the_zones() {
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    let logpath = m.dir.path().join("mongod.log");
    let (orders_txns, counter_txns) = rt().block_on(async {
        let db = client.database("market");
        let shops = db.collection::<Document>("shops");
        let orders = db.collection::<Document>("orders");
        let counters = db.collection::<Document>("counters");
        shops.insert_many((1..=SHOPS).map(|i| doc! {"_id": i, "orders": 0})).await.unwrap();
        orders.insert_many((0..2000i64).map(|i| doc! {"_id": i, "shopId": 1 + i % SHOPS, "total": 1.5})).await.unwrap();
        counters
            .insert_many(
                (0..2 * SHOPS).map(|i| doc! {"_id": i, "shopId": 1 + i / 2, "name": if i % 2 == 0 { "orders" } else { "visits" }, "n": 0}),
            )
            .await
            .unwrap();
        db.run_command(doc! {"profile": 0, "slowms": -1}).await.unwrap();
        let mut session = client.start_session().await.unwrap();
        let (mut a, mut b) = (0, 0);
        for n in 0..80i64 {
            session.start_transaction().await.unwrap();
            if n % 4 == 3 {
                let s = if n % 8 == 3 { 3 } else { 17 };
                orders.find_one(doc! {"shopId": s}).session(&mut session).await.unwrap();
                counters.update_one(doc! {"shopId": s, "name": "orders"}, doc! {"$inc": {"n": 1}}).session(&mut session).await.unwrap();
                b += 1;
            } else {
                let s = 1 + n % SHOPS;
                orders.find_one(doc! {"shopId": s}).session(&mut session).await.unwrap();
                shops.update_one(doc! {"_id": s}, doc! {"$inc": {"orders": 1}}).session(&mut session).await.unwrap();
                a += 1;
            }
            session.commit_transaction().await.unwrap();
        }
        db.run_command(doc! {"profile": 0, "slowms": 100}).await.unwrap();
        (a, b)
    });
    assert_eq!((orders_txns, counter_txns), (60, 20));
    let uri = m.uri();
    let base = ["plan", "--uri", &uri, "--database", "market", "--queries", logpath.to_str().unwrap(), "--shards", "4"];
    let run = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend(extra);
        let o = shardkey(&a);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let given = ["--key", "counters={shopId: 1}", "--key", "orders={shopId: 1, _id: 1}"];
    let mut json = given.to_vec();
    json.extend(["--format", "json"]);
    let p: Value = serde_json::from_str(&run(&json)).unwrap();
    common::assert_schema("plan", &p);
    eprintln!("links: {:#}", p["links"]);
    // The logs link orders and shops, not counters.
    assert!(!p["links"].to_string().contains("counters"), "{:#}", p["links"]);
    let g = &p["given"];
    let coll = |ns: &str| g["collections"].as_array().unwrap().iter().find(|c| c["namespace"] == ns).cloned().unwrap();
    let counters = coll("market.counters");
    let orders = coll("market.orders");
    eprintln!("counters: {counters:#}\ngiven transactions: {:#}", g["transactions"]);
    assert_eq!(counters["key"], serde_json::json!({"shopId": 1}), "{counters:#}");
    assert!(counters["colocatedWith"].to_string().contains("market.orders"), "{counters:#}");
    // The same ranges as orders (zone i on shard i), in counters' own key.
    let ranges = counters["zones"].as_array().unwrap();
    assert_eq!(ranges.len(), orders["zones"].as_array().unwrap().len(), "{counters:#}\n{orders:#}");
    assert!(!ranges.is_empty());
    // Hand count: 80 of 80 transactions on one shard.
    let hand = (orders_txns + counter_txns) as f64 / 80.0;
    assert_eq!(g["transactions"]["singleShardShare"].as_f64(), Some(hand), "{:#}", g["transactions"]);
    // The plan as given zones counters in its commands: one updateZoneKeyRange per zone,
    // in the same zones as orders.
    let commands: Vec<&str> = g["commands"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    let zoned = |ns: &str| commands.iter().filter(|c| c.starts_with(&format!("sh.updateZoneKeyRange(\"{ns}\""))).count();
    assert_eq!((zoned("market.counters"), zoned("market.orders")), (ranges.len(), ranges.len()), "{commands:#?}");
    // The mongosh script applies the plan as given: its header's commands and its steps zone
    // counters, as many ranges as orders.
    let script = run(&[&given[..], &["--format", "mongosh"]].concat());
    assert!(script.contains("// The plan as given (--key, --unsharded)"), "{script}");
    let header = |ns: &str| script.lines().filter(|l| l.starts_with(&format!("//   sh.updateZoneKeyRange(\"{ns}\""))).count();
    assert_eq!((header("market.counters"), header("market.orders")), (ranges.len(), ranges.len()), "{script}");
    let plan_line = script.lines().find(|l| l.starts_with("const PLAN = ")).unwrap();
    assert_eq!(plan_line.matches(r#"\"op\":\"updateZoneKeyRange\",\"ns\":\"market.counters\""#).count(), ranges.len(), "{plan_line}");
    // And the table says it: counters beside orders in your plan.
    let table = run(&given);
    assert!(table.contains("market.counters"), "{table}");
}
