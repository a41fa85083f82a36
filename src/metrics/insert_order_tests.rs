//! `insert_order`'s tests: each witness by construction or by hand.

use super::*;
use bson::doc;

fn oid_at(secs: u32) -> bson::oid::ObjectId {
    let mut b = [0u8; 12];
    b[..4].copy_from_slice(&secs.to_be_bytes());
    bson::oid::ObjectId::from_bytes(b)
}

/// `measure` of `key` over documents given with their creation times, in insertion order:
/// every value held (`dense`, the default budget) or only the reservoir.
fn measured(key: &str, dense: bool, docs: impl Iterator<Item = (u32, bson::Document)>) -> InsertOrder {
    let key = ShardKey::parse(key).unwrap();
    let mut ks = KeySample::with_budget(key.clone(), if dense { 1 << 20 } else { 0 }, 100_000, 500);
    let mut created = Vec::new();
    for (t, d) in docs {
        ks.add(&d);
        created.push(t);
    }
    ks.finish();
    let server = monotonicity::measure(&key, &ks.insertion_positions_in_key_order(), false);
    let p = ks.insertion_positions_in_key_order();
    measure(&ks, &|| p.as_slice(), &created, &server, &ks.key_space_values())
}

/// Documents whose `d` follows creation time, loaded in a shuffled order: the
/// recordId order says "not monotonic", creation time says increasing.
#[test]
fn creation_time_sees_through_an_out_of_order_load() {
    let key = ShardKey::parse("{d: 1}").unwrap();
    let mut ks = KeySample::new(key.clone());
    let mut created = Vec::new();
    // A fixed permutation of 0..1000 (multiplier coprime with 1000).
    for i in 0..1000u32 {
        let t = (i * 377) % 1000;
        let d = doc! {"_id": oid_at(1_700_000_000 + t), "d": bson::DateTime::from_millis(t as i64 * 1000)};
        ks.add(&d);
        created.push(1_700_000_000 + t);
    }
    ks.finish();
    let server = monotonicity::measure(&key, &ks.insertion_positions_in_key_order(), false);
    assert_eq!(server.kind, MonotonicityType::NotMonotonic, "{server:?}");
    let p = ks.insertion_positions_in_key_order();
    let o = measure(&ks, &|| p.as_slice(), &created, &server, &ks.key_space_values());
    assert_eq!(o.kind, InsertKind::Increasing);
    assert_eq!(o.basis, InsertBasis::CreationTime);
    // Key order equals creation order exactly: r = 1.
    assert_eq!(o.creation_time_correlation_coefficient, Some(1.0));
    assert!(o.load_order_hides_it);
    assert_eq!(o.increasing_by_nature.len(), 1);
}

/// `{tenantId: 1, customerId: 1}` where customerId references 50 customers created
/// before any order: its ObjectIds carry the customers' times, not the orders', so it is
/// no longer "increasing by nature" and inserts spread like the pairs. An `orderId`
/// created with each document (a second after it) still sends inserts to the top of
/// each tenant's group.
#[test]
fn a_reference_that_does_not_follow_creation_time_is_not_increasing() {
    // Both ways a sample holds values: every one (dense, the default budget) and the reservoir.
    let run = |reference: &dyn Fn(u32) -> bson::oid::ObjectId, dense: bool| {
        let docs = (0..1000u32)
            .map(|i| (1_700_000_000 + i * 60, i))
            .map(|(t, i)| (t, doc! {"_id": oid_at(t), "tenantId": format!("t{}", i % 7), "ref": reference(i)}));
        measured("{tenantId: 1, ref: 1}", dense, docs)
    };
    for dense in [true, false] {
        // Customers 0..50 created a day apart, long before the orders; each order names one.
        let customers = run(&|i| oid_at(1_600_000_000 + ((i * 37) % 50) * 86_400), dense);
        assert!(customers.increasing_by_nature.is_empty(), "{:?}", customers.increasing_by_nature);
        assert_eq!((customers.kind, customers.group_fields), (InsertKind::Spread, None));
        // Customers all created in one second: no growth either.
        let one_second = run(&|_| oid_at(1_600_000_000), dense);
        assert!(one_second.increasing_by_nature.is_empty(), "{:?}", one_second.increasing_by_nature);
        let fresh = run(&|i| oid_at(1_700_000_001 + i * 60), dense);
        assert_eq!(fresh.increasing_by_nature.len(), 1);
        assert_eq!((fresh.kind, fresh.group_fields), (InsertKind::TopOfEachGroup, Some(1)));
    }
}

/// `{tenantId: 1, ticketNo: 1}` with ticketNo counted per tenant (a number, not a type
/// increasing by nature): over the whole key creation order reads near 0, within each
/// tenant exactly 1.0 (each tenant's tickets in key order are in creation order), so
/// inserts go to the top of each tenant's group. A ticket number drawn at random within
/// the tenant stays spread.
#[test]
fn a_counter_per_group_sends_inserts_to_each_groups_top() {
    let run = |number: &dyn Fn(u32) -> i64| {
        let docs = (0..2_100u32).map(|i| {
            let t = 1_700_000_000 + i;
            (t, doc! {"_id": oid_at(t), "tenantId": format!("t{}", i % 7), "ticketNo": number(i)})
        });
        measured("{tenantId: 1, ticketNo: 1}", true, docs)
    };
    let counted = run(&|i| (i / 7) as i64);
    assert_eq!(
        (counted.kind, counted.group_fields, counted.basis),
        (InsertKind::TopOfEachGroup, Some(1), InsertBasis::CreationTimeInGroups)
    );
    assert_eq!(counted.group_creation_time_correlation_coefficient, Some(1.0));
    assert!(counted.creation_time_correlation_coefficient.unwrap().abs() < 0.7);
    let random = run(&|i| ((i as u64 * 2_654_435_761) % 1_000_003) as i64);
    assert_eq!((random.kind, random.group_fields), (InsertKind::Spread, None));
    assert_eq!(random.group_creation_time_correlation_coefficient, None);
}

/// 27,000 documents loaded in one second in key order, then 3,000 inserted over five
/// minutes, each past the key's top: in seconds Pearson reads 0.52 (Python's
/// statistics.correlation of the two), in creation order the key follows exactly (1.0, as
/// the recordIds say); reversed, -1.0.
#[test]
fn creation_order_not_seconds_decides() {
    let created: Vec<u32> = (0..30_000u32).map(|i| if i < 27_000 { 1_700_000_000 } else { 1_700_001_000 + (i - 27_000) / 10 }).collect();
    let in_key_order: Vec<u64> = (0..30_000).collect();
    assert_eq!(creation_time_correlation(&in_key_order, &created), (Some(1.0), 30_000));
    let reversed: Vec<u64> = (0..30_000).rev().collect();
    assert_eq!(creation_time_correlation(&reversed, &created).0, Some(-1.0));
    // The seconds alone, as before: 0.5204878477.
    let seconds: Vec<u32> = in_key_order.iter().map(|&p| created[p as usize]).collect();
    assert_eq!(monotonicity::pearson_with_index(&seconds).map(monotonicity::round10), Some(0.5204878477));
    // Documents without a creation time are left out, not ranked.
    let mut some = created.clone();
    some[0] = NO_CREATION_TIME;
    assert_eq!(creation_time_correlation(&in_key_order, &some), (Some(1.0), 29_999));
}

#[test]
fn a_date_with_no_order_evidence_is_increasing_by_nature_and_a_later_date_groups() {
    let key = ShardKey::parse("{t: 1, d: 1}").unwrap();
    let ks_vals: Vec<(Vec<Bson>, u64)> =
        (0..10).map(|i| (vec![Bson::String(format!("t{i}")), Bson::DateTime(bson::DateTime::from_millis(i))], 1)).collect();
    let mut ks = KeySample::new(key.clone());
    for (v, _) in &ks_vals {
        ks.add(&doc! {"_id": 1, "t": v[0].clone(), "d": v[1].clone()});
    }
    ks.finish();
    let unknown = Monotonicity { record_id_correlation_coefficient: None, kind: MonotonicityType::Unknown };
    let p = ks.insertion_positions_in_key_order();
    let o = measure(&ks, &|| p.as_slice(), &[NO_CREATION_TIME; 10], &unknown, &KeySpace::from_values(ks_vals.clone()));
    assert_eq!((o.kind, o.group_fields), (InsertKind::TopOfEachGroup, Some(1)));
    let single = ShardKey::parse("{d: 1}").unwrap();
    let mut ks = KeySample::new(single);
    for (v, _) in &ks_vals {
        ks.add(&doc! {"d": v[1].clone()});
    }
    ks.finish();
    let vals = ks.key_space_values();
    let p = ks.insertion_positions_in_key_order();
    let o = measure(&ks, &|| p.as_slice(), &[NO_CREATION_TIME; 10], &unknown, &vals);
    assert_eq!((o.kind, o.basis), (InsertKind::Increasing, InsertBasis::ValueType));
}

/// A log's reads and no insert: not judged, unless a key is ordered by time (creation time
/// or a date); an insert among them: sampled; nothing, or sampled queries only: assumed.
#[test]
fn growth_by_inserts_from_the_operations_then_the_keys() {
    use crate::model::{Op, Query, QueryOrigin};
    let read = Query::new(Op::Find, "a.b", doc! {"x": 1}, QueryOrigin::SlowQueryLog);
    let insert = Query::new(Op::Insert, "a.b", doc! {}, QueryOrigin::SlowQueryLog);
    let sampled = Query::new(Op::Find, "a.b", doc! {"x": 1}, QueryOrigin::SampledQueries);
    assert_eq!(InsertEvidence::of(&[&read, &insert]), InsertEvidence::Sampled);
    assert_eq!(InsertEvidence::of(&[&read]), InsertEvidence::NoneSampled);
    assert_eq!(InsertEvidence::of(&[]), InsertEvidence::AssumedNoQueries);
    assert_eq!(InsertEvidence::of(&[&sampled]), InsertEvidence::AssumedSampledQueries);
    let io = |kind, basis| InsertOrder {
        kind,
        group_fields: None,
        basis,
        creation_time_correlation_coefficient: None,
        group_creation_time_correlation_coefficient: None,
        num_docs_with_creation_time: 0,
        increasing_by_nature: vec![],
        load_order_hides_it: false,
        inserts_in_workload: InsertEvidence::NoneSampled,
    };
    let none = InsertEvidence::NoneSampled;
    let (by_load, spread) = (io(InsertKind::Increasing, InsertBasis::RecordIdOrder), io(InsertKind::Spread, InsertBasis::CreationTime));
    // Increasing by load order only (the records' order), or spread: nothing says the collection grows.
    assert_eq!(none.with_keys([&by_load, &spread]), none);
    let by_creation = io(InsertKind::Increasing, InsertBasis::CreationTime);
    assert_eq!(none.with_keys([&by_load, &by_creation]), InsertEvidence::DocumentsHoldTimes);
    // By load order and holding dates: the dates say it.
    let dated = InsertOrder { increasing_by_nature: vec![NaturalField { field: "ts".into(), bson_type: "date" }], ..by_load.clone() };
    assert_eq!(none.with_keys([&dated]), InsertEvidence::DocumentsHoldTimes);
    assert_eq!(InsertEvidence::Sampled.with_keys([&by_creation]), InsertEvidence::Sampled);
    assert_eq!(serde_json::to_value(InsertEvidence::DocumentsHoldTimes).unwrap(), "documentsHoldTimes");
}

#[test]
fn newest_by_creation_takes_the_latest_tenth() {
    let created: Vec<u32> = (0..100).rev().collect();
    let p = newest_by_creation(&created, 0.1).unwrap();
    assert_eq!(p, (0..10).collect::<Vec<u64>>());
    assert!(newest_by_creation(&[NO_CREATION_TIME; 10], 0.1).is_none());
}
