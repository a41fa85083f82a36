//! The sample pass: one read of the documents feeds every candidate key at once.
//! Memory stays bounded whatever the sample size:
//! - value counts are exact up to `EXACT_LIMIT` distinct values per key, then a
//!   HyperLogLog counts distinct values and Misra-Gries keeps the most common ones;
//! - monotonicity, chunk ranges and the cluster layout use a uniform reservoir of
//!   up to `RESERVOIR` (insertion position, value) pairs per key, which holds
//!   every document of a smaller sample.

pub(crate) mod sketch;

use self::sketch::{HyperLogLog, MisraGries};
use crate::bsonx::path::{lookup_from_top, top_fields, Top};
use crate::bsonx::{cmp_tuple, keystring, DocRef, Found, ValueRef};
use crate::model::{KeySpace, ShardKey};
use bson::{Bson, Document};

type HashMap<K, V> = std::collections::HashMap<K, V, ahash::RandomState>;

/// Fixed seeds: the same sample gives the same sketches on every run.
fn hasher() -> ahash::RandomState {
    ahash::RandomState::with_seeds(0x5eed, 0xcafe, 0xf00d, 0xbeef)
}

/// One distinct key value and how many sampled documents hold it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ValueCount {
    pub(crate) value: Vec<Bson>,
    pub(crate) count: u64,
}

/// Distinct values counted exactly per key (past the dense pass) before switching to
/// sketches: a key with more distinct values in the sample is high-cardinality anyway.
pub(crate) const EXACT_LIMIT: usize = 20_000;
/// Documents kept per key for order-based metrics (monotonicity, ranges, cluster).
pub const RESERVOIR: usize = 20_000;

/// The default memory budget for the sample (`--memory-limit`).
pub(crate) const DEFAULT_MEMORY_LIMIT: u64 = 1 << 30;
/// Conservative heap cost of one exactly counted distinct value (hash entry, its
/// normalised bytes, the value and its count) and of one reservoir entry.
const EXACT_ENTRY_BYTES: u64 = 256;
const RESERVOIR_ENTRY_BYTES: u64 = 128;

/// Per-key limits from a memory budget: half for exact counts, half for the
/// insertion-order reservoir, shared by the keys; never below the fixed defaults.
pub(crate) fn limits_for(budget_bytes: u64, num_keys: usize) -> (usize, usize) {
    let per_key = budget_bytes / 2 / num_keys.max(1) as u64;
    let exact = (per_key / EXACT_ENTRY_BYTES) as usize;
    let reservoir = (per_key / RESERVOIR_ENTRY_BYTES) as usize;
    (exact.max(EXACT_LIMIT), reservoir.max(RESERVOIR))
}
/// HyperLogLog precision (2^16 registers: 0.41% standard error).
pub(crate) const HLL_PRECISION: u32 = 16;
/// Misra-Gries counters.
pub(crate) const HEAVY_HITTERS: usize = 1024;

/// How the value counts of a key were kept, for the report.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SketchInfo {
    pub(crate) distinct_standard_error: f64,
    pub(crate) hll_precision: u32,
    pub(crate) heavy_hitter_counters: usize,
    /// Reported most-common-value counts are at most this much below the truth.
    pub(crate) frequency_error_bound: u64,
}

enum Counts {
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

fn hash_bytes(b: &[u8]) -> u64 {
    hasher().hash_one(b)
}

/// Values decoded and summarised for the ranges and the cluster layout at most.
const SUMMARY_POINTS: usize = 100_000;
/// Most frequent values kept decoded after an exact pass (most common values, jumbo risk).
const TOP_KEPT: usize = 1024;

/// Every counted document's key value in `bsonx::keystring` form, in insertion
/// order: one sort then gives distinct values, their counts and key order exactly.
/// About the encoding's length plus 4 bytes per document (an ObjectId: 17 bytes).
#[derive(Default)]
struct Dense {
    arena: Vec<u8>,
    ends: Vec<u32>,
    budget: usize,
    /// How many values the source expects to give (0: no guess), until room is made for them.
    expected: usize,
    /// After `finish`: entry indices in key order, equal values in insertion order.
    order: Vec<u32>,
    /// After `finish`: bit i set when `order[i]` starts a run of equal values (n/8 bytes).
    starts: Vec<u64>,
    /// After `finish`: (distinct values, values held once, values held twice).
    profile: (u64, u64, u64),
    /// After `finish`: the most frequent values, decoded, highest first (ties in key order).
    top: Vec<ValueCount>,
}

/// How many bytes of an entry `Dense::sort` compares as one number: 11, with the entry's
/// index (32 bits) and whether it ends within them (1 bit) beside them in a u128. A
/// number's encoding is 11 bytes (type, tag, f64, tag), so numbers whose first bytes all
/// entries share still fit; with 8, every run of equal doubles was sorted a second time.
const WIDE: usize = 11;

/// In `Dense::sort`'s numbers: the entry fits the `WIDE` bytes they hold.
const FITS: u128 = 1 << 32;

/// Where `Dense::sort`'s numbers start their `WIDE` bytes: the bits below hold the flag and index.
const PREFIX_SHIFT: u32 = 40;

/// Set bit `i` of `Dense::starts`.
fn mark_run_start(starts: &mut [u64], i: usize) {
    starts[i / 64] |= 1 << (i % 64);
}

impl Dense {
    /// Where entry `i` lies in the arena.
    fn bounds(&self, i: usize) -> (usize, usize) {
        (if i == 0 { 0 } else { self.ends[i - 1] as usize }, self.ends[i] as usize)
    }

    fn entry(&self, i: usize) -> &[u8] {
        let (start, end) = self.bounds(i);
        &self.arena[start..end]
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    /// The `WIDE` bytes of entry `i` from `at` (zero past its end) as the top bits of a
    /// number, and whether the entry ends within them. Read from the arena as 16 bytes and
    /// masked: a copy of a length not known at compile time is a call to memcpy, which was
    /// an eighth of the sort.
    fn prefix(&self, i: usize, at: usize) -> (u128, bool) {
        let (start, end) = self.bounds(i);
        let from = start + at;
        let avail = end.saturating_sub(from);
        if avail == 0 {
            return (0, true);
        }
        let bytes = match self.arena.get(from..from + 16).and_then(|b| b.first_chunk::<16>()) {
            Some(b) => *b,
            None => {
                // Only the last entries of the arena: fewer than 16 bytes follow them.
                let mut b = [0u8; 16];
                b[..avail].copy_from_slice(&self.arena[from..end]);
                b
            }
        };
        let take = avail.min(WIDE) as u32;
        (u128::from_be_bytes(bytes) & !(u128::MAX >> (take * 8)), avail <= WIDE)
    }

    /// Add one value; false (nothing added) when the budget would be passed. The
    /// budget counts what is allocated. Both vectors double while small against the
    /// budget (each growth copies the whole), then grow by an eighth at a time, so
    /// near the budget the allocation stays close to what is held.
    fn push(&mut self, b: &[u8]) -> bool {
        let after = self.arena.len() + b.len();
        if after > u32::MAX as usize {
            return false;
        }
        let small = self.budget / 16;
        let growth = |cap_bytes: usize, cap: usize| if cap_bytes <= small { cap } else { cap / 8 };
        let mut need_arena =
            if after > self.arena.capacity() { growth(self.arena.capacity(), self.arena.capacity()).max(b.len()).max(4096) } else { 0 };
        let mut need_ends =
            if self.ends.len() == self.ends.capacity() { growth(self.ends.capacity() * 4, self.ends.capacity()).max(1024) } else { 0 };
        // Room for every value the source expects at once, the arena sized from the values so
        // far, when the budget has it: each growth copies the whole into fresh pages.
        if need_ends > 0 && self.expected > self.len() && self.len() >= 1024 {
            let ends = self.expected.min(u32::MAX as usize) * 65 / 64;
            let arena = (self.arena.len() as f64 / self.len() as f64 * ends as f64 * 1.03) as usize + 4096;
            if arena.saturating_add(ends * 4) <= self.budget {
                need_ends = need_ends.max(ends - self.ends.len());
                need_arena = need_arena.max(arena.saturating_sub(self.arena.len()));
            }
            self.expected = 0;
        }
        if self.arena.capacity() + need_arena + (self.ends.capacity() + need_ends) * 4 > self.budget {
            return false;
        }
        self.arena.reserve_exact(need_arena);
        self.ends.reserve_exact(need_ends);
        self.arena.extend_from_slice(b);
        self.ends.push(after as u32);
        true
    }

    /// Sort into key order, equal values in insertion order, and profile the runs.
    fn sort(&mut self) {
        // The bytes every entry shares are skipped: the 8 after them tell most entries apart.
        let skip = match self.len() {
            0 => 0,
            n => {
                let first = self.entry(0);
                (1..n).fold(first.len(), |l, i| l.min(first.iter().zip(self.entry(i)).take_while(|(a, b)| a == b).count()))
            }
        };
        let held = self.arena.capacity() + self.ends.capacity() * 4;
        // Room for a (prefix, fits, entry) array as numbers, and the order.
        if held + self.len() * (std::mem::size_of::<u128>() + 4) <= self.budget {
            // Sorted as plain numbers: by `WIDE` bytes of the entry, then (within equal bytes)
            // by entry. Entries that fit these bytes are equal when their bytes are (the
            // encoding is prefix-free: zero padding cannot make two values alike, nor a value
            // that fits alike one that does not); a run of longer entries is sorted again by
            // their next `WIDE` bytes, and so on: numbers compared all the way, no bytes.
            let key = |i: usize, at: usize| {
                let (p, fits) = self.prefix(i, at);
                p | if fits { FITS } else { 0 } | i as u128
            };
            let mut keys: Vec<u128> = (0..self.len()).map(|i| key(i, skip)).collect();
            keys.sort_unstable();
            let mut starts = vec![0u64; keys.len().div_ceil(64)];
            // (start, end, offset of the bytes `keys[start..end]` were sorted by): a list, not
            // recursion, as a long value takes one level per `WIDE` bytes.
            let mut work = vec![(0, keys.len(), skip)];
            while let Some((lo, hi, at)) = work.pop() {
                let mut i = lo;
                while i < hi {
                    let p = keys[i] >> PREFIX_SHIFT;
                    let mut j = i + 1;
                    while j < hi && keys[j] >> PREFIX_SHIFT == p {
                        j += 1;
                    }
                    if j - i == 1 || keys[i] & FITS != 0 {
                        // One value.
                        mark_run_start(&mut starts, i);
                    } else {
                        for k in &mut keys[i..j] {
                            *k = key(*k as u32 as usize, at + WIDE);
                        }
                        keys[i..j].sort_unstable();
                        work.push((i, j, at + WIDE));
                    }
                    i = j;
                }
            }
            self.order = keys.into_iter().map(|k| k as u32).collect();
            self.starts = starts;
        } else {
            // No more memory than the order itself. Without the insertion-order tie-break,
            // equal values compare equal and the pattern-defeating quicksort partitions them
            // out at once; each run is put back in insertion order after.
            let mut order: Vec<u32> = (0..self.len() as u32).collect();
            order.sort_unstable_by(|&a, &b| {
                let (a, b) = (a as usize, b as usize);
                self.prefix(a, skip).0.cmp(&self.prefix(b, skip).0).then_with(|| self.entry(a).cmp(self.entry(b)))
            });
            // Runs found once, by comparing neighbours, and marked: every later pass reads the bits.
            let mut starts = vec![0u64; order.len().div_ceil(64)];
            let mut i = 0;
            while i < order.len() {
                let first = self.entry(order[i] as usize);
                let mut j = i + 1;
                while j < order.len() && self.entry(order[j] as usize) == first {
                    j += 1;
                }
                order[i..j].sort_unstable();
                mark_run_start(&mut starts, i);
                i = j;
            }
            self.order = order;
            self.starts = starts;
        }
        self.profile = self.run_starts().fold((0, 0, 0), |(d, f1, f2), (_, c)| (d + 1, f1 + (c == 1) as u64, f2 + (c == 2) as u64));
    }

    fn distinct(&self) -> usize {
        self.profile.0 as usize
    }

    /// (first entry in key order, count) of every run of equal values, found by
    /// reading the run boundaries `sort` marked in `starts`.
    fn run_starts(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        let mut i = 0;
        let n = self.order.len();
        // The next run start at or after `j` (n when none).
        let next = move |j: usize| -> usize {
            let mut w = j / 64;
            if w >= self.starts.len() {
                return n;
            }
            let mut bits = self.starts[w] & (!0u64 << (j % 64));
            while bits == 0 {
                w += 1;
                if w == self.starts.len() {
                    return n;
                }
                bits = self.starts[w];
            }
            (w * 64 + bits.trailing_zeros() as usize).min(n)
        };
        std::iter::from_fn(move || {
            let first = *self.order.get(i)? as usize;
            let j = next(i + 1);
            let count = (j - i) as u32;
            i = j;
            Some((first, count))
        })
    }

    /// The `k` largest runs as (entry, count), highest first, ties in key order: a bounded heap.
    fn largest_runs(&self, k: usize) -> Vec<(usize, u32)> {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut heap: BinaryHeap<Reverse<(u32, Reverse<usize>, usize)>> = BinaryHeap::with_capacity(k + 1);
        for (r, (e, c)) in self.run_starts().enumerate() {
            // A run no larger than the smallest kept would be the one dropped (ties go to the earlier).
            if heap.len() == k && heap.peek().is_some_and(|Reverse((least, _, _))| c <= *least) {
                continue;
            }
            heap.push(Reverse((c, Reverse(r), e)));
            if heap.len() > k {
                heap.pop();
            }
        }
        let mut out: Vec<(u32, Reverse<usize>, usize)> = heap.into_iter().map(|Reverse(x)| x).collect();
        out.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
        out.into_iter().map(|(c, _, e)| (e, c)).collect()
    }

    fn decode(&self, i: usize, fields: usize) -> Vec<Bson> {
        keystring::decode(self.entry(i), fields).unwrap_or_else(|| vec![Bson::Null; fields])
    }

    /// The `k` largest runs, decoded, highest first, ties in key order.
    fn top_runs(&self, k: usize, fields: usize) -> Vec<ValueCount> {
        self.largest_runs(k).into_iter().map(|(e, c)| ValueCount { value: self.decode(e, fields), count: c as u64 }).collect()
    }
}
/// Everything one candidate key needs from the documents.
pub struct KeySample {
    pub key: ShardKey,
    counts: Counts,
    /// Uniform sample of (insertion position, value), Algorithm R.
    reservoir: Vec<(u64, Vec<Bson>)>,
    rng: crate::util::splitmix::SplitMix64,
    /// Documents seen (arrays included).
    seen: u64,
    /// Documents counted (arrays excluded): the insertion position of the next one.
    counted: u64,
    /// Documents missing at least one key field (their value holds null there).
    pub(crate) docs_missing_fields: u64,
    /// Documents with an array in a key field: the server rejects them.
    pub(crate) docs_with_arrays: u64,
    /// The first such document (0-based position in the sample) and the field.
    pub(crate) first_array: Option<(u64, String)>,
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
            docs_with_arrays: 0,
            first_array: None,
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
    fn add_found<'d>(&mut self, lookup: impl Fn(usize, &str) -> Found<ValueRef<'d>>) {
        const NULL: ValueRef<'static> = ValueRef::Doc(&Bson::Null);
        self.seen += 1;
        self.scratch.clear();
        // Borrow the values; clone only what is kept.
        let mut refs: [Option<ValueRef>; 8] = [None; 8];
        let mut owned: Vec<ValueRef> = Vec::new();
        let many = self.key.fields.len() > refs.len();
        let mut missing = false;
        for (i, f) in self.key.fields.iter().enumerate() {
            let v = match lookup(i, &f.path) {
                Found::Value(v) => v,
                Found::Missing => {
                    missing = true;
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
            if chosen.len() < self.reservoir_cap {
                chosen.push(i);
            } else {
                let j = self.rng.below(i as u64 + 1) as usize;
                if j < self.reservoir_cap {
                    chosen[j] = i;
                }
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

/// The whole sample: document count and size, and one `KeySample` per candidate.
#[derive(Debug)]
pub struct Sample {
    pub(crate) num_docs: u64,
    pub(crate) total_bytes: u64,
    pub keys: Vec<KeySample>,
    /// Per document (sample order), the creation time in seconds of an ObjectId `_id`,
    /// `NO_CREATION_TIME` otherwise: when documents were created, whatever order they were loaded in.
    pub(crate) created: Vec<u32>,
    created_cap: usize,
    /// `fields_read` of the keys: the top-level names `add_batch` finds in one pass.
    names: std::sync::Arc<[String]>,
}

/// The creation time an ObjectId `_id` carries (seconds), or `NO_CREATION_TIME`.
fn creation_time(doc: DocRef<'_>) -> u32 {
    creation_time_of(doc.lookup("_id"))
}

/// `doc.lookup(path)`, from what `top_fields` found of its first part (`tops[slot]`) when
/// the document is raw and the pass found it.
fn lookup_in<'a>(doc: DocRef<'a>, tops: &[Top<'a>], slot: Option<usize>, path: &str) -> Found<ValueRef<'a>> {
    match (doc, slot.and_then(|i| tops.get(i))) {
        (DocRef::Raw(raw), Some(&top)) => lookup_from_top(raw, top, path).map(ValueRef::Raw),
        _ => doc.lookup(path),
    }
}

/// `creation_time` from what a lookup of `_id` found.
fn creation_time_of(id: Found<ValueRef<'_>>) -> u32 {
    let o = match id {
        Found::Value(ValueRef::Doc(Bson::ObjectId(o))) => *o,
        Found::Value(ValueRef::Raw(bson::RawBsonRef::ObjectId(o))) => o,
        _ => return NO_CREATION_TIME,
    };
    let b = o.bytes();
    u32::from_be_bytes([b[0], b[1], b[2], b[3]]).min(NO_CREATION_TIME - 1)
}

/// `Sample::created` of a document whose `_id` is not an ObjectId.
pub(crate) const NO_CREATION_TIME: u32 = u32::MAX;
/// Bytes per document the creation times take (4) are counted against the budget at this share.
const CREATED_BUDGET_SHARE: u64 = 16;

impl Sample {
    pub fn new(keys: &[ShardKey]) -> Self {
        Sample {
            num_docs: 0,
            total_bytes: 0,
            keys: keys.iter().cloned().map(KeySample::new).collect(),
            created: Vec::new(),
            created_cap: RESERVOIR * 50,
            names: Self::fields_read(keys).into(),
        }
    }

    /// Every document counted exactly while each key's share of `budget_bytes` holds its
    /// encoded values; past it, exact counts and reservoirs as large as `limits_for` allows.
    pub fn with_budget(keys: &[ShardKey], budget_bytes: u64) -> Self {
        let (exact, reservoir) = limits_for(budget_bytes, keys.len());
        let dense = (budget_bytes / keys.len().max(1) as u64).min(u32::MAX as u64) as usize;
        let names = Self::fields_read(keys).into();
        let keys = keys.iter().cloned().map(|k| KeySample::with_budget(k, dense, exact, reservoir)).collect();
        let created_cap = (budget_bytes / CREATED_BUDGET_SHARE / 4) as usize;
        Sample { num_docs: 0, total_bytes: 0, keys, created: Vec::new(), created_cap, names }
    }

    /// A pass for insertion order only (no value counts once past the dense budget).
    pub(crate) fn order_only(keys: &[ShardKey], budget_bytes: u64) -> Self {
        let mut s = Self::with_budget(keys, budget_bytes);
        s.keys.iter_mut().for_each(|k| k.order_only = true);
        s
    }

    /// The top-level fields `add` reads for these keys: each path's first part, and `_id`
    /// (its ObjectId carries the creation time).
    pub fn fields_read(keys: &[ShardKey]) -> Vec<String> {
        let mut fields: Vec<String> = keys.iter().flat_map(|k| k.paths().map(|p| p.split('.').next().unwrap_or(p).to_string())).collect();
        fields.push("_id".into());
        fields.sort();
        fields.dedup();
        fields
    }

    pub fn add(&mut self, doc: &Document, bson_size: usize) {
        self.count_doc(DocRef::Doc(doc), bson_size);
        for k in &mut self.keys {
            k.add(doc);
        }
    }

    /// A batch of documents, in order: each key's pass runs on its own core.
    pub(crate) fn add_batch(&mut self, batch: &[crate::model::SampledDoc]) {
        use rayon::prelude::*;
        // The key fields' (and `_id`'s) top-level values of each raw document, found in one
        // pass for all keys.
        let held = std::sync::Arc::clone(&self.names);
        let names: Vec<&str> = held.iter().map(String::as_str).collect();
        let tops: Vec<Vec<Top>> = batch
            .par_iter()
            .map_init(Vec::new, |hints: &mut Vec<usize>, d| match d.view() {
                DocRef::Raw(raw) => {
                    let mut t = Vec::with_capacity(names.len());
                    top_fields(raw, &names, &mut t, hints);
                    t
                }
                DocRef::Doc(_) => Vec::new(),
            })
            .collect();
        // A path's place among `names` (its first part's).
        let slot = |path: &str| names.iter().position(|n| *n == path.split('.').next().unwrap_or(path));
        let id = slot("_id");
        for (d, t) in batch.iter().zip(&tops) {
            self.count_doc_with(|| creation_time_of(lookup_in(d.view(), t, id, "_id")), d.bson_size);
        }
        self.keys.par_iter_mut().for_each(|k| {
            let slots: Vec<Option<usize>> = k.key.paths().map(slot).collect();
            for (d, t) in batch.iter().zip(&tops) {
                k.add_found(|i, path| lookup_in(d.view(), t, slots[i], path));
            }
        });
    }

    /// The source expects to give about `n` documents: room is made for them at once.
    pub(crate) fn expect(&mut self, n: u64) {
        for k in &mut self.keys {
            if let Counts::Dense(d) = &mut k.counts {
                d.expected = usize::try_from(n).unwrap_or(usize::MAX);
            }
        }
    }

    /// What the sample keeps of every document whatever the keys: count, size, creation time.
    fn count_doc(&mut self, doc: DocRef<'_>, bson_size: usize) {
        self.count_doc_with(|| creation_time(doc), bson_size)
    }

    /// `count_doc`, the creation time from `created`.
    fn count_doc_with(&mut self, created: impl FnOnce() -> u32, bson_size: usize) {
        self.num_docs += 1;
        self.total_bytes += bson_size as u64;
        if self.created.len() < self.created_cap {
            self.created.push(created());
        }
    }

    /// Sort each key's values (on every core).
    pub fn finish(&mut self) {
        use rayon::prelude::*;
        self.keys.par_iter_mut().for_each(KeySample::finish);
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
        // key order: null (positions 1, 2), then 2 (positions 0, 3: the array document is not counted)
        assert_eq!(s.insertion_positions_in_key_order(), vec![1, 2, 0, 3]);
    }

    #[test]
    fn dense_key_space_values_come_in_mongodb_order_without_a_sort() {
        use bson::{oid::ObjectId, Bson, DateTime};
        // Mixed types, cross-type equal numbers, compound keys, past SUMMARY_POINTS too.
        let mut r = crate::util::splitmix::SplitMix64(11);
        let value = |r: &mut crate::util::splitmix::SplitMix64| match r.below(7) {
            0 => Bson::Int32(r.below(50) as i32 - 25),
            1 => Bson::Int64(r.below(50) as i64 - 25),
            2 => Bson::Double(r.below(100) as f64 / 2.0 - 25.0),
            3 => Bson::String(format!("s{}", r.below(40))),
            4 => Bson::ObjectId(ObjectId::from_bytes([r.below(3) as u8; 12])),
            5 => Bson::DateTime(DateTime::from_millis(r.below(1000) as i64)),
            _ => Bson::Null,
        };
        for (key, n) in [("{a: 1}", 2_000usize), ("{a: 1, b: 1}", 2_000), ("{a: 1}", 250_000)] {
            let mut s = KeySample::with_budget(ShardKey::parse(key).unwrap(), 1 << 30, EXACT_LIMIT, RESERVOIR);
            for i in 0..n {
                let a = if n > SUMMARY_POINTS { Bson::Int64(r.below(1 << 40) as i64 + i as i64) } else { value(&mut r) };
                s.add(&doc! {"a": a, "b": value(&mut r)});
            }
            s.finish();
            assert!(matches!(s.counts, Counts::Dense(_)));
            let ks = s.key_space_values();
            let got: Vec<(Vec<Bson>, u64)> = (0..ks.len()).map(|i| (ks.value(i), ks.count(i))).collect();
            let mut sorted = got.clone();
            sorted.sort_by(|x, y| cmp_tuple(&x.0, &y.0));
            assert_eq!(got, sorted, "{key}, {n} documents");
            assert_eq!(ks.counts().iter().sum::<u64>(), n as u64, "{key}: every document stands somewhere");
        }
    }

    #[test]
    fn the_dense_pass_is_exact_and_spills_without_losing_a_count() {
        let docs: Vec<Document> = (0..5_000i64).map(|i| doc! {"a": i % 700, "b": format!("s{}", i % 3)}).collect();
        let key = ShardKey::parse("{a: 1, b: 1}").unwrap();
        // Enough room for every document: dense to the end.
        let mut dense = KeySample::with_budget(key.clone(), 1 << 20, 100_000, 100_000);
        // Room for about 1,000 documents: spills to exact counts of distinct values midway.
        let mut spilled = KeySample::with_budget(key.clone(), 20_000, 100_000, 100_000);
        // No dense pass at all (the previous representation).
        let mut plain = KeySample::with_limits(key, 100_000, 100_000);
        for d in &docs {
            dense.add(d);
            spilled.add(d);
            plain.add(d);
        }
        for s in [&mut dense, &mut spilled, &mut plain] {
            s.finish();
        }
        assert!(matches!(dense.counts, Counts::Dense(_)));
        assert!(matches!(spilled.counts, Counts::Exact { .. }), "spilled");
        // (a, b) pairs: i % 700 and i % 3 repeat together every 2,100 documents: 2,100 distinct values.
        for s in [&dense, &spilled, &plain] {
            assert_eq!(s.num_distinct(), 2_100);
            assert_eq!(s.count_profile().map(|p| p.0), Some(2_100));
            assert_eq!(s.insertion_positions_in_key_order(), plain.insertion_positions_in_key_order());
        }
        // 5,000 = 2 × 2,100 + 800: the first 800 pairs are held 3 times, the other 1,300 twice.
        assert_eq!(dense.count_profile(), Some((2_100, 0, 1_300)));
        let top = &dense.frequencies()[0];
        assert_eq!((top.value.clone(), top.count), (vec![Bson::Int32(0), Bson::String("s0".into())], 3), "ties in key order");
        // Decoded values are MongoDB-equal (an Int64 may come back as the equal Int32): compare encodings.
        let enc = |vals: Vec<Vec<Bson>>| -> Vec<Vec<u8>> {
            vals.iter()
                .map(|v| {
                    let mut b = Vec::new();
                    keystring::encode(v, &mut b);
                    b
                })
                .collect()
        };
        let (d, p) = (dense.key_space_values(), plain.key_space_values());
        assert_eq!(d.counts(), p.counts(), "same counts");
        let values = |ks: &KeySpace| (0..ks.len()).map(|i| ks.value(i)).collect();
        assert!(enc(values(&d)) == enc(values(&p)), "same values");
        assert!(enc(dense.recent_key_space_values(0.1)) == enc(plain.recent_key_space_values(0.1)), "same recent values");
    }

    #[test]
    fn room_made_for_the_expected_documents_changes_nothing_but_the_room() {
        let docs: Vec<Document> = (0..30_000i64).map(|i| doc! {"a": format!("v{}", i % 9_000), "b": i}).collect();
        let keys = [ShardKey::parse("{a: 1}").unwrap(), ShardKey::parse("{b: 1}").unwrap()];
        let run = |expect: Option<u64>, budget: u64| {
            let mut s = Sample::with_budget(&keys, budget);
            if let Some(n) = expect {
                s.expect(n);
            }
            for d in &docs {
                s.add(d, 10);
            }
            let held: Vec<usize> = s
                .keys
                .iter()
                .map(|k| match &k.counts {
                    Counts::Dense(d) => d.arena.capacity() + d.ends.capacity() * 4,
                    _ => 0,
                })
                .collect();
            s.finish();
            let out: Vec<_> = s.keys.iter().map(|k| (k.frequencies().to_vec(), k.insertion_positions_in_key_order())).collect();
            (out, held)
        };
        for budget in [1 << 30, 400_000] {
            let (plain, _) = run(None, budget);
            for expect in [30_000, 1_000, 10_000_000] {
                let (got, held) = run(Some(expect), budget);
                assert!(got == plain, "expect {expect}, budget {budget}");
                assert!(held.iter().all(|&h| h as u64 <= budget / 2), "{held:?} within {budget}");
            }
        }
    }

    #[test]
    fn both_sorts_give_key_order_with_equal_values_in_insertion_order() {
        // Entries sharing long prefixes, some fitting `WIDE` bytes past them and some not, many
        // equal; the last ones are read from the arena's end (fewer than 16 bytes follow them).
        let mut r = crate::util::splitmix::SplitMix64(3);
        let values: Vec<Vec<u8>> = (0..20_000)
            .map(|_| {
                let mut v = b"common-prefix-".to_vec();
                // Up to 30 bytes past the prefix: sorted by up to three `WIDE`-byte steps.
                let len = r.below(31) as usize;
                v.extend((0..len).map(|_| b'a' + r.below(3) as u8));
                v
            })
            .collect();
        let mut want: Vec<u32> = (0..values.len() as u32).collect();
        want.sort_by(|&a, &b| values[a as usize].cmp(&values[b as usize]));
        for budget in [usize::MAX, 0] {
            let mut d = Dense { budget: usize::MAX, ..Default::default() };
            for v in &values {
                // Self-delimiting like the key encoding: no entry is a prefix of another.
                let mut e = v.clone();
                e.extend([0, 0]);
                assert!(d.push(&e));
            }
            d.budget = budget;
            d.sort();
            assert_eq!(d.order, want, "budget {budget}");
            assert_eq!(d.distinct(), values.iter().collect::<std::collections::BTreeSet<_>>().len());
        }
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
        let total: u64 = s.key_space_values().counts().iter().sum();
        assert!((total as i64 - 20_000).abs() < 500, "{total}");
    }
}
