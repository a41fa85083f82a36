//! Synthetic chunk ranges cut from the sampled key values, for `num*ByRange`.
//! The server cuts 100 ranges from a sorted sample (every 10th of 1000 docs); we
//! cut up to 100 equal-count ranges from every distinct value we sampled.

use crate::bsonx::cmp_tuple;
use crate::model::{KeyRange, KeySpace};
use bson::Bson;
use std::cmp::Ordering;

pub(crate) const NUM_RANGES: usize = 100;

#[derive(Debug, Clone)]
pub struct Ranges {
    /// Sorted lower bounds of ranges 1..n (range 0 starts at MinKey).
    pub split_points: Vec<Vec<Bson>>,
}

impl Ranges {
    /// `sorted_values`: distinct key-space values in key order, with their document counts.
    pub fn cut(sorted_values: &KeySpace, num_ranges: usize) -> Ranges {
        let total: u64 = sorted_values.counts().iter().sum();
        let mut split_points = Vec::new();
        if total == 0 || num_ranges < 2 {
            return Ranges { split_points };
        }
        let per_range = total as f64 / num_ranges as f64;
        let mut seen = 0u64;
        let mut next_cut = per_range;
        for (i, c) in sorted_values.counts().iter().enumerate() {
            if seen as f64 >= next_cut && split_points.len() + 1 < num_ranges {
                split_points.push(sorted_values.value(i));
                while next_cut <= seen as f64 {
                    next_cut += per_range;
                }
            }
            seen += c;
        }
        Ranges { split_points }
    }

    pub(crate) fn len(&self) -> usize {
        self.split_points.len() + 1
    }

    /// Index of the range holding `v`.
    pub(crate) fn index_of(&self, v: &[Bson]) -> usize {
        self.split_points.partition_point(|sp| cmp_tuple(sp, v) != Ordering::Greater)
    }

    /// Add one to every range a query touches (once per range).
    pub(crate) fn count(&self, touched: &[KeyRange], counts: &mut [u64]) {
        // One range (a point, for most queries): its ranges counted directly, without the set
        // of hits (allocated and walked for each query under each key: 4% of the candidates'
        // analyses in `plan`'s profile).
        if let [r] = touched {
            let a = self.index_of(&r.min);
            let b = if r.is_point() { a } else { self.index_of(&r.max) };
            for c in counts.iter_mut().take(self.len()).take(b.max(a) + 1).skip(a.min(b)) {
                *c += 1;
            }
            return;
        }
        let mut hit = vec![false; self.len()];
        for r in touched {
            let (a, b) = (self.index_of(&r.min), self.index_of(&r.max));
            for h in hit.iter_mut().take(b.max(a) + 1).skip(a.min(b)) {
                *h = true;
            }
        }
        for (c, h) in counts.iter_mut().zip(hit) {
            *c += h as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A single range is counted as the general path counts it (the same range twice takes it).
    #[test]
    fn one_range_counts_as_the_set_of_hits_does() {
        let r = Ranges::cut(&KeySpace::from_values((0..1000).map(|i| (vec![Bson::Int32(i)], 1)).collect()), 10);
        let cases = [(5, 5), (100, 100), (150, 420), (420, 150), (-3, 2000), (999, 999), (0, 99)];
        for (lo, hi) in cases {
            let one = KeyRange { min: vec![Bson::Int32(lo)], max: vec![Bson::Int32(hi)] };
            let (mut a, mut b) = (vec![0; 10], vec![0; 10]);
            r.count(std::slice::from_ref(&one), &mut a);
            r.count(&[one.clone(), one], &mut b);
            assert_eq!(a, b, "{lo}..{hi}");
            assert!(a.iter().sum::<u64>() >= 1);
        }
    }

    #[test]
    fn equal_count_ranges_and_lookup() {
        let vals = KeySpace::from_values((0..1000).map(|i| (vec![Bson::Int32(i)], 1)).collect());
        let r = Ranges::cut(&vals, 10);
        assert_eq!(r.len(), 10);
        assert_eq!(r.split_points[0], vec![Bson::Int32(100)]);
        assert_eq!(r.index_of(&[Bson::Int32(0)]), 0);
        assert_eq!(r.index_of(&[Bson::Int32(100)]), 1);
        assert_eq!(r.index_of(&[Bson::Int32(999)]), 9);
        let mut counts = vec![0; 10];
        r.count(&[KeyRange { min: vec![Bson::MinKey], max: vec![Bson::MaxKey] }], &mut counts);
        assert_eq!(counts, vec![1; 10]);
        let few = KeySpace::from_values((0..3).map(|i| (vec![Bson::Int32(i)], 10)).collect());
        assert_eq!(Ranges::cut(&few, 100).len(), 3);
    }
}
