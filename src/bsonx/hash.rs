//! MongoDB's `hash64` (hasher.cpp), the value a hashed index and a hashed shard
//! key store: MD5 over the seed, the canonical type and the value bytes, with
//! every number squashed to a truncated int64 and sub-documents recursed
//! (including their EOO terminator, as checked against a real mongod).

use super::order::canonical_type;
use bson::Bson;
use md5::{Digest, Md5};

pub fn hash64(v: &Bson) -> i64 {
    let mut h = Md5::new();
    h.update(0i32.to_le_bytes()); // DEFAULT_HASH_SEED
    feed(&mut h, None, v);
    let d = h.finalize();
    i64::from_le_bytes(d[..8].try_into().expect("md5 is 16 bytes"))
}

/// `safeNumberLong`: doubles truncate toward zero, NaN is 0, out of range clamps.
fn safe_i64(f: f64) -> i64 {
    if f.is_nan() {
        0
    } else if f >= 9.223_372_036_854_776e18 {
        i64::MAX
    } else if f < -9.223_372_036_854_776e18 {
        i64::MIN
    } else {
        f.trunc() as i64
    }
}

fn feed(h: &mut Md5, field: Option<&str>, v: &Bson) {
    h.update(canonical_type(v).to_le_bytes());
    if let Some(name) = field {
        h.update(name.as_bytes());
        h.update([0u8]);
    }
    match v {
        Bson::Int32(i) => h.update((*i as i64).to_le_bytes()),
        Bson::Int64(i) => h.update(i.to_le_bytes()),
        Bson::Double(d) => h.update(safe_i64(*d).to_le_bytes()),
        Bson::Decimal128(d) => {
            let f = d.to_string().parse::<f64>().unwrap_or(f64::NAN);
            h.update(safe_i64(f).to_le_bytes())
        }
        // Sub-documents: every element with its name, then the terminating EOO
        // element, which contributes its canonical type (0) and no name.
        Bson::Document(d) => {
            for (k, x) in d {
                feed(h, Some(k), x);
            }
            h.update(0i32.to_le_bytes());
        }
        Bson::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                feed(h, Some(&i.to_string()), x);
            }
            h.update(0i32.to_le_bytes());
        }
        // Everything else: the element's value bytes exactly as BSON stores them.
        Bson::String(s) | Bson::Symbol(s) | Bson::JavaScriptCode(s) => {
            h.update(((s.len() + 1) as i32).to_le_bytes());
            h.update(s.as_bytes());
            h.update([0u8]);
        }
        Bson::ObjectId(o) => h.update(o.bytes()),
        Bson::Boolean(b) => h.update([*b as u8]),
        Bson::DateTime(d) => h.update(d.timestamp_millis().to_le_bytes()),
        Bson::Timestamp(t) => {
            h.update(t.increment.to_le_bytes());
            h.update(t.time.to_le_bytes());
        }
        Bson::Binary(b) => {
            h.update((b.bytes.len() as i32).to_le_bytes());
            h.update([u8::from(b.subtype)]);
            h.update(&b.bytes);
        }
        Bson::RegularExpression(r) => {
            h.update(r.pattern.as_bytes());
            h.update([0u8]);
            h.update(r.options.as_bytes());
            h.update([0u8]);
        }
        Bson::Null | Bson::Undefined | Bson::MinKey | Bson::MaxKey => {}
        other => {
            // Rare legacy types: hash their raw BSON value bytes.
            let d = bson::doc! {"": other.clone()};
            if let Ok(bytes) = bson::to_vec(&d) {
                // skip doc header (4), type byte (1), empty name NUL (1); drop trailing doc NUL
                if bytes.len() > 7 {
                    h.update(&bytes[6..bytes.len() - 1]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_vectors() {
        assert_eq!(hash64(&Bson::Int32(42)), -944302157085130861);
        assert_eq!(hash64(&Bson::String("string to hash".into())), 763543691661428748);
    }

    #[test]
    fn numbers_hash_as_truncated_int64() {
        assert_eq!(hash64(&Bson::Int32(42)), hash64(&Bson::Int64(42)));
        assert_eq!(hash64(&Bson::Double(42.9)), hash64(&Bson::Int64(42)));
        assert_ne!(hash64(&Bson::Int32(42)), hash64(&Bson::String("42".into())));
    }
}
