//! An order-preserving byte encoding of shard key values (in the spirit of the
//! server's KeyString): comparing two encodings byte by byte gives MongoDB's
//! order (`cmp_tuple`), and values MongoDB holds equal (1, 1.0, NumberLong(1))
//! encode to the same bytes (`group_bytes`). One sort of encodings then gives
//! distinct values, their counts and key order at once, in a dense arena, which
//! is what exact counting of millions of sampled documents needs. `decode`
//! gives a value back (numbers in their simplest type: an integral 1.0 reads as 1).

use super::order::canonical_type;
use super::path::ValueRef;
use bson::{Bson, Document, RawBsonRef};

/// Each value starts with its canonical type shifted above 0, so the 0 byte can
/// end an object or array before any element.
fn type_byte(v: &Bson) -> u8 {
    (canonical_type(v) + 2) as u8
}

/// Whether an encoded value (its first byte) is a number or an object: the only values two of
/// which can share a `hash64` (numbers truncated to 64-bit integers, inside objects too).
pub(crate) fn may_hash_alike(encoded: &[u8]) -> bool {
    encoded.first().is_some_and(|&b| b == type_byte(&Bson::Int32(0)) || b == type_byte(&Bson::Document(Default::default())))
}

/// Bytes with 0x00 escaped as 0x00 0xFF and a terminating 0x00 0x00: prefix order kept.
fn put_bytes(b: &[u8], out: &mut Vec<u8>) {
    for &c in b {
        out.push(c);
        if c == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

/// Walk the bytes `put_bytes` wrote from `at` to past their end, giving their content to
/// `piece` run by run (an escaped 0 as a run of its own).
fn walk_bytes(b: &[u8], at: &mut usize, mut piece: impl FnMut(&[u8])) -> Option<()> {
    loop {
        // Up to the next 0 at once: it ends the bytes (0 0) or stands for a 0 in them (0 FF).
        let rest = b.get(*at..)?;
        let z = memchr::memchr(0, rest)?;
        piece(&rest[..z]);
        let n = *rest.get(z + 1)?;
        *at += z + 2;
        match n {
            0 => return Some(()),
            0xFF => piece(&[0]),
            _ => return None,
        }
    }
}

fn take_bytes(b: &[u8], at: &mut usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    walk_bytes(b, at, |p| out.extend_from_slice(p))?;
    Some(out)
}

/// f64 bits reordered so byte order is numeric order (-0.0 taken as 0.0).
fn f64_key(f: f64) -> [u8; 8] {
    let f = if f == 0.0 { 0.0 } else { f };
    let bits = f.to_bits();
    let k = if bits >> 63 == 1 { !bits } else { bits | (1 << 63) };
    k.to_be_bytes()
}

fn f64_from_key(k: [u8; 8]) -> f64 {
    let k = u64::from_be_bytes(k);
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// A number: NaN first; else its nearest f64, then the exact integer's distance
/// from it (non-zero only for integers beyond 2^53), so order is exact numeric order.
/// The distance is written only when there is one: a tag orders negative < none < positive.
fn put_number(v: &Bson, out: &mut Vec<u8>) {
    let (f, exact): (f64, Option<i64>) = match v {
        Bson::Int32(i) => (*i as f64, Some(*i as i64)),
        Bson::Int64(i) => (*i as f64, Some(*i)),
        Bson::Double(d) => (*d, None),
        Bson::Decimal128(d) => (d.to_string().parse::<f64>().unwrap_or(f64::NAN), None),
        _ => (f64::NAN, None),
    };
    if f.is_nan() {
        out.push(0);
        return;
    }
    out.push(1);
    out.extend_from_slice(&f64_key(f));
    let delta = exact.map(|i| i as i128 - f as i128).unwrap_or(0) as i32;
    match delta.cmp(&0) {
        std::cmp::Ordering::Equal => out.push(2),
        o => {
            out.push(if o == std::cmp::Ordering::Less { 1 } else { 3 });
            out.extend_from_slice(&((delta as u32) ^ (1 << 31)).to_be_bytes());
        }
    }
}

fn take_number(b: &[u8], at: &mut usize) -> Option<Bson> {
    let tag = *b.get(*at)?;
    *at += 1;
    if tag == 0 {
        return Some(Bson::Double(f64::NAN));
    }
    let f = f64_from_key(b.get(*at..*at + 8)?.try_into().ok()?);
    let tag = *b.get(*at + 8)?;
    *at += 9;
    let delta = match tag {
        2 => 0,
        1 | 3 => {
            let d = (u32::from_be_bytes(b.get(*at..*at + 4)?.try_into().ok()?) ^ (1 << 31)) as i32;
            *at += 4;
            d
        }
        _ => return None,
    };
    if delta != 0 {
        return Some(Bson::Int64((f as i128 + delta as i128) as i64));
    }
    if f.fract() == 0.0 && (-9223372036854775808.0..9223372036854775808.0).contains(&f) {
        let i = f as i64;
        return Some(i32::try_from(i).map(Bson::Int32).unwrap_or(Bson::Int64(i)));
    }
    Some(Bson::Double(f))
}

/// Append the encoding of one value.
pub(crate) fn put(v: &Bson, out: &mut Vec<u8>) {
    out.push(type_byte(v));
    match v {
        Bson::Double(_) | Bson::Int32(_) | Bson::Int64(_) | Bson::Decimal128(_) => put_number(v, out),
        Bson::String(s) | Bson::Symbol(s) | Bson::JavaScriptCode(s) => put_bytes(s.as_bytes(), out),
        Bson::Document(d) => {
            for (k, x) in d {
                out.push(type_byte(x));
                put_bytes(k.as_bytes(), out);
                put(x, out);
            }
            out.push(0);
        }
        Bson::Array(a) => {
            for x in a {
                put(x, out);
            }
            out.push(0);
        }
        Bson::Binary(b) => {
            out.extend_from_slice(&(b.bytes.len() as u32).to_be_bytes());
            out.push(u8::from(b.subtype));
            out.extend_from_slice(&b.bytes);
        }
        Bson::ObjectId(o) => out.extend_from_slice(&o.bytes()),
        Bson::Boolean(x) => out.push(*x as u8),
        Bson::DateTime(d) => out.extend_from_slice(&((d.timestamp_millis() as u64) ^ (1 << 63)).to_be_bytes()),
        Bson::Timestamp(t) => {
            out.extend_from_slice(&t.time.to_be_bytes());
            out.extend_from_slice(&t.increment.to_be_bytes());
        }
        Bson::RegularExpression(r) => {
            put_bytes(r.pattern.as_bytes(), out);
            put_bytes(r.options.as_bytes(), out);
        }
        // MinKey, MaxKey, null, undefined: the type says it all. The rest (DbPointer,
        // code with scope) never holds a shard key value; it is grouped by its type.
        _ => {}
    }
}

/// The type bytes of strings and code, written by `put_ref` without a `Bson` at hand.
const STRING_TYPE: u8 = 15 + 2;
const CODE_TYPE: u8 = 60 + 2;

/// `put` of a value in either form: the same bytes (held by a differential test).
/// Raw scalars and strings are encoded as they lie in the driver's buffer;
/// anything else is rare in a key and decoded first.
pub(crate) fn put_ref(v: ValueRef<'_>, out: &mut Vec<u8>) {
    let r = match v {
        ValueRef::Doc(b) => return put(b, out),
        ValueRef::Raw(r) => r,
    };
    let scalar = match r {
        RawBsonRef::String(s) | RawBsonRef::Symbol(s) => {
            out.push(STRING_TYPE);
            return put_bytes(s.as_bytes(), out);
        }
        RawBsonRef::JavaScriptCode(s) => {
            out.push(CODE_TYPE);
            return put_bytes(s.as_bytes(), out);
        }
        // These `Bson` values own nothing: building one costs no allocation.
        RawBsonRef::Double(x) => Bson::Double(x),
        RawBsonRef::Int32(x) => Bson::Int32(x),
        RawBsonRef::Int64(x) => Bson::Int64(x),
        RawBsonRef::Boolean(x) => Bson::Boolean(x),
        RawBsonRef::Null => Bson::Null,
        RawBsonRef::Undefined => Bson::Undefined,
        RawBsonRef::MinKey => Bson::MinKey,
        RawBsonRef::MaxKey => Bson::MaxKey,
        RawBsonRef::ObjectId(o) => Bson::ObjectId(o),
        RawBsonRef::DateTime(d) => Bson::DateTime(d),
        RawBsonRef::Timestamp(t) => Bson::Timestamp(t),
        _ => v.to_bson(),
    };
    put(&scalar, out)
}

/// The encoding of a key value (one entry per key field).
pub(crate) fn encode(values: &[Bson], out: &mut Vec<u8>) {
    for v in values {
        put(v, out);
    }
}

fn take(b: &[u8], at: &mut usize) -> Option<Bson> {
    let t = *b.get(*at)? as i32 - 2;
    *at += 1;
    Some(match t {
        -1 => Bson::MinKey,
        0 => Bson::Undefined,
        5 => Bson::Null,
        10 => take_number(b, at)?,
        15 => Bson::String(String::from_utf8(take_bytes(b, at)?).ok()?),
        20 => {
            let mut d = Document::new();
            while *b.get(*at)? != 0 {
                *at += 1; // the element's type byte, repeated by its value
                let k = String::from_utf8(take_bytes(b, at)?).ok()?;
                d.insert(k, take(b, at)?);
            }
            *at += 1;
            Bson::Document(d)
        }
        25 => {
            let mut a = Vec::new();
            while *b.get(*at)? != 0 {
                a.push(take(b, at)?);
            }
            *at += 1;
            Bson::Array(a)
        }
        30 => {
            let n = u32::from_be_bytes(b.get(*at..*at + 4)?.try_into().ok()?) as usize;
            let subtype = bson::spec::BinarySubtype::from(*b.get(*at + 4)?);
            let bytes = b.get(*at + 5..*at + 5 + n)?.to_vec();
            *at += 5 + n;
            Bson::Binary(bson::Binary { subtype, bytes })
        }
        35 => {
            let o: [u8; 12] = b.get(*at..*at + 12)?.try_into().ok()?;
            *at += 12;
            Bson::ObjectId(bson::oid::ObjectId::from_bytes(o))
        }
        40 => {
            let x = *b.get(*at)? != 0;
            *at += 1;
            Bson::Boolean(x)
        }
        45 => {
            let k = u64::from_be_bytes(b.get(*at..*at + 8)?.try_into().ok()?);
            *at += 8;
            Bson::DateTime(bson::DateTime::from_millis((k ^ (1 << 63)) as i64))
        }
        47 => {
            let time = u32::from_be_bytes(b.get(*at..*at + 4)?.try_into().ok()?);
            let increment = u32::from_be_bytes(b.get(*at + 4..*at + 8)?.try_into().ok()?);
            *at += 8;
            Bson::Timestamp(bson::Timestamp { time, increment })
        }
        50 => {
            let pattern = String::from_utf8(take_bytes(b, at)?).ok()?;
            let options = String::from_utf8(take_bytes(b, at)?).ok()?;
            Bson::RegularExpression(bson::Regex { pattern, options })
        }
        60 => Bson::JavaScriptCode(String::from_utf8(take_bytes(b, at)?).ok()?),
        127 => Bson::MaxKey,
        _ => return None,
    })
}

/// The key value back from its encoding (`n` fields); None for bytes `encode` did not write.
pub(crate) fn decode(b: &[u8], n: usize) -> Option<Vec<Bson>> {
    let mut at = 0;
    // Exactly `n` values: decoded values are kept (key-space summaries), so no spare room.
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(take(b, &mut at)?);
    }
    (at == b.len()).then_some(out)
}

/// Step over the bytes `put_bytes` wrote, copying nothing.
fn skip_bytes(b: &[u8], at: &mut usize) -> Option<()> {
    walk_bytes(b, at, |_| {})
}

/// Step over one value as `take` would read it, building nothing: `canonical_type_at`
/// looks past the fields before the one it names without decoding them.
fn skip(b: &[u8], at: &mut usize) -> Option<()> {
    let t = *b.get(*at)? as i32 - 2;
    *at += 1;
    let width = match t {
        -1 | 0 | 5 | 127 => 0,
        10 => match *b.get(*at)? {
            0 => 1,
            _ => match *b.get(*at + 9)? {
                2 => 10,
                1 | 3 => 14,
                _ => return None,
            },
        },
        15 | 60 => return skip_bytes(b, at),
        50 => {
            skip_bytes(b, at)?;
            return skip_bytes(b, at);
        }
        20 | 25 => {
            while *b.get(*at)? != 0 {
                if t == 20 {
                    *at += 1;
                    skip_bytes(b, at)?;
                }
                skip(b, at)?;
            }
            1
        }
        30 => 5 + u32::from_be_bytes(b.get(*at..*at + 4)?.try_into().ok()?) as usize,
        35 => 12,
        40 => 1,
        45 | 47 => 8,
        _ => return None,
    };
    b.get(*at..*at + width)?;
    *at += width;
    Some(())
}

/// The canonical type (`order::canonical_type`) of field `field` of an encoded key
/// value: its type byte, found by stepping over the fields before it. None for bytes
/// `encode` did not write.
pub(crate) fn canonical_type_at(b: &[u8], field: usize) -> Option<i32> {
    let mut at = 0;
    for _ in 0..field {
        skip(b, &mut at)?;
    }
    Some(*b.get(at)? as i32 - 2)
}

#[cfg(test)]
mod tests {
    use super::super::order::{cmp_tuple, group_bytes};
    use super::*;
    use crate::util::splitmix::SplitMix64;
    use std::cmp::Ordering;

    fn enc(v: &[Bson]) -> Vec<u8> {
        let mut o = Vec::new();
        encode(v, &mut o);
        o
    }

    fn group(v: &[Bson]) -> Vec<u8> {
        let mut o = Vec::new();
        for x in v {
            group_bytes(x, &mut o);
        }
        o
    }

    /// A random value of the kinds shard keys hold, nested a little.
    fn value(r: &mut SplitMix64, depth: u32) -> Bson {
        let strings = ["", "a", "A", "a\0b", "ab", "b", "é", "z"];
        match r.below(if depth > 1 { 12 } else { 14 }) {
            0 => Bson::Int32(r.below(7) as i32 - 3),
            1 => Bson::Int64(r.below(7) as i64 - 3),
            2 => Bson::Double([-2.5, -0.0, 0.0, 1.0, 1.5, 3.0, f64::NAN, 1e300][r.below(8) as usize]),
            3 => Bson::Int64([i64::MAX, i64::MIN, (1 << 53) + 1, 1 << 53][r.below(4) as usize]),
            4 => Bson::Double([9.223372036854776e18, -9.223372036854776e18, 9007199254740992.0][r.below(3) as usize]),
            5 => Bson::String(strings[r.below(strings.len() as u64) as usize].into()),
            6 => Bson::Null,
            7 => Bson::Boolean(r.below(2) == 1),
            8 => Bson::DateTime(bson::DateTime::from_millis(r.below(5) as i64 - 2)),
            9 => Bson::ObjectId(bson::oid::ObjectId::from_bytes([r.below(3) as u8; 12])),
            10 => [Bson::MinKey, Bson::MaxKey][r.below(2) as usize].clone(),
            11 => Bson::Binary(bson::Binary {
                subtype: bson::spec::BinarySubtype::Generic,
                bytes: vec![r.below(3) as u8; r.below(3) as usize],
            }),
            12 => {
                let mut d = Document::new();
                for i in 0..r.below(3) {
                    d.insert(["a", "b"][i as usize % 2], value(r, depth + 1));
                }
                Bson::Document(d)
            }
            _ => Bson::Array((0..r.below(3)).map(|_| value(r, depth + 1)).collect()),
        }
    }

    #[test]
    fn a_raw_value_encodes_as_its_decoded_value() {
        use bson::spec::BinarySubtype;
        let mut every = vec![
            Bson::Symbol("s".into()),
            Bson::JavaScriptCode("f()".into()),
            Bson::JavaScriptCodeWithScope(bson::JavaScriptCodeWithScope { code: "f".into(), scope: bson::doc! {"x": 1} }),
            Bson::Undefined,
            Bson::Timestamp(bson::Timestamp { time: 5, increment: 9 }),
            Bson::RegularExpression(bson::Regex { pattern: "^a".into(), options: "i".into() }),
            Bson::Decimal128("1.5".parse().unwrap()),
            Bson::Binary(bson::Binary { subtype: BinarySubtype::Uuid, bytes: vec![7; 16] }),
            match bson::from_slice::<Document>(&[
                // {"p": DBPointer("c", ObjectId(0...))}, written by hand: bson has no public constructor.
                26, 0, 0, 0, 0x0C, b'p', 0, 2, 0, 0, 0, b'c', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            ]) {
                Ok(d) => d.get("p").unwrap().clone(),
                Err(e) => panic!("{e}"),
            },
        ];
        let mut r = SplitMix64(11);
        every.extend((0..20_000).map(|_| value(&mut r, 0)));
        for v in every {
            let doc = bson::doc! {"v": v.clone()};
            let raw = bson::RawDocumentBuf::from_document(&doc).unwrap();
            let found = match super::super::path::DocRef::Raw(&raw).lookup("v") {
                super::super::path::Found::Value(x) => x,
                _ => continue, // arrays are refused before encoding
            };
            let (mut want, mut got) = (Vec::new(), Vec::new());
            put(&v, &mut want);
            put_ref(found, &mut got);
            assert_eq!(got, want, "{v:?}");
            // Debug text: NaN equals itself there.
            assert_eq!(format!("{:?}", found.to_bson()), format!("{v:?}"));
        }
    }

    #[test]
    fn byte_order_is_mongodb_order_and_equality_is_grouping() {
        let mut r = SplitMix64(7);
        for _ in 0..200_000 {
            let n = 1 + r.below(2) as usize;
            let a: Vec<Bson> = (0..n).map(|_| value(&mut r, 0)).collect();
            let b: Vec<Bson> = (0..n).map(|_| value(&mut r, 0)).collect();
            let (ea, eb) = (enc(&a), enc(&b));
            // Equal bytes exactly when MongoDB groups the values together.
            assert_eq!(ea == eb, group(&a) == group(&b), "{a:?} {b:?}");
            // Byte order is MongoDB's order. `cmp_bson` compares mixed int/double beyond 2^53
            // through f64 (so 2^63 - 1 "equals" 2^63) where grouping, the encoding and the
            // server are exact: such pairs are left out.
            let lossy = a.iter().zip(&b).any(|(x, y)| {
                cmp_tuple(std::slice::from_ref(x), std::slice::from_ref(y)) == Ordering::Equal
                    && group(std::slice::from_ref(x)) != group(std::slice::from_ref(y))
            });
            let want = cmp_tuple(&a, &b);
            if want != Ordering::Equal && !lossy {
                assert_eq!(ea.cmp(&eb), want, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn decodes_to_an_equal_value() {
        let mut r = SplitMix64(11);
        for _ in 0..50_000 {
            let a: Vec<Bson> = (0..2).map(|_| value(&mut r, 0)).collect();
            let e = enc(&a);
            let back = decode(&e, 2).unwrap_or_else(|| panic!("{a:?}"));
            assert_eq!(enc(&back), e, "{a:?} -> {back:?}");
        }
        assert_eq!(decode(&enc(&[Bson::Double(1.0)]), 1), Some(vec![Bson::Int32(1)]), "an integral double reads as an int");
        assert_eq!(decode(&enc(&[Bson::Int64((1 << 53) + 1)]), 1), Some(vec![Bson::Int64((1 << 53) + 1)]));
        assert_eq!(decode(&[0x7f], 1), None);
    }

    #[test]
    fn skip_steps_over_what_take_reads_and_types_are_the_decoded_ones() {
        let mut r = SplitMix64(13);
        for _ in 0..50_000 {
            let a: Vec<Bson> = (0..3).map(|_| value(&mut r, 0)).collect();
            let e = enc(&a);
            let (mut t, mut s) = (0, 0);
            for (i, v) in a.iter().enumerate() {
                assert_eq!(canonical_type_at(&e, i), Some(super::super::order::canonical_type(v)), "{a:?} field {i}");
                take(&e, &mut t).unwrap();
                skip(&e, &mut s).unwrap();
                assert_eq!(s, t, "{a:?} field {i}");
            }
        }
        assert_eq!(canonical_type_at(&[12, 1], 1), None, "a number cut short");
        assert_eq!(canonical_type_at(&[], 0), None);
    }
}
