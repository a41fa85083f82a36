//! Terminal writer: the answer first (the recommended key, why, the warning that matters,
//! the commands), then the ranking, then each candidate's reasons, cluster and query shapes.
//! Fits 100 columns; `--wide` gives the full 11-column ranking and leaves lines unwrapped.

use super::analysis::Report;
use super::check::CheckReport;
use super::text::{server_headline, summary_line, top_value};
use super::workload::WorkloadReport;
use super::writer::Writer;
use crate::metrics::cluster::Benefit;
use crate::util::text::{count_of, pct, printable};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement, Table};
use std::fmt::Write;

pub(super) struct TableWriter {
    /// `--wide`: today's full ranking table, lines as long as they are.
    pub(super) wide: bool,
}

/// The columns the default output fits (README "Terminal conventions").
pub(crate) const WIDTH: usize = 100;

impl Writer for TableWriter {
    fn analyze(&self, r: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let text = printable(&render(r, self.wide), true);
        let text = if self.wide { text } else { super::text::wrap(&text, WIDTH) };
        out.write_all(if colour() { colour_verdicts(&text) } else { text }.as_bytes())
    }

    fn check(&self, r: &CheckReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(printable(&render_check(r), true).as_bytes())
    }

    fn workload(&self, r: &WorkloadReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        // The same 100 columns as the analysis (README "Terminal conventions"; a new user's ran
        // to 152).
        out.write_all(super::text::wrap(&printable(&render_workload(r), true), WIDTH).as_bytes())
    }

    fn plan(&self, p: &crate::plan::outcome::Plan, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        // Prose wrapped to the same 100 columns as the analysis (the wide table leaves it).
        let text = printable(&super::plan::table(p), true);
        out.write_all(if self.wide { text } else { super::text::wrap(&text, WIDTH) }.as_bytes())
    }
}

/// `workload` as text: one table of shapes per namespace.
fn render_workload(r: &WorkloadReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", super::text::workload_summary(r));
    for ns in &r.namespaces {
        let ops: Vec<String> = ns.operations.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(
            out,
            "\n{}: {} ({}), {} (durations in ms; exam/ret: documents examined per document returned)",
            ns.namespace,
            count_of(ns.num_operations, "operation", "operations"),
            ops.join(", "),
            count_of(ns.num_shapes as u64, "shape", "shapes")
        );
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic).set_width(WIDTH as u16);
        // Short headers keep the shapes whole in 100 columns; the durations are in ms (said above).
        t.set_header(vec!["count", "shape", "commands", "p50", "p95", "max", "total", "exam/ret", "COLLSCAN"]);
        for s in &ns.shapes {
            let cmds: Vec<String> = s.commands.iter().map(|(k, v)| format!("{k} {v}")).collect();
            let d = &s.duration_millis;
            let ms = |x: Option<u32>| x.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
            t.add_row(vec![
                Cell::new(s.count).set_alignment(CellAlignment::Right),
                Cell::new(&s.shape),
                Cell::new(cmds.join(", ")),
                Cell::new(ms(d.p50)).set_alignment(CellAlignment::Right),
                Cell::new(ms(d.p95)).set_alignment(CellAlignment::Right),
                Cell::new(ms(d.max)).set_alignment(CellAlignment::Right),
                Cell::new(d.total).set_alignment(CellAlignment::Right),
                Cell::new(s.docs_examined_per_returned.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into()))
                    .set_alignment(CellAlignment::Right),
                Cell::new(s.collscan_words()).set_alignment(CellAlignment::Right),
            ]);
        }
        let _ = writeln!(out, "{t}");
    }
    out
}

fn render(r: &Report, wide: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", summary_line(r));
    if let Some(a) = &r.audit {
        let per: Vec<String> = a.shards.iter().map(|s| format!("{} {} ({} jumbo)", s.shard, s.num_chunks, s.num_jumbo_chunks)).collect();
        let _ = writeln!(
            out,
            "sharded on {}: {} chunks (config.chunks by {}); per shard: {}; chunk-count imbalance {}",
            a.shard_key,
            a.num_chunks,
            a.chunk_format,
            per.join(", "),
            a.chunk_count_imbalance.map(|x| format!("{x:.1}×")).unwrap_or_else(|| "∞ (a shard holds none)".into())
        );
        for j in &a.jumbo_flagged_chunks {
            let _ = writeln!(out, "  jumbo-flagged chunk {} .. {} on {}", j.min, j.max, j.shard);
        }
    }
    render_answer(r, &mut out);
    let _ = writeln!(out, "{}", if wide { full_ranking(r) } else { compact_ranking(r) });
    render_details(r, &mut out, wide);
    for n in &r.notes {
        let _ = writeln!(out, "\nnote: {n}");
    }
    out
}

/// The recommended key, why, the warning that matters most, and the commands.
fn render_answer(r: &Report, out: &mut String) {
    let Some(a) = super::text::answer(r) else {
        if let Some(why) = super::text::no_answer(r) {
            let _ = writeln!(out, "\n{why}\n");
        } else {
            let _ = writeln!(out);
        }
        return;
    };
    let (lead, tail) = super::text::headline(&a, r.candidates.len());
    let _ = writeln!(out, "\nrecommended: {lead}{}{tail}", a.rec.key);
    if let Some(w) = &a.why {
        let _ = writeln!(out, "  why: {w}");
    }
    for w in &a.warnings {
        let _ = writeln!(out, "  ! {w}");
    }
    for c in &a.rec.commands {
        let _ = writeln!(out, "  {c}");
    }
    for n in &a.rec.notes {
        let _ = writeln!(out, "  - {n}");
    }
    let _ = writeln!(out);
}

/// The ranking in 100 columns: what decides a key at a glance.
fn compact_ranking(r: &Report) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic).set_width(WIDTH as u16);
    let inserts = InsertsShown::of(r);
    let mut header: Vec<String> =
        ["#", "key", "score", "verdict", "1-shard\nops", "shards\nper op", "busiest\nshard"].iter().map(|h| h.to_string()).collect();
    header.extend(match inserts {
        InsertsShown::Assumed => Some("inserts land\n(assumed)".to_string()),
        i => i.header("inserts land\n(on shards)"),
    });
    t.set_header(header);
    // The recommended key's row is marked: it is not row 1 when a blocked or capped key
    // scores above it.
    let recommended = r.recommendation.as_ref().map(|x| &x.key);
    for c in &r.candidates {
        let cost = &c.metrics.cluster.cost;
        let shown = super::text::figures_shown(c);
        let rank = if recommended == Some(&c.key) { format!("*{}", c.rank) } else { c.rank.to_string() };
        let figure = |s: String| if shown { s } else { "-".into() };
        let measured = cost.num_reads + cost.num_writes > 0;
        let busiest = c.metrics.cluster.at_scale.shards.iter().map(|s| s.operations_percent).fold(0.0, f64::max);
        let mut row = vec![
            Cell::new(rank).set_alignment(CellAlignment::Right),
            Cell::new(c.key.to_string()),
            Cell::new(c.score).set_alignment(CellAlignment::Right),
            Cell::new(c.verdict.as_str()),
            Cell::new(figure(pct(cost.percentage_of_single_shard_ops))).set_alignment(CellAlignment::Right),
            Cell::new(figure(
                cost.mean_shards_per_op.map(|m| format!("{m:.2}/{}", c.metrics.cluster.num_shards)).unwrap_or_else(|| "-".into()),
            ))
            .set_alignment(CellAlignment::Right),
            Cell::new(figure(if measured { format!("{busiest:.1}%") } else { "-".into() })).set_alignment(CellAlignment::Right),
        ];
        if inserts != InsertsShown::Hidden {
            row.push(Cell::new(figure(inserts_cell(c))));
        }
        t.add_row(row);
    }
    // Figures never wrap; the key takes what is left of the 100 columns.
    for (i, col) in t.column_iter_mut().enumerate() {
        if i != 1 {
            col.set_constraint(comfy_table::ColumnConstraint::ContentWidth);
        }
    }
    t
}

/// `--wide`: every headline figure of every candidate in one table.
fn full_ranking(r: &Report) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic).set_width(180);
    let inserts = InsertsShown::of(r);
    let mut header: Vec<String> =
        ["rank", "key", "score", "verdict", "distinct", "top value", "monotonicity"].iter().map(|h| h.to_string()).collect();
    header.extend(inserts.header("inserts (shards)"));
    header.extend(["shards per read / write", "reads: 1 shard / some / all", "writes: 1 shard / some / all"].map(String::from));
    t.set_header(header);
    for c in &r.candidates {
        let kc = c.metrics.key_characteristics.as_ref();
        let rd = &c.metrics.read_distribution;
        let wd = &c.metrics.write_distribution;
        let (top, mono, distinct) = match kc {
            _ if !super::text::figures_shown(c) => ("-".into(), "-".into(), "-".into()),
            Some(kc) => (
                top_value(kc),
                match kc.monotonicity.record_id_correlation_coefficient {
                    Some(x) => format!("{} ({x:.2})", kc.monotonicity.kind.as_str()),
                    None => kc.monotonicity.kind.as_str().to_string(),
                },
                kc.estimated_num_distinct_values.range.value.to_string(),
            ),
            None => ("not measured".into(), "not measured".into(), "-".into()),
        };
        let dist = |a: Option<f64>, b: Option<f64>, c: Option<f64>, n: u64| {
            if n == 0 {
                "no sample".to_string()
            } else {
                format!("{} / {} / {} of {n}", pct(a), pct(b), pct(c))
            }
        };
        let mut row = vec![
            Cell::new(c.rank).set_alignment(CellAlignment::Right),
            Cell::new(c.key.to_string()),
            Cell::new(c.score).set_alignment(CellAlignment::Right),
            Cell::new(c.verdict.as_str()),
            Cell::new(distinct).set_alignment(CellAlignment::Right),
            Cell::new(top),
            Cell::new(mono),
        ];
        if super::text::figures_shown(c) {
            if inserts != InsertsShown::Hidden {
                row.push(Cell::new(inserts_cell(c)));
            }
            row.extend([
                Cell::new(fan_out_cell(c)),
                Cell::new(dist(
                    rd.percentage_of_single_shard_reads,
                    rd.percentage_of_multi_shard_reads,
                    rd.percentage_of_scatter_gather_reads,
                    rd.sample_size.total,
                )),
                Cell::new(dist(
                    wd.percentage_of_single_shard_writes,
                    wd.percentage_of_multi_shard_writes,
                    wd.percentage_of_scatter_gather_writes,
                    wd.sample_size.total,
                )),
            ]);
        } else {
            row.extend((0..3 + (inserts != InsertsShown::Hidden) as usize).map(|_| Cell::new("-")));
        }
        t.add_row(row);
    }
    t
}

/// Each candidate's reasons, cluster, index and query shapes.
/// Candidates whose details the default output gives (every one with `--wide`): the ranking
/// above already names the rest, and nine full blocks made a 300-line first read.
const DETAILED: usize = 3;

fn render_details(r: &Report, out: &mut String, wide: bool) {
    if r.candidates.iter().any(super::text::figures_shown) {
        // Said once: why the per-shard shares of operations add up to more than 100%.
        let inserts = if InsertsShown::of(r) == InsertsShown::Hidden { "" } else { ", inserts" };
        // The mark is said only when a row carries it (no recommendation: no row marked).
        let mark = if r.recommendation.is_some() { "* the recommended key. " } else { "" };
        let _ = writeln!(
            out,
            "\n{mark}Per candidate: why it scores what it does; each shard at scale with its share of the data and of the \
             sampled reads, writes{inserts} and operations that reach it ({}); the query shapes, most frequent first.",
            super::text::OPS_COUNT_ON_EACH
        );
    }
    let recommended = r.recommendation.as_ref().map(|x| &x.key);
    let (detailed, rest): (Vec<_>, Vec<_>) = r.candidates.iter().partition(|c| wide || c.rank <= DETAILED || Some(&c.key) == recommended);
    if !rest.is_empty() {
        let first = rest.iter().map(|c| c.rank).min().unwrap_or(0);
        let last = rest.iter().map(|c| c.rank).max().unwrap_or(0);
        let _ = writeln!(out, "Details below for the first {DETAILED}; for #{first}-#{last} too: --wide, or --format json.");
    }
    for c in detailed {
        let _ = writeln!(out, "\n#{} {}: {} ({})", c.rank, c.key, c.score, c.verdict.as_str());
        if let Some(w) = &c.proposed_because {
            let _ = writeln!(out, "  proposed: {w}");
        }
        for reason in &c.reasons {
            let _ = writeln!(out, "  - {reason}");
        }
        if let Some(w) = &c.compared_with_next {
            let _ = writeln!(out, "  ranking: {w}");
        }
        if !super::text::figures_shown(c) {
            if let Some(si) = &c.metrics.supporting_index {
                for u in &si.unusable {
                    let _ = writeln!(out, "  index {u} cannot support this key");
                }
            }
            continue;
        }
        let cl = &c.metrics.cluster;
        let _ = writeln!(
            out,
            "  cluster ({}, {} from {}): {}",
            cl.basis,
            count_of(cl.num_shards as u64, "shard", "shards"),
            cl.num_shards_from,
            cl.verdict
        );
        let measured = cl.scale.benefit != Benefit::Unknown;
        let inserts = InsertsShown::of_candidate(Some(c));
        for sh in &cl.at_scale.shards {
            if measured {
                // Assumed inserts: the cluster line above says so.
                let ins = match inserts {
                    InsertsShown::Hidden => String::new(),
                    _ => format!(" {:>5.1}% inserts", sh.inserts_percent),
                };
                let _ = writeln!(
                    out,
                    "    {:<10} {} {:>5.1}% data {:>5.1}% reads {:>5.1}% writes{ins} {:>5.1}% ops",
                    sh.shard,
                    bar(sh.data_percent),
                    sh.data_percent,
                    sh.reads_percent,
                    sh.writes_percent,
                    sh.operations_percent,
                );
            } else {
                // No documents: data and inserts are not known, only where the queries go.
                let _ = writeln!(
                    out,
                    "    {:<10} {:>5.1}% reads {:>5.1}% writes {:>5.1}% ops",
                    sh.shard, sh.reads_percent, sh.writes_percent, sh.operations_percent
                );
            }
        }
        // The notes say it once when it is the same for every candidate.
        if cl.scale.benefit != Benefit::Full && !r.notes.contains(&cl.scale.words) {
            let _ = writeln!(out, "    today: {}", cl.scale.words);
        }
        for j in &cl.jumbo_chunks {
            let _ = writeln!(out, "    jumbo chunk {} .. {} on {}: ~{} MiB", j.min, j.max, j.shard, j.estimated_bytes / (1024 * 1024));
        }
        if let Some(si) = &c.metrics.supporting_index {
            match (&si.name, &si.create_index) {
                (Some(n), _) => {
                    let _ = writeln!(out, "  supporting index: {n}{}", if si.is_unique { " (unique)" } else { "" });
                }
                (None, Some(cmd)) => {
                    let _ = writeln!(out, "  no supporting index; sharding needs one: {cmd}");
                }
                _ => {}
            }
            for u in &si.unusable {
                let _ = writeln!(out, "  index {u} cannot support this key");
            }
        }
        if let Some(v) = &c.server_analyze_shard_key {
            let _ = writeln!(out, "  server analyzeShardKey: {}", server_headline(v));
        }
        for s in c.metrics.query_shapes.iter().take(8) {
            let ops: Vec<String> = s.ops.iter().map(|(k, v)| format!("{k} {v}")).collect();
            let _ = writeln!(out, "    {:>6}× {:<14} {} [{}]", s.count, s.label.as_str(), s.shape, ops.join(", "));
        }
    }
}

/// Whether to colour this output: `--color always`, or auto with stdout a terminal and no `NO_COLOR`.
fn colour() -> bool {
    use std::io::IsTerminal;
    crate::util::term::color_allowed()
        && (crate::util::term::color_mode() == crate::util::term::ColorMode::Always || std::io::stdout().is_terminal())
}

/// Colour the verdict column of the ranked table (green / yellow / red). Applied after the
/// text was made terminal-safe, so the only escape sequences in the output are these.
fn colour_verdicts(text: &str) -> String {
    const VERDICTS: [(&str, &str); 5] = [("good", "32"), ("acceptable", "33"), ("poor", "31"), ("bad", "31"), ("invalid", "31")];
    let mut out = String::with_capacity(text.len() + 256);
    for line in text.split_inclusive('\n') {
        let cells: Vec<&str> = line.split('┆').collect();
        match cells.get(3).and_then(|c| VERDICTS.iter().find(|(w, _)| c.trim() == *w)) {
            Some((word, code)) if line.starts_with('│') => {
                let coloured = cells[3].replacen(word, &format!("\x1b[{code}m{word}\x1b[0m"), 1);
                let mut parts = cells.clone();
                parts[3] = &coloured;
                out.push_str(&parts.join("┆"));
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// Whether the reports show where inserts land: when the sampled operations hold inserts,
/// labelled assumed when nothing tells (no operation, or sampled queries only), and not at
/// all when the operations show none (where inserts land is then not judged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum InsertsShown {
    Sampled,
    Assumed,
    Hidden,
}

impl InsertsShown {
    /// The same for every candidate: the evidence is the collection's.
    pub(super) fn of(r: &Report) -> InsertsShown {
        Self::of_candidate(r.candidates.first())
    }

    pub(super) fn of_candidate(c: Option<&super::analysis::CandidateReport>) -> InsertsShown {
        use crate::metrics::insert_order::InsertEvidence;
        match c.map(|c| c.metrics.insert_order.inserts_in_workload) {
            Some(InsertEvidence::NoneSampled) => InsertsShown::Hidden,
            Some(InsertEvidence::Sampled) => InsertsShown::Sampled,
            _ => InsertsShown::Assumed,
        }
    }

    /// A header with its label: "inserts" or "inserts (assumed)"; None when hidden.
    pub(super) fn header(self, sampled: &str) -> Option<String> {
        match self {
            InsertsShown::Sampled => Some(sampled.to_string()),
            InsertsShown::Assumed => Some("inserts (assumed)".to_string()),
            InsertsShown::Hidden => None,
        }
    }
}

/// Where inserts land (our insert order), e.g. "increasing (creation time)".
pub(super) fn inserts_cell(c: &super::analysis::CandidateReport) -> String {
    use crate::metrics::insert_order::InsertKind;
    let io = &c.metrics.insert_order;
    // Where in the key space inserts land, then how many shards take them.
    let kind = match io.kind {
        InsertKind::Increasing => "top end",
        InsertKind::Decreasing => "bottom end",
        InsertKind::TopOfEachGroup => "group tops",
        InsertKind::Spread => "spread",
        InsertKind::Unknown => return "not measured".into(),
    };
    if c.metrics.key_characteristics.is_none() && io.kind == InsertKind::Spread {
        return "spread (hashed)".into();
    }
    let (taking, shards) = (c.metrics.cluster.growth.shards_taking_inserts, c.metrics.cluster.num_shards);
    // The cluster model put every insert on one shard (the newest documents share one key
    // range): not a spread, whatever the creation-time order says; the reasons say the same.
    let kind = if io.kind == InsertKind::Spread && taking <= 1 && shards > 1 { "one shard" } else { kind };
    format!("{kind}, {taking}/{shards}")
}

/// Mean shards per read and per write under the cluster model.
pub(super) fn fan_out_cell(c: &super::analysis::CandidateReport) -> String {
    let cost = &c.metrics.cluster.cost;
    let f = |x: Option<f64>| x.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into());
    format!("{} / {}", f(cost.mean_shards_per_read), f(cost.mean_shards_per_write))
}

/// A 20-character bar for a percentage.
fn bar(percent: f64) -> String {
    let full = ((percent / 5.0).round() as usize).min(20);
    format!("{}{}", "█".repeat(full), "░".repeat(20 - full))
}

/// A rule's mark in the table. With a baseline, a violation it already had is "known"; only a
/// new one fails the gate.
fn mark(r: &CheckReport, ns: &str, x: &crate::policy::RuleResult) -> &'static str {
    match (x.skipped.is_some(), x.passed, &r.baseline) {
        (true, _, _) => "-",
        (false, true, _) if x.warning => "warn",
        (false, true, _) => "ok",
        (false, false, Some(_)) if r.is_known(ns, x.rule) => "known",
        (false, false, Some(_)) if r.is_worse(ns, x.rule) => "WORSE",
        (false, false, Some(_)) => "NEW",
        (false, false, None) => "FAIL",
    }
}

/// The culprit of a violation, one cause a line under the rule.
fn causes(x: &crate::policy::RuleResult, out: &mut String) {
    for c in x.culprit.iter().flat_map(|c| &c.causes) {
        let _ = writeln!(out, "          · {c}");
    }
}

/// `check` as text: one block per collection, one line per rule.
fn render_check(r: &CheckReport) -> String {
    let mut out = String::new();
    for c in &r.collections {
        let is_known = |rule: &str| r.is_known(&c.namespace, rule);
        // With a baseline, a collection whose every violation is known is not what fails the gate.
        let all_known = r.baseline.is_some() && c.rules.iter().filter(|x| !x.passed && x.skipped.is_none()).all(|x| is_known(x.rule));
        let _ = writeln!(
            out,
            "{} {} {}: score {} ({})",
            if r.is_worse(&c.namespace, super::check::SCORE) {
                "WORSE"
            } else if c.passed {
                "PASS"
            } else if all_known {
                "KNOWN"
            } else {
                "FAIL"
            },
            c.namespace,
            c.key,
            c.score,
            c.verdict.as_str()
        );
        let _ = writeln!(out, "  workload: {}", c.workload.line());
        for x in &c.rules {
            let _ = writeln!(out, "  {:<5} {:<38} {}", mark(r, &c.namespace, x), x.rule, x.message);
            causes(x, &mut out);
        }
    }
    if !r.database_rules.is_empty() {
        let _ = writeln!(out, "databases {}:", r.databases.join(", "));
        for x in &r.database_rules {
            let _ = writeln!(out, "  {:<5} {:<38} {}", mark(r, "", x), x.rule, x.message);
            causes(x, &mut out);
        }
    }
    match &r.baseline {
        Some(b) => {
            let _ = writeln!(
                out,
                "policy {}: {} against the baseline {}: {}",
                r.policy,
                if r.passed { "passed" } else { "failed" },
                b.file,
                b.counts()
            );
            for c in &b.new {
                let _ = writeln!(out, "  new: {}", c.message);
            }
            for c in &b.worse {
                let _ = writeln!(out, "  worse: {}", c.message);
            }
        }
        None => {
            let _ = writeln!(out, "policy {}: {}", r.policy, if r.passed { "passed" } else { "failed" });
        }
    }
    out
}
