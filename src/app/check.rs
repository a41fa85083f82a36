//! `shardkey check`: a policy file → one analysis per namespace → rule results
//! → a report and an outcome a CI job can gate on.

use super::github;
use super::inputs::build_report;
use super::request::{CheckRequest, InputRequest};
use crate::error::{input_error, Outcome};
use crate::model::Namespace;
use crate::pipeline::Candidates;
use crate::policy::rules::{DatabasesInput, RuleInput};
use crate::policy::{self, CollectionPolicy, Culprit, Location, Tolerance};
use crate::report::{write_check, CheckReport, CheckWorkload, CollectionCheck, Format, ToolInfo, SCHEMA_VERSION};
use crate::sources::live::{LiveOptions, LiveSession};
use anyhow::Result;
use std::collections::BTreeMap;
use std::io::Write;

pub(super) fn run(a: &CheckRequest, out: &mut dyn Write) -> Result<Outcome> {
    let name = a.policy.display().to_string();
    let text = std::fs::read_to_string(&a.policy).map_err(|e| input_error(format!("cannot read policy {name}: {e}")))?;
    let p = policy::parse(&name, &text)?;
    let selected: Vec<&CollectionPolicy> = match &a.input.namespace {
        Some(ns) => {
            let v: Vec<_> = p.collections.iter().filter(|c| &c.namespace == ns).collect();
            if v.is_empty() {
                return Err(input_error(format!("{name} has no [[collection]] for {ns}")));
            }
            v
        }
        None if a.input.docs.is_some() && p.collections.len() > 1 => {
            return Err(input_error(format!(
                "{name} names {} collections and --docs holds one: choose it with --collection",
                p.collections.len()
            )))
        }
        None => p.collections.iter().collect(),
    };
    let mut results = Vec::new();
    for c in selected {
        if c.key.is_none() && a.input.uri.is_none() {
            return Err(input_error(format!("{name}: {} has no key; offline checks need the planned key", c.namespace)));
        }
        let candidates = Candidates::Named(c.key.iter().cloned().collect());
        // --dump: the collection's documents are its <coll>.bson there.
        let input = match &a.dump {
            Some(dir) if a.input.docs.is_none() => {
                let docs = dir.join(format!("{}.bson", c.namespace.coll()));
                InputRequest { docs: docs.exists().then_some(docs), residency: c.residency.clone(), ..a.input.clone() }
            }
            _ => InputRequest { residency: c.residency.clone(), ..a.input.clone() },
        };
        let r = build_report(&input, Some(c.namespace.clone()), candidates, false)?;
        // The planned key, or the collection's current key (found by the audit).
        let key = c.key.as_ref().or(r.audit.as_ref().map(|x| &x.shard_key));
        let Some(cand) = key.and_then(|k| r.candidates.iter().find(|x| &x.key == k)) else {
            return Err(input_error(format!("{name}: {} has no key and is not sharded: name the planned key", c.namespace)));
        };
        // A collection without documents has no key values to judge: docs/reference.md
        // "Robustness" makes it an input error (exit 2), not a score of 0 that fails every rule.
        let documents_given = input.docs.is_some() || input.uri.is_some();
        if documents_given && cand.metrics.key_characteristics.is_none() {
            return Err(input_error(format!(
                "{name}: {} is empty: no documents to check {} against (seed it first, or leave it out of the policy)",
                c.namespace, cand.key
            )));
        }
        let input = RuleInput {
            collection: c.namespace.coll(),
            key: &cand.key,
            score: cand.score,
            verdict: cand.verdict,
            reasons: &cand.reasons,
            metrics: &cand.metrics,
            constraints: &cand.constraints,
        };
        let rules = policy::evaluate(&c.effective_rules(&p.defaults), &input);
        results.push(CollectionCheck {
            namespace: c.namespace.to_string(),
            key: cand.key.clone(),
            score: cand.score,
            verdict: cand.verdict,
            passed: rules.iter().all(|x| x.passed),
            rules,
            reasons: cand.reasons.clone(),
            workload: CheckWorkload::of(&r),
        });
    }
    // The databases of the checked collections, and what else they hold.
    let mut databases: Vec<String> = Vec::new();
    for c in &results {
        let db = c.namespace.split_once('.').map_or("", |x| x.0).to_string();
        if !databases.contains(&db) {
            databases.push(db);
        }
    }
    // [plan]: the whole database's plan (not when --collection checks one collection).
    let plan_rules = match &p.plan {
        Some(pp) if a.input.namespace.is_none() => {
            let (db, rules) = super::check_plan::run(a, pp)?;
            if !databases.contains(&db) {
                databases.push(db);
            }
            rules
        }
        _ => Vec::new(),
    };
    let live = a.input.docs.is_none() && a.input.uri.is_some();
    // Offline, the databases' other collections are unknown: those rules do not apply.
    let mut database_rules = if live && p.reads_databases() {
        // A role that may read the collections but not list them: the rule says so and passes.
        let unlisted = unlisted_collections(&a.input, &databases, &p).ok();
        policy::evaluate_databases(&p.database_rules(), &DatabasesInput { databases: &databases, unlisted: unlisted.as_deref() })
    } else {
        Vec::new()
    };
    database_rules.extend(plan_rules);
    let lines = policy_lines(&text);
    let changed = ChangedFiles::read(&a.changed_files);
    for c in &mut results {
        for x in c.rules.iter_mut().filter(|x| !x.passed || x.warning) {
            let policy_line =
                lines.get(&(c.namespace.clone(), x.rule.to_string())).or_else(|| lines.get(&(c.namespace.clone(), String::new())));
            x.location = Some(
                changed.locate(x.culprit.as_ref()).unwrap_or(Location { file: name.clone(), line: policy_line.copied().unwrap_or(1) }),
            );
        }
    }
    for x in database_rules.iter_mut().filter(|x| !x.passed || x.warning) {
        // A [plan] rule points at the declared collection's line when it has one ([plan.keys]).
        let named = x.culprit.iter().flat_map(|c| c.names.iter()).find_map(|n| lines.get(&(String::new(), n.clone())));
        let policy_line = named.or_else(|| lines.get(&(String::new(), x.rule.to_string())));
        x.location =
            Some(changed.locate(x.culprit.as_ref()).unwrap_or(Location { file: name.clone(), line: policy_line.copied().unwrap_or(1) }));
    }
    let baseline = match &a.baseline {
        Some(path) => {
            let tolerance = |ns: &str| match p.collections.iter().find(|c| c.namespace.to_string() == ns) {
                Some(c) => Tolerance::of(&c.effective_rules(&p.defaults)),
                None => Tolerance::of(&p.database_rules()),
            };
            let block = |ns: &str| Location { file: name.clone(), line: lines.get(&(ns.to_string(), String::new())).copied().unwrap_or(1) };
            let now = super::baseline::Now { collections: &results, database_rules: &database_rules, tolerance: &tolerance, block: &block };
            Some(super::baseline::compare(path, &now)?)
        }
        None => None,
    };
    // With a baseline, the gate fails only on what is new or worse.
    let passed = match &baseline {
        Some(b) => !b.failed(),
        None => results.iter().all(|c| c.passed) && database_rules.iter().all(|x| x.passed),
    };
    let cr = CheckReport {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo::this(),
        policy: name,
        passed,
        collections: results,
        database_rules,
        databases,
        baseline,
    };
    if let Some(path) = &a.write_baseline {
        let shown = path.display();
        let mut f = std::fs::File::create(path).map_err(|e| input_error(format!("cannot write baseline {shown}: {e}")))?;
        write_check(&cr, Format::Json, &mut f).map_err(|e| input_error(format!("cannot write baseline {shown}: {e}")))?;
    }
    // --output-file: the machine report to the file, the table to stdout (a CI job's log).
    let shown = match &a.output_file {
        Some(path) => {
            let file = path.display();
            let mut f = std::fs::File::create(path).map_err(|e| input_error(format!("cannot write {file}: {e}")))?;
            write_check(&cr, a.format, &mut f).map_err(|e| input_error(format!("cannot write {file}: {e}")))?;
            Format::Table
        }
        None => a.format,
    };
    write_check(&cr, shown, out)?;
    github::report_check(&cr, shown, out)?;
    Ok(if passed { Outcome::Success } else { Outcome::GateFailed })
}

/// The collections of these databases that no `[[collection]]` of the policy names, as
/// `db.collection` (views and `system.*` left out: they are never sharded).
fn unlisted_collections(input: &InputRequest, databases: &[String], p: &policy::Policy) -> Result<Vec<String>> {
    let Some(uri) = &input.uri else { return Ok(Vec::new()) };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let mut out = Vec::new();
    for db in databases {
        let namespace = Namespace::parse(&format!("{db}.system.profile")).map_err(|_| input_error(format!("{db}: not a database name")))?;
        let lo =
            LiveOptions { uri: uri.clone(), namespace, server_selection_timeout: input.server_selection_timeout, max_time: input.max_time };
        let session = rt.block_on(LiveSession::open(&lo))?;
        for (name, kind, _) in rt.block_on(session.list_collections())? {
            let ns = format!("{db}.{name}");
            // A collection the [plan] declares is held by the plan's rules.
            let in_plan =
                p.plan.as_ref().is_some_and(|pp| pp.keys.iter().map(|k| &k.0).chain(&pp.unsharded).any(|n| *n == name || *n == ns));
            if kind != "view" && !in_plan && !p.collections.iter().any(|c| c.namespace.to_string() == ns) {
                out.push(ns);
            }
        }
    }
    Ok(out)
}

/// The files of the change under review, as given, with their text (a file the change deleted,
/// or one that is not text, is left out).
struct ChangedFiles(Vec<(String, String)>);

impl ChangedFiles {
    fn read(paths: &[std::path::PathBuf]) -> ChangedFiles {
        ChangedFiles(paths.iter().filter_map(|p| Some((p.display().to_string(), std::fs::read_to_string(p).ok()?))).collect())
    }

    /// The first line of a changed file that names the culprit, trying its most specific name
    /// first in every file. The files that also name the collection (the culprit's last name)
    /// are searched first: a field as common as `status` is in many files of a change.
    fn locate(&self, culprit: Option<&Culprit>) -> Option<Location> {
        let names = &culprit?.names;
        let about = |text: &str| names.last().is_some_and(|c| text.lines().any(|l| names_word(l, c)));
        let (theirs, others): (Vec<_>, Vec<_>) = self.0.iter().partition(|(_, text)| about(text));
        [theirs, others].into_iter().find_map(|files| {
            names.iter().find_map(|name| {
                files.iter().find_map(|(file, text)| {
                    let line = text.lines().position(|l| names_word(l, name))?;
                    Some(Location { file: file.clone(), line: line as u32 + 1 })
                })
            })
        })
    }
}

/// `name` in `line` as a whole identifier: `status` is not in `statusCode`.
fn names_word(line: &str, name: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    line.match_indices(name)
        .any(|(i, _)| !line[..i].chars().next_back().is_some_and(ident) && !line[i + name.len()..].chars().next().is_some_and(ident))
}

/// Where each setting sits in the policy text: (namespace, rule) → line; (namespace, "") for
/// the namespace's own line; ("", rule) for `[defaults]`. A light reading of the TOML layout the
/// policy parser accepts (`[[collection]]` blocks with `namespace = "..."`).
fn policy_lines(text: &str) -> BTreeMap<(String, String), u32> {
    let mut out = BTreeMap::new();
    let mut ns = String::new();
    let mut pending: Vec<(String, u32)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let n = i as u32 + 1;
        if line.starts_with('[') {
            for (k, l) in pending.drain(..) {
                out.insert((ns.clone(), k), l);
            }
            ns = String::new();
            continue;
        }
        let Some((k, v)) = line.split_once('=') else { continue };
        let (k, v) = (k.trim(), v.trim().trim_matches(|c| c == '"' || c == '\''));
        if k == "namespace" {
            ns = v.to_string();
            out.insert((ns.clone(), String::new()), n);
        } else if !k.starts_with('#') {
            pending.push((k.to_string(), n));
        }
    }
    for (k, l) in pending {
        out.insert((ns.clone(), k), l);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A change touching two files that both name `status`: the one that also names the
    /// collection (`orders`) is where the culprit is; without such a file, the first naming it.
    #[test]
    fn the_file_that_names_the_collection_is_searched_first() {
        let files = ChangedFiles(vec![
            ("ui/labels.js".into(), "const status = 'ok';\n".into()),
            ("migrations/7.js".into(), "db.orders.createIndex(\n  {status: 1})\n".into()),
        ]);
        let culprit = Culprit { causes: vec![], names: vec!["status".into(), "orders".into()] };
        assert_eq!(files.locate(Some(&culprit)), Some(Location { file: "migrations/7.js".into(), line: 2 }));
        let other = Culprit { causes: vec![], names: vec!["status".into(), "invoices".into()] };
        assert_eq!(files.locate(Some(&other)), Some(Location { file: "ui/labels.js".into(), line: 1 }));
    }
}
