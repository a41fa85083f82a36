//! The sample pass: one read of the documents feeds every candidate key at once.
//! Per key it keeps each distinct value's count and each document's value (for
//! monotonicity); nothing is computed here beyond counting.

use crate::bsonx::{cmp_tuple, group_bytes, lookup, Lookup};
use crate::metrics::frequency::ValueCount;
use crate::metrics::targeting::to_key_space;
use crate::model::ShardKey;
use bson::{Bson, Document};
use std::collections::HashMap;

const ARRAY_DOC: u32 = u32::MAX;

/// Everything one candidate key needs from the documents.
#[derive(Debug)]
pub struct KeySample {
    pub key: ShardKey,
    index: HashMap<Vec<u8>, u32>,
    /// Distinct (unhashed) key values and their counts.
    pub values: Vec<ValueCount>,
    /// Per document in insertion order: its value's index in `values` (or an array marker).
    doc_values: Vec<u32>,
    /// Documents missing at least one key field (their value holds null there).
    pub docs_missing_fields: u64,
    /// Documents with an array in a key field: the server rejects them.
    pub docs_with_arrays: u64,
    /// The first such document (0-based position in the sample) and the field.
    pub first_array: Option<(u64, String)>,
    scratch: Vec<u8>,
    tuple: Vec<Bson>,
}

impl KeySample {
    pub fn new(key: ShardKey) -> Self {
        KeySample {
            key,
            index: HashMap::new(),
            values: Vec::new(),
            doc_values: Vec::new(),
            docs_missing_fields: 0,
            docs_with_arrays: 0,
            first_array: None,
            scratch: Vec::new(),
            tuple: Vec::new(),
        }
    }

    pub fn add(&mut self, doc: &Document) {
        self.scratch.clear();
        self.tuple.clear();
        let mut missing = false;
        for f in &self.key.fields {
            let v = match lookup(doc, &f.path) {
                Lookup::Value(v) => v.clone(),
                Lookup::Missing => {
                    missing = true;
                    Bson::Null
                }
                Lookup::Array => {
                    if self.first_array.is_none() {
                        self.first_array = Some((self.doc_values.len() as u64, f.path.clone()));
                    }
                    self.docs_with_arrays += 1;
                    self.doc_values.push(ARRAY_DOC);
                    return;
                }
            };
            group_bytes(&v, &mut self.scratch);
            self.tuple.push(v);
        }
        if missing {
            self.docs_missing_fields += 1;
        }
        let id = match self.index.get(&self.scratch) {
            Some(&id) => id,
            None => {
                let id = self.values.len() as u32;
                self.index.insert(self.scratch.clone(), id);
                self.values.push(ValueCount { value: self.tuple.clone(), count: 0 });
                id
            }
        };
        self.values[id as usize].count += 1;
        self.doc_values.push(id);
    }

    /// Documents counted (arrays excluded).
    pub fn docs_counted(&self) -> u64 {
        self.values.iter().map(|v| v.count).sum()
    }

    /// Value indexes sorted in key order.
    fn value_order(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.values.len() as u32).collect();
        order.sort_by(|&a, &b| cmp_tuple(&self.values[a as usize].value, &self.values[b as usize].value));
        order
    }

    /// Insertion positions listed in key order, equal keys in insertion order:
    /// what an index scan on the key returns as recordIds.
    pub fn insertion_positions_in_key_order(&self) -> Vec<u64> {
        let order = self.value_order();
        let mut rank = vec![0u32; self.values.len()];
        for (r, &v) in order.iter().enumerate() {
            rank[v as usize] = r as u32;
        }
        // Counting sort by rank keeps insertion order within a value.
        let mut start = vec![0usize; self.values.len() + 1];
        for &v in order.iter() {
            start[rank[v as usize] as usize + 1] = self.values[v as usize].count as usize;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut out = vec![0u64; *start.last().unwrap_or(&0)];
        for (pos, &v) in self.doc_values.iter().enumerate() {
            if v == ARRAY_DOC {
                continue;
            }
            let r = rank[v as usize] as usize;
            out[start[r]] = pos as u64;
            start[r] += 1;
        }
        out
    }

    /// Key-space values of the newest `fraction` of documents (insertion order).
    pub fn recent_key_space_values(&self, fraction: f64) -> Vec<Vec<Bson>> {
        let n = self.doc_values.len();
        let take = ((n as f64 * fraction).ceil() as usize).clamp(1.min(n), n);
        self.doc_values[n - take..]
            .iter()
            .filter(|&&v| v != ARRAY_DOC)
            .map(|&v| to_key_space(&self.key, &self.values[v as usize].value))
            .collect()
    }

    /// Distinct values in key space (hashed fields hashed), sorted, with counts.
    pub fn key_space_values(&self) -> Vec<(Vec<Bson>, u64)> {
        let mut v: Vec<(Vec<Bson>, u64)> =
            self.values.iter().map(|x| (to_key_space(&self.key, &x.value), x.count)).collect();
        v.sort_by(|a, b| cmp_tuple(&a.0, &b.0));
        v
    }
}

/// The whole sample: document count and size, and one `KeySample` per candidate.
#[derive(Debug)]
pub struct Sample {
    pub num_docs: u64,
    pub total_bytes: u64,
    pub keys: Vec<KeySample>,
}

impl Sample {
    pub fn new(keys: &[ShardKey]) -> Self {
        Sample { num_docs: 0, total_bytes: 0, keys: keys.iter().cloned().map(KeySample::new).collect() }
    }

    pub fn add(&mut self, doc: &Document, bson_size: usize) {
        self.num_docs += 1;
        self.total_bytes += bson_size as u64;
        for k in &mut self.keys {
            k.add(doc);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn counts_missing_as_null_and_rejects_arrays() {
        let mut s = KeySample::new(ShardKey::parse("{a: 1}").unwrap());
        for d in [doc! {"a": 2}, doc! {"b": 1}, doc! {"a": null}, doc! {"a": [1]}, doc! {"a": 2.0}] {
            s.add(&d);
        }
        assert_eq!(s.docs_with_arrays, 1);
        assert_eq!(s.docs_missing_fields, 1);
        assert_eq!(s.values.len(), 2, "null+missing together, 2 and 2.0 together");
        assert_eq!(s.docs_counted(), 4);
        // key order: null (pos 1, 2), then 2 (pos 0, 4)
        assert_eq!(s.insertion_positions_in_key_order(), vec![1, 2, 0, 4]);
    }
}
