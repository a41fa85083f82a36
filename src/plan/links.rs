//! Which fields of different collections hold the same values: the fields a `$lookup`
//! joins on, and the fields transactions fix to equal values in two collections
//! (an order and its payment for one `customerId`). Linked fields form a domain; keys
//! that start with fields of one domain can be co-located by zones.

use crate::model::query::JoinStage;
use crate::model::Query;
use bson::{Bson, Document};
use std::collections::{BTreeMap, BTreeSet};

/// A field of a collection.
pub(crate) type Node = (String, String);

/// Two fields linked, and how often the workload showed it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Link {
    pub(crate) a: Node,
    pub(crate) b: Node,
    pub(crate) count: u64,
    /// "transactions" or the join stage.
    pub(crate) seen_in: &'static str,
}

/// Top-level fields a filter fixes by equality, with their values.
pub(crate) fn equalities(filter: &Document) -> Vec<(String, Bson)> {
    let mut out = Vec::new();
    for (k, v) in filter {
        if k == "$and" {
            if let Bson::Array(items) = v {
                for d in items.iter().filter_map(Bson::as_document) {
                    out.extend(equalities(d));
                }
            }
            continue;
        }
        if k.starts_with('$') {
            continue;
        }
        match v {
            Bson::Document(d) if d.keys().next().is_some_and(|x| x.starts_with('$')) => {
                if let Some(x) = d.get("$eq") {
                    out.push((k.clone(), x.clone()));
                }
            }
            Bson::Array(_) | Bson::RegularExpression(_) => {}
            _ => out.push((k.clone(), v.clone())),
        }
    }
    out
}

/// Links from transactions (two collections' fields fixed to one value in at least half
/// of the transactions that touch both, and twice at least) and from joins.
pub(crate) fn find(transactions: &[&[Query]], joins: &[Query]) -> Vec<Link> {
    let mut pair_txns: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut equal: BTreeMap<(Node, Node), u64> = BTreeMap::new();
    for ops in transactions {
        let colls: BTreeSet<&str> = ops.iter().map(|q| q.ns.as_str()).collect();
        for a in &colls {
            for b in &colls {
                if a < b {
                    *pair_txns.entry((a.to_string(), b.to_string())).or_default() += 1;
                }
            }
        }
        let mut seen: BTreeSet<(Node, Node)> = BTreeSet::new();
        let eqs: Vec<(&str, Vec<(String, Bson)>)> = ops.iter().map(|q| (q.ns.as_str(), equalities(&q.filter))).collect();
        for (i, (na, ea)) in eqs.iter().enumerate() {
            for (nb, eb) in &eqs[i + 1..] {
                if na == nb {
                    continue;
                }
                for (fa, va) in ea {
                    for (fb, vb) in eb {
                        if crate::bsonx::cmp_bson(va, vb) == std::cmp::Ordering::Equal {
                            let (x, y) = ((na.to_string(), fa.clone()), (nb.to_string(), fb.clone()));
                            seen.insert(if x < y { (x, y) } else { (y, x) });
                        }
                    }
                }
            }
        }
        for p in seen {
            *equal.entry(p).or_default() += 1;
        }
    }
    let mut out: Vec<Link> = equal
        .into_iter()
        .filter(|((a, b), n)| {
            let both = pair_txns.get(&(a.0.clone(), b.0.clone())).copied().unwrap_or(0);
            *n >= 2 && *n * 2 >= both
        })
        .map(|((a, b), count)| Link { a, b, count, seen_in: "transactions" })
        .collect();
    let mut joined: BTreeMap<(Node, Node, &'static str), u64> = BTreeMap::new();
    for q in joins {
        for j in &q.joins {
            if let (Some(l), Some(f)) = (&j.local_field, &j.foreign_field) {
                if j.stage != JoinStage::UnionWith && j.from != q.ns {
                    *joined.entry(((q.ns.clone(), l.clone()), (j.from.clone(), f.clone()), j.stage.name())).or_default() += 1;
                }
            }
        }
    }
    out.extend(joined.into_iter().map(|((a, b, s), count)| Link { a, b, count, seen_in: s }));
    out
}

/// Domains: the connected sets of linked fields, each sorted; a field in none is alone.
pub(crate) fn domains(links: &[Link]) -> Vec<BTreeSet<Node>> {
    let mut out: Vec<BTreeSet<Node>> = Vec::new();
    for l in links {
        let ia = out.iter().position(|d| d.contains(&l.a));
        let ib = out.iter().position(|d| d.contains(&l.b));
        match (ia, ib) {
            (Some(i), Some(j)) if i != j => {
                let other = out.remove(i.max(j));
                out[i.min(j)].extend(other);
            }
            (Some(_), Some(_)) => {}
            (Some(i), None) => {
                out[i].insert(l.b.clone());
            }
            (None, Some(j)) => {
                out[j].insert(l.a.clone());
            }
            (None, None) => out.push([l.a.clone(), l.b.clone()].into_iter().collect()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Op, QueryOrigin};
    use bson::doc;

    fn q(ns: &str, f: Document) -> Query {
        Query::new(Op::Update, ns, f, QueryOrigin::SlowQueryLog)
    }

    /// Two transactions fix orders.customerId and customers._id to one value: linked; a
    /// third field equal once (status "A" = code "A") is not.
    #[test]
    fn fields_fixed_to_one_value_in_most_transactions_are_linked() {
        let t1 = vec![q("s.orders", doc! {"customerId": 7, "status": "A"}), q("s.customers", doc! {"_id": 7, "code": "A"})];
        let t2 = vec![q("s.orders", doc! {"customerId": {"$eq": 8}}), q("s.customers", doc! {"$and": [{"_id": 8}]})];
        let txns: Vec<&[Query]> = vec![&t1, &t2];
        let links = find(&txns, &[]);
        assert_eq!(links.len(), 1, "{links:?}");
        assert_eq!(links[0].a, ("s.customers".to_string(), "_id".to_string()));
        assert_eq!(links[0].b, ("s.orders".to_string(), "customerId".to_string()));
        assert_eq!(links[0].count, 2);
        let d = domains(&links);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].len(), 2);
    }
}
