//! What a rule of the policy is made of: the type of its threshold, what it reads (one
//! candidate, the checked databases, the declared plan), what it finds, and how it is judged.
//! The table of rules (`rules.rs`) and the `[plan]` rules' judges (`plan_rules.rs`) are written
//! in these terms.

use super::result::Culprit;
use crate::metrics::CandidateMetrics;
use crate::model::ShardKey;
use crate::score::reasons::Reason;
use crate::score::Verdict;
use serde_json::{json, Value};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ValueType {
    /// A score from 0 to 100 (an integer).
    Score,
    /// A count (a non-negative integer).
    Count,
    /// A percentage from 0 to 100.
    Percent,
    /// true turns the rule on; false leaves it off.
    Flag,
    /// One of these words; the last one turns the rule off.
    Choice(&'static [&'static str]),
}

/// A threshold as read from the policy file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Threshold {
    Int(u64),
    Percent(f64),
    Flag(bool),
    Choice(&'static str),
}

/// Rule thresholds by rule name (names from `RULES`).
pub(crate) type Rules = BTreeMap<&'static str, Threshold>;

impl Threshold {
    pub(crate) fn to_json(self) -> Value {
        match self {
            Threshold::Int(n) => json!(n),
            Threshold::Percent(p) => json!(p),
            Threshold::Flag(b) => json!(b),
            Threshold::Choice(w) => json!(w),
        }
    }

    /// The number to compare with (flags are never compared).
    pub(super) fn number(self) -> f64 {
        match self {
            Threshold::Int(n) => n as f64,
            Threshold::Percent(p) => p,
            Threshold::Flag(_) | Threshold::Choice(_) => 0.0,
        }
    }

    /// Is the rule on? Numbers always are; a flag when true; a choice unless "ignore".
    pub(crate) fn is_on(self) -> bool {
        !matches!(self, Threshold::Flag(false) | Threshold::Choice("ignore"))
    }
}

/// What a rule reads: the candidate's score, verdict and metrics, and what the validity
/// rules (`crate::rules`) found.
pub(crate) struct RuleInput<'a> {
    /// The collection's name (without its database).
    pub(crate) collection: &'a str,
    pub(crate) key: &'a ShardKey,
    pub(crate) score: u32,
    pub(crate) verdict: Verdict,
    pub(crate) reasons: &'a [Reason],
    pub(crate) metrics: &'a CandidateMetrics,
    pub(crate) constraints: &'a [crate::rules::Finding],
}

/// A rule's finding on one candidate.
pub(crate) enum Finding {
    Measured {
        actual: Value,
        passed: bool,
        message: String,
    },
    /// The rule passes, but what it found is said as a warning (`unlisted_collections = "warn"`).
    Warning {
        actual: Value,
        message: String,
    },
    /// The metric was not measured; the rule passes and says why.
    Skipped(&'static str),
}

/// What a rule on the checked databases reads (once per run).
pub(crate) struct DatabasesInput<'a> {
    /// The databases of the policy's collections.
    pub(crate) databases: &'a [String],
    /// Their collections that no `[[collection]]` names, as `db.collection` (listed live only);
    /// None when the deployment refused to list them.
    pub(crate) unlisted: Option<&'a [String]>,
}

/// What the plan rules read: the declared plan beside shardkey's own.
pub(crate) struct PlanInput {
    /// Declared keys the server refuses as things stand: (namespace, why, the names a change
    /// that caused it would spell out: the index, its fields).
    pub(crate) refused: Vec<(String, String, Vec<String>)>,
    /// The transactions' single-shard share, declared plan and shardkey's (None: no transaction).
    pub(crate) declared_share: Option<f64>,
    pub(crate) own_share: Option<f64>,
    /// Some transactions seen in part: the shares are ranges, not one figure.
    pub(crate) seen_in_part: bool,
    /// The share (percent) of transactions holding an insert the plan cannot place (its
    /// documents not shown): the shares rest on a guess for those.
    pub(crate) not_placed_percent: Option<f64>,
    /// The collections whose choice differs: (namespace, declared, shardkey's), in words.
    pub(crate) differing: Vec<(String, String, String)>,
    /// What keeps the declared plan's transactions off one shard, most costly first.
    pub(crate) blockers: Vec<String>,
}

/// How a rule is judged.
pub(crate) enum Judge {
    /// On one collection's key.
    Candidate(fn(Threshold, &RuleInput) -> Finding),
    /// Once per run, on the databases the policy's collections are in: set in `[defaults]` only.
    Databases(fn(Threshold, &DatabasesInput) -> Finding),
    /// Once per run, on the plan the policy's `[plan]` declares beside shardkey's own: set in
    /// `[plan]` only.
    Plan(fn(Threshold, &PlanInput) -> Finding),
    /// Not judged: how far `--baseline` lets a figure move before it counts as a change.
    Tolerance,
}

pub(crate) struct RuleDef {
    pub(crate) name: &'static str,
    /// The report field the rule reads (JSON path in the analyze report).
    pub(crate) metric: &'static str,
    pub(crate) value: ValueType,
    /// The comment and the value in the starting policy (`check --init`).
    pub(crate) doc: &'static str,
    pub(crate) default: &'static str,
    /// On when the policy leaves the rule out: what breaks the key outright is checked unless
    /// a policy turns it off.
    pub(crate) implied: Option<Threshold>,
    /// What caused a violation (read only when the rule fails).
    pub(crate) culprit: Option<fn(&RuleInput) -> Culprit>,
    pub(crate) judge: Judge,
}
