//! Which fields of different collections hold the same values: the fields a `$lookup`
//! joins on, and the fields transactions fix to equal values in two collections
//! (an order and its payment for one `customerId`). Linked fields form a domain; keys
//! that start with fields of one domain can be co-located by zones.

use super::equalities::equalities;
use crate::model::query::JoinStage;
use crate::model::{Op, Query};
use bson::{Bson, Document};
use std::collections::{BTreeMap, BTreeSet};

/// A field of a collection.
pub(crate) type Node = (String, String);
/// A field of a collection, borrowed (the votes' keys: the same order as `Node`'s).
type NodeRef<'a> = (&'a str, &'a str);

fn node_ref(n: &Node) -> NodeRef<'_> {
    (n.0.as_str(), n.1.as_str())
}

fn owned(n: NodeRef) -> Node {
    (n.0.to_string(), n.1.to_string())
}

/// Two fields linked, and how often the workload showed it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Link {
    pub(crate) a: Node,
    pub(crate) b: Node,
    pub(crate) count: u64,
    /// "transactions" or the join stage.
    pub(crate) seen_in: &'static str,
    /// What the link rests on, in the plan's words ("in 1,204 of 1,204 transactions showing
    /// both, the same value (96 different values)").
    pub(crate) evidence: String,
}

/// A link from transactions needs its fields to agree on at least this many different
/// values: a constant (`0`, `true`, `""`) or a status agrees by coincidence, not because
/// the two fields hold the same things.
pub(crate) const MIN_DISTINCT_VALUES: usize = 3;
/// ... and no one value may make up more than this share of the agreements.
pub(crate) const MAX_TOP_VALUE_SHARE: f64 = 0.5;
/// An inserted collection's field is inferred to hold a domain's values when at least this
/// share of its sampled values are values of the other side's documents.
pub(crate) const MIN_CONTAINED_SHARE: f64 = 0.5;

/// A value as a set key: numbers of any BSON type compare by value (7 = 7.0 = 7L).
pub(crate) fn value_key(v: &Bson) -> String {
    match crate::bsonx::number::as_f64(v) {
        Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => format!("n{}", x as i64),
        Some(x) => format!("n{x}"),
        None => match v {
            Bson::String(s) => format!("s{s}"),
            other => format!("{:?}", other),
        },
    }
}

/// The top-level fields of each collection's sampled documents, with their values (as
/// `value_key`s): what an insert the logs show without its document can be matched against.
#[derive(Debug, Default)]
pub(crate) struct DocValues {
    pub(crate) by_namespace: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
}

impl DocValues {
    /// Fields past this many distinct values keep counting, not storing.
    const MAX_VALUES: usize = 20_000;

    pub(crate) fn add(&mut self, ns: &str, docs: &[Document]) {
        let fields = self.by_namespace.entry(ns.to_string()).or_default();
        for d in docs {
            for (k, v) in d {
                if matches!(v, Bson::Document(_) | Bson::Array(_) | Bson::Null) {
                    continue;
                }
                let set = fields.entry(k.clone()).or_default();
                if set.len() < Self::MAX_VALUES {
                    set.insert(value_key(v));
                }
            }
        }
    }
}

/// How two fields' values met over the transactions where both showed one.
#[derive(Default)]
struct Tally<'a> {
    /// Transactions where both fields show a value.
    votes: u64,
    /// ... and share one: how often, per shared value.
    agreed: BTreeMap<&'a str, u64>,
}

impl Tally<'_> {
    fn agreements(&self) -> u64 {
        self.agreed.values().sum()
    }

    fn words(&self, what: &str) -> String {
        use crate::util::text::fmt_count;
        format!(
            "in {} of {} transactions showing both, {what} ({} different values)",
            fmt_count(self.agreements()),
            fmt_count(self.votes),
            fmt_count(self.agreed.len() as u64)
        )
    }

    /// Agree in at least half of the votes, twice at least, on values that vary.
    fn links(&self) -> bool {
        let n = self.agreements();
        let top = self.agreed.values().max().copied().unwrap_or(0);
        n >= 2 && n * 2 >= self.votes && self.agreed.len() >= MIN_DISTINCT_VALUES && top as f64 <= MAX_TOP_VALUE_SHARE * n as f64
    }
}

/// The fields one transaction's operations fix, with their values (keys).
type Fixed = BTreeMap<Node, BTreeSet<String>>;

/// A transaction's operations and the fields they fix, worked out once for `find` and
/// `inferred` (issue 52: each worked them out again, a quarter of the plan's links).
pub(crate) struct Txn<'a> {
    pub(crate) ops: &'a [Query],
    fixed: Fixed,
}

/// Each transaction with the fields it fixes, in order (worked out in parallel).
pub(crate) fn with_fixed<'a>(transactions: &[&'a [Query]]) -> Vec<Txn<'a>> {
    use rayon::prelude::*;
    transactions.par_iter().map(|ops| Txn { ops, fixed: fixed(ops) }).collect()
}

/// The fields one transaction's operations fix, with their values (keys).
fn fixed(ops: &[Query]) -> Fixed {
    let mut out = Fixed::new();
    for q in ops {
        // An insert's documents, when the source holds them, fix their fields' values.
        for d in std::iter::once(&q.filter).chain(&q.inserted) {
            for (f, v) in equalities(d) {
                out.entry((q.ns.clone(), f)).or_default().insert(value_key(&v));
            }
        }
    }
    out
}

/// Links from transactions and from joins. Two collections' fields are linked when, over
/// the transactions where both show a value (an insert without its document, an update by
/// `_id` alone do not vote for another field), they hold the same value in at least half,
/// twice at least, on `MIN_DISTINCT_VALUES` different values none of which makes up more
/// than `MAX_TOP_VALUE_SHARE` of the agreements.
pub(crate) fn find(transactions: &[Txn], joins: &[Query]) -> Vec<Link> {
    // Keyed by borrowed fields: a pair's strings are cloned once, when it links.
    let mut tally: BTreeMap<(&Node, &Node), Tally> = BTreeMap::new();
    for t in transactions {
        let nodes: Vec<(&Node, &BTreeSet<String>)> = t.fixed.iter().collect();
        for (i, (a, va)) in nodes.iter().enumerate() {
            for (b, vb) in &nodes[i + 1..] {
                if a.0 == b.0 {
                    continue;
                }
                let t = tally.entry((a, b)).or_default();
                t.votes += 1;
                if let Some(v) = va.intersection(vb).next() {
                    *t.agreed.entry(v).or_default() += 1;
                }
            }
        }
    }
    let mut out: Vec<Link> = tally
        .into_iter()
        .filter(|(_, t)| t.links())
        .map(|((a, b), t)| {
            let evidence = t.words("the same value");
            Link { a: a.clone(), b: b.clone(), count: t.agreements(), seen_in: "transactions", evidence }
        })
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
    out.extend(joined.into_iter().map(|((a, b, s), count)| {
        let evidence = format!("{} {s} stages join them", crate::util::text::fmt_count(count));
        Link { a, b, count, seen_in: s, evidence }
    }));
    out
}

/// Links of inserted collections, inferred from their documents: the logs show an insert
/// without its document, so where it belongs is read from the collection's own documents.
/// A field `I.f` of a collection the transactions insert into is linked to a field `X.g`
/// the same transactions fix when the fixed values are values `I.f` holds (the same vote
/// rule as `find`, every transaction inserting into `I` and fixing `X.g` voting) and most
/// of `I.f`'s values (`MIN_CONTAINED_SHARE`) are values of `X.g` in `X`'s documents (an
/// order's `customerId` is a customer's `_id`; an order's own `_id` is not). One field of
/// `I` per `X.g`: the one agreeing most often.
///
/// A value `I.f` holds somewhere is no evidence that the inserted document holds it (two id
/// fields over the same small range of integers hold each other's values by coincidence,
/// issue 49 item 5): where the transaction's insert shows its documents (the Node driver's
/// `insertOne`), its vote is theirs, the same value or not; only an insert the source shows
/// without its documents votes by the values `I.f` holds. A pair the shown documents
/// disagree on in as many transactions as agree (by either vote) links nothing.
pub(crate) fn inferred(transactions: &[Txn], docs: &DocValues, known: &[Link]) -> Vec<Link> {
    // Keyed by borrowed fields: nothing cloned per vote.
    let mut tally: BTreeMap<(NodeRef, NodeRef), Tally> = BTreeMap::new();
    // Votes of the transactions whose inserts show their documents: same-entity evidence.
    let mut shown: BTreeMap<(NodeRef, NodeRef), Tally> = BTreeMap::new();
    for Txn { ops, fixed } in transactions {
        let inserted: BTreeSet<&str> = ops.iter().filter(|q| q.op == Op::Insert).map(|q| q.ns.as_str()).collect();
        if inserted.is_empty() {
            continue;
        }
        for i in inserted {
            let Some(fields) = docs.by_namespace.get(i) else { continue };
            let with_docs = ops.iter().any(|q| q.op == Op::Insert && q.ns == i && !q.inserted.is_empty());
            // The values the transaction fixes for each field of `i` (its shown documents').
            let own: Vec<Option<&BTreeSet<String>>> =
                if with_docs { fields.keys().map(|f| fixed.get(&(i.to_string(), f.clone()))).collect() } else { Vec::new() };
            for ((x, g), vals) in fixed.iter().filter(|((x, _), _)| x != i) {
                for (at, (f, held)) in fields.iter().enumerate() {
                    let pair = ((i, f.as_str()), (x.as_str(), g.as_str()));
                    let agreed = if with_docs {
                        let own = own[at];
                        vals.iter().find(|v| own.is_some_and(|o| o.contains(*v)))
                    } else {
                        vals.iter().find(|v| held.contains(*v))
                    };
                    for t in [Some(&mut tally), with_docs.then_some(&mut shown)].into_iter().flatten() {
                        let t = t.entry(pair).or_default();
                        t.votes += 1;
                        if let Some(v) = agreed {
                            *t.agreed.entry(v).or_default() += 1;
                        }
                    }
                }
            }
        }
    }
    let refuted = |a: NodeRef, b: NodeRef| shown.get(&(a, b)).is_some_and(|t| t.agreements() * 2 < t.votes);
    let contained = |a: NodeRef, b: NodeRef| -> bool {
        let values = |n: NodeRef| docs.by_namespace.get(n.0).and_then(|f| f.get(n.1));
        match (values(a), values(b)) {
            (Some(va), Some(vb)) if !va.is_empty() => {
                va.iter().filter(|v| vb.contains(*v)).count() as f64 >= MIN_CONTAINED_SHARE * va.len() as f64
            }
            _ => false,
        }
    };
    let is_known = |a: NodeRef, b: NodeRef| {
        known.iter().any(|l| (node_ref(&l.a) == a && node_ref(&l.b) == b) || (node_ref(&l.a) == b && node_ref(&l.b) == a))
    };
    // The best field of each inserted collection for each fixed field.
    let mut best: BTreeMap<(&str, NodeRef), (u64, NodeRef, String)> = BTreeMap::new();
    for (&(a, b), t) in &tally {
        if !t.links() || !contained(a, b) || is_known(a, b) || refuted(a, b) {
            continue;
        }
        let n = t.agreements();
        let e = best.entry((a.0, b)).or_insert((0, a, String::new()));
        if n > e.0 {
            let votes = t.words(&format!("a value of {}.{}'s documents", a.0, a.1));
            // "agree in 0" read as evidence against when no inserted document was shown at all.
            let words = match shown.get(&(a, b)).filter(|s| s.votes > 0) {
                Some(s) => format!(
                    "{votes}; the inserted documents seen agree in {} of {} (an insert logged without its documents votes by the values the collection holds: inferred, not seen)",
                    crate::util::text::fmt_count(s.agreements()),
                    crate::util::text::fmt_count(s.votes)
                ),
                None => format!("{votes}; inferred, not seen: the inserts were logged without their documents, so each voted by the values the collection holds"),
            };
            *e = (n, a, words);
        }
    }
    best.into_iter()
        .map(|((_, b), (count, a, evidence))| {
            let (a, b) = if a < b { (a, b) } else { (b, a) };
            Link { a: owned(a), b: owned(b), count, seen_in: "inserts, inferred from the documents", evidence }
        })
        .collect()
}

/// Links between collections the transactions insert into together, read from their
/// documents: a source that shows a transaction's inserts but not the values its other
/// statements fix (the profiler ties no update to its session) still shows which
/// collections are written together. Two collections inserted together in at least half of
/// the transactions inserting into either (twice at least), and not linked otherwise, link
/// the pair of fields whose sampled values overlap most (Jaccard, at least
/// `MIN_CONTAINED_SHARE`), each holding `MIN_DISTINCT_VALUES` values at least; two `_id`s
/// hold the same values only by numbering and never link.
pub(crate) fn co_inserted(transactions: &[&[Query]], docs: &DocValues, known: &[Link]) -> Vec<Link> {
    let mut inserting: BTreeMap<&str, u64> = BTreeMap::new();
    let mut together: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    for ops in transactions {
        let ins: BTreeSet<&str> = ops.iter().filter(|q| q.op == Op::Insert).map(|q| q.ns.as_str()).collect();
        for a in &ins {
            *inserting.entry(a).or_default() += 1;
            for b in ins.range::<&str, _>((std::ops::Bound::Excluded(a), std::ops::Bound::Unbounded)) {
                *together.entry((a, b)).or_default() += 1;
            }
        }
    }
    let linked = |a: &str, b: &str| known.iter().any(|l| (l.a.0 == a && l.b.0 == b) || (l.a.0 == b && l.b.0 == a));
    let mut out = Vec::new();
    for ((a, b), n) in together {
        let either = inserting[a] + inserting[b] - n;
        if n < 2 || n * 2 < either || linked(a, b) {
            continue;
        }
        let (Some(fa), Some(fb)) = (docs.by_namespace.get(a), docs.by_namespace.get(b)) else { continue };
        let mut best: Option<(f64, usize, &String, &String)> = None;
        for (f, va) in fa {
            for (g, vb) in fb {
                if (f == "_id" && g == "_id") || va.len() < MIN_DISTINCT_VALUES || vb.len() < MIN_DISTINCT_VALUES {
                    continue;
                }
                let shared = va.intersection(vb).count();
                let jaccard = shared as f64 / (va.len() + vb.len() - shared) as f64;
                if jaccard >= MIN_CONTAINED_SHARE && best.is_none_or(|x| (jaccard, shared) > (x.0, x.1)) {
                    best = Some((jaccard, shared, f, g));
                }
            }
        }
        if let Some((_, _, f, g)) = best {
            out.push(Link {
                a: (a.to_string(), f.clone()),
                b: (b.to_string(), g.clone()),
                count: n,
                seen_in: "inserts together, inferred from the documents",
                evidence: format!(
                    "inserted together in {} of {either} transactions inserting into either; their documents' values overlap (inferred, no value seen in a transaction)",
                    crate::util::text::fmt_count(n)
                ),
            });
        }
    }
    out
}

/// Which of the transactions that could hold a write (`could`) is its own, by the values
/// they show: the only one whose statements fix a field the write fixes, or a field linked
/// to it, to the same value (a customer read by `_id` then updated by `_id`; the orders
/// read by `customerId`, then the customer updated). None when none or several do (two
/// transactions fixing one value, or a constant, tell nothing).
pub(crate) fn holder_by_values(w: &Query, could: &[&[Query]], links: &[Link]) -> Option<usize> {
    let domains = domains(links);
    let wanted: Vec<(Node, String)> = equalities(&w.filter)
        .into_iter()
        .flat_map(|(f, v)| {
            let node = (w.ns.clone(), f);
            let key = value_key(&v);
            let mut same: Vec<Node> = domains.iter().find(|d| d.contains(&node)).map(|d| d.iter().cloned().collect()).unwrap_or_default();
            if !same.contains(&node) {
                same.push(node);
            }
            same.into_iter().map(move |n| (n, key.clone()))
        })
        .collect();
    // A field of the same name in another collection (`carts.customerId` beside
    // `orders.customerId`) holds the same things, as a link says, until links say more: an
    // application names a reference after what it refers to. Never `_id`, every
    // collection's own numbering.
    let same_name = |n: &Node, v: &String| wanted.iter().any(|(w, wv)| w.1 != "_id" && w.1 == n.1 && wv == v);
    // The write's own fields that the transaction fixes to other values only: another
    // document of that collection (an alert updated by {tenantId, alertNo} beside a
    // transaction that inserted the same tenant's newest alert), so not that transaction's.
    let own: Vec<(Node, String)> = equalities(&w.filter).into_iter().map(|(f, v)| ((w.ns.clone(), f), value_key(&v))).collect();
    let mut holders = could.iter().enumerate().filter(|(_, ops)| {
        let f = fixed(ops);
        let contradicts = own.iter().any(|(n, v)| f.get(n).is_some_and(|vals| !vals.contains(v)));
        !contradicts
            && (wanted.iter().any(|(n, v)| f.get(n).is_some_and(|vals| vals.contains(v)))
                || f.iter().any(|(n, vals)| vals.iter().any(|v| same_name(n, v))))
    });
    match (holders.next(), holders.next()) {
        (Some((i, _)), None) => Some(i),
        _ => None,
    }
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

    /// Three transactions fix orders.customerId and customers._id to one value each time:
    /// linked; the status ("A" = code "A") and a counter fixed to 0 on both sides agree
    /// every time, but on one value: not linked.
    #[test]
    fn fields_fixed_to_the_same_varying_values_are_linked() {
        let t = |c: i32| {
            vec![
                q("s.orders", doc! {"customerId": c, "status": "A", "n": 0}),
                q("s.customers", doc! {"$and": [{"_id": {"$eq": c as i64}}], "code": "A", "m": 0.0}),
            ]
        };
        let (t1, t2, t3) = (t(7), t(8), t(9));
        let txns: Vec<&[Query]> = vec![&t1, &t2, &t3];
        let links = find(&with_fixed(&txns), &[]);
        assert_eq!(links.len(), 1, "{links:?}");
        assert_eq!(links[0].a, ("s.customers".to_string(), "_id".to_string()));
        assert_eq!(links[0].b, ("s.orders".to_string(), "customerId".to_string()));
        assert_eq!(links[0].count, 3);
        // Two different values only: not enough to tell a link from a coincidence.
        let two: Vec<&[Query]> = vec![&t1, &t2];
        assert!(find(&with_fixed(&two), &[]).is_empty());
        let d = domains(&links);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].len(), 2);
    }

    /// Only transactions where both fields show a value vote: seven transactions insert a
    /// payment (no document) and update a customer; three of them also read a payment by
    /// customerId. payments.customerId agrees with customers._id in both that show it
    /// (the insert-only ones do not vote against it): linked. Counted over all seven
    /// transactions touching both collections (the earlier rule) it was 3 of 7: not linked.
    #[test]
    fn only_transactions_showing_both_fields_vote() {
        let ins = |ns: &str| Query::new(Op::Insert, ns, Document::new(), QueryOrigin::SlowQueryLog);
        let mk = |c: i32, read: bool| {
            let mut v = vec![ins("s.payments"), q("s.customers", doc! {"_id": c})];
            if read {
                v.push(Query::new(Op::Find, "s.payments", doc! {"customerId": c}, QueryOrigin::SlowQueryLog));
            }
            v
        };
        let ts: Vec<Vec<Query>> = vec![mk(1, true), mk(2, true), mk(3, true), mk(4, false), mk(5, false), mk(6, false), mk(7, false)];
        let txns: Vec<&[Query]> = ts.iter().map(|t| t.as_slice()).collect();
        let links = find(&with_fixed(&txns), &[]);
        assert_eq!(links.len(), 1, "3 of 3 voting transactions agree, 4 more only insert: {links:?}");
        assert_eq!(links[0].count, 3);
    }

    /// The profiler shows two inserts per transaction and no value: orders and payments,
    /// inserted together every time, link on the customer id their documents share (their
    /// own ids, a running number in both, do not; the order's total, 7 values of which the
    /// payments' amounts hold 2, overlaps less).
    #[test]
    fn collections_inserted_together_link_on_the_values_their_documents_share() {
        let ins = |ns: &str| Query::new(Op::Insert, ns, Document::new(), QueryOrigin::Profiler);
        let ts: Vec<Vec<Query>> = (0..4).map(|_| vec![ins("s.orders"), ins("s.payments")]).collect();
        let mut txns: Vec<&[Query]> = ts.iter().map(|t| t.as_slice()).collect();
        let mut docs = DocValues::default();
        docs.add("s.orders", &(0..30).map(|o| doc! {"_id": o, "customerId": o % 10, "total": (o % 7) as f64}).collect::<Vec<_>>());
        docs.add(
            "s.payments",
            &(0..30).map(|o| doc! {"_id": o, "customerId": (o % 10) as i64, "amount": (o % 2) as f64}).collect::<Vec<_>>(),
        );
        let links = co_inserted(&txns, &docs, &[]);
        assert_eq!(links.len(), 1, "{links:?}");
        assert_eq!((links[0].a.1.as_str(), links[0].b.1.as_str(), links[0].count), ("customerId", "customerId", 4));
        // Inserted together in 4 of 9 transactions inserting into either: not linked.
        let alone: Vec<Vec<Query>> = (0..5).map(|_| vec![ins("s.orders")]).collect();
        txns.extend(alone.iter().map(|t| t.as_slice()));
        assert!(co_inserted(&txns, &docs, &[]).is_empty());
    }

    /// Two transactions of one client were open when a customer's update ran: the one that
    /// read that customer (by `_id`, or its orders by the linked `customerId`) holds it; when
    /// both read it, or neither, nothing tells.
    #[test]
    fn a_write_goes_to_the_one_open_transaction_that_fixes_its_value() {
        let read = |ns: &str, f: Document| Query::new(Op::Find, ns, f, QueryOrigin::Profiler);
        let upd = q("s.customers", doc! {"_id": 7});
        let a = vec![read("s.customers", doc! {"_id": 7})];
        let b = vec![read("s.customers", doc! {"_id": 8})];
        assert_eq!(holder_by_values(&upd, &[&b, &a], &[]), Some(1));
        assert_eq!(holder_by_values(&upd, &[&a, &a], &[]), None);
        assert_eq!(holder_by_values(&upd, &[&b, &b], &[]), None);
        let c = vec![read("s.orders", doc! {"customerId": 7i64})];
        let link = Link {
            a: ("s.customers".into(), "_id".into()),
            b: ("s.orders".into(), "customerId".into()),
            count: 3,
            seen_in: "transactions",
            evidence: String::new(),
        };
        assert_eq!(holder_by_values(&upd, &[&b, &c], &[]), None, "not linked: the orders' customerId tells nothing");
        assert_eq!(holder_by_values(&upd, &[&b, &c], &[link]), Some(1));
        // An inserted document fixes its values; a field of the same name (not _id) in
        // another collection counts as linked: a cart emptied for customer 7 is the
        // transaction's that inserted customer 7's order.
        let mut ins = Query::new(Op::Insert, "s.orders", doc! {}, QueryOrigin::Profiler);
        ins.inserted = vec![doc! {"_id": 7, "customerId": 7i64}];
        let d = vec![ins];
        let empty = q("s.carts", doc! {"customerId": 7i64});
        assert_eq!(holder_by_values(&empty, &[&b, &d], &[]), Some(1));
        assert_eq!(holder_by_values(&q("s.carts", doc! {"_id": 7}), &[&b, &d], &[]), None, "_id is each collection's own");
        // A new-user trial (Node driver, concurrent workers, one client): a transaction
        // inserted tenant t1's alert 15 while another worker updated t1's alert 9 outside any
        // transaction. The tenant agrees, the alert number does not: another document.
        let mut raise = Query::new(Op::Insert, "s.alerts", doc! {}, QueryOrigin::Profiler);
        raise.inserted = vec![doc! {"tenantId": "t1", "alertNo": 15}];
        let raised = vec![raise];
        assert_eq!(holder_by_values(&q("s.alerts", doc! {"tenantId": "t1", "alertNo": 9}), &[&b, &raised], &[]), None);
        assert_eq!(holder_by_values(&q("s.alerts", doc! {"tenantId": "t1", "alertNo": 15}), &[&b, &raised], &[]), Some(1));
    }

    /// Orders are inserted without their document beside an update of the customer: the
    /// orders' documents hold customerId values that are customers' _id values, and each
    /// transaction's customer is among them: orders.customerId is inferred linked. The
    /// orders' own _id (1000+) holds no customer id; `qty` holds the customers' ids'
    /// values only by chance (containment fails: most of its values are no customer's).
    #[test]
    fn an_inserted_collection_is_linked_through_its_documents() {
        let ins = Query::new(Op::Insert, "s.orders", Document::new(), QueryOrigin::SlowQueryLog);
        let ts: Vec<Vec<Query>> = (0..6).map(|c| vec![ins.clone(), q("s.customers", doc! {"_id": c})]).collect();
        let txns: Vec<&[Query]> = ts.iter().map(|t| t.as_slice()).collect();
        assert!(find(&with_fixed(&txns), &[]).is_empty(), "nothing the log shows links them");
        let mut docs = DocValues::default();
        docs.add("s.customers", &(0..10).map(|c| doc! {"_id": c, "name": format!("c{c}")}).collect::<Vec<_>>());
        docs.add("s.orders", &(0..40).map(|o| doc! {"_id": 1000 + o, "customerId": (o % 10) as i64, "qty": o}).collect::<Vec<_>>());
        let links = inferred(&with_fixed(&txns), &docs, &[]);
        assert_eq!(links.len(), 1, "{links:?}");
        assert_eq!(
            (links[0].a.clone(), links[0].b.clone()),
            (("s.customers".into(), "_id".into()), ("s.orders".into(), "customerId".into()))
        );
        assert_eq!(links[0].count, 6);
        assert!(links[0].seen_in.contains("inferred from the documents"));
        // No inserted document shown: said so, not "agree in 0" (a trial read it as against).
        assert_eq!(
            links[0].evidence,
            "in 6 of 6 transactions showing both, a value of s.orders.customerId's documents (6 different values); inferred, not seen: the inserts were logged without their documents, so each voted by the values the collection holds"
        );
    }

    /// Issue 49 item 5: devices `_id` 1..20 and events `sensorId` 1..20, different entities.
    /// Six transactions update device `d` and insert an event whose document (shown, as the
    /// Node driver's insertOne sends it) holds sensor `d + 1`: never the same value in one
    /// transaction (hand count: 0 of 6). The events' documents hold every value 1..20, so the
    /// held-value vote alone agreed 6 of 6 and linked them; the shown documents refute it.
    /// With sensor `d` in each document the link stands, resting on 6 of 6 the same value.
    #[test]
    fn overlapping_ranges_without_the_same_value_in_a_transaction_link_nothing() {
        let mut docs = DocValues::default();
        docs.add("s.devices", &(1..=20).map(|d| doc! {"_id": d}).collect::<Vec<_>>());
        docs.add("s.events", &(0..60).map(|e| doc! {"_id": 1000 + e, "sensorId": 1 + e % 20}).collect::<Vec<_>>());
        let mk = |d: i32, sensor: i32| {
            let mut ins = Query::new(Op::Insert, "s.events", Document::new(), QueryOrigin::SlowQueryLog);
            ins.inserted = vec![doc! {"_id": 5000 + d, "sensorId": sensor}];
            vec![q("s.devices", doc! {"_id": d}), ins]
        };
        let apart: Vec<Vec<Query>> = (1..=6).map(|d| mk(d, d + 1)).collect();
        let txns: Vec<&[Query]> = apart.iter().map(|t| t.as_slice()).collect();
        let found = find(&with_fixed(&txns), &[]);
        assert!(found.is_empty(), "{found:?}");
        assert!(inferred(&with_fixed(&txns), &docs, &found).is_empty(), "{:?}", inferred(&with_fixed(&txns), &docs, &found));
        let same: Vec<Vec<Query>> = (1..=6).map(|d| mk(d, d)).collect();
        let txns: Vec<&[Query]> = same.iter().map(|t| t.as_slice()).collect();
        let found = find(&with_fixed(&txns), &[]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].a.1.as_str(), found[0].b.1.as_str(), found[0].count), ("_id", "sensorId", 6));
        assert_eq!(found[0].evidence, "in 6 of 6 transactions showing both, the same value (6 different values)");
    }
}
