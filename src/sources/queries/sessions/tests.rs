//! The sessions' unit tests (beside `sessions.rs`), and `reading`: profiler documents and
//! captured logs read end to end into transactions and joins.

use super::*;
use crate::model::query::SessionRef;
use crate::model::QueryOrigin;
use bson::doc;

fn stmt(conn: &str, ns: &str) -> Query {
    let mut q = Query::new(Op::Update, ns, doc! {"a": 1}, QueryOrigin::SlowQueryLog);
    q.session = Some(Box::new(SessionRef { conn: Some(conn.into()), ..Default::default() }));
    q
}

fn txn(n: i64) -> TxnId {
    TxnId { lsid: "s".into(), txn_number: n }
}

/// Past `MAX_TRANSACTIONS` the sample keeps the transactions hashing lowest, whole,
/// whichever part saw their operations, and estimates how many there were: 3 parts of
/// 15,000 transactions each (two operations each, the second in the next part for a
/// third of them) keep 20,000 transactions with both their operations, the same ones
/// in any merge order, and estimate 45,000 within 3%.
#[test]
fn past_the_cap_a_uniform_sample_of_whole_transactions() {
    let ins = |n: i64| {
        let mut q = Query::new(Op::Insert, "db.a", bson::Document::new(), QueryOrigin::SlowQueryLog);
        q.session = Some(Box::new(SessionRef { txn: Some(txn(n)), ..Default::default() }));
        q
    };
    let parts: Vec<Sessions> = (0..3i64)
        .map(|p| {
            let mut s = Sessions::default();
            for n in p * 15_000..(p + 1) * 15_000 {
                s.op(&ins(n));
                // A third of them finish in the next part (the last part's, in the first).
                if n % 3 != 0 {
                    s.op(&ins(n));
                }
            }
            for n in ((p + 2) % 3 * 15_000..((p + 2) % 3 + 1) * 15_000).filter(|n| n % 3 == 0) {
                s.op(&ins(n));
            }
            s
        })
        .collect();
    let merged = |order: [usize; 3]| {
        let mut parts: Vec<Option<Sessions>> = parts.iter().map(|p| Some(clone(p))).collect();
        let mut m = Sessions::default();
        for i in order {
            m.merge(Box::new(parts[i].take().unwrap()));
        }
        m.resolve_lines();
        m
    };
    let a = merged([0, 1, 2]);
    let b = merged([2, 0, 1]);
    assert_eq!(a.transactions.len(), MAX_TRANSACTIONS);
    assert!(a.transactions.values().all(|ops| ops.len() == 2), "every kept transaction whole");
    assert_eq!(a.transactions.keys().collect::<Vec<_>>(), b.transactions.keys().collect::<Vec<_>>());
    let est = a.transactions_found() as f64;
    assert!((est - 45_000.0).abs() < 0.03 * 45_000.0, "estimate {est}");
    assert!(a.is_sampled());
}

/// Two parts that saw 30,000 and 10,000 joins (kept 20,000 and 10,000): the merged
/// sample holds 20,000, three quarters from the first part (30,000 of 40,000), within 2%.
#[test]
fn joins_merge_in_proportion_to_what_each_part_saw() {
    let mut rng = crate::util::splitmix::SplitMix64(1);
    let a: Vec<u8> = vec![0; 20_000];
    let b: Vec<u8> = vec![1; 10_000];
    let m = merge_samples((a, 30_000), (b, 10_000), 20_000, &mut rng);
    assert_eq!(m.len(), 20_000);
    let from_a = m.iter().filter(|x| **x == 0).count() as f64 / 20_000.0;
    assert!((from_a - 0.75).abs() < 0.02, "{from_a}");
}

/// A log shared by two databases: `only_database("a")` keeps a's transactions (one
/// touching both keeps its a operations) and a's joins, and counts a's joins seen.
#[test]
fn one_databases_transactions_and_joins() {
    let on = |ns: &str, n: i64, join: bool| {
        let mut q = Query::new(Op::Find, ns, bson::Document::new(), QueryOrigin::SlowQueryLog);
        q.session = (!join).then(|| Box::new(SessionRef { txn: Some(txn(n)), ..Default::default() }));
        if join {
            q.joins.push(crate::model::query::Join {
                stage: crate::model::query::JoinStage::Lookup,
                from: ns.into(),
                local_field: None,
                foreign_field: None,
            });
        }
        q
    };
    let mut s = Sessions::default();
    for (ns, n) in [("a.x", 1), ("b.x", 2), ("b.y", 3), ("a.y", 4), ("b.x", 4)] {
        s.op(&on(ns, n, false));
    }
    for ns in ["a.x", "b.x", "b.x"] {
        s.op(&on(ns, 0, true));
    }
    s.resolve_lines();
    s.only_database("a");
    assert_eq!(s.transactions.keys().map(|t| t.txn_number).collect::<Vec<_>>(), vec![1, 4]);
    assert_eq!(s.transactions[&txn(4)].iter().map(|q| q.ns.as_str()).collect::<Vec<_>>(), vec!["a.y"]);
    assert_eq!((s.transactions_found(), s.joins_seen, s.joins.len()), (2, 1, 1));
}

fn clone(s: &Sessions) -> Sessions {
    Sessions { reading: s.reading.clone(), kept: s.kept.clone(), sampled: s.sampled, ..Default::default() }
}

/// A part made by `fresh` from a full sample drops at once the transactions hashing above
/// the sample's largest (no copy of their statements), and the merge keeps exactly what it
/// keeps from parts without that bar: the same transactions with the same statements,
/// the same estimate. 25,000 transactions fill the log; then 3 parts of 4,000 new ones
/// (three statements each, the third on its own line and claimed by its command line,
/// some finishing in the next part), the bar read again before each part.
#[test]
fn a_part_drops_what_the_full_sample_would_drop() {
    let on = |n: i64, op: Op| {
        let mut q = Query::new(op, "db.a", bson::Document::new(), QueryOrigin::SlowQueryLog);
        q.session = Some(Box::new(SessionRef { txn: Some(txn(n)), conn: Some(format!("c{n}")), ..Default::default() }));
        q
    };
    let fill = |s: &mut Sessions| (0..25_000).for_each(|n| s.op(&on(n, Op::Insert)));
    let part = |s: &mut Sessions, p: i64| {
        for n in 25_000 + p * 4_000..25_000 + (p + 1) * 4_000 {
            s.op(&on(n, Op::Find));
            if n % 5 != 0 {
                s.op(&on(n, Op::Insert));
                s.op(&stmt(&format!("c{n}"), "db.a"));
                s.claim(&format!("c{n}"), Some(txn(n)));
            }
        }
        // The previous part's fifth transactions finish here.
        for n in (25_000 + (p - 1) * 4_000..25_000 + p * 4_000).filter(|n| p > 0 && n % 5 == 0) {
            s.op(&on(n, Op::Insert));
        }
    };
    let run = |barred: bool| {
        let mut main = Sessions::default();
        fill(&mut main);
        assert!(main.bar().is_some() && main.is_sampled());
        let mut held = 0;
        for p in 0..3 {
            let mut s = if barred { *main.fresh().as_any().downcast::<Sessions>().unwrap() } else { Sessions::default() };
            part(&mut s, p);
            held += s.reading.len();
            main.merge(Box::new(s));
        }
        main.resolve_lines();
        (main, held)
    };
    let ((a, held_barred), (b, held)) = (run(true), run(false));
    assert!(held_barred < held * 9 / 10, "the barred parts held {held_barred} of {held}: the bar did little");
    assert_eq!(a.transactions.len(), MAX_TRANSACTIONS);
    assert_eq!(a.transactions, b.transactions);
    assert_eq!((a.transactions_found(), a.is_sampled()), (b.transactions_found(), b.is_sampled()));
}

/// A statement in one part, its command line in the next: the statement still joins
/// the transaction; a statement claimed by a command outside any transaction joins none.
#[test]
fn statements_join_the_transaction_their_command_line_names_across_parts() {
    let mut a = Sessions::default();
    a.op(&stmt("conn1", "db.a"));
    a.op(&stmt("conn2", "db.b"));
    let mut b = Sessions::default();
    b.claim("conn1", Some(txn(1)));
    b.claim("conn2", None);
    b.op(&stmt("conn1", "db.c"));
    let mut main = Sessions::default();
    main.merge(Box::new(a));
    main.merge(Box::new(b));
    main.resolve_lines();
    assert_eq!(main.transactions.len(), 1);
    assert_eq!(main.transactions[&txn(1)].iter().map(|q| q.ns.as_str()).collect::<Vec<_>>(), vec!["db.a"]);
    // db.c waits for conn1's next command line.
    assert_eq!(main.waiting(), 1);
    let mut c = Sessions::default();
    c.claim("conn1", Some(txn(2)));
    main.merge(Box::new(c));
    main.resolve_lines();
    assert_eq!(main.transactions[&txn(2)][0].ns, "db.c");
    assert_eq!(main.waiting(), 0);
}

mod reading {
    use super::super::*;
    use crate::sources::queries::{read_queries_in, QueryLog};

    /// Profiler documents as mongod 6.0 writes them for one transaction: a find and an
    /// insert carry the session in `command`, the update statement carries none. The
    /// insert joins the find's transaction; the update is counted unplaced, and the
    /// transaction is then seen in part.
    #[test]
    fn a_profiled_insert_joins_its_transaction_and_an_update_leaves_it_in_part() {
        use bson::doc;
        let lsid = doc! {"id": bson::Binary { subtype: bson::spec::BinarySubtype::Uuid, bytes: vec![7; 16] }};
        let session = |mut c: bson::Document| {
            c.insert("lsid", lsid.clone());
            c.insert("txnNumber", 3i64);
            c.insert("autocommit", false);
            c.insert("$db", "shop");
            c
        };
        let mut log = QueryLog { sink: Some(Box::new(Sessions::default())), ..Default::default() };
        let docs = [
            doc! {"op": "query", "ns": "shop.orders", "command": session(doc! {"find": "orders", "filter": {"customerId": 5}, "startTransaction": true})},
            doc! {"op": "insert", "ns": "shop.payments", "command": session(doc! {"insert": "payments", "ordered": true}), "ninserted": 1},
            doc! {"op": "update", "ns": "shop.customers", "command": {"q": {"_id": 5}, "u": {"$inc": {"n": 1}}, "multi": false, "upsert": false}},
        ];
        for d in &docs {
            crate::sources::queries::profile::add_profile_doc(&mut log, d);
        }
        let mut s = log.sink.take().unwrap().as_any().downcast::<Sessions>().unwrap();
        s.resolve_lines();
        assert_eq!(s.transactions.len(), 1, "{s:?}");
        let (t, ops) = s.transactions.iter().next().unwrap();
        assert_eq!(
            ops.iter().map(|q| (q.op, q.ns.as_str())).collect::<Vec<_>>(),
            vec![(Op::Find, "shop.orders"), (Op::Insert, "shop.payments")]
        );
        // These documents carry no client and no time: nothing places the update.
        assert_eq!(s.unplaced(), 1);
        assert_eq!(s.unplaced_by_namespace().get("shop.customers"), Some(&1));
        assert!(s.seen_in_part(t, ops));
        // Without the unplaced update, the same transaction is whole.
        let whole = Sessions::default();
        assert!(!whole.seen_in_part(t, ops));
    }

    /// Profiler documents as mongod 6.0.5 wrote them for one driver transaction (captured:
    /// insert an order, update the customer, insert a payment; trimmed of locks and
    /// cluster time): the update carries no session, but ran from the transaction's client
    /// between its two inserts: placed, and the transaction is whole. The same update from
    /// another client, or after the payment (it may be a write after the commit), is not
    /// placed and the transaction is seen in part; after it, it still counts for links.
    #[test]
    fn a_profiled_update_between_its_transactions_inserts_is_placed_by_client_and_time() {
        use bson::{doc, DateTime};
        let lsid = doc! {"id": bson::Binary { subtype: bson::spec::BinarySubtype::Uuid, bytes: vec![8; 16] }};
        let ins = |coll: &str, starts: bool, ms: i64| {
            let mut c = doc! {"insert": coll, "ordered": true, "lsid": lsid.clone()};
            if starts {
                c.insert("startTransaction", true);
            }
            c.extend(doc! {"txnNumber": 2i64, "autocommit": false, "$db": "saas"});
            doc! {"op": "insert", "ns": format!("saas.{coll}"), "command": c, "ninserted": 1, "ts": DateTime::from_millis(ms), "client": "127.0.0.1"}
        };
        let upd = |client: &str, ms: i64| {
            doc! {"op": "update", "ns": "saas.customers", "command": {"q": {"_id": 3}, "u": {"$inc": {"orders": 1}}, "multi": false, "upsert": false},
            "nMatched": 1, "ts": DateTime::from_millis(ms), "client": client}
        };
        let run = |docs: &[bson::Document]| {
            let mut log = QueryLog { sink: Some(Box::new(Sessions::default())), ..Default::default() };
            for d in docs {
                crate::sources::queries::profile::add_profile_doc(&mut log, d);
            }
            let mut s = *log.sink.take().unwrap().as_any().downcast::<Sessions>().unwrap();
            s.place();
            s
        };
        let t0 = 1_795_682_123_803;
        let s = run(&[ins("orders", true, t0), upd("127.0.0.1", t0 + 2), ins("payments", false, t0 + 11)]);
        let (t, ops) = s.transactions.iter().next().unwrap();
        assert_eq!(ops.iter().map(|q| q.ns.as_str()).collect::<Vec<_>>(), vec!["saas.orders", "saas.payments", "saas.customers"]);
        assert_eq!((s.placed(), s.unplaced()), (1, 0));
        assert!(!s.seen_in_part(t, ops));
        for (docs, likely) in [
            (vec![ins("orders", true, t0), upd("10.1.1.1", t0 + 2), ins("payments", false, t0 + 11)], 0),
            (vec![ins("orders", true, t0), ins("payments", false, t0 + 11), upd("127.0.0.1", t0 + 12)], 1),
        ] {
            let s = run(&docs);
            let (t, ops) = s.transactions.iter().next().unwrap();
            assert_eq!(ops.len(), 2);
            assert_eq!((s.placed(), s.unplaced()), (0, 1));
            assert_eq!(s.seen_in_part(t, ops), likely == 1, "the other client's update is no transaction's");
            assert_eq!(s.likely().values().map(Vec::len).sum::<usize>(), likely);
        }
    }

    /// mongod 6.0.5's lines for a driver session that aborts transaction 2 and commits 3
    /// (captured, trimmed of locks): the aborted one leaves, with its insert; the committed
    /// one stays.
    #[test]
    fn an_aborted_transaction_is_left_out() {
        let ins = |n: i64| {
            format!(
                r#"{{"t":{{"$date":"2026-11-26T10:36:09.040+00:00"}},"s":"I",  "c":"COMMAND",  "id":51803,   "ctx":"conn6","msg":"Slow query","attr":{{"type":"command","ns":"shop.orders","command":{{"insert":"orders","ordered":true,"lsid":{{"id":{{"$uuid":"dcb583ed-38b7-4beb-91f6-9b176c66742c"}}}},"txnNumber":{n},"startTransaction":true,"autocommit":false,"$db":"shop"}},"ninserted":1,"durationMillis":0}}}}"#
            )
        };
        let summary = |n: i64, cause: &str| {
            format!(
                r#"{{"t":{{"$date":"2026-11-26T10:36:09.041+00:00"}},"s":"I",  "c":"TXN",      "id":51802,   "ctx":"conn6","msg":"transaction","attr":{{"parameters":{{"lsid":{{"id":{{"$uuid":"dcb583ed-38b7-4beb-91f6-9b176c66742c"}},"uid":{{"$binary":{{"base64":"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=","subType":"0"}}}}}},"txnNumber":{n},"txnRetryCounter":0,"autocommit":false,"readConcern":{{"level":"local","provenance":"implicitDefault"}}}},"readTimestamp":"Timestamp(0, 0)","ninserted":1,"keysInserted":1,"terminationCause":"{cause}","timeActiveMicros":90,"timeInactiveMicros":435,"numYields":0,"storage":{{}},"wasPrepared":false,"durationMillis":0}}}}"#
            )
        };
        let text = [ins(2), summary(2, "aborted"), ins(3), summary(3, "committed")].join("\n") + "\n";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mongod.log");
        std::fs::write(&path, text).unwrap();
        let mut log = QueryLog { sink: Some(Box::new(Sessions::default())), ..Default::default() };
        read_queries_in(crate::sources::records::open(&path).unwrap(), &mut log).unwrap();
        let mut s = *log.sink.take().unwrap().as_any().downcast::<Sessions>().unwrap();
        assert_eq!(s.transactions.len(), 2);
        s.place();
        assert_eq!(s.transactions.keys().map(|t| t.txn_number).collect::<Vec<_>>(), vec![3]);
        assert_eq!(s.aborted_left_out, 1);
    }

    /// Lines as mongod 6.0.5 writes them (captured from a replica set running a driver
    /// transaction): an insert command with the session, an update's statement on its own
    /// WRITE line, then the update command with the session but no statements.
    #[test]
    fn a_json_log_transaction_is_read_whole() {
        let text = r#"{"t":{"$date":"2026-11-24T06:01:49.541+00:00"},"s":"I",  "c":"COMMAND",  "id":51803,   "ctx":"conn5","msg":"Slow query","attr":{"type":"command","ns":"shop.orders","command":{"insert":"orders","ordered":true,"lsid":{"id":{"$uuid":"48c5d050-ca79-4822-9777-2b193e6aef5c"}},"startTransaction":true,"txnNumber":1,"autocommit":false,"$db":"shop"},"ninserted":1,"durationMillis":0}}
{"t":{"$date":"2026-11-24T06:01:49.542+00:00"},"s":"I",  "c":"WRITE",    "id":51803,   "ctx":"conn5","msg":"Slow query","attr":{"type":"update","ns":"shop.payments","command":{"q":{"orderId":1,"customerId":7},"u":{"$set":{"x":1}},"multi":false,"upsert":true},"planSummary":"COLLSCAN","durationMillis":0}}
{"t":{"$date":"2026-11-24T06:01:49.542+00:00"},"s":"I",  "c":"COMMAND",  "id":51803,   "ctx":"conn5","msg":"Slow query","attr":{"type":"command","ns":"shop.$cmd","command":{"update":"payments","ordered":true,"lsid":{"id":{"$uuid":"48c5d050-ca79-4822-9777-2b193e6aef5c"}},"txnNumber":1,"autocommit":false,"$db":"shop"},"durationMillis":0}}
"#;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mongod.log");
        std::fs::write(&path, text).unwrap();
        let mut log = QueryLog { sink: Some(Box::new(Sessions::default())), ..Default::default() };
        read_queries_in(crate::sources::records::open(&path).unwrap(), &mut log).unwrap();
        let s = log.sink.take().unwrap().as_any().downcast::<Sessions>().unwrap();
        assert_eq!(s.transactions.len(), 1, "{s:?}");
        let (id, ops) = s.transactions.iter().next().unwrap();
        assert_eq!(id.lsid, "48c5d050-ca79-4822-9777-2b193e6aef5c");
        assert_eq!(id.txn_number, 1);
        assert_eq!(ops.iter().map(|q| q.ns.as_str()).collect::<Vec<_>>(), vec!["shop.orders", "shop.payments"]);
    }
}
