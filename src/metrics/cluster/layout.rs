//! Chunk layout and balancer rules of the cluster prediction: lay a key's data out in chunks, place the chunks on N
//! shards as the balancer would, and see where data, reads, writes and inserts go.
//!
//! Rules (README "Cluster prediction"):
//! - Range keys: chunks are cut from the sampled values in key order, filled up
//!   to the chunk size; a value is never split, so a value larger than a chunk
//!   is a jumbo chunk on its own. All chunks start on the primary shard (shard0)
//!   and the balancer moves chunks from the shard with the most data to the one
//!   with the least while their difference exceeds 3 × chunk size (6.0.3+).
//!   Jumbo chunks do not move.
//! - Hashed first field: the hash space is pre-split into 2 chunks per shard
//!   (shard i owns chunks 2i, 2i+1); chunks over the chunk size split in place,
//!   then the same balancer rule applies.
//! - Inserts: a monotonic key sends every insert to the shard owning the MaxKey
//!   chunk (MinKey when decreasing); otherwise inserts follow the key values of
//!   the newest tenth of the documents.

use crate::model::KeyRange;
use crate::bsonx::cmp_tuple;
use bson::Bson;
use std::cmp::Ordering;

#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// Inclusive lower bound in key space (MinKey tuple for the first chunk).
    pub min: Vec<Bson>,
    /// Exclusive upper bound (MaxKey tuple for the last chunk).
    pub max: Vec<Bson>,
    pub shard: usize,
    pub bytes: f64,
    pub docs: f64,
    /// One value larger than a chunk: it can be neither split nor moved.
    pub jumbo: bool,
}

fn min_tuple(n: usize) -> Vec<Bson> {
    vec![Bson::MinKey; n]
}

fn max_tuple(n: usize) -> Vec<Bson> {
    vec![Bson::MaxKey; n]
}

/// Sampled values in key space, sorted, with their counts: `(value, count)`.
pub type ValueCounts = [(Vec<Bson>, u64)];

/// Cut `values` (sorted) into chunks no larger than `chunk_size` bytes, never splitting a value.
/// `bytes_per_doc` already includes the scale from the sample to the collection.
fn cut(values: &ValueCounts, lo: Vec<Bson>, hi: Vec<Bson>, docs_per_sampled: f64, avg_size: f64, chunk_size: f64, shard: usize) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut cur = Chunk { min: lo, max: hi.clone(), shard, bytes: 0.0, docs: 0.0, jumbo: false };
    for (v, c) in values {
        let docs = *c as f64 * docs_per_sampled;
        let bytes = docs * avg_size;
        if cur.bytes > 0.0 && (cur.bytes + bytes > chunk_size || bytes > chunk_size || cur.jumbo) {
            let mut done = std::mem::replace(&mut cur, Chunk { min: v.clone(), max: hi.clone(), shard, bytes: 0.0, docs: 0.0, jumbo: false });
            done.max = v.clone();
            out.push(done);
        }
        cur.bytes += bytes;
        cur.docs += docs;
        if bytes > chunk_size {
            cur.jumbo = true;
        }
    }
    out.push(cur);
    out
}

/// A range-sharded layout: all chunks on shard 0 before balancing.
pub fn layout_range(values: &ValueCounts, key_len: usize, docs_per_sampled: f64, avg_size: f64, chunk_size: f64) -> Vec<Chunk> {
    cut(values, min_tuple(key_len), max_tuple(key_len), docs_per_sampled, avg_size, chunk_size, 0)
}

/// A hashed-prefix layout: 2 pre-split chunks per shard over the int64 hash space.
pub fn layout_hashed(values: &ValueCounts, key_len: usize, shards: usize, docs_per_sampled: f64, avg_size: f64, chunk_size: f64) -> Vec<Chunk> {
    let n = 2 * shards.max(1);
    let step = (u64::MAX / n as u64) as i128;
    let bound = |i: usize| -> Vec<Bson> {
        let mut t = vec![Bson::Int64((i64::MIN as i128 + step * i as i128) as i64)];
        t.extend(min_tuple(key_len - 1));
        t
    };
    let mut out = Vec::new();
    let mut start = 0;
    for i in 0..n {
        let lo = if i == 0 { min_tuple(key_len) } else { bound(i) };
        let hi = if i + 1 == n { max_tuple(key_len) } else { bound(i + 1) };
        let end = if i + 1 == n { values.len() } else { start + values[start..].partition_point(|(v, _)| cmp_tuple(v, &hi) == Ordering::Less) };
        out.extend(cut(&values[start..end], lo, hi, docs_per_sampled, avg_size, chunk_size, i / 2));
        start = end;
    }
    out
}

/// Move chunks from the fullest shard to the emptiest while their data differs
/// by more than 3 chunk sizes (MongoDB 6.0.3+). Jumbo chunks stay.
pub fn balance(chunks: &mut [Chunk], shards: usize, chunk_size: f64) {
    let threshold = 3.0 * chunk_size;
    for _ in 0..100_000 {
        let mut load = vec![0.0f64; shards];
        for c in chunks.iter() {
            load[c.shard] += c.bytes;
        }
        let (hi, lo) = (argmax(&load), argmin(&load));
        let gap = load[hi] - load[lo];
        if gap <= threshold {
            return;
        }
        // The largest movable chunk that does not overshoot; else the smallest one.
        let movable = || chunks.iter().enumerate().filter(|(_, c)| c.shard == hi && !c.jumbo && c.bytes > 0.0);
        let pick = movable()
            .filter(|(_, c)| c.bytes <= gap / 2.0)
            .max_by(|a, b| a.1.bytes.total_cmp(&b.1.bytes).then(b.0.cmp(&a.0)))
            .or_else(|| movable().min_by(|a, b| a.1.bytes.total_cmp(&b.1.bytes)))
            .map(|(i, _)| i);
        match pick {
            Some(i) if chunks[i].bytes < gap => chunks[i].shard = lo,
            _ => return,
        }
    }
}

fn argmax(v: &[f64]) -> usize {
    (0..v.len()).fold(0, |b, i| if v[i] > v[b] { i } else { b })
}

fn argmin(v: &[f64]) -> usize {
    (0..v.len()).fold(0, |b, i| if v[i] < v[b] { i } else { b })
}

/// Index of the chunk holding a key-space value.
pub fn chunk_of(chunks: &[Chunk], v: &[Bson]) -> usize {
    let i = chunks.partition_point(|c| cmp_tuple(&c.min, v) != Ordering::Greater);
    i.saturating_sub(1).min(chunks.len().saturating_sub(1))
}

/// The shards a query touching `ranges` is sent to.
pub fn shards_touched(chunks: &[Chunk], ranges: &[KeyRange], shards: usize) -> Vec<bool> {
    let mut hit = vec![false; shards];
    for r in ranges {
        let (a, b) = (chunk_of(chunks, &r.min), chunk_of(chunks, &r.max));
        for c in &chunks[a.min(b)..=b.max(a)] {
            hit[c.shard] = true;
        }
    }
    hit
}

/// Where new documents go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InsertPattern {
    /// Every insert lands past the current maximum.
    Increasing,
    /// Every insert lands below the current minimum.
    Decreasing,
    /// Inserts look like the newest documents sampled.
    LikeRecent,
}

/// Share (0..1) of inserts per shard.
pub fn insert_shares(chunks: &[Chunk], shards: usize, pattern: InsertPattern, recent: &[Vec<Bson>]) -> Vec<f64> {
    let mut share = vec![0.0; shards];
    if chunks.is_empty() {
        return share;
    }
    match pattern {
        InsertPattern::Increasing => share[chunks[chunks.len() - 1].shard] = 1.0,
        InsertPattern::Decreasing => share[chunks[0].shard] = 1.0,
        InsertPattern::LikeRecent => {
            for v in recent {
                share[chunks[chunk_of(chunks, v)].shard] += 1.0;
            }
            let n = recent.len().max(1) as f64;
            share.iter_mut().for_each(|s| *s /= n);
        }
    }
    share
}

/// Largest over smallest; None when the smallest is zero.
pub fn ratio(v: &[f64]) -> Option<f64> {
    let max = v.iter().cloned().fold(f64::MIN, f64::max);
    let min = v.iter().cloned().fold(f64::MAX, f64::min);
    (min > 0.0).then(|| max / min)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(n: i32, count: u64) -> Vec<(Vec<Bson>, u64)> {
        (0..n).map(|i| (vec![Bson::Int32(i)], count)).collect()
    }

    #[test]
    fn range_chunks_fill_to_the_chunk_size_and_isolate_jumbo_values() {
        // 10 values x 1 doc x 10 bytes, chunk 30 bytes -> 4 chunks (3,3,3,1)
        let c = layout_range(&vals(10, 1), 1, 1.0, 10.0, 30.0);
        assert_eq!(c.len(), 4);
        assert_eq!(c[0].min, vec![Bson::MinKey]);
        assert_eq!(c[0].max, vec![Bson::Int32(3)]);
        assert_eq!(c[3].max, vec![Bson::MaxKey]);
        let mut v = vals(4, 1);
        v[2].1 = 10; // 100 bytes: jumbo
        let c = layout_range(&v, 1, 1.0, 10.0, 30.0);
        let j: Vec<&Chunk> = c.iter().filter(|x| x.jumbo).collect();
        assert_eq!(j.len(), 1);
        assert_eq!(j[0].min, vec![Bson::Int32(2)]);
        assert_eq!(j[0].bytes, 100.0);
    }

    #[test]
    fn balancer_moves_until_within_three_chunks() {
        let mut c = layout_range(&vals(100, 1), 1, 1.0, 10.0, 10.0); // 100 chunks of 10 bytes
        balance(&mut c, 4, 10.0);
        let mut load = [0.0; 4];
        for x in &c {
            load[x.shard] += x.bytes;
        }
        let (max, min) = (load.iter().cloned().fold(0.0, f64::max), load.iter().cloned().fold(f64::MAX, f64::min));
        assert!(max - min <= 30.0, "{load:?}");
    }

    #[test]
    fn hashed_presplit_owns_two_chunks_per_shard_and_inserts_follow_recent_values() {
        let values: Vec<(Vec<Bson>, u64)> =
            (0..1000).map(|i| vec![Bson::Int64(crate::bsonx::hash64(&Bson::Int32(i)))]).map(|v| (v, 1)).collect();
        let mut sorted = values.clone();
        sorted.sort_by(|a, b| cmp_tuple(&a.0, &b.0));
        let c = layout_hashed(&sorted, 1, 4, 1.0, 1.0, 1e9);
        assert_eq!(c.len(), 8);
        assert_eq!(c.iter().filter(|x| x.shard == 3).count(), 2);
        let mut load = [0.0; 4];
        for x in &c {
            load[x.shard] += x.docs;
        }
        assert!(ratio(&load).unwrap() < 1.25, "{load:?}");
        let recent: Vec<Vec<Bson>> = sorted.iter().map(|v| v.0.clone()).collect();
        let s = insert_shares(&c, 4, InsertPattern::LikeRecent, &recent);
        assert!((s.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let s = insert_shares(&c, 4, InsertPattern::Increasing, &[]);
        assert_eq!(s, vec![0.0, 0.0, 0.0, 1.0]);
    }

    #[test]
    fn queries_touch_the_shards_of_their_chunks() {
        let mut c = layout_range(&vals(4, 1), 1, 1.0, 10.0, 10.0);
        for (i, x) in c.iter_mut().enumerate() {
            x.shard = i % 2;
        }
        let point = KeyRange::point(vec![Bson::Int32(1)]);
        assert_eq!(shards_touched(&c, &[point], 2), vec![false, true]);
        let all = KeyRange { min: vec![Bson::MinKey], max: vec![Bson::MaxKey] };
        assert_eq!(shards_touched(&c, &[all], 2), vec![true, true]);
    }
}
