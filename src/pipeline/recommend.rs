//! Steps 6 and 7: the candidates ranked, with the words that compare each with the next, and
//! the commands for the best key.

use crate::metrics::cluster;
use crate::report::CandidateReport;
use crate::score::{compare, Score, Verdict};
use crate::sources::CollectionFacts;
use bson::Document;

/// Step 6: keys the server accepts first, then blocked ones (they need a change first), then
/// invalid ones; within each, highest score first; on a tie, fewer sampled writes refused
/// first (keys capped alike tie), then compound hashed keys last, then by the raw weighted
/// sum, then the order proposed. Each gets its rank and the words that compare it with the next.
pub(super) fn rank(scored: &mut [(CandidateReport, Score)]) {
    let class = |v: Verdict| match v {
        Verdict::Invalid => 2,
        Verdict::Blocked => 1,
        _ => 0,
    };
    // On a tied score a compound hashed key comes after the others: it ties when a ranged key
    // of the same fields serves the same reads, and that one also serves range reads on its
    // first field and runs before 4.4 (the manual's time-series advice, metaField then time).
    let compound_hashed =
        |c: &CandidateReport| c.key.fields.len() > 1 && c.key.fields.iter().any(|f| f.kind == crate::model::KeyKind::Hashed);
    scored.sort_by(|a, b| {
        class(a.1.verdict)
            .cmp(&class(b.1.verdict))
            .then(b.1.score.cmp(&a.1.score))
            .then(a.1.breakdown.refused_writes_percent.total_cmp(&b.1.breakdown.refused_writes_percent))
            .then(compound_hashed(&a.0).cmp(&compound_hashed(&b.0)))
            .then(b.1.breakdown.weighted.total_cmp(&a.1.breakdown.weighted))
    });
    for i in 0..scored.len() {
        scored[i].0.rank = i + 1;
        if i + 1 < scored.len() {
            let words = compare(i + 1, &scored[i].1, i + 2, &scored[i + 1].1);
            scored[i].0.compared_with_next = Some(words);
        }
    }
}

/// What the cluster model assumed, and how far the data's size lets the key spread.
pub(super) fn cluster_notes(cl: &cluster::ClusterReport) -> Vec<String> {
    let mut notes = vec![format!(
        "cluster model (docs/reference.md \"Cluster model\"): {} ({}), {} MiB range size; data-size balancing with a 3-range threshold (6.0.3+), no split on insert, AutoMerger (7.0+), jumbo values never move; cost and score at scale (JSON cluster.assumptions)",
        crate::util::text::count_of(cl.num_shards as u64, "shard", "shards"),
        cl.num_shards_from,
        cl.chunk_size_bytes >> 20
    )];
    if cl.scale.benefit != cluster::Benefit::Full {
        notes.push(cl.scale.words.clone());
    }
    notes
}

/// Step 7: the commands for the best key, unless even it is invalid.
pub(super) fn recommend(
    ns: Option<&str>,
    best: Option<&CandidateReport>,
    facts: &CollectionFacts,
    collation: Option<&Document>,
    over_accepted: bool,
    unread: Option<&str>,
) -> Option<crate::score::apply::Recommendation> {
    let mut r = recommend_commands(ns, best, facts, collation, over_accepted)?;
    // Said before the commands: what the choice does not rest on.
    let b = best.map(|b| &b.score_breakdown);
    let mut caveats = Vec::new();
    match b.map(|b| (b.fan_out.is_none(), b.data_spread.is_none())) {
        Some((true, true)) => caveats.push(
            "nothing was measured (no documents, no sampled operation): this is the manual's default for such a collection, not a measured choice".to_string(),
        ),
        Some((true, false)) if best.is_some_and(|b| b.reasons.contains(&crate::score::reasons::Reason::OnlyInsertsSampled)) => caveats.push(
            "this choice rests on the data and the inserts: the sampled operations on the collection are all inserts, so no read, update or delete was measured (a slow-query log holds only those slower than slowms; the profiler at level 2 or sampled queries hold every one)".to_string(),
        ),
        // Looked for and not readable (privileges): the cause, not "none found".
        Some((true, false)) => caveats.push(match unread {
            Some(why) => format!("this choice rests on the data alone: targeting was not measured ({why}: the notes say which privilege reads it); a slow-query log, the profiler or sampled queries may change it"),
            None => "this choice rests on the data alone: targeting was not measured (no sampled operation on the collection); a slow-query log, the profiler or sampled queries may change it".to_string(),
        }),
        Some((false, true)) => caveats.push("this choice rests on the queries alone: the documents were not read, so cardinality, frequency and the data's spread were not measured".to_string()),
        _ => {}
    }
    r.caveats = caveats;
    Some(r)
}

fn recommend_commands(
    ns: Option<&str>,
    best: Option<&CandidateReport>,
    facts: &CollectionFacts,
    collation: Option<&Document>,
    over_accepted: bool,
) -> Option<crate::score::apply::Recommendation> {
    let support = best.and_then(|b| b.metrics.supporting_index.as_ref());
    let indexes = facts.indexes.as_deref().unwrap_or_default();
    match (ns, best) {
        (Some(n), Some(best)) if best.verdict != Verdict::Invalid => Some(crate::score::apply::recommend(&crate::score::apply::Target {
            namespace: n,
            winner: &best.key,
            has_supporting_index: support.map(|s| s.name.is_some()),
            supporting: support.and_then(|s| s.name.as_ref()).and_then(|name| indexes.iter().find(|ix| &ix.name == name)),
            new_index: support
                .and_then(|s| s.new_index.clone())
                .unwrap_or_else(|| crate::model::index::NewIndex::for_key(&best.key, indexes, collation.is_some())),
            beside: support.and_then(|s| s.beside.as_ref()),
            collation,
            server_version: facts.server_version,
            current_key: facts.sharding.as_ref().map(|m| &m.key),
            shards: best.metrics.cluster.num_shards,
            data_bytes: best.metrics.cluster.scale.data_bytes,
            index_bytes: facts.total_index_size_bytes,
            empty: best.metrics.key_characteristics.is_none() && facts.num_docs_total == Some(0),
            blocked_by: best.constraints.iter().filter(|c| c.effect == crate::rules::Effect::Blocked).collect(),
            chosen_over_accepted: over_accepted,
        })),
        _ => None,
    }
}
