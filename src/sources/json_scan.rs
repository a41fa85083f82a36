//! The JSON scanning primitives of the hand-written line scanners (`projected` for export
//! lines, `queries::light` for slow-query lines): white space, where a plain string run
//! ends, and JSON's number grammar. One implementation, `#[inline]` into both scanners;
//! the differential tests, the fuzz targets and the benchmark hold them to serde_json.

/// The index of the first byte at or after `i` that is not JSON white space.
#[inline]
pub(crate) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

/// The first `"`, `\\` or control character of `b` (where a plain string ends, or is not
/// plain), sixteen or eight bytes at a time: strings in these lines are short, too short for
/// memchr to pay for its set-up, and the control characters need a check of their own.
#[inline]
pub(crate) fn special_at(b: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // A byte's high bit is set where it is zero; only the lowest flag is exact.
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let mut i = 0;
    // Sixteen bytes a step where SSE2 compares them (a line's strings, keys mostly, end in the
    // first step; eight bytes a step were 2.5 instructions a byte, 30% of `workload`'s).
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    while let Some(chunk) = b.get(i..i + 16) {
        use safe_arch::{cmp_eq_mask_i8_m128i as eq, load_unaligned_m128i, move_mask_i8_m128i, set_splat_i8_m128i as splat};
        let v = load_unaligned_m128i(chunk.try_into().ok()?);
        // Below a space: at most 0x1f, the unsigned minimum of it and 0x1f is itself.
        let control = eq(safe_arch::min_u8_m128i(v, splat(0x1f)), v);
        let hit = move_mask_i8_m128i(eq(v, splat(b'"' as i8)) | eq(v, splat(b'\\' as i8)) | control);
        if hit != 0 {
            return Some(i + hit.trailing_zeros() as usize);
        }
        i += 16;
    }
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

/// How a number is written.
pub(crate) struct Number {
    /// Where it ends (the index after its last byte).
    pub(crate) end: usize,
    /// Digits before the point.
    pub(crate) int_digits: usize,
    pub(crate) fraction: bool,
    pub(crate) exponent: bool,
}

/// The number at `at`; None when the bytes there break JSON's grammar.
#[inline]
pub(crate) fn number_at(b: &[u8], at: usize) -> Option<Number> {
    let digits = |i: usize| b.get(i..).map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count());
    let mut i = at;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    let int_start = i;
    match b.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i += digits(i),
        _ => return None,
    }
    let int_digits = i - int_start;
    let fraction = b.get(i) == Some(&b'.');
    if fraction {
        match digits(i + 1) {
            0 => return None,
            n => i += 1 + n,
        }
    }
    let exponent = matches!(b.get(i), Some(b'e' | b'E'));
    if exponent {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        match digits(i) {
            0 => return None,
            n => i += n,
        }
    }
    Some(Number { end: i, int_digits, fraction, exponent })
}

#[cfg(test)]
mod string_tests {
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

#[cfg(test)]
mod number_tests {
    #[test]
    fn numbers_as_json_writes_them() {
        for (t, len) in [("0", 1), ("-0", 2), ("12", 2), ("1.5", 3), ("-2e10", 5), ("3E+2,", 4), ("4.0e-1]", 6), ("01", 1)] {
            assert_eq!(super::number_at(t.as_bytes(), 0).map(|n| n.end), Some(len), "{t}");
        }
        for t in ["-", "+1", ".5", "1.", "1e", "1e+", "-a", ""] {
            assert!(super::number_at(t.as_bytes(), 0).is_none(), "{t}");
        }
        let n = super::number_at(b"-123.4e5", 0).unwrap();
        assert_eq!((n.int_digits, n.fraction, n.exponent), (3, true, true));
    }
}
