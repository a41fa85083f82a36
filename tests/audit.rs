//! Auditing an already sharded collection: sharding metadata of the real
//! format, seeded into a real `--configsvr` replica set; data on a second replica set.

mod common;

use common::{fixture, load_ndjson, rt, Mode, Mongod};
use mongodb::bson::{doc, oid::ObjectId, spec::BinarySubtype, Binary, Bson, Document, Timestamp};
use serde_json::Value;
use std::process::Command;

fn ts(i: u32) -> Timestamp {
    Timestamp { time: 1_700_000_000, increment: i }
}

#[test]
fn audit_reads_both_chunk_formats_from_a_config_server() {
    let data = Mongod::start(Mode::ReplicaSet);
    let cfg = Mongod::start(Mode::ConfigServer);
    let dc = data.client();
    load_ndjson(&dc, "app", "events", fixture("events.ndjson"));
    rt().block_on(async {
        let docs: Vec<Document> = (0..200).map(|i| doc! {"_id": i, "ts": i * 10}).collect();
        dc.database("app").collection::<Document>("old").insert_many(docs).await.unwrap();
    });
    let cc = cfg.client();
    let uuid = Binary { subtype: BinarySubtype::Uuid, bytes: (1..=16).collect() };
    rt().block_on(async {
        let config = cc.database("config");
        config.collection::<Document>("shards").insert_many(vec![
            doc! {"_id": "shA", "host": "rsA/h1:27018", "state": 1, "topologyTime": ts(1)},
            doc! {"_id": "shB", "host": "rsB/h2:27018", "state": 1, "topologyTime": ts(2)},
            doc! {"_id": "shC", "host": "rsC/h3:27018", "state": 1, "topologyTime": ts(3)},
        ]).await.unwrap();
        let epoch = ObjectId::new();
        // 5.0+ format: chunks keyed by the collection uuid.
        config.collection::<Document>("collections").insert_one(doc! {
            "_id": "app.events", "lastmodEpoch": epoch, "lastmod": mongodb::bson::DateTime::now(), "timestamp": ts(9),
            "uuid": uuid.clone(), "key": {"projectId": 1}, "unique": false, "noBalance": false,
        }).await.unwrap();
        let bounds: [(Bson, Bson, &str, bool); 4] = [
            (Bson::MinKey, "proj-0000".into(), "shB", false),
            ("proj-0000".into(), "proj-0001".into(), "shA", true),
            ("proj-0001".into(), "proj-0100".into(), "shB", false),
            ("proj-0100".into(), Bson::MaxKey, "shC", false),
        ];
        let chunks: Vec<Document> = bounds.iter().enumerate().map(|(i, (lo, hi, shard, jumbo))| {
            let mut d = doc! {"_id": ObjectId::new(), "uuid": uuid.clone(), "min": {"projectId": lo.clone()}, "max": {"projectId": hi.clone()},
                "shard": *shard, "lastmod": ts(i as u32 + 1), "onCurrentShardSince": ts(1), "history": [{"validAfter": ts(1), "shard": *shard}]};
            if *jumbo { d.insert("jumbo", true); }
            d
        }).collect();
        config.collection::<Document>("chunks").insert_many(chunks).await.unwrap();
        // Pre-5.0 format: chunks keyed by namespace.
        config.collection::<Document>("collections").insert_one(doc! {
            "_id": "app.old", "lastmodEpoch": epoch, "lastmod": mongodb::bson::DateTime::now(), "dropped": false, "key": {"ts": 1}, "unique": false,
        }).await.unwrap();
        config.collection::<Document>("chunks").insert_many(vec![
            doc! {"_id": "app.old-ts_MinKey", "ns": "app.old", "min": {"ts": Bson::MinKey}, "max": {"ts": 1000}, "shard": "shA", "lastmod": ts(1), "lastmodEpoch": epoch},
            doc! {"_id": "app.old-ts_1000", "ns": "app.old", "min": {"ts": 1000}, "max": {"ts": Bson::MaxKey}, "shard": "shB", "lastmod": ts(2), "lastmodEpoch": epoch},
        ]).await.unwrap();
    });
    let run = |coll: &str, extra: &[&str]| -> Value {
        let mut args = vec![
            "analyze".to_string(),
            "--uri".into(),
            data.uri(),
            "--config-uri".into(),
            cfg.uri(),
            "--collection".into(),
            coll.into(),
            "--format".into(),
            "json".into(),
            // config.shards names hosts that do not exist: their profilers are looked for, each
            // shard noted as not reached, within this timeout.
            "--server-selection-timeout".into(),
            "3".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let o = Command::new(env!("CARGO_BIN_EXE_shardkey")).args(&args).output().unwrap();
        // Exit 0 and the report against schemas/analyze.schema.json (the audit included).
        common::json_ok(&o)
    };

    let r = run("app.events", &["--key", "{_id: \"hashed\"}"]);
    let a = &r["audit"];
    assert_eq!(a["chunkFormat"], "uuid");
    assert_eq!(a["numChunks"], 4);
    assert_eq!(a["shardKey"], serde_json::json!({"projectId": 1}));
    let per: Vec<(String, u64)> = a["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["shard"].as_str().unwrap().to_string(), s["numChunks"].as_u64().unwrap()))
        .collect();
    assert_eq!(per, vec![("shA".into(), 1), ("shB".into(), 2), ("shC".into(), 1)]);
    assert_eq!(a["jumboFlaggedChunks"][0]["min"]["projectId"], "proj-0000");
    assert_eq!(a["jumboFlaggedChunks"][0]["shard"], "shA");
    assert_eq!(a["chunkCountImbalance"], 2.0);
    // the current key is analysed beside the candidates, on its real chunks
    let current =
        r["candidates"].as_array().unwrap().iter().find(|c| c["key"] == serde_json::json!({"projectId": 1})).expect("current key analysed");
    let cl = &current["cluster"];
    assert!(cl["basis"].as_str().unwrap().starts_with("actual chunks"));
    let sha = cl["today"]["shards"].as_array().unwrap().iter().find(|s| s["shard"] == "shA").unwrap();
    let pct = sha["dataPercent"].as_f64().unwrap();
    assert!((30.0..40.0).contains(&pct), "the hot project's chunk holds its share of data: {pct}");
    assert!(r["notes"].to_string().contains("is sharded on {projectId: 1}"));

    // Changing the key (rules::existing_key; manual "Change a Shard Key"): a key that adds
    // suffix fields refines (no finding), any other reshards (a warning on 5.0+; the
    // deployment here is 6.0). The manual's own example of a forbidden refine: changing the
    // type of a current field, {projectId: "hashed", _id: 1}.
    let r =
        run("app.events", &["--key", "{projectId: 1, _id: 1}", "--key", "{_id: \"hashed\"}", "--key", "{projectId: \"hashed\", _id: 1}"]);
    let by = |k: serde_json::Value| r["candidates"].as_array().unwrap().iter().find(|c| common::same_key(&c["key"], &k)).unwrap().clone();
    let rules_of = |c: &Value| -> Vec<String> {
        c["constraints"].as_array().map(|a| a.iter().map(|f| f["rule"].as_str().unwrap().to_string()).collect()).unwrap_or_default()
    };
    assert!(!rules_of(&by(serde_json::json!({"projectId": 1, "_id": 1}))).contains(&"existingShardKey".to_string()));
    for (k, why) in [
        (serde_json::json!({"_id": "hashed"}), "does not start with the current key {projectId: 1}"),
        (serde_json::json!({"projectId": "hashed", "_id": 1}), "changes the range or hashed type of {projectId: 1}'s fields"),
    ] {
        let c = by(k.clone());
        let f = c["constraints"].as_array().unwrap().iter().find(|f| f["rule"] == "existingShardKey").expect("existingShardKey");
        assert_eq!(f["effect"], "warning", "{k}");
        assert!(f["message"].as_str().unwrap().contains(why), "{k}: {f}");
        assert!(c["reasons"][0].as_str().unwrap().contains("only reshardCollection (5.0+)"), "{k}: {}", c["reasons"]);
    }
    // The recommendation's command is the one the winner's relation to the current key allows.
    let rec = &r["recommendation"];
    let winner = rec["key"].clone();
    let expected = if winner == serde_json::json!({"projectId": 1, "_id": 1}) { "refineCollectionShardKey" } else { "reshardCollection" };
    assert_eq!(rec["action"], expected, "{rec}");
    assert!(rec["commands"].to_string().contains(expected), "{rec}");

    let r = run("app.old", &["--key", "{_id: 1}"]);
    assert_eq!(r["audit"]["chunkFormat"], "ns");
    assert_eq!(r["audit"]["numChunks"], 2);
    let current = r["candidates"].as_array().unwrap().iter().find(|c| c["key"] == serde_json::json!({"ts": 1})).unwrap();
    let shards = current["cluster"]["today"]["shards"].as_array().unwrap();
    // ts = 0..1990 step 10: values below 1000 on shA (100 docs), the rest on shB
    assert_eq!(shards.iter().find(|s| s["shard"] == "shA").unwrap()["dataPercent"], 50.0);
    assert_eq!(shards.iter().find(|s| s["shard"] == "shC").unwrap()["dataPercent"], 0.0);
    // monotonic ts: every insert goes to the shard owning the MaxKey chunk
    assert_eq!(shards.iter().find(|s| s["shard"] == "shB").unwrap()["insertsPercent"], 100.0);

    // without the config servers, a plain replica set has no sharding metadata: no audit
    let o = Command::new(env!("CARGO_BIN_EXE_shardkey"))
        .args(["analyze", "--uri", &data.uri(), "--collection", "app.events", "--key", "{_id: 1}", "--format", "json"])
        .output()
        .unwrap();
    let plain: Value = common::json_ok(&o);
    assert!(plain.get("audit").is_none(), "no config metadata on a plain replica set");
}
