//! Reports: the `Report` (analyze) and `CheckReport` (check) every writer formats,
//! and the one dispatch from a `Format` to its writer. Writers only format: every
//! number they print was computed in `metrics` or `score`. The JSON form is the
//! documented, versioned schema (docs/reference.md "JSON schema").

pub(crate) mod gitlab;
pub(crate) mod html;
pub(crate) mod json;
pub(crate) mod markdown;
mod mongosh;
mod plan;
pub(crate) mod sarif;
pub(crate) mod table;
pub(crate) mod text;

use crate::metrics::audit::AuditReport;
use crate::metrics::CandidateMetrics;
use crate::model::ShardKey;
use crate::policy::RuleResult;
use crate::score::Verdict;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// The output formats, for `analyze` and `check` alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Table,
    /// `--wide`: the table with every figure in the ranking, lines unwrapped.
    WideTable,
    Json,
    Markdown,
    /// One self-contained HTML file.
    Html,
    /// `check` only: SARIF 2.1.0 (GitHub code scanning).
    Sarif,
    /// `check` only: GitLab code quality.
    Gitlab,
    /// `plan` only: a mongosh script that checks the cluster, then applies the plan.
    Mongosh,
}

/// What a format writes for each report.
trait Writer {
    fn analyze(&self, r: &Report, out: &mut dyn Write) -> io::Result<()>;
    fn check(&self, r: &CheckReport, out: &mut dyn Write) -> io::Result<()>;
    fn workload(&self, r: &WorkloadReport, out: &mut dyn Write) -> io::Result<()>;
    fn plan(&self, p: &crate::plan::outcome::Plan, out: &mut dyn Write) -> io::Result<()>;
}

/// The one dispatch from a format to its writer.
fn writer(format: Format) -> &'static dyn Writer {
    match format {
        Format::Table => &table::TableWriter { wide: false },
        Format::WideTable => &table::TableWriter { wide: true },
        Format::Json => &json::JsonWriter,
        Format::Markdown => &markdown::MarkdownWriter,
        Format::Html => &html::HtmlWriter,
        // Check-only and plan-only formats: the other reports as JSON (the command line does not offer them).
        Format::Sarif | Format::Gitlab | Format::Mongosh => &json::JsonWriter,
    }
}

/// Write a database plan.
pub(crate) fn write_plan(p: &crate::plan::outcome::Plan, format: Format, out: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Mongosh => mongosh::write(p, out),
        f => writer(f).plan(p, out),
    }
}

/// Write an analysis report.
pub(crate) fn write_report(r: &Report, format: Format, out: &mut dyn Write) -> io::Result<()> {
    writer(format).analyze(r, out)
}

/// Write a policy check report.
pub(crate) fn write_check(r: &CheckReport, format: Format, out: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Sarif => sarif::write(r, out),
        Format::Gitlab => gitlab::write(r, out),
        f => writer(f).check(r, out),
    }
}

/// Write a workload summary.
pub(crate) fn write_workload(r: &WorkloadReport, format: Format, out: &mut dyn Write) -> io::Result<()> {
    writer(format).workload(r, out)
}

pub(crate) const SCHEMA_VERSION: u32 = 1;

/// `shardkey workload`: what the query logs hold, per namespace and query shape.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WorkloadReport {
    pub(crate) schema_version: u32,
    pub(crate) tool: ToolInfo,
    pub(crate) sources: Vec<String>,
    pub(crate) records_read: u64,
    /// Operations the summary reports: found in the logs inside the time window, on the
    /// namespaces it lists (not the server's own databases, nor those `--namespace` leaves out).
    pub(crate) operations_read: u64,
    pub(crate) skipped: BTreeMap<String, u64>,
    /// `--namespace` pattern, `--since`, `--until` as given.
    pub(crate) filters: BTreeMap<String, String>,
    pub(crate) namespaces: Vec<crate::metrics::workload::NamespaceWorkload>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Report {
    pub(crate) schema_version: u32,
    pub(crate) tool: ToolInfo,
    pub(crate) namespace: Option<String>,
    pub(crate) inputs: Inputs,
    pub(crate) settings: ReportSettings,
    pub(crate) candidates: Vec<CandidateReport>,
    /// How to apply the first-ranked key: the commands and their requirements.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) recommendation: Option<crate::score::apply::Recommendation>,
    /// What the analysis rested on; in the JSON only when too thin for an answer (then no
    /// `recommendation`: `evidence.shortfalls` say what is missing and what to run).
    #[serde(skip_serializing_if = "crate::metrics::evidence::Evidence::is_sufficient")]
    pub(crate) evidence: crate::metrics::evidence::Evidence,
    /// The collection is already sharded: its real chunks (live only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) audit: Option<AuditReport>,
    pub(crate) notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct ToolInfo {
    pub(crate) name: &'static str,
    pub(crate) version: &'static str,
}

impl ToolInfo {
    pub(crate) fn this() -> ToolInfo {
        ToolInfo { name: "shardkey", version: env!("CARGO_PKG_VERSION") }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Inputs {
    pub(crate) documents: DocumentInput,
    pub(crate) queries: QueryInput,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DocumentInput {
    pub(crate) source: String,
    pub(crate) num_docs_read: u64,
    /// Live: the member each read of the documents ran on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) read_on: Vec<crate::model::member::ReadOn>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QueryInput {
    pub(crate) sources: Vec<String>,
    /// Lines or documents read from the query sources.
    pub(crate) records_read: u64,
    /// Operations found, on every namespace.
    pub(crate) queries_read: u64,
    /// Operations on the analysed namespace.
    pub(crate) queries_used: u64,
    /// Of those, how many were classified (all, or a uniform sample of 100,000).
    pub(crate) queries_classified: u64,
    /// Operations on other namespaces.
    pub(crate) queries_other_namespaces: u64,
    /// Records that held no operation, by reason.
    pub(crate) skipped: BTreeMap<String, u64>,
    pub(crate) shard_key_update_diffs: u64,
    /// Per member (each profiler read) or per log file: what it held.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) members: Vec<crate::model::member::MemberRead>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReportSettings {
    pub(crate) chunk_size_bytes: u64,
    pub(crate) num_most_common_values: usize,
    pub(crate) default_collation: Option<Value>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CandidateReport {
    pub(crate) key: ShardKey,
    pub(crate) rank: usize,
    pub(crate) score: u32,
    pub(crate) verdict: Verdict,
    pub(crate) reasons: Vec<crate::score::reasons::Reason>,
    /// Why this candidate ranks above the next one, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) compared_with_next: Option<String>,
    /// The score's components (docs/reference.md "Score").
    pub(crate) score_breakdown: crate::score::Breakdown,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) proposed_because: Option<String>,
    /// keyCharacteristics, readDistribution, writeDistribution, queryShapes, cluster, supportingIndex.
    #[serde(flatten)]
    pub(crate) metrics: CandidateMetrics,
    /// What the validity rules found: why the server would refuse the key, or which writes would fail (docs/reference.md "Rules").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) constraints: Vec<crate::rules::Finding>,
    /// `--compare-server` on 7.0+: the server's own analyzeShardKey numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) server_analyze_shard_key: Option<Value>,
}

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
