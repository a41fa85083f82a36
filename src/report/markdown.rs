//! Markdown writer, sized for a pull-request comment or `$GITHUB_STEP_SUMMARY`.

use super::analysis::Report;
use super::check::CheckReport;
use super::text::{summary_line, top_value};
use super::workload::WorkloadReport;
use super::writer::Writer;
use crate::util::text::{pct, printable};
use std::fmt::Write;

pub(super) struct MarkdownWriter;

impl Writer for MarkdownWriter {
    fn analyze(&self, r: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(printable(&render(r), true).as_bytes())
    }

    fn check(&self, r: &CheckReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(printable(&render_check(r), true).as_bytes())
    }

    fn workload(&self, r: &WorkloadReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(printable(&render_workload(r), true).as_bytes())
    }

    fn plan(&self, p: &crate::plan::outcome::Plan, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(printable(&super::plan::markdown(p), true).as_bytes())
    }
}

fn render_workload(r: &WorkloadReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### Query workload\n\n{}\n", esc(&super::text::workload_summary(r)));
    for ns in &r.namespaces {
        let ops: Vec<String> = ns.operations.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(
            out,
            "**{}**: {} ({}), {}\n",
            esc(&ns.namespace),
            crate::util::text::count_of(ns.num_operations, "operation", "operations"),
            ops.join(", "),
            crate::util::text::count_of(ns.num_shapes as u64, "shape", "shapes")
        );
        let _ = writeln!(out, "| count | shape | commands | ms p50 | ms p95 | ms max | ms total | examined/returned | COLLSCAN |");
        let _ = writeln!(out, "|---:|---|---|---:|---:|---:|---:|---:|---:|");
        for s in &ns.shapes {
            let cmds: Vec<String> = s.commands.iter().map(|(k, v)| format!("{k} {v}")).collect();
            let d = &s.duration_millis;
            let ms = |x: Option<u32>| x.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
            let _ = writeln!(
                out,
                "| {} | `{}` | {} | {} | {} | {} | {} | {} | {} |",
                s.count,
                esc(&s.shape),
                cmds.join(", "),
                ms(d.p50),
                ms(d.p95),
                ms(d.max),
                d.total,
                s.docs_examined_per_returned.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into()),
                s.collscan_words()
            );
        }
        let _ = writeln!(out);
    }
    out
}

/// A performance cell, or "-" for an invalid key.
fn figure(c: &super::analysis::CandidateReport, cell: impl Fn(&super::analysis::CandidateReport) -> String) -> String {
    if super::text::figures_shown(c) {
        cell(c)
    } else {
        "-".into()
    }
}

fn esc(s: &str) -> String {
    s.replace('|', "\\|")
}

fn render(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### Shard key analysis\n\n{}\n", esc(&summary_line(r)));
    render_answer(r, &mut out);
    let inserts = super::table::InsertsShown::of(r);
    let shown = inserts != super::table::InsertsShown::Hidden;
    let _ = writeln!(
        out,
        "| rank | key | score | verdict | distinct | top value | monotonicity | {}shards per read/write | single-shard reads | scatter-gather reads |",
        inserts.header("inserts").map(|h| h + " | ").unwrap_or_default()
    );
    let _ = writeln!(out, "|---:|---|---:|---|---:|---|---|{}---|---:|---:|", if shown { "---|" } else { "" });
    for c in &r.candidates {
        let kc = c.metrics.key_characteristics.as_ref().filter(|_| super::text::figures_shown(c));
        let key = c.key.to_string();
        let top = kc.map(top_value).unwrap_or_else(|| "not measured".into());
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {} | {} | {} | {} | {}{} | {} | {} |",
            c.rank,
            esc(&key),
            c.score,
            c.verdict.as_str(),
            kc.map(|k| k.estimated_num_distinct_values.range.value.to_string()).unwrap_or_else(|| "-".into()),
            esc(&top),
            kc.map(|k| k.monotonicity.kind.as_str()).unwrap_or("not measured"),
            if shown { figure(c, super::table::inserts_cell) + " | " } else { String::new() },
            figure(c, super::table::fan_out_cell),
            figure(c, |c| pct(c.metrics.read_distribution.percentage_of_single_shard_reads)),
            figure(c, |c| pct(c.metrics.read_distribution.percentage_of_scatter_gather_reads)),
        );
    }
    for c in &r.candidates {
        let _ = writeln!(out, "\n**#{} `{}`: {} ({})**\n", c.rank, esc(&c.key.to_string()), c.score, c.verdict.as_str());
        for reason in &c.reasons {
            let _ = writeln!(out, "- {}", esc(&reason.to_string()));
        }
        if let Some(w) = &c.compared_with_next {
            let _ = writeln!(out, "- ranking: {}", esc(w));
        }
    }
    for n in &r.notes {
        let _ = writeln!(out, "\n> {}", esc(n));
    }
    out
}

/// The answer first: the recommended key, why, the warning that matters most, the commands.
fn render_answer(r: &Report, out: &mut String) {
    let Some(a) = super::text::answer(r) else {
        if let Some(why) = super::text::no_answer(r) {
            let _ = writeln!(out, "**{}**\n", esc(&why));
        }
        return;
    };
    let (lead, tail) = super::text::headline(&a, r.candidates.len());
    let _ = writeln!(out, "**Recommended: {lead}`{}`{tail}**\n", esc(&a.rec.key.to_string()));
    if let Some(w) = &a.why {
        let _ = writeln!(out, "Why: {}\n", esc(w));
    }
    for w in &a.warnings {
        let _ = writeln!(out, "> **{}**\n", esc(w));
    }
    let _ = writeln!(out, "```js");
    for c in &a.rec.commands {
        let _ = writeln!(out, "{c}");
    }
    let _ = writeln!(out, "```");
    for n in &a.rec.notes {
        let _ = writeln!(out, "- {}", esc(n));
    }
    let _ = writeln!(out);
}

/// One table row per rule; with a baseline, a violation is known, new or worse.
fn rule_rows(r: &CheckReport, ns: &str, rules: &[crate::policy::RuleResult], out: &mut String) {
    let _ = writeln!(out, "| rule | result | detail |\n|---|---|---|");
    for x in rules {
        let res = if x.skipped.is_some() {
            "skipped"
        } else if x.warning {
            "warning"
        } else if x.passed {
            "pass"
        } else if r.is_known(ns, x.rule) {
            "known"
        } else if r.is_worse(ns, x.rule) {
            "**WORSE**"
        } else if r.baseline.is_some() {
            "**NEW**"
        } else {
            "**FAIL**"
        };
        let causes: String = x.culprit.iter().flat_map(|c| &c.causes).map(|c| format!("<br>· {}", esc(c))).collect();
        let _ = writeln!(out, "| `{}` | {} | {}{causes} |", x.rule, res, esc(&x.message));
    }
    let _ = writeln!(out);
}

fn render_check(r: &CheckReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### Shard key policy: {}\n", if r.passed { "passed ✅" } else { "failed ❌" });
    if let Some(b) = &r.baseline {
        let _ = writeln!(out, "Against the baseline `{}`: {}\n", esc(&b.file), b.counts());
        for (kind, list) in [("new", &b.new), ("worse", &b.worse)] {
            for c in list {
                let _ = writeln!(out, "- **{kind}**: {}", esc(&c.message));
            }
        }
        if b.failed() {
            let _ = writeln!(out);
        }
    }
    for c in &r.collections {
        let _ = writeln!(
            out,
            "**{}** `{}`: score {} ({}), {}\n",
            c.namespace,
            esc(&c.key.to_string()),
            c.score,
            c.verdict.as_str(),
            if c.passed {
                "pass"
            } else if r.baseline.is_some() && c.rules.iter().filter(|x| !x.passed).all(|x| r.is_known(&c.namespace, x.rule)) {
                "known violations only"
            } else {
                "FAIL"
            }
        );
        rule_rows(r, &c.namespace, &c.rules, &mut out);
    }
    if !r.database_rules.is_empty() {
        let _ = writeln!(out, "**databases {}**\n", esc(&r.databases.join(", ")));
        rule_rows(r, "", &r.database_rules, &mut out);
    }
    let _ = writeln!(out, "_policy: {}_", esc(&r.policy));
    out
}
