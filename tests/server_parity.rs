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
        (
            "ShardKeyEqualityAdditionalFields",
            range_sharding_0(),
            doc! {"_id": 0, "a.x": 100, "b.y": "A"},
            none(),
            none(),
            SingleShard,
            [0, 0, 1],
        ),
        // Non-simple collation, collatable key value: the default collation, or the query's.
        (
            "ShardKeyEqualityNonSimpleCollation_ShardKeyContainsCollatableFields (default)",
            range_sharding_0(),
            doc! {"a.x": -100, "b.y": "A"},
            Some(doc! {}),
            Some(case_insensitive()),
            MultiShard,
            [1, 1, 0],
        ),
        (
            "ShardKeyEqualityNonSimpleCollation_ShardKeyContainsCollatableFields (query, simple default)",
            range_sharding_0(),
            doc! {"a.x": -100, "b.y": "A"},
            Some(case_insensitive()),
            Some(simple()),
            MultiShard,
            [1, 1, 0],
        ),
        (
            "ShardKeyEqualityNonSimpleCollation_ShardKeyContainsCollatableFields (query, no default)",
            range_sharding_0(),
            doc! {"a.x": -100, "b.y": "A"},
            Some(case_insensitive()),
            none(),
            MultiShard,
            [1, 1, 0],
        ),
        (
            "ShardKeyEqualityNonSimpleCollation_ShardKeyContainsCollatableFields (hashed, default)",
            hashed_sharding_0(),
            doc! {"a.x": -100, "b.y": "A"},
            Some(doc! {}),
            Some(case_insensitive()),
            MultiShard,
            [1, 1, 0],
        ),
        (
            "ShardKeyEqualityNonSimpleCollation_ShardKeyContainsCollatableFields (hashed, query)",
            hashed_sharding_0(),
            doc! {"a.x": -100, "b.y": "A"},
            Some(case_insensitive()),
            none(),
            MultiShard,
            [1, 1, 0],
        ),
        // Non-simple collation, no collatable value: still one point.
        (
            "ShardKeyEqualityNonSimpleCollation_ShardKeyDoesNotContainCollatableFields (default)",
            range_sharding_0(),
            doc! {"a.x": -100, "b.y": 0},
            Some(doc! {}),
            Some(case_insensitive()),
            SingleShard,
            [1, 0, 0],
        ),
        (
            "ShardKeyEqualityNonSimpleCollation_ShardKeyDoesNotContainCollatableFields (query)",
            range_sharding_0(),
            doc! {"a.x": -100, "b.y": 0},
            Some(case_insensitive()),
            Some(simple()),
            SingleShard,
            [1, 0, 0],
        ),
        (
            "ShardKeyEqualityNonSimpleCollation_ShardKeyDoesNotContainCollatableFields (query, no default)",
            range_sharding_0(),
            doc! {"a.x": -100, "b.y": 0},
            Some(case_insensitive()),
            none(),
            SingleShard,
            [1, 0, 0],
        ),
        // Simple collation however it is reached.
        (
            "ShardKeyEqualitySimpleCollation (simple default)",
            range_sharding_0(),
            doc! {"a.x": -100, "b.y": "A"},
            Some(doc! {}),
            Some(simple()),
            SingleShard,
            [0, 1, 0],
        ),
        (
            "ShardKeyEqualitySimpleCollation (query simple over a non-simple default)",
            range_sharding_0(),
            doc! {"a.x": -100, "b.y": "A"},
            Some(simple()),
            Some(case_insensitive()),
            SingleShard,
            [0, 1, 0],
        ),
        (
            "ShardKeyEqualitySimpleCollation (query simple, no default)",
            range_sharding_0(),
            doc! {"a.x": -100, "b.y": "A"},
            Some(simple()),
            none(),
            SingleShard,
            [0, 1, 0],
        ),
        (
            "ShardKeyEqualitySimpleCollation (none)",
            range_sharding_0(),
            doc! {"a.x": -100, "b.y": "A"},
            none(),
            none(),
            SingleShard,
            [0, 1, 0],
        ),
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
        (
            "ShardKeyPrefixRangeNoMinOrMaxKey",
            range_sharding_0(),
            doc! {"a.x": {"$gte": -3, "$lt": 3}},
            none(),
            none(),
            MultiShard,
            [0, 1, 0],
        ),
        (
            "FullShardKeyRange",
            range_sharding_0(),
            doc! {"a.x": {"$gte": -4, "$lt": 4}, "b.y": {"$gte": "A", "$lt": "Z"}},
            none(),
            none(),
            MultiShard,
            [0, 1, 0],
        ),
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
/// Each is run as an update ({$set: {c: ...}}), a delete and a findAndModify, single and multi.
/// A write that fixes the whole key by equality is a write without shard key only when a
/// non-simple collation makes it multi-shard (a collatable key value): then it counts by its
/// `multi` flag, findAndModify as single. That is the server test's `assertTargetMetrics` of
/// WriteDistributionFilterByShardKeyEqualityTest at mongodb/mongo
/// e443421240f5a111e19cf0870ff4f545deecea8c (older versions of the file counted none).
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
            let want_without = match (want_label, multi && op != Op::FindAndModify) {
                (SingleShard, _) => (0.0, 0.0),
                (_, true) => (0.0, 100.0),
                (_, false) => (100.0, 0.0),
            };
            if label != want_label || w.num_writes_by_range != want_ranges || without != want_without {
                wrong.push(format!(
                    "{source} ({op:?}, multi {multi}): key {} filter {filter}: got {label:?} {:?} without-key {without:?}, want {want_label:?} {want_ranges:?} {want_without:?}",
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
        (
            "ShardKeyEqualityAdditionalFields",
            range_sharding_0(),
            doc! {"_id": 0, "a.x": 100, "b.y": "A"},
            none(),
            none(),
            SingleShard,
            [0, 0, 1],
        ),
        (
            "ShardKeyEqualityNonSimpleCollation_ShardKeyContainsCollatableFields (default)",
            range_sharding_0(),
            doc! {"a.x": -100, "b.y": "A"},
            Some(doc! {}),
            Some(case_insensitive()),
            MultiShard,
            [1, 1, 0],
        ),
        (
            "ShardKeyEqualityNonSimpleCollation_ShardKeyContainsCollatableFields (query)",
            range_sharding_0(),
            doc! {"a.x": -100, "b.y": "A"},
            Some(case_insensitive()),
            Some(simple()),
            MultiShard,
            [1, 1, 0],
        ),
        (
            "ShardKeyEqualityNonSimpleCollation_ShardKeyContainsCollatableFields (hashed)",
            hashed_sharding_0(),
            doc! {"a.x": -100, "b.y": "A"},
            Some(case_insensitive()),
            none(),
            MultiShard,
            [1, 1, 0],
        ),
        (
            "ShardKeyEqualityNonSimpleCollation_ShardKeyDoesNotContainCollatableFields",
            range_sharding_0(),
            doc! {"a.x": -100, "b.y": 0},
            Some(case_insensitive()),
            none(),
            SingleShard,
            [1, 0, 0],
        ),
        (
            "ShardKeyEqualitySimpleCollation",
            range_sharding_0(),
            doc! {"a.x": -100, "b.y": "A"},
            Some(simple()),
            Some(case_insensitive()),
            SingleShard,
            [0, 1, 0],
        ),
        ("ShardKeyEqualityHashed", hashed_sharding_2(), doc! {"a": -100}, none(), none(), SingleShard, [0, 1, 0]),
        ("ShardKeyEqualityEveryFieldIsNull", range_sharding_0(), doc! {"a.x": null, "b.y": null}, none(), none(), SingleShard, [1, 0, 0]),
        ("ShardKeyEqualityPrefixFieldIsNull", range_sharding_0(), doc! {"a.x": null, "b.y": "A"}, none(), none(), SingleShard, [1, 0, 0]),
        ("ShardKeyEqualitySuffixFieldIsNull", range_sharding_0(), doc! {"a.x": 0, "b.y": null}, none(), none(), SingleShard, [0, 1, 0]),
    ]);
}

/// Writes that do not fix the whole key (the server's WriteDistributionFilterByShardKeyRangeTest
/// and WriteDistributionNotFilterByShardKeyTest): every update (upsert or not, as the server
/// test picks at random: both here), delete and findAndModify (upsert / remove, both) gets the
/// label and ranges of its filter, and counts as a write without shard key, multi or single.
/// Row: (source test, chunks, filter, label, numByRange).
fn check_writes_without_key(rows: Vec<(&'static str, Chunks, Document, Label, [u64; 3])>) {
    use shardkey::model::UpdateSpec;
    let mut wrong = Vec::new();
    for (source, c, filter, want_label, want_ranges) in rows {
        let mut cases: Vec<(Op, bool, bool, Option<UpdateSpec>)> = Vec::new();
        for multi in [true, false] {
            for upsert in [true, false] {
                cases.push((Op::Update, multi, upsert, Some(UpdateSpec::Modifiers(doc! {"$set": {"c": 0}}))));
            }
            cases.push((Op::Delete, multi, false, None));
        }
        for upsert in [true, false] {
            cases.push((Op::FindAndModify, false, upsert, Some(UpdateSpec::Modifiers(doc! {"$set": {"c": 0}}))));
        }
        cases.push((Op::FindAndModify, false, false, Some(UpdateSpec::Remove)));
        for (op, multi, upsert, update) in cases {
            let mut q = Query::new(op, "testDb.testColl", filter.clone(), QueryOrigin::SampledQueries);
            q.multi = multi;
            q.upsert = upsert;
            q.update = update;
            let mut d = DistributionCounter::new(&c.ranges);
            d.add(&c.key, &q, None, &c.ranges);
            let w = d.write_distribution();
            let label = target_query(&c.key, &q, None).label;
            let without = (
                w.percentage_of_single_writes_without_shard_key.unwrap_or(-1.0),
                w.percentage_of_multi_writes_without_shard_key.unwrap_or(-1.0),
            );
            let want_without = if multi { (0.0, 100.0) } else { (100.0, 0.0) };
            if label != want_label || w.num_writes_by_range != want_ranges || without != want_without {
                wrong.push(format!(
                    "{source} ({op:?}, multi {multi}, upsert {upsert}): filter {filter}: got {label:?} {:?} without-key {without:?}, want {want_label:?} {want_ranges:?} {want_without:?}",
                    w.num_writes_by_range
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn write_distribution_filter_by_shard_key_range() {
    check_writes_without_key(vec![
        ("ShardKeyPrefixEqualityDotted", range_sharding_0(), doc! {"a.x": 0}, MultiShard, [0, 1, 0]),
        ("ShardKeyPrefixEqualityNotDotted", range_sharding_1(), doc! {"a": {"x": 0}}, MultiShard, [0, 1, 0]),
        ("ShardKeyPrefixRangeMinKey", range_sharding_0(), doc! {"a.x": {"$lt": 1}}, MultiShard, [1, 1, 0]),
        ("ShardKeyPrefixRangeMaxKey", range_sharding_0(), doc! {"a.x": {"$gte": 2}}, MultiShard, [0, 1, 1]),
        ("ShardKeyPrefixRangeNoMinOrMaxKey", range_sharding_0(), doc! {"a.x": {"$gte": -3, "$lt": 3}}, MultiShard, [0, 1, 0]),
        (
            "FullShardKeyRange",
            range_sharding_0(),
            doc! {"a.x": {"$gte": -4, "$lt": 4}, "b.y": {"$gte": "A", "$lt": "Z"}},
            MultiShard,
            [0, 1, 0],
        ),
        ("ShardKeyNonEquality", range_sharding_0(), doc! {"a.x": {"$ne": 5}}, MultiShard, [1, 1, 1]),
        ("ShardKeyRangeHashed", hashed_sharding_2(), doc! {"a": {"$gte": -100}}, ScatterGather, [1, 1, 1]),
    ]);
}

#[test]
fn write_distribution_not_filter_by_shard_key() {
    check_writes_without_key(vec![
        ("ShardKeySuffixEquality", range_sharding_0(), doc! {"b.y": "A"}, ScatterGather, [1, 1, 1]),
        ("NoShardKey", range_sharding_0(), doc! {"_id": 100}, ScatterGather, [1, 1, 1]),
        ("ShardKeyPrefixEqualityNotDotted", range_sharding_0(), doc! {"a": {"x": 0}}, ScatterGather, [1, 1, 1]),
        ("ShardKeyPrefixEqualityDotted", range_sharding_1(), doc! {"a.x": 0}, ScatterGather, [1, 1, 1]),
    ]);
}

/// Replacement updates (never multi): a non-upsert one whose filter is an exact `_id` query
/// (`isExactIdQuery`: other predicates may stand beside the `_id` equality; under a
/// non-simple collation a string `_id` is not exact) is targeted by the key taken from
/// the replacement document, missing fields as null; otherwise by its filter.
/// Row: (source test, chunks, filter, replacement, upsert, collation, label, numByRange, single write without key).
type ReplacementRow = (&'static str, Chunks, Document, Document, bool, Option<Document>, Label, [u64; 3], bool);

#[test]
fn write_distribution_replacement_updates() {
    use shardkey::model::UpdateSpec;
    let full = || doc! {"a": {"x": 0}, "b": {"y": "A"}, "c": 0};
    let rows: Vec<ReplacementRow> = vec![
        (
            "FilterByShardKeyRange…ReplacementUpdateTest/NotUpsert",
            range_sharding_0(),
            doc! {"a.x": {"$lt": 0}, "_id": 0},
            full(),
            false,
            None,
            SingleShard,
            [0, 1, 0],
            false,
        ),
        (
            "…/NotUpsertEveryFieldIsNull",
            range_sharding_0(),
            doc! {"a.x": {"$lt": 0}, "_id": 0},
            doc! {"a": {"x": 0}},
            false,
            None,
            SingleShard,
            [0, 1, 0],
            false,
        ),
        (
            "…/NotUpsertPrefixFieldIsNull",
            range_sharding_0(),
            doc! {"a.x": {"$lt": 0}, "_id": 0},
            doc! {"b": {"y": "A"}},
            false,
            None,
            SingleShard,
            [1, 0, 0],
            false,
        ),
        (
            "…/NotUpsertSuffixFieldIsNull",
            range_sharding_0(),
            doc! {"a.x": {"$lt": 0}, "_id": 0},
            doc! {"a": {"x": 0}},
            false,
            None,
            SingleShard,
            [0, 1, 0],
            false,
        ),
        (
            "…/NonUpsertNotExactIdQuery (no _id)",
            range_sharding_0(),
            doc! {"a.x": {"$lt": 0}},
            full(),
            false,
            None,
            MultiShard,
            [1, 1, 0],
            true,
        ),
        (
            "…/NonUpsertNotExactIdQuery (_id range)",
            range_sharding_0(),
            doc! {"a.x": {"$lt": 0}, "_id": {"$lt": 0}},
            full(),
            false,
            None,
            MultiShard,
            [1, 1, 0],
            true,
        ),
        (
            "…/NonUpsertNotExactIdQuery (string _id, case-insensitive)",
            range_sharding_0(),
            doc! {"a.x": {"$lt": 0}, "_id": "0"},
            full(),
            false,
            Some(case_insensitive()),
            MultiShard,
            [1, 1, 0],
            true,
        ),
        ("…/Upsert", range_sharding_0(), doc! {"a.x": {"$lt": 0}}, full(), true, None, MultiShard, [1, 1, 0], true),
        (
            "NotFilterByShardKeyReplacementUpdateTest/NotUpsert",
            range_sharding_0(),
            doc! {"_id": 0},
            doc! {"_id": 0, "a": {"x": 0}, "b": {"y": "A"}, "c": 0},
            false,
            None,
            SingleShard,
            [0, 1, 0],
            false,
        ),
        (
            "NotFilterByShardKeyReplacementUpdateTest/Upsert",
            range_sharding_0(),
            doc! {"_id": 0},
            doc! {"_id": 0, "a": {"x": 0}, "b": {"y": "A"}, "c": 0},
            true,
            None,
            ScatterGather,
            [1, 1, 1],
            true,
        ),
    ];
    let mut wrong = Vec::new();
    for (source, c, filter, replacement, upsert, collation, want_label, want_ranges, want_without) in rows {
        let mut q = Query::new(Op::Update, "testDb.testColl", filter.clone(), QueryOrigin::SampledQueries);
        q.upsert = upsert;
        q.collation = collation;
        q.update = Some(UpdateSpec::Replacement(replacement.clone()));
        let mut d = DistributionCounter::new(&c.ranges);
        let label = d.add(&c.key, &q, None, &c.ranges).map(|t| t.label);
        let w = d.write_distribution();
        let without = w.percentage_of_single_writes_without_shard_key == Some(100.0);
        if label != Some(want_label) || w.num_writes_by_range != want_ranges || without != want_without {
            wrong.push(format!(
                "{source}: filter {filter} replacement {replacement} upsert {upsert}: got {label:?} {:?} without-key {without}, want {want_label:?} {want_ranges:?} {want_without}",
                w.num_writes_by_range
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// WriteDistributionShardKeyUpdates: two updates fixing the key in one command count as two
/// single-shard writes in the middle range; shard key updates come from the diffs (none here).
#[test]
fn write_distribution_two_statements_count_twice() {
    use shardkey::model::UpdateSpec;
    let c = range_sharding_0();
    let mut d = DistributionCounter::new(&c.ranges);
    for x in [0, 1] {
        let mut q = Query::new(Op::Update, "testDb.testColl", doc! {"a.x": x, "b.y": "A"}, QueryOrigin::SampledQueries);
        q.update = Some(UpdateSpec::Modifiers(doc! {"$set": {"c": x}}));
        d.add(&c.key, &q, None, &c.ranges);
    }
    let w = d.write_distribution();
    assert_eq!(w.sample_size.total, 2);
    assert_eq!(w.percentage_of_single_shard_writes, Some(100.0));
    assert_eq!(w.num_writes_by_range, [0, 2, 0]);
    assert_eq!(w.percentage_of_shard_key_updates, Some(0.0));
}

/// The server's `cardinality_and_frequency_basic.js` (no sampling): documents whose key fields
/// all hold ±i (an integer, or `{foo: ±i}`), value i held by i documents, for 4, 5 and 125
/// distinct values (numMostCommonValues − 1, equal, × 25); `_id` keys hold each value once.
/// Expected: numDocs, numDistinctValues, and the 5 most common values with their frequencies
/// (the jstest's own rule: a value is among them when maxFrequency − frequency < 5).
mod cardinality_jstests {
    use serde_json::{json, Value};
    use std::fmt::Write as _;

    const KEYS: [&str; 13] = [
        "{a: 1}",
        "{a: \"hashed\"}",
        "{\"a.x\": 1}",
        "{\"a.x.y\": 1}",
        "{a: 1, b: 1}",
        "{\"a.x\": 1, b: \"hashed\"}",
        "{\"a.x.y\": \"hashed\", b: 1}",
        "{_id: 1}",
        "{_id: 1, a: 1}",
        "{_id: \"hashed\"}",
        "{b: 1}",
        "{\"b.y\": 1, a: 1}",
        "{a: 1, \"b.y\": \"hashed\"}",
    ];

    /// `{a: {x: v}}` for path a.x, as the jstest's setDottedField.
    fn set(doc: &mut serde_json::Map<String, Value>, path: &str, v: &Value) {
        let mut parts = path.splitn(2, '.');
        let head = parts.next().unwrap();
        match parts.next() {
            None => {
                doc.insert(head.to_string(), v.clone());
            }
            Some(rest) => {
                let e = doc.entry(head.to_string()).or_insert_with(|| json!({}));
                set(e.as_object_mut().unwrap(), rest, v);
            }
        }
    }

    fn paths(key: &str) -> Vec<String> {
        shardkey::model::ShardKey::parse(key).unwrap().paths().map(str::to_string).collect()
    }

    #[test]
    fn distinct_values_and_most_common_values() {
        let dir = tempfile::tempdir().unwrap();
        let mut wrong = Vec::new();
        for key in KEYS {
            let fields = paths(key);
            let has_id = fields.iter().any(|f| f == "_id");
            let hashed = key.contains("hashed");
            for n in [4u64, 5, 125] {
                let mut docs = String::new();
                let mut expected: Vec<(Value, u64)> = Vec::new();
                let max_freq = if has_id { 1 } else { n };
                for i in 1..=n {
                    let signed = if i % 2 == 1 { i as i64 } else { -(i as i64) };
                    let v = if i % 3 == 0 { json!({"foo": signed}) } else { json!(signed) };
                    let mut d = serde_json::Map::new();
                    for f in &fields {
                        set(&mut d, f, &v);
                    }
                    let freq = if has_id { 1 } else { i };
                    for _ in 0..freq {
                        let _ = writeln!(docs, "{}", Value::Object(d.clone()));
                    }
                    if max_freq - freq < 5 {
                        let kv: serde_json::Map<String, Value> = fields.iter().map(|f| (f.clone(), v.clone())).collect();
                        expected.push((Value::Object(kv), freq));
                    }
                }
                let path = dir.path().join("d.ndjson");
                std::fs::write(&path, &docs).unwrap();
                let o = std::process::Command::new(env!("CARGO_BIN_EXE_shardkey"))
                    .args(["analyze", "--docs", path.to_str().unwrap(), "--key", key, "--format", "json"])
                    .output()
                    .unwrap();
                assert!(o.status.success(), "{key}: {}", String::from_utf8_lossy(&o.stderr));
                let r: Value = serde_json::from_slice(&o.stdout).unwrap();
                let kc = &r["candidates"][0]["keyCharacteristics"];
                let num_docs: u64 = if has_id { n } else { n * (n + 1) / 2 };
                let mcv = kc["mostCommonValues"].as_array().unwrap();
                let mut ok = kc["numDocsSampled"] == num_docs && kc["numDistinctValues"] == n && mcv.len() as u64 == n.min(5);
                for m in mcv {
                    let f = m["frequency"].as_u64().unwrap();
                    // Hashed fields: the jstest compares frequencies; the values are checked on range keys.
                    let found = expected.iter().any(|(v, ef)| *ef == f && (hashed || m["value"] == *v));
                    ok &= found;
                }
                // Highest first.
                ok &= mcv.windows(2).all(|w| w[0]["frequency"].as_u64() >= w[1]["frequency"].as_u64());
                if !ok {
                    wrong.push(format!("{key} with {n} values: {kc}"));
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
