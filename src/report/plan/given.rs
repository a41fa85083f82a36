//! The plan as given (`plan --key`, `--unsharded`) beside the one shardkey chooses, at the top
//! of the table, Markdown and HTML reports: the comparison, each collection yours and
//! shardkey's, what the rules and the analyses say of your choices, your plan's blockers and
//! its commands. Only formatting: every figure is `Plan::given`'s.

use super::common::{blockers, failing, warnings, what, writes_first};
use crate::plan::outcome::{GivenPlan, Plan, PlannedCollection};
use std::fmt::Write;

/// "What if: shop.orders {_id: 1} kept, the rest chosen around it: <the comparison>".
fn title(g: &GivenPlan) -> String {
    let given: Vec<String> = g
        .choices
        .iter()
        .map(|c| match &c.key {
            Some(k) => format!("{} {k}", c.namespace),
            None => format!("{} unsharded", c.namespace),
        })
        .collect();
    let them = if given.len() == 1 { "it" } else { "them" };
    format!("What if: {} kept, the rest chosen around {them}: {}", given.join(", "), g.words)
}

/// One collection of your plan: yours, shardkey's, whether you gave it, and whether it differs.
struct Row<'a> {
    yours: &'a PlannedCollection,
    own: Option<&'a PlannedCollection>,
    given: bool,
}

impl Row<'_> {
    fn yours_text(&self) -> String {
        format!("{}{}", what(self.yours), if self.given { " (given)" } else { "" })
    }

    fn own_text(&self) -> String {
        self.own.map(what).unwrap_or_else(|| "-".into())
    }

    /// Said under a row whose choice is yours or differs from shardkey's; the warning after
    /// `warn` ("!" in the table, as `analyze` marks it; "warning:" in a cell).
    fn notes(&self, warn: &str) -> Vec<String> {
        let differs = self.own.is_none_or(|o| what(o) != what(self.yours));
        if !(self.given || differs) {
            return Vec::new();
        }
        let mut v: Vec<String> = warnings(self.yours).map(|w| format!("{warn} {w}")).collect();
        v.extend(self.yours.constraints.iter().map(|c| format!("rule: {c}")));
        v
    }
}

fn rows<'a>(p: &'a Plan, g: &'a GivenPlan) -> Vec<Row<'a>> {
    g.collections
        .iter()
        .map(|c| Row {
            yours: c,
            own: p.collections.iter().find(|o| o.namespace == c.namespace),
            given: g.choices.iter().any(|x| x.namespace == c.namespace),
        })
        .collect()
}

pub(super) fn table(p: &Plan) -> String {
    let Some(g) = &p.given else { return String::new() };
    let mut s = format!("{}\n", title(g));
    if let Some(l) = failing(g.transactions.failing_share, p.target_version.as_deref()) {
        let _ = writeln!(s, "{l}");
    }
    s.push('\n');
    let w = g.collections.iter().map(|c| c.namespace.len()).max().unwrap_or(10).max(10);
    let _ = writeln!(s, "{:<w$}  {:<40}  shardkey's", "collection", "yours");
    for r in rows(p, g) {
        let _ = writeln!(s, "{:<w$}  {:<40}  {}", r.yours.namespace, r.yours_text(), r.own_text());
        for n in r.notes("!") {
            let _ = writeln!(s, "{:<w$}    {n}", "");
        }
    }
    if let Some((title, lines)) = blockers("your plan's transactions", g.transactions.summary()) {
        let _ = writeln!(s, "\n{title}:");
        for l in lines {
            let _ = writeln!(s, "  {l}");
        }
    }
    let _ = writeln!(s, "\nyour plan's commands (mongosh, through mongos):");
    for f in writes_first(&g.collections) {
        let _ = writeln!(s, "  // {f}");
    }
    for c in &g.commands {
        let _ = writeln!(s, "  {c}");
    }
    s.push_str("\nshardkey's plan, chosen on its own:\n");
    s
}

pub(super) fn markdown(p: &Plan) -> String {
    let Some(g) = &p.given else { return String::new() };
    let cell = |t: &str| t.replace('|', "\\|");
    let mut s = format!("## {}\n\n", cell(&title(g)));
    if let Some(l) = failing(g.transactions.failing_share, p.target_version.as_deref()) {
        let _ = writeln!(s, "**{}**\n", cell(l.trim_start_matches("! ")));
    }
    s.push_str("| collection | yours | shardkey's | about yours |\n|---|---|---|---|\n");
    for r in rows(p, g) {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} |",
            r.yours.namespace,
            cell(&r.yours_text()),
            cell(&r.own_text()),
            cell(&r.notes("warning:").join("; "))
        );
    }
    if let Some((title, lines)) = blockers("your plan's transactions", g.transactions.summary()) {
        let _ = writeln!(s, "\n### {title}\n");
        for l in lines {
            let _ = writeln!(s, "- {}", cell(&l));
        }
    }
    s.push_str("\n### Your plan's commands\n\n```js\n");
    for c in &g.commands {
        let _ = writeln!(s, "{c}");
    }
    s.push_str("```\n\n## shardkey's plan, chosen on its own\n\n");
    s
}

pub(super) fn html(p: &Plan, esc: fn(&str) -> String) -> String {
    let Some(g) = &p.given else { return String::new() };
    let mut b = format!("<h2>{}</h2>", esc(&title(g)));
    if let Some(l) = failing(g.transactions.failing_share, p.target_version.as_deref()) {
        let _ = write!(b, "<p><strong>{}</strong></p>", esc(l.trim_start_matches("! ")));
    }
    b.push_str("<table><tr><th>collection</th><th>yours</th><th>shardkey's</th><th>about yours</th></tr>");
    for r in rows(p, g) {
        let _ = write!(
            b,
            "<tr><td>{}</td><td><code>{}</code></td><td><code>{}</code></td><td>{}</td></tr>",
            esc(&r.yours.namespace),
            esc(&r.yours_text()),
            esc(&r.own_text()),
            esc(&r.notes("warning:").join("; "))
        );
    }
    b.push_str("</table>");
    if let Some((title, lines)) = blockers("your plan's transactions", g.transactions.summary()) {
        let _ = write!(b, "<h3>{}</h3><ul>", esc(&title));
        for l in lines {
            let _ = write!(b, "<li>{}</li>", esc(&l));
        }
        b.push_str("</ul>");
    }
    b.push_str("<h3>Your plan's commands</h3><pre>");
    for c in &g.commands {
        let _ = writeln!(b, "{}", esc(c));
    }
    b.push_str("</pre><h2>shardkey's plan, chosen on its own</h2>");
    b
}
