//! Markdown writer, sized for a pull-request comment or `$GITHUB_STEP_SUMMARY`.

use super::{pct, short_value, CheckReport, Report};
use std::fmt::Write;

/// One line saying what was analysed.
pub fn summary_line(r: &Report) -> String {
    let q = &r.inputs.queries;
    let mut s = format!(
        "{}: {} documents sampled from {}",
        r.namespace.as_deref().unwrap_or("(collection)"),
        r.inputs.documents.num_docs_read,
        r.inputs.documents.source
    );
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

fn esc(s: &str) -> String {
    s.replace('|', "\\|")
}

pub fn render(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### Shard key analysis\n\n{}\n", esc(&summary_line(r)));
    let _ = writeln!(out, "| rank | key | score | verdict | distinct | top value | monotonicity | single-shard reads | scatter-gather reads |");
    let _ = writeln!(out, "|---:|---|---:|---|---:|---|---|---:|---:|");
    for c in &r.candidates {
        let kc = &c.key_characteristics;
        let key = crate::model::ShardKey::parse(&c.key.to_string()).map(|k| k.to_string()).unwrap_or_default();
        let top = kc
            .most_common_values
            .first()
            .map(|m| if m.frequency <= 1 { "no value repeats".to_string() } else { format!("{} ({:.1}%)", short_value(&m.value), kc.top_value_percentage) })
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {} | {} | {} | {} | {} | {} |",
            c.rank,
            esc(&key),
            c.score,
            c.verdict.as_str(),
            kc.estimated_num_distinct_values.value,
            esc(&top),
            kc.monotonicity.kind.as_str(),
            pct(c.read_distribution.percentage_of_single_shard_reads),
            pct(c.read_distribution.percentage_of_scatter_gather_reads),
        );
    }
    for c in &r.candidates {
        let key = crate::model::ShardKey::parse(&c.key.to_string()).map(|k| k.to_string()).unwrap_or_default();
        let _ = writeln!(out, "\n**#{} `{}`: {} ({})**\n", c.rank, esc(&key), c.score, c.verdict.as_str());
        for reason in &c.reasons {
            let _ = writeln!(out, "- {}", esc(reason));
        }
    }
    for n in &r.notes {
        let _ = writeln!(out, "\n> {}", esc(n));
    }
    out
}

fn key_text(k: &serde_json::Value) -> String {
    crate::model::ShardKey::parse(&k.to_string()).map(|k| k.to_string()).unwrap_or_else(|_| k.to_string())
}

pub fn render_check(r: &CheckReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### Shard key policy: {}\n", if r.passed { "passed ✅" } else { "failed ❌" });
    for c in &r.collections {
        let _ = writeln!(
            out,
            "**{}** `{}`: score {} ({}), {}\n",
            c.namespace,
            esc(&key_text(&c.key)),
            c.score,
            c.verdict.as_str(),
            if c.passed { "pass" } else { "FAIL" }
        );
        let _ = writeln!(out, "| rule | result | detail |\n|---|---|---|");
        for x in &c.rules {
            let res = if x.skipped.is_some() { "skipped" } else if x.passed { "pass" } else { "**FAIL**" };
            let _ = writeln!(out, "| `{}` | {} | {} |", x.rule, res, esc(&x.message));
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "_policy: {}_", esc(&r.policy));
    out
}

/// GitHub Actions workflow commands, one `::error` per violated rule.
pub fn annotations(r: &CheckReport) -> String {
    let mut out = String::new();
    for c in &r.collections {
        for x in c.rules.iter().filter(|x| !x.passed) {
            let msg = format!("{} {}: {} ({})", c.namespace, key_text(&c.key), x.message, x.rule);
            let msg = msg.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A");
            let _ = writeln!(out, "::error title=shardkey policy::{msg}");
        }
    }
    out
}
