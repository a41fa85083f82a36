//! What keeps transactions off one shard under the chosen plan (docs/reference.md "plan",
//! blockers): the operation shapes that take transactions to several shards, each with the
//! share of transactions it costs, an example, the fix, and the single-shard share the plan
//! would reach with that fix (and with every fix). A fix is evaluated by placing the
//! operations of that shape as the fix would (`evaluate::Follow`), nothing else changed.

use super::evaluate::{Follow, Unit};
use super::input::Choice;
use super::layout::Layout;
use crate::model::Query;
use crate::rules::write_targeting::Refusal;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

crate::labels! {
    /// Why an operation takes its transaction off one shard.
    #[derive(PartialOrd, Ord)]
    pub(crate) enum Shape {
        /// A write the target version refuses under its collection's key
        /// (`rules::write_targeting`): its transaction fails.
        Refused => "refused by the server",
        /// A write whose filter names only `_id`, in a collection sharded on another field.
        WriteByIdAlone => "write by _id alone",
        /// A read or write whose filter lacks the key's first field.
        WithoutZoneField => "without the zone field",
        /// A collection left unsharded, read only, on a shard other than the transaction's zone.
        ReferenceData => "reference data",
        /// A collection left unsharded and written, on a shard other than the transaction's zone.
        Unsharded => "unsharded collection",
        /// An operation on a sharded collection outside the transaction's zones: the balancer
        /// places its chunks by itself.
        ShardedApart => "sharded apart",
        /// Operations in zones on different shards: the transaction spans partitions.
        CrossPartition => "cross-partition",
    }
}

/// One shape that keeps transactions off one shard.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Blocker {
    pub(crate) namespace: String,
    pub(crate) shape: Shape,
    pub(crate) op: &'static str,
    /// Transactions (of those evaluated) it takes off one shard, in percent.
    pub(crate) transactions_percent: f64,
    /// One operation of that shape, as logged (its filter).
    pub(crate) example: String,
    pub(crate) fix: String,
    /// The share of transactions on one shard with this fix alone.
    pub(crate) single_shard_share_if_fixed: f64,
    /// Refused: the server's error code, and the first version that runs it as it is
    /// ("7.1"; absent when none does).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) accepted_from: Option<String>,
    /// The one fix it shares with the blockers of the very same transactions, when only
    /// fixing them together raises the share (`joint`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) joint_fix: Option<super::joint::JointFix>,
}

/// The blockers, most costly first, and the share with every fix.
#[derive(Debug, Clone, Default)]
pub(crate) struct Blockers {
    pub(crate) list: Vec<Blocker>,
    pub(crate) share_if_all_fixed: Option<f64>,
    /// Every fix, and the collections the transactions only read: what `if_all_fixed`
    /// places a transaction by.
    fixes: Vec<Id>,
    read_only: BTreeSet<usize>,
    /// The transactions off one shard that hold an insert the plan cannot place (`NotPlaced`).
    pub(crate) not_placed: Option<NotPlaced>,
}

/// Transactions holding an insert whose documents the source does not show, into a sharded
/// collection no zone places: the insert goes to the one shard its document's key value
/// decides, a document nobody saw, so it is neither "sharded apart" nor on the transaction's
/// shard. Checked on 6.0.5: pymongo (like the Go and Java drivers and Node's insertMany) sends
/// an insert's documents as an OP_MSG document sequence (kind 1), which the log's and the
/// profiler's `command` leave out; the Node driver's insertOne sends them in the body.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NotPlaced {
    /// Of the transactions evaluated, in percent.
    pub(crate) transactions_percent: f64,
    /// The collections those inserts go to.
    pub(crate) namespaces: Vec<String>,
    pub(crate) why: String,
}

/// An insert the plan cannot place: its documents not shown, its collection sharded and in
/// no zone group (a zoned one goes with its zone's operations: `evaluate::insert_unit`).
fn unseen_insert(layout: &Layout, c: usize, q: &Query) -> bool {
    q.op == crate::model::Op::Insert && q.inserted.is_empty() && matches!(layout.choices[c], Choice::Key(_)) && layout.group[c].is_none()
}

impl Blockers {
    /// The chance that a transaction runs on one shard with every fix made.
    pub(crate) fn if_all_fixed(&self, layout: &Layout, ops: &[Query]) -> f64 {
        layout.transaction_with(ops, &self.follow(layout))
    }

    /// How each operation is placed with every fix made.
    pub(crate) fn follow<'a>(&'a self, layout: &'a Layout) -> impl Fn(usize, &Query) -> Follow + 'a {
        follow_for(layout, &self.read_only, &self.fixes)
    }
}

/// The follow for a set of fixes: an operation of a fixed (namespace, shape, op) is placed as fixed.
fn follow_for<'a>(layout: &'a Layout, read_only: &'a BTreeSet<usize>, fixes: &'a [Id]) -> impl Fn(usize, &Query) -> Follow + 'a {
    move |c: usize, q: &Query| -> Follow {
        let unit = layout.unit(c, &q.filter);
        let Some(shape) = shape_of(layout, c, q, &unit, read_only) else { return Follow::AsIs };
        let hit = fixes.iter().any(|(ns, s, op)| *ns == q.ns && *s == shape && *op == q.op.name());
        match (hit, fix_of(shape)) {
            (true, Some(f)) => f,
            _ => Follow::AsIs,
        }
    }
}

type Id = (String, Shape, &'static str);

/// The shape of one operation on its own (the cross-partition shape needs the transaction).
fn shape_of(layout: &Layout, c: usize, q: &Query, unit: &Unit, read_only: &BTreeSet<usize>) -> Option<Shape> {
    if layout.refusal(q).is_some() {
        return Some(Shape::Refused);
    }
    // An insert's unit depends on its transaction; apart from the zones it is on its own.
    let unit = match (q.op, &layout.choices[c], layout.group[c]) {
        (crate::model::Op::Insert, Choice::Key(_), None) => &Unit::Free(c, String::new()),
        (crate::model::Op::Insert, Choice::Key(_), Some(_)) => return None,
        _ => unit,
    };
    match (&layout.choices[c], unit) {
        (Choice::Unsharded, _) if read_only.contains(&c) => Some(Shape::ReferenceData),
        (Choice::Unsharded, _) => Some(Shape::Unsharded),
        (Choice::Key(_), Unit::Free(..)) if layout.group[c].is_none() => Some(Shape::ShardedApart),
        (Choice::Key(_), Unit::Spread) => {
            let by_id_alone = !q.op.is_read() && q.filter.keys().eq(["_id"].iter().copied());
            Some(if by_id_alone { Shape::WriteByIdAlone } else { Shape::WithoutZoneField })
        }
        _ => None,
    }
}

/// How the fix for a shape places its operations; None when there is no such fix.
fn fix_of(shape: Shape) -> Option<Follow> {
    match shape {
        // Its filter naming the key's fields: placed as the key then places it.
        Shape::Refused | Shape::WriteByIdAlone | Shape::WithoutZoneField => Some(Follow::ZoneField),
        Shape::ReferenceData | Shape::ShardedApart => Some(Follow::TransactionZone),
        Shape::Unsharded | Shape::CrossPartition => None,
    }
}

/// The fix for an unsharded collection written outside the transaction's zone: shard it on
/// a key whose first field is linked to a zone group's (one of its valid candidates), or,
/// when it holds no such field, what would be needed first: a fix named only when it can be done.
fn unsharded_fix(layout: &Layout, ns: &str) -> String {
    let Some(c) = layout.index_of(ns) else { return String::new() };
    let zoned = |f: &str| layout.groups.iter().find(|g| layout.domains[g.domain].contains(&(ns.to_string(), f.to_string())));
    let linked = layout.inputs[c].candidates.iter().filter(|k| k.valid).find_map(|k| zoned(&k.key.fields[0].path).map(|g| (k, g)));
    let anchor_field = |g: &super::layout::Group| match &layout.choices[g.anchor] {
        Choice::Key(k) => format!("{}.{}", layout.inputs[g.anchor].namespace, layout.inputs[g.anchor].candidates[*k].key.fields[0].path),
        Choice::Unsharded => layout.inputs[g.anchor].namespace.clone(),
    };
    match linked {
        Some((k, g)) => {
            format!("shard {ns} on {} with the zoned collections ({} holds {}'s values)", k.key, k.key.fields[0].path, anchor_field(g))
        }
        None => {
            // A key it can take led by a field named as a zone field: the logs tie no values
            // between them (no transaction or join fixes both), but it may hold the same ones.
            let named = layout.inputs[c].candidates.iter().filter(|k| k.valid).find_map(|k| {
                let f = &k.key.fields[0].path;
                layout.groups.iter().map(anchor_field).find(|a| a.ends_with(&format!(".{f}"))).map(|a| (k, a))
            });
            if let Some((k, a)) = named {
                let coll = ns.split_once('.').map_or(ns, |(_, c)| c);
                return format!(
                    "none the logs show: {ns} holds {}, as {a} is named, but no transaction or join ties their values; if they are the same values, shard {ns} on {} with the zoned collections (plan --key '{coll}={}' gives the figure)",
                    k.key.fields[0].path, k.key, k.key
                );
            }
            let fields: Vec<String> = layout.groups.iter().map(anchor_field).collect();
            format!(
                "none as {ns} is: it holds no field linked to the zoned collections' {} (no key it can take starts with one); its documents would need that field, named in its filters, before it can be sharded with them",
                if fields.is_empty() { "zone field".to_string() } else { fields.join(" or ") }
            )
        }
    }
}

/// The fix for a sharded collection whose statements land apart from the transaction's
/// others: zone it with a zone group its key's first field is linked to; else with the
/// collections a field of it is linked to (the logs' evidence), on a key led by that field;
/// else none as it is: a fix named only when it can be done.
fn apart_fix(layout: &Layout, ns: &str) -> String {
    let domain_of = |f: &str| layout.domains.iter().find(|d| d.contains(&(ns.to_string(), f.to_string())));
    if let Some(c) = layout.index_of(ns) {
        let grouped = layout.inputs[c].candidates.iter().filter(|k| k.valid).find(|k| {
            let f = &k.key.fields[0].path;
            layout.groups.iter().any(|g| layout.domains[g.domain].contains(&(ns.to_string(), f.clone())))
        });
        if let Some(k) = grouped {
            return format!("shard {ns} on {} with the zoned collections ({} holds their zone values)", k.key, k.key.fields[0].path);
        }
    }
    // A field of ns the logs link to another collection's: both zoned on those values.
    let linked = layout.domains.iter().find_map(|d| {
        let own = d.iter().find(|(n, _)| n == ns)?;
        let other = d.iter().find(|(n, _)| n != ns)?;
        Some((own.1.clone(), other.clone()))
    });
    match linked {
        Some((f, (on, of))) if domain_of(&f).is_some() => format!(
            "zone {ns} with {on} on the values they share ({ns}.{f} holds {on}.{of}'s): shard {ns} on a key led by {f} and {on} on one led by {of}, with the same zone ranges (give them with --key to see what they cost)"
        ),
        _ => format!(
            "none as {ns} is: it holds no field the logs link to the transaction's other collections, so no zone can keep its documents with theirs; take its statement out of the transaction, or store with it the field the others are zoned on"
        ),
    }
}

/// The blockers' fixes said against the plan's own rules: a collection a rule keeps unsharded
/// (`forced`: the pre-5.1 `$lookup` rule, a given choice) is not offered as simply "shard it";
/// the rule and what lifts it are said with the fix, under the one version the plan assumed.
pub(crate) fn against_rules(mut list: Vec<Blocker>, layout: &Layout, forced: &[Option<String>]) -> Vec<Blocker> {
    for b in list.iter_mut().filter(|b| b.shape == Shape::Unsharded) {
        let Some(why) = layout.index_of(&b.namespace).and_then(|c| forced[c].as_ref()) else { continue };
        let lift = if why.contains("before 5.1") {
            match layout.target_version {
                None => "; no version was given, so the whole plan assumes one before 5.1: with --target-version 5.1 or later it could be sharded",
                Some(_) => "; the target version is before 5.1: from 5.1 on it could be sharded",
            }
        } else {
            ""
        };
        b.fix = format!("{} (but the plan keeps {} unsharded: {why}{lift})", b.fix, b.namespace);
    }
    list
}

/// A refused write's fix, as `write_targeting` says it: the fields its filter must name, or
/// the version that runs it as it is, with the server's error.
fn refused_fix(r: &Refusal, op: &str, version: Option<(u32, u32)>) -> String {
    let on = version.map_or("the target version".to_string(), |(a, b)| format!("{a}.{b}"));
    let what = if r.fix.is_empty() {
        format!("change the key in single-document writes whose filter names the whole key ({on} refuses it, error {}: {})", r.code, r.why)
    } else {
        format!("add {} to the {op}'s filter ({on} refuses it, error {}: {})", r.fix.join(", "), r.code, r.why)
    };
    match r.accepted_from {
        Some((a, b)) => format!("{what}; or run {a}.{b}+, which accepts it as it is"),
        None => what,
    }
}

/// The blockers of `layout` over `transactions` (those the share counts).
pub(crate) fn find(layout: &Layout, transactions: &[&[Query]]) -> Blockers {
    if transactions.is_empty() {
        return Blockers::default();
    }
    // Collections the transactions only read: a copy per zone would serve them.
    let mut written = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for q in transactions.iter().flat_map(|t| t.iter()) {
        if let Some(c) = layout.index_of(&q.ns) {
            seen.insert(c);
            if !q.op.is_read() {
                written.insert(c);
            }
        }
    }
    let read_only: BTreeSet<usize> = seen.difference(&written).copied().collect();
    let as_is = |_: usize, _: &Query| Follow::AsIs;
    let mut count: BTreeMap<Id, (u64, String)> = BTreeMap::new();
    // The transactions (indexes) each blocker keeps off one shard: fixes that only help
    // together block the same ones.
    let mut sets: BTreeMap<Id, BTreeSet<usize>> = BTreeMap::new();
    let mut refusals: BTreeMap<Id, Refusal> = BTreeMap::new();
    let (mut not_placed, mut unseen_in) = (0u64, BTreeSet::new());
    for (t, ops) in transactions.iter().enumerate() {
        if layout.transaction(ops) >= 1.0 {
            continue;
        }
        let units = layout.units(ops, &as_is);
        let unseen: BTreeSet<&str> =
            units.iter().filter(|(i, c, _)| unseen_insert(layout, *c, &ops[*i])).map(|(i, _, _)| ops[*i].ns.as_str()).collect();
        if !unseen.is_empty() {
            not_placed += 1;
            unseen_in.extend(unseen.into_iter().map(str::to_string));
        }
        let mut ids: BTreeSet<Id> = BTreeSet::new();
        let mut example: BTreeMap<Id, String> = BTreeMap::new();
        let zone_shards: Vec<(usize, usize)> = units
            .iter()
            .filter_map(|(i, c, u)| match u {
                Unit::Fixed(s) if layout.group[*c].is_some() => Some((*i, *s)),
                _ => None,
            })
            .collect();
        let zone = zone_shards.first().map(|x| x.1);
        for (i, c, u) in units.iter().filter(|(i, c, _)| !unseen_insert(layout, *c, &ops[*i])) {
            let q = &ops[*i];
            let shape = match (shape_of(layout, *c, q, u, &read_only), u) {
                // An unsharded collection costs only where the transaction's zone is elsewhere.
                (Some(Shape::ReferenceData | Shape::Unsharded), Unit::Fixed(s)) if zone.is_none_or(|z| z == *s) => None,
                (Some(s), _) => Some(s),
                _ => match u {
                    Unit::Fixed(s) if layout.group[*c].is_some() && zone.is_some_and(|z| z != *s) => Some(Shape::CrossPartition),
                    _ => None,
                },
            };
            if let Some(shape) = shape {
                let id = (q.ns.clone(), shape, q.op.name());
                if shape == Shape::Refused && !refusals.contains_key(&id) {
                    if let Some((_, r)) = layout.refusal(q) {
                        refusals.insert(id.clone(), r);
                    }
                }
                // An insert has no filter: its first document, when the source shows it.
                let what = q.inserted.first().filter(|_| q.op == crate::model::Op::Insert).unwrap_or(&q.filter);
                example.entry(id.clone()).or_insert_with(|| format!("{} {} {what}", q.op.name(), q.ns));
                ids.insert(id);
            }
        }
        for id in ids {
            sets.entry(id.clone()).or_default().insert(t);
            let e = count.entry(id.clone()).or_insert((0, String::new()));
            e.0 += 1;
            if e.1.is_empty() {
                e.1 = example.remove(&id).unwrap_or_default();
            }
        }
    }
    let n = transactions.len() as f64;
    let share_with = |fixed: &dyn Fn(usize, &Query) -> Follow| -> f64 {
        transactions.iter().map(|ops| layout.transaction_with(ops, fixed)).sum::<f64>() / n
    };
    let mut list: Vec<Blocker> = count
        .into_iter()
        .map(|(id, (k, example))| {
            let (ns, shape, op) = id.clone();
            let field = match &layout.choices[layout.index_of(&ns).unwrap_or(0)] {
                Choice::Key(k) => layout.inputs[layout.index_of(&ns).unwrap_or(0)].candidates[*k].key.fields[0].path.clone(),
                Choice::Unsharded => String::new(),
            };
            let fix = match shape {
                Shape::Refused => refusals.get(&id).map_or_else(String::new, |r| refused_fix(r, op, layout.target_version)),
                Shape::WriteByIdAlone | Shape::WithoutZoneField => format!("add {field} to the {op}'s filter"),
                Shape::ReferenceData => {
                    format!("a copy of {ns} per zone, carrying the zone's field (read from the copy in the transaction's zone)")
                }
                Shape::Unsharded => unsharded_fix(layout, &ns),
                Shape::ShardedApart => apart_fix(layout, &ns),
                Shape::CrossPartition => "none in the plan: the transaction spans partitions".to_string(),
            };
            let if_fixed = share_with(&follow_for(layout, &read_only, std::slice::from_ref(&id)));
            Blocker {
                namespace: ns,
                shape,
                op,
                transactions_percent: (k as f64 * 1000.0 / n).round() / 10.0,
                example,
                fix,
                single_shard_share_if_fixed: (if_fixed * 1000.0).round() / 1000.0,
                error_code: refusals.get(&id).map(|r| r.code),
                accepted_from: refusals.get(&id).and_then(|r| r.accepted_from).map(|(a, b)| format!("{a}.{b}")),
                joint_fix: None,
            }
        })
        .collect();
    let none = BTreeSet::new();
    let members: Vec<super::joint::Member> = list
        .iter()
        .map(|b| super::joint::Member {
            namespace: &b.namespace,
            op: b.op,
            transactions: sets.get(&(b.namespace.clone(), b.shape, b.op)).unwrap_or(&none),
            share_if_fixed: b.single_shard_share_if_fixed,
        })
        .collect();
    let joint = super::joint::group(layout, transactions, &members);
    for (b, j) in list.iter_mut().zip(joint) {
        b.joint_fix = j;
    }
    list.sort_by(|a, b| b.transactions_percent.total_cmp(&a.transactions_percent).then_with(|| a.namespace.cmp(&b.namespace)));
    let all: Vec<Id> = list.iter().filter(|b| fix_of(b.shape).is_some()).map(|b| (b.namespace.clone(), b.shape, b.op)).collect();
    let share_if_all_fixed = (!all.is_empty()).then(|| (share_with(&follow_for(layout, &read_only, &all)) * 1000.0).round() / 1000.0);
    let not_placed = (not_placed > 0).then(|| NotPlaced {
        transactions_percent: (not_placed as f64 * 1000.0 / n).round() / 10.0,
        namespaces: unseen_in.into_iter().collect(),
        why: format!(
            "the driver sent the documents outside the command (an OP_MSG document sequence, as pymongo, the Go and Java drivers and Node's insertMany do) and the log and the profiler do not hold them, so the shard each goes to, decided by its own key value, is not known: these transactions are neither called apart nor on one shard, and the share counts the chance, 1 in {}, that the document lands on the transaction's shard; what would show them: the documents in the command body (the Node driver's insertOne), or a field of the inserted collection linked to the transaction's others (its documents then show the values it holds)",
            layout.shards
        ),
    });
    Blockers { list, share_if_all_fixed, fixes: all, read_only, not_placed }
}

#[cfg(test)]
mod tests {
    use super::super::evaluate::tests::{op, orders_customers_items, settings};
    use super::*;
    use crate::model::Op;
    use bson::doc;

    /// Hand-worked, four shards, zones at 100/200/300 (zone i on shard i). orders and
    /// customers zoned on the customer id, items unsharded on shard0 (read only).
    /// t1: customer 150 (zone 1) and an item: items on shard0 ≠ shard1: reference data, 0.
    /// t2: read customer 150, then update the customer by _id alone: several shards, 0.
    /// t3: customers 150 and 250: zones 1 and 2: cross-partition, 0.
    /// t4: customer 50 (zone 0) and an item: all on shard0: 1.
    /// Share as is: 1/4. A copy of items per zone fixes t1: 2/4. The customer id added to
    /// the update fixes t2: 2/4. Both: 3/4 (t3 spans partitions: no fix).
    #[test]
    fn blockers_by_hand() {
        let (inputs, linked, choices) = orders_customers_items();
        let layout = Layout::new(&inputs, &choices, &linked, &settings());
        let item = || op(Op::Find, "s.items", doc! {"_id": "sku-1"});
        let t1 = vec![op(Op::Find, "s.orders", doc! {"customerId": 150}), item()];
        let t2 = vec![op(Op::Find, "s.orders", doc! {"customerId": 150}), op(Op::Update, "s.orders", doc! {"_id": 9})];
        let t3 = vec![op(Op::Update, "s.customers", doc! {"_id": 150}), op(Op::Update, "s.customers", doc! {"_id": 250})];
        let t4 = vec![op(Op::Find, "s.orders", doc! {"customerId": 50}), item()];
        let txns: Vec<&[Query]> = vec![&t1, &t2, &t3, &t4];
        let b = find(&layout, &txns);
        let get = |s: Shape| b.list.iter().find(|x| x.shape == s).unwrap_or_else(|| panic!("no {s}: {:#?}", b.list));
        assert_eq!(b.list.len(), 3, "{:#?}", b.list);
        let r = get(Shape::ReferenceData);
        assert_eq!((r.namespace.as_str(), r.op, r.transactions_percent), ("s.items", "find", 25.0));
        assert_eq!(r.single_shard_share_if_fixed, 0.5);
        let w = get(Shape::WriteByIdAlone);
        assert_eq!((w.namespace.as_str(), w.op, w.transactions_percent), ("s.orders", "update", 25.0));
        assert_eq!(w.single_shard_share_if_fixed, 0.5);
        assert!(w.fix.contains("add customerId"), "{}", w.fix);
        let x = get(Shape::CrossPartition);
        assert_eq!((x.namespace.as_str(), x.single_shard_share_if_fixed), ("s.customers", 0.25));
        assert_eq!(b.share_if_all_fixed, Some(0.75));
    }

    /// Issue 48's ship transaction by hand (zones at 100/200/300, orders and customers on the
    /// customer id, settings at 6.0): t1 reads customer 150 then updates orders by `number`,
    /// neither key nor _id: 6.0 refuses it (error 61), t1 fails. t2 (customer 150's orders by
    /// the key) is on one shard. Share 1/2; the refused blocker costs 50% of transactions, its
    /// fix is to add customerId to the update's filter (then zone 1 with the read: 2/2), or 7.1.
    #[test]
    fn a_refused_write_is_a_blocker_with_its_fix() {
        let (inputs, linked, choices) = orders_customers_items();
        let layout = Layout::new(&inputs, &choices, &linked, &settings());
        let t1 = vec![op(Op::Find, "s.customers", doc! {"_id": 150}), op(Op::Update, "s.orders", doc! {"number": 7})];
        let t2 = vec![op(Op::Find, "s.customers", doc! {"_id": 150}), op(Op::Update, "s.orders", doc! {"customerId": 150})];
        let txns: Vec<&[Query]> = vec![&t1, &t2];
        let b = find(&layout, &txns);
        let r = b.list.iter().find(|x| x.shape == Shape::Refused).unwrap_or_else(|| panic!("{:#?}", b.list));
        assert_eq!((r.namespace.as_str(), r.op, r.transactions_percent), ("s.orders", "update", 50.0));
        assert_eq!(
            r.fix,
            "add customerId to the update's filter (6.0 refuses it, error 61: a single-document write must fix the whole shard key (or _id, for updateOne/deleteOne) in its filter); or run 7.1+, which accepts it as it is"
        );
        assert_eq!(r.single_shard_share_if_fixed, 1.0);
        assert_eq!(b.share_if_all_fixed, Some(1.0));
        // The same transactions on 7.1: nothing refused, t1's update is two-phase (every shard).
        let seven = Layout::new(&inputs, &choices, &linked, &super::super::input::Settings { target_version: Some((7, 1)), ..settings() });
        assert!(find(&seven, &txns).list.iter().all(|x| x.shape != Shape::Refused));
    }

    /// Issue 49: orders sharded on their own (no zone group), customers unsharded. Two
    /// transactions update a customer and insert an order whose document the source does not
    /// show (pymongo's document sequence): not a "sharded apart" blocker but not placed, 2 of
    /// 4 transactions (50%); the other two insert a shown order: sharded apart, with the
    /// document as the example.
    #[test]
    fn an_insert_without_its_documents_is_not_placed() {
        let (inputs, _, _) = orders_customers_items();
        let choices = vec![Choice::Key(0), Choice::Unsharded, Choice::Unsharded];
        let layout = Layout::new(&inputs, &choices, &[], &settings());
        let insert = |docs: Vec<bson::Document>| {
            let mut q = op(Op::Insert, "s.orders", doc! {});
            q.inserted = docs;
            q
        };
        let upd = || op(Op::Update, "s.customers", doc! {"_id": 150});
        let unseen = vec![upd(), insert(vec![])];
        let shown = vec![upd(), insert(vec![doc! {"customerId": 150}])];
        let txns: Vec<&[Query]> = vec![&unseen, &unseen, &shown, &shown];
        let b = find(&layout, &txns);
        let n = b.not_placed.as_ref().expect("not placed");
        assert_eq!((n.transactions_percent, n.namespaces.clone()), (50.0, vec!["s.orders".to_string()]));
        assert!(n.why.contains("1 in 4"), "{}", n.why);
        assert_eq!(b.list.len(), 1, "{:#?}", b.list);
        let a = &b.list[0];
        assert_eq!(
            (a.shape, a.transactions_percent, a.example.as_str()),
            (Shape::ShardedApart, 50.0, "insert s.orders { \"customerId\": 150 }")
        );
        // No link in the logs: no zone can help, said as such.
        assert!(a.fix.starts_with("none as s.orders is: it holds no field the logs link"), "{}", a.fix);
        // orders.customerId linked to customers._id: zone the two on those values.
        let (_, linked, _) = orders_customers_items();
        let with_link = Layout::new(&inputs, &choices, &linked, &settings());
        let b = find(&with_link, &[shown.as_slice()]);
        let a = b.list.iter().find(|x| x.shape == Shape::ShardedApart).unwrap_or_else(|| panic!("{:#?}", b.list));
        assert!(
            a.fix.starts_with("zone s.orders with s.customers on the values they share (s.orders.customerId holds s.customers._id's)"),
            "{}",
            a.fix
        );
        // Only shown inserts: nothing said not placed.
        assert!(find(&layout, &[shown.as_slice()]).not_placed.is_none());
    }

    /// A written unsharded collection off the transaction's zone: items holds no field linked
    /// to the zones' customer id (its only key starts with _id), so no "shard it with them";
    /// once items.customerId is linked (and a key on it is a candidate) the fix names that key;
    /// kept unsharded by the pre-5.1 $lookup rule with no version given, the fix says the rule.
    #[test]
    fn an_unsharded_fix_is_named_only_when_it_can_be_done() {
        let (mut inputs, mut linked, choices) = orders_customers_items();
        let t = vec![op(Op::Find, "s.orders", doc! {"customerId": 150}), op(Op::Update, "s.items", doc! {"_id": "sku-1"})];
        let txns: Vec<&[Query]> = vec![&t];
        let layout = Layout::new(&inputs, &choices, &linked, &settings());
        let b = find(&layout, &txns);
        let u = b.list.iter().find(|x| x.shape == Shape::Unsharded).unwrap_or_else(|| panic!("{:#?}", b.list));
        assert!(
            u.fix.starts_with("none as s.items is: it holds no field linked to the zoned collections' s.orders.customerId"),
            "{}",
            u.fix
        );
        let on_customer = inputs[0].candidates[0].clone();
        inputs[2].candidates.push(on_customer);
        // A key on a field named as the zone field, its values tied by nothing the logs show:
        // pointed at, not called impossible.
        let layout = Layout::new(&inputs, &choices, &linked, &settings());
        let u = find(&layout, &txns).list.into_iter().find(|x| x.shape == Shape::Unsharded).unwrap();
        assert_eq!(
            u.fix,
            "none the logs show: s.items holds customerId, as s.orders.customerId is named, but no transaction or join ties their values; if they are the same values, shard s.items on {customerId: 1} with the zoned collections (plan --key 'items={customerId: 1}' gives the figure)"
        );
        linked[0].insert(("s.items".to_string(), "customerId".to_string()));
        let layout = Layout::new(&inputs, &choices, &linked, &settings());
        let b = find(&layout, &txns);
        let u = b.list.iter().find(|x| x.shape == Shape::Unsharded).unwrap();
        assert_eq!(u.fix, "shard s.items on {customerId: 1} with the zoned collections (customerId holds s.orders.customerId's values)");
        let unknown = super::super::input::Settings { target_version: None, ..settings() };
        let layout = Layout::new(&inputs, &choices, &linked, &unknown);
        let why = Some("a $lookup or $graphLookup reads it: before 5.1 the collection it reads must be unsharded".to_string());
        let list = against_rules(find(&layout, &txns).list, &layout, &[None, None, why]);
        let u = list.iter().find(|x| x.shape == Shape::Unsharded).unwrap();
        assert!(u.fix.ends_with("(but the plan keeps s.items unsharded: a $lookup or $graphLookup reads it: before 5.1 the collection it reads must be unsharded; no version was given, so the whole plan assumes one before 5.1: with --target-version 5.1 or later it could be sharded)"), "{}", u.fix);
    }
}
