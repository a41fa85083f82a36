//! The plan in words: the table, Markdown and HTML bodies the writers emit (JSON is the
//! `Plan` itself). Only formatting: every figure comes from `crate::plan`.

mod common;
mod given;

use crate::plan::outcome::{Plan, PlannedCollection};
use crate::util::text::bytes;
use common::{blockers, failing, share, share_or_range, warnings, what, writes_first};
use std::fmt::Write;

fn names(sh: &crate::plan::outcome::ShardReport) -> String {
    sh.collections.iter().map(|c| c.namespace.as_str()).collect::<Vec<_>>().join(", ")
}

/// Why the shards' operation shares add up to more than 100%, when they do.
fn ops_note(p: &Plan) -> Option<String> {
    let total: f64 = p.shards.iter().map(|s| s.operations_percent).sum();
    (total > 100.5).then(|| format!("ops {total:.0}% in all: {}", super::text::OPS_COUNT_ON_EACH))
}

/// Why, the trade-off, the warning and the rules, in one cell (Markdown, HTML).
fn why_cell(c: &PlannedCollection) -> String {
    let mut why = c.why.clone();
    if let Some(t) = &c.trade_off {
        why.push_str(&format!("; trade-off: {t}"));
    }
    for x in warnings(c) {
        why.push_str(&format!("; warning: {x}"));
    }
    for x in &c.constraints {
        why.push_str(&format!("; rule: {x}"));
    }
    why
}

/// The first lines: the figures that judge the plan.
fn headline(p: &Plan) -> Vec<String> {
    let mut v = vec![format!(
        "Plan for database {} on {} shards ({}): objective {:.3} (each collection on its own best: {:.3})",
        p.database, p.num_shards, p.num_shards_from, p.objective.value, p.objective.individual_best_value
    )];
    v.push(p.version.words.clone());
    let in_part = match p.transactions.seen_in_part {
        0 => String::new(),
        n => format!(" ({n} seen in part: the range over every placement of what the source does not tie to them)"),
    };
    let margin = match p.transactions.single_shard_share_margin {
        Some(m) => format!(" ±{:.1}% (a sample of {})", m * 100.0, p.transactions.evaluated),
        None => String::new(),
    };
    v.push(format!(
        "transactions: {} found{in_part}, {}{margin} on one shard (each collection on its own best: {}); joins: {} found, {} on one shard (alone: {})",
        p.transactions.found,
        share_or_range(p.transactions.single_shard_share, p.transactions.single_shard_share_range),
        share(p.transactions.single_shard_share_individual_best),
        p.joins.found,
        share(p.joins.single_shard_share),
        share(p.joins.single_shard_share_individual_best)
    ));
    v.extend(p.joins.why.iter().map(|w| format!("joins: {w}")));
    v.extend(failing(p.transactions.failing_share, p.target_version.as_deref()));
    v
}

/// One line per link the plan rests on: the two fields and what shows they hold the same
/// entity's values (the JSON's `links[].evidence`, issue 49).
fn link_lines(p: &Plan) -> Vec<String> {
    p.links.iter().map(|l| format!("{} = {}: {}", l.a, l.b, l.evidence)).collect()
}

/// The transactions holding an insert the plan cannot place (its documents not shown), said
/// apart from the blockers: their share, where the inserts go, why and what would show them.
fn not_placed(p: &Plan) -> Option<String> {
    p.transactions.not_placed.as_ref().map(|n| {
        format!(
            "{:.1}% of transactions not placed: each holds an insert into {} whose documents the source does not show; {}",
            n.transactions_percent,
            n.namespaces.join(", "),
            n.why
        )
    })
}

/// The links' title: what a link is, said once.
const LINKS_TITLE: &str = "Links (fields holding the same values, which zones keep together)";

pub(super) fn table(p: &Plan) -> String {
    let mut s = given::table(p);
    for l in headline(p) {
        let _ = writeln!(s, "{l}");
    }
    let _ = writeln!(s);
    let w = p.collections.iter().map(|c| c.namespace.len()).max().unwrap_or(10).max(10);
    let _ = writeln!(s, "{:<w$}  {:<44}  {:>5}  {:>9}  {:>7}", "collection", "action", "score", "data", "ops");
    for c in &p.collections {
        let score = c.score.map(|x| x.to_string()).unwrap_or_else(|| "-".into());
        let _ = writeln!(s, "{:<w$}  {:<44}  {:>5}  {:>9}  {:>7}", c.namespace, what(c), score, bytes(c.data_bytes), c.num_operations);
        let _ = writeln!(s, "{:<w$}    {}", "", c.why);
        if let Some(t) = &c.trade_off {
            let _ = writeln!(s, "{:<w$}    trade-off: {t}", "");
        }
        for x in warnings(c) {
            let _ = writeln!(s, "{:<w$}    ! {x}", "");
        }
        for x in &c.constraints {
            let _ = writeln!(s, "{:<w$}    rule: {x}", "");
        }
        if let Some(z) = c.zones.first() {
            let _ = writeln!(s, "{:<w$}    zones: {} ranges, {}…, with {}", "", c.zones.len(), z.zone, c.colocated_with.join(", "));
        }
    }
    if let Some((title, lines)) = blockers("transactions", p.transactions.summary()) {
        let _ = writeln!(s, "\n{title}:");
        for l in lines {
            let _ = writeln!(s, "  {l}");
        }
    }
    if let Some(n) = not_placed(p) {
        let _ = writeln!(s, "\n{n}");
    }
    let links = link_lines(p);
    if !links.is_empty() {
        let _ = writeln!(s, "\n{LINKS_TITLE}:");
        for l in links {
            let _ = writeln!(s, "  {l}");
        }
    }
    let _ = writeln!(s, "\nsizing: {}", p.sizing.words);
    let _ = writeln!(s, "\nshards (at scale):");
    for sh in &p.shards {
        let _ = writeln!(s, "  {:<8} data {:>5.1}%  ops {:>5.1}%  {}", sh.shard, sh.data_percent, sh.operations_percent, names(sh));
    }
    if let Some(n) = ops_note(p) {
        let _ = writeln!(s, "  ({n})");
    }
    let _ = writeln!(s, "\ncommands (mongosh, through mongos):");
    for f in writes_first(&p.collections) {
        let _ = writeln!(s, "  // {f}");
    }
    for c in &p.commands {
        let _ = writeln!(s, "  {c}");
    }
    for n in p.transactions.notes.iter().chain(&p.notes) {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

pub(super) fn markdown(p: &Plan) -> String {
    let mut s = String::from("# shardkey plan\n\n");
    s.push_str(&given::markdown(p));
    for l in headline(p) {
        let _ = writeln!(s, "{l}\n");
    }
    s.push_str("| collection | action | score | data | ops | why |\n|---|---|--:|--:|--:|---|\n");
    for c in &p.collections {
        let why = why_cell(c);
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} | {} |",
            c.namespace,
            what(c).replace('|', "\\|"),
            c.score.map(|x| x.to_string()).unwrap_or_else(|| "-".into()),
            bytes(c.data_bytes),
            c.num_operations,
            why.replace('|', "\\|")
        );
    }
    if let Some((title, lines)) = blockers("transactions", p.transactions.summary()) {
        let _ = writeln!(s, "\n## {title}\n");
        for l in lines {
            let _ = writeln!(s, "- {}", l.replace('|', "\\|"));
        }
    }
    if let Some(n) = not_placed(p) {
        let _ = writeln!(s, "\n{}", n.replace('|', "\\|"));
    }
    let links = link_lines(p);
    if !links.is_empty() {
        let _ = writeln!(s, "\n## {LINKS_TITLE}\n");
        for l in links {
            let _ = writeln!(s, "- {}", l.replace('|', "\\|"));
        }
    }
    let _ = writeln!(s, "\n**Sizing.** {}", p.sizing.words);
    s.push_str("\n## Shards\n\n| shard | data % | ops % | collections |\n|---|--:|--:|---|\n");
    for sh in &p.shards {
        let _ = writeln!(s, "| {} | {:.1} | {:.1} | {} |", sh.shard, sh.data_percent, sh.operations_percent, names(sh));
    }
    if let Some(n) = ops_note(p) {
        let _ = writeln!(s, "\nO{}.", &n[1..]);
    }
    s.push_str("\n## Commands\n\n```js\n");
    for f in writes_first(&p.collections) {
        let _ = writeln!(s, "// {f}");
    }
    for c in &p.commands {
        let _ = writeln!(s, "{c}");
    }
    s.push_str("```\n");
    for n in p.transactions.notes.iter().chain(&p.notes) {
        let _ = writeln!(s, "\n> {n}");
    }
    s
}

/// The workload at a glance: the collections on a circle, an edge between two that
/// transactions or joins touch together (width by the share of transactions), drawn dashed
/// in red where the plan cuts it (the two meet on one shard in under half of them).
fn workload_svg(p: &Plan, esc: fn(&str) -> String) -> String {
    if p.edges.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = p.collections.iter().map(|c| c.namespace.as_str()).collect();
    let (cx, cy, r) = (300.0, 190.0, 140.0);
    let at = |i: usize| {
        let a = std::f64::consts::TAU * i as f64 / names.len().max(1) as f64 - std::f64::consts::FRAC_PI_2;
        (cx + r * a.cos(), cy + r * a.sin())
    };
    let widest = p.edges.iter().map(|e| e.transactions_percent).fold(0.0, f64::max).max(1e-9);
    let mut b = String::from("<h2>Workload</h2><svg width=\"600\" height=\"390\" role=\"img\" aria-label=\"collections and the transactions and joins between them\">");
    for e in &p.edges {
        let (Some(ia), Some(ib)) = (names.iter().position(|n| *n == e.a), names.iter().position(|n| *n == e.b)) else { continue };
        let ((x1, y1), (x2, y2)) = (at(ia), at(ib));
        let w = 1.0 + 9.0 * e.transactions_percent / widest;
        let style = if e.cut { "stroke=\"#e15759\" stroke-dasharray=\"6 4\"" } else { "stroke=\"#4e79a7\"" };
        let _ = write!(
            b,
            "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" stroke-width=\"{w:.1}\" {style}><title>{}</title></line>",
            esc(&format!(
                "{} and {}: {:.1}% of transactions, {} joins, {:.0}% of those transactions kept on one shard{}",
                e.a,
                e.b,
                e.transactions_percent,
                e.joins,
                e.kept_together * 100.0,
                if e.cut { " (cut by the plan)" } else { "" }
            ))
        );
    }
    for (i, n) in names.iter().enumerate() {
        let (x, y) = at(i);
        let anchor = if x < cx - 1.0 {
            "end"
        } else if x > cx + 1.0 {
            "start"
        } else {
            "middle"
        };
        let dx = match anchor {
            "end" => -10.0,
            "start" => 10.0,
            _ => 0.0,
        };
        let _ = write!(
            b,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"7\" fill=\"#59a14f\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{}</text>",
            x + dx,
            y + 4.0,
            esc(n)
        );
    }
    b.push_str("</svg><p>Edge width: share of transactions touching both collections; dashed red: the plan cuts the pair (they meet on one shard in under half of those transactions).</p>");
    b
}

/// The HTML body: the headline, the collections, a picture of collections on shards
/// (one bar per shard, a segment per collection's data there), the commands.
pub(super) fn html_body(p: &Plan, esc: fn(&str) -> String) -> String {
    let mut b = String::from("<h1>shardkey plan</h1>");
    b.push_str(&given::html(p, esc));
    for l in headline(p) {
        let _ = write!(b, "<p>{}</p>", esc(&l));
    }
    b.push_str("<table><tr><th>collection</th><th>action</th><th class=\"n\">score</th><th class=\"n\">data</th><th class=\"n\">ops</th><th>why</th></tr>");
    for c in &p.collections {
        let why = why_cell(c);
        let score = c.score.map(|x| x.to_string()).unwrap_or_else(|| "-".into());
        let _ = write!(
            b,
            "<tr><td>{}</td><td><code>{}</code></td><td class=\"n\">{score}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            esc(&c.namespace),
            esc(&what(c)),
            esc(&bytes(c.data_bytes)),
            c.num_operations,
            esc(&why)
        );
    }
    b.push_str("</table>");
    if let Some((title, lines)) = blockers("transactions", p.transactions.summary()) {
        let _ = write!(b, "<h2>{}</h2><ul>", esc(&title));
        for l in lines {
            let _ = write!(b, "<li>{}</li>", esc(&l));
        }
        b.push_str("</ul>");
    }
    if let Some(n) = not_placed(p) {
        let _ = write!(b, "<p>{}</p>", esc(&n));
    }
    let links = link_lines(p);
    if !links.is_empty() {
        let _ = write!(b, "<h2>{}</h2><ul>", esc(LINKS_TITLE));
        for l in links {
            let _ = write!(b, "<li>{}</li>", esc(&l));
        }
        b.push_str("</ul>");
    }
    b.push_str(&workload_svg(p, esc));
    let _ = write!(b, "<p>Sizing: {}</p><h2>Collections on shards</h2>", esc(&p.sizing.words));
    let colors = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7"];
    // Bars from x0 on, the y axis (data on the shard, 0 to the fullest shard) on their left,
    // each bar named with its shard and its shares of data and operations under it.
    let (bar_w, gap, h, x0, top) = (60, 20, 200.0, 90, 10.0);
    let width = x0 + p.shards.len() * (bar_w + gap) + 220;
    let _ = write!(b, "<svg width=\"{width}\" height=\"290\" role=\"img\" aria-label=\"collections on shards\">");
    let max_bytes = p.shards.iter().map(|s| s.data_bytes).max().unwrap_or(1).max(1);
    let max = max_bytes as f64;
    let axis_x = x0 - 8;
    let _ = write!(
        b,
        "<line x1=\"{axis_x}\" y1=\"{top}\" x2=\"{axis_x}\" y2=\"{}\" stroke=\"#888\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">0</text><text transform=\"translate(14 {}) rotate(-90)\" text-anchor=\"middle\">data on the shard</text>",
        top + h,
        axis_x - 4,
        top + 10.0,
        esc(&bytes(max_bytes)),
        axis_x - 4,
        top + h,
        top + h / 2.0
    );
    for (i, sh) in p.shards.iter().enumerate() {
        let x = x0 + i * (bar_w + gap);
        let mut y = top + h;
        for (ci, c) in p.collections.iter().enumerate() {
            let Some(on) = sh.collections.iter().find(|o| o.namespace == c.namespace) else { continue };
            let hgt = h * on.data_bytes as f64 / max;
            y -= hgt;
            let _ = write!(
                b,
                "<rect x=\"{x}\" y=\"{y:.1}\" width=\"{bar_w}\" height=\"{hgt:.1}\" fill=\"{}\"><title>{}</title></rect>",
                colors[ci % colors.len()],
                esc(&c.namespace)
            );
        }
        let _ = write!(
            b,
            "<text x=\"{x}\" y=\"{}\">{}</text><text x=\"{x}\" y=\"{}\" font-size=\"11\">{:.0}% · {:.0}%</text>",
            top + h + 18.0,
            esc(&sh.shard),
            top + h + 34.0,
            sh.data_percent,
            sh.operations_percent
        );
    }
    let _ = write!(b, "<text x=\"{x0}\" y=\"{}\" font-size=\"12\">shard: data % · operations %</text>", top + h + 56.0);
    let lx = x0 + p.shards.len() * (bar_w + gap) + 10;
    for (ci, c) in p.collections.iter().enumerate() {
        let y = 20 + ci * 18;
        let _ = write!(
            b,
            "<rect x=\"{lx}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>",
            y - 10,
            colors[ci % colors.len()],
            lx + 18,
            y,
            esc(&c.namespace)
        );
    }
    b.push_str("</svg>");
    if let Some(n) = ops_note(p) {
        let _ = write!(b, "<p>O{}.</p>", esc(&n[1..]));
    }
    b.push_str("<h2>Commands</h2><pre>");
    for c in &p.commands {
        let _ = writeln!(b, "{}", esc(c));
    }
    b.push_str("</pre>");
    for n in p.transactions.notes.iter().chain(&p.notes) {
        let _ = write!(b, "<p class=\"note\">{}</p>", esc(n));
    }
    b
}
