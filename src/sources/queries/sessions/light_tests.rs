//! `plan`'s transactions read light (only the lines of the transactions kept parsed in full)
//! held to the same read with every line parsed: the same transactions, joins, waiting
//! statements, sample and counts, on captured logs and on a log of every shape of line that
//! ties statements to transactions, with the sample full (most transactions left out) or not.

use super::*;
use crate::model::query::SessionRef;
use crate::sources::queries::{read_queries_in, QueryLog};
use std::path::Path;

/// A 6.0 "Slow query" line.
fn line(ctx: &str, component: &str, attr: &str) -> String {
    format!(
        r#"{{"t":{{"$date":"2026-11-24T07:00:00.001+00:00"}},"s":"I","c":"{component}","id":51803,"ctx":"{ctx}","msg":"Slow query","attr":{attr}}}"#
    )
}

fn command(ctx: &str, ns: &str, cmd: &str) -> String {
    line(ctx, "COMMAND", &format!(r#"{{"type":"command","ns":"{ns}","command":{cmd},"durationMillis":0}}"#))
}

/// One transaction's (or other work's) lines, by shape: `i` picks the shape and the session.
fn work(i: u64) -> Vec<String> {
    let conn = format!("conn{}", i % 5);
    let c = conn.as_str();
    let uuid = format!("00000000-0000-4000-8000-{i:012x}");
    let sess = format!(r#""lsid":{{"id":{{"$uuid":"{uuid}"}}}},"txnNumber":{},"autocommit":false"#, i % 3 + 1);
    let write = |q: &str| {
        line(
            c,
            "WRITE",
            &format!(
                r#"{{"type":"update","ns":"app.stock","command":{{"q":{q},"u":{{"$inc":{{"qty":-1}}}},"multi":false,"upsert":false}},"durationMillis":0}}"#
            ),
        )
    };
    let find =
        |s: &str| command(c, "app.items", &format!(r#"{{"find":"items","filter":{{"_id":{i}}},"startTransaction":true,{s},"$db":"app"}}"#));
    let update_claim = |s: &str| command(c, "app.$cmd", &format!(r#"{{"update":"stock","ordered":true,{s},"$db":"app"}}"#));
    match i % 13 {
        // The common transaction: a find, an insert, a WRITE line and its command line.
        0..=3 => vec![
            find(&sess),
            command(c, "app.orders", &format!(r#"{{"insert":"orders","ordered":true,{sess},"$db":"app"}}"#)),
            write(&format!(r#"{{"storeId":{},"sku":"s{i}"}}"#, i % 50)),
            update_claim(&sess),
        ],
        // An update command carrying its statements, in a transaction.
        4 => vec![
            find(&sess),
            command(
                c,
                "app.$cmd",
                &format!(
                    r#"{{"update":"stock","updates":[{{"q":{{"sku":"s{i}"}},"u":{{"$set":{{"x":1}}}}}},{{"q":{{"sku":"t{i}"}},"u":{{"$set":{{"x":2}}}}}}],"ordered":true,{sess},"$db":"app"}}"#
                ),
            ),
        ],
        // A delete's WRITE line and its command line.
        5 => vec![
            find(&sess),
            line(
                c,
                "WRITE",
                &format!(r#"{{"type":"remove","ns":"app.carts","command":{{"q":{{"_id":{i}}},"limit":1}},"durationMillis":0}}"#),
            ),
            command(c, "app.$cmd", &format!(r#"{{"delete":"carts","ordered":true,{sess},"$db":"app"}}"#)),
        ],
        // A join, in a transaction and outside any.
        6 => vec![
            command(
                c,
                "app.orders",
                &format!(
                    r#"{{"aggregate":"orders","pipeline":[{{"$match":{{"customerId":{i}}}}},{{"$lookup":{{"from":"customers","localField":"customerId","foreignField":"_id","as":"c"}}}}],"cursor":{{}},{sess},"$db":"app"}}"#
                ),
            ),
            command(
                c,
                "app.orders",
                r#"{"aggregate":"orders","pipeline":[{"$lookup":{"from":"items","localField":"sku","foreignField":"_id","as":"i"}}],"cursor":{},"$db":"app"}"#,
            ),
        ],
        // Sessions only the full read reads: an lsid with its uid, a $numberLong, capitals.
        7 => {
            let uid = format!(
                r#""lsid":{{"id":{{"$uuid":"{uuid}"}},"uid":{{"$binary":{{"base64":"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=","subType":"0"}}}}}},"txnNumber":1,"autocommit":false"#
            );
            let long = format!(r#""lsid":{{"id":{{"$uuid":"{uuid}"}}}},"txnNumber":{{"$numberLong":"7"}},"autocommit":false"#);
            let caps = sess.replace("0000-4000-8000", "0000-4000-800A").replace("-0000", "-ABCD");
            vec![find(&uid), write("{\"a\":1}"), update_claim(&uid), find(&long), find(&caps), write("{\"b\":1}"), update_claim(&caps)]
        }
        // A cursor opened in a transaction and read on by a getMore.
        8 => {
            let cursor = 1000 + i;
            vec![
                line(
                    c,
                    "COMMAND",
                    &format!(
                        r#"{{"type":"command","ns":"app.orders","command":{{"find":"orders","filter":{{"status":"A"}},{sess},"$db":"app"}},"cursorid":{cursor},"nreturned":101,"durationMillis":0}}"#
                    ),
                ),
                line(
                    c,
                    "COMMAND",
                    &format!(
                        r#"{{"type":"command","ns":"app.orders","command":{{"getMore":{cursor},"collection":"orders",{sess},"$db":"app"}},"originatingCommand":{{"find":"orders","filter":{{"status":"A"}},{sess},"$db":"app"}},"cursorid":0,"nreturned":5,"durationMillis":0}}"#
                    ),
                ),
            ]
        }
        // A retryable write (a session, no transaction) and a plain find.
        9 => vec![
            command(
                c,
                "app.$cmd",
                &format!(
                    r#"{{"update":"stock","updates":[{{"q":{{"sku":"r{i}"}},"u":{{"$set":{{"y":1}}}}}}],"ordered":true,"lsid":{{"id":{{"$uuid":"{uuid}"}}}},"txnNumber":4,"$db":"app"}}"#
                ),
            ),
            command(c, "app.items", &format!(r#"{{"find":"items","filter":{{"_id":{i}}},"$db":"app"}}"#)),
        ],
        // A WRITE line claimed by a command outside any transaction.
        10 => vec![write(&format!(r#"{{"sku":"n{i}"}}"#)), update_claim(r#""ordered":true"#)],
        // An update command in a transaction with no statement documents.
        11 => vec![find(&sess), command(c, "app.$cmd", &format!(r#"{{"update":"stock","updates":[],{sess},"$db":"app"}}"#))],
        // A statement one connection logs twice: as its WRITE line and in its command's list.
        _ => vec![
            write(&format!(r#"{{"sku":"d{i}"}}"#)),
            command(
                c,
                "app.$cmd",
                &format!(
                    r#"{{"update":"stock","updates":[{{"q":{{"sku":"d{i}"}},"u":{{"$inc":{{"qty":-1}}}},"multi":false,"upsert":false}}],"ordered":true,{sess},"$db":"app"}}"#
                ),
            ),
        ],
    }
}

/// Every line of `n` pieces of work, two at a time interleaved (each on its own connection),
/// and a last WRITE line no command line claims.
fn log_text(n: u64) -> String {
    let mut lines = Vec::new();
    for i in (0..n).step_by(2) {
        let (a, b) = (work(i), work(i + 1));
        for k in 0..a.len().max(b.len()) {
            lines.extend(a.get(k).cloned());
            lines.extend(b.get(k).cloned());
        }
    }
    lines.push(line(
        "conn9",
        "WRITE",
        r#"{"type":"update","ns":"app.stock","command":{"q":{"sku":"last"},"u":{"$set":{"z":1}}},"durationMillis":0}"#,
    ));
    lines.join("\n") + "\n"
}

/// Sessions that have kept `n` transactions already (the sample full past 20,000: a log
/// read on then leaves most of its transactions out).
fn after(n: i64, full_read: bool) -> Sessions {
    let mut s = Sessions { full_read, ..Sessions::default() };
    for k in 0..n {
        let mut q = Query::new(Op::Insert, "app.earlier", bson::Document::new(), QueryOrigin::SlowQueryLog);
        q.session = Some(Box::new(SessionRef { txn: Some(TxnId { lsid: format!("earlier-{k}"), txn_number: 1 }), ..Default::default() }));
        s.op(&q);
    }
    s
}

/// What the read gave: the log's sample and counts, the transactions and what waits.
fn read(path: &Path, sessions: Sessions) -> String {
    let mut log = QueryLog { sink: Some(Box::new(sessions)), ..Default::default() };
    read_queries_in(crate::sources::records::open(path).unwrap(), &mut log).unwrap();
    let mut s = *log.sink.take().unwrap().as_any().downcast::<Sessions>().unwrap();
    let found = s.transactions_found();
    let waiting: BTreeMap<String, Vec<Query>> =
        std::mem::take(&mut s.pending).into_iter().map(|(c, v)| (c, v.into_iter().filter_map(Waiting::into_query).collect())).collect();
    format!(
        "transactions {:?}\nkept {:?}\njoins {:?} of {}\nwaiting {waiting:?}\nsampled {} found {found} seq {}\nqueries {:?}\nby namespace {:?}\nskipped {:?}\nfound {} records {}",
        s.transactions, s.kept, s.joins, s.joins_seen, s.sampled, s.seq, log.queries, log.by_namespace, log.skipped, log.found, log.records
    )
}

fn same_both_ways(path: &Path, earlier: i64) -> String {
    let light = read(path, after(earlier, false));
    let full = read(path, after(earlier, true));
    assert!(light == full, "{}: the light read gives other transactions than the full one", path.display());
    light
}

/// Hand count of the generated log: 6,500 pieces of work, 500 of each of the 13 shapes.
/// With nothing kept before, every transaction is kept: shapes 0-6, 8, 11 and 12 hold one
/// each, shape 7 three (its lsid with a uid, its `$numberLong`, its capitals), 9 and 10
/// none. After 60,000 the sample is full and most of the log's are left out: both reads
/// agree on which.
#[test]
fn the_light_read_of_transactions_is_the_full_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mongod.log");
    std::fs::write(&path, log_text(6_500)).unwrap();
    let all = same_both_ways(&path, 0);
    let kept = all.lines().find_map(|l| l.strip_prefix("sampled false found ")).expect("nothing left out when nothing came before");
    assert!(kept.starts_with(&format!("{} ", 500 * 10 + 500 * 3)), "{kept}");
    let left_out = same_both_ways(&path, 60_000);
    assert!(left_out.contains("sampled true"), "the sample was full");
    let waiting = left_out.lines().find(|l| l.starts_with("waiting")).unwrap();
    assert!(waiting.contains("\"conn9\": [Query"), "the last WRITE line still waits: {}", &waiting[..waiting.len().min(300)]);
}

/// The drivers' captured logs (`tests/data/logs`) and the team's real logs: the same both ways.
#[test]
fn captured_and_real_logs_give_the_same_transactions_both_ways() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut read_any = 0;
    for dir in [root.join("tests/data/logs"), root.join("../shared/real-logs")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if !(name.ends_with(".log") || name.ends_with(".log.gz")) {
                continue;
            }
            for earlier in [0, 60_000] {
                same_both_ways(&path, earlier);
            }
            read_any += 1;
        }
    }
    assert!(read_any >= 8, "the logs were found ({read_any})");
}
