//! Constraints an expert weighs (issue 39), against the real mongod 6.0.5 and the real mongosh:
//! every command the recommendation prints is run through mongosh on the server, and no
//! unique, partial, sparse, TTL or other-collation index is dropped in silence.
//! Expected values come from the server (what it builds side by side, what it refuses) and
//! from hand counts of the generated data, never from shardkey itself.

mod common;

use common::{mongosh, rt, shardkey, Mode, Mongod};
use mongodb::bson::{doc, Document};
use serde_json::Value;

/// An analyze JSON report, held to the published schema.
fn json(args: &[&str]) -> Value {
    let o = shardkey(args);
    assert!(o.status.success(), "exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    let v = serde_json::from_slice(&o.stdout).unwrap();
    common::assert_schema("analyze", &v);
    v
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect()).unwrap_or_default()
}

/// What running one printed command through mongosh gave.
#[derive(Debug)]
struct Ran {
    command: String,
    /// The server's error code name, when it refused.
    error: Option<String>,
    /// The admin command mongosh sent for an `sh.*` helper (what the server was asked).
    sent: Option<Value>,
}

/// Where the commands run: the real mongod as it answers, or as mongos would answer
/// isMaster (msg "isdbgrid"), the one answer the printed guards read; no mongos can be
/// installed here.
#[derive(Clone, Copy, PartialEq)]
enum Through {
    Mongod,
    AsMongos,
}

/// Run each command through the real mongosh, in order, in one session. `sh.shardCollection`
/// needs mongos, which this mongod build does not ship: its outcome is the server's
/// CommandNotFound, and the command mongosh built from the printed line is recorded.
fn run_through_mongosh(uri: &str, commands: &[String], through: Through) -> Vec<Ran> {
    let mut script = format!(
        "const out = []; let sent = null; const d = sh._database; const orig = d._runAdminCommand.bind(d);\n\
         d._runAdminCommand = async (cmd, ...rest) => {{ sent = cmd; const r = await orig(cmd, ...rest); return {} && cmd.isMaster ? {{...r, msg: \"isdbgrid\"}} : r; }};\n",
        through == Through::AsMongos
    );
    for c in commands {
        script.push_str(&format!(
            "sent = null; try {{ {c}; out.push({{ok: true, sent}}); }} catch (e) {{ out.push({{ok: false, code: e.codeName || e.message, sent}}); }}\n"
        ));
    }
    script.push_str("print(JSON.stringify(out));\n");
    let o = mongosh(uri, &script);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "mongosh: {}\n{stdout}", String::from_utf8_lossy(&o.stderr));
    let last = stdout.lines().last().unwrap_or_default();
    let v: Vec<Value> = serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(v.len(), commands.len(), "{stdout}");
    v.into_iter()
        .zip(commands)
        .map(|(r, c)| Ran {
            command: c.clone(),
            error: (r["ok"] != true).then(|| r["code"].as_str().unwrap_or("?").to_string()),
            sent: (!r["sent"].is_null()).then(|| r["sent"].clone()),
        })
        .collect()
}

/// Every command ran on the server, none of them shardCollection.
fn assert_all_ran_but_shard(ran: &[Ran]) {
    for r in ran {
        assert!(!r.command.starts_with("sh.shardCollection("), "{r:?}");
        assert_eq!(r.error, None, "the real mongod refused {r:?}");
    }
}

/// Every command ran on the server except shardCollection, which only mongos has: that one
/// was refused as an unknown command, and returns what mongosh sent.
fn assert_all_ran(ran: &[Ran]) -> Value {
    let mut shard = None;
    for r in ran {
        if r.command.starts_with("sh.shardCollection(") {
            assert_eq!(r.error.as_deref(), Some("CommandNotFound"), "{r:?}");
            shard = r.sent.clone();
        } else {
            assert_eq!(r.error, None, "the real mongod refused {r:?}");
        }
    }
    shard.unwrap_or_else(|| panic!("no shardCollection among {ran:?}"))
}

/// (name, key, unique, sparse, partialFilterExpression, collation locale, expireAfterSeconds) of each index.
fn indexes(c: &mongodb::Client, coll: &str) -> Vec<Document> {
    rt().block_on(async {
        let r = c.database("app").run_command(doc! {"listIndexes": coll}).await.unwrap();
        r.get_document("cursor").unwrap().get_array("firstBatch").unwrap().iter().map(|d| d.as_document().unwrap().clone()).collect()
    })
}

fn names(ix: &[Document]) -> Vec<String> {
    ix.iter().map(|d| d.get_str("name").unwrap().to_string()).collect()
}

/// A unique partial, a unique sparse, a TTL index and an index of another collation, each on
/// the key's field: nothing is dropped, each note says what the index keeps, the supporting
/// index is built beside it under its own name, and the server has both afterwards.
#[test]
fn no_guarantee_is_dropped_in_silence() {
    let m = Mongod::start(Mode::Standalone);
    let c = m.client();
    let now = mongodb::bson::DateTime::now();
    rt().block_on(async {
        let db = c.database("app");
        // 900 documents each; a third lack ssn / email (a partial and a sparse index skip them).
        let docs = |i: i64| {
            let mut d =
                doc! {"n": i, "name": format!("N{}", i % 300), "ts": mongodb::bson::DateTime::from_millis(now.timestamp_millis() + i)};
            if i % 3 != 0 {
                d.insert("ssn", format!("{:09}", i));
                d.insert("email", format!("u{i}@example.com"));
            }
            d
        };
        for coll in ["partial", "sparse", "ttl", "collation"] {
            db.collection::<Document>(coll).insert_many((0..900).map(docs).collect::<Vec<_>>()).await.unwrap();
        }
        for (coll, ix) in [
            ("partial", doc! {"key": {"ssn": 1}, "name": "ssn_1", "unique": true, "partialFilterExpression": {"ssn": {"$type": "string"}}}),
            ("sparse", doc! {"key": {"email": 1}, "name": "email_1", "unique": true, "sparse": true}),
            ("ttl", doc! {"key": {"ts": 1}, "name": "ts_1", "expireAfterSeconds": 315_360_000}),
            ("collation", doc! {"key": {"name": 1}, "name": "name_1", "collation": {"locale": "fr", "strength": 1}}),
        ] {
            db.run_command(doc! {"createIndexes": coll, "indexes": [ix]}).await.unwrap();
        }
    });
    let uri = m.uri();
    // (collection, key, what the note says it keeps, the index created beside, if any)
    let cases = [
        ("partial", "{ssn: 1}", "index ssn_1 (partial) cannot support the key; nothing is dropped: it keeps ssn unique among the documents matching {\"ssn\":{\"$type\":\"string\"}}", Some("ssn_1_shardKey")),
        ("sparse", "{email: 1}", "index email_1 (sparse) cannot support the key; nothing is dropped: it keeps email unique among the documents that have the field", Some("email_1_shardKey")),
        ("ttl", "{ts: 1}", "ts_1 supports the key and stays as it is: it keeps documents expiring 315360000 s after their ts (TTL)", None),
        ("collation", "{name: 1}", "index name_1 (non-simple collation) cannot support the key; nothing is dropped: it keeps serving the queries of collation fr", Some("name_1_shardKey")),
    ];
    for (coll, key, keeps, created) in cases {
        let ns = format!("app.{coll}");
        let r = json(&["analyze", "--uri", &uri, "--collection", &ns, "--key", key, "--format", "json"]);
        let rec = &r["recommendation"];
        let commands = strings(&rec["commands"]);
        assert!(commands.iter().all(|c| !c.contains("dropIndex")), "{coll}: {commands:?}");
        let notes = strings(&rec["notes"]);
        assert!(notes.iter().any(|n| n.starts_with(keeps)), "{coll}: {notes:?}");
        // The same words on the first screen (the table's answer).
        let o = shardkey(&["analyze", "--uri", &uri, "--collection", &ns, "--key", key]);
        let first_screen: String = String::from_utf8_lossy(&o.stdout).split("\n\n").take(3).collect::<Vec<_>>().join(" ");
        let words: String = first_screen.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains(keeps), "{coll}: {words}");

        let before = names(&indexes(&c, coll));
        let sent = assert_all_ran(&run_through_mongosh(&uri, &commands, Through::Mongod));
        assert_eq!(sent["shardCollection"], ns.as_str());
        assert!(sent.get("collation").is_none(), "a simple default collation needs none: {sent}");
        let after = indexes(&c, coll);
        for n in &before {
            assert!(names(&after).contains(n), "{coll}: {n} was dropped: {:?}", names(&after));
        }
        match created {
            Some(name) => {
                let new = after.iter().find(|d| d.get_str("name") == Ok(name)).unwrap_or_else(|| panic!("{coll}: no {name}"));
                // A plain index of simple collation: what the server takes as supporting.
                for opt in ["unique", "sparse", "partialFilterExpression", "collation", "expireAfterSeconds"] {
                    assert!(!new.contains_key(opt), "{coll}: {new}");
                }
                // Analysed again, the new index supports the key: nothing more to create.
                let again = json(&["analyze", "--uri", &uri, "--collection", &ns, "--key", key, "--format", "json"]);
                assert_eq!(again["candidates"][0]["supportingIndex"]["name"], name, "{coll}");
                assert!(strings(&again["recommendation"]["commands"]).iter().all(|c| !c.contains("createIndex")), "{coll}");
            }
            None => assert_eq!(after.len(), before.len(), "{coll}: nothing created"),
        }
    }
}

/// `users`, created with `collation: {locale: "en", strength: 2}`: 3,000 users of 30 tenants,
/// an index {tenant: 1, email: 1} (it inherits `en`), 50 profiled finds by tenant and email of
/// which 10 say `collation: {locale: "simple"}`. By hand: under `en` no string equality
/// targets, so 40 of 50 operations are kept from one shard by the collation; the key
/// {tenant: 1, email: 1} reaches one shard for the 10 simple ones only.
#[test]
fn a_case_insensitive_collection_gets_commands_of_simple_collation() {
    let m = Mongod::start(Mode::Standalone);
    let c = m.client();
    rt().block_on(async {
        let db = c.database("app");
        db.run_command(doc! {"create": "users", "collation": {"locale": "en", "strength": 2}}).await.unwrap();
        let docs: Vec<Document> =
            (0..3000).map(|i| doc! {"tenant": format!("T{}", i % 30), "email": format!("U{i}@Example.com"), "n": i}).collect();
        db.collection::<Document>("users").insert_many(docs).await.unwrap();
        db.run_command(doc! {"createIndexes": "users", "indexes": [{"key": {"tenant": 1, "email": 1}, "name": "tenant_1_email_1"}]})
            .await
            .unwrap();
        db.run_command(doc! {"profile": 2, "slowms": 0}).await.unwrap();
        for i in 0..50 {
            let mut find = doc! {"find": "users", "filter": {"tenant": format!("t{}", i % 30), "email": format!("u{i}@example.com")}};
            if i % 5 == 0 {
                find.insert("collation", doc! {"locale": "simple"});
            }
            db.run_command(find).await.unwrap();
        }
        db.run_command(doc! {"profile": 0}).await.unwrap();
    });
    let uri = m.uri();
    let base = ["analyze", "--uri", &uri, "--collection", "app.users", "--queries", "profile"];
    let keys = ["{tenant: 1, email: 1}", "{_id: \"hashed\"}", "{tenant: 1}"];
    let mut args: Vec<&str> = base.to_vec();
    for k in keys {
        args.extend(["--key", k]);
    }
    let mut json_args = args.clone();
    json_args.extend(["--format", "json"]);
    let r = json(&json_args);
    let cand = |k: &str| {
        let want = serde_json::to_value(shardkey::model::ShardKey::parse(k).unwrap()).unwrap();
        r["candidates"].as_array().unwrap().iter().find(|c| common::same_key(&c["key"], &want)).unwrap().clone()
    };
    // The index of collation en never supports a key.
    let te = cand("{tenant: 1, email: 1}");
    assert_eq!(te["supportingIndex"]["name"], Value::Null);
    assert_eq!(te["supportingIndex"]["unusable"][0], "tenant_1_email_1 (non-simple collation)");
    // The reason names the collation, with the hand count, for each key that fixes a string.
    for k in ["{tenant: 1, email: 1}", "{tenant: 1}"] {
        let reasons = cand(k)["reasons"].to_string();
        assert!(
            reasons.contains("the collection's default collation (en) keeps 40 of 50 sampled operations from one shard"),
            "{k}: {reasons}"
        );
        assert!(reasons.contains("collation {locale: \\\"simple\\\"}, or with a key on a non-string field"), "{k}: {reasons}");
    }
    assert!(!cand("{_id: \"hashed\"}")["reasons"].to_string().contains("default collation"), "no _id equality was sampled");
    assert_eq!(te["readDistribution"]["percentageOfSingleShardReads"], 20.0, "10 of 50 say simple");

    // Offline, a mongodump-style metadata.json gives the same collation (read before the
    // commands below build an index).
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("app");
    std::fs::create_dir_all(&dump).unwrap();
    let (bson, meta) = rt().block_on(async {
        use futures_util::TryStreamExt;
        let raw = c.database("app").collection::<mongodb::bson::RawDocumentBuf>("users");
        let docs: Vec<mongodb::bson::RawDocumentBuf> = raw.find(doc! {}).await.unwrap().try_collect().await.unwrap();
        let info = c.database("app").run_command(doc! {"listCollections": 1, "filter": {"name": "users"}}).await.unwrap();
        let entry = info.get_document("cursor").unwrap().get_array("firstBatch").unwrap()[0].as_document().unwrap().clone();
        (docs.iter().flat_map(|d| d.as_bytes().to_vec()).collect::<Vec<u8>>(), entry)
    });
    let mut meta = meta;
    meta.insert("indexes", indexes(&c, "users").into_iter().map(mongodb::bson::Bson::Document).collect::<Vec<_>>());
    std::fs::write(dump.join("users.bson"), bson).unwrap();
    std::fs::write(dump.join("users.metadata.json"), mongodb::bson::Bson::Document(meta).into_canonical_extjson().to_string()).unwrap();
    let path = dump.join("users.bson");
    let off = json(&["analyze", "--docs", path.to_str().unwrap(), "--collection", "app.users", "--key", "{tenant: 1}", "--format", "json"]);
    assert_eq!(off["settings"]["defaultCollation"]["locale"], "en", "{}", off["settings"]);
    let cmds = strings(&off["recommendation"]["commands"]);
    assert_eq!(
        cmds,
        [
            "db.getSiblingDB(\"app\").getCollection(\"users\").createIndex({tenant: 1}, {collation: {locale: \"simple\"}})",
            "sh.shardCollection(\"app.users\", {tenant: 1}, false, {collation: {locale: \"simple\"}})"
        ]
    );

    // Every printed command: the supporting index of simple collation, shardCollection with it.
    let rec = &r["recommendation"];
    let commands = strings(&rec["commands"]);
    let key = rec["key"].to_string();
    assert!(
        commands.iter().any(|c| c.contains(".createIndex(") && c.ends_with("collation: {locale: \"simple\"}})")),
        "{key}: {commands:?}"
    );
    let shard_line = commands.iter().find(|c| c.starts_with("sh.shardCollection(")).unwrap();
    assert!(shard_line.ends_with(", false, {collation: {locale: \"simple\"}})"), "{shard_line}");
    let sent = assert_all_ran(&run_through_mongosh(&uri, &commands, Through::Mongod));
    assert_eq!(sent["collation"], serde_json::json!({"locale": "simple"}), "{sent}");
    // The index the commands built has the simple collation (listIndexes shows none).
    let built: Vec<Document> =
        indexes(&c, "users").into_iter().filter(|d| d.get_str("name").is_ok_and(|n| n != "_id_" && n != "tenant_1_email_1")).collect();
    assert_eq!(built.len(), 1, "{built:?}");
    assert!(!built[0].contains_key("collation"), "{}", built[0]);
    // Analysed again, that index supports the key.
    let again = json(&json_args);
    assert!(strings(&again["recommendation"]["commands"]).iter().all(|c| !c.contains("createIndex")), "{again}");
}

/// Profile `finds` (each a filter) on app.<coll>.
fn profile_finds(c: &mongodb::Client, coll: &str, filters: Vec<Document>) {
    rt().block_on(async {
        let db = c.database("app");
        db.run_command(doc! {"profile": 2, "slowms": 0}).await.unwrap();
        for f in filters {
            db.run_command(doc! {"find": coll, "filter": f}).await.unwrap();
        }
        db.run_command(doc! {"profile": 0}).await.unwrap();
    });
}

fn candidate<'a>(r: &'a Value, k: &str) -> &'a Value {
    let want = serde_json::to_value(shardkey::model::ShardKey::parse(k).unwrap()).unwrap();
    r["candidates"].as_array().unwrap().iter().find(|c| common::same_key(&c["key"], &want)).unwrap_or_else(|| panic!("no candidate {k}"))
}

fn key_json(k: &str) -> Value {
    serde_json::to_value(shardkey::model::ShardKey::parse(k).unwrap()).unwrap()
}

/// The choice (docs/reference.md "Rules": a blocked key 20 points or more above the best
/// accepted one is recommended with its change): the recommendation, the alternative, the
/// sentence on the first screen, every command through mongosh, and the guarantee kept: after
/// the commands the proxy refuses a duplicate.
fn assert_choice(uri: &str, c: &mongodb::Client, coll: &str, keys: [&str; 2], unique: (&str, &str), proxied: u64) {
    let (accepted, blocked) = (keys[0], keys[1]);
    let (index, field) = unique;
    let ns = format!("app.{coll}");
    // 1 MiB ranges: migrations from 3 MiB, which the collections pass (below, sharding brings
    // nothing yet and no unique index is moved for a key).
    let mut args = vec!["analyze", "--uri", uri, "--collection", &ns, "--queries", "profile", "--chunk-size", "1"];
    for k in keys {
        args.extend(["--key", k]);
    }
    let mut jargs = args.clone();
    jargs.extend(["--format", "json"]);
    let r = json(&jargs);
    // At the default 128 MiB ranges the collection is below the balancer's threshold: sharding
    // brings nothing yet, and the unique index stays.
    let small = json(&[&jargs[..7], &jargs[9..]].concat());
    assert_eq!(small["recommendation"]["key"], key_json(accepted), "{}", small["recommendation"]);
    let t = small["recommendation"]["tradeOff"].as_str().unwrap();
    assert!(t.contains(": recommended while sharding brings no benefit yet"), "{t}");
    let (a, b) = (candidate(&r, accepted), candidate(&r, blocked));
    assert_ne!(a["verdict"], "blocked");
    assert_eq!(b["verdict"], "blocked");
    let (sa, sb) = (a["score"].as_u64().unwrap(), b["score"].as_u64().unwrap());
    assert!(sb >= sa + 20, "{blocked} {sb} against {accepted} {sa}");
    let rec = &r["recommendation"];
    assert_eq!(rec["key"], key_json(blocked), "{rec}");
    assert_eq!(
        rec["alternatives"],
        serde_json::json!([{"key": key_json(accepted), "score": sa, "requires": "nothing: every unique index stays"}])
    );
    let trade = format!(
        "keep the unique index on {field} and the best key is {accepted} ({sa}); move {field}'s uniqueness to a proxy collection (https://www.mongodb.com/docs/manual/tutorial/enforce-uniqueness-on-non-shard-key-field/) and shard on {blocked} ({sb}): recommended"
    );
    assert!(rec["tradeOff"].as_str().unwrap().starts_with(&trade), "{}", rec["tradeOff"]);
    // On the first screen: the table's answer, its why.
    let table = String::from_utf8_lossy(&shardkey(&args).stdout).to_string();
    let answer: String = table.split("\n\n").take(3).collect::<Vec<_>>().join(" ").split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(answer.contains(&format!("why: {trade}")), "{answer}");
    // The note says what the index keeps and the application's change.
    let notes = strings(&rec["notes"]).join("\n");
    assert!(notes.contains(&format!("{index} keeps {field} unique")), "{notes}");
    assert!(
        notes.contains(&format!("change the application first: from then on it inserts {{_id, {field}}} into {coll}_{field} first")),
        "{notes}"
    );

    let commands = strings(&rec["commands"]);
    let proxy_at =
        commands.iter().position(|c| c.contains(&format!("getCollection(\"{coll}_{field}\").createIndex("))).expect("proxy index");
    let drop_at = commands.iter().position(|c| c.contains(&format!(".dropIndex(\"{index}\"); else print("))).expect("drop");
    assert!(proxy_at < drop_at, "{commands:?}");
    let proxy = format!("{coll}_{field}");
    // The drop guards itself: through mongos but before the proxy holds the unique index, it
    // keeps the index; pasted whole on the replica set (not mongos), the index stays while
    // shardCollection fails; through mongos after the proxy's commands, it is dropped.
    assert_all_ran_but_shard(&run_through_mongosh(uri, &commands[drop_at..=drop_at], Through::AsMongos));
    assert!(names(&indexes(c, coll)).contains(&index.to_string()), "no proxy yet: the index stays");
    assert_all_ran(&run_through_mongosh(uri, &commands, Through::Mongod));
    assert!(names(&indexes(c, coll)).contains(&index.to_string()), "not mongos: the index stays");
    assert!(names(&indexes(c, &proxy)).contains(&index.to_string()), "the proxy's index made all the same");
    let sent = assert_all_ran(&run_through_mongosh(uri, &commands, Through::AsMongos));
    assert_eq!(sent["key"], key_json(blocked));
    // On the server: the index gone from the collection, the proxy holding every value under
    // the same unique index, and a duplicate refused.
    assert!(!names(&indexes(c, coll)).contains(&index.to_string()));
    let pix = indexes(c, &proxy);
    let kept = pix.iter().find(|d| d.get_str("name") == Ok(index)).unwrap_or_else(|| panic!("{pix:?}"));
    assert_eq!(kept.get_bool("unique"), Ok(true));
    let (count, dup) = rt().block_on(async {
        let p = c.database("app").collection::<Document>(&proxy);
        let n = p.count_documents(doc! {}).await.unwrap();
        let one = p.find_one(doc! {}).await.unwrap().unwrap();
        let dup = p.insert_one(doc! {field: one.get(field).unwrap().clone()}).await;
        (n, dup)
    });
    assert_eq!(count, proxied, "every document the index held");
    assert!(dup.unwrap_err().to_string().contains("E11000"), "the proxy keeps the uniqueness");
    // The proxy's own key, when the note gives one (a plain unique index: not accounts' partial
    // one, which no shard key keeps), runs too.
    let own = notes.lines().find_map(|n| n.split_once("must be sharded itself, its key is its unique index's: ").map(|x| x.1.to_string()));
    assert_eq!(own.is_some(), kept.get_document("partialFilterExpression").is_err(), "{notes}");
    if let Some(line) = own {
        let sent = assert_all_ran(&run_through_mongosh(uri, &[line], Through::Mongod));
        assert_eq!(sent["shardCollection"], format!("app.{proxy}"));
        assert_eq!(sent["key"], key_json(&format!("{{{field}: 1}}")));
    }
}

/// `members`: 60,000 members of 300 tenants, a unique index on email; 200 profiled finds, 85% by
/// {tenantId, userId} and 15% by email. By hand: {tenantId: 1, userId: 1} reaches one shard for
/// 85% of them, {email: 1} for 15%; the unique email index blocks the first.
#[test]
fn a_unique_index_few_reads_use_is_moved_to_a_proxy() {
    let m = Mongod::start(Mode::Standalone);
    let c = m.client();
    rt().block_on(async {
        let db = c.database("app");
        let docs: Vec<Document> = (0..60_000)
            .map(|i| doc! {"tenantId": format!("t{}", i % 300), "userId": i / 300, "email": format!("m{i}@example.com"), "name": format!("M {i}")})
            .collect();
        db.collection::<Document>("members").insert_many(docs).await.unwrap();
        db.run_command(doc! {"createIndexes": "members", "indexes": [{"key": {"email": 1}, "name": "email_1", "unique": true}]})
            .await
            .unwrap();
    });
    let filters: Vec<Document> = (0..200)
        .map(|i| {
            let m = (i * 149) % 30_000;
            if i % 20 < 17 {
                doc! {"tenantId": format!("t{}", m % 300), "userId": m / 300}
            } else {
                doc! {"email": format!("m{m}@example.com")}
            }
        })
        .collect();
    profile_finds(&c, "members", filters);
    let r = json(&[
        "analyze",
        "--uri",
        &m.uri(),
        "--collection",
        "app.members",
        "--queries",
        "profile",
        "--key",
        "{email: 1}",
        "--key",
        "{tenantId: 1, userId: 1}",
        "--format",
        "json",
    ]);
    assert_eq!(candidate(&r, "{tenantId: 1, userId: 1}")["readDistribution"]["percentageOfSingleShardReads"], 85.0);
    assert_eq!(candidate(&r, "{email: 1}")["readDistribution"]["percentageOfSingleShardReads"], 15.0);
    assert_choice(&m.uri(), &c, "members", ["{email: 1}", "{tenantId: 1, userId: 1}"], ("email_1", "email"), 60_000);
}

/// `accounts`: 60,000 accounts in 10 regions, a unique partial index on ssn (type string), which
/// a third of them lack (i % 3 == 0: 20,000); 100 profiled finds by {region, acct}. By hand: the
/// proxy holds the 40,000 accounts with an ssn.
#[test]
fn a_unique_partial_index_is_moved_with_its_filter() {
    let m = Mongod::start(Mode::Standalone);
    let c = m.client();
    rt().block_on(async {
        let db = c.database("app");
        let docs: Vec<Document> = (0..60_000)
            .map(|i| {
                let mut d = doc! {"region": format!("r{}", i % 10), "acct": i, "balance": i % 977};
                if i % 3 != 0 {
                    d.insert("ssn", format!("{:09}", i * 7));
                }
                d
            })
            .collect();
        db.collection::<Document>("accounts").insert_many(docs).await.unwrap();
        db.run_command(doc! {"createIndexes": "accounts", "indexes": [
            {"key": {"ssn": 1}, "name": "ssn_1", "unique": true, "partialFilterExpression": {"ssn": {"$type": "string"}}}
        ]})
        .await
        .unwrap();
    });
    profile_finds(&c, "accounts", (0..100).map(|i| doc! {"region": format!("r{}", (i * 37) % 10), "acct": (i * 37) % 20_000}).collect());
    assert_choice(&m.uri(), &c, "accounts", ["{ssn: 1}", "{region: 1, acct: 1}"], ("ssn_1", "ssn"), 40_000);
    // The proxy's index keeps the partial filter: a document without ssn is not in it.
    let pix = indexes(&c, "accounts_ssn");
    let ix = pix.iter().find(|d| d.get_str("name") == Ok("ssn_1")).unwrap();
    assert_eq!(ix.get_document("partialFilterExpression").unwrap(), &doc! {"ssn": {"$type": "string"}});
}

/// `_id` chosen by the application: 2,000 documents, 1,500 with a string `_id` and 500 with an
/// ObjectId (75.0% by hand). A key that does not start with `_id` is told that `_id` is then
/// unique per shard only; `{_id: "hashed"}` is not; ObjectIds alone say nothing.
#[test]
fn application_chosen_ids_are_unique_per_shard_only() {
    let m = Mongod::start(Mode::Standalone);
    let c = m.client();
    rt().block_on(async {
        let db = c.database("app");
        let docs: Vec<Document> = (0..2000)
            .map(|i| {
                let mut d = doc! {"tenant": format!("t{}", i % 40), "n": i};
                if i % 4 != 0 {
                    d.insert("_id", format!("order-{i}"));
                }
                d
            })
            .collect();
        db.collection::<Document>("orders").insert_many(docs).await.unwrap();
        let plain: Vec<Document> = (0..500).map(|i| doc! {"tenant": format!("t{}", i % 40)}).collect();
        db.collection::<Document>("events").insert_many(plain).await.unwrap();
    });
    let uri = m.uri();
    let r = json(&[
        "analyze",
        "--uri",
        &uri,
        "--collection",
        "app.orders",
        "--key",
        "{tenant: 1}",
        "--key",
        "{_id: \"hashed\"}",
        "--format",
        "json",
    ]);
    let said = |k: &str| -> Vec<String> {
        candidate(&r, k)["constraints"]
            .as_array()
            .map(|a| a.iter().filter(|f| f["rule"] == "idUniqueness").map(|f| f["message"].as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    let t = said("{tenant: 1}");
    assert_eq!(t.len(), 1, "{t:?}");
    assert!(
        t[0].starts_with("_id is chosen by the application (75.0% of sampled documents hold an _id that is not an ObjectId)"),
        "{}",
        t[0]
    );
    assert!(t[0].contains("the server then keeps _id unique per shard only"), "{}", t[0]);
    assert!(said("{_id: \"hashed\"}").is_empty());
    assert_eq!(candidate(&r, "{tenant: 1}")["constraints"][0]["effect"], "warning");
    let r = json(&["analyze", "--uri", &uri, "--collection", "app.events", "--key", "{tenant: 1}", "--format", "json"]);
    assert!(candidate(&r, "{tenant: 1}")["constraints"].as_array().is_none_or(|a| a.iter().all(|f| f["rule"] != "idUniqueness")));
}

/// `counters`: 300 sequences (one per tenant), a unique index on name, 200 profiled
/// findAndModify by _id and 100 finds by name. By the server's rules (6.0): the unique name_1
/// blocks every key not starting with name (so both _id keys), and under a key starting with
/// name a findAndModify by _id alone is refused (before 7.1, ShardKeyNotFound). The collection
/// (its size from collStats) is far below the balancer's migration threshold (3 × 128 MiB):
/// sharding would move none of it, so it stays unsharded, no command; a key the DBA names gets
/// its commands all the same.
#[test]
fn a_small_collection_whose_keys_all_refuse_writes_is_left_unsharded() {
    let m = Mongod::start(Mode::Standalone);
    let c = m.client();
    let size = rt().block_on(async {
        let db = c.database("app");
        let docs: Vec<Document> = (0..300).map(|i| doc! {"_id": i, "name": format!("tenant-{i}"), "value": 0_i64}).collect();
        db.collection::<Document>("counters").insert_many(docs).await.unwrap();
        db.run_command(doc! {"createIndexes": "counters", "indexes": [{"key": {"name": 1}, "name": "name_1", "unique": true}]})
            .await
            .unwrap();
        db.run_command(doc! {"profile": 2, "slowms": 0}).await.unwrap();
        for i in 0..300 {
            let cmd = if i % 3 == 2 {
                doc! {"find": "counters", "filter": {"name": format!("tenant-{}", i % 300)}}
            } else {
                doc! {"findAndModify": "counters", "query": {"_id": i % 300}, "update": {"$inc": {"value": 1_i64}}, "new": true}
            };
            db.run_command(cmd).await.unwrap();
        }
        db.run_command(doc! {"profile": 0}).await.unwrap();
        db.run_command(doc! {"collStats": "counters"}).await.unwrap().get_i32("size").map(i64::from).unwrap()
    });
    assert!(size < 384 << 20, "{size}");
    let uri = m.uri();
    let base = ["analyze", "--uri", &uri, "--collection", "app.counters", "--queries", "profile"];
    let r = json(&[&base[..], &["--format", "json"]].concat());
    let rec = &r["recommendation"];
    assert_eq!(rec["action"], "leaveUnsharded", "{rec}");
    assert_eq!(rec["commands"], serde_json::json!([]), "{rec}");
    // Every candidate is blocked by name_1 or refuses the findAndModify (the server's rules).
    for cand in r["candidates"].as_array().unwrap() {
        let effects: Vec<&str> = cand["constraints"].as_array().unwrap().iter().filter_map(|f| f["effect"].as_str()).collect();
        assert!(effects.contains(&"blocked") || effects.contains(&"writesFail"), "{}: {effects:?}", cand["key"]);
    }
    let notes = strings(&rec["notes"]);
    // The size said within 2% of the server's (the data size the model takes: documents × their
    // average size, which collStats gives rounded down).
    let said = notes[0]
        .strip_prefix("leave app.counters unsharded for now: at ")
        .and_then(|x| x.split_once(" KiB it is below the balancer's migration threshold (384.0 MiB)"));
    let kib: f64 = said.unwrap_or_else(|| panic!("{notes:?}")).0.parse().unwrap();
    assert!((kib * 1024.0 / size as f64 - 1.0).abs() < 0.02, "{kib} KiB against {size} bytes");
    assert!(notes[0].ends_with("No command to run now: analyze it again as it nears 384.0 MiB"), "{notes:?}");
    // The first screen says it before the key.
    let table = String::from_utf8_lossy(&shardkey(&base).stdout).to_string();
    assert!(table.contains(&format!("recommended: leave unsharded for now; best key once it grows: {}", candidate_key(rec))), "{table}");
    // Named, a key gets its commands (the question asked).
    let named = json(&[&base[..], &["--key", "{name: 1}", "--format", "json"]].concat());
    assert_eq!(named["recommendation"]["action"], "shardCollection", "{}", named["recommendation"]);
    assert!(strings(&named["recommendation"]["commands"]).iter().any(|c| c.starts_with("sh.shardCollection(\"app.counters\", {name: 1})")));
}

/// A key of the JSON report as the table writes it (`{name: 1}`).
fn candidate_key(rec: &Value) -> String {
    let fields: Vec<String> = rec["key"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(f, v)| format!("{f}: {}", if v == "hashed" { "\"hashed\"".to_string() } else { v.to_string() }))
        .collect();
    format!("{{{}}}", fields.join(", "))
}
