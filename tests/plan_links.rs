//! Issue 49 item 5: a link between two collections' fields needs evidence that the values are
//! the same entity (equal values in one transaction), not overlapping value ranges. An
//! application written with the Node.js driver (its `insertOne` sends the document in the
//! command body, so the log holds it) runs on a real mongod 6.0.5 replica set logging every
//! operation (`slowms: -1`):
//! - 60 "reading" transactions: update device `d` (`_id` 1..20), insert an event whose
//!   `sensorId` (also 1..20, a different entity) is never `d`;
//! - 60 "order" transactions: insert an order `{customerId: c}`, then update customer `c`
//!   (`_id` 1..20).
//!
//! Hand count: orders.customerId and customers._id hold the same value in all 60 order
//! transactions, on 10 values (odd transactions serve the even customers); events.sensorId and devices._id in none of the 60 reading
//! transactions, although every sensorId value is a device's `_id`.

mod common;
use common::{block, shardkey, ReplSet};
use serde_json::Value;
use std::process::Command;

const SCRIPT: &str = r#"
const { MongoClient } = require("mongodb");
async function main() {
  const client = new MongoClient(process.argv[2]);
  const db = client.db("iot");
  const ids = [...Array(20).keys()].map((i) => i + 1);
  await db.collection("devices").insertMany(ids.map((d) => ({ _id: d, readings: 0 })));
  await db.collection("customers").insertMany(ids.map((c) => ({ _id: c, orders: 0 })));
  let readings = 0, orders = 0;
  for (let i = 0; i < 120; i++) {
    const s = client.startSession();
    await s.withTransaction(async () => {
      const k = 1 + (i % 20);
      if (i % 2 === 0) {
        // A sensor is not a device: offset 1..19 from the device, never equal.
        const sensor = 1 + ((k - 1 + 1 + (i % 19)) % 20);
        await db.collection("devices").updateOne({ _id: k }, { $inc: { readings: 1 } }, { session: s });
        await db.collection("events").insertOne({ sensorId: sensor, value: i }, { session: s });
      } else {
        await db.collection("orders").insertOne({ customerId: k, total: i }, { session: s });
        await db.collection("customers").updateOne({ _id: k }, { $inc: { orders: 1 } }, { session: s });
      }
    });
    await s.endSession();
    if (i % 2 === 0) readings++; else orders++;
  }
  console.log(JSON.stringify({ readings, orders }));
  await client.close();
}
main().catch((e) => { console.error(e); process.exit(1); });
"#;

#[test]
fn overlapping_id_ranges_link_nothing_and_equal_values_in_a_transaction_do() {
    let Ok(drivers) = std::env::var("SHARDKEY_DRIVERS") else {
        panic!("SHARDKEY_DRIVERS is not set: run scripts/drivers.sh (scripts/test.sh does) and export its output");
    };
    let set = ReplSet::start(1, false, false);
    let admin = set.client();
    block(admin.database("iot").run_command(bson::doc! {"profile": 0, "slowms": -1})).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("app.js");
    std::fs::write(&script, SCRIPT).unwrap();
    let out = Command::new("node")
        .arg(&script)
        .arg(set.uri(""))
        .env("NODE_PATH", std::path::Path::new(&drivers).join("node/node_modules"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let counts: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((counts["readings"].as_u64(), counts["orders"].as_u64()), (Some(60), Some(60)));
    block(admin.database("iot").run_command(bson::doc! {"profile": 0, "slowms": 100})).unwrap();

    let log = set.members[0].dir.path().join("mongod.log");
    let uri = set.uri("");
    let o =
        shardkey(&["plan", "--uri", &uri, "--database", "iot", "--queries", log.to_str().unwrap(), "--shards", "4", "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let p: Value = serde_json::from_slice(&o.stdout).unwrap();
    common::assert_schema("plan", &p);
    eprintln!("links: {:#}", p["links"]);
    let links = p["links"].as_array().unwrap();
    // The different entities: no link, whatever the evidence claimed.
    assert!(!p["links"].to_string().contains("sensorId"), "{:#}", p["links"]);
    let coll = |ns: &str| p["collections"].as_array().unwrap().iter().find(|c| c["namespace"] == ns).cloned().unwrap_or(Value::Null);
    let events = coll("iot.events");
    assert!(!events["colocatedWith"].to_string().contains("devices"), "events not zoned with devices: {events:#}");
    // The same entity: linked on 60 of 60 transactions, 20 values (the hand count).
    let real = links
        .iter()
        .find(|l| {
            let ends = [l["a"].as_str().unwrap(), l["b"].as_str().unwrap()];
            ends.contains(&"iot.customers._id") && ends.contains(&"iot.orders.customerId")
        })
        .unwrap_or_else(|| panic!("no orders-customers link: {:#}", p["links"]));
    assert_eq!(real["seenIn"], "transactions", "{real:#}");
    assert_eq!(real["count"], 60, "{real:#}");
    assert_eq!(real["evidence"], "in 60 of 60 transactions showing both, the same value (10 different values)", "{real:#}");
    // The human and Markdown reports say each link with its evidence, one line each.
    let line = "iot.orders.customerId = iot.customers._id: in 60 of 60 transactions showing both, the same value (10 different values)";
    let other = "iot.customers._id = iot.orders.customerId: in 60 of 60 transactions showing both, the same value (10 different values)";
    for (format, prefix) in [("table", "  "), ("markdown", "- ")] {
        let o = shardkey(&[
            "plan",
            "--uri",
            &uri,
            "--database",
            "iot",
            "--queries",
            log.to_str().unwrap(),
            "--shards",
            "4",
            "--format",
            format,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8_lossy(&o.stdout);
        // The links' section, each entry with its wrapped lines (the table's, indented
        // deeper) joined back.
        let mut said: Vec<String> = Vec::new();
        for l in text.lines().skip_while(|l| !l.contains("Links (")).skip(1).skip_while(|l| l.is_empty()).take_while(|l| !l.is_empty()) {
            match l.strip_prefix(prefix).filter(|r| !r.starts_with(' ')) {
                Some(_) => said.push(l.to_string()),
                None => said.last_mut().unwrap().push_str(&format!(" {}", l.trim())),
            }
        }
        assert_eq!(said.len(), links.len(), "{format}: one line per link: {text}");
        assert!(
            said.iter().any(|l| *l == format!("{prefix}{line}") || *l == format!("{prefix}{other}")),
            "{format}: the link's evidence not said: {text}"
        );
    }
    // The HTML page: one list item per link.
    let o =
        shardkey(&["plan", "--uri", &uri, "--database", "iot", "--queries", log.to_str().unwrap(), "--shards", "4", "--format", "html"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = String::from_utf8_lossy(&o.stdout);
    assert!(
        html.contains(&format!("<li>{line}</li>")) || html.contains(&format!("<li>{other}</li>")),
        "html: the link's evidence not said"
    );
}

/// A `$lookup` whose `localField` names a `$group`'s output (the group key `_id`, here a city)
/// joins no field of the collection: 20 such aggregations and 20 joining `restaurantId` to
/// `restaurants._id`, logged by a real mongod (Rust driver): only the second is a link, seen
/// in 20 `$lookup` stages (the hand count of what ran).
#[test]
fn a_lookup_on_a_group_key_links_nothing() {
    use futures_util::TryStreamExt;
    let set = ReplSet::start(1, false, false);
    let client = set.client();
    let db = client.database("food");
    let cities = ["Lima", "Quito", "Oslo", "Rome", "Kyiv"];
    block(
        db.collection::<bson::Document>("restaurants")
            .insert_many((0..50i64).map(|i| bson::doc! {"_id": i, "city": cities[i as usize % 5]})),
    )
    .unwrap();
    block(
        db.collection::<bson::Document>("orders").insert_many(
            (0..500i64).map(|i| bson::doc! {"_id": i, "city": cities[i as usize % 5], "restaurantId": i % 50, "status": "new"}),
        ),
    )
    .unwrap();
    block(db.run_command(bson::doc! {"profile": 0, "slowms": -1})).unwrap();
    let orders = db.collection::<bson::Document>("orders");
    for i in 0..20i64 {
        let by_city = vec![
            bson::doc! {"$match": {"status": "new"}},
            bson::doc! {"$group": {"_id": "$city", "n": {"$sum": 1}}},
            bson::doc! {"$lookup": {"from": "restaurants", "localField": "_id", "foreignField": "city", "as": "r"}},
        ];
        let by_id = vec![
            bson::doc! {"$match": {"_id": i}},
            bson::doc! {"$lookup": {"from": "restaurants", "localField": "restaurantId", "foreignField": "_id", "as": "r"}},
        ];
        for p in [by_city, by_id] {
            let docs: Vec<bson::Document> = block(async { orders.aggregate(p).await?.try_collect().await }).unwrap();
            assert!(!docs.is_empty());
        }
    }
    block(db.run_command(bson::doc! {"profile": 0, "slowms": 100})).unwrap();
    let log = set.members[0].dir.path().join("mongod.log");
    let o = shardkey(&["plan", "--uri", &set.uri(""), "--database", "food", "--queries", log.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let p: Value = serde_json::from_slice(&o.stdout).unwrap();
    let links = p["links"].as_array().unwrap();
    assert!(!p["links"].to_string().contains("restaurants.city"), "a group key is no field of orders: {:#}", p["links"]);
    assert_eq!(links.len(), 1, "{:#}", p["links"]);
    let ends = [links[0]["a"].as_str().unwrap(), links[0]["b"].as_str().unwrap()];
    assert!(ends.contains(&"food.orders.restaurantId") && ends.contains(&"food.restaurants._id"), "{:#}", links[0]);
    assert_eq!((links[0]["seenIn"].as_str(), links[0]["count"].as_u64()), (Some("$lookup"), Some(20)), "{:#}", links[0]);
}
