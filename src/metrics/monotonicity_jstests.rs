//! The server's monotonicity jstests (`jstests/sharding/analyze_shard_key/
//! monotonicity_range_sharding_non_compound.js`, `…_compound_common.js`, data from
//! `libs/monotonicity_common.js`): fields that are constant, fluctuating, increasing or
//! decreasing (each increasing/decreasing value repeated up to numDocs/15 times), of every
//! type the jstest allows for that order; a key is monotonic exactly when its first
//! non-constant field is increasing or decreasing. The jstest picks types and cases at
//! random; here every combination runs, with a fixed seed for the data.

use super::{measure, MonotonicityType};
use crate::model::ShardKey;
use crate::sample::KeySample;
use bson::{oid::ObjectId, Bson, Document};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Order {
    Constant,
    Fluctuating,
    Increasing,
    Decreasing,
}
use Order::*;

/// kOrderTypes: the order, its expected monotonicity, the field types it supports.
const ORDERS: [(Order, MonotonicityType, &[&str]); 4] = [
    (Constant, MonotonicityType::NotMonotonic, &["integer", "string", "date", "objectid", "uuid"]),
    (Fluctuating, MonotonicityType::NotMonotonic, &["integer", "string", "date", "uuid"]),
    (Increasing, MonotonicityType::Monotonic, &["integer", "string", "date", "objectid"]),
    (Decreasing, MonotonicityType::Monotonic, &["integer", "string", "date"]),
];

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

fn value(ty: &str, i: u64, digits: usize, rng: &mut Rng) -> Bson {
    match ty {
        "integer" => Bson::Int64(i as i64),
        "string" => Bson::String(format!("A{i:0digits$}")),
        "date" => Bson::DateTime(bson::DateTime::from_millis(i as i64 * 1000)),
        "objectid" => {
            let mut b = [0u8; 12];
            b[..4].copy_from_slice(&(1_700_000_000u32 + i as u32).to_be_bytes());
            b[4..].copy_from_slice(&rng.below(u64::MAX).to_be_bytes());
            Bson::ObjectId(ObjectId::from_bytes(b))
        }
        _ => {
            let mut b = [0u8; 16];
            b[..8].copy_from_slice(&rng.below(u64::MAX).to_be_bytes());
            b[8..].copy_from_slice(&rng.below(u64::MAX).to_be_bytes());
            Bson::Binary(bson::Binary { subtype: bson::spec::BinarySubtype::Uuid, bytes: b.to_vec() })
        }
    }
}

/// appendConstantField / appendFluctuatingField / appendIncreasingField / appendDecreasingField.
fn append(docs: &mut [Document], name: &str, ty: &str, order: Order, rng: &mut Rng) {
    let n = docs.len() as u64;
    let digits = n.to_string().len();
    match order {
        Constant => {
            let v = value(ty, 1, digits, rng);
            docs.iter_mut().for_each(|d| {
                d.insert(name, v.clone());
            });
        }
        Fluctuating => docs.iter_mut().for_each(|d| {
            let i = rng.below(n + 1);
            d.insert(name, value(ty, i, digits, rng));
        }),
        Increasing | Decreasing => {
            // Each value repeated 1..=maxFrequency times, maxFrequency in 1..=n/15.
            let max_freq = 1 + rng.below(n / 15);
            let mut i = if order == Increasing { 0 } else { n };
            let mut at = 0usize;
            while at < docs.len() {
                i = if order == Increasing { i + 1 } else { i - 1 };
                let v = value(ty, i, digits, rng);
                let f = (1 + rng.below(max_freq)) as usize;
                for d in docs.iter_mut().skip(at).take(f) {
                    d.insert(name, v.clone());
                }
                at += f;
            }
        }
    }
}

fn kind_of(key: &str, docs: &[Document]) -> MonotonicityType {
    let mut ks = KeySample::new(ShardKey::parse(key).unwrap());
    for d in docs {
        ks.add(d);
    }
    ks.finish();
    measure(&ks.key, &ks.insertion_positions_in_key_order(), ks.order_sample_has_one_value()).kind
}

#[test]
fn non_compound_range_keys() {
    let mut rng = Rng(70);
    let mut wrong = Vec::new();
    let mut cases = 0;
    for (o0, want, types0) in ORDERS {
        for t0 in types0 {
            // The key alone, and with a second field of every order beside it (the jstest's
            // prefixed-index cases: the other field never changes the answer).
            for other in [None, Some(0), Some(1), Some(2), Some(3)] {
                let n = 7_500 + rng.below(2_501) as usize;
                let mut docs = vec![Document::new(); n];
                append(&mut docs, "a", t0, o0, &mut rng);
                if let Some(k) = other {
                    let (o1, _, types1) = ORDERS[k];
                    append(&mut docs, "b", types1[rng.below(types1.len() as u64) as usize], o1, &mut rng);
                }
                cases += 1;
                let got = kind_of("{a: 1}", &docs);
                if got != want {
                    wrong.push(format!("{{a: 1}} a {o0:?} {t0} (other {other:?}, {n} docs): {got:?}, want {want:?}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{} of {cases}:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn compound_range_keys_follow_the_first_non_constant_field() {
    let mut rng = Rng(71);
    let mut wrong = Vec::new();
    let mut cases = 0;
    for (i0, (o0, want0, types0)) in ORDERS.iter().enumerate() {
        for (i1, (o1, want1, types1)) in ORDERS.iter().enumerate() {
            for t in 0..2 {
                let (t0, t1) = (types0[(i1 + t) % types0.len()], types1[(i0 + t) % types1.len()]);
                let n = 8_000 + rng.below(2_001) as usize;
                let mut docs = vec![Document::new(); n];
                append(&mut docs, "a", t0, *o0, &mut rng);
                append(&mut docs, "b", t1, *o1, &mut rng);
                let want = if *o0 == Constant { *want1 } else { *want0 };
                cases += 1;
                let got = kind_of("{a: 1, b: 1}", &docs);
                if got != want {
                    wrong.push(format!("{{a: 1, b: 1}} a {o0:?} {t0}, b {o1:?} {t1} ({n} docs): {got:?}, want {want:?}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{} of {cases}:\n{}", wrong.len(), wrong.join("\n"));
}
