//! The light read against the full one on every real log and every shape: the same counts;
//! the hand scan reading cut and spaced lines as serde does.

use super::super::{classify_line, slow_log, Line, QueryLog};
use super::*;
use crate::sources::records::{numbered_lines, open};
use std::collections::BTreeMap;
use std::path::Path;

/// The light read of `text`, held equal to the full read; whether it took the line.
fn same_as_full(text: &str) -> bool {
    // The hand scan reads what the serde read reads, or leaves the line to it.
    let by_serde = read_serde(text, true);
    if let Some(by_hand) = scan::line(text, true) {
        assert_eq!(Some(&by_hand), by_serde.as_ref(), "{text}");
    }
    let Some(light) = by_serde else { return false };
    // The full read ties the line to others as the light read does (`once`).
    assert_eq!(tie_of(text), (light.conn.clone(), light.tie.clone()), "{text}");
    // With its figures and time (as `workload` and `--since` read them).
    let mut log = QueryLog { limit: usize::MAX, raw: true, keep_times: true, ..Default::default() };
    match classify_line(text) {
        Line::Slow(sq) => slow_log::add_slow_query(&mut log, *sq, crate::sources::queries::once::Tie::Alone),
        _ => panic!("read light, but not a slow query to the full read: {text}"),
    }
    let ns: Vec<String> = log.queries.iter().map(|q| q.ns.clone()).collect();
    assert_eq!(vec![light.ns.text().into_owned(); light.ops], ns, "{text}");
    // `workload`'s light operations are the full read's in what its counter reads.
    if light.ops > 0 {
        let mut light_qs = Vec::new();
        light.figures.queries(&ns[0], true, false, &mut light_qs);
        let seen =
            |qs: &[crate::model::Query]| -> Vec<_> { qs.iter().map(|q| (q.op, q.ns.clone(), q.filter.clone(), q.stats.clone())).collect() };
        assert_eq!(seen(&light_qs), seen(&log.queries), "{text}");
        // A filter shaped from its text has the full read's filter's shape.
        let mut shape = String::new();
        if light.figures.plain_shape(&mut shape) {
            assert_eq!(shape, crate::targeting::shapes::shape_of(&log.queries[0].filter), "{text}");
        }
    }
    assert!(ns.iter().all(|n| light.ns.is(n)), "{text}");
    // The transaction it names is the full read's, wherever it says it knows it.
    if light.txn != ops::LightTxn::Unsure {
        let txns: Vec<_> = log.queries.iter().map(|q| q.session.as_ref().and_then(|s| s.txn.clone())).collect();
        assert_eq!(txns, vec![light.txn.id(); light.ops], "{text}");
    }
    let skips: BTreeMap<String, u64> = light.skip.iter().map(|s| (s.to_string(), 1)).collect();
    assert_eq!(skips, log.skipped, "{text}");
    true
}

fn lines_of(path: &Path, mut f: impl FnMut(&str)) {
    open(path)
        .unwrap()
        .for_each_line_block(|block, first| {
            let (lines, last) = numbered_lines(block, first);
            for (_, raw) in lines {
                if let Ok(t) = std::str::from_utf8(raw) {
                    f(t);
                }
            }
            Ok(last)
        })
        .unwrap();
}

#[test]
fn the_light_read_counts_what_the_full_read_counts_on_every_real_log() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = root.join("../shared/real-logs");
    assert!(shared.is_dir(), "the team's shared/real-logs must sit beside the project (as in CI)");
    let mut files: Vec<_> = std::fs::read_dir(&shared).unwrap().map(|e| e.unwrap().path()).collect();
    files.push(root.join("fixtures/mongod.log"));
    let (mut taken, mut candidates, mut by_hand) = (0, 0, 0);
    for f in files.iter().filter(|f| !f.to_string_lossy().ends_with(".md")) {
        lines_of(f, |t| {
            if is_candidate(t) {
                let ok = same_as_full(t);
                taken += ok as u64;
                by_hand += scan::line(t, true).is_some() as u64;
                // Lines the full read takes as slow queries (it falls back on the others).
                if let Ok(slow_log::FastLogLine { id: Some(51803), attr: Some(_), .. }) = serde_json::from_str::<slow_log::FastLogLine>(t) {
                    candidates += 1;
                }
            }
        });
    }
    // Nearly every line the full read takes is read light (else the light read is pointless).
    assert!(taken > 10_000 && taken * 100 >= candidates * 99, "{taken} of {candidates}");
    // And most by the hand scan (lines with escapes are left to serde).
    assert!(by_hand * 10 >= taken * 8, "{by_hand} of {taken} by hand");
}

#[test]
fn the_hand_scan_reads_cut_and_spaced_lines_as_serde_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut lines = Vec::new();
    lines_of(&root.join("fixtures/mongod.log"), |t| {
        if is_candidate(t) && lines.len() < 40 {
            lines.push(t.to_string());
        }
    });
    assert!(!lines.is_empty());
    let agree = |t: &str| {
        if let Some(by_hand) = scan::line(t, true) {
            assert_eq!(Some(by_hand), read_serde(t, true), "{t}");
        }
    };
    for l in &lines {
        for cut in 0..l.len() {
            if l.is_char_boundary(cut) {
                agree(&l[..cut]);
                agree(&format!("{}}}", &l[..cut]));
            }
        }
        agree(&l.replace(':', " :\t").replace(',', "\r\n,  "));
        agree(&l.replace("\"id\":51803", "\"id\":51803.0"));
        agree(&l.replace("\"id\":51803", "\"id\":51803,\"id\":51803"));
        agree(&l.replace("{\"find\"", "{\"find\":1,\"find\""));
        agree(&l.replace("\"ns\":", "\"ns\":null,\"x\":"));
    }
}

#[test]
fn the_light_read_counts_what_the_full_read_counts_on_every_shape() {
    let line = |attr: &str| {
        format!(
            r#"{{"t":{{"$date":"2024-06-04T11:19:48.298Z"}},"s":"I","c":"COMMAND","id":51803,"ctx":"c","msg":"Slow query","attr":{attr}}}"#
        )
    };
    let taken = [
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"x":{"$oid":"000000003fdabe86cbbeaa11"}},"$db":"a"}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"c","filter":{"ts":{"$gte":{"$date":"2024-06-01T00:00:00Z"}}}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"FIND":"b","$db":"a"}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":5,"$db":"a"}}"#,
        r#"{"type":"command","ns":"nodot","command":{"find":"b"}}"#,
        r#"{"type":"command","command":{"count":"b","$db":"x"}}"#,
        r#"{"type":"command","ns":"a.b","command":{"aggregate":"b","pipeline":[{"$match":{"k":1}}],"$db":7}}"#,
        r#"{"type":"command","ns":"a.b","command":{"update":"b","updates":[{"q":{},"u":{}},1,{"q":{}},[]],"$db":"a"}}"#,
        r#"{"type":"command","ns":"a.b","command":{"update":"b","updates":{"q":{}},"$db":"a"}}"#,
        r#"{"type":"command","ns":"a.b","command":{"delete":"b","$db":"a"}}"#,
        r#"{"type":"command","ns":"a.b","command":{"delete":"b","deletes":[{"q":{"$date":1}},{"q":{}}],"$db":"a"}}"#,
        r#"{"type":"command","ns":"a.b","command":{"findandmodify":"b","query":{},"$db":"a"}}"#,
        r#"{"type":"command","ns":"a.b","command":{"insert":"b","documents":[{},{}],"$db":"a"}}"#,
        r#"{"type":"command","ns":"a.b","command":{"getMore":1,"collection":"b"},"originatingCommand":{"find":"b","$db":"a"}}"#,
        r#"{"type":"command","ns":"a.b","command":{"getmore":1}}"#,
        r#"{"type":"command","ns":"a.b","command":{"q":{"a":1},"u":{"$set":{"a":2}}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"q":{"a":1},"limit":1}}"#,
        r#"{"type":"command","ns":"a.b","command":{}}"#,
        r#"{"type":"command","ns":"a.b","command":{"hello":1}}"#,
        r#"{"type":"update","ns":"a.b","command":{"q":{},"u":{}}}"#,
        r#"{"type":"remove","ns":"a.b","command":{"q":{}}}"#,
        r#"{"type":"insert","ns":"a.b","ninserted":3,"command":{"insert":"b"}}"#,
        r#"{"type":"command","ns":"a.b"}"#,
        r#"{"type":"command","ns":"a.b","command":null}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"x":{"$numberLong":"5"}}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"x":{"a":1,"$oid":"000000003fdabe86cbbeaa11"}}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"x":1e300,"y":-9223372036854775808,"z":99999999999999999999}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"x":{"$date":"2024-06-01T00:00:00Z"}},"$db":"a"}}"#,
        // A repeated name the light read does not take changes nothing it reads.
        r#"{"type":"command","ns":"a.b","command":{"find":"b","allowPartialResults":true,"singleBatch":1,"allowPartialResults":false}}"#,
        // bson reads this one as a date, in both reads.
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"x":{"y":1,"$date":"2024-06-01T00:00:00Z"}}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","lsid":{"id":{"$uuid":"829b14b2-0a55-4ec5-9130-4ef7f1837581"}},"$db":"a"}}"#,
        r#"{"ns":"a.b","command":{"distinct":"b","key":"k","query":{"a":[1,{"b":null}]},"$db":"a"},"durationMillis":3}"#,
        // A causally consistent read, and an oplog read: plain timestamps (at u32's bounds).
        r#"{"type":"command","ns":"a.b","command":{"find":"b","readConcern":{"level":"majority","afterClusterTime":{"$timestamp":{"t":4294967295,"i":0}}},"$db":"a"}}"#,
        r#"{"type":"command","ns":"local.oplog.rs","command":{"find":"oplog.rs","filter":{"ts":{"$gte":{"$timestamp":{"t":1755544053,"i":1}}}},"$db":"local"}}"#,
        // Left to bson, which reads them as timestamps too.
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"ts":{"$timestamp":{"i":1,"t":2}}},"$db":"a"}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"ts":{"$timestamp":{ "t":2,"i":1}}},"$db":"a"}}"#,
    ];
    for attr in taken {
        assert!(same_as_full(&line(attr)), "not read light: {attr}");
        // Lines with plain timestamps are read by hand (`plain_extended` vouches for them).
        if attr.contains(r#"{"$timestamp":{"t":"#) {
            assert!(scan::line(&line(attr), true).is_some(), "not read by hand: {attr}");
        }
    }
    // Lines the full parse reads differently or not at all: left to it.
    let declined = [
        r#"{"type":"command","ns":"a.b","command":{"find":"b","find":"c"}}"#,
        // A repeated name the light read takes: the full parse reads its last value.
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"a":1},"filter":{"b":1}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","$db":"a","singleBatch":1,"$db":"c"}}"#,
        r#"{"type":"command","ns":"a.b","command":{"q":{"a":1},"u":{},"q":{"b":1}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"q":{"a":1},"u":{},"u":{"$set":{"a":1}}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"update":"b","updates":[{"q":{}}],"updates":[{"q":{}},{"q":{}}]}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","\u0024db":"c"}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"x":{"$oid":"nothex"}}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"x":{"$oid":"000000003fdabe86cbbeaa11","y":1}}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"x":{"$date":"yesterday"}}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"x":{"$numberLong":"x"}}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"x":18446744073709551615}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"x":1e400}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"x":-1.5E+999}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"x":{"$date":"2024-13-01T00:00:00Z"}}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","lsid":{"id":{"$uuid":"829b14b2-0a55-4ec5-9130-4ef7f183758"}}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","lsid":{"id":{"$uuid":"829b14b2-0a55-4ec5-9130-4ef7f1837581","x":1}}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"$oid":"000000003fdabe86cbbeaa11"}}"#,
        r#"{"type":"command","ns":"a.b","command":"find"}"#,
        r#"{"type":"command","ns":1,"command":{"find":"b"}}"#,
        r#"{"type":"command","ns":"a.b","ninserted":1.5,"command":{"find":"b"}}"#,
        r#"{"type":"command","type":"command","ns":"a.b","command":{"find":"b"}}"#,
        // Timestamps bson refuses: beyond u32, negative, a fraction, another field.
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"ts":{"$timestamp":{"t":4294967296,"i":0}}}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"ts":{"$timestamp":{"t":-1,"i":0}}}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"ts":{"$timestamp":{"t":1.5,"i":0}}}}}"#,
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"ts":{"$timestamp":{"t":1,"i":0,"x":1}}}}}"#,
    ];
    for attr in declined {
        assert!(read(&line(attr), true).is_none(), "read light: {attr}");
    }
    // Not a slow query to either.
    assert!(read(r#"{"t":{"$date":"2024-06-04T11:19:48.298Z"},"id":51803}"#, true).is_none());
    assert!(
        read(r#"{"t":{"$date":"2024-06-04T11:19:48.298Z"},"id":22943,"attr":{"command":{"find":"b"}},"x":"\"id\":51803"}"#, true).is_none()
    );
    assert!(read(r#"{"t":{"nodate":1},"id":51803,"attr":{"command":{"find":"b"}}}"#, true).is_none());
}

/// `$clusterTime`, which a replica set's drivers send with every command (bson refuses its
/// signature's `"subType":"0"`: each such line took the slow reads), is left out of the command
/// by every reader: the line is read light, by hand, and the full read gives it the operations
/// and tie of the same line without it (the expectation: the line without it, by construction).
#[test]
fn a_replica_sets_cluster_time_changes_no_operation_and_leaves_the_line_light() {
    let gossip = r#""$clusterTime":{"clusterTime":{"$timestamp":{"t":1755544053,"i":1}},"signature":{"hash":{"$binary":{"base64":"narLg5p2f7lVi+DU9/bPQEecBVc=","subType":"0"}},"keyId":7540002408831647749}}"#;
    assert!(serde_json::from_str::<bson::Document>(&format!("{{{gossip}}}")).is_err(), "bson reads it now: the reason is gone");
    let line = |attr: &str| {
        format!(
            r#"{{"t":{{"$date":"2025-08-18T19:07:34.809+00:00"}},"s":"I",  "c":"COMMAND",  "id":51803,   "ctx":"conn5","msg":"Slow query","attr":{attr}}}"#
        )
    };
    let full = |text: &str| {
        let mut log = QueryLog { limit: usize::MAX, raw: true, keep_times: true, ..Default::default() };
        let Line::Slow(sq) = classify_line(text) else { panic!("not read as a slow query: {text}") };
        slow_log::add_slow_query(&mut log, *sq, crate::sources::queries::once::Tie::Alone);
        log.queries
    };
    let lsid = r#""lsid":{"id":{"$uuid":"71240b17-f22a-4523-8eb7-57e2ad2e8a0b"}},"txnNumber":3,"autocommit":false"#;
    for attr in [
        r#"{"type":"command","ns":"a.b","command":{"find":"b","filter":{"x":-5,"y":"z"},"GOSSIP,"$db":"a"},"durationMillis":3}"#.to_string(),
        format!(r#"{{"type":"command","ns":"a.b","command":{{"update":"b","updates":[{{"q":{{"_id":1}},"u":{{"$set":{{"a":2}}}}}}],{lsid},"GOSSIP,"$db":"a"}}}}"#),
        r#"{"type":"command","ns":"a.b","command":{"getMore":7,"collection":"b","GOSSIP,"$db":"a"},"originatingCommand":{"find":"b","filter":{"k":1},"GOSSIP,"$db":"a"}}"#.to_string(),
        r#"{"type":"command","ns":"a.b","command":{"GOSSIP,"find":"b","filter":{"k":1},"$db":"a"}}"#.to_string(),
    ] {
        let (with, without) = (line(&attr.replace("\"GOSSIP,", &format!("{gossip},"))), line(&attr.replace("\"GOSSIP,", "")));
        assert!(scan::line(&with, true).is_some(), "not read by hand: {with}");
        assert!(same_as_full(&with), "not read light: {with}");
        assert_eq!(full(&with), full(&without), "{with}");
        assert!(!full(&with).is_empty() || attr.contains("getMore"), "{with}");
        assert_eq!(tie_of(&with), tie_of(&without), "{with}");
        assert_eq!(read(&with, true), read(&without, true), "{with}");
    }
}

/// A filter shaped from its text (`workload`) has the shape of the document bson reads from
/// it, or is left to the document: operators, Extended JSON, repeated or `$` names, escapes,
/// more than 16 fields.
#[test]
fn a_plain_filter_is_shaped_from_its_text_as_from_its_document() {
    let cases = [
        (r#"{}"#, true),
        (r#"{"storeId":28,"_id":12228}"#, true),
        (r#" { "b" : "x" , "a-b":1, "a":{"x":1,"$gt":2}, "c":[1,{"$gt":1}], "d":null, "e":{}, "f":true } "#, true),
        // Values skipped unchecked: quotes escaped, brackets and commas inside strings.
        (r#"{"a":"x,}]\"y\\","b":[{"c":"]"},[]],"d":-1.5e3,"e":{"f":{"g":"}"}}}"#, true),
        (r#"{"a":{"$gt":1}}"#, false),
        (r#"{"a":{"$oid":"5f0000000000000000000000"}}"#, false),
        (r#"{"a":{"$regularExpression":{"pattern":"^x","options":""}}}"#, false),
        (r#"{"$or":[{"a":1}]}"#, false),
        (r#"{"a":1,"a":2}"#, false),
        (r#"{"a\u0062":1}"#, false),
        (r#"{"a":{"\u0024gt":1}}"#, false),
        (r#"[1]"#, false),
        (r#"{"a":1} x"#, false),
    ];
    for (text, plain) in cases {
        let mut names = [""; 16];
        let got = scan::plain_filter_names(text, &mut names);
        assert_eq!(got.is_some(), plain, "{text}");
        if let Some(n) = got {
            let mut shape = String::new();
            crate::targeting::shapes::plain_shape_into(&mut names[..n], &mut shape);
            let Ok(bson::Bson::Document(d)) = serde_json::from_str::<bson::Bson>(text) else { panic!("{text}") };
            assert_eq!(shape, crate::targeting::shapes::shape_of(&d), "{text}");
        }
    }
    let many = (0..17).map(|i| format!("\"k{i}\":1")).collect::<Vec<_>>().join(",");
    assert_eq!(scan::plain_filter_names(&format!("{{{many}}}"), &mut [""; 16]), None);
    let sixteen = (0..16).map(|i| format!("\"k{i}\":1")).collect::<Vec<_>>().join(",");
    assert_eq!(scan::plain_filter_names(&format!("{{{sixteen}}}"), &mut [""; 16]), Some(16));
}

/// The hand check of a hyphenated UUID agrees with the uuid crate bson reads `$uuid` with.
#[test]
fn a_hyphenated_uuid_is_checked_as_the_uuid_crate_reads_it() {
    for v in [
        "00000000-0000-4000-8000-000000000001",
        "ABCDEF01-2345-6789-abcd-ef0123456789",
        "00000000-0000-4000-8000-00000000000g",
        "00000000-0000-4000-8000-0000000000001",
        "00000000-0000-4000-8000_000000000001",
        "0000000000004000800000000000001",
        "00000000000040008000000000000001",
        "{00000000-0000-4000-8000-000000000001}",
        "",
    ] {
        if cmd::hyphenated_uuid(v) {
            assert!(bson::Uuid::parse_str(v).is_ok(), "{v}");
        }
        assert_eq!(cmd::hyphenated_uuid(v), v.len() == 36 && bson::Uuid::parse_str(v).is_ok(), "{v}");
    }
}
