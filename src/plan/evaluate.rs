//! How good one combination of choices is (docs/reference.md "plan"): the share of transactions and
//! joins that stay on one shard, the collections' own scores, and how evenly data and
//! operations spread over the shards.

use super::input::{Choice, CollectionInput};
use super::layout::Layout;
use crate::bsonx::hash::hash64;
use crate::model::query::JoinStage;
use crate::model::{KeyKind, Query};
use crate::rules::write_targeting::{verdict, Refusal, Verdict};
use bson::{Bson, Document};
use std::collections::BTreeSet;

/// The objective's weights; without transactions or joins the first is dropped and the
/// others scaled to sum to 1.
pub(crate) const W_SINGLE_SHARD: f64 = 0.40;
pub(crate) const W_OWN_SCORE: f64 = 0.30;
pub(crate) const W_DATA_BALANCE: f64 = 0.15;
pub(crate) const W_LOAD_BALANCE: f64 = 0.15;

/// Where one operation of a transaction or join goes under a layout.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Unit {
    /// A shard the plan places it on: an unsharded collection's, or a zone's.
    Fixed(usize),
    /// One shard the balancer chose on its own for this collection and value: any of the N,
    /// independently of every other collection.
    Free(usize, String),
    /// Several shards.
    Spread,
}

/// How an operation is placed when a fix is assumed (`blockers`): as logged; with the zone's
/// field added to its filter (it then goes with the transaction's operations in its zone,
/// as an insert does); or in the transaction's zone whatever its collection (read from a copy
/// of the collection in every zone, or the collection zoned with the others).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Follow {
    AsIs,
    ZoneField,
    TransactionZone,
}

/// The value a filter fixes the key's first field to, in key space (hashed when hashed).
fn leading_value(kind: KeyKind, path: &str, filter: &Document) -> Option<Bson> {
    let v = super::equalities::equality(filter, path)?;
    Some(match kind {
        KeyKind::Hashed => Bson::Int64(hash64(v)),
        _ => v.clone(),
    })
}

/// The zone a first-field value falls in: how many zone starts are at or below it.
pub(crate) fn zone_of(splits: &[Bson], v: &Bson) -> usize {
    splits.iter().take_while(|s| crate::bsonx::cmp_bson(s, v) != std::cmp::Ordering::Greater).count()
}

impl Layout<'_> {
    pub(crate) fn unit(&self, c: usize, filter: &Document) -> Unit {
        match &self.choices[c] {
            Choice::Unsharded => Unit::Fixed(self.home[c]),
            Choice::Key(k) => {
                let cand = &self.inputs[c].candidates[*k];
                let f = &cand.key.fields[0];
                match leading_value(f.kind, &f.path, filter) {
                    Some(v) => match self.group[c] {
                        Some(g) => Unit::Fixed(zone_of(&self.groups[g].splits, &v)),
                        None => Unit::Free(c, v.to_string()),
                    },
                    None => Unit::Spread,
                }
            }
        }
    }

    /// Where an insert's documents go: each by its value of the key's first field (a
    /// document without it holds null there, as the server places it); several documents
    /// on different units are on several shards.
    fn inserted_unit(&self, c: usize, docs: &[Document]) -> Unit {
        let one = |d: &Document| match &self.choices[c] {
            Choice::Unsharded => Unit::Fixed(self.home[c]),
            Choice::Key(k) => {
                let f = &self.inputs[c].candidates[*k].key.fields[0];
                let v = match crate::bsonx::path::lookup(d, &f.path) {
                    crate::bsonx::path::Found::Value(v) => v.clone(),
                    _ => Bson::Null,
                };
                let v = if f.kind == KeyKind::Hashed { Bson::Int64(hash64(&v)) } else { v };
                match self.group[c] {
                    Some(g) => Unit::Fixed(zone_of(&self.groups[g].splits, &v)),
                    None => Unit::Free(c, v.to_string()),
                }
            }
        };
        let mut units = docs.iter().map(one);
        let first = units.next().unwrap_or(Unit::Spread);
        if units.all(|u| u == first) {
            first
        } else {
            Unit::Spread
        }
    }

    /// The shards an insert's document goes to when the source does not hold it: unknown (logs do not hold the document),
    /// so it goes with another operation of the transaction on a collection zoned with it
    /// (a new order carries its customer's id), or to a shard of its own. An operation
    /// given its zone's field (`Follow::ZoneField`) goes the same way.
    fn insert_unit(&self, c: usize, others: &[(usize, Unit)], fresh: &mut usize) -> Unit {
        match (&self.choices[c], self.group[c]) {
            (Choice::Unsharded, _) => Unit::Fixed(self.home[c]),
            (Choice::Key(_), Some(g)) => {
                let partner = |fixed: bool| {
                    others.iter().find(|(o, u)| self.group[*o] == Some(g) && matches!(u, Unit::Fixed(_)) == fixed).map(|x| x.1.clone())
                };
                // Else with another insert of the group: the link says their documents carry
                // one value of the zone's field (an order and its payment, one customer's).
                match partner(true).or_else(|| partner(false).filter(|u| matches!(u, Unit::Free(..)))) {
                    Some(u) => u,
                    None => {
                        *fresh += 1;
                        Unit::Free(c, format!("insert#{fresh}"))
                    }
                }
            }
            (Choice::Key(_), None) => {
                *fresh += 1;
                Unit::Free(c, format!("insert#{fresh}"))
            }
        }
    }

    /// The chance that every unit is on one shard.
    pub(crate) fn single_shard(&self, units: &[Unit]) -> f64 {
        let n = self.shards as f64;
        if self.shards <= 1 {
            return 1.0;
        }
        if units.contains(&Unit::Spread) {
            return 0.0;
        }
        let fixed: BTreeSet<usize> = units.iter().filter_map(|u| if let Unit::Fixed(s) = u { Some(*s) } else { None }).collect();
        let free: BTreeSet<&Unit> = units.iter().filter(|u| matches!(u, Unit::Free(..))).collect();
        match fixed.len() {
            0 => (1.0 / n).powi(free.len().saturating_sub(1) as i32),
            1 => (1.0 / n).powi(free.len() as i32),
            _ => 0.0,
        }
    }

    /// The chance that a transaction runs on one shard: none when it holds a write the
    /// server refuses under the plan's keys (it fails; `refused`).
    pub(crate) fn transaction(&self, ops: &[Query]) -> f64 {
        self.transaction_with(ops, &|_, _| Follow::AsIs)
    }

    /// The first write of a transaction that the target version refuses under its
    /// collection's key, with its collection.
    pub(crate) fn refused(&self, ops: &[Query]) -> Option<(usize, Refusal)> {
        ops.iter().find_map(|q| self.refusal(q))
    }

    /// What the target version says of one write under its collection's key
    /// (`rules::write_targeting`, the verdict analyze and check use). Only with a known target
    /// version: unknown, a plan is not failed on a guess.
    pub(crate) fn refusal(&self, q: &Query) -> Option<(usize, Refusal)> {
        let version = self.target_version?;
        let c = self.index_of(&q.ns)?;
        let Choice::Key(k) = &self.choices[c] else { return None };
        let work = || match verdict(q, &self.inputs[c].candidates[*k].key, Some(version)) {
            Verdict::Refused(r) => Some(r),
            _ => None,
        };
        let r = match self.verdicts {
            Some(kept) => kept.refusal(q, c, *k, Some(version), work),
            None => work(),
        };
        r.map(|r| (c, r))
    }

    /// The same, each operation placed as `follow` says: a refused write left as it is fails
    /// the transaction (0); one a fix places (its filter then names the key) does not.
    pub(crate) fn transaction_with(&self, ops: &[Query], follow: &dyn Fn(usize, &Query) -> Follow) -> f64 {
        let fails = ops.iter().any(|q| self.refusal(q).is_some_and(|(c, _)| follow(c, q) == Follow::AsIs));
        if fails {
            return 0.0;
        }
        self.placed(ops, follow)
    }

    /// The chance of one shard from where the operations go, refusals aside.
    fn placed(&self, ops: &[Query], follow: &dyn Fn(usize, &Query) -> Follow) -> f64 {
        let units: Vec<Unit> = self.units(ops, follow).into_iter().map(|x| x.2).collect();
        self.single_shard(&units)
    }

    /// Where each operation of a transaction goes: (its index in `ops`, its collection, its
    /// unit). Operations outside the plan's collections are left out.
    pub(crate) fn units(&self, ops: &[Query], follow: &dyn Fn(usize, &Query) -> Follow) -> Vec<(usize, usize, Unit)> {
        let mut fresh = 0;
        let mut units: Vec<(usize, Unit)> = Vec::new();
        let mut at: Vec<usize> = Vec::new();
        let mut later = Vec::new();
        for (i, q) in ops.iter().enumerate() {
            let Some(c) = self.index_of(&q.ns) else { continue };
            let f = match follow(c, q) {
                // An insert whose documents the source holds goes where their values put it.
                Follow::AsIs if q.op == crate::model::Op::Insert && !q.inserted.is_empty() => {
                    units.push((c, self.inserted_unit(c, &q.inserted)));
                    at.push(i);
                    continue;
                }
                Follow::AsIs if q.op == crate::model::Op::Insert => Follow::ZoneField,
                f => f,
            };
            if f == Follow::AsIs {
                units.push((c, self.unit(c, &q.filter)));
                at.push(i);
            } else {
                later.push((i, c, f));
            }
        }
        for (i, c, f) in later {
            let zone = units.iter().find(|(_, u)| matches!(u, Unit::Fixed(_))).map(|x| x.1.clone());
            let u = match (f, zone) {
                (Follow::TransactionZone, Some(z)) => z,
                // No zone in the transaction: placed as it is.
                (Follow::TransactionZone, None) if ops[i].op != crate::model::Op::Insert => self.unit(c, &ops[i].filter),
                _ => self.insert_unit(c, &units, &mut fresh),
            };
            units.push((c, u));
            at.push(i);
        }
        at.into_iter().zip(units).map(|(i, (c, u))| (i, c, u)).collect()
    }

    /// The chance that an aggregation and the collections it joins are read on one shard.
    pub(crate) fn join(&self, q: &Query) -> f64 {
        let Some(a) = self.index_of(&q.ns) else { return 1.0 };
        let ua = self.unit(a, &q.filter);
        let mut units = vec![ua.clone()];
        for j in &q.joins {
            let Some(b) = self.index_of(&j.from) else { continue };
            let ub = match (&self.choices[b], j.stage, &j.local_field, &j.foreign_field) {
                (Choice::Unsharded, ..) => Unit::Fixed(self.home[b]),
                (Choice::Key(k), s, Some(l), Some(f)) if s != JoinStage::UnionWith => {
                    let kb = &self.inputs[b].candidates[*k].key.fields[0];
                    let same_zones = self.group[a].is_some() && self.group[a] == self.group[b];
                    let a_leads_with_l =
                        matches!(&self.choices[a], Choice::Key(ka) if self.inputs[a].candidates[*ka].key.fields[0].path == *l);
                    if kb.path != *f {
                        Unit::Spread
                    } else if let Some(v) = super::equalities::equality(&q.filter, l) {
                        let v = if kb.kind == KeyKind::Hashed { Bson::Int64(hash64(v)) } else { v.clone() };
                        match self.group[b] {
                            Some(g) => Unit::Fixed(zone_of(&self.groups[g].splits, &v)),
                            None => Unit::Free(b, v.to_string()),
                        }
                    } else if same_zones && a_leads_with_l {
                        // Every document read from a's zone carries a value of that zone.
                        ua.clone()
                    } else {
                        Unit::Spread
                    }
                }
                _ => Unit::Spread,
            };
            units.push(ub);
        }
        self.single_shard(&units)
    }
}

/// Mean over the shards divided by the busiest (1 when even); 1 when there is nothing.
pub(crate) fn balance(per_shard: &[f64]) -> f64 {
    let max = per_shard.iter().cloned().fold(0.0, f64::max);
    if max <= 0.0 {
        return 1.0;
    }
    per_shard.iter().sum::<f64>() / per_shard.len() as f64 / max
}

/// How evenly the operations load the shards: the load an even spread of the operations, each
/// counted once, puts on a shard (`once` / N) over the busiest shard's load, at most 1. An
/// operation sent to several shards loads each of them: a broadcast raises every shard's load,
/// the busiest's too, against the same even share, so it never looks balanced; an operation
/// on one shard adds to that shard alone.
pub(crate) fn load_balance(per_shard: &[f64], once: f64) -> f64 {
    let max = per_shard.iter().cloned().fold(0.0, f64::max);
    if max <= 0.0 || per_shard.is_empty() {
        return 1.0;
    }
    (once / per_shard.len() as f64 / max).min(1.0)
}

/// The figures of one layout.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Figures {
    pub(crate) objective: f64,
    /// Share of transactions on one shard; None when there are none.
    pub(crate) transactions: Option<f64>,
    pub(crate) joins: Option<f64>,
    /// Transactions and joins together, each counted once.
    pub(crate) single: Option<f64>,
    /// Share of transactions holding a write the target version refuses (they fail);
    /// None without transactions.
    pub(crate) failing: Option<f64>,
    pub(crate) own_score: f64,
    pub(crate) data_balance: f64,
    pub(crate) load_balance: f64,
    pub(crate) data: Vec<f64>,
    pub(crate) ops: Vec<f64>,
}

/// Transactions (or joins) one parallel task evaluates at least: fewer are not worth a thread.
const PAR_MIN: usize = 256;

pub(crate) fn figures(layout: &Layout, transactions: &[&[Query]], joins: &[&Query]) -> Figures {
    use rayon::prelude::*;
    let mean = |v: Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    // One verdict per transaction: a refused write fails it, else its chance of one shard.
    // Each transaction on its own, so in parallel (the search evaluates up to 5,000 per
    // combination tried, most of `make`'s time; perf on the 500 MB benchmark log); the
    // verdicts are collected in order and summed in order, so the sums are the same.
    let (on_one, failed): (Vec<f64>, Vec<f64>) = transactions
        .par_iter()
        .with_min_len(PAR_MIN)
        .map(|ops| match layout.refused(ops) {
            Some(_) => (0.0, 1.0),
            None => (layout.placed(ops, &|_, _| Follow::AsIs), 0.0),
        })
        .unzip();
    let (t, failing) = (mean(on_one), mean(failed));
    let j = mean(joins.par_iter().with_min_len(PAR_MIN).map(|q| layout.join(q)).collect());
    let inputs: &[CollectionInput] = layout.inputs;
    let (total_d, total_o) = inputs.iter().fold((0.0, 0.0), |(d, o), c| (d + c.data_bytes as f64, o + c.num_operations as f64));
    let (mut num, mut den) = (0.0, 0.0);
    for (c, ch) in inputs.iter().zip(layout.choices) {
        if let Choice::Key(k) = ch {
            let w = if total_d > 0.0 { c.data_bytes as f64 / total_d } else { 0.0 }
                + if total_o > 0.0 { c.num_operations as f64 / total_o } else { 0.0 }
                + 1e-9;
            num += w * c.candidates[*k].score as f64 / 100.0;
            den += w;
        }
    }
    let own = if den > 0.0 { num / den } else { 1.0 };
    let (data, ops) = layout.per_shard();
    let (bd, bl) = (balance(&data), load_balance(&ops, total_o));
    // Transactions and joins together, each operation once.
    let nt = transactions.len() as f64;
    let nj = joins.len() as f64;
    let single = match (t, j) {
        (None, None) => None,
        _ => Some((t.unwrap_or(0.0) * nt + j.unwrap_or(0.0) * nj) / (nt + nj)),
    };
    let objective = match single {
        Some(s) => W_SINGLE_SHARD * s + W_OWN_SCORE * own + W_DATA_BALANCE * bd + W_LOAD_BALANCE * bl,
        None => (W_OWN_SCORE * own + W_DATA_BALANCE * bd + W_LOAD_BALANCE * bl) / (1.0 - W_SINGLE_SHARD),
    };
    // A failing transaction is worse than one spread over shards: a plan whose keys make
    // writes fail loses to one that does not (issue 48).
    let objective = objective - W_SINGLE_SHARD * failing.unwrap_or(0.0);
    Figures { objective, transactions: t, joins: j, single, failing, own_score: own, data_balance: bd, load_balance: bl, data, ops }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::input::{CandidateInput, CollectionKind, Settings};
    use super::*;
    use crate::model::{Op, QueryOrigin, ShardKey};
    use bson::doc;

    pub(crate) fn coll(ns: &str, data: u64, keys: &[&str]) -> CollectionInput {
        CollectionInput {
            namespace: ns.into(),
            kind: CollectionKind::Collection,
            data_bytes: data,
            num_operations: 10,
            write_share: 0.5,
            candidates: keys
                .iter()
                .map(|k| CandidateInput {
                    key: ShardKey::parse(k).unwrap(),
                    score: 80,
                    valid: true,
                    data_share: vec![0.25; 4],
                    ops_share: vec![0.25; 4],
                    // Zones start at 100, 200, 300.
                    zone_splits: vec![Bson::Int32(100), Bson::Int32(200), Bson::Int32(300)],
                    pinned: Vec::new(),
                    needs_index: None,
                    max_useful_shards: 1000,
                    notes: Default::default(),
                    mean_shards_per_op: Some(1.0),
                })
                .collect(),
            not_analysed: None,
            current_key: None,
        }
    }

    /// orders and customers zoned together on the customer id, items (read only) unsharded:
    /// the collections, their link and the choices of the hand-worked blocker and edge tests.
    pub(crate) fn orders_customers_items(
    ) -> (Vec<CollectionInput>, Vec<BTreeSet<super::super::links::Node>>, Vec<super::super::input::Choice>) {
        let inputs =
            vec![coll("s.orders", 100, &["{customerId: 1}"]), coll("s.customers", 10, &["{_id: 1}"]), coll("s.items", 1, &["{_id: 1}"])];
        let linked = vec![[("s.orders".to_string(), "customerId".to_string()), ("s.customers".to_string(), "_id".to_string())]
            .into_iter()
            .collect()];
        let choices =
            vec![super::super::input::Choice::Key(0), super::super::input::Choice::Key(0), super::super::input::Choice::Unsharded];
        (inputs, linked, choices)
    }

    pub(crate) fn op(o: Op, ns: &str, f: Document) -> Query {
        Query::new(o, ns, f, QueryOrigin::SlowQueryLog)
    }

    pub(crate) fn settings() -> Settings {
        Settings {
            shards: 4,
            shards_from: "--shards".into(),
            target_version: Some((6, 0)),
            shard_size_bytes: None,
            shard_ops_per_second: None,
            load: None,
            range_bytes: 128 << 20,
        }
    }

    /// Issue 48, the marketplace's ship transaction by hand: orders on {customerId: 1}, an
    /// update of orders by `number` (neither key nor _id) is refused on 6.0 (ShardKeyNotFound):
    /// the transaction fails, is not on one shard, and the plan's objective pays for it; 7.1
    /// runs it (two-phase, not on one shard), so nothing fails.
    #[test]
    fn a_transaction_with_a_refused_write_fails() {
        let (inputs, linked, choices) = orders_customers_items();
        let ship = vec![op(Op::Find, "s.customers", doc! {"_id": 150}), op(Op::Update, "s.orders", doc! {"number": 7})];
        let pay = vec![op(Op::Find, "s.customers", doc! {"_id": 150}), op(Op::Update, "s.orders", doc! {"customerId": 150})];
        let six = Layout::new(&inputs, &choices, &linked, &settings());
        let (c, r) = six.refused(&ship).expect("refused on 6.0");
        assert_eq!((c, r.code, r.accepted_from), (0, crate::rules::write_targeting::SHARD_KEY_NOT_FOUND, Some((7, 1))));
        assert_eq!(r.fix, vec!["customerId".to_string()]);
        assert_eq!(six.transaction(&ship), 0.0);
        assert!(six.refused(&pay).is_none());
        let txns: Vec<&[Query]> = vec![&ship, &pay, &pay, &pay];
        let f = figures(&six, &txns, &[]);
        // 1 of 4 by hand.
        assert_eq!(f.failing, Some(0.25));
        let seven = Layout::new(&inputs, &choices, &linked, &Settings { target_version: Some((7, 1)), ..settings() });
        assert!(seven.refused(&ship).is_none());
        let g = figures(&seven, &txns, &[]);
        assert_eq!(g.failing, Some(0.0));
        assert!(g.objective > f.objective, "a plan whose writes fail loses");
    }

    /// Hand-worked: four shards, orders and customers both on the customer id.
    /// Zoned together, a transaction on customer 150 (zone 1) is on one shard: 1. Placed by
    /// the balancer on their own, the two collections' chunks for 150 meet with chance 1/4.
    /// An unsharded collection (shard0) with the zoned customer 150 (zone 1, shard1): 0;
    /// with customer 50 (zone 0, shard0): 1. A filter without the key: several shards, 0.
    #[test]
    fn single_shard_chances_by_hand() {
        let inputs =
            vec![coll("s.orders", 100, &["{customerId: 1}"]), coll("s.customers", 10, &["{_id: 1}"]), coll("s.regions", 1, &["{_id: 1}"])];
        let linked: Vec<std::collections::BTreeSet<super::super::links::Node>> =
            vec![[("s.orders".to_string(), "customerId".to_string()), ("s.customers".to_string(), "_id".to_string())]
                .into_iter()
                .collect()];
        let none: Vec<std::collections::BTreeSet<super::super::links::Node>> = vec![];
        let choices = vec![Choice::Key(0), Choice::Key(0), Choice::Unsharded];
        let zoned = Layout::new(&inputs, &choices, &linked, &settings());
        let apart = Layout::new(&inputs, &choices, &none, &settings());
        let t = vec![op(Op::Find, "s.orders", doc! {"customerId": 150}), op(Op::Update, "s.customers", doc! {"_id": 150})];
        assert_eq!(zoned.transaction(&t), 1.0);
        assert_eq!(apart.transaction(&t), 0.25);
        // An insert goes with its zoned partner; apart, it is placed on its own.
        let t = vec![op(Op::Insert, "s.orders", doc! {}), op(Op::Update, "s.customers", doc! {"_id": 150})];
        assert_eq!(zoned.transaction(&t), 1.0);
        assert_eq!(apart.transaction(&t), 0.25);
        // Two inserts of one zone group and nothing else: together, on some shard (1); apart,
        // each where the balancer put it (1/4).
        let t = vec![op(Op::Insert, "s.orders", doc! {}), op(Op::Insert, "s.customers", doc! {})];
        assert_eq!(zoned.transaction(&t), 1.0);
        assert_eq!(apart.transaction(&t), 0.25);
        let with_regions = |c: i32| vec![op(Op::Find, "s.regions", doc! {"_id": "eu"}), op(Op::Update, "s.customers", doc! {"_id": c})];
        assert_eq!(zoned.transaction(&with_regions(150)), 0.0);
        assert_eq!(zoned.transaction(&with_regions(50)), 1.0);
        assert_eq!(zoned.transaction(&[op(Op::Find, "s.orders", doc! {"status": "A"})]), 0.0);
        // Three independently placed units: (1/4)^2.
        let t = vec![
            op(Op::Find, "s.orders", doc! {"customerId": 1}),
            op(Op::Find, "s.orders", doc! {"customerId": 2}),
            op(Op::Update, "s.customers", doc! {"_id": 3}),
        ];
        assert_eq!(apart.transaction(&t), 1.0 / 16.0);
        // A join from orders to customers on the zoned field, for one customer: one shard.
        let mut j = op(Op::Aggregate, "s.orders", doc! {"customerId": 250});
        j.joins.push(crate::model::query::Join {
            stage: JoinStage::Lookup,
            from: "s.customers".into(),
            local_field: Some("customerId".into()),
            foreign_field: Some("_id".into()),
        });
        assert_eq!(zoned.join(&j), 1.0);
        assert_eq!(apart.join(&j), 0.25);
    }

    /// An insert whose document the source holds goes where its value puts it, not with its
    /// partner: customer 150 (zone 1) with an order for 150: one shard; with an order for 250
    /// (zone 2): two. Apart, the order's chunk for 150 meets the customer's with chance 1/4;
    /// two documents for 150 and 250 in one insert: two shards. A document without the
    /// field holds null there (zone 0): with customer 50 (zone 0), one shard.
    #[test]
    fn an_insert_with_its_document_goes_to_its_values_shard() {
        let (inputs, linked, _) = orders_customers_items();
        let choices = vec![Choice::Key(0), Choice::Key(0), Choice::Unsharded];
        let zoned = Layout::new(&inputs, &choices, &linked, &settings());
        let apart = Layout::new(&inputs, &choices, &[], &settings());
        let ins = |docs: Vec<Document>| {
            let mut q = op(Op::Insert, "s.orders", doc! {});
            q.inserted = docs;
            q
        };
        let upd = |c: i32| op(Op::Update, "s.customers", doc! {"_id": c});
        assert_eq!(zoned.transaction(&[ins(vec![doc! {"customerId": 150}]), upd(150)]), 1.0);
        assert_eq!(zoned.transaction(&[ins(vec![doc! {"customerId": 250}]), upd(150)]), 0.0);
        assert_eq!(apart.transaction(&[ins(vec![doc! {"customerId": 150}]), upd(150)]), 0.25);
        assert_eq!(zoned.transaction(&[ins(vec![doc! {"customerId": 150}, doc! {"customerId": 250}]), upd(150)]), 0.0);
        assert_eq!(zoned.transaction(&[ins(vec![doc! {"total": 1}]), upd(50)]), 1.0);
        assert_eq!(zoned.transaction(&[ins(vec![doc! {"total": 1}]), upd(150)]), 0.0);
    }

    /// Mean over busiest: [1, 1, 1, 1] → 1; [4, 0, 0, 0] → 1/4.
    #[test]
    fn balance_by_hand() {
        assert_eq!(balance(&[1.0, 1.0, 1.0, 1.0]), 1.0);
        assert_eq!(balance(&[4.0, 0.0, 0.0, 0.0]), 0.25);
        assert_eq!(balance(&[0.0, 0.0]), 1.0);
    }

    /// A small collection is not sharded for balance and scores alone. Four shards, no
    /// transaction: a large collection (1,000 bytes, 400 operations even) on its key, and a
    /// small one (10 bytes, 400 operations by `_id`, `{_id: 1}` scoring 90, each operation on
    /// one shard). Unsharded, the small one's operations sit on shard0: loads 500, 100, 100,
    /// 100 (800 once: 200 / 500 = 0.4), data 260, 250, 250, 250 (0.971), own score 0.80:
    /// (0.30 × 0.80 + 0.15 × 0.971 + 0.15 × 0.4) / 0.60 = 0.743. Sharded: loads 200 each (1),
    /// data even (1), own score (1.490 × 0.80 + 0.510 × 0.90) / 2.0 = 0.826: 0.913. The model
    /// prefers it sharded, but 10 bytes are one range whatever the key and no transaction gains
    /// by it: it stays unsharded. Counted as three ranges or more (a 1-byte range), its load
    /// would move in fact, and the objective shards it.
    #[test]
    fn a_small_collection_is_sharded_for_transactions_only() {
        let mut inputs = vec![coll("s.big", 1000, &["{a: 1}"]), coll("s.ref", 10, &["{_id: 1}"])];
        inputs[0].num_operations = 400;
        inputs[1].num_operations = 400;
        inputs[1].candidates[0].score = 90;
        let none = vec![];
        let f = |small: Choice| figures(&Layout::new(&inputs, &[Choice::Key(0), small], &none, &settings()), &[], &[]);
        let (u, k) = (f(Choice::Unsharded), f(Choice::Key(0)));
        assert_eq!((u.load_balance, k.load_balance, k.data_balance), (0.4, 1.0, 1.0));
        assert!((u.objective - 0.7428).abs() < 1e-3 && (k.objective - 0.9128).abs() < 1e-3, "{} {}", u.objective, k.objective);
        let found = super::super::search::search(&inputs, vec![], &[], &[], &[], &settings());
        assert_eq!(found.choices, [Choice::Key(0), Choice::Unsharded]);
        let tiny_ranges = Settings { range_bytes: 1, ..settings() };
        let found = super::super::search::search(&inputs, vec![], &[], &[], &[], &tiny_ranges);
        assert_eq!(found.choices, [Choice::Key(0), Choice::Key(0)]);
    }

    /// The load term scores operations by the shards they reach. Four shards; a large
    /// collection's 400 operations spread evenly (100 a shard), a small collection's 100:
    /// - unsharded on shard0: loads [200, 100, 100, 100]; 500 operations once, 125 a shard
    ///   when even: 125 / 200 = 0.625;
    /// - on a key that sends each of its operations to every shard: [200, 200, 200, 200]:
    ///   125 / 200 = 0.625, no better than unsharded (the mean over the busiest, 1, rewarded it);
    /// - on a key that sends each to one shard, evenly: [125, 125, 125, 125]: 1.
    #[test]
    fn a_broadcast_never_scores_better_load_balance_than_one_shard() {
        let mut inputs = vec![coll("s.big", 1000, &["{a: 1}"]), coll("s.small", 10, &["{slug: \"hashed\"}", "{_id: 1}"])];
        inputs[0].num_operations = 400;
        inputs[1].num_operations = 100;
        inputs[1].candidates[0].ops_share = vec![1.0; 4];
        let none = vec![];
        let figures_of = |small: Choice| figures(&Layout::new(&inputs, &[Choice::Key(0), small], &none, &settings()), &[], &[]);
        let (unsharded, broadcast, targeted) = (figures_of(Choice::Unsharded), figures_of(Choice::Key(0)), figures_of(Choice::Key(1)));
        assert_eq!((unsharded.ops.clone(), broadcast.ops.clone()), (vec![200.0, 100.0, 100.0, 100.0], vec![200.0; 4]));
        assert_eq!((unsharded.load_balance, broadcast.load_balance, targeted.load_balance), (0.625, 0.625, 1.0));
        assert_eq!(balance(&broadcast.ops), 1.0, "the mean over the busiest would call the broadcast even");
        assert_eq!(load_balance(&[0.0; 4], 0.0), 1.0);
    }
}
