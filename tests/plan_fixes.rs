//! Issue 49 item 4, the fixes a DBA can carry out, on a real mongod 6.0.5 (Rust driver,
//! profiler level 2), planned from what a DBA exports: the profiler as mongoexport writes it
//! and the collections as mongodump does, so no version is known.
//! - 80 order transactions for customer `c` (40 customers): read c's orders, insert c's
//!   payment, update customer c, insert an audit entry (`audit`, no customer field);
//! - 30 joins from orders to payments on customerId (`$lookup`).
//!
//! Before 5.1 a `$lookup`'s target must stay unsharded (manual "$lookup: sharded
//! collections"); payments holds half the data, so a plan at 6.0 shards it. Without a version
//! the plan assumes one before 5.1: payments stays unsharded and its blocker's fix says that
//! same assumed version. audit holds no customer field: its fix never says "with the zoned
//! collections".

mod common;
use bson::{doc, Bson, Document};
use common::{rt, shardkey, Mode, Mongod};
use futures_util::TryStreamExt;
use serde_json::Value;
use std::io::Write as _;
use std::path::Path;

const CUSTOMERS: i64 = 40;

fn plan(args: &[&str]) -> Value {
    let o = shardkey(args);
    assert!(o.status.success(), "{args:?}: exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    common::assert_schema("plan", &v);
    v
}

/// What mongodump writes per collection: its documents as BSON and its metadata.
fn dump(dir: &Path, name: &str, docs: &[Document]) {
    common::dump_collection(dir, name, docs, None)
}

fn blocker<'a>(p: &'a Value, ns: &str) -> Option<&'a Value> {
    p["transactions"]["blockers"].as_array().unwrap().iter().find(|b| b["namespace"] == ns)
}

#[test]
fn without_a_version_the_lookup_rule_and_the_fix_say_the_same_and_fixes_can_be_done() {
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("market");
    std::fs::create_dir_all(&dir).unwrap();
    let profile = tmp.path().join("market.system.profile.json");
    rt().block_on(async {
        let db = client.database("market");
        let customers = db.collection::<Document>("customers");
        let orders = db.collection::<Document>("orders");
        let payments = db.collection::<Document>("payments");
        let audit = db.collection::<Document>("audit");
        customers.insert_many((0..CUSTOMERS).map(|i| doc! {"_id": i, "orders": 0, "profile": "z".repeat(3000)})).await.unwrap();
        orders.insert_many((0..3000i64).map(|i| doc! {"_id": i, "customerId": i % CUSTOMERS, "note": "x".repeat(40)})).await.unwrap();
        payments
            .insert_many((0..3000i64).map(|i| doc! {"_id": i, "orderId": i, "customerId": i % CUSTOMERS, "note": "y".repeat(40)}))
            .await
            .unwrap();
        db.create_collection("system.profile").capped(true).size(64 << 20).await.unwrap();
        db.run_command(doc! {"profile": 2, "slowms": -1}).await.unwrap();
        let mut session = client.start_session().await.unwrap();
        for n in 0..80i64 {
            let c = n % CUSTOMERS;
            session.start_transaction().await.unwrap();
            orders.find_one(doc! {"customerId": c}).session(&mut session).await.unwrap();
            payments.insert_one(doc! {"_id": 10_000 + n, "orderId": 10_000 + n, "customerId": c}).session(&mut session).await.unwrap();
            customers.update_one(doc! {"_id": c}, doc! {"$inc": {"orders": 1}}).session(&mut session).await.unwrap();
            audit.insert_one(doc! {"kind": "order", "by": "checkout"}).session(&mut session).await.unwrap();
            session.commit_transaction().await.unwrap();
        }
        for n in 0..30i64 {
            let pipeline = vec![
                doc! {"$match": {"customerId": n % CUSTOMERS}},
                doc! {"$lookup": {"from": "payments", "localField": "customerId", "foreignField": "customerId", "as": "p"}},
            ];
            let _: Vec<Document> = orders.aggregate(pipeline).await.unwrap().try_collect().await.unwrap();
        }
        db.run_command(doc! {"profile": 0, "slowms": 100}).await.unwrap();
        // The DBA's exports: the profiler (mongoexport's relaxed JSON lines), the collections.
        let docs: Vec<Document> = db
            .collection::<Document>("system.profile")
            .find(doc! {})
            .sort(doc! {"$natural": 1})
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        let mut j = std::fs::File::create(&profile).unwrap();
        for d in docs {
            writeln!(j, "{}", Bson::Document(d).into_relaxed_extjson()).unwrap();
        }
        for name in ["customers", "orders", "payments", "audit"] {
            let docs: Vec<Document> = db.collection::<Document>(name).find(doc! {}).await.unwrap().try_collect().await.unwrap();
            dump(&dir, name, &docs);
        }
    });
    let (d, q) = (dir.to_str().unwrap(), profile.to_str().unwrap());
    let base = ["plan", "--dump", d, "--queries", q, "--shards", "4", "--format", "json"];
    let p = plan(&base);
    assert!(p["version"]["words"].as_str().unwrap().starts_with("MongoDB version not known"), "{:#}", p["version"]);
    let coll = |p: &Value, ns: &str| p["collections"].as_array().unwrap().iter().find(|c| c["namespace"] == ns).cloned().unwrap();
    for c in p["collections"].as_array().unwrap() {
        eprintln!("{} {} {} {}", c["namespace"], c["key"], c["colocatedWith"], c["why"]);
    }
    eprintln!("links: {:#}", p["links"]);
    eprintln!("blockers: {:#}", p["transactions"]["blockers"]);
    // Hand count: the transactions of customers outside zone 0 (shard0, where the unsharded
    // collections live) leave one shard: customers c >= zone 0's upper bound, of n % 40.
    let orders = coll(&p, "market.orders");
    let split0 = orders["zones"][0]["max"]["customerId"].as_i64().unwrap_or_else(|| panic!("{orders:#}"));
    let off = (0..80i64).filter(|n| n % CUSTOMERS >= split0).count() as f64;
    let hand = (off * 1000.0 / 80.0).round() / 10.0;
    for ns in ["market.payments", "market.audit"] {
        let b = blocker(&p, ns).unwrap_or_else(|| panic!("{ns}: {:#}", p["transactions"]["blockers"]));
        assert_eq!(b["transactionsPercent"].as_f64(), Some(hand), "{b:#}");
    }
    // The two inserts block the very same transactions: each fixed alone leaves the share at
    // (80 - off) / 80; taken out of the transaction together, every transaction is left with
    // customer c's order read and customer update, zoned together: 80 of 80 (hand count).
    let alone = ((80.0 - off) / 80.0 * 1000.0f64).round() / 1000.0;
    for ns in ["market.payments", "market.audit"] {
        let b = blocker(&p, ns).unwrap();
        assert_eq!(b["singleShardShareIfFixed"].as_f64(), Some(alone), "{b:#}");
        let j = &b["jointFix"];
        let mut st: Vec<&str> = j["statements"].as_array().unwrap_or_else(|| panic!("{b:#}")).iter().map(|x| x.as_str().unwrap()).collect();
        st.sort();
        assert_eq!(st, ["the insert on market.audit", "the insert on market.payments"], "{b:#}");
        assert_eq!(j["singleShardShareIfFixed"].as_f64(), Some(1.0), "{b:#}");
        let fix = j["fix"].as_str().unwrap();
        assert!(fix.starts_with("take the insert on market."), "{fix}");
        assert!(
            fix.contains(&format!(
                "every one of these {off} transactions holds them all, so fixed one at a time each leaves the share at {:.0}%",
                alone * 100.0
            )),
            "{fix}"
        );
    }
    let mut text = base.to_vec();
    text.truncate(base.len() - 2);
    let text = String::from_utf8(shardkey(&text).stdout).unwrap();
    // The text wraps its lines: read it as one.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let said = format!(
        "transaction: every one of these {off} transactions holds them all, so fixed one at a time each leaves the share at {:.0}% (100% on one shard); alone, fix:",
        alone * 100.0
    );
    assert!(flat.contains(&said), "{said}\n{text}");
    // payments: kept unsharded by the pre-5.1 rule, and its blocker's fix says the same version.
    let payments = coll(&p, "market.payments");
    assert!(payments["key"].is_null(), "{payments:#}");
    let b = blocker(&p, "market.payments").unwrap_or_else(|| panic!("{:#}", p["transactions"]["blockers"]));
    let fix = b["fix"].as_str().unwrap();
    assert!(fix.contains("but the plan keeps market.payments unsharded: a $lookup or $graphLookup reads it: before 5.1"), "{fix}");
    assert!(
        fix.contains(
            "no version was given, so the whole plan assumes one before 5.1: with --target-version 5.1 or later it could be sharded"
        ),
        "{fix}"
    );
    // audit: no customer field, so no "with the zoned collections" fix.
    let s = blocker(&p, "market.audit").unwrap_or_else(|| panic!("{:#}", p["transactions"]["blockers"]));
    let fix = s["fix"].as_str().unwrap();
    assert!(!fix.contains("with the zoned collections"), "{fix}");
    assert!(fix.starts_with("none as market.audit is: it holds no field linked to the zoned collections'"), "{fix}");
    // At 6.0 payments is sharded: the rule no longer holds it.
    let mut at6 = base.to_vec();
    at6.extend(["--target-version", "6.0"]);
    let p6 = plan(&at6);
    let payments = coll(&p6, "market.payments");
    assert!(payments["key"].is_object(), "{payments:#}");
    assert!(!p6["transactions"]["blockers"].to_string().contains("before 5.1"), "{:#}", p6["transactions"]["blockers"]);
}
