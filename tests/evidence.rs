//! Issue 47 as a DBA meets it on a real mongod: too little evidence gives no commands, and
//! what the report says of the evidence it rests on.

mod common;

use common::{assert_schema, json_ok, rt, shardkey, Mode, Mongod};
use mongodb::bson::{doc, Document};

/// 5,000 orders: `orderNumber` increasing, `customerId` over 400 customers.
fn seed_orders(m: &Mongod) {
    let c = m.client().database("shop").collection::<Document>("orders");
    rt().block_on(async {
        let docs: Vec<Document> = (0..5_000).map(|i| doc! {"orderNumber": i, "customerId": (i * 7919) % 400, "status": "paid"}).collect();
        c.insert_many(docs).await.unwrap();
    });
}

#[test]
fn ten_documents_give_no_commands() {
    let m = Mongod::start(Mode::Standalone);
    seed_orders(&m);
    let uri = m.uri();
    let base = ["analyze", "--uri", &uri, "--collection", "shop.orders", "--key", "{orderNumber: 1}", "--key", "{customerId: 1}"];
    let run = |more: &[&str]| shardkey(&[&base[..], more].concat());

    // The first screen says it, with the numbers and what to run; no command; exit 0.
    let o = run(&["--sample-size", "10", "--color", "never"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    // The first screen, its wrapped lines joined.
    let first_screen: String = text.lines().take(6).map(str::trim).collect::<Vec<_>>().join(" ");
    assert!(first_screen.contains("not enough evidence for an answer, so no commands"), "{text}");
    // A 10-document sample of 5,000 has a Bernoulli size around 10; the count said is the sample's own.
    assert!(first_screen.contains(" of 5,000 documents sampled, fewer than the 1,000 a verdict needs"), "{text}");
    assert!(first_screen.contains("--sample-size 1000 or more"), "{text}");
    // No command as the answer (a candidate's details may still say which index it would need).
    assert!(!text.contains("sh.shardCollection") && !first_screen.contains("createIndex"), "{text}");

    // The JSON: `evidence` with the numbers, no `recommendation`.
    let r = json_ok(&run(&["--sample-size", "10", "--format", "json", "-q"]));
    assert_schema("analyze", &r);
    assert!(r.get("recommendation").is_none(), "{}", r["recommendation"]);
    let e = &r["evidence"];
    assert_eq!((e["sufficient"].as_bool(), e["numDocsTotal"].as_u64(), e["minDocs"].as_u64()), (Some(false), Some(5_000), Some(1_000)));
    assert_eq!(e["numDocsSampled"], r["inputs"]["documents"]["numDocsRead"]);
    assert!(e["numDocsSampled"].as_u64().unwrap() < 1_000);

    // A gate does not pass on it: exit 1 (README "Exit codes").
    let o = run(&["--sample-size", "10", "--fail-under", "1", "-q"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not enough evidence to pass --fail-under"));

    // The default sample (the collection whole, 5,000 < 100,000) is enough: the commands.
    let r = json_ok(&run(&["--format", "json", "-q"]));
    assert!(r.get("evidence").is_none());
    assert!(r["recommendation"]["commands"].to_string().contains("sh.shardCollection"), "{}", r["recommendation"]);
}

/// `n` finds whose profiler entries carry a 200-character filter value (about 1 KB each).
fn padded_finds(client: &mongodb::Client, n: usize) {
    let coll = client.database("shop").collection::<Document>("orders");
    rt().block_on(async {
        for i in 0..n {
            coll.find_one(doc! {"customerId": (i % 50) as i64, "pad": "x".repeat(200)}).await.unwrap();
        }
    });
}

/// README's least-privilege roles (`read` on the database + `clusterMonitor`) cannot run
/// collStats on system.profile; the profiler's fullness is still read (listCollections and
/// an aggregation), level 1 is said to hold only slow operations, and a user without the
/// profiler is pointed at the narrowest role, never dbAdmin.
#[test]
fn the_readme_roles_read_the_profiler_state() {
    let m = Mongod::start(Mode::StandaloneAuth);
    let root = m.root_client();
    let shop = root.database("shop");
    rt().block_on(async {
        let docs: Vec<Document> = (0..2_000).map(|i| doc! {"orderNumber": i, "customerId": (i % 50) as i64}).collect();
        shop.collection::<Document>("orders").insert_many(docs).await.unwrap();
        shop.run_command(doc! {"profile": 2}).await.unwrap();
    });
    // Fill the 1 MiB profiler past its maximum, then run it as production does: level 1, slowms 100.
    padded_finds(&root, 3_000);
    rt().block_on(async {
        shop.run_command(doc! {"profile": 1, "slowms": 100}).await.unwrap();
        let admin = root.database("admin");
        admin
            .run_command(doc! {"createUser": "dba", "pwd": "dbapw-123", "roles": [{"role": "read", "db": "shop"}, "clusterMonitor"]})
            .await
            .unwrap();
        admin.run_command(doc! {"createUser": "reader", "pwd": "readerpw-9", "roles": [{"role": "read", "db": "shop"}]}).await.unwrap();
    });
    // The server's own figures, read as root.
    let stats = rt().block_on(async { shop.run_command(doc! {"collStats": "system.profile"}).await.unwrap() });
    let num = |k: &str| {
        stats.get(k).and_then(|v| v.as_i64().or_else(|| v.as_i32().map(i64::from)).or_else(|| v.as_f64().map(|f| f as i64))).unwrap()
    };
    let (size, max, count) = (num("size"), num("maxSize"), num("count"));
    assert!(size + 2 * (size / count) >= max, "the profiler is not full: {stats}");

    let uri = |user: &str, pw: &str| format!("mongodb://{user}:{pw}@127.0.0.1:{}/?authSource=admin&directConnection=true", m.port);
    let analyze = |u: &str| {
        json_ok(&shardkey(&["analyze", "--uri", u, "--collection", "shop.orders", "--key", "{customerId: 1}", "--format", "json", "-q"]))
    };
    // The user cannot run collStats there (what the fallback is for).
    let dba = uri("dba", "dbapw-123");
    let as_dba = rt().block_on(async { mongodb::Client::with_uri_str(&dba).await.unwrap() });
    let refused = rt().block_on(async { as_dba.database("shop").run_command(doc! {"collStats": "system.profile"}).await });
    assert!(refused.unwrap_err().to_string().contains("not authorized"), "collStats on system.profile was allowed");

    let r = analyze(&dba);
    let p = &r["inputs"]["queries"]["members"][0]["profiler"];
    assert_eq!(p["full"], true, "{p}");
    assert!(p.get("fullUnknown").is_none(), "{p}");
    // The same figures as the server's collStats: bytes, maximum, entries.
    assert_eq!((p["sizeBytes"].as_i64(), p["maxSizeBytes"].as_i64(), p["entries"].as_i64()), (Some(size), Some(max), Some(count)), "{p}");
    let notes = r["notes"].to_string();
    assert!(notes.contains("full, older operations are gone"), "{notes}");
    assert!(notes.contains("level 1 holds only operations slower than 100 ms: the workload seen is its slow part"), "{notes}");

    // Without the profiler's find: the narrowest role said, never dbAdmin.
    let r = analyze(&uri("reader", "readerpw-9"));
    let notes = r["notes"].to_string();
    assert!(notes.contains("the read-only clusterMonitor role grants find on it"), "{notes}");
    assert!(notes.contains(r#"actions: [\"find\", \"collStats\"]"#), "{notes}");
    assert!(!notes.contains("dbAdmin"), "{notes}");
    assert!(!notes.contains("readerpw-9"));
    // The caveat names the cause (privileges), not "no sampled operation".
    let caveats = r["recommendation"]["caveats"].to_string();
    assert!(caveats.contains("targeting was not measured (system.profile could not be read: the notes say which privilege"), "{caveats}");
    // plan reads the profiler by default: unreadable, it says so, not that it holds none.
    let plan = json_ok(&shardkey(&["plan", "--uri", &uri("reader", "readerpw-9"), "--database", "shop", "--format", "json", "-q"]));
    let notes = plan["transactions"]["notes"].to_string();
    assert!(notes.contains("no transaction found because none could be read"), "{notes}");
    assert!(!notes.contains("the profiler holds none"), "{notes}");
    // Asked for by name (README "Privileges"): what was asked cannot be read, one line, exit 2.
    let o = shardkey(&["analyze", "--uri", &uri("reader", "readerpw-9"), "--collection", "shop.orders", "--queries", "profile", "-q"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("system.profile not read") && err.lines().count() == 1 && !err.contains("readerpw-9"), "{err}");
}

/// `shardkey sample` warns when the capped profiler wraps during its window, and prints the
/// profiler's capacity at the entry size it measured.
#[test]
fn sample_warns_when_the_profiler_wraps() {
    let m = Mongod::start(Mode::Standalone);
    seed_orders(&m);
    let client = m.client();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sampled.ndjson");
    let uri = m.uri();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_shardkey"))
        .args(["sample", "--uri", &uri, "--collection", "shop.orders", "--rate", "1", "--duration", "8s", "--change-server-settings"])
        .args(["--out", out.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the profiler is on: enough entries to wrap 1 MiB several times over.
    let level =
        || rt().block_on(async { client.database("shop").run_command(doc! {"profile": -1}).await.unwrap() }).get_i32("was").unwrap();
    let t0 = std::time::Instant::now();
    while level() != 1 && t0.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    padded_finds(&client, 3_000);
    let o = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("warning: the profiler wrapped during the window"), "{text}");
    // The capacity from the entries' measured size: 1 MiB over their mean, as the file holds them.
    let lines = std::fs::read_to_string(&out).unwrap();
    assert!(lines.lines().count() < 3_000, "the file cannot hold what the profiler dropped");
    assert!(text.contains("system.profile (1.0 MiB) holds about "), "{text}");
}

/// `--server-selection-timeout 5` fails in about 5 s, also with a replica set name and
/// several seeds (their set names are asked meanwhile, not after: it took 11 s).
#[test]
fn the_selection_timeout_is_the_wait() {
    let (a, b) = (common::free_port(), common::free_port());
    let uri = format!("mongodb://127.0.0.1:{a},127.0.0.1:{b}/?replicaSet=rs0");
    let t = std::time::Instant::now();
    let o = shardkey(&["analyze", "--uri", &uri, "--collection", "shop.orders", "--server-selection-timeout", "2", "-q"]);
    let took = t.elapsed().as_secs_f64();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("refused the connection"), "{}", String::from_utf8_lossy(&o.stderr));
    assert!((2.0..3.5).contains(&took), "took {took:.1} s for a 2 s timeout");
}

/// 3,000 orders in shop.orders, acknowledged by every member: each holds them before a run
/// reads there.
fn orders_on_every_member(set: &common::ReplSet) {
    let docs: Vec<Document> = (0..3_000).map(|i| doc! {"orderNumber": i, "customerId": i % 40}).collect();
    let every = mongodb::options::WriteConcern::builder().w(mongodb::options::Acknowledgment::Nodes(set.members.len() as u32)).build();
    common::block(set.client().database("shop").collection::<Document>("orders").insert_many(docs).write_concern(every)).unwrap();
}

/// The report names the member the sample was read on (host:port and state, text and JSON),
/// and says when the read preference fell back from a secondary to the primary.
#[test]
fn the_member_each_read_ran_on_is_named() {
    let set = common::ReplSet::start(2, false, false);
    orders_on_every_member(&set);
    let ports: Vec<u16> = set.members.iter().map(|m| m.port).collect();
    let uri = set.uri("");
    let analyze = || {
        json_ok(&shardkey(&["analyze", "--uri", &uri, "--collection", "shop.orders", "--key", "{customerId: 1}", "--format", "json", "-q"]))
    };
    let read_on = |r: &serde_json::Value| r["inputs"]["documents"]["readOn"].as_array().unwrap().clone();

    // Both members up: read on the secondary, as secondaryPreferred prefers.
    let r = analyze();
    let on = read_on(&r);
    assert_eq!(on.len(), 1, "{on:?}");
    assert_eq!(on[0]["host"], format!("127.0.0.1:{}", ports[1]));
    assert_eq!((on[0]["role"].as_str(), on[0]["readPreference"].as_str()), (Some("secondary"), Some("secondaryPreferred")));
    assert!(on[0].get("fellBack").is_none());

    // The secondary out of reach for reads (hidden: the driver no longer selects it, as when it is down):
    // the read falls back to the primary, and the report says so.
    let primary = set.member_client(0);
    rt().block_on(async {
        let admin = primary.database("admin");
        let mut cfg = admin.run_command(doc! {"replSetGetConfig": 1}).await.unwrap().get_document("config").unwrap().clone();
        let version = cfg.get_i32("version").unwrap();
        cfg.insert("version", version + 1);
        let mut members = cfg.get_array("members").unwrap().clone();
        let m1 = members[1].as_document_mut().unwrap();
        m1.insert("hidden", true);
        m1.insert("priority", 0);
        cfg.insert("members", members);
        admin.run_command(doc! {"replSetReconfig": cfg}).await.unwrap();
    });
    let r = analyze();
    let on = read_on(&r);
    assert_eq!(on.len(), 1, "{on:?}");
    assert_eq!((on[0]["host"].as_str(), on[0]["role"].as_str()), (Some(format!("127.0.0.1:{}", ports[0]).as_str()), Some("primary")));
    let said = format!("the documents were read on the primary 127.0.0.1:{}: no secondary was available", ports[0]);
    assert!(on[0]["fellBack"].as_str().unwrap().starts_with(&said), "{}", on[0]);
    assert!(r["notes"].to_string().contains(&said), "{}", r["notes"]);
    // The text's first line names it.
    let o = shardkey(&["analyze", "--uri", &uri, "--collection", "shop.orders", "--key", "{customerId: 1}", "--color", "never", "-q"]);
    let text = String::from_utf8_lossy(&o.stdout);
    let first: Vec<&str> = text.lines().take(2).map(str::trim).collect();
    assert!(first.join(" ").contains(&format!("read on 127.0.0.1:{} (primary)", ports[0])), "{text}");
}

/// A level-1 profiler holds the slow part of the workload: the answer says so beside the
/// recommendation (a DBA's trial: the default run recommended a key from 126 slow reads of
/// one shape). 40 reads made slow by hand (`$where` sleeping 30 ms, slowms 20) and 200 fast
/// ones: the profiler keeps the 40, and the caveat counts them; at level 2 it is not said.
#[test]
fn a_level_one_profiler_is_said_to_be_the_slow_part() {
    let m = Mongod::start(Mode::Standalone);
    seed_orders(&m);
    let db = m.client().database("shop");
    let c = db.collection::<Document>("orders");
    let uri = m.uri();
    let analyze = || json_ok(&shardkey(&["analyze", "--uri", &uri, "--collection", "shop.orders", "--format", "json", "-q"]));
    // Absent when there is none.
    let caveats = |r: &serde_json::Value| -> Vec<String> {
        r["recommendation"]["caveats"].as_array().map(|a| a.iter().map(|x| x.as_str().unwrap().to_string()).collect()).unwrap_or_default()
    };
    rt().block_on(async {
        db.run_command(doc! {"profile": 1, "slowms": 20}).await.unwrap();
        for i in 0..40 {
            c.find_one(doc! {"customerId": i % 400, "$where": "sleep(30) || true"}).await.unwrap();
        }
        for i in 0..200 {
            c.find_one(doc! {"orderNumber": i}).await.unwrap();
        }
    });
    let r = analyze();
    let said = caveats(&r);
    assert!(
        said.first().is_some_and(|c| c.starts_with(
            "this choice rests on the slow part of the workload only: the profiler is at level 1 (40 operations slower than 20 ms)"
        )),
        "{said:?}"
    );
    // The same data, every operation profiled: no such caveat.
    rt().block_on(async {
        db.run_command(doc! {"profile": 0}).await.unwrap();
        db.collection::<Document>("system.profile").drop().await.unwrap();
        db.run_command(doc! {"profile": 2}).await.unwrap();
        for i in 0..200 {
            c.find_one(doc! {"orderNumber": i}).await.unwrap();
        }
    });
    let r = analyze();
    assert!(!caveats(&r).iter().any(|c| c.contains("slow part")), "{:?}", caveats(&r));
}

/// A collection the workload only inserts into (an event store): the log is read, and the
/// report says the sampled operations are all inserts, not that none was sampled or that a
/// log would help. 300 inserts one at a time, every operation logged (slowms 0): the counts
/// are the application's.
#[test]
fn an_insert_only_workload_is_said_as_such() {
    let m = Mongod::start(Mode::Standalone);
    let db = m.client().database("shop");
    let c = db.collection::<Document>("events");
    rt().block_on(async {
        db.run_command(doc! {"profile": 0, "slowms": 0}).await.unwrap();
        for i in 0..300 {
            c.insert_one(doc! {"deviceId": i % 30, "seq": i, "kind": "ping"}).await.unwrap();
        }
    });
    let log = m.dir.path().join("mongod.log");
    let log = log.to_str().unwrap();
    let uri = m.uri();
    let w = json_ok(&shardkey(&["workload", "--queries", log, "--namespace", "shop.events", "--format", "json", "-q"]));
    assert_eq!(w["namespaces"][0]["operations"], serde_json::json!({"insert": 300}), "{w}");
    let r = json_ok(&shardkey(&["analyze", "--uri", &uri, "--collection", "shop.events", "--queries", log, "--format", "json", "-q"]));
    let text = r.to_string();
    assert!(text.contains("the sampled operations on this collection are all inserts"), "{text}");
    assert!(!text.contains("no sampled operation on this collection"), "{text}");
    let caveats = r["recommendation"]["caveats"].as_array().unwrap();
    assert!(caveats[0].as_str().unwrap().starts_with("this choice rests on the data and the inserts"), "{caveats:?}");
}

/// Two secondaries: the driver picks one per operation under secondaryPreferred, so a run's
/// reads (the pre-scan, the sample, its counts) could come from both, and identical runs
/// differ (a trial: 25 then 22 candidates). Every run reads on one secondary alone.
#[test]
fn a_run_reads_on_one_member_of_several_secondaries() {
    let set = common::ReplSet::start(3, false, false);
    orders_on_every_member(&set);
    let secondaries: Vec<String> = set.members[1..].iter().map(|m| format!("127.0.0.1:{}", m.port)).collect();
    let uri = set.uri("");
    for run in 0..4 {
        let r = json_ok(&shardkey(&["analyze", "--uri", &uri, "--collection", "shop.orders", "--format", "json", "-q"]));
        let on = r["inputs"]["documents"]["readOn"].as_array().unwrap().clone();
        assert_eq!(on.len(), 1, "run {run}: {on:?}");
        assert!(secondaries.iter().any(|s| on[0]["host"] == s.as_str()), "run {run}: {on:?}");
        assert_eq!((on[0]["role"].as_str(), on[0]["readPreference"].as_str()), (Some("secondary"), Some("secondaryPreferred")));
    }
}
