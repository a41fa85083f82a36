//! Helpers for `scripts/bench.sh` (README "Performance"); not part of the product.
//! - `load`: insert a generated collection with 12 candidate fields of varied cardinality;
//! - `io-floor`: the same driver reads `shardkey analyze --uri` makes, doing nothing with them;
//! - `memcheck`: feed N synthetic documents to the sample pass; peak RSS and distinct-count error;
//! - `gen-log`: write a mongod JSON log of a given size;
//! - `gen-export`: write a mongoexport-style NDJSON file (relaxed Extended JSON, 20 fields);
//! - `gen-plan`: a mongodump directory and a mongod 6.0 log of transactions of a given size
//!   (for `shardkey plan`: its time and memory against the log's size).

use anyhow::Result;
use clap::{Parser, Subcommand};
use mongodb::bson::{self as bson, doc, oid::ObjectId, Bson, DateTime, Document};
use serde_json::json;
use shardkey::model::ShardKey;
use shardkey::sample::Sample;
use shardkey::sources::live::{LiveOptions, LiveSession};
use std::io::Write;
use std::time::{Duration, Instant};

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    Load {
        #[arg(long)]
        uri: String,
        #[arg(long)]
        collection: String,
        #[arg(long, default_value_t = 1_000_000)]
        docs: u64,
    },
    IoFloor {
        #[arg(long)]
        uri: String,
        #[arg(long)]
        collection: String,
        #[arg(long)]
        sample_size: u64,
        #[arg(long = "key")]
        keys: Vec<String>,
        /// Read the sample's `find` as raw BSON batches, decoding nothing (the floor of (a)).
        #[arg(long)]
        raw: bool,
    },
    Memcheck {
        #[arg(long, default_value_t = 10_000_000)]
        docs: u64,
        /// Count exactly within this many bytes (the `--memory-limit` path); without it,
        /// the fixed limits and sketches.
        #[arg(long)]
        exact_budget: Option<u64>,
    },
    GenPlan {
        /// The directory: `<dir>/app/*.bson` (the dump) and `<dir>/mongod.log`.
        #[arg(long)]
        dir: std::path::PathBuf,
        #[arg(long)]
        bytes: u64,
        /// Each command carries a `$clusterTime`, as a replica set's drivers send (and mongod
        /// logs) with every command: the log of a replica set's member.
        #[arg(long)]
        cluster_time: bool,
    },
    GenLog {
        #[arg(long)]
        out: std::path::PathBuf,
        #[arg(long, default_value_t = 1_000_000_000)]
        bytes: u64,
    },
    GenExport {
        #[arg(long)]
        out: std::path::PathBuf,
        #[arg(long, default_value_t = 1_000_000)]
        docs: u64,
        /// Also write the same documents as a mongodump .bson file.
        #[arg(long)]
        bson: Option<std::path::PathBuf>,
    },
}

use shardkey::util::splitmix::SplitMix64 as Rng;

const COUNTRIES: [&str; 20] =
    ["US", "DE", "GB", "FR", "IN", "BR", "JP", "CA", "AU", "ES", "MX", "IT", "NL", "SE", "PL", "KR", "ZA", "AR", "NG", "EG"];
const STATUSES: [&str; 5] = ["new", "paid", "shipped", "done", "void"];

/// One generated document: 12 candidate fields from 2 to ~1M distinct values.
fn bench_doc(i: u64, r: &mut Rng) -> Document {
    let tenant = {
        // skewed: tenant 0 holds ~20%
        let x = r.below(100);
        if x < 20 {
            0
        } else {
            1 + r.below(499)
        }
    };
    doc! {
        "_id": ObjectId::from_bytes({
            let mut b = [0u8; 12];
            b[..4].copy_from_slice(&(1_700_000_000u32 + (i / 10) as u32).to_be_bytes());
            b[4..12].copy_from_slice(&i.to_be_bytes());
            b
        }),
        "ts": DateTime::from_millis(1_700_000_000_000 + i as i64 * 100),
        "u": r.next_u64() as i64,
        "user": format!("user-{:06}", r.below(100_000)),
        "g": r.below(1000) as i64,
        "country": COUNTRIES[r.below(20) as usize],
        "status": STATUSES[r.below(5) as usize],
        "flag": r.below(2) == 1,
        "tenant": tenant as i64,
        "sku": format!("sku-{}", r.below(50_000)),
        "price": (r.below(10_000_000) as f64) / 100.0,
        "a": {"b": r.below(10_000) as i64, "note": "padding to a realistic document size"},
        "payload": "x".repeat(120),
    }
}

const CITIES: [&str; 8] = ["Berlin", "Lagos", "Lima", "Osaka", "Pune", "Quito", "Riga", "Tulsa"];
const TAGS: [&str; 6] = ["gift", "rush", "b2b", "promo", "fragile", "returning"];

/// One export document: `bench_doc`'s candidate fields and more, of the types mongoexport
/// writes (ObjectIds, dates, int32/int64/double/decimal, nested objects, arrays, escaped text).
fn export_doc(i: u64, r: &mut Rng) -> Document {
    let mut d = bench_doc(i, r);
    d.remove("payload");
    let oid = |x: u64| {
        let mut b = [0u8; 12];
        b[..4].copy_from_slice(&(1_600_000_000u32 + (x % 50_000_000) as u32).to_be_bytes());
        b[4..12].copy_from_slice(&x.to_be_bytes());
        ObjectId::from_bytes(b)
    };
    let n_items = 1 + r.below(3);
    let items: Vec<Bson> = (0..n_items)
        .map(|_| {
            Bson::Document(
                doc! {"sku": format!("sku-{}", r.below(50_000)), "qty": 1 + r.below(5) as i32, "unit": (r.below(10_000) as f64) / 100.0},
            )
        })
        .collect();
    let tags: Vec<Bson> = (0..r.below(4)).map(|_| Bson::String(TAGS[r.below(6) as usize].into())).collect();
    d.insert("items", items);
    d.insert("tags", tags);
    d.insert(
        "address",
        doc! {"city": CITIES[r.below(8) as usize], "zip": format!("{:05}", r.below(100_000)),
        "geo": [-180.0 + r.below(36_000) as f64 / 100.0, -90.0 + r.below(18_000) as f64 / 100.0]},
    );
    d.insert("createdBy", oid(r.below(1_000_000)));
    d.insert("updatedAt", DateTime::from_millis(1_700_000_000_000 + i as i64 * 100 + r.below(86_400_000) as i64));
    d.insert(
        "total",
        bson::Decimal128::from_bytes({
            // a valid decimal128 (positive, exponent -2): the coefficient in the low bytes.
            let mut b = [0u8; 16];
            b[..8].copy_from_slice(&r.below(10_000_000).to_le_bytes());
            b[14] = 0x3c;
            b[15] = 0x30;
            b
        }),
    );
    d.insert("version", r.below(3) as i32);
    d.insert("note", if r.below(10) == 0 { "said \"leave at door\"\tthanks".to_string() } else { format!("order {i}") });
    d
}

fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| l.to_string()))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|x| x.parse::<u64>().ok()))
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

fn main() -> Result<()> {
    match Cli::parse().cmd {
        Cmd::Load { uri, collection, docs } => {
            let rt = tokio::runtime::Runtime::new()?;
            rt.block_on(async {
                let client = mongodb::Client::with_uri_str(&uri).await?;
                let (db, coll) = collection.split_once('.').expect("db.coll");
                let c = client.database(db).collection::<Document>(coll);
                c.drop().await?;
                let mut r = Rng(42);
                let mut batch = Vec::with_capacity(10_000);
                for i in 0..docs {
                    batch.push(bench_doc(i, &mut r));
                    if batch.len() == 10_000 {
                        c.insert_many(std::mem::take(&mut batch)).await?;
                    }
                }
                if !batch.is_empty() {
                    c.insert_many(batch).await?;
                }
                Ok::<_, anyhow::Error>(())
            })?;
        }
        Cmd::IoFloor { uri, collection, sample_size, keys, raw } => {
            let keys: Vec<ShardKey> = keys.iter().map(|k| ShardKey::parse(k)).collect::<Result<_>>()?;
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
            let start = Instant::now();
            let lo = LiveOptions {
                uri,
                namespace: shardkey::model::Namespace::parse(&collection).map_err(anyhow::Error::msg)?,
                server_selection_timeout: Duration::from_secs(10),
                max_time: Duration::from_secs(600),
            };
            let session = rt.block_on(LiveSession::open(&lo))?;
            let info = rt.block_on(session.collection_info())?;
            if raw {
                let n =
                    session.read_raw(&rt, &keys, &info, sample_size)?.ok_or_else(|| anyhow::anyhow!("this sample size uses $sample"))?;
                println!("{}", json!({"docs": n, "seconds": start.elapsed().as_secs_f64()}));
                return Ok(());
            }
            let mut n = 0u64;
            session.stream_sample(&rt, &keys, &info, sample_size, &mut |batch| {
                n += batch.len() as u64;
                Ok(())
            })?;
            let mut m = 0u64;
            session.stream_in_order(&rt, &keys, &info, sample_size, shardkey::sample::RESERVOIR as u64, &mut |batch| {
                m += batch.len() as u64;
                Ok(())
            })?;
            println!("{}", json!({"docs": n, "orderDocs": m, "seconds": start.elapsed().as_secs_f64()}));
        }
        Cmd::Memcheck { docs, exact_budget } => {
            let start = Instant::now();
            let (keys, truth, mut sample) = match exact_budget {
                // Four high-cardinality candidates: every value distinct.
                Some(budget) => {
                    let keys: Vec<ShardKey> =
                        ["{u: 1}", "{v: 1}", "{s: 1}", "{o: 1}"].iter().map(|k| ShardKey::parse(k).unwrap()).collect();
                    let sample = Sample::with_budget(&keys, budget);
                    (keys, [docs; 4], sample)
                }
                // Unique, 10k values, 500k strings, compound unique.
                None => {
                    let keys: Vec<ShardKey> =
                        ["{u: 1}", "{m: 1}", "{s: 1}", "{g: 1, u: 1}"].iter().map(|k| ShardKey::parse(k).unwrap()).collect();
                    let sample = Sample::new(&keys);
                    (keys, [docs, docs.min(10_000), docs.min(500_000), docs], sample)
                }
            };
            let _ = &keys;
            for i in 0..docs {
                let d = if exact_budget.is_some() {
                    doc! {"u": i as i64, "v": (i * 7919 % docs) as i64, "s": format!("u{i}"), "o": ObjectId::from_bytes({
                        let mut b = [0u8; 12];
                        b[4..12].copy_from_slice(&i.to_be_bytes());
                        b
                    })}
                } else {
                    doc! {"u": i as i64, "m": (i % 10_000) as i64, "s": format!("user-{}", (i * 7919) % 500_000), "g": (i % 100) as i64}
                };
                sample.add(&d, 64);
            }
            sample.finish();
            let candidates: Vec<_> = sample
                .keys
                .iter()
                .zip(truth)
                .map(|(k, t)| {
                    let d = k.num_distinct();
                    json!({"key": k.key.to_string(), "distinct": d, "truth": t, "errorPercent": (d as f64 - t as f64).abs() * 100.0 / t as f64,
                           "exact": k.is_exact()})
                })
                .collect();
            println!(
                "{}",
                json!({"docs": docs, "seconds": start.elapsed().as_secs_f64(), "peakRssBytes": peak_rss_bytes(), "candidates": candidates})
            );
        }
        Cmd::GenExport { out, docs, bson } => {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&out)?);
            let mut b = match &bson {
                Some(p) => Some(std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(p)?)),
                None => None,
            };
            let mut r = Rng(11);
            let mut written = 0u64;
            for i in 0..docs {
                let d = export_doc(i, &mut r);
                if let Some(b) = b.as_mut() {
                    d.to_writer(b)?;
                }
                // Relaxed Extended JSON, as mongoexport writes by default.
                let s = Bson::Document(d).into_relaxed_extjson().to_string();
                w.write_all(s.as_bytes())?;
                w.write_all(b"\n")?;
                written += s.len() as u64 + 1;
            }
            w.flush()?;
            if let Some(mut b) = b {
                b.flush()?;
            }
            println!("{}", json!({"bytes": written, "docs": docs}));
        }
        Cmd::GenPlan { dir, bytes, cluster_time } => gen_plan(&dir, bytes, cluster_time)?,
        Cmd::GenLog { out, bytes } => {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&out)?);
            let mut r = Rng(7);
            let mut written = 0u64;
            let mut i = 0u64;
            while written < bytes {
                i += 1;
                let line = if i.is_multiple_of(5) {
                    json!({"t": {"$date": "2024-06-04T11:19:48.298Z"}, "s": "I", "c": "NETWORK", "id": 22943, "ctx": "listener",
                           "msg": "Connection accepted", "attr": {"remote": "10.0.0.7:51234", "connectionCount": 12}})
                } else {
                    let filter = match r.below(3) {
                        0 => json!({"tenant": r.below(500), "ts": {"$gte": {"$date": "2024-06-01T00:00:00Z"}}}),
                        1 => json!({"_id": {"$oid": format!("{:024x}", r.next_u64() as u128)}}),
                        _ => json!({"user": format!("user-{:06}", r.below(100_000))}),
                    };
                    json!({"t": {"$date": "2024-06-04T11:19:48.298Z"}, "s": "I", "c": "COMMAND", "id": 51803, "ctx": format!("conn{}", r.below(50)),
                           "msg": "Slow query", "attr": {"type": "command", "ns": "bench.orders", "appName": "bench",
                           "command": {"find": "orders", "filter": filter, "limit": 10, "$db": "bench"},
                           "planSummary": "IXSCAN { tenant: 1, ts: 1 }", "keysExamined": 10, "docsExamined": 10, "nreturned": 10,
                           "queryHash": "7C953B42", "durationMillis": 100 + r.below(400)}})
                };
                let s = line.to_string();
                w.write_all(s.as_bytes())?;
                w.write_all(b"\n")?;
                written += s.len() as u64 + 1;
            }
            w.flush()?;
            println!("{}", json!({"bytes": written, "lines": i}));
        }
    }
    Ok(())
}

/// A store application for `shardkey plan`: 50 stores, customers, orders, stock and a
/// catalogue in a dump; in the log, transactions as mongod 6.0 writes them (an update's
/// statement on its WRITE line, then its command line with the session; inserts without
/// documents), on 8 connections, until the log holds `bytes`.
fn gen_plan(dir: &std::path::Path, bytes: u64, cluster_time: bool) -> Result<()> {
    let db = dir.join("app");
    std::fs::create_dir_all(&db)?;
    let write = |name: &str, docs: &mut dyn Iterator<Item = Document>| -> Result<()> {
        let mut f = std::io::BufWriter::new(std::fs::File::create(db.join(format!("{name}.bson")))?);
        for d in docs {
            d.to_writer(&mut f)?;
        }
        let meta =
            json!({"indexes": [{"v": 2, "key": {"_id": 1}, "name": "_id_"}], "collectionName": name, "type": "collection", "options": {}});
        std::fs::write(db.join(format!("{name}.metadata.json")), meta.to_string())?;
        Ok(())
    };
    let (stores, customers, skus) = (50u64, 20_000u64, 500u64);
    write("customers", &mut (0..customers).map(|c| doc! {"_id": c as i64, "storeId": (c % stores) as i64, "name": format!("c{c}")}))?;
    write("items", &mut (0..skus).map(|k| doc! {"_id": format!("sku-{k}"), "price": k as f64 + 0.5}))?;
    write(
        "stock",
        &mut (0..skus * stores)
            .map(|i| doc! {"_id": i as i64, "storeId": (i % stores) as i64, "sku": format!("sku-{}", i / stores), "qty": 10}),
    )?;
    let mut r = Rng(3);
    write(
        "orders",
        &mut (0..100_000u64).map(|i| {
            let c = r.below(customers);
            doc! {"_id": i as i64, "storeId": (c % stores) as i64, "customerId": c as i64, "total": 9.5}
        }),
    )?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(dir.join("mongod.log"))?);
    let mut written = 0u64;
    let mut t = 0u64;
    let mut r = Rng(9);
    while written < bytes {
        t += 1;
        let ctx = format!("conn{}", t % 8);
        let c = r.below(customers);
        let (s, k) = (c % stores, r.below(skus));
        let session = |mut cmd: serde_json::Value| {
            cmd["lsid"] = json!({"id": {"$uuid": format!("{:08x}-0000-4000-8000-{:012x}", t >> 32, t & 0xffff_ffff_ffff)}});
            cmd["txnNumber"] = json!(1);
            cmd["autocommit"] = json!(false);
            if cluster_time {
                // As mongod 6.0 logs a driver's: the signature's `$binary` with `"subType":"0"`.
                cmd["$clusterTime"] = json!({"clusterTime": {"$timestamp": {"t": 1_764_000_000 + t / 1000, "i": 1 + t % 1000}},
                    "signature": {"hash": {"$binary": {"base64": "Oyz8KJHNLAIf5MPJ6Za5JeRHvbY=", "subType": "0"}}, "keyId": 7_311_111_111_111_111_111i64}});
            }
            cmd["$db"] = json!("app");
            cmd
        };
        let mut lines = vec![
            (
                "COMMAND",
                json!({"type": "command", "ns": "app.items", "command": session(json!({"find": "items", "filter": {"_id": format!("sku-{k}")}, "startTransaction": true})), "durationMillis": 0}),
            ),
            (
                "COMMAND",
                json!({"type": "command", "ns": "app.customers", "command": session(json!({"find": "customers", "filter": {"storeId": s, "_id": c}})), "durationMillis": 0}),
            ),
            (
                "COMMAND",
                json!({"type": "command", "ns": "app.orders", "command": session(json!({"insert": "orders", "ordered": true})), "ninserted": 1, "durationMillis": 0}),
            ),
            (
                "WRITE",
                json!({"type": "update", "ns": "app.stock", "command": {"q": {"storeId": s, "sku": format!("sku-{k}")}, "u": {"$inc": {"qty": -1}}, "multi": false, "upsert": false}, "durationMillis": 0}),
            ),
            (
                "COMMAND",
                json!({"type": "command", "ns": "app.$cmd", "command": session(json!({"update": "stock", "ordered": true})), "durationMillis": 0}),
            ),
        ];
        if t.is_multiple_of(4) {
            lines.push(("WRITE", json!({"type": "update", "ns": "app.customers", "command": {"q": {"_id": c}, "u": {"$inc": {"n": 1}}, "multi": false, "upsert": false}, "durationMillis": 0})));
            lines.push(("COMMAND", json!({"type": "command", "ns": "app.$cmd", "command": session(json!({"update": "customers", "ordered": true})), "durationMillis": 0})));
        }
        for (comp, attr) in lines {
            let ms = t % 60_000;
            let line = format!(
                r#"{{"t":{{"$date":"2026-11-24T07:{:02}:{:02}.{:03}+00:00"}},"s":"I","c":"{comp}","id":51803,"ctx":"{ctx}","msg":"Slow query","attr":{attr}}}"#,
                ms / 1000 / 60,
                (ms / 1000) % 60,
                ms % 1000
            );
            w.write_all(line.as_bytes())?;
            w.write_all(b"\n")?;
            written += line.len() as u64 + 1;
        }
    }
    w.flush()?;
    println!("{}", json!({"bytes": written, "transactions": t}));
    Ok(())
}
