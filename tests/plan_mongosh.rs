//! `plan --format mongosh` (issue 38, item 6): the plan as one mongosh script, run with the
//! real mongosh (scripts/mongosh.sh, SHARDKEY_MONGOSH) against a real mongod 6.0.5 replica
//! set. No mongos can be installed here, so the steps themselves never run: what runs is
//! every check (each collection, its indexes, its shard key, the version), and the script's
//! own stop on a replica set before its first sharding command, with nothing created. The
//! checks that fail are tested the same way (an index added, a version planned for another
//! server), and so is the rule that lets the script run twice (an index its own step
//! creates is not a difference).
//!
//! The workload: 60 driver-session transactions (an order's and a payment's reads and
//! inserts for one customer, the customer's counter), as tests/plan.rs's live test, so the
//! plan zones orders, payments and customers together (addShardToZone, updateZoneKeyRange
//! with MinKey bounds, createIndex, shardCollection). payments has the default collation
//! `{locale: "en"}`: shardCollection on it must say `{collation: {locale: "simple"}}`
//! (manual `sh.shardCollection()` "collation"; SERVER-24751), and so must the index that
//! supports its key.

mod common;
use common::{rt, shardkey, Lcg, Mode, Mongod};

use bson::{doc, Document};
use std::process::Output;

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Each collection's index names and keys, to see that nothing was created.
fn indexes(client: &mongodb::Client) -> Vec<(String, Vec<String>)> {
    rt().block_on(async {
        let db = client.database("shop");
        let mut out = Vec::new();
        for c in ["customers", "orders", "payments"] {
            let names = db.collection::<Document>(c).list_index_names().await.unwrap();
            out.push((c.to_string(), names));
        }
        out
    })
}

fn mongosh_file(uri: &str, script: &std::path::Path) -> Output {
    std::process::Command::new(common::mongosh_binary())
        .args(["--quiet", "--norc", uri, script.to_str().unwrap()])
        .env("DO_NOT_TRACK", "1")
        .output()
        .expect("run mongosh")
}

#[test]
fn the_script_checks_what_the_plan_read_and_stops_on_a_replica_set() {
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    let logpath = m.dir.path().join("mongod.log");
    rt().block_on(async {
        let db = client.database("shop");
        db.run_command(doc! {"create": "payments", "collation": {"locale": "en"}}).await.unwrap();
        db.run_command(doc! {"profile": 0, "slowms": -1}).await.unwrap();
        let customers = db.collection::<Document>("customers");
        let orders = db.collection::<Document>("orders");
        let payments = db.collection::<Document>("payments");
        customers.insert_many((0..200i64).map(|i| doc! {"_id": i, "orders": 0})).await.unwrap();
        let mut rng = Lcg(7);
        for i in 0..1500i64 {
            let c = rng.below(200) as i64;
            orders.insert_one(doc! {"_id": i, "customerId": c, "total": 1.5}).await.unwrap();
            payments.insert_one(doc! {"_id": i, "customerId": c, "orderId": i}).await.unwrap();
        }
        let mut session = client.start_session().await.unwrap();
        for t in 0..60i64 {
            let c = rng.below(200) as i64;
            session.start_transaction().await.unwrap();
            orders.find_one(doc! {"customerId": c}).session(&mut session).await.unwrap();
            payments.find_one(doc! {"customerId": c}).session(&mut session).await.unwrap();
            orders.insert_one(doc! {"_id": 10_000 + t, "customerId": c, "total": 2.5}).session(&mut session).await.unwrap();
            payments.insert_one(doc! {"_id": 10_000 + t, "customerId": c, "orderId": 10_000 + t}).session(&mut session).await.unwrap();
            customers.find_one_and_update(doc! {"_id": c}, doc! {"$inc": {"orders": 1}}).session(&mut session).await.unwrap();
            session.commit_transaction().await.unwrap();
        }
        db.run_command(doc! {"profile": 0, "slowms": 100}).await.unwrap();
    });
    let uri = m.uri();
    let log = logpath.to_str().unwrap();
    let plan = |extra: &[&str], format: &str| {
        let mut a = vec!["plan", "--uri", &uri, "--database", "shop", "--queries", log, "--shards", "4", "--format", format];
        a.extend_from_slice(extra);
        let o = shardkey(&a);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o
    };
    let p: serde_json::Value = serde_json::from_slice(&plan(&[], "json").stdout).unwrap();
    common::assert_schema("plan", &p);
    let commands: Vec<String> = p["commands"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
    // The plan zones the three together, and payments' commands say the simple collation.
    assert!(commands.iter().any(|c| c.starts_with("sh.updateZoneKeyRange(\"shop.payments\", {customerId: MinKey")), "{commands:#?}");
    let shard_payments = commands.iter().find(|c| c.starts_with("sh.shardCollection(\"shop.payments\"")).unwrap();
    assert!(shard_payments.ends_with(", false, {collation: {locale: \"simple\"}})"), "{shard_payments}");
    let index_payments =
        commands.iter().find(|c| c.starts_with("db.getSiblingDB(\"shop\").getCollection(\"payments\").createIndex(")).unwrap();
    assert!(index_payments.ends_with(", {collation: {locale: \"simple\"}})"), "{index_payments}");
    assert!(
        commands.iter().filter(|c| c.contains("\"shop.orders\"") || c.contains("\"orders\"")).all(|c| !c.contains("collation")),
        "{commands:#?}"
    );

    // The script: the plan's commands, in order, in its head; the shards to name.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("plan.js");
    std::fs::write(&script, plan(&[], "mongosh").stdout).unwrap();
    let js = std::fs::read_to_string(&script).unwrap();
    let listed: Vec<&str> = js.lines().filter_map(|l| l.strip_prefix("//   ")).filter(|l| !l.starts_with("mongosh ")).collect();
    assert_eq!(listed, commands.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(js.contains("\nconst SHARDS = [\"shard0\",\"shard1\",\"shard2\",\"shard3\"];\n"), "{js}");

    // Run on the replica set: every check runs, then the script stops on its own words before
    // its first step, and nothing is created (no index, no zone).
    let before = indexes(&client);
    for _ in 0..2 {
        let o = mongosh_file(&uri, &script);
        let out = text(&o);
        assert_eq!(o.status.code(), Some(1), "{out}{}", String::from_utf8_lossy(&o.stderr));
        assert!(out.contains("  DIFFERS  not connected to mongos: this is a member of replica set 'rs0', which cannot hold zones or shard a collection; run this script through your sharded cluster's mongos"), "{out}");
        assert!(out.contains("  ok       MongoDB 6.0.5: the plan followed MongoDB 6.0.5, from the server (buildInfo)"), "{out}");
        assert!(out.contains("  ok       shop.payments: a collection, default collation en, as read"), "{out}");
        for c in ["customers", "orders", "payments"] {
            assert!(out.contains(&format!("  ok       shop.{c}: unsharded, as read")), "{out}");
        }
        assert!(out.contains("  ok       shop.orders: its index as read"), "{out}");
        assert!(out.contains("shardkey: stopped before changing anything: 1 check differs from what the plan was made from:"), "{out}");
        assert!(!out.contains("step 1/"), "{out}");
        assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(indexes(&client), before);
        let zones = common::block(client.database("config").collection::<Document>("tags").count_documents(doc! {}));
        assert_eq!(zones.unwrap(), 0);
    }

    // An index the plan's own step creates is an earlier run's, not a difference: the plan's
    // createIndex commands, run as printed, are accepted by the server and by the checks.
    for c in commands.iter().filter(|c| c.contains(".createIndex(")) {
        let o = common::mongosh(&uri, c);
        assert!(o.status.success(), "{c}: {}", String::from_utf8_lossy(&o.stderr));
    }
    let o = mongosh_file(&uri, &script);
    assert!(text(&o).contains("shardkey: stopped before changing anything: 1 check differs"), "{}", text(&o));
    // This plan shards every collection: where the database's primary shard is does not matter.
    assert!(!text(&o).contains("primary shard"), "{}", text(&o));

    // A plan that keeps a collection unsharded (on the database's primary shard, which the plan
    // calls shard0) beside zones rests on SHARDS[0] being that shard: the script reads
    // config.databases. A replica set does not list the database: skipped. A config server that
    // lists it with another primary: differs, naming the shard to put first; with SHARDS[0]: ok.
    let kept = dir.path().join("plan-unsharded.js");
    std::fs::write(&kept, plan(&["--unsharded", "customers"], "mongosh").stdout).unwrap();
    let out = text(&mongosh_file(&uri, &kept));
    assert!(out.contains("  skipped  the database's primary shard (config.databases does not list shop here)"), "{out}");
    let cfg = Mongod::start(Mode::ConfigServer);
    let databases = cfg.client().database("config").collection::<Document>("databases");
    common::block(databases.insert_one(doc! {"_id": "shop", "primary": "shardB"})).unwrap();
    let out = text(&mongosh_file(&cfg.uri(), &kept));
    assert!(
        out.contains("  DIFFERS  the database's primary shard is \"shardB\" (config.databases), SHARDS[0] is \"shard0\": the plan keeps shop's unsharded collections on its primary shard as shard0, so name \"shardB\" first in SHARDS at the top of this script"),
        "{out}"
    );
    common::block(databases.update_one(doc! {"_id": "shop"}, doc! {"$set": {"primary": "shard0"}})).unwrap();
    let out = text(&mongosh_file(&cfg.uri(), &kept));
    assert!(out.contains("  ok       SHARDS[0] is shard0, the database's primary shard, where its unsharded collections stay"), "{out}");

    // An index added since the plan was made: said, and the script stops.
    let unique = mongodb::options::IndexOptions::builder().unique(true).sparse(true).build();
    let email = mongodb::IndexModel::builder().keys(doc! {"email": 1}).options(unique).build();
    common::block(client.database("shop").collection::<Document>("customers").create_index(email)).unwrap();
    let o = mongosh_file(&uri, &script);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("  DIFFERS  shop.customers: index email_1 {\"email\": 1} unique sparse was not there when the plan was made"),
        "{out}"
    );
    assert!(out.contains("stopped before changing anything: 2 checks differ"), "{out}");

    // A collection gone since.
    common::block(client.database("shop").collection::<Document>("customers").drop()).unwrap();
    let out = text(&mongosh_file(&uri, &script));
    assert!(out.contains("  DIFFERS  shop.customers does not exist (the plan read it)"), "{out}");

    // A plan made for another version: said, with the version to plan for.
    let other = dir.path().join("plan-7.0.js");
    std::fs::write(&other, plan(&["--target-version", "7.0"], "mongosh").stdout).unwrap();
    let out = text(&mongosh_file(&uri, &other));
    assert!(
        out.contains("  DIFFERS  this cluster runs MongoDB 6.0.5; the plan followed MongoDB 7.0, from --target-version (overriding MongoDB 6.0.5 from the server (buildInfo)): plan again with --target-version 6.0"),
        "{out}"
    );
}
