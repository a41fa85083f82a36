//! BSON helpers the whole pipeline shares: MongoDB's value order, dotted-path
//! lookup with shard-key semantics, and MongoDB's `hash64` for hashed keys.

pub(crate) mod depth;
pub(crate) mod hash;
pub(crate) mod keystring;
pub(crate) mod number;
pub(crate) mod order;
pub(crate) mod path;
pub(crate) mod redact;

/// A document's size as BSON: what it takes written (`Document::to_writer`), which
/// `avgDocSizeBytes` averages.
pub(crate) fn bson_size(d: &bson::Document) -> bson::ser::Result<usize> {
    let mut buf = Vec::new();
    d.to_writer(&mut buf)?;
    Ok(buf.len())
}

/// The time a date, timestamp or ObjectId carries, in seconds (what "increasing by nature"
/// is measured by).
pub(crate) fn time_seconds(v: &bson::Bson) -> Option<f64> {
    match v {
        bson::Bson::DateTime(t) => Some(t.timestamp_millis() as f64 / 1000.0),
        bson::Bson::Timestamp(t) => Some(t.time as f64),
        bson::Bson::ObjectId(x) => Some(x.timestamp().timestamp_millis() as f64 / 1000.0),
        _ => None,
    }
}

pub use hash::hash64;
pub(crate) use order::{cmp_bson, cmp_tuple, group_bytes, is_collatable};
pub(crate) use path::{lookup, DocRef, Found, Lookup, ValueRef};
