//! `shardkey plan` on a generated retail application that behaves as OLTP applications do
//! (issue 37, done-when 1), written as mongod 6.0 logs it: each statement of an update on
//! its own `WRITE` line, then the command's line with `lsid`/`txnNumber`; inserts logged
//! without their documents; reads and inserts on `COMMAND` lines with the session.
//!
//! The application: twelve stores (`storeId` 101..112, the partition field), six
//! collections. Four transactions:
//! - new order (50%): reads one or two catalogue items (`items`, by `_id`, with the constant
//!   `discontinued: 0`), reads the customer by store and id, inserts the order and its line,
//!   updates the customer with the whole previous document as filter (its counters at 0:
//!   the constant a catalogue field shares by coincidence), takes the stock by store and sku;
//! - payment (25%): reads the customer by store and id, then updates it by `_id` alone,
//!   marks the store's order paid, and inserts a history entry (a unique random note, never
//!   in a filter);
//! - delivery (13%): reads the store's new orders and a catalogue item, updates the order by
//!   store and id and the stock by store and sku;
//! - remote order (12%): a new order served from another store's stock (cross-partition
//!   when the two stores' zones differ).
//!
//! The expert plan: customers, orders, orderLines, history and stock zoned together on
//! `storeId` (every transaction but a remote order stays in one store); the catalogue (1% of
//! the data, only read) left unsharded on the primary shard. Its single-shard share is
//! counted below by hand over the generated transactions, from each store's zone shard as
//! the plan's zone ranges place it: a transaction is on one shard when every shard it
//! touches is one (the catalogue's is shard0; an update by `_id` alone in a collection
//! sharded on storeId touches every shard).

mod common;
use common::txn_log::{id_index_only, write_dump_collection, SlowLog, TxnLines};
use common::{shardkey, Lcg};

use bson::{doc, Bson, Document};
use serde_json::{json, Value};
use std::path::Path;

const STORES: i64 = 12;
const CUSTOMERS_PER_STORE: i64 = 100;
const SKUS: i64 = 200;
const TRANSACTIONS: usize = 1200;
const SHARDS: usize = 4;

fn store(i: i64) -> i64 {
    101 + i
}

/// What a generated transaction touches, for the hand count.
#[derive(Debug)]
enum Txn {
    NewOrder {
        store: i64,
    },
    Payment,
    Delivery {
        store: i64,
    },
    /// A new order (catalogue read) whose stock comes from another store.
    Remote {
        store: i64,
        from: i64,
    },
}

/// The dump in `dir/retail`, the log `dir/mongod.log`; the transactions as generated.
fn generate(dir: &Path) -> Vec<Txn> {
    let db = dir.join("retail");
    std::fs::create_dir_all(&db).unwrap();
    let mut rng = Lcg(2026);
    let customers: Vec<Document> = (0..STORES * CUSTOMERS_PER_STORE)
        .map(|c| doc! {"_id": c, "storeId": store(c % STORES), "name": format!("customer {c}"), "balance": 0, "paymentCount": 0})
        .collect();
    let items: Vec<Document> = (0..SKUS)
        .map(|k| doc! {"_id": format!("sku-{k:03}"), "name": format!("item {k}"), "price": 1.5 + k as f64, "discontinued": 0})
        .collect();
    // Documents in the order an application creates them: the stores' interleaved.
    let stock: Vec<Document> = (0..SKUS)
        .flat_map(|k| {
            (0..STORES)
                .map(move |s| doc! {"_id": format!("{}-{k:03}", store(s)), "storeId": store(s), "sku": format!("sku-{k:03}"), "qty": 50})
        })
        .collect();
    let mut orders: Vec<Document> = Vec::new();
    let mut lines: Vec<Document> = Vec::new();
    let mut history: Vec<Document> = Vec::new();
    let order = |orders: &mut Vec<Document>, lines: &mut Vec<Document>, s: i64, c: i64, k: i64| {
        let id = 1_000_000 + orders.len() as i64;
        orders.push(doc! {"_id": id, "storeId": s, "customerId": c, "total": 2.5 + k as f64, "status": "new", "pad": "o".repeat(60)});
        lines.push(
            doc! {"_id": 5_000_000 + lines.len() as i64, "orderId": id, "storeId": s, "sku": format!("sku-{k:03}"), "qty": 1 + k % 5},
        );
        id
    };
    // Orders already there.
    for _ in 0..6000 {
        let c = rng.below((STORES * CUSTOMERS_PER_STORE) as u64) as i64;
        let k = rng.below(SKUS as u64) as i64;
        order(&mut orders, &mut lines, store(c % STORES), c, k);
    }
    let mut log = SlowLog::new("retail", 7);
    let mut txns = Vec::new();
    let mut sessions = Vec::new();
    for t in 0..TRANSACTIONS {
        let lsid = json!({"id": {"$uuid": format!("{:08x}-0000-4000-8000-{:012x}", t, t)}});
        let mut x = TxnLines { lsid, n: 1 + t as i64, db: "retail", lines: Vec::new() };
        let si = rng.below(STORES as u64) as i64;
        let s = store(si);
        let c = si + STORES * rng.below(CUSTOMERS_PER_STORE as u64) as i64;
        let k = rng.below(SKUS as u64) as i64;
        let sku = format!("sku-{k:03}");
        let roll = rng.below(100);
        let txn = if roll < 50 {
            for i in 0..1 + rng.below(2) as i64 {
                x.find("items", json!({"_id": format!("sku-{:03}", (k + i * 7) % SKUS), "discontinued": 0}));
            }
            x.find("customers", json!({"storeId": s, "_id": c}));
            order(&mut orders, &mut lines, s, c, k);
            x.insert("orders");
            x.insert("orderLines");
            x.update(
                "customers",
                json!({"_id": c, "storeId": s, "name": format!("customer {c}"), "balance": 0, "paymentCount": 0}),
                json!({"$set": {"lastOrder": t as i64}}),
            );
            x.update("stock", json!({"storeId": s, "sku": sku}), json!({"$inc": {"qty": -1}}));
            Txn::NewOrder { store: s }
        } else if roll < 75 {
            let o = orders.iter().rev().find(|d| d.get_i64("storeId").unwrap() == s).map(|d| d.get_i64("_id").unwrap()).unwrap();
            x.find("customers", json!({"storeId": s, "_id": c}));
            x.update("customers", json!({"_id": c}), json!({"$inc": {"balance": 5}}));
            x.update("orders", json!({"storeId": s, "_id": o}), json!({"$set": {"status": "paid"}}));
            history.push(doc! {"_id": 9_000_000 + history.len() as i64, "storeId": s, "customerId": c, "note": format!("{:016x}", rng.below(u64::MAX >> 1))});
            x.insert("history");
            Txn::Payment
        } else if roll < 88 {
            let o = orders.iter().rev().find(|d| d.get_i64("storeId").unwrap() == s).map(|d| d.get_i64("_id").unwrap()).unwrap();
            x.find("orders", json!({"storeId": s, "status": "new"}));
            x.find("items", json!({"_id": sku, "discontinued": 0}));
            x.update("orders", json!({"storeId": s, "_id": o}), json!({"$set": {"status": "delivered"}}));
            x.update("stock", json!({"storeId": s, "sku": sku}), json!({"$inc": {"qty": 1}}));
            Txn::Delivery { store: s }
        } else {
            // A new order served from another store's stock.
            let from = store((si + 1 + rng.below(STORES as u64 - 1) as i64) % STORES);
            x.find("items", json!({"_id": sku, "discontinued": 0}));
            x.find("customers", json!({"storeId": s, "_id": c}));
            order(&mut orders, &mut lines, s, c, k);
            x.insert("orders");
            x.insert("orderLines");
            x.update("stock", json!({"storeId": from, "sku": sku}), json!({"$inc": {"qty": -1}}));
            Txn::Remote { store: s, from }
        };
        txns.push(txn);
        sessions.push(x);
    }
    // Three connections, their transactions' lines interleaved as the server writes them.
    for group in sessions.chunks(3) {
        let longest = group.iter().map(|x| x.lines.len()).max().unwrap_or(0);
        for i in 0..longest {
            for (j, x) in group.iter().enumerate() {
                if let Some((c, attr)) = x.lines.get(i) {
                    log.line(&format!("conn{}", 30 + j), c, attr.clone());
                }
            }
        }
    }
    // Reads outside transactions: the catalogue browsed, customers looked up.
    for i in 0..300 {
        log.line("conn50", "COMMAND", json!({"type": "command", "ns": "retail.items", "command": {"find": "items", "filter": {"_id": format!("sku-{:03}", i % SKUS)}, "$db": "retail"}, "durationMillis": 0}));
    }
    write_dump_collection(&db, "customers", &customers, id_index_only());
    write_dump_collection(&db, "items", &items, id_index_only());
    write_dump_collection(&db, "stock", &stock, id_index_only());
    write_dump_collection(&db, "orders", &orders, id_index_only());
    write_dump_collection(&db, "orderLines", &lines, id_index_only());
    write_dump_collection(&db, "history", &history, id_index_only());
    std::fs::write(dir.join("mongod.log"), log.text).unwrap();
    txns
}

/// A zone bound's first field as a number (None for MinKey/MaxKey).
fn bound(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| v.get("$numberLong").and_then(|n| n.as_str()).and_then(|n| n.parse().ok()))
}

/// Each store's shard under the plan's zones for `ns` (its key's first field, ranged or hashed).
fn zone_shards(p: &Value, ns: &str) -> std::collections::BTreeMap<i64, usize> {
    let c = p["collections"].as_array().unwrap().iter().find(|c| c["namespace"] == ns).unwrap();
    let (field, kind) = c["key"].as_object().unwrap().iter().next().unwrap();
    let hashed = kind == "hashed";
    let zones = c["zones"].as_array().unwrap_or_else(|| panic!("{ns} has no zones: {c:#}"));
    (0..STORES)
        .map(|i| {
            let s = store(i);
            let v = if hashed { shardkey::bsonx::hash64(&Bson::Int64(s)) } else { s };
            let z = zones
                .iter()
                .find(|z| bound(&z["min"][field]).is_none_or(|m| m <= v) && bound(&z["max"][field]).is_none_or(|m| v < m))
                .unwrap_or_else(|| panic!("no zone of {ns} holds {s}: {zones:#?}"));
            (s, z["shard"].as_str().unwrap().trim_start_matches("shard").parse().unwrap())
        })
        .collect()
}

/// The hand count: the share of transactions on one shard, with the catalogue copied per
/// zone or not, and the payment's update by `_id` alone given the store or not.
fn hand_share(txns: &[Txn], zone: &std::collections::BTreeMap<i64, usize>, catalogue_copied: bool, id_write_fixed: bool) -> f64 {
    hand_share_on(txns, zone, 0, catalogue_copied, id_write_fixed)
}

/// The same with the catalogue on shard `catalogue` (moveCollection, 8.0).
fn hand_share_on(
    txns: &[Txn],
    zone: &std::collections::BTreeMap<i64, usize>,
    catalogue: usize,
    catalogue_copied: bool,
    id_write_fixed: bool,
) -> f64 {
    let on_one = |shards: &[usize]| shards.windows(2).all(|w| w[0] == w[1]);
    let one = txns
        .iter()
        .filter(|t| match t {
            Txn::NewOrder { store } | Txn::Delivery { store } => catalogue_copied || zone[store] == catalogue,
            Txn::Payment => id_write_fixed,
            Txn::Remote { store, from } => on_one(&[zone[store], zone[from]]) && (catalogue_copied || zone[store] == catalogue),
        })
        .count();
    one as f64 / txns.len() as f64
}

#[test]
fn a_generated_oltp_application_gets_the_expert_plan_and_its_blockers() {
    let tmp = tempfile::tempdir().unwrap();
    let txns = generate(tmp.path());
    if let Ok(keep) = std::env::var("SHARDKEY_KEEP_OLTP") {
        let _ = std::process::Command::new("cp").arg("-r").arg(tmp.path()).arg(&keep).status();
    }
    let dump = tmp.path().join("retail");
    let log = tmp.path().join("mongod.log");
    let args = |fmt: &'static str| {
        vec![
            "plan".to_string(),
            "--dump".into(),
            dump.display().to_string(),
            "--queries".into(),
            log.display().to_string(),
            "--shards".into(),
            SHARDS.to_string(),
            "--target-version".into(),
            "6.0".into(),
            "--format".into(),
            fmt.into(),
        ]
    };
    let run = |fmt| {
        let a = args(fmt);
        shardkey(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let o = run("json");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let p: Value = serde_json::from_slice(&o.stdout).unwrap();
    common::assert_schema("plan", &p);
    assert_eq!(p["transactions"]["found"], TRANSACTIONS as u64, "{:#}", p["transactions"]);
    assert_eq!(p["transactions"]["seenInPart"], 0);

    // The expert's keys and zones: the five store collections zoned together on storeId.
    let partitioned = ["retail.customers", "retail.orders", "retail.orderLines", "retail.history", "retail.stock"];
    let coll = |ns: &str| p["collections"].as_array().unwrap().iter().find(|c| c["namespace"] == ns).unwrap().clone();
    let mut kinds = Vec::new();
    for ns in partitioned {
        let c = coll(ns);
        assert_eq!(c["action"], "shard", "{ns}: {c:#}");
        let (f, kind) = c["key"].as_object().unwrap().iter().next().map(|(f, k)| (f.clone(), k.clone())).unwrap();
        assert_eq!(f, "storeId", "{ns} leads with the partition field: {c:#}\nlinks: {:#}", p["links"]);
        kinds.push(kind);
        assert_eq!(c["colocatedWith"].as_array().map(Vec::len), Some(partitioned.len() - 1), "{ns}: {c:#}");
    }
    assert!(kinds.windows(2).all(|w| w[0] == w[1]), "one kind: {kinds:?}");
    // The catalogue: reference data, left whole.
    assert_eq!(coll("retail.items")["action"], "unsharded", "{:#}", coll("retail.items"));
    // No link from the constant the whole-document filter and the catalogue share (0).
    let links = p["links"].to_string();
    assert!(!links.contains("discontinued") && !links.contains("balance") && !links.contains("paymentCount"), "{links}");
    // The insert-only collections are placed from their documents.
    assert!(
        p["links"].as_array().unwrap().iter().any(|l| l["seenIn"] == "inserts, inferred from the documents"
            && (l["a"] == "retail.history.storeId" || l["b"] == "retail.history.storeId")),
        "{:#}",
        p["links"]
    );

    // Every partitioned collection puts each store on the same shard.
    let zone = zone_shards(&p, "retail.customers");
    for ns in partitioned {
        assert_eq!(zone_shards(&p, ns), zone, "{ns}");
    }
    // The hand count, as is and with each fix.
    let as_is = hand_share(&txns, &zone, false, false);
    let copied = hand_share(&txns, &zone, true, false);
    let by_store = hand_share(&txns, &zone, false, true);
    let both = hand_share(&txns, &zone, true, true);
    let share = p["transactions"]["singleShardShare"].as_f64().unwrap();
    eprintln!(
        "by hand: as is {as_is:.3}, catalogue copied {copied:.3}, payment by store {by_store:.3}, both {both:.3}; the plan's JSON: {:#}",
        p["transactions"]
    );
    assert!((share - as_is).abs() <= 0.02, "single-shard share {share}, by hand {as_is}");
    // The blockers name the two shapes, each with its fix's share.
    let blockers = p["transactions"]["blockers"].as_array().unwrap();
    let blocker = |shape: &str, ns: &str| {
        blockers.iter().find(|b| b["shape"] == shape && b["namespace"] == ns).unwrap_or_else(|| panic!("no {shape} on {ns}: {blockers:#?}"))
    };
    let r = blocker("reference data", "retail.items");
    assert!((r["singleShardShareIfFixed"].as_f64().unwrap() - copied).abs() <= 0.02, "{r:#}, by hand {copied}");
    let w = blocker("write by _id alone", "retail.customers");
    assert_eq!(w["op"], "update");
    assert!(w["fix"].as_str().unwrap().contains("storeId"), "{w:#}");
    assert!((w["singleShardShareIfFixed"].as_f64().unwrap() - by_store).abs() <= 0.02, "{w:#}, by hand {by_store}");
    let all = p["transactions"]["singleShardShareIfAllFixed"].as_f64().unwrap();
    assert!((all - both).abs() <= 0.02, "all fixed {all}, by hand {both}");
    // The payment's cost by hand: every payment (25% of the transactions, give or take the draw).
    let payments = txns.iter().filter(|t| matches!(t, Txn::Payment)).count() as f64 / txns.len() as f64;
    assert!((w["transactionsPercent"].as_f64().unwrap() / 100.0 - payments).abs() <= 0.005, "{w:#}, payments {payments}");

    // The workload's graph: customers and the catalogue meet on one shard only where the
    // store's zone is the catalogue's shard, by hand the share of the transactions touching
    // both whose store is on shard0: cut; customers and orders (same store, zoned) are not.
    let edge = |a: &str, b: &str| {
        p["edges"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["a"] == a && e["b"] == b)
            .unwrap_or_else(|| panic!("{a}-{b}: {:#}", p["edges"]))
            .clone()
    };
    let both: Vec<i64> = txns
        .iter()
        .filter_map(|t| match t {
            Txn::NewOrder { store } | Txn::Remote { store, .. } => Some(*store),
            _ => None,
        })
        .collect();
    let kept = both.iter().filter(|s| zone[s] == 0).count() as f64 / both.len() as f64;
    let ci = edge("retail.customers", "retail.items");
    assert!((ci["keptTogether"].as_f64().unwrap() - kept).abs() <= 0.001 && ci["cut"] == true, "{ci:#}, by hand {kept}");
    assert_eq!(edge("retail.customers", "retail.orderLines")["cut"], false);
    let html = String::from_utf8_lossy(&run("html").stdout).to_string();
    assert!(html.contains("<h2>Workload</h2>") && html.contains("stroke-dasharray"), "the HTML draws the workload, cut edges dashed");

    // From 8.0 moveCollection puts the catalogue where it serves the most transactions: by
    // hand, the shard holding the most stores' catalogue-reading transactions on one shard.
    let p8: Value = serde_json::from_slice(&{
        let mut a = args("json");
        a[8] = "8.0".into();
        shardkey(&a.iter().map(String::as_str).collect::<Vec<_>>()).stdout
    })
    .unwrap();
    common::assert_schema("plan", &p8);
    let zone8 = zone_shards(&p8, "retail.customers");
    let by_shard: Vec<f64> = (0..SHARDS).map(|h| hand_share_on(&txns, &zone8, h, false, false)).collect();
    let items = p8["collections"].as_array().unwrap().iter().find(|c| c["namespace"] == "retail.items").unwrap();
    let home: usize = items["shard"].as_str().unwrap().trim_start_matches("shard").parse().unwrap();
    let best = by_shard.iter().cloned().fold(0.0, f64::max);
    eprintln!("8.0: items on shard{home}; by hand per shard {by_shard:?}");
    assert_eq!(by_shard[home], best, "items on shard{home}: by hand per shard {by_shard:?}");
    let share8 = p8["transactions"]["singleShardShare"].as_f64().unwrap();
    assert!((share8 - best).abs() <= 0.02, "8.0 share {share8}, by hand {best}");

    // The table leads with the blockers after the collections.
    let text = String::from_utf8_lossy(&run("table").stdout).to_string();
    assert!(text.contains("What keeps transactions off one shard"), "{text}");
    assert!(text.contains("write by _id alone") && text.contains("reference data"), "{text}");
}
