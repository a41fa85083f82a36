//! `shardkey plan` (README "Planning a whole database", docs/reference.md "plan"): a generated shop database (a mongodump directory and
//! a mongod 6.0 JSON log in the server's own line format, with `lsid`/`txnNumber`
//! transactions and `$lookup`s), and live against a real mongod 6.0.5 replica set running
//! multi-document transactions through driver sessions.
//!
//! The expert plan for the generated shop, and where it comes from: the checkout
//! transaction writes an order, its payment and the customer's counter for one customer
//! id, so those three collections share the customer id's values; the manual ("Zones",
//! "Manage Shard Zones") co-locates such data with zones over the shared leading field,
//! and the balancer alone would place each collection's chunks by itself. `regions`
//! (five documents, read outside transactions) stays unsharded on the primary shard
//! (manual "Sharded and Non-Sharded Collections"); `events` (a third of the data, no
//! customer id) is sharded on its own best key, without zones.

mod common;
use common::{shardkey, Lcg};

use bson::{doc, Bson, Document};
use serde_json::Value;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output};

/// A plan's JSON report, held to the published schema (schemas/plan.schema.json).
fn json(o: &Output) -> Value {
    assert!(o.status.success(), "exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    let v = serde_json::from_slice(&o.stdout).unwrap();
    common::assert_schema("plan", &v);
    v
}

const CUSTOMERS: i64 = 400;
const ORDERS: i64 = 4000;
const CHECKOUTS: usize = 400;
const RESTOCKS: usize = 100;
const LOOKUPS: usize = 200;

fn write_collection(dir: &Path, name: &str, docs: &[Document]) {
    common::dump_collection(dir, name, docs, None)
}

/// One mongod 6.0 log line (the shape the real server writes; see tests/plan.rs's live test).
fn line(out: &mut String, ms: &mut u64, ctx: &str, c: &str, id: u32, msg: &str, attr: Value) {
    *ms += 1;
    let t = format!("2026-11-24T06:{:02}:{:02}.{:03}+00:00", (*ms / 60_000) % 60, (*ms / 1000) % 60, *ms % 1000);
    // The server's field order: t, s, c, id, ctx, msg, attr.
    writeln!(out, r#"{{"t":{{"$date":"{t}"}},"s":"I","c":"{c}","id":{id},"ctx":"{ctx}","msg":"{msg}","attr":{attr}}}"#).unwrap();
}

fn lsid(n: usize) -> Value {
    serde_json::json!({"id": {"$uuid": format!("{:08x}-0000-4000-8000-{:012x}", n, n)}})
}

/// The shop: documents in `dir/shop/*.bson` and the log `dir/mongod.log`. Returns the
/// customer of each transaction: the checkouts, then the restocks.
fn generate(dir: &Path) -> Vec<i64> {
    let db = dir.join("shop");
    std::fs::create_dir_all(&db).unwrap();
    let mut rng = Lcg(42);
    let regions = ["eu", "us", "apac", "latam", "africa"];
    let customers: Vec<Document> = (0..CUSTOMERS)
        .map(|i| doc! {"_id": i, "name": format!("customer {i}"), "region": regions[(i % 5) as usize], "orders": 0})
        .collect();
    let orders: Vec<Document> = (0..ORDERS)
        .map(|i| doc! {"_id": 1_000_000 + i, "customerId": rng.below(CUSTOMERS as u64) as i64, "status": "paid", "total": (i % 97) as f64 + 0.5, "note": "x".repeat(40)})
        .collect();
    let payments: Vec<Document> = orders
        .iter()
        .enumerate()
        .map(|(i, o)| doc! {"_id": 5_000_000 + i as i64, "orderId": o.get_i64("_id").unwrap(), "customerId": o.get_i64("customerId").unwrap(), "amount": 10.5, "note": "y".repeat(40)})
        .collect();
    let events: Vec<Document> = (0..ORDERS)
        .map(|i| doc! {"_id": i, "ts": bson::DateTime::from_millis(1_700_000_000_000 + i * 1000), "type": if i % 2 == 0 { "restock" } else { "view" }, "sku": format!("sku-{}", i % 300), "note": "z".repeat(60)})
        .collect();
    let regions_docs: Vec<Document> = regions.iter().map(|r| doc! {"_id": *r, "vat": 0.2}).collect();
    write_collection(&db, "customers", &customers);
    write_collection(&db, "orders", &orders);
    write_collection(&db, "payments", &payments);
    write_collection(&db, "events", &events);
    write_collection(&db, "regions", &regions_docs);

    let mut log = String::new();
    let mut ms = 0u64;
    // Startup noise the reader skips.
    line(&mut log, &mut ms, "initandlisten", "CONTROL", 23403, "Build Info", serde_json::json!({"buildInfo": {"version": "6.0.5"}}));
    // Transactions, two connections interleaved line by line: checkouts (an order, the
    // customer's counter, a payment, all for one customer) and restocks (an event and a
    // customer's counter).
    let mut txns: Vec<Vec<(String, u32, String, Value)>> = Vec::new();
    let mut customer_of = Vec::new();
    for t in 0..CHECKOUTS + RESTOCKS {
        let ctx = format!("conn{}", 10 + t % 2);
        let c = rng.below(CUSTOMERS as u64) as i64;
        customer_of.push(c);
        let ls = lsid(t);
        let n = 1 + t as i64;
        // The command's name first, as the server logs it.
        let cmd = |mut m: Value| {
            for (k, v) in [("lsid", ls.clone()), ("txnNumber", n.into()), ("autocommit", false.into()), ("$db", "shop".into())] {
                m[k] = v;
            }
            m
        };
        let mut lines = Vec::new();
        let slow = |ns: &str, command: Value| serde_json::json!({"type": "command", "ns": ns, "command": command, "durationMillis": 0});
        let update_customer = |lines: &mut Vec<(String, u32, String, Value)>| {
            lines.push(("WRITE".into(), 51803, "Slow query".into(), serde_json::json!({"type": "update", "ns": "shop.customers", "command": {"q": {"_id": c}, "u": {"$inc": {"orders": 1}}, "multi": false, "upsert": false}, "planSummary": "IDHACK", "durationMillis": 0})));
            lines.push((
                "COMMAND".into(),
                51803,
                "Slow query".into(),
                slow("shop.$cmd", cmd(serde_json::json!({"update": "customers", "ordered": true}))),
            ));
        };
        if t < CHECKOUTS {
            lines.push((
                "COMMAND".into(),
                51803,
                "Slow query".into(),
                slow("shop.orders", cmd(serde_json::json!({"find": "orders", "filter": {"customerId": c}, "startTransaction": true}))),
            ));
            lines.push((
                "COMMAND".into(),
                51803,
                "Slow query".into(),
                slow("shop.orders", cmd(serde_json::json!({"insert": "orders", "ordered": true}))),
            ));
            update_customer(&mut lines);
            lines.push((
                "COMMAND".into(),
                51803,
                "Slow query".into(),
                slow("shop.payments", cmd(serde_json::json!({"insert": "payments", "ordered": true}))),
            ));
        } else {
            lines.push((
                "COMMAND".into(),
                51803,
                "Slow query".into(),
                slow("shop.events", cmd(serde_json::json!({"insert": "events", "ordered": true, "startTransaction": true}))),
            ));
            update_customer(&mut lines);
        }
        lines.push(("TXN".into(), 51802, "transaction".into(), serde_json::json!({"parameters": {"lsid": ls, "txnNumber": n, "autocommit": false}, "terminationCause": "committed", "durationMillis": 1})));
        txns.push(lines.into_iter().map(|(c, id, m, a)| (c, id, m, serde_json::json!({"ctx": ctx, "attr": a}))).collect());
    }
    for pair in txns.chunks(2) {
        let longest = pair.iter().map(Vec::len).max().unwrap_or(0);
        for i in 0..longest {
            for t in pair {
                if let Some((c, id, m, v)) = t.get(i) {
                    line(&mut log, &mut ms, v["ctx"].as_str().unwrap(), c, *id, m, v["attr"].clone());
                }
            }
        }
    }
    // Reads and writes outside transactions.
    let plain = |log: &mut String, ms: &mut u64, ns: &str, command: Value| {
        line(
            log,
            ms,
            "conn20",
            "COMMAND",
            51803,
            "Slow query",
            serde_json::json!({"type": "command", "ns": ns, "command": command, "durationMillis": 0}),
        )
    };
    for i in 0..LOOKUPS {
        let c = rng.below(CUSTOMERS as u64) as i64;
        plain(
            &mut log,
            &mut ms,
            "shop.orders",
            serde_json::json!({"aggregate": "orders", "pipeline": [{"$match": {"customerId": c}}, {"$lookup": {"from": "payments", "localField": "customerId", "foreignField": "customerId", "as": "p"}}], "cursor": {}, "$db": "shop"}),
        );
        plain(&mut log, &mut ms, "shop.orders", serde_json::json!({"find": "orders", "filter": {"customerId": c}, "$db": "shop"}));
        let o = 1_000_000 + rng.below(ORDERS as u64) as i64;
        plain(&mut log, &mut ms, "shop.payments", serde_json::json!({"find": "payments", "filter": {"orderId": o}, "$db": "shop"}));
        plain(&mut log, &mut ms, "shop.regions", serde_json::json!({"find": "regions", "filter": {"_id": "eu"}, "$db": "shop"}));
        plain(&mut log, &mut ms, "shop.events", serde_json::json!({"insert": "events", "ordered": true, "$db": "shop"}));
        plain(&mut log, &mut ms, "shop.events", serde_json::json!({"find": "events", "filter": {"_id": (i * 7) as i64}, "$db": "shop"}));
    }
    std::fs::write(dir.join("mongod.log"), log).unwrap();
    customer_of
}

fn collection<'a>(p: &'a Value, ns: &str) -> &'a Value {
    p["collections"].as_array().unwrap().iter().find(|c| c["namespace"] == ns).unwrap_or_else(|| panic!("no {ns} in {p:#}"))
}

fn first_field(c: &Value) -> (String, Value) {
    let k = c["key"].as_object().unwrap_or_else(|| panic!("{} has no key: {c:#}", c["namespace"]));
    let (f, v) = k.iter().next().unwrap();
    (f.clone(), v.clone())
}

#[test]
fn the_generated_shop_gets_the_expert_plan() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path());
    if let Ok(keep) = std::env::var("SHARDKEY_KEEP_PLAN") {
        let _ = std::fs::copy(tmp.path().join("mongod.log"), &keep);
        let _ = Command::new("cp").arg("-r").arg(tmp.path().join("shop")).arg(Path::new(&keep).with_file_name("shop")).status();
    }
    let dump = tmp.path().join("shop");
    let log = tmp.path().join("mongod.log");
    let out = shardkey(&[
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
    let p = json(&out);
    // Found: every transaction, its statements tied to it through their connection.
    assert_eq!(p["transactions"]["found"], (CHECKOUTS + RESTOCKS) as u64, "{:#}", p["transactions"]);
    assert_eq!(p["transactions"]["summaryLines"], (CHECKOUTS + RESTOCKS) as u64);
    assert_eq!(p["joins"]["found"], LOOKUPS as u64);
    // The customer-id collections: sharded, on keys starting with the customer id, one kind, zoned together.
    let (of, ok) = first_field(collection(&p, "shop.orders"));
    let (pf, pk) = first_field(collection(&p, "shop.payments"));
    let (cf, ck) = first_field(collection(&p, "shop.customers"));
    assert_eq!((of.as_str(), pf.as_str(), cf.as_str()), ("customerId", "customerId", "_id"), "{:#}", p["collections"]);
    assert!(ok == pk && pk == ck, "one kind: {ok} {pk} {ck}");
    for ns in ["shop.orders", "shop.payments", "shop.customers"] {
        let c = collection(&p, ns);
        assert_eq!(c["action"], "shard");
        let zones = c["zones"].as_array().unwrap();
        assert_eq!(zones.len(), 4, "{ns}: one zone range per shard");
        assert_eq!(c["colocatedWith"].as_array().unwrap().len(), 2);
    }
    // The same zone names and shards for all three, bounds in each collection's own field.
    let zones_of = |ns: &str| -> Vec<(Value, Value)> {
        collection(&p, ns)["zones"].as_array().unwrap().iter().map(|z| (z["zone"].clone(), z["shard"].clone())).collect()
    };
    assert_eq!(zones_of("shop.orders"), zones_of("shop.customers"));
    assert_eq!(zones_of("shop.payments"), zones_of("shop.customers"));
    assert!(collection(&p, "shop.customers")["zones"][1]["min"].get("_id").is_some());
    // payments alone would not lead with the customer id: its own reads are by orderId.
    assert!(collection(&p, "shop.payments")["tradeOff"].is_string() || collection(&p, "shop.customers")["tradeOff"].is_string());
    // regions stays unsharded; events is sharded on its own, without zones.
    assert_eq!(collection(&p, "shop.regions")["action"], "unsharded");
    assert_eq!(collection(&p, "shop.events")["action"], "shard");
    // Zones beside an unsharded collection on the primary shard: shard0 is said to be it.
    assert!(p["notes"].to_string().contains("shard0 is the database's primary shard"), "{}", p["notes"]);
    // Every collection lists its zones and partners, empty when it has none (always present).
    assert_eq!(collection(&p, "shop.events")["zones"], serde_json::json!([]));
    assert_eq!(collection(&p, "shop.regions")["colocatedWith"], serde_json::json!([]));
    // Hand computation: a checkout's four operations sit in one zone (its customer's), so
    // it runs on one shard; a restock writes an event (placed by the balancer on any of
    // the 4 shards, independently) and a customer (its zone's shard): one shard with
    // chance 1/4. (400 × 1 + 100 × 1/4) / 500 = 0.85. Each join reads the orders and
    // payments of one customer, both in that customer's zone: 1.
    let share = p["transactions"]["singleShardShare"].as_f64().unwrap();
    assert!((share - 0.85).abs() < 1e-9, "single-shard share {share}");
    assert_eq!(p["joins"]["singleShardShare"].as_f64(), Some(1.0));
    // What keeps the restocks off one shard, by hand: the event inserted into a collection
    // sharded on its own (no customer id to zone it by), its document not in the log: the
    // shard it goes to is decided by a document nobody saw, so it is no blocker ("sharded
    // apart") but not placed: 100 of 500 transactions, 20% (issue 49). Nothing else costs.
    let t = &p["transactions"];
    assert_eq!(t["blockers"], serde_json::json!([]), "{t:#}");
    assert_eq!(t["notPlaced"]["transactionsPercent"].as_f64(), Some(100.0 * RESTOCKS as f64 / (CHECKOUTS + RESTOCKS) as f64), "{t:#}");
    assert_eq!(t["notPlaced"]["namespaces"], serde_json::json!(["shop.events"]), "{t:#}");
    // Each collection on its own best key: far fewer.
    assert!(p["transactions"]["singleShardShareIndividualBest"].as_f64().unwrap() < 0.5, "{:#}", p["transactions"]);
    // The commands: zones, then the ranges, then shardCollection.
    let cmds: Vec<&str> = p["commands"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    let first = |pat: &str| cmds.iter().position(|c| c.contains(pat)).unwrap_or_else(|| panic!("no {pat} in {cmds:#?}"));
    assert!(first("sh.addShardToZone") < first("sh.updateZoneKeyRange"));
    assert!(first("sh.updateZoneKeyRange") < first("sh.shardCollection"));
    assert!(!cmds.iter().any(|c| c.contains("\"shop.regions\"")), "regions is not sharded: {cmds:#?}");
    // Without --shard-size the data is not sized, and the report says how to.
    assert!(p["sizing"].get("shardsForData").is_none());
    assert!(p["sizing"]["words"].as_str().unwrap().contains("--shard-size"));
    // The log spans a known time: one line a millisecond.
    assert!(p["sizing"]["operationsPerSecond"].as_f64().unwrap() > 100.0, "{:#}", p["sizing"]);

    // Before 5.1 a $lookup's target must stay unsharded: payments then stays on the primary shard.
    let old = json(&shardkey(&[
        "plan",
        "--dump",
        dump.to_str().unwrap(),
        "--queries",
        log.to_str().unwrap(),
        "--shards",
        "4",
        "--target-version",
        "5.0",
        "--format",
        "json",
    ]));
    assert_eq!(collection(&old, "shop.payments")["action"], "unsharded");

    // Sizing: 64 KiB shards hold the data in ceil(data / 65536) shards; with what one shard
    // sustains, the load is sized too.
    let sized = json(&shardkey(&[
        "plan",
        "--dump",
        dump.to_str().unwrap(),
        "--queries",
        log.to_str().unwrap(),
        "--shards",
        "4",
        "--target-version",
        "6.0",
        "--shard-size",
        "64K",
        "--shard-ops",
        "1000",
        "--format",
        "json",
    ]));
    let data = sized["sizing"]["dataBytes"].as_u64().unwrap();
    assert_eq!(sized["sizing"]["shardsForData"].as_u64(), Some(data.div_ceil(65536)), "{:#}", sized["sizing"]);
    assert!(sized["sizing"]["shardsForLoad"].as_u64().unwrap() >= 1);

    // The other formats say the same.
    for fmt in ["table", "markdown", "html"] {
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
            fmt,
        ]);
        assert!(o.status.success(), "{fmt}: {}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains("shop.orders") && text.contains("sh.updateZoneKeyRange"), "{fmt}: {text}");
        assert!(text.contains("85%"), "{fmt} gives the single-shard share: {text}");
        if fmt == "table" {
            // Prose fits 100 columns, as the analysis does; a mongosh command stays whole to be copied.
            let is_command = |l: &str| ["db.", "sh.", "use "].iter().any(|p| l.trim_start().starts_with(p));
            let widest = text.lines().filter(|l| !is_command(l)).map(|l| l.chars().count()).max().unwrap_or(0);
            assert!(widest <= 100, "the plan's table fits 100 columns, as the analysis does: {widest}");
        }
    }
}

/// What if (docs/reference.md "plan", what if): the DBA's choices kept, the rest chosen
/// around them, both plans' single-shard shares against a count over the generated transactions.
#[test]
fn what_if_keeps_the_given_keys_and_compares_both_plans() {
    let tmp = tempfile::tempdir().unwrap();
    let customer_of = generate(tmp.path());
    let (dump, log) = (tmp.path().join("shop"), tmp.path().join("mongod.log"));
    let plan = |extra: &[&str]| {
        let mut a = vec!["plan", "--dump", dump.to_str().unwrap(), "--queries", log.to_str().unwrap(), "--shards", "4"];
        a.extend_from_slice(&["--target-version", "6.0", "--format", "json"]);
        a.extend_from_slice(extra);
        json(&shardkey(&a))
    };
    let share = |v: &Value| v["transactions"]["singleShardShare"].as_f64().unwrap();

    // orders kept on its _id. By hand: a checkout finds the customer's orders by customerId,
    // which {_id: 1} sends to every shard: none of the 400 is on one shard. A restock inserts
    // an event (events is a third of the data: sharded, its chunk placed by the balancer) and
    // updates a customer (unsharded on shard0, or sharded apart): together with chance 1/4.
    // (0 + 100 × 1/4) / 500 = 0.05. shardkey's own plan stays the expert one: 0.85.
    let p = plan(&["--key", "shop.orders={_id: 1}"]);
    let g = &p["given"];
    assert_eq!(g["choices"], serde_json::json!([{"namespace": "shop.orders", "key": {"_id": 1}}]));
    let orders = collection(g, "shop.orders");
    assert_eq!((orders["action"].as_str(), &orders["key"]), (Some("shard"), &serde_json::json!({"_id": 1})));
    assert!(orders["why"].as_str().unwrap().starts_with("kept as given: {_id: 1} scores "), "{orders:#}");
    // The rest chosen around it: no collection zoned with orders, whose key has no customer id.
    for ns in ["shop.payments", "shop.customers"] {
        assert!(!collection(g, ns)["colocatedWith"].as_array().unwrap().iter().any(|x| x == "shop.orders"), "{g:#}");
    }
    let yours = (0.0 * CHECKOUTS as f64 + 0.25 * RESTOCKS as f64) / (CHECKOUTS + RESTOCKS) as f64;
    assert!((share(g) - yours).abs() < 1e-9, "yours: {} against {yours}", share(g));
    assert!((share(&p) - 0.85).abs() < 1e-9, "shardkey's: {}", share(&p));
    assert_eq!(first_field(collection(&p, "shop.orders")).0, "customerId", "shardkey's own plan is unchanged");
    assert!((g["difference"]["singleShardShare"].as_f64().unwrap() - (0.85 - yours)).abs() < 1e-9, "{:#}", g["difference"]);
    // Each join reads one customer's orders by customerId: every shard under {_id: 1}.
    assert_eq!((g["joins"]["singleShardShare"].as_f64(), g["difference"]["joinsSingleShardShare"].as_f64()), (Some(0.0), Some(1.0)));
    assert!(
        g["words"]
            .as_str()
            .unwrap()
            .starts_with("your plan keeps 5% of transactions on one shard, 80 points fewer than shardkey's plan (85%)"),
        "{}",
        g["words"]
    );
    assert!(g["commands"].as_array().unwrap().iter().any(|c| c == "sh.shardCollection(\"shop.orders\", {_id: 1})"), "{:#}", g["commands"]);

    // Ranged keys on the customer id, and events kept unsharded: the three zoned together on
    // the customer id's ranges, events on the primary shard (shard0, before 8.0). By hand: a
    // checkout is in its customer's zone (1); a restock's event is on shard0, its customer in
    // its zone: on one shard when the customer's zone is zone 0 (on shard0), below the first
    // zone bound. Counted over the generated restocks.
    let p = plan(&[
        "--key",
        "shop.orders={customerId: 1}",
        "--key",
        "payments={customerId: 1}",
        "--key",
        "shop.customers={_id: 1}",
        "--unsharded",
        "shop.events",
    ]);
    let g = &p["given"];
    assert_eq!(g["choices"].as_array().unwrap().len(), 4);
    assert_eq!(collection(g, "shop.events")["action"], "unsharded");
    assert_eq!(collection(g, "shop.events")["shard"], "shard0");
    assert_eq!(collection(g, "shop.customers")["colocatedWith"].as_array().unwrap().len(), 2, "{g:#}");
    let zone0 = &collection(g, "shop.customers")["zones"][0];
    assert_eq!(zone0["shard"], "shard0");
    let bound = zone0["max"]["_id"].as_i64().unwrap_or_else(|| panic!("{zone0:#}"));
    let on_shard0 = customer_of[CHECKOUTS..].iter().filter(|c| **c < bound).count();
    let yours = (CHECKOUTS + on_shard0) as f64 / (CHECKOUTS + RESTOCKS) as f64;
    assert!((share(g) - yours).abs() < 1e-9, "yours: {} against ({CHECKOUTS} + {on_shard0}) / 500 = {yours}", share(g));
    assert!((share(&p) - 0.85).abs() < 1e-9);

    // The table, Markdown and HTML give both plans.
    for fmt in ["table", "markdown", "html"] {
        let mut a = vec!["plan", "--dump", dump.to_str().unwrap(), "--queries", log.to_str().unwrap(), "--shards", "4"];
        a.extend_from_slice(&["--target-version", "6.0", "--key", "shop.orders={_id: 1}", "--format", fmt]);
        let o = shardkey(&a);
        let text = String::from_utf8_lossy(&o.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(o.status.success(), "{fmt}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(text.contains("What if: shop.orders {_id: 1} kept, the rest chosen around it: your plan keeps 5% of transactions on one shard, 80 points fewer than shardkey's plan (85%)"), "{fmt}: {text}");
        assert!(text.contains("shard {_id: 1} (given)") && text.contains("shardkey's plan, chosen on its own"), "{fmt}: {text}");
    }
}

/// `check` holds the database to the plan its policy declares (`[plan]`): the declared keys
/// kept, judged against shardkey's own plan on the same dump and log.
#[test]
fn check_holds_the_database_to_its_declared_plan() {
    let tmp = tempfile::tempdir().unwrap();
    let customer_of = generate(tmp.path());
    let (dump, log) = (tmp.path().join("shop"), tmp.path().join("mongod.log"));
    let policy = tmp.path().join("shardkey.toml");
    let check = |text: &str| {
        std::fs::write(&policy, text).unwrap();
        let o = shardkey(&[
            "check",
            "--policy",
            policy.to_str().unwrap(),
            "--dump",
            dump.to_str().unwrap(),
            "--queries",
            log.to_str().unwrap(),
            "--shards",
            "4",
            "--format",
            "json",
        ]);
        let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
        common::assert_schema("check", &v);
        let rule = |name: &str| v["databaseRules"].as_array().unwrap().iter().find(|r| r["rule"] == name).cloned().unwrap();
        (o.status.code(), rule("max_single_shard_loss_percent"), rule("forbid_refused_keys"))
    };
    // orders on its _id: 0.05 of the transactions on one shard against shardkey's 0.85 (by
    // hand, above): 80 points given up, more than the 10 allowed. The culprit names the
    // collection whose choice differs, and what keeps the declared plan's transactions apart.
    let (code, loss, refused) =
        check("[plan]\ntarget_version = \"6.0\"\nmax_single_shard_loss_percent = 10\n\n[plan.keys]\norders = \"{_id: 1}\"\n");
    assert_eq!(code, Some(1), "{loss:#}");
    assert_eq!((loss["passed"].as_bool(), loss["actual"].as_f64()), (Some(false), Some(80.0)), "{loss:#}");
    let causes = loss["culprit"]["causes"].to_string();
    assert!(causes.contains("shop.orders: declared shard {_id: 1}, shardkey's shard {customerId: "), "{causes}");
    assert_eq!(loss["location"]["line"], 6, "the declared key's line: {loss:#}");
    assert_eq!(refused["passed"], true);
    // The expert plan on ranges, events unsharded: (400 + 26) / 500 = 0.852 on one shard (the
    // count above), 0.2 points more than shardkey's 0.85: it holds.
    let (code, loss, _) = check(
        "[plan]\ntarget_version = \"6.0\"\nunsharded = [\"events\"]\n\n[plan.keys]\norders = \"{customerId: 1}\"\npayments = \"{customerId: 1}\"\ncustomers = \"{_id: 1}\"\n",
    );
    // Zone 0's upper bound, as the plan with those keys lays it out (see the what-if test).
    let mut a = vec!["plan", "--dump", dump.to_str().unwrap(), "--queries", log.to_str().unwrap(), "--shards", "4"];
    a.extend_from_slice(&["--target-version", "6.0", "--format", "json", "--unsharded", "events"]);
    a.extend_from_slice(&["--key", "orders={customerId: 1}", "--key", "payments={customerId: 1}", "--key", "customers={_id: 1}"]);
    let p = json(&shardkey(&a));
    let bound = collection(&p["given"], "shop.customers")["zones"][0]["max"]["_id"].as_i64().unwrap();
    let on_shard0 = customer_of[CHECKOUTS..].iter().filter(|c| **c < bound).count();
    let declared = (CHECKOUTS + on_shard0) as f64 / (CHECKOUTS + RESTOCKS) as f64;
    assert_eq!(code, Some(0), "{loss:#}");
    assert!((loss["actual"].as_f64().unwrap() - (0.85 - declared) * 100.0).abs() < 1e-6, "{loss:#} against {declared}");
    // A declared collection the database does not hold: one line, exit 2.
    std::fs::write(&policy, "[plan]\n[plan.keys]\nordrs = \"{_id: 1}\"\n").unwrap();
    let o =
        shardkey(&["check", "--policy", policy.to_str().unwrap(), "--dump", dump.to_str().unwrap(), "--queries", log.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!((o.status.code(), err.lines().count()), (Some(2), 1), "{err}");
    assert!(err.contains("[plan.keys] ordrs: no collection shop.ordrs in database shop; did you mean shop.orders?"), "{err}");
}

#[test]
fn what_if_refuses_what_the_database_cannot_have_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path());
    let (dump, log) = (tmp.path().join("shop"), tmp.path().join("mongod.log"));
    for (given, expected) in [
        (&["--key", "shop.ordrs={customerId: 1}"][..], "--key shop.ordrs: no collection shop.ordrs in database shop; did you mean shop.orders?"),
        (&["--unsharded", "paymnts"][..], "--unsharded paymnts: no collection shop.paymnts in database shop; did you mean shop.payments?"),
        // A field no document of the collection holds (a typo, most often).
        (&["--key", "orders={custId: 1}"][..], "--key shop.orders={custId: 1}: key {custId: 1}: 4,000 of 4,000 sampled documents lack a key field, and none of the first 1,000 has 'custId'; did you mean 'customerId'?"),
        (&["--key", "shop.orders={customerId: }"][..], "--key shop.orders={customerId: }: "),
        (&["--key", "shop.orders"][..], "--key shop.orders: expected COLL={field: 1, ...}"),
        (&["--key", "orders={_id: 1}", "--unsharded", "shop.orders"][..], "--unsharded shop.orders: shop.orders is given twice (--key and --unsharded)"),
    ] {
        let mut a = vec!["plan", "--dump", dump.to_str().unwrap(), "--queries", log.to_str().unwrap(), "--format", "json"];
        a.extend_from_slice(given);
        let o = shardkey(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{given:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{given:?}: {err}");
        assert!(err.starts_with(&format!("shardkey: {expected}")), "{given:?}: {err}");
    }
}

#[test]
fn plan_refuses_what_it_cannot_plan_in_one_line() {
    let o = shardkey(&["plan", "--docs", "fixtures/events.ndjson"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--docs"));
    let o = shardkey(&["plan", "--queries", "fixtures/mongod.log"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("give --dump DIR"), "{}", String::from_utf8_lossy(&o.stderr));
    let o = shardkey(&["plan", "--dump", "/nonexistent/dir"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&o.stderr).lines().count(), 1);
}

#[test]
fn live_transactions_over_three_collections_are_found_and_planned() {
    use common::{rt, Mode, Mongod};
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    let logpath = m.dir.path().join("mongod.log");
    rt().block_on(async {
        let db = client.database("shop");
        // Log and profile every operation (slowms -1, level 2), as a DBA does while recording a workload.
        db.run_command(doc! {"profile": 2, "slowms": -1}).await.unwrap();
        let customers = db.collection::<Document>("customers");
        let orders = db.collection::<Document>("orders");
        let payments = db.collection::<Document>("payments");
        customers.insert_many((0..200i64).map(|i| doc! {"_id": i, "orders": 0})).await.unwrap();
        let mut rng = Lcg(7);
        for i in 0..1500i64 {
            let c = rng.below(200) as i64;
            orders.insert_one(doc! {"_id": i, "customerId": c, "total": 1.5}).await.unwrap();
            payments.insert_one(doc! {"_id": i, "customerId": c, "orderId": i}).await.unwrap();
        }
        let mut session = client.start_session().await.unwrap();
        for t in 0..60i64 {
            let c = rng.below(200) as i64;
            session.start_transaction().await.unwrap();
            orders.find_one(doc! {"customerId": c}).session(&mut session).await.unwrap();
            payments.find_one(doc! {"customerId": c}).session(&mut session).await.unwrap();
            orders.insert_one(doc! {"_id": 10_000 + t, "customerId": c, "total": 2.5}).session(&mut session).await.unwrap();
            payments.insert_one(doc! {"_id": 10_000 + t, "customerId": c, "orderId": 10_000 + t}).session(&mut session).await.unwrap();
            customers.update_one(doc! {"_id": c}, doc! {"$inc": {"orders": 1}}).session(&mut session).await.unwrap();
            session.commit_transaction().await.unwrap();
        }
        db.run_command(doc! {"profile": 0, "slowms": 100}).await.unwrap();
        // What the profiler wrote while level 2 was on stays readable.
    });
    let _ = std::io::stdout().flush();
    let p = json(&shardkey(&[
        "plan",
        "--uri",
        &m.uri(),
        "--database",
        "shop",
        "--queries",
        logpath.to_str().unwrap(),
        "--shards",
        "4",
        "--format",
        "json",
    ]));
    // The server's own log holds the 60 transactions, each statement tied to its transaction.
    assert_eq!(p["transactions"]["found"], 60, "{:#}", p["transactions"]);
    assert_eq!(p["targetVersion"], "6.0");
    let (of, _) = first_field(collection(&p, "shop.orders"));
    let (cf, _) = first_field(collection(&p, "shop.customers"));
    assert_eq!((of.as_str(), cf.as_str()), ("customerId", "_id"), "{:#}", p["collections"]);
    assert!(collection(&p, "shop.orders")["zones"].as_array().is_some_and(|z| !z.is_empty()), "{p:#}");
    // Every transaction reads and writes one customer's documents: all on one shard.
    assert_eq!(p["transactions"]["singleShardShare"].as_f64(), Some(1.0), "{:#}", p["transactions"]);

    // The profiler, read once for the whole database: the same 60 transactions (their finds and
    // inserts carry the session); the update statements carry none, and ran after each
    // transaction's last statement shown, so time alone cannot tell them from a write after
    // the commit. The one transaction open then that read that customer's orders (orders'
    // customerId is linked to customers' _id) holds each: every transaction whole, and by
    // hand each reads and writes one customer's documents: all on one shard.
    // Without --queries, plan --uri reads the profiler, as analyze does, and says so.
    let uri = m.uri();
    for args in [&["--queries", "profile"][..], &[]] {
        let mut a = vec!["plan", "--uri", &uri, "--database", "shop", "--shards", "4", "--format", "json"];
        a.extend_from_slice(args);
        let p = json(&shardkey(&a));
        assert_eq!(p["transactions"]["found"], 60, "{:#}", p["transactions"]);
        assert_eq!(p["transactions"]["sources"][0], "shop.system.profile");
        let notes = p["transactions"]["notes"].to_string();
        assert!(
            notes.contains("60 update/delete statements from the profiler carry no session and were placed in the one transaction of their client open then that fixes the values they write by"),
            "{notes}"
        );
        assert_eq!(p["transactions"]["seenInPart"], 0, "{:#}", p["transactions"]);
        assert_eq!(p["transactions"]["evaluated"], 60, "{:#}", p["transactions"]);
        assert_eq!(p["transactions"]["singleShardShare"].as_f64(), Some(1.0), "{:#}", p["transactions"]);
        assert_eq!(notes.contains("no --queries: read shop.system.profile"), args.is_empty(), "{notes}");
        // The profiled inserts joined their transactions: orders' and payments' inserts
        // (carrying the session in `command`) sit beside the reads of the same customer.
        assert!(
            p["links"].as_array().unwrap().iter().any(|l| l["a"] == "shop.orders.customerId" || l["b"] == "shop.orders.customerId"),
            "{:#}",
            p["links"]
        );
    }
    let _ = Bson::Null;
}

/// Done-when 2 of issue 37: a replica set profiled at level 2 running driver-session
/// transactions of inserts and updates only (insert an order, update the customer, insert
/// a payment, for one customer). The profiler shows the inserts with their session and the
/// update without any; the update ran from the transaction's client between its inserts,
/// which places it. `plan --uri --database` with no `--queries` reads the profiler, finds
/// every transaction whole, and zones the three collections on the customer id.
/// By hand: each transaction touches one customer's documents in the three collections,
/// so zoned alike on it, all 150 stay on one shard.
#[test]
fn live_profiled_transactions_of_inserts_and_updates_are_found_and_zoned() {
    use common::{rt, Mode, Mongod};
    const TXNS: i64 = 150;
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    rt().block_on(async {
        let db = client.database("saas");
        let customers = db.collection::<Document>("customers");
        let orders = db.collection::<Document>("orders");
        let payments = db.collection::<Document>("payments");
        customers.insert_many((0..100i64).map(|i| doc! {"_id": i, "orders": 0})).await.unwrap();
        db.run_command(doc! {"profile": 2, "slowms": -1}).await.unwrap();
        let mut rng = Lcg(11);
        let mut session = client.start_session().await.unwrap();
        for _ in 0..TXNS {
            let c = rng.below(100) as i64;
            session.start_transaction().await.unwrap();
            orders.insert_one(doc! {"customerId": c, "total": 2.5}).session(&mut session).await.unwrap();
            customers.update_one(doc! {"_id": c}, doc! {"$inc": {"orders": 1}}).session(&mut session).await.unwrap();
            payments.insert_one(doc! {"customerId": c, "amount": 2.5}).session(&mut session).await.unwrap();
            session.commit_transaction().await.unwrap();
        }
        db.run_command(doc! {"profile": 0, "slowms": 100}).await.unwrap();
    });
    let uri = m.uri();
    let p = json(&shardkey(&["plan", "--uri", &uri, "--database", "saas", "--shards", "4", "--format", "json"]));
    let t = &p["transactions"];
    assert_eq!(t["found"], TXNS, "{t:#}");
    assert!(t["notes"].to_string().contains("no --queries: read saas.system.profile"), "{t:#}");
    assert!(t["notes"].to_string().contains(&format!("{TXNS} were placed in their transaction by client and time")), "{t:#}");
    assert_eq!((t["seenInPart"].as_u64(), t["evaluated"].as_u64()), (Some(0), Some(TXNS as u64)), "{t:#}");
    assert_eq!(t["singleShardShare"].as_f64(), Some(1.0), "{t:#}");
    // The customers' updates, placed, link the customer's _id to the orders' customerId
    // (read from the documents: the profiler shows no inserted document).
    let links = p["links"].as_array().unwrap();
    assert!(
        links.iter().any(|l| l["a"] == "saas.customers._id" && l["b"] == "saas.orders.customerId"
            || l["b"] == "saas.customers._id" && l["a"] == "saas.orders.customerId"),
        "{links:#?}"
    );
    for (ns, field) in [("saas.orders", "customerId"), ("saas.payments", "customerId"), ("saas.customers", "_id")] {
        let c = collection(&p, ns);
        assert_eq!(first_field(c).0, field, "{ns}: {:#}", p["collections"]);
        assert!(c["zones"].as_array().is_some_and(|z| z.len() == 4), "{ns}: {c:#}");
    }
}

/// The same transactions from four application threads at once (one client address, four
/// sessions): a customer update that ran while two of that client's transactions were open
/// cannot be placed by time. Without a read, those transactions are seen in part, never
/// counted on one shard on the strength of what they show; when each transaction first
/// reads its customer by `_id`, the one open transaction that read that customer holds the
/// update (each thread serves its own customers), and by hand all 240 are whole and each on
/// one shard once the three collections are zoned on the customer.
#[test]
fn live_concurrent_profiled_transactions_place_what_time_and_values_tell() {
    for read_first in [false, true] {
        concurrent_profiled_transactions(read_first);
    }
}

fn concurrent_profiled_transactions(read_first: bool) {
    use common::{rt, Mode, Mongod};
    const PER_THREAD: i64 = 60;
    const STANDALONE: u64 = 60;
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    rt().block_on(async {
        let db = client.database("saas");
        db.collection::<Document>("customers").insert_many((0..200i64).map(|i| doc! {"_id": i, "orders": 0})).await.unwrap();
        // Created before: two transactions creating one collection at once conflict.
        db.create_collection("orders").await.unwrap();
        db.create_collection("payments").await.unwrap();
        db.run_command(doc! {"profile": 2, "slowms": -1}).await.unwrap();
        let mut tasks = Vec::new();
        for th in 0..4u64 {
            let client = client.clone();
            tasks.push(tokio::spawn(async move {
                let db = client.database("saas");
                let (customers, orders, payments) =
                    (db.collection::<Document>("customers"), db.collection::<Document>("orders"), db.collection::<Document>("payments"));
                let mut rng = Lcg(100 + th);
                let mut session = client.start_session().await.unwrap();
                for _ in 0..PER_THREAD {
                    // Each thread serves its own customers: no write conflict between them.
                    let c = (th * 25 + rng.below(25)) as i64;
                    session.start_transaction().await.unwrap();
                    if read_first {
                        customers.find_one(doc! {"_id": c}).session(&mut session).await.unwrap();
                    }
                    orders.insert_one(doc! {"customerId": c, "total": 2.5}).session(&mut session).await.unwrap();
                    customers.update_one(doc! {"_id": c}, doc! {"$inc": {"orders": 1}}).session(&mut session).await.unwrap();
                    payments.insert_one(doc! {"customerId": c, "amount": 2.5}).session(&mut session).await.unwrap();
                    session.commit_transaction().await.unwrap();
                }
            }));
        }
        // Without reads, a fifth thread updates customers outside any transaction meanwhile
        // (its own customers, 100..199: no write conflict with the transactions): time must
        // not place them in the transactions open then (a customer of its range would take
        // that transaction to a second shard).
        if !read_first {
            let client = client.clone();
            tasks.push(tokio::spawn(async move {
                let customers = client.database("saas").collection::<Document>("customers");
                let mut rng = Lcg(99);
                for _ in 0..STANDALONE {
                    customers.update_one(doc! {"_id": 100 + rng.below(100) as i64}, doc! {"$set": {"seen": true}}).await.unwrap();
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        db.run_command(doc! {"profile": 0, "slowms": 100}).await.unwrap();
    });
    let p = json(&shardkey(&["plan", "--uri", &m.uri(), "--database", "saas", "--shards", "4", "--format", "json"]));
    let t = &p["transactions"];
    let all = 4 * PER_THREAD as u64;
    let standalone = if read_first { 0 } else { STANDALONE };
    assert_eq!(t["found"].as_u64(), Some(all), "{t:#}");
    let (in_part, evaluated) = (t["seenInPart"].as_u64().unwrap(), t["evaluated"].as_u64().unwrap());
    assert_eq!(in_part + evaluated, all, "{t:#}");
    // Every update is accounted for: placed by time or by values, or said unplaced.
    let notes = t["notes"].to_string();
    let number_before = |s: &str| -> u64 {
        notes
            .find(s)
            .map(|i| notes[..i].rsplit(|c: char| !c.is_ascii_digit()).find(|w| !w.is_empty()).unwrap().parse().unwrap())
            .unwrap_or(0)
    };
    let by_time = number_before(" were placed in their transaction by client and time");
    let by_values = number_before(" placed in the one transaction of their client open then");
    let unplaced = number_before(" update/delete statements from the profiler carry no session and could not be placed");
    assert_eq!(by_time + by_values + unplaced, all + standalone, "{notes}");
    // Four threads at once: time places nothing (their spans overlap).
    assert_eq!(by_time, 0, "{notes}");
    assert!(unplaced == 0 || in_part > 0, "{t:#}");
    // A transaction judged whole holds its own customer's update, never another thread's:
    // each is on one shard.
    if evaluated > 0 {
        assert_eq!(t["singleShardShare"].as_f64(), Some(1.0), "{t:#}");
    }
    for ns in ["saas.orders", "saas.payments"] {
        assert_eq!(first_field(collection(&p, ns)).0, "customerId", "{ns}: {:#}", p["collections"]);
    }
    if read_first {
        assert_eq!((unplaced, in_part, evaluated), (0, 0, all), "{t:#}");
        assert_eq!(first_field(collection(&p, "saas.customers")).0, "_id", "{:#}", p["collections"]);
        assert!(collection(&p, "saas.customers")["zones"].as_array().is_some_and(|z| z.len() == 4), "{:#}", p["collections"]);
    }
}
