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
    let cand = r["candidates"].as_array().unwrap().iter().find(|c| c["key"] == want).unwrap();
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
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("shardkey.toml"),
        format!("[defaults]\nmax_refused_writes_percent = 0.0\n\n[[collection]]\nnamespace = \"help.tickets\"\nkey = '{key}'\n"),
    )
    .unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_shardkey"))
        .current_dir(d.path())
        .args(["check", "--uri", &uri, "--queries", "profile", "--format", "json"])
        .env_remove("GITHUB_ACTIONS")
        .env_remove("MONGODB_URI")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rule = v["collections"][0]["rules"].as_array().unwrap().iter().find(|r| r["rule"] == "max_refused_writes_percent").unwrap();
    assert_eq!(rule["passed"], false);
    assert_eq!(rule["actual"].as_f64(), Some(expected), "{rule}");
    assert!(rule["message"].as_str().unwrap().contains("refused (error 31025)"), "{rule}");
}
