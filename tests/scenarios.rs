//! Scenarios with a known expert answer: a deterministic generator writes the
//! documents (NDJSON) and a mongod 4.4+ JSON slow-query log, `shardkey analyze`
//! ranks the keys it proposes, and each test asserts the ranking and the words.
//! Every scenario names its source (docs/reference.md "Scenarios" has the table). A test
//! accepts every answer an expert would accept and fails the clear mistakes.

mod common;
use common::Rng;

use serde_json::Value;
use std::fmt::Write as _;
use std::process::Command;

/// 2024-06-01T00:00:00Z in seconds.
const T0: u64 = 1_717_200_000;

fn oid(secs: u64, n: u64) -> String {
    format!("{{\"$oid\":\"{:08x}5ca1ab1e{:08x}\"}}", secs as u32, n as u32)
}

fn date(secs: u64) -> String {
    format!("{{\"$date\":{{\"$numberLong\":\"{}\"}}}}", secs * 1000)
}

/// One slow-query line of a mongod 4.4+ JSON log: a read command.
fn read_line(ns: &str, command: &str) -> String {
    format!(
        "{{\"t\":{{\"$date\":\"2024-06-04T11:19:50.398Z\"}},\"s\":\"I\",\"c\":\"COMMAND\",\"id\":51803,\"ctx\":\"conn1\",\"msg\":\"Slow query\",\"attr\":{{\"type\":\"command\",\"ns\":\"{ns}\",\"command\":{command},\"durationMillis\":150}}}}\n"
    )
}

/// One slow update statement (`"c": "WRITE"`).
fn update_line(ns: &str, q: &str, u: &str) -> String {
    format!(
        "{{\"t\":{{\"$date\":\"2024-06-04T11:19:50.398Z\"}},\"s\":\"I\",\"c\":\"WRITE\",\"id\":51803,\"ctx\":\"conn1\",\"msg\":\"Slow query\",\"attr\":{{\"type\":\"update\",\"ns\":\"{ns}\",\"command\":{{\"q\":{q},\"u\":{u},\"multi\":false,\"upsert\":false}},\"durationMillis\":150}}}}\n"
    )
}

/// A slow `find` on namespace `ns` ("db.coll").
fn read_find(ns: &str, filter: &str) -> String {
    read_line(ns, &find(ns, filter))
}

/// A `find` command on namespace `ns` ("db.coll").
fn find(ns: &str, filter: &str) -> String {
    let (db, coll) = ns.split_once('.').unwrap();
    format!("{{\"find\":\"{coll}\",\"filter\":{filter},\"$db\":\"{db}\"}}")
}

struct Scenario {
    docs: String,
    log: String,
    total_docs: Option<u64>,
}

fn analyze(s: &Scenario, ns: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs.ndjson");
    std::fs::write(&docs, &s.docs).unwrap();
    let mut args: Vec<String> = vec![
        "analyze".into(),
        "--docs".into(),
        docs.display().to_string(),
        "--collection".into(),
        ns.into(),
        "--format".into(),
        "json".into(),
    ];
    if !s.log.is_empty() {
        let log = dir.path().join("mongod.log");
        std::fs::write(&log, &s.log).unwrap();
        args.extend(["--queries".into(), log.display().to_string()]);
    }
    if let Some(t) = s.total_docs {
        args.extend(["--total-docs".into(), t.to_string()]);
    }
    let o = Command::new(env!("CARGO_BIN_EXE_shardkey")).args(&args).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn keys(r: &Value) -> Vec<String> {
    r["candidates"].as_array().unwrap().iter().map(|c| key_text(&c["key"])).collect()
}

/// `{a: 1, b: "hashed"}` from the JSON key, as the table prints it.
fn key_text(k: &Value) -> String {
    let parts: Vec<String> = k.as_object().unwrap().iter().map(|(f, v)| format!("{f}: {v}")).collect();
    format!("{{{}}}", parts.join(", "))
}

fn cand<'a>(r: &'a Value, key: &str) -> &'a Value {
    r["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| key_text(&c["key"]) == key)
        .unwrap_or_else(|| panic!("{key} not proposed: {:?}", keys(r)))
}

fn words(c: &Value) -> String {
    c["reasons"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect::<Vec<_>>().join("\n")
}

fn score(r: &Value, key: &str) -> u64 {
    cand(r, key)["score"].as_u64().unwrap()
}

fn first(r: &Value) -> String {
    keys(r)[0].clone()
}

/// Multi-tenant events with one huge tenant. Expert answer: `{projectId: 1, _id: 1}`:
/// a tenant's reads reach one shard (the huge tenant's a few), the unique `_id` keeps
/// every tenant splittable; `{projectId: 1}` alone makes the huge tenant a jumbo chunk,
/// hashed `_id` sends every tenant read to every shard. Source: Bugsnag, "Choosing a
/// shard key for MongoDB" (Conrad Irwin; they moved to `{projectId: 1, _id: 1}`).
#[test]
fn multi_tenant_events_with_one_huge_tenant() {
    let mut rng = Rng(1);
    let (mut docs, mut log) = (String::new(), String::new());
    let tenant = |rng: &mut Rng| if rng.chance(0.35) { 0 } else { 1 + rng.below(300) };
    for i in 0..20_000u64 {
        let t = tenant(&mut rng);
        let secs = T0 + i * 30;
        let _ = writeln!(
            docs,
            "{{\"_id\":{},\"projectId\":\"p{t:04}\",\"ts\":{},\"userId\":\"u{}\",\"type\":\"t{}\"}}",
            oid(secs, i),
            date(secs),
            rng.below(5_000),
            rng.below(6)
        );
    }
    for _ in 0..1_000 {
        let t = tenant(&mut rng);
        let id = oid(T0 + rng.below(20_000) * 30, rng.below(20_000));
        let x = rng.below(100);
        if x < 55 {
            log += &read_find("app.events", &format!("{{\"projectId\":\"p{t:04}\"}}"));
        } else if x < 70 {
            let from = T0 + rng.below(600_000);
            log += &read_find(
                "app.events",
                &format!("{{\"projectId\":\"p{t:04}\",\"ts\":{{\"$gte\":{},\"$lt\":{}}}}}", date(from), date(from + 3600)),
            );
        } else if x < 90 {
            log += &read_find("app.events", &format!("{{\"_id\":{id}}}"));
        } else {
            log += &update_line("app.events", &format!("{{\"_id\":{id}}}"), "{\"$set\":{\"seen\":true}}");
        }
    }
    let r = analyze(&Scenario { docs, log, total_docs: Some(20_000_000) }, "app.events");
    assert_eq!(first(&r), "{projectId: 1, _id: 1}", "{:?}", keys(&r));
    let best = words(cand(&r, "{projectId: 1, _id: 1}"));
    assert!(best.contains("with 4 shards") && best.contains("a read reaches"), "{best}");
    assert!(score(&r, "{projectId: 1, _id: 1}") > score(&r, "{_id: \"hashed\"}"));
    let alone = words(cand(&r, "{projectId: 1}"));
    assert!(alone.contains("jumbo chunk") && alone.contains("hot value"), "{alone}");
    assert!(score(&r, "{projectId: 1}") <= 45);
    let why = cand(&r, "{projectId: 1, _id: 1}")["comparedWithNext"].as_str().unwrap();
    assert!(why.starts_with("#1 beats #2") && why.contains("an operation reaches"), "{why}");
}

/// Device readings queried by device and time range. Expert answer: `{deviceId: 1, ts: 1}`
/// (the time series recommendation: the metadata field, then time): each device's
/// readings stay together and a device's range reads reach one shard; `{deviceId: 1}`
/// grows every device into an unsplittable chunk, `{ts: 1}` sends every insert to one
/// shard. Source: MongoDB manual, "Shard a Time Series Collection" and "Choose a Shard
/// Key" (monotonically changing keys).
#[test]
fn device_readings_by_device_and_time_range() {
    let mut rng = Rng(2);
    let (mut docs, mut log) = (String::new(), String::new());
    for i in 0..20_000u64 {
        let d = rng.below(2_000);
        let secs = T0 + i * 5;
        let _ = writeln!(docs, "{{\"_id\":\"r{i}\",\"deviceId\":\"dev-{d:04}\",\"ts\":{},\"value\":{}}}", date(secs), rng.below(1000));
    }
    for _ in 0..1_000 {
        let d = rng.below(2_000);
        let from = T0 + rng.below(100_000);
        let f = if rng.chance(0.8) {
            format!("{{\"deviceId\":\"dev-{d:04}\",\"ts\":{{\"$gte\":{},\"$lt\":{}}}}}", date(from), date(from + 86_400))
        } else {
            format!("{{\"deviceId\":\"dev-{d:04}\"}}")
        };
        log += &read_find("iot.readings", &f);
    }
    // 4 billion readings: 2 million per device, about 100 bytes each.
    let r = analyze(&Scenario { docs, log, total_docs: Some(4_000_000_000) }, "iot.readings");
    assert_eq!(first(&r), "{deviceId: 1, ts: 1}", "{:?}", keys(&r));
    let ts = words(cand(&r, "{ts: 1}"));
    assert!(ts.contains("increasing key") && ts.contains("every insert lands in the highest chunk"), "{ts}");
    assert!(words(cand(&r, "{deviceId: 1}")).contains("jumbo chunk"));
    let best = cand(&r, "{deviceId: 1, ts: 1}");
    assert_eq!(best["insertOrder"]["type"], "topOfEachGroup");
    assert!(best["cluster"]["cost"]["percentageOfSingleShardReads"].as_f64().unwrap() > 90.0, "{}", best["cluster"]["cost"]);
}

/// Orders bulk-loaded out of time order: the file (and recordIds) are shuffled, but the
/// ObjectId `_id`s carry each order's creation time. Expert answer: `createdAt` is an
/// increasing key whatever the load order said, so it must not win; a customer key does.
/// Source: MongoDB manual, "Choose a Shard Key": "Monotonically Changing Shard Keys".
#[test]
fn documents_bulk_loaded_out_of_time_order() {
    let mut rng = Rng(3);
    let n = 20_000u64;
    // A fixed permutation of 0..n: the load order.
    let mut order: Vec<u64> = (0..n).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let (mut docs, mut log) = (String::new(), String::new());
    for &i in &order {
        let secs = T0 + i * 60;
        let _ = writeln!(
            docs,
            "{{\"_id\":{},\"customerId\":\"c{:05}\",\"createdAt\":{},\"total\":{}}}",
            oid(secs, i),
            (i * 7_919) % 50_000,
            date(secs),
            rng.below(500)
        );
    }
    for _ in 0..1_000 {
        let x = rng.below(100);
        let f = if x < 60 {
            format!("{{\"customerId\":\"c{:05}\"}}", rng.below(50_000))
        } else if x < 80 {
            format!("{{\"_id\":{}}}", oid(T0 + rng.below(n) * 60, rng.below(n)))
        } else {
            let from = T0 + rng.below(n * 60);
            format!("{{\"createdAt\":{{\"$gte\":{},\"$lt\":{}}}}}", date(from), date(from + 3_600))
        };
        log += &read_find("shop.orders", &f);
    }
    let r = analyze(&Scenario { docs, log, total_docs: Some(50_000_000) }, "shop.orders");
    let created = cand(&r, "{createdAt: 1}");
    // The server's recordId monotonicity sees the shuffled load, unchanged beside ours.
    assert_eq!(created["keyCharacteristics"]["monotonicity"]["type"], "not monotonic");
    assert_eq!(created["insertOrder"]["type"], "increasing");
    assert_eq!(created["insertOrder"]["basis"], "ObjectId creation time");
    assert_eq!(created["insertOrder"]["loadOrderHidesIt"], true);
    let w = words(created);
    assert!(w.contains("the load order hides it") && w.contains("one shard takes 100% of inserts"), "{w}");
    assert!(score(&r, "{createdAt: 1}") <= 50);
    let top = first(&r);
    assert!(top.starts_with("{customerId:"), "expert: a customer key first, got {top} in {:?}", keys(&r));
}

/// A tiny collection (344 documents, a small biology table). Expert answer: sharding
/// it brings nothing yet; say from what size it would. Source: MongoDB manual,
/// "Sharded Cluster Balancer" (migration thresholds: 3 × range size) and DOCS-15792.
#[test]
fn a_tiny_collection_gains_nothing_from_sharding() {
    let mut rng = Rng(4);
    let mut docs = String::new();
    for i in 0..344u64 {
        let _ = writeln!(
            docs,
            "{{\"_id\":{},\"species\":\"s{}\",\"island\":\"i{}\",\"mass\":{},\"sampleNo\":{i}}}",
            oid(T0 + i, i),
            rng.below(3),
            rng.below(3),
            3000 + rng.below(3000)
        );
    }
    let r = analyze(&Scenario { docs, log: String::new(), total_docs: None }, "bio.penguins");
    let notes = r["notes"].to_string();
    assert!(notes.contains("sharding brings no benefit yet") && notes.contains("384 MiB") && notes.contains("640 MiB"), "{notes}");
    for c in r["candidates"].as_array().unwrap() {
        assert_eq!(c["cluster"]["scale"]["benefit"], "none yet");
        assert_eq!(c["cluster"]["today"]["shardsWithData"], 1, "all on the primary shard");
        assert!(!words(c).contains("caps the collection at"), "{}", words(c));
    }
}

/// No query log, and the one good field sits deep in the document. Expert answer: a
/// high-cardinality field that does not grow with time (here `payload.device.serial`),
/// hashed or not, ties with hashed `_id`; low-cardinality top-level fields and the date
/// are mistakes. Source: MongoDB manual, "Choose a Shard Key" (cardinality, frequency,
/// monotonicity).
#[test]
fn without_queries_the_good_field_deep_in_the_document_is_found() {
    let mut rng = Rng(5);
    let mut docs = String::new();
    for i in 0..10_000u64 {
        let _ = writeln!(
            docs,
            "{{\"_id\":{},\"status\":\"s{}\",\"kind\":\"k{}\",\"createdAt\":{},\"payload\":{{\"device\":{{\"serial\":\"SN{:08}\",\"fw\":\"v{}\"}},\"temp\":{}}}}}",
            oid(T0 + i, i),
            rng.below(3),
            rng.below(5),
            date(T0 + i),
            rng.below(100_000_000),
            rng.below(4),
            rng.below(20)
        );
    }
    let r = analyze(&Scenario { docs, log: String::new(), total_docs: Some(30_000_000) }, "app.devices");
    let serial: Vec<String> = keys(&r).into_iter().filter(|k| k.contains("payload.device.serial")).collect();
    assert!(!serial.is_empty(), "the nested field is proposed: {:?}", keys(&r));
    let best = r["candidates"][0]["score"].as_u64().unwrap();
    assert!(serial.iter().any(|k| score(&r, k) == best), "a serial key ties for first: {:?}", keys(&r));
    // Without queries targeting is not measured: 50 of its 100 points are unknown and count
    // nothing, so the best the data can show is 50, "acceptable", and it says so (issue 29).
    assert_eq!((best, cand(&r, &serial[0])["verdict"].as_str()), (50, Some("acceptable")));
    assert!(cand(&r, &serial[0])["reasons"][0].as_str().unwrap().starts_with("targeting not measured"));
    for bad in ["{status: 1}", "{kind: 1}"] {
        assert!(!keys(&r).contains(&bad.to_string()) || score(&r, bad) <= 35, "{bad}");
    }
    let created = cand(&r, "{createdAt: 1}");
    assert_eq!(created["insertOrder"]["type"], "increasing");
    assert!(score(&r, "{createdAt: 1}") < best, "the date ranks below the serial");
}

/// Every query names a low-cardinality field (4 regions). Expert answer: not the region
/// alone (at most 4 shards, jumbo regions), but the region followed by the
/// high-cardinality field the same queries name. Source: MongoDB manual, "Choose a
/// Shard Key": "Shard Key Cardinality" (a compound key raises a low-cardinality field's cardinality).
#[test]
fn a_low_cardinality_field_in_every_query_gets_a_compound() {
    let mut rng = Rng(6);
    let (mut docs, mut log) = (String::new(), String::new());
    let regions = ["emea", "amer", "apac", "latam"];
    for i in 0..20_000u64 {
        let _ = writeln!(
            docs,
            "{{\"_id\":{},\"region\":\"{}\",\"customerId\":\"c{:06}\",\"plan\":\"p{}\"}}",
            oid(T0 + i, i),
            regions[rng.below(4) as usize],
            rng.below(1_000_000),
            rng.below(3)
        );
    }
    for _ in 0..1_000 {
        let reg = regions[rng.below(4) as usize];
        let f = if rng.chance(0.7) {
            format!("{{\"region\":\"{reg}\",\"customerId\":\"c{:06}\"}}", rng.below(1_000_000))
        } else {
            format!("{{\"region\":\"{reg}\"}}")
        };
        log += &read_find("crm.accounts", &f);
    }
    let r = analyze(&Scenario { docs, log, total_docs: Some(40_000_000) }, "crm.accounts");
    assert_eq!(first(&r), "{region: 1, customerId: 1}", "{:?}", keys(&r));
    let region = words(cand(&r, "{region: 1}"));
    assert!(region.contains("low cardinality: only 4 distinct values") && region.contains("at most 4 shards"), "{region}");
    assert!(score(&r, "{region: 1}") <= 35);
}

/// An append-heavy event log whose reads filter by level and time. Expert answer:
/// anything but a key that grows with time: `{ts: 1}` and `{_id: 1}` (ObjectId) send
/// every insert to one shard. Source: MongoDB manual, "Hashed Sharding" (monotonically
/// increasing fields) and "Choose a Shard Key".
#[test]
fn an_append_heavy_log_never_gets_an_increasing_key() {
    let mut rng = Rng(7);
    let (mut docs, mut log) = (String::new(), String::new());
    let level = |rng: &mut Rng| match rng.below(100) {
        0..=59 => "info",
        60..=84 => "warn",
        85..=94 => "error",
        _ => "debug",
    };
    for i in 0..20_000u64 {
        let l = level(&mut rng);
        let _ = writeln!(docs, "{{\"_id\":{},\"ts\":{},\"level\":\"{l}\",\"host\":\"h{}\"}}", oid(T0 + i, i), date(T0 + i), rng.below(50));
    }
    for _ in 0..1_000 {
        let from = T0 + rng.below(20_000);
        let f = if rng.chance(0.9) {
            format!("{{\"level\":\"error\",\"ts\":{{\"$gte\":{},\"$lt\":{}}}}}", date(from), date(from + 600))
        } else {
            format!("{{\"_id\":{}}}", oid(T0 + rng.below(20_000), rng.below(20_000)))
        };
        log += &read_find("logs.app", &f);
    }
    let r = analyze(&Scenario { docs, log, total_docs: Some(500_000_000) }, "logs.app");
    let top = cand(&r, &first(&r));
    assert!(top["cluster"]["growth"]["shardsTakingInserts"].as_u64().unwrap() >= 2, "{}: {}", first(&r), top["cluster"]["growth"]);
    for bad in ["{ts: 1}", "{_id: 1}"] {
        let w = words(cand(&r, bad));
        assert!(w.contains("every insert lands in the highest chunk"), "{bad}: {w}");
        assert!(score(&r, bad) <= 50);
    }
    assert!(score(&r, "{level: 1}") <= 35);
}

/// Profiles read by userId (point reads). Expert answer: a userId key (range or hashed):
/// every read reaches one shard; hashed `_id` spreads the data but sends every read to
/// every shard. Source: MongoDB manual, "Choose a Shard Key" (targeted queries) and
/// "Query Isolation".
#[test]
fn point_reads_by_user_pick_the_user_key() {
    let mut rng = Rng(8);
    let (mut docs, mut log) = (String::new(), String::new());
    for i in 0..20_000u64 {
        let _ = writeln!(
            docs,
            "{{\"_id\":{},\"userId\":\"u{:07}\",\"country\":\"C{}\",\"createdAt\":{}}}",
            oid(T0 + i, i),
            (i * 104_729) % 10_000_000,
            rng.below(20),
            date(T0 + i)
        );
    }
    for _ in 0..1_000 {
        let u = (rng.below(20_000) * 104_729) % 10_000_000;
        let x = rng.below(100);
        if x < 85 {
            log += &read_find("app.users", &format!("{{\"userId\":\"u{u:07}\"}}"));
        } else if x < 95 {
            log += &update_line("app.users", &format!("{{\"userId\":\"u{u:07}\"}}"), "{\"$set\":{\"lastSeen\":1}}");
        } else {
            log += &read_find("app.users", &format!("{{\"country\":\"C{}\"}}", rng.below(20)));
        }
    }
    let r = analyze(&Scenario { docs, log, total_docs: Some(30_000_000) }, "app.users");
    let top = first(&r);
    assert!(top == "{userId: 1}" || top == "{userId: \"hashed\"}", "{:?}", keys(&r));
    let hashed_id = words(cand(&r, "{_id: \"hashed\"}"));
    assert!(hashed_id.contains("go to every shard"), "{hashed_id}");
    assert!(score(&r, &top) >= score(&r, "{_id: \"hashed\"}") + 10);
}

/// A catalog read by SKU, one category (5% of the products, a contiguous range of SKUs) taking
/// 70% of the reads and writes. Expert answer: hashed `sku`: every operation still reaches one
/// shard, and hashing spreads the hot category over every shard; ranged `{sku: 1}` keeps the
/// whole category on one shard, which then takes most of the work however the balancer evens
/// the data (it balances data size, never operations). Sources: MongoDB manual, "Hashed
/// Sharding" (hashed keys spread contiguous values) and "Sharded Cluster Balancer" (the
/// balancer evens data size); `analyzeShardKey`'s `numReadsByRange` exists to find such ranges.
#[test]
fn a_hot_contiguous_range_goes_to_the_hashed_key() {
    let mut rng = Rng(9);
    let (mut docs, mut log) = (String::new(), String::new());
    let sku = |c: u64, n: u64| format!("C{c:02}-{n:05}");
    for i in 0..20_000u64 {
        // Created in an order unrelated to the SKU: inserts spread under either key.
        let (c, n) = (rng.below(20), rng.below(100_000));
        let _ = writeln!(
            docs,
            "{{\"_id\":{},\"sku\":\"{}\",\"price\":{},\"stock\":{}}}",
            oid(T0 + i, i),
            sku(c, n),
            rng.below(1000),
            rng.below(50)
        );
    }
    for _ in 0..2_000 {
        let c = if rng.chance(0.7) { 7 } else { rng.below(20) };
        let s = sku(c, rng.below(100_000));
        if rng.chance(0.8) {
            log += &read_find("shop.products", &format!("{{\"sku\":\"{s}\"}}"));
        } else {
            log += &update_line("shop.products", &format!("{{\"sku\":\"{s}\"}}"), "{\"$inc\":{\"stock\":-1}}");
        }
    }
    let r = analyze(&Scenario { docs, log, total_docs: Some(20_000_000) }, "shop.products");
    let (hashed, ranged) = (score(&r, "{sku: \"hashed\"}"), score(&r, "{sku: 1}"));
    assert!(hashed > ranged, "hashed {hashed} against ranged {ranged}: {:?}", keys(&r));
    assert_eq!(first(&r), "{sku: \"hashed\"}", "{:?}", keys(&r));
    // Category 07 holds about 5% of the SKUs and takes about 73.5% of operations
    // (0.7 + 0.3 / 20); the shard holding it at scale takes about that, more if it holds more.
    let c = cand(&r, "{sku: 1}");
    let load = &c["cluster"]["load"];
    let busiest = load["busiestShardPercent"].as_f64().unwrap();
    assert!((70.0..=80.0).contains(&busiest), "{load}");
    let w = words(c);
    assert!(w.contains(&format!("the busiest of 4 shards takes {busiest:.1}% of 2,000 sampled operations")), "{w}");
    assert!(w.contains("which the balancer (it evens data size, not operations) never spreads"), "{w}");
    assert_eq!(c["scoreBreakdown"]["cappedBy"], "hotShard", "{}", c["scoreBreakdown"]);
    // Hashed: every shard takes about a quarter.
    let hl = &cand(&r, "{sku: \"hashed\"}")["cluster"]["load"];
    assert!(hl["busiestShardPercent"].as_f64().unwrap() < 35.0, "{hl}");
}
