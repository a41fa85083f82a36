//! MongoDB's comparison order for BSON values (the order of a B-tree index and
//! of chunk ranges) and a byte encoding under which values MongoDB considers
//! equal (1, 1.0 and NumberLong(1)) encode to the same bytes, for grouping.

use bson::{Bson, Document};
use std::cmp::Ordering;

/// The server's canonical type order (`canonicalizeBSONType`).
pub(crate) fn canonical_type(v: &Bson) -> i32 {
    match v {
        Bson::MinKey => -1,
        Bson::Undefined => 0,
        Bson::Null => 5,
        Bson::Double(_) | Bson::Int32(_) | Bson::Int64(_) | Bson::Decimal128(_) => 10,
        Bson::String(_) | Bson::Symbol(_) => 15,
        Bson::Document(_) => 20,
        Bson::Array(_) => 25,
        Bson::Binary(_) => 30,
        Bson::ObjectId(_) => 35,
        Bson::Boolean(_) => 40,
        Bson::DateTime(_) => 45,
        Bson::Timestamp(_) => 47,
        Bson::RegularExpression(_) => 50,
        Bson::DbPointer(_) => 55,
        Bson::JavaScriptCode(_) => 60,
        Bson::JavaScriptCodeWithScope(_) => 65,
        Bson::MaxKey => 127,
    }
}

/// Values whose equality a non-simple collation changes (`CollationIndexKey::isCollatableType`).
pub(crate) fn is_collatable(v: &Bson) -> bool {
    matches!(v, Bson::String(_) | Bson::Symbol(_) | Bson::Document(_) | Bson::Array(_))
}

use super::number::as_f64 as num;

fn cmp_numbers(a: &Bson, b: &Bson) -> Ordering {
    // Exact for the common integer cases; f64 otherwise. NaN sorts below all numbers, as in MongoDB.
    if let (Some(x), Some(y)) = (as_i64(a), as_i64(b)) {
        return x.cmp(&y);
    }
    let (x, y) = (num(a).unwrap_or(f64::NAN), num(b).unwrap_or(f64::NAN));
    match (x.is_nan(), y.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
    }
}

/// An integer type's exact value (not a coercion: a Double compares as a double).
fn as_i64(v: &Bson) -> Option<i64> {
    match v {
        Bson::Int32(i) => Some(*i as i64),
        Bson::Int64(i) => Some(*i),
        _ => None,
    }
}

fn cmp_docs(a: &Document, b: &Document) -> Ordering {
    let mut ia = a.iter();
    let mut ib = b.iter();
    loop {
        match (ia.next(), ib.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some((ka, va)), Some((kb, vb))) => {
                let o = canonical_type(va)
                    .cmp(&canonical_type(vb))
                    .then_with(|| ka.as_bytes().cmp(kb.as_bytes()))
                    .then_with(|| cmp_bson(va, vb));
                if o != Ordering::Equal {
                    return o;
                }
            }
        }
    }
}

/// Compare two values in MongoDB's order, with the simple (binary) collation.
pub(crate) fn cmp_bson(a: &Bson, b: &Bson) -> Ordering {
    // The common same-type pairs (hashed values, counters, identifiers) first: what the path
    // below answers for them, without the type ranks (`cmp_bson` was 12% of the candidates'
    // analyses in `plan`'s profile, mostly sorting and searching hashed and integer keys).
    match (a, b) {
        (Bson::Int64(x), Bson::Int64(y)) => return x.cmp(y),
        (Bson::Int32(x), Bson::Int32(y)) => return x.cmp(y),
        (Bson::String(x), Bson::String(y)) => return x.as_bytes().cmp(y.as_bytes()),
        _ => {}
    }
    cmp_ranked(a, b)
}

/// `cmp_bson` by the canonical type ranks, then within a type.
fn cmp_ranked(a: &Bson, b: &Bson) -> Ordering {
    let ta = canonical_type(a);
    let tb = canonical_type(b);
    if ta != tb {
        return ta.cmp(&tb);
    }
    match (a, b) {
        (Bson::String(x) | Bson::Symbol(x), Bson::String(y) | Bson::Symbol(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Bson::Document(x), Bson::Document(y)) => cmp_docs(x, y),
        (Bson::Array(x), Bson::Array(y)) => {
            for (u, v) in x.iter().zip(y.iter()) {
                let o = canonical_type(u).cmp(&canonical_type(v)).then_with(|| cmp_bson(u, v));
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        (Bson::Binary(x), Bson::Binary(y)) => x
            .bytes
            .len()
            .cmp(&y.bytes.len())
            .then_with(|| u8::from(x.subtype).cmp(&u8::from(y.subtype)))
            .then_with(|| x.bytes.cmp(&y.bytes)),
        (Bson::ObjectId(x), Bson::ObjectId(y)) => x.bytes().cmp(&y.bytes()),
        (Bson::Boolean(x), Bson::Boolean(y)) => x.cmp(y),
        (Bson::DateTime(x), Bson::DateTime(y)) => x.timestamp_millis().cmp(&y.timestamp_millis()),
        (Bson::Timestamp(x), Bson::Timestamp(y)) => (x.time, x.increment).cmp(&(y.time, y.increment)),
        (Bson::RegularExpression(x), Bson::RegularExpression(y)) => x.pattern.cmp(&y.pattern).then_with(|| x.options.cmp(&y.options)),
        (Bson::JavaScriptCode(x), Bson::JavaScriptCode(y)) => x.cmp(y),
        _ if ta == 10 => cmp_numbers(a, b),
        _ => Ordering::Equal,
    }
}

/// Lexicographic comparison of compound key values.
pub(crate) fn cmp_tuple(a: &[Bson], b: &[Bson]) -> Ordering {
    for (x, y) in a.iter().zip(b.iter()) {
        let o = cmp_bson(x, y);
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

/// Append bytes that identify `v` up to MongoDB equality (simple collation).
pub(crate) fn group_bytes(v: &Bson, out: &mut Vec<u8>) {
    out.push(canonical_type(v) as u8);
    match v {
        Bson::Double(_) | Bson::Int32(_) | Bson::Int64(_) | Bson::Decimal128(_) => {
            // Integral values in i64 range encode as i64 so 1 == 1.0 == NumberLong(1).
            if let Some(i) = as_i64(v) {
                out.push(0);
                out.extend_from_slice(&i.to_le_bytes());
            } else {
                let f = num(v).unwrap_or(f64::NAN);
                // Every integral double in i64's range [-2^63, 2^63) is that integer.
                if f.is_finite() && f.fract() == 0.0 && (-9223372036854775808.0..9223372036854775808.0).contains(&f) {
                    out.push(0);
                    out.extend_from_slice(&(f as i64).to_le_bytes());
                } else if f.is_nan() {
                    out.push(2);
                } else {
                    out.push(1);
                    out.extend_from_slice(&f.to_bits().to_le_bytes());
                }
            }
        }
        Bson::String(s) | Bson::Symbol(s) | Bson::JavaScriptCode(s) => {
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        Bson::Document(d) => {
            out.extend_from_slice(&(d.len() as u32).to_le_bytes());
            for (k, x) in d {
                out.extend_from_slice(k.as_bytes());
                out.push(0);
                group_bytes(x, out);
            }
        }
        Bson::Array(a) => {
            out.extend_from_slice(&(a.len() as u32).to_le_bytes());
            for x in a {
                group_bytes(x, out);
            }
        }
        Bson::Binary(b) => {
            out.push(u8::from(b.subtype));
            out.extend_from_slice(&(b.bytes.len() as u32).to_le_bytes());
            out.extend_from_slice(&b.bytes);
        }
        Bson::ObjectId(o) => out.extend_from_slice(&o.bytes()),
        Bson::Boolean(b) => out.push(*b as u8),
        Bson::DateTime(d) => out.extend_from_slice(&d.timestamp_millis().to_le_bytes()),
        Bson::Timestamp(t) => {
            out.extend_from_slice(&t.time.to_le_bytes());
            out.extend_from_slice(&t.increment.to_le_bytes());
        }
        Bson::RegularExpression(r) => {
            out.extend_from_slice(r.pattern.as_bytes());
            out.push(0);
            out.extend_from_slice(r.options.as_bytes());
        }
        other => out.extend_from_slice(format!("{other:?}").as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{bson, oid::ObjectId};

    /// The same-type shortcuts answer as the ranked comparison does.
    #[test]
    fn same_type_shortcuts_agree_with_the_ranks() {
        let mut rng = crate::util::splitmix::SplitMix64(3);
        let mut values = vec![Bson::Int64(i64::MIN), Bson::Int64(i64::MAX), Bson::Int32(i32::MIN), Bson::String(String::new())];
        for _ in 0..200 {
            let n = rng.below(2000) as i64 - 1000;
            values.push(Bson::Int64(n.wrapping_mul(rng.below(u64::MAX) as i64 | 1)));
            values.push(Bson::Int32(n as i32));
            values.push(Bson::String(["a", "b", "ab", "\u{e9}", "Z"][rng.below(5) as usize].repeat(rng.below(3) as usize)));
        }
        for a in &values {
            for b in &values {
                assert_eq!(cmp_bson(a, b), cmp_ranked(a, b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn type_order_follows_mongodb() {
        let ordered = vec![
            Bson::MinKey,
            Bson::Null,
            Bson::Double(-1.5),
            Bson::Int32(1),
            Bson::Int64(2),
            Bson::String("a".into()),
            Bson::String("b".into()),
            bson!({"a": 1}),
            bson!([1]),
            Bson::ObjectId(ObjectId::parse_str("000000000000000000000001").unwrap()),
            Bson::Boolean(false),
            Bson::Boolean(true),
            Bson::DateTime(bson::DateTime::from_millis(0)),
            Bson::MaxKey,
        ];
        for w in ordered.windows(2) {
            assert_eq!(cmp_bson(&w[0], &w[1]), Ordering::Less, "{:?} < {:?}", w[0], w[1]);
        }
    }

    #[test]
    fn numbers_of_different_types_are_equal_for_grouping() {
        let enc = |v: Bson| {
            let mut o = vec![];
            group_bytes(&v, &mut o);
            o
        };
        assert_eq!(enc(Bson::Int32(1)), enc(Bson::Double(1.0)));
        assert_eq!(enc(Bson::Int32(1)), enc(Bson::Int64(1)));
        assert_ne!(enc(Bson::Int32(1)), enc(Bson::Double(1.5)));
        assert_ne!(enc(Bson::String("1".into())), enc(Bson::Int32(1)));
        assert_eq!(cmp_bson(&Bson::Int32(1), &Bson::Double(1.0)), Ordering::Equal);
        // -2^63 as a double is exactly i64::MIN (found by the keystring property test).
        assert_eq!(enc(Bson::Double(-9223372036854775808.0)), enc(Bson::Int64(i64::MIN)));
    }
}
