//! Value frequency: most common values, the top value's share, and jumbo-chunk
//! risk (a value's documents cannot be split across chunks).

use crate::bsonx::cmp_tuple;
use crate::sample::ValueCount;
use bson::Bson;

/// The `k` most frequent values, highest first; ties in key order.
///
/// Only the `k` are sorted: the rest are set aside by a selection (issue 52: sorting every
/// distinct value of a unique key cost a quarter of `measure`). The order is total (count,
/// then key order, then the position, which a stable sort on the first two keeps), so the
/// `k` and their order are those of a full sort.
pub(crate) fn most_common(values: &[ValueCount], k: usize) -> Vec<ValueCount> {
    let order = |a: &usize, b: &usize| {
        values[*b].count.cmp(&values[*a].count).then_with(|| cmp_tuple(&values[*a].value, &values[*b].value)).then(a.cmp(b))
    };
    let mut idx: Vec<usize> = (0..values.len()).collect();
    if k == 0 {
        return Vec::new();
    }
    if k < idx.len() {
        idx.select_nth_unstable_by(k - 1, order);
        idx.truncate(k);
    }
    idx.sort_unstable_by(order);
    idx.into_iter().map(|i| values[i].clone()).collect()
}

/// Share (0..1) of the sampled documents that hold the most common value.
pub(crate) fn top_share(values: &[ValueCount], num_sampled: u64) -> f64 {
    if num_sampled == 0 {
        return 0.0;
    }
    values.iter().map(|v| v.count).max().unwrap_or(0) as f64 / num_sampled as f64
}

/// A share's range in percent: `lower`..`upper`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub(crate) struct ShareRange {
    pub(crate) lower: f64,
    pub(crate) upper: f64,
}

/// The top value's share of the collection in percent, as a 95% Wilson score interval
/// (Wilson 1927) from its count in the sample: unlike the normal approximation it stays
/// within 0..100% and holds for small counts and shares near 0 or 1. Exact (both ends the
/// sample's share) when the sample is the whole collection.
pub(crate) fn top_share_range(values: &[ValueCount], num_sampled: u64, num_total: u64) -> ShareRange {
    let k = values.iter().map(|v| v.count).max().unwrap_or(0);
    let (lower, upper) =
        if num_sampled >= num_total { (top_share(values, num_sampled), top_share(values, num_sampled)) } else { wilson(k, num_sampled) };
    ShareRange { lower: lower * 100.0, upper: upper * 100.0 }
}

/// The 95% Wilson score interval (z = 1.96) of a proportion seen `k` times in `n`.
pub(crate) fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    const Z: f64 = 1.96;
    let (n, p) = (n as f64, k as f64 / n as f64);
    let denom = 1.0 + Z * Z / n;
    let centre = (p + Z * Z / (2.0 * n)) / denom;
    let half = Z / denom * (p * (1.0 - p) / n + Z * Z / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JumboValue {
    pub(crate) value: Vec<Bson>,
    pub(crate) estimated_docs: u64,
    pub(crate) estimated_bytes: u64,
}

/// Values whose documents, scaled from the sample to the collection, exceed the chunk size.
pub(crate) fn jumbo_values(
    values: &[ValueCount],
    num_sampled: u64,
    num_total: u64,
    avg_doc_size: u64,
    chunk_size_bytes: u64,
) -> Vec<JumboValue> {
    if num_sampled == 0 {
        return vec![];
    }
    let scale = num_total.max(num_sampled) as f64 / num_sampled as f64;
    let mut out: Vec<JumboValue> = values
        .iter()
        // A value seen once in a sample of a larger collection stands for many distinct
        // values (a unique key's every value is seen once): only a repeated value is evidence.
        .filter(|v| v.count >= 2 || scale <= 1.0)
        .filter_map(|v| {
            let docs = (v.count as f64 * scale).round() as u64;
            let bytes = docs.saturating_mul(avg_doc_size);
            (bytes > chunk_size_bytes).then(|| JumboValue { value: v.value.clone(), estimated_docs: docs, estimated_bytes: bytes })
        })
        .collect();
    out.sort_by_key(|j| std::cmp::Reverse(j.estimated_bytes));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vc(v: i32, c: u64) -> ValueCount {
        ValueCount { value: vec![Bson::Int32(v)], count: c }
    }

    #[test]
    fn wilson_by_hand() {
        // 25 of 100: centre (0.25 + 1.96²/200) / (1 + 1.96²/100) = 0.25925, half-width 0.08380.
        let (lo, hi) = wilson(25, 100);
        assert!((lo - 0.17545).abs() < 1e-4 && (hi - 0.34305).abs() < 1e-4, "{lo} {hi}");
        // None seen in 10: 0 up to 1.96²/(10 + 1.96²) = 0.2775 (not 0..0 as p ± z·se would say).
        let (lo, hi) = wilson(0, 10);
        assert!(lo == 0.0 && (hi - 0.27750).abs() < 1e-4, "{hi}");
        // The whole collection: the share itself.
        assert_eq!(top_share_range(&[vc(1, 3), vc(2, 1)], 4, 4), ShareRange { lower: 75.0, upper: 75.0 });
        let r = top_share_range(&[vc(1, 25), vc(2, 15)], 100, 1_000_000);
        assert!(r.lower < 25.0 && r.upper > 25.0);
    }

    #[test]
    fn most_common_breaks_ties_in_key_order() {
        let vals = vec![vc(3, 2), vc(1, 5), vc(2, 2), vc(0, 1)];
        let top = most_common(&vals, 3);
        assert_eq!(top, vec![vc(1, 5), vc(2, 2), vc(3, 2)]);
        assert_eq!(top_share(&vals, 10), 0.5);
        assert_eq!(most_common(&vals, 0), vec![]);
        assert_eq!(most_common(&vals, 9), vec![vc(1, 5), vc(2, 2), vc(3, 2), vc(0, 1)]);
    }

    /// The selection keeps what a full stable sort keeps, in its order, for every `k`: many
    /// ties in count (a unique key's values are each seen once), equal values counted
    /// apart (7L and 7.0 compare equal: the one first in the slice stays first).
    #[test]
    fn most_common_is_the_full_sort_s_first_k() {
        let mut vals: Vec<ValueCount> = (0..200).map(|i| vc((i * 37) % 101, [1, 1, 2, 3, 1][i as usize % 5])).collect();
        vals.push(ValueCount { value: vec![Bson::Double(7.0)], count: 3 });
        vals.insert(0, ValueCount { value: vec![Bson::Int64(7)], count: 3 });
        let mut full: Vec<usize> = (0..vals.len()).collect();
        full.sort_by(|&a, &b| vals[b].count.cmp(&vals[a].count).then_with(|| cmp_tuple(&vals[a].value, &vals[b].value)));
        for k in [1, 2, 5, 40, 41, 150, 202, 300] {
            let want: Vec<ValueCount> = full.iter().take(k).map(|&i| vals[i].clone()).collect();
            assert_eq!(most_common(&vals, k), want, "k = {k}");
        }
    }

    #[test]
    fn jumbo_scales_the_sample_to_the_collection() {
        let vals = vec![vc(1, 50), vc(2, 10)];
        // 100 sampled of 1000: value 1 ~ 500 docs x 1000 B = 500 kB > 300 kB; value 2 ~ 100 kB
        let j = jumbo_values(&vals, 100, 1000, 1000, 300_000);
        assert_eq!(j.len(), 1);
        assert_eq!(j[0].estimated_docs, 500);
        assert_eq!(j[0].estimated_bytes, 500_000);
    }
}
