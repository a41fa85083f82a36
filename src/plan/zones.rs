//! Zones that co-locate a group's collections: the same ranges of the shared first field
//! on the same shards, in each collection's own field name (manual "Manage Shard Zones",
//! `sh.addShardToZone`, `sh.updateZoneKeyRange`; a range's bounds give every key field,
//! the ones after the first at MinKey). Zone i goes to shard i.

use crate::model::{KeyKind, ShardKey};
use bson::{Bson, Document};

/// One zone range of one collection.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ZoneRange {
    pub(crate) zone: String,
    pub(crate) shard: usize,
    pub(crate) min: Document,
    pub(crate) max: Document,
}

/// Bounds for every key field: the first at `v`, the rest at MinKey.
fn bound(key: &ShardKey, v: Bson) -> Document {
    let mut d = Document::new();
    for (i, f) in key.fields.iter().enumerate() {
        d.insert(f.path.clone(), if i == 0 { v.clone() } else { Bson::MinKey });
    }
    d
}

/// The zone ranges of `key` cut at `splits` (first-field values in key space: hashed when
/// the key's first field is hashed), named `<name>-<i>`.
pub(crate) fn ranges(key: &ShardKey, splits: &[Bson], name: &str) -> Vec<ZoneRange> {
    let mut edges = vec![Bson::MinKey];
    edges.extend(splits.iter().cloned());
    edges.push(Bson::MaxKey);
    edges
        .windows(2)
        .enumerate()
        .map(|(i, w)| ZoneRange { zone: format!("{name}-{i}"), shard: i, min: bound(key, w[0].clone()), max: bound(key, w[1].clone()) })
        .collect()
}

/// The zone name of a group: the database and the anchor's first field.
pub(crate) fn zone_name(db: &str, key: &ShardKey) -> String {
    let f = &key.fields[0];
    let kind = if f.kind == KeyKind::Hashed { "-hashed" } else { "" };
    format!("{db}-{}{kind}", f.path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::shell::{shell_doc, shell_value};

    /// Three splits give four zones: MinKey..3, 3..5, 5..8, 8..MaxKey, on shards 0..3, the
    /// second key field at MinKey in every bound.
    #[test]
    fn zone_ranges_cover_the_key_space_in_order() {
        let key = ShardKey::parse("{customerId: 1, _id: 1}").unwrap();
        let r = ranges(&key, &[Bson::Int32(3), Bson::Int32(5), Bson::Int32(8)], "shop-customerId");
        assert_eq!(r.len(), 4);
        assert_eq!(shell_doc(&r[0].min), "{customerId: MinKey, _id: MinKey}");
        assert_eq!(shell_doc(&r[0].max), "{customerId: 3, _id: MinKey}");
        assert_eq!(shell_doc(&r[3].max), "{customerId: MaxKey, _id: MinKey}");
        assert_eq!((r[2].zone.as_str(), r[2].shard), ("shop-customerId-2", 2));
        assert_eq!(shell_value(&Bson::Int64(-5)), "NumberLong(\"-5\")");
    }
}
