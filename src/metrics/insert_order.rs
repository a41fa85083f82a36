//! `insertOrder`: where new documents land in key order, as they are created in
//! production rather than as the sample was loaded.
//!
//! The server's monotonicity (`keyCharacteristics.monotonicity`) correlates key
//! order with recordIds, i.e. with the order documents were *loaded*; a bulk load
//! out of time order hides an increasing key. Two more witnesses, both beside the
//! server's number, never replacing it:
//! - the creation time an ObjectId `_id` carries (its first 4 bytes, seconds): the
//!   same Pearson correlation as the server's, with creation time in place of the
//!   recordId, so a reload in any order keeps the answer;
//! - the type of a key field: dates, timestamps and ObjectIds are increasing by
//!   nature (new documents carry the newest ones), which the report says even when
//!   no order can be measured.
//!
//! Decision (first field, unless hashed): the creation-time coefficient when at
//! least half the sampled documents carry one; else the server's recordId type;
//! else the field's type. A later field increasing by nature sends each insert to
//! the top of its group of the earlier fields (`{tenant: 1, ts: 1}`).

use super::monotonicity::{self, Monotonicity, MonotonicityType};
use crate::bsonx::order::canonical_type;
use crate::model::{KeyKind, KeySpace, ShardKey};
use crate::sample::{KeySample, NO_CREATION_TIME};
use bson::Bson;
use serde::Serialize;

/// Where inserts land.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum InsertKind {
    /// Past the current maximum: one chunk, one shard takes every insert.
    Increasing,
    /// Below the current minimum: one chunk, one shard.
    Decreasing,
    /// At the top of the group of the first `prefix_fields` fields, so spread like those groups.
    TopOfEachGroup,
    /// Like the values of the newest documents (no order in key space).
    Spread,
    /// Not measured: no documents, and no key field of an increasing type in the queries.
    Unknown,
}

crate::labels! {
    /// What decided where inserts land.
    pub(crate) enum InsertBasis {
        HashedFirstField => "hashed first field",
        CreationTime => "ObjectId creation time",
        RecordIdOrder => "recordId order",
        ValueType => "value type",
        CreationTimeInGroups => "ObjectId creation time within each group",
        NotMeasured => "not measured",
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InsertOrder {
    #[serde(rename = "type")]
    pub(crate) kind: InsertKind,
    /// For `topOfEachGroup`: how many leading key fields form the group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) group_fields: Option<usize>,
    /// What decided it.
    pub(crate) basis: InsertBasis,
    /// Pearson correlation of key order with the creation time of ObjectId `_id`s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) creation_time_correlation_coefficient: Option<f64>,
    /// For `topOfEachGroup` by creation time: within each group of the leading
    /// `group_fields` fields, the correlation of key order with creation order (their mean,
    /// weighted by the groups' documents).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) group_creation_time_correlation_coefficient: Option<f64>,
    /// Sampled documents whose `_id` is an ObjectId (the coefficient's basis).
    pub(crate) num_docs_with_creation_time: u64,
    /// Key fields whose values are dates, timestamps or ObjectIds, with that type.
    pub(crate) increasing_by_nature: Vec<NaturalField>,
    /// The server's recordId type and ours disagree (bulk load out of creation order).
    pub(crate) load_order_hides_it: bool,
    /// Whether the sampled operations show inserts: what the insert penalty rests on.
    pub(crate) inserts_in_workload: InsertEvidence,
}

/// What the workload says about inserts. A collection that no sampled insert shows growing
/// is not penalised for where inserts would land, unless its documents carry times a key
/// follows (new documents carry new ones); one whose workload is unknown is assumed to grow by
/// inserts. The words say which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InsertEvidence {
    /// Inserts among the sampled operations: the penalty counts as much as they weigh.
    Sampled,
    /// A log or the profiler shows operations on the collection and no insert among them:
    /// where inserts land is not judged.
    NoneSampled,
    /// No insert sampled, but a candidate key is ordered by time (it follows the ObjectId
    /// creation times, or holds dates, timestamps or ObjectIds): the documents carry the times
    /// they were created at, new ones carry new times, and a slow-query log shows only the
    /// inserts slower than slowms: the collection is taken to grow by inserts.
    DocumentsHoldTimes,
    /// No sampled operation on the collection: growth by inserts is assumed.
    AssumedNoQueries,
    /// Only `config.sampledQueries`, which never hold inserts: growth by inserts is assumed.
    AssumedSampledQueries,
}

impl InsertEvidence {
    /// From the collection's sampled operations.
    pub(crate) fn of(queries: &[&crate::model::Query]) -> InsertEvidence {
        use crate::model::{Op, QueryOrigin};
        if queries.iter().any(|q| q.op == Op::Insert) {
            InsertEvidence::Sampled
        } else if queries.iter().any(|q| q.origin != QueryOrigin::SampledQueries) {
            InsertEvidence::NoneSampled
        } else if queries.is_empty() {
            InsertEvidence::AssumedNoQueries
        } else {
            InsertEvidence::AssumedSampledQueries
        }
    }

    /// For the collection, once its candidates are measured: no insert sampled, but a key
    /// ordered by time says the documents keep coming.
    pub(crate) fn with_keys<'a>(self, orders: impl IntoIterator<Item = &'a InsertOrder>) -> InsertEvidence {
        let by_time = |io: &InsertOrder| {
            (matches!(io.basis, InsertBasis::CreationTime | InsertBasis::ValueType) || !io.increasing_by_nature.is_empty())
                && matches!(io.kind, InsertKind::Increasing | InsertKind::Decreasing | InsertKind::TopOfEachGroup)
        };
        match self {
            InsertEvidence::NoneSampled if orders.into_iter().any(by_time) => InsertEvidence::DocumentsHoldTimes,
            e => e,
        }
    }

    /// Growth by inserts is taken, not seen in the operations: penalised in full, said so.
    pub(crate) fn assumed(self) -> bool {
        !matches!(self, InsertEvidence::Sampled | InsertEvidence::NoneSampled)
    }

    fn name(self) -> &'static str {
        match self {
            InsertEvidence::Sampled => "sampled",
            InsertEvidence::NoneSampled => "noneSampled",
            InsertEvidence::DocumentsHoldTimes => "documentsHoldTimes",
            InsertEvidence::AssumedNoQueries => "assumedNoQueries",
            InsertEvidence::AssumedSampledQueries => "assumedSampledQueries",
        }
    }
}

impl Serialize for InsertEvidence {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NaturalField {
    pub(crate) field: String,
    #[serde(rename = "type")]
    pub(crate) bson_type: &'static str,
}

/// Share of a field's sampled values that must be of one increasing type.
const NATURE_SHARE: f64 = 0.9;

/// Fields (by position) whose values are dates, timestamps or ObjectIds in at least 90% of
/// the weighted key-space values. Hashed fields are never increasing in key space.
pub(crate) fn natural_fields(key: &ShardKey, key_space: &KeySpace) -> Vec<(usize, &'static str)> {
    let total: u64 = key_space.counts().iter().sum();
    if total == 0 {
        return Vec::new();
    }
    // Canonical types (each holds one BSON type) of the names below.
    let kinds = [
        canonical_type(&Bson::DateTime(bson::DateTime::from_millis(0))),
        canonical_type(&Bson::Timestamp(bson::Timestamp { time: 0, increment: 0 })),
        canonical_type(&Bson::ObjectId(bson::oid::ObjectId::from_bytes([0; 12]))),
    ];
    let names = ["date", "timestamp", "objectId"];
    let mut out = Vec::new();
    for (i, f) in key.fields.iter().enumerate() {
        if f.kind == KeyKind::Hashed {
            continue;
        }
        let mut by_type = [0u64; 3];
        for (v, &c) in key_space.counts().iter().enumerate() {
            if let Some(t) = key_space.canonical_type(v, i).and_then(|t| kinds.iter().position(|&k| k == t)) {
                by_type[t] += c;
            }
        }
        if let Some(t) = (0..3).find(|&t| by_type[t] as f64 >= NATURE_SHARE * total as f64) {
            out.push((i, names[t]));
        }
    }
    out
}

/// Documents carrying both times at least, for a reference to be judged by them.
const MIN_TIMED: usize = 30;
/// Documents a reference is judged on at most (its r within about ±0.05 at 2,000).
const TIMED_VALUES: usize = 2_000;

/// Pearson correlation of the time key field `field`'s values carry with the documents'
/// creation times, over `values` (insertion position, key value), and the documents carrying both.
fn reference_time_correlation(values: &[(u64, Vec<Bson>)], field: usize, created: &[u32]) -> Option<(f64, usize)> {
    let pairs: Vec<(f64, f64)> = values
        .iter()
        .filter_map(|(p, v)| {
            let c = created.get(*p as usize).copied().filter(|&c| c != NO_CREATION_TIME)?;
            Some((crate::bsonx::time_seconds(v.get(field)?)?, c as f64))
        })
        .collect();
    crate::util::stats::follows(&pairs).map(|r| (r, pairs.len()))
}

/// Pearson correlation between key order and creation order, over the documents with a
/// creation time: the server's correlation with the recordIds (a count of inserts), with the
/// documents' rank by creation time in their place. `positions_in_key_order` are sample
/// positions (indices into `created`). Ranks, not seconds: an ObjectId's time is in whole
/// seconds, and seconds weigh a gap between a bulk load and the later inserts as much as all
/// the documents between (27,000 loaded in one second then 3,000 inserted over five minutes,
/// every one at the key's top, read 0.52 in seconds against the recordIds' 0.9999; in a
/// new-user trial, `{bookingRef: 1}` 0.51 against 0.99985). Documents created in one second
/// rank by their insertion position (the server's recordId order).
pub(crate) fn creation_time_correlation(positions_in_key_order: &[u64], created: &[u32]) -> (Option<f64>, u64) {
    let first = created.iter().copied().filter(|&t| t != NO_CREATION_TIME).min().unwrap_or(0);
    // (seconds since the first) × positions + position: the creation order, one number each.
    let span = created.len() as u64 + 1;
    // Sized once: grown by doubling, each copy landed on fresh pages.
    let mut times: Vec<u64> = Vec::with_capacity(positions_in_key_order.len());
    times.extend(
        positions_in_key_order
            .iter()
            .filter_map(|&p| created.get(p as usize).filter(|&&t| t != NO_CREATION_TIME).map(|&t| (t - first) as u64 * span + p)),
    );
    let n = times.len() as u64;
    // Each document's rank by creation (distinct numbers: no ties), in key order.
    let mut by_creation: Vec<u32> = (0..times.len() as u32).collect();
    by_creation.sort_unstable_by_key(|&i| times[i as usize]);
    let mut ranks = vec![0u32; times.len()];
    for (rank, &i) in by_creation.iter().enumerate() {
        ranks[i as usize] = rank as u32;
    }
    (monotonicity::pearson_with_index(&ranks).map(|r| (r * 1e10).round() / 1e10), n)
}

/// Groups of at least this many documents with creation times speak for `within_groups`.
const GROUP_MIN_DOCS: usize = 3;

/// Within each group of the leading `j` key fields, the correlation of key order with
/// creation order (as `creation_time_correlation`: ranks, ties by insertion position); their
/// mean weighted by the groups' documents. None unless the groups that speak hold half the
/// documents with creation times, or when the positions are not the key space's documents.
fn within_groups(key_space: &KeySpace, positions_in_key_order: &[u64], created: &[u32], j: usize) -> Option<f64> {
    if key_space.counts().iter().sum::<u64>() != positions_in_key_order.len() as u64 {
        return None;
    }
    let first = created.iter().copied().filter(|&t| t != NO_CREATION_TIME).min().unwrap_or(0);
    let span = created.len() as u64 + 1;
    let (mut weighted, mut weight, mut timed) = (0.0, 0usize, 0usize);
    let mut group: Vec<u64> = Vec::new();
    let mut close = |group: &mut Vec<u64>| {
        timed += group.len();
        if group.len() >= GROUP_MIN_DOCS {
            let mut order: Vec<u32> = (0..group.len() as u32).collect();
            order.sort_unstable_by_key(|&i| group[i as usize]);
            let mut ranks = vec![0u32; group.len()];
            for (rank, &i) in order.iter().enumerate() {
                ranks[i as usize] = rank as u32;
            }
            if let Some(r) = monotonicity::pearson_with_index(&ranks) {
                weighted += r * group.len() as f64;
                weight += group.len();
            }
        }
        group.clear();
    };
    let (mut at, mut prefix): (usize, Option<Vec<Bson>>) = (0, None);
    for i in 0..key_space.len() {
        let mut v = key_space.value(i);
        v.truncate(j);
        if prefix.as_ref().is_some_and(|p| crate::bsonx::cmp_tuple(p, &v) != std::cmp::Ordering::Equal) {
            close(&mut group);
        }
        prefix = Some(v);
        let n = key_space.count(i) as usize;
        for &p in &positions_in_key_order[at..at + n] {
            if let Some(&t) = created.get(p as usize).filter(|&&t| t != NO_CREATION_TIME) {
                group.push((t - first) as u64 * span + p);
            }
        }
        at += n;
    }
    close(&mut group);
    (weight > 0 && weight * 2 >= timed).then(|| (weighted / weight as f64 * 1e10).round() / 1e10)
}

/// Insertion positions of the newest `fraction` of documents by creation time (sorted),
/// or None when fewer than half the documents carry a creation time.
pub(crate) fn newest_by_creation(created: &[u32], fraction: f64) -> Option<Vec<u64>> {
    // (time, position) as one number: the newest are the largest, found by selection, not a sort.
    let mut known: Vec<u64> =
        created.iter().enumerate().filter(|(_, &t)| t != NO_CREATION_TIME).map(|(i, &t)| (t as u64) << 32 | i as u64).collect();
    if known.is_empty() || known.len() * 2 < created.len() || created.len() > u32::MAX as usize {
        return None;
    }
    let keep = ((known.len() as f64 * fraction).ceil() as usize).clamp(1, known.len());
    let cut = known.len() - keep;
    known.select_nth_unstable(cut);
    let mut out: Vec<u64> = known[cut..].iter().map(|x| x & u32::MAX as u64).collect();
    out.sort_unstable();
    Some(out)
}

/// `positions` gives `ks`'s insertion positions in key order (shared with monotonicity).
pub(crate) fn measure<'p>(
    ks: &KeySample,
    positions: &dyn Fn() -> &'p [u64],
    created: &[u32],
    server: &Monotonicity,
    key_space: &KeySpace,
) -> InsertOrder {
    let key = &ks.key;
    let mut natural = natural_fields(key, key_space);
    // An ObjectId other than `_id` is most often a reference (`customerId`): it carries when
    // the referenced document was created, not the insert. Measured not to follow the
    // documents' creation times, it does not grow with inserts (as `propose::profile` judges).
    let references = || ks.values_by_position(TIMED_VALUES);
    let mut held = None;
    natural.retain(|&(i, t)| {
        if t != "objectId" || key.fields[i].path == "_id" || ks.docs_with_arrays > 0 {
            // (with arrays, positions differ from the sample's)
            return true;
        }
        let values = held.get_or_insert_with(references);
        !reference_time_correlation(values, i, created).is_some_and(|(r, n)| n >= MIN_TIMED && r < monotonicity::THRESHOLD)
    });
    let increasing_by_nature: Vec<NaturalField> =
        natural.iter().map(|&(i, t)| NaturalField { field: key.fields[i].path.clone(), bson_type: t }).collect();
    let hashed_first = key.fields.first().is_some_and(|f| f.kind == KeyKind::Hashed);
    let (coef, with_time) =
        if hashed_first || ks.docs_with_arrays > 0 { (None, 0) } else { creation_time_correlation(positions(), created) };
    let counted = ks.docs_counted().max(1);
    // Half the documents must carry a creation time for it to speak for the collection.
    let coef = coef.filter(|_| with_time * 2 >= counted.min(created.len() as u64).max(1));
    let first_natural = natural.first().is_some_and(|&(i, _)| i == 0);
    let later_natural = natural.iter().find(|&&(i, _)| i > 0).map(|&(i, _)| i);

    let (kind, basis) = if hashed_first {
        (InsertKind::Spread, InsertBasis::HashedFirstField)
    } else if let Some(r) = coef {
        (direction(r), InsertBasis::CreationTime)
    } else if server.kind == MonotonicityType::Monotonic {
        (direction(server.record_id_correlation_coefficient.unwrap_or(1.0)), InsertBasis::RecordIdOrder)
    } else if first_natural {
        (InsertKind::Increasing, InsertBasis::ValueType)
    } else {
        (
            InsertKind::Spread,
            if server.kind == MonotonicityType::NotMonotonic { InsertBasis::RecordIdOrder } else { InsertBasis::ValueType },
        )
    };
    let (mut kind, mut group_fields, mut basis) = match (kind, later_natural) {
        (InsertKind::Spread, Some(j)) if !hashed_first || j > 0 => (InsertKind::TopOfEachGroup, Some(j), InsertBasis::ValueType),
        (k, _) => (k, None, basis),
    };
    // Spread over the whole key, but a later field may follow creation within each group of
    // the leading ones (a ticket number counted per tenant): inserts then go to the top of
    // each group, whatever the field's type. Measured where creation times speak.
    let mut group_coef = None;
    let any_hashed = key.fields.iter().any(|f| f.kind == KeyKind::Hashed);
    if kind == InsertKind::Spread && coef.is_some() && !any_hashed && ks.docs_with_arrays == 0 {
        for j in 1..key.fields.len() {
            if let Some(r) = within_groups(key_space, positions(), created, j).filter(|r| *r >= monotonicity::THRESHOLD) {
                (kind, group_fields, basis, group_coef) = (InsertKind::TopOfEachGroup, Some(j), InsertBasis::CreationTimeInGroups, Some(r));
                break;
            }
        }
    }
    let server_increasing = server.kind == MonotonicityType::Monotonic;
    let ours_one_end = matches!(kind, InsertKind::Increasing | InsertKind::Decreasing);
    InsertOrder {
        kind,
        group_fields,
        basis,
        creation_time_correlation_coefficient: coef,
        group_creation_time_correlation_coefficient: group_coef,
        num_docs_with_creation_time: with_time,
        increasing_by_nature,
        load_order_hides_it: ours_one_end && !server_increasing && server.kind != MonotonicityType::Unknown,
        inserts_in_workload: InsertEvidence::AssumedNoQueries,
    }
}

/// Without documents: only the value types the queries name can speak (dates, timestamps
/// and ObjectIds are increasing by nature); otherwise the insert order is unknown.
pub(crate) fn from_query_values(key: &ShardKey, named: &KeySpace) -> InsertOrder {
    let natural = natural_fields(key, named);
    let hashed_first = key.fields.first().is_some_and(|f| f.kind == KeyKind::Hashed);
    let (kind, group_fields, basis) = match (hashed_first, natural.first()) {
        (true, _) => (InsertKind::Spread, None, InsertBasis::HashedFirstField),
        (false, Some(&(0, _))) => (InsertKind::Increasing, None, InsertBasis::ValueType),
        (false, Some(&(j, _))) => (InsertKind::TopOfEachGroup, Some(j), InsertBasis::ValueType),
        (false, None) => (InsertKind::Unknown, None, InsertBasis::NotMeasured),
    };
    InsertOrder {
        kind,
        group_fields,
        basis,
        creation_time_correlation_coefficient: None,
        group_creation_time_correlation_coefficient: None,
        num_docs_with_creation_time: 0,
        increasing_by_nature: natural.iter().map(|&(i, t)| NaturalField { field: key.fields[i].path.clone(), bson_type: t }).collect(),
        load_order_hides_it: false,
        inserts_in_workload: InsertEvidence::AssumedNoQueries,
    }
}

fn direction(r: f64) -> InsertKind {
    if r.abs() < monotonicity::THRESHOLD {
        InsertKind::Spread
    } else if r < 0.0 {
        InsertKind::Decreasing
    } else {
        InsertKind::Increasing
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    fn oid_at(secs: u32) -> bson::oid::ObjectId {
        let mut b = [0u8; 12];
        b[..4].copy_from_slice(&secs.to_be_bytes());
        bson::oid::ObjectId::from_bytes(b)
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
            let key = ShardKey::parse("{tenantId: 1, ref: 1}").unwrap();
            let mut ks = KeySample::with_budget(key.clone(), if dense { 1 << 20 } else { 0 }, 100_000, 500);
            let mut created = Vec::new();
            for i in 0..1000u32 {
                let t = 1_700_000_000 + i * 60;
                ks.add(&doc! {"_id": oid_at(t), "tenantId": format!("t{}", i % 7), "ref": reference(i)});
                created.push(t);
            }
            ks.finish();
            let server = monotonicity::measure(&key, &ks.insertion_positions_in_key_order(), false);
            let p = ks.insertion_positions_in_key_order();
            measure(&ks, &|| p.as_slice(), &created, &server, &ks.key_space_values())
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
            let key = ShardKey::parse("{tenantId: 1, ticketNo: 1}").unwrap();
            let mut ks = KeySample::with_budget(key.clone(), 1 << 20, 100_000, 500);
            let mut created = Vec::new();
            for i in 0..2_100u32 {
                let t = 1_700_000_000 + i;
                ks.add(&doc! {"_id": oid_at(t), "tenantId": format!("t{}", i % 7), "ticketNo": number(i)});
                created.push(t);
            }
            ks.finish();
            let server = monotonicity::measure(&key, &ks.insertion_positions_in_key_order(), false);
            let p = ks.insertion_positions_in_key_order();
            measure(&ks, &|| p.as_slice(), &created, &server, &ks.key_space_values())
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
        let created: Vec<u32> =
            (0..30_000u32).map(|i| if i < 27_000 { 1_700_000_000 } else { 1_700_001_000 + (i - 27_000) / 10 }).collect();
        let in_key_order: Vec<u64> = (0..30_000).collect();
        assert_eq!(creation_time_correlation(&in_key_order, &created), (Some(1.0), 30_000));
        let reversed: Vec<u64> = (0..30_000).rev().collect();
        assert_eq!(creation_time_correlation(&reversed, &created).0, Some(-1.0));
        // The seconds alone, as before: 0.5204878477.
        let seconds: Vec<u32> = in_key_order.iter().map(|&p| created[p as usize]).collect();
        assert_eq!(monotonicity::pearson_with_index(&seconds).map(|r| (r * 1e10).round() / 1e10), Some(0.5204878477));
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
}
