//! What if (docs/reference.md "plan", what if): the DBA's own choices (`plan --key`,
//! `--unsharded`, a policy's `[plan]`) kept as given, the other collections chosen around
//! them by the same search, and the plan as given reported beside the one shardkey chooses
//! on its own: objective, single-shard shares and blockers, and the difference.

use super::build::build;
use super::input::{CandidateInput, Choice, CollectionInput, Settings};
use super::links::Link;
use super::outcome::{Difference, GivenChoiceReport, GivenJoins, GivenPlan, GivenShares, Plan, TxnEvidence};
use super::search::{search_with, single_shard_without, Workload};

/// Which collection each name given means, as its index in `namespaces`: `db.coll`, or a
/// collection of the plan's database `db`. `names` are (flag, name) as given, for the words of
/// an error: an unknown name (with the closest one), a name given twice.
pub(crate) fn resolve(db: &str, namespaces: &[String], names: &[(&str, &str)]) -> Result<Vec<usize>, String> {
    let mut out: Vec<usize> = Vec::new();
    for (flag, name) in names {
        let in_db = format!("{db}.{name}");
        let qualified = if namespaces.contains(&in_db) || !(namespaces.iter().any(|n| n == name) || name.starts_with(&format!("{db}."))) {
            in_db
        } else {
            name.to_string()
        };
        let Some(c) = namespaces.iter().position(|n| *n == qualified) else {
            // `other.orders`: another database's name, or a typo of a collection's.
            let other_db =
                name.split_once('.').filter(|(d, _)| *d != db && !namespaces.iter().any(|n| n.starts_with(&format!("{db}.{d}."))));
            let near = other_db.map(|(_, rest)| format!("{db}.{rest}")).unwrap_or_else(|| qualified.clone());
            let hint = match crate::util::text::closest(&near, namespaces) {
                Some(n) => format!("; did you mean {n}?"),
                None => format!(" (it holds {})", namespaces.join(", ")),
            };
            return Err(match other_db {
                Some(_) => format!("{flag} {name}: the plan is for database {db}: give {db}.<collection> or a collection's name{hint}"),
                None => format!("{flag} {name}: no collection {qualified} in database {db}{hint}"),
            });
        };
        if let Some(i) = out.iter().position(|x| *x == c) {
            return Err(format!("{flag} {name}: {qualified} is given twice ({} and {flag}): give one choice per collection", names[i].0));
        }
        out.push(c);
    }
    Ok(out)
}

/// The collections with each given key among their candidates (appended: the search on its
/// own never sees it), and the choice fixed for each: `given` holds, per collection given, its
/// index and its key's candidate (None: kept unsharded).
pub(crate) fn with_given(
    inputs: &[CollectionInput],
    given: Vec<(usize, Option<CandidateInput>)>,
) -> (Vec<CollectionInput>, Vec<Option<Choice>>) {
    let mut out = inputs.to_vec();
    let mut fixed = vec![None; inputs.len()];
    for (c, cand) in given {
        fixed[c] = Some(match cand {
            Some(k) => {
                out[c].candidates.push(k);
                Choice::Key(out[c].candidates.len() - 1)
            }
            None => Choice::Unsharded,
        });
    }
    (out, fixed)
}

/// The plan with `fixed` kept and the rest chosen around it, compared with `own` (shardkey's
/// plan for the same collections). `inputs` hold each given key among their candidates.
pub(crate) fn what_if(
    own: &Plan,
    inputs: &[CollectionInput],
    fixed: &[Option<Choice>],
    w: Workload,
    s: &Settings,
    ev: TxnEvidence,
) -> GivenPlan {
    let mut w = w;
    let by_name = given_key_links(inputs, fixed, &w.links);
    w.links.extend(by_name);
    let found = search_with(inputs, w.links, w.seen.whole, w.seen.in_part, w.joins, s, fixed);
    let without: Vec<_> = (0..inputs.len()).map(|c| single_shard_without(inputs, &found, c, w.seen.whole, w.joins, s)).collect();
    let p = build(&own.database, inputs, &found, s, ev, &without, &w.seen);
    let choices = fixed
        .iter()
        .enumerate()
        .filter_map(|(c, f)| {
            let key = match f.as_ref()? {
                Choice::Key(k) => Some(&inputs[c].candidates[*k]),
                Choice::Unsharded => None,
            };
            let refused_by = key
                .iter()
                .flat_map(|k| k.notes.blocked_by.iter())
                .flat_map(|ix| std::iter::once(ix.name.clone()).chain(ix.fields.iter().filter(|f| *f != "_id").cloned()))
                .collect();
            Some(GivenChoiceReport {
                namespace: inputs[c].namespace.clone(),
                key: key.map(|k| k.key.clone()),
                refused: key.and_then(|k| super::words::refusal(k, false)),
                refused_by,
            })
        })
        .collect();
    let round3 = |x: f64| (x * 1000.0).round() / 1000.0;
    let less = |a: Option<f64>, b: Option<f64>| Some(round3(a? - b?));
    let difference = Difference {
        objective: round3(own.objective.value - p.objective.value),
        single_shard_share: less(own.transactions.single_shard_share, p.transactions.single_shard_share),
        joins_single_shard_share: less(own.joins.single_shard_share, p.joins.single_shard_share),
    };
    let words = super::words::comparison(own, &p);
    GivenPlan {
        choices,
        objective: p.objective,
        transactions: GivenShares {
            single_shard_share: p.transactions.single_shard_share,
            single_shard_share_range: p.transactions.single_shard_share_range,
            single_shard_share_margin: p.transactions.single_shard_share_margin,
            failing_share: p.transactions.failing_share,
            blockers: p.transactions.blockers,
            single_shard_share_if_all_fixed: p.transactions.single_shard_share_if_all_fixed,
            single_shard_share_if_all_fixed_range: p.transactions.single_shard_share_if_all_fixed_range,
        },
        joins: GivenJoins { single_shard_share: p.joins.single_shard_share },
        collections: p.collections,
        shards: p.shards,
        commands: p.commands,
        steps: p.steps,
        difference,
        words,
    }
}

/// Links for the given keys whose first field the workload linked to nothing but which
/// another collection's linked field holds under the same name (issue 49: `--key
/// counters={shopId: 1}` beside shops' collections zoned on `shopId`). The DBA chose that
/// field: it is read as the same entity, so the key may join the zones of that field's
/// domain, as a link from the logs would let it. `_id` never: each collection's own.
fn given_key_links(inputs: &[CollectionInput], fixed: &[Option<Choice>], links: &[Link]) -> Vec<Link> {
    let domains = super::links::domains(links);
    let mut out = Vec::new();
    for (c, f) in fixed.iter().enumerate() {
        let Some(Choice::Key(k)) = f else { continue };
        let ns = &inputs[c].namespace;
        let field = &inputs[c].candidates[*k].key.fields[0].path;
        let node = (ns.clone(), field.clone());
        if field == "_id" || domains.iter().any(|d| d.contains(&node)) {
            continue;
        }
        // The domain holding the field by that name in another collection (the first, if
        // several do: the domains are disjoint by field, rarely by name).
        // Same values too, as far as the candidates show them: the first field's zone cuts
        // (quantiles of its values) of one kind (numbers, strings, ...) on both sides.
        let kind = |c: usize, path: &str| {
            inputs[c].candidates.iter().filter(|k| k.key.fields[0].path == path).find_map(|k| k.zone_splits.first()).map(value_kind)
        };
        let mine = kind(c, field);
        let same_values = |n: &str| match (mine, inputs.iter().position(|x| x.namespace == n).and_then(|o| kind(o, field))) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        let Some(other) = domains.iter().flat_map(|d| d.iter()).find(|(n, p)| p == field && n != ns && same_values(n)) else { continue };
        let mates: Vec<String> = domains
            .iter()
            .find(|d| d.contains(other))
            .map(|d| d.iter().filter(|(_, p)| p == field).map(|(n, p)| format!("{n}.{p}")).collect())
            .unwrap_or_default();
        out.push(Link {
            a: node,
            b: other.clone(),
            count: 0,
            seen_in: "the key given",
            evidence: format!(
                "the key given (--key) starts with {field}, the field {} {} under the same name",
                mates.join(", "),
                if mates.len() == 1 { "holds" } else { "hold" }
            ),
        });
    }
    out
}

/// A value's kind as zones compare it: every number is one kind (the server compares
/// values by canonical type first, numbers sharing one: mongodb/mongo
/// src/mongo/bson/bsontypes.h, `canonicalizeBSONType`).
fn value_kind(v: &bson::Bson) -> u8 {
    use bson::Bson::*;
    match v {
        Int32(_) | Int64(_) | Double(_) | Decimal128(_) => 0,
        String(_) | Symbol(_) => 1,
        ObjectId(_) => 2,
        DateTime(_) => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// orders.customerId linked to customers._id by the logs; counters given {customerId: 1}
    /// (the linked field's name) joins them, with the field named; given {_id: 1} it does
    /// not (each collection's _id is its own), nor a field no linked collection holds.
    #[test]
    fn a_given_key_on_a_linked_fields_name_is_linked_to_it() {
        use super::super::evaluate::tests::coll;
        let inputs = vec![
            coll("s.orders", 100, &["{customerId: 1}"]),
            coll("s.customers", 10, &["{_id: 1}"]),
            coll("s.counters", 1, &["{customerId: 1}", "{_id: 1}", "{name: 1}"]),
        ];
        let link = |a: (&str, &str), b: (&str, &str)| Link {
            a: (a.0.into(), a.1.into()),
            b: (b.0.into(), b.1.into()),
            count: 9,
            seen_in: "transactions",
            evidence: String::new(),
        };
        let links = vec![link(("s.customers", "_id"), ("s.orders", "customerId"))];
        let given = |k: usize| vec![None, None, Some(Choice::Key(k))];
        let l = given_key_links(&inputs, &given(0), &links);
        assert_eq!(l.len(), 1, "{l:#?}");
        assert_eq!(
            (l[0].a.clone(), l[0].b.clone()),
            (("s.counters".into(), "customerId".into()), ("s.orders".into(), "customerId".into()))
        );
        assert_eq!(l[0].evidence, "the key given (--key) starts with customerId, the field s.orders.customerId holds under the same name");
        assert!(given_key_links(&inputs, &given(1), &links).is_empty());
        assert!(given_key_links(&inputs, &given(2), &links).is_empty());
        // The same name over other values (strings against the orders' numbers): no link.
        let mut strings = inputs.clone();
        strings[2].candidates[0].zone_splits = vec![bson::Bson::String("m".into())];
        assert!(given_key_links(&strings, &given(0), &links).is_empty());
        // Already linked by the logs: nothing added.
        let both = vec![links[0].clone(), link(("s.counters", "customerId"), ("s.orders", "customerId"))];
        assert!(given_key_links(&inputs, &given(0), &both).is_empty());
    }

    fn names() -> Vec<String> {
        ["shop.orders", "shop.customers", "shop.order.items"].iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn names_resolve_in_the_plans_database_with_did_you_mean() {
        let n = names();
        assert_eq!(resolve("shop", &n, &[("--key", "shop.orders"), ("--unsharded", "customers")]), Ok(vec![0, 1]));
        // A collection whose name holds a dot, given bare.
        assert_eq!(resolve("shop", &n, &[("--key", "order.items")]), Ok(vec![2]));
        assert_eq!(
            resolve("shop", &n, &[("--key", "shop.ordrs")]),
            Err("--key shop.ordrs: no collection shop.ordrs in database shop; did you mean shop.orders?".into())
        );
        assert_eq!(
            resolve("shop", &n, &[("--unsharded", "zzz")]),
            Err("--unsharded zzz: no collection shop.zzz in database shop (it holds shop.orders, shop.customers, shop.order.items)".into())
        );
        let e = resolve("shop", &n, &[("--key", "other.orders")]).unwrap_err();
        assert!(e.starts_with("--key other.orders: the plan is for database shop"), "{e}");
        assert_eq!(
            resolve("shop", &n, &[("--key", "orders"), ("--unsharded", "shop.orders")]),
            Err("--unsharded shop.orders: shop.orders is given twice (--key and --unsharded): give one choice per collection".into())
        );
    }
}
