//! Deterministic generator of the bundled fixtures (`fixtures/`):
//! - `events.ndjson`: an events collection as mongoexport writes it (relaxed Extended JSON);
//! - `mongod.log`: a mongod 6.0 JSON log with slow-query lines over that collection;
//! - `sampledQueries.ndjson` / `sampledQueriesDiff.ndjson`: the same kind of
//!   traffic as 7.0 stores it in `config.sampledQueries[Diff]`.
//!
//! Run: `cargo run --release --example gen_fixtures -- fixtures` (same output every time).

use serde_json::{json, Value};
use std::fmt::Write as _;
use std::io::Write;

use shardkey::util::splitmix::SplitMix64 as Rng;

const NUM_DOCS: usize = 10_000;
const NUM_PROJECTS: u64 = 200;
const NUM_USERS: u64 = 5_000;
const BASE_SECS: i64 = 1_717_200_000; // 2024-06-01
const COUNTRIES: [(&str, f64); 10] = [
    ("US", 0.22),
    ("DE", 0.14),
    ("GB", 0.12),
    ("FR", 0.1),
    ("IN", 0.1),
    ("BR", 0.08),
    ("JP", 0.07),
    ("CA", 0.07),
    ("AU", 0.05),
    ("ES", 0.05),
];
const KINDS: [&str; 4] = ["view", "click", "purchase", "signup"];

fn oid(secs: i64, counter: u32) -> String {
    format!("{:08x}a1b2c3d4e5{:06x}", secs as u32, counter & 0xff_ffff)
}

fn iso(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // civil-from-days (Howard Hinnant)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z", rem / 3600, rem % 3600 / 60, rem % 60, ms.rem_euclid(1000))
}

fn project_name(i: u64) -> String {
    format!("proj-{i:04}")
}

/// Project 0 holds ~35% of events; the rest follow a Zipf-like tail.
fn pick_project(r: &mut Rng) -> u64 {
    if r.unit() < 0.35 {
        return 0;
    }
    let u = r.unit();
    1 + ((NUM_PROJECTS - 1) as f64 * u * u) as u64
}

fn pick_country(r: &mut Rng) -> &'static str {
    let mut u = r.unit();
    for (c, w) in COUNTRIES {
        if u < w {
            return c;
        }
        u -= w;
    }
    COUNTRIES[0].0
}

struct Event {
    id: String,
    ts_ms: i64,
    project: Option<u64>,
    user: u64,
    country: &'static str,
}

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "fixtures".into());
    std::fs::create_dir_all(&dir).expect("create the fixtures folder");
    let mut r = Rng(20_240_601);
    let mut events = Vec::with_capacity(NUM_DOCS);
    let mut docs = String::new();
    for i in 0..NUM_DOCS {
        let ts_ms = (BASE_SECS + i as i64 * 30) * 1000 + r.below(29_000) as i64;
        let id = oid(ts_ms / 1000, i as u32);
        let project = if r.below(100) == 0 { None } else { Some(pick_project(&mut r)) };
        let user = r.below(NUM_USERS);
        let country = pick_country(&mut r);
        let kind = KINDS[r.below(KINDS.len() as u64) as usize];
        let mut d = serde_json::Map::new();
        d.insert("_id".into(), json!({"$oid": id}));
        d.insert("ts".into(), json!({"$date": iso(ts_ms)}));
        if let Some(p) = project {
            d.insert("projectId".into(), json!(project_name(p)));
        }
        d.insert("userId".into(), json!(format!("user-{user:05}")));
        d.insert("country".into(), json!(country));
        d.insert("type".into(), json!(kind));
        d.insert("durationMs".into(), json!(r.below(5000)));
        let os = ["ios", "android", "web"][r.below(3) as usize];
        d.insert("device".into(), json!({"os": os, "version": r.below(20)}));
        d.insert("path".into(), json!(format!("/app/{}/{}", kind, r.below(50))));
        writeln!(docs, "{}", Value::Object(d)).unwrap();
        events.push(Event { id, ts_ms, project, user, country });
    }
    std::fs::write(format!("{dir}/events.ndjson"), docs).expect("write events.ndjson");

    // The log and the sampled queries describe the same workload.
    let mut log = std::fs::File::create(format!("{dir}/mongod.log")).expect("create mongod.log");
    let mut sampled = String::new();
    let mut diffs = String::new();
    let last_ms = events.last().map(|e| e.ts_ms).unwrap_or(0);
    let start_line = json!({"t": {"$date": iso(last_ms)}, "s": "I", "c": "CONTROL", "id": 23403, "ctx": "initandlisten", "msg": "Build Info", "attr": {"buildInfo": {"version": "6.0.5"}}});
    writeln!(log, "{start_line}").unwrap();
    for i in 0..1500u64 {
        let t_ms = last_ms + 1000 + i as i64 * 700;
        let conn = format!("conn{}", 10 + r.below(20));
        let ev = &events[r.below(NUM_DOCS as u64) as usize];
        let proj = project_name(ev.project.unwrap_or(0));
        let roll = r.below(100);
        let ts_lo = BASE_SECS * 1000 + r.below(NUM_DOCS as u64 * 30_000) as i64;
        let ts_range = json!({"$gte": {"$date": iso(ts_lo)}, "$lt": {"$date": iso(ts_lo + 3_600_000)}});
        // (c, type, command, sampled cmdName, sampled cmd)
        let (c, typ, cmd, s_name, s_cmd): (&str, &str, Value, &str, Value) = match roll {
            0..=29 => {
                let f = json!({"projectId": proj});
                (
                    "COMMAND",
                    "command",
                    json!({"find": "events", "filter": f, "sort": {"ts": -1}, "limit": 50, "$db": "app"}),
                    "find",
                    json!({"filter": f}),
                )
            }
            30..=39 => {
                let f = json!({"projectId": proj, "ts": ts_range});
                (
                    "COMMAND",
                    "command",
                    json!({"aggregate": "events", "pipeline": [{"$match": f}, {"$group": {"_id": "$type", "n": {"$sum": 1}}}], "cursor": {}, "$db": "app"}),
                    "aggregate",
                    json!({"filter": f}),
                )
            }
            40..=54 => {
                let f = json!({"_id": {"$oid": ev.id}});
                (
                    "COMMAND",
                    "command",
                    json!({"find": "events", "filter": f, "limit": 1, "singleBatch": true, "$db": "app"}),
                    "find",
                    json!({"filter": f}),
                )
            }
            55..=66 => {
                let f = json!({"ts": ts_range});
                ("COMMAND", "command", json!({"find": "events", "filter": f, "$db": "app"}), "find", json!({"filter": f}))
            }
            67..=76 => {
                let f = json!({"userId": format!("user-{:05}", ev.user)});
                ("COMMAND", "command", json!({"find": "events", "filter": f, "$db": "app"}), "find", json!({"filter": f}))
            }
            77..=79 => {
                let f = json!({"country": ev.country, "type": "purchase"});
                ("COMMAND", "command", json!({"count": "events", "query": f, "$db": "app"}), "count", json!({"filter": f}))
            }
            80..=89 => {
                let q = json!({"_id": {"$oid": ev.id}});
                let u = json!({"$set": {"status": "seen"}});
                (
                    "WRITE",
                    "update",
                    json!({"q": q, "u": u, "multi": false, "upsert": false}),
                    "update",
                    json!({"update": "events", "updates": [{"q": q, "u": u, "multi": false, "upsert": false}], "$db": "app"}),
                )
            }
            90..=93 => {
                let q = json!({"projectId": proj, "ts": ts_range});
                let u = json!({"$set": {"archived": true}});
                (
                    "WRITE",
                    "update",
                    json!({"q": q, "u": u, "multi": true, "upsert": false}),
                    "update",
                    json!({"update": "events", "updates": [{"q": q, "u": u, "multi": true, "upsert": false}], "$db": "app"}),
                )
            }
            94..=95 => {
                let q = json!({"_id": {"$oid": ev.id}});
                (
                    "WRITE",
                    "remove",
                    json!({"q": q, "limit": 1}),
                    "delete",
                    json!({"delete": "events", "deletes": [{"q": q, "limit": 1}], "$db": "app"}),
                )
            }
            96..=97 => {
                // Moves one event to another project: its filter names the whole key
                // {projectId: 1, _id: 1}, so 4.2+ accepts the key change (as a retryable write).
                let q = json!({"projectId": ev.project.map_or(Value::Null, |p| json!(project_name(p))), "_id": {"$oid": ev.id}});
                let u = json!({"$set": {"projectId": project_name(pick_project(&mut r))}});
                (
                    "COMMAND",
                    "command",
                    json!({"findAndModify": "events", "query": q, "update": u, "new": true, "$db": "app"}),
                    "findAndModify",
                    json!({"findAndModify": "events", "query": q, "update": u, "new": true, "$db": "app"}),
                )
            }
            _ => {
                let f = json!({"sku": format!("sku-{}", r.below(100))});
                ("COMMAND", "command", json!({"find": "inventory", "filter": f, "$db": "app"}), "", json!({}))
            }
        };
        let ns = if cmd.get("find").and_then(|v| v.as_str()) == Some("inventory") { "app.inventory" } else { "app.events" };
        let line = json!({
            "t": {"$date": iso(t_ms)}, "s": "I", "c": c, "id": 51803, "ctx": conn, "msg": "Slow query",
            "attr": {"type": typ, "ns": ns, "appName": "events-api", "command": cmd,
                     "planSummary": "IXSCAN { projectId: 1, ts: -1 }", "keysExamined": 120, "docsExamined": 120,
                     "numYields": 0, "nreturned": 50, "durationMillis": 100 + r.below(400)}
        });
        writeln!(log, "{line}").unwrap();
        if i % 7 == 0 {
            let other = json!({"t": {"$date": iso(t_ms + 1)}, "s": "I", "c": "NETWORK", "id": 22943, "ctx": "listener", "msg": "Connection accepted", "attr": {"remote": "10.0.0.7:51234", "connectionCount": 12}});
            writeln!(log, "{other}").unwrap();
        }
        if !s_name.is_empty() && i % 3 == 0 {
            let sid = format!("{:08x}-0000-4000-8000-{:012x}", i, i);
            let doc = json!({"_id": {"$uuid": sid}, "ns": "app.events", "collectionUuid": {"$uuid": "6a1c0e2e-1111-4222-8333-444455556666"},
                             "cmdName": s_name, "cmd": s_cmd, "expireAt": {"$date": iso(t_ms + 7 * 86_400_000)}});
            writeln!(sampled, "{doc}").unwrap();
            if s_name == "findAndModify" {
                let diff = json!({"_id": {"$uuid": sid}, "ns": "app.events", "collectionUuid": {"$uuid": "6a1c0e2e-1111-4222-8333-444455556666"},
                                  "diff": {"projectId": "u"}, "expireAt": {"$date": iso(t_ms + 7 * 86_400_000)}});
                writeln!(diffs, "{diff}").unwrap();
            }
        }
    }
    // Inserts are logged when slow too.
    let ins = json!({"t": {"$date": iso(last_ms + 2_000_000)}, "s": "I", "c": "WRITE", "id": 51803, "ctx": "conn12", "msg": "Slow query",
        "attr": {"type": "insert", "ns": "app.events", "ninserted": 1, "keysInserted": 4, "durationMillis": 150}});
    writeln!(log, "{ins}").unwrap();
    std::fs::write(format!("{dir}/sampledQueries.ndjson"), sampled).expect("write sampledQueries");
    std::fs::write(format!("{dir}/sampledQueriesDiff.ndjson"), diffs).expect("write sampledQueriesDiff");
    eprintln!("wrote {NUM_DOCS} events, 1500 slow queries and their sampled-query twins to {dir}/");
}
