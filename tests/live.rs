//! `shardkey analyze --uri` against a real mongod 6.0.5 (see tests/common).

mod common;

use common::{fixture, json_ok, load_ndjson, rt, shardkey, Mode, Mongod};
use mongodb::bson::{doc, Document};
use serde_json::{json, Value};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn cand<'a>(r: &'a Value, key: &str) -> &'a Value {
    let want = shardkey::model::ShardKey::parse(key).unwrap().to_json();
    r["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| common::same_key(&c["key"], &want))
        .unwrap_or_else(|| panic!("{key} missing in {r}"))
}

#[test]
fn live_fixtures_match_the_offline_run() {
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    assert_eq!(load_ndjson(&client, "app", "events", fixture("events.ndjson")), 10_000);
    let keys = ["{_id: 1}", "{ts: 1}", "{projectId: 1}", "{country: 1}", "{projectId: 1, _id: 1}", "{userId: \"hashed\"}"];
    let mut live_args = vec!["analyze", "--format", "json", "--collection", "app.events", "--sample-size", "20000", "--compare-server"];
    let uri = m.uri();
    live_args.extend(["--uri", uri.as_str()]);
    let docs = fixture("events.ndjson");
    let mut off_args = vec!["analyze", "--format", "json", "--collection", "app.events", "--docs", docs.as_str()];
    for k in &keys {
        live_args.extend(["--key", k]);
        off_args.extend(["--key", k]);
    }
    let live = json_ok(&shardkey(&live_args));
    let off = json_ok(&shardkey(&off_args));
    assert_eq!(live["inputs"]["documents"]["numDocsRead"], 10_000);
    for k in &keys {
        let (l, o) = (&cand(&live, k)["keyCharacteristics"], &cand(&off, k)["keyCharacteristics"]);
        assert_eq!(l["numDistinctValues"], o["numDistinctValues"], "{k}");
        assert_eq!(l["mostCommonValues"], o["mostCommonValues"], "{k}");
        assert_eq!(l["monotonicity"]["type"], o["monotonicity"]["type"], "{k}");
        assert_eq!(l["numDocsTotal"], 10_000);
        assert!(l["avgDocSizeBytes"].as_u64().unwrap() > 150, "from collStats, not the projected sample");
    }
    assert_eq!(cand(&live, "{_id: 1}")["keyCharacteristics"]["monotonicity"]["type"], "monotonic");
    assert_eq!(cand(&live, "{ts: 1}")["keyCharacteristics"]["monotonicity"]["type"], "monotonic");
    assert_eq!(cand(&live, "{projectId: 1}")["keyCharacteristics"]["monotonicity"]["type"], "not monotonic");
    let notes = live["notes"].to_string();
    assert!(notes.contains("analyzeShardKey needs 7.0"), "{notes}");
    // The server lists the indexes; a file of documents alone does not, and says so.
    assert!(!notes.contains("indexes unknown"), "{notes}");
    assert!(off["notes"].to_string().contains("indexes unknown"), "{}", off["notes"]);

    // A sample of 30%: one $sampleRate scan in natural order (about 3000 documents).
    let o = shardkey(&[
        "analyze",
        "--format",
        "json",
        "--uri",
        &uri,
        "--collection",
        "app.events",
        "--sample-size",
        "3000",
        "--key",
        "{ts: 1}",
        "--key",
        "{country: 1}",
    ]);
    let r = json_ok(&o);
    let n = r["inputs"]["documents"]["numDocsRead"].as_u64().unwrap();
    assert!((2700..=3300).contains(&n), "{n}");
    assert_eq!(cand(&r, "{ts: 1}")["keyCharacteristics"]["monotonicity"]["type"], "monotonic");
    assert_eq!(cand(&r, "{country: 1}")["keyCharacteristics"]["numDistinctValues"], 10);
    assert_eq!(cand(&r, "{ts: 1}")["keyCharacteristics"]["numDocsTotal"], 10_000);
    // A sample under 5%: a $sampleRate scan too (issue 47), in insertion order.
    let o = shardkey(&[
        "analyze",
        "--format",
        "json",
        "--uri",
        &uri,
        "--collection",
        "app.events",
        "--sample-size",
        "400",
        "--key",
        "{ts: 1}",
        "--key",
        "{projectId: 1}",
    ]);
    let r = json_ok(&o);
    // Expected size 400 of 10,000 (Bernoulli): 4 sigma is 78.
    let n = r["inputs"]["documents"]["numDocsRead"].as_u64().unwrap();
    assert!((322..=478).contains(&n), "{n}");
    assert_eq!(cand(&r, "{ts: 1}")["keyCharacteristics"]["monotonicity"]["type"], "monotonic");
    assert_eq!(cand(&r, "{projectId: 1}")["keyCharacteristics"]["monotonicity"]["type"], "not monotonic");
}

#[test]
fn profiler_and_sampled_queries_are_read_and_classified() {
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    load_ndjson(&client, "app", "events", fixture("events.ndjson"));
    let db = client.database("app");
    let events = db.collection::<Document>("events");
    rt().block_on(async {
        db.run_command(doc! {"profile": 2}).await.unwrap();
        for p in ["proj-0000", "proj-0001", "proj-0002", "proj-0003", "proj-0004"] {
            events.find_one(doc! {"projectId": p}).await.unwrap();
        }
        for _ in 0..3 {
            events.find_one(doc! {"country": "DE", "type": "view"}).await.unwrap();
        }
        events.update_one(doc! {"userId": "user-00001"}, doc! {"$set": {"seen": true}}).await.unwrap();
        events.update_many(doc! {"projectId": "proj-0007"}, doc! {"$set": {"seen": true}}).await.unwrap();
    });
    let uri = m.uri();
    // shardkey's own sampling reads, profiled too (appName "shardkey"): not the application's workload.
    json_ok(&shardkey(&["analyze", "--format", "json", "--uri", &uri, "--collection", "app.events", "--key", "{projectId: 1}"]));
    let own = rt().block_on(async {
        db.run_command(doc! {"profile": 0}).await.unwrap();
        db.collection::<Document>("system.profile").count_documents(doc! {"appName": "shardkey"}).await.unwrap()
    });
    assert!(own > 0, "shardkey's reads were profiled");
    // A mistyped key field on the live collection: refused, with the field the documents have.
    let o = shardkey(&["analyze", "--uri", &uri, "--collection", "app.events", "--key", "{usrId: 1}"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("has 'usrId'; did you mean 'userId'?"), "{}", String::from_utf8_lossy(&o.stderr));
    let r = json_ok(&shardkey(&[
        "analyze",
        "--format",
        "json",
        "--uri",
        &uri,
        "--collection",
        "app.events",
        "--queries",
        "profile",
        "--key",
        "{projectId: 1}",
    ]));
    let c = cand(&r, "{projectId: 1}");
    let rd = &c["readDistribution"];
    assert_eq!(rd["sampleSize"]["find"], 8, "{rd}");
    assert_eq!(rd["percentageOfSingleShardReads"], 62.5);
    assert_eq!(rd["percentageOfScatterGatherReads"], 37.5);
    let wd = &c["writeDistribution"];
    assert_eq!(wd["sampleSize"]["update"], 2, "{wd}");
    assert_eq!(wd["percentageOfSingleShardWrites"], 50.0);
    assert_eq!(wd["percentageOfSingleWritesWithoutShardKey"], 50.0);
    assert!(r["inputs"]["queries"]["sources"][0].as_str().unwrap().contains("system.profile"));
    let skipped = &r["inputs"]["queries"]["skipped"];
    assert!(skipped["shardkey's own operations (appName \"shardkey\")"].as_u64().unwrap() > 0, "{skipped}");

    // 7.0-format sampled queries stored in config.sampledQueries[Diff] by the test.
    let load = |coll: &str, file: &str| {
        let n = load_ndjson(&client, "config", coll, fixture(file));
        assert!(n > 0);
    };
    load("sampledQueries", "sampledQueries.ndjson");
    load("sampledQueriesDiff", "sampledQueriesDiff.ndjson");
    let live = json_ok(&shardkey(&[
        "analyze",
        "--format",
        "json",
        "--uri",
        &uri,
        "--collection",
        "app.events",
        "--queries",
        "sampled",
        "--key",
        "{projectId: 1}",
        "--key",
        "{_id: \"hashed\"}",
    ]));
    let sq = fixture("sampledQueries.ndjson");
    let sqd = fixture("sampledQueriesDiff.ndjson");
    let docs = fixture("events.ndjson");
    let off = json_ok(&shardkey(&[
        "analyze",
        "--format",
        "json",
        "--docs",
        docs.as_str(),
        "--collection",
        "app.events",
        "--queries",
        sq.as_str(),
        "--queries",
        sqd.as_str(),
        "--key",
        "{projectId: 1}",
        "--key",
        "{_id: \"hashed\"}",
    ]));
    for k in ["{projectId: 1}", "{_id: \"hashed\"}"] {
        let (l, o) = (cand(&live, k), cand(&off, k));
        assert!(l["readDistribution"]["sampleSize"]["total"].as_u64().unwrap() > 100);
        assert_eq!(l["readDistribution"], o["readDistribution"], "{k}");
        assert_eq!(l["writeDistribution"], o["writeDistribution"], "{k}");
        assert_eq!(l["queryShapes"], o["queryShapes"], "{k}");
    }
    assert!(cand(&live, "{projectId: 1}")["writeDistribution"]["percentageOfShardKeyUpdates"].as_f64().unwrap() > 0.0);
}

#[test]
fn supporting_indexes_follow_the_real_indexes() {
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    let c = client.database("idx").collection::<Document>("c");
    rt().block_on(async {
        let docs: Vec<Document> =
            (0..500).map(|i| doc! {"_id": i, "u": i, "g": i % 10, "h": i * 7, "m": i % 5, "arr": [i, i + 1], "s": i % 50}).collect();
        c.insert_many(docs).await.unwrap();
        let db = client.database("idx");
        db.run_command(doc! {"createIndexes": "c", "indexes": [
            {"key": {"u": 1}, "name": "u_1", "unique": true},
            {"key": {"g": 1}, "name": "g_1"},
            {"key": {"h": "hashed"}, "name": "h_hashed"},
            {"key": {"m": 1, "arr": 1}, "name": "m_1_arr_1"},
            {"key": {"s": 1}, "name": "s_1", "sparse": true},
        ]})
        .await
        .unwrap();
    });
    let uri = m.uri();
    let mut args = vec!["analyze", "--format", "json", "--uri", uri.as_str(), "--collection", "idx.c"];
    let keys = ["{u: 1}", "{g: 1}", "{h: \"hashed\"}", "{m: 1}", "{_id: 1}", "{u: \"hashed\"}"];
    for k in &keys {
        args.extend(["--key", k]);
    }
    let r = json_ok(&shardkey(&args));
    let si = |k: &str| cand(&r, k)["supportingIndex"].clone();
    let uniq = |k: &str| cand(&r, k)["keyCharacteristics"]["isUnique"].clone();
    assert_eq!(si("{u: 1}")["name"], "u_1");
    assert_eq!(uniq("{u: 1}"), true);
    assert_eq!(si("{g: 1}")["name"], "g_1");
    assert_eq!(uniq("{g: 1}"), false);
    assert_eq!(si("{h: \"hashed\"}")["name"], "h_hashed");
    assert_eq!(uniq("{h: \"hashed\"}"), false);
    assert_eq!(si("{m: 1}")["name"], Value::Null);
    assert_eq!(si("{m: 1}")["unusable"][0], "m_1_arr_1 (multikey)");
    assert_eq!(si("{m: 1}")["createIndex"], "db.c.createIndex({m: 1})");
    assert_eq!(si("{_id: 1}")["name"], "_id_");
    assert_eq!(uniq("{_id: 1}"), true);
    assert_eq!(si("{u: \"hashed\"}")["name"], Value::Null);
    assert_eq!(si("{u: \"hashed\"}")["createIndex"], "db.c.createIndex({u: \"hashed\"})");
    // A sparse index on the very pattern cannot support the key; 6.0.5 builds a plain one
    // beside it under its own name (issue 39.3), so nothing is dropped.
    let r = json_ok(&shardkey(&["analyze", "--format", "json", "--uri", &uri, "--collection", "idx.c", "--key", "{s: 1}"]));
    let s = &r["candidates"][0]["supportingIndex"];
    assert_eq!(
        (&s["unusable"][0], &s["createIndex"]),
        (&json!("s_1 (sparse)"), &json!("db.c.createIndex({s: 1}, {name: \"s_1_shardKey\"})"))
    );
    // (The unique u_1 blocks {s: 1}: its drop comes first, then the supporting index.)
    let cmds: Vec<&str> = r["recommendation"]["commands"].as_array().unwrap().iter().filter_map(|c| c.as_str()).collect();
    assert!(!cmds.iter().any(|c| c.contains("dropIndex(\"s_1\")")), "{cmds:?}");
    assert!(cmds.contains(&"db.getSiblingDB(\"idx\").getCollection(\"c\").createIndex({s: 1}, {name: \"s_1_shardKey\"})"), "{cmds:?}");
    // Without keys, existing indexes are proposed.
    let r = json_ok(&shardkey(&["analyze", "--format", "json", "--uri", &uri, "--collection", "idx.c"]));
    let proposed: Vec<String> = r["candidates"].as_array().unwrap().iter().map(|c| c["key"].to_string()).collect();
    for want in [r#"{"g":1}"#, r#"{"u":1}"#, r#"{"h":"hashed"}"#, r#"{"_id":"hashed"}"#] {
        assert!(proposed.contains(&want.to_string()), "{want} not in {proposed:?}");
    }
}

#[test]
fn a_full_run_writes_nothing() {
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    load_ndjson(&client, "app", "events", fixture("events.ndjson"));
    let before = m.write_opcounters(&client);
    let uri = m.uri();
    // proposals, profile and sampled-query reading, sampling smaller than the collection
    let o = shardkey(&["analyze", "--uri", &uri, "--collection", "app.events", "--sample-size", "5000", "--compare-server"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = shardkey(&["analyze", "--uri", &uri, "--collection", "app.events", "--format", "json", "--key", "{projectId: 1}"]);
    assert!(o.status.success());
    let after = m.write_opcounters(&client);
    assert_eq!(before, after, "insert/update/delete opcounters moved");
}

#[test]
fn credentials_never_leak() {
    let m = Mongod::start(Mode::StandaloneAuth);
    let password = "S3cret-Pa55word";
    let wrong = "Wr0ng-Pa55word";
    let root = m.root_client();
    rt().block_on(async {
        root.database("admin")
            .run_command(doc! {"createUser": "dba", "pwd": password, "roles": [{"role": "read", "db": "app"}, "clusterMonitor"]})
            .await
            .unwrap();
        let docs: Vec<Document> = (0..300).map(|i| doc! {"_id": i, "k": i % 17}).collect();
        root.database("app").collection::<Document>("c").insert_many(docs).await.unwrap();
    });
    let uri = |pw: &str| format!("mongodb://dba:{pw}@127.0.0.1:{}/?authSource=admin", m.port);
    let check_clean = |o: &Output, pw: &str| {
        let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert!(!all.contains(pw), "password printed: {all}");
    };
    for format in ["table", "json", "markdown"] {
        let o = shardkey(&["analyze", "--uri", &uri(password), "--collection", "app.c", "--key", "{k: 1}", "--format", format]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        check_clean(&o, password);
    }
    let o = shardkey(&["analyze", "--uri", &uri(wrong), "--collection", "app.c", "--key", "{k: 1}", "--format", "json"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("authentication failed"), "{err}");
    check_clean(&o, wrong);
    // other failure paths with the password in the URI
    let o = shardkey(&["analyze", "--uri", &uri(password), "--collection", "app.missing", "--key", "{k: 1}"]);
    assert_eq!(o.status.code(), Some(2));
    check_clean(&o, password);
    let o = shardkey(&["analyze", "--uri", &uri(password), "--collection", "app.c", "--key", "{k: -1}"]);
    assert_eq!(o.status.code(), Some(2));
    check_clean(&o, password);
    let dead = format!("mongodb://dba:{password}@127.0.0.1:{}/?authSource=admin", common::free_port());
    let o = shardkey(&["analyze", "--uri", &dead, "--collection", "app.c", "--server-selection-timeout", "1"]);
    assert_eq!(o.status.code(), Some(2));
    check_clean(&o, password);
    // a percent-encoded password is scrubbed in both forms
    let o = shardkey(&[
        "analyze",
        "--uri",
        &format!("mongodb://dba:p%40ss-w0rd@127.0.0.1:{}/?authSource=admin", m.port),
        "--collection",
        "app.c",
    ]);
    assert_eq!(o.status.code(), Some(2));
    check_clean(&o, "p@ss-w0rd");
    check_clean(&o, "p%40ss-w0rd");
    // MONGODB_URI is the default
    let o = Command::new(env!("CARGO_BIN_EXE_shardkey"))
        .args(["analyze", "--collection", "app.c", "--key", "{k: 1}", "--format", "json"])
        .env("MONGODB_URI", uri(password))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    check_clean(&o, password);
}

/// Every process's command line on this machine, to show a password never reached one.
fn any_command_line_holds(secret: &str) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .any(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(secret)))
}

#[test]
fn mongosh_connection_flags_the_prompt_and_the_config_file() {
    let m = Mongod::start(Mode::StandaloneAuth);
    // `'`, `:`, `@`, `#` and a space: each breaks a hand-built URI or a naive YAML reader.
    let password = "Pr0mpt: it's @#1 x";
    let root = m.root_client();
    rt().block_on(async {
        root.database("admin")
            .run_command(doc! {"createUser": "dba", "pwd": password, "roles": [{"role": "read", "db": "app"}]})
            .await
            .unwrap();
        let docs: Vec<Document> = (0..400).map(|i| doc! {"_id": i, "k": i % 23}).collect();
        root.database("app").collection::<Document>("c").insert_many(docs).await.unwrap();
    });
    let port = m.port.to_string();
    let base = |extra: &[&str]| -> Vec<String> {
        ["analyze", "--host", "127.0.0.1", "--port", &port, "--authenticationDatabase", "admin", "--collection", "app.c"]
            .iter()
            .chain(["--key", "{k: 1}", "--format", "json"].iter())
            .chain(extra.iter())
            .map(|s| s.to_string())
            .collect()
    };
    let clean = |text: &str| assert!(!text.contains(password) && !text.contains("Pr0mpt"), "password printed: {text}");

    // 1. `-u dba -p` on a terminal: the prompt, no echo, the report.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_shardkey"));
    cmd.args(base(&["-u", "dba", "-p"])).env_remove("MONGODB_URI");
    let mut p = rexpect::session::spawn_command(cmd, Some(60_000)).unwrap();
    p.exp_string("Enter password for dba: ").unwrap();
    assert!(!any_command_line_holds(password));
    p.send_line(password).unwrap();
    let out = p.exp_eof().unwrap();
    clean(&out);
    assert!(out.contains("\"numDocsRead\": 400"), "{out}");

    // 2. The prompt's wrong answer: one line, exit 2, not echoed, not quoted.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_shardkey"));
    cmd.args(base(&["-u", "dba", "-p", "--server-selection-timeout", "3"])).env_remove("MONGODB_URI");
    let mut p = rexpect::session::spawn_command(cmd, Some(60_000)).unwrap();
    p.exp_string("Enter password for dba: ").unwrap();
    p.send_line("Pr0mpt-wrong-guess").unwrap();
    let out = p.exp_eof().unwrap();
    assert!(out.contains("authentication failed") && !out.contains("wrong-guess"), "{out}");
    let status = format!("{:?}", p.process().wait().unwrap());
    assert!(status.contains(", 2)"), "{status}");

    // 3. Standard input that is not a terminal: one line of it, as mongodump reads it.
    let run_with_stdin = |args: Vec<String>, input: &str| {
        use std::io::Write;
        let mut child = Command::new(env!("CARGO_BIN_EXE_shardkey"))
            .args(args)
            .env_remove("MONGODB_URI")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    let o = run_with_stdin(base(&["-u", "dba", "-p"]), &format!("{password}\n"));
    let v = json_ok(&o);
    assert_eq!(v["inputs"]["documents"]["numDocsRead"], 400, "{v}");
    clean(&String::from_utf8_lossy(&o.stderr));
    // `-u` alone asks too; empty input is a usage error that says what to do
    let o = run_with_stdin(base(&["-u", "dba"]), "");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--config FILE"), "{}", String::from_utf8_lossy(&o.stderr));

    // 4. mongodump's --config: the password (and the URI) in a YAML file.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("shardkey.yaml");
    std::fs::write(&config, format!("password: \"{password}\"\n")).unwrap();
    let config = config.display().to_string();
    let o = shardkey(&base(&["-u", "dba", "--config", &config]).iter().map(|s| s.as_str()).collect::<Vec<_>>());
    let v = json_ok(&o);
    assert_eq!(v["inputs"]["documents"]["numDocsRead"], 400);
    // Issue 30: dba has `read` only. The notes say the profiler could not be read and why, in
    // one line without the server's command text; never that it is empty.
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("system.profile of") && notes.contains(") not read:") && notes.contains("not authorized on app (Unauthorized)"),
        "{notes}"
    );
    assert!(notes.contains("the role read does not grant find on app.system.profile"), "{notes}");
    assert!(notes.contains("(system.profile could not be read)"), "{notes}");
    assert!(!notes.contains("execute command") && !notes.contains("lsid") && !notes.contains("are empty"), "{notes}");
    let with_uri = dir.path().join("uri.yaml");
    std::fs::write(
        &with_uri,
        format!("uri: mongodb://dba@127.0.0.1:{port}/?authSource=admin\npassword: '{}'\n", password.replace('\'', "''")),
    )
    .unwrap();
    let o =
        shardkey(&["analyze", "--config", &with_uri.display().to_string(), "--collection", "app.c", "--key", "{k: 1}", "--format", "json"]);
    assert_eq!(json_ok(&o)["inputs"]["documents"]["numDocsRead"], 400);
    // a wrong password from the file: exit 2, never quoted, also not in its percent-encoded form
    std::fs::write(dir.path().join("bad.yaml"), "password: 'Pr0mpt-bad: @x'\n").unwrap();
    let o = shardkey(
        &base(&["-u", "dba", "--config", &dir.path().join("bad.yaml").display().to_string(), "--server-selection-timeout", "3"])
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>(),
    );
    assert_eq!(o.status.code(), Some(2));
    let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(!all.contains("Pr0mpt-bad") && !all.contains("Pr0mpt-bad%3A"), "{all}");

    // 5. `-p VALUE` works (a value shows in `ps`: README says prefer the prompt); scrubbed when wrong.
    let o = shardkey(
        &base(&["-u", "dba", "-p", "Pr0mpt-typed-wrong", "--server-selection-timeout", "3"]).iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("authentication failed") && !err.contains("typed-wrong"), "{err}");

    // 6. `--host` with `--uri` is refused as mongosh refuses it; a password without a user says so.
    let o = shardkey(&["analyze", "--uri", &m.uri(), "--host", "127.0.0.1", "--collection", "app.c"]);
    assert_eq!(o.status.code(), Some(2));
    let o = shardkey(&["analyze", "--uri", &m.uri(), "-p", "Pr0mpt-no-user", "--collection", "app.c"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no user name") && !err.contains("no-user"), "{err}");
}

/// Issue 30: a connection error says its cause; the URI's database counts; a missing
/// collection gets "did you mean".
#[test]
fn first_hour_errors_say_why() {
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    rt().block_on(async {
        let docs: Vec<Document> = (0..200).map(|i| doc! {"_id": i, "customerId": i % 7}).collect();
        client.database("shop").collection::<Document>("orders").insert_many(docs).await.unwrap();
    });
    let err = |o: &Output| {
        assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stdout));
        let e = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        e
    };
    let rs = |opts: &str| format!("mongodb://127.0.0.1:{}/?replicaSet=rs0{opts}", m.port);
    // a one-member replica set has no secondary
    let o =
        shardkey(&["analyze", "--uri", &rs("&readPreference=secondary"), "--collection", "shop.orders", "--server-selection-timeout", "2"]);
    let e = err(&o);
    assert!(e.contains("no server matches readPreference=secondary: the deployment has 1 primary and no secondary"), "{e}");
    // TLS against a server without it
    let o = shardkey(&["analyze", "--uri", &rs("&tls=true"), "--collection", "shop.orders", "--server-selection-timeout", "2"]);
    let e = err(&o);
    assert!(e.contains(&format!("TLS with 127.0.0.1:{} failed", m.port)) && e.contains("--tlsCAFile"), "{e}");
    // nothing listens
    let dead = format!("mongodb://127.0.0.1:{}/", common::free_port());
    let e = err(&shardkey(&["analyze", "--uri", &dead, "--collection", "shop.orders", "--server-selection-timeout", "2"]));
    assert!(e.contains("refused the connection"), "{e}");
    // a raw '?' in the password is named, and nothing of the password is shown
    let e = err(&shardkey(&["analyze", "--uri", &format!("mongodb://u:se?cret@127.0.0.1:{}/", m.port), "--collection", "shop.orders"]));
    assert!(e.contains("the password holds a raw '?': percent-encode it as %3F") && !e.contains("se?c") && !e.contains("cret"), "{e}");
    // did you mean
    let e = err(&shardkey(&["analyze", "--uri", &rs(""), "--collection", "shop.order"]));
    assert!(e.contains("did you mean shop.orders?"), "{e}");
    let e = err(&shardkey(&["analyze", "--uri", &rs(""), "--collection", "shpo.orders"]));
    assert!(e.contains("database shpo holds no collection"), "{e}");
    // the URI's database counts for a bare collection name
    let uri = format!("mongodb://127.0.0.1:{}/shop?replicaSet=rs0", m.port);
    let v = json_ok(&shardkey(&["analyze", "--uri", &uri, "--collection", "orders", "--key", "{customerId: 1}", "--format", "json"]));
    assert_eq!(v["namespace"], "shop.orders");
    assert_eq!(v["inputs"]["documents"]["numDocsRead"], 200);
}

#[test]
fn unreachable_missing_empty_and_no_profile() {
    let port = common::free_port();
    let start = Instant::now();
    let o =
        shardkey(&["analyze", "--uri", &format!("mongodb://127.0.0.1:{port}/"), "--collection", "a.b", "--server-selection-timeout", "2"]);
    let took = start.elapsed();
    assert_eq!(o.status.code(), Some(2));
    assert!(took < Duration::from_secs(8), "gave up after {took:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("refused the connection"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1);

    let m = Mongod::start(Mode::Standalone);
    let client = m.client();
    rt().block_on(async {
        // Empty, with a schema: a validator requiring two fields, and an index.
        let db = client.database("app");
        db.create_collection("empty").validator(doc! {"$jsonSchema": {"required": ["tenantId", "createdAt"]}}).await.unwrap();
        db.collection::<Document>("empty").create_index(mongodb::IndexModel::builder().keys(doc! {"tenantId": 1}).build()).await.unwrap();
        let docs: Vec<Document> = (0..50).map(|i| doc! {"_id": i, "k": i % 3}).collect();
        client.database("app").collection::<Document>("c").insert_many(docs).await.unwrap();
    });
    let uri = m.uri();
    let o = shardkey(&["analyze", "--uri", &uri, "--collection", "app.nope", "--key", "{k: 1}"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("does not exist"));
    // An empty collection is advice, not an error (issue 29.7): candidates from its schema,
    // what could not be measured said, and the manual's hashed pre-split.
    let r = json_ok(&shardkey(&["analyze", "--uri", &uri, "--collection", "app.empty", "--format", "json"]));
    let keys: Vec<String> = r["candidates"].as_array().unwrap().iter().map(|c| c["key"].to_string()).collect();
    for want in [r#"{"_id":"hashed"}"#, r#"{"tenantId":1}"#, r#"{"createdAt":1}"#] {
        assert!(keys.contains(&want.to_string()), "{want} not in {keys:?}");
    }
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("holds no documents: cardinality, frequency, insert order and the data's spread cannot be measured, nor targeting"),
        "{notes}"
    );
    assert_eq!(r["recommendation"]["key"], json!({"_id": "hashed"}));
    assert!(
        r["recommendation"]["notes"].to_string().contains("pre-splits a hashed key into chunks on every shard"),
        "{}",
        r["recommendation"]
    );
    assert!(r["recommendation"]["caveats"].to_string().contains("nothing was measured"), "{}", r["recommendation"]);
    let o = shardkey(&["analyze", "--uri", &uri, "--collection", "nodot"]);
    assert_eq!(o.status.code(), Some(2));
    let r = json_ok(&shardkey(&[
        "analyze",
        "--uri",
        &uri,
        "--collection",
        "app.c",
        "--queries",
        "profile",
        "--key",
        "{k: 1}",
        "--format",
        "json",
    ]));
    assert_eq!(r["candidates"][0]["readDistribution"]["sampleSize"]["total"], 0);
    assert!(r["notes"].to_string().contains("(standalone): 0 operations on app.c; profiling level 0"), "{}", r["notes"]);
    // nothing asked, nothing found: a note, not an error
    let r = json_ok(&shardkey(&["analyze", "--uri", &uri, "--collection", "app.c", "--key", "{k: 1}", "--format", "json"]));
    assert!(r["notes"].to_string().contains("no query sample found"), "{}", r["notes"]);
}

/// Issue 12's parity check: a 60,000-document collection with a unique key, the whole
/// collection sampled: every value counted exactly, `isUnique` from the unique index, and
/// the monotonicity coefficient the server would compute, i.e. the Pearson correlation of
/// (position, recordId) over `find().hint({u: 1})` with `showRecordId`, to 10 decimals.
#[test]
fn whole_collection_is_exact_and_monotonicity_matches_the_record_ids() {
    use futures_util::TryStreamExt;
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    let n: i64 = 60_000;
    rt().block_on(async {
        let coll = client.database("app").collection::<Document>("u");
        // Evens in order, then the odds in a scrambled order: a correlation well inside (0, 1).
        let docs: Vec<Document> = (0..n).map(|i| doc! {"u": if i % 2 == 0 { i } else { n + (i * 7919) % n }, "pad": "x"}).collect();
        for chunk in docs.chunks(10_000) {
            coll.insert_many(chunk.to_vec()).await.unwrap();
        }
        coll.create_index(
            mongodb::IndexModel::builder()
                .keys(doc! {"u": 1})
                .options(mongodb::options::IndexOptions::builder().unique(true).build())
                .build(),
        )
        .await
        .unwrap();
    });
    // The server's view: recordIds in index order.
    let record_ids: Vec<f64> = rt().block_on(async {
        let coll = client.database("app").collection::<Document>("u");
        let mut cur = coll.find(doc! {}).hint(mongodb::options::Hint::Keys(doc! {"u": 1})).show_record_id(true).await.unwrap();
        let mut out = Vec::new();
        while let Some(d) = cur.try_next().await.unwrap() {
            out.push(match d.get("$recordId") {
                Some(mongodb::bson::Bson::Int64(r)) => *r as f64,
                other => panic!("recordId {other:?}"),
            });
        }
        out
    });
    assert_eq!(record_ids.len() as i64, n);
    let k = record_ids.len() as f64;
    let mean_x = (k - 1.0) / 2.0;
    let mean_y = record_ids.iter().sum::<f64>() / k;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (i, y) in record_ids.iter().enumerate() {
        let (dx, dy) = (i as f64 - mean_x, y - mean_y);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    let expected = ((sxy / (sxx * syy).sqrt()) * 1e10).round() / 1e10;
    assert!(expected > 0.1 && expected < 0.9, "the data should give a middling coefficient: {expected}");

    let uri = m.uri();
    let r = json_ok(&shardkey(&[
        "analyze",
        "--uri",
        &uri,
        "--collection",
        "app.u",
        "--key",
        "{u: 1}",
        "--sample-size",
        "60000",
        "--format",
        "json",
    ]));
    let kc = &cand(&r, "{u: 1}")["keyCharacteristics"];
    assert_eq!(kc["numDocsSampled"], 60_000);
    assert_eq!(kc["numDistinctValues"], 60_000);
    assert_eq!(kc["isUnique"], true);
    assert_eq!(kc["monotonicity"]["recordIdCorrelationCoefficient"].as_f64(), Some(expected));
    assert!(kc.get("sketch").is_none(), "counted exactly: {kc}");
}

/// Done-when 3 of the advice issue: orders bulk-loaded out of time order into a real
/// mongod (the recordIds follow the shuffled load), each `_id` an ObjectId made at the
/// order's creation time. The server's recordId monotonicity says "not monotonic" for
/// `createdAt` (computed here from `showRecordId` the way the server does); shardkey
/// keeps that number and reports the key as increasing with creation time, and warns
/// that every insert lands on one shard.
#[test]
fn a_date_key_loaded_out_of_order_is_increasing_with_creation_time() {
    use futures_util::TryStreamExt;
    use mongodb::bson::{oid::ObjectId, Bson, DateTime};
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    let n: u32 = 5_000;
    let t0: u32 = 1_717_200_000;
    rt().block_on(async {
        let coll = client.database("shop").collection::<Document>("orders");
        // A fixed shuffle (multiplier coprime with n) of creation times.
        let docs: Vec<Document> = (0..n)
            .map(|i| {
                let k = (i * 2_003) % n;
                let mut b = [0u8; 12];
                b[..4].copy_from_slice(&(t0 + k * 60).to_be_bytes());
                b[8..].copy_from_slice(&k.to_be_bytes());
                doc! {"_id": ObjectId::from_bytes(b), "createdAt": DateTime::from_millis((t0 + k * 60) as i64 * 1000), "customerId": format!("c{}", (k * 7_919) % 1_000)}
            })
            .collect();
        coll.insert_many(docs).await.unwrap();
        coll.create_index(mongodb::IndexModel::builder().keys(doc! {"createdAt": 1}).build()).await.unwrap();
    });
    // The server's coefficient: recordIds in createdAt index order.
    let rids: Vec<f64> = rt().block_on(async {
        let coll = client.database("shop").collection::<Document>("orders");
        let mut cur = coll.find(doc! {}).hint(mongodb::options::Hint::Keys(doc! {"createdAt": 1})).show_record_id(true).await.unwrap();
        let mut out = Vec::new();
        while let Some(d) = cur.try_next().await.unwrap() {
            if let Some(Bson::Int64(r)) = d.get("$recordId") {
                out.push(*r as f64);
            }
        }
        out
    });
    let k = rids.len() as f64;
    let (mx, my) = ((k - 1.0) / 2.0, rids.iter().sum::<f64>() / k);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (i, y) in rids.iter().enumerate() {
        sxy += (i as f64 - mx) * (y - my);
        sxx += (i as f64 - mx).powi(2);
        syy += (y - my).powi(2);
    }
    let server_r = sxy / (sxx * syy).sqrt();
    assert!(server_r.abs() < 0.7, "the shuffled load hides the order from recordIds: {server_r}");

    let uri = m.uri();
    let r = json_ok(&shardkey(&[
        "analyze",
        "--uri",
        &uri,
        "--collection",
        "shop.orders",
        "--key",
        "{createdAt: 1}",
        "--key",
        "{customerId: 1}",
        "--format",
        "json",
    ]));
    let c = cand(&r, "{createdAt: 1}");
    assert_eq!(c["keyCharacteristics"]["monotonicity"]["type"], "not monotonic");
    let rid = c["keyCharacteristics"]["monotonicity"]["recordIdCorrelationCoefficient"].as_f64().unwrap();
    assert!((rid - server_r).abs() < 1e-9, "the server's number, unchanged: {rid} vs {server_r}");
    assert_eq!(c["insertOrder"]["type"], "increasing");
    assert_eq!(c["insertOrder"]["basis"], "ObjectId creation time");
    assert_eq!(c["insertOrder"]["creationTimeCorrelationCoefficient"].as_f64(), Some(1.0));
    assert_eq!(c["insertOrder"]["numDocsWithCreationTime"], n);
    let words: Vec<&str> = c["reasons"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
    assert!(
        words.iter().any(|w| w.starts_with("increasing key (correlation 1.00 with the creation time")
            && w.contains("the load order hides it")
            && w.contains("one shard takes 100% of inserts")),
        "{words:?}"
    );
    assert!(c["score"].as_u64().unwrap() <= 50);
    assert!(cand(&r, "{customerId: 1}")["score"].as_u64() > c["score"].as_u64());
}

/// `shardkey sample` against the real mongod 6.0.5: the profiler samples for the duration
/// (every operation at --rate 1), the profiled operations land in the --out file, `analyze`
/// reads them, and the previous profiler settings come back, also after Ctrl-C (SIGINT).
/// Without --change-server-settings nothing is touched.
#[test]
fn sample_profiles_for_a_while_and_restores_the_settings() {
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    let uri = m.uri();
    let profile = |cmd: Document| rt().block_on(async { client.database("app").run_command(cmd).await }).unwrap();
    let settings = || {
        let r = profile(doc! {"profile": -1});
        (r.get_i32("was").unwrap(), r.get("slowms").cloned(), r.get("sampleRate").cloned())
    };
    rt().block_on(async {
        let coll = client.database("app").collection::<Document>("s");
        let docs: Vec<Document> = (0..100).map(|i| doc! {"a": i, "b": i % 7}).collect();
        coll.insert_many(docs).await.unwrap();
    });
    // A starting point that is not the default, to see it restored exactly.
    profile(doc! {"profile": 0, "slowms": 250, "sampleRate": 0.5});
    let before = settings();

    // Without consent: refused, nothing changed.
    let o = shardkey(&["sample", "--uri", &uri, "--collection", "app.s", "--duration", "2s"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--change-server-settings"));
    assert_eq!(settings(), before);

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sampled.ndjson");
    let child = Command::new(env!("CARGO_BIN_EXE_shardkey"))
        .args([
            "sample",
            "--uri",
            &uri,
            "--collection",
            "app.s",
            "--rate",
            "1",
            "--duration",
            "6s",
            "--change-server-settings",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // While it samples: the profiler is on, and 20 finds by a run.
    let t0 = Instant::now();
    while settings().0 != 1 && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(settings().0, 1, "the profiler is on while sampling");
    rt().block_on(async {
        use futures_util::TryStreamExt;
        let coll = client.database("app").collection::<Document>("s");
        for i in 0..20 {
            let _: Vec<Document> = coll.find(doc! {"a": i}).await.unwrap().try_collect().await.unwrap();
        }
    });
    let o = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("profiler restored: level 0, slowms 250, sampleRate 0.5"), "{text}");
    assert_eq!(settings(), before, "restored exactly");
    let lines = std::fs::read_to_string(&out).unwrap();
    let finds = lines.lines().filter(|l| l.contains("\"find\":\"s\"")).count();
    assert!(finds >= 20, "{finds} profiled finds in {}", out.display());
    // The file reads as a query log: every find on {a: eq} reaches one shard for {a: 1}.
    let r = json_ok(&shardkey(&[
        "analyze",
        "--uri",
        &uri,
        "--collection",
        "app.s",
        "--key",
        "{a: 1}",
        "--queries",
        out.to_str().unwrap(),
        "--format",
        "json",
    ]));
    let rd = &cand(&r, "{a: 1}")["readDistribution"];
    assert!(rd["sampleSize"]["find"].as_u64().unwrap() >= 20, "{rd}");
    assert_eq!(rd["percentageOfSingleShardReads"], 100.0);

    // Ctrl-C ends it early, and the settings still come back.
    let child = Command::new(env!("CARGO_BIN_EXE_shardkey"))
        .args([
            "sample",
            "--uri",
            &uri,
            "--collection",
            "app.s",
            "--duration",
            "10m",
            "--change-server-settings",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while settings().0 != 1 && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(settings().0, 1);
    let t1 = Instant::now();
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let o = child.wait_with_output().unwrap();
    // README "Exit codes": 130, the window cut short; the file is still written.
    assert_eq!(o.status.code(), Some(130));
    assert!(out.is_file());
    assert!(t1.elapsed() < Duration::from_secs(20), "ended on Ctrl-C");
    assert!(String::from_utf8_lossy(&o.stdout).contains("(interrupted)"));
    assert_eq!(settings(), before, "restored after Ctrl-C");
}
