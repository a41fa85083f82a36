//! The server's own read/write distribution tests, ported as tables: each row names
//! its source test in `src/mongo/db/s/analyze_shard_key_read_write_distribution_test.cpp`
//! (mongodb/mongo) and asserts the same label and the same `numDispatchedByRange` over the
//! same chunks. The server's collators are replaced by `{locale: "en_US", strength: 1}`
//! documents (we only need to know that a collation is not simple); its random choice of
//! read command is replaced by `find`.

use bson::{doc, Bson, Document};
use shardkey::bsonx::hash64;
use shardkey::metrics::distribution::DistributionCounter;
use shardkey::metrics::ranges::Ranges;
use shardkey::model::{Op, Query, QueryOrigin, ShardKey};
use shardkey::targeting::{target_query, Label, Label::*};

/// A key and the split points of its three chunks (the test fixture's ChunkSplitInfo).
struct Chunks {
    key: ShardKey,
    ranges: Ranges,
}

fn chunks(key: &str, split_points: Vec<Vec<Bson>>) -> Chunks {
    Chunks { key: ShardKey::parse(key).unwrap(), ranges: Ranges { split_points } }
}

/// {a.x: MinKey, b.y: MinKey} → {a.x: -100, b.y: "A"} → {a.x: 100, b.y: "A"} → MaxKey
fn range_sharding_0() -> Chunks {
    chunks("{\"a.x\": 1, \"b.y\": 1}", vec![vec![Bson::Int32(-100), "A".into()], vec![Bson::Int32(100), "A".into()]])
}

/// The same split points with b.y hashed.
fn hashed_sharding_0() -> Chunks {
    let h = Bson::Int64(hash64(&Bson::String("A".into())));
    chunks("{\"a.x\": 1, \"b.y\": \"hashed\"}", vec![vec![Bson::Int32(-100), h.clone()], vec![Bson::Int32(100), h]])
}

/// {a: MinKey, b.y: MinKey} → {a: {x: -100}, b.y: "A"} → {a: {x: 100}, b.y: "A"} → MaxKey
fn range_sharding_1() -> Chunks {
    chunks(
        "{a: 1, \"b.y\": 1}",
        vec![vec![Bson::Document(doc! {"x": -100}), "A".into()], vec![Bson::Document(doc! {"x": 100}), "A".into()]],
    )
}

/// {a: MinKey} → {a: -4611686018427387902} → {a: 4611686018427387902} → MaxKey, a hashed
fn hashed_sharding_2() -> Chunks {
    chunks("{a: \"hashed\"}", vec![vec![Bson::Int64(-4611686018427387902)], vec![Bson::Int64(4611686018427387902)]])
}

fn case_insensitive() -> Document {
    doc! {"locale": "en_US", "strength": 1, "caseLevel": false}
}

fn simple() -> Document {
    doc! {"locale": "simple"}
}

/// One read row: (source test, chunks, filter, query collation, collection default collation, label, numDispatchedByRange).
type Row = (&'static str, Chunks, Document, Option<Document>, Option<Document>, Label, [u64; 3]);

fn check_reads(rows: Vec<Row>) {
    let mut wrong = Vec::new();
    for (source, c, filter, collation, default, want_label, want_ranges) in rows {
        let mut q = Query::new(Op::Find, "testDb.testColl", filter.clone(), QueryOrigin::SampledQueries);
        q.collation = collation.clone();
        let label = target_query(&c.key, &q, default.as_ref()).label;
        let mut d = DistributionCounter::new(&c.ranges);
        d.add(&c.key, &q, default.as_ref(), &c.ranges);
        let by_range = d.read_distribution().num_reads_by_range;
        if label != want_label || by_range != want_ranges {
            wrong.push(format!(
                "{source}: key {} filter {filter} collation {collation:?} default {default:?}: got {label:?} {by_range:?}, want {want_label:?} {want_ranges:?}",
                c.key
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn read_distribution_filter_by_shard_key_equality() {
    let none = || None;
    check_reads(vec![
        ("ShardKeyEqualityOrdered", range_sharding_0(), doc! {"a.x": -100, "b.y": "A"}, none(), none(), SingleShard, [0, 1, 0]),
        ("ShardKeyEqualityOrdered", range_sharding_0(), doc! {"a": {"x": 0}, "b.y": "A"}, none(), none(), SingleShard, [0, 1, 0]),
        ("ShardKeyEqualityOrdered", range_sharding_0(), doc! {"a": {"x": 0}, "b": {"y": "A"}}, none(), none(), SingleShard, [0, 1, 0]),
        ("ShardKeyEqualityNotOrdered", range_sharding_0(), doc! {"b.y": "A", "a.x": 0}, none(), none(), SingleShard, [0, 1, 0]),
        ("ShardKeyEqualityEveryFieldIsNull", range_sharding_0(), doc! {"a.x": null, "b.y": null}, none(), none(), SingleShard, [1, 0, 0]),
        ("ShardKeyEqualityPrefixFieldIsNull", range_sharding_0(), doc! {"a.x": null, "b.y": "A"}, none(), none(), SingleShard, [1, 0, 0]),
        ("ShardKeyEqualitySuffixFieldIsNull", range_sharding_0(), doc! {"a.x": 0, "b.y": null}, none(), none(), SingleShard, [0, 1, 0]),
        ("ShardKeyEqualityAdditionalFields", range_sharding_0(), doc! {"_id": 0, "a.x": 100, "b.y": "A"}, none(), none(), SingleShard, [0, 0, 1]),
        // Non-simple collation, collatable key value: the default collation, or the query's.
        ("ShardKeyEqualityNonSimpleCollation_ShardKeyContainsCollatableFields (default)", range_sharding_0(), doc! {"a.x": -100, "b.y": "A"}, Some(doc! {}), Some(case_insensitive()), MultiShard, [1, 1, 0]),
        ("ShardKeyEqualityNonSimpleCollation_ShardKeyContainsCollatableFields (query, simple default)", range_sharding_0(), doc! {"a.x": -100, "b.y": "A"}, Some(case_insensitive()), Some(simple()), MultiShard, [1, 1, 0]),
        ("ShardKeyEqualityNonSimpleCollation_ShardKeyContainsCollatableFields (query, no default)", range_sharding_0(), doc! {"a.x": -100, "b.y": "A"}, Some(case_insensitive()), none(), MultiShard, [1, 1, 0]),
        ("ShardKeyEqualityNonSimpleCollation_ShardKeyContainsCollatableFields (hashed, default)", hashed_sharding_0(), doc! {"a.x": -100, "b.y": "A"}, Some(doc! {}), Some(case_insensitive()), MultiShard, [1, 1, 0]),
        ("ShardKeyEqualityNonSimpleCollation_ShardKeyContainsCollatableFields (hashed, query)", hashed_sharding_0(), doc! {"a.x": -100, "b.y": "A"}, Some(case_insensitive()), none(), MultiShard, [1, 1, 0]),
        // Non-simple collation, no collatable value: still one point.
        ("ShardKeyEqualityNonSimpleCollation_ShardKeyDoesNotContainCollatableFields (default)", range_sharding_0(), doc! {"a.x": -100, "b.y": 0}, Some(doc! {}), Some(case_insensitive()), SingleShard, [1, 0, 0]),
        ("ShardKeyEqualityNonSimpleCollation_ShardKeyDoesNotContainCollatableFields (query)", range_sharding_0(), doc! {"a.x": -100, "b.y": 0}, Some(case_insensitive()), Some(simple()), SingleShard, [1, 0, 0]),
        ("ShardKeyEqualityNonSimpleCollation_ShardKeyDoesNotContainCollatableFields (query, no default)", range_sharding_0(), doc! {"a.x": -100, "b.y": 0}, Some(case_insensitive()), none(), SingleShard, [1, 0, 0]),
        // Simple collation however it is reached.
        ("ShardKeyEqualitySimpleCollation (simple default)", range_sharding_0(), doc! {"a.x": -100, "b.y": "A"}, Some(doc! {}), Some(simple()), SingleShard, [0, 1, 0]),
        ("ShardKeyEqualitySimpleCollation (query simple over a non-simple default)", range_sharding_0(), doc! {"a.x": -100, "b.y": "A"}, Some(simple()), Some(case_insensitive()), SingleShard, [0, 1, 0]),
        ("ShardKeyEqualitySimpleCollation (query simple, no default)", range_sharding_0(), doc! {"a.x": -100, "b.y": "A"}, Some(simple()), none(), SingleShard, [0, 1, 0]),
        ("ShardKeyEqualitySimpleCollation (none)", range_sharding_0(), doc! {"a.x": -100, "b.y": "A"}, none(), none(), SingleShard, [0, 1, 0]),
        // hash(-100) = -1979677326953392702: the middle chunk.
        ("ShardKeyEqualityHashed", hashed_sharding_2(), doc! {"a": -100}, none(), none(), SingleShard, [0, 1, 0]),
    ]);
}

#[test]
fn read_distribution_filter_by_shard_key_range() {
    let none = || None;
    check_reads(vec![
        ("ShardKeyPrefixEqualityDotted", range_sharding_0(), doc! {"a.x": 0}, none(), none(), MultiShard, [0, 1, 0]),
        ("ShardKeyPrefixEqualityNotDotted", range_sharding_1(), doc! {"a": {"x": 0}}, none(), none(), MultiShard, [0, 1, 0]),
        ("ShardKeyPrefixRangeMinKey", range_sharding_0(), doc! {"a.x": {"$lt": 1}}, none(), none(), MultiShard, [1, 1, 0]),
        ("ShardKeyPrefixRangeMaxKey", range_sharding_0(), doc! {"a.x": {"$gte": 2}}, none(), none(), MultiShard, [0, 1, 1]),
        ("ShardKeyPrefixRangeNoMinOrMaxKey", range_sharding_0(), doc! {"a.x": {"$gte": -3, "$lt": 3}}, none(), none(), MultiShard, [0, 1, 0]),
        ("FullShardKeyRange", range_sharding_0(), doc! {"a.x": {"$gte": -4, "$lt": 4}, "b.y": {"$gte": "A", "$lt": "Z"}}, none(), none(), MultiShard, [0, 1, 0]),
        ("ShardKeyNonEquality", range_sharding_0(), doc! {"a.x": {"$ne": 5}}, none(), none(), MultiShard, [1, 1, 1]),
        ("ShardKeyRangeHashed", hashed_sharding_2(), doc! {"a": {"$gte": -100}}, none(), none(), ScatterGather, [1, 1, 1]),
    ]);
}

#[test]
fn read_distribution_not_filter_by_shard_key() {
    let none = || None;
    check_reads(vec![
        ("ShardKeySuffixEquality", range_sharding_0(), doc! {"b.y": "A"}, none(), none(), ScatterGather, [1, 1, 1]),
        ("NoShardKey", range_sharding_0(), doc! {"_id": 1}, none(), none(), ScatterGather, [1, 1, 1]),
        // {a: {x: 0}} does not bound the key field a.x.
        ("ShardKeyPrefixEqualityNotDotted", range_sharding_0(), doc! {"a": {"x": 0}}, none(), none(), ScatterGather, [1, 1, 1]),
        // {a.x: 0} does not bound the key field a.
        ("ShardKeyPrefixEqualityDotted", range_sharding_1(), doc! {"a.x": 0}, none(), none(), ScatterGather, [1, 1, 1]),
    ]);
}

#[test]
fn the_hash_the_server_test_names() {
    // "The hash of -100 is -1979677326953392702LL" (ShardKeyEqualityHashed).
    assert_eq!(hash64(&Bson::Int32(-100)), -1979677326953392702);
}

/// One write row: (source test, chunks, filter, query collation, default collation, label, numDispatchedByRange).
/// Each is run as an update ({$set: {c: ...}}), a delete and a findAndModify, single and multi:
/// a write that fixes the whole key by equality is never a write without shard key.
fn check_writes(rows: Vec<Row>) {
    use shardkey::model::UpdateSpec;
    let mut wrong = Vec::new();
    for (source, c, filter, collation, default, want_label, want_ranges) in rows {
        for (op, multi) in [(Op::Update, false), (Op::Update, true), (Op::Delete, false), (Op::Delete, true), (Op::FindAndModify, false)] {
            let mut q = Query::new(op, "testDb.testColl", filter.clone(), QueryOrigin::SampledQueries);
            q.collation = collation.clone();
            q.multi = multi;
            if op != Op::Delete {
                q.update = Some(UpdateSpec::Modifiers(doc! {"$set": {"c": -100}}));
            }
            let mut d = DistributionCounter::new(&c.ranges);
            d.add(&c.key, &q, default.as_ref(), &c.ranges);
            let w = d.write_distribution();
            let label = target_query(&c.key, &q, default.as_ref()).label;
            let without = (
                w.percentage_of_single_writes_without_shard_key.unwrap_or(-1.0),
                w.percentage_of_multi_writes_without_shard_key.unwrap_or(-1.0),
            );
            if label != want_label || w.num_writes_by_range != want_ranges || without != (0.0, 0.0) {
                wrong.push(format!(
                    "{source} ({op:?}, multi {multi}): key {} filter {filter}: got {label:?} {:?} without-key {without:?}, want {want_label:?} {want_ranges:?} (0, 0)",
                    c.key, w.num_writes_by_range
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn write_distribution_filter_by_shard_key_equality() {
    let none = || None;
    check_writes(vec![
        ("ShardKeyEqualityOrdered", range_sharding_0(), doc! {"a.x": -100, "b.y": "A"}, none(), none(), SingleShard, [0, 1, 0]),
        ("ShardKeyEqualityOrdered", range_sharding_0(), doc! {"a": {"x": 0}, "b.y": "A"}, none(), none(), SingleShard, [0, 1, 0]),
        ("ShardKeyEqualityOrdered", range_sharding_0(), doc! {"a": {"x": 0}, "b": {"y": "A"}}, none(), none(), SingleShard, [0, 1, 0]),
        ("ShardKeyEqualityNotOrdered", range_sharding_0(), doc! {"b.y": "A", "a.x": 0}, none(), none(), SingleShard, [0, 1, 0]),
        ("ShardKeyEqualityAdditionalFields", range_sharding_0(), doc! {"_id": 0, "a.x": 100, "b.y": "A"}, none(), none(), SingleShard, [0, 0, 1]),
        ("ShardKeyEqualityNonSimpleCollation_ShardKeyContainsCollatableFields (default)", range_sharding_0(), doc! {"a.x": -100, "b.y": "A"}, Some(doc! {}), Some(case_insensitive()), MultiShard, [1, 1, 0]),
        ("ShardKeyEqualityNonSimpleCollation_ShardKeyContainsCollatableFields (query)", range_sharding_0(), doc! {"a.x": -100, "b.y": "A"}, Some(case_insensitive()), Some(simple()), MultiShard, [1, 1, 0]),
        ("ShardKeyEqualityNonSimpleCollation_ShardKeyContainsCollatableFields (hashed)", hashed_sharding_0(), doc! {"a.x": -100, "b.y": "A"}, Some(case_insensitive()), none(), MultiShard, [1, 1, 0]),
        ("ShardKeyEqualityNonSimpleCollation_ShardKeyDoesNotContainCollatableFields", range_sharding_0(), doc! {"a.x": -100, "b.y": 0}, Some(case_insensitive()), none(), SingleShard, [1, 0, 0]),
        ("ShardKeyEqualitySimpleCollation", range_sharding_0(), doc! {"a.x": -100, "b.y": "A"}, Some(simple()), Some(case_insensitive()), SingleShard, [0, 1, 0]),
        ("ShardKeyEqualityHashed", hashed_sharding_2(), doc! {"a": -100}, none(), none(), SingleShard, [0, 1, 0]),
        ("ShardKeyEqualityEveryFieldIsNull", range_sharding_0(), doc! {"a.x": null, "b.y": null}, none(), none(), SingleShard, [1, 0, 0]),
        ("ShardKeyEqualityPrefixFieldIsNull", range_sharding_0(), doc! {"a.x": null, "b.y": "A"}, none(), none(), SingleShard, [1, 0, 0]),
        ("ShardKeyEqualitySuffixFieldIsNull", range_sharding_0(), doc! {"a.x": 0, "b.y": null}, none(), none(), SingleShard, [0, 1, 0]),
    ]);
}
