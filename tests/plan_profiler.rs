//! `shardkey plan` on what the profiler and the log show of one application: four tasks on
//! one client (one profiler `client` address, four sessions at once), transactions whose
//! update statements the profiler writes without their session, writes outside any
//! transaction meanwhile, and a second database's transactions and joins in the same log.
//! Every expected figure comes from the application's own counters and a hand count over
//! what it issued.

mod common;

use bson::{doc, Document};
use common::{assert_schema, rt, shardkey, Lcg, Mode, Mongod};
use serde_json::Value;

/// What one task issued.
#[derive(Default)]
struct Issued {
    /// Each committed transaction's customers: one for a checkout, two for a referral.
    committed: Vec<Vec<i64>>,
    joins: u64,
    standalone: u64,
}

const TASKS: i64 = 4;
const PER_TASK: i64 = 50;
/// Customers per task: each task serves its own, so no two transactions conflict.
const OWN: i64 = 50;
const OTHER_TXNS: u64 = 30;
const OTHER_JOINS: u64 = 6;

fn json(args: &[&str]) -> Value {
    let o = shardkey(args);
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_schema("plan", &v);
    v
}

fn collection<'a>(p: &'a Value, ns: &str) -> &'a Value {
    p["collections"].as_array().unwrap().iter().find(|c| c["namespace"] == ns).unwrap_or_else(|| panic!("{ns}: {:#}", p["collections"]))
}

/// The customers' zones under a plan: whether on the hashed id, and where each zone
/// starts (`_id` values, or their hashes), after checking that orders and payments are
/// zoned with them on the customer id.
fn customer_zones(p: &Value) -> (bool, Vec<i64>) {
    let mut hashed = Vec::new();
    for (ns, field) in [("market.orders", "customerId"), ("market.payments", "customerId"), ("market.customers", "_id")] {
        let key = collection(p, ns)["key"].as_object().unwrap_or_else(|| panic!("{ns} unsharded: {:#}", p["collections"]));
        let (f, kind) = key.iter().next().unwrap();
        assert_eq!(f, field, "{ns}: {:#}", p["collections"]);
        hashed.push(kind == "hashed");
    }
    assert!(hashed.iter().all(|h| *h == hashed[0]), "{:#}", p["collections"]);
    let zones = collection(p, "market.customers")["zones"].as_array().unwrap().clone();
    assert!(zones.len() > 1, "{zones:#?}");
    (hashed[0], zones.iter().skip(1).map(|z| z["min"]["_id"].as_i64().unwrap()).collect())
}

/// Each customer id's hashed value, as the server's hashed index keys hold it.
fn server_hashes(client: &mongodb::Client) -> std::collections::HashMap<i64, i64> {
    use futures_util::TryStreamExt;
    rt().block_on(async {
        let c = client.database("scratch").collection::<Document>("h");
        c.insert_many((0..TASKS * OWN).map(|i| doc! {"v": i})).await.unwrap();
        client
            .database("scratch")
            .run_command(doc! {"createIndexes": "h", "indexes": [{"key": {"v": "hashed", "_id": 1}, "name": "vh"}]})
            .await
            .unwrap();
        let keys: Vec<Document> =
            c.find(doc! {}).hint(mongodb::options::Hint::Name("vh".into())).return_key(true).await.unwrap().try_collect().await.unwrap();
        let docs: Vec<Document> = c.find(doc! {}).await.unwrap().try_collect().await.unwrap();
        let id_of = |d: &Document| d.get_object_id("_id").unwrap();
        let v: std::collections::HashMap<_, i64> = docs.iter().map(|d| (id_of(d), d.get_i64("v").unwrap())).collect();
        keys.iter().map(|k| (v[&k.get_object_id("_id").unwrap()], k.get_i64("v").unwrap())).collect()
    })
}

/// By hand: a checkout reads and writes one customer's documents (on one shard once the
/// three collections are zoned on the customer); a referral is on one shard when its two
/// customers fall in one zone (of their id, or of its hash).
fn hand_share(issued: &[Vec<i64>], (hashed, starts): (bool, Vec<i64>), hashes: &std::collections::HashMap<i64, i64>) -> f64 {
    let zone = |c: i64| {
        let v = if hashed { hashes[&c] } else { c };
        starts.iter().filter(|s| **s <= v).count()
    };
    let single = issued.iter().filter(|cs| cs.iter().all(|c| zone(*c) == zone(cs[0]))).count();
    single as f64 / issued.len() as f64
}

async fn market_task(client: mongodb::Client, th: i64) -> Issued {
    let db = client.database("market");
    let (customers, orders, payments, products) = (
        db.collection::<Document>("customers"),
        db.collection::<Document>("orders"),
        db.collection::<Document>("payments"),
        db.collection::<Document>("products"),
    );
    let mut rng = Lcg(40 + th as u64);
    let mut out = Issued::default();
    let mut session = client.start_session().await.unwrap();
    for i in 0..PER_TASK {
        let c = th * OWN + rng.below(OWN as u64) as i64;
        match rng.below(10) {
            0..=6 => {
                session.start_transaction().await.unwrap();
                customers.find_one(doc! {"_id": c}).session(&mut session).await.unwrap();
                orders.insert_one(doc! {"customerId": c, "total": 2.5}).session(&mut session).await.unwrap();
                payments.insert_one(doc! {"customerId": c, "amount": 2.5}).session(&mut session).await.unwrap();
                customers.update_one(doc! {"_id": c}, doc! {"$inc": {"orders": 1}}).session(&mut session).await.unwrap();
                session.commit_transaction().await.unwrap();
                out.committed.push(vec![c]);
            }
            7 | 8 => {
                // A referral: any customer read (reads take no write lock: no conflict), its
                // own customer credited.
                let d = rng.below((TASKS * OWN) as u64) as i64;
                session.start_transaction().await.unwrap();
                customers.find_one(doc! {"_id": c}).session(&mut session).await.unwrap();
                customers.find_one(doc! {"_id": d}).session(&mut session).await.unwrap();
                customers.update_one(doc! {"_id": c}, doc! {"$inc": {"credit": 1}}).session(&mut session).await.unwrap();
                session.commit_transaction().await.unwrap();
                out.committed.push(vec![c, d]);
            }
            _ => {
                // Outside any transaction: nothing the profiler shows ties it to one.
                products.update_one(doc! {"_id": rng.below(20) as i64}, doc! {"$inc": {"views": 1}}).await.unwrap();
                out.standalone += 1;
            }
        }
        if i % 10 == 0 {
            let pipeline = vec![
                doc! {"$match": {"customerId": c}},
                doc! {"$lookup": {"from": "payments", "localField": "customerId", "foreignField": "customerId", "as": "p"}},
            ];
            let _ = orders.aggregate(pipeline).await.unwrap();
            out.joins += 1;
        }
    }
    out
}

/// The other database's transactions and joins, logged in the same window.
async fn other_task(client: mongodb::Client) {
    let db = client.database("other");
    let (accounts, ledger) = (db.collection::<Document>("accounts"), db.collection::<Document>("ledger"));
    let mut session = client.start_session().await.unwrap();
    for i in 0..OTHER_TXNS as i64 {
        session.start_transaction().await.unwrap();
        accounts.update_one(doc! {"_id": i % 10}, doc! {"$inc": {"bal": 1}}).session(&mut session).await.unwrap();
        ledger.insert_one(doc! {"accountId": i % 10, "amt": 1}).session(&mut session).await.unwrap();
        session.commit_transaction().await.unwrap();
        if i % 5 == 0 {
            let pipeline = vec![doc! {"$lookup": {"from": "accounts", "localField": "accountId", "foreignField": "_id", "as": "a"}}];
            let _ = ledger.aggregate(pipeline).await.unwrap();
        }
    }
}

/// Four tasks on one client and a second database, profiled at level 2 and logged with
/// slowms -1. The log: the market's transactions and joins only (the other database's 30
/// and 6 not counted), each whole, the share equal to the hand count. The profiler: every
/// transaction found (each shows a read), the standalone updates unplaced, so some are seen
/// in part: no single figure, a range that holds the hand count under its own plan and the
/// log's figure, and the note that the profiler shows no abort.
#[test]
fn the_profilers_plan_gives_a_range_that_holds_the_truth_and_the_log_counts_its_database() {
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    let logpath = m.dir.path().join("mongod.log");
    let issued: Vec<Issued> = rt().block_on(async {
        let db = client.database("market");
        db.collection::<Document>("customers")
            .insert_many((0..TASKS * OWN).map(|i| doc! {"_id": i, "orders": 0, "credit": 100}))
            .await
            .unwrap();
        db.collection::<Document>("products").insert_many((0..20i64).map(|i| doc! {"_id": i, "views": 0})).await.unwrap();
        // Created before: two transactions creating one collection at once conflict.
        for c in ["orders", "payments"] {
            db.create_collection(c).await.unwrap();
        }
        let other = client.database("other");
        other.collection::<Document>("accounts").insert_many((0..10i64).map(|i| doc! {"_id": i, "bal": 0})).await.unwrap();
        other.create_collection("ledger").await.unwrap();
        // A profiler large enough for the window (the default 1 MiB would drop its start).
        db.create_collection("system.profile").capped(true).size(64 << 20).await.unwrap();
        for d in ["market", "other"] {
            client.database(d).run_command(doc! {"profile": 2, "slowms": -1}).await.unwrap();
        }
        let tasks: Vec<_> = (0..TASKS).map(|th| tokio::spawn(market_task(client.clone(), th))).collect();
        let o = tokio::spawn(other_task(client.clone()));
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap());
        }
        o.await.unwrap();
        for d in ["market", "other"] {
            client.database(d).run_command(doc! {"profile": 0, "slowms": 100}).await.unwrap();
        }
        out
    });
    let committed: Vec<Vec<i64>> = issued.iter().flat_map(|i| i.committed.iter().cloned()).collect();
    let joins: u64 = issued.iter().map(|i| i.joins).sum();
    assert!(issued.iter().map(|i| i.standalone).sum::<u64>() > 0);
    let uri = m.uri();
    let log = logpath.to_str().unwrap();

    // The log: every market transaction whole, none of the other database's.
    let l = json(&["plan", "--uri", &uri, "--database", "market", "--queries", log, "--shards", "4", "--format", "json"]);
    let t = &l["transactions"];
    assert_eq!(t["found"].as_u64(), Some(committed.len() as u64), "{t:#}");
    assert_eq!((t["seenInPart"].as_u64(), t["evaluated"].as_u64()), (Some(0), Some(committed.len() as u64)), "{t:#}");
    assert_eq!(l["joins"]["found"].as_u64(), Some(joins), "{:#}", l["joins"]);
    let log_share = t["singleShardShare"].as_f64().unwrap();
    let hashes = server_hashes(&client);
    let hand = hand_share(&committed, customer_zones(&l), &hashes);
    assert!((log_share - hand).abs() < 0.0015, "log {log_share}, by hand {hand}");
    assert!(t.get("singleShardShareRange").is_none(), "{t:#}");
    let o = json(&["plan", "--uri", &uri, "--database", "other", "--queries", log, "--shards", "4", "--format", "json"]);
    assert_eq!(o["transactions"]["found"].as_u64(), Some(OTHER_TXNS), "{:#}", o["transactions"]);
    assert_eq!(o["joins"]["found"].as_u64(), Some(OTHER_JOINS), "{:#}", o["joins"]);

    // The profiler: the same transactions, some seen in part.
    let p = json(&["plan", "--uri", &uri, "--database", "market", "--shards", "4", "--format", "json"]);
    let t = &p["transactions"];
    assert_eq!(t["found"].as_u64(), Some(committed.len() as u64), "{t:#}");
    let notes = t["notes"].to_string();
    assert!(notes.contains("the profiler does not show whether a transaction committed or aborted"), "{notes}");
    let in_part = t["seenInPart"].as_u64().unwrap();
    assert!(in_part > 0, "standalone updates ran while transactions were open: {t:#}");
    assert!(t.get("singleShardShare").is_none(), "never one figure on the few seen whole: {t:#}");
    let r = &t["singleShardShareRange"];
    let (low, high) = (r["low"].as_f64().unwrap(), r["high"].as_f64().unwrap());
    let hand = hand_share(&committed, customer_zones(&p), &hashes);
    assert!(low - 0.001 <= hand && hand <= high + 0.001, "by hand {hand} outside {low}..{high}: {t:#}");
    assert!(low - 0.001 <= log_share && log_share <= high + 0.001, "the log's {log_share} outside {low}..{high}");
    assert!(notes.contains("the log of the same window recorded with slowms -1"), "{notes}");
    // The text says the range, not a figure.
    let text = String::from_utf8(shardkey(&["plan", "--uri", &uri, "--database", "market", "--shards", "4"]).stdout).unwrap();
    let want = format!("between {:.0}% and {:.0}% on one shard", low * 100.0, high * 100.0);
    assert!(text.contains(&want), "{want}: {text}");

    // A database never profiled: the plan says the profiler is off, not that slowms is too high.
    rt().block_on(async {
        client.database("quiet").collection::<Document>("notes").insert_many((0..50i64).map(|i| doc! {"_id": i})).await
    })
    .unwrap();
    let q = json(&["plan", "--uri", &uri, "--database", "quiet", "--shards", "4", "--format", "json"]);
    let notes = q["transactions"]["notes"].to_string();
    assert!(notes.contains("the profiler is off (level 0) on every member read"), "{notes}");
    assert!(!notes.contains("slowms may be too high"), "{notes}");
}
