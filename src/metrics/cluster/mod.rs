//! `cluster`: the model of what one key does to a cluster of N shards: where data,
//! reads, writes and inserts go today and at scale, what the workload costs (shards
//! per operation), how far the key can grow, and whether the collection is large
//! enough for sharding to help. The rules, with the manual page of each, are in `model.rs`.
//! What the model reads is `inputs.rs`; what it reports, `report.rs`; how chunks are laid out, `layout.rs`.

mod inputs;
pub(crate) mod layout;
pub(crate) mod pinned;
mod report;

pub(crate) use inputs::{actual_chunks, query_key_space, ActualChunks, Inputs, InsertBatches, QueryTouch};
pub(crate) use report::{
    Benefit, ClusterBasis, ClusterReport, Cost, Growth, GrowthLimit, Imbalance, JumboChunkReport, Load, Placement, Scale, ShardLoad,
    ShardsFrom,
};

use self::layout::{Chunk, DataLine};
use crate::model::KeySpace;
use crate::util::text::{count_of, fmt_count, mib};
use bson::Bson;

/// Shards modelled when neither `--shards` nor a sharded cluster says: docs/reference.md "Cluster model" gives why.
pub(crate) const DEFAULT_SHARDS: usize = 4;

/// The first-field values at which the sampled data (`values`, in key order) crosses
/// 1/n, 2/n, … of its documents: each starts a zone (repeated values once). A zone bounds the
/// first field only, so the data is counted per first-field value: the crossing value ends its
/// zone whole (a compound key's values of one first field are many, and a cut at the one whose
/// run crosses left the zone before it empty).
pub(crate) fn zone_splits(values: &KeySpace, n: usize) -> Vec<Bson> {
    let total: u64 = values.counts().iter().sum();
    let mut out: Vec<Bson> = Vec::new();
    if n < 2 || total == 0 {
        return out;
    }
    let first = |i: usize| values.value(i).into_iter().next().unwrap_or(Bson::Null);
    let (mut cum, mut k) = (0u64, 1usize);
    let mut here = (!values.is_empty()).then(|| first(0));
    for i in 0..values.len() {
        cum += values.count(i);
        // The next first-field value, when value i ends its run.
        let next = (i + 1 < values.len()).then(|| first(i + 1));
        if next.as_ref().zip(here.as_ref()).is_some_and(|(a, b)| crate::bsonx::cmp_bson(a, b).is_eq()) {
            continue;
        }
        while k < n && cum * n as u64 >= total * k as u64 {
            k += 1;
            if let Some(v) = &next {
                if out.last().is_none_or(|l| crate::bsonx::cmp_bson(l, v) == std::cmp::Ordering::Less) {
                    out.push(v.clone());
                }
            }
        }
        here = next;
    }
    out
}

fn pct(part: f64, whole: f64) -> f64 {
    if whole <= 0.0 {
        0.0
    } else {
        (part * 1000.0 / whole).round() / 10.0
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Loads and per-query fan-out of one placement.
struct Spread {
    data: Vec<f64>,
    chunks: Vec<usize>,
    reads: Vec<f64>,
    writes: Vec<f64>,
    inserts: Vec<f64>,
    /// Operations reaching each shard: reads, writes, and the insert commands expected to.
    ops: Vec<f64>,
    /// The insert commands the operations count (0 when inserts are not placed).
    insert_ops: u64,
    /// Shards reached by each query, in `queries` order.
    hits: Vec<usize>,
    owners: usize,
}

fn spread(chunks: &[Chunk], n: usize, inp: &Inputs) -> Spread {
    let mut data = vec![0.0; n];
    let mut nchunks = vec![0usize; n];
    for c in chunks {
        data[c.shard] += c.bytes;
        nchunks[c.shard] += 1;
    }
    let (mut reads, mut writes) = (vec![0.0; n], vec![0.0; n]);
    let mut hits = Vec::with_capacity(inp.queries.len());
    for q in inp.queries {
        let hit = layout::shards_touched(chunks, &q.touched, n);
        let acc = if q.is_read { &mut reads } else { &mut writes };
        for (a, h) in acc.iter_mut().zip(&hit) {
            *a += *h as u8 as f64;
        }
        hits.push(hit.iter().filter(|h| **h).count());
    }
    let inserts = layout::insert_shares(chunks, n, inp.inserts, inp.recent);
    let owners = nchunks.iter().filter(|c| **c > 0).count();
    // Inserts count where their documents land; not placed (no documents), not counted.
    let placed = inserts.iter().sum::<f64>() > 0.0;
    let ops = (0..n).map(|i| reads[i] + writes[i] + if placed { inp.inserts_sampled.reaching(inserts[i]) } else { 0.0 }).collect();
    let insert_ops = if placed { inp.inserts_sampled.commands() } else { 0 };
    Spread { data, chunks: nchunks, reads, writes, inserts, ops, insert_ops, hits, owners }
}

fn placement(s: &Spread, names: &[String], nr: f64, nw: f64, migrations: Option<u64>) -> Placement {
    let total: f64 = s.data.iter().sum();
    let nops = nr + nw + s.insert_ops as f64;
    Placement {
        num_chunks: s.chunks.iter().sum(),
        shards_with_data: s.data.iter().filter(|d| **d > 0.0).count(),
        migrations,
        shards: (0..names.len())
            .map(|i| ShardLoad {
                shard: names[i].clone(),
                num_chunks: s.chunks[i],
                data_bytes: s.data[i].round() as u64,
                data_percent: pct(s.data[i], total),
                reads_percent: pct(s.reads[i], nr),
                writes_percent: pct(s.writes[i], nw),
                inserts_percent: pct(s.inserts[i], 1.0),
                operations_percent: pct(s.ops[i], nops),
            })
            .collect(),
        imbalance: Imbalance {
            data: layout::ratio(&s.data),
            reads: (nr > 0.0).then(|| layout::ratio(&s.reads)).flatten(),
            writes: (nw > 0.0).then(|| layout::ratio(&s.writes)).flatten(),
            inserts: layout::ratio(&s.inserts),
            operations: (nops > 0.0).then(|| layout::ratio(&s.ops)).flatten(),
        },
    }
}

fn cost(s: &Spread, inp: &Inputs, n: usize) -> Cost {
    let (mut nr, mut nw, mut single_r, mut single_w, mut sum_r, mut sum_w, mut every, mut fan, mut fan_ops) =
        (0u64, 0u64, 0u64, 0u64, 0u64, 0u64, 0u64, 0.0, 0u64);
    for (q, &h) in inp.queries.iter().zip(&s.hits) {
        if q.is_read {
            nr += 1;
            sum_r += h as u64;
            single_r += (h == 1) as u64;
        } else {
            nw += 1;
            sum_w += h as u64;
            single_w += (h == 1) as u64;
        }
        every += (h >= s.owners && s.owners > 1) as u64;
        if !q.retention {
            fan_ops += 1;
            fan += if n > 1 { (h.max(1) - 1) as f64 / (n - 1) as f64 } else { 0.0 };
        }
    }
    let ops = nr + nw;
    let p = |a: u64, b: u64| (b > 0).then(|| pct(a as f64, b as f64));
    Cost {
        num_reads: nr,
        num_writes: nw,
        percentage_of_single_shard_ops: p(single_r + single_w, ops),
        percentage_of_single_shard_reads: p(single_r, nr),
        percentage_of_single_shard_writes: p(single_w, nw),
        mean_shards_per_read: (nr > 0).then(|| round2(sum_r as f64 / nr as f64)),
        mean_shards_per_write: (nw > 0).then(|| round2(sum_w as f64 / nw as f64)),
        mean_shards_per_op: (ops > 0).then(|| round2((sum_r + sum_w) as f64 / ops as f64)),
        percentage_of_ops_to_every_shard: p(every, ops),
        percentage_of_writes_without_shard_key: inp.writes_without_shard_key_percent.filter(|_| nw > 0),
        writes_without_shard_key: inp.writes_without_key.filter(|_| nw > 0),
        percentage_of_shard_key_updates: inp.shard_key_updates_percent.filter(|_| nw > 0),
        fan_out: (fan_ops > 0).then(|| ((1.0 - fan / fan_ops as f64).clamp(0.0, 1.0) * 1e6).round() / 1e6),
    }
}

fn growth(inp: &Inputs, at_scale: &Spread) -> Growth {
    let by_top = if inp.top_share > 0.0 { (1.0 / inp.top_share).floor() as u64 } else { u64::MAX };
    let distinct = inp.estimated_distinct.max(1);
    let (max, limited_by) = if distinct <= by_top && distinct < 100_000 {
        (distinct, GrowthLimit::DistinctValues)
    } else if by_top < distinct && by_top < 100_000 {
        (by_top, GrowthLimit::TopValueShare)
    } else {
        (distinct.min(by_top), GrowthLimit::None)
    };
    let largest = at_scale.inserts.iter().cloned().fold(0.0, f64::max);
    Growth {
        max_useful_shards: max,
        limited_by,
        shards_taking_inserts: at_scale.inserts.iter().filter(|s| **s >= 0.01).count(),
        largest_insert_share_percent: pct(largest, 1.0),
    }
}

fn scale(data_bytes: f64, n: usize, range: f64, today_with_data: usize) -> Scale {
    let (start, all) = layout::scale_thresholds(n, range);
    let b = |x: f64| mib(x.round() as u64);
    let (benefit, words) = if n <= 1 {
        (Benefit::NoneYet, "one shard modelled: give --shards N to see a cluster".to_string())
    } else if data_bytes < start {
        (
            Benefit::NoneYet,
            format!(
                "sharding brings no benefit yet: at {} the collection is below the balancer's migration threshold (3 × {} range size = {}), so all of it stays on the primary shard; migrations start from {} and all {n} shards hold data from {}",
                b(data_bytes), b(range), b(start), b(start), b(all)
            ),
        )
    } else if today_with_data < n {
        (
            Benefit::Partial,
            format!(
                "at {} only {today_with_data} of {n} shards hold data (the balancer tolerates 3 range sizes of difference); all {n} do from {}",
                b(data_bytes), b(all)
            ),
        )
    } else {
        (Benefit::Full, format!("at {} the data spreads over all {n} shards", b(data_bytes)))
    };
    Scale {
        data_bytes: data_bytes.round() as u64,
        migrations_start_bytes: start.round() as u64,
        all_shards_from_bytes: all.round() as u64,
        benefit,
        words,
    }
}

fn assumptions(n: usize, from: ShardsFrom, range: u64, actual: bool) -> Vec<String> {
    let mut a = vec![
        format!("{} ({from}); range size {} (the unit one migration moves, 6.0.3+)", count_of(n as u64, "shard", "shards"), mib(range)),
        "the balancer evens data size per shard and starts a round only while two shards differ by 3 range sizes (6.0.3+)".into(),
        "chunks are not split on insert (6.0.3+); the AutoMerger joins contiguous chunks of a shard (7.0+)".into(),
        "a value whose documents exceed the range size cannot be split: jumbo, never moved".into(),
        "today: the collection as sampled, sharded while populated (one chunk on the primary, no pre-split, hashed keys included)".into(),
        "at scale: each shard owns a contiguous, equal share of the data in key order; cost and score use it".into(),
        "an operation reaches the shards owning the chunks its key bounds overlap; without bounds, every shard owning data".into(),
    ];
    if actual {
        a.push("the collection is sharded: cost uses its real chunks (config.chunks), data estimated from the sample".into());
    }
    a
}

pub(crate) fn predict(inp: &Inputs, actual: Option<&ActualChunks>) -> ClusterReport {
    let range = inp.chunk_size as f64;
    let line = DataLine {
        values: inp.values,
        key_len: inp.key.fields.len(),
        docs_per_sampled: inp.docs_per_sampled,
        avg_doc_size: inp.avg_doc_size as f64,
        jumbo_values: inp.jumbo_values.clone(),
    };
    let n = actual.map(|a| a.shard_names.len()).unwrap_or(inp.shards).max(1);
    let names: Vec<String> = match actual {
        Some(a) => a.shard_names.clone(),
        None => (0..n).map(|i| format!("shard{i}")).collect(),
    };
    let (today_chunks, migrations, basis) = match actual {
        Some(a) => {
            let mut chunks = a.chunks.clone();
            // Each value decoded to find its chunk: only a sharded collection's own key comes here.
            for (i, &c) in inp.values.counts().iter().enumerate() {
                let k = layout::chunk_of(&chunks, &inp.values.value(i));
                chunks[k].docs += c as f64 * inp.docs_per_sampled;
                chunks[k].bytes += c as f64 * inp.docs_per_sampled * inp.avg_doc_size as f64;
            }
            chunks.iter_mut().for_each(|c| c.shard = c.shard.min(n - 1));
            (chunks, None, ClusterBasis::ActualChunks)
        }
        None => {
            let (c, m) = layout::today(&line, n, range);
            (c, Some(m), ClusterBasis::Simulated)
        }
    };
    let scale_chunks = match actual {
        Some(_) => today_chunks.clone(),
        None => layout::at_scale(&line, n),
    };
    let (nr, nw) = inp.queries.iter().fold((0.0, 0.0), |(r, w), q| if q.is_read { (r + 1.0, w) } else { (r, w + 1.0) });
    let today_s = spread(&today_chunks, n, inp);
    let scale_s = spread(&scale_chunks, n, inp);
    let today = placement(&today_s, &names, nr, nw, migrations);
    let at_scale = placement(&scale_s, &names, nr, nw, None);
    let load = load(&at_scale, nr + nw, scale_s.insert_ops);
    let cost = cost(&scale_s, inp, n);
    let growth = growth(inp, &scale_s);
    let scale = if inp.documents {
        scale(line.total_bytes(), n, range, today.shards_with_data)
    } else {
        Scale {
            data_bytes: 0,
            migrations_start_bytes: layout::scale_thresholds(n, range).0.round() as u64,
            all_shards_from_bytes: layout::scale_thresholds(n, range).1.round() as u64,
            benefit: Benefit::Unknown,
            words: "no documents: the data size and its spread are not known; the key space is cut at the values the sampled queries name"
                .into(),
        }
    };
    let jumbo_chunks: Vec<JumboChunkReport> = today_chunks
        .iter()
        .filter(|c| c.jumbo)
        .map(|c| JumboChunkReport {
            min: inp.key.value_json(&c.min, inp.redact),
            max: inp.key.value_json(&c.max, inp.redact),
            shard: names[c.shard].clone(),
            estimated_bytes: c.bytes.round() as u64,
            estimated_docs: c.docs.round() as u64,
        })
        .collect();
    let verdict = verdict(n, &cost, (&growth, inp.insert_evidence), &scale, &jumbo_chunks, load.as_ref());
    let from = if actual.is_some() { ShardsFrom::Cluster } else { inp.shards_from };
    ClusterReport {
        basis,
        num_shards: n,
        num_shards_from: from,
        chunk_size_bytes: inp.chunk_size,
        assumptions: {
            let mut a = assumptions(n, from, inp.chunk_size, actual.is_some());
            if !inp.documents {
                a.push("no documents: each value the sampled queries name counts as one unit of data; data, insert and growth figures are not measured".into());
            }
            a
        },
        today,
        at_scale,
        cost,
        growth,
        scale,
        jumbo_chunks,
        load,
        verdict,
        zone_splits: zone_splits(inp.values, n),
        pinned: pinned::pinned(inp.values, n),
    }
}

impl ClusterReport {
    /// Said again once the collection's insert evidence is settled (`InsertEvidence::with_keys`).
    pub(crate) fn reword_inserts(&mut self, inserts: super::insert_order::InsertEvidence) {
        self.verdict = verdict(self.num_shards, &self.cost, (&self.growth, inserts), &self.scale, &self.jumbo_chunks, self.load.as_ref());
    }
}

/// The busiest shard at scale by operations; None without operations.
fn load(at_scale: &Placement, queries: f64, num_inserts: u64) -> Option<Load> {
    let ops = queries + num_inserts as f64;
    if ops <= 0.0 {
        return None;
    }
    let busiest = at_scale.shards.iter().reduce(|a, b| if b.operations_percent > a.operations_percent { b } else { a })?;
    let mean = at_scale.shards.iter().map(|s| s.operations_percent).sum::<f64>() / at_scale.shards.len() as f64;
    Some(Load {
        busiest_over_mean: if mean > 0.0 { round2(busiest.operations_percent / mean) } else { 1.0 },
        num_operations: ops as u64,
        busiest_shard: busiest.shard.clone(),
        busiest_shard_percent: busiest.operations_percent,
        busiest_shard_data_percent: busiest.data_percent,
        num_inserts: (num_inserts > 0).then_some(num_inserts),
        insert_percent: (num_inserts > 0).then(|| pct(num_inserts as f64, ops)),
    })
}

fn verdict(
    n: usize,
    c: &Cost,
    (g, inserts): (&Growth, super::insert_order::InsertEvidence),
    s: &Scale,
    jumbo: &[JumboChunkReport],
    load: Option<&Load>,
) -> String {
    use super::insert_order::InsertEvidence;
    let mut parts = Vec::new();
    if let Some(p) = c.percentage_of_single_shard_ops {
        parts.push(format!("{p:.1}% of operations reach one shard"));
    }
    if let Some(r) = c.mean_shards_per_read {
        parts.push(format!("a read reaches {r:.2} of {} on average", count_of(n as u64, "shard", "shards")));
    }
    if let Some(w) = c.mean_shards_per_write {
        parts.push(format!("a write {w:.2}"));
    }
    // Where inserts go, when the workload shows them or is not known (then said assumed).
    let taking = count_of(g.shards_taking_inserts as u64, "shard", "shards");
    match inserts {
        // Seen, but no document says where they land (no documents read): not "0 shards".
        InsertEvidence::Sampled if g.shards_taking_inserts == 0 => parts.push("where the inserts land is not known".to_string()),
        InsertEvidence::Sampled => parts.push(format!("inserts go to {taking}")),
        InsertEvidence::NoneSampled => {}
        _ => parts.push(format!("inserts (assumed) go to {taking}")),
    }
    if let Some(l) = load {
        parts.push(format!("the busiest shard takes {:.1}% of operations", l.busiest_shard_percent));
    }
    if !jumbo.is_empty() {
        parts.push(format!("{} jumbo chunk{}", jumbo.len(), if jumbo.len() > 1 { "s" } else { "" }));
    }
    let today = match s.benefit {
        Benefit::Full => format!("today, at {}, the data spreads over every shard", mib(s.data_bytes)),
        Benefit::Partial => format!("today, at {}, only some shards hold data", mib(s.data_bytes)),
        Benefit::NoneYet => format!("today, at {}, one shard holds it all (below the balancer's threshold)", mib(s.data_bytes)),
        Benefit::Unknown => "today's data size is not known".to_string(),
    };
    format!("with {} at scale: {}; {today}", count_of(n as u64, "shard", "shards"), parts.join(", "))
}

/// Words for a share of the largest shard and the useful-shard limit, for the score's reasons.
pub(crate) fn useful_shards_words(g: &Growth) -> Option<String> {
    match g.limited_by {
        GrowthLimit::DistinctValues => {
            Some(format!("at most {} shards can ever hold its data (one per distinct value)", fmt_count(g.max_useful_shards)))
        }
        GrowthLimit::TopValueShare => Some(format!(
            "beyond {} shards the shard holding the top value stays the busiest: adding shards no longer spreads the load",
            fmt_count(g.max_useful_shards)
        )),
        GrowthLimit::None => None,
    }
}

#[cfg(test)]
mod tests {

    /// Ten values 0..9 of one document each, four zones: the data crosses 1/4 (2.5 docs)
    /// after value 2, 2/4 after value 4, 3/4 (7.5) after value 7: zones start at 3, 5, 8.
    #[test]
    fn zone_splits_cut_the_data_in_equal_parts() {
        let ks = KeySpace::from_values((0..10).map(|i| (vec![Bson::Int32(i)], 1)).collect());
        assert_eq!(zone_splits(&ks, 4), vec![Bson::Int32(3), Bson::Int32(5), Bson::Int32(8)]);
        // One value holding 8 of 10 documents crosses 1/4, 2/4 and 3/4 at once: one split, after it.
        let ks = KeySpace::from_values(vec![(vec![Bson::Int32(0)], 1), (vec![Bson::Int32(1)], 8), (vec![Bson::Int32(2)], 1)]);
        assert_eq!(zone_splits(&ks, 4), vec![Bson::Int32(2)]);
        assert!(zone_splits(&ks, 1).is_empty());
        // A compound key: first field 0 holds 3 of 10 documents in three values, 1..=7 one
        // each. Per first field the data crosses 1/4 (2.5) after 0 (3), 2/4 after 2 (5), 3/4
        // after 5 (8): zones start at 1, 3, 6 (a cut at 0 itself left zone 0 empty).
        let mut v: Vec<(Vec<Bson>, u64)> = (0..3).map(|j| (vec![Bson::Int32(0), Bson::Int32(j)], 1)).collect();
        v.extend((1..8).map(|i| (vec![Bson::Int32(i), Bson::Int32(0)], 1)));
        assert_eq!(zone_splits(&KeySpace::from_values(v), 4), vec![Bson::Int32(1), Bson::Int32(3), Bson::Int32(6)]);
    }
    use super::layout::InsertPattern;
    use super::*;
    use crate::model::{KeyKind, KeyRange, ShardKey};

    fn at(v: i32) -> QueryTouch {
        QueryTouch { is_read: true, retention: false, touched: vec![KeyRange::point(vec![Bson::Int32(v)])] }
    }

    /// Values 0..100, one document each, 4 shards: at scale shard k owns 25k..25k+25.
    fn predict_with(queries: &[QueryTouch], num_inserts: u64) -> ClusterReport {
        predict_batches(queries, &InsertBatches(vec![(1, num_inserts)]), true)
    }

    /// `placed`: the recent values 0..99 say where inserts land; else none do.
    fn predict_batches(queries: &[QueryTouch], inserts_sampled: &InsertBatches, placed: bool) -> ClusterReport {
        let key = ShardKey::single("k", KeyKind::Range);
        let values = KeySpace::from_values((0..100).map(|i| (vec![Bson::Int32(i)], 1)).collect());
        let recent: Vec<Vec<Bson>> = if placed { (0..100).map(|i| vec![Bson::Int32(i)]).collect() } else { vec![] };
        let inp = Inputs {
            key: &key,
            values: &values,
            jumbo_values: vec![],
            docs_per_sampled: 1.0,
            avg_doc_size: 1000,
            documents: true,
            chunk_size: 128 << 20,
            shards: 4,
            shards_from: ShardsFrom::Flag,
            queries,
            inserts: InsertPattern::LikeRecent,
            recent: &recent,
            estimated_distinct: 100,
            top_share: 0.01,
            writes_without_shard_key_percent: None,
            writes_without_key: None,
            shard_key_updates_percent: None,
            inserts_sampled,
            insert_evidence: crate::metrics::insert_order::InsertEvidence::Sampled,
            redact: false,
        };
        predict(&inp, None)
    }

    /// Hand computation: 70 reads of value 3 (shard0) and 10 each of 30, 55, 80 (shards
    /// 1, 2, 3); 100 inserts like the recent values 0..99, 25 per shard. Operations: 200;
    /// shard0 takes 70 + 25 = 95 (47.5%), the others 10 + 25 = 35 (17.5%); mean 25%:
    /// 47.5 / 25 = 1.9. Inserts are 100 of 200 operations: 50%.
    #[test]
    fn load_counts_reads_writes_and_inserts_where_they_land() {
        let mut q: Vec<QueryTouch> = (0..70).map(|_| at(3)).collect();
        for v in [30, 55, 80] {
            q.extend((0..10).map(|_| at(v)));
        }
        let r = predict_with(&q, 100);
        let ops: Vec<f64> = r.at_scale.shards.iter().map(|s| s.operations_percent).collect();
        assert_eq!(ops, vec![47.5, 17.5, 17.5, 17.5]);
        let l = r.load.unwrap();
        assert_eq!(
            (l.num_operations, l.busiest_shard.as_str(), l.busiest_shard_percent, l.busiest_shard_data_percent),
            (200, "shard0", 47.5, 25.0)
        );
        assert_eq!((l.busiest_over_mean, l.num_inserts, l.insert_percent), (1.9, Some(100), Some(50.0)));
        assert!(r.verdict.contains("the busiest shard takes 47.5% of operations"), "{}", r.verdict);
    }

    /// A seed load is one command, not its documents: 10 reads of value 3 (shard0) and one
    /// insertMany of 400 documents like the recent values (a quarter per shard) are 11
    /// operations; the insert reaches every shard (1 - 0.75^400 = 1 to 50 decimals), so
    /// shard0 takes 11 of 11 (100%) and the others 1 (9.1%); inserts are 1 of 11 (9.1%). By
    /// documents it read 400 of 410 operations, and shard0's 110 of 410 (26.8%) hid its reads.
    #[test]
    fn an_insert_is_one_operation_on_each_shard_its_documents_reach() {
        let q: Vec<QueryTouch> = (0..10).map(|_| at(3)).collect();
        let r = predict_batches(&q, &InsertBatches(vec![(400, 1)]), true);
        let ops: Vec<f64> = r.at_scale.shards.iter().map(|s| s.operations_percent).collect();
        assert_eq!(ops, vec![100.0, 9.1, 9.1, 9.1]);
        let l = r.load.unwrap();
        assert_eq!((l.num_operations, l.num_inserts, l.insert_percent), (11, Some(1), Some(9.1)));
        // Where inserts are not placed (no recent documents), they are not counted at all, not
        // counted on no shard (a logs-only trial read 8.9% at most on 4 shards): 10 reads, on shard0.
        let r = predict_batches(&q, &InsertBatches(vec![(1, 50)]), false);
        let ops: Vec<f64> = r.at_scale.shards.iter().map(|s| s.operations_percent).collect();
        assert_eq!(ops, vec![100.0, 0.0, 0.0, 0.0]);
        assert_eq!(r.load.map(|l| (l.num_operations, l.num_inserts)), Some((10, None)));
        assert_eq!(InsertBatches(vec![(1, 8), (3, 2)]).reaching(0.5), 8.0 * 0.5 + 2.0 * 0.875);
    }

    /// A broadcast reaches every shard: each takes 100% of operations, the mean too (1.0×);
    /// without inserts seen, inserts are left out.
    #[test]
    fn a_broadcast_loads_every_shard_and_no_operations_means_no_load() {
        let all =
            QueryTouch { is_read: false, retention: false, touched: vec![KeyRange { min: vec![Bson::MinKey], max: vec![Bson::MaxKey] }] };
        let r = predict_with(&[all], 0);
        let l = r.load.unwrap();
        assert_eq!((l.busiest_shard_percent, l.busiest_over_mean, l.num_inserts, l.insert_percent), (100.0, 1.0, None, None));
        assert!(r.at_scale.shards.iter().all(|s| s.operations_percent == 100.0));
        assert_eq!(predict_with(&[], 0).load, None);
    }

    /// A retention delete below value 10 reaches shard0 only, a read of 60 shard2: the fan-out
    /// counts the read alone (1.0), the means count both.
    #[test]
    fn a_retention_delete_is_left_out_of_the_fan_out() {
        let old =
            QueryTouch { is_read: false, retention: true, touched: vec![KeyRange { min: vec![Bson::MinKey], max: vec![Bson::Int32(10)] }] };
        let r = predict_with(&[old, at(60)], 0);
        assert_eq!((r.cost.fan_out, r.cost.mean_shards_per_op), (Some(1.0), Some(1.0)));
        let r = predict_with(&[every_shard(), at(60)], 0);
        assert_eq!((r.cost.fan_out, r.cost.mean_shards_per_op), (Some(1.0), Some(2.5)));
        let r = predict_with(&[QueryTouch { retention: false, ..every_shard() }, at(60)], 0);
        assert_eq!(r.cost.fan_out, Some(0.5));
    }

    fn every_shard() -> QueryTouch {
        QueryTouch { is_read: false, retention: true, touched: vec![KeyRange { min: vec![Bson::MinKey], max: vec![Bson::MaxKey] }] }
    }
}
