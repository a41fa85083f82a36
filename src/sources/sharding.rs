//! Sharding metadata of an already sharded collection: `config.collections`
//! (key, uuid), `config.chunks` (by `uuid` on 5.0+, by `ns` before) and
//! `config.shards`, read through mongos or from the config servers.

use crate::bsonx::cmp_tuple;
use crate::model::sharding::{ChunkDoc, ShardingMetadata};
use crate::model::ShardKey;
use anyhow::{anyhow, Result};
use bson::{Bson, Document};

/// The key's values of a chunk bound, in key order (`{a: MinKey, b: 5}` → [MinKey, 5]).
fn bound(key: &ShardKey, d: &Document) -> Result<Vec<Bson>> {
    key.fields.iter().map(|f| d.get(&f.path).cloned().ok_or_else(|| anyhow!("chunk bound {d} lacks key field {}", f.path))).collect()
}

/// Build the metadata from the documents as the config database stores them.
/// `chunks_by_uuid` are the chunks found by the collection's uuid, `chunks_by_ns` by its namespace.
pub(crate) fn parse(
    collection: &Document,
    chunks_by_uuid: &[Document],
    chunks_by_ns: &[Document],
    shards: &[Document],
) -> Result<ShardingMetadata> {
    let namespace = collection.get_str("_id").map_err(|_| anyhow!("config.collections document without _id"))?.to_string();
    let key =
        ShardKey::from_document(collection.get_document("key").map_err(|_| anyhow!("{namespace}: no shard key in config.collections"))?)?;
    let (raw, chunk_format) = if !chunks_by_uuid.is_empty() { (chunks_by_uuid, "uuid") } else { (chunks_by_ns, "ns") };
    let mut chunks = raw
        .iter()
        .map(|c| {
            Ok(ChunkDoc {
                min: bound(&key, c.get_document("min").map_err(|_| anyhow!("chunk without min"))?)?,
                max: bound(&key, c.get_document("max").map_err(|_| anyhow!("chunk without max"))?)?,
                shard: c.get_str("shard").unwrap_or("?").to_string(),
                jumbo: c.get_bool("jumbo").unwrap_or(false),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    chunks.sort_by(|a, b| cmp_tuple(&a.min, &b.min));
    let mut names: Vec<String> = shards.iter().filter_map(|s| s.get_str("_id").ok().map(str::to_string)).collect();
    for c in &chunks {
        if !names.contains(&c.shard) {
            names.push(c.shard.clone());
        }
    }
    names.sort();
    let shard_hosts = shards.iter().filter_map(|s| s.get_str("host").ok().map(str::to_string)).collect();
    Ok(ShardingMetadata { key, chunk_format, chunks, shards: names, shard_hosts })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{doc, oid::ObjectId, Timestamp};

    #[test]
    fn both_chunk_formats() {
        let uuid = bson::Binary { subtype: bson::spec::BinarySubtype::Uuid, bytes: vec![7; 16] };
        let coll = doc! {"_id": "app.events", "lastmodEpoch": ObjectId::new(), "timestamp": Timestamp { time: 1, increment: 1 },
        "uuid": uuid.clone(), "key": {"projectId": 1, "_id": 1}, "unique": false};
        let new_chunks = vec![
            doc! {"_id": ObjectId::new(), "uuid": uuid.clone(), "min": {"projectId": "m", "_id": Bson::MinKey}, "max": {"projectId": Bson::MaxKey, "_id": Bson::MaxKey}, "shard": "sh1", "jumbo": true},
            doc! {"_id": ObjectId::new(), "uuid": uuid, "min": {"projectId": Bson::MinKey, "_id": Bson::MinKey}, "max": {"projectId": "m", "_id": Bson::MinKey}, "shard": "sh0"},
        ];
        let shards =
            vec![doc! {"_id": "sh0", "host": "rs0/a:1"}, doc! {"_id": "sh1", "host": "rs1/b:1"}, doc! {"_id": "sh2", "host": "rs2/c:1"}];
        let m = parse(&coll, &new_chunks, &[], &shards).unwrap();
        assert_eq!(m.chunk_format, "uuid");
        assert_eq!(m.key.to_string(), "{projectId: 1, _id: 1}");
        assert_eq!(m.chunks[0].shard, "sh0", "sorted by min");
        assert!(m.chunks[1].jumbo);
        assert_eq!(m.shards, vec!["sh0", "sh1", "sh2"]);
        assert_eq!(m.shard_hosts, vec!["rs0/a:1", "rs1/b:1", "rs2/c:1"]);
        let a = crate::metrics::cluster::actual_chunks(&m);
        assert_eq!(a.chunks[1].shard, 1);
        let audit = crate::metrics::audit::audit(&m, false);
        assert_eq!(audit.num_chunks, 2);
        assert_eq!(audit.jumbo_flagged_chunks.len(), 1);
        assert_eq!(audit.jumbo_flagged_chunks[0].shard, "sh1");
        assert_eq!(audit.chunk_count_imbalance, None, "sh2 holds no chunk");

        let old_coll = doc! {"_id": "app.events", "lastmodEpoch": ObjectId::new(), "dropped": false, "key": {"ts": 1}, "unique": false};
        let old_chunks = vec![
            doc! {"_id": "app.events-ts_MinKey", "ns": "app.events", "min": {"ts": Bson::MinKey}, "max": {"ts": Bson::MaxKey}, "shard": "sh0"},
        ];
        let m = parse(&old_coll, &[], &old_chunks, &[]).unwrap();
        assert_eq!(m.chunk_format, "ns");
        assert_eq!(m.shards, vec!["sh0"]);
        assert!(parse(&doc! {"_id": "x.y"}, &[], &[], &[]).is_err());
    }
}
