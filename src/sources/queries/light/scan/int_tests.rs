//! `Scan::int` against serde_json's i64 (beside `scan.rs`).

/// `int` reads a number as serde reads an i64 from it, by digits or by the slow path.
#[test]
fn an_integer_is_read_as_serde_reads_an_i64() {
    let texts = [
        "0",
        "-0",
        "7",
        "51803",
        "-42",
        "123456789012345678",
        "-123456789012345678",
        "1234567890123456789",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "01",
        "00",
        "-01",
        "1.0",
        "1e3",
        "1E3",
        "-",
        "",
        "1.5",
        "12x",
        " 12",
        "1-",
    ];
    for t in texts {
        let mut p = super::Scan { b: t.as_bytes(), s: t, i: 0, depth: 0, unsure: false };
        let got = p.int().filter(|_| p.i == t.len());
        assert_eq!(got, serde_json::from_str::<i64>(t).ok(), "{t:?}");
    }
}
