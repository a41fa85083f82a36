//! The pipeline, end to end: source → sample → metrics → score → report.
//! It reads documents through a `DocumentSource` and queries from a `QueryLog`,
//! and builds the `Report`; it does no I/O of its own.

use crate::error::input_error;
use crate::metrics::characteristics::CollectionSize;
use crate::metrics::supporting_index::supporting_index;
use crate::metrics::{self, cluster, Settings, Workload};
use crate::model::index::IndexSpec;
use crate::model::{Op, Query, ShardKey};
use crate::propose::Proposal;
use crate::report::{CandidateReport, DocumentInput, Inputs, QueryInput, Report, ReportSettings, ToolInfo, SCHEMA_VERSION};
use crate::score::{score_candidate, Score};
use crate::sources::queries::QueryLog;
use crate::sources::{CollectionFacts, DocumentSource};
use crate::targeting::shapes::shape_of;
use anyhow::Result;
use bson::{Bson, Document};

mod documents;
mod field_notes;
mod options;
mod recommend;
mod residency;

use documents::{read_documents, refuse_absent_fields, refuse_arrays, Passes};
pub(crate) use options::{Candidates, Options, PRESCAN_DOCS};
use recommend::{cluster_notes, rank, recommend};

/// The namespace to analyse: given, or the only one the query logs name.
pub(crate) fn resolve_namespace(given: Option<&str>, log: &QueryLog) -> Result<Option<String>> {
    if let Some(ns) = given {
        return Ok(Some(ns.to_string()));
    }
    match log.by_namespace.len() {
        0 => Ok(None),
        1 => Ok(log.by_namespace.keys().next().cloned()),
        _ => {
            let mut by_count: Vec<(&String, &u64)> = log.by_namespace.iter().collect();
            by_count.sort_by_key(|x| std::cmp::Reverse(*x.1));
            let list: Vec<String> = by_count.iter().take(5).map(|(n, c)| format!("{n} ({c})")).collect();
            Err(input_error(format!("the query logs cover several collections ({}); name one with --collection db.coll", list.join(", "))))
        }
    }
}

/// Said when the source gives no indexes.
pub(crate) const INDEXES_UNKNOWN: &str = "indexes unknown (documents without a mongodump's metadata.json, or no live server): a unique index that forbids a key (shardCollection refuses it) and the index that would support it are not checked; give --uri, --indexes FILE (db.coll.getIndexes() as JSON, or a metadata.json), or a mongodump .bson with its metadata.json beside it";

pub(crate) const VERSION_UNKNOWN: &str = "the deployment's version is not known (no server, no build-info line in the logs, no mongodump prelude.json): single-document writes without the shard key, refused before 7.1, are said but not scored as failing; give --target-version X.Y";

/// Run the whole analysis: eight steps, each a function below.
pub(crate) fn run(source: &mut dyn DocumentSource, log: &QueryLog, query_sources: Vec<String>, opts: &Options) -> Result<Report> {
    // 1. The collection's operations in the logs.
    let ns = resolve_namespace(opts.namespace.as_deref(), log)?;
    let queries: Vec<&Query> = log.queries.iter().filter(|q| ns.as_deref().is_none_or(|n| q.ns == n)).collect();
    let diffs: Vec<&Document> = log.diffs.iter().filter(|d| ns.as_deref().is_none_or(|n| d.ns == n)).map(|d| &d.diff).collect();
    // What the source knows of the collection before reading it: indexes, options, sizes.
    let mut facts = source.facts();
    // The collection's default collation: given, read live, or from a dump's metadata.json.
    let settings = Settings {
        default_collation: opts.settings.default_collation.clone().or_else(|| facts.options.as_ref().and_then(|o| o.collation.clone())),
        ..opts.settings.clone()
    };
    let mut notes = Vec::new();
    // The version the rules follow: one given (`--target-version`, a plan's: the cluster it
    // plans) over the deployment's; else, offline, a log's build-info line, else a dump's
    // prelude.json. Said when given or read here; not a plan's from its inputs (the plan says it).
    let stated = match &opts.rules_version {
        Some(v) => Some((v, v.from == crate::model::version::VersionFrom::Flag)),
        None if facts.server_version.is_none() => {
            crate::model::version::lowest(&log.versions).or(opts.server_version.as_ref()).map(|v| (v, true))
        }
        None => None,
    };
    if let Some((v, said)) = stated {
        if said {
            notes.push(format!("{v}: the rules that depend on the version follow it"));
        }
        facts.server_version = Some(v.major_minor());
    }
    // Unknown, the rules cannot tell whether the cluster refuses a single write without the
    // key (before 7.1) or runs it: said with both versions, not scored, and said here.
    if facts.server_version.is_none() && queries.iter().any(|q| matches!(q.op, Op::Update | Op::Delete | Op::FindAndModify)) {
        notes.push(VERSION_UNKNOWN.to_string());
    }
    // A file of documents alone (an export, a .bson without its metadata.json) says nothing
    // of the indexes: a unique index that refuses a key, or one that supports it, is unseen.
    if facts.indexes.is_none() {
        notes.push(INDEXES_UNKNOWN.to_string());
    }
    let on_ns = ns.as_ref().and_then(|n| log.by_namespace.get(n)).copied().unwrap_or(0);
    if on_ns > queries.len() as u64 {
        notes.push(format!("{on_ns} operations on the collection in the logs; a uniform sample of {} was classified", queries.len()));
    }
    if let Some(&n) = log.skipped.get(crate::sources::queries::MALFORMED_LINES) {
        let first = log.malformed.as_ref().map(|((line, why), _)| format!(" (the first, line {line}: {why})")).unwrap_or_default();
        notes.push(format!(
            "{} skipped{first}; the rest was read",
            crate::util::text::count_of(n, "malformed log line", "malformed log lines")
        ));
    }
    if log.skipped.contains_key(crate::sources::queries::CUT_LAST_LINE) {
        notes.push("the log's last line was cut (copied while mongod was writing it): skipped, the rest was read".into());
    }
    if facts.options.as_ref().is_some_and(|o| o.clustered) {
        notes.push(
            "a clustered collection: its records are kept in _id order, so record order is not creation order; monotonicity is unknown (as the server says) and where inserts land rests on creation times or value types; the clustered index supports {_id: 1}".into(),
        );
    }
    // `-v`: each stage as it ends, so a slow run shows where it is.
    let clock = std::time::Instant::now();
    let stage = |what: String| crate::util::term::detail(format!("{what} ({:.2} s)", clock.elapsed().as_secs_f64()));
    stage(format!("{} operations on {} in the logs", queries.len(), ns.as_deref().unwrap_or("the collection")));
    // 2. The candidates.
    let proposals = candidates(source, opts, &queries, &facts, &mut notes)?;
    let keys: Vec<ShardKey> = proposals.iter().map(|p| p.key.clone()).collect();
    stage(format!(
        "{}: {}",
        crate::util::text::count_of(keys.len() as u64, "candidate", "candidates"),
        keys.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ")
    ));
    // 3. One pass over the documents (and a second in insertion order where the source has one).
    let passes = read_documents(source, &keys, opts, &queries, &mut notes)?;
    let sample = &passes.sample;
    stage(format!("read {} from {}", crate::util::text::count_of(sample.num_docs, "document", "documents"), source.describe()));
    // 4. A key the user named must be usable, and name fields the documents have.
    if matches!(opts.candidates, Candidates::Named(_)) {
        refuse_arrays(sample, &source.describe())?;
        refuse_absent_fields(sample, source)?;
    }
    let total = opts.total_docs.or(facts.num_docs_total).unwrap_or(0).max(sample.num_docs);
    // Fewer than were read cannot be the collection's count: said, not silently replaced.
    if let Some(t) = opts.total_docs.filter(|t| *t < sample.num_docs) {
        notes.push(format!(
            "--total-docs {t} is below the {} documents read: the collection is taken to hold at least those",
            crate::util::text::fmt_count(sample.num_docs)
        ));
    }
    if total > sample.num_docs {
        notes.push(format!(
            "{} of {} documents sampled; counts of values are for the sample, estimates and jumbo risk are scaled to the collection",
            sample.num_docs, total
        ));
    }
    // 5. Every candidate measured, checked against the rules and scored, on its own core.
    let shapes: Vec<String> = queries.iter().map(|q| shape_of(&q.filter)).collect();
    let equalities: Vec<_> = queries.iter().map(|q| crate::targeting::Equalities::of(&q.filter, q.let_vars.as_ref())).collect();
    let workload = Workload {
        sample,
        size: CollectionSize { num_docs_total: total, avg_doc_size_bytes: facts.avg_doc_size_bytes },
        settings: &settings,
        queries: &queries,
        shapes: &shapes,
        equalities: &equalities,
        diffs: &diffs,
        newest_created: metrics::insert_order::newest_by_creation(&sample.created, 0.1),
        clustered: facts.options.as_ref().is_some_and(|o| o.clustered),
        hot_documents: metrics::hot_documents::measure(&queries, opts.settings.redact),
        inserts: metrics::insert_order::InsertEvidence::of(&queries),
        insert_batches: metrics::cluster::InsertBatches::of(queries.iter().copied()),
    };
    let mut scored = measure_and_score(&workload, &passes, &proposals, &facts, ns.as_deref(), opts.residency.as_ref());
    stage("measured, checked against the rules and scored every candidate".to_string());
    // 6. Ranked, each with the words that compare it with the next.
    rank(&mut scored);
    let candidates: Vec<CandidateReport> = scored.into_iter().map(|x| x.0).collect();
    notes.extend(field_notes::left_out(&proposals, &candidates));
    notes.extend(field_notes::type_mixtures(sample));
    if let Some(cl) = candidates.first().map(|c| &c.metrics.cluster) {
        notes.extend(cluster_notes(cl));
    }
    // 7. The commands for the best key the server accepts.
    let ranked: Vec<crate::score::choice::Ranked> = candidates
        .iter()
        .map(|c| crate::score::choice::Ranked {
            key: &c.key,
            score: c.score,
            verdict: c.verdict,
            constraints: &c.constraints,
            if_writes_fixed: c.score_breakdown.if_writes_fixed,
        })
        .collect();
    // Below the balancer's threshold no unique index is moved for a key (`choice`).
    let helps_yet = candidates.first().is_none_or(|c| c.metrics.cluster.scale.benefit != cluster::Benefit::NoneYet);
    let choice = crate::score::choice::choose(&ranked, helps_yet);
    // Small, and its best key poor or refusing writes: left unsharded, as `plan` leaves it;
    // not for keys the DBA named (--key): their commands answer the question asked.
    let named = matches!(opts.candidates, Candidates::Named(_));
    let small = candidates.get(choice.chosen).filter(|_| ns.is_some() && !named).map(|c| crate::score::unsharded::Small {
        namespace: ns.clone().unwrap_or_default(),
        scale: &c.metrics.cluster.scale,
        shards: c.metrics.cluster.num_shards,
        sharded: facts.sharding.is_some(),
        score: c.score,
        verdict: c.verdict,
        refuses_writes: choice.first.is_some(),
    });
    // Below the evidence a verdict needs, no commands: the ranking so far and what to run.
    let evidence =
        metrics::evidence::Evidence::of(source.has_documents(), opts.total_docs.is_some(), sample.num_docs, total, queries.len() as u64);
    let mut recommendation = if evidence.sufficient {
        recommend(
            ns.as_deref(),
            candidates.get(choice.chosen),
            &facts,
            settings.default_collation.as_ref(),
            choice.over_accepted,
            opts.queries_unread.as_deref(),
        )
        .map(|mut r| {
            let r = match small.as_ref().filter(|s| s.stays_unsharded()) {
                Some(s) => crate::score::unsharded::leave_unsharded(r, s, choice.first),
                None => {
                    r.notes.splice(0..0, choice.first);
                    r
                }
            };
            crate::score::apply::Recommendation { trade_off: choice.trade_off, alternatives: choice.alternatives, ..r }
        })
    } else {
        None
    };
    if let (Some(res), Some(r), Some(n)) = (&opts.residency, recommendation.as_mut(), ns.as_deref()) {
        notes.extend(residency::apply(res, r, n, &proposals, sample, &candidates, opts.settings.redact));
    }
    // 8. The report, with where the documents were read (a move from the preferred member said).
    let read_on = source.read_on();
    notes.extend(read_on.iter().filter_map(|r| r.fell_back.clone()));
    let mut skipped = log.skipped.clone();
    // The server's own operations are not the application's: left out of the counts, as
    // `workload` leaves them, unless they are the collection analysed.
    let server_own = |k: &str| crate::model::namespace::is_server_own(k) && ns.as_deref() != Some(k);
    let own: u64 = log.by_namespace.iter().filter(|(k, _)| server_own(k)).map(|(_, v)| *v).sum();
    *skipped.entry(crate::model::namespace::SERVER_OWN_OPERATIONS.to_string()).or_default() += own;
    skipped.retain(|_, v| *v > 0);
    let by_ns = |n: &str| log.by_namespace.get(n).copied();
    Ok(Report {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo::this(),
        namespace: ns.clone(),
        inputs: Inputs {
            documents: DocumentInput { source: source.describe(), num_docs_read: sample.num_docs, read_on },
            queries: QueryInput {
                sources: query_sources,
                records_read: log.records,
                queries_read: log.by_namespace.values().sum::<u64>() - own,
                queries_used: ns.as_deref().and_then(by_ns).unwrap_or(queries.len() as u64),
                queries_classified: queries.len() as u64,
                queries_other_namespaces: log
                    .by_namespace
                    .iter()
                    .filter(|(k, _)| ns.as_deref().is_some_and(|n| n != k.as_str()) && !server_own(k))
                    .map(|(_, v)| *v)
                    .sum(),
                skipped,
                shard_key_update_diffs: diffs.len() as u64,
                members: Vec::new(),
            },
        },
        settings: ReportSettings {
            chunk_size_bytes: opts.settings.chunk_size_bytes,
            num_most_common_values: opts.settings.num_most_common,
            default_collation: settings.default_collation.clone().map(|d| Bson::Document(d).into_relaxed_extjson()),
        },
        candidates,
        recommendation,
        evidence,
        audit: None,
        notes,
    })
}

/// Step 2: the keys named, proposed by the caller, or proposed here from a pre-scan and the filters.
fn candidates(
    source: &mut dyn DocumentSource,
    opts: &Options,
    queries: &[&Query],
    facts: &CollectionFacts,
    notes: &mut Vec<String>,
) -> Result<Vec<Proposal>> {
    let p = match &opts.candidates {
        Candidates::Named(keys) => keys.iter().cloned().map(Proposal::named).collect(),
        Candidates::Proposed(p) => p.clone(),
        Candidates::FromPrescan | Candidates::FromPrescanAnd(_) => {
            let pre = source.prescan(PRESCAN_DOCS)?;
            let indexes = facts.indexes.as_deref().unwrap_or_default();
            let p = if pre.is_empty() && source.has_documents() {
                // An empty collection: the workload and the schema are all there is.
                crate::propose::for_empty_collection(queries, indexes, facts.options.as_ref())
            } else {
                // The documents the pre-scan is drawn from: the file's or the collection's own
                // count, not --total-docs (a file may be a sample of a larger collection).
                let total = source.expected_docs().or(facts.num_docs_total);
                let p = crate::propose::for_collection(&pre, queries, indexes, facts.options.as_ref(), total);
                notes.extend(p.cap_note());
                p.list
            };
            let p = match &opts.candidates {
                Candidates::FromPrescanAnd(more) => crate::propose::merge([p, more.clone()]),
                _ => p,
            };
            notes.push(if pre.is_empty() && source.has_documents() {
                format!(
                    "no --key given: proposed {} candidates from the query filters, the collection's indexes and its validator",
                    p.len()
                )
            } else if source.has_documents() {
                format!("no --key given: proposed {} candidates from the query filters and the first {} documents", p.len(), pre.len())
            } else {
                format!("no --key given: proposed {} candidates from the query filters", p.len())
            });
            p
        }
    };
    // A residency rule: its shards must be the cluster's (when read), and the keys led by its
    // field join any proposals (named keys stay as named).
    if let (Some(res), Some(m)) = (&opts.residency, &facts.sharding) {
        res.check_shards(&m.shards).map_err(input_error)?;
    }
    Ok(match &opts.residency {
        Some(res) if !matches!(opts.candidates, Candidates::Named(_)) => {
            let (pre, before) = (source.prescan(PRESCAN_DOCS)?, p.len());
            let p =
                crate::propose::residency::with_zone_field(res, p, &crate::propose::field_paths(&pre), pre.len()).map_err(input_error)?;
            notes.push(format!("residency on {}: {} more candidates led by it, ranged and hashed", res.field, p.len() - before));
            p
        }
        _ => p,
    })
}

/// Step 5: each candidate's metrics, the rules' findings and the score, in parallel.
fn measure_and_score(
    workload: &Workload,
    passes: &Passes,
    proposals: &[Proposal],
    facts: &CollectionFacts,
    ns: Option<&str>,
    residency: Option<&crate::model::residency::Residency>,
) -> Vec<(CandidateReport, Score)> {
    // What the source knows per key.
    let coll = ns.and_then(|n| n.split_once('.')).map(|(_, c)| c).unwrap_or("");
    // A clustered collection's clustered index supports its key (`{_id: 1}`): listIndexes
    // lists it, a dump's metadata.json may give it only in the options.
    let clustered = facts.options.as_ref().and_then(|o| o.clustered_index.clone());
    let indexes: Option<Vec<IndexSpec>> = match (&facts.indexes, clustered) {
        (Some(ix), Some(c)) if !ix.iter().any(|i| i.key == c.key) => Some(ix.iter().cloned().chain([c]).collect()),
        (None, Some(c)) => Some(vec![c]),
        (ix, _) => ix.clone(),
    };
    let collation = workload.settings.default_collation.is_some();
    let known: Vec<_> = proposals
        .iter()
        .map(|p| {
            let support = indexes.as_ref().map(|ix| supporting_index(&p.key, coll, collation, ix));
            let actual = facts.sharding.as_ref().filter(|m| m.key == p.key).map(cluster::actual_chunks);
            (support, actual)
        })
        .collect();
    let rules_cx = crate::rules::Context {
        namespace: ns,
        indexes: indexes.as_deref(),
        options: facts.options.as_ref(),
        queries: workload.queries,
        server_version: facts.server_version,
        current_key: facts.sharding.as_ref().map(|s| &s.key),
        application_ids: application_ids(&workload.sample.created),
        residency,
        geo_filters: Default::default(),
    };
    use rayon::prelude::*;
    let mut measured: Vec<metrics::CandidateMetrics> = (0..proposals.len())
        .into_par_iter()
        .map(|i| {
            let order = passes.separate_order.then(|| &passes.in_order.keys[i]);
            metrics::measure(workload, &passes.sample.keys[i], order, known[i].0.clone(), known[i].1.as_ref())
        })
        .collect();
    // No insert sampled, but a key ordered by time: the collection grows, for every key.
    let inserts = workload.inserts.with_keys(measured.iter().map(|m| &m.insert_order));
    if inserts != workload.inserts {
        for m in &mut measured {
            m.insert_order.inserts_in_workload = inserts;
            m.cluster.reword_inserts(inserts);
        }
    }
    measured
        .into_par_iter()
        .enumerate()
        .map(|(i, m)| {
            let key = &proposals[i].key;
            let constraints = crate::rules::check(&rules_cx, key);
            let s = score_candidate(&m, &constraints);
            let c = CandidateReport {
                key: key.clone(),
                rank: 0,
                score: s.score,
                verdict: s.verdict,
                reasons: s.reasons.clone(),
                compared_with_next: None,
                score_breakdown: s.breakdown.clone(),
                proposed_because: proposals[i].origin.proposed_because(),
                metrics: m,
                constraints,
                server_analyze_shard_key: None,
            };
            (c, s)
        })
        .collect()
}

/// The share of sampled documents whose `_id` is not an ObjectId (its creation time is
/// unknown), None when no document was read.
fn application_ids(created: &[u32]) -> Option<f64> {
    let other = created.iter().filter(|t| **t == crate::sample::NO_CREATION_TIME).count();
    (!created.is_empty()).then(|| other as f64 / created.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bsonx::bson_size;
    use crate::model::SampledDoc;
    use crate::sources::{Batches, DocumentSource};
    use bson::{doc, Document};

    /// Documents held in memory.
    struct MemorySource {
        name: String,
        docs: Vec<Document>,
    }

    impl DocumentSource for MemorySource {
        fn describe(&self) -> String {
            self.name.clone()
        }

        fn prescan(&mut self, n: usize) -> Result<Vec<Document>> {
            Ok(self.docs.iter().take(n).cloned().collect())
        }

        fn scan(&mut self, f: &mut Batches) -> Result<()> {
            let mut batch = Vec::with_capacity(self.docs.len());
            for d in &self.docs {
                batch.push(SampledDoc::doc(d.clone(), bson_size(d)?));
            }
            f(&batch)
        }
    }

    #[test]
    fn sketch_mode_stays_consistent_with_the_collection() {
        // 30,000 unique values (past the exact limit) sampled from 100,000 documents.
        let docs: Vec<Document> = (0..30_000).map(|i| doc! {"u": i}).collect();
        let mut src = MemorySource { name: "memory".into(), docs };
        let opts = Options {
            candidates: Candidates::Named(vec![ShardKey::parse("{u: 1}").unwrap()]),
            namespace: Some("d.c".into()),
            settings: Settings { chunk_size_bytes: 128 << 20, num_most_common: 3, default_collation: None, shards: None, redact: false },
            total_docs: Some(100_000),
            // The smallest budget: exact counts stop at 20,000 values.
            memory_limit: 0,
            server_version: None,
            rules_version: None,
            residency: None,
            queries_unread: None,
        };
        let r = run(&mut src, &QueryLog::default(), vec![], &opts).unwrap();
        let kc = &r.candidates[0].metrics.key_characteristics.as_ref().unwrap();
        assert!(kc.sketch.is_some(), "past the exact limit");
        assert!(kc.num_distinct_values <= kc.num_docs_sampled, "{} > {}", kc.num_distinct_values, kc.num_docs_sampled);
        // The sketch's ~30,000 distinct in 30,000 documents scale to about the whole collection, never past it.
        assert!(kc.estimated_num_distinct_values.range.value <= 100_000);
        assert!(kc.estimated_num_distinct_values.range.value >= 98_000, "{}", kc.estimated_num_distinct_values.range.value);
    }
}
