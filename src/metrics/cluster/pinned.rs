//! First-field values that hold more than one zone's fair share of the data (1/N of it on N
//! shards): a zone range over the key's first field bounds that field only, so such a value
//! stays on its zone's shard for good. With a next key field, its range can be cut on that
//! field (at the sampled median) and spread over two zones. For `shardkey plan`'s zones; the
//! analysis's own residency zones (`score::residency`) apply the same fair-share test.

use crate::bsonx::cmp_bson;
use crate::model::KeySpace;
use bson::Bson;
use std::cmp::Ordering;

pub(crate) use crate::model::pinned::Pinned;

/// Values holding more than 1/n of the sampled documents. Any such value spans one of the
/// points where the data crosses k/n, so only the values at those points are looked at
/// (a few binary searches, decoding a handful of values).
pub(crate) fn pinned(values: &KeySpace, n: usize) -> Vec<Pinned> {
    let total: u64 = values.counts().iter().sum();
    let mut out: Vec<Pinned> = Vec::new();
    if n < 2 || total == 0 {
        return out;
    }
    let first = |i: usize| values.value(i).into_iter().next().unwrap_or(Bson::Null);
    let (mut cum, mut k) = (0u64, 1u64);
    for i in 0..values.len() {
        cum += values.count(i);
        if cum * (n as u64) < total * k {
            continue;
        }
        while k < n as u64 && cum * n as u64 >= total * k {
            k += 1;
        }
        let v = first(i);
        if out.last().is_some_and(|p| cmp_bson(&p.value, &v) == Ordering::Equal) {
            continue;
        }
        let lo = partition(0, i, |j| cmp_bson(&first(j), &v) == Ordering::Less);
        let hi = partition(i, values.len(), |j| cmp_bson(&first(j), &v) != Ordering::Greater);
        let counts = &values.counts()[lo..hi];
        let docs: u64 = counts.iter().sum();
        if docs * n as u64 > total {
            out.push(Pinned { value: v, documents: docs, of: total, next_split: median_next(values, lo, counts, docs) });
        }
    }
    out
}

/// The first index in lo..hi where `before` stops holding (it holds on a prefix).
fn partition(mut lo: usize, mut hi: usize, before: impl Fn(usize) -> bool) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The second key field where the value's documents pass half (the next value starts the
/// upper half when the half falls exactly between two), as `score::residency::in_range`.
fn median_next(values: &KeySpace, lo: usize, counts: &[u64], docs: u64) -> Option<Bson> {
    if counts.len() < 2 {
        return None;
    }
    let mut seen = 0;
    for (i, c) in counts.iter().enumerate() {
        seen += c;
        if seen * 2 >= docs {
            let j = if seen * 2 == docs && i + 1 < counts.len() { i + 1 } else { i };
            return values.value(lo + j).get(1).cloned();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tenant 7 holds 51 of 200 documents (25.5%) on 4 shards (fair 25%): pinned; its orders
    /// 1..51, one document each, split at the 26th (51/2 = 25.5 passed at order 26).
    /// Tenant 3 with 50 (exactly 25%) is not above its share.
    #[test]
    fn a_value_above_one_shards_share_is_named_with_its_next_field_median() {
        let mut v = Vec::new();
        for t in 0..10 {
            let n = match t {
                7 => 51,
                3 => 50,
                _ => 99 / 8 + if t < 3 { 1 } else { 0 },
            };
            for o in 1..=n {
                v.push((vec![Bson::Int32(t), Bson::Int32(o)], 1));
            }
        }
        let total: u64 = v.iter().map(|x| x.1).sum();
        let ks = KeySpace::from_values(v);
        let p = pinned(&ks, 4);
        assert_eq!(p.len(), 1, "{p:?} of {total}");
        assert_eq!((p[0].value.clone(), p[0].documents, p[0].next_split.clone()), (Bson::Int32(7), 51, Some(Bson::Int32(26))));
        assert!(pinned(&ks, 1).is_empty());
    }
}
