//! Issue 49 item 3, plan side: a plan zone that pins one value above a shard's fair share.
//! A SaaS database on a replica set: 200 tenants, 2,000 orders of which one tenant holds 510
//! (25.5%, more than 1 of 4 shards' fair 25%), transactions that read a tenant's orders and
//! update the tenant, run with the Rust driver and read from the server's log. The plan zones
//! orders with tenants on the tenant id; the tenant's zone bounds the tenant id only, so the
//! plan names the tenant, its share (the server's own `$group` count) and the cut on the key's
//! next field at the tenant's median (the server's own sorted read).

mod common;
use bson::{doc, Bson, Document};
use common::{rt, shardkey, Lcg, Mode, Mongod};
use serde_json::Value;

const TENANTS: i64 = 200;
const ORDERS: i64 = 2000;
const BIG: i64 = 7;
const BIG_ORDERS: i64 = 510;

#[test]
fn a_tenant_above_one_shards_share_is_named_with_the_cut_on_the_next_field() {
    let m = Mongod::start(Mode::ReplicaSet);
    let client = m.client();
    let logpath = m.dir.path().join("mongod.log");
    let (count, total, median) = rt().block_on(async {
        let db = client.database("saas");
        db.run_command(doc! {"profile": 2, "slowms": -1}).await.unwrap();
        let tenants = db.collection::<Document>("tenants");
        let orders = db.collection::<Document>("orders");
        tenants.insert_many((0..TENANTS).map(|i| doc! {"_id": i, "orders": 0})).await.unwrap();
        let mut rng = Lcg(11);
        let docs: Vec<Document> = (0..ORDERS)
            .map(|i| {
                // Every third order up to 510 * 3 is the big tenant's; the rest spread over the others.
                let t = if i % 3 == 0 && i / 3 < BIG_ORDERS { BIG } else { (BIG + 1 + rng.below(TENANTS as u64 - 1) as i64) % TENANTS };
                doc! {"_id": i, "tenantId": t, "total": 1.5}
            })
            .collect();
        orders.insert_many(docs).await.unwrap();
        let mut session = client.start_session().await.unwrap();
        for n in 0..80i64 {
            let t = if n % 4 == 0 { BIG } else { rng.below(TENANTS as u64) as i64 };
            session.start_transaction().await.unwrap();
            orders.find_one(doc! {"tenantId": t}).session(&mut session).await.unwrap();
            tenants.update_one(doc! {"_id": t}, doc! {"$inc": {"orders": 1}}).session(&mut session).await.unwrap();
            session.commit_transaction().await.unwrap();
        }
        db.run_command(doc! {"profile": 0, "slowms": 100}).await.unwrap();
        // The server's counts: the big tenant's orders, all orders, and its median _id (the
        // 256th of 510: half is 255 exactly, so the next value starts the upper half).
        let mut c = orders.aggregate(vec![doc! {"$match": {"tenantId": BIG}}, doc! {"$count": "n"}]).await.unwrap();
        use futures_util::TryStreamExt;
        let count = c.try_next().await.unwrap().unwrap().get_i32("n").unwrap() as i64;
        let total = orders.count_documents(doc! {}).await.unwrap() as i64;
        let med = orders.find(doc! {"tenantId": BIG}).sort(doc! {"_id": 1}).skip(count as u64 / 2).limit(1).await.unwrap();
        let med: Vec<Document> = med.try_collect().await.unwrap();
        (count, total, med[0].get("_id").cloned().unwrap())
    });
    assert_eq!((count, total), (BIG_ORDERS, ORDERS));
    let o = shardkey(&[
        "plan",
        "--uri",
        &m.uri(),
        "--database",
        "saas",
        "--queries",
        logpath.to_str().unwrap(),
        "--shards",
        "4",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let p: Value = serde_json::from_slice(&o.stdout).unwrap();
    common::assert_schema("plan", &p);
    let orders = p["collections"].as_array().unwrap().iter().find(|c| c["namespace"] == "saas.orders").unwrap();
    assert_eq!(orders["key"], serde_json::json!({"tenantId": 1, "_id": 1}), "{orders:#}");
    let pinned = orders["pinnedValues"].as_array().unwrap_or_else(|| panic!("{orders:#}"));
    assert_eq!(pinned.len(), 1, "{pinned:#?}");
    let pct = (count as f64 * 1000.0 / total as f64).round() / 10.0;
    assert_eq!(pct, 25.5);
    assert_eq!((pinned[0]["value"].as_i64(), pinned[0]["documents"].as_i64()), (Some(BIG), Some(count)));
    assert_eq!((pinned[0]["percentage"].as_f64(), pinned[0]["fairSharePercentage"].as_f64()), (Some(pct), Some(25.0)));
    let med = match median {
        Bson::Int64(x) => x,
        Bson::Int32(x) => x as i64,
        b => panic!("{b}"),
    };
    assert_eq!(pinned[0]["splitAt"], serde_json::json!({"tenantId": BIG, "_id": med}), "{pinned:#?}");
    // Said in the human report and as a comment of the mongosh script too.
    let msg = pinned[0]["message"].as_str().unwrap();
    println!("server: {count} of {total} orders are tenant {BIG}'s, median _id {med}; plan says: {msg}");
    assert!(msg.starts_with("saas.orders: tenantId 7 holds 25.5% of the sampled documents (510 of 2,000), more than one shard's fair share (25%: 1 of 4 shards)"), "{msg}");
    let base = ["plan", "--uri", &m.uri(), "--database", "saas", "--queries", logpath.to_str().unwrap(), "--shards", "4"];
    for (format, prefix) in [("table", ""), ("markdown", ""), ("mongosh", "// ")] {
        let mut a = base.to_vec();
        a.extend(["--format", format]);
        let out = String::from_utf8(shardkey(&a).stdout).unwrap();
        assert!(out.lines().any(|l| l.contains("tenantId 7 holds 25.5%") && l.trim_start().starts_with(prefix)), "{format}:\n{out}");
    }
}
