//! The sample pass: one read of the documents feeds every candidate key at once.
//! Memory stays bounded whatever the sample size:
//! - value counts are exact up to `EXACT_LIMIT` distinct values per key, then a
//!   HyperLogLog counts distinct values and Misra-Gries keeps the most common ones;
//! - monotonicity, chunk ranges and the cluster layout use a uniform reservoir of
//!   up to `RESERVOIR` (insertion position, value) pairs per key, which holds
//!   every document of a smaller sample.

mod dense;
mod key;
pub(crate) mod sketch;
mod values;

use key::Counts;
pub use key::KeySample;

use crate::bsonx::path::{lookup_from_top, top_fields, Top};
use crate::bsonx::{DocRef, Found, ValueRef};
use crate::model::ShardKey;
use bson::{Bson, Document};
pub use values::RESERVOIR;
pub(crate) use values::{limits_for, HashedGroups, ValueCount, DEFAULT_MEMORY_LIMIT};

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
    use super::dense::Dense;
    use super::key::SUMMARY_POINTS;
    use super::values::EXACT_LIMIT;
    use super::*;
    use crate::bsonx::{cmp_tuple, keystring};
    use crate::model::KeySpace;
    use bson::doc;

    #[test]
    fn counts_missing_as_null_and_rejects_arrays() {
        let mut s = KeySample::new(ShardKey::parse("{a: 1}").unwrap());
        for d in [doc! {"a": 2}, doc! {"b": 1}, doc! {"a": null}, doc! {"a": [1]}, doc! {"a": 2.0}] {
            s.add(&d);
        }
        assert_eq!(s.docs_with_arrays, 1);
        assert_eq!(s.docs_missing_fields, 1);
        assert_eq!((s.docs_null_or_missing, s.null_or_missing_by_field.clone()), (2, vec![2]), "{{b: 1}} and {{a: null}}");
        assert_eq!(s.frequencies().len(), 2, "null+missing together, 2 and 2.0 together");
        assert_eq!(s.docs_counted(), 4);
        // key order: null (positions 1, 2), then 2 (positions 0, 3: the array document is not counted)
        assert_eq!(s.insertion_positions_in_key_order(), vec![1, 2, 0, 3]);
        // Per field of a compound key; a document counts once however many fields it lacks.
        let mut s = KeySample::new(ShardKey::parse("{a: 1, b: 1}").unwrap());
        for d in [doc! {"a": 1, "b": 1}, doc! {"b": 1}, doc! {"a": null, "b": null}, doc! {"a": 1}] {
            s.add(&d);
        }
        assert_eq!((s.docs_null_or_missing, s.null_or_missing_by_field.clone()), (3, vec![2, 2]));
    }

    /// hash64 truncates doubles: 0.25, 0.75 and -0.5 are the hashed value of 0; 1.5 of 1.
    #[test]
    fn a_hashed_key_groups_values_that_hash_alike() {
        let mut s = KeySample::new(ShardKey::parse("{a: \"hashed\"}").unwrap());
        for v in [0.25, 0.75, -0.5, 1.5, 0.25, 7.0] {
            s.add(&doc! {"a": v});
        }
        s.finish();
        let h = s.hashed_groups().unwrap();
        let groups = h.groups.clone().unwrap();
        assert_eq!((h.raw_distinct, h.hashed_distinct, groups.len(), h.fractional_doubles), (5, 3, 3, 4));
        let mut counts: Vec<u64> = groups.iter().map(|g| g.count).collect();
        counts.sort();
        assert_eq!(counts, vec![1, 1, 4]);
        // Each group stands under its smallest value in key order (0.25, 0.75, -0.5: -0.5).
        let mut firsts: Vec<f64> = groups.iter().map(|g| g.value[0].as_f64().unwrap()).collect();
        firsts.sort_by(f64::total_cmp);
        assert_eq!(firsts, vec![-0.5, 1.5, 7.0]);
        assert_eq!(s.key_space_values().counts(), &groups.iter().map(|g| g.count).collect::<Vec<_>>()[..]);
        assert!(KeySample::new(ShardKey::parse("{a: 1}").unwrap()).hashed_groups().is_none());
        // Strings never hash alike: the sample's counts stand, nothing is decoded.
        let mut t = KeySample::new(ShardKey::parse("{a: \"hashed\"}").unwrap());
        for v in ["x", "y", "x"] {
            t.add(&doc! {"a": v});
        }
        t.finish();
        let h = t.hashed_groups().unwrap();
        assert_eq!((h.groups, h.hashed_distinct, h.raw_distinct), (None, 2, 2));
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
