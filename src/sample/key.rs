//! One candidate key's counts: the dense arena while the budget holds, then exact counts
//! up to `EXACT_LIMIT` values, then sketches; beside them, the insertion-order reservoir.

use super::dense::Dense;
use super::sketch::{HyperLogLog, MisraGries};
use super::values::{
    hash_bytes, hasher, HashMap, HashedGroups, SketchInfo, ValueCount, EXACT_LIMIT, HEAVY_HITTERS, HLL_PRECISION, RESERVOIR,
};
use crate::bsonx::{cmp_tuple, keystring, DocRef, Found, ValueRef};
use crate::model::{KeySpace, ShardKey};
use bson::{Bson, Document};

/// Values decoded and summarised for the ranges and the cluster layout at most.
pub(super) const SUMMARY_POINTS: usize = 100_000;
/// Most frequent values kept decoded after an exact pass (most common values, jumbo risk).
pub(super) const TOP_KEPT: usize = 1024;

pub(super) enum Counts {
    /// Every counted document's encoded value, while the memory budget holds (exact, order included).
    Dense(Dense),
    Exact {
        index: HashMap<Vec<u8>, u32>,
        values: Vec<ValueCount>,
    },
    Sketch {
        hll: Box<HyperLogLog>,
        hitters: MisraGries<Vec<Bson>>,
        top: Vec<ValueCount>,
    },
}

/// Everything one candidate key needs from the documents.
pub struct KeySample {
    pub key: ShardKey,
    pub(super) counts: Counts,
    /// Uniform sample of (insertion position, value), Algorithm R.
    pub(super) reservoir: Vec<(u64, Vec<Bson>)>,
    pub(super) rng: crate::util::splitmix::SplitMix64,
    /// Documents seen (arrays included).
    pub(super) seen: u64,
    /// Documents counted (arrays excluded): the insertion position of the next one.
    pub(super) counted: u64,
    /// Documents missing at least one key field (their value holds null there).
    pub(crate) docs_missing_fields: u64,
    /// Per key field: counted documents where it is missing or holds null (the policy's
    /// `max_missing_key_percent`: both leave the document on the key's null value).
    pub(crate) null_or_missing_by_field: Vec<u64>,
    /// Counted documents with at least one key field missing or null.
    pub(crate) docs_null_or_missing: u64,
    /// Documents with an array in a key field: the server rejects them.
    pub(crate) docs_with_arrays: u64,
    /// The first such document (0-based position in the sample) and the field.
    pub(crate) first_array: Option<(u64, String)>,
    /// Per key field (the first `TYPE_FIELDS`): counted documents by the BSON type of their
    /// value there (`type_slot`; slot 0: missing), for the words on type mixtures.
    pub(crate) types_by_field: Vec<[u64; TYPE_SLOTS]>,
    pub(super) scratch: Vec<u8>,
    pub(super) exact_limit: usize,
    pub(super) reservoir_cap: usize,
    /// Only the reservoir is kept (a second, insertion-ordered pass).
    pub(super) order_only: bool,
}

/// Slots of `types_by_field`: the BSON type codes 1-19 at their number, minKey at 30,
/// maxKey at 31, missing at 0.
pub(crate) const TYPE_SLOTS: usize = 32;
/// Key fields whose types are counted (keys of more fields are rare; the rest go uncounted).
const TYPE_FIELDS: usize = 8;

/// A value's slot in `types_by_field`.
fn type_slot(v: &ValueRef) -> u8 {
    let t = match v {
        ValueRef::Doc(b) => b.element_type(),
        ValueRef::Raw(r) => r.element_type(),
    } as u8;
    match t {
        0x7F => 31,
        0xFF => 30,
        t => t & 0x1F,
    }
}

impl std::fmt::Debug for KeySample {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeySample({}, {} docs)", self.key, self.counted)
    }
}

impl KeySample {
    pub(crate) fn new(key: ShardKey) -> Self {
        Self::with_limits(key, EXACT_LIMIT, RESERVOIR)
    }

    /// Limits without a dense pass: exact counts up to `exact_limit` values, a reservoir of `reservoir_cap`.
    pub(crate) fn with_limits(key: ShardKey, exact_limit: usize, reservoir_cap: usize) -> Self {
        Self::with_budget(key, 0, exact_limit, reservoir_cap)
    }

    /// Every document counted exactly while its encoded values fit `dense_bytes`;
    /// past it, exact counts up to `exact_limit` values, then sketches, and a reservoir.
    pub(crate) fn with_budget(key: ShardKey, dense_bytes: usize, exact_limit: usize, reservoir_cap: usize) -> Self {
        KeySample {
            key,
            order_only: false,
            counts: Counts::Dense(Dense { budget: dense_bytes, ..Default::default() }),
            reservoir: Vec::new(),
            rng: crate::util::splitmix::SplitMix64(0x5eed_5a3d_1e5c_0ffe),
            seen: 0,
            counted: 0,
            docs_missing_fields: 0,
            null_or_missing_by_field: Vec::new(),
            docs_null_or_missing: 0,
            docs_with_arrays: 0,
            first_array: None,
            types_by_field: Vec::new(),
            scratch: Vec::new(),
            exact_limit,
            reservoir_cap,
        }
    }

    pub(crate) fn add(&mut self, doc: &Document) {
        self.add_ref(DocRef::Doc(doc))
    }

    /// `add`, on a decoded or a raw document.
    pub(crate) fn add_ref(&mut self, doc: DocRef<'_>) {
        self.add_found(|_, path| doc.lookup(path))
    }

    /// `add_ref`, with each key field's value from `lookup(field index, path)`.
    pub(super) fn add_found<'d>(&mut self, lookup: impl Fn(usize, &str) -> Found<ValueRef<'d>>) {
        const NULL: ValueRef<'static> = ValueRef::Doc(&Bson::Null);
        self.seen += 1;
        self.scratch.clear();
        // Borrow the values; clone only what is kept.
        let mut refs: [Option<ValueRef>; 8] = [None; 8];
        let mut owned: Vec<ValueRef> = Vec::new();
        let many = self.key.fields.len() > refs.len();
        let mut missing = false;
        // Bit i: field i missing or null (MongoDB keys have at most 32 fields).
        let mut null_fields = 0u64;
        let mut types = [0u8; TYPE_FIELDS];
        for (i, f) in self.key.fields.iter().enumerate() {
            let v = match lookup(i, &f.path) {
                Found::Value(v) => {
                    if i < TYPE_FIELDS {
                        types[i] = type_slot(&v);
                    }
                    if matches!(v, ValueRef::Doc(Bson::Null) | ValueRef::Raw(bson::RawBsonRef::Null)) {
                        null_fields |= 1 << (i % 64);
                    }
                    v
                }
                Found::Missing => {
                    missing = true;
                    null_fields |= 1 << (i % 64);
                    NULL
                }
                Found::Array => {
                    if self.first_array.is_none() {
                        self.first_array = Some((self.seen - 1, f.path.clone()));
                    }
                    self.docs_with_arrays += 1;
                    return;
                }
            };
            keystring::put_ref(v, &mut self.scratch);
            if many {
                owned.push(v);
            } else {
                refs[i] = Some(v);
            }
        }
        let n = self.key.fields.len();
        let tuple = || -> Vec<Bson> {
            if many {
                owned.iter().map(|v| v.to_bson()).collect()
            } else {
                refs[..n].iter().map(|v| v.expect("set above").to_bson()).collect()
            }
        };
        if missing {
            self.docs_missing_fields += 1;
        }
        self.types_by_field.resize(n.min(TYPE_FIELDS), [0; TYPE_SLOTS]);
        for (c, t) in self.types_by_field.iter_mut().zip(types) {
            c[t as usize] += 1;
        }
        if null_fields != 0 {
            self.docs_null_or_missing += 1;
            self.null_or_missing_by_field.resize(n, 0);
            for (i, c) in self.null_or_missing_by_field.iter_mut().enumerate() {
                *c += (null_fields >> (i % 64)) & 1;
            }
        }
        let pos = self.counted;
        self.counted += 1;
        if let Counts::Dense(d) = &mut self.counts {
            if d.push(&self.scratch) {
                return;
            }
            self.spill();
        }
        if !self.order_only {
            self.count_value(&tuple);
        }
        match self.rng.reservoir_slot(self.counted, self.reservoir.len(), self.reservoir_cap) {
            Some(j) if j == self.reservoir.len() => self.reservoir.push((pos, tuple())),
            Some(j) => self.reservoir[j] = (pos, tuple()),
            None => {}
        }
    }

    /// The dense pass outgrew its budget: go on with exact counts of distinct values
    /// (or sketches) and a uniform reservoir, both made from what it held.
    fn spill(&mut self) {
        let Counts::Dense(mut d) =
            std::mem::replace(&mut self.counts, Counts::Exact { index: HashMap::with_hasher(hasher()), values: Vec::new() })
        else {
            return;
        };
        let fields = self.key.fields.len();
        d.sort();
        if d.distinct() <= self.exact_limit {
            let mut index = HashMap::with_hasher(hasher());
            let mut values = Vec::with_capacity(d.distinct());
            for (e, c) in d.run_starts() {
                index.insert(d.entry(e).to_vec(), values.len() as u32);
                values.push(ValueCount { value: d.decode(e, fields), count: c as u64 });
            }
            self.counts = Counts::Exact { index, values };
        } else {
            let mut hll = HyperLogLog::new(HLL_PRECISION);
            for (e, _) in d.run_starts() {
                hll.add_hash(hash_bytes(d.entry(e)));
            }
            let items =
                d.largest_runs(HEAVY_HITTERS).into_iter().map(|(e, c)| (d.entry(e).to_vec(), c as u64, d.decode(e, fields))).collect();
            self.counts =
                Counts::Sketch { hll: Box::new(hll), hitters: MisraGries::from_top(HEAVY_HITTERS, items, d.len() as u64), top: vec![] };
        }
        // Algorithm R over the entries in insertion order; values decoded once chosen.
        let mut chosen: Vec<usize> = Vec::with_capacity(self.reservoir_cap.min(d.len()));
        for i in 0..d.len() {
            match self.rng.reservoir_slot(i as u64 + 1, chosen.len(), self.reservoir_cap) {
                Some(j) if j == chosen.len() => chosen.push(i),
                Some(j) => chosen[j] = i,
                None => {}
            }
        }
        self.reservoir = chosen.into_iter().map(|i| (i as u64, d.decode(i, fields))).collect();
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
            Counts::Dense(_) => {}
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
        self.counts = Counts::Sketch { hll: Box::new(hll), hitters: MisraGries::from_counts(HEAVY_HITTERS, items), top: vec![] };
    }

    /// Call once after the pass: sorts the dense values, or freezes the heavy hitters.
    pub(crate) fn finish(&mut self) {
        let fields = self.key.fields.len();
        match &mut self.counts {
            Counts::Dense(d) => {
                d.sort();
                d.top = d.top_runs(TOP_KEPT, fields);
            }
            Counts::Sketch { hitters, top, .. } => {
                *top = hitters.items().map(|(v, c)| ValueCount { value: v.clone(), count: c }).collect();
            }
            Counts::Exact { .. } => {}
        }
    }

    /// Documents counted (arrays excluded).
    pub(crate) fn docs_counted(&self) -> u64 {
        self.counted
    }

    /// Up to `n` (insertion position, key value) pairs spread over the counted documents:
    /// evenly spaced while every value is held, else the reservoir's first (a uniform sample).
    pub(crate) fn values_by_position(&self, n: usize) -> Vec<(u64, Vec<Bson>)> {
        match &self.counts {
            Counts::Dense(d) if d.len() > 0 => {
                let step = d.len().div_ceil(n.max(1));
                (0..d.len()).step_by(step).map(|i| (i as u64, d.decode(i, self.key.fields.len()))).collect()
            }
            _ => self.reservoir.iter().take(n).cloned().collect(),
        }
    }

    /// Distinct values: exact, or the HyperLogLog estimate.
    pub fn num_distinct(&self) -> u64 {
        match &self.counts {
            Counts::Dense(d) => d.distinct() as u64,
            Counts::Exact { values, .. } => values.len() as u64,
            Counts::Sketch { hll, .. } => hll.estimate().round() as u64,
        }
    }

    /// Values with their counts: every value (exact), the most frequent ones (dense,
    /// `TOP_KEPT`), or the heavy hitters (sketch: lower bounds).
    pub(crate) fn frequencies(&self) -> &[ValueCount] {
        match &self.counts {
            Counts::Dense(d) => &d.top,
            Counts::Exact { values, .. } => values,
            Counts::Sketch { top, .. } => top,
        }
    }

    /// (distinct values, values seen once, values seen twice) when counts are exact (for Chao1).
    pub(crate) fn count_profile(&self) -> Option<(u64, u64, u64)> {
        let profile = |counts: &mut dyn Iterator<Item = u64>| {
            counts.fold((0, 0, 0), |(d, f1, f2), c| (d + 1, f1 + (c == 1) as u64, f2 + (c == 2) as u64))
        };
        match &self.counts {
            Counts::Dense(d) => Some(d.profile),
            Counts::Exact { values, .. } => Some(profile(&mut values.iter().map(|v| v.count))),
            Counts::Sketch { .. } => None,
        }
    }

    pub fn is_exact(&self) -> bool {
        !matches!(self.counts, Counts::Sketch { .. })
    }

    pub(crate) fn sketch_info(&self) -> Option<SketchInfo> {
        match &self.counts {
            Counts::Dense(_) | Counts::Exact { .. } => None,
            Counts::Sketch { hll, hitters, .. } => Some(SketchInfo {
                distinct_standard_error: hll.standard_error(),
                hll_precision: hll.precision(),
                heavy_hitter_counters: hitters.capacity(),
                frequency_error_bound: hitters.error_bound(),
            }),
        }
    }

    /// Insertion positions listed in key order, equal keys in insertion order:
    /// what an index scan on the key returns as recordIds (every document, or the reservoir).
    pub(crate) fn insertion_positions_in_key_order(&self) -> Vec<u64> {
        if let Counts::Dense(d) = &self.counts {
            return d.order.iter().map(|&i| i as u64).collect();
        }
        let mut order: Vec<&(u64, Vec<Bson>)> = self.reservoir.iter().collect();
        order.sort_by(|a, b| cmp_tuple(&a.1, &b.1).then(a.0.cmp(&b.0)));
        order.into_iter().map(|(p, _)| *p).collect()
    }

    /// Do all documents of the order sample hold one and the same value?
    pub(crate) fn order_sample_has_one_value(&self) -> bool {
        if let Counts::Dense(d) = &self.counts {
            return d.distinct() == 1;
        }
        let mut it = self.reservoir.iter();
        match it.next() {
            Some((_, first)) => it.all(|(_, t)| cmp_tuple(t, first) == std::cmp::Ordering::Equal),
            None => false,
        }
    }

    /// For a key with a hashed field, the counted values grouped as its hashed index groups
    /// them: by the key-space tuple, the hashed field as `hash64` of the value (numbers
    /// truncated to 64-bit integers first, so 0.1 and 0.9 are one hashed value). Each group
    /// stands under its smallest value in key order. None without a hashed field, or past
    /// exact counting (a sketch keeps no values to hash).
    pub(crate) fn hashed_groups(&self) -> Option<HashedGroups> {
        let h = self.key.hashed_position()?;
        let fields = self.key.fields.len();
        // Strings, ObjectIds, UUIDs, dates: each has its own hash; only numbers (and objects
        // holding them) can collapse. Decoding every value is then not needed.
        let may = match &self.counts {
            Counts::Dense(d) if fields == 1 => d.run_starts().any(|(e, _)| crate::bsonx::keystring::may_hash_alike(d.entry(e))),
            Counts::Exact { values, .. } => values.iter().any(|x| {
                matches!(x.value.get(h), Some(Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_) | Bson::Document(_)))
            }),
            Counts::Dense(_) => true,
            Counts::Sketch { .. } => return None,
        };
        if !may {
            let n = self.num_distinct();
            return Some(HashedGroups { groups: None, hashed_distinct: n, raw_distinct: n, fractional_doubles: 0 });
        }
        let mut all: Vec<(Vec<Bson>, Vec<Bson>, u64)> = match &self.counts {
            Counts::Dense(d) => d
                .run_starts()
                .map(|(e, c)| {
                    let v = d.decode(e, fields);
                    (self.key.to_key_space(&v), v, c as u64)
                })
                .collect(),
            Counts::Exact { values, .. } => values.iter().map(|x| (self.key.to_key_space(&x.value), x.value.clone(), x.count)).collect(),
            Counts::Sketch { .. } => return None,
        };
        let raw_distinct = all.len() as u64;
        let fractional_doubles =
            all.iter().filter(|(_, v, _)| matches!(v.get(h), Some(Bson::Double(f)) if f.fract() != 0.0)).count() as u64;
        // In key-space order, then the values' (stable). A single hashed field's key space is
        // one integer: its values are ordered through (hash, index) pairs, the same stable
        // order, instead of moving the triples and comparing them as BSON (most of this pass,
        // and a third of `analyze`'s CPU, on a million distinct values).
        let order: Option<Vec<(i64, usize)>> =
            all.iter().enumerate().map(|(i, x)| if let [Bson::Int64(h)] = x.0[..] { Some((h, i)) } else { None }).collect();
        let all = match order {
            Some(mut order) => {
                order.sort_by(|x, y| x.0.cmp(&y.0).then_with(|| cmp_tuple(&all[x.1].1, &all[y.1].1)));
                order.iter().map(|&(_, i)| std::mem::take(&mut all[i])).collect()
            }
            None => {
                all.sort_by(|a, b| cmp_tuple(&a.0, &b.0).then_with(|| cmp_tuple(&a.1, &b.1)));
                all
            }
        };
        let mut groups: Vec<(Vec<Bson>, ValueCount)> = Vec::new();
        for (ks, value, count) in all {
            match groups.last_mut() {
                Some((last, g)) if cmp_tuple(last, &ks).is_eq() => g.count += count,
                _ => groups.push((ks, ValueCount { value, count })),
            }
        }
        Some(HashedGroups {
            hashed_distinct: groups.len() as u64,
            groups: Some(groups.into_iter().map(|(_, g)| g).collect()),
            raw_distinct,
            fractional_doubles,
        })
    }

    /// Distinct values in key space (hashed fields hashed), sorted, with document counts:
    /// every value when there are few enough, else evenly spaced documents in key order
    /// standing for their neighbours (dense), the exact counts, or the reservoir weighted.
    /// The dense pass's values stay encoded unless a field is hashed.
    pub(crate) fn key_space_values(&self) -> KeySpace<'_> {
        let fields = self.key.fields.len();
        let mut decoded: Vec<(Vec<Bson>, u64)> = match &self.counts {
            Counts::Dense(d) => {
                // (entry, count) in key order.
                let points: Vec<(usize, u64)> = if d.distinct() <= SUMMARY_POINTS {
                    let mut all = Vec::with_capacity(d.distinct());
                    all.extend(d.run_starts().map(|(e, c)| (e, c as u64)));
                    all
                } else {
                    let step = d.len().div_ceil(SUMMARY_POINTS);
                    let mut out: Vec<(usize, u64)> = Vec::with_capacity(SUMMARY_POINTS);
                    for chunk in d.order.chunks(step) {
                        let e = chunk[0] as usize;
                        match out.last_mut() {
                            Some((last, c)) if d.entry(*last) == d.entry(e) => *c += chunk.len() as u64,
                            _ => out.push((e, chunk.len() as u64)),
                        }
                    }
                    out
                };
                // The dense pass lists values in key order (its encoding sorts as `cmp_tuple`
                // does) and they stay encoded; only hashing a field reorders them.
                if self.key.hashed_position().is_none() {
                    return KeySpace::from_encoded(fields, points.into_iter().map(|(e, c)| (d.entry(e), c)).collect());
                }
                points.into_iter().map(|(e, c)| (self.key.moved_to_key_space(d.decode(e, fields)), c)).collect()
            }
            Counts::Exact { values, .. } => values.iter().map(|x| (self.key.to_key_space(&x.value), x.count)).collect(),
            Counts::Sketch { .. } => {
                let weight = self.counted as f64 / self.reservoir.len().max(1) as f64;
                let mut acc: HashMap<Vec<u8>, (Vec<Bson>, f64)> = HashMap::with_hasher(hasher());
                for (_, t) in &self.reservoir {
                    let ks = self.key.to_key_space(t);
                    let mut b = Vec::new();
                    keystring::encode(&ks, &mut b);
                    acc.entry(b).or_insert_with(|| (ks, 0.0)).1 += weight;
                }
                acc.into_values().map(|(k, w)| (k, (w.round() as u64).max(1))).collect()
            }
        };
        decoded.sort_by(|a, b| cmp_tuple(&a.0, &b.0));
        // Values a hashed field makes equal (doubles truncated before hashing) are one
        // key-space value: one place in a chunk, never split apart.
        decoded.dedup_by(|next, kept| {
            let same = cmp_tuple(&next.0, &kept.0).is_eq();
            if same {
                kept.1 += next.1;
            }
            same
        });
        KeySpace::from_values(decoded)
    }

    /// Key-space values of the documents at these insertion positions (sorted): the
    /// dense pass decodes them, otherwise the reservoir's entries among them stand in.
    pub(crate) fn key_space_values_at(&self, positions: &[u64]) -> Vec<Vec<Bson>> {
        if let Counts::Dense(d) = &self.counts {
            let fields = self.key.fields.len();
            let inside: Vec<u64> = positions.iter().copied().filter(|&p| (p as usize) < d.len()).collect();
            let step = inside.len().div_ceil(SUMMARY_POINTS).max(1);
            return inside.iter().step_by(step).map(|&p| self.key.moved_to_key_space(d.decode(p as usize, fields))).collect();
        }
        self.reservoir.iter().filter(|(p, _)| positions.binary_search(p).is_ok()).map(|(_, t)| self.key.to_key_space(t)).collect()
    }

    /// Key-space values of the newest `fraction` of documents (insertion order).
    pub(crate) fn recent_key_space_values(&self, fraction: f64) -> Vec<Vec<Bson>> {
        let cutoff = (self.counted as f64 * (1.0 - fraction)).floor() as u64;
        if let Counts::Dense(d) = &self.counts {
            let fields = self.key.fields.len();
            let recent = (cutoff as usize).min(d.len().saturating_sub(1))..d.len();
            let step = recent.len().div_ceil(SUMMARY_POINTS).max(1);
            return recent.step_by(step).map(|i| self.key.moved_to_key_space(d.decode(i, fields))).collect();
        }
        let mut recent: Vec<&(u64, Vec<Bson>)> = self.reservoir.iter().filter(|(p, _)| *p >= cutoff).collect();
        if recent.is_empty() {
            recent = self.reservoir.iter().max_by_key(|(p, _)| *p).into_iter().collect();
        }
        recent.into_iter().map(|(_, t)| self.key.to_key_space(t)).collect()
    }
}
