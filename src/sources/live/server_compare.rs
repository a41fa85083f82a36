//! `--compare-server`: the parts of MongoDB 7.0+'s `analyzeShardKey` reply we
//! show beside our own numbers.

use super::session::LiveSession;
use crate::model::ShardKey;
use anyhow::{bail, Result};
use bson::{doc, Document};
use serde_json::{Map, Value};

const CHARACTERISTICS: [&str; 7] =
    ["numDocsTotal", "numDocsSampled", "avgDocSizeBytes", "numDistinctValues", "isUnique", "mostCommonValues", "monotonicity"];
const READS: [&str; 4] = ["sampleSize", "percentageOfSingleShardReads", "percentageOfMultiShardReads", "percentageOfScatterGatherReads"];
const WRITES: [&str; 7] = [
    "sampleSize",
    "percentageOfSingleShardWrites",
    "percentageOfMultiShardWrites",
    "percentageOfScatterGatherWrites",
    "percentageOfShardKeyUpdates",
    "percentageOfSingleWritesWithoutShardKey",
    "percentageOfMultiWritesWithoutShardKey",
];

fn pick(d: &Document, fields: &[&str]) -> Value {
    let mut m = Map::new();
    for f in fields {
        if let Some(v) = d.get(*f) {
            m.insert(f.to_string(), v.clone().into_relaxed_extjson());
        }
    }
    Value::Object(m)
}

/// The comparable subset of an `analyzeShardKey` reply.
pub(crate) fn summarize_reply(reply: &Document) -> Result<Value> {
    if let Ok(msg) = reply.get_str("errmsg") {
        bail!("analyzeShardKey failed: {msg}");
    }
    let kc = reply.get_document("keyCharacteristics").ok();
    let rd = reply.get_document("readDistribution").ok();
    let wd = reply.get_document("writeDistribution").ok();
    if kc.is_none() && rd.is_none() && wd.is_none() {
        bail!("the analyzeShardKey reply has no keyCharacteristics, readDistribution or writeDistribution");
    }
    let mut out = Map::new();
    if let Some(kc) = kc {
        out.insert("keyCharacteristics".into(), pick(kc, &CHARACTERISTICS));
    }
    if let Some(rd) = rd {
        out.insert("readDistribution".into(), pick(rd, &READS));
    }
    if let Some(wd) = wd {
        out.insert("writeDistribution".into(), pick(wd, &WRITES));
    }
    Ok(Value::Object(out))
}

impl LiveSession {
    /// The server's own `analyzeShardKey` for a key (7.0+).
    pub(crate) async fn analyze_shard_key(&self, key: &ShardKey) -> Result<Document> {
        let cmd = doc! {
            "analyzeShardKey": self.namespace.to_string(),
            "key": key.to_document(),
            "keyCharacteristics": true,
            "readWriteDistribution": true,
        };
        self.command(&self.client.database("admin"), cmd, "analyzeShardKey on").await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    /// A reply in the 7.0 format (manual, analyzeShardKey output).
    fn reply() -> Document {
        doc! {
            "keyCharacteristics": {
                "numDocsTotal": 9039i64, "avgDocSizeBytes": 153i64, "numDocsSampled": 9039i64,
                "isUnique": false, "numDistinctValues": 8939i64,
                "mostCommonValues": [{"value": {"lastName": "Smith"}, "frequency": 19i64}],
                "monotonicity": {"recordIdCorrelationCoefficient": 0.0, "type": "not monotonic"},
            },
            "readDistribution": {
                "sampleSize": {"total": 61363, "find": 30000, "aggregate": 0, "count": 31363, "distinct": 0},
                "percentageOfSingleShardReads": 50.0, "percentageOfMultiShardReads": 0.0,
                "percentageOfScatterGatherReads": 50.0, "numReadsByRange": [688, 775],
            },
            "writeDistribution": {
                "sampleSize": {"total": 49, "update": 30, "delete": 0, "findAndModify": 19},
                "percentageOfSingleShardWrites": 100.0, "percentageOfMultiShardWrites": 0.0,
                "percentageOfScatterGatherWrites": 0.0, "numWritesByRange": [20, 30],
                "percentageOfShardKeyUpdates": 0.0, "percentageOfSingleWritesWithoutShardKey": 0.0,
                "percentageOfMultiWritesWithoutShardKey": 0.0,
            },
            "ok": 1,
        }
    }

    #[test]
    fn parses_the_7_0_reply() {
        let v = summarize_reply(&reply()).unwrap();
        assert_eq!(v["keyCharacteristics"]["numDistinctValues"], 8939);
        assert_eq!(v["keyCharacteristics"]["monotonicity"]["type"], "not monotonic");
        assert_eq!(v["keyCharacteristics"]["mostCommonValues"][0]["value"]["lastName"], "Smith");
        assert_eq!(v["readDistribution"]["percentageOfScatterGatherReads"], 50.0);
        assert_eq!(v["writeDistribution"]["sampleSize"]["findAndModify"], 19);
        assert!(v["readDistribution"].get("numReadsByRange").is_none());
        assert!(summarize_reply(&doc! {"ok": 0, "errmsg": "no such command"}).is_err());
        assert!(summarize_reply(&doc! {"ok": 1}).is_err());
    }
}
