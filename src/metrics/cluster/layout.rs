//! The cluster model's rules: how a key's data is laid out in chunks on N shards
//! under current MongoDB (6.0.3+, 7.x, 8.0), and what a query or an insert reaches.
//!
//! The data is a line in key order, each sampled key-space value carrying the bytes
//! it stands for. Two placements are modelled:
//! - `today`: the collection as it is, sharded while populated. It starts as one
//!   chunk on the primary shard (no pre-split: the manual pre-splits only *empty*
//!   collections, https://www.mongodb.com/docs/manual/core/hashed-sharding/ ,
//!   "Shard a Populated Collection"), and the balancer moves ranges as described in
//!   `balance`.
//! - `at_scale`: the steady state once the collection has grown to many range
//!   sizes per shard. The balancer evens data size within 3 range sizes, which at
//!   scale is even, and the AutoMerger joins a shard's contiguous chunks, so each
//!   shard owns about one contiguous 1/N of the data in key order. This is the
//!   placement the workload's cost and the score are computed on: a key is chosen
//!   for the collection it will become.
//!
//! Values whose documents exceed the range size are unsplittable: a chunk holding
//! one such value is jumbo and the balancer never moves it
//! (https://www.mongodb.com/docs/manual/core/sharding-data-partitioning/ , "Jumbo Chunks").

use crate::bsonx::cmp_tuple;
use crate::model::{KeyRange, KeySpace};
use bson::Bson;
use std::cmp::Ordering;

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Chunk {
    /// Inclusive lower bound in key space (MinKey tuple for the first chunk).
    pub(crate) min: Vec<Bson>,
    /// Exclusive upper bound (MaxKey tuple for the last chunk).
    pub(crate) max: Vec<Bson>,
    pub(crate) shard: usize,
    pub(crate) bytes: f64,
    pub(crate) docs: f64,
    /// One value larger than the range size: it can be neither split nor moved.
    pub(crate) jumbo: bool,
}

/// The data line: each value's bytes and whether it is one unsplittable value
/// larger than the range size.
pub(crate) struct DataLine<'a> {
    /// Sampled values in key space, sorted, with their counts.
    pub(crate) values: &'a KeySpace<'a>,
    pub(crate) key_len: usize,
    pub(crate) docs_per_sampled: f64,
    pub(crate) avg_doc_size: f64,
    /// Indices (into `values`) of values whose own documents exceed the range size.
    pub(crate) jumbo_values: Vec<usize>,
}

impl DataLine<'_> {
    fn bytes(&self, i: usize) -> f64 {
        self.values.count(i) as f64 * self.docs_per_sampled * self.avg_doc_size
    }

    pub(crate) fn total_bytes(&self) -> f64 {
        (0..self.values.len()).map(|i| self.bytes(i)).sum()
    }

    fn min_tuple(&self) -> Vec<Bson> {
        vec![Bson::MinKey; self.key_len]
    }

    fn max_tuple(&self) -> Vec<Bson> {
        vec![Bson::MaxKey; self.key_len]
    }

    /// Chunks from segments of the value list: `(first value, end value, shard, jumbo)`.
    fn chunks(&self, segs: &[(usize, usize, usize, bool)]) -> Vec<Chunk> {
        let n = segs.len();
        segs.iter()
            .enumerate()
            .map(|(k, &(lo, hi, shard, jumbo))| {
                let bytes: f64 = (lo..hi).map(|i| self.bytes(i)).sum();
                Chunk {
                    min: if k == 0 { self.min_tuple() } else { self.values.value(lo) },
                    max: if k + 1 == n { self.max_tuple() } else { self.values.value(hi) },
                    shard,
                    bytes,
                    docs: if self.avg_doc_size > 0.0 { bytes / self.avg_doc_size } else { 0.0 },
                    jumbo,
                }
            })
            .collect()
    }
}

/// The steady state at scale: N contiguous ranges of equal data in key order (range
/// k on shard k), a value never split: each value goes to the range its middle
/// falls in. A value holding more than 1/N of the data leaves some ranges empty.
pub(crate) fn at_scale(line: &DataLine, shards: usize) -> Vec<Chunk> {
    let n = shards.max(1);
    let total = line.total_bytes();
    if line.values.is_empty() {
        return even_cuts(line, n);
    }
    if total <= 0.0 {
        return vec![Chunk { min: line.min_tuple(), max: line.max_tuple(), shard: 0, bytes: 0.0, docs: 0.0, jumbo: false }];
    }
    let per = total / n as f64;
    let mut segs: Vec<(usize, usize, usize, bool)> = Vec::new();
    let mut cum = 0.0;
    for i in 0..line.values.len() {
        let b = line.bytes(i);
        let shard = (((cum + b / 2.0) / per) as usize).min(n - 1);
        cum += b;
        match segs.last_mut() {
            Some(s) if s.2 == shard => s.1 = i + 1,
            _ => segs.push((i, i + 1, shard, false)),
        }
    }
    line.chunks(&segs)
}

/// Nothing known of the key space (no documents, and no value the queries name): at scale the
/// data still spreads over every shard, so an operation the key cannot target reaches all of
/// them (one chunk on shard 0 had every operation reach one shard). The cuts are a hashed
/// key's even pre-split of its hash space (`shardCollection` on an empty collection); no
/// operation here names a value that could tell other cuts apart.
fn even_cuts(line: &DataLine, n: usize) -> Vec<Chunk> {
    let cut = |k: usize| {
        let at = i64::MIN as i128 + ((k as i128) << 64) / n as i128;
        let mut t = vec![Bson::Int64(at as i64)];
        t.resize(line.key_len.max(1), Bson::MinKey);
        t
    };
    (0..n)
        .map(|k| Chunk {
            min: if k == 0 { line.min_tuple() } else { cut(k) },
            max: if k + 1 == n { line.max_tuple() } else { cut(k + 1) },
            shard: k,
            bytes: 0.0,
            docs: 0.0,
            jumbo: false,
        })
        .collect()
}

/// The balancer's migration threshold: a round starts only while the most and the
/// least loaded shard differ by 3 × the range size in this collection's data
/// (6.0.3+; https://www.mongodb.com/docs/manual/core/sharding-balancer-administration/ ,
/// "Migration Thresholds"; DOCS-15792: "3x the configured chunk size ... 384MB").
pub(crate) const MIGRATION_THRESHOLD_RANGES: f64 = 3.0;

/// Today's placement of a populated collection: one chunk on the primary shard
/// (shard 0), then the balancer (6.0.3+ balances data size, not chunk counts, and no
/// longer auto-splits: the range size is what one migration moves) takes a range of
/// at most the range size from the low end of the most loaded shard's first movable
/// chunk and gives it to the least loaded shard, while their difference is at least
/// `MIGRATION_THRESHOLD_RANGES` range sizes. Jumbo values sit in their own chunk and
/// never move. The AutoMerger (7.0+, https://www.mongodb.com/docs/manual/core/automerger-concept/)
/// joins contiguous chunks of one shard, so the chunk count is that of the runs.
/// Returns the chunks and the number of migrations.
pub(crate) fn today(line: &DataLine, shards: usize, range_size: f64) -> (Vec<Chunk>, u64) {
    let n = shards.max(1);
    let m = line.values.len();
    if m == 0 {
        return (at_scale(line, 1), 0);
    }
    // Positions on the data line in bytes: value i spans prefix[i]..prefix[i + 1]. A
    // sampled value stands for many real ones, so a migration may end inside it;
    // a jumbo value is one real value and keeps its own chunk.
    let mut prefix = Vec::with_capacity(m + 1);
    prefix.push(0.0);
    for i in 0..m {
        prefix.push(prefix[i] + line.bytes(i));
    }
    let total = prefix[m];
    // (start, end, shard, jumbo), in key order.
    let mut segs: Vec<(f64, f64, usize, bool)> = Vec::new();
    let mut at = 0.0;
    for &j in &line.jumbo_values {
        if prefix[j] > at {
            segs.push((at, prefix[j], 0, false));
        }
        segs.push((prefix[j], prefix[j + 1], 0, true));
        at = prefix[j + 1];
    }
    if total > at || segs.is_empty() {
        segs.push((at, total, 0, false));
    }
    let mut load = vec![0.0f64; n];
    load[0] = total;
    let threshold = MIGRATION_THRESHOLD_RANGES * range_size;
    let mut moves = 0u64;
    // Bounded: each move carries a range size or the rest of a chunk. On a huge collection
    // (more than 50,000 range sizes) moves are coarser, at most half the gap, so the
    // simulation stays fast and still stops at the same threshold.
    let step = range_size.max(total / 50_000.0);
    let max_moves = (total / step.max(1.0)) as u64 + 10 * n as u64 + 10;
    while moves < max_moves {
        let donor = (0..n).fold(0, |b, i| if load[i] > load[b] { i } else { b });
        let recipient = (0..n).fold(0, |b, i| if load[i] < load[b] { i } else { b });
        if donor == recipient || load[donor] - load[recipient] < threshold {
            break;
        }
        let Some(k) = segs.iter().position(|s| s.2 == donor && !s.3 && s.1 > s.0) else {
            break;
        };
        let (start, end, _, _) = segs[k];
        let gap = load[donor] - load[recipient];
        let take = (end - start).min(if step > range_size { step.min(gap / 2.0) } else { range_size });
        if take < end - start {
            segs[k] = (start, start + take, recipient, false);
            segs.insert(k + 1, (start + take, end, donor, false));
        } else {
            segs[k].2 = recipient;
        }
        load[donor] -= take;
        load[recipient] += take;
        moves += 1;
        // AutoMerger: contiguous chunks of one shard become one; jumbo chunks are not merged.
        // Only the moved piece's neighbours can have changed.
        let mergeable = |a: &(f64, f64, usize, bool), b: &(f64, f64, usize, bool)| a.2 == b.2 && !a.3 && !b.3;
        if k + 1 < segs.len() && mergeable(&segs[k], &segs[k + 1]) {
            segs[k].1 = segs[k + 1].1;
            segs.remove(k + 1);
        }
        if k > 0 && mergeable(&segs[k - 1], &segs[k]) {
            segs[k - 1].1 = segs[k].1;
            segs.remove(k);
        }
    }
    // The value a byte position falls in.
    let value_at = |pos: f64| prefix[1..].partition_point(|&e| e <= pos).min(m - 1);
    let last = segs.len() - 1;
    let chunks = segs
        .iter()
        .enumerate()
        .map(|(k, &(start, end, shard, jumbo))| Chunk {
            min: if k == 0 { line.min_tuple() } else { line.values.value(value_at(start)) },
            max: if k == last { line.max_tuple() } else { line.values.value(value_at(end)) },
            shard,
            bytes: end - start,
            docs: if line.avg_doc_size > 0.0 { (end - start) / line.avg_doc_size } else { 0.0 },
            jumbo,
        })
        .collect();
    (chunks, moves)
}

/// The smallest data size at which the balancer moves anything (3 range sizes), and
/// at which every one of `shards` shards holds data: starting from one shard, the
/// i-th shard to receive a range needs the donor still `3 × range` above the empty
/// recipient after `i - 1` ranges left it, i.e. `(shards + 1) × range` in all.
pub(crate) fn scale_thresholds(shards: usize, range_size: f64) -> (f64, f64) {
    let n = shards.max(1) as f64;
    (MIGRATION_THRESHOLD_RANGES * range_size, (n - 2.0 + MIGRATION_THRESHOLD_RANGES).max(MIGRATION_THRESHOLD_RANGES) * range_size)
}

/// Index of the chunk holding a key-space value.
pub(crate) fn chunk_of(chunks: &[Chunk], v: &[Bson]) -> usize {
    let i = chunks.partition_point(|c| cmp_tuple(&c.min, v) != Ordering::Greater);
    i.saturating_sub(1).min(chunks.len().saturating_sub(1))
}

/// The shards a query touching `ranges` is sent to: the owners of the chunks the
/// ranges overlap (an untargeted query reaches every shard that owns a chunk).
pub(crate) fn shards_touched(chunks: &[Chunk], ranges: &[KeyRange], shards: usize) -> Vec<bool> {
    let mut hit = vec![false; shards];
    for r in ranges {
        // A point (most queries' range): one search.
        let a = chunk_of(chunks, &r.min);
        let b = if r.is_point() { a } else { chunk_of(chunks, &r.max) };
        for c in &chunks[a.min(b)..=b.max(a)] {
            hit[c.shard] = true;
        }
    }
    hit
}

/// Where new documents go in key space.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum InsertPattern {
    /// Every insert lands past the current maximum.
    Increasing,
    /// Every insert lands below the current minimum.
    Decreasing,
    /// Each insert lands at the top of its group of the first `n` fields.
    TopOfGroup(usize),
    /// Inserts look like the newest documents sampled.
    LikeRecent,
    /// A hashed first field without documents: hashing spreads inserts evenly.
    Even,
}

/// Share (0..1) of inserts per shard.
pub(crate) fn insert_shares(chunks: &[Chunk], shards: usize, pattern: InsertPattern, recent: &[Vec<Bson>]) -> Vec<f64> {
    let mut share = vec![0.0; shards];
    if chunks.is_empty() {
        return share;
    }
    // Each recent value's chunk, the value as given (no copy) or cut to its group.
    let mut spread = |to: &dyn for<'a> Fn(&'a [Bson]) -> std::borrow::Cow<'a, [Bson]>| {
        for v in recent {
            share[chunks[chunk_of(chunks, &to(v))].shard] += 1.0;
        }
        let n = recent.len().max(1) as f64;
        share.iter_mut().for_each(|s| *s /= n);
    };
    match pattern {
        InsertPattern::Increasing => {
            let mut s = vec![0.0; shards];
            s[chunks[chunks.len() - 1].shard] = 1.0;
            return s;
        }
        InsertPattern::Decreasing => {
            let mut s = vec![0.0; shards];
            s[chunks[0].shard] = 1.0;
            return s;
        }
        InsertPattern::TopOfGroup(g) => {
            spread(&|v: &[Bson]| v.iter().enumerate().map(|(i, x)| if i < g { x.clone() } else { Bson::MaxKey }).collect())
        }
        InsertPattern::LikeRecent => spread(&|v: &[Bson]| std::borrow::Cow::Borrowed(v)),
        InsertPattern::Even => return vec![1.0 / shards.max(1) as f64; shards],
    }
    share
}

/// Largest over smallest; None when the smallest is zero.
pub(crate) fn ratio(v: &[f64]) -> Option<f64> {
    let max = v.iter().cloned().fold(f64::MIN, f64::max);
    let min = v.iter().cloned().fold(f64::MAX, f64::min);
    (min > 0.0).then(|| max / min)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(n: i32, count: u64) -> KeySpace<'static> {
        vals_first(n, count, count)
    }

    /// `vals`, the first value standing for `first` documents.
    fn vals_first(n: i32, count: u64, first: u64) -> KeySpace<'static> {
        KeySpace::from_values((0..n).map(|i| (vec![Bson::Int32(i)], if i == 0 { first } else { count })).collect())
    }

    fn line<'a>(v: &'a KeySpace<'a>, avg: f64) -> DataLine<'a> {
        DataLine { values: v, key_len: 1, docs_per_sampled: 1.0, avg_doc_size: avg, jumbo_values: Vec::new() }
    }

    fn loads(c: &[Chunk], n: usize) -> Vec<f64> {
        let mut l = vec![0.0; n];
        for x in c {
            l[x.shard] += x.bytes;
        }
        l
    }

    /// Hand computation with range size R = 10 bytes, 4 shards, 80 bytes on shard0:
    /// moves while max − min ≥ 30: 80/0/0/0 → 70/10 → 60/10/10 → 50/10/10/10 →
    /// 40/20/10/10 → 30/20/20/10 → max−min = 20 < 30: stop. Five migrations.
    #[test]
    fn the_balancer_moves_range_sizes_until_within_three() {
        let v = vals(80, 1);
        let (c, moves) = today(&line(&v, 1.0), 4, 10.0);
        assert_eq!(moves, 5);
        let mut l = loads(&c, 4);
        l.sort_by(|a, b| b.total_cmp(a));
        assert_eq!(l, vec![30.0, 20.0, 20.0, 10.0]);
        // The AutoMerger leaves one chunk per contiguous run.
        assert!(c.len() <= 6, "{}", c.len());
    }

    /// Below 3 range sizes nothing moves; all shards hold data from (N + 1) range sizes.
    #[test]
    fn scale_thresholds_match_the_simulation() {
        let (start, all) = scale_thresholds(4, 10.0);
        assert_eq!((start, all), (30.0, 50.0));
        for (bytes, shards_with_data) in [(29, 1), (30, 2), (49, 3), (50, 4)] {
            let v = vals(bytes, 1);
            let (c, _) = today(&line(&v, 1.0), 4, 10.0);
            let l = loads(&c, 4);
            assert_eq!(l.iter().filter(|x| **x > 0.0).count(), shards_with_data, "{bytes}: {l:?}");
        }
        assert_eq!(scale_thresholds(2, 10.0), (30.0, 30.0));
    }

    #[test]
    fn a_jumbo_value_stays_on_the_primary_and_values_split_between_migrations() {
        // Value 0 holds 100 bytes (jumbo), then 50 values of 1 byte: only the 50 move.
        let v = vals_first(51, 1, 100);
        let mut l = line(&v, 1.0);
        l.jumbo_values = vec![0];
        let (c, _) = today(&l, 2, 10.0);
        assert!(c[0].jumbo && c[0].shard == 0 && c[0].bytes == 100.0);
        // Data: 150 on shard0, then moves of 10 until the difference is under 30: all 50 movable bytes go.
        assert_eq!(loads(&c, 2), vec![100.0, 50.0]);
        // A sampled value standing for 25 bytes is split by 10-byte migrations.
        let v = vals(4, 25);
        let (c, moves) = today(&line(&v, 1.0), 2, 10.0);
        let l = loads(&c, 2);
        assert_eq!(l.iter().sum::<f64>(), 100.0);
        assert_eq!(l, vec![60.0, 40.0], "{moves} moves");
    }

    #[test]
    fn at_scale_each_shard_owns_a_contiguous_equal_share_and_a_hot_value_stays_whole() {
        let v = vals(100, 1);
        let c = at_scale(&line(&v, 1.0), 4);
        assert_eq!(c.len(), 4);
        assert_eq!(loads(&c, 4), vec![25.0; 4]);
        assert_eq!(c[1].min, vec![Bson::Int32(25)]);
        // One value holding 40 of 100: its shard owns 40, the rest spread.
        let v = vals_first(61, 1, 40);
        let c = at_scale(&line(&v, 1.0), 4);
        let l = loads(&c, 4);
        assert_eq!(l[0], 40.0);
        assert_eq!(l.iter().sum::<f64>(), 100.0);
    }

    /// No value known (no documents, none named): the hash space cut in N even parts, as
    /// shardCollection pre-splits a hashed key (by hand for 4: -2^63, -2^62, 0, 2^62), so an
    /// operation the key cannot target reaches all 4 shards and a hashed point one.
    #[test]
    fn with_no_value_known_every_shard_owns_a_part() {
        let none = KeySpace::from_values(Vec::new());
        let c = at_scale(&line(&none, 1.0), 4);
        let mins: Vec<Vec<Bson>> = c.iter().map(|x| x.min.clone()).collect();
        let b = |x: i64| vec![Bson::Int64(x)];
        assert_eq!(mins, vec![vec![Bson::MinKey], b(-(1 << 62)), b(0), b(1 << 62)]);
        assert_eq!(c.iter().map(|x| x.shard).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        let all = KeyRange { min: vec![Bson::MinKey], max: vec![Bson::MaxKey] };
        assert_eq!(shards_touched(&c, &[all], 4), vec![true; 4]);
        assert_eq!(shards_touched(&c, &[KeyRange::point(b(-1))], 4), vec![false, true, false, false]);
        assert_eq!(at_scale(&line(&none, 1.0), 1).len(), 1);
    }

    #[test]
    fn queries_touch_the_owners_of_their_chunks_and_inserts_follow_the_pattern() {
        let v = vals(100, 1);
        let c = at_scale(&line(&v, 1.0), 4);
        let point = KeyRange::point(vec![Bson::Int32(30)]);
        assert_eq!(shards_touched(&c, &[point], 4), vec![false, true, false, false]);
        let all = KeyRange { min: vec![Bson::MinKey], max: vec![Bson::MaxKey] };
        assert_eq!(shards_touched(&c, &[all], 4), vec![true; 4]);
        assert_eq!(insert_shares(&c, 4, InsertPattern::Increasing, &[]), vec![0.0, 0.0, 0.0, 1.0]);
        let recent: Vec<Vec<Bson>> = (0..100).map(|i| vec![Bson::Int32(i)]).collect();
        assert_eq!(insert_shares(&c, 4, InsertPattern::LikeRecent, &recent), vec![0.25; 4]);
    }

    #[test]
    fn a_later_increasing_field_sends_inserts_to_the_top_of_each_group() {
        // {g: 1, t: 1}: groups 0..4 with 25 documents each; at scale group g is on shard g.
        let v = KeySpace::from_values((0..100).map(|i| (vec![Bson::Int32(i / 25), Bson::Int32(i % 25)], 1)).collect());
        let l = DataLine { values: &v, key_len: 2, docs_per_sampled: 1.0, avg_doc_size: 1.0, jumbo_values: Vec::new() };
        let c = at_scale(&l, 4);
        let recent = vec![vec![Bson::Int32(0), Bson::Int32(3)], vec![Bson::Int32(2), Bson::Int32(1)]];
        assert_eq!(insert_shares(&c, 4, InsertPattern::TopOfGroup(1), &recent), vec![0.5, 0.0, 0.5, 0.0]);
    }
}
