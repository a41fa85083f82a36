//! `shardkey check`'s report: the policy's verdict per collection, the rules on the databases,
//! the baseline comparison, and what the writers flag.

use super::analysis::{Report, ToolInfo};
use crate::model::ShardKey;
use crate::policy::RuleResult;
use crate::score::Verdict;
use serde::Serialize;

/// `shardkey check`: the policy's verdict per collection (JSON Schema: schemas/check.schema.json).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CheckReport {
    pub(crate) schema_version: u32,
    pub(crate) tool: ToolInfo,
    pub(crate) policy: String,
    pub(crate) passed: bool,
    pub(crate) collections: Vec<CollectionCheck>,
    /// Rules on the checked databases (`unlisted_collections`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) database_rules: Vec<RuleResult>,
    /// The databases those rules read.
    #[serde(skip)]
    pub(crate) databases: Vec<String>,
    /// `--baseline FILE`: what got worse or better than the previous report; `passed` then
    /// means "nothing got worse".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) baseline: Option<BaselineComparison>,
}

impl CheckReport {
    /// The policy line of a rule for a namespace: its own setting, else the defaults', else the
    /// namespace's `[[collection]]`, else line 1.
    /// Whether the baseline already had this violation (a known one does not fail the gate).
    pub(crate) fn is_known(&self, ns: &str, rule: &str) -> bool {
        self.baseline.as_ref().is_some_and(|b| b.known.iter().any(|c| c.namespace == ns && c.rule == rule))
    }

    /// Whether this violation is further from its threshold than the baseline's, beyond the
    /// tolerance.
    pub(crate) fn is_worse(&self, ns: &str, rule: &str) -> bool {
        self.baseline.as_ref().is_some_and(|b| b.worse.iter().any(|c| c.namespace == ns && c.rule == rule))
    }

    /// Every violated rule and every warning, in report order: the collections', then the
    /// databases'. What the annotations, SARIF and GitLab report.
    pub(crate) fn flagged(&self) -> Vec<Flagged<'_>> {
        let mut out = Vec::new();
        for c in &self.collections {
            for x in c.rules.iter().filter(|x| !x.passed || x.warning) {
                let known = self.is_known(&c.namespace, x.rule);
                out.push(Flagged {
                    namespace: &c.namespace,
                    key: Some(&c.key),
                    subject: format!("{} {}", c.namespace, c.key),
                    rule: x,
                    known,
                });
            }
        }
        for x in self.database_rules.iter().filter(|x| !x.passed || x.warning) {
            out.push(Flagged { namespace: "", key: None, subject: self.databases.join(", "), rule: x, known: self.is_known("", x.rule) });
        }
        out
    }
}

/// A rule result to report as an error or a warning.
pub(crate) struct Flagged<'a> {
    /// The collection's namespace; "" for a rule on the databases.
    pub(crate) namespace: &'a str,
    pub(crate) key: Option<&'a ShardKey>,
    /// What it is about: "shop.orders {customerId: 1, _id: 1}", or the databases' names.
    pub(crate) subject: String,
    pub(crate) rule: &'a RuleResult,
    /// The baseline had it already.
    pub(crate) known: bool,
}

impl Flagged<'_> {
    /// "subject: message", then each cause of the culprit after `sep`.
    pub(crate) fn text(&self, sep: &str) -> String {
        let mut t = format!("{}: {}", self.subject, self.rule.message);
        for c in self.rule.culprit.iter().flat_map(|c| &c.causes) {
            t.push_str(sep);
            t.push_str(c);
        }
        t
    }

    /// Where it points: set by `check` for every flagged rule; the policy's first line else.
    pub(crate) fn location(&self, policy: &str) -> (String, u32) {
        match &self.rule.location {
            Some(l) => (l.file.clone(), l.line),
            None => (policy.to_string(), 1),
        }
    }

    /// An error fails the gate; a known violation or a warning does not.
    pub(crate) fn is_error(&self) -> bool {
        !self.rule.passed && !self.known
    }
}

/// `--baseline FILE`: how this run differs from a previous `check --format json` report.
/// The JSON lists each kind as sentences.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BaselineComparison {
    pub(crate) file: String,
    /// A rule violated now that held in the baseline (beyond its tolerance): fails the gate.
    #[serde(serialize_with = "sentences")]
    pub(crate) new: Vec<Change>,
    /// A score more than `score_tolerance` below the baseline's, or a known violation more than
    /// `percent_tolerance` further from its threshold: fails the gate.
    #[serde(serialize_with = "sentences")]
    pub(crate) worse: Vec<Change>,
    /// Violated now and in the baseline (or newly, within the tolerance): does not fail the gate.
    #[serde(serialize_with = "sentences")]
    pub(crate) known: Vec<Change>,
    #[serde(serialize_with = "sentences")]
    pub(crate) better: Vec<Change>,
}

/// One difference from the baseline.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Change {
    /// The collection; "" for a rule on the databases.
    pub(crate) namespace: String,
    /// The rule, or `SCORE` for the score.
    pub(crate) rule: String,
    /// In words, namespace first.
    pub(crate) message: String,
    /// Where a score change is annotated (the collection's block of the policy); a rule's
    /// change is annotated at the rule's location.
    pub(crate) location: Option<crate::policy::Location>,
}

/// `Change::rule` of a score change.
pub(crate) const SCORE: &str = "score";

fn sentences<S: serde::Serializer>(v: &[Change], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().map(|c| &c.message))
}

impl BaselineComparison {
    /// Does the gate fail on it?
    pub(crate) fn failed(&self) -> bool {
        !self.new.is_empty() || !self.worse.is_empty()
    }

    /// "1 new, 1 worse, 3 known, 0 better".
    pub(crate) fn counts(&self) -> String {
        format!("{} new, {} worse, {} known, {} better", self.new.len(), self.worse.len(), self.known.len(), self.better.len())
    }

    /// Score drops: what no rule result carries, so the writers report them on their own.
    pub(crate) fn score_drops(&self) -> impl Iterator<Item = &Change> {
        self.worse.iter().filter(|c| c.rule == SCORE)
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CollectionCheck {
    pub(crate) namespace: String,
    pub(crate) key: ShardKey,
    pub(crate) score: u32,
    pub(crate) verdict: Verdict,
    pub(crate) passed: bool,
    pub(crate) rules: Vec<RuleResult>,
    pub(crate) reasons: Vec<crate::score::reasons::Reason>,
    /// Where the operations the rules judged came from: a gate's result depends on them.
    pub(crate) workload: CheckWorkload,
}

/// The query sources of one checked collection: how many operations, from which members.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CheckWorkload {
    pub(crate) sources: Vec<String>,
    /// Operations on the collection.
    pub(crate) operations: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) members: Vec<crate::model::member::MemberRead>,
}

impl CheckWorkload {
    pub(crate) fn of(r: &Report) -> CheckWorkload {
        let q = &r.inputs.queries;
        CheckWorkload { sources: q.sources.clone(), operations: q.queries_used, members: q.members.clone() }
    }

    /// One line: "572 operations: h1 (primary) 300, h3 (hidden) 40; not read: h2 (unknown): why"; a log
    /// file by its name (the job's paths say nothing).
    pub(crate) fn line(&self) -> String {
        let label = |m: &crate::model::member::MemberRead| {
            if !m.is_log() {
                return m.label();
            }
            let file = std::path::Path::new(&m.source).file_name().map_or(m.source.clone(), |n| n.to_string_lossy().into_owned());
            match &m.host {
                Some(h) => format!("{file} (mongod {h})"),
                None => file,
            }
        };
        let count = crate::util::text::fmt_count;
        let read: Vec<&crate::model::member::MemberRead> = self.members.iter().filter(|m| m.error.is_none()).collect();
        let not_read: Vec<String> = self.members.iter().filter_map(|m| Some(format!("{}: {}", label(m), m.error.as_deref()?))).collect();
        let mut s = match self.operations {
            1 => "1 operation".to_string(),
            n => format!("{} operations", count(n)),
        };
        match read.as_slice() {
            [] if !self.sources.is_empty() => s.push_str(&format!(" from {}", self.sources.join(", "))),
            [] => {}
            [one] => s.push_str(&format!(" from {}", label(one))),
            many => {
                let each: Vec<String> = many.iter().map(|m| format!("{} {}", label(m), count(m.operations))).collect();
                s.push_str(&format!(": {}", each.join(", ")));
            }
        }
        if !not_read.is_empty() {
            s.push_str(&format!("; not read: {}", not_read.join("; ")));
        }
        s
    }
}
