//! The pipeline, end to end: source → sample → metrics → score → report.

use crate::error::input_error;
use crate::metrics::distribution::DistributionCounter;
use crate::metrics::ranges::{Ranges, NUM_RANGES};
use crate::metrics::shapes::shape_of;
use crate::metrics::{cardinality, cluster, frequency, monotonicity};
use crate::model::{Query, ShardKey};
use crate::propose::{propose, Proposal};
use crate::report::*;
use crate::sample::{KeySample, Sample};
use crate::score::score;
use crate::sources::queries::QueryLog;
use anyhow::Result;
use bson::{Bson, Document};
use std::collections::BTreeMap;

/// Where documents come from: a file today, a live collection through the driver.
pub trait DocumentSource {
    /// For the report: a file path or a redacted URI and namespace.
    fn describe(&self) -> String;
    /// The first `n` documents, for proposing candidates.
    fn prescan(&mut self, n: usize) -> Result<Vec<Document>>;
    /// Every sampled document in insertion order, with its BSON size.
    fn scan(&mut self, f: &mut dyn FnMut(&Document, usize) -> Result<()>) -> Result<()>;
    /// The collection's document count when the source knows it (fast count).
    fn num_docs_total(&self) -> Option<u64> {
        None
    }
    /// The collection's average document size when the source knows it
    /// (a live source projects only key fields, so it cannot measure it itself).
    fn avg_doc_size_bytes(&self) -> Option<u64> {
        None
    }
    /// The key's supporting index, when the source knows the collection's indexes.
    fn supporting_index(&self, _key: &ShardKey) -> Option<SupportingIndexReport> {
        None
    }
    /// The real chunks of the collection's current shard key, when it is sharded.
    fn actual_chunks(&self, _key: &ShardKey) -> Option<crate::predict::ActualChunks> {
        None
    }
    /// When `scan` is not in insertion order (e.g. `$sample`), a second stream
    /// that is, for monotonicity. Returns false when `scan` already is.
    fn scan_in_insertion_order(&mut self, _f: &mut dyn FnMut(&Document, usize) -> Result<()>) -> Result<bool> {
        Ok(false)
    }
}

#[derive(Debug, Clone)]
pub struct Options {
    /// Keys the user named (`--key`); when empty, candidates are proposed.
    pub keys: Vec<ShardKey>,
    /// Candidates a caller already proposed (used when `keys` is empty).
    pub proposals: Vec<Proposal>,
    pub namespace: Option<String>,
    pub chunk_size_bytes: u64,
    pub num_most_common: usize,
    pub default_collation: Option<Document>,
    /// The collection's size when the documents are a sample of it.
    pub total_docs: Option<u64>,
    /// `--shards N`: predict the cluster with N shards.
    pub shards: Option<usize>,
    /// `--redact`: show values as type and hash.
    pub redact: bool,
}

pub const DEFAULT_CHUNK_MIB: u64 = 128;
const PRESCAN_DOCS: usize = 1000;

/// The namespace to analyse: given, or the only one the query logs name.
pub fn resolve_namespace(given: Option<&str>, log: &QueryLog) -> Result<Option<String>> {
    if let Some(ns) = given {
        return Ok(Some(ns.to_string()));
    }
    let counts: BTreeMap<&str, u64> = log.by_namespace.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    match counts.len() {
        0 => Ok(None),
        1 => Ok(counts.keys().next().map(|s| s.to_string())),
        _ => {
            let mut by_count: Vec<(&str, u64)> = counts.into_iter().collect();
            by_count.sort_by(|a, b| b.1.cmp(&a.1));
            let list: Vec<String> = by_count.iter().take(5).map(|(n, c)| format!("{n} ({c})")).collect();
            Err(input_error(format!(
                "the query logs cover several collections ({}); name one with --collection db.coll",
                list.join(", ")
            )))
        }
    }
}

fn characteristics(
    ks: &KeySample,
    order: Option<&KeySample>,
    sample: &Sample,
    total: u64,
    avg_doc_size: Option<u64>,
    opts: &Options,
    is_unique: Option<bool>,
) -> KeyCharacteristics {
    let sampled = sample.num_docs;
    let avg = avg_doc_size.unwrap_or(if sampled > 0 { sample.total_bytes / sampled } else { 0 });
    let counted = ks.docs_counted();
    let mcv = frequency::most_common(ks.frequencies(), opts.num_most_common)
        .into_iter()
        .map(|v| MostCommonValue { value: ks.key.value_json(&v.value, opts.redact), frequency: v.count })
        .collect();
    let mono = match monotonicity::by_key_shape(&ks.key) {
        Some(m) => m,
        None => monotonicity::measure(&ks.key, &order.unwrap_or(ks).insertion_positions_in_key_order()),
    };
    let jumbo = frequency::jumbo_values(ks.frequencies(), counted.max(1), total, avg, opts.chunk_size_bytes)
        .into_iter()
        .take(opts.num_most_common)
        .map(|j| JumboValueReport { value: ks.key.value_json(&j.value, opts.redact), estimated_docs: j.estimated_docs, estimated_bytes: j.estimated_bytes })
        .collect();
    KeyCharacteristics {
        num_docs_total: total,
        num_docs_sampled: sampled,
        avg_doc_size_bytes: avg,
        num_distinct_values: ks.num_distinct(),
        most_common_values: mcv,
        is_unique,
        monotonicity: mono,
        estimated_num_distinct_values: if ks.is_exact() {
            Estimate {
                value: cardinality::estimate_distinct(ks.frequencies().iter().map(|v| v.count), counted, total),
                estimator: cardinality::ESTIMATOR,
            }
        } else {
            Estimate { value: ks.num_distinct(), estimator: "HyperLogLog over the sample (see sketch)" }
        },
        top_value_percentage: frequency::top_share(ks.frequencies(), counted) * 100.0,
        sketch: ks.sketch_info().map(|i| SketchReport {
            distinct_values: format!(
                "HyperLogLog, 2^{} registers: standard error {:.2}%",
                i.hll_precision,
                i.distinct_standard_error * 100.0
            ),
            most_common_values: format!(
                "Misra-Gries, {} counters: each frequency is a lower bound, at most {} below the true count",
                i.heavy_hitter_counters, i.frequency_error_bound
            ),
            frequency_error_bound: i.frequency_error_bound,
        }),
        num_docs_missing_key_fields: ks.docs_missing_fields,
        num_docs_with_array_key_values: ks.docs_with_arrays,
        jumbo_chunk_risk: JumboRisk { chunk_size_bytes: opts.chunk_size_bytes, values: jumbo },
    }
}

/// What every candidate's evaluation shares.
struct Context<'a> {
    sample: &'a Sample,
    total: u64,
    avg_doc_size: Option<u64>,
    opts: &'a Options,
    queries: &'a [&'a Query],
    /// Each query's normalised shape, computed once.
    shapes: &'a [String],
    diffs: &'a [&'a Document],
}

/// Metrics, cluster prediction and score for one candidate.
fn evaluate(
    cx: &Context,
    ks: &KeySample,
    order: Option<&KeySample>,
    prop: &Proposal,
    support: Option<SupportingIndexReport>,
    actual: Option<&crate::predict::ActualChunks>,
) -> CandidateReport {
    let opts = cx.opts;
    let is_unique = support.as_ref().map(|s| s.is_unique);
    let kc = characteristics(ks, order, cx.sample, cx.total, cx.avg_doc_size, opts, is_unique);
    let key_space = ks.key_space_values();
    let ranges = Ranges::cut(&key_space, NUM_RANGES);
    let mut dist = DistributionCounter::new(&ranges);
    // (shape, label) → (queries, queries per command)
    type ShapeCounts<'s> = BTreeMap<(&'s str, crate::metrics::targeting::Label), (u64, BTreeMap<&'static str, u64>)>;
    let mut shapes: ShapeCounts = BTreeMap::new();
    let want_cluster = opts.shards.is_some() || actual.is_some();
    let mut touches = Vec::new();
    for (q, shape) in cx.queries.iter().zip(cx.shapes) {
        if let Some(t) = dist.add(&ks.key, q, opts.default_collation.as_ref(), &ranges) {
            let e = shapes.entry((shape.as_str(), t.label)).or_default();
            e.0 += 1;
            *e.1.entry(q.op.name()).or_default() += 1;
            if want_cluster {
                touches.push(crate::predict::QueryTouch { is_read: q.op.is_read(), touched: t.touched });
            }
        }
    }
    for d in cx.diffs {
        dist.add_diff(&ks.key, d);
    }
    let cluster = want_cluster.then(|| {
        let order_ks = order.unwrap_or(ks);
        let r = kc.monotonicity.record_id_correlation_coefficient.unwrap_or(0.0);
        let inserts = match kc.monotonicity.kind {
            monotonicity::MonotonicityType::Monotonic if r < 0.0 => cluster::InsertPattern::Decreasing,
            monotonicity::MonotonicityType::Monotonic => cluster::InsertPattern::Increasing,
            _ => cluster::InsertPattern::LikeRecent,
        };
        let recent = order_ks.recent_key_space_values(0.1);
        let inp = crate::predict::Inputs {
            key: &ks.key,
            values: &key_space,
            docs_per_sampled: cx.total as f64 / ks.docs_counted().max(1) as f64,
            avg_doc_size: kc.avg_doc_size_bytes,
            chunk_size: opts.chunk_size_bytes,
            shards: opts.shards.unwrap_or(1),
            queries: &touches,
            inserts,
            recent: &recent,
            redact: opts.redact,
        };
        crate::predict::predict(&inp, actual)
    });
    let reads = dist.read_distribution();
    let writes = dist.write_distribution();
    let s = score(&kc, &reads, &writes);
    let mut query_shapes: Vec<QueryShapeReport> = shapes
        .into_iter()
        .map(|((shape, label), (count, ops))| QueryShapeReport {
            shape: shape.to_string(),
            ops: ops.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            count,
            label,
        })
        .collect();
    query_shapes.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.shape.cmp(&b.shape)));
    CandidateReport {
        key: ks.key.to_json(),
        rank: 0,
        score: s.score,
        verdict: s.verdict,
        reasons: s.reasons,
        proposed_because: (!prop.why.is_empty()).then(|| prop.why.clone()),
        key_characteristics: kc,
        read_distribution: reads,
        write_distribution: writes,
        query_shapes,
        cluster,
        supporting_index: support,
        server_analyze_shard_key: None,
    }
}

/// Run the whole analysis.
pub fn run(source: &mut dyn DocumentSource, log: &QueryLog, query_sources: Vec<String>, opts: &Options) -> Result<Report> {
    let ns = resolve_namespace(opts.namespace.as_deref(), log)?;
    let queries: Vec<&Query> = log.queries.iter().filter(|q| ns.as_deref().is_none_or(|n| q.ns == n)).collect();
    let diffs: Vec<&Document> =
        log.diffs.iter().filter(|d| ns.as_deref().is_none_or(|n| d.ns == n)).map(|d| &d.diff).collect();

    let mut notes = Vec::new();
    let on_ns = ns.as_ref().and_then(|n| log.by_namespace.get(n)).copied().unwrap_or(0);
    if on_ns > queries.len() as u64 {
        notes.push(format!(
            "{on_ns} operations on the collection in the logs; a uniform sample of {} was classified",
            queries.len()
        ));
    }
    let proposals: Vec<Proposal> = if opts.keys.is_empty() && !opts.proposals.is_empty() {
        opts.proposals.clone()
    } else if opts.keys.is_empty() {
        let pre = source.prescan(PRESCAN_DOCS)?;
        if pre.is_empty() {
            return Err(input_error(format!("{}: no documents to analyse", source.describe())));
        }
        let p = propose(&pre, &queries);
        notes.push(format!("no --key given: proposed {} candidates from the query filters and the first {} documents", p.len(), pre.len()));
        p
    } else {
        opts.keys.iter().map(|k| Proposal { key: k.clone(), why: String::new() }).collect()
    };
    let keys: Vec<ShardKey> = proposals.iter().map(|p| p.key.clone()).collect();

    let mut sample = Sample::new(&keys);
    source.scan(&mut |d, size| {
        sample.add(d, size);
        Ok(())
    })?;
    sample.finish();
    if sample.num_docs == 0 {
        return Err(input_error(format!("{}: no documents to analyse", source.describe())));
    }
    let mut in_order = Sample::order_only(&keys);
    let separate_order = source.scan_in_insertion_order(&mut |d, size| {
        in_order.add(d, size);
        Ok(())
    })?;
    in_order.finish();
    // A key the user named must be usable: the server refuses arrays in key fields.
    if !opts.keys.is_empty() {
        for ks in &sample.keys {
            if let Some((pos, field)) = &ks.first_array {
                return Err(input_error(format!(
                    "key {}: {} documents hold an array in '{field}' (the first is document {} of {}); MongoDB refuses arrays in shard key fields (BadValue)",
                    ks.key, ks.docs_with_arrays, pos + 1, source.describe()
                )));
            }
        }
    }
    let total = opts.total_docs.or(source.num_docs_total()).unwrap_or(0).max(sample.num_docs);
    if total > sample.num_docs {
        notes.push(format!(
            "{} of {} documents sampled; counts of values are for the sample, estimates and jumbo risk are scaled to the collection",
            sample.num_docs, total
        ));
    }

    let ctx = Context {
        sample: &sample,
        total,
        avg_doc_size: source.avg_doc_size_bytes(),
        opts,
        queries: &queries,
        shapes: &queries.iter().map(|q| shape_of(&q.filter)).collect::<Vec<_>>(),
        diffs: &diffs,
    };
    // What the source knows per key, then every candidate on its own core.
    let known: Vec<_> = keys.iter().map(|k| (source.supporting_index(k), source.actual_chunks(k))).collect();
    let mut candidates: Vec<CandidateReport> = {
        use rayon::prelude::*;
        (0..keys.len())
            .into_par_iter()
            .map(|i| {
                let order = separate_order.then(|| &in_order.keys[i]);
                evaluate(&ctx, &sample.keys[i], order, &proposals[i], known[i].0.clone(), known[i].1.as_ref())
            })
            .collect()
    };
    candidates.sort_by(|a, b| b.score.cmp(&a.score));
    for (i, c) in candidates.iter_mut().enumerate() {
        c.rank = i + 1;
    }

    let mut skipped = log.skipped.clone();
    skipped.retain(|_, v| *v > 0);
    Ok(Report {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo { name: "shardkey", version: env!("CARGO_PKG_VERSION") },
        namespace: ns.clone(),
        inputs: Inputs {
            documents: DocumentInput { source: source.describe(), num_docs_read: sample.num_docs },
            queries: QueryInput {
                sources: query_sources,
                records_read: log.records,
                queries_read: log.by_namespace.values().sum(),
                queries_used: ns.as_ref().and_then(|n| log.by_namespace.get(n)).copied().unwrap_or(queries.len() as u64),
                queries_classified: queries.len() as u64,
                queries_other_namespaces: log
                    .by_namespace
                    .iter()
                    .filter(|(k, _)| ns.as_deref().is_some_and(|n| n != k.as_str()))
                    .map(|(_, v)| *v)
                    .sum(),
                skipped,
                shard_key_update_diffs: diffs.len() as u64,
            },
        },
        settings: Settings {
            chunk_size_bytes: opts.chunk_size_bytes,
            num_most_common_values: opts.num_most_common,
            default_collation: opts.default_collation.clone().map(|d| Bson::Document(d).into_relaxed_extjson()),
        },
        candidates,
        audit: None,
        notes,
    })
}

/// A document file as a source (mongoexport JSON, mongodump BSON).
pub struct FileSource {
    pub path: std::path::PathBuf,
}

impl DocumentSource for FileSource {
    fn describe(&self) -> String {
        self.path.display().to_string()
    }

    fn prescan(&mut self, n: usize) -> Result<Vec<Document>> {
        let mut out = Vec::with_capacity(n);
        let stop = "stop-prescan";
        let r = crate::sources::docs::for_each_document(&self.path, |d, _| {
            if out.len() >= n {
                anyhow::bail!(stop);
            }
            out.push(d.clone());
            Ok(())
        });
        match r {
            Ok(_) => Ok(out),
            Err(e) if e.to_string() == stop => Ok(out),
            Err(e) => Err(e),
        }
    }

    fn scan(&mut self, f: &mut dyn FnMut(&Document, usize) -> Result<()>) -> Result<()> {
        crate::sources::docs::for_each_document(&self.path, f).map(|_| ())
    }
}

/// Documents held in memory (tests, and sources that fetch before analysing).
pub struct MemorySource {
    pub name: String,
    pub docs: Vec<Document>,
}

impl DocumentSource for MemorySource {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn prescan(&mut self, n: usize) -> Result<Vec<Document>> {
        Ok(self.docs.iter().take(n).cloned().collect())
    }

    fn scan(&mut self, f: &mut dyn FnMut(&Document, usize) -> Result<()>) -> Result<()> {
        let mut buf = Vec::new();
        for d in &self.docs {
            buf.clear();
            d.to_writer(&mut buf)?;
            f(d, buf.len())?;
        }
        Ok(())
    }
}
