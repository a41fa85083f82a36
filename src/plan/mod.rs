//! `plan`: keys for a whole database, chosen together (docs/reference.md "plan").
//!
//! Each collection brings the candidates its own analysis ranked; the plan searches the
//! combinations (leave unsharded, or one of the keys) for the one that keeps the most
//! transactions and joins on one shard while each collection keeps a good key and the
//! shards stay even (`evaluate`). Keys whose first fields hold the same values (`links`)
//! are co-located with zones (`zones`): the balancer alone places every collection's
//! chunks on its own, so equal values of two collections meet on a shard only by chance.
//! Pure: values in, a `Plan` out.

pub(crate) mod basis;
pub(crate) mod blockers;
pub(crate) mod bounds;
pub(crate) mod build;
pub(crate) mod evaluate;
pub(crate) mod given;
pub(crate) mod graph;
pub(crate) mod links;
pub(crate) mod make;
pub(crate) mod outcome;
pub(crate) mod steps;
pub(crate) mod trade_off;
pub(crate) mod words;
pub(crate) mod zones;

use crate::model::{KeyKind, Query, ShardKey};
use evaluate::{figures, Figures};
use serde::Serialize;
use std::collections::BTreeSet;

/// A collection may stay unsharded while it holds less than this share of the database's data.
pub(crate) const UNSHARDED_MAX_DATA_SHARE: f64 = 0.10;
/// A collection this small (share of the database's data) that the workload only reads, or
/// nearly (`REFERENCE_MAX_WRITE_SHARE` of its operations write), is reference data: it stays
/// whole, never sharded on a key that would scatter the transactions reading it.
pub(crate) const REFERENCE_MAX_DATA_SHARE: f64 = 0.05;
pub(crate) const REFERENCE_MAX_WRITE_SHARE: f64 = 0.05;
/// A collection under this many ranges is never migrated by the balancer (6.0.3+: it moves
/// data when shards differ by three ranges): sharded without zones, it stays whole on the
/// primary shard whatever the key.
pub(crate) const ONE_RANGE_BELOW: u64 = 3;
/// The objective gain a collection must bring to leave the zones it is co-located in.
pub(crate) const LEAVE_ZONES_MIN_GAIN: f64 = 0.005;
/// Transactions and joins the search evaluates (a deterministic spread over those found).
pub(crate) const EVALUATED_MAX: usize = 5_000;

/// One candidate key of a collection, as its own analysis measured it.
#[derive(Debug, Clone)]
pub(crate) struct CandidateInput {
    pub(crate) key: ShardKey,
    pub(crate) score: u32,
    /// The server accepts it (not invalid, not blocked).
    pub(crate) valid: bool,
    /// Data and operations per shard at scale (shares, summing to 1 for data).
    pub(crate) data_share: Vec<f64>,
    pub(crate) ops_share: Vec<f64>,
    pub(crate) zone_splits: Vec<bson::Bson>,
    /// No index supports it yet (createIndex first); None when not known.
    pub(crate) needs_index: Option<bool>,
    /// The most shards that can ever share its data evenly (cluster growth).
    pub(crate) max_useful_shards: u64,
    /// Shards a sampled operation reaches on average under the key, at scale (reads and
    /// writes); None without sampled operations. Unsharded, every operation reaches one.
    pub(crate) mean_shards_per_op: Option<f64>,
    /// What its own analysis warns of, and what refuses it.
    pub(crate) notes: CandidateNotes,
}

/// What a candidate's own analysis says beyond its figures: the plan carries it per collection.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CandidateNotes {
    /// The most important warning (analyze's: the recommendation's caveat, else the key's
    /// first warning reason).
    pub(crate) warning: Option<String>,
    /// The unique indexes that keep `shardCollection` from taking it while they exist.
    pub(crate) blocked_by: Vec<UniqueIndex>,
    /// Why the server refuses it whatever is changed (capped, arrays in a key field, ...).
    pub(crate) invalid: Option<String>,
}

/// A unique index, as the plan names it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UniqueIndex {
    pub(crate) name: String,
    /// `{slug: 1}`.
    pub(crate) pattern: String,
    pub(crate) fields: Vec<String>,
}

/// What kind of namespace it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum CollectionKind {
    Collection,
    TimeSeries,
    View,
    Capped,
}

#[derive(Debug, Clone)]
pub(crate) struct CollectionInput {
    pub(crate) namespace: String,
    pub(crate) kind: CollectionKind,
    pub(crate) data_bytes: u64,
    /// Operations on it in the query logs.
    pub(crate) num_operations: u64,
    /// The share of them that write (inserts, updates, deletes), from the logs' sample.
    pub(crate) write_share: f64,
    /// Ranked, best first; empty when it was not analysed (`not_analysed` says why).
    pub(crate) candidates: Vec<CandidateInput>,
    pub(crate) not_analysed: Option<String>,
    pub(crate) current_key: Option<ShardKey>,
}

/// Each collection's own analysis, as the plan reads it, and the choices the DBA gave.
#[derive(Debug, Clone, Default)]
pub(crate) struct Analyses {
    /// One per collection of the database, in the order the database lists them.
    pub(crate) collections: Vec<CollectionInput>,
    /// Per collection given (`--key`, `--unsharded`): its index, and its key measured (None:
    /// kept unsharded). Empty: no what if.
    pub(crate) given: Vec<(usize, Option<CandidateInput>)>,
    /// The collections not analysed, one line each (`ns: not analysed: why`).
    pub(crate) notes: Vec<String>,
}

/// What the search needs besides the collections: the logs' links, transactions and joins.
pub(crate) struct Workload<'a> {
    pub(crate) links: Vec<links::Link>,
    /// The transactions as the source showed them (whole, in part, what is unplaced).
    pub(crate) seen: bounds::Seen<'a>,
    pub(crate) joins: &'a [&'a Query],
}

#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) shards: usize,
    /// Where the number of shards comes from, in words.
    pub(crate) shards_from: String,
    /// The server version the plan is for: moveCollection needs 8.0, a sharded `$lookup`
    /// target 5.1. None: not known (both assumed unavailable).
    pub(crate) target_version: Option<(u32, u32)>,
    /// `--shard-size`: the data one shard should hold.
    pub(crate) shard_size_bytes: Option<u64>,
    /// `--shard-ops`: operations per second one shard sustains.
    pub(crate) shard_ops_per_second: Option<f64>,
    /// The logs' operations per second (operations over the logged time span), when they say.
    pub(crate) ops_per_second: Option<f64>,
    /// The range (chunk) size: the balancer moves nothing of a collection under three of them.
    pub(crate) range_bytes: u64,
}

/// What the plan does with one collection.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Choice {
    Unsharded,
    /// Index into the collection's candidates.
    Key(usize),
}

/// Collections whose keys start with linked fields of the same kind, co-located by zones.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub(crate) members: Vec<usize>,
    /// The member whose data sets the zone bounds (the largest).
    pub(crate) anchor: usize,
    pub(crate) splits: Vec<bson::Bson>,
}

/// One combination of choices, with what follows from it: zone groups and home shards.
pub(crate) struct Layout<'a> {
    pub(crate) inputs: &'a [CollectionInput],
    pub(crate) choices: &'a [Choice],
    pub(crate) shards: usize,
    pub(crate) group: Vec<Option<usize>>,
    pub(crate) groups: Vec<Group>,
    /// The shard an unsharded collection lives on.
    pub(crate) home: Vec<usize>,
    /// The version the plan is for (`Settings::target_version`): what the server refuses.
    pub(crate) target_version: Option<(u32, u32)>,
}

impl<'a> Layout<'a> {
    pub(crate) fn new(
        inputs: &'a [CollectionInput],
        choices: &'a [Choice],
        domains: &[BTreeSet<links::Node>],
        settings: &Settings,
    ) -> Self {
        let n = settings.shards.max(1);
        // Groups: keys whose first field is in one domain, with one kind.
        let mut by: Vec<((usize, bool), Vec<usize>)> = Vec::new();
        for (c, ch) in choices.iter().enumerate() {
            let Choice::Key(k) = ch else { continue };
            let f = &inputs[c].candidates[*k].key.fields[0];
            let node = (inputs[c].namespace.clone(), f.path.clone());
            if let Some(d) = domains.iter().position(|d| d.contains(&node)) {
                let id = (d, f.kind == KeyKind::Hashed);
                match by.iter_mut().find(|x| x.0 == id) {
                    Some(x) => x.1.push(c),
                    None => by.push((id, vec![c])),
                }
            }
        }
        let mut group = vec![None; inputs.len()];
        let mut groups = Vec::new();
        for (_, members) in by.into_iter().filter(|x| x.1.len() >= 2) {
            let anchor = *members.iter().max_by_key(|c| (inputs[**c].data_bytes, std::cmp::Reverse(**c))).unwrap_or(&members[0]);
            let Choice::Key(k) = &choices[anchor] else { continue };
            let splits = inputs[anchor].candidates[*k].zone_splits.clone();
            for &m in &members {
                group[m] = Some(groups.len());
            }
            groups.push(Group { members, anchor, splits });
        }
        let mut layout =
            Layout { inputs, choices, shards: n, group, groups, home: vec![0; inputs.len()], target_version: settings.target_version };
        // Before 8.0 an unsharded collection lives on the database's primary shard (shard0
        // here); 8.0's moveCollection puts each on the least loaded shard, busiest first.
        if settings.target_version.is_some_and(|v| v >= (8, 0)) {
            let mut unsharded: Vec<usize> = (0..inputs.len()).filter(|c| choices[*c] == Choice::Unsharded).collect();
            unsharded.sort_by_key(|c| std::cmp::Reverse((inputs[*c].num_operations, inputs[*c].data_bytes)));
            layout.home = vec![usize::MAX; inputs.len()];
            for c in unsharded {
                let (_, ops) = layout.per_shard();
                let (data, _) = layout.per_shard();
                let best = (0..n).min_by(|a, b| (ops[*a], data[*a]).partial_cmp(&(ops[*b], data[*b])).unwrap_or(std::cmp::Ordering::Equal));
                layout.home[c] = best.unwrap_or(0);
            }
            layout.home.iter_mut().for_each(|h| *h = if *h == usize::MAX { 0 } else { *h });
        }
        layout
    }

    pub(crate) fn index_of(&self, ns: &str) -> Option<usize> {
        self.inputs.iter().position(|c| c.namespace == ns)
    }

    /// Data (bytes) and operations per shard. A sharded collection's shares at scale are
    /// laid from shard `r` on, `r` its group's number or its own: the balancer places
    /// each collection by itself, so their busiest shards need not coincide; a zone
    /// group's members share theirs (zone i on shard i). Unplaced collections (home
    /// `usize::MAX`) count nowhere.
    pub(crate) fn per_shard(&self) -> (Vec<f64>, Vec<f64>) {
        let n = self.shards;
        let (mut data, mut ops) = (vec![0.0; n], vec![0.0; n]);
        for c in 0..self.inputs.len() {
            let (d, o) = self.on_shards(c);
            for i in 0..n {
                data[i] += d[i];
                ops[i] += o[i];
            }
        }
        (data, ops)
    }

    /// One collection's data (bytes) and operations on each shard.
    pub(crate) fn on_shards(&self, c: usize) -> (Vec<f64>, Vec<f64>) {
        let n = self.shards;
        let inp = &self.inputs[c];
        let (mut data, mut ops) = (vec![0.0; n], vec![0.0; n]);
        match &self.choices[c] {
            Choice::Unsharded => {
                if let Some(h) = self.home.get(c).filter(|h| **h < n) {
                    data[*h] += inp.data_bytes as f64;
                    ops[*h] += inp.num_operations as f64;
                }
            }
            Choice::Key(k) => {
                let cand = &inp.candidates[*k];
                let r = match self.group[c] {
                    Some(g) => self.groups[g].anchor,
                    None => c,
                };
                for i in 0..n {
                    let s = (i + r) % n;
                    data[s] += inp.data_bytes as f64 * cand.data_share.get(i).copied().unwrap_or(0.0);
                    ops[s] += inp.num_operations as f64 * cand.ops_share.get(i).copied().unwrap_or(0.0);
                }
            }
        }
        (data, ops)
    }
}

/// The choices open to each collection, and the one it makes alone.
struct Options {
    open: Vec<Vec<Choice>>,
    alone: Vec<Choice>,
    /// Why a collection's choice is forced, when it is.
    forced: Vec<Option<String>>,
    /// Reference data (small, read): kept whole.
    reference: Vec<bool>,
}

fn options(inputs: &[CollectionInput], domains: &[BTreeSet<links::Node>], lookup_targets: &BTreeSet<String>, s: &Settings) -> Options {
    let total: f64 = inputs.iter().map(|c| c.data_bytes as f64).sum();
    let mut out = Options { open: Vec::new(), alone: Vec::new(), forced: Vec::new(), reference: Vec::new() };
    for c in inputs {
        let small = total <= 0.0 || (c.data_bytes as f64) < UNSHARDED_MAX_DATA_SHARE * total;
        let valid: Vec<usize> = (0..c.candidates.len()).filter(|k| c.candidates[*k].valid).collect();
        let forced = if let Some(why) = &c.not_analysed {
            Some(why.clone())
        } else if c.kind == CollectionKind::View {
            Some("a view: not a collection, it cannot be sharded".into())
        } else if valid.is_empty() {
            Some("no candidate key the server accepts".into())
        } else if is_reference(c, total) {
            Some(format!(
                "reference data ({:.1}% of the data, {:.0}% of its operations read it): kept whole so the transactions reading it are not scattered",
                100.0 * c.data_bytes as f64 / total,
                100.0 * (1.0 - c.write_share)
            ))
        } else if lookup_targets.contains(&c.namespace) && c.current_key.is_none() && s.target_version.is_none_or(|v| v < (5, 1)) {
            Some("a $lookup or $graphLookup reads it: before 5.1 the collection it reads must be unsharded".into())
        } else {
            None
        };
        out.reference.push(is_reference(c, total) && c.not_analysed.is_none() && c.kind != CollectionKind::View && !valid.is_empty());
        if forced.is_some() {
            out.open.push(vec![Choice::Unsharded]);
            out.alone.push(Choice::Unsharded);
            out.forced.push(forced);
            continue;
        }
        let mut open = Vec::new();
        // A sharded collection stays sharded (unshardCollection is 8.0's and rarely wanted).
        if small && c.current_key.is_none() {
            open.push(Choice::Unsharded);
        }
        // The four best keys, and every key whose first field is linked to another collection.
        for (i, k) in valid.iter().enumerate() {
            let f = &c.candidates[*k].key.fields[0];
            let linked = domains.iter().any(|d| d.contains(&(c.namespace.clone(), f.path.clone())));
            if i < 4 || linked {
                open.push(Choice::Key(*k));
            }
        }
        out.alone.push(if small && c.current_key.is_none() { Choice::Unsharded } else { Choice::Key(valid[0]) });
        out.open.push(open);
        out.forced.push(None);
    }
    out
}

/// Every sampled operation reaches one shard under the key, as unsharded (or none was sampled).
fn reaches_one_shard(k: &CandidateInput) -> bool {
    k.mean_shards_per_op.is_none_or(|m| m <= 1.0 + 1e-9)
}

/// Small, not sharded yet, and (nearly) only read in the logs.
fn is_reference(c: &CollectionInput, total: f64) -> bool {
    c.current_key.is_none()
        && c.num_operations > 0
        && c.write_share <= REFERENCE_MAX_WRITE_SHARE
        && total > 0.0
        && (c.data_bytes as f64) < REFERENCE_MAX_DATA_SHARE * total
}

/// A deterministic spread of at most `max` items.
fn spread<T: Copy>(all: &[T], max: usize) -> Vec<T> {
    if all.len() <= max {
        return all.to_vec();
    }
    (0..max).map(|i| all[i * all.len() / max]).collect()
}

/// The search's result, before it is written out.
pub(crate) struct Search {
    pub(crate) choices: Vec<Choice>,
    pub(crate) alone: Vec<Choice>,
    pub(crate) forced: Vec<Option<String>>,
    pub(crate) figures: Figures,
    pub(crate) alone_figures: Figures,
    pub(crate) links: Vec<links::Link>,
    pub(crate) domains: Vec<BTreeSet<links::Node>>,
    /// From 8.0: the shard moveCollection puts a reference collection on (where it serves
    /// the most transactions), in place of the least loaded.
    pub(crate) homes: Vec<Option<usize>>,
    /// What keeps transactions off one shard under `choices`.
    pub(crate) blockers: blockers::Blockers,
    /// The collections the workload touches together, and which pairs the plan cuts.
    pub(crate) edges: Vec<graph::Edge>,
    /// The choices kept as given (`--key`, `--unsharded`).
    pub(crate) given: Vec<bool>,
}

/// Coordinate search from each collection's own choice: moves of a whole domain's
/// collections onto keys that start with its fields (co-location needs them together),
/// then of one collection at a time, kept when the objective rises, until none does.
/// `links` come from every transaction found; `transactions` are those the share counts.
/// Transactions seen in part (`in_part`) guide the search at the share their shown part
/// allows (an upper bound: a layout that splits the shown part splits the transaction),
/// and count in no figure reported.
pub(crate) fn search(
    inputs: &[CollectionInput],
    links: Vec<links::Link>,
    transactions: &[&[Query]],
    in_part: &[&[Query]],
    joins: &[&Query],
    s: &Settings,
) -> Search {
    search_with(inputs, links, transactions, in_part, joins, s, &[])
}

/// `search`, with the choices `fixed` gives (`Some`) kept as they are (`given`: what if).
pub(crate) fn search_with(
    inputs: &[CollectionInput],
    links: Vec<links::Link>,
    transactions: &[&[Query]],
    in_part: &[&[Query]],
    joins: &[&Query],
    s: &Settings,
    fixed: &[Option<Choice>],
) -> Search {
    let domains = links::domains(&links);
    let lookup_targets: BTreeSet<String> = joins
        .iter()
        .flat_map(|q| q.joins.iter())
        .filter(|j| j.stage != crate::model::query::JoinStage::UnionWith)
        .map(|j| j.from.clone())
        .collect();
    let opts = given::constrain(options(inputs, &domains, &lookup_targets, s), fixed);
    let txns = spread(transactions, EVALUATED_MAX);
    let joins = spread(joins, EVALUATED_MAX);
    let eval = |ch: &[Choice]| figures(&Layout::new(inputs, ch, &domains, s), &txns, &joins);
    let guide: Vec<&[Query]> = if in_part.is_empty() { txns.clone() } else { spread(&[transactions, in_part].concat(), EVALUATED_MAX) };
    let guided = |ch: &[Choice]| figures(&Layout::new(inputs, ch, &domains, s), &guide, &joins).objective;
    let guided_single = |ch: &[Choice]| figures(&Layout::new(inputs, ch, &domains, s), &guide, &joins).single.unwrap_or(0.0);
    // A collection that may stay unsharded is sharded outside zones only for the transactions
    // or joins it brings onto one shard when nothing else is gained in fact: it is one range
    // whatever the key (the balancer moves nothing below three, so its load stays where it is),
    // or the key sends its operations to more shards than the one it lives on unsharded. Zoned
    // with others, its ranges follow the zones, and the blockers say what keeps its
    // transactions off one shard.
    let needs_gain = |ch: &[Choice], c: usize| match &ch[c] {
        Choice::Key(k) => {
            opts.open[c].contains(&Choice::Unsharded)
                && (inputs[c].data_bytes < ONE_RANGE_BELOW * s.range_bytes || !reaches_one_shard(&inputs[c].candidates[*k]))
                && Layout::new(inputs, ch, &domains, s).group[c].is_none()
        }
        Choice::Unsharded => false,
    };
    let unsharded = |ch: &[Choice], c: usize| {
        let mut u = ch.to_vec();
        u[c] = Choice::Unsharded;
        u
    };
    let gains_single = |ch: &[Choice], c: usize| guided_single(ch) > guided_single(&unsharded(ch, c)) + 1e-9;
    let for_nothing = |ch: &[Choice], c: usize| needs_gain(ch, c) && !gains_single(ch, c);
    let alone_figures = eval(&opts.alone);
    let mut choices = given::start(&opts.alone, fixed);
    let mut best = guided(&choices);
    for _ in 0..20 {
        let mut improved = false;
        // Domain moves: every collection that can, onto its best key starting in the domain.
        for d in &domains {
            for hashed in [false, true] {
                let mut trial = choices.clone();
                let mut moved = 0;
                for (c, open) in opts.open.iter().enumerate() {
                    let pick = open
                        .iter()
                        .filter_map(|ch| match ch {
                            Choice::Key(k) => Some(*k),
                            Choice::Unsharded => None,
                        })
                        .filter(|k| {
                            let f = &inputs[c].candidates[*k].key.fields[0];
                            (f.kind == KeyKind::Hashed) == hashed && d.contains(&(inputs[c].namespace.clone(), f.path.clone()))
                        })
                        .max_by_key(|k| (inputs[c].candidates[*k].score, std::cmp::Reverse(*k)));
                    if let Some(k) = pick {
                        moved += (trial[c] != Choice::Key(k)) as usize;
                        trial[c] = Choice::Key(k);
                    }
                }
                if moved > 0 {
                    let o = guided(&trial);
                    if o > best + 1e-9 {
                        (best, choices, improved) = (o, trial, true);
                    }
                }
            }
        }
        for c in 0..inputs.len() {
            let zoned = Layout::new(inputs, &choices, &domains, s).group[c].is_some();
            for ch in &opts.open[c] {
                if *ch == choices[c] {
                    continue;
                }
                let mut trial = choices.clone();
                trial[c] = ch.clone();
                let o = guided(&trial);
                // Leaving a zone group must pay: its documents carry the zone's field, and a
                // fix of another operation (blockers) brings its transactions back to one shard.
                let margin = if zoned && Layout::new(inputs, &trial, &domains, s).group[c].is_none() { LEAVE_ZONES_MIN_GAIN } else { 1e-9 };
                if o > best + margin && !for_nothing(&trial, c) {
                    (best, choices, improved) = (o, trial, true);
                }
            }
        }
        if !improved {
            break;
        }
    }
    // The same after the search (a domain move may have sharded one): back unsharded unless
    // that costs transactions or joins on one shard.
    for c in 0..inputs.len() {
        if for_nothing(&choices, c) {
            choices = unsharded(&choices, c);
        }
    }
    let homes = reference_homes(inputs, &choices, &domains, s, &opts.reference, &guide);
    let layout = with_homes(Layout::new(inputs, &choices, &domains, s), &homes);
    let figures = figures(&layout, &txns, &joins);
    // Over the shown parts too: a blocker they show is one (each fix's share is then a highest).
    let blockers = blockers::find(&layout, &guide);
    let edges = graph::edges(&layout, &guide, &joins);
    let given = (0..inputs.len()).map(|c| fixed.get(c).is_some_and(Option::is_some)).collect();
    Search { choices, alone: opts.alone, forced: opts.forced, figures, alone_figures, links, domains, homes, blockers, edges, given }
}

/// A layout with the reference collections' homes the search chose.
pub(crate) fn with_homes<'a>(mut layout: Layout<'a>, homes: &[Option<usize>]) -> Layout<'a> {
    for (c, h) in homes.iter().enumerate() {
        if let Some(h) = h {
            layout.home[c] = *h;
        }
    }
    layout
}

/// From 8.0 (moveCollection), each reference collection goes to the shard where the most of
/// the transactions reading it stay on one shard (ties: the least loaded, as placed).
fn reference_homes(
    inputs: &[CollectionInput],
    choices: &[Choice],
    domains: &[BTreeSet<links::Node>],
    s: &Settings,
    reference: &[bool],
    transactions: &[&[Query]],
) -> Vec<Option<usize>> {
    let mut homes = vec![None; inputs.len()];
    if s.target_version.is_none_or(|v| v < (8, 0)) {
        return homes;
    }
    for c in (0..inputs.len()).filter(|c| reference[*c] && choices[*c] == Choice::Unsharded) {
        let reading: Vec<&[Query]> = transactions.iter().filter(|t| t.iter().any(|q| q.ns == inputs[c].namespace)).copied().collect();
        if reading.is_empty() {
            continue;
        }
        let mut layout = with_homes(Layout::new(inputs, choices, domains, s), &homes);
        let placed = layout.home[c];
        let mut best = (reading.iter().map(|t| layout.transaction(t)).sum::<f64>(), placed);
        for h in (0..layout.shards).filter(|h| *h != placed) {
            layout.home[c] = h;
            let on_one: f64 = reading.iter().map(|t| layout.transaction(t)).sum();
            if on_one > best.0 + 1e-9 {
                best = (on_one, h);
            }
        }
        homes[c] = Some(best.1);
    }
    homes
}

/// The share of transactions (and joins) on one shard with collection `c` back on its own
/// choice, the others kept: what the plan's choice for `c` buys.
pub(crate) fn single_shard_without(
    inputs: &[CollectionInput],
    search: &Search,
    c: usize,
    transactions: &[&[Query]],
    joins: &[&Query],
    s: &Settings,
) -> (Option<f64>, Option<f64>) {
    let mut ch = search.choices.clone();
    ch[c] = search.alone[c].clone();
    let layout = with_homes(Layout::new(inputs, &ch, &search.domains, s), &search.homes);
    let f = figures(&layout, &spread(transactions, EVALUATED_MAX), &spread(joins, EVALUATED_MAX));
    (f.transactions, f.joins)
}
