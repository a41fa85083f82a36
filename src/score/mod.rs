//! The one place that turns metrics into a 0–100 score, a verdict, reasons, and the
//! pairwise words of the ranking.
//!
//! The score comes from the cluster model (`metrics::cluster`) at N shards, at scale:
//! score = min(cap, 100 × Σ weight × component), rounded. The weights and caps are
//! the tables `WEIGHTS` and `CAPS` in `weights.rs` (docs/reference.md "Score" prints the same tables).

pub(crate) mod apply;
pub(crate) mod choice;
mod compare;
pub(crate) mod residency;
pub(crate) mod unsharded;
pub(crate) use compare::compare;
mod facts;
pub(crate) mod reasons;
mod verdict;
mod weights;

pub(crate) use facts::Facts;
pub(crate) use verdict::{Breakdown, Score, Verdict};
use weights::cap;
pub(crate) use weights::{
    fan_out_component, growth_component, hot_shard, insert_factor, key_update_share, spread_component, weight, Capped, Component,
    HOT_SHARD_OVER_MEAN, HOT_VALUE_CAP_SHARE, KEY_UPDATES_CAP_SHARE, LOW_CARDINALITY, ONE_SHARD_INSERTS,
};

use crate::metrics::cluster::useful_shards_words;
use crate::metrics::insert_order::{InsertBasis, InsertEvidence, InsertKind};
use crate::metrics::CandidateMetrics;
use crate::rules::{Effect, Finding};
use crate::util::text::{fmt_count, short_value};
use reasons::{Reason, Spread, Targeting, Witness};

/// Score a candidate from its metrics and what the validity rules found on it.
pub(crate) fn score_candidate(m: &CandidateMetrics, constraints: &[Finding]) -> Score {
    score(&Facts { constraints: constraints.to_vec(), ..Facts::of(m) })
}

/// Problems first, then strengths: the order `reasons` keeps.
#[derive(Default)]
struct Said {
    problems: Vec<Reason>,
    strengths: Vec<Reason>,
}

impl Said {
    fn problem(&mut self, r: Reason) {
        self.problems.push(r);
    }

    fn strength(&mut self, r: Reason) {
        self.strengths.push(r);
    }

    /// A strength when the component stands at 0.5 or above, else a problem.
    fn by(&mut self, component: f64, r: Reason) {
        if component >= 0.5 {
            self.strength(r)
        } else {
            self.problem(r)
        }
    }
}

/// The lowest cap, and the lowest but for `writesFail` (what the key would score with the
/// application's refused writes fixed: `Breakdown::if_writes_fixed`).
#[derive(Default)]
struct Ceiling(Option<(Capped, f64)>, Option<f64>);

impl Ceiling {
    fn at(&mut self, c: Capped) {
        self.at_most(c, cap(c))
    }

    /// A cap whose value depends on the facts (`insertsOnOneShard` scaled by the inserts' share).
    fn at_most(&mut self, c: Capped, v: f64) {
        if self.0.is_none_or(|(_, x)| v < x) {
            self.0 = Some((c, v));
        }
        if c != Capped::WritesFail && self.1.is_none_or(|x| v < x) {
            self.1 = Some(v);
        }
    }
}

pub(crate) fn score(f: &Facts) -> Score {
    let n = f.shards.max(1);
    let hashed = f.insert_order.basis == InsertBasis::HashedFirstField;
    let insert_known = f.documents || matches!(f.insert_order.kind, InsertKind::Increasing | InsertKind::Decreasing);
    // Each component as measured; None where it was not (it then counts 0).
    let updates = key_update_share(&f.cost);
    let fan = fan_out_component(f.cost.fan_out, updates);
    let data = f.documents.then(|| spread_component(f.data_max_share, n));
    let evidence = f.insert_order.inserts_in_workload;
    // Not judged with no insert sampled; hashing spreads inserts by construction.
    let ins = if evidence == InsertEvidence::NoneSampled || (!f.documents && hashed) {
        Some(1.0)
    } else if insert_known {
        Some(spread_component(f.insert_max_share, n))
    } else {
        None
    };
    // The shortfall counts as much as inserts weigh in the workload, when the queries show it:
    // nothing when they show operations and no insert.
    let insert_share = match evidence {
        InsertEvidence::NoneSampled => Some(0.0),
        _ => f.load.as_ref().and_then(|l| l.insert_percent).map(|p| p / 100.0),
    };
    let ins = ins.map(|i| 1.0 - insert_factor(insert_share) * (1.0 - i));
    let busiest_ops = f.load.as_ref().map(|l| l.busiest_shard_percent / 100.0);
    let load = busiest_ops.map(|s| spread_component(s, n));
    let grow = f.documents.then(|| growth_component(f.growth.max_useful_shards));
    let c = &f.cost;
    let not_measured = |what: &str| format!("{what} not measured");
    let words = [
        match (c.mean_shards_per_op, c.percentage_of_single_shard_ops) {
            (Some(m), Some(p)) => {
                format!(
                    "an operation reaches {m:.2} of {} on average ({p:.1}% reach one)",
                    crate::util::text::count_of(n as u64, "shard", "shards")
                )
            }
            _ => not_measured("targeting"),
        },
        match data {
            Some(_) => format!("the busiest of {n} shards holds {:.1}% of the data", f.data_max_share * 100.0),
            None => not_measured("the data's spread"),
        },
        match busiest_ops {
            Some(s) => format!("the busiest shard takes {:.1}% of operations", s * 100.0),
            None => not_measured("the load"),
        },
        match ins {
            _ if evidence == InsertEvidence::NoneSampled => "no insert sampled".to_string(),
            Some(_) if evidence.assumed() => format!("the busiest shard takes {:.1}% of the assumed inserts", f.insert_max_share * 100.0),
            Some(_) => format!("the busiest shard takes {:.1}% of inserts", f.insert_max_share * 100.0),
            None => not_measured("where inserts land"),
        },
        match grow {
            Some(_) => format!("up to {} useful shards", fmt_count(f.growth.max_useful_shards)),
            None => not_measured("growth"),
        },
    ];
    let counted = |x: Option<f64>| x.unwrap_or(0.0);
    let weighted = 100.0
        * (weight(Component::FanOut) * counted(fan)
            + weight(Component::DataSpread) * counted(data)
            + weight(Component::Load) * counted(load)
            + weight(Component::InsertSpread) * counted(ins)
            + weight(Component::Growth) * counted(grow));
    let breakdown = |ceiling: Option<(Capped, f64)>| Breakdown {
        num_shards: n,
        fan_out: fan.map(round3),
        data_spread: data.map(round3),
        load: load.map(round3),
        insert_spread: ins.map(round3),
        growth: grow.map(round3),
        insert_share_of_operations: insert_share.map(round3),
        weighted: round3(weighted),
        capped_by: ceiling.map(|c| c.0),
        if_writes_fixed: None,
        cap: ceiling.map(|c| c.1),
        refused_writes_percent: refused_writes_percent(f),
        words: words.clone(),
    };

    let refused: Vec<Reason> = f.constraints.iter().filter(|c| c.effect == Effect::Refused).cloned().map(Reason::Constraint).collect();
    if f.docs_with_arrays > 0 || !refused.is_empty() {
        let b = Breakdown {
            fan_out: fan,
            data_spread: data,
            load,
            insert_spread: ins,
            growth: grow,
            weighted,
            ..breakdown(Some((Capped::ArrayInKey, cap(Capped::ArrayInKey))))
        };
        return Score {
            score: cap(Capped::ArrayInKey) as u32,
            verdict: Verdict::Invalid,
            reasons: refused
                .into_iter()
                .chain((f.docs_with_arrays > 0).then_some(Reason::ArrayInKey { docs: f.docs_with_arrays }))
                .collect(),
            breakdown: b,
        };
    }

    let mut said = Said::default();
    let mut ceiling = Ceiling::default();
    for c in &f.constraints {
        if c.effect == Effect::WritesFail {
            ceiling.at(Capped::WritesFail);
        }
        said.problem(Reason::Constraint(c.clone()));
    }
    targeting(f, n, counted(fan), updates, &mut said, &mut ceiling);
    busiest_shard(f, n, &mut said, &mut ceiling);
    if !f.documents {
        said.problem(Reason::CharacteristicsNotMeasured);
        // What the filters name is a lower bound: few values there count as low cardinality.
        if let Some(q) = f.query_values.as_ref().filter(|q| q.num_distinct_named > 0 && q.estimated_num_distinct_values < LOW_CARDINALITY) {
            ceiling.at(Capped::FewValuesInQueries);
            said.problem(Reason::FewValuesInQueries { named: q.num_distinct_named, estimate: q.estimated_num_distinct_values });
        }
    } else {
        distribution(f, n, &mut said, &mut ceiling);
    }
    inserts(f, n, counted(ins), insert_known, insert_share, &mut said, &mut ceiling);

    let score = match ceiling.0 {
        Some((_, c)) => weighted.min(c),
        None => weighted,
    }
    .round()
    .clamp(0.0, 100.0) as u32;
    let mut reasons = said.problems;
    reasons.extend(said.strengths);
    let blocked = f.constraints.iter().any(|c| c.effect == Effect::Blocked);
    let held = ceiling.0.is_some_and(|(_, c)| weighted >= c);
    let verdict = if blocked { Verdict::Blocked } else { Verdict::of_score(score, held) };
    let mut b = breakdown(ceiling.0);
    if b.capped_by == Some(Capped::WritesFail) {
        b.if_writes_fixed = Some(ceiling.1.map_or(weighted, |c| weighted.min(c)).round().clamp(0.0, 100.0) as u32);
    }
    Score { score, verdict, reasons, breakdown: b }
}

/// The share of sampled writes (%) the server would refuse under the key (its `writesFail`
/// findings together, as `check`'s `max_refused_writes_percent` sums them): it breaks a tie
/// of scores (`pipeline::recommend::rank`), most often between keys capped alike.
fn refused_writes_percent(f: &Facts) -> f64 {
    f.constraints.iter().filter(|c| c.effect == Effect::WritesFail).filter_map(|c| c.percentage_of_writes).sum()
}

/// Reads and writes under the model.
fn targeting(f: &Facts, n: usize, fan: f64, updates: f64, said: &mut Said, ceiling: &mut Ceiling) {
    let c = &f.cost;
    let Some(single) = c.percentage_of_single_shard_ops.filter(|_| c.num_reads + c.num_writes > 0) else {
        // Inserts sampled and nothing else: the log was read, the workload has nothing to target.
        said.problem(match f.insert_order.inserts_in_workload {
            InsertEvidence::Sampled => Reason::OnlyInsertsSampled,
            _ => Reason::NoQuerySample,
        });
        return;
    };
    let t = Targeting {
        shards: n,
        single_percent: single,
        ops: c.num_reads + c.num_writes,
        mean_per_read: c.mean_shards_per_read,
        server_multi_reads: f.server_multi_reads.filter(|m| *m > 0.0),
        mean_per_write: c.mean_shards_per_write,
        to_every_shard_percent: c.percentage_of_ops_to_every_shard.unwrap_or(0.0),
    };
    said.by(fan, Reason::Targeting(t));
    if let Some(cs) = f.collation_spread.as_ref().filter(|cs| cs.operations > 0) {
        said.problem(Reason::CollationSpread { locale: cs.locale.clone(), operations: cs.operations, of: cs.of });
    }
    // No operation on one shard: every one is a multi-shard operation, whatever else the key does.
    if n > 1 && (c.fan_out == Some(0.0) || single <= 0.0) {
        ceiling.at(Capped::TargetsNothing);
    }
    if let Some(percent) = c.percentage_of_writes_without_shard_key.filter(|w| *w >= 20.0) {
        said.problem(Reason::WritesWithoutShardKey { percent, writes: c.num_writes, by: c.writes_without_shard_key });
    }
    if let Some(percent) = c.percentage_of_shard_key_updates.filter(|x| *x > 0.0) {
        if percent / 100.0 >= KEY_UPDATES_CAP_SHARE {
            ceiling.at(Capped::KeyUpdates);
        }
        let refused_by_id = c.writes_without_shard_key.map_or(0.0, |b| b.single_by_id_changing_key);
        said.problem(Reason::ShardKeyUpdates { percent, of_operations: updates, refused_by_id });
    }
}

/// The operations each shard takes at scale: a problem when one shard takes more than
/// twice its even share and twice the mean shard's (a hot spot, not broadcasts).
fn busiest_shard(f: &Facts, n: usize, said: &mut Said, ceiling: &mut Ceiling) {
    let Some(l) = &f.load else { return };
    let s = l.busiest_shard_percent / 100.0;
    if hot_shard(s, l.busiest_over_mean, n) {
        ceiling.at(Capped::HotShard);
    }
    if let Some(h) = &f.hot_documents {
        said.problem(Reason::HotDocuments {
            ids: h.documents.iter().map(|d| (short_value(&d.id.clone().into_relaxed_extjson()), d.percent_of_writes)).collect(),
            percent: h.percent_of_writes,
            writes: h.num_writes,
            sequences: h.sequences,
        });
    }
    if n > 1 && s * n as f64 > 2.0 && l.busiest_over_mean >= HOT_SHARD_OVER_MEAN {
        said.problem(Reason::BusiestShard {
            hot_documents: f.hot_documents.is_some(),
            shards: n,
            share: s,
            data_share: f.documents.then_some(l.busiest_shard_data_percent / 100.0),
            over_mean: l.busiest_over_mean,
            ops: l.num_operations,
        });
    }
}

/// Cardinality, frequency, growth and the data's spread (documents only).
fn distribution(f: &Facts, n: usize, said: &mut Said, ceiling: &mut Ceiling) {
    if let Some(h) = f
        .hashing
        .as_ref()
        .filter(|h| h.num_distinct_fractional_doubles > 0 && h.num_distinct_hashed_values < h.num_distinct_values_before_hashing)
    {
        said.problem(Reason::HashedDoublesTruncated {
            field: h.field.clone(),
            doubles: h.num_distinct_fractional_doubles,
            before: h.num_distinct_values_before_hashing,
            hashed: h.num_distinct_hashed_values,
        });
    }
    let distinct = f.estimated_distinct.max(1);
    let range = f.distinct_range;
    if distinct < LOW_CARDINALITY {
        ceiling.at(Capped::LowCardinality);
        said.problem(Reason::LowCardinality { distinct, range });
    } else if f.growth.max_useful_shards < 1000 && useful_shards_words(&f.growth).is_some() {
        said.problem(Reason::LimitedGrowth { distinct, range, growth: f.growth.clone() });
    } else {
        said.strength(Reason::HighCardinality { distinct, range });
    }
    if let Some(top) = &f.top_value {
        if f.top_share >= HOT_VALUE_CAP_SHARE {
            ceiling.at(Capped::HotValue);
        }
        if f.top_share >= 0.10 {
            said.problem(Reason::HotValue { value: short_value(top), share: f.top_share, in_sample: f.top_share_in_sample });
        }
    }
    if let Some((v, docs, bytes)) = &f.jumbo {
        ceiling.at(Capped::JumboRisk);
        said.problem(Reason::Jumbo {
            value: short_value(v),
            docs: *docs,
            bytes: *bytes,
            range_bytes: f.chunk_size,
            values_at_risk: f.jumbo_count,
        });
    }
    if f.docs_missing_fields > 0 && f.docs_sampled > 0 {
        said.problem(Reason::MissingKeyFields { docs: f.docs_missing_fields, share: f.docs_missing_fields as f64 / f.docs_sampled as f64 });
    }
    if f.data_max_share * n as f64 > 2.0 && n > 1 {
        said.problem(Reason::DataConcentrated { shards: n, share: f.data_max_share });
    }
}

/// What tells where inserts land, for the words.
fn witness(f: &Facts) -> Witness {
    let io = &f.insert_order;
    match (io.basis, io.creation_time_correlation_coefficient, f.server_record_id_coefficient) {
        (InsertBasis::CreationTime, Some(r), rid) => Witness::CreationTime { r, hidden_by_load: rid.filter(|_| io.load_order_hides_it) },
        (InsertBasis::RecordIdOrder, _, Some(r)) => Witness::RecordId { r },
        (InsertBasis::CreationTimeInGroups, _, _) if io.group_creation_time_correlation_coefficient.is_some() => {
            Witness::CreationTimeInGroups { r: io.group_creation_time_correlation_coefficient.unwrap_or_default() }
        }
        (InsertBasis::ValueType, _, _) => {
            Witness::ValueType(io.increasing_by_nature.iter().map(|x| (x.field.clone(), x.bson_type)).collect())
        }
        _ => Witness::None,
    }
}

/// Where inserts land.
fn inserts(f: &Facts, n: usize, ins: f64, insert_known: bool, insert_share: Option<f64>, said: &mut Said, ceiling: &mut Ceiling) {
    let io = &f.insert_order;
    let one_end = matches!(io.kind, InsertKind::Increasing | InsertKind::Decreasing);
    if io.inserts_in_workload == InsertEvidence::NoneSampled {
        // Growth by inserts is not evidenced: no cap, and the words say what was not judged.
        if one_end {
            said.problem(Reason::InsertsNotJudged {
                operations: f.cost.num_reads + f.cost.num_writes,
                decreasing: io.kind == InsertKind::Decreasing,
            });
        }
        return;
    }
    if insert_known && f.insert_max_share >= ONE_SHARD_INSERTS && n > 1 && insert_factor(insert_share) > 0.0 {
        let full = 100.0 - cap(Capped::InsertsOnOneShard);
        ceiling.at_most(Capped::InsertsOnOneShard, 100.0 - full * insert_factor(insert_share));
    }
    let plural = io.group_fields.unwrap_or(1) > 1;
    let hashed = io.basis == InsertBasis::HashedFirstField;
    match io.kind {
        InsertKind::Increasing | InsertKind::Decreasing => said.problem(Reason::InsertsAtOneEnd {
            decreasing: io.kind == InsertKind::Decreasing,
            witness: witness(f),
            share: f.insert_max_share,
            of_operations: insert_share,
            assumed: io.inserts_in_workload,
            operations: f.cost.num_reads + f.cost.num_writes,
        }),
        InsertKind::TopOfEachGroup if !f.documents => said
            .strength(Reason::TopOfEachGroupByNature { plural, fields: io.increasing_by_nature.iter().map(|x| x.field.clone()).collect() }),
        InsertKind::TopOfEachGroup => said.by(
            ins,
            Reason::TopOfEachGroup { plural, witness: witness(f), taking: f.shards_taking_inserts, shards: n, share: f.insert_max_share },
        ),
        InsertKind::Unknown => {}
        InsertKind::Spread if !f.documents => {
            if hashed {
                said.strength(Reason::HashedSpread);
            }
        }
        InsertKind::Spread => said.by(
            ins,
            Reason::InsertsSpread {
                taking: f.shards_taking_inserts,
                shards: n,
                share: f.insert_max_share,
                why: if hashed { Spread::Hashed } else { Spread::By(witness(f)) },
            },
        ),
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests;
