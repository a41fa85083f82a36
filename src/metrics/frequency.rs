//! Value frequency: most common values, the top value's share, and jumbo-chunk
//! risk (a value's documents cannot be split across chunks).

use crate::bsonx::cmp_tuple;
use crate::sample::ValueCount;
use bson::Bson;

/// The `k` most frequent values, highest first; ties in key order.
pub(crate) fn most_common(values: &[ValueCount], k: usize) -> Vec<ValueCount> {
    let mut idx: Vec<usize> = (0..values.len()).collect();
    idx.sort_by(|&a, &b| values[b].count.cmp(&values[a].count).then_with(|| cmp_tuple(&values[a].value, &values[b].value)));
    idx.into_iter().take(k).map(|i| values[i].clone()).collect()
}

/// Share (0..1) of the sampled documents that hold the most common value.
pub(crate) fn top_share(values: &[ValueCount], num_sampled: u64) -> f64 {
    if num_sampled == 0 {
        return 0.0;
    }
    values.iter().map(|v| v.count).max().unwrap_or(0) as f64 / num_sampled as f64
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
    fn most_common_breaks_ties_in_key_order() {
        let vals = vec![vc(3, 2), vc(1, 5), vc(2, 2), vc(0, 1)];
        let top = most_common(&vals, 3);
        assert_eq!(top, vec![vc(1, 5), vc(2, 2), vc(3, 2)]);
        assert_eq!(top_share(&vals, 10), 0.5);
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
