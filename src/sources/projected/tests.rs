//! The projected reader against the full parse (`records::parse_json_document`): the same
//! documents and sizes, and `None` wherever the scanner hands a line back.

use super::*;

/// The raw BSON projection holds what the full decode, projected, holds.
#[test]
fn bson_projection_equals_the_full_decode() {
    use bson::{doc, oid::ObjectId, spec::BinarySubtype, Binary, DateTime, Decimal128, Timestamp};
    let p = Projection::new(["_id", "a", "ts", "n", "s", "d"].iter().map(|s| s.to_string()).collect());
    let docs = [
        doc! {"_id": ObjectId::parse_str("665a6a8d1c9d440000000001").unwrap(), "a": {"b": [1, 2, {"c": "x"}]}, "skip": "y", "ts": DateTime::from_millis(1_717_200_000_000)},
        doc! {"n": i64::MAX, "s": "é€", "d": Decimal128::from_bytes([1; 16]), "bin": Binary { subtype: BinarySubtype::Uuid, bytes: vec![0; 16] }, "t": Timestamp { time: 1, increment: 2 }},
        doc! {"other": 1},
        doc! {},
    ];
    for d in docs {
        let bytes = bson::to_vec(&d).unwrap();
        let raw = bson::RawDocument::from_bytes(&bytes).unwrap();
        let got = project_bson(raw, &p).unwrap().unwrap().to_document().unwrap();
        assert_eq!(got, p.apply(d.clone()), "{d}");
    }
    // A kept field twice: the full decode keeps the last value, so the raw read declines.
    let mut dup = bson::RawDocumentBuf::new();
    dup.append("a", 1);
    dup.append("a", 2);
    assert!(project_bson(&dup, &p).is_none());
    // A field twice that is not kept does not matter.
    let mut dup = bson::RawDocumentBuf::new();
    dup.append("zz", 1);
    dup.append("zz", 2);
    dup.append("a", 3);
    assert_eq!(project_bson(&dup, &p).unwrap().unwrap().to_document().unwrap(), bson::doc! {"a": 3});
    // A cut element is an error, not a silently shorter document.
    let mut bytes = bson::to_vec(&bson::doc! {"a": "long enough text", "s": 1}).unwrap();
    let n = bytes.len();
    bytes[n - 8] = 0x7f; // an unknown element type inside
    let raw = bson::RawDocument::from_bytes(&bytes).unwrap();
    assert!(matches!(project_bson(raw, &p), Some(Err(_))));
}

fn full(line: &str, p: &Projection) -> Option<(Document, usize)> {
    super::full(line, Some(p)).ok()
}

fn same(line: &str, fields: &[&str]) -> bool {
    let p = Projection::new(fields.iter().map(|s| s.to_string()).collect());
    let fast = read(line, &p);
    let slow = full(line, &p);
    // The raw form holds the same fields and values (or declines alike).
    let raw = read_raw(line, &p).map(|(r, n)| (r.to_document().expect("written by bson"), n));
    if format!("{raw:?}") != format!("{fast:?}") {
        return false;
    }
    match (&fast, &slow) {
        // The fast path may decline; it must never disagree or accept what the full parse refuses.
        (None, _) => true,
        (Some(f), Some(s)) => f == s,
        (Some(_), None) => false,
    }
}

#[test]
fn sizes_and_values_match_the_full_parse() {
    let lines = [
        r#"{"_id":{"$oid":"6553f1000000000000000000"},"ts":{"$date":"2023-11-14T22:13:20.1Z"},"u":4839782808629744545,"user":"user-034189","g":480}"#,
        r#"{"a":{"b":4586,"note":"x"},"items":[{"sku":"s","qty":2,"unit":50.11}],"tags":[],"geo":[173.2,-5.8700000000000045]}"#,
        r#"{"total":{"$numberDecimal":"29796.46"},"n":{"$numberLong":"12"},"i":{"$numberInt":"-3"},"d":{"$date":{"$numberLong":"1700000000000"}}}"#,
        r#"{"note":"said \"leave at door\"\tthanks \u00e9\ud83d\ude00","k":"\u0041"}"#,
        r#"{"x":-0,"y":-0.0,"z":1e300,"w":12345678901234567890,"v":2147483648,"t":-2147483648,"s":1.5E-3}"#,
        r#"{"d":{"$date":1700000000000},"e":{}, "arr" : [ 1 , [ 2 , { "q" : null } ] , true , false ] }"#,
        r#"{"big":[0,1,2,3,4,5,6,7,8,9,10,11]}"#,
    ];
    for line in lines {
        for fields in [
            &[][..],
            &[
                "_id", "ts", "a", "note", "x", "y", "z", "w", "d", "r", "b", "m", "u", "arr", "total", "n", "i", "k", "s", "t", "v", "big",
                "geo", "e",
            ][..],
        ] {
            let p = Projection::new(fields.iter().map(|s| s.to_string()).collect());
            let fast = read(line, &p);
            assert!(fast.is_some(), "the fast path declined {line}");
            assert_eq!(fast, full(line, &p), "{line} with {fields:?}");
        }
    }
}

#[test]
fn keeps_exactly_the_named_fields_whatever_their_length() {
    let long = "x".repeat(70);
    let p = Projection::new(vec!["a".into(), "bc".into(), long.clone(), "_id".into()]);
    for (k, want) in [("a", true), ("b", false), ("bc", true), ("cb", false), ("_id", true), ("_ie", false), ("", false)] {
        assert_eq!(p.keeps(k.as_bytes()), want, "{k:?}");
    }
    assert!(p.keeps(long.as_bytes()));
    assert!(!p.keeps("x".repeat(64).as_bytes()), "longer names share bit 63 and are compared");
    // One projection, documents of very different sizes in turn: each read whole.
    let big = format!(r#"{{"a": "{}", "bc": 1}}"#, "y".repeat(5000));
    for line in [r#"{"a": 1}"#, big.as_str(), r#"{"bc": 2, "a": 3}"#, big.as_str()] {
        let (raw, _) = read_raw(line, &p).expect("read");
        assert_eq!(raw.to_document().unwrap(), full(line, &p).unwrap().0);
    }
}

#[test]
fn rarer_extended_json_goes_to_the_full_parse() {
    for line in [
        r#"{"r":{"$regularExpression":{"pattern":"a","options":"i"}},"b":{"$binary":{"base64":"AAEC","subType":"00"}}}"#,
        r#"{"m":{"$minKey":1},"ts":{"$timestamp":{"t":1,"i":2}},"u":{"$foo":1}}"#,
        r#"{"d":{"$numberDouble":"1.5"}}"#,
    ] {
        assert!(full(line, &Projection::default()).is_some());
        assert!(read(line, &Projection::default()).is_none(), "{line}");
    }
}

#[test]
fn declines_or_refuses_what_the_full_parse_refuses() {
    for line in [
        r#"{"a":1,}"#,
        r#"{"a":01}"#,
        r#"{"a":1.}"#,
        r#"{"a":.5}"#,
        r#"{"a":tru}"#,
        r#"{"a":"x"#,
        "{\"a\":\"\u{1}\"}",
        r#"{"a":1} x"#,
        r#"[1]"#,
        r#"{"a":1e400}"#,
        r#"{"a":{"$oid":"zz"}}"#,
        r#"{"a":{"$date":"yesterday"}}"#,
        r#"{"a":{"$date":1.5}}"#,
        r#"{"a":{"$date":{"$numberInt":"1"}}}"#,
        r#"{"a":{"$numberLong":1}}"#,
        r#"{"$oid":"6553f1000000000000000000"}"#,
        r#"{"a":1,"a":2}"#,
        r#"{"a\u0062":1}"#,
        r#"{"a":"\x"}"#,
        r#"{"a":{"$oid":"6553f1000000000000000000","x":1}}"#,
    ] {
        assert!(same(line, &["a"]), "{line}");
        assert!(same(line, &[]), "{line}");
        if full(line, &Projection::default()).is_none() {
            assert!(read(line, &Projection::default()).is_none(), "accepted {line}");
        }
    }
}

#[test]
fn strings_of_every_length_with_a_special_byte_anywhere() {
    // The eight-byte scan must stop at the first quote, backslash or control byte wherever it falls.
    let specials = ["\\\"", "\\\\", "\\n", "\u{1}", "\u{1f}", "é", "\u{7f}", " ", "\\u0041"];
    for len in 0..20 {
        for at in 0..=len {
            for s in specials {
                let text: String = (0..len).map(|i| if i == at { s.to_string() } else { "x".into() }).collect();
                let line = format!("{{\"a\":\"{text}\",\"b\":\"{text}\"}}");
                assert!(same(&line, &["a"]), "{line:?}");
                if full(&line, &Projection::default()).is_some() {
                    assert!(read(&line, &Projection::new(vec!["a".into()])).is_some(), "declined {line:?}");
                }
            }
        }
    }
}

#[test]
fn nested_dollar_objects_are_read_once() {
    // Found by fuzzing: re-reading each `$`-object's member made this 2^depth work.
    let line = format!("{{\"a\":{}1{}}}", "{\"$bin\":".repeat(90), "}".repeat(90));
    assert!(read(&line, &Projection::default()).is_none());
}

#[test]
fn deep_nesting_is_left_to_the_full_parse() {
    let deep = format!("{{\"a\":{}1{}}}", "[".repeat(200), "]".repeat(200));
    assert!(read(&deep, &Projection::default()).is_none());
}

/// The hand `$oid` decode accepts and reads exactly what bson's `ObjectId::parse_str` does.
#[test]
fn object_ids_read_as_bson_reads_them() {
    let texts = [
        "6553f1000000000000000000",
        "6553F1000000000000ABCDEF",
        "abcdefABCDEF012345678901",
        "6553f100000000000000000",
        "6553f10000000000000000000",
        "6553f100000000000000000g",
        "6553f10000000000000000 0",
        "",
        "zz",
        "6553f1000000000000000é",
        "+553f1000000000000000000",
    ];
    for t in texts {
        assert_eq!(object_id(t), bson::oid::ObjectId::parse_str(t).ok(), "{t:?}");
        let line = format!(r#"{{"a":{{"$oid":"{t}"}},"b":1}}"#);
        assert!(same(&line, &["a"]) && same(&line, &["b"]), "{line}");
    }
}

/// Integers at the edge of i64 (read by hand when they fit) are what the full parse makes.
#[test]
fn integers_at_the_edge_of_int64_read_as_the_full_parse() {
    for n in [
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "1000000000000000000",
        "-999999999999999999",
        "4839782808629744545",
        "-1672057618014481362",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999",
        "2147483648",
        "-2147483649",
    ] {
        let line = format!(r#"{{"a":{n},"b":[{n}],"c":{{"d":{n}}}}}"#);
        for keep in [&["a"][..], &["b"], &["c"], &[]] {
            assert!(same(&line, keep), "{line} keeping {keep:?}");
            // Read by hand, not declined, when it fits.
            let p = Projection::new(keep.iter().map(|s| s.to_string()).collect());
            assert!(n.parse::<i64>().is_err() || read(&line, &p).is_some(), "{line} keeping {keep:?}");
        }
    }
}

/// What `plain_decimal` vouches for, bson parses as a Decimal128; and a line with such a value
/// in a field not read is what the full parse makes of it.
#[test]
fn plain_decimals_are_decimals_to_bson() {
    let mut texts: Vec<String> = [
        "0",
        "-0",
        "29796.46",
        "-1.5",
        "007",
        "0.000",
        "00.10",
        "1.",
        ".5",
        "1e3",
        "+1",
        "-",
        "",
        "1.2.3",
        "NaN",
        "١",
        "9999999999999999999999999999999999",
        "99999999999999999999999999999999999",
        "0.0000000000000000000000000000000000000001",
        "1234567890123456789012345678901234.5",
        "0000000000000000000000000000000000000000001",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    texts.push(format!("0.{}1", "0".repeat(5_990)));
    texts.push(format!("1.{}", "0".repeat(6_100)));
    for t in &texts {
        if plain_decimal(t) {
            assert!(t.parse::<bson::Decimal128>().is_ok(), "{t}");
        }
        let line = format!(r#"{{"a":{{"$numberDecimal":"{t}"}},"b":1}}"#);
        assert!(same(&line, &["b"]) && same(&line, &["a"]), "{line}");
    }
    assert!(plain_decimal("29796.46") && plain_decimal("-0.5") && !plain_decimal("1e3") && !plain_decimal("1."));
}
