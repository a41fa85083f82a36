//! `KeySpace`: the line a candidate's data lies on, its distinct sampled values in
//! key order (hashed fields hashed), each with the number of sampled documents it
//! stands for. Ranges, chunks and the insert order are cut from it.
//!
//! Values an exact pass counted stay in their `bsonx::keystring` bytes and are
//! decoded only where one is named (a split point, a chunk bound): at the default
//! sample a key has up to 100,000 of them, and decoding every one into a `Vec<Bson>`
//! was half the time the analysis took after the read.

use crate::bsonx::cmp_tuple;
use crate::bsonx::keystring;
use crate::bsonx::order::canonical_type;
use bson::Bson;

#[derive(Debug, Clone, Default)]
pub struct KeySpace<'a> {
    counts: Vec<u64>,
    values: Values<'a>,
}

#[derive(Debug, Clone)]
enum Values<'a> {
    Decoded(Vec<Vec<Bson>>),
    /// Keystring encodings of `fields` values each: byte order is key order.
    Encoded {
        fields: usize,
        bytes: Vec<&'a [u8]>,
    },
}

impl Default for Values<'_> {
    fn default() -> Self {
        Values::Decoded(Vec::new())
    }
}

impl<'a> KeySpace<'a> {
    /// From values already in key order (`cmp_tuple`), with their counts.
    pub fn from_values(v: Vec<(Vec<Bson>, u64)>) -> KeySpace<'static> {
        debug_assert!(v.is_sorted_by(|a, b| cmp_tuple(&a.0, &b.0).is_le()));
        let (values, counts) = v.into_iter().unzip();
        KeySpace { counts, values: Values::Decoded(values) }
    }

    /// From keystring encodings of `fields` values each, in key order (byte order), with
    /// their counts. Only for keys without a hashed field: hashing changes the order.
    pub(crate) fn from_encoded(fields: usize, v: Vec<(&'a [u8], u64)>) -> KeySpace<'a> {
        debug_assert!(v.is_sorted_by(|a, b| a.0 <= b.0));
        let (bytes, counts) = v.into_iter().unzip();
        KeySpace { counts, values: Values::Encoded { fields, bytes } }
    }

    pub(crate) fn len(&self) -> usize {
        self.counts.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The sampled documents value `i` stands for.
    pub(crate) fn count(&self, i: usize) -> u64 {
        self.counts[i]
    }

    pub(crate) fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Value `i`, decoded (numbers in their simplest type: see `keystring::decode`).
    pub(crate) fn value(&self, i: usize) -> Vec<Bson> {
        match &self.values {
            Values::Decoded(v) => v[i].clone(),
            Values::Encoded { fields, bytes } => decode(bytes[i], *fields),
        }
    }

    /// The canonical BSON type (`order::canonical_type`) of field `field` of value `i`,
    /// read from its type byte when it is encoded. None past the value's fields.
    pub(crate) fn canonical_type(&self, i: usize, field: usize) -> Option<i32> {
        match &self.values {
            Values::Decoded(v) => v[i].get(field).map(canonical_type),
            Values::Encoded { fields, bytes } => (field < *fields).then(|| keystring::canonical_type_at(bytes[i], field)).flatten(),
        }
    }

    /// Where `v` is in key order (`cmp_tuple`): Ok(index) when it is one of the values.
    pub(crate) fn search(&self, v: &[Bson]) -> Result<usize, usize> {
        match &self.values {
            Values::Decoded(vals) => vals.binary_search_by(|x| cmp_tuple(x, v)),
            // Few lookups (jumbo values): each compares decoded values, exactly as `Decoded` does.
            Values::Encoded { fields, bytes } => bytes.binary_search_by(|b| cmp_tuple(&decode(b, *fields), v)),
        }
    }
}

/// An encoded value of `fields` values. Bytes the encoding did not write cannot come from a
/// sample; they would read as nulls.
fn decode(b: &[u8], fields: usize) -> Vec<Bson> {
    keystring::decode(b, fields).unwrap_or_else(|| vec![Bson::Null; fields])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: &[Bson]) -> Vec<u8> {
        let mut o = Vec::new();
        keystring::encode(v, &mut o);
        o
    }

    /// Both forms of the same values answer alike; the expected answers are the values
    /// themselves (decoded from what `encode` wrote, numbers in their simplest type).
    #[test]
    fn encoded_and_decoded_forms_answer_alike() {
        let values: Vec<Vec<Bson>> = vec![
            vec![Bson::Null, Bson::Int32(1)],
            vec![Bson::Int32(2), Bson::String("a".into())],
            vec![Bson::Double(2.5), Bson::DateTime(bson::DateTime::from_millis(5))],
            vec![Bson::String("b".into()), Bson::ObjectId(bson::oid::ObjectId::from_bytes([1; 12]))],
            vec![Bson::DateTime(bson::DateTime::from_millis(0)), Bson::MaxKey],
        ];
        let bytes: Vec<Vec<u8>> = values.iter().map(|v| enc(v)).collect();
        let encoded = KeySpace::from_encoded(2, bytes.iter().zip(1..).map(|(b, c)| (b.as_slice(), c)).collect());
        let decoded = KeySpace::from_values(values.iter().cloned().zip(1..).collect());
        for ks in [&encoded, &decoded] {
            assert_eq!(ks.len(), 5);
            assert_eq!(ks.counts(), &[1, 2, 3, 4, 5]);
            for (i, v) in values.iter().enumerate() {
                assert_eq!(&ks.value(i), v);
                assert_eq!(ks.search(v), Ok(i));
                assert_eq!(ks.canonical_type(i, 1), Some(canonical_type(&v[1])));
                assert_eq!(ks.canonical_type(i, 2), None);
            }
            // 1.0 is the value 1 (a number between null and 2), 3 lies between 2.5 and "b".
            assert_eq!(ks.search(&[Bson::Double(2.0), Bson::String("a".into())]), Ok(1));
            assert_eq!(ks.search(&[Bson::Int32(3), Bson::Null]), Err(3));
            assert_eq!(ks.search(&[Bson::MinKey, Bson::Null]), Err(0));
            assert_eq!(ks.search(&[Bson::MaxKey, Bson::Null]), Err(5));
        }
        // A date's type is 45, an ObjectId's 35 (`canonical_type`), read from the type byte.
        assert_eq!(encoded.canonical_type(2, 1), Some(45));
        assert_eq!(encoded.canonical_type(3, 1), Some(35));
    }
}
