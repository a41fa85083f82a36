//! Nesting depth of a raw BSON document, measured without recursion, so a
//! hostile file cannot overflow the stack before the BSON decoder (which
//! recurses) sees it. MongoDB itself refuses documents nested deeper than 100
//! levels; we refuse them too, with a clear message.

/// The deepest nesting we read (MongoDB: "no more than 100 levels of nesting").
pub(crate) const MAX_DEPTH: usize = 100;

fn i32_at(b: &[u8], at: usize) -> Option<usize> {
    let s = b.get(at..at + 4)?;
    let v = i32::from_le_bytes([s[0], s[1], s[2], s[3]]);
    usize::try_from(v).ok()
}

fn cstring_end(b: &[u8], at: usize, end: usize) -> Option<usize> {
    b.get(at..end)?.iter().position(|&c| c == 0).map(|p| at + p + 1)
}

/// The number of nested documents and arrays below the top document (0 for a
/// flat document), or why the bytes are not a BSON document. Stops counting,
/// and answers `MAX_DEPTH + 1`, as soon as the limit is passed.
pub(crate) fn depth(b: &[u8]) -> Result<usize, String> {
    let len = i32_at(b, 0).ok_or("no document length")?;
    if len < 5 || len > b.len() {
        return Err(format!("document length {len} does not fit the {} bytes read", b.len()));
    }
    // Each open document: where it ends (its terminating 0 byte is at end - 1).
    let mut ends: Vec<usize> = vec![len];
    let mut deepest = 0;
    let mut i = 4;
    while let Some(&end) = ends.last() {
        if i == end - 1 {
            if b[i] != 0 {
                return Err(format!("document not terminated at byte {i}"));
            }
            ends.pop();
            i += 1;
            continue;
        }
        if i >= end - 1 {
            return Err(format!("element runs past its document at byte {i}"));
        }
        let t = b[i];
        let name_end = cstring_end(b, i + 1, end).ok_or_else(|| format!("unterminated field name at byte {i}"))?;
        let v = name_end;
        let string_len = |at: usize| i32_at(b, at).map(|n| 4 + n);
        // A nested document (or array, or a code's scope) at `start`, inside `limit`:
        // enter it, one level deeper.
        let nested = |start: usize, limit: usize, what: &str| -> Result<usize, String> {
            let n = i32_at(b, start).ok_or_else(|| format!("cut {what} at byte {start}"))?;
            if n < 5 || start + n > limit {
                return Err(format!("{what} length {n} at byte {start} does not fit"));
            }
            Ok(start + n)
        };
        let enter = match t {
            0x03 | 0x04 => Some((v, nested(v, end, "sub-document")?)),
            // Code with scope: total length, code string, scope document.
            0x0F => {
                let total = i32_at(b, v).ok_or_else(|| format!("cut code with scope at byte {v}"))?;
                if v + total > end {
                    return Err(format!("code with scope at byte {v} does not fit"));
                }
                let scope = v + 4 + string_len(v + 4).ok_or_else(|| format!("cut code at byte {v}"))?;
                Some((scope, nested(scope, v + total, "scope")?))
            }
            _ => None,
        };
        if let Some((start, doc_end)) = enter {
            ends.push(doc_end);
            deepest = deepest.max(ends.len() - 1);
            if deepest > MAX_DEPTH {
                return Ok(MAX_DEPTH + 1);
            }
            i = start + 4;
            continue;
        }
        let size = match t {
            0x01 | 0x09 | 0x11 | 0x12 => Some(8),
            0x02 | 0x0D | 0x0E => string_len(v),
            0x05 => i32_at(b, v).map(|n| 5 + n),
            0x06 | 0x0A | 0xFF | 0x7F => Some(0),
            0x07 => Some(12),
            0x08 => Some(1),
            0x0B => cstring_end(b, v, end).and_then(|e| cstring_end(b, e, end)).map(|e| e - v),
            0x0C => string_len(v).map(|n| n + 12),
            0x10 => Some(4),
            0x13 => Some(16),
            other => return Err(format!("unknown element type 0x{other:02x} at byte {i}")),
        };
        let size = size.ok_or_else(|| format!("cut value at byte {v}"))?;
        i = v + size;
        if i > end - 1 {
            return Err(format!("value at byte {v} runs past its document"));
        }
    }
    Ok(deepest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{doc, Bson, Document};

    fn bytes(d: &Document) -> Vec<u8> {
        let mut b = Vec::new();
        d.to_writer(&mut b).unwrap();
        b
    }

    fn nested(levels: usize) -> Document {
        let mut d = doc! {"x": 1};
        for _ in 0..levels {
            d = doc! {"a": d};
        }
        d
    }

    #[test]
    fn depth_of_documents_and_arrays() {
        assert_eq!(depth(&bytes(&doc! {"a": 1, "b": "x"})), Ok(0));
        assert_eq!(depth(&bytes(&doc! {"a": {"b": [1, {"c": null}]}})), Ok(3));
        assert_eq!(depth(&bytes(&nested(100))), Ok(100));
        assert_eq!(depth(&bytes(&nested(101))), Ok(101));
        let every = doc! {
            "d": 1.5, "s": "x", "o": {}, "a": [], "bin": Bson::Binary(bson::Binary { subtype: bson::spec::BinarySubtype::Generic, bytes: vec![1, 2] }),
            "u": Bson::Undefined, "oid": bson::oid::ObjectId::new(), "t": true, "dt": bson::DateTime::now(), "n": null,
            "re": Bson::RegularExpression(bson::Regex { pattern: "a".into(), options: "i".into() }),
            "js": Bson::JavaScriptCode("f()".into()),
            "jsw": Bson::JavaScriptCodeWithScope(bson::JavaScriptCodeWithScope { code: "f()".into(), scope: doc! {"v": {"w": 1}} }),
            "i": 1i32, "ts": Bson::Timestamp(bson::Timestamp { time: 1, increment: 2 }), "l": 1i64,
            "dec": Bson::Decimal128(bson::Decimal128::from_bytes([0; 16])), "min": Bson::MinKey, "max": Bson::MaxKey,
            "sym": Bson::Symbol("s".into()),
        };
        assert_eq!(depth(&bytes(&every)), Ok(2), "code with scope counts its scope");
    }

    #[test]
    fn a_deep_document_is_refused_without_recursion() {
        // 5,000 levels built by hand (the bson crate itself would recurse to write it).
        let levels = 5_000usize;
        let mut b: Vec<u8> = Vec::new();
        // {a: {a: ... {} ...}}: each level is 4 (len) + 1 (type) + 2 ("a\0") + inner + 1 (EOO).
        let mut inner_len = 5usize;
        let mut lens = vec![inner_len];
        for _ in 0..levels {
            inner_len += 4 + 1 + 2 + 1 - 4 + 4;
            lens.push(inner_len);
        }
        for l in lens.iter().rev().take(levels) {
            b.extend_from_slice(&(*l as i32).to_le_bytes());
            b.extend_from_slice(&[0x03, b'a', 0]);
        }
        b.extend_from_slice(&5i32.to_le_bytes());
        b.push(0);
        b.extend(std::iter::repeat_n(0u8, levels));
        assert_eq!(depth(&b), Ok(MAX_DEPTH + 1));
    }

    #[test]
    fn malformed_bytes_are_errors_not_panics() {
        let good = bytes(&doc! {"a": {"b": "xyz"}, "c": [1, 2]});
        for cut in 0..good.len() {
            let mut b = good[..cut].to_vec();
            if b.len() >= 4 {
                b[..4].copy_from_slice(&(cut as i32).to_le_bytes());
            }
            let _ = depth(&b);
        }
        for i in 4..good.len() {
            for v in [0u8, 1, 0x03, 0x7f, 0xff] {
                let mut b = good.clone();
                b[i] = v;
                let _ = depth(&b);
            }
        }
        assert!(depth(&[]).is_err());
        assert!(depth(&[5, 0, 0, 0, 1]).is_err());
    }
}
