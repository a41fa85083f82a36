//! Residency as input (issue 49, item 3), as a DBA meets it: a users collection written by
//! the Rust driver into a real mongod 6.0.5, `region` EU (about half the users), US and
//! APAC, read by `region` and `userId` through the profiler, and the rule
//! `region=EU:shardEU,US:shardUS,APAC:shardAP` on 3 shards. Each region's share is counted
//! by the server's `$group`, never by the tool. The printed zone commands then run through
//! the real mongosh against a real `--configsvr` replica set: mongos is not shipped with the
//! test's mongod, so `sh.addShardToZone`/`sh.updateZoneKeyRange` are pointed at the commands
//! mongos forwards them as (`_configsvrAddShardToZone`, `_configsvrUpdateZoneKeyRange`, the
//! same fields), on a namespace registered in `config.collections` with the recommended key,
//! so the config server checks every bound against it (prefix, hashed bounds as NumberLong).

mod common;

use common::{rt, shardkey, Mode, Mongod, Rng};
use mongodb::bson::{doc, Bson, Document};
use serde_json::Value;

const RULE: &str = "region=EU:shardEU,US:shardUS,APAC:shardAP";
const USERS: u64 = 12_000;
const REGIONS: [&str; 3] = ["EU", "US", "APAC"];

/// 12,000 users (EU ~51%, US ~30%, APAC ~19%), then the application's reads and writes by
/// region and user (and a few by user alone) profiled at level 2.
fn seed(c: &mongodb::Client) {
    let mut rng = Rng(49);
    let users: Vec<Document> = (0..USERS)
        .map(|i| {
            let r = rng.below(100);
            let region = if r < 51 { "EU" } else if r < 81 { "US" } else { "APAC" };
            doc! {"userId": 1_000_000 + i as i64, "region": region, "email": format!("user{i}@example.com"), "plan": if rng.chance(0.2) { "pro" } else { "free" }}
        })
        .collect();
    rt().block_on(async {
        let db = c.database("app");
        for chunk in users.chunks(2000) {
            db.collection::<Document>("users").insert_many(chunk.to_vec()).await.unwrap();
        }
        db.run_command(doc! {"profile": 2, "slowms": 0}).await.unwrap();
        for i in 0..300u64 {
            let u = &users[(rng.below(USERS)) as usize];
            let filter = doc! {"region": u.get_str("region").unwrap(), "userId": u.get_i64("userId").unwrap()};
            if i % 3 == 0 {
                db.run_command(doc! {"update": "users", "updates": [{"q": filter, "u": {"$set": {"lastLogin": i as i64}}}]}).await.unwrap();
            } else {
                db.run_command(doc! {"find": "users", "filter": filter}).await.unwrap();
            }
        }
        for _ in 0..30 {
            let u = &users[(rng.below(USERS)) as usize];
            db.run_command(doc! {"find": "users", "filter": {"userId": u.get_i64("userId").unwrap()}}).await.unwrap();
        }
        db.run_command(doc! {"profile": 0}).await.unwrap();
    });
}

/// Users per region, by the server's `$group`.
fn server_counts(c: &mongodb::Client) -> Vec<(String, u64)> {
    rt().block_on(async {
        use futures_util::TryStreamExt;
        let pipeline = vec![doc! {"$group": {"_id": "$region", "n": {"$sum": 1}}}];
        let groups: Vec<Document> =
            c.database("app").collection::<Document>("users").aggregate(pipeline).await.unwrap().try_collect().await.unwrap();
        let n = |r: &str| groups.iter().find(|g| g.get_str("_id") == Ok(r)).map(|g| g.get_i32("n").unwrap() as u64).unwrap_or(0);
        REGIONS.iter().map(|r| (r.to_string(), n(r))).collect()
    })
}

fn pct(part: u64, whole: u64) -> f64 {
    (part as f64 * 1000.0 / whole as f64).round() / 10.0
}

fn run(args: &[&str]) -> (i32, String, String) {
    let o = shardkey(args);
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn key_text(k: &Value) -> String {
    shardkey::model::ShardKey::parse(&k.to_string()).unwrap().to_string()
}

/// Run `commands` (the report's text, verbatim) through the real mongosh against the config
/// server, each zone helper pointed at the command mongos forwards it as; the `shardCollection`
/// and `createIndex` lines need mongos and the data's mongod, so they are only printed back.
fn run_zone_commands(cfg: &Mongod, commands: &[String]) -> String {
    let shim = r#"
sh.addShardToZone = (s, z) => db.adminCommand({_configsvrAddShardToZone: s, zone: z, writeConcern: {w: "majority"}});
sh.updateZoneKeyRange = (ns, min, max, z) => db.adminCommand({_configsvrUpdateZoneKeyRange: ns, min: min, max: max, zone: z, writeConcern: {w: "majority"}});
const run = (text, f) => { try { const r = f(); print(r.ok === 1 ? "OK " + text : "FAILED " + text + " " + JSON.stringify(r)); } catch (e) { print("FAILED " + text + " " + e.codeName + " " + e.message); } };
"#;
    let mut script = shim.to_string();
    for c in commands {
        if c.starts_with("sh.addShardToZone(") || c.starts_with("sh.updateZoneKeyRange(") {
            script.push_str(&format!("run({:?}, () => {c});\n", c));
        }
    }
    let o = common::mongosh(&cfg.uri(), &script);
    assert!(o.status.success(), "mongosh: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The config server's own records: the three shards, and `ns` as sharded on `key` (what
/// shardCollection writes), so the zone ranges are checked against the key.
fn register(cfg: &Mongod, ns: &str, key: Document, shards: &[&str]) {
    let c = cfg.client();
    rt().block_on(async {
        let config = c.database("config");
        for (i, s) in shards.iter().enumerate() {
            let _ = config.collection::<Document>("shards").insert_one(doc! {"_id": *s, "host": format!("{s}/127.0.0.1:{}", 1 + i), "state": 1}).await;
        }
        let uuid = mongodb::bson::Binary { subtype: mongodb::bson::spec::BinarySubtype::Uuid, bytes: (0..16u8).map(|b| b ^ ns.len() as u8).collect() };
        config
            .collection::<Document>("collections")
            .insert_one(doc! {"_id": ns, "lastmodEpoch": mongodb::bson::oid::ObjectId::new(), "lastmod": mongodb::bson::DateTime::now(), "timestamp": mongodb::bson::Timestamp { time: 1, increment: 1 }, "uuid": uuid, "key": key, "unique": false, "noBalance": false})
            .await
            .unwrap();
    });
}

fn tags(cfg: &Mongod, ns: &str) -> Vec<Document> {
    let c = cfg.client();
    rt().block_on(async {
        use futures_util::TryStreamExt;
        let cur = c.database("config").collection::<Document>("tags").find(doc! {"ns": ns}).sort(doc! {"min": 1}).await.unwrap();
        cur.try_collect().await.unwrap()
    })
}

/// A bound the way the report words it: the zone field at `v`, the next at `rest`.
fn bound(next: &str, v: &str, rest: Bson) -> Document {
    let mut d = doc! {"region": v};
    d.insert(next, rest);
    d
}

#[test]
fn residency_keys_zones_and_the_region_a_shard_cannot_carry() {
    let data = Mongod::start(Mode::ReplicaSet);
    let client = data.client();
    seed(&client);
    let counts = server_counts(&client);
    let total: u64 = counts.iter().map(|c| c.1).sum();
    assert_eq!(total, USERS);
    eprintln!("server $group: {counts:?}");
    let uri = data.uri();
    let base =
        ["analyze", "--uri", uri.as_str(), "--collection", "app.users", "--queries", "profile", "--shards", "3", "--residency", RULE];

    // 1. JSON: the recommendation is led by region, ranged; every key that is not breaks the rule, with why.
    let (code, out, err) = run(&[&base[..], &["--format", "json"]].concat());
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    common::assert_schema("analyze", &r);
    let rec = &r["recommendation"];
    let rec_key = key_text(&rec["key"]);
    eprintln!("recommended {rec_key}");
    let fields: Vec<(&String, &Value)> = rec["key"].as_object().unwrap().iter().collect();
    assert_eq!((fields[0].0.as_str(), fields[0].1), ("region", &Value::from(1)), "{rec_key}");
    let next = fields.get(1).map(|f| f.0.clone()).expect("a field after region");
    let keys: Vec<String> = r["candidates"].as_array().unwrap().iter().map(|c| key_text(&c["key"])).collect();
    for want in ["{region: 1, userId: 1}", "{region: 1, userId: \"hashed\"}"] {
        assert!(keys.iter().any(|k| k == want), "{want} not proposed: {keys:?}");
    }
    let mut broken = 0;
    for c in r["candidates"].as_array().unwrap() {
        let led = c["key"].as_object().unwrap().iter().next().is_some_and(|(f, v)| f == "region" && v == &Value::from(1));
        let says = c["constraints"].as_array().into_iter().flatten().any(|f| f["rule"] == "residency" && f["effect"] == "refused");
        assert_eq!(says, !led, "{}: {}", key_text(&c["key"]), c["constraints"]);
        if !led {
            broken += 1;
            assert_eq!(c["verdict"], "invalid");
            let why = c["reasons"].to_string();
            assert!(why.contains("breaks the residency rule on region"), "{why}");
        }
    }
    assert!(broken >= 2, "the keys that break the rule are ranked too: {keys:?}");

    // 2. The zones: each region's documents and share as the server's $group counts them.
    let z = &rec["residency"];
    assert_eq!(z["field"], "region");
    let sampled = r["candidates"][0]["keyCharacteristics"]["numDocsSampled"].as_u64().unwrap();
    assert_eq!(sampled, USERS, "the whole collection is read at this size");
    for (i, (region, n)) in counts.iter().enumerate() {
        let zone = &z["zones"][i];
        assert_eq!((zone["zone"].as_str(), zone["documents"].as_u64()), (Some(region.as_str()), Some(*n)), "{zone}");
        assert_eq!(zone["percentage"].as_f64(), Some(pct(*n, total)), "{region}");
    }
    assert_eq!(z["documentsOutsideZones"], 0);
    // EU holds more than its one shard's fair share of 3 (33.3%); US and APAC do not.
    let eu = pct(counts[0].1, total);
    assert!(eu > 45.0 && pct(counts[1].1, total) < 33.3, "{counts:?}");
    let w = z["warnings"].as_array().unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(
        (w[0]["zone"].as_str(), w[0]["percentage"].as_f64(), w[0]["fairSharePercentage"].as_f64()),
        (Some("EU"), Some(eu), Some(33.3))
    );
    let words = w[0]["message"].as_str().unwrap();
    let head = format!("region: \"EU\" holds {eu}% of the sampled documents ({} of 12,000)", fmt(counts[0].1));
    assert!(words.starts_with(&head) && words.contains("stays on shardEU for good") && words.contains(&format!("on {next}")), "{words}");

    // 3. The commands: a zone per shard, a range per value with MinKey/MaxKey on the next
    // field, all before shardCollection.
    let cmds: Vec<String> = rec["commands"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
    let at = |c: &str| cmds.iter().position(|x| x == c).unwrap_or_else(|| panic!("{c} not in {cmds:#?}"));
    let shard_coll = cmds.iter().position(|c| c.starts_with("sh.shardCollection(\"app.users\"")).expect("shardCollection");
    for (region, shard) in [("EU", "shardEU"), ("US", "shardUS"), ("APAC", "shardAP")] {
        assert!(at(&format!("sh.addShardToZone(\"{shard}\", \"{region}\")")) < shard_coll);
        let range = format!(
            "sh.updateZoneKeyRange(\"app.users\", {{region: \"{region}\", {next}: MinKey}}, {{region: \"{region}\", {next}: MaxKey}}, \"{region}\")"
        );
        assert!(at(&range) < shard_coll, "{cmds:#?}");
    }

    // 4. The table and markdown print the same commands and words.
    let (code, table, _) = run(&base);
    assert_eq!(code, 0);
    let flat = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains(&head) && flat.contains("sh.updateZoneKeyRange(\"app.users\", {region: \"EU\""), "{table}");
    let (code, md, _) = run(&[&base[..], &["--format", "markdown"]].concat());
    assert_eq!(code, 0);
    assert!(
        md.contains("sh.addShardToZone(\"shardAP\", \"APAC\")") && md.contains("sh.updateZoneKeyRange(\"app.users\", {region: \"APAC\""),
        "{md}"
    );

    // 5. Through the real mongosh on a real config server, with app.users sharded on the key.
    let cfg = Mongod::start(Mode::ConfigServer);
    let Ok(Bson::Document(key_doc)) = Bson::try_from(rec["key"].clone()) else { panic!("key {}", rec["key"]) };
    register(&cfg, "app.users", key_doc.clone(), &["shardEU", "shardUS", "shardAP", "shardEU2"]);
    let said = run_zone_commands(&cfg, &cmds);
    assert_eq!(said.lines().filter(|l| l.starts_with("OK ")).count(), 6, "{said}");
    assert!(!said.contains("FAILED"), "{said}");
    let stored = tags(&cfg, "app.users");
    let want: Vec<(Document, Document, String)> =
        ["APAC", "EU", "US"].iter().map(|v| (bound(&next, v, Bson::MinKey), bound(&next, v, Bson::MaxKey), v.to_string())).collect();
    let got: Vec<(Document, Document, String)> = stored
        .iter()
        .map(|t| (t.get_document("min").unwrap().clone(), t.get_document("max").unwrap().clone(), t.get_str("tag").unwrap().to_string()))
        .collect();
    assert_eq!(got, want, "config.tags");
    // The offered cut of EU at the next field's median, as the words give it: two ranges the
    // server accepts on a collection sharded on the same key.
    let at_cut = cut_value(words, &next);
    assert_eq!(Bson::try_from(w[0]["splitAt"].clone()).ok().and_then(|b| number(&b)), number_text(&at_cut), "{words}");
    register(&cfg, "app.users_split", key_doc, &[]);
    let cut = [
        "sh.addShardToZone(\"shardEU2\", \"EU-2\")".to_string(),
        format!("sh.updateZoneKeyRange(\"app.users_split\", {{region: \"EU\", {next}: MinKey}}, {{region: \"EU\", {next}: {at_cut}}}, \"EU\")"),
        format!("sh.updateZoneKeyRange(\"app.users_split\", {{region: \"EU\", {next}: {at_cut}}}, {{region: \"EU\", {next}: MaxKey}}, \"EU-2\")"),
    ];
    let said = run_zone_commands(&cfg, &cut);
    assert_eq!(said.lines().filter(|l| l.starts_with("OK ")).count(), 3, "{said}");

    // 6. With the cluster's metadata read (--config-uri: app.users registered above), a shard
    // the rule names that config.shards does not hold is refused: one line, exit 2.
    let cfg_uri = cfg.uri();
    let (code, out, err) = run(&[
        "analyze",
        "--uri",
        &uri,
        "--config-uri",
        &cfg_uri,
        "--collection",
        "app.users",
        "--queries",
        "profile",
        "--residency",
        "region=EU:shardEU,US:shardXX",
    ]);
    assert_eq!((code, out.as_str(), err.trim_end().lines().count()), (2, "", 1), "{err}");
    assert!(
        err.contains(
            "--residency: shard \"shardXX\" is not one of the cluster's shards (config.shards: shardAP, shardEU, shardEU2, shardUS)"
        ),
        "{err}"
    );
}

/// The value the words cut EU's range at: `{region: "EU", <next>: VALUE} in zone EU`.
fn cut_value(words: &str, next: &str) -> String {
    let tail = "} in zone EU and";
    let end = words.find(tail).unwrap_or_else(|| panic!("no cut in {words}"));
    let head = format!("{{region: \"EU\", {next}: ");
    let start = words[..end].rfind(&head).unwrap() + head.len();
    words[start..end].to_string()
}

fn number(b: &Bson) -> Option<i64> {
    match b {
        Bson::Int32(n) => Some(*n as i64),
        Bson::Int64(n) => Some(*n),
        _ => None,
    }
}

/// `123` or `NumberLong("123")`.
fn number_text(s: &str) -> Option<i64> {
    s.trim_start_matches("NumberLong(\"").trim_end_matches("\")").parse().ok()
}

/// The same rule with a compound hashed key named: its bounds on the hashed field are
/// MinKey/MaxKey, its cut a NumberLong, and the config server takes both.
#[test]
fn a_hashed_next_field_gets_numberlong_bounds_the_server_takes() {
    let data = Mongod::start(Mode::ReplicaSet);
    let client = data.client();
    seed(&client);
    let counts = server_counts(&client);
    let uri = data.uri();
    let key = "{region: 1, userId: \"hashed\"}";
    let args = [
        "analyze",
        "--uri",
        uri.as_str(),
        "--collection",
        "app.users",
        "--queries",
        "profile",
        "--shards",
        "3",
        "--residency",
        RULE,
        "--key",
        key,
        "--format",
        "json",
    ];
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let rec = &r["recommendation"];
    let w = &rec["residency"]["warnings"][0];
    assert_eq!(w["percentage"].as_f64(), Some(pct(counts[0].1, USERS)));
    let words = w["message"].as_str().unwrap();
    let s = cut_value(words, "userId");
    assert!(s.starts_with("NumberLong(\""), "a hashed field's cut is its hash, a NumberLong: {s}");
    assert_eq!(Bson::try_from(w["splitAt"].clone()).ok().and_then(|b| number(&b)), number_text(&s));
    let cmds: Vec<String> = rec["commands"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
    let cfg = Mongod::start(Mode::ConfigServer);
    register(&cfg, "app.users", doc! {"region": 1, "userId": "hashed"}, &["shardEU", "shardUS", "shardAP", "shardEU2"]);
    let said = run_zone_commands(&cfg, &cmds);
    assert!(!said.contains("FAILED") && said.lines().count() == 6, "{said}");
    let cut = [
        "sh.addShardToZone(\"shardEU2\", \"EU-2\")".to_string(),
        format!("sh.updateZoneKeyRange(\"app.users\", {{region: \"EU\", userId: MinKey}}, {{region: \"EU\", userId: {s}}}, \"EU\")"),
    ];
    // Overlapping EU's whole range: the server refuses it, as it must (the cut replaces it).
    let said = run_zone_commands(&cfg, &cut);
    assert!(said.contains("FAILED") && said.contains("RangeOverlapConflict"), "{said}");
}

/// Bad input: one line, exit 2; the policy file's `residency` holds a key to it.
#[test]
fn bad_rules_and_the_policy_file() {
    let docs = common::fixture("events.ndjson");
    for (rule, says) in [
        ("country", "--residency \"country\": expected FIELD=VALUE:SHARD"),
        ("country=FR", "names no shard"),
        ("country=FR:a,FR:b", "value FR is given twice"),
        ("contry=FR:a", "none of the first 1000 documents holds 'contry'; did you mean 'country'?"),
    ] {
        let (code, out, err) = run(&["analyze", "--docs", &docs, "--collection", "app.events", "--residency", rule]);
        assert_eq!((code, out.as_str()), (2, ""), "{rule}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{rule}: {err}");
        assert!(err.contains(says), "{rule}: {err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("shardkey.toml");
    let check = |key: &str, residency: &str| {
        std::fs::write(&policy, format!("[[collection]]\nnamespace = \"app.events\"\nkey = '{key}'\nresidency = \"{residency}\"\n"))
            .unwrap();
        run(&["check", "--policy", policy.to_str().unwrap(), "--docs", &docs, "--format", "json"])
    };
    let (code, out, err) = check("{projectId: 1, _id: 1}", "country=FR:shardFR,DE:shardDE");
    assert_eq!(code, 1, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let rule = v["collections"][0]["rules"].as_array().unwrap().iter().find(|r| r["rule"] == "forbid_invalid").unwrap().clone();
    assert_eq!(rule["passed"], false);
    assert!(rule.to_string().contains("breaks the residency rule on country"), "{rule}");
    let (_, out, _) = check("{country: 1, _id: 1}", "country=FR:shardFR,DE:shardDE");
    let v: Value = serde_json::from_str(&out).unwrap();
    let rule = v["collections"][0]["rules"].as_array().unwrap().iter().find(|r| r["rule"] == "forbid_invalid").unwrap().clone();
    assert_eq!(rule["passed"], true, "{rule}");
    let (code, out, err) = check("{country: 1, _id: 1}", "country");
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains("line 4: field residency: \"country\": expected FIELD=VALUE:SHARD") && err.trim_end().lines().count() == 1,
        "{err}"
    );
}

fn fmt(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}
