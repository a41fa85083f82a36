//! Hot documents: a few documents taking much of the sampled writes (counters bumped by
//! `_id`). No shard key splits one document: every write to it runs on the one shard that
//! holds it, whatever the key. Counted on single-document writes that fix `_id` by equality.

use crate::bsonx::group_bytes;
use crate::model::{KeyKind, Op, Query, ShardKey};
use crate::targeting::extract_key_by_equality;
use bson::Bson;
use serde::Serialize;
use std::collections::HashMap;

/// A document this share of sampled writes (or more) goes to is hot.
pub(crate) const HOT_SHARE: f64 = 0.05;
/// And at least this many sampled writes.
const MIN_WRITES: u64 = 10;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HotDocument {
    /// Its `_id`, as the filters give it.
    #[serde(skip)]
    pub(crate) id: Bson,
    pub(crate) writes: u64,
    pub(crate) percent_of_writes: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HotDocuments {
    pub(crate) num_writes: u64,
    /// Most of their writes return what they write (findAndModify: a sequence handing out
    /// the next number), which a split into parts summed on read would break.
    pub(crate) sequences: bool,
    /// Most written first.
    pub(crate) documents: Vec<HotDocument>,
    /// Their writes together, of all sampled writes.
    pub(crate) percent_of_writes: f64,
}

/// The documents that take `HOT_SHARE` of the sampled writes or more; None when none does.
/// `redact`: their `_id`s as type and hash (`--redact`).
pub(crate) fn measure(queries: &[&Query], redact: bool) -> Option<HotDocuments> {
    let id = ShardKey::single("_id", KeyKind::Range);
    let writes: Vec<&&Query> = queries.iter().filter(|q| !q.op.is_read() && q.op != Op::Insert).collect();
    let n = writes.len() as u64;
    // Per document: its _id, its writes, and how many of them return the value (findAndModify).
    let mut by_id: HashMap<Vec<u8>, (Bson, u64, u64)> = HashMap::new();
    for q in writes.iter().filter(|q| !q.multi) {
        let Some(v) = extract_key_by_equality(&id, &q.filter, q.let_vars.as_ref()) else { continue };
        let mut b = Vec::new();
        group_bytes(&v[0], &mut b);
        let e = by_id.entry(b).or_insert_with(|| (v[0].clone(), 0, 0));
        e.1 += 1;
        e.2 += (q.op == Op::FindAndModify) as u64;
    }
    let pct = |c: u64| (c as f64 * 1000.0 / n.max(1) as f64).round() / 10.0;
    let hot_docs: Vec<(Bson, u64, u64)> =
        by_id.into_values().filter(|(_, c, _)| *c >= MIN_WRITES && *c as f64 >= HOT_SHARE * n as f64).collect();
    let returning: u64 = hot_docs.iter().map(|h| h.2).sum();
    let mut hot: Vec<HotDocument> = hot_docs
        .into_iter()
        .map(|(id, writes, _)| HotDocument {
            id: if redact { crate::bsonx::redact::redact(&id) } else { id },
            writes,
            percent_of_writes: pct(writes),
        })
        .collect();
    if hot.is_empty() {
        return None;
    }
    hot.sort_by(|a, b| b.writes.cmp(&a.writes).then_with(|| crate::bsonx::cmp_bson(&a.id, &b.id)));
    let total = hot.iter().map(|h| h.writes).sum();
    Some(HotDocuments { num_writes: n, sequences: returning * 2 > total, percent_of_writes: pct(total), documents: hot })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::QueryOrigin;
    use bson::doc;

    /// Ticket numbers handed out by findAndModify {$inc} on one counter per tenant: hot, and
    /// a sequence (all 30 of its writes return the value), which no split fixes.
    #[test]
    fn a_sequence_handed_out_by_find_and_modify_is_said() {
        let next = |id: &str| Query::new(Op::FindAndModify, "a.counters", doc! {"_id": id}, QueryOrigin::Profiler);
        let qs: Vec<Query> = (0..30).map(|_| next("ticket")).collect();
        let refs: Vec<&Query> = qs.iter().collect();
        let h = measure(&refs, false).unwrap();
        assert!(h.sequences);
        let upd: Vec<Query> = (0..30).map(|_| Query::new(Op::Update, "a.c", doc! {"_id": "views"}, QueryOrigin::Profiler)).collect();
        let refs: Vec<&Query> = upd.iter().collect();
        assert!(!measure(&refs, false).unwrap().sequences);
    }

    #[test]
    fn counters_written_by_id_are_hot() {
        let upd = |id: &str| Query::new(Op::Update, "a.c", doc! {"_id": id}, QueryOrigin::Profiler);
        let mut qs: Vec<Query> = Vec::new();
        for (id, n) in [("pageviews", 40), ("signups", 25), ("errors", 5)] {
            qs.extend((0..n).map(|_| upd(id)));
        }
        qs.extend((0..30).map(|i| upd(&format!("u{i}"))));
        qs.push(Query::new(Op::Find, "a.c", doc! {"_id": "pageviews"}, QueryOrigin::Profiler));
        let refs: Vec<&Query> = qs.iter().collect();
        let h = measure(&refs, false).unwrap();
        // 100 writes: pageviews 40, signups 25; errors (5 writes) is under MIN_WRITES.
        assert_eq!(h.num_writes, 100);
        let got: Vec<(&Bson, u64, f64)> = h.documents.iter().map(|d| (&d.id, d.writes, d.percent_of_writes)).collect();
        assert_eq!(got, vec![(&Bson::String("pageviews".into()), 40, 40.0), (&Bson::String("signups".into()), 25, 25.0)]);
        assert_eq!(h.percent_of_writes, 65.0);
        assert!(measure(&refs[70..], false).is_none(), "one write per document");
        let redacted = measure(&refs, true).unwrap();
        assert!(!format!("{:?}", redacted.documents).contains("pageviews"));
    }
}
