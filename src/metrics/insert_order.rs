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

/// Documents a reference is judged on at most (its r within about ±0.05 at 2,000).
const TIMED_VALUES: usize = 2_000;

/// (the time key field `field`'s value carries, the document's creation time), in seconds,
/// over `values` (insertion position, key value), for the documents carrying both.
fn reference_time_pairs(values: &[(u64, Vec<Bson>)], field: usize, created: &[u32]) -> Vec<(f64, f64)> {
    values
        .iter()
        .filter_map(|(p, v)| {
            let c = created.get(*p as usize).copied().filter(|&c| c != NO_CREATION_TIME)?;
            Some((crate::bsonx::time_seconds(v.get(field)?)?, c as f64))
        })
        .collect()
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
    let order = CreationOrder::of(created);
    // Sized once: grown by doubling, each copy landed on fresh pages.
    let mut times: Vec<u64> = Vec::with_capacity(positions_in_key_order.len());
    times.extend(positions_in_key_order.iter().filter_map(|&p| order.key(p)));
    let n = times.len() as u64;
    (correlation_of_ranks(&times).map(monotonicity::round10), n)
}

/// A document's place in creation order as one number: (seconds since the first creation
/// time) × positions + its sample position, so documents created in one second follow their
/// insertion position.
struct CreationOrder<'a> {
    created: &'a [u32],
    first: u32,
    span: u64,
}

impl<'a> CreationOrder<'a> {
    fn of(created: &'a [u32]) -> Self {
        let first = created.iter().copied().filter(|&t| t != NO_CREATION_TIME).min().unwrap_or(0);
        CreationOrder { created, first, span: created.len() as u64 + 1 }
    }

    /// None for a document without a creation time.
    fn key(&self, position: u64) -> Option<u64> {
        let t = self.created.get(position as usize).copied().filter(|&t| t != NO_CREATION_TIME)?;
        Some((t - self.first) as u64 * self.span + position)
    }
}

/// Pearson correlation of each value's rank (distinct values: no ties) with its index.
fn correlation_of_ranks(values: &[u64]) -> Option<f64> {
    let mut by_value: Vec<u32> = (0..values.len() as u32).collect();
    by_value.sort_unstable_by_key(|&i| values[i as usize]);
    let mut ranks = vec![0u32; values.len()];
    for (rank, &i) in by_value.iter().enumerate() {
        ranks[i as usize] = rank as u32;
    }
    monotonicity::pearson_with_index(&ranks)
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
    let order = CreationOrder::of(created);
    let (mut weighted, mut weight, mut timed) = (0.0, 0usize, 0usize);
    let mut group: Vec<u64> = Vec::new();
    let mut close = |group: &mut Vec<u64>| {
        timed += group.len();
        if group.len() >= GROUP_MIN_DOCS {
            if let Some(r) = correlation_of_ranks(group) {
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
        group.extend(positions_in_key_order[at..at + n].iter().filter_map(|&p| order.key(p)));
        at += n;
    }
    close(&mut group);
    (weight > 0 && weight * 2 >= timed).then(|| monotonicity::round10(weighted / weight as f64))
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
        !crate::util::stats::measured_not_to_follow(&reference_time_pairs(values, i, created))
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
#[path = "insert_order_tests.rs"]
mod tests;
