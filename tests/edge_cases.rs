//! The edge cases real collections have (issue 42): each test builds the collection a DBA
//! met, runs `shardkey analyze`, and checks the words and numbers against what the server
//! does (a real mongod's answer, or the server's source at a named commit).

mod common;
use common::Rng;

use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// 2024-06-01T00:00:00Z in seconds.
const T0: u64 = 1_717_200_000;

fn oid(secs: u64, n: u64) -> String {
    format!("{{\"$oid\":\"{:08x}5ca1ab1e{:08x}\"}}", secs as u32, n as u32)
}

fn date(secs: u64) -> String {
    format!("{{\"$date\":{{\"$numberLong\":\"{}\"}}}}", secs * 1000)
}

/// One slow-query line of a mongod 4.4+ JSON log.
fn log_line(c: &str, kind: &str, ns: &str, command: &str) -> String {
    format!(
        "{{\"t\":{{\"$date\":\"2024-06-04T11:19:50.398Z\"}},\"s\":\"I\",\"c\":\"{c}\",\"id\":51803,\"ctx\":\"conn1\",\"msg\":\"Slow query\",\"attr\":{{\"type\":\"{kind}\",\"ns\":\"{ns}\",\"command\":{command},\"durationMillis\":150}}}}\n"
    )
}

fn find(ns: &str, filter: &str) -> String {
    let (db, coll) = ns.split_once('.').unwrap();
    log_line("COMMAND", "command", ns, &format!("{{\"find\":\"{coll}\",\"filter\":{filter},\"$db\":\"{db}\"}}"))
}

fn update_one(ns: &str, q: &str, u: &str) -> String {
    log_line("WRITE", "update", ns, &format!("{{\"q\":{q},\"u\":{u},\"multi\":false,\"upsert\":false}}"))
}

fn delete_many(ns: &str, q: &str) -> String {
    log_line("WRITE", "remove", ns, &format!("{{\"q\":{q},\"limit\":0}}"))
}

fn run(args: &[&str]) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_shardkey")).args(args).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    common::assert_schema("analyze", &v);
    v
}

fn analyze_files(dir: &Path, docs: &str, log: &str, ns: &str, extra: &[&str]) -> Value {
    let d = dir.join("docs.ndjson");
    let l = dir.join("mongod.log");
    std::fs::write(&d, docs).unwrap();
    std::fs::write(&l, log).unwrap();
    let (d, l) = (d.display().to_string(), l.display().to_string());
    let mut args = vec!["analyze", "--docs", &d, "--queries", &l, "--collection", ns, "--format", "json"];
    args.extend_from_slice(extra);
    run(&args)
}

/// `{a: 1, b: "hashed"}` from the JSON key.
fn key_text(k: &Value) -> String {
    let parts: Vec<String> = k.as_object().unwrap().iter().map(|(f, v)| format!("{f}: {v}")).collect();
    format!("{{{}}}", parts.join(", "))
}

fn cand<'a>(r: &'a Value, key: &str) -> &'a Value {
    let all = r["candidates"].as_array().unwrap();
    all.iter()
        .find(|c| key_text(&c["key"]) == key)
        .unwrap_or_else(|| panic!("{key} not proposed: {:?}", all.iter().map(|c| key_text(&c["key"])).collect::<Vec<_>>()))
}

fn words(c: &Value) -> String {
    c["reasons"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect::<Vec<_>>().join("\n")
}

/// Item 7: an application log with a retention job. Reads by account (and account and time),
/// `deleteMany({ts: {$lt: cutoff}})` every so often, `updateOne({_id})`. Neither write is ever
/// refused: a multi write never asks `useTwoPhaseProtocol`, and updateOne/deleteOne by an exact
/// `_id` without upsert return false there (mongodb/mongo 04bbde76e64e9764acd93434732f108940d681c2
/// src/mongo/s/write_ops/write_without_shard_key_util.cpp); both are sent to every shard on every
/// version. The retention delete removes the same old documents under every key, so `{ts: 1}`
/// must not earn targeting from it: it stays below the account key, and every key's fan-out is
/// the same with and without the deletes.
#[test]
fn retention_deletes_are_broadcast_never_refused_and_reward_no_key() {
    let ns = "app.logs";
    let mut rng = Rng(42);
    let mut docs = String::new();
    for i in 0..20_000u64 {
        let s = T0 + i * 30;
        let _ = writeln!(
            docs,
            "{{\"_id\":{},\"accountId\":\"a{:04}\",\"ts\":{},\"level\":{}}}",
            oid(s, i),
            rng.below(2_000),
            date(s),
            rng.below(3)
        );
    }
    let (mut log, mut without_deletes) = (String::new(), String::new());
    for _ in 0..1_000 {
        let x = rng.below(100);
        let line = if x < 50 {
            find(ns, &format!("{{\"accountId\":\"a{:04}\"}}", rng.below(2_000)))
        } else if x < 70 {
            let s = T0 + rng.below(600_000);
            find(ns, &format!("{{\"accountId\":\"a{:04}\",\"ts\":{{\"$gte\":{},\"$lt\":{}}}}}", rng.below(2_000), date(s), date(s + 3_600)))
        } else if x < 85 {
            let cut = delete_many(ns, &format!("{{\"ts\":{{\"$lt\":{}}}}}", date(T0 + rng.below(600_000))));
            log += &cut;
            continue;
        } else {
            let i = rng.below(20_000);
            update_one(ns, &format!("{{\"_id\":{}}}", oid(T0 + i * 30, i)), "{\"$set\":{\"seen\":true}}")
        };
        log += &line;
        without_deletes += &line;
    }
    let dir = tempfile::tempdir().unwrap();
    let r = analyze_files(dir.path(), &docs, &log, ns, &["--total-docs", "50000000"]);
    let account = cand(&r, "{accountId: 1, _id: 1}");
    let w = words(account);
    assert!(!w.contains("refused before") && !w.contains("broadcast or refused"), "{w}");
    assert!(w.contains("updateMany/deleteMany (every version sends them to each shard their filter may match, every shard when it fixes no prefix of the key; refused only when they change the key)"), "{w}");
    assert!(w.contains("updateOne/deleteOne by _id (sent to each shard the filter may match, every shard when it fixes no prefix of the key; never refused, never two-phase)"), "{w}");
    let by = &account["cluster"]["cost"]["writesWithoutShardKey"];
    let wd = &account["writeDistribution"];
    assert_eq!(by["multi"], wd["percentageOfMultiWritesWithoutShardKey"]);
    assert_eq!(by["singleById"], wd["percentageOfSingleWritesWithoutShardKey"]);
    assert_eq!(by["singleOther"], 0.0);
    let ts = cand(&r, "{ts: 1}");
    assert!(ts["score"].as_u64() < account["score"].as_u64(), "{ts} against {account}");
    // The fan-out leaves the retention deletes out: the same with or without them.
    let r2 = analyze_files(dir.path(), &docs, &without_deletes, ns, &["--total-docs", "50000000"]);
    for key in ["{ts: 1}", "{accountId: 1, _id: 1}", "{_id: 1}"] {
        assert_eq!(cand(&r, key)["cluster"]["cost"]["fanOut"], cand(&r2, key)["cluster"]["cost"]["fanOut"], "{key}");
    }
    // A single write by neither key nor _id is still said to be refused before 7.1.
    let email = log + &update_one(ns, "{\"level\":2}", "{\"$set\":{\"seen\":true}}").repeat(400);
    let r3 = analyze_files(dir.path(), &docs, &email, ns, &["--total-docs", "50000000"]);
    let w = words(cand(&r3, "{accountId: 1, _id: 1}"));
    assert!(w.contains("other single writes (refused before 7.1; 7.1+ a broadcast read then the write)"), "{w}");
}

/// The server's count of distinct hashed values: analyzeShardKey's grouping of the hashed
/// index's keys (mongodb/mongo 3e76161 analyze_shard_key_cmd_util.cpp
/// makeAggregateRequestForCardinalityAndFrequency: `$project {$meta: "indexKey"}`, `$group`,
/// hinted on the index), run on a real mongod: (distinct keys, the largest group).
fn server_hashed_groups(m: &common::Mongod, coll: &str, field: &str) -> (u64, u64) {
    use futures_util::TryStreamExt;
    use mongodb::bson::{doc, Document};
    let client = m.client();
    common::rt().block_on(async {
        let db = client.database("t");
        db.run_command(doc! {"createIndexes": coll, "indexes": [{"key": {field: "hashed"}, "name": format!("{field}_hashed")}]})
            .await
            .unwrap();
        let pipeline = vec![
            doc! {"$project": {"_id": 0, "key": {"$meta": "indexKey"}}},
            doc! {"$group": {"_id": format!("$key.{field}"), "frequency": {"$sum": 1}}},
            doc! {"$sort": {"frequency": -1}},
        ];
        let c = db.collection::<Document>(coll);
        let groups: Vec<Document> =
            c.aggregate(pipeline).hint(mongodb::options::Hint::Keys(doc! {field: "hashed"})).await.unwrap().try_collect().await.unwrap();
        let top = groups.first().map_or(0, |g| g.get_i32("frequency").unwrap() as u64);
        (groups.len() as u64, top)
    })
}

/// Item 3: a field of `Math.random()` doubles has one hashed value on the server (doubles are
/// truncated to 64-bit integers before hashing), so `{rand: "hashed"}` is one unsplittable
/// chunk; quarter steps from -50 to 50 have as many hashed values as integers they truncate to.
/// numDistinctValues and mostCommonValues are the server's, counted on the hashed index's keys.
#[test]
fn hashed_doubles_are_truncated_before_hashing() {
    let mut rng = Rng(3);
    let mut docs = String::new();
    for i in 0..20_000u64 {
        let rand = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        let score = (i % 400) as f64 / 4.0 - 50.0 + 0.125;
        let _ = writeln!(docs, "{{\"_id\":{i},\"rand\":{rand:?},\"score\":{score:?},\"n\":{}}}", rng.below(1_000_000));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("docs.ndjson");
    std::fs::write(&file, &docs).unwrap();
    let m = common::Mongod::start(common::Mode::Standalone);
    assert_eq!(common::load_ndjson(&m.client(), "t", "r", &file), 20_000);
    let (rand_hashed, rand_top) = server_hashed_groups(&m, "r", "rand");
    let (score_hashed, score_top) = server_hashed_groups(&m, "r", "score");
    drop(m);
    assert_eq!((rand_hashed, rand_top), (1, 20_000), "the server's hashed index");
    let f = file.display().to_string();
    let r = run(&[
        "analyze",
        "--docs",
        &f,
        "--collection",
        "t.r",
        "--key",
        "{rand: \"hashed\"}",
        "--key",
        "{score: \"hashed\"}",
        "--key",
        "{n: \"hashed\"}",
        "--total-docs",
        "50000000",
        "--format",
        "json",
    ]);
    for (key, hashed, top, before) in
        [("{rand: \"hashed\"}", rand_hashed, rand_top, 20_000), ("{score: \"hashed\"}", score_hashed, score_top, 400)]
    {
        let c = cand(&r, key);
        let kc = &c["keyCharacteristics"];
        assert_eq!(kc["numDistinctValues"], hashed, "{key}");
        assert_eq!(kc["mostCommonValues"][0]["frequency"], top, "{key}");
        assert_eq!(kc["hashing"]["numDistinctHashedValues"], hashed, "{key}");
        assert_eq!(kc["hashing"]["numDistinctValuesBeforeHashing"], before, "{key}");
        assert!(words(c).contains("float trap"), "{key}: {}", words(c));
    }
    let rand = cand(&r, "{rand: \"hashed\"}");
    assert!(
        !rand["keyCharacteristics"]["jumboChunkRisk"]["values"].as_array().unwrap().is_empty(),
        "one hashed value of 50 M documents: jumbo"
    );
    assert_eq!(rand["cluster"]["atScale"]["numChunks"], 1, "{}", rand["cluster"]["atScale"]);
    assert_eq!(rand["cluster"]["atScale"]["shardsWithData"], 1);
    assert!(!rand["cluster"]["scale"]["words"].as_str().unwrap().contains("spreads over every shard"));
    // Item 9: one shard taking every insert is not a spread.
    assert!(words(rand).contains("every insert lands on one shard of 4") && !words(rand).contains("spread over 1 of"), "{}", words(rand));
    // Integers hash one to one: no trap.
    let n = cand(&r, "{n: \"hashed\"}");
    assert!(n["keyCharacteristics"]["hashing"]["numDistinctFractionalDoubles"] == 0 && !words(n).contains("float trap"), "{}", words(n));
}

/// Item 4: a clustered collection (`clusteredIndex: {key: {_id: 1}}`) keeps its records in
/// `_id` order (a real mongod's natural order follows `_id`, not insertion), so record order
/// says nothing of creation order: random UUID `_id`s are not monotonic (the server's rule for
/// clustered collections is unknown: mongodb/mongo 3e76161 analyze_shard_key_cmd_util.cpp
/// calculateMonotonicity), `createdAt` is increasing by its type, and the clustered index
/// (listIndexes lists it) supports `{_id: 1}`: no createIndex.
#[test]
fn a_clustered_collection_is_not_read_in_creation_order() {
    use futures_util::TryStreamExt;
    use mongodb::bson::{doc, spec::BinarySubtype, Binary, Bson, DateTime, Document};
    let m = common::Mongod::start(common::Mode::ReplicaSet);
    let client = m.client();
    let mut rng = Rng(4);
    let (options, natural_in_creation_order) = common::rt().block_on(async {
        let db = client.database("t");
        db.run_command(doc! {"create": "ev", "clusteredIndex": {"key": {"_id": 1}, "unique": true}}).await.unwrap();
        let docs: Vec<Document> = (0..20_000i64)
            .map(|i| {
                let mut b = [0u8; 16];
                b[..8].copy_from_slice(&rng.next().to_le_bytes());
                b[8..].copy_from_slice(&rng.next().to_le_bytes());
                b[6] = (b[6] & 0x0f) | 0x40; // version 4
                let id = Bson::Binary(Binary { subtype: BinarySubtype::Uuid, bytes: b.to_vec() });
                doc! {"_id": id, "createdAt": DateTime::from_millis(1_717_200_000_000 + i * 1000), "account": format!("a{}", rng.below(500))}
            })
            .collect();
        let c = db.collection::<Document>("ev");
        for chunk in docs.chunks(2000) {
            c.insert_many(chunk.to_vec()).await.unwrap();
        }
        let listed = db.run_command(doc! {"listCollections": 1, "filter": {"name": "ev"}}).await.unwrap();
        let entry = listed.get_document("cursor").unwrap().get_array("firstBatch").unwrap()[0].as_document().unwrap().clone();
        let times: Vec<i64> = c.find(doc! {}).limit(100).await.unwrap().try_collect::<Vec<Document>>().await.unwrap().iter().map(|d| d.get_datetime("createdAt").unwrap().timestamp_millis()).collect();
        (entry.get_document("options").unwrap().clone(), times.windows(2).all(|w| w[0] < w[1]))
    });
    // What the server says of the collection: clustered, natural order not creation order.
    assert!(options.contains_key("clusteredIndex"), "{options}");
    assert!(!natural_in_creation_order);
    let uri = m.uri();
    let o = common::shardkey(&[
        "analyze",
        "--format",
        "json",
        "--uri",
        &uri,
        "--collection",
        "t.ev",
        "--key",
        "{_id: 1}",
        "--key",
        "{createdAt: 1}",
        "--key",
        "{account: 1, _id: 1}",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    common::assert_schema("analyze", &r);
    assert!(r["notes"].to_string().contains("a clustered collection"), "{}", r["notes"]);
    let id = cand(&r, "{_id: 1}");
    assert_eq!(id["keyCharacteristics"]["monotonicity"]["type"], "unknown");
    assert_ne!(id["insertOrder"]["type"], "increasing", "{}", id["insertOrder"]);
    assert!(!words(id).contains("every insert lands in the highest chunk"), "{}", words(id));
    assert_eq!(id["supportingIndex"]["name"], "_id_");
    assert!(id["supportingIndex"].get("createIndex").is_none_or(|c| c.is_null()), "{}", id["supportingIndex"]);
    let created = cand(&r, "{createdAt: 1}");
    assert_eq!(created["keyCharacteristics"]["monotonicity"]["type"], "unknown");
    assert_eq!(created["insertOrder"]["type"], "increasing", "{}", created["insertOrder"]);
    // Recommended on its own, {_id: 1} needs no createIndex.
    let o = common::shardkey(&["analyze", "--format", "json", "--uri", &uri, "--collection", "t.ev", "--key", "{_id: 1}"]);
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let commands = r["recommendation"]["commands"].to_string();
    assert!(commands.contains("shardCollection") && !commands.contains("createIndex"), "{commands}");
}

/// Item 1: venues with a GeoJSON `location` read by `$geoWithin` (with a city) and `$near`.
/// On a real mongod, a B-tree index on `location` (a shard key's index cannot be a geo
/// index) gives `$geoWithin` the bounds `[MinKey, MaxKey]`, and `$near` cannot run on it:
/// geo conditions target nothing. No proposal puts `location` in a key; named with `--key`,
/// the key is marked, and its geo queries reach every shard (scatter-gather alone, by city
/// beside it).
#[test]
fn geo_fields_are_never_proposed_and_target_nothing() {
    use mongodb::bson::{doc, Document};
    let mut rng = Rng(1);
    let point = |rng: &mut Rng| {
        format!(
            "{{\"type\":\"Point\",\"coordinates\":[{:.5},{:.5}]}}",
            2.2 + rng.below(30_000) as f64 / 100_000.0,
            48.8 + rng.below(20_000) as f64 / 100_000.0
        )
    };
    let mut docs = String::new();
    for i in 0..5_000u64 {
        let _ = writeln!(
            docs,
            "{{\"_id\":{i},\"venueId\":\"v{i:05}\",\"city\":\"c{:02}\",\"location\":{},\"kind\":{}}}",
            rng.below(40),
            point(&mut rng),
            rng.below(8)
        );
    }
    let ns = "geo.venues";
    let mut log = String::new();
    for _ in 0..1_000 {
        let x = rng.below(100);
        let p = point(&mut rng);
        log += &match x {
            0..45 => find(
                ns,
                &format!(
                    "{{\"city\":\"c{:02}\",\"location\":{{\"$geoWithin\":{{\"$centerSphere\":[{},0.0001]}}}}}}",
                    rng.below(40),
                    &p[p.find('[').unwrap()..p.rfind(']').unwrap() + 1]
                ),
            ),
            45..60 => find(ns, &format!("{{\"location\":{{\"$near\":{{\"$geometry\":{p},\"$maxDistance\":500}}}}}}")),
            60..90 => find(ns, &format!("{{\"venueId\":\"v{:05}\"}}", rng.below(5_000))),
            _ => update_one(ns, &format!("{{\"_id\":{}}}", rng.below(5_000)), &format!("{{\"$set\":{{\"location\":{p}}}}}")),
        };
    }
    // The server's bounds for geo conditions on a B-tree index on location.
    let m = common::Mongod::start(common::Mode::Standalone);
    let client = m.client();
    let (within_bounds, near_error) = common::rt().block_on(async {
        let db = client.database("geo");
        let c = db.collection::<Document>("venues");
        c.insert_one(doc! {"city": "c01", "location": {"type": "Point", "coordinates": [2.3, 48.9]}}).await.unwrap();
        db.run_command(doc! {"createIndexes": "venues", "indexes": [{"key": {"location": 1}, "name": "location_1"}]}).await.unwrap();
        let within = doc! {"location": {"$geoWithin": {"$centerSphere": [[2.3, 48.9], 0.0001]}}};
        let e = db.run_command(doc! {"explain": {"find": "venues", "filter": within, "hint": {"location": 1}}}).await.unwrap();
        let plan = e.get_document("queryPlanner").unwrap().get_document("winningPlan").unwrap();
        let bounds =
            plan.get_document("inputStage").unwrap_or(plan).get_document("indexBounds").unwrap().get_array("location").unwrap().clone();
        let near = doc! {"location": {"$near": {"$geometry": {"type": "Point", "coordinates": [2.3, 48.9]}}}};
        let err = db.run_command(doc! {"explain": {"find": "venues", "filter": near, "hint": {"location": 1}}}).await.unwrap_err();
        (bounds, err.to_string())
    });
    drop(m);
    assert_eq!(within_bounds, vec![mongodb::bson::Bson::String("[MinKey, MaxKey]".into())]);
    assert!(near_error.contains("unable to find index for $geoNear query"), "{near_error}");

    let dir = tempfile::tempdir().unwrap();
    let r = analyze_files(dir.path(), &docs, &log, ns, &["--total-docs", "5000000"]);
    for c in r["candidates"].as_array().unwrap() {
        assert!(!c["key"].as_object().unwrap().keys().any(|k| k.starts_with("location")), "proposed {}", c["key"]);
        let why = c["proposedBecause"].as_str().unwrap_or("");
        assert!(!why.contains("location"), "{why}");
    }
    let named = analyze_files(dir.path(), &docs, &log, ns, &["--key", "{location: 1}", "--key", "{city: 1, location: 1}"]);
    for key in ["{location: 1}", "{city: 1, location: 1}"] {
        let c = cand(&named, key);
        assert!(c["constraints"].as_array().unwrap().iter().any(|f| f["rule"] == "geoField"), "{key}: {}", c["constraints"]);
        assert!(words(c).contains("location is a location"), "{}", words(c));
        let mut seen = 0;
        for s in c["queryShapes"].as_array().unwrap() {
            let shape = s["shape"].as_str().unwrap();
            if shape == "{location: near}" {
                seen += 1;
                assert_eq!(s["label"], "scatterGather", "{key} {shape}");
            }
            if shape == "{city: eq, location: geoWithin}" {
                seen += 1;
                assert_eq!(s["label"], if key == "{location: 1}" { "scatterGather" } else { "multiShard" }, "{key} {shape}");
            }
        }
        assert_eq!(seen, 2, "{}", c["queryShapes"]);
    }
    assert_eq!(cand(&named, "{location: 1}")["readDistribution"]["percentageOfSingleShardReads"], 0.0);
    // Item 9: a key that targets nothing is not "acceptable" (targetsNothing caps it at 49;
    // here the moves of venues, updates by _id that change the key, are refused on every
    // version: writesFail caps it at 20).
    let loc = cand(&named, "{location: 1}");
    assert_eq!(loc["scoreBreakdown"]["fanOut"], 0.0);
    assert!(loc["score"].as_u64().unwrap() <= 20 && loc["scoreBreakdown"]["cappedBy"] == "writesFail", "{}", loc["scoreBreakdown"]);
    assert!(matches!(loc["verdict"].as_str(), Some("poor" | "bad")), "{}", loc["verdict"]);
}

/// Item 2: three counter documents take 70% of the writes (`$inc` by `_id`). No key splits
/// a document: the report names them, says so, gives the data-model fix (split counters),
/// and does not propose the counter field itself as a hashed key (each `$inc` would move its
/// document: mongodb/mongo's update path treats a changed shard key value as a shard key
/// update, manual "Change a Document's Shard Key Value").
#[test]
fn hot_documents_are_named_and_no_key_splits_them() {
    let ns = "app.stats";
    let mut rng = Rng(2);
    let mut docs = String::new();
    for name in ["pageviews", "signups", "errors"] {
        let _ = writeln!(docs, "{{\"_id\":\"{name}\",\"views\":{}}}", rng.below(10_000_000));
    }
    for i in 0..5_000u64 {
        let _ = writeln!(docs, "{{\"_id\":\"article-{i:05}\",\"views\":{},\"section\":\"s{}\"}}", rng.below(10_000_000), rng.below(30));
    }
    let mut log = String::new();
    for _ in 0..1_000 {
        let x = rng.below(100);
        let id = match x {
            0..30 => "pageviews".to_string(),
            30..55 => "signups".to_string(),
            55..70 => "errors".to_string(),
            _ => format!("article-{:05}", rng.below(5_000)),
        };
        log += &update_one(ns, &format!("{{\"_id\":\"{id}\"}}"), "{\"$inc\":{\"views\":1}}");
    }
    let dir = tempfile::tempdir().unwrap();
    let r = analyze_files(dir.path(), &docs, &log, ns, &["--total-docs", "5003"]);
    for c in r["candidates"].as_array().unwrap() {
        assert_ne!(key_text(&c["key"]), "{views: \"hashed\"}", "the counter field proposed");
        let w = words(c);
        assert!(w.contains("hot documents: 3 documents take"), "{w}");
        for id in ["\"pageviews\"", "\"signups\"", "\"errors\""] {
            assert!(w.contains(&format!("_id {id}")), "{id} not named: {w}");
        }
        assert!(w.contains("no shard key splits a document") && w.contains("split each into N sub-documents"), "{w}");
        assert!(!w.contains("a hot key range"), "{w}");
    }
    // Item 2's last words: no insert in the workload, so `{_id: 1}` (increasing: the
    // documents were loaded in _id order) is neither penalised nor capped for inserts, and the
    // words say why. Its string _ids carry no creation time, so nothing else shows growth.
    // By hand: fan-out 1 (every $inc fixes _id), data even, growth 5,003 values (1), inserts
    // not judged (1); the three counters sort after every "article-" _id, so the top range's
    // shard takes their 70% of the writes: at least half of them and over twice the mean
    // shard's, the hot-shard cap (60) holds it, not the inserts' (50). 60 is inside the
    // acceptable band: acceptable.
    let r = analyze_files(dir.path(), &docs, &log, ns, &["--total-docs", "5003", "--key", "{_id: 1}"]);
    let id = cand(&r, "{_id: 1}");
    let w = words(id);
    assert_eq!(id["insertOrder"]["type"], "increasing", "{}", id["insertOrder"]);
    assert_eq!(id["insertOrder"]["insertsInWorkload"], "noneSampled");
    let b = &id["scoreBreakdown"];
    assert_eq!((b["cappedBy"].as_str(), b["cap"].as_f64(), b["insertSpread"].as_f64()), (Some("hotShard"), Some(60.0), Some(1.0)), "{b}");
    assert_eq!((id["score"].as_u64(), id["verdict"].as_str()), (Some(60), Some("acceptable")));
    assert!(w.contains("no insert in the 1,000 sampled operations: insert placement not judged"), "{w}");
    assert!(!w.contains("one shard takes 100% of inserts"), "{w}");
    assert!(!id["cluster"]["verdict"].as_str().unwrap().contains("inserts"), "{}", id["cluster"]["verdict"]);
    // The table has no inserts column then; with no query at all the column is there, said assumed.
    let table = |extra: &[&str]| {
        let d = dir.path().join("docs.ndjson").display().to_string();
        let mut args = vec!["analyze", "--docs", &d, "--collection", ns, "--total-docs", "5003", "--key", "{_id: 1}"];
        args.extend_from_slice(extra);
        let o = common::shardkey(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    let l = dir.path().join("mongod.log").display().to_string();
    let with_log = table(&["--queries", &l]);
    assert!(!with_log.contains("inserts land") && !with_log.contains("% inserts"), "{with_log}");
    let no_queries = table(&[]);
    assert!(no_queries.contains("inserts land") && no_queries.contains("(assumed)"), "{no_queries}");
    assert!(no_queries.contains("(assumed: no sampled operation shows the workload"), "{no_queries}");
}

/// Item 9 and the verdicts' boundary: a key capped at exactly 50 is poor, never acceptable.
/// `{_id: 1}` on integer _ids loaded in order (increasing), a log of 600 inserts and 400
/// finds by _id: inserts are 60% of the 1,000 operations, so the insert penalty counts in
/// full: min(1, 2 × 0.6) = 1, cap 100 − 50 × 1 = 50; the other components give at least
/// 35 (fan-out 1) + 15 (data even) + 25 (growth: 20,000 values) = 75 > 50, so the cap holds
/// the score at 50, and a score held on the acceptable band's lower edge is poor.
#[test]
fn a_key_capped_at_exactly_50_is_poor() {
    let ns = "app.orders";
    let mut rng = Rng(50);
    let mut docs = String::new();
    for i in 0..20_000u64 {
        let _ = writeln!(docs, "{{\"_id\":{i},\"customer\":\"c{}\"}}", rng.below(500));
    }
    let mut log = String::new();
    for _ in 0..600 {
        log += &log_line("COMMAND", "command", ns, "{\"insert\":\"orders\",\"ordered\":true,\"$db\":\"app\"}");
    }
    for _ in 0..400 {
        log += &find(ns, &format!("{{\"_id\":{}}}", rng.below(20_000)));
    }
    let dir = tempfile::tempdir().unwrap();
    let r = analyze_files(dir.path(), &docs, &log, ns, &["--total-docs", "20000", "--key", "{_id: 1}"]);
    let id = cand(&r, "{_id: 1}");
    let b = &id["scoreBreakdown"];
    assert_eq!(id["insertOrder"]["insertsInWorkload"], "sampled");
    assert_eq!(b["insertShareOfOperations"].as_f64(), Some(0.6), "{b}");
    assert_eq!((b["cappedBy"].as_str(), b["cap"].as_f64()), (Some("insertsOnOneShard"), Some(50.0)), "{b}");
    assert!(b["weighted"].as_f64().unwrap() >= 75.0, "{b}");
    assert_eq!((id["score"].as_u64(), id["verdict"].as_str()), (Some(50), Some("poor")));
}

/// Item 5: pipelines that start with `$sort`, `$addFields`, `$project` or `$lookup` and then
/// `$match: {customerId}`. mongod 6.0.5's optimiser moves the `$match` first (explain's
/// `$cursor` `parsedQuery` holds it) unless it reads a field the stage before changed, or a
/// `$limit` stands between; mongos targets the optimised pipeline. For each pipeline the
/// server's parsedQuery decides the expected label under `{customerId: 1}`: single-shard when
/// it fixes customerId, scatter-gather when it is empty.
#[test]
fn pipelines_target_on_the_match_the_server_moves_first() {
    use mongodb::bson::{doc, Bson, Document};
    let lookup = doc! {"$lookup": {"from": "customers", "localField": "customerId", "foreignField": "_id", "as": "cust"}};
    let by_customer = doc! {"$match": {"customerId": "c1"}};
    let pipelines: Vec<Vec<Document>> = vec![
        vec![doc! {"$sort": {"createdAt": -1}}, by_customer.clone()],
        vec![doc! {"$addFields": {"t2": {"$multiply": ["$total", 2]}}}, doc! {"$match": {"customerId": "c1", "t2": {"$gt": 3}}}],
        vec![doc! {"$project": {"customerId": 1, "total": 1}}, by_customer.clone()],
        vec![lookup.clone(), by_customer.clone()],
        // Not moved: the field was changed before, the $lookup's own field, past a $limit.
        vec![doc! {"$set": {"customerId": "x"}}, by_customer.clone()],
        vec![lookup, doc! {"$match": {"cust._id": "c1"}}],
        vec![doc! {"$sort": {"createdAt": -1}}, doc! {"$limit": 5}, by_customer],
    ];
    let m = common::Mongod::start(common::Mode::Standalone);
    let client = m.client();
    let parsed: Vec<Document> = common::rt().block_on(async {
        let db = client.database("shop");
        let orders: Vec<Document> = (0..200).map(|i| doc! {"customerId": format!("c{}", i % 20), "createdAt": i, "total": i % 7}).collect();
        db.collection::<Document>("orders").insert_many(orders).await.unwrap();
        db.collection::<Document>("customers")
            .insert_many((0..20).map(|i| doc! {"_id": format!("c{i}")}).collect::<Vec<_>>())
            .await
            .unwrap();
        db.run_command(doc! {"createIndexes": "orders", "indexes": [{"key": {"customerId": 1, "createdAt": -1}, "name": "c_1_t_-1"}]})
            .await
            .unwrap();
        let mut out = Vec::new();
        for p in &pipelines {
            let e = db
                .run_command(doc! {"explain": {"aggregate": "orders", "pipeline": p.clone(), "cursor": {}}, "verbosity": "queryPlanner"})
                .await
                .unwrap();
            let planner = match e.get_array("stages") {
                Ok(stages) => {
                    stages[0].as_document().unwrap().get_document("$cursor").unwrap().get_document("queryPlanner").unwrap().clone()
                }
                Err(_) => e.get_document("queryPlanner").unwrap().clone(),
            };
            out.push(planner.get_document("parsedQuery").unwrap().clone());
        }
        out
    });
    drop(m);
    let dir = tempfile::tempdir().unwrap();
    let mut docs = String::new();
    for i in 0..2_000u64 {
        let _ = writeln!(docs, "{{\"_id\":{i},\"customerId\":\"c{}\",\"createdAt\":{i},\"total\":{}}}", i % 500, i % 7);
    }
    for (p, server) in pipelines.iter().zip(&parsed) {
        let pipeline = serde_json::to_string(&Bson::Array(p.iter().cloned().map(Bson::Document).collect()).into_relaxed_extjson()).unwrap();
        let cmd = format!("{{\"aggregate\":\"orders\",\"pipeline\":{pipeline},\"cursor\":{{}},\"$db\":\"shop\"}}");
        let log = log_line("COMMAND", "command", "shop.orders", &cmd).repeat(5);
        let r = analyze_files(dir.path(), &docs, &log, "shop.orders", &["--key", "{customerId: 1}"]);
        let single = &cand(&r, "{customerId: 1}")["readDistribution"]["percentageOfSingleShardReads"];
        let expected = if server.contains_key("customerId") { 100.0 } else { 0.0 };
        assert_eq!(single.as_f64(), Some(expected), "{pipeline}: the server's parsedQuery {server}");
    }
    // The server moved four of the seven (the premise of the issue).
    assert_eq!(parsed.iter().filter(|q| q.contains_key("customerId")).count(), 4, "{parsed:?}");
}

/// Item 8: 2,000 accounts among 50,000 documents (25 each, interleaved): the first 1,000
/// documents show about 790 distinct accounts, which looks like an identifier; the values seen
/// twice give it away (Chao1 ≈ 2,000 over 1,000: 25 documents a value at 50,000). The account
/// is a grouping field, and `{accountId: 1, _id: 1}` is proposed. A unique field stays one.
#[test]
fn a_grouping_field_is_told_from_an_identifier() {
    let ns = "app.tx";
    let mut rng = Rng(8);
    let mut docs = String::new();
    for i in 0..50_000u64 {
        let s = T0 + i * 10;
        let _ = writeln!(
            docs,
            "{{\"_id\":{},\"accountId\":\"acct-{:04}\",\"ref\":\"r{i}\",\"amount\":{}}}",
            oid(s, i),
            rng.below(2_000),
            rng.below(10_000)
        );
    }
    let mut log = String::new();
    for _ in 0..1_000 {
        log += &if rng.below(100) < 70 {
            find(ns, &format!("{{\"accountId\":\"acct-{:04}\"}}", rng.below(2_000)))
        } else {
            find(ns, &format!("{{\"ref\":\"r{}\"}}", rng.below(50_000)))
        };
    }
    let dir = tempfile::tempdir().unwrap();
    let r = analyze_files(dir.path(), &docs, &log, ns, &[]);
    let c = cand(&r, "{accountId: 1, _id: 1}");
    assert!(c["proposedBecause"].as_str().unwrap().contains("accountId"), "{}", c["proposedBecause"]);
    // The identifier is not taken for a group.
    let keys: Vec<String> = r["candidates"].as_array().unwrap().iter().map(|c| key_text(&c["key"])).collect();
    assert!(!keys.contains(&"{ref: 1, _id: 1}".to_string()), "{keys:?}");
}

/// Item 9: with one `--key` the answer's why is the cluster's verdict said once ("with 4
/// shards at scale: …"), not "at scale 4 shards at scale".
#[test]
fn one_named_key_says_its_figures_once() {
    let o = common::shardkey(&[
        "analyze",
        "--docs",
        &common::fixture("events.ndjson"),
        "--queries",
        &common::fixture("mongod.log"),
        "--collection",
        "app.events",
        "--key",
        // (a key under which the log's 6.0 runs every write: a refused write's fix would be the why)
        "{projectId: 1, _id: 1}",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let why = text.lines().find(|l| l.trim_start().starts_with("why: ")).unwrap_or_else(|| panic!("{text}"));
    assert!(why.trim_start().starts_with("why: with 4 shards at scale: "), "{why}");
    assert!(!text.contains("at scale 4 shards at scale"), "{text}");
}

/// A time field backfilled out of order (90% of the readings, loaded with old dates in random
/// order), then written live: the newest tenth holds the newest dates. By hand, every new
/// reading's date is above every stored one, so its inserts all land in the top range: one
/// shard. The creation-time correlation over the whole history is low (the backfill), so the
/// insert order reads as not increasing; the table must still say one shard, as the reasons
/// do (a new-user trial's `{ts: 1}` read "spread, 1/4" beside "every insert lands on one shard").
#[test]
fn a_backfilled_time_field_says_one_shard_in_the_table_as_in_the_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(7);
    let mut docs = String::new();
    for i in 0..10_000u64 {
        let ts = if i < 9_000 { T0 - 400 * 86_400 + rng.below(300 * 86_400) } else { T0 + i * 60 };
        writeln!(docs, "{{\"_id\":{},\"ts\":{},\"deviceId\":\"d{:03}\"}}", oid(T0 - 500 * 86_400 + i * 600, i), date(ts), i % 200).unwrap();
    }
    let d = dir.path().join("readings.ndjson");
    std::fs::write(&d, docs).unwrap();
    let d = d.display().to_string();
    let o = Command::new(env!("CARGO_BIN_EXE_shardkey"))
        .args(["analyze", "--docs", &d, "--collection", "iot.readings", "--key", "{ts: 1}", "--format", "table", "--shards", "4"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("every insert lands on one shard of 4"), "{text}");
    // The whole file was read (10,000 lines written above): not called a sample.
    assert!(text.starts_with("iot.readings: all 10000 documents read from "), "{text}");
    let row = text.lines().find(|l| l.contains("{ts: 1}") && l.contains('┆')).unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("one shard, 1/4") && !row.contains("spread"), "{row}");
}
