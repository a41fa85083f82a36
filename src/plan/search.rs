//! The search: from each collection's own choice, moves kept while the objective rises
//! (`evaluate`), the given choices kept as given (what if); and what each collection's choice
//! buys (`single_shard_without`).

use super::bounds::Seen;
use super::evaluate::{figures, Figures};
use super::input::{CandidateInput, Choice, CollectionInput, CollectionKind, Settings};
use super::layout::{with_homes, with_verdicts, Layout};
use super::verdicts::Verdicts;
use super::{blockers, graph, links};
use crate::model::{KeyKind, Query};
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

/// What the search needs besides the collections: the logs' links, transactions and joins.
pub(crate) struct Workload<'a> {
    pub(crate) links: Vec<links::Link>,
    /// The transactions as the source showed them (whole, in part, what is unplaced).
    pub(crate) seen: Seen<'a>,
    pub(crate) joins: &'a [&'a Query],
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

/// The search's options with the given choices kept: each is the only one open to its
/// collection, and says why.
fn constrain(mut opts: Options, fixed: &[Option<Choice>]) -> Options {
    for (c, f) in fixed.iter().enumerate() {
        if let (Some(ch), Some(open)) = (f, opts.open.get_mut(c)) {
            *open = vec![ch.clone()];
            opts.forced[c] = Some("kept as given".into());
        }
    }
    opts
}

/// Where the search starts: each collection's own choice, the given ones as given.
fn start(alone: &[Choice], fixed: &[Option<Choice>]) -> Vec<Choice> {
    alone.iter().enumerate().map(|(c, a)| fixed.get(c).cloned().flatten().unwrap_or_else(|| a.clone())).collect()
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

impl Search {
    /// The layout its choices make: their zone groups, the unsharded collections' homes.
    pub(crate) fn layout<'a>(&'a self, inputs: &'a [CollectionInput], s: &Settings) -> Layout<'a> {
        with_homes(Layout::new(inputs, &self.choices, &self.domains, s), &self.homes)
    }
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
    let opts = constrain(options(inputs, &domains, &lookup_targets, s), fixed);
    let txns = spread(transactions, EVALUATED_MAX);
    let joins = spread(joins, EVALUATED_MAX);
    let guide: Vec<&[Query]> = if in_part.is_empty() { txns.clone() } else { spread(&[transactions, in_part].concat(), EVALUATED_MAX) };
    // Every combination tried asks the same writes the same question: answered once each.
    let kept = Verdicts::new(inputs, s.target_version, &[&txns, &guide]);
    let eval = |ch: &[Choice]| figures(&with_verdicts(Layout::new(inputs, ch, &domains, s), &kept), &txns, &joins);
    let guided = |ch: &[Choice]| figures(&with_verdicts(Layout::new(inputs, ch, &domains, s), &kept), &guide, &joins).objective;
    let guided_single =
        |ch: &[Choice]| figures(&with_verdicts(Layout::new(inputs, ch, &domains, s), &kept), &guide, &joins).single.unwrap_or(0.0);
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
    let mut choices = start(&opts.alone, fixed);
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
    let layout = with_homes(with_verdicts(Layout::new(inputs, &choices, &domains, s), &kept), &homes);
    let figures = figures(&layout, &txns, &joins);
    // Over the shown parts too: a blocker they show is one (each fix's share is then a highest).
    let blockers = blockers::find(&layout, &guide);
    let edges = graph::edges(&layout, &guide, &joins);
    let given = (0..inputs.len()).map(|c| fixed.get(c).is_some_and(Option::is_some)).collect();
    Search { choices, alone: opts.alone, forced: opts.forced, figures, alone_figures, links, domains, homes, blockers, edges, given }
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
