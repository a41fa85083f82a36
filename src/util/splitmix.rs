//! splitmix64: a tiny deterministic generator, so samples, reservoirs and the
//! fixtures come out the same on every run and machine.

#[derive(Debug, Clone, Default)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Algorithm R (Vitter's reservoir sampling): the slot the `offered`-th item (counted
    /// from 1) takes in a reservoir of `cap` that holds `held`: the next one while it is
    /// not full, then a uniform one with probability cap/offered, else none. The one
    /// implementation for the sample's reservoirs and the query log's.
    pub(crate) fn reservoir_slot(&mut self, offered: u64, held: usize, cap: usize) -> Option<usize> {
        if held < cap {
            return Some(held);
        }
        let j = self.below(offered) as usize;
        (j < cap).then_some(j)
    }
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

    #[test]
    fn reservoir_slots_fill_then_replace_uniformly() {
        let mut r = SplitMix64(1);
        let (cap, n) = (10usize, 1_000u64);
        let mut kept: Vec<u64> = Vec::new();
        let mut hits = vec![0u32; n as usize];
        for round in 0..2_000 {
            kept.clear();
            for i in 0..n {
                match r.reservoir_slot(i + 1, kept.len(), cap) {
                    Some(j) if j == kept.len() => kept.push(i),
                    Some(j) => kept[j] = i,
                    None => {}
                }
                if round == 0 && i < cap as u64 {
                    assert_eq!(kept.len() as u64, i + 1, "every item is kept until the reservoir is full");
                }
            }
            assert_eq!(kept.len(), cap);
            kept.iter().for_each(|&i| hits[i as usize] += 1);
        }
        // Each item is kept with probability cap/n = 1%: 20 of 2,000 rounds on average.
        // Early and late items alike (the first tenth against the last tenth, ±15%).
        let first: u32 = hits[..100].iter().sum();
        let last: u32 = hits[900..].iter().sum();
        assert!((first as f64 / last as f64 - 1.0).abs() < 0.15, "{first} vs {last}");
        assert_eq!(hits.iter().sum::<u32>(), 2_000 * cap as u32);
    }
}
