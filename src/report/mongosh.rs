//! `plan --format mongosh`: the plan as one mongosh script a DBA runs through mongos
//! (`mongosh "mongodb://mongos/" plan.js`). The script first checks that the cluster is what
//! the plan was made from (mongos, the shards, the version, each collection with its indexes
//! and shard key) and stops before changing anything when one differs; then runs the plan's
//! steps in order, printing each, skipping any already done (so it can run again).
//!
//! Only formatting: this plan's data (`PLAN`, as canonical Extended JSON so every value keeps
//! its BSON type, and `SHARDS`) heads the script, and the same code follows for every plan
//! (`mongosh_plan.js`).

use crate::model::index::IndexSpec;
use crate::plan::outcome::Plan;
use crate::plan::steps::Step;
use bson::{Bson, Document};
use serde_json::{json, Value};
use std::io::{self, Write};

/// The checks and the steps, the same for every plan.
const CODE: &str = include_str!("mongosh_plan.js");

fn ejson(d: &Document) -> Value {
    Bson::Document(d.clone()).into_canonical_extjson()
}

fn index(ix: &IndexSpec) -> Value {
    let mut v = json!({"name": ix.name, "key": ejson(&ix.key), "unique": ix.unique, "sparse": ix.sparse});
    if let Some(p) = &ix.partial_filter {
        v["partialFilterExpression"] = ejson(p);
    }
    if let Some(c) = &ix.collation {
        v["collation"] = ejson(c);
    }
    if let Some(s) = ix.expire_after_seconds {
        v["expireAfterSeconds"] = json!(s);
    }
    v
}

fn step(s: &Step) -> Value {
    let mut v = match s {
        Step::EnableSharding { db } => json!({"op": "enableSharding", "db": db}),
        Step::AddShardToZone { shard, zone } => json!({"op": "addShardToZone", "shard": shard, "zone": zone}),
        Step::CreateIndex { namespace, key, simple_collation } => {
            json!({"op": "createIndex", "ns": namespace, "key": ejson(&key.to_document()), "simpleCollation": simple_collation})
        }
        Step::UpdateZoneKeyRange { namespace, min, max, zone } => {
            json!({"op": "updateZoneKeyRange", "ns": namespace, "min": ejson(min), "max": ejson(max), "zone": zone})
        }
        Step::ShardCollection { namespace, key, simple_collation } => {
            json!({"op": "shardCollection", "ns": namespace, "key": ejson(&key.to_document()), "simpleCollation": simple_collation})
        }
        Step::Refine { namespace, key } => json!({"op": "refineCollectionShardKey", "ns": namespace, "key": ejson(&key.to_document())}),
        Step::Reshard { namespace, key, simple_collation } => {
            json!({"op": "reshardCollection", "ns": namespace, "key": ejson(&key.to_document()), "simpleCollation": simple_collation})
        }
        Step::MoveCollection { namespace, shard } => json!({"op": "moveCollection", "ns": namespace, "shard": shard}),
    };
    v["text"] = json!(s.command());
    v
}

/// This plan's data, as the script's code reads it.
fn data(p: &Plan) -> Value {
    let version = p.target_version.as_deref().and_then(|t| {
        let (a, b) = t.split_once('.')?;
        Some(json!({"majorMinor": [a.parse::<u32>().ok()?, b.parse::<u32>().ok()?], "words": p.version.words}))
    });
    let collections: Vec<Value> = p
        .basis
        .collections
        .iter()
        .map(|c| {
            json!({
                "ns": c.namespace,
                "type": c.kind,
                "capped": c.capped,
                "collation": c.collation.as_ref().and_then(|d| d.get_str("locale").ok()),
                "indexes": c.indexes.as_ref().map(|ixs| ixs.iter().map(index).collect::<Vec<_>>()),
                "shardKey": c.shard_key.as_ref().map(|k| ejson(&k.to_document())),
            })
        })
        .collect();
    json!({
        "database": p.database,
        "numShards": p.num_shards,
        "version": version,
        "collections": collections,
        "steps": applied(p).0.iter().map(step).collect::<Vec<_>>(),
        "refused": refused(p),
        "blocked": blocked(p),
        "primaryFirst": primary_first(p),
    })
}

/// Whether the plan rests on SHARDS[0] being the database's primary shard: a collection it
/// keeps unsharded stays there (the plan calls it shard0) while its steps name shards (zone 0
/// beside it, moveCollection away from it). The script checks config.databases for it.
fn primary_first(p: &Plan) -> bool {
    use crate::plan::outcome::Action;
    use crate::plan::steps::Step;
    let names_shards = applied(p).0.iter().any(|s| matches!(s, Step::AddShardToZone { .. } | Step::MoveCollection { .. }));
    names_shards && applied_collections(p).iter().any(|c| c.action == Action::Unsharded)
}

/// The unique indexes that keep `shardCollection` from taking a planned key while they exist
/// (a key kept as given): the script stops before changing anything while one does.
fn blocked(p: &Plan) -> Vec<Value> {
    applied_collections(p)
        .iter()
        .flat_map(|c| c.blocked_by.iter().map(move |ix| (c, ix)))
        .map(|(c, ix)| {
            json!({
                "ns": c.namespace,
                "key": c.key.as_ref().map(|k| k.to_string()),
                "index": ix.name,
                "pattern": ix.pattern,
            })
        })
        .collect()
}

/// The writes the plan's keys make the target version refuse, for the check that stops the
/// script until they run (a later version) or the application names the key: in
/// transactions (the transactions' blockers) and on their own (each collection's analysis).
fn refused(p: &Plan) -> Vec<Value> {
    let in_transactions = applied(p).2.iter().filter(|b| b.shape == crate::plan::blockers::Shape::Refused).map(|b| {
        json!({
            "ns": b.namespace,
            "writes": format!("{} writes (e.g. {})", b.op, b.example),
            "says": format!(
                "the {} of {}% of transactions is refused under the planned key (error {}), e.g. {}; fix: {}",
                b.op,
                b.transactions_percent,
                b.error_code.map(|c| c.to_string()).unwrap_or_default(),
                b.example,
                b.fix
            ),
            "acceptedFrom": b.accepted_from,
        })
    });
    let alone = applied_collections(p).iter().flat_map(|c| c.refused_writes.iter().map(move |w| (c, w))).map(|(c, w)| {
        json!({
            "ns": c.namespace,
            "writes": format!("writes refused under the planned key ({:.1}% of its sampled writes)", w.percentage_of_writes),
            "says": w.message,
            "acceptedFrom": w.accepted_from,
        })
    });
    in_transactions.chain(alone).collect()
}

/// The plan the script applies: with choices given (`--key`, `--unsharded`) the plan as
/// given, the DBA's own question (its steps, commands and blockers); else shardkey's.
fn applied(p: &Plan) -> (&[crate::plan::steps::Step], &[String], &[crate::plan::blockers::Blocker]) {
    match &p.given {
        Some(g) => (&g.steps, &g.commands, &g.transactions.blockers),
        None => (&p.steps, &p.commands, &p.transactions.blockers),
    }
}

/// The collections of the plan the script applies (`applied`).
fn applied_collections(p: &Plan) -> &[crate::plan::outcome::PlannedCollection] {
    p.given.as_ref().map_or(&p.collections, |g| &g.collections)
}

/// Text for a `//` comment: one line, no control characters (a file name may hold any).
fn comment(t: &str) -> String {
    t.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

pub(super) fn write(p: &Plan, out: &mut dyn Write) -> io::Result<()> {
    let shards: Vec<&str> = p.shards.iter().map(|s| s.shard.as_str()).collect();
    let text = serde_json::to_string(&data(p)).map_err(io::Error::other)?;
    let mut s = String::new();
    s.push_str(&format!(
        "// shardkey plan for database {} ({} {}): apply it through mongos:\n",
        comment(&p.database),
        env!("CARGO_PKG_NAME"),
        env!("CARGO_PKG_VERSION")
    ));
    s.push_str("//   mongosh \"mongodb://<mongos host>/\" plan.js\n");
    s.push_str("// It first checks that the cluster is what the plan was made from (mongos, its shards, the\n");
    s.push_str("// MongoDB version, each collection with its indexes and shard key) and stops before changing\n");
    s.push_str("// anything when one differs; then runs the plan's steps in order, printing each, and skips any\n");
    s.push_str("// step already done: it is safe to run again.\n");
    s.push_str(&format!("// Version: {}.\n", comment(&p.version.words)));
    if p.given.is_some() {
        s.push_str("// The plan as given (--key, --unsharded): your choices kept, the rest chosen around them;\n");
        s.push_str("// plan without them for shardkey's own.\n");
    }
    s.push_str("//\n// The steps:\n");
    for c in applied(p).1 {
        s.push_str(&format!("//   {}\n", comment(c)));
    }
    // A zone that pins a value above its shard's fair share: the DBA decides on the cut
    // before running the zone steps, so it is said beside them.
    for v in applied_collections(p).iter().flat_map(|c| &c.pinned_values) {
        s.push_str(&format!("// Note: {}\n", comment(&v.message)));
    }
    s.push_str("\n// Zone i goes to SHARDS[i]. shardkey names the shards shard0, shard1, ...: write your shards'\n");
    s.push_str("// names here (sh.status() lists them), in the order the zones should take them.\n");
    s.push_str(&format!("const SHARDS = {};\n\n", serde_json::to_string(&shards).map_err(io::Error::other)?));
    s.push_str("// Writes the target version refuses under the planned keys stop the script (its checks name\n");
    s.push_str("// them and their fix): set true once the application's filters name the key's fields.\n");
    s.push_str("const REFUSED_WRITES_FIXED = false;\n\n");
    s.push_str("// What the plan was made from and what it does (Extended JSON: every value keeps its type).\n");
    s.push_str(&format!("const PLAN = EJSON.parse({});\n\n", serde_json::to_string(&text).map_err(io::Error::other)?));
    s.push_str(CODE);
    out.write_all(s.as_bytes())
}
