//! What checking one rule gives: passed or not, the figures, what caused a violation and
//! where its annotation points.

use serde::Serialize;
use serde_json::Value;

/// What caused a violation.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Culprit {
    /// One line each: a query shape with its share and an example, the index that blocks the
    /// key, a field and the share of documents that lack it.
    pub(crate) causes: Vec<String>,
    /// Names a change that caused it would spell out (index, fields, collection), most specific
    /// first: the files of `--changed-files` are searched for them.
    pub(crate) names: Vec<String>,
}

/// Where an annotation points: a file of the change that names the culprit, else the
/// collection's block of the policy.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Location {
    pub(crate) file: String,
    pub(crate) line: u32,
}

/// One rule checked against one candidate.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RuleResult {
    pub(crate) rule: &'static str,
    /// The metric the rule reads (JSON path in the analyze report).
    pub(crate) metric: &'static str,
    pub(crate) threshold: Value,
    pub(crate) actual: Value,
    pub(crate) passed: bool,
    /// Passed, but what it found is a warning (`unlisted_collections = "warn"`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) warning: bool,
    /// Why the rule could not be evaluated (it then passes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) skipped: Option<String>,
    pub(crate) message: String,
    /// What caused the violation (violations only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) culprit: Option<Culprit>,
    /// Where the annotations point (violations and warnings only; set by `check`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) location: Option<Location>,
}
