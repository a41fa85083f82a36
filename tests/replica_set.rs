//! Live analysis on replica sets of several members (real mongod 6.0.5 processes):
//! the profiler is per member, so the workload is every member's. Expected counts are
//! the operations each test itself runs on each member.

mod common;

use common::{assert_schema, block, json_ok, rt, shardkey, Mode, Mongod, ReplSet};
use mongodb::bson::{doc, Document};
use mongodb::bson::{oid::ObjectId, spec::BinarySubtype, Binary, Bson, Timestamp};
use mongodb::Client;
use serde_json::Value;

/// Profile every operation of `db` on member `i` (the level is per mongod, per database).
fn profile_all(set: &ReplSet, i: usize, db: &str) {
    let c = set.member_client(i);
    block(c.database(db).run_command(doc! {"profile": 2, "slowms": -1})).unwrap();
}

/// `n` finds by `field` on a client; results read in full (one batch: no getMore).
fn finds(c: &Client, db: &str, field: &str, n: usize) {
    rt().block_on(async {
        let coll = c.database(db).collection::<Document>("orders");
        for i in 0..n {
            let mut cur = coll.find(doc! {field: (i % 20) as i32}).await.unwrap();
            while cur.advance().await.unwrap() {}
        }
    });
}

fn seed(set: &ReplSet, db: &str) {
    let c = set.client();
    rt().block_on(async {
        let docs: Vec<Document> = (0..400).map(|i| doc! {"_id": i, "customerId": i % 20, "status": i % 5}).collect();
        c.database(db).collection::<Document>("orders").insert_many(docs).await.unwrap();
        // Every member holds the documents before the test reads there.
        c.database(db)
            .run_command(doc! {"insert": "marker", "documents": [{"_id": 1}], "writeConcern": {"w": set.members.len() as i32}})
            .await
            .unwrap();
    });
}

fn member(v: &Value, port: u16) -> &Value {
    let host = format!("127.0.0.1:{port}");
    v["inputs"]["queries"]["members"]
        .as_array()
        .unwrap_or_else(|| panic!("no members in {}", v["inputs"]["queries"]))
        .iter()
        .find(|m| m["host"] == host.as_str())
        .unwrap_or_else(|| panic!("member {host} not in {}", v["inputs"]["queries"]["members"]))
}

#[test]
fn a_two_member_set_is_read_on_the_primary_and_the_secondary() {
    let set = ReplSet::start(2, false, false);
    seed(&set, "shop");
    profile_all(&set, 0, "shop");
    profile_all(&set, 1, "shop");
    // The application reads by customer on the primary, a dashboard by status on the secondary.
    finds(&set.client(), "shop", "customerId", 120);
    finds(&set.member_client(1), "shop", "status", 30);
    // Five reads in small batches: each is one find and its getMores, one read.
    let c = set.client();
    rt().block_on(async {
        for _ in 0..5 {
            let mut cur = c.database("shop").collection::<Document>("orders").find(doc! {"customerId": 3}).batch_size(5).await.unwrap();
            while cur.advance().await.unwrap() {}
        }
    });

    let o = shardkey(&["analyze", "--uri", &set.uri(""), "--collection", "shop.orders", "--format", "json"]);
    let v = json_ok(&o);
    assert_schema("analyze", &v);
    // The operations this test ran on each member (the secondary's profiler also holds the
    // primary's mirrored reads: not the application's, not counted).
    let (on_primary, on_secondary) = (125, 30);
    assert_eq!(v["inputs"]["queries"]["queriesUsed"].as_u64(), Some(on_primary + on_secondary), "{}", v["inputs"]["queries"]);
    let p = member(&v, set.members[0].port);
    assert_eq!((p["role"].as_str(), p["operations"].as_u64()), (Some("primary"), Some(on_primary)), "{p}");
    assert_eq!(p["profiler"]["level"], 2);
    assert_eq!(p["profiler"]["full"], false);
    let s = member(&v, set.members[1].port);
    assert_eq!((s["role"].as_str(), s["operations"].as_u64()), (Some("secondary"), Some(on_secondary)), "{s}");
    assert!(s["from"].as_str().is_some() && s["to"].as_str().is_some(), "{s}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains(&format!("system.profile of 127.0.0.1:{} (primary): {on_primary} operations on shop.orders", set.members[0].port)),
        "{notes}"
    );

    // directConnection=true: that member's profiler alone, the other named.
    let direct = format!("mongodb://127.0.0.1:{}/?directConnection=true", set.members[1].port);
    let v = json_ok(&shardkey(&["analyze", "--uri", &direct, "--collection", "shop.orders", "--format", "json"]));
    assert_eq!(v["inputs"]["queries"]["members"].as_array().unwrap().len(), 1);
    assert_eq!(member(&v, set.members[1].port)["operations"].as_u64(), Some(on_secondary));
    assert!(v["notes"].to_string().contains(&format!("not 127.0.0.1:{}'s", set.members[0].port)), "{}", v["notes"]);

    // Only the primary profiles (the usual case): its operations are read, the secondary says why it holds none.
    let c0 = set.member_client(1);
    block(c0.database("shop").run_command(doc! {"profile": 0})).unwrap();
    let v = json_ok(&shardkey(&["analyze", "--uri", &set.uri(""), "--collection", "shop.orders", "--format", "json"]));
    assert_eq!(member(&v, set.members[1].port)["profiler"]["level"], 0);
    assert!(v["inputs"]["queries"]["queriesUsed"].as_u64().unwrap() >= on_primary + on_secondary);

    // plan reads every member too: transactions run on the primary.
    let c = set.client();
    rt().block_on(async {
        for t in 0..12 {
            let mut s = c.start_session().await.unwrap();
            s.start_transaction().await.unwrap();
            let orders = c.database("shop").collection::<Document>("orders");
            let mut cur = orders.find(doc! {"customerId": t % 20}).session(&mut s).await.unwrap();
            while cur.advance(&mut s).await.unwrap() {}
            let customers = c.database("shop").collection::<Document>("marker");
            let mut cur = customers.find(doc! {"_id": 1}).session(&mut s).await.unwrap();
            while cur.advance(&mut s).await.unwrap() {}
            s.commit_transaction().await.unwrap();
        }
    });
    let o = shardkey(&["plan", "--uri", &set.uri(""), "--database", "shop", "--queries", "profile", "--format", "json"]);
    let v = json_ok(&o);
    assert_eq!(v["transactions"]["found"], 12, "{}", v["transactions"]);
}

#[test]
fn a_hidden_member_a_full_profiler_and_a_user_without_dbadmin() {
    let set = ReplSet::start(3, true, true);
    seed(&set, "shop");
    for i in 0..3 {
        profile_all(&set, i, "shop");
    }
    finds(&set.client(), "shop", "customerId", 40);
    finds(&set.member_client(1), "shop", "status", 10);
    // Reports run on the hidden member, which no driver topology shows.
    finds(&set.member_client(2), "shop", "customerId", 25);
    let v = json_ok(&shardkey(&["analyze", "--uri", &set.uri("&authSource=admin"), "--collection", "shop.orders", "--format", "json"]));
    let counts: Vec<u64> = vec![40, 10, 25];
    assert_eq!(v["inputs"]["queries"]["queriesUsed"].as_u64(), Some(counts.iter().sum()), "{}", v["inputs"]["queries"]);
    let h = member(&v, set.members[2].port);
    assert_eq!((h["role"].as_str(), h["operations"].as_u64()), (Some("hidden"), Some(counts[2])), "{h}");
    assert_eq!(member(&v, set.members[1].port)["operations"].as_u64(), Some(counts[1]));
    assert!(!String::from_utf8_lossy(&serde_json::to_vec(&v).unwrap()).contains("rootpw-123"));

    // A 1 MB profiler that wrapped: the primary of `big` holds only its latest entries.
    profile_all(&set, 0, "big");
    let c = set.client();
    rt().block_on(async {
        let coll = c.database("big").collection::<Document>("orders");
        coll.insert_many((0..2000).map(|i| doc! {"_id": i, "customerId": i % 50})).await.unwrap();
        for i in 0..4000 {
            coll.find_one(doc! {"customerId": i % 50, "pad": "x".repeat(200)}).await.unwrap();
        }
    });
    // What the profiler still holds, counted on the server (not by the tool).
    let held = block(
        set.member_client(0)
            .database("big")
            .collection::<Document>("system.profile")
            .count_documents(doc! {"ns": "big.orders", "op": "query"}),
    )
    .unwrap();
    assert!(held < 4000, "the profiler did not wrap: {held}");
    let o = shardkey(&["analyze", "--uri", &set.uri("&authSource=admin"), "--collection", "big.orders", "--format", "json"]);
    let v = json_ok(&o);
    let p = member(&v, set.members[0].port);
    assert_eq!(p["profiler"]["full"], true, "{p}");
    // The tool's own commands on the member (profiler settings, collStats) push a few more out.
    let read = p["operations"].as_u64().unwrap();
    assert!(read <= held && read + 10 >= held, "read {read}, held {held}: {p}");
    assert!(v["notes"].to_string().contains("full, older operations are gone"), "{}", v["notes"]);

    // Beside it a secondary's profiler, not full, with reads of its own: the members' windows
    // differ (the primary's holds only its latest operations), said beside the answer.
    profile_all(&set, 1, "big");
    finds(&set.member_client(1), "big", "customerId", 40);
    let v = json_ok(&shardkey(&["analyze", "--uri", &set.uri("&authSource=admin"), "--collection", "big.orders", "--format", "json"]));
    assert_eq!(member(&v, set.members[1].port)["profiler"]["full"], false, "{v:#}");
    let caveats = v["recommendation"]["caveats"].to_string();
    let primary = format!("the profiler of 127.0.0.1:{} (primary) was full: older operations are gone there", set.members[0].port);
    assert!(caveats.contains(&primary), "{caveats}");

    // A user who may read the data but not the profiler: every member named, with the role that would.
    block(c.database("admin").run_command(doc! {"createUser": "reader", "pwd": "readerpw-9", "roles": [{"role": "read", "db": "shop"}]}))
        .unwrap();
    let hosts: Vec<String> = set.members.iter().map(|m| format!("127.0.0.1:{}", m.port)).collect();
    let uri = format!("mongodb://reader:readerpw-9@{}/?replicaSet=rsm&authSource=admin", hosts.join(","));
    let o = shardkey(&["analyze", "--uri", &uri, "--collection", "shop.orders", "--format", "json"]);
    let v = json_ok(&o);
    let notes = v["notes"].to_string();
    for h in &hosts[..2] {
        assert!(notes.contains(&format!("system.profile of {h}")), "{h} not named: {notes}");
    }
    assert!(notes.contains("the read-only clusterMonitor role grants find on it") && !notes.contains("dbAdmin"), "{notes}");
    assert!(!notes.contains("readerpw-9"));
}

#[test]
fn every_shards_members_from_the_config_servers() {
    // Two shards (each a replica set; no mongos can run here) and the config servers' metadata.
    let (a, b, cfg) = (Mongod::start(Mode::ReplicaSet), Mongod::start(Mode::ReplicaSet), Mongod::start(Mode::ConfigServer));
    let uuid = Binary { subtype: BinarySubtype::Uuid, bytes: (1..=16).collect() };
    let ts = |i| Timestamp { time: 1_700_000_000, increment: i };
    let cc = cfg.client();
    rt().block_on(async {
        let config = cc.database("config");
        config
            .collection::<Document>("shards")
            .insert_many(vec![
                doc! {"_id": "shA", "host": format!("rs0/127.0.0.1:{}", a.port), "state": 1},
                doc! {"_id": "shB", "host": format!("rs0/127.0.0.1:{}", b.port), "state": 1},
            ])
            .await
            .unwrap();
        config
            .collection::<Document>("collections")
            .insert_one(doc! {"_id": "shop.orders", "lastmodEpoch": ObjectId::new(), "lastmod": mongodb::bson::DateTime::now(),
            "timestamp": ts(9), "uuid": uuid.clone(), "key": {"customerId": 1}, "unique": false})
            .await
            .unwrap();
        config
            .collection::<Document>("chunks")
            .insert_many(vec![
                doc! {"_id": ObjectId::new(), "uuid": uuid.clone(), "min": {"customerId": Bson::MinKey}, "max": {"customerId": 10},
                "shard": "shA", "lastmod": ts(1)},
                doc! {"_id": ObjectId::new(), "uuid": uuid.clone(), "min": {"customerId": 10}, "max": {"customerId": Bson::MaxKey},
                "shard": "shB", "lastmod": ts(2)},
            ])
            .await
            .unwrap();
    });
    // Each shard holds its chunk's documents and profiles what it serves.
    for (m, range, n) in [(&a, 0..10, 20), (&b, 10..20, 15)] {
        let c = m.client();
        rt().block_on(async {
            let docs: Vec<Document> = (0..100).map(|i| doc! {"_id": i, "customerId": range.start + i % 10}).collect();
            c.database("shop").collection::<Document>("orders").insert_many(docs).await.unwrap();
            c.database("shop").run_command(doc! {"profile": 2, "slowms": -1}).await.unwrap();
            for i in 0..n {
                let mut cur =
                    c.database("shop").collection::<Document>("orders").find(doc! {"customerId": range.start + i % 10}).await.unwrap();
                while cur.advance().await.unwrap() {}
            }
        });
    }
    let o = shardkey(&["analyze", "--uri", &a.uri(), "--config-uri", &cfg.uri(), "--collection", "shop.orders", "--format", "json"]);
    let v = json_ok(&o);
    let (on_a, on_b) = (20, 15);
    assert_eq!(member(&v, a.port)["operations"].as_u64(), Some(on_a));
    assert_eq!(member(&v, b.port)["operations"].as_u64(), Some(on_b));
    assert_eq!(v["inputs"]["queries"]["members"].as_array().unwrap().len(), 2, "{}", v["inputs"]["queries"]);
    assert_eq!(v["inputs"]["queries"]["queriesUsed"].as_u64(), Some(on_a + on_b));
}

/// A member's initial sync reads its sync source's own databases (`local.oplog.rs`,
/// `admin.system.version`, `config.transactions`) with `secondaryPreferred`, `readConcern:
/// local` and no session, as the server sends a mirrored read, but without the `maxTimeMS`
/// every mirrored read carries. On the primary's log (6.0.5, every operation logged) they are
/// the server's own operations, which `workload` says as such, and so are its clone's reads
/// of the application's collections; mirrored reads are a secondary's. Expected: the log's
/// lines of that shape, counted here from the log itself.
#[test]
fn a_joining_members_reads_on_the_primary_are_the_servers_own_not_mirrored_reads() {
    let set = ReplSet::start(1, false, false);
    seed(&set, "shop");
    let primary = set.member_client(0);
    block(primary.database("admin").run_command(doc! {"profile": 0, "slowms": -1})).unwrap();
    let joining = Mongod::start(Mode::SetMember);
    let add = common::mongosh(&set.members[0].uri(), &format!("rs.add({{host: '127.0.0.1:{}', priority: 0, votes: 0}})", joining.port));
    assert!(add.status.success(), "{}", String::from_utf8_lossy(&add.stderr));
    let host = format!("127.0.0.1:{}", joining.port);
    let start = std::time::Instant::now();
    loop {
        let status = block(primary.database("admin").run_command(doc! {"replSetGetStatus": 1})).unwrap();
        let synced = status
            .get_array("members")
            .unwrap()
            .iter()
            .filter_map(Bson::as_document)
            .any(|m| m.get_str("name").ok() == Some(host.as_str()) && m.get_str("stateStr").ok() == Some("SECONDARY"));
        if synced {
            break;
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(90), "the new member did not finish its initial sync: {status}");
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    let log = set.members[0].dir.path().join("mongod.log");
    let text = std::fs::read_to_string(&log).unwrap();
    let server_db = |ns: &str| ["local.", "config.", "admin."].iter().any(|p| ns.starts_with(p));
    let shaped = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["id"] == 51803 && v["attr"]["appName"].is_null() && v["attr"]["ns"].as_str().is_some_and(server_db))
        .filter(|v| {
            let c = &v["attr"]["command"];
            // Reads of a collection by its name (a clone reads by UUID: no CRUD the reader counts).
            c["$readPreference"]["mode"] == "secondaryPreferred"
                && c["readConcern"]["level"] == "local"
                && c["lsid"].is_null()
                && c["find"].is_string()
        })
        .count();
    assert!(shaped > 0, "no initial-sync find on the primary's log");
    let w = json_ok(&shardkey(&["workload", "--queries", log.to_str().unwrap(), "--format", "json"]));
    let skipped = w["skipped"].as_object().unwrap();
    assert!(skipped.keys().all(|k| !k.starts_with("mirrored reads")), "{skipped:#?}");
    let own = skipped.iter().find(|(k, _)| k.starts_with("operations on the server's own databases")).map(|(_, n)| n.as_u64().unwrap());
    assert!(own.is_some_and(|n| n >= shaped as u64), "{shaped} initial-sync finds; skipped {skipped:#?}");
    // The clone's reads of the application's collections (each named by its UUID) are not the
    // application's operations either: the test ran none after the profiler's level was set.
    let shop: Vec<&Value> =
        w["namespaces"].as_array().unwrap().iter().filter(|n| n["namespace"].as_str().unwrap().starts_with("shop.")).collect();
    assert!(shop.is_empty(), "{shop:#?}");
}
