//! The plan as reported (docs/reference.md "plan", JSON fields): per collection what to do and why,
//! the zones, the transactions' and joins' figures, the shards, the commands in order; and
//! the plan as given beside it (what if). Data only: `build` and `given` fill it, `words` and
//! `report::plan` write it.

use crate::model::ShardKey;
use serde::Serialize;
use serde_json::Value;

/// The version of the plan's JSON form.
pub(crate) const PLAN_SCHEMA_VERSION: u32 = 1;

crate::labels! {
    /// What the plan does with a collection.
    pub(crate) enum Action {
        Shard => "shard",
        Unsharded => "unsharded",
        MoveCollection => "moveCollection",
        Refine => "refine",
        Reshard => "reshard",
        Keep => "keep",
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Plan {
    pub(crate) schema_version: u32,
    pub(crate) database: String,
    pub(crate) num_shards: usize,
    pub(crate) num_shards_from: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) target_version: Option<String>,
    /// The version the plan follows and where it was read.
    pub(crate) version: crate::model::version::VersionReport,
    pub(crate) objective: Objective,
    pub(crate) collections: Vec<PlannedCollection>,
    pub(crate) transactions: Transactions,
    pub(crate) joins: Joins,
    /// Fields of different collections that hold the same values.
    pub(crate) links: Vec<LinkReport>,
    /// Collections the transactions and joins touch together, and the pairs the plan cuts.
    pub(crate) edges: Vec<super::graph::Edge>,
    pub(crate) shards: Vec<ShardReport>,
    /// How many shards the data and the load need, and how many the keys can use.
    pub(crate) sizing: Sizing,
    /// mongosh commands, in order, through mongos.
    pub(crate) commands: Vec<String>,
    pub(crate) notes: Vec<String>,
    /// `--key`, `--unsharded`: the plan with those choices kept, beside this one (what if).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) given: Option<GivenPlan>,
    /// The commands as data (`commands` is their text).
    #[serde(skip)]
    pub(crate) steps: Vec<super::steps::Step>,
    /// What the plan was made from, for a script to check before it runs the steps.
    #[serde(skip)]
    pub(crate) basis: super::basis::Basis,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Objective {
    pub(crate) value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) single_shard_share: Option<f64>,
    pub(crate) own_score: f64,
    pub(crate) data_balance: f64,
    pub(crate) load_balance: f64,
    /// The same figures with every collection on its own best choice.
    pub(crate) individual_best_value: f64,
    pub(crate) weights: Weights,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Weights {
    pub(crate) single_shard: f64,
    pub(crate) own_score: f64,
    pub(crate) data_balance: f64,
    pub(crate) load_balance: f64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PlannedCollection {
    pub(crate) namespace: String,
    pub(crate) action: Action,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) key: Option<ShardKey>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) score: Option<u32>,
    /// The shard an unsharded collection lives on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) shard: Option<String>,
    /// Always present (empty when not zoned), as docs/reference.md lists them.
    pub(crate) zones: Vec<ZoneReport>,
    pub(crate) colocated_with: Vec<String>,
    pub(crate) data_bytes: u64,
    pub(crate) num_operations: u64,
    /// What its own analysis chooses, alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) alone_key: Option<ShardKey>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) alone_score: Option<u32>,
    pub(crate) why: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) trade_off: Option<String>,
    /// The most important warning of its own analysis on the key chosen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) warning: Option<String>,
    /// The rules that forced or forbade a key (unique indexes, invalid keys), one sentence each.
    pub(crate) constraints: Vec<String>,
    /// Writes the plan's version refuses under the key: the application must change them first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) refused_writes: Vec<super::input::RefusedWrites>,
    /// The unique indexes that keep `shardCollection` from taking the key while they exist (a
    /// key kept as given): `constraints` says them; the mongosh script stops on them.
    #[serde(skip)]
    pub(crate) blocked_by: Vec<super::input::UniqueIndex>,
    /// Values its zones pin to one shard above that shard's fair share (`pinned`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) pinned_values: Vec<PinnedReport>,
}

/// A first-field value one zone pins to its shard while it holds more than the shard's fair share.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PinnedReport {
    pub(crate) zone: String,
    pub(crate) value: Value,
    pub(crate) documents: u64,
    pub(crate) percentage: f64,
    pub(crate) fair_share_percentage: f64,
    /// The bound on the key's next field that cuts the value's range in two halves; None
    /// for a one-field key or a value whose documents share one next-field value.
    pub(crate) split_at: Option<Value>,
    pub(crate) message: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ZoneReport {
    pub(crate) zone: String,
    pub(crate) shard: String,
    pub(crate) min: Value,
    pub(crate) max: Value,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Transactions {
    /// Multi-document transactions whose operations the logs show.
    pub(crate) found: u64,
    /// Found but seen in part (the source cannot show some of their statements): left
    /// out of the single-shard share.
    pub(crate) seen_in_part: u64,
    pub(crate) evaluated: u64,
    /// Absent when some transactions are seen in part: `singleShardShareRange` then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) single_shard_share: Option<f64>,
    /// With transactions seen in part: the lowest and highest share over every placement
    /// of the statements left unplaced, over every transaction found (`bounds`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) single_shard_share_range: Option<super::bounds::ShareRange>,
    /// The share's 95% margin when it is measured on a sample (fewer evaluated than found).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) single_shard_share_margin: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) single_shard_share_individual_best: Option<f64>,
    /// Share of evaluated transactions holding a write the target version refuses under the
    /// plan's keys (`rules::write_targeting`): they fail, counted apart from the single-shard
    /// share (which counts them as not on one shard). Absent when none or the version is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) failing_share: Option<f64>,
    /// What keeps transactions off one shard under this plan, most costly first.
    pub(crate) blockers: Vec<super::blockers::Blocker>,
    /// Transactions off one shard on an insert the plan cannot place (its documents not shown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) not_placed: Option<super::blockers::NotPlaced>,
    /// The single-shard share with every blocker that has a fix fixed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) single_shard_share_if_all_fixed: Option<f64>,
    /// The same as a range, with transactions seen in part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) single_shard_share_if_all_fixed_range: Option<super::bounds::ShareRange>,
    pub(crate) sources: Vec<String>,
    /// Transaction summary lines (id 51802) in the logs: transactions slow enough to log.
    pub(crate) summary_lines: u64,
    pub(crate) notes: Vec<String>,
}

/// What a report says of a plan's transactions, shardkey's (`Transactions`) or the plan as
/// given (`GivenShares`), which hold the same figures in their own JSON order: the
/// single-shard share or its range, the same with every fix, and the blockers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ShareSummary<'a> {
    pub(crate) single_shard_share: Option<f64>,
    pub(crate) single_shard_share_range: Option<super::bounds::ShareRange>,
    pub(crate) if_all_fixed: Option<f64>,
    pub(crate) if_all_fixed_range: Option<super::bounds::ShareRange>,
    pub(crate) blockers: &'a [super::blockers::Blocker],
}

impl Transactions {
    pub(crate) fn summary(&self) -> ShareSummary<'_> {
        ShareSummary {
            single_shard_share: self.single_shard_share,
            single_shard_share_range: self.single_shard_share_range,
            if_all_fixed: self.single_shard_share_if_all_fixed,
            if_all_fixed_range: self.single_shard_share_if_all_fixed_range,
            blockers: &self.blockers,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Joins {
    pub(crate) found: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) single_shard_share: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) single_shard_share_individual_best: Option<f64>,
    /// Why joins leave one shard: the most common cause, in words (`super::joins`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) why: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Sizing {
    pub(crate) data_bytes: u64,
    /// `--shard-size`, and the shards the data needs at that size (ceiling).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) shard_size_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) shards_for_data: Option<u64>,
    /// Operations per second in the logs at their busiest window (what sizing uses).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) operations_per_second: Option<f64>,
    /// That window's length: 10 s, 60 s, or the whole span when no window held enough.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) busiest_window_seconds: Option<f64>,
    /// The operations over the logs' whole time span.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) average_operations_per_second: Option<f64>,
    /// `--shard-ops`, and the shards the load needs: the operations reaching shards per
    /// second (an operation sent to several shards counts on each) over one shard's rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) shard_ops_per_second: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) shards_for_load: Option<u64>,
    /// The fewest shards any large sharded collection's key can spread over (its distinct
    /// values or top value bound it), and which collection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_useful_shards: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) limited_by: Option<String>,
    pub(crate) words: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LinkReport {
    pub(crate) a: String,
    pub(crate) b: String,
    pub(crate) count: u64,
    pub(crate) seen_in: &'static str,
    /// What the link rests on (issue 49 item 5): equal values in one transaction, a join,
    /// or values inferred from the documents.
    pub(crate) evidence: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ShardReport {
    pub(crate) shard: String,
    pub(crate) data_bytes: u64,
    pub(crate) data_percent: f64,
    /// Share of the operations that reach it (an operation sent to several shards counts on each).
    pub(crate) operations_percent: f64,
    /// The collections with data on it, and how much.
    pub(crate) collections: Vec<OnShard>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OnShard {
    pub(crate) namespace: String,
    pub(crate) data_bytes: u64,
}

/// What the logs said about transactions, for the report.
#[derive(Debug, Clone, Default)]
pub(crate) struct TxnEvidence {
    pub(crate) found: u64,
    /// Found, but possibly not whole (left out of the share).
    pub(crate) seen_in_part: u64,
    /// Whole transactions kept (a sample when the log held more than the cap).
    pub(crate) whole_kept: u64,
    pub(crate) sources: Vec<String>,
    pub(crate) summary_lines: u64,
    pub(crate) notes: Vec<String>,
    pub(crate) joins_found: u64,
}

/// One choice as given, resolved.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GivenChoiceReport {
    pub(crate) namespace: String,
    /// Absent: kept unsharded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) key: Option<ShardKey>,
    /// Why the server refuses the key as things stand (a unique index that blocks it, an
    /// invalid key): kept, and flagged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) refused: Option<String>,
    /// What a change that caused the refusal would name: the blocking indexes and their fields.
    #[serde(skip)]
    pub(crate) refused_by: Vec<String>,
}

/// The plan as given, beside shardkey's own (`Plan`'s other fields).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GivenPlan {
    pub(crate) choices: Vec<GivenChoiceReport>,
    pub(crate) objective: Objective,
    pub(crate) transactions: GivenShares,
    pub(crate) joins: GivenJoins,
    pub(crate) collections: Vec<PlannedCollection>,
    pub(crate) shards: Vec<ShardReport>,
    pub(crate) commands: Vec<String>,
    /// The commands as data: what `--format mongosh` applies when choices are given.
    #[serde(skip)]
    pub(crate) steps: Vec<super::steps::Step>,
    /// shardkey's plan less this one: positive where shardkey's is better.
    pub(crate) difference: Difference,
    /// The comparison in one sentence.
    pub(crate) words: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GivenShares {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) single_shard_share: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) single_shard_share_range: Option<super::bounds::ShareRange>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) single_shard_share_margin: Option<f64>,
    /// Transactions holding a write the target version refuses under the given keys.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) failing_share: Option<f64>,
    pub(crate) blockers: Vec<super::blockers::Blocker>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) single_shard_share_if_all_fixed: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) single_shard_share_if_all_fixed_range: Option<super::bounds::ShareRange>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GivenJoins {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) single_shard_share: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Difference {
    pub(crate) objective: f64,
    /// In transactions' single-shard share (0..1); absent without transactions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) single_shard_share: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) joins_single_shard_share: Option<f64>,
}

impl GivenShares {
    pub(crate) fn summary(&self) -> ShareSummary<'_> {
        ShareSummary {
            single_shard_share: self.single_shard_share,
            single_shard_share_range: self.single_shard_share_range,
            if_all_fixed: self.single_shard_share_if_all_fixed,
            if_all_fixed_range: self.single_shard_share_if_all_fixed_range,
            blockers: &self.blockers,
        }
    }
}
