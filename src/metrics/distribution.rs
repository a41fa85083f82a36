//! readDistribution / writeDistribution with analyzeShardKey's names and rules.

use super::key_updates::{diff_touches_key, touches_key, update_touches_key};
use super::ranges::Ranges;
use crate::model::{Op, Query, QueryOrigin, ShardKey, UpdateSpec};
use crate::targeting::{target_query_with, Equalities, Label, Targeting};
use bson::Document;
use serde::Serialize;

/// The server rounds percentages up at the 10th decimal.
pub(crate) fn percentage(part: u64, total: u64) -> f64 {
    if total == 0 {
        return 0.0;
    }
    (part as f64 * 100.0 / total as f64 * 1e10).ceil() / 1e10
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ReadSampleSize {
    pub(crate) total: u64,
    pub find: u64,
    pub(crate) aggregate: u64,
    pub(crate) count: u64,
    pub(crate) distinct: u64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct WriteSampleSize {
    pub total: u64,
    pub update: u64,
    pub delete: u64,
    #[serde(rename = "findAndModify")]
    pub find_and_modify: u64,
    /// Beyond the server: inserts seen in the logs (not in `total`, which follows the server).
    pub insert: u64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ReadDistribution {
    pub sample_size: ReadSampleSize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) percentage_of_single_shard_reads: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) percentage_of_multi_shard_reads: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) percentage_of_scatter_gather_reads: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub num_reads_by_range: Vec<u64>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct WriteDistribution {
    pub sample_size: WriteSampleSize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentage_of_single_shard_writes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) percentage_of_multi_shard_writes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentage_of_scatter_gather_writes: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub num_writes_by_range: Vec<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentage_of_shard_key_updates: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentage_of_single_writes_without_shard_key: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentage_of_multi_writes_without_shard_key: Option<f64>,
}

/// The writes that do not carry the shard key, by what a sharded cluster does with each, as
/// percentages of sampled writes (mongodb/mongo 04bbde76e64e9764acd93434732f108940d681c2
/// src/mongo/s/write_ops/write_without_shard_key_util.cpp `useTwoPhaseProtocol`: only a
/// single write asks; updateOne and deleteOne by an exact `_id` without upsert are not two-phase).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct WritesWithoutKey {
    /// updateMany, deleteMany: sent to every shard their filter may match on every version
    /// (every shard without a prefix of the key), never refused.
    pub(crate) multi: f64,
    /// updateOne or deleteOne by an exact `_id` (no upsert): sent to every shard its filter
    /// may match on every version (`_id` is unique), never refused, never two-phase.
    pub(crate) single_by_id: f64,
    /// Of `single_by_id`, those that change the shard key value: the `_id` does not fix the
    /// whole key, so each fails with 31025 on every version (never a two-phase write) (`rules::write_targeting`).
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) single_by_id_changing_key: f64,
    /// Every other single write (findAndModify by `_id` included): refused before 7.1
    /// (ShardKeyNotFound), 7.1+ a broadcast read then the targeted write.
    pub(crate) single_other: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// Counts behind the two distributions, accumulated query by query.
#[derive(Debug, Clone, Default)]
pub struct DistributionCounter {
    reads: ReadSampleSize,
    writes: WriteSampleSize,
    read_labels: [u64; 3],
    write_labels: [u64; 3],
    reads_by_range: Vec<u64>,
    writes_by_range: Vec<u64>,
    shard_key_updates: u64,
    single_without_key: u64,
    /// Of `single_without_key`: updateOne/deleteOne by an exact `_id`, not upserts.
    single_by_id_without_key: u64,
    single_by_id_changing_key: u64,
    multi_without_key: u64,
}

fn slot(l: Label) -> usize {
    match l {
        Label::SingleShard => 0,
        Label::MultiShard => 1,
        Label::ScatterGather => 2,
    }
}

impl DistributionCounter {
    pub fn new(ranges: &Ranges) -> Self {
        DistributionCounter { reads_by_range: vec![0; ranges.len()], writes_by_range: vec![0; ranges.len()], ..Default::default() }
    }

    /// Count one query; returns its targeting (None for inserts, which the server does not sample).
    pub fn add(&mut self, key: &ShardKey, q: &Query, default_collation: Option<&Document>, ranges: &Ranges) -> Option<Targeting> {
        self.add_with(key, q, &Equalities::of(&q.filter, q.let_vars.as_ref()), default_collation, ranges)
    }

    /// `add`, with `eqs` the query's filter's equalities, gathered once for every key.
    pub(crate) fn add_with(
        &mut self,
        key: &ShardKey,
        q: &Query,
        eqs: &Equalities,
        default_collation: Option<&Document>,
        ranges: &Ranges,
    ) -> Option<Targeting> {
        if q.op == Op::Insert {
            // One per command, however many documents it carries (as `workload` counts).
            self.writes.insert += 1;
            return None;
        }
        let t = target_query_with(key, q, default_collation, eqs);
        // Whether the update changes the key: asked at most once, from the equalities
        // already gathered (the same as the filter's own without `let` variables).
        let changes_key = std::cell::OnceCell::new();
        let changes_key = |u: &UpdateSpec| {
            *changes_key.get_or_init(|| match q.let_vars {
                None => touches_key(key, u, || eqs.key_values(key)),
                Some(_) => update_touches_key(key, &q.filter, u),
            })
        };
        if q.op.is_read() {
            self.reads.total += 1;
            match q.op {
                Op::Find => self.reads.find += 1,
                Op::Aggregate => self.reads.aggregate += 1,
                Op::Count => self.reads.count += 1,
                _ => self.reads.distinct += 1,
            }
            self.read_labels[slot(t.label)] += 1;
            ranges.count(&t.touched, &mut self.reads_by_range);
        } else {
            self.writes.total += 1;
            match q.op {
                Op::Update => self.writes.update += 1,
                Op::Delete => self.writes.delete += 1,
                _ => self.writes.find_and_modify += 1,
            }
            self.write_labels[slot(t.label)] += 1;
            ranges.count(&t.touched, &mut self.writes_by_range);
            // Any write not single-shard is a write without shard key, an equality on the
            // whole key included when a non-simple collation spreads it (mongodb/mongo
            // e443421 analyze_shard_key_read_write_distribution_test.cpp).
            if t.label != Label::SingleShard {
                // findAndModify is always a single (non-multi) write.
                if q.multi && q.op != Op::FindAndModify {
                    self.multi_without_key += 1;
                } else {
                    self.single_without_key += 1;
                    let by_id =
                        !q.upsert && matches!(q.op, Op::Update | Op::Delete) && eqs.exact_id(q.collation.as_ref(), default_collation);
                    self.single_by_id_without_key += by_id as u64;
                    if by_id && q.update.as_ref().is_some_and(changes_key) {
                        self.single_by_id_changing_key += 1;
                    }
                }
            }
            // Sampled queries carry their key updates in separate diff documents.
            if q.origin != QueryOrigin::SampledQueries {
                if let Some(u) = &q.update {
                    if changes_key(u) {
                        self.shard_key_updates += 1;
                    }
                }
            }
        }
        Some(t)
    }

    /// Count one `config.sampledQueriesDiff` document.
    pub fn add_diff(&mut self, key: &ShardKey, diff: &Document) {
        if diff_touches_key(key, diff) {
            self.shard_key_updates += 1;
        }
    }

    /// The writes without the shard key by kind; None without sampled writes.
    pub(crate) fn writes_without_key(&self) -> Option<WritesWithoutKey> {
        let n = self.writes.total;
        (n > 0).then(|| WritesWithoutKey {
            multi: percentage(self.multi_without_key, n),
            single_by_id: percentage(self.single_by_id_without_key, n),
            single_by_id_changing_key: percentage(self.single_by_id_changing_key, n),
            single_other: percentage(self.single_without_key - self.single_by_id_without_key, n),
        })
    }

    pub fn read_distribution(&self) -> ReadDistribution {
        let n = self.reads.total;
        let mut d = ReadDistribution { sample_size: self.reads.clone(), ..Default::default() };
        if n > 0 {
            d.percentage_of_single_shard_reads = Some(percentage(self.read_labels[0], n));
            d.percentage_of_multi_shard_reads = Some(percentage(self.read_labels[1], n));
            d.percentage_of_scatter_gather_reads = Some(percentage(self.read_labels[2], n));
            d.num_reads_by_range = self.reads_by_range.clone();
        }
        d
    }

    pub fn write_distribution(&self) -> WriteDistribution {
        let n = self.writes.total;
        let mut d = WriteDistribution { sample_size: self.writes.clone(), ..Default::default() };
        if n > 0 {
            d.percentage_of_single_shard_writes = Some(percentage(self.write_labels[0], n));
            d.percentage_of_multi_shard_writes = Some(percentage(self.write_labels[1], n));
            d.percentage_of_scatter_gather_writes = Some(percentage(self.write_labels[2], n));
            d.num_writes_by_range = self.writes_by_range.clone();
            d.percentage_of_shard_key_updates = Some(percentage(self.shard_key_updates, n));
            d.percentage_of_single_writes_without_shard_key = Some(percentage(self.single_without_key, n));
            d.percentage_of_multi_writes_without_shard_key = Some(percentage(self.multi_without_key, n));
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_up_at_the_tenth_decimal() {
        assert_eq!(percentage(1, 3), 33.3333333334);
        assert_eq!(percentage(2, 3), 66.6666666667);
        assert_eq!(percentage(0, 0), 0.0);
        assert_eq!(percentage(5, 5), 100.0);
    }

    /// `useTwoPhaseProtocol` (mongodb/mongo 04bbde76e64e9764acd93434732f108940d681c2
    /// write_without_shard_key_util.cpp): multi writes never ask; updateOne/deleteOne with an
    /// exact `_id` and no upsert return false; findAndModify (not update-or-delete) and
    /// upserts by `_id` do not take that exit.
    #[test]
    fn writes_without_the_key_by_what_the_cluster_does() {
        use crate::model::{KeyKind, QueryOrigin};
        use bson::doc;
        let key = ShardKey::single("accountId", KeyKind::Range);
        let q = |op, f: Document| Query::new(op, "a.b", f, QueryOrigin::Profiler);
        let writes = [
            Query { multi: true, ..q(Op::Delete, doc! {"ts": {"$lt": 5}}) },
            Query { multi: true, ..q(Op::Update, doc! {"status": "x"}) },
            q(Op::Update, doc! {"_id": 1}),
            q(Op::Delete, doc! {"_id": 2, "x": {"$gt": 0}}),
            q(Op::FindAndModify, doc! {"_id": 3}),
            Query { upsert: true, ..q(Op::Update, doc! {"_id": 4}) },
            q(Op::Update, doc! {"email": "e"}),
            // Carries the key: not counted.
            q(Op::Update, doc! {"accountId": 7}),
        ];
        let ranges = Ranges::cut(&crate::model::KeySpace::default(), 0);
        let mut c = DistributionCounter::new(&ranges);
        for w in &writes {
            c.add(&key, w, None, &ranges);
        }
        let w = c.writes_without_key().unwrap();
        assert_eq!((w.multi, w.single_by_id, w.single_other), (25.0, 25.0, 37.5));
        let d = c.write_distribution();
        assert_eq!(d.percentage_of_multi_writes_without_shard_key, Some(25.0));
        assert_eq!(d.percentage_of_single_writes_without_shard_key, Some(62.5));
    }
}
