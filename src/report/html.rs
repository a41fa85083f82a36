//! `--format html`: one self-contained file to attach to a ticket. No script, no external
//! font, image or stylesheet: the pictures are inline SVG drawn from the same report model
//! as the JSON (so `--redact` holds here too).

use super::analysis::{CandidateReport, Report};
use super::check::CheckReport;
use super::workload::WorkloadReport;
use super::writer::Writer;
use crate::metrics::cluster::Benefit;
use crate::util::text::printable;
use std::fmt::Write as _;

pub(super) struct HtmlWriter;

/// Text made safe for HTML (and for the terminal-safety rules of every writer).
fn esc(s: &str) -> String {
    printable(s, true).replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem;color:#1d2733;max-width:1200px}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ccd3db}h3{font-size:1rem}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ccd3db;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#eef2f6}.n{text-align:right}.good{background:#d9f2dc}.acceptable{background:#fff3c4}.poor,.bad,.invalid{background:#f8d7d7}
pre{background:#f4f6f8;padding:.5rem;overflow-x:auto}.muted{color:#5b6775}figure{margin:.5rem 0}figcaption{font-size:.85rem;color:#5b6775}
svg text{font-size:11px;fill:#1d2733}";

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n{body}</body></html>\n",
        esc(title)
    )
}

/// Grouped horizontal bars: one group per label, one bar per series (percentages).
fn grouped_bars(labels: &[String], series: &[(&str, &str, Vec<f64>)], max: f64) -> String {
    let row = 14.0;
    let group = row * series.len() as f64 + 8.0;
    let height = group * labels.len() as f64 + 24.0;
    let mut s = format!("<svg width=\"640\" height=\"{height}\" role=\"img\">");
    for (g, label) in labels.iter().enumerate() {
        let y0 = g as f64 * group;
        let _ = write!(s, "<text x=\"0\" y=\"{}\">{}</text>", y0 + row, esc(label));
        for (k, (name, colour, values)) in series.iter().enumerate() {
            let v = values.get(g).copied().unwrap_or(0.0);
            let w = if max > 0.0 { (v / max * 420.0).max(0.0) } else { 0.0 };
            let y = y0 + k as f64 * row;
            let _ = write!(
                s,
                "<rect x=\"110\" y=\"{y}\" width=\"{w:.1}\" height=\"{}\" fill=\"{colour}\"><title>{name} {v:.1}%</title></rect><text x=\"{:.1}\" y=\"{}\">{name} {v:.1}%</text>",
                row - 3.0,
                114.0 + w,
                y + row - 4.0
            );
        }
    }
    s.push_str("</svg>");
    s
}

/// Vertical bars over the ranges (reads or writes by range).
fn range_bars(values: &[u64], colour: &str) -> String {
    let max = values.iter().copied().max().unwrap_or(0).max(1) as f64;
    let w = 600.0 / values.len().max(1) as f64;
    let mut s = String::from("<svg width=\"620\" height=\"80\" role=\"img\">");
    for (i, v) in values.iter().enumerate() {
        let h = *v as f64 / max * 70.0;
        let _ = write!(
            s,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"{colour}\"><title>range {} : {v}</title></rect>",
            i as f64 * w,
            75.0 - h,
            (w - 1.0).max(1.0),
            i + 1
        );
    }
    s.push_str("<line x1=\"0\" y1=\"75\" x2=\"600\" y2=\"75\" stroke=\"#5b6775\"/></svg>");
    s
}

fn candidate(c: &CandidateReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<h2 id=\"c{}\">#{} <code>{}</code>: {} ({})</h2>",
        c.rank,
        c.rank,
        esc(&c.key.to_string()),
        c.score,
        c.verdict.as_str()
    );
    if let Some(w) = &c.proposed_because {
        let _ = writeln!(s, "<p class=\"muted\">proposed: {}</p>", esc(w));
    }
    let _ = writeln!(s, "<ul>");
    for r in &c.reasons {
        let _ = writeln!(s, "<li>{}</li>", esc(&r.to_string()));
    }
    if let Some(w) = &c.compared_with_next {
        let _ = writeln!(s, "<li><strong>ranking:</strong> {}</li>", esc(w));
    }
    let _ = writeln!(s, "</ul>");
    if !super::text::figures_shown(c) {
        return s;
    }
    // Data, reads, writes, inserts per shard at scale.
    let cl = &c.metrics.cluster;
    let labels: Vec<String> = cl.at_scale.shards.iter().map(|x| x.shard.clone()).collect();
    let get = |f: &dyn Fn(&crate::metrics::cluster::ShardLoad) -> f64| cl.at_scale.shards.iter().map(f).collect::<Vec<f64>>();
    let mut series = vec![("reads", "#4878b8", get(&|x| x.reads_percent)), ("writes", "#d08a2e", get(&|x| x.writes_percent))];
    let inserts = super::table::InsertsShown::of_candidate(Some(c));
    let mut caption_inserts = "";
    if cl.scale.benefit != Benefit::Unknown {
        series.insert(0, ("data", "#6b8e5a", get(&|x| x.data_percent)));
        match inserts {
            super::table::InsertsShown::Hidden => {}
            super::table::InsertsShown::Sampled => {
                series.push(("inserts", "#a05a9c", get(&|x| x.inserts_percent)));
                caption_inserts = ", inserts";
            }
            super::table::InsertsShown::Assumed => {
                series.push(("inserts (assumed)", "#a05a9c", get(&|x| x.inserts_percent)));
                caption_inserts = ", assumed inserts";
            }
        }
    }
    series.push(("operations", "#8c3b3b", get(&|x| x.operations_percent)));
    let _ = writeln!(
        s,
        "<figure>{}<figcaption>{} shards at scale ({}): share of data, and of sampled reads, writes{caption_inserts} and all operations reaching each shard. {}</figcaption></figure>",
        grouped_bars(&labels, &series, 100.0),
        cl.num_shards,
        esc(cl.num_shards_from.as_str()),
        esc(&cl.verdict)
    );
    // The most common values against the range size.
    if let Some(kc) = &c.metrics.key_characteristics {
        let per_doc = kc.num_docs_total as f64 / kc.num_docs_sampled.max(1) as f64 * kc.avg_doc_size_bytes as f64;
        // Values held once say nothing about chunk sizes: only repeated ones are drawn.
        let repeated: Vec<&crate::metrics::characteristics::MostCommonValue> =
            kc.most_common_values.iter().filter(|v| v.frequency > 1).collect();
        let short = |v: &serde_json::Value| {
            let t = crate::util::text::short_value(v);
            if t.chars().count() > 16 {
                format!("{}…", t.chars().take(15).collect::<String>())
            } else {
                t
            }
        };
        let labels: Vec<String> = repeated.iter().map(|v| short(&v.value)).collect();
        let mib: Vec<f64> = repeated.iter().map(|v| v.frequency as f64 * per_doc / 1_048_576.0).collect();
        let chunk = kc.jumbo_chunk_risk.chunk_size_bytes as f64 / 1_048_576.0;
        if !labels.is_empty() {
            let max = mib.iter().cloned().fold(chunk, f64::max);
            let pct: Vec<f64> = mib.iter().map(|m| m / max * 100.0).collect();
            let mut svg = grouped_bars(&labels, &[("size", "#7a7fb8", pct)], 100.0);
            // The range size as a vertical line.
            let x = 110.0 + chunk / max * 420.0;
            svg = svg.replacen(
                "</svg>",
                &format!("<line x1=\"{x:.1}\" y1=\"0\" x2=\"{x:.1}\" y2=\"400\" stroke=\"#c0392b\" stroke-dasharray=\"4\"/></svg>"),
                1,
            );
            let sizes: Vec<String> = labels.iter().zip(&mib).map(|(l, m)| format!("{} ≈ {m:.0} MiB", l)).collect();
            let _ = writeln!(
                s,
                "<figure>{svg}<figcaption>Most common values, their estimated documents' size against the {chunk:.0} MiB range size (dashed): {}.</figcaption></figure>",
                esc(&sizes.join(", "))
            );
        }
    }
    let rd = &c.metrics.read_distribution;
    let wd = &c.metrics.write_distribution;
    if !rd.num_reads_by_range.is_empty() {
        let _ = writeln!(
            s,
            "<figure>{}<figcaption>Sampled reads by key range ({} ranges).</figcaption></figure>",
            range_bars(&rd.num_reads_by_range, "#4878b8"),
            rd.num_reads_by_range.len()
        );
    }
    if !wd.num_writes_by_range.is_empty() {
        let _ = writeln!(
            s,
            "<figure>{}<figcaption>Sampled writes by key range.</figcaption></figure>",
            range_bars(&wd.num_writes_by_range, "#d08a2e")
        );
    }
    if !c.metrics.query_shapes.is_empty() {
        let _ = writeln!(s, "<table><tr><th class=\"n\">count</th><th>shape</th><th>label (server)</th><th>commands</th></tr>");
        for q in c.metrics.query_shapes.iter().take(12) {
            let ops: Vec<String> = q.ops.iter().map(|(k, v)| format!("{k} {v}")).collect();
            let _ = writeln!(
                s,
                "<tr><td class=\"n\">{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                q.count,
                esc(&q.shape),
                q.label.as_str(),
                esc(&ops.join(", "))
            );
        }
        let _ = writeln!(s, "</table>");
    }
    s
}

fn render(r: &Report) -> String {
    let mut b = String::new();
    let ns = r.namespace.as_deref().unwrap_or("(collection)");
    let _ = writeln!(b, "<h1>Shard key analysis: {}</h1>", esc(ns));
    let _ = writeln!(b, "<p>{}</p>", esc(&super::text::summary_line(r)));
    match super::text::answer(r) {
        Some(a) => {
            let (lead, tail) = super::text::headline(&a, r.candidates.len());
            let _ = writeln!(b, "<h2>Recommended: {}<code>{}</code>{}</h2>", esc(lead), esc(&a.rec.key.to_string()), esc(&tail));
            if let Some(w) = &a.why {
                let _ = writeln!(b, "<p>Why: {}</p>", esc(w));
            }
            for w in &a.warnings {
                let _ = writeln!(b, "<p class=\"caveat\"><strong>{}</strong></p>", esc(w));
            }
            let _ = writeln!(b, "<pre>{}</pre><ul>", esc(&a.rec.commands.join("\n")));
            for n in &a.rec.notes {
                let _ = writeln!(b, "<li>{}</li>", esc(n));
            }
            let _ = writeln!(b, "</ul>");
        }
        None => {
            if let Some(why) = super::text::no_answer(r) {
                let _ = writeln!(b, "<p class=\"caveat\"><strong>{}</strong></p>", esc(&why));
            }
        }
    }
    let _ = writeln!(b, "<h2>Ranking</h2>");
    let inserts = super::table::InsertsShown::of(r);
    let _ = writeln!(
        b,
        "<table><tr><th class=\"n\">rank</th><th>key</th><th class=\"n\">score</th><th>verdict</th><th>shards per read / write</th>{}</tr>",
        inserts.header("inserts").map(|h| format!("<th>{h}</th>")).unwrap_or_default()
    );
    for c in &r.candidates {
        let ins = match inserts {
            super::table::InsertsShown::Hidden => String::new(),
            _ => format!("<td>{}</td>", esc(&if super::text::figures_shown(c) { super::table::inserts_cell(c) } else { "-".into() })),
        };
        let _ = writeln!(
            b,
            "<tr><td class=\"n\">{}</td><td><a href=\"#c{}\"><code>{}</code></a></td><td class=\"n\">{}</td><td class=\"{}\">{}</td><td>{}</td>{ins}</tr>",
            c.rank,
            c.rank,
            esc(&c.key.to_string()),
            c.score,
            c.verdict.as_str(),
            c.verdict.as_str(),
            esc(&if super::text::figures_shown(c) { super::table::fan_out_cell(c) } else { "-".into() }),
        );
    }
    let _ = writeln!(b, "</table>");
    for c in &r.candidates {
        b.push_str(&candidate(c));
    }
    if !r.notes.is_empty() {
        let _ = writeln!(b, "<h2>Notes</h2><ul>");
        for n in &r.notes {
            let _ = writeln!(b, "<li>{}</li>", esc(n));
        }
        let _ = writeln!(b, "</ul>");
    }
    let _ = writeln!(b, "<p class=\"muted\">{} {}</p>", r.tool.name, r.tool.version);
    page(&format!("shardkey: {ns}"), &b)
}

impl Writer for HtmlWriter {
    fn analyze(&self, r: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(render(r).as_bytes())
    }

    fn check(&self, r: &CheckReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut b = format!("<h1>Shard key policy {}: {}</h1>", esc(&r.policy), if r.passed { "passed" } else { "failed" });
        for c in &r.collections {
            let _ = write!(
                b,
                "<h2>{} <code>{}</code>: {} ({})</h2><table><tr><th>rule</th><th>result</th><th>message</th></tr>",
                esc(&c.namespace),
                esc(&c.key.to_string()),
                c.score,
                c.verdict.as_str()
            );
            check_rows(&mut b, &c.rules);
        }
        if !r.database_rules.is_empty() {
            let _ = write!(
                b,
                "<h2>databases {}</h2><table><tr><th>rule</th><th>result</th><th>message</th></tr>",
                esc(&r.databases.join(", "))
            );
            check_rows(&mut b, &r.database_rules);
        }
        if let Some(bl) = &r.baseline {
            let _ = write!(b, "<p>Against the baseline <code>{}</code>: {}</p><ul>", esc(&bl.file), bl.counts());
            for (kind, list) in [("new", &bl.new), ("worse", &bl.worse)] {
                for c in list {
                    let _ = write!(b, "<li><b>{kind}</b>: {}</li>", esc(&c.message));
                }
            }
            b.push_str("</ul>");
        }
        out.write_all(page("shardkey check", &b).as_bytes())
    }

    fn workload(&self, r: &WorkloadReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut b = format!("<h1>Query workload</h1><p>{}</p>", esc(&super::text::workload_summary(r)));
        for ns in &r.namespaces {
            let _ = write!(b, "<h2>{}: {} operations</h2><table><tr><th class=\"n\">count</th><th>shape</th><th class=\"n\">ms p50</th><th class=\"n\">ms p95</th><th class=\"n\">COLLSCAN</th></tr>", esc(&ns.namespace), ns.num_operations);
            for s in &ns.shapes {
                let ms = |x: Option<u32>| x.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
                let _ = write!(b, "<tr><td class=\"n\">{}</td><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>", s.count, esc(&s.shape), ms(s.duration_millis.p50), ms(s.duration_millis.p95), s.collscan_words());
            }
            b.push_str("</table>");
        }
        out.write_all(page("shardkey workload", &b).as_bytes())
    }

    fn plan(&self, p: &crate::plan::outcome::Plan, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(page("shardkey plan", &super::plan::html_body(p, esc)).as_bytes())
    }
}

/// One table row per rule, the culprit's causes under the message; closes the table.
fn check_rows(b: &mut String, rules: &[crate::policy::RuleResult]) {
    for x in rules {
        let (class, word) = match (x.passed, x.warning) {
            (true, true) => ("bad", "warning"),
            (true, false) => ("good", "ok"),
            (false, _) => ("bad", "FAIL"),
        };
        let causes: String = x.culprit.iter().flat_map(|c| &c.causes).map(|c| format!("<br>· {}", esc(c))).collect();
        let _ = write!(b, "<tr><td>{}</td><td class=\"{class}\">{word}</td><td>{}{causes}</td></tr>", x.rule, esc(&x.message));
    }
    b.push_str("</table>");
}
