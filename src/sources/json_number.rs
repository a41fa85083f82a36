//! JSON's number grammar, shared by the hand-written line scanners (`projected` for
//! export lines, `queries::light` for slow-query lines).

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
pub(crate) fn at(b: &[u8], at: usize) -> Option<Number> {
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
mod tests {
    #[test]
    fn numbers_as_json_writes_them() {
        for (t, len) in [("0", 1), ("-0", 2), ("12", 2), ("1.5", 3), ("-2e10", 5), ("3E+2,", 4), ("4.0e-1]", 6), ("01", 1)] {
            assert_eq!(super::at(t.as_bytes(), 0).map(|n| n.end), Some(len), "{t}");
        }
        for t in ["-", "+1", ".5", "1.", "1e", "1e+", "-a", ""] {
            assert!(super::at(t.as_bytes(), 0).is_none(), "{t}");
        }
        let n = super::at(b"-123.4e5", 0).unwrap();
        assert_eq!((n.int_digits, n.fraction, n.exponent), (3, true, true));
    }
}
