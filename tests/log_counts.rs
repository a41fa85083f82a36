//! Each operation counted once from a real mongod 6.0.5 log, whatever the lines it wrote:
//! a counted workload through the Rust driver (it sends an update's or delete's statements in
//! the command body, so mongod logs each statement twice: on its own `WRITE` line and in the
//! command's line), finds and aggregates read in batches (getMores), a transaction; then the
//! same with `sampleRate: 0.5` (each CurOp logged on its own draw). `shardkey workload` must
//! count per collection and command what the application sent (every operation logged), what
//! an independent count of the log's markers finds (sampled; and `slowms: 100` with writes made
//! slow), and the same when the lines are spread so that a command's WRITE lines and a
//! cursor's getMores fall in other 2048-line parts.

mod common;

use common::{block, rt, shardkey, Mode, Mongod};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use serde_json::Value;
use std::collections::BTreeMap;

/// (collection, command) → operations.
type Counts = BTreeMap<(String, String), u64>;

fn add(c: &mut Counts, coll: &str, op: &str, n: u64) {
    *c.entry((coll.to_string(), op.to_string())).or_default() += n;
}

/// The workload on database `db`; every filter holds a marker (`m: {$ne: -N}`, N unique) so a
/// count of the log's markers can say which operations it shows. Returns the application's counts.
fn run_workload(m: &Mongod, db: &str, profile: Document) -> Counts {
    let client = m.client();
    let mut c = Counts::new();
    rt().block_on(async {
        let d = client.database(db);
        d.run_command(profile).await.unwrap();
        let orders = d.collection::<Document>("orders");
        let customers = d.collection::<Document>("customers");
        let mut tag = 0i64;
        let mut t = || {
            tag += 1;
            doc! {"$ne": -tag}
        };
        orders.insert_many((0..40i64).map(|i| doc! {"_id": i, "qty": i})).await.unwrap();
        add(&mut c, "orders", "insert", 1);
        customers.insert_many((0..20i64).map(|i| doc! {"_id": i, "n": i})).await.unwrap();
        add(&mut c, "customers", "insert", 1);
        for i in 0..6i64 {
            orders.update_one(doc! {"_id": i, "m": t()}, doc! {"$inc": {"qty": 1}}).await.unwrap();
            add(&mut c, "orders", "update", 1);
        }
        for _ in 0..2 {
            orders.update_many(doc! {"qty": {"$gt": 30}, "m": t()}, doc! {"$set": {"hot": true}}).await.unwrap();
            add(&mut c, "orders", "update", 1);
        }
        for i in 0..2i64 {
            orders.delete_one(doc! {"_id": 39 - i, "m": t()}).await.unwrap();
            add(&mut c, "orders", "delete", 1);
        }
        orders.delete_many(doc! {"_id": {"$gte": 36}, "m": t()}).await.unwrap();
        add(&mut c, "orders", "delete", 1);
        for i in 0..3i64 {
            customers.update_one(doc! {"_id": i, "m": t()}, doc! {"$set": {"seen": true}}).await.unwrap();
            add(&mut c, "customers", "update", 1);
        }
        // Reads in batches: a find of 36 orders in batches of 5 is one read and 7 getMores.
        for _ in 0..3 {
            let got: Vec<Document> =
                orders.find(doc! {"qty": {"$gte": 0}, "m": t()}).batch_size(5).await.unwrap().try_collect().await.unwrap();
            assert!(got.len() > 30);
            add(&mut c, "orders", "find", 1);
        }
        for _ in 0..2 {
            let _: Vec<Document> =
                customers.find(doc! {"n": {"$gte": 0}, "m": t()}).batch_size(4).await.unwrap().try_collect().await.unwrap();
            add(&mut c, "customers", "find", 1);
        }
        for _ in 0..2 {
            let _: Vec<Document> = orders
                .aggregate([doc! {"$match": {"qty": {"$gte": 0}, "m": t()}}])
                .batch_size(5)
                .await
                .unwrap()
                .try_collect()
                .await
                .unwrap();
            add(&mut c, "orders", "aggregate", 1);
        }
        // A transaction: an update, a delete and a read in batches.
        let mut s = client.start_session().await.unwrap();
        s.start_transaction().await.unwrap();
        orders.update_one(doc! {"_id": 20, "m": t()}, doc! {"$set": {"tx": 1}}).session(&mut s).await.unwrap();
        add(&mut c, "orders", "update", 1);
        customers.delete_one(doc! {"_id": 19, "m": t()}).session(&mut s).await.unwrap();
        add(&mut c, "customers", "delete", 1);
        let mut cur = customers.find(doc! {"n": {"$gte": 0}, "m": t()}).batch_size(3).session(&mut s).await.unwrap();
        while cur.advance(&mut s).await.unwrap() {}
        add(&mut c, "customers", "find", 1);
        s.commit_transaction().await.unwrap();
        // Back to the default, so the next phase's lines are its own.
        d.run_command(doc! {"profile": 0, "slowms": 100, "sampleRate": 1.0}).await.unwrap();
    });
    c
}

/// `slowms: 100` with `sampleRate: 0.5`: writes made slow by a `$where` that sleeps on the one
/// document their `_id` selects, so each statement's CurOp and its command's are over `slowms`
/// and each is kept or dropped on its own draw.
fn run_slow_phase(m: &Mongod, db: &str) -> Counts {
    let client = m.client();
    let mut c = Counts::new();
    rt().block_on(async {
        let d = client.database(db);
        d.run_command(doc! {"profile": 0, "slowms": 100, "sampleRate": 0.5}).await.unwrap();
        let orders = d.collection::<Document>("orders");
        orders.insert_many((0..10i64).map(|i| doc! {"_id": i, "qty": i})).await.unwrap();
        for i in 0..8i64 {
            let q = doc! {"_id": i, "m": {"$ne": -(i + 1)}, "$where": "sleep(120) || true"};
            if i % 4 == 3 {
                orders.delete_one(q).await.unwrap();
                add(&mut c, "orders", "delete", 1);
            } else {
                orders.update_one(q, doc! {"$inc": {"qty": 1}}).await.unwrap();
                add(&mut c, "orders", "update", 1);
            }
        }
        d.run_command(doc! {"profile": 0, "slowms": 100, "sampleRate": 1.0}).await.unwrap();
    });
    c
}

/// What `shardkey workload --format json` counts on `db`, per collection and command.
fn workload(log: &std::path::Path, db: &str) -> (Counts, Value) {
    let o = shardkey(&["workload", "--queries", log.to_str().unwrap(), "--namespace", &format!("{db}.*"), "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut c = Counts::new();
    for n in r["namespaces"].as_array().unwrap() {
        let coll = n["namespace"].as_str().unwrap().split_once('.').unwrap().1;
        for (op, v) in n["operations"].as_object().unwrap() {
            add(&mut c, coll, op, v.as_u64().unwrap());
        }
    }
    (c, r)
}

/// An independent count of the operations of `db` the log shows: each marker (a statement's
/// or a read's) found on any line counts once, as the command it belongs to; each insert
/// command line once.
fn markers_in_log(text: &str, db: &str) -> Counts {
    let mut seen: BTreeMap<i64, (String, String)> = BTreeMap::new();
    let mut c = Counts::new();
    let marker = |f: &Value| f["m"]["$ne"].as_i64();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        let a = &v["attr"];
        let Some((d, coll)) = a["ns"].as_str().and_then(|ns| ns.split_once('.')) else { continue };
        if v["id"] != 51803 || d != db {
            continue;
        }
        let cmd = &a["command"];
        match a["type"].as_str() {
            Some("update") | Some("remove") => {
                let op = if a["type"] == "update" { "update" } else { "delete" };
                seen.insert(marker(&cmd["q"]).unwrap(), (coll.to_string(), op.to_string()));
                continue;
            }
            _ => {}
        }
        let orig = if a["originatingCommand"].is_object() { &a["originatingCommand"] } else { cmd };
        for (k, op) in [("updates", "update"), ("deletes", "delete")] {
            for s in cmd[k].as_array().into_iter().flatten() {
                seen.insert(marker(&s["q"]).unwrap(), (cmd[op].as_str().unwrap().to_string(), op.to_string()));
            }
        }
        if let Some(f) = orig["find"].as_str() {
            seen.insert(marker(&orig["filter"]).unwrap(), (f.to_string(), "find".into()));
        } else if let Some(f) = orig["aggregate"].as_str() {
            seen.insert(marker(&orig["pipeline"][0]["$match"]).unwrap(), (f.to_string(), "aggregate".into()));
        } else if let Some(f) = cmd["insert"].as_str() {
            add(&mut c, f, "insert", 1);
        }
    }
    for (coll, op) in seen.into_values() {
        add(&mut c, &coll, &op, 1);
    }
    c
}

/// How many statements the log shows twice: a WRITE line's marker also in a command body on
/// the same connection (every phase: 16 when every operation is logged).
fn on_both_lines(text: &str) -> u64 {
    let (mut write, mut body) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        let (a, conn) = (&v["attr"], v["ctx"].as_str().unwrap_or("").to_string());
        if let Some(m) = a["command"]["q"]["m"]["$ne"].as_i64() {
            write.insert((conn.clone(), m));
        }
        for k in ["updates", "deletes"] {
            for s in a["command"][k].as_array().into_iter().flatten() {
                body.insert((conn.clone(), s["q"]["m"]["$ne"].as_i64().unwrap()));
            }
        }
    }
    write.intersection(&body).count() as u64
}

/// The log with 2048 lines that are no slow query after every WRITE line and every line that
/// opens a cursor: each command line, getMore and statement is in another part than its kin.
fn spread(text: &str) -> String {
    let pad = "{\"t\":{\"$date\":\"2026-11-28T04:00:00.000+00:00\"},\"s\":\"I\",\"c\":\"NETWORK\",\"id\":22943,\"ctx\":\"listener\",\"msg\":\"pad\"}\n";
    let mut out = String::with_capacity(text.len() * 2);
    for l in text.lines() {
        out.push_str(l);
        out.push('\n');
        if l.contains("\"c\":\"WRITE\"") || l.contains("\"cursorid\":") && !l.contains("\"getMore\"") {
            out.push_str(&pad.repeat(2048));
        }
    }
    out
}

#[test]
fn each_operation_counts_once_from_a_real_log() {
    let m = Mongod::start(Mode::ReplicaSet);
    let every = run_workload(&m, "every", doc! {"profile": 0, "slowms": -1});
    let sampled = run_workload(&m, "half", doc! {"profile": 0, "slowms": 0, "sampleRate": 0.5});
    let slow = run_slow_phase(&m, "slow");
    // mongod writes its log as it goes: a command that finds the file complete.
    block(m.client().database("admin").run_command(doc! {"ping": 1})).unwrap();
    let log = m.dir.path().join("mongod.log");
    let text = std::fs::read_to_string(&log).unwrap();
    // The driver sent single statements in the body: each is on two lines (else this tests nothing).
    let body = text.lines().filter(|l| l.contains("\"every.$cmd\"") && l.contains("\"updates\":[")).count();
    assert!(body >= 9, "{body} update command lines with their statements");

    let (got, r) = workload(&log, "every");
    assert_eq!(got, every, "every operation logged: the application's counts");
    assert_eq!(r["operationsRead"].as_u64().unwrap(), every.values().sum::<u64>(), "the headline counts what is reported");
    let twice = r["skipped"].as_object().unwrap().iter().find(|(k, _)| k.contains("WRITE lines counted")).map(|(_, v)| v.as_u64().unwrap());
    // The skip reasons are the whole log's: both phases' statements found on both lines.
    assert_eq!(twice, Some(on_both_lines(&text)), "{}", r["skipped"]);

    let (got, _) = workload(&log, "half");
    let hand = markers_in_log(&text, "half");
    assert_eq!(got, hand, "sampled: what the log shows, once");
    assert!(hand.values().sum::<u64>() < sampled.values().sum::<u64>(), "a sample rate of 0.5 leaves some out");

    // slowms 100: only the slow writes, each line on its own draw (the insert is fast).
    let (got, _) = workload(&log, "slow");
    let hand = markers_in_log(&text, "slow");
    assert_eq!(got, hand, "slowms 100, sampled: what the log shows, once");
    assert!(hand.values().sum::<u64>() <= slow.values().sum::<u64>());
    let slow_lines = text.lines().filter(|l| l.contains("\"ns\":\"slow.")).count();
    assert!(slow_lines > 0, "some slow write was logged");
    let write_lines = text.lines().filter(|l| l.contains("\"ns\":\"slow.") && l.contains("\"c\":\"WRITE\"")).count();
    eprintln!("slowms 100: {slow_lines} lines ({write_lines} WRITE), counted {got:?}, sent {slow:?}");

    let dir = tempfile::tempdir().unwrap();
    let spread_log = dir.path().join("spread.log");
    std::fs::write(&spread_log, spread(&text)).unwrap();
    assert_eq!(workload(&spread_log, "every").0, every, "spread over parts");
    assert_eq!(workload(&spread_log, "half").0, markers_in_log(&text, "half"), "sampled, spread over parts");
    assert_eq!(workload(&spread_log, "slow").0, markers_in_log(&text, "slow"), "slowms 100, spread over parts");
}
