//! Targeting rules as (key, query, collation) → label tables, following the
//! server's analyzeShardKey and shard_key_pattern tests.

use bson::{doc, Document};
use shardkey::metrics::distribution::DistributionCounter;
use shardkey::metrics::ranges::Ranges;
use shardkey::model::{Op, Query, QueryOrigin, ShardKey, UpdateSpec};
use shardkey::targeting::{target_filter, target_query, Label, Label::*};

fn key(k: &str) -> ShardKey {
    ShardKey::parse(k).unwrap()
}

fn label(k: &str, filter: Document, collation: Option<Document>, default: Option<Document>) -> Label {
    let mut q = Query::new(Op::Find, "d.c", filter, QueryOrigin::SampledQueries);
    q.collation = collation;
    target_query(&key(k), &q, default.as_ref()).label
}

fn check(table: Vec<(&str, Document, Label)>) {
    for (k, f, want) in table {
        let got = label(k, f.clone(), None, None);
        assert_eq!(got, want, "key {k} filter {f}");
    }
}

#[test]
fn equality_prefix_in_ne_or_ranges() {
    check(vec![
        ("{a: 1}", doc! {"a": 5}, SingleShard),
        ("{a: 1}", doc! {"a": {"$eq": 5}}, SingleShard),
        ("{a: 1}", doc! {"a": 5, "b": 7}, SingleShard),
        ("{a: 1}", doc! {"a": null}, SingleShard),
        ("{a: 1}", doc! {"a": {"$in": [5]}}, SingleShard),
        ("{a: 1}", doc! {"a": {"$in": [5, 6]}}, MultiShard),
        ("{a: 1}", doc! {"a": {"$ne": 5}}, MultiShard),
        ("{a: 1}", doc! {"a": {"$nin": [5, 6]}}, MultiShard),
        ("{a: 1}", doc! {"a": {"$gt": 5}}, MultiShard),
        ("{a: 1}", doc! {"a": {"$gte": 5, "$lt": 9}}, MultiShard),
        ("{a: 1}", doc! {"a": {"$exists": false}}, MultiShard),
        ("{a: 1}", doc! {"a": {"$exists": true}}, ScatterGather),
        ("{a: 1}", doc! {"a": [1, 2]}, MultiShard),
        ("{a: 1}", doc! {"$or": [{"a": 1}, {"a": 2}]}, MultiShard),
        ("{a: 1}", doc! {"$or": [{"a": 1}]}, SingleShard),
        ("{a: 1}", doc! {"$or": [{"a": 1}, {"b": 2}]}, ScatterGather),
        ("{a: 1}", doc! {"$and": [{"a": 1}, {"b": 2}]}, SingleShard),
        ("{a: 1}", doc! {"$and": [{"a": 1}, {"a": 1}]}, MultiShard),
        ("{a: 1}", doc! {"b": 1}, ScatterGather),
        ("{a: 1}", doc! {}, ScatterGather),
        ("{a: 1}", doc! {"a": {"$regex": "^abc"}}, MultiShard),
        ("{a: 1}", doc! {"a": {"$elemMatch": {"x": 1}}}, ScatterGather),
        ("{a: 1}", doc! {"a": 1, "$text": {"$search": "x"}}, SingleShard),
        ("{a: 1}", doc! {"a": {"$gt": 1}, "$text": {"$search": "x"}}, ScatterGather),
        // compound keys
        ("{a: 1, b: 1}", doc! {"a": 1, "b": 2}, SingleShard),
        ("{a: 1, b: 1}", doc! {"b": 2, "a": 1}, SingleShard),
        ("{a: 1, b: 1}", doc! {"a": 1}, MultiShard),
        ("{a: 1, b: 1}", doc! {"a": 1, "b": {"$gt": 2}}, MultiShard),
        ("{a: 1, b: 1}", doc! {"a": {"$in": [1, 2]}, "b": 2}, MultiShard),
        ("{a: 1, b: 1}", doc! {"b": 2}, ScatterGather),
        ("{a: 1, b: 1}", doc! {"a": {"$gt": 1}}, MultiShard),
    ]);
}

#[test]
fn hashed_fields() {
    check(vec![
        ("{a: \"hashed\"}", doc! {"a": 5}, SingleShard),
        ("{a: \"hashed\"}", doc! {"a": {"$in": [5, 6]}}, MultiShard),
        ("{a: \"hashed\"}", doc! {"a": {"$gt": 5}}, ScatterGather),
        ("{a: \"hashed\"}", doc! {"a": {"$ne": 5}}, ScatterGather),
        ("{a: \"hashed\"}", doc! {"a": {"$regex": "^x"}}, ScatterGather),
        ("{a: 1, b: \"hashed\"}", doc! {"a": 1, "b": 2}, SingleShard),
        ("{a: 1, b: \"hashed\"}", doc! {"a": 1, "b": {"$gt": 2}}, MultiShard),
        ("{a: \"hashed\", b: 1}", doc! {"a": {"$gt": 1}, "b": 2}, ScatterGather),
    ]);
}

#[test]
fn dotted_paths_versus_embedded_documents() {
    // As the server's ShardKeyPattern ExtractQueryShardKeyNested test: for key
    // `a.b`, an equality on the parent object fixes a.b; an operator nested in
    // the object literal does not; for key `a`, a dotted predicate on a.x does not fix `a`.
    check(vec![
        ("{\"a.b\": 1}", doc! {"a.b": 10}, SingleShard),
        ("{\"a.b\": 1}", doc! {"a.b": {"$eq": 10}}, SingleShard),
        ("{\"a.b\": 1}", doc! {"a": {"b": 10}}, SingleShard),
        ("{\"a.b\": 1}", doc! {"a": {"b": 10, "d": 40}}, SingleShard),
        ("{\"a.b\": 1}", doc! {"a": {"b": {"$eq": 10}}}, ScatterGather),
        ("{\"a.b\": 1}", doc! {"a": {"d": 40}}, ScatterGather),
        ("{\"a.b\": 1}", doc! {"a": [{"b": 10}]}, ScatterGather),
        ("{\"a.b\": 1}", doc! {"a": 10}, ScatterGather),
        ("{\"a.b\": 1}", doc! {"a.b": {"$gt": 1}}, MultiShard),
        ("{a: 1}", doc! {"a.x": 0}, ScatterGather),
        ("{a: 1}", doc! {"a": {"x": 0}}, SingleShard),
        ("{\"a.b\": \"hashed\"}", doc! {"a": {"b": "12345"}}, SingleShard),
    ]);
}

/// (key, filter, query collation, default collation, label)
type CollationRow = (&'static str, Document, Option<Document>, Option<Document>, Label);

#[test]
fn collation() {
    let en = doc! {"locale": "en", "strength": 2};
    let simple = doc! {"locale": "simple"};
    let table: Vec<CollationRow> = vec![
        // A non-simple collation makes a string equality bound nothing: the single-field key spans
        // its whole range (reference "Read/write classification"; analyzeShardKey.md, corrected).
        ("{a: 1}", doc! {"a": "x"}, Some(en.clone()), None, ScatterGather),
        ("{a: 1}", doc! {"a": "x"}, None, Some(en.clone()), ScatterGather),
        ("{a: 1}", doc! {"a": "x"}, Some(simple.clone()), Some(en.clone()), SingleShard),
        ("{a: 1}", doc! {"a": 5}, Some(en.clone()), None, SingleShard),
        ("{a: 1}", doc! {"a": null}, None, Some(en.clone()), SingleShard),
        ("{a: 1}", doc! {"a": {"x": 1}}, Some(en.clone()), None, ScatterGather),
        ("{a: 1}", doc! {"a": ["x"]}, Some(en.clone()), None, ScatterGather),
        ("{a: 1, b: 1}", doc! {"a": 5, "b": "s"}, Some(en.clone()), None, MultiShard),
        ("{a: 1}", doc! {"a": {"$gt": "m"}}, Some(en.clone()), None, ScatterGather),
        ("{a: 1}", doc! {"a": {"$gt": 5}}, Some(en.clone()), None, MultiShard),
        ("{a: \"hashed\"}", doc! {"a": "x"}, Some(en.clone()), None, ScatterGather),
        // An unbounded first field leaves the whole key range, whatever the second.
        ("{a: 1, b: 1}", doc! {"a": "s", "b": 5}, Some(en.clone()), None, ScatterGather),
        ("{a: 1, b: 1}", doc! {"a": "s", "b": {"$gt": 5}}, None, None, MultiShard),
    ];
    for (k, f, c, d, want) in table {
        assert_eq!(label(k, f.clone(), c.clone(), d.clone()), want, "key {k} filter {f} collation {c:?} default {d:?}");
    }
}

#[test]
fn expr_eq_with_let_variables() {
    let k = key("{a: 1}");
    let f = doc! {"$expr": {"$eq": ["$a", "$$v"]}};
    assert_eq!(target_filter(&k, &f, true, Some(&doc! {"v": 3})).label, SingleShard);
    assert_eq!(target_filter(&k, &f, true, None).label, ScatterGather, "unknown variable");
    let f = doc! {"$expr": {"$eq": ["$$v", "$a"]}};
    assert_eq!(target_filter(&k, &f, true, Some(&doc! {"v": 3})).label, SingleShard);
    let f = doc! {"$expr": {"$lt": ["$a", 3]}};
    assert_eq!(target_filter(&k, &f, true, None).label, ScatterGather);
    // Several equalities under $and inside $expr, with let (reference: the equality fast path).
    let k2 = key("{a: 1, b: 1}");
    let f = doc! {"$expr": {"$and": [{"$eq": ["$a", "$$v"]}, {"$eq": ["$b", "x"]}]}};
    assert_eq!(target_filter(&k2, &f, true, Some(&doc! {"v": 3})).label, SingleShard);
    assert_eq!(target_filter(&k, &f, true, Some(&doc! {"v": 3})).label, SingleShard);
    let f = doc! {"$expr": {"$and": [{"$eq": ["$a", "$$v"]}, {"$lt": ["$b", 3]}]}};
    assert_eq!(target_filter(&k2, &f, true, Some(&doc! {"v": 3})).label, MultiShard, "prefix equality only");
}

fn write(op: Op, filter: Document, multi: bool, upsert: bool, u: Option<UpdateSpec>) -> Query {
    let mut q = Query::new(op, "d.c", filter, QueryOrigin::SlowQueryLog);
    q.multi = multi;
    q.upsert = upsert;
    q.update = u;
    q
}

#[test]
fn replacement_updates_by_exact_id() {
    let k = key("{a: 1}");
    let repl = Some(UpdateSpec::Replacement(doc! {"a": 5, "x": 1}));
    let q = write(Op::Update, doc! {"_id": 7}, false, false, repl.clone());
    assert_eq!(target_query(&k, &q, None).label, SingleShard);
    let q = write(Op::Update, doc! {"_id": 7}, false, true, repl.clone());
    assert_eq!(target_query(&k, &q, None).label, ScatterGather, "upsert is not routed by the replacement");
    // The server's isExactIdQuery: `_id` fixed by equality, other predicates beside it
    // ({foo: <anything>, _id: 1} => true; {_id: {$lt: 30}} => false; write_without_shard_key_util.cpp).
    let q = write(Op::Update, doc! {"_id": 7, "y": {"$gt": 1}}, false, false, repl.clone());
    assert_eq!(target_query(&k, &q, None).label, SingleShard, "an _id equality among other predicates");
    let q = write(Op::Update, doc! {"$and": [{"_id": {"$eq": 7}}, {"y": 1}]}, false, false, repl.clone());
    assert_eq!(target_query(&k, &q, None).label, SingleShard, "_id equality under $and");
    let q = write(Op::Update, doc! {"_id": {"$lt": 30}}, false, false, repl.clone());
    assert_eq!(target_query(&k, &q, None).label, ScatterGather, "a range on _id is not exact");
    let q = write(Op::Update, doc! {"y": 1}, false, false, repl.clone());
    assert_eq!(target_query(&k, &q, None).label, ScatterGather, "no _id at all");
    // A string _id under an explicit collation other than the default: not exact.
    let mut q = write(Op::Update, doc! {"_id": "s"}, false, false, repl.clone());
    q.collation = Some(doc! {"locale": "fr"});
    assert_eq!(target_query(&k, &q, None).label, ScatterGather, "collatable _id under another collation");
    q.filter = doc! {"_id": 7};
    assert_eq!(target_query(&k, &q, None).label, SingleShard, "a numeric _id is not collatable");
    let q = write(Op::Update, doc! {"_id": 7}, false, false, Some(UpdateSpec::Modifiers(doc! {"$set": {"a": 1}})));
    assert_eq!(target_query(&k, &q, None).label, ScatterGather, "modifiers carry no key");
}

#[test]
fn write_distribution_counts_multi_findandmodify_and_key_updates() {
    let k = key("{a: 1}");
    let ranges = Ranges::cut(&shardkey::model::KeySpace::default(), 100);
    let mut d = DistributionCounter::new(&ranges);
    let set_a = Some(UpdateSpec::Modifiers(doc! {"$set": {"a": 2}}));
    let set_x = Some(UpdateSpec::Modifiers(doc! {"$set": {"x": 2}}));
    let writes = [
        write(Op::Update, doc! {"a": 1}, false, false, set_x.clone()), // single shard
        write(Op::Update, doc! {"b": 1}, true, false, set_x.clone()),  // multi without key
        write(Op::Update, doc! {"b": 1}, false, false, set_a.clone()), // single without key + key update
        write(Op::Delete, doc! {"b": 1}, true, false, None),           // multi without key
        write(Op::FindAndModify, doc! {"b": 1}, true, false, set_x),   // always single
    ];
    for w in &writes {
        d.add(&k, w, None, &ranges);
    }
    let ins = write(Op::Insert, doc! {}, false, false, None);
    assert_eq!(d.add(&k, &ins, None, &ranges), None);
    let wd = d.write_distribution();
    assert_eq!(wd.sample_size.total, 5);
    assert_eq!(wd.sample_size.update, 3);
    assert_eq!(wd.sample_size.delete, 1);
    assert_eq!(wd.sample_size.find_and_modify, 1);
    assert_eq!(wd.sample_size.insert, 1);
    assert_eq!(wd.percentage_of_single_shard_writes, Some(20.0));
    assert_eq!(wd.percentage_of_scatter_gather_writes, Some(80.0));
    assert_eq!(wd.percentage_of_multi_writes_without_shard_key, Some(40.0));
    assert_eq!(wd.percentage_of_single_writes_without_shard_key, Some(40.0));
    assert_eq!(wd.percentage_of_shard_key_updates, Some(20.0));
    // sampled queries count key updates from their diffs only
    let mut sq = write(Op::Update, doc! {"b": 1}, false, false, set_a_clone());
    sq.origin = QueryOrigin::SampledQueries;
    let mut d2 = DistributionCounter::new(&ranges);
    d2.add(&k, &sq, None, &ranges);
    assert_eq!(d2.write_distribution().percentage_of_shard_key_updates, Some(0.0));
    d2.add_diff(&k, &doc! {"a": "u"});
    assert_eq!(d2.write_distribution().percentage_of_shard_key_updates, Some(100.0));
}

fn set_a_clone() -> Option<UpdateSpec> {
    Some(UpdateSpec::Modifiers(doc! {"$set": {"a": 2}}))
}

#[test]
fn reads_by_range_follow_the_bounds() {
    let k = key("{a: 1}");
    let values = shardkey::model::KeySpace::from_values((0..100).map(|i| (vec![bson::Bson::Int32(i)], 1)).collect());
    let ranges = Ranges::cut(&values, 10);
    let mut d = DistributionCounter::new(&ranges);
    for f in [doc! {"a": 5}, doc! {"a": {"$gte": 15, "$lt": 35}}, doc! {"b": 1}] {
        d.add(&k, &Query::new(Op::Find, "d.c", f, QueryOrigin::Profiler), None, &ranges);
    }
    let rd = d.read_distribution();
    // point 5 -> range 0; [15, 35) -> ranges 1..=3; scatter -> all ten
    assert_eq!(rd.num_reads_by_range, vec![2, 2, 2, 2, 1, 1, 1, 1, 1, 1]);
    assert_eq!(rd.sample_size.find, 3);
}
