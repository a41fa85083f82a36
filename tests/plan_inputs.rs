//! Inputs that are not what they claim (issue 38, items 5 and 7), against a real mongod 6.0.5
//! replica set: a database that does not exist or holds no collection (exit 2, did you mean),
//! the same operations given twice (a log and the profiler of the same window, the same log
//! twice: refused, exit 2), a wrong replica set name and `--host` without `--database`, each
//! said in one line that names the cause.

mod common;
use common::{rt, shardkey, Lcg, Mode, Mongod};

use bson::{doc, Document};
use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit 2 with exactly one line on stderr, which is returned.
fn refused(o: &Output) -> String {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stdout: {} stderr: {e}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(o.stdout.is_empty());
    e.trim_end().to_string()
}

#[test]
fn host_without_database_names_the_flag_given() {
    let e = refused(&shardkey(&["plan", "--host", "127.0.0.1:1"]));
    assert_eq!(e, "shardkey: --host needs --database DB (a host names no database)");
    let e = refused(&shardkey(&["plan", "--uri", "mongodb://127.0.0.1:1/"]));
    assert_eq!(e, "shardkey: --uri needs --database DB (or the database in the URI: mongodb://host/DB)");
}

#[test]
fn a_missing_or_empty_database_is_refused_with_the_closest_name() {
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    rt().block_on(async {
        client.database("saas").collection::<Document>("tenants").insert_one(doc! {"_id": 1}).await.unwrap();
        // A database holding only its profiler: it exists, and holds no collection.
        let empty = client.database("empty");
        empty.run_command(doc! {"profile": 2}).await.unwrap();
        empty.collection::<Document>("nothing").find_one(doc! {}).await.unwrap();
        empty.run_command(doc! {"profile": 0}).await.unwrap();
    });
    let uri = m.uri();
    let shown = format!("mongodb://127.0.0.1:{}/", m.port);
    let plan = |db: &str| shardkey(&["plan", "--uri", &uri, "--database", db]);
    assert_eq!(refused(&plan("Saas")), format!("shardkey: database Saas does not exist on {shown}: did you mean saas?"));
    assert_eq!(refused(&plan("nosuchdb")), format!("shardkey: database nosuchdb does not exist on {shown} (its databases: empty, saas)"));
    assert_eq!(refused(&plan("empty")), format!("shardkey: database empty on {shown} holds no collection: nothing to plan"));

    // A mongodump: its root holds the databases' directories.
    let dump = tempfile::tempdir().unwrap();
    std::fs::create_dir(dump.path().join("saas")).unwrap();
    std::fs::write(dump.path().join("saas").join("tenants.bson"), bson::to_vec(&doc! {"_id": 1}).unwrap()).unwrap();
    let root = dump.path().to_str().unwrap();
    let e = refused(&shardkey(&["plan", "--dump", root, "--database", "Saas"]));
    assert_eq!(e, format!("shardkey: --dump {root}: no database Saas in this dump: did you mean saas?"));
    let e = refused(&shardkey(&["plan", "--dump", &format!("{root}/sass")]));
    assert_eq!(e, format!("shardkey: --dump {root}/sass: no such directory: did you mean {root}/saas?"));
    // The root with one database plans that one.
    let o = shardkey(&["plan", "--dump", root, "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_wrong_replica_set_name_says_which_set_the_member_is_in() {
    let m = Mongod::start(Mode::ReplicaSet);
    let host = format!("127.0.0.1:{}", m.port);
    let want = format!(
        "shardkey: cannot connect to mongodb://{host}/: {host} is a member of replica set 'rs0', not 'rsX' (the replica set name in the URI or --host)"
    );
    let o = shardkey(&["plan", "--host", &format!("rsX/{host}"), "--database", "shop", "--server-selection-timeout", "3"]);
    assert_eq!(refused(&o), want);
    let uri = format!("mongodb://{host}/?replicaSet=rsX");
    let o = shardkey(&["analyze", "--uri", &uri, "--collection", "shop.orders", "--server-selection-timeout", "3"]);
    assert_eq!(refused(&o), want);
    // With credentials the server refuses too (no such user here): the set's name is still
    // what is said (asking it needs no login), and the password never.
    let uri = format!("mongodb://dba:Wr0ng-pw@{host}/?replicaSet=rsX&authSource=admin");
    let o = shardkey(&["analyze", "--uri", &uri, "--collection", "shop.orders", "--server-selection-timeout", "3"]);
    let e = refused(&o);
    assert!(e.contains(&format!("{host} is a member of replica set 'rs0', not 'rsX'")) && !e.contains("Wr0ng-pw"), "{e}");
    // The right name connects (and, the database being empty, says so).
    let o = shardkey(&["plan", "--host", &format!("rs0/{host}"), "--database", "shop", "--server-selection-timeout", "3"]);
    assert!(refused(&o).contains("database shop does not exist"), "{}", stderr(&o));
}

/// A mongod logging (slowms -1) and profiling (level 2) the same operations: each source
/// alone counts each operation once; given together they are refused, every profiled
/// operation being found in the log. By hand: 40 transactions of 3 operations (a find of
/// orders by customer, a findAndModify of the customer by _id, an insert into orders) and 30
/// finds of customers outside them: orders 80 operations, customers 70; 150 in all.
/// (findAndModify, not update: the Rust driver sends an update's statements inside its
/// command, which mongod logs beside each statement's own WRITE line, and the log reader
/// counts both, a separate question from the one this test asks.)
#[test]
fn the_log_and_the_profiler_of_the_same_window_are_not_counted_twice() {
    const TXNS: i64 = 40;
    const READS: i64 = 30;
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    let logpath = m.dir.path().join("mongod.log");
    let since = rt().block_on(async {
        let db = client.database("saas");
        let customers = db.collection::<Document>("customers");
        let orders = db.collection::<Document>("orders");
        customers.insert_many((0..50i64).map(|i| doc! {"_id": i, "orders": 0})).await.unwrap();
        orders.insert_many((0..50i64).map(|i| doc! {"_id": 100_000 + i, "customerId": i})).await.unwrap();
        // The window starts after the set-up, which a slow start might have logged.
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let since = bson::DateTime::now().try_to_rfc3339_string().unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        db.run_command(doc! {"profile": 2, "slowms": -1}).await.unwrap();
        let mut rng = Lcg(3);
        let mut session = client.start_session().await.unwrap();
        for t in 0..TXNS {
            let c = rng.below(50) as i64;
            session.start_transaction().await.unwrap();
            orders.find_one(doc! {"customerId": c}).session(&mut session).await.unwrap();
            customers.find_one_and_update(doc! {"_id": c}, doc! {"$inc": {"orders": 1}}).session(&mut session).await.unwrap();
            orders.insert_one(doc! {"_id": t, "customerId": c}).session(&mut session).await.unwrap();
            session.commit_transaction().await.unwrap();
        }
        for i in 0..READS {
            customers.find_one(doc! {"_id": i}).await.unwrap();
        }
        db.run_command(doc! {"profile": 0, "slowms": 100}).await.unwrap();
        since
    });
    let uri = m.uri();
    let log = logpath.to_str().unwrap();
    let plan = |queries: &[&str]| {
        let mut a = vec!["plan", "--uri", &uri, "--database", "saas", "--since", &since, "--format", "json"];
        for q in queries {
            a.extend_from_slice(&["--queries", q]);
        }
        shardkey(&a)
    };
    let ops = |o: &Output| -> (u64, u64, u64) {
        assert!(o.status.success(), "{}", stderr(o));
        let p: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let n = |ns: &str| {
            p["collections"].as_array().unwrap().iter().find(|c| c["namespace"] == ns).unwrap()["numOperations"].as_u64().unwrap()
        };
        (n("saas.orders"), n("saas.customers"), p["transactions"]["found"].as_u64().unwrap())
    };
    assert_eq!(ops(&plan(&[log])), (2 * TXNS as u64, (TXNS + READS) as u64, TXNS as u64));
    assert_eq!(ops(&plan(&["profile"])), (2 * TXNS as u64, (TXNS + READS) as u64, TXNS as u64));

    let e = refused(&plan(&[log, "profile"]));
    assert!(e.starts_with(&format!("shardkey: the query sources {log} and saas.system.profile hold the same operations (150 of those read from a profiler are in a log too, from ")), "{e}");
    assert!(e.contains("give the log or the profiler, not both"), "{e}");
    // analyze (and check) read the same way.
    let o = shardkey(&["analyze", "--uri", &uri, "--collection", "saas.orders", "--queries", "profile", "--queries", log]);
    assert!(refused(&o).contains("saas.system.profile and ") && stderr(&o).contains("(80 of those read from a profiler"), "{}", stderr(&o));
    // The same log twice, or a copy of it.
    let e = refused(&plan(&[log, log]));
    assert_eq!(e, format!("shardkey: --queries {log} is given twice: its operations would count twice; give it once"));
    // Copies of a log the running mongod no longer writes to: a copy of the live log could
    // differ from it by a line written between the copy and the read.
    let (frozen, copy) = (m.dir.path().join("frozen.log"), m.dir.path().join("copy.log"));
    std::fs::copy(&logpath, &frozen).unwrap();
    std::fs::copy(&frozen, &copy).unwrap();
    let frozen = frozen.to_str().unwrap();
    let e = refused(&shardkey(&["workload", "--queries", frozen, "--queries", copy.to_str().unwrap()]));
    assert!(e.contains(&format!("--queries {frozen} and {} hold the same log", copy.display())), "{e}");
}
