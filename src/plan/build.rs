//! The search turned into the plan as reported (`outcome::Plan`): per collection what to do
//! and why, the zones cut at the anchors' splits, the figures, the shards and the steps.

use super::evaluate::{Figures, W_DATA_BALANCE, W_LOAD_BALANCE, W_OWN_SCORE, W_SINGLE_SHARD};
use super::input::{Choice, CollectionInput, Settings};
use super::layout::Layout;
use super::outcome::{
    Action, Joins, LinkReport, Objective, OnShard, PinnedReport, Plan, PlannedCollection, ShardReport, Sizing, Transactions, TxnEvidence,
    Weights, ZoneReport, PLAN_SCHEMA_VERSION,
};
use super::search::{Search, EVALUATED_MAX, UNSHARDED_MAX_DATA_SHARE};
use super::steps::{shard_name, Step};
use super::zones::{ranges, zone_name};
use crate::model::ShardKey;
use crate::util::text::count_of;

/// The 95% margin of a share `p` measured on `n` of `total` (a uniform sample without
/// replacement): 1.96 × √(p(1 − p)/n) × √((total − n)/(total − 1)); none when all are measured.
pub(crate) fn margin95(p: f64, n: u64, total: u64) -> Option<f64> {
    if n == 0 || n >= total {
        return None;
    }
    let (n, t) = (n as f64, total as f64);
    Some(round3(1.96 * (p * (1.0 - p) / n).sqrt() * ((t - n) / (t - 1.0)).sqrt()))
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// What every step of `build` reads: the search and its inputs, the layout it makes.
struct Ctx<'a> {
    db: &'a str,
    inputs: &'a [CollectionInput],
    search: &'a Search,
    s: &'a Settings,
    layout: Layout<'a>,
    without: &'a [(Option<f64>, Option<f64>)],
    /// Transactions seen in part: ranges, never one figure on the transactions seen whole.
    in_part: bool,
}

/// The plan's commands by kind, put in their order by `steps`.
#[derive(Default)]
struct Commands {
    zone: Vec<Step>,
    range: Vec<Step>,
    index: Vec<Step>,
    shard: Vec<Step>,
    moves: Vec<Step>,
}

/// Each collection's zones and pinned values, by input index, until its `planned` takes them.
struct Zoned {
    zones_of: Vec<Vec<ZoneReport>>,
    pinned_of: Vec<Vec<PinnedReport>>,
}

/// A collection's action, key, score, shard (unsharded) and why.
type Decided = (Action, Option<ShardKey>, Option<u32>, Option<String>, String);

/// The zones of each group: cut at the anchor's splits, one set per member; their commands, and
/// the notes on values one shard cannot fairly hold.
fn zones(cx: &Ctx, cmds: &mut Commands, notes: &mut Vec<String>) -> Zoned {
    let Ctx { db, inputs, search, layout, .. } = cx;
    let (zone_cmds, range_cmds) = (&mut cmds.zone, &mut cmds.range);
    let mut zones_of: Vec<Vec<ZoneReport>> = vec![Vec::new(); inputs.len()];
    let mut pinned_of: Vec<Vec<PinnedReport>> = vec![Vec::new(); inputs.len()];
    for g in &layout.groups {
        let Choice::Key(ak) = &search.choices[g.anchor] else { continue };
        let name = zone_name(db, &inputs[g.anchor].candidates[*ak].key);
        for i in 0..=g.splits.len() {
            zone_cmds.push(Step::AddShardToZone { shard: i, zone: format!("{name}-{i}") });
        }
        for &m in &g.members {
            let Choice::Key(k) = &search.choices[m] else { continue };
            let key = &inputs[m].candidates[*k].key;
            pinned_of[m] =
                super::pinned::reports(&inputs[m].namespace, key, &inputs[m].candidates[*k].pinned, (&g.splits, &name, layout.shards));
            notes.extend(pinned_of[m].iter().map(|p| p.message.clone()));
            for r in ranges(key, &g.splits, &name) {
                range_cmds.push(Step::UpdateZoneKeyRange {
                    namespace: inputs[m].namespace.clone(),
                    min: r.min.clone(),
                    max: r.max.clone(),
                    zone: r.zone.clone(),
                });
                zones_of[m].push(ZoneReport {
                    zone: r.zone,
                    shard: shard_name(r.shard),
                    min: bson::Bson::Document(r.min).into_relaxed_extjson(),
                    max: bson::Bson::Document(r.max).into_relaxed_extjson(),
                });
            }
        }
    }
    Zoned { zones_of, pinned_of }
}

/// One collection as planned: what to do and why, its zones, and the trade-off against its own
/// best key.
fn planned(cx: &Ctx, c: usize, cmds: &mut Commands, zoned: &mut Zoned) -> PlannedCollection {
    let Ctx { inputs, search, layout, without, .. } = cx;
    let inp = &inputs[c];
    let whole_only = |x: Option<f64>| x.filter(|_| !cx.in_part);
    let f: &Figures = &search.figures;
    let (zones_of, pinned_of) = (&mut zoned.zones_of, &mut zoned.pinned_of);
    let alone = &search.alone[c];
    let (alone_key, alone_score) = match alone {
        Choice::Key(k) => (Some(inp.candidates[*k].key.clone()), Some(inp.candidates[*k].score)),
        Choice::Unsharded => (None, None),
    };
    let colocated_with: Vec<String> = layout.group[c]
        .map(|g| layout.groups[g].members.iter().filter(|m| **m != c).map(|m| inputs[*m].namespace.clone()).collect())
        .unwrap_or_default();
    let (action, key, score, shard, why) = decide(cx, c, &colocated_with, cmds);
    // A trade-off only where the choice gains something that shows (`trade_off`).
    let (t_without, j_without) = without.get(c).cloned().unwrap_or((None, None));
    use super::trade_off::{sentence, Shares, Side};
    let trade_off = (search.choices[c] != *alone)
        .then(|| {
            sentence(
                Side { key: alone_key.as_ref(), score: alone_score },
                Side { key: key.as_ref(), score },
                // Seen in part: no one figure of the transactions, here either.
                Shares { chosen: whole_only(f.transactions), alone: whole_only(t_without) },
                Shares { chosen: f.joins, alone: j_without },
            )
        })
        .flatten();
    // What the key chosen's own analysis says (nothing for an unsharded collection).
    let notes = match &search.choices[c] {
        Choice::Key(k) => Some(&inp.candidates[*k].notes),
        Choice::Unsharded => None,
    };
    PlannedCollection {
        namespace: inp.namespace.clone(),
        action,
        key,
        score,
        shard,
        zones: std::mem::take(&mut zones_of[c]),
        colocated_with,
        data_bytes: inp.data_bytes,
        num_operations: inp.num_operations,
        alone_key,
        alone_score,
        why,
        trade_off,
        warning: notes.and_then(|n| n.warning.clone()),
        constraints: super::words::constraints(inp, &search.choices[c], search.given[c]),
        refused_writes: notes.map(|n| n.refused_writes.clone()).unwrap_or_default(),
        blocked_by: notes.map(|n| n.blocked_by.clone()).unwrap_or_default(),
        pinned_values: std::mem::take(&mut pinned_of[c]),
    }
}

/// Whether unsharded collection `c` leaves the database's primary shard (shard0): from 8.0
/// `moveCollection` takes it to its home in the layout when that is another shard.
fn moved_off_primary(cx: &Ctx, c: usize) -> bool {
    cx.s.target_version.is_some_and(|v| v >= (8, 0)) && cx.layout.home[c] != 0
}

/// What to do with one collection, with its commands (index, shard, move).
fn decide(cx: &Ctx, c: usize, colocated_with: &[String], cmds: &mut Commands) -> Decided {
    let Ctx { inputs, search, layout, .. } = cx;
    let inp = &inputs[c];
    let (index_cmds, shard_cmds, move_cmds) = (&mut cmds.index, &mut cmds.shard, &mut cmds.moves);
    match &search.choices[c] {
        Choice::Unsharded => {
            let home = layout.home[c];
            let moved = moved_off_primary(cx, c);
            let why = match &search.forced[c] {
                Some(w) => format!("stays unsharded: {w}"),
                None => format!(
                    "{:.1}% of the database's data: it fits on one shard{}",
                    100.0 * inp.data_bytes as f64 / inputs.iter().map(|x| x.data_bytes).sum::<u64>().max(1) as f64,
                    if moved { "; moveCollection (8.0) puts it on the least loaded shard" } else { ", the database's primary shard" }
                ),
            };
            if moved {
                move_cmds.push(Step::MoveCollection { namespace: inp.namespace.clone(), shard: home });
            }
            (if moved { Action::MoveCollection } else { Action::Unsharded }, None, None, Some(shard_name(home)), why)
        }
        Choice::Key(k) => {
            let cand = &inp.candidates[*k];
            let action = match &inp.current_key {
                Some(cur) if cur == &cand.key => Action::Keep,
                Some(cur) if cand.key.refines(cur) => Action::Refine,
                Some(_) => Action::Reshard,
                None => Action::Shard,
            };
            if cand.needs_index != Some(false) && action != Action::Keep && action != Action::Reshard {
                index_cmds.push(Step::CreateIndex { namespace: inp.namespace.clone(), key: cand.key.clone(), simple_collation: false });
            }
            match action {
                Action::Shard => shard_cmds.push(Step::ShardCollection {
                    namespace: inp.namespace.clone(),
                    key: cand.key.clone(),
                    simple_collation: false,
                }),
                Action::Refine => shard_cmds.push(Step::Refine { namespace: inp.namespace.clone(), key: cand.key.clone() }),
                Action::Reshard => {
                    shard_cmds.push(Step::Reshard { namespace: inp.namespace.clone(), key: cand.key.clone(), simple_collation: false })
                }
                _ => {}
            }
            let why = if colocated_with.is_empty() {
                format!("{} scores {} on its own analysis", cand.key, cand.score)
            } else {
                format!("{} scores {}; zones on its first field keep it with {}", cand.key, cand.score, colocated_with.join(", "))
            };
            let why = match &search.forced[c] {
                Some(w) => format!("{w}: {why}"),
                None => why,
            };
            (action, Some(cand.key.clone()), Some(cand.score), None, why)
        }
    }
}

/// The commands in the order they run (zones, indexes, ranges, sharding, moves), and the notes
/// they need.
fn steps(cx: &Ctx, cmds: Commands, notes: &mut Vec<String>) -> Vec<Step> {
    let Ctx { db, inputs, search, layout, .. } = cx;
    let Commands { zone: zone_cmds, range: range_cmds, index: index_cmds, shard: shard_cmds, moves: move_cmds } = cmds;
    let mut steps = vec![Step::EnableSharding { db: db.to_string() }];
    steps.extend(zone_cmds);
    steps.extend(index_cmds);
    steps.extend(range_cmds);
    steps.extend(shard_cmds);
    let move_cmds_given = !move_cmds.is_empty();
    steps.extend(move_cmds);
    if layout.groups.iter().any(|g| matches!(&search.choices[g.anchor], Choice::Key(k) if inputs[g.anchor].candidates[*k].key.fields[0].kind == crate::model::KeyKind::Hashed)) {
        notes.push("hashed zones: on an empty collection add {presplitHashedZones: true} to shardCollection (4.4+) so every zone starts with its chunks".into());
    }
    // Shard names appear in zones and moveCollection commands only: said where they do.
    // Unsharded collections stay on the database's primary shard, which the plan calls shard0:
    // with zones, what the plan keeps on one shard beside them rests on zone 0 being there.
    let stay_on_primary = search.choices.iter().enumerate().any(|(c, ch)| matches!(ch, Choice::Unsharded) && !moved_off_primary(cx, c));
    match (layout.groups.is_empty(), move_cmds_given) {
        (false, _) if stay_on_primary => notes.push("shard names shard0…: replace them with your shards' names (sh.status()); zone i goes to shard i, and shard0 is the database's primary shard (sh.status() names it under the database), where its unsharded collections stay: name that shard first, or the transactions the plan keeps on one shard beside them (zone 0's) reach two".into()),
        (false, _) => notes.push("shard names shard0…: replace them with your shards' names (sh.status()); zone i goes to shard i".into()),
        (true, true) if stay_on_primary => notes.push("shard names shard0…: replace them with your shards' names (sh.status()); shard0 is the database's primary shard (sh.status() names it under the database), where its unsharded collections stay: name that shard first, or a collection moved to another shard may land beside them".into()),
        (true, true) => notes.push("shard names shard0…: replace them with your shards' names (sh.status())".into()),
        (true, false) => {}
    }
    steps
}

/// Each shard's data, operations and collections at scale.
fn shards(cx: &Ctx) -> Vec<ShardReport> {
    let Ctx { inputs, search, layout, .. } = cx;
    let f: &Figures = &search.figures;
    let total_d: f64 = f.data.iter().sum();
    let total_o: f64 = inputs.iter().map(|c| c.num_operations as f64).sum();
    let shards = (0..layout.shards)
        .map(|i| ShardReport {
            shard: shard_name(i),
            data_bytes: f.data[i].round() as u64,
            data_percent: if total_d > 0.0 { (f.data[i] * 1000.0 / total_d).round() / 10.0 } else { 0.0 },
            operations_percent: if total_o > 0.0 { (f.ops[i] * 1000.0 / total_o).round() / 10.0 } else { 0.0 },
            collections: inputs
                .iter()
                .enumerate()
                .filter_map(|(c, x)| {
                    let d = layout.on_shards(c).0[i];
                    let here = d > 0.0 || (search.choices[c] == Choice::Unsharded && layout.home[c] == i);
                    here.then(|| OnShard { namespace: x.namespace.clone(), data_bytes: d.round() as u64 })
                })
                .collect(),
        })
        .collect();
    shards
}

/// Turn the search into the plan.
pub(crate) fn build(
    db: &str,
    inputs: &[CollectionInput],
    search: &Search,
    s: &Settings,
    ev: TxnEvidence,
    without: &[(Option<f64>, Option<f64>)],
    seen: &super::bounds::Seen,
) -> Plan {
    let layout = search.layout(inputs, s);
    // Seen in part: ranges, never one figure on the transactions seen whole.
    let (range, fixed_range) = super::bounds::ranges(&layout, &search.blockers, seen);
    let cx = Ctx { db, inputs, search, s, layout, without, in_part: range.is_some() };
    let whole_only = |x: Option<f64>| x.filter(|_| range.is_none());
    let f: &Figures = &search.figures;
    let mut cmds = Commands::default();
    let mut notes = Vec::new();
    let mut zoned = zones(&cx, &mut cmds, &mut notes);
    let collections = (0..inputs.len()).map(|c| planned(&cx, c, &mut cmds, &mut zoned)).collect();
    let steps = steps(&cx, cmds, &mut notes);
    let shards = shards(&cx);
    let layout = cx.layout;
    let sizing = sizing(inputs, search, s, f);
    let evaluated = ev.whole_kept.min(EVALUATED_MAX as u64);
    Plan {
        schema_version: PLAN_SCHEMA_VERSION,
        database: db.to_string(),
        num_shards: layout.shards,
        num_shards_from: s.shards_from.clone(),
        target_version: s.target_version.map(|(a, b)| format!("{a}.{b}")),
        version: crate::model::version::VersionReport::given(s.target_version),
        objective: objective(search, f, &whole_only),
        collections,
        transactions: Transactions {
            found: ev.found,
            seen_in_part: ev.seen_in_part,
            evaluated,
            single_shard_share: whole_only(f.transactions.map(round3)),
            single_shard_share_range: range,
            single_shard_share_margin: whole_only(
                f.transactions.and_then(|p| margin95(p, evaluated, ev.found.saturating_sub(ev.seen_in_part))),
            ),
            single_shard_share_individual_best: search.alone_figures.transactions.map(round3),
            failing_share: f.failing.filter(|x| *x > 0.0).map(round3),
            blockers: super::blockers::against_rules(search.blockers.list.clone(), &layout, &search.forced),
            not_placed: search.blockers.not_placed.clone(),
            single_shard_share_if_all_fixed: whole_only(search.blockers.share_if_all_fixed),
            single_shard_share_if_all_fixed_range: fixed_range,
            sources: ev.sources,
            summary_lines: ev.summary_lines,
            notes: ev.notes,
        },
        joins: Joins {
            found: ev.joins_found,
            single_shard_share: f.joins.map(round3),
            single_shard_share_individual_best: search.alone_figures.joins.map(round3),
            why: None,
        },
        links: links(search),
        edges: search.edges.clone(),
        shards,
        sizing,
        commands: steps.iter().map(Step::command).collect(),
        notes,
        given: None,
        steps,
        basis: super::basis::Basis::default(),
    }
}

/// "177 operations/s at the busiest 10 s of the operations read (35 on average over their span)":
/// a log or the profiler.
fn rate_words(l: &super::rate::LoadRate) -> String {
    // A quiet log's rate under 10/s keeps a decimal: "0 operations/s" would say none.
    let r = |x: f64| if x < 10.0 { format!("{x:.1}") } else { format!("{x:.0}") };
    let busiest = format!("{} operations/s at the busiest {:.0} s of the operations read", r(l.per_second), l.window_seconds);
    if l.per_second > l.average_per_second * 1.2 {
        format!("{busiest} ({} on average over their span)", r(l.average_per_second))
    } else {
        busiest
    }
}

/// The shards the data and the load need, from the flags and what the logs say.
fn sizing(inputs: &[CollectionInput], search: &Search, s: &Settings, f: &Figures) -> Sizing {
    let data: u64 = inputs.iter().map(|c| c.data_bytes).sum();
    let shards_for_data = s.shard_size_bytes.filter(|b| *b > 0).map(|b| data.div_ceil(b).max(1));
    let total_ops: f64 = inputs.iter().map(|c| c.num_operations as f64).sum();
    // Operations reaching shards per operation: the plan's per-shard counts over the operations.
    let reach = if total_ops > 0.0 { f.ops.iter().sum::<f64>() / total_ops } else { 1.0 };
    let shards_for_load = match (s.load.map(|l| l.per_second), s.shard_ops_per_second) {
        (Some(rate), Some(cap)) if cap > 0.0 => Some(((rate * reach / cap).ceil() as u64).max(1)),
        _ => None,
    };
    let total_data = data.max(1) as f64;
    let limit = inputs
        .iter()
        .zip(&search.choices)
        .filter_map(|(c, ch)| match ch {
            Choice::Key(k) if c.data_bytes as f64 >= UNSHARDED_MAX_DATA_SHARE * total_data => {
                Some((c.candidates[*k].max_useful_shards, c.namespace.clone()))
            }
            _ => None,
        })
        .min();
    let mut words = Vec::new();
    match (s.shard_size_bytes, shards_for_data) {
        (Some(b), Some(n)) => {
            words.push(format!("the data needs {} of {} each", count_of(n, "shard", "shards"), crate::util::text::bytes(b)))
        }
        _ => words.push("give --shard-size (the data one shard should hold) to size the cluster for the data".into()),
    }
    match (s.load, shards_for_load) {
        (Some(l), Some(n)) => words.push(format!("the load ({}) needs {}", rate_words(&l), count_of(n, "shard", "shards"))),
        (Some(l), None) => words
            .push(format!("the workload read shows {}: give --shard-ops (what one shard sustains) to size for the load", rate_words(&l))),
        (None, _) => words.push("the operations read give no time span (or none was read): the load is not sized".into()),
    }
    if let Some((n, ns)) = &limit {
        if (*n as usize) < s.shards {
            words.push(format!("{ns}'s key can spread over at most {n} shards: more shards would not share its data"));
        }
    }
    Sizing {
        data_bytes: data,
        shard_size_bytes: s.shard_size_bytes,
        shards_for_data,
        operations_per_second: s.load.map(|l| (l.per_second * 10.0).round() / 10.0),
        busiest_window_seconds: s.load.map(|l| l.window_seconds),
        average_operations_per_second: s.load.map(|l| (l.average_per_second * 10.0).round() / 10.0),
        shard_ops_per_second: s.shard_ops_per_second,
        shards_for_load,
        max_useful_shards: limit.as_ref().map(|l| l.0),
        limited_by: limit.map(|l| l.1),
        words: words.join("; "),
    }
}

/// The objective and its parts.
fn objective(search: &Search, f: &Figures, whole_only: &dyn Fn(Option<f64>) -> Option<f64>) -> Objective {
    Objective {
        value: round3(f.objective),
        // Transactions and joins together: none when transactions are seen in part.
        single_shard_share: whole_only(f.single.map(round3)),
        own_score: round3(f.own_score),
        data_balance: round3(f.data_balance),
        load_balance: round3(f.load_balance),
        individual_best_value: round3(search.alone_figures.objective),
        weights: Weights {
            single_shard: W_SINGLE_SHARD,
            own_score: W_OWN_SCORE,
            data_balance: W_DATA_BALANCE,
            load_balance: W_LOAD_BALANCE,
        },
    }
}

/// The links the zones follow, as reported.
fn links(search: &Search) -> Vec<LinkReport> {
    search
        .links
        .iter()
        .map(|l| LinkReport {
            a: format!("{}.{}", l.a.0, l.a.1),
            b: format!("{}.{}", l.b.0, l.b.1),
            count: l.count,
            seen_in: l.seen_in,
            evidence: l.evidence.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    /// By hand: p = 0.5 on 1,000 of 10,000: 1.96 × √(0.25/1000) × √(9000/9999)
    /// = 1.96 × 0.01581 × 0.9487 = 0.0294.
    /// All measured: no margin.
    #[test]
    fn margin_by_hand() {
        assert_eq!(super::margin95(0.5, 1000, 10_000), Some(0.029));
        assert_eq!(super::margin95(0.5, 10_000, 10_000), None);
    }
}
