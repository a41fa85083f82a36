//! Generated workloads written as mongod 6.0 logs them (JSON lines, id 51803): statements of
//! an update on their own `WRITE` line, then the command's line with the session; inserts
//! without their documents. And the mongodump collections beside them (`.bson` and
//! `.metadata.json`). Shared by the plan tests' generators.

use mongodb::bson::Document;
use serde_json::{json, Value};
use std::fmt::Write;
use std::path::Path;

/// A dump collection: `<name>.bson` and its metadata.json with these indexes.
pub fn write_dump_collection(dir: &Path, name: &str, docs: &[Document], indexes: Value) {
    let mut f = std::fs::File::create(dir.join(format!("{name}.bson"))).unwrap();
    for d in docs {
        d.to_writer(&mut f).unwrap();
    }
    let meta = json!({"indexes": indexes, "collectionName": name, "type": "collection", "options": {}});
    std::fs::write(dir.join(format!("{name}.metadata.json")), meta.to_string()).unwrap();
}

/// The `_id` index alone, as metadata.json lists it.
pub fn id_index_only() -> Value {
    json!([{"v": 2, "key": {"_id": 1}, "name": "_id_"}])
}

/// The log's lines, one millisecond apart from `hour`:00, in the server's field order.
pub struct SlowLog {
    pub text: String,
    ms: u64,
    hour: u32,
    db: &'static str,
}

impl SlowLog {
    pub fn new(db: &'static str, hour: u32) -> SlowLog {
        SlowLog { text: String::new(), ms: 0, hour, db }
    }

    pub fn line(&mut self, ctx: &str, c: &str, attr: Value) {
        self.ms += 1;
        let (ms, h) = (self.ms, self.hour);
        let t = format!("2026-11-24T{h:02}:{:02}:{:02}.{:03}+00:00", (ms / 60_000) % 60, (ms / 1000) % 60, ms % 1000);
        writeln!(self.text, r#"{{"t":{{"$date":"{t}"}},"s":"I","c":"{c}","id":51803,"ctx":"{ctx}","msg":"Slow query","attr":{attr}}}"#)
            .unwrap();
    }

    /// A find outside any transaction.
    pub fn find(&mut self, coll: &str, filter: Value) {
        let db = self.db;
        let attr = json!({"type": "command", "ns": format!("{db}.{coll}"), "command": {"find": coll, "filter": filter, "$db": db}, "durationMillis": 0});
        self.line("conn50", "COMMAND", attr);
    }

    /// An update statement outside any transaction (its WRITE line).
    pub fn update(&mut self, coll: &str, q: Value, u: Value) {
        let attr = json!({"type": "update", "ns": format!("{}.{coll}", self.db), "command": {"q": q, "u": u, "multi": false, "upsert": false}, "durationMillis": 0});
        self.line("conn50", "WRITE", attr);
    }
}

/// One transaction's lines: (component, attr), the session added to every command; the
/// first command says `startTransaction`.
pub struct TxnLines {
    pub lsid: Value,
    pub n: i64,
    pub db: &'static str,
    pub lines: Vec<(&'static str, Value)>,
}

impl TxnLines {
    fn cmd(&self, mut c: Value, first: bool) -> Value {
        c["lsid"] = self.lsid.clone();
        c["txnNumber"] = self.n.into();
        c["autocommit"] = false.into();
        if first {
            c["startTransaction"] = true.into();
        }
        c["$db"] = self.db.into();
        c
    }

    pub fn find(&mut self, coll: &str, filter: Value) {
        let c = self.cmd(json!({"find": coll, "filter": filter}), self.lines.is_empty());
        self.lines.push(("COMMAND", json!({"type": "command", "ns": format!("{}.{coll}", self.db), "command": c, "durationMillis": 0})));
    }

    pub fn insert(&mut self, coll: &str) {
        let c = self.cmd(json!({"insert": coll, "ordered": true}), self.lines.is_empty());
        let ns = format!("{}.{coll}", self.db);
        self.lines.push(("COMMAND", json!({"type": "command", "ns": ns, "command": c, "ninserted": 1, "durationMillis": 0})));
    }

    /// The statement on its own WRITE line, then the command's line without it.
    pub fn update(&mut self, coll: &str, q: Value, u: Value) {
        let c = self.cmd(json!({"update": coll, "ordered": true}), self.lines.is_empty());
        let ns = format!("{}.{coll}", self.db);
        self.lines.push((
            "WRITE",
            json!({"type": "update", "ns": ns, "command": {"q": q, "u": u, "multi": false, "upsert": false}, "durationMillis": 0}),
        ));
        self.lines.push(("COMMAND", json!({"type": "command", "ns": format!("{}.$cmd", self.db), "command": c, "durationMillis": 0})));
    }
}
