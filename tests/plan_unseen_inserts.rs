//! Issue 49 (the brief's item 2): an insert logged without its documents. pymongo sends an
//! insert's documents as an OP_MSG document sequence, which mongod's log does not show, so the
//! plan holds an insert with no document: it goes to the one shard its document's key value
//! decides, which nobody saw. Such an insert is neither "sharded apart" (a blocker with an
//! empty example) nor on the transaction's shard: the transactions holding it are said as
//! not placed, with their share and why. The same application with the Node.js driver (its
//! `insertOne` sends the document in the command body, which the log holds) still has its
//! inserts placed by their documents: nothing is said not placed.
//!
//! The application, on a real mongod 6.0.5 replica set logging every operation (`slowms: -1`):
//! a helpdesk with 40 tickets (each with a 2 KB description, so the audit log, 4 KB an entry,
//! is the larger collection); 60 transactions, each reading ticket `t`, updating it by `_id`
//! and inserting an audit entry `{ticketId: t}`. Hand count: 60 transactions, each holding
//! one insert into helpdesk.audit_log.

mod common;
use common::{block, shardkey, ReplSet};
use serde_json::Value;
use std::process::Command;

const PYTHON: &str = r#"
import json, sys
from pymongo import MongoClient
c = MongoClient(sys.argv[1])
db = c.helpdesk
db.tickets.insert_many([{"_id": t, "status": "open", "updates": 0, "text": "x" * 2000} for t in range(1, 41)])
db.audit_log.insert_many([{"agent": "agent-%d" % (i % 7), "action": "opened", "body": "y" * 4000} for i in range(400)])
done = 0
for i in range(60):
    t = 1 + i % 40
    with c.start_session() as s:
        with s.start_transaction():
            db.tickets.find_one({"_id": t}, session=s)
            db.tickets.update_one({"_id": t}, {"$inc": {"updates": 1}}, session=s)
            db.audit_log.insert_one({"agent": "agent-%d" % (i % 7), "action": "update", "body": "y" * 4000}, session=s)
    done += 1
print(json.dumps({"transactions": done}))
"#;

const NODE: &str = r#"
const { MongoClient } = require("mongodb");
async function main() {
  const client = new MongoClient(process.argv[2]);
  const db = client.db("helpdesk");
  const ids = [...Array(40).keys()].map((i) => i + 1);
  await db.collection("tickets").insertMany(ids.map((t) => ({ _id: t, status: "open", updates: 0, text: "x".repeat(2000) })));
  await db.collection("audit_log").insertMany([...Array(400).keys()].map((i) => ({ agent: `agent-${i % 7}`, action: "opened", body: "y".repeat(4000) })));
  let done = 0;
  for (let i = 0; i < 60; i++) {
    const t = 1 + (i % 40);
    const s = client.startSession();
    await s.withTransaction(async () => {
      await db.collection("tickets").findOne({ _id: t }, { session: s });
      await db.collection("tickets").updateOne({ _id: t }, { $inc: { updates: 1 } }, { session: s });
      await db.collection("audit_log").insertOne({ agent: `agent-${i % 7}`, action: "update", body: "y".repeat(4000) }, { session: s });
    });
    await s.endSession();
    done++;
  }
  console.log(JSON.stringify({ transactions: done }));
  await client.close();
}
main().catch((e) => { console.error(e); process.exit(1); });
"#;

/// Run the application with one driver on a fresh replica set logging every operation, and
/// plan helpdesk from its log on 4 shards (JSON and table).
fn plan_after(driver: &str) -> (Value, String) {
    let Ok(drivers) = std::env::var("SHARDKEY_DRIVERS") else {
        panic!("SHARDKEY_DRIVERS is not set: run scripts/drivers.sh (scripts/test.sh does) and export its output");
    };
    let set = ReplSet::start(1, false, false);
    let admin = set.client();
    block(admin.database("helpdesk").run_command(bson::doc! {"profile": 0, "slowms": -1})).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = match driver {
        "python" => {
            let script = dir.path().join("app.py");
            std::fs::write(&script, PYTHON).unwrap();
            Command::new("python3").arg(&script).arg(set.uri("")).env("PYTHONPATH", std::path::Path::new(&drivers).join("python")).output()
        }
        _ => {
            let script = dir.path().join("app.js");
            std::fs::write(&script, NODE).unwrap();
            Command::new("node")
                .arg(&script)
                .arg(set.uri(""))
                .env("NODE_PATH", std::path::Path::new(&drivers).join("node/node_modules"))
                .output()
        }
    }
    .unwrap();
    assert!(out.status.success(), "{driver}: {}", String::from_utf8_lossy(&out.stderr));
    let counts: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(counts["transactions"], 60, "{driver}");
    block(admin.database("helpdesk").run_command(bson::doc! {"profile": 0, "slowms": 100})).unwrap();
    let log = set.members[0].dir.path().join("mongod.log");
    let uri = set.uri("");
    let args = ["plan", "--uri", &uri, "--database", "helpdesk", "--queries", log.to_str().unwrap(), "--shards", "4", "--format"];
    let o = shardkey(&[&args[..], &["json"]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let p: Value = serde_json::from_slice(&o.stdout).unwrap();
    common::assert_schema("plan", &p);
    let o = shardkey(&[&args[..], &["table"]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (p, String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn an_insert_logged_without_its_documents_is_not_placed_and_one_with_them_is() {
    let coll = |p: &Value, ns: &str| p["collections"].as_array().unwrap().iter().find(|c| c["namespace"] == ns).cloned().unwrap();
    // The plan's setting, which both runs need: audit_log (1.8 MB of 2) sharded on a key of
    // its own, in no zone group (it holds no field linked to tickets), tickets unsharded.
    let setting = |p: &Value| {
        let a = coll(p, "helpdesk.audit_log");
        assert!(a["action"] == "shard" && a["zones"].as_array().is_none_or(|z| z.is_empty()), "{a:#}");
        assert_eq!(coll(p, "helpdesk.tickets")["action"], "unsharded", "{:#}", p["collections"]);
    };
    let (p, text) = plan_after("python");
    // The table wraps its lines: the words compared with their white space as one space.
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    setting(&p);
    let t = &p["transactions"];
    // Hand count: all 60 transactions hold an insert into audit_log that the log shows
    // without its document.
    assert_eq!(t["found"], 60, "{t:#}");
    assert_eq!(t["notPlaced"]["transactionsPercent"], 100.0, "{t:#}");
    assert_eq!(t["notPlaced"]["namespaces"], serde_json::json!(["helpdesk.audit_log"]), "{t:#}");
    // Not a blocker: no "sharded apart" with an empty example.
    assert!(!t["blockers"].to_string().contains("insert helpdesk.audit_log"), "{t:#}");
    // The chance its document lands on the tickets' shard: 1 in 4.
    assert_eq!(t["singleShardShare"], 0.25, "{t:#}");
    assert!(
        text.contains(
            "100.0% of transactions not placed: each holds an insert into helpdesk.audit_log whose documents the source does not show;"
        ),
        "{text}"
    );
    assert!(text.contains("the driver sent the documents outside the command"), "{text}");

    // The Node driver's insertOne: the documents in the log, the inserts placed by them (a
    // hashed _id of its own: off the tickets' shard but with chance 1 in 4), nothing not placed.
    let (n, _) = plan_after("node");
    setting(&n);
    let t = &n["transactions"];
    assert!(t.get("notPlaced").is_none(), "{t:#}");
    let apart =
        t["blockers"].as_array().unwrap().iter().find(|b| b["namespace"] == "helpdesk.audit_log").unwrap_or_else(|| panic!("{t:#}"));
    assert_eq!(
        (&apart["shape"], &apart["op"], &apart["transactionsPercent"]),
        (&"sharded apart".into(), &"insert".into(), &100.0.into()),
        "{apart:#}"
    );
    // Its example is the document the log shows.
    assert!(apart["example"].as_str().unwrap().contains("agent-"), "{apart:#}");
    assert_eq!(t["singleShardShare"], 0.25, "{t:#}");
}
