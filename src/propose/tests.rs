//! The proposals' unit tests (beside `propose.rs`, which they would push past 800 lines).

use super::collection::{for_time_series, from_indexes};
use super::from_fields::{propose, propose_in};
use super::profile::profile_fields;
use super::proposal::MAX_PROPOSALS;
use crate::model::{Op, Query, QueryOrigin};
use bson::{doc, Document};

#[test]
fn proposes_filter_fields_hashed_id_and_compound_for_hot_groups() {
    let docs: Vec<Document> =
        (0..100).map(|i| doc! {"_id": i, "g": if i < 50 { 0 } else { i }, "u": i, "rare": if i < 10 { 1 } else { 0 }}).collect();
    let qs = [
        Query::new(Op::Find, "d.c", doc! {"g": 1}, QueryOrigin::Profiler),
        Query::new(Op::Find, "d.c", doc! {"u": 1}, QueryOrigin::Profiler),
        Query::new(Op::Find, "d.c", doc! {"missing": 1}, QueryOrigin::Profiler),
    ];
    let refs: Vec<&Query> = qs.iter().collect();
    let keys: Vec<String> = propose(&docs, &refs).iter().map(|p| p.key.to_string()).collect();
    assert!(keys.contains(&"{_id: \"hashed\"}".to_string()));
    assert!(keys.contains(&"{g: 1}".to_string()));
    assert!(keys.contains(&"{g: 1, _id: 1}".to_string()), "{keys:?}");
    assert!(keys.contains(&"{u: 1}".to_string()));
    assert!(keys.contains(&"{u: \"hashed\"}".to_string()), "{keys:?}");
    assert!(!keys.iter().any(|k| k.contains("missing")));
}

/// Issue 49: the expert's `{customer.id: 1, orderNumber: 1}`: orders read by a nested
/// customer id (100 customers, 10 orders each) and, in other queries, by order number: the
/// customer id followed by the most selective field, the one a unique index holds, though no
/// filter names both; without the index, the filtered field with the most values.
#[test]
fn the_most_used_equality_field_is_followed_by_the_most_selective_one() {
    let docs: Vec<Document> = (0..1000)
        .map(|i| doc! {"_id": i, "customer": {"id": i % 100}, "orderNumber": format!("ON-{i:05}"), "note": i % 500, "status": i % 3})
        .collect();
    let qs: Vec<Query> = (0..90)
        .map(|i| match i % 3 {
            0 | 1 => Query::new(Op::Find, "d.o", doc! {"customer.id": i % 100}, QueryOrigin::Profiler),
            _ => Query::new(Op::Find, "d.o", doc! {"orderNumber": format!("ON-{i:05}"), "status": 1}, QueryOrigin::Profiler),
        })
        .collect();
    let refs: Vec<&Query> = qs.iter().collect();
    let with = |unique: &[String]| -> Vec<String> {
        propose_in(&docs, &refs, Some(1000), unique).list.iter().map(|p| p.key.to_string()).collect()
    };
    let keys = with(&["orderNumber".to_string()]);
    assert!(keys.contains(&"{\"customer.id\": 1, orderNumber: 1}".to_string()), "{keys:?}");
    assert!(keys.len() <= MAX_PROPOSALS);
    // The filters name orderNumber (1,000 values) and status (3): orderNumber is the more selective.
    let keys = with(&[]);
    assert!(keys.contains(&"{\"customer.id\": 1, orderNumber: 1}".to_string()), "{keys:?}");
    // A unique index on a field no filter names still wins: one document a value.
    let keys = with(&["note".to_string()]);
    assert!(keys.contains(&"{\"customer.id\": 1, note: 1}".to_string()), "{keys:?}");
    // status has fewer values than customer.id: never after it.
    assert!(!keys.contains(&"{\"customer.id\": 1, status: 1}".to_string()), "{keys:?}");
}

/// Issue 49: each filtered field in every shape an expert tries; hashed only when an
/// equality names it; a field only negated (`$ne`, `$exists`) is not a key's field.
#[test]
fn every_filtered_field_is_tried_alone_hashed_and_before_id() {
    let docs: Vec<Document> = (0..1000).map(|i| doc! {"_id": i, "order": i / 6, "shop": i % 40, "t": i, "flag": i % 2}).collect();
    let qs: Vec<Query> = (0..60)
        .map(|i| match i % 3 {
            0 => Query::new(Op::Find, "d.c", doc! {"order": i}, QueryOrigin::Profiler),
            1 => Query::new(Op::Find, "d.c", doc! {"shop": i % 40, "order": {"$in": [i]}, "flag": {"$ne": 1}}, QueryOrigin::Profiler),
            _ => Query::new(Op::Find, "d.c", doc! {"t": {"$gte": i}, "flag": {"$exists": true}}, QueryOrigin::Profiler),
        })
        .collect();
    let refs: Vec<&Query> = qs.iter().collect();
    let keys: Vec<String> = propose_in(&docs, &refs, Some(12_000), &[]).list.iter().map(|p| p.key.to_string()).collect();
    for k in [
        "{order: 1}",
        "{order: \"hashed\"}",
        "{order: 1, _id: 1}",
        "{shop: 1}",
        "{shop: \"hashed\"}",
        "{shop: 1, _id: 1}",
        "{shop: 1, order: 1}",
        "{t: 1}",
    ] {
        assert!(keys.contains(&k.to_string()), "{k} not in {keys:?}");
    }
    assert!(!keys.iter().any(|k| k.contains("flag")), "{keys:?}");
    assert!(!keys.contains(&"{t: \"hashed\"}".to_string()), "t is read by ranges only: {keys:?}");
    assert!(!keys.contains(&"{t: 1, _id: 1}".to_string()), "t is an identifier already: {keys:?}");
    assert!(keys.len() <= MAX_PROPOSALS);
}

#[test]
fn a_unique_index_allows_its_first_field_hashed() {
    use crate::model::index::IndexSpec;
    let ix = IndexSpec::from_list_indexes(&doc! {"v": 2, "key": {"orderNumber": 1, "shop": 1}, "name": "on_1", "unique": true});
    let keys: Vec<String> = from_indexes(&[ix]).iter().map(|p| p.key.to_string()).collect();
    assert_eq!(keys, ["{orderNumber: 1, shop: 1}", "{orderNumber: 1}", "{orderNumber: \"hashed\"}"]);
}

/// Flight records (the shape of the public nycflights13 table): without a query log
/// every field is considered, nested ones too, not the first five in document order.
#[test]
fn without_queries_every_field_is_profiled_and_groups_pair_with_the_time_field() {
    let carriers = ["UA", "AA", "B6", "DL", "EV", "MQ", "US", "WN", "VX", "FL", "AS", "9E"];
    let docs: Vec<Document> = (0..1000i64)
        .map(|i| {
            doc! {
                "_id": i,
                "year": 2013, "month": 1 + (i % 12) as i32, "day": 1 + (i % 28) as i32,
                "dep_time": (i * 7919) % 2400,
                "carrier": carriers[(i % 12) as usize],
                "tailnum": format!("N{:05}", (i * 104_729) % 99_991),
                "dest": format!("D{:02}", (i * 31) % 40),
                "time_hour": bson::DateTime::from_millis(1_356_998_400_000 + i * 3_600_000),
                "meta": {"aircraft": {"serial": format!("S{}", (i * 7_727) % 1_000_003)}},
            }
        })
        .collect();
    let props = propose(&docs, &[]);
    let keys: Vec<String> = props.iter().map(|p| p.key.to_string()).collect();
    assert!(keys.len() <= MAX_PROPOSALS);
    assert!(keys.contains(&"{dest: 1, time_hour: 1}".to_string()), "{keys:?}");
    assert!(keys.contains(&"{carrier: 1, time_hour: 1}".to_string()), "{keys:?}");
    assert!(keys.iter().any(|k| k.contains("tailnum")), "{keys:?}");
    assert!(keys.contains(&"{\"meta.aircraft.serial\": 1}".to_string()), "nested: {keys:?}");
    assert!(!keys.contains(&"{year: 1}".to_string()), "one value: {keys:?}");
    let because = props.iter().find(|p| p.key.to_string() == "{dest: 1, time_hour: 1}").unwrap().origin.proposed_because().unwrap();
    assert!(because.contains("40 distinct string values"), "{because}");
    // The profile is computed, not guessed: time_hour is an increasing date.
    let f = profile_fields(&docs, &[]);
    let t = f.iter().find(|x| x.path == "time_hour").unwrap();
    assert!(t.increasing_by_nature && t.distinct == 1000);
}

/// An ObjectId other than `_id` that references 500 customers created long before the
/// orders does not grow with inserts: not "increasing", and no `{tenant, customerId}` is
/// proposed as "customerId grows with time". An ObjectId created with each order still is.
#[test]
fn a_reference_is_increasing_only_when_it_follows_creation_time() {
    let oid_at = |secs: u32| {
        let mut b = [0u8; 12];
        b[..4].copy_from_slice(&secs.to_be_bytes());
        bson::oid::ObjectId::from_bytes(b)
    };
    let docs: Vec<Document> = (0..1000u32)
        .map(|i| {
            let t = 1_700_000_000 + i * 60;
            doc! {"_id": oid_at(t), "tenant": format!("t{}", i % 20), "customerId": oid_at(1_600_000_000 + ((i * 37) % 500) * 3_600),
            "shipmentId": oid_at(t + 1)}
        })
        .collect();
    let f = profile_fields(&docs, &[]);
    let field = |p: &str| f.iter().find(|x| x.path == p).unwrap().clone();
    assert!(!field("customerId").increasing_by_nature);
    assert!(field("shipmentId").increasing_by_nature);
    assert!(field("_id").increasing_by_nature);
    let said: Vec<String> = propose(&docs, &[]).iter().filter_map(|p| p.origin.proposed_because()).collect();
    assert!(!said.iter().any(|w| w.contains("customerId grows with time")), "{said:?}");
    assert!(said.iter().any(|w| w.contains("orders each group by creation time as shipmentId does")), "{said:?}");
}

#[test]
fn a_time_series_collection_gets_only_the_keys_its_rules_allow() {
    use crate::model::collection::TimeSeries;
    let ts = TimeSeries { time_field: "t".into(), meta_field: Some("m".into()), granularity: None };
    // m.a in every document, m.b in half: m.b stays out (below 90%).
    let pre: Vec<Document> = (0..10)
        .map(|i| {
            if i % 2 == 0 {
                doc! {"t": 1, "m": {"a": i, "b": 1}}
            } else {
                doc! {"t": 1, "m": {"a": i}}
            }
        })
        .collect();
    let keys: Vec<String> = for_time_series(&ts, &pre).iter().map(|p| p.key.to_string()).collect();
    assert_eq!(keys, ["{m: 1, t: 1}", "{\"m.a\": 1, t: 1}", "{m: \"hashed\"}"]);
    let alone = TimeSeries { meta_field: None, ..ts };
    let keys: Vec<String> = for_time_series(&alone, &pre).iter().map(|p| p.key.to_string()).collect();
    assert_eq!(keys, ["{t: 1}"]);
}

/// The OLTP shape: every query fixes a region (5 values) and a district inside
/// it (10 values, numbered within the region) by equality, beside an order id.
#[test]
fn fields_every_filter_fixes_together_are_proposed_coarse_first() {
    let pre: Vec<Document> = (0..1000).map(|i| doc! {"_id": i, "district": i % 10, "region": i % 5, "o": i}).collect();
    let qs: Vec<Query> = (0..50)
        .map(|i| Query::new(Op::Find, "a.b", doc! {"district": i % 10, "region": i % 5, "o": i}, QueryOrigin::SlowQueryLog))
        .collect();
    let refs: Vec<&Query> = qs.iter().collect();
    let p = propose(&pre, &refs);
    let found = p
        .iter()
        .find(|x| x.key.to_string() == "{region: 1, district: 1, o: 1}")
        .unwrap_or_else(|| panic!("{:?}", p.iter().map(|x| x.key.to_string()).collect::<Vec<_>>()));
    assert!(
        found.origin.proposed_because().unwrap().starts_with("50 sampled filters fix region, district, o together by equality"),
        "{:?}",
        found.origin
    );
}

/// Issue 49: the cap of 24 proposals bites on a collection filtered by eight repeating fields
/// (each once beside the next) and an identifier: the keys it holds back are kept, in the order they came (the least
/// filtered fields' compounds), and said in a note; none of them is also proposed.
#[test]
fn the_keys_the_cap_holds_back_are_said() {
    let docs: Vec<Document> = (0..1000)
        .map(|i| {
            let mut d = doc! {"_id": i, "u": format!("u{i}")};
            for k in 0..8 {
                d.insert(format!("f{k}"), i % (10 + k));
            }
            d
        })
        .collect();
    // f0 the most filtered (9 filters), f7 the least (2); u by 10.
    let mut qs: Vec<Query> = Vec::new();
    for k in 0..8i32 {
        for v in 0..(9 - k) {
            qs.push(Query::new(Op::Find, "d.c", doc! {format!("f{k}"): v}, QueryOrigin::Profiler));
        }
    }
    qs.extend((0..10).map(|i| Query::new(Op::Find, "d.c", doc! {"u": format!("u{i}")}, QueryOrigin::Profiler)));
    // Each field once beside the next (which has more values): a compound of the two each.
    qs.extend((0..7).map(|k| Query::new(Op::Find, "d.c", doc! {format!("f{k}"): 1, format!("f{}", k + 1): 1}, QueryOrigin::Profiler)));
    let refs: Vec<&Query> = qs.iter().collect();
    let p = propose_in(&docs, &refs, Some(1000), &[]);
    assert_eq!(p.list.len(), MAX_PROPOSALS, "{:?}", p.list.iter().map(|x| x.key.to_string()).collect::<Vec<_>>());
    assert!(!p.over_cap.is_empty());
    assert!(p.over_cap.iter().all(|k| !p.list.iter().any(|x| &x.key == k)));
    let note = p.cap_note().unwrap();
    assert!(note.starts_with(&format!("{} more keys left out by the cap of 24 proposals", p.over_cap.len())), "{note}");
    // The most filtered field's compound with the identifier is kept; what goes is later.
    let kept: Vec<String> = p.list.iter().map(|x| x.key.to_string()).collect();
    assert!(kept.contains(&"{f0: 1, u: 1}".to_string()), "{kept:?}");
    assert!(note.contains("u: 1}"), "{note}");
}
