//! The sample pass: one read of the documents feeds every candidate key at once.
//! Memory stays bounded whatever the sample size:
//! - value counts are exact up to `EXACT_LIMIT` distinct values per key, then a
//!   HyperLogLog counts distinct values and Misra-Gries keeps the most common ones;
//! - monotonicity, chunk ranges and the cluster layout use a uniform reservoir of
//!   up to `RESERVOIR` (insertion position, value) pairs per key, which holds
//!   every document of a smaller sample.

pub mod sketch;

use crate::bsonx::{cmp_tuple, group_bytes, lookup, Lookup};
use self::sketch::{HyperLogLog, MisraGries};
use crate::model::ShardKey;
use bson::{Bson, Document};

type HashMap<K, V> = std::collections::HashMap<K, V, ahash::RandomState>;

/// Fixed seeds: the same sample gives the same sketches on every run.
fn hasher() -> ahash::RandomState {
    ahash::RandomState::with_seeds(0x5eed, 0xcafe, 0xf00d, 0xbeef)
}

/// Distinct values counted exactly per key before switching to sketches: a key
/// with more distinct values in the sample is high-cardinality anyway.
/// One distinct key value and how many sampled documents hold it.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueCount {
    pub value: Vec<Bson>,
    pub count: u64,
}

pub const EXACT_LIMIT: usize = 20_000;
/// Documents kept per key for order-based metrics (monotonicity, ranges, cluster).
pub const RESERVOIR: usize = 20_000;

/// The default memory budget for the sample (`--memory-limit`).
pub const DEFAULT_MEMORY_LIMIT: u64 = 1 << 30;
/// Conservative heap cost of one exactly counted distinct value (hash entry, its
/// normalised bytes, the value and its count) and of one reservoir entry.
const EXACT_ENTRY_BYTES: u64 = 256;
const RESERVOIR_ENTRY_BYTES: u64 = 128;

/// Per-key limits from a memory budget: half for exact counts, half for the
/// insertion-order reservoir, shared by the keys; never below the fixed defaults.
pub fn limits_for(budget_bytes: u64, num_keys: usize) -> (usize, usize) {
    let per_key = budget_bytes / 2 / num_keys.max(1) as u64;
    let exact = (per_key / EXACT_ENTRY_BYTES) as usize;
    let reservoir = (per_key / RESERVOIR_ENTRY_BYTES) as usize;
    (exact.max(EXACT_LIMIT), reservoir.max(RESERVOIR))
}
/// HyperLogLog precision (2^16 registers: 0.41% standard error).
pub const HLL_PRECISION: u32 = 16;
/// Misra-Gries counters.
pub const HEAVY_HITTERS: usize = 1024;

/// How the value counts of a key were kept, for the report.
#[derive(Debug, Clone, PartialEq)]
pub struct SketchInfo {
    pub distinct_standard_error: f64,
    pub hll_precision: u32,
    pub heavy_hitter_counters: usize,
    /// Reported most-common-value counts are at most this much below the truth.
    pub frequency_error_bound: u64,
}

enum Counts {
    Exact { index: HashMap<Vec<u8>, u32>, values: Vec<ValueCount> },
    Sketch { hll: Box<HyperLogLog>, hitters: MisraGries<Vec<Bson>>, top: Vec<ValueCount> },
}

fn hash_bytes(b: &[u8]) -> u64 {
    hasher().hash_one(b)
}

/// Everything one candidate key needs from the documents.
pub struct KeySample {
    pub key: ShardKey,
    counts: Counts,
    /// Uniform sample of (insertion position, value), Algorithm R.
    reservoir: Vec<(u64, Vec<Bson>)>,
    rng: crate::util::splitmix::SplitMix64,
    /// Documents seen (arrays included): the insertion position of the next one.
    seen: u64,
    counted: u64,
    /// Documents missing at least one key field (their value holds null there).
    pub docs_missing_fields: u64,
    /// Documents with an array in a key field: the server rejects them.
    pub docs_with_arrays: u64,
    /// The first such document (0-based position in the sample) and the field.
    pub first_array: Option<(u64, String)>,
    scratch: Vec<u8>,
    exact_limit: usize,
    reservoir_cap: usize,
    /// Only the reservoir is kept (a second, insertion-ordered pass).
    order_only: bool,
}

impl std::fmt::Debug for KeySample {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeySample({}, {} docs)", self.key, self.counted)
    }
}

impl KeySample {
    pub fn new(key: ShardKey) -> Self {
        Self::with_limits(key, EXACT_LIMIT, RESERVOIR)
    }

    /// For a pass that only serves order-based metrics: no value counts.
    pub fn order_only(key: ShardKey) -> Self {
        KeySample { order_only: true, ..Self::new(key) }
    }

    pub fn with_limits(key: ShardKey, exact_limit: usize, reservoir_cap: usize) -> Self {
        KeySample {
            key,
            order_only: false,
            counts: Counts::Exact { index: HashMap::with_hasher(hasher()), values: Vec::new() },
            reservoir: Vec::new(),
            rng: crate::util::splitmix::SplitMix64(0x5eed_5a3d_1e5c_0ffe),
            seen: 0,
            counted: 0,
            docs_missing_fields: 0,
            docs_with_arrays: 0,
            first_array: None,
            scratch: Vec::new(),
            exact_limit,
            reservoir_cap,
        }
    }

    pub fn add(&mut self, doc: &Document) {
        let pos = self.seen;
        self.seen += 1;
        self.scratch.clear();
        // Borrow the values; clone only what is kept.
        let mut refs: [Option<&Bson>; 8] = [None; 8];
        let mut owned: Vec<&Bson> = Vec::new();
        let many = self.key.fields.len() > refs.len();
        let mut missing = false;
        for (i, f) in self.key.fields.iter().enumerate() {
            let v = match lookup(doc, &f.path) {
                Lookup::Value(v) => v,
                Lookup::Missing => {
                    missing = true;
                    &Bson::Null
                }
                Lookup::Array => {
                    if self.first_array.is_none() {
                        self.first_array = Some((pos, f.path.clone()));
                    }
                    self.docs_with_arrays += 1;
                    return;
                }
            };
            group_bytes(v, &mut self.scratch);
            if many {
                owned.push(v);
            } else {
                refs[i] = Some(v);
            }
        }
        let n = self.key.fields.len();
        let tuple = || -> Vec<Bson> {
            if many {
                owned.iter().map(|v| (*v).clone()).collect()
            } else {
                refs[..n].iter().map(|v| v.expect("set above").clone()).collect()
            }
        };
        if missing {
            self.docs_missing_fields += 1;
        }
        self.counted += 1;
        if !self.order_only {
            self.count_value(&tuple);
        }
        // Reservoir: keep every document until full, then each with probability cap/counted.
        if self.reservoir.len() < self.reservoir_cap {
            self.reservoir.push((pos, tuple()));
        } else {
            let j = self.rng.below(self.counted);
            if (j as usize) < self.reservoir_cap {
                self.reservoir[j as usize] = (pos, tuple());
            }
        }
    }

    fn count_value(&mut self, tuple: &dyn Fn() -> Vec<Bson>) {
        let key_bytes = &self.scratch;
        match &mut self.counts {
            Counts::Exact { index, values } => {
                if let Some(&id) = index.get(key_bytes.as_slice()) {
                    values[id as usize].count += 1;
                    return;
                }
                index.insert(key_bytes.clone(), values.len() as u32);
                values.push(ValueCount { value: tuple(), count: 1 });
                if values.len() > self.exact_limit {
                    self.switch_to_sketch();
                }
            }
            Counts::Sketch { hll, hitters, .. } => {
                hll.add_hash(hash_bytes(key_bytes));
                hitters.add(key_bytes, tuple);
            }
        }
    }

    fn switch_to_sketch(&mut self) {
        let Counts::Exact { index, values } = std::mem::replace(
            &mut self.counts,
            Counts::Sketch { hll: Box::new(HyperLogLog::new(HLL_PRECISION)), hitters: MisraGries::new(0), top: vec![] },
        ) else {
            return;
        };
        let mut hll = HyperLogLog::new(HLL_PRECISION);
        let mut items = Vec::with_capacity(values.len());
        let mut values: Vec<Option<ValueCount>> = values.into_iter().map(Some).collect();
        for (bytes, id) in index {
            hll.add_hash(hash_bytes(&bytes));
            let v = values[id as usize].take().expect("each id once");
            items.push((bytes, v.count, v.value));
        }
        self.counts =
            Counts::Sketch { hll: Box::new(hll), hitters: MisraGries::from_counts(HEAVY_HITTERS, items), top: vec![] };
    }

    /// Call once after the pass: freezes the heavy hitters into a value list.
    pub fn finish(&mut self) {
        if let Counts::Sketch { hitters, top, .. } = &mut self.counts {
            *top = hitters.items().map(|(v, c)| ValueCount { value: v.clone(), count: c }).collect();
        }
    }

    /// Documents counted (arrays excluded).
    pub fn docs_counted(&self) -> u64 {
        self.counted
    }

    /// Distinct values: exact, or the HyperLogLog estimate.
    pub fn num_distinct(&self) -> u64 {
        match &self.counts {
            Counts::Exact { values, .. } => values.len() as u64,
            Counts::Sketch { hll, .. } => hll.estimate().round() as u64,
        }
    }

    /// Values with their counts: every value (exact), or the heavy hitters (lower bounds).
    pub fn frequencies(&self) -> &[ValueCount] {
        match &self.counts {
            Counts::Exact { values, .. } => values,
            Counts::Sketch { top, .. } => top,
        }
    }

    pub fn is_exact(&self) -> bool {
        matches!(self.counts, Counts::Exact { .. })
    }

    pub fn sketch_info(&self) -> Option<SketchInfo> {
        match &self.counts {
            Counts::Exact { .. } => None,
            Counts::Sketch { hll, hitters, .. } => Some(SketchInfo {
                distinct_standard_error: hll.standard_error(),
                hll_precision: hll.precision(),
                heavy_hitter_counters: hitters.capacity(),
                frequency_error_bound: hitters.error_bound(),
            }),
        }
    }

    /// Insertion positions listed in key order, equal keys in insertion order:
    /// what an index scan on the key returns as recordIds (over the reservoir).
    pub fn insertion_positions_in_key_order(&self) -> Vec<u64> {
        let mut order: Vec<&(u64, Vec<Bson>)> = self.reservoir.iter().collect();
        order.sort_by(|a, b| cmp_tuple(&a.1, &b.1).then(a.0.cmp(&b.0)));
        order.into_iter().map(|(p, _)| *p).collect()
    }

    /// Do all documents of the order sample hold one and the same value?
    pub fn order_sample_has_one_value(&self) -> bool {
        let mut it = self.reservoir.iter();
        match it.next() {
            Some((_, first)) => it.all(|(_, t)| cmp_tuple(t, first) == std::cmp::Ordering::Equal),
            None => false,
        }
    }

    /// Distinct values in key space (hashed fields hashed), sorted, with document counts.
    /// Exact counts when every value was counted; else the reservoir, weighted to the sample.
    pub fn key_space_values(&self) -> Vec<(Vec<Bson>, u64)> {
        let mut v: Vec<(Vec<Bson>, u64)> = if self.is_exact() {
            self.frequencies().iter().map(|x| (self.key.to_key_space(&x.value), x.count)).collect()
        } else {
            let weight = self.counted as f64 / self.reservoir.len().max(1) as f64;
            let mut acc: HashMap<Vec<u8>, (Vec<Bson>, f64)> = HashMap::with_hasher(hasher());
            for (_, t) in &self.reservoir {
                let ks = self.key.to_key_space(t);
                let mut b = Vec::new();
                for x in &ks {
                    group_bytes(x, &mut b);
                }
                acc.entry(b).or_insert_with(|| (ks, 0.0)).1 += weight;
            }
            acc.into_values().map(|(k, w)| (k, (w.round() as u64).max(1))).collect()
        };
        v.sort_by(|a, b| cmp_tuple(&a.0, &b.0));
        v
    }

    /// Key-space values of the newest `fraction` of documents (insertion order).
    pub fn recent_key_space_values(&self, fraction: f64) -> Vec<Vec<Bson>> {
        let cutoff = (self.seen as f64 * (1.0 - fraction)).floor() as u64;
        let mut recent: Vec<&(u64, Vec<Bson>)> = self.reservoir.iter().filter(|(p, _)| *p >= cutoff).collect();
        if recent.is_empty() {
            recent = self.reservoir.iter().max_by_key(|(p, _)| *p).into_iter().collect();
        }
        recent.into_iter().map(|(_, t)| self.key.to_key_space(t)).collect()
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

    /// Exact counts and reservoirs as large as `budget_bytes` allows (`limits_for`).
    pub fn with_budget(keys: &[ShardKey], budget_bytes: u64) -> Self {
        let (exact, reservoir) = limits_for(budget_bytes, keys.len());
        let keys = keys.iter().cloned().map(|k| KeySample::with_limits(k, exact, reservoir)).collect();
        Sample { num_docs: 0, total_bytes: 0, keys }
    }

    /// A pass that only keeps each key's reservoir (insertion order).
    pub fn order_only(keys: &[ShardKey], budget_bytes: u64) -> Self {
        let (exact, reservoir) = limits_for(budget_bytes, keys.len());
        let keys =
            keys.iter().cloned().map(|k| KeySample { order_only: true, ..KeySample::with_limits(k, exact, reservoir) }).collect();
        Sample { num_docs: 0, total_bytes: 0, keys }
    }

    pub fn add(&mut self, doc: &Document, bson_size: usize) {
        self.num_docs += 1;
        self.total_bytes += bson_size as u64;
        for k in &mut self.keys {
            k.add(doc);
        }
    }

    pub fn finish(&mut self) {
        self.keys.iter_mut().for_each(KeySample::finish);
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
        assert_eq!(s.frequencies().len(), 2, "null+missing together, 2 and 2.0 together");
        assert_eq!(s.docs_counted(), 4);
        // key order: null (pos 1, 2), then 2 (pos 0, 4)
        assert_eq!(s.insertion_positions_in_key_order(), vec![1, 2, 0, 4]);
    }

    #[test]
    fn limits_grow_with_the_budget() {
        // 1 GiB for 4 keys: 128 MiB each for counts (524,288 values) and the reservoir (1,048,576 docs).
        assert_eq!(limits_for(1 << 30, 4), (524_288, 1_048_576));
        assert_eq!(limits_for(1 << 20, 4), (EXACT_LIMIT, RESERVOIR), "never below the defaults");
    }

    #[test]
    fn switches_to_sketches_past_the_limit() {
        let mut s = KeySample::with_limits(ShardKey::parse("{a: 1}").unwrap(), 1000, 500);
        for i in 0..20_000i64 {
            let v = if i % 4 == 0 { -1 } else { i };
            s.add(&doc! {"a": v});
        }
        s.finish();
        assert!(!s.is_exact());
        let d = s.num_distinct() as f64;
        assert!((d - 15_001.0).abs() / 15_001.0 < 0.02, "{d}");
        let top = s.frequencies().iter().max_by_key(|v| v.count).unwrap();
        assert_eq!(top.value, vec![Bson::Int64(-1)]);
        let info = s.sketch_info().unwrap();
        assert!(5_000 - top.count <= info.frequency_error_bound);
        assert_eq!(s.insertion_positions_in_key_order().len(), 500);
        let total: u64 = s.key_space_values().iter().map(|x| x.1).sum();
        assert!((total as i64 - 20_000).abs() < 500, "{total}");
    }
}
