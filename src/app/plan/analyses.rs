//! Each collection of the plan analysed on its own, as `analyze` would, on the query logs
//! read once (`app::inputs::build_report_with`): its ranked candidates become the plan's
//! `CollectionInput`, and each key the DBA gave is measured as `analyze --key` measures it.

use super::database::Target;
use super::inputs::PlanInputs;
use crate::app::inputs::{build_report_with, SharedLog};
use crate::app::request::{GivenChoice, InputRequest, PlanRequest};
use crate::error::{input_error, one_line, usage_error};
use crate::model::{KeyKind, Namespace, Query, ShardKey};
use crate::pipeline::Candidates;
use crate::plan::given;
use crate::plan::input::{Analyses, CandidateInput, CandidateNotes, CollectionInput, CollectionKind, RefusedWrites, Settings, UniqueIndex};
use crate::plan::links::Link;
use crate::propose::{Origin, Proposal};
use crate::report::{CandidateReport, Report};
use anyhow::Result;
use std::collections::BTreeMap;

/// The collections analysed, and the settings the plan follows (the shards they were measured on).
pub(super) struct Analysed {
    pub(super) analyses: Analyses,
    pub(super) settings: Settings,
}

/// Every collection analysed, in the database's order; the choices given resolved and measured.
pub(super) fn run(req: &PlanRequest, inp: &PlanInputs) -> Result<Analysed> {
    let db = &inp.db.name;
    let log = &inp.workload.log;
    let extra = linked_keys(&inp.workload.links);
    // What if: the collections given (--key, --unsharded), known before any is read.
    let namespaces: Vec<String> = inp.db.targets.iter().map(|t| format!("{db}.{}", t.name)).collect();
    let given_at = given_targets(db, &namespaces, &req.given)?;
    let mut out = Analyses::default();
    for (at, g) in &given_at {
        match &g.key {
            None => out.given.push((*at, None)),
            Some(_) if inp.db.targets[*at].kind == CollectionKind::View => {
                return Err(usage_error(format!("{} {}: a view, not a collection: it cannot be sharded", g.origin, namespaces[*at])))
            }
            Some(_) => {}
        }
    }
    let shared = (log, &inp.workload.names[..]);
    // Each collection on its own (each parallel over its candidates inside): offline, the
    // collections run side by side too, so that a core is not left idle while a collection
    // with few candidates finishes (issue 52). Read in order afterwards: the same output,
    // the same first error. Live, one at a time: one connection at a time on the cluster.
    // Each collection's rules follow the plan's version: a write its cluster refuses is said
    // refused (and scored so), as the plan's transactions are.
    let base = InputRequest { indexes: None, rules_version: inp.version.clone(), ..req.input.clone() };
    let analyse = |(t, ns): (&Target, &String)| analyse(&base, t, &namespaces, ns, &given_at, &extra, shared);
    let offline = inp.db.targets.iter().all(|t| t.bson.is_some() || req.input.uri.is_none());
    let done: Vec<Result<Analysis>> = if offline {
        use rayon::prelude::*;
        inp.db.targets.par_iter().zip(&namespaces).map(analyse).collect()
    } else {
        inp.db.targets.iter().zip(&namespaces).map(analyse).collect()
    };
    let mut shards_from = None;
    for a in done {
        let a = a?;
        out.given.extend(a.given);
        if let Some(s) = a.shards_from {
            shards_from.get_or_insert(s);
        }
        out.notes.extend(a.note);
        out.collections.push(a.input);
    }
    let settings = settings(req, inp, &out.collections, shards_from);
    if let Some((c, g)) = given_at.iter().find(|(c, g)| g.key.is_none() && out.collections[*c].current_key.is_some()) {
        return Err(usage_error(format!(
            "{} {}: sharded already: a plan keeps it sharded (keep, refine or reshard its key)",
            g.origin, out.collections[*c].namespace
        )));
    }
    Ok(Analysed { analyses: out, settings })
}

/// One collection analysed: its input to the plan, the key given for it measured, where its
/// shards were read from, and why it could not be analysed (a note).
struct Analysis {
    input: CollectionInput,
    given: Option<(usize, Option<CandidateInput>)>,
    shards_from: Option<String>,
    note: Option<String>,
}

/// A collection analysed as `analyze` would (`build_report_with`), with the key given for it.
fn analyse(
    base: &InputRequest,
    t: &Target,
    namespaces: &[String],
    ns_text: &str,
    given_at: &[(usize, &GivenChoice)],
    extra: &BTreeMap<String, Vec<Proposal>>,
    shared: SharedLog,
) -> Result<Analysis> {
    let log = shared.0;
    let mut ci = collection_input(ns_text.to_string(), t.kind, &log.queries, log.by_namespace.get(ns_text).copied().unwrap_or(0));
    let (mut given, mut shards_from, mut note) = (None, None, None);
    if t.kind == CollectionKind::View {
        return Ok(Analysis { input: ci, given, shards_from, note });
    }
    let ns = Namespace::parse(ns_text).map_err(|_| input_error(format!("{ns_text}: not a namespace")))?;
    let one = InputRequest { docs: t.bson.clone(), ..base.clone() };
    if let Some((at, g @ GivenChoice { key: Some(key), .. })) = given_at.iter().find(|(at, _)| namespaces[*at] == ns_text) {
        given = Some((*at, Some(given_candidate(&one, &ns, key, g.origin, shared)?)));
    }
    let more = extra.get(ns_text).cloned().unwrap_or_default();
    let cands = if more.is_empty() { Candidates::FromPrescan } else { Candidates::FromPrescanAnd(more) };
    match build_report_with(&one, Some(ns), cands, false, Some(shared)) {
        Ok(r) => {
            if let Some(best) = r.candidates.first() {
                ci.data_bytes = best.metrics.cluster.scale.data_bytes;
                shards_from = Some(best.metrics.cluster.num_shards_from.to_string());
            }
            ci.current_key = r.audit.as_ref().map(|a| a.shard_key.clone());
            ci.candidates = candidate_inputs(&r);
        }
        Err(e) => {
            note = Some(format!("{ns_text}: not analysed: {}", one_line(&e)));
            ci.not_analysed = Some(one_line(&e));
        }
    }
    Ok(Analysis { input: ci, given, shards_from, note })
}

/// A collection before its analysis: what the logs say of it (its operations found, and
/// the share of those sampled that write).
fn collection_input(namespace: String, kind: CollectionKind, queries: &[Query], num_operations: u64) -> CollectionInput {
    let sampled: Vec<&Query> = queries.iter().filter(|q| q.ns == namespace).collect();
    let write_share = match sampled.len() {
        0 => 0.0,
        n => sampled.iter().filter(|q| !q.op.is_read()).count() as f64 / n as f64,
    };
    CollectionInput {
        namespace,
        kind,
        data_bytes: 0,
        num_operations,
        write_share,
        candidates: Vec::new(),
        not_analysed: None,
        current_key: None,
    }
}

/// The shards (those the analyses measured on, else `--shards`, else 4), the version and the
/// sizes the plan follows.
fn settings(req: &PlanRequest, inp: &PlanInputs, collections: &[CollectionInput], shards_from: Option<String>) -> Settings {
    let shards =
        collections.iter().flat_map(|c| c.candidates.first()).map(|c| c.data_share.len()).next().unwrap_or(req.input.shards.unwrap_or(4));
    Settings {
        shards,
        shards_from: shards_from.unwrap_or_else(|| format!("{shards}")),
        target_version: inp.version.as_ref().map(|v| v.major_minor()),
        shard_size_bytes: req.shard_size_bytes,
        shard_ops_per_second: req.shard_ops_per_second,
        load: inp.workload.load(),
        range_bytes: req.input.chunk_size_bytes,
    }
}

/// Each choice given, with the index of the collection it names (`plan::given::resolve`).
fn given_targets<'a>(db: &str, namespaces: &[String], given: &'a [GivenChoice]) -> Result<Vec<(usize, &'a GivenChoice)>> {
    let names: Vec<(&str, &str)> = given.iter().map(|g| (g.origin, g.collection.as_str())).collect();
    let at = given::resolve(db, namespaces, &names).map_err(usage_error)?;
    Ok(at.into_iter().zip(given).collect())
}

/// A key as given, measured as `analyze --key` measures it: refused (in one line) when the
/// documents lack its fields or hold arrays there.
fn given_candidate(one: &InputRequest, ns: &Namespace, key: &ShardKey, origin: &str, shared: SharedLog) -> Result<CandidateInput> {
    let refused = |why: String| input_error(format!("{origin} {ns}={key}: {why}"));
    let r = build_report_with(one, Some(ns.clone()), Candidates::Named(vec![key.clone()]), false, Some(shared))
        .map_err(|e| refused(one_line(&e)))?;
    let at = r.candidates.iter().position(|c| c.key == *key).ok_or_else(|| refused("not measured".into()))?;
    Ok(candidate_inputs(&r).swap_remove(at))
}

/// Keys on the fields other collections share values with (co-location candidates).
fn linked_keys(links: &[Link]) -> BTreeMap<String, Vec<Proposal>> {
    let mut out: BTreeMap<String, Vec<Proposal>> = BTreeMap::new();
    for l in links {
        for (me, other) in [(&l.a, &l.b), (&l.b, &l.a)] {
            let why = format!("its values are {}.{}'s ({})", other.0, other.1, l.seen_in);
            let f = &me.1;
            let mut keys = vec![ShardKey::single(f, KeyKind::Range), ShardKey::single(f, KeyKind::Hashed)];
            if f != "_id" {
                if let Ok(k) = ShardKey::parse(&format!("{{\"{f}\": 1, _id: 1}}")) {
                    keys.push(k);
                }
            }
            let v = out.entry(me.0.clone()).or_default();
            for key in keys {
                if !v.iter().any(|p| p.key == key) {
                    v.push(Proposal { key, origin: Origin::Proposed(why.clone()) });
                }
            }
        }
    }
    out
}

/// A collection's analysis as the plan reads each candidate.
fn candidate_inputs(r: &Report) -> Vec<CandidateInput> {
    r.candidates
        .iter()
        .map(|c| {
            let shards = &c.metrics.cluster.at_scale.shards;
            CandidateInput {
                key: c.key.clone(),
                score: c.score,
                valid: !matches!(c.verdict, crate::score::Verdict::Invalid | crate::score::Verdict::Blocked),
                data_share: shards.iter().map(|s| s.data_percent / 100.0).collect(),
                ops_share: shards.iter().map(|s| s.operations_percent / 100.0).collect(),
                zone_splits: c.metrics.cluster.zone_splits.clone(),
                pinned: c.metrics.cluster.pinned.clone(),
                needs_index: c.metrics.supporting_index.as_ref().map(|s| s.name.is_none()),
                max_useful_shards: c.metrics.cluster.growth.max_useful_shards,
                notes: candidate_notes(r, c),
                mean_shards_per_op: c.metrics.cluster.cost.mean_shards_per_op,
            }
        })
        .collect()
}

/// What a candidate's analysis warns of and what refuses it, for the plan's words.
fn candidate_notes(r: &Report, c: &CandidateReport) -> CandidateNotes {
    use crate::rules::Effect;
    let blocked_by = c
        .constraints
        .iter()
        .filter(|f| f.effect == Effect::Blocked)
        .filter_map(|f| f.index.as_ref())
        .map(|ix| UniqueIndex { name: ix.name.clone(), pattern: ix.pattern(), fields: ix.key.keys().cloned().collect() })
        .collect();
    let invalid = (c.verdict == crate::score::Verdict::Invalid).then(|| match c.constraints.iter().find(|f| f.effect == Effect::Refused) {
        Some(f) => f.message.clone(),
        None => c.reasons.first().map(|x| x.to_string()).unwrap_or_default(),
    });
    let refused_writes = c
        .constraints
        .iter()
        .filter(|f| f.refused_here)
        .map(|f| RefusedWrites {
            message: f.message.clone(),
            percentage_of_writes: f.percentage_of_writes.unwrap_or(0.0),
            accepted_from: f.accepted_from.map(|(a, b)| format!("{a}.{b}")),
            filter_fix: f.filter_fix.clone(),
        })
        .collect();
    CandidateNotes { warning: crate::report::text::first_warning(r, c), blocked_by, invalid, refused_writes }
}
