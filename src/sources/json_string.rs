//! JSON strings for the hand-written line scanners (`projected` for export lines,
//! `queries::light` for slow-query lines): where a plain run of string bytes ends.

/// The first `"`, `\\` or control character of `b` (where a plain string ends, or is not
/// plain), eight bytes at a time: strings in these lines are short, too short for memchr to
/// pay for its set-up, and the control characters need a check of their own.
pub(crate) fn special_at(b: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // A byte's high bit is set where it is zero; only the lowest flag is exact.
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let mut i = 0;
    while let Some(chunk) = b.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().ok()?);
        let below_space = x.wrapping_sub(ONES * 0x20) & !x & HIGH;
        let hit = zero(x ^ (ONES * b'"' as u64)) | zero(x ^ (ONES * b'\\' as u64)) | below_space;
        if hit != 0 {
            return Some(i + (hit.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b[i..].iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20).map(|k| i + k)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_plain_run_ends_where_a_byte_by_byte_search_says() {
        let naive = |b: &[u8]| b.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20);
        let bytes = [b'a', b'"', b'\\', 0x00, 0x1f, b' ', 0x7f, 0x80, 0xa2, 0xdc, 0xe2, 0xff, b'!', b'#', b'[', b']'];
        let mut rng = crate::util::splitmix::SplitMix64(7);
        for len in 0..40 {
            for _ in 0..300 {
                // Mostly plain bytes, now and then one that ends a string.
                let b: Vec<u8> = (0..len)
                    .map(|_| if rng.below(6) == 0 { bytes[rng.below(bytes.len() as u64) as usize] } else { b'a' + rng.below(26) as u8 })
                    .collect();
                assert_eq!(super::special_at(&b), naive(&b), "{b:?}");
            }
        }
    }
}
