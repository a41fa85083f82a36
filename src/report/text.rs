//! Lines and cells more than one writer prints.

use super::analysis::{CandidateReport, Report};
use crate::score::reasons::Reason;

/// An invalid key (the server refuses it) shows why, and no performance figures: what it
/// would cost on a cluster is moot.
pub(super) fn figures_shown(c: &CandidateReport) -> bool {
    c.verdict != crate::score::Verdict::Invalid
}
use serde_json::Value;
use std::fmt::Write;

/// Why per-shard shares of operations add up to more than 100% (analyze's details, plan's shards).
pub(super) const OPS_COUNT_ON_EACH: &str = "an operation reaching 3 shards counts on all 3, so those shares add up to more than 100%";

/// What every human-readable report leads with: the recommended key, why, the warning
/// that matters most, and the commands (`recommendation`).
pub(super) struct Answer<'a> {
    pub(super) rec: &'a crate::score::apply::Recommendation,
    /// The recommended candidate (absent only if the recommendation keeps a key not analysed).
    pub(super) candidate: Option<&'a CandidateReport>,
    /// One sentence: why it ranks first (what separates it from the next), else its figures at scale.
    pub(super) why: Option<String>,
    /// The recommendation's caveats, else the candidate's first warning reason.
    pub(super) warnings: Vec<String>,
}

/// The answer's headline around its key: what comes before the key, and after it the action
/// and the key's score. A collection left unsharded leads with that, the key for later.
pub(super) fn headline(a: &Answer, candidates: usize) -> (&'static str, String) {
    let scored =
        a.candidate.map(|c| format!(": score {} ({}), #{} of {}", c.score, c.verdict.as_str(), c.rank, candidates)).unwrap_or_default();
    if a.rec.action == crate::score::unsharded::LEAVE_UNSHARDED {
        ("leave unsharded for now; best key once it grows: ", scored)
    } else {
        ("", format!(" ({}){scored}", a.rec.action))
    }
}

/// The answer, or `None` when nothing is recommended (see `no_answer`).
pub(super) fn answer(r: &Report) -> Option<Answer<'_>> {
    let rec = r.recommendation.as_ref()?;
    let candidate = r.candidates.iter().find(|c| c.key == rec.key);
    // A constraint's choice is the first thing to know; else what separates it from the next.
    let why = rec.trade_off.clone().or_else(|| {
        candidate.and_then(|c| {
            let next = r.candidates.iter().find(|n| n.rank == c.rank + 1);
            c.compared_with_next
                .as_ref()
                .map(|w| match next {
                    // "#1 beats #2 (70 against 66)": the runner-up by its key, not its rank.
                    Some(n) => w
                        .replacen(&format!("#{} beats #{} (", c.rank, n.rank), &format!("it beats {} (", n.key), 1)
                        .replacen(&format!("#{} ties with #{} at", c.rank, n.rank), &format!("it ties with {} at", n.key), 1)
                        .replacen(&format!("#{} is capped", n.rank), &format!("{} is capped", n.key), 1)
                        .replacen(&format!("#{} ranks above #{} (", c.rank, n.rank), &format!("it ranks above {} (", n.key), 1)
                        .replacen(&format!("the server refuses #{}", n.rank), &format!("the server refuses {}", n.key), 1),
                    None => w.clone(),
                })
                // The cluster's verdict already says "with N shards at scale: …".
                .or_else(|| figures_shown(c).then(|| c.metrics.cluster.verdict.clone()))
        })
    });
    let warnings =
        if rec.caveats.is_empty() { candidate.and_then(own_warning).map(|x| vec![x]).unwrap_or_default() } else { rec.caveats.clone() };
    Some(Answer { rec, candidate, why, warnings })
}

/// The candidate's own first warning reason: what the answer shows when the recommendation
/// carries no caveat (and what stays beside one added later, `app::inputs`).
pub(crate) fn own_warning(c: &CandidateReport) -> Option<String> {
    c.reasons.iter().find(|x| x.is_warning()).map(|x| x.to_string())
}

/// A candidate's most important warning, as the answer leads with it: the recommendation's
/// first caveat when it is the recommended key, else its own first warning reason (`plan`
/// carries it per collection). What refuses the key is left to the plan's rules, which name it.
pub(crate) fn first_warning(r: &Report, c: &CandidateReport) -> Option<String> {
    use crate::rules::Effect;
    let refusal = |x: &Reason| matches!(x, Reason::Constraint(f) if matches!(f.effect, Effect::Blocked | Effect::Refused));
    match r.recommendation.as_ref().filter(|rec| rec.key == c.key).and_then(|rec| rec.caveats.first()) {
        Some(caveat) => Some(caveat.clone()),
        None => c.reasons.iter().find(|x| x.is_warning() && !refusal(x)).map(|x| x.to_string()),
    }
}

/// Why there is no answer, when there are candidates but no recommendation.
pub(super) fn no_answer(r: &Report) -> Option<String> {
    if r.recommendation.is_some() || r.candidates.is_empty() {
        None
    } else if let Some(thin) = r.evidence.words(r.candidates.first().map(|c| c.key.to_string()).as_deref()) {
        Some(thin)
    } else if r.candidates.iter().all(|c| !figures_shown(c)) {
        Some("no key to recommend: the server refuses every candidate (each one's reasons say why)".into())
    } else {
        Some("no commands: the namespace is not known (give --collection db.coll)".into())
    }
}

/// Lines longer than `width` columns wrapped at spaces, continuation lines indented under
/// the text after a line's own indent and marker (`- `, `! `, `why: `...), so prose fits
/// a terminal; table rows are made to fit by the table itself.
pub(crate) fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        // A mongosh command stays whole, to be copied as it is (a break inside a string would
        // change it; a guarded one's `else` on a line of its own, or a comment's second line,
        // would not parse when pasted).
        let command = ["db.", "sh.", "use ", "if (db.", "// "].iter().any(|p| body.trim_start().starts_with(p));
        if command || textwrap::core::display_width(body) <= width {
            out.push_str(line);
            continue;
        }
        let indent = body.len() - body.trim_start_matches(' ').len();
        let rest = &body[indent..];
        let marker = ["- ", "! ", "why: ", "note: ", "proposed: ", "ranking: ", "cluster "]
            .iter()
            .find(|m| rest.starts_with(*m))
            .map(|m| m.len())
            .unwrap_or(2);
        let next = " ".repeat((indent + marker).min(width / 2));
        for (i, l) in textwrap::wrap(
            body,
            textwrap::Options::new(width).subsequent_indent(&next).word_splitter(textwrap::WordSplitter::NoHyphenation),
        )
        .iter()
        .enumerate()
        {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(l);
        }
        if line.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// One line saying what was analysed.
pub(crate) fn summary_line(r: &Report) -> String {
    let q = &r.inputs.queries;
    let ns = r.namespace.as_deref().unwrap_or("(collection)");
    let mut s = if r.inputs.documents.num_docs_read == 0 {
        format!("{ns}: {}", r.inputs.documents.source)
    } else if r.evidence.num_docs_total > 0 && r.inputs.documents.num_docs_read >= r.evidence.num_docs_total {
        // Every document was read: no sample to qualify the figures with.
        format!("{ns}: all {} documents read from {}", r.inputs.documents.num_docs_read, r.inputs.documents.source)
    } else {
        format!("{ns}: {} documents sampled from {}", r.inputs.documents.num_docs_read, r.inputs.documents.source)
    };
    if !r.inputs.documents.read_on.is_empty() {
        let on: Vec<String> = r.inputs.documents.read_on.iter().map(|m| m.label()).collect();
        let _ = write!(s, ", read on {}", on.join(" and "));
    }
    if !q.sources.is_empty() {
        let skipped: u64 = q.skipped.values().sum();
        let _ = write!(
            s,
            "; {} queries used of {} read ({} on other collections, {} records skipped)",
            q.queries_used, q.queries_read, q.queries_other_namespaces, skipped
        );
    }
    s
}

/// The first line of a workload summary.
pub(crate) fn workload_summary(r: &super::workload::WorkloadReport) -> String {
    let skipped: u64 = r.skipped.values().sum();
    let filters: Vec<String> = r.filters.iter().map(|(k, v)| format!("{k} {v}")).collect();
    format!(
        "{} operations in {} from {} records of {} ({} records skipped){}",
        r.operations_read,
        crate::util::text::count_of(r.namespaces.len() as u64, "namespace", "namespaces"),
        r.records_read,
        r.sources.join(", "),
        skipped,
        if filters.is_empty() { String::new() } else { format!("; {}", filters.join(", ")) }
    )
}

/// The "top value" cell: the most common value and its share, or that no value repeats.
pub(crate) fn top_value(c: &crate::metrics::characteristics::KeyCharacteristics) -> String {
    c.most_common_values
        .first()
        .map(|m| {
            if m.frequency <= 1 {
                "no value repeats".to_string()
            } else {
                format!("{} ({:.1}%)", crate::util::text::short_value(&m.value), c.top_value_percentage)
            }
        })
        .unwrap_or_else(|| "-".into())
}

/// The server's headline numbers from `--compare-server` (`serverAnalyzeShardKey`).
pub(crate) fn server_headline(v: &Value) -> String {
    let kc = &v["keyCharacteristics"];
    let mut parts = Vec::new();
    if let Some(n) = kc["numDistinctValues"].as_i64().or_else(|| kc["numDistinctValues"].as_f64().map(|f| f as i64)) {
        parts.push(format!("distinct {n}"));
    }
    if let Some(t) = kc["monotonicity"]["type"].as_str() {
        parts.push(t.to_string());
    }
    if let Some(p) = v["readDistribution"]["percentageOfSingleShardReads"].as_f64() {
        parts.push(format!("single-shard reads {p:.1}%"));
    }
    if let Some(p) = v["writeDistribution"]["percentageOfSingleShardWrites"].as_f64() {
        parts.push(format!("single-shard writes {p:.1}%"));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn long_lines_wrap_under_their_marker() {
        let text = "short\n  - one two three four five six\nx\n";
        assert_eq!(wrap(text, 16), "short\n  - one two\n    three four\n    five six\nx\n");
        // a word longer than the width is broken, never left over the edge
        let w = wrap("aaaaaaaaaaaaaaaaaaaaaaaa", 10);
        assert!(w.lines().all(|l| l.chars().count() <= 10), "{w}");
        assert_eq!(wrap("é", 1), "é");
        // commands are never cut
        let cmd = "  sh.updateZoneKeyRange(\"shop.orders\", {city: \"New York\"}, {city: \"Paris\"}, \"zone0\")\n";
        assert_eq!(wrap(cmd, 20), cmd);
        // nor a guarded one (its else would start a line of its own), nor a comment among them
        let guarded = "  if (db.adminCommand({isMaster: 1}).msg === \"isdbgrid\") db.c.dropIndex(\"a_1\"); else print(\"a_1 kept\")\n";
        assert_eq!(wrap(guarded, 20), guarded);
        let comment = "// first: 75.0% of shop.orders's sampled updates must name customerId\n";
        assert_eq!(wrap(comment, 20), comment);
    }

    #[test]
    fn server_headline_from_a_7_0_reply_summary() {
        let v = json!({
            "keyCharacteristics": {"numDistinctValues": 8939, "monotonicity": {"type": "not monotonic"}},
            "readDistribution": {"percentageOfSingleShardReads": 50.0},
            "writeDistribution": {"percentageOfSingleShardWrites": 100.0},
        });
        assert_eq!(server_headline(&v), "distinct 8939, not monotonic, single-shard reads 50.0%, single-shard writes 100.0%");
        assert_eq!(server_headline(&json!({})), "");
    }
}
