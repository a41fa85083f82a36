//! Issue 48: the server's write rules, one verdict in analyze and check, against the real
//! mongod 6.0.5. The helpdesk case: tickets reassigned with updateOne({_id}, {$set:
//! {assignedTo}}) through the Rust driver, recorded by the profiler. Under the key
//! {assignedTo: 1, _id: 1} each of those updates changes the shard key value without the
//! whole key in its filter: every version refuses it (error 31025, update_stage.cpp; an
//! updateOne by _id is never a two-phase write, write_without_shard_key_util.cpp).
//! A standalone mongod: the profiler records the same commands a replica set member would.
//! Expected values are hand counts of the workload below, never shardkey's own.

mod common;

use common::{rt, shardkey, Mode, Mongod};
use mongodb::bson::{doc, Document};
use serde_json::Value;

const REASSIGNS: usize = 60;
const CLOSES: usize = 40;

fn tickets(m: &Mongod) {
    let c = m.client();
    rt().block_on(async {
        let db = c.database("help");
        let docs: Vec<Document> = (0..500).map(|i| doc! {"_id": i, "assignedTo": format!("agent{}", i % 25), "status": "open"}).collect();
        db.collection::<Document>("tickets").insert_many(docs).await.unwrap();
        db.run_command(doc! {"profile": 2, "slowms": 0}).await.unwrap();
        let t = db.collection::<Document>("tickets");
        for i in 0..REASSIGNS as i32 {
            t.update_one(doc! {"_id": i}, doc! {"$set": {"assignedTo": format!("agent{}", (i + 1) % 25)}}).await.unwrap();
        }
        for i in 0..CLOSES as i32 {
            t.update_one(doc! {"_id": 100 + i}, doc! {"$set": {"status": "closed"}}).await.unwrap();
        }
        db.run_command(doc! {"profile": 0}).await.unwrap();
    });
}

/// `check` run with `policy` (its gate fails: exit 1); its `max_refused_writes_percent` rule.
fn refused_rule(policy: &str, uri: &str, queries: &str) -> Value {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("shardkey.toml"), policy).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_shardkey"))
        .current_dir(d.path())
        .args(["check", "--uri", uri, "--queries", queries, "--format", "json"])
        .env_remove("GITHUB_ACTIONS")
        .env_remove("MONGODB_URI")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["collections"][0]["rules"].as_array().unwrap().iter().find(|r| r["rule"] == "max_refused_writes_percent").unwrap().clone()
}

#[test]
fn updates_by_id_that_change_the_key_are_refused_on_6_0_in_analyze_and_check() {
    let m = Mongod::start(Mode::Standalone);
    tickets(&m);
    let uri = m.uri();
    let key = "{assignedTo: 1, _id: 1}";
    let o = shardkey(&["analyze", "--uri", &uri, "--collection", "help.tickets", "--queries", "profile", "--key", key, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let want = serde_json::to_value(shardkey::model::ShardKey::parse(key).unwrap()).unwrap();
    let cand = r["candidates"].as_array().unwrap().iter().find(|c| common::same_key(&c["key"], &want)).unwrap();
    // 60 of 100 updates, by hand: 60.0%.
    let expected = REASSIGNS as f64 * 100.0 / (REASSIGNS + CLOSES) as f64;
    let f =
        cand["constraints"].as_array().unwrap().iter().find(|f| f["rule"] == "shardKeyUpdateWithoutFullKey").expect("the 31025 finding");
    assert_eq!(f["effect"], "writesFail", "{f}");
    assert_eq!(f["percentageOfWrites"].as_f64(), Some(expected), "{f}");
    let msg = f["message"].as_str().unwrap();
    assert!(msg.contains("refused (error 31025) on every version"), "{msg}");
    assert!(msg.contains("fix: add assignedTo to the filter"), "{msg}");
    assert_eq!(cand["scoreBreakdown"]["cappedBy"], "writesFail", "{}", cand["scoreBreakdown"]);
    // The words: the 60% by _id are not "never refused".
    let text = String::from_utf8_lossy(
        &shardkey(&["analyze", "--uri", &uri, "--collection", "help.tickets", "--queries", "profile", "--key", key, "--wide"]).stdout,
    )
    .to_string();
    assert!(!text.contains("100.0% updateOne/deleteOne by _id"), "{text}");
    assert!(text.contains("60.0% updateOne by _id that changes the shard key value (refused on every version, error 31025"), "{text}");

    // check: the same verdict, from its own rule.
    let rule = refused_rule(
        &format!("[defaults]\nmax_refused_writes_percent = 0.0\n\n[[collection]]\nnamespace = \"help.tickets\"\nkey = '{key}'\n"),
        &uri,
        "profile",
    );
    assert_eq!(rule["passed"], false);
    assert_eq!(rule["actual"].as_f64(), Some(expected), "{rule}");
    assert!(rule["message"].as_str().unwrap().contains("refused (error 31025)"), "{rule}");
}

/// The marketplace case (issue 48), as a DBA meets it: an application (the Rust driver) on a
/// replica set runs three transactions; mongod 6.0.5 logs every operation. Under the DBA's
/// keys orders {customerId: 1, _id: 1} and payments {customerId: 1, _id: 1}:
/// - pay (PAYS): reads the order by the whole key, then payments.updateOne({orderId}) — neither
///   key nor _id: refused before 7.1 (error 61);
/// - ship (SHIPS): orders.findOneAndUpdate({number}) — findAndModify without the key: refused;
/// - note (NOTES): orders.updateOne and payments.updateOne by the whole key — targeted.
///
/// By hand: (PAYS + SHIPS) / all = 50 / 100 transactions fail on 6.0; of payments' updates
/// PAYS / (PAYS + NOTES) = 30 / 80 = 37.5% are refused. analyze, check and plan must say the
/// same of the same writes: one verdict (`rules::write_targeting`).
#[test]
fn the_same_refused_writes_in_analyze_check_and_plan() {
    use common::ReplSet;
    const PAYS: i64 = 30;
    const SHIPS: i64 = 20;
    const NOTES: i64 = 50;
    let set = ReplSet::start(2, false, false);
    let client = set.client();
    rt().block_on(async {
        let db = client.database("market");
        db.run_command(doc! {"profile": 0, "slowms": -1}).await.unwrap();
        let orders = db.collection::<Document>("orders");
        let payments = db.collection::<Document>("payments");
        let o: Vec<Document> = (0..400i64).map(|i| doc! {"_id": i, "number": 9000 + i, "customerId": i % 97, "status": "new"}).collect();
        let p: Vec<Document> = (0..400i64).map(|i| doc! {"_id": i, "orderId": i, "customerId": i % 97, "state": "due"}).collect();
        orders.insert_many(o).await.unwrap();
        payments.insert_many(p).await.unwrap();
        let mut s = client.start_session().await.unwrap();
        for t in 0..(PAYS + SHIPS + NOTES) {
            let i = (t * 7) % 400;
            let c = i % 97;
            s.start_transaction().await.unwrap();
            if t < PAYS {
                orders.find_one(doc! {"customerId": c, "_id": i}).session(&mut s).await.unwrap();
                payments.update_one(doc! {"orderId": i}, doc! {"$set": {"state": "paid"}}).session(&mut s).await.unwrap();
            } else if t < PAYS + SHIPS {
                orders.find_one_and_update(doc! {"number": 9000 + i}, doc! {"$set": {"status": "shipped"}}).session(&mut s).await.unwrap();
            } else {
                orders.update_one(doc! {"customerId": c, "_id": i}, doc! {"$set": {"status": "seen"}}).session(&mut s).await.unwrap();
                payments.update_one(doc! {"customerId": c, "_id": i}, doc! {"$set": {"seen": true}}).session(&mut s).await.unwrap();
            }
            s.commit_transaction().await.unwrap();
        }
        db.run_command(doc! {"profile": 0, "slowms": 100}).await.unwrap();
    });
    let log = set.members[0].dir.path().join("mongod.log");
    let log = log.to_str().unwrap();
    let uri = set.uri("");
    let key = "{customerId: 1, _id: 1}";
    let refused_pct = PAYS as f64 * 100.0 / (PAYS + NOTES) as f64;

    // analyze: capped as writes that fail, 37.5%, the fix named.
    let o = shardkey(&["analyze", "--uri", &uri, "--collection", "market.payments", "--queries", log, "--key", key, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let want = serde_json::to_value(shardkey::model::ShardKey::parse(key).unwrap()).unwrap();
    let cand = r["candidates"].as_array().unwrap().iter().find(|c| common::same_key(&c["key"], &want)).unwrap();
    let f = cand["constraints"].as_array().unwrap().iter().find(|f| f["rule"] == "singleWriteWithoutShardKey").expect("refused writes");
    assert_eq!((f["effect"].as_str(), f["percentageOfWrites"].as_f64()), (Some("writesFail"), Some(refused_pct)), "{f}");
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.contains("(error 61, ShardKeyNotFound); accepted from 7.1") && msg.ends_with("fix: add customerId, _id to the filter"),
        "{msg}"
    );
    assert_eq!(cand["scoreBreakdown"]["cappedBy"], "writesFail");
    assert!(cand["score"].as_u64().unwrap() <= 20);

    // check: its own rule, the same share and words.
    let policy = format!("[[collection]]\nnamespace = \"market.payments\"\nkey = '{key}'\nmax_refused_writes_percent = 0.0\n");
    let rule = refused_rule(&policy, &uri, log);
    assert_eq!(rule["actual"].as_f64(), Some(refused_pct), "{rule}");
    assert!(rule["message"].as_str().unwrap().contains(msg), "the same words: {rule}");

    // plan, the DBA's keys kept (what-if): half the transactions fail, apart from the
    // single-shard share; both refused shapes named with their fix; the payments key capped.
    let (orders_key, payments_key) = (format!("orders={key}"), format!("payments={key}"));
    let plan = |extra: &[&str]| {
        let mut a = vec!["plan", "--uri", &uri, "--database", "market", "--queries", log, "--shards", "4"];
        a.extend_from_slice(&["--key", &orders_key, "--key", &payments_key]);
        a.extend_from_slice(extra);
        shardkey(&a)
    };
    let o = plan(&["--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let p: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(p["targetVersion"], "6.0");
    assert_eq!(p["transactions"]["found"], PAYS + SHIPS + NOTES, "{:#}", p["transactions"]);
    let g = &p["given"]["transactions"];
    let failing = (PAYS + SHIPS) as f64 / (PAYS + SHIPS + NOTES) as f64;
    assert_eq!(g["failingShare"].as_f64(), Some(failing), "{g:#}");
    let refused: Vec<&Value> = g["blockers"].as_array().unwrap().iter().filter(|b| b["shape"] == "refused by the server").collect();
    let of = |ns: &str, op: &str| {
        refused.iter().find(|b| b["namespace"] == ns && b["op"] == op).unwrap_or_else(|| panic!("{ns} {op} not in {refused:#?}"))
    };
    let pay = of("market.payments", "update");
    assert_eq!(pay["transactionsPercent"].as_f64(), Some(PAYS as f64 * 100.0 / (PAYS + SHIPS + NOTES) as f64));
    assert!(pay["fix"].as_str().unwrap().starts_with("add customerId, _id to the update's filter (6.0 refuses it, error 61"), "{pay}");
    assert_eq!((pay["errorCode"].as_i64(), pay["acceptedFrom"].as_str()), (Some(61), Some("7.1")));
    let ship = of("market.orders", "findAndModify");
    assert_eq!(ship["transactionsPercent"].as_f64(), Some(SHIPS as f64 * 100.0 / (PAYS + SHIPS + NOTES) as f64));
    assert!(ship["fix"].as_str().unwrap().starts_with("add customerId, _id to the findAndModify's filter"), "{ship}");
    let payments = p["given"]["collections"].as_array().unwrap().iter().find(|c| c["namespace"] == "market.payments").unwrap();
    assert!(payments["score"].as_u64().unwrap() <= 20, "capped: {payments:#}");
    // The text says the failing share apart.
    let o = plan(&[]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("! 50% of transactions would fail on MongoDB 6.0"), "{text}");
}

/// The version unknown (a rotated log: its build-info line, id 23403, is in an older file),
/// offline: a gate on refused writes neither counts nor passes as fine what 6.0 refuses; the
/// version given (`--target-version`) decides, as the log's own line does. The application (the
/// Rust driver, mongod 6.0.5 logging every operation): orders taken by number with
/// findOneAndUpdate (TAKES) and paid by the whole key (PAYS). By hand under {customerId: 1}:
/// TAKES / (TAKES + PAYS) = 30 / 40 = 75.0% of the updates are findAndModify without the key,
/// refused before 7.1 (error 61), run by 7.1+.
#[test]
fn an_unknown_version_is_said_and_the_gate_warns_until_it_is_given() {
    const ORDERS: i64 = 400;
    const TAKES: i64 = 30;
    const PAYS: i64 = 10;
    let m = Mongod::start(Mode::Standalone);
    let c = m.client();
    let docs: Vec<Document> = (0..ORDERS).map(|i| doc! {"_id": i, "customerId": i % 40, "number": format!("N{i:04}")}).collect();
    rt().block_on(async {
        let db = c.database("shop");
        db.collection::<Document>("orders").insert_many(docs.clone()).await.unwrap();
        db.run_command(doc! {"profile": 0, "slowms": -1}).await.unwrap();
        let o = db.collection::<Document>("orders");
        for i in 0..TAKES {
            o.find_one_and_update(doc! {"number": format!("N{:04}", i * 7)}, doc! {"$set": {"taken": true}}).await.unwrap();
        }
        for i in 0..PAYS {
            o.update_one(doc! {"customerId": i % 40, "_id": i}, doc! {"$set": {"paid": true}}).await.unwrap();
        }
        db.run_command(doc! {"profile": 0, "slowms": 100}).await.unwrap();
    });
    let d = tempfile::tempdir().unwrap();
    let export: String = docs.iter().map(|x| format!("{}\n", mongodb::bson::Bson::from(x.clone()).into_relaxed_extjson())).collect();
    std::fs::write(d.path().join("orders.ndjson"), export).unwrap();
    let full = std::fs::read_to_string(m.dir.path().join("mongod.log")).unwrap();
    assert!(full.contains("\"id\":23403"), "the server's log names its version");
    let rotated: String = full.lines().filter(|l| !l.contains("\"id\":23403")).map(|l| format!("{l}\n")).collect();
    std::fs::write(d.path().join("full.log"), full).unwrap();
    std::fs::write(d.path().join("rotated.log"), rotated).unwrap();
    let policy = "[defaults]\nmax_refused_writes_percent = 0.0\n\n[[collection]]\nnamespace = \"shop.orders\"\nkey = '{customerId: 1}'\n";
    std::fs::write(d.path().join("shardkey.toml"), policy).unwrap();
    let check = |log: &str, extra: &[&str]| {
        let mut args = vec!["check", "--docs", "orders.ndjson", "--queries", log, "--format", "json"];
        args.extend_from_slice(extra);
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_shardkey"))
            .current_dir(d.path())
            .args(&args)
            .env_remove("GITHUB_ACTIONS")
            .env_remove("MONGODB_URI")
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&o.stderr)));
        let rule =
            v["collections"][0]["rules"].as_array().unwrap().iter().find(|r| r["rule"] == "max_refused_writes_percent").unwrap().clone();
        (o.status.code(), rule)
    };
    let share = (TAKES as f64 * 1000.0 / (TAKES + PAYS) as f64).round() / 10.0;
    // Unknown: a warning that names the share and the way out; the gate is not failed by a guess.
    let (code, r) = check("rotated.log", &[]);
    assert_eq!((code, r["passed"].as_bool(), r["warning"].as_bool()), (Some(0), Some(true), Some(true)), "{r:#}");
    let msg = r["message"].as_str().unwrap();
    assert!(msg.starts_with(&format!("the deployment's version is not known: {share:.1}% of writes would be refused before 7.1")), "{msg}");
    assert!(msg.contains("give --target-version X.Y") && msg.contains(&format!("{TAKES}× findAndModify {{number: eq}}")), "{msg}");
    // Given 6.0, or read from the full log's own line: refused, the gate fails.
    for (log, extra) in [("rotated.log", &["--target-version", "6.0"][..]), ("full.log", &[][..])] {
        let (code, r) = check(log, extra);
        assert_eq!((code, r["passed"].as_bool(), r["actual"].as_f64()), (Some(1), Some(false), Some(share)), "{log} {extra:?}: {r:#}");
    }
    // Given 8.0: they run (each a broadcast read, then the write); nothing refused.
    let (code, r) = check("rotated.log", &["--target-version", "8.0"]);
    assert_eq!((code, r["passed"].as_bool(), r.get("warning")), (Some(0), Some(true), None), "{r:#}");
    // analyze says the version is unknown, and follows the one given.
    let notes = |extra: &[&str]| {
        let mut args =
            vec!["analyze", "--docs", "orders.ndjson", "--queries", "rotated.log", "--collection", "shop.orders", "--format", "json"];
        args.extend_from_slice(extra);
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_shardkey")).current_dir(d.path()).args(&args).output().unwrap();
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    assert!(notes(&[]).iter().any(|n| n.starts_with("the deployment's version is not known")), "{:?}", notes(&[]));
    let given = notes(&["--target-version", "6.0"]);
    assert!(given.iter().any(|n| n == "MongoDB 6.0, from --target-version: the rules that depend on the version follow it"), "{given:?}");
    assert!(!given.iter().any(|n| n.starts_with("the deployment's version is not known")), "{given:?}");
}
