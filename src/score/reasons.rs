//! Every reason the score gives, as a typed value: `score()` decides which apply and with
//! what numbers; the words live here, in `Display`, and nowhere else. The JSON carries the
//! words (`reasons` is a list of strings), so a reason serialises as its text.

use crate::metrics::cardinality::DistinctRange;
use crate::metrics::cluster::{useful_shards_words, Growth};
use crate::metrics::distribution::WritesWithoutKey;
use crate::util::text::{fmt_count, mib};
use serde::Serialize;
use std::fmt;

/// "1 shard", "1,200 shards".
fn noun(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", fmt_count(n), if n == 1 { one } else { many })
}

/// One sentence of a candidate's `reasons`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reason {
    /// A sampled document holds an array in a key field: the server refuses the key.
    ArrayInKey {
        docs: u64,
    },
    /// No sampled operation on the collection: fan-out and load are not measured and count 0.
    NoQuerySample,
    /// The sampled operations on the collection are all inserts: nothing to target, so
    /// fan-out and load are not measured and count 0 (for every key alike).
    OnlyInsertsSampled,
    /// How the sampled operations reach the shards under the model.
    Targeting(Targeting),
    /// The collection's non-simple default collation keeps these operations from one shard.
    CollationSpread {
        locale: String,
        operations: u64,
        of: u64,
    },
    /// Writes that do not carry the shard key (20% or more of them).
    WritesWithoutShardKey {
        percent: f64,
        writes: u64,
        /// By what the cluster does with each; None when not split (the parts are then unknown).
        by: Option<WritesWithoutKey>,
    },
    /// Writes that change the key's value: the document moves.
    ShardKeyUpdates {
        percent: f64,
        /// Their share of all sampled operations (0..1).
        of_operations: f64,
        /// Percent of sampled writes among them that are updateOne by `_id` without the whole
        /// key: refused on every version (31025, `rules::write_targeting`), they move nothing.
        refused_by_id: f64,
    },
    /// Queries only: cardinality, frequency and data spread were not measured.
    CharacteristicsNotMeasured,
    /// Queries only: the key's first field takes few values in the filters (Chao1 over how
    /// often each is named, a lower bound of the field's cardinality).
    FewValuesInQueries {
        named: u64,
        estimate: u64,
    },
    /// `distinct`: the count judged (the lower end); `range`: the estimate when not exact.
    LowCardinality {
        distinct: u64,
        range: Option<DistinctRange>,
    },
    /// A hashed field holds doubles with fractions: truncated to 64-bit integers before
    /// hashing, many values share a hashed value (manual "Hashed Indexes"; `hash64`).
    HashedDoublesTruncated {
        field: String,
        doubles: u64,
        before: u64,
        hashed: u64,
    },
    /// Enough distinct values, but growth stops early (`useful_shards_words`).
    LimitedGrowth {
        distinct: u64,
        range: Option<DistinctRange>,
        growth: Growth,
    },
    HighCardinality {
        distinct: u64,
        range: Option<DistinctRange>,
    },
    /// The top value's share of documents (10% or more); `value` as printed.
    /// `share`: the share judged (its 95% interval's upper end for a sample); `in_sample`:
    /// the sample's own share when it differs.
    HotValue {
        value: String,
        share: f64,
        in_sample: Option<f64>,
    },
    Jumbo {
        value: String,
        docs: u64,
        bytes: u64,
        range_bytes: u64,
        values_at_risk: usize,
    },
    MissingKeyFields {
        docs: u64,
        share: f64,
    },
    /// At scale the busiest shard holds more than twice its even share of the data.
    DataConcentrated {
        shards: usize,
        share: f64,
    },
    /// Every insert at one end of the key space.
    InsertsAtOneEnd {
        decreasing: bool,
        witness: Witness,
        share: f64,
        /// The inserts' share of operations, when the queries show inserts.
        of_operations: Option<f64>,
        /// What the inserts rest on: said when they are assumed.
        assumed: crate::metrics::insert_order::InsertEvidence,
        /// Sampled operations (reads and writes), for those words.
        operations: u64,
    },
    /// The sampled operations hold no insert: where an increasing (decreasing) key would
    /// put them is not judged.
    InsertsNotJudged {
        operations: u64,
        decreasing: bool,
    },
    /// One shard takes more than twice its even share of operations at scale.
    BusiestShard {
        shards: usize,
        share: f64,
        /// That shard's share of the data (documents only).
        data_share: Option<f64>,
        /// Its operations over the mean shard's.
        over_mean: f64,
        ops: u64,
        /// Hot documents were found (`HotDocuments`): they, not a key range, make the hot spot.
        hot_documents: bool,
    },
    /// A few documents take much of the sampled writes: (short `_id`, % of writes) each.
    HotDocuments {
        ids: Vec<(String, f64)>,
        percent: f64,
        writes: u64,
        /// Most of their writes hand out the value they write (a sequence).
        sequences: bool,
    },
    /// Queries only: a later key field is increasing by nature.
    TopOfEachGroupByNature {
        plural: bool,
        fields: Vec<String>,
    },
    TopOfEachGroup {
        plural: bool,
        witness: Witness,
        taking: usize,
        shards: usize,
        share: f64,
    },
    /// Queries only, hashed first field.
    HashedSpread,
    InsertsSpread {
        taking: usize,
        shards: usize,
        share: f64,
        why: Spread,
    },
    /// What a validity rule found (`crate::rules`), in its own words.
    Constraint(crate::rules::Finding),
}

/// What the sampled operations reach, for `Reason::Targeting`.
#[derive(Debug, Clone, PartialEq)]
pub struct Targeting {
    pub(crate) shards: usize,
    pub(crate) single_percent: f64,
    pub(crate) ops: u64,
    pub(crate) mean_per_read: Option<f64>,
    /// The server's multi-shard label share of reads, when above 0.
    pub(crate) server_multi_reads: Option<f64>,
    pub(crate) mean_per_write: Option<f64>,
    pub(crate) to_every_shard_percent: f64,
}

/// What tells where inserts land, in the words of `Reason::InsertsAtOneEnd` and friends.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Witness {
    /// The creation time of ObjectId `_id`s; `hidden_by_load` is the server's recordId
    /// coefficient when the load order hides the order.
    CreationTime {
        r: f64,
        hidden_by_load: Option<f64>,
    },
    RecordId {
        r: f64,
    },
    /// Key order follows creation order within each group of the leading fields.
    CreationTimeInGroups {
        r: f64,
    },
    /// (field, type) of fields increasing by nature.
    ValueType(Vec<(String, &'static str)>),
    None,
}

/// Why inserts spread, for `Reason::InsertsSpread`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Spread {
    Hashed,
    By(Witness),
}

impl fmt::Display for Witness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Witness::CreationTime { r, hidden_by_load } => {
                write!(f, "correlation {r:.2} with the creation time of the ObjectId _ids")?;
                if let Some(rid) = hidden_by_load {
                    write!(f, "; the load order hides it (recordId correlation {rid:.2})")?;
                }
                Ok(())
            }
            Witness::RecordId { r } => write!(f, "correlation {r:.2} with insertion order"),
            Witness::CreationTimeInGroups { r } => {
                write!(f, "within each group, correlation {r:.2} with the creation order of the ObjectId _ids")
            }
            Witness::ValueType(fields) => {
                let t: Vec<String> = fields.iter().map(|(field, ty)| format!("{field} holds {ty}s")).collect();
                write!(f, "{}: increasing by nature", t.join(", "))
            }
            Witness::None => Ok(()),
        }
    }
}

/// "1 shard", "4 shards".
fn shards_word(n: usize) -> String {
    crate::util::text::count_of(n as u64, "shard", "shards")
}

fn s_if(plural: bool) -> &'static str {
    if plural {
        "s"
    } else {
        ""
    }
}

impl Reason {
    /// Whether the reason warns (a cost, a risk, something unmeasured) rather than says what
    /// works: the report's summary leads with the first warning of the recommended key.
    pub(crate) fn is_warning(&self) -> bool {
        !matches!(
            self,
            Reason::Targeting(_)
                | Reason::OnlyInsertsSampled
                | Reason::HighCardinality { .. }
                | Reason::HashedSpread
                | Reason::InsertsSpread { .. }
                | Reason::TopOfEachGroup { .. }
                | Reason::TopOfEachGroupByNature { .. }
        )
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::ArrayInKey { docs } => write!(
                f,
                "{} sampled documents hold an array in a key field: MongoDB refuses such a shard key (BadValue)",
                fmt_count(*docs)
            ),
            Reason::CollationSpread { locale, operations, of } => write!(
                f,
                "the collection's default collation ({locale}) keeps {} of {} sampled operations from one shard: under a collation other than simple an equality on a string does not target one shard (chunks are ranges of the simple collation); they would reach one if run with collation {{locale: \"simple\"}}, or with a key on a non-string field",
                fmt_count(*operations),
                fmt_count(*of)
            ),
            Reason::NoQuerySample => f.write_str(
                "targeting not measured: no sampled operation on this collection, so fan-out and load count 0 (give a slow-query log, the profiler or sampled queries)",
            ),
            Reason::OnlyInsertsSampled => f.write_str(
                "targeting not measured: the sampled operations on this collection are all inserts (no read, update or delete to reach one shard), so fan-out and load count 0 for every key",
            ),
            Reason::Targeting(t) => {
                write!(f, "with {}, {:.1}% of {} sampled operations reach one shard", shards_word(t.shards), t.single_percent, fmt_count(t.ops))?;
                if let Some(r) = t.mean_per_read {
                    write!(f, "; a read reaches {r:.2} shards on average")?;
                    if let Some(m) = t.server_multi_reads {
                        write!(f, " (the server labels {m:.1}% of reads multi-shard whatever they reach)")?;
                    }
                }
                if let Some(w) = t.mean_per_write {
                    write!(f, ", a write {w:.2}")?;
                }
                if t.to_every_shard_percent > 0.0 {
                    write!(f, "; {:.1}% go to every shard", t.to_every_shard_percent)?;
                }
                Ok(())
            }
            Reason::WritesWithoutShardKey { percent, writes, by } => {
                write!(f, "{percent:.1}% of {} sampled writes do not carry the shard key", fmt_count(*writes))?;
                let Some(by) = by else { return Ok(()) };
                // mongodb/mongo 04bbde7 write_without_shard_key_util.cpp `useTwoPhaseProtocol`.
                let parts = [
                    // Not carrying the whole key is not broadcast: mongos sends such a write to
                    // the shards whose ranges its filter may match (every one without a prefix).
                    (by.multi, "updateMany/deleteMany (every version sends them to each shard their filter may match, every shard when it fixes no prefix of the key; refused only when they change the key)"),
                    (by.single_by_id - by.single_by_id_changing_key, "updateOne/deleteOne by _id (sent to each shard the filter may match, every shard when it fixes no prefix of the key; never refused, never two-phase)"),
                    // rules::write_targeting: a key value change without the whole key (31025); an
                    // updateOne by _id is never a two-phase write, so no version accepts it.
                    (by.single_by_id_changing_key, "updateOne by _id that changes the shard key value (refused on every version, error 31025: the filter must fix the whole key; an updateOne by _id is never a two-phase write)"),
                    (by.single_other, "other single writes (refused before 7.1; 7.1+ a broadcast read then the write)"),
                ];
                let said: Vec<String> = parts.iter().filter(|(p, _)| *p > 0.0).map(|(p, w)| format!("{p:.1}% {w}")).collect();
                if !said.is_empty() {
                    write!(f, ": {}", said.join("; "))?;
                }
                Ok(())
            }
            Reason::ShardKeyUpdates { percent, of_operations, refused_by_id } => {
                write!(f, "{percent:.1}% of sampled writes change the shard key: ")?;
                if *refused_by_id > 0.0 {
                    write!(f, "{refused_by_id:.1}% by _id without the whole key, which every version refuses (error 31025: an updateOne by _id is never a two-phase write, so the filter must fix the whole key); otherwise ")?;
                }
                write!(
                    f,
                    "each moves its document to another shard in a distributed transaction ({:.1}% of operations; fan-out counts that share as 0)",
                    of_operations * 100.0
                )
            }
            Reason::CharacteristicsNotMeasured => write!(
                f,
                "key characteristics not measured: {}; data spread and growth count 0",
                crate::metrics::characteristics::NOT_MEASURED
            ),
            Reason::FewValuesInQueries { named, estimate } => write!(
                f,
                "low cardinality as far as the queries show: their filters name {} values of the key's most varied field (about {} by Chao1, a lower bound of the key's); treated as low cardinality until documents show more",
                fmt_count(*named),
                fmt_count(*estimate)
            ),
            Reason::LowCardinality { distinct, range: None } => write!(
                f,
                "low cardinality: only {}; one value is the smallest unit the balancer can move, so at most {} can ever hold data",
                noun(*distinct, "distinct value", "distinct values"),
                noun(*distinct, "shard", "shards")
            ),
            Reason::LowCardinality { distinct, range: Some(r) } => write!(
                f,
                "low cardinality: only {} in the sample, {}; one value is the smallest unit the balancer can move, so few shards can ever hold data",
                noun(*distinct, "distinct value", "distinct values"),
                range_words(r)
            ),
            Reason::HashedDoublesTruncated { field, doubles, before, hashed } => write!(
                f,
                "float trap: {field} holds {} doubles with fractions; a hashed index truncates each to a 64-bit integer before hashing, so its {} distinct values are {}: hash an integer field, or the value scaled to an integer",
                fmt_count(*doubles),
                fmt_count(*before),
                noun(*hashed, "hashed value", "hashed values")
            ),
            Reason::LimitedGrowth { distinct, range, growth } => {
                match range {
                    Some(r) => write!(f, "{}", range_words(r))?,
                    // No range: every document was read and counted, the count is exact.
                    None => write!(f, "{}", noun(*distinct, "distinct value", "distinct values"))?,
                }
                match useful_shards_words(growth) {
                    Some(w) => write!(f, "; {w}"),
                    None => Ok(()),
                }
            }
            Reason::HighCardinality { distinct, range: None } => {
                write!(f, "high cardinality: {}", noun(*distinct, "distinct value", "distinct values"))
            }
            Reason::HighCardinality { range: Some(r), .. } => write!(f, "high cardinality: {}", range_words(r)),
            Reason::HotValue { value, share, in_sample: None } => {
                write!(f, "hot value: {value} holds {:.1}% of documents; they stay together on one shard", share * 100.0)
            }
            Reason::HotValue { value, share, in_sample: Some(s) } => write!(
                f,
                "hot value: {value} holds {:.1}% of sampled documents, up to {:.1}% of the collection (95% interval, judged on its upper end); they stay together on one shard",
                s * 100.0,
                share * 100.0
            ),
            Reason::Jumbo { value, docs, bytes, range_bytes, values_at_risk } => {
                write!(
                    f,
                    "jumbo chunk: value {value} would hold about {} documents ({}), more than the {} range size; such a chunk cannot be split or moved",
                    fmt_count(*docs),
                    mib(*bytes),
                    mib(*range_bytes)
                )?;
                if *values_at_risk > 1 {
                    write!(f, " ({values_at_risk} values at risk)")?;
                }
                Ok(())
            }
            Reason::MissingKeyFields { docs, share } => write!(
                f,
                "{} sampled documents ({:.1}%) lack a key field; MongoDB files them all under null",
                fmt_count(*docs),
                share * 100.0
            ),
            Reason::DataConcentrated { shards, share } => {
                write!(f, "at scale the busiest of {} holds {:.1}% of the data", shards_word(*shards), share * 100.0)
            }
            Reason::InsertsAtOneEnd { decreasing, witness, share, of_operations, assumed, operations } => {
                use crate::metrics::insert_order::InsertEvidence;
                let (dir, end) = if *decreasing { ("decreasing", "lowest") } else { ("increasing", "highest") };
                write!(f, "{dir} key ({witness}): every insert lands in the {end} chunk, so one shard takes {:.0}% of inserts", share * 100.0)?;
                match (of_operations, assumed) {
                    (Some(s), _) => write!(f, " (inserts are {:.1}% of sampled operations)", s * 100.0),
                    (None, InsertEvidence::AssumedNoQueries) => f.write_str(
                        " (assumed: no sampled operation shows the workload, so the collection is taken to grow by inserts)",
                    ),
                    (None, InsertEvidence::AssumedSampledQueries) => {
                        f.write_str(" (assumed: sampled queries never hold inserts, so the collection is taken to grow by inserts)")
                    }
                    (None, InsertEvidence::DocumentsHoldTimes) => write!(
                        f,
                        " (assumed: no insert in the {} sampled operations, but the documents carry the times they were created at (ObjectId _ids or dates a key follows), so the collection is taken to grow by inserts; a slow-query log shows only those slower than slowms)",
                        fmt_count(*operations)
                    ),
                    (None, _) => Ok(()),
                }
            }
            Reason::InsertsNotJudged { operations, decreasing } => {
                let (dir, end) = if *decreasing { ("decreasing", "lowest") } else { ("increasing", "highest") };
                write!(
                    f,
                    "no insert in the {} sampled operations: insert placement not judged (should the collection grow by inserts, this {dir} key would send every one to the {end} chunk, on one shard)",
                    fmt_count(*operations)
                )
            }
            Reason::BusiestShard { shards, share, data_share, over_mean, ops, hot_documents } => {
                write!(
                    f,
                    "at scale the busiest of {} takes {:.1}% of {} sampled operations ({over_mean:.1}× the mean shard's)",
                    shards_word(*shards),
                    share * 100.0,
                    fmt_count(*ops)
                )?;
                if let Some(d) = data_share {
                    write!(f, " while holding {:.1}% of the data", d * 100.0)?;
                }
                if *hot_documents {
                    return write!(f, ": the hot documents' shard (a document's writes all run where it is)");
                }
                write!(f, ": a hot key range, which the balancer (it evens data size, not operations) never spreads")
            }
            Reason::HotDocuments { ids, percent, writes, sequences } => {
                let each: Vec<String> = ids.iter().take(5).map(|(id, p)| format!("_id {id} {p:.1}%")).collect();
                write!(
                    f,
                    "hot documents: {} take {percent:.1}% of {} sampled writes ({}{}); no shard key splits a document, so each one's writes run on the one shard that holds it, one after another, whatever the key; the fix is in the data model: {}",
                    noun(ids.len() as u64, "document", "documents"),
                    fmt_count(*writes),
                    each.join(", "),
                    if ids.len() > 5 { format!(", {} more", ids.len() - 5) } else { String::new() },
                    if *sequences {
                        // A counter split into parts summed on read no longer hands out unique numbers.
                        "most of their writes are findAndModify returning the value (a sequence), which parts summed on read would break: hand out numbers in blocks (one findAndModify reserves N), or keep one sequence per group (per tenant) so each group's counter lives with its data"
                    } else {
                        "split each into N sub-documents (the same _id with a part 0..N-1), write a random part, and sum the parts on read"
                    }
                )
            }
            Reason::TopOfEachGroupByNature { plural, fields } => write!(
                f,
                "inserts land at the top of each group of the leading field{} (increasing by nature: {})",
                s_if(*plural),
                fields.join(", ")
            ),
            Reason::TopOfEachGroup { plural, witness, taking, shards, share } => {
                write!(f, "inserts land at the top of each group of the leading field{} ({witness}): ", s_if(*plural))?;
                if *taking <= 1 && *shards > 1 {
                    // Not a spread: one group takes them all.
                    write!(f, "every insert lands on one shard of {shards}")
                } else {
                    write!(f, "{taking} of {} take them, the busiest {:.1}%", shards_word(*shards), share * 100.0)
                }
            }
            Reason::HashedSpread => f.write_str("hashed: inserts spread evenly over the shards"),
            Reason::Constraint(c) => f.write_str(&c.message),
            Reason::InsertsSpread { taking, shards, share, why } => {
                if *taking <= 1 && *shards > 1 {
                    // Not a spread: every insert lands on one shard (a value hashing alike).
                    write!(f, "every insert lands on one shard of {shards}")?;
                } else {
                    write!(f, "inserts spread over {taking} of {}, the busiest takes {:.1}%", shards_word(*shards), share * 100.0)?;
                }
                match why {
                    Spread::Hashed => f.write_str(" (hashed)"),
                    Spread::By(Witness::None) => Ok(()),
                    Spread::By(w) => write!(f, " ({w})"),
                }
            }
        }
    }
}

/// An estimated distinct count with its range, and the end the verdict uses.
fn range_words(r: &DistinctRange) -> String {
    format!(
        "about {} distinct values in the collection (between {} and {}; judged on {})",
        fmt_count(r.value),
        fmt_count(r.lower),
        fmt_count(r.upper),
        fmt_count(r.lower)
    )
}

impl Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_serialises_as_its_words() {
        let r = Reason::ShardKeyUpdates { percent: 66.14, of_operations: 0.2, refused_by_id: 0.0 };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            "\"66.1% of sampled writes change the shard key: each moves its document to another shard in a distributed transaction (20.0% of operations; fan-out counts that share as 0)\""
        );
    }

    /// The helpdesk case (issue 48): 436 of 762 writes are updateOne by _id changing
    /// assignedTo under {assignedTo: 1, _id: 1}; they are not "never refused".
    #[test]
    fn updates_by_id_changing_the_key_are_not_never_refused() {
        let by =
            crate::metrics::distribution::WritesWithoutKey { single_by_id: 100.0, single_by_id_changing_key: 57.2, ..Default::default() };
        let w = Reason::WritesWithoutShardKey { percent: 100.0, writes: 762, by: Some(by) }.to_string();
        assert!(w.contains("42.8% updateOne/deleteOne by _id (sent"), "{w}");
        assert!(w.contains("57.2% updateOne by _id that changes the shard key value (refused on every version, error 31025"), "{w}");
        assert!(!w.contains("100.0% updateOne/deleteOne by _id"), "{w}");
        let u = Reason::ShardKeyUpdates { percent: 57.2, of_operations: 0.5, refused_by_id: 57.2 }.to_string();
        assert!(u.contains("57.2% by _id without the whole key, which every version refuses (error 31025"), "{u}");
    }

    /// A count without a range is exact (every document read and counted): not "about" (a
    /// trial's 1,748 documents read whole, "about 191 distinct values", 191 by hand; the
    /// limited-growth words are held by `tests/plan_rules.rs`, 101 tenant ids by hand).
    #[test]
    fn an_exact_count_is_said_exactly() {
        assert_eq!(Reason::HighCardinality { distinct: 1_200, range: None }.to_string(), "high cardinality: 1,200 distinct values");
        assert_eq!(Reason::HighCardinality { distinct: 1, range: None }.to_string(), "high cardinality: 1 distinct value");
    }

    #[test]
    fn witnesses_in_words() {
        let w = Witness::CreationTime { r: 0.991, hidden_by_load: Some(0.02) };
        assert_eq!(
            w.to_string(),
            "correlation 0.99 with the creation time of the ObjectId _ids; the load order hides it (recordId correlation 0.02)"
        );
        let w = Witness::ValueType(vec![("ts".into(), "date"), ("_id".into(), "objectId")]);
        assert_eq!(w.to_string(), "ts holds dates, _id holds objectIds: increasing by nature");
        let r = Reason::InsertsSpread { taking: 3, shards: 4, share: 0.4, why: Spread::By(Witness::None) };
        assert_eq!(r.to_string(), "inserts spread over 3 of 4 shards, the busiest takes 40.0%");
        assert!(!r.is_warning());
        assert!(Reason::LowCardinality { distinct: 3, range: None }.is_warning());
        assert!(Reason::NoQuerySample.is_warning());
    }
}
