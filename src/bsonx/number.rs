//! BSON numbers read as Rust numbers: the one rule for every field we read as a number
//! (server replies, profiler and log counters, shell constructors, value comparison).
//!
//! Int32, Int64, Double and Decimal128 are numbers; nothing else is (no strings, no
//! booleans). As an integer, a Double or Decimal128 is truncated toward zero, saturating
//! at the i64 range (NaN is 0), as the server's own counters are whole numbers that
//! drivers and older servers sometimes send as doubles (`{n: 5.0}`).

use bson::Bson;

/// The number as an f64 (an Int64 past 2^53 rounds; a Decimal128 through its text).
pub(crate) fn as_f64(v: &Bson) -> Option<f64> {
    match v {
        Bson::Double(d) => Some(*d),
        Bson::Int32(i) => Some(*i as f64),
        Bson::Int64(i) => Some(*i as f64),
        Bson::Decimal128(d) => d.to_string().parse::<f64>().ok(),
        _ => None,
    }
}

/// The number as an i64: integers as they are, others truncated toward zero.
pub(crate) fn as_i64(v: &Bson) -> Option<i64> {
    match v {
        Bson::Int32(i) => Some(*i as i64),
        Bson::Int64(i) => Some(*i),
        v => as_f64(v).map(|f| f as i64),
    }
}

/// A count or a size: `as_i64`, with a negative number read as 0.
pub(crate) fn as_count(v: &Bson) -> Option<u64> {
    as_i64(v).map(|n| n.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rule() {
        let dec = |s: &str| Bson::Decimal128(s.parse().unwrap());
        assert_eq!(as_i64(&Bson::Int64(i64::MAX)), Some(i64::MAX), "exact, not through f64");
        assert_eq!(as_i64(&Bson::Double(-2.9)), Some(-2));
        assert_eq!(as_i64(&Bson::Double(f64::NAN)), Some(0));
        assert_eq!(as_i64(&Bson::Double(1e300)), Some(i64::MAX));
        assert_eq!(as_i64(&dec("7.5")), Some(7));
        assert_eq!(as_f64(&Bson::Int32(3)), Some(3.0));
        assert_eq!(as_count(&Bson::Int32(-4)), Some(0));
        assert_eq!(as_i64(&Bson::String("5".into())), None);
        assert_eq!(as_f64(&Bson::Boolean(true)), None);
    }
}
