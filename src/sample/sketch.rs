//! Bounded-memory counting for large samples: HyperLogLog for distinct values
//! (Ertl's improved estimator, accurate over the whole range) and Misra-Gries
//! for the most common values.

type HashMap<K, V> = std::collections::HashMap<K, V, ahash::RandomState>;

/// HyperLogLog with 2^p registers.
#[derive(Debug, Clone)]
pub(crate) struct HyperLogLog {
    p: u32,
    registers: Vec<u8>,
}

impl HyperLogLog {
    pub(crate) fn new(p: u32) -> Self {
        HyperLogLog { p, registers: vec![0; 1 << p] }
    }

    /// Relative standard error: 1.04 / sqrt(m).
    pub(crate) fn standard_error(&self) -> f64 {
        1.04 / (self.registers.len() as f64).sqrt()
    }

    pub(crate) fn precision(&self) -> u32 {
        self.p
    }

    pub(crate) fn add_hash(&mut self, h: u64) {
        let idx = (h >> (64 - self.p)) as usize;
        let q = 64 - self.p;
        let w = h << self.p; // remaining q bits, left-aligned
        let rank = if w == 0 { q + 1 } else { (w.leading_zeros() + 1).min(q + 1) };
        if self.registers[idx] < rank as u8 {
            self.registers[idx] = rank as u8;
        }
    }

    /// Ertl (2017), "New cardinality estimation algorithms for HyperLogLog sketches".
    pub(crate) fn estimate(&self) -> f64 {
        let m = self.registers.len() as f64;
        let q = (64 - self.p) as usize;
        let mut c = vec![0u64; q + 2];
        for &r in &self.registers {
            c[r as usize] += 1;
        }
        let mut z = m * tau(1.0 - c[q + 1] as f64 / m);
        for k in (1..=q).rev() {
            z = 0.5 * (z + c[k] as f64);
        }
        z += m * sigma(c[0] as f64 / m);
        let alpha_inf = 0.5 / std::f64::consts::LN_2;
        alpha_inf * m * m / z
    }
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let z_old = z;
        z += x * y;
        y += y;
        if z == z_old {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let z_old = z;
        y *= 0.5;
        z -= (1.0 - x).powi(2) * y;
        if z == z_old {
            return z / 3.0;
        }
    }
}

/// Misra-Gries heavy hitters with `k` counters: a reported count is a lower
/// bound, at most `total / (k + 1)` below the true count.
#[derive(Debug, Clone)]
pub(crate) struct MisraGries<V> {
    k: usize,
    counters: HashMap<Vec<u8>, (u64, V)>,
    total: u64,
}

impl<V: Clone> MisraGries<V> {
    pub(crate) fn new(k: usize) -> Self {
        MisraGries { k, counters: HashMap::with_capacity_and_hasher(k + 1, ahash::RandomState::with_seeds(1, 2, 3, 4)), total: 0 }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.k
    }

    /// Start from known exact counts: the `k` largest are kept.
    pub(crate) fn from_counts(k: usize, mut items: Vec<(Vec<u8>, u64, V)>) -> Self {
        let total = items.iter().map(|x| x.1).sum();
        items.sort_by_key(|x| std::cmp::Reverse(x.1));
        let mut counters = HashMap::with_capacity_and_hasher(k + 1, ahash::RandomState::with_seeds(1, 2, 3, 4));
        counters.extend(items.into_iter().take(k).map(|(key, c, v)| (key, (c, v))));
        MisraGries { k, counters, total }
    }

    /// Start from the `k` largest of exact counts over `total` items.
    pub(crate) fn from_top(k: usize, items: Vec<(Vec<u8>, u64, V)>, total: u64) -> Self {
        let mut mg = Self::from_counts(k, items);
        mg.total = total;
        mg
    }

    pub(crate) fn add(&mut self, key: &[u8], value: &dyn Fn() -> V) {
        self.total += 1;
        if let Some(e) = self.counters.get_mut(key) {
            e.0 += 1;
            return;
        }
        if self.counters.len() < self.k {
            self.counters.insert(key.to_vec(), (1, value()));
            return;
        }
        // Full: every counter pays one, the new item is not stored.
        self.counters.retain(|_, e| {
            e.0 -= 1;
            e.0 > 0
        });
    }

    /// The most an item's reported count may be below its true count.
    pub(crate) fn error_bound(&self) -> u64 {
        self.total / (self.k as u64 + 1)
    }

    pub(crate) fn items(&self) -> impl Iterator<Item = (&V, u64)> {
        self.counters.values().map(|(c, v)| (v, *c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{Hash, Hasher};

    fn h(i: u64) -> u64 {
        let mut s = std::collections::hash_map::DefaultHasher::new();
        i.hash(&mut s);
        s.finish()
    }

    #[test]
    fn hll_is_accurate_across_the_range() {
        for n in [10u64, 1_000, 50_000, 200_000, 1_000_000] {
            let mut hll = HyperLogLog::new(14);
            for i in 0..n {
                hll.add_hash(h(i));
                hll.add_hash(h(i)); // duplicates do not count
            }
            let err = (hll.estimate() - n as f64).abs() / n as f64;
            assert!(err < 0.03, "n = {n}: estimate {} ({:.2}% off)", hll.estimate(), err * 100.0);
        }
    }

    #[test]
    fn misra_gries_finds_heavy_hitters_within_its_bound() {
        let mut mg: MisraGries<u32> = MisraGries::new(10);
        let mut truth = std::collections::HashMap::new();
        for i in 0..10_000u32 {
            let v = if i % 3 == 0 {
                7
            } else if i % 7 == 0 {
                8
            } else {
                i
            };
            *truth.entry(v).or_insert(0u64) += 1;
            mg.add(&v.to_le_bytes(), &|| v);
        }
        let bound = mg.error_bound();
        assert_eq!(bound, 10_000 / 11);
        let got: std::collections::HashMap<u32, u64> = mg.items().map(|(v, c)| (*v, c)).collect();
        for hot in [7u32, 8] {
            let c = got[&hot];
            assert!(c <= truth[&hot] && truth[&hot] - c <= bound, "{hot}: {c} vs {}", truth[&hot]);
        }
    }
}
