//! The validity rules (docs/reference.md "Rules") against the real mongod 6.0.5: unique indexes
//! (single and compound, hashed keys), capped collections, upserts without the key,
//! time-series collections, and the same verdicts offline from a mongodump-style directory.
//! Expected values come from the server's own rule (shard_key_pattern.cpp's
//! isIndexUniquenessCompatible, mongodb/mongo 49802bc) worked by hand, and from the manual.

mod common;

use common::{rt, shardkey, Mode, Mongod};
use mongodb::bson::{doc, Bson, Document, RawDocumentBuf};
use serde_json::Value;
use std::process::Output;

/// An analyze JSON report, held to the published schema (schemas/analyze.schema.json).
fn json(o: &Output) -> Value {
    assert!(o.status.success(), "exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    let v = serde_json::from_slice(&o.stdout).unwrap();
    common::assert_schema("analyze", &v);
    v
}

/// A key as the JSON report writes it (an object).
fn key(k: &str) -> Value {
    serde_json::to_value(shardkey::model::ShardKey::parse(k).unwrap()).unwrap()
}

fn candidate<'a>(r: &'a Value, k: &str) -> &'a Value {
    r["candidates"].as_array().unwrap().iter().find(|c| common::same_key(&c["key"], &key(k))).unwrap_or_else(|| panic!("no candidate {k}"))
}

fn by_key<'a>(r: &'a Value, k: &Value) -> &'a Value {
    r["candidates"].as_array().unwrap().iter().find(|c| common::same_key(&c["key"], k)).unwrap()
}

/// (rule, effect, message) of each constraint, in order.
fn constraints(c: &Value) -> Vec<(String, String, String)> {
    c["constraints"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|f| (f["rule"].as_str().unwrap().into(), f["effect"].as_str().unwrap().into(), f["message"].as_str().unwrap().into()))
                .collect()
        })
        .unwrap_or_default()
}

const KEYS: [&str; 4] = ["{tenantId: 1, _id: 1}", "{tenantId: 1}", "{email: \"hashed\"}", "{tenantId: 1, username: 1}"];

fn load_accounts(m: &Mongod) -> mongodb::Client {
    let c = m.client();
    rt().block_on(async {
        let coll = c.database("app").collection::<Document>("accounts");
        let docs: Vec<Document> =
            (0..3000).map(|i| doc! {"email": format!("u{i}@example.com"), "tenantId": i % 40, "username": format!("user{i}")}).collect();
        coll.insert_many(docs).await.unwrap();
        c.database("app")
            .run_command(doc! {"createIndexes": "accounts", "indexes": [
                {"key": {"email": 1}, "name": "email_1", "unique": true},
                {"key": {"tenantId": 1, "username": 1}, "name": "tenantId_1_username_1", "unique": true},
            ]})
            .await
            .unwrap();
    });
    c
}

fn analyze_keys(base: &[&str]) -> Value {
    let mut args: Vec<&str> = base.to_vec();
    for k in KEYS {
        args.extend(["--key", k]);
    }
    args.extend(["--format", "json"]);
    json(&shardkey(&args))
}

/// What the server's rule says for each key, by hand: the key's field names must start the
/// unique index's field names.
fn assert_unique_index_verdicts(r: &Value) {
    let blocked_by = |k: &Value| -> Vec<String> {
        constraints(by_key(r, k))
            .into_iter()
            .filter(|(rule, effect, _)| rule == "uniqueIndex" && effect == "blocked")
            .map(|(_, _, m)| m.split(' ').nth(2).unwrap().to_string())
            .collect()
    };
    assert_eq!(blocked_by(&key("{tenantId: 1, _id: 1}")), ["email_1", "tenantId_1_username_1"]);
    assert_eq!(blocked_by(&key("{tenantId: 1}")), ["email_1"]);
    assert_eq!(blocked_by(&key("{email: \"hashed\"}")), ["tenantId_1_username_1"], "a hashed key keeps a unique index on its field");
    assert_eq!(blocked_by(&key("{tenantId: 1, username: 1}")), ["email_1"]);
    for k in KEYS {
        assert_eq!(candidate(r, k)["verdict"], "blocked", "{k}");
    }
    let m = &constraints(candidate(r, "{tenantId: 1}"))[0].2;
    assert!(m.starts_with("unique index email_1 {email: 1} does not start with the key's fields: shardCollection refuses"), "{m}");
    // Every candidate is blocked: the recommendation drops what blocks the winner first.
    let rec = &r["recommendation"];
    let winner = &rec["key"];
    let cmds: Vec<&str> = rec["commands"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    // Each unique index's guarantee goes to a proxy collection (its index, then its documents)
    // before the index is dropped (issue 39.2).
    let drops = blocked_by(winner);
    let mut at = 0;
    for name in &drops {
        assert!(cmds[at].contains("getCollection(\"accounts_") && cmds[at].contains(&format!("unique: true, name: {name:?}")), "{cmds:?}");
        assert!(cmds[at + 1].contains("$merge: {into: \"accounts_"), "{cmds:?}");
        // The drop guards itself (mongos, and the proxy holding the index): tests/constraints.rs runs it.
        let drop = format!("db.getSiblingDB(\"app\").getCollection(\"accounts\").dropIndex({name:?}); else print(");
        assert!(cmds[at + 2].starts_with("if (db.adminCommand({isMaster: 1}).msg === \"isdbgrid\" && "), "{cmds:?}");
        assert!(cmds[at + 2].contains(&drop), "{cmds:?}");
        at += 3;
    }
    assert!(cmds.last().unwrap().starts_with("sh.shardCollection(\"app.accounts\""), "{cmds:?}");
    // Said first: no query source here, so the choice rests on the data alone.
    assert!(rec["caveats"][0].as_str().unwrap().starts_with("this choice rests on the data alone: targeting was not measured"), "{rec}");
    assert!(rec["notes"][0].as_str().unwrap().starts_with("every candidate is blocked"), "{rec}");
}

#[test]
fn unique_indexes_block_keys_live_and_offline_alike() {
    let m = Mongod::start(Mode::Standalone);
    let c = load_accounts(&m);
    let uri = m.uri();
    let live = analyze_keys(&["analyze", "--uri", &uri, "--collection", "app.accounts"]);
    assert_unique_index_verdicts(&live);

    // A mongodump-style directory: the documents as BSON and metadata.json with the
    // indexes as listIndexes gives them, in canonical Extended JSON (mongodump's form).
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("app");
    std::fs::create_dir_all(&dump).unwrap();
    let (bson_bytes, indexes) = rt().block_on(async {
        use futures_util::TryStreamExt;
        let raw = c.database("app").collection::<RawDocumentBuf>("accounts");
        let docs: Vec<RawDocumentBuf> = raw.find(doc! {}).await.unwrap().try_collect().await.unwrap();
        let ix: Vec<Document> = c
            .database("app")
            .collection::<Document>("accounts")
            .list_indexes()
            .await
            .unwrap()
            .try_collect::<Vec<_>>()
            .await
            .unwrap()
            .into_iter()
            .map(|m| mongodb::bson::to_document(&m).unwrap())
            .collect();
        (docs.iter().flat_map(|d| d.as_bytes().to_vec()).collect::<Vec<u8>>(), ix)
    });
    std::fs::write(dump.join("accounts.bson"), bson_bytes).unwrap();
    let meta = doc! {"indexes": indexes.into_iter().map(Bson::Document).collect::<Vec<_>>(), "collectionName": "accounts", "type": "collection", "options": {}};
    std::fs::write(dump.join("accounts.metadata.json"), Bson::Document(meta).into_canonical_extjson().to_string()).unwrap();
    let path = dump.join("accounts.bson");
    let offline = analyze_keys(&["analyze", "--docs", path.to_str().unwrap()]);
    assert_unique_index_verdicts(&offline);
    for k in KEYS {
        assert_eq!(constraints(candidate(&offline, k)), constraints(candidate(&live, k)), "{k}: offline = live");
    }

    // Without proposals: every prefix of each unique index is proposed, and after the
    // recommended drop the winner is no longer blocked (the commands lift the block).
    let proposed = json(&shardkey(&["analyze", "--uri", &uri, "--collection", "app.accounts", "--format", "json"]));
    let why: Vec<&str> = proposed["candidates"].as_array().unwrap().iter().filter_map(|c| c["proposedBecause"].as_str()).collect();
    assert!(why.iter().any(|w| w.starts_with("a prefix of unique index tenantId_1_username_1")), "{why:?}");
    rt().block_on(async { c.database("app").collection::<Document>("accounts").drop_index("email_1").await.unwrap() });
    let after = json(&shardkey(&["analyze", "--uri", &uri, "--collection", "app.accounts", "--key", "{tenantId: 1}", "--format", "json"]));
    assert!(constraints(candidate(&after, "{tenantId: 1}")).is_empty());
    assert_ne!(candidate(&after, "{tenantId: 1}")["verdict"], "blocked");
}

#[test]
fn capped_collections_refuse_every_key_and_upserts_without_the_key_fail() {
    let m = Mongod::start(Mode::Standalone);
    let c = m.client();
    rt().block_on(async {
        let db = c.database("app");
        db.run_command(doc! {"create": "log", "capped": true, "size": 1 << 20}).await.unwrap();
        db.collection::<Document>("log").insert_many((0..200).map(|i| doc! {"x": i}).collect::<Vec<_>>()).await.unwrap();
        let dev = db.collection::<Document>("devices");
        dev.insert_many((0..500).map(|i| doc! {"_id": i, "deviceId": i, "siteId": i % 7, "state": 0}).collect::<Vec<_>>()).await.unwrap();
        db.run_command(doc! {"profile": 2, "slowms": 0}).await.unwrap();
        // 60 upserts by deviceId, 40 updates by _id: 60% of the writes are upserts.
        for i in 0..60 {
            dev.update_one(doc! {"deviceId": i}, doc! {"$set": {"state": 1}}).upsert(true).await.unwrap();
        }
        for i in 0..40 {
            dev.update_one(doc! {"_id": i}, doc! {"$set": {"state": 2}}).await.unwrap();
        }
        db.run_command(doc! {"profile": 0}).await.unwrap();
    });
    let uri = m.uri();
    let capped = json(&shardkey(&["analyze", "--uri", &uri, "--collection", "app.log", "--format", "json"]));
    for cand in capped["candidates"].as_array().unwrap() {
        assert_eq!(cand["verdict"], "invalid", "{}", cand["key"]);
        assert_eq!(cand["score"], 0);
        assert_eq!(constraints(cand)[0].0, "capped");
    }
    assert!(capped.get("recommendation").is_none(), "no recommendation the server refuses");

    let keys = ["{deviceId: 1}", "{siteId: 1, deviceId: 1}", "{_id: \"hashed\"}"];
    let mut args = vec!["analyze", "--uri", &uri, "--collection", "app.devices", "--queries", "profile", "--format", "json"];
    for k in keys {
        args.extend(["--key", k]);
    }
    let r = json(&shardkey(&args));
    assert_eq!(r["candidates"][0]["key"], key("{deviceId: 1}"), "the key the upserts carry ranks first");
    for k in &keys[1..] {
        let cand = candidate(&r, k);
        let up: Vec<&Value> = cand["constraints"].as_array().unwrap().iter().filter(|f| f["rule"] == "upsertWithoutShardKey").collect();
        assert_eq!(up.len(), 1, "{k}");
        assert_eq!(up[0]["percentageOfWrites"], 60.0, "{k}: 60 of 100 sampled writes");
        assert!(cand["score"].as_u64().unwrap() <= 20, "{k}: capped as writes that fail");
        assert_eq!(cand["scoreBreakdown"]["cappedBy"], "writesFail");
    }
    assert!(candidate(&r, "{deviceId: 1}")["constraints"]
        .as_array()
        .is_none_or(|a| a.iter().all(|f| f["rule"] != "upsertWithoutShardKey")));
}

#[test]
fn time_series_rules_offline_and_a_clear_answer_live() {
    let m = Mongod::start(Mode::Standalone);
    let c = m.client();
    rt().block_on(async {
        let db = c.database("app");
        db.run_command(doc! {"create": "measurements", "timeseries": {"timeField": "ts", "metaField": "meta"}}).await.unwrap();
        let t0 = mongodb::bson::DateTime::from_millis(1_767_225_600_000);
        let docs: Vec<Document> = (0..20_000i64)
            .map(|i| doc! {"ts": mongodb::bson::DateTime::from_millis(t0.timestamp_millis() + i * 1000), "meta": {"sensor": i % 50, "site": i % 5}, "v": i})
            .collect();
        db.collection::<Document>("measurements").insert_many(docs).await.unwrap();
    });
    // Live: the measurements sampled through the view (not "empty"), only the keys the
    // time-series rules allow proposed, every one of them accepted.
    let r = json(&shardkey(&["analyze", "--uri", &m.uri(), "--collection", "app.measurements", "--format", "json"]));
    let notes = r["notes"].to_string();
    assert!(notes.contains("is a time-series collection (timeField ts, metaField meta): its 20000 measurements are sampled"), "{notes}");
    let keys: Vec<&Value> = r["candidates"].as_array().unwrap().iter().map(|c| &c["key"]).collect();
    for k in ["{meta: 1, ts: 1}", "{\"meta.sensor\": 1, ts: 1}", "{\"meta.site\": 1, ts: 1}", "{meta: \"hashed\"}"] {
        assert!(keys.contains(&&key(k)), "{k} not proposed: {keys:?}");
    }
    assert_eq!(keys.len(), 4, "{keys:?}");
    for c in r["candidates"].as_array().unwrap() {
        assert_ne!(c["verdict"], "invalid", "{}", c["key"]);
        assert_eq!(c["keyCharacteristics"]["numDocsSampled"], 20000, "{}", c["key"]);
    }
    // The recommended key passes the rule (the manual's metaField-then-timeField shape or the hashed metaField).
    let rec = &r["recommendation"];
    let cmd = rec["commands"].to_string();
    assert!(cmd.contains("sh.shardCollection(\\\"app.measurements\\\""), "{cmd}");
    assert!(rec["key"].as_object().unwrap().keys().all(|f| f == "ts" || f.starts_with("meta")), "{rec}");

    // Offline: the measurements as listCollections' options describe the collection.
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("measurements.ndjson");
    let lines: Vec<String> = (0..2000)
        .map(|i| {
            format!(
                "{{\"ts\":{{\"$date\":{}}},\"meta\":{{\"sensor\":{},\"site\":{}}},\"v\":{i}}}",
                1_767_225_600_000i64 + i * 1000,
                i % 50,
                i % 5
            )
        })
        .collect();
    std::fs::write(&docs, lines.join("\n")).unwrap();
    let options = rt().block_on(async {
        let spec = c.database("app").run_command(doc! {"listCollections": 1, "filter": {"name": "measurements"}}).await.unwrap();
        spec.get_document("cursor").unwrap().get_array("firstBatch").unwrap()[0].as_document().unwrap().clone()
    });
    let meta = dir.path().join("measurements.metadata.json");
    std::fs::write(&meta, Bson::Document(options).into_canonical_extjson().to_string()).unwrap();
    let mut args = vec![
        "analyze",
        "--docs",
        docs.to_str().unwrap(),
        "--indexes",
        meta.to_str().unwrap(),
        "--collection",
        "app.measurements",
        "--format",
        "json",
    ];
    for k in ["{\"meta.sensor\": 1, ts: 1}", "{_id: 1}", "{ts: \"hashed\"}", "{ts: 1, meta: 1}"] {
        args.extend(["--key", k]);
    }
    let r = json(&shardkey(&args));
    assert!(constraints(candidate(&r, "{\"meta.sensor\": 1, ts: 1}")).is_empty());
    assert_eq!(r["candidates"][0]["key"], key("{\"meta.sensor\": 1, ts: 1}"));
    for (k, why) in [
        ("{_id: 1}", "_id not allowed"),
        ("{ts: \"hashed\"}", "the timeField ts cannot be hashed"),
        ("{ts: 1, meta: 1}", "the timeField ts must be the key's last field"),
    ] {
        let cand = candidate(&r, k);
        assert_eq!(cand["verdict"], "invalid", "{k}");
        assert!(constraints(cand)[0].2.contains(why), "{k}: {:?}", constraints(cand));
    }
}

/// A view, arrays in a key field and documents missing a key field, on the real mongod:
/// - a view cannot be sharded (shardCollection answers "... is a view"): exit 2 naming it;
/// - an array in a key field is refused (manual "Shard Keys": "cannot be an array"); the
///   server itself refuses the hashed index such a key needs, which the test checks;
/// - documents missing a key field are accepted (4.4+, filed under null) and said.
#[test]
fn views_arrays_and_missing_key_fields() {
    let m = Mongod::start(Mode::Standalone);
    let c = m.client();
    rt().block_on(async {
        let db = c.database("app");
        let docs: Vec<Document> = (0..2000)
            .map(|i| {
                let mut d = doc! {"name": format!("p{i}"), "tags": if i % 3 == 0 { Bson::Array(vec!["a".into(), "b".into()]) } else { Bson::String("a".into()) }};
                if i % 10 != 0 {
                    d.insert("email", format!("p{i}@example.com"));
                }
                d
            })
            .collect();
        db.collection::<Document>("people").insert_many(docs).await.unwrap();
        db.run_command(doc! {"create": "people_view", "viewOn": "people", "pipeline": [{"$match": {"email": {"$exists": true}}}]}).await.unwrap();
    });
    // The view: refused before any analysis, the collection it reads named.
    let o = shardkey(&["analyze", "--uri", &m.uri(), "--collection", "app.people_view"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("app.people_view is a view on people: a view cannot be sharded"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");

    // The array: a named key holding one is refused with the server's reason, and the server
    // agrees: it cannot build the hashed index on an array.
    let o = shardkey(&["analyze", "--uri", &m.uri(), "--collection", "app.people", "--key", "{tags: \"hashed\"}"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("documents hold an array in 'tags'") && err.contains("MongoDB refuses arrays in shard key fields"), "{err}");
    let server = rt().block_on(async {
        c.database("app")
            .run_command(doc! {"createIndexes": "people", "indexes": [{"key": {"tags": "hashed"}, "name": "tags_hashed"}]})
            .await
    });
    assert!(server.is_err(), "the server builds no hashed index on an array");
    // Unnamed, the array field is never proposed.
    let r = json(&shardkey(&["analyze", "--uri", &m.uri(), "--collection", "app.people", "--format", "json"]));
    assert!(r["candidates"].as_array().unwrap().iter().all(|c| c["key"].get("tags").is_none()), "{}", r["candidates"]);

    // Missing fields: 10% of documents lack email; the key stays valid and the reason says so.
    let r = json(&shardkey(&["analyze", "--uri", &m.uri(), "--collection", "app.people", "--key", "{email: 1}", "--format", "json"]));
    let cand = candidate(&r, "{email: 1}");
    assert_ne!(cand["verdict"], "invalid");
    let words = cand["reasons"].to_string();
    assert!(words.contains("200 sampled documents (10.0%) lack a key field; MongoDB files them all under null"), "{words}");
    // Its recommended index is one the server builds.
    let commands = r["recommendation"]["commands"].to_string();
    assert!(commands.contains("createIndex({email: 1})"), "{commands}");
    let built = rt().block_on(async {
        c.database("app").run_command(doc! {"createIndexes": "people", "indexes": [{"key": {"email": 1}, "name": "email_1"}]}).await
    });
    assert!(built.is_ok(), "createIndex({{email: 1}}) on the real mongod: {built:?}");
}
