//! Every weight and every cap on hand-computed values.
//!
//! The base key is perfect on every component with 4 shards: every sampled operation
//! reaches one shard (fan-out 1), data and inserts even (25% per shard: 1), 10,000
//! useful shards (log10(10,000)/3 ≥ 1 → 1), operations even (25% per shard: 1):
//! 100 × (0.35 + 0.15 + 0.15 + 0.10 + 0.25) = 100.
//! Each test changes one thing and works out the expected score by hand.

use super::weights::{CAPS, WEIGHTS};
use super::*;
use crate::metrics::cluster::{Cost, Growth, GrowthLimit, Load};
use crate::metrics::insert_order::{InsertBasis, InsertEvidence, InsertKind, InsertOrder, NaturalField};
use crate::rules::{Effect, Finding};
use serde_json::json;

fn cost(fan_out: Option<f64>, single: f64) -> Cost {
    Cost {
        num_reads: 100,
        num_writes: 0,
        percentage_of_single_shard_ops: fan_out.map(|_| single),
        percentage_of_single_shard_reads: fan_out.map(|_| single),
        percentage_of_single_shard_writes: None,
        mean_shards_per_read: fan_out.map(|f| 1.0 + 3.0 * (1.0 - f)),
        mean_shards_per_write: None,
        mean_shards_per_op: fan_out.map(|f| 1.0 + 3.0 * (1.0 - f)),
        percentage_of_ops_to_every_shard: Some(0.0),
        percentage_of_writes_without_shard_key: None,
        writes_without_shard_key: None,
        percentage_of_shard_key_updates: None,
        fan_out,
    }
}

fn spread_inserts() -> InsertOrder {
    InsertOrder {
        kind: InsertKind::Spread,
        group_fields: None,
        basis: InsertBasis::CreationTime,
        creation_time_correlation_coefficient: Some(0.01),
        group_creation_time_correlation_coefficient: None,
        num_docs_with_creation_time: 1000,
        increasing_by_nature: vec![],
        load_order_hides_it: false,
        // Sampled queries: they never hold inserts, so inserts are assumed.
        inserts_in_workload: InsertEvidence::AssumedSampledQueries,
    }
}

fn facts() -> Facts {
    Facts {
        shards: 4,
        documents: true,
        docs_with_arrays: 0,
        docs_sampled: 100_000,
        docs_missing_fields: 0,
        estimated_distinct: 10_000,
        distinct_range: None,
        top_value: Some(json!({"k": "top"})),
        top_share: 0.01,
        top_share_in_sample: None,
        jumbo: None,
        jumbo_count: 0,
        chunk_size: 128 << 20,
        cost: cost(Some(1.0), 100.0),
        server_multi_reads: None,
        data_max_share: 0.25,
        insert_max_share: 0.25,
        shards_taking_inserts: 4,
        insert_order: spread_inserts(),
        server_record_id_coefficient: Some(0.01),
        growth: Growth {
            max_useful_shards: 10_000,
            limited_by: GrowthLimit::None,
            shards_taking_inserts: 4,
            largest_insert_share_percent: 25.0,
        },
        load: Some(load(25.0, None)),
        query_values: None,
        collation_spread: None,
        constraints: vec![],
        hashing: None,
        hot_documents: None,
    }
}

/// 1,000 operations each reaching one shard, the busiest shard taking `busiest` percent of
/// them and 25% of the data; `inserts` of them inserts.
fn load(busiest: f64, inserts: Option<u64>) -> Load {
    Load {
        // The mean shard takes 25% when each operation reaches one of 4.
        busiest_over_mean: busiest / 25.0,
        num_operations: 1000,
        busiest_shard: "shard0".into(),
        busiest_shard_percent: busiest,
        busiest_shard_data_percent: 25.0,
        num_inserts: inserts,
        insert_percent: inserts.map(|i| i as f64 / 10.0),
    }
}

fn finding(effect: Effect, message: &str) -> Finding {
    Finding {
        rule: crate::rules::RuleId::UniqueIndex,
        effect,
        message: message.into(),
        fix: vec![],
        percentage_of_writes: None,
        refused_here: false,
        accepted_from: None,
        refused_if_older: false,
        filter_fix: Vec::new(),
        index: None,
        source: "test",
        versions: "test",
    }
}

#[test]
fn a_refused_key_is_invalid_and_says_why_first() {
    let mut f = facts();
    f.constraints = vec![finding(Effect::Refused, "capped collection: no")];
    let s = score(&f);
    assert_eq!((s.score, s.verdict), (0, Verdict::Invalid));
    assert_eq!(words(&s), ["capped collection: no"]);
}

#[test]
fn a_blocked_key_keeps_its_score_and_is_marked_blocked() {
    // The perfect key (100) behind a unique index: the score is the key's merit once the
    // index is dropped; the verdict says it cannot be applied as it is.
    let mut f = facts();
    f.constraints = vec![finding(Effect::Blocked, "unique index email_1 ...")];
    let s = score(&f);
    assert_eq!((s.score, s.verdict), (100, Verdict::Blocked));
    assert_eq!(words(&s)[0], "unique index email_1 ...");
}

#[test]
fn cap_writes_fail() {
    // 100 capped at 20: bad, whatever share of the writes fails.
    let mut f = facts();
    f.constraints = vec![finding(Effect::WritesFail, "60.0% of 10 sampled updates and deletes are upserts ...")];
    let s = score(&f);
    assert_eq!((s.score, s.verdict), (20, Verdict::Bad));
    assert_eq!(s.breakdown.capped_by, Some(Capped::WritesFail));
    // A warning is said, not scored.
    f.constraints = vec![finding(Effect::Warning, "they fail before 7.1")];
    assert_eq!(score(&f).score, 100);
}

/// The reasons as the report prints them.
fn words(s: &Score) -> Vec<String> {
    s.reasons.iter().map(|r| r.to_string()).collect()
}

#[test]
fn weights_add_up_to_one() {
    let sum: f64 = WEIGHTS.iter().map(|w| w.weight).sum();
    assert!((sum - 1.0).abs() < 1e-12, "{sum}");
}

#[test]
fn a_perfect_key_scores_100() {
    let s = score(&facts());
    assert_eq!(s.score, 100);
    assert_eq!(s.verdict, Verdict::Good);
    assert!(words(&s).iter().any(|r| r.starts_with("with 4 shards, 100.0% of 100 sampled operations reach one shard")), "{:?}", s.reasons);
}

#[test]
fn fan_out_weight() {
    // Half the fan-out: 100 − 35 × 0.5 = 82.5 → 83 (rounded half away from zero).
    let mut f = facts();
    f.cost = cost(Some(0.5), 50.0);
    assert_eq!(score(&f).score, 83);
    // Every operation to every shard: 100 − 35 = 65, capped at 49 (targetsNothing: at best
    // poor), and the reason says so as a problem. (The load is left even here.)
    f.cost = cost(Some(0.0), 0.0);
    let s = score(&f);
    assert_eq!((s.score, s.breakdown.weighted, s.breakdown.capped_by), (49, 65.0, Some(Capped::TargetsNothing)));
    assert_eq!(s.verdict, Verdict::Poor);
    assert!(
        words(&s)[0].starts_with("with 4 shards, 0.0% of 100 sampled operations reach one shard; a read reaches 4.00"),
        "{:?}",
        s.reasons
    );
    // No queries: fan-out and load are not measured and count 0 (never in the key's
    // favour): 100 − 35 − 15 = 50, shown as null, said first.
    f.cost = cost(None, 0.0);
    f.cost.num_reads = 0;
    f.load = None;
    let s = score(&f);
    assert_eq!(s.score, 50);
    assert_eq!((s.breakdown.fan_out, s.breakdown.load), (None, None));
    assert!(words(&s)[0].starts_with("targeting not measured"), "{:?}", s.reasons);
}

#[test]
fn unmeasured_data_counts_nothing() {
    // Queries only: data spread and growth not measured (0); inserts unknown (0) for a
    // range key whose values say nothing of their order: 100 − 15 − 10 − 25 = 50.
    let mut f = facts();
    f.documents = false;
    f.insert_order.kind = InsertKind::Unknown;
    let s = score(&f);
    assert_eq!(s.score, 50);
    assert_eq!((s.breakdown.data_spread, s.breakdown.insert_spread, s.breakdown.growth), (None, None, None));
    // A tie the evidence cannot break says what would.
    assert!(compare(1, &s, 2, &s).ends_with("the documents (an export, a dump or --uri) would separate them"), "{}", compare(1, &s, 2, &s));
}

#[test]
fn queries_naming_few_values_cap_as_low_cardinality() {
    // Queries only, the filters name 5 values, each many times: Chao1 5 < 100 -> capped at 35.
    let mut f = facts();
    f.documents = false;
    f.query_values = Some(crate::metrics::cardinality::QueryValues { num_distinct_named: 5, estimated_num_distinct_values: 5 });
    let s = score(&f);
    assert_eq!((s.score, s.breakdown.capped_by), (35, Some(Capped::FewValuesInQueries)));
    // 50 named, about 215 by Chao1: no cap (the unmeasured data, inserts and growth alone:
    // 100 − 15 − 10 − 25 = 50).
    f.query_values = Some(crate::metrics::cardinality::QueryValues { num_distinct_named: 50, estimated_num_distinct_values: 215 });
    assert_eq!((score(&f).score, score(&f).breakdown.capped_by), (50, None));
}

#[test]
fn writes_that_change_the_key_weigh_and_cap() {
    // 100 reads and 100 writes, 30% of the writes change the key: 15% of operations.
    // Fan-out 1 × (1 − 0.15) = 0.85: 100 − 35 × 0.15 = 94.75; 30% ≥ 20% caps at 45.
    let mut f = facts();
    f.cost.num_writes = 100;
    f.cost.percentage_of_shard_key_updates = Some(30.0);
    let s = score(&f);
    assert_eq!(s.breakdown.fan_out, Some(0.85));
    assert_eq!((s.breakdown.weighted, s.score, s.breakdown.capped_by), (94.75, 45, Some(Capped::KeyUpdates)));
    // 10% of writes (5% of operations): 100 − 35 × 0.05 = 98.25 -> 98, not capped.
    f.cost.percentage_of_shard_key_updates = Some(10.0);
    let s = score(&f);
    assert_eq!((s.score, s.breakdown.capped_by), (98, None));
    assert!(words(&s).iter().any(|r| r.starts_with("10.0% of sampled writes change the shard key")), "{:?}", s.reasons);
}

#[test]
fn spread_components_tolerate_twice_the_even_share() {
    // 4 shards: 1 up to 50% on one shard, 0 at 100%, linear: 75% → (4 − 3) / (4 − 2) = 0.5.
    assert_eq!(spread_component(0.25, 4), 1.0);
    assert_eq!(spread_component(0.5, 4), 1.0);
    assert_eq!(spread_component(0.75, 4), 0.5);
    assert_eq!(spread_component(1.0, 4), 0.0);
    // 2 shards: 1 up to 75%, (2 − 1.8) / (2 − 1.5) = 0.4 at 90%.
    assert!((spread_component(0.9, 2) - 0.4).abs() < 1e-12);
    let mut f = facts();
    f.data_max_share = 0.75;
    // 100 − 15 × 0.5 = 92.5 → 93 (rounded half away from zero).
    assert_eq!(score(&f).score, 93);
    let mut f = facts();
    f.insert_max_share = 0.75;
    // 100 − 10 × 0.5 = 95.
    assert_eq!(score(&f).score, 95);
}

#[test]
fn load_weight_and_the_hot_shard_cap() {
    // The busiest shard takes 45% of operations: component 1 (at most twice the even share), no cap, no words.
    let mut f = facts();
    f.load = Some(load(45.0, None));
    let s = score(&f);
    assert_eq!(s.score, 100);
    assert!(!words(&s).iter().any(|r| r.contains("busiest of 4 shards takes")), "{:?}", s.reasons);
    // 70% on one shard holding 25% of the data: component (4 − 2.8) / 2 = 0.6, 100 − 15 × 0.4 = 94, capped at 60.
    f.load = Some(load(70.0, None));
    let s = score(&f);
    assert_eq!((s.score, s.verdict, s.breakdown.capped_by), (60, Verdict::Acceptable, Some(Capped::HotShard)));
    assert_eq!(s.breakdown.load, Some(0.6));
    assert_eq!(s.breakdown.weighted, 94.0);
    assert_eq!(
        words(&s)[0],
        "at scale the busiest of 4 shards takes 70.0% of 1,000 sampled operations (2.8× the mean shard's) while holding 25.0% of the data: a hot key range, which the balancer (it evens data size, not operations) never spreads"
    );
    // Broadcasts: every shard takes every operation (the mean shard too): component 0,
    // 100 − 15 = 85, no cap and no words here (the fan-out says it).
    f.load = Some(Load { busiest_over_mean: 1.0, ..load(100.0, None) });
    let s = score(&f);
    assert_eq!((s.score, s.breakdown.capped_by), (85, None));
    assert!(!words(&s).iter().any(|r| r.contains("busiest of 4 shards takes")), "{:?}", s.reasons);
    // 2 shards: even is 50%, the cap starts at 75% (1.5 × even), the component at 75% is 1.
    let mut f = facts();
    f.shards = 2;
    f.load = Some(load(74.0, None));
    assert_eq!(score(&f).breakdown.capped_by, None);
    f.load = Some(load(75.0, None));
    assert_eq!(score(&f).breakdown.capped_by, Some(Capped::HotShard));
}

#[test]
fn the_insert_penalty_follows_the_inserts_share_of_operations() {
    let mut f = increasing();
    f.insert_order.inserts_in_workload = InsertEvidence::Sampled;
    // Inserts 10% of operations: factor min(1, 2 × 0.1) = 0.2. Component 1 − 0.2 × (1 − 0) = 0.8:
    // 100 − 10 × 0.2 = 98; cap 100 − 50 × 0.2 = 90.
    f.load = Some(load(25.0, Some(100)));
    let s = score(&f);
    assert_eq!((s.score, s.breakdown.capped_by, s.breakdown.cap), (90, Some(Capped::InsertsOnOneShard), Some(90.0)));
    assert_eq!((s.breakdown.insert_spread, s.breakdown.insert_share_of_operations), (Some(0.8), Some(0.1)));
    assert!(words(&s)[0].ends_with("so one shard takes 100% of inserts (inserts are 10.0% of sampled operations)"), "{:?}", s.reasons);
    // 1%: factor 0.02, 100 − 0.2 = 99.8, cap 99.
    f.load = Some(load(25.0, Some(10)));
    assert_eq!(score(&f).score, 99);
    // Half or more: the full penalty, as when the share is not known.
    f.load = Some(load(25.0, Some(600)));
    assert_eq!(score(&f).score, 50);
}

/// A log of 100 reads and no insert: growth by inserts is not evidenced. The increasing key
/// is neither penalised nor capped (the inserts' share is 0: factor 0, component 1 − 0 = 1,
/// no cap): 100, as the perfect key; the words say what was not judged.
#[test]
fn no_insert_sampled_no_insert_penalty() {
    let mut f = increasing();
    f.insert_order.inserts_in_workload = InsertEvidence::NoneSampled;
    let s = score(&f);
    assert_eq!((s.score, s.verdict, s.breakdown.capped_by), (100, Verdict::Good, None));
    assert_eq!((s.breakdown.insert_spread, s.breakdown.insert_share_of_operations), (Some(1.0), Some(0.0)));
    assert_eq!(
        words(&s)[0],
        "no insert in the 100 sampled operations: insert placement not judged (should the collection grow by inserts, this increasing key would send every one to the highest chunk, on one shard)"
    );
    assert!(!words(&s).iter().any(|w| w.contains("one shard takes 100% of inserts")), "{:?}", s.reasons);
    // No query at all: growth assumed, penalised and capped as before, and said assumed.
    f.insert_order.inserts_in_workload = InsertEvidence::AssumedNoQueries;
    f.cost = cost(None, 0.0);
    f.cost.num_reads = 0;
    f.load = None;
    let s = score(&f);
    // 100 − 35 − 15 (targeting and load not measured) − 10 (inserts) = 40, under the cap of 50.
    assert_eq!((s.score, s.breakdown.capped_by), (40, Some(Capped::InsertsOnOneShard)));
    assert!(
        words(&s)
            .iter()
            .any(|w| w.ends_with("(assumed: no sampled operation shows the workload, so the collection is taken to grow by inserts)")),
        "{:?}",
        s.reasons
    );
}

/// The verdict's boundary rule: a score a cap holds down on a band's lower edge takes the
/// band below. Hand: every insert on one shard, inserts 25% of operations: factor 0.5,
/// component 0.5, 100 − 5 = 95, cap 100 − 50 × 0.5 = 75 → 75, acceptable; inserts 50%: factor
/// 1, 90, cap 50 → 50, poor. A score of 50 that no cap holds stays acceptable.
#[test]
fn a_key_held_at_a_band_edge_takes_the_band_below() {
    let mut f = increasing();
    f.insert_order.inserts_in_workload = InsertEvidence::Sampled;
    f.load = Some(load(25.0, Some(250)));
    let s = score(&f);
    assert_eq!((s.score, s.breakdown.cap, s.verdict), (75, Some(75.0), Verdict::Acceptable));
    f.load = Some(load(25.0, Some(500)));
    let s = score(&f);
    assert_eq!((s.score, s.breakdown.cap, s.verdict), (50, Some(50.0), Verdict::Poor));
    assert_eq!(Verdict::of_score(50, false), Verdict::Acceptable);
    assert_eq!(Verdict::of_score(50, true), Verdict::Poor);
    assert_eq!(Verdict::of_score(60, true), Verdict::Acceptable);
    assert_eq!(Verdict::of_score(75, true), Verdict::Acceptable);
    assert_eq!(Verdict::of_score(25, true), Verdict::Bad);
}

/// No sampled operation reaches one shard, though not every one reaches every shard (each
/// reaches 2 of 4: fan-out (4 − 2) / 3 = 0.67): 100 − 35 × 0.33 = 88.3, capped at 49 (the key
/// targets nothing), poor.
#[test]
fn no_operation_on_one_shard_targets_nothing() {
    let mut f = facts();
    f.cost = cost(Some(2.0 / 3.0), 0.0);
    let s = score(&f);
    assert_eq!((s.score, s.breakdown.capped_by, s.verdict), (49, Some(Capped::TargetsNothing), Verdict::Poor));
    assert!((s.breakdown.weighted - 88.333).abs() < 0.001, "{}", s.breakdown.weighted);
}

#[test]
fn growth_weight() {
    // 10 useful shards: log10(10)/3 = 1/3: 100 − 25 × 2/3 = 83.33 → 83.
    let mut f = facts();
    f.growth.max_useful_shards = 10;
    f.growth.limited_by = GrowthLimit::TopValueShare;
    assert_eq!(score(&f).score, 83);
    assert_eq!(growth_component(1_000), 1.0);
    assert_eq!(growth_component(1), 0.0);
}

#[test]
fn cap_array_in_key_is_invalid() {
    let mut f = facts();
    f.docs_with_arrays = 3;
    let s = score(&f);
    assert_eq!((s.score, s.verdict), (0, Verdict::Invalid));
    assert_eq!(s.reasons.len(), 1);
}

#[test]
fn cap_jumbo_risk() {
    let mut f = facts();
    f.jumbo = Some((json!({"k": "big"}), 2_000_000, 200 << 20));
    f.jumbo_count = 1;
    let s = score(&f);
    assert_eq!((s.score, s.verdict), (40, Verdict::Poor));
    assert!(
        words(&s)
            .iter()
            .any(|r| r.starts_with("jumbo chunk: value \"big\" would hold about 2,000,000 documents (200 MiB), more than the 128 MiB")),
        "{:?}",
        s.reasons
    );
    assert_eq!(s.breakdown.capped_by, Some(Capped::JumboRisk));
}

#[test]
fn cap_hot_value() {
    let mut f = facts();
    f.top_share = 0.25;
    assert_eq!(score(&f).score, 45);
    f.top_share = 0.24;
    assert_eq!(score(&f).score, 100, "below the cap share no cap");
}

#[test]
fn cap_low_cardinality() {
    let mut f = facts();
    f.estimated_distinct = 50;
    let s = score(&f);
    assert_eq!((s.score, s.verdict), (35, Verdict::Poor));
    assert!(words(&s).iter().any(|r| r.starts_with("low cardinality: only 50 distinct values")), "{:?}", s.reasons);
    f.estimated_distinct = 100;
    assert_eq!(score(&f).score, 100);
}

/// Every insert on one shard, increasing by creation time; the inserts' share not known.
fn increasing() -> Facts {
    let mut f = facts();
    f.insert_max_share = 1.0;
    f.shards_taking_inserts = 1;
    f.insert_order = InsertOrder {
        kind: InsertKind::Increasing,
        basis: InsertBasis::CreationTime,
        creation_time_correlation_coefficient: Some(0.99),
        load_order_hides_it: true,
        increasing_by_nature: vec![NaturalField { field: "ts".into(), bson_type: "date" }],
        ..spread_inserts()
    };
    f
}

#[test]
fn cap_inserts_on_one_shard() {
    let mut f = increasing();
    let s = score(&f);
    // 100 − 10 = 90, capped at 50: held on the acceptable band's lower edge, so poor.
    assert_eq!((s.score, s.verdict), (50, Verdict::Poor));
    assert!(
        words(&s)[0].starts_with("increasing key (correlation 0.99 with the creation time of the ObjectId _ids; the load order hides it"),
        "{:?}",
        s.reasons
    );
    assert!(
        words(&s)[0].ends_with("(assumed: sampled queries never hold inserts, so the collection is taken to grow by inserts)"),
        "{:?}",
        s.reasons
    );
    // 89% on one shard: no cap; spread component (4 − 3.56) / 2 = 0.22: 100 − 10 × 0.78 = 92.2 → 92.
    f.insert_max_share = 0.89;
    assert_eq!(score(&f).score, 92);
}

#[test]
fn the_lowest_cap_wins() {
    let mut f = facts();
    f.top_share = 0.30;
    f.estimated_distinct = 20;
    assert_eq!(score(&f).score, 35);
}

#[test]
fn every_cap_is_in_the_table_and_in_the_reference() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reference.md")).unwrap();
    for c in [
        Capped::ArrayInKey,
        Capped::JumboRisk,
        Capped::HotValue,
        Capped::LowCardinality,
        Capped::InsertsOnOneShard,
        Capped::HotShard,
        Capped::WritesFail,
        Capped::KeyUpdates,
        Capped::FewValuesInQueries,
        Capped::TargetsNothing,
    ] {
        let cap = CAPS.iter().find(|x| x.cap == c).unwrap_or_else(|| panic!("{c:?} not in CAPS"));
        // docs/reference.md's cap table: "| name | at most | when |".
        let name = serde_json::to_value(c).unwrap();
        let row = format!("| {} | {}", name.as_str().unwrap(), cap.max_score);
        assert!(readme.contains(&row), "docs/reference.md's cap table lacks {row:?}");
    }
}

#[test]
fn the_ranking_explains_itself_pairwise() {
    let a = score(&facts());
    let mut f = facts();
    f.cost = cost(Some(0.25), 10.0);
    f.insert_max_share = 0.75;
    let b = score(&f);
    // a gains 35 × 0.75 = 26.25 on fan-out, b loses 5 on inserts: 68.75 → 69; nothing where a loses.
    let w = compare(1, &a, 2, &b);
    assert!(w.starts_with("#1 beats #2 (100 against 69) because an operation reaches 1.00 of 4 shards"), "{w}");
    assert!(!w.contains("at the cost of"), "{w}");
    // The other way round: b's inserts are worse, a's fan-out better; seen from b.
    let mut g = facts();
    g.insert_max_share = 1.0;
    let c = score(&g);
    let w = compare(1, &b, 2, &c);
    assert!(w.contains("#2 is capped at 50"), "{w}");
    assert!(w.contains("at the cost of: an operation reaches 3.25 of 4 shards"), "{w}");
}

/// A blocked key ranks below an accepted one whatever its score: the words say why, not
/// a component where the lower score happens to gain.
#[test]
fn a_refused_key_below_is_said_refused() {
    let low = score(&{
        let mut f = facts();
        f.cost = cost(Some(0.25), 10.0);
        f
    });
    let mut high = score(&facts());
    high.verdict = Verdict::Blocked;
    let w = compare(2, &low, 3, &high);
    assert_eq!(
        w,
        format!(
            "#2 ranks above #3 ({} against {}) because the server refuses #3 until something is changed first (its constraints say what)",
            low.score, high.score
        )
    );
    high.verdict = Verdict::Invalid;
    assert!(compare(2, &low, 3, &high).ends_with("because the server refuses #3 whatever is changed"));
}

#[test]
fn against_says_the_shared_words_once() {
    assert_eq!(
        super::compare::against(
            "an operation reaches 2.85 of 4 shards on average (27.6% reach one)",
            "an operation reaches 3.18 of 4 shards on average (27.3% reach one)"
        ),
        "an operation reaches 2.85 of 4 shards on average (27.6% reach one) against 3.18 of 4 shards on average (27.3% reach one)"
    );
    assert_eq!(
        super::compare::against("up to 2 useful shards", "targeting not measured"),
        "up to 2 useful shards against targeting not measured"
    );
    assert_eq!(super::compare::against("same words", "same words"), "same words against same words");
}

/// Keys capped alike tie on their score: the one under which the server would refuse fewer
/// of the sampled writes ranks first, and the words say so (8.8% + 35.3% = 44.1% by hand).
#[test]
fn a_tie_goes_to_the_key_with_fewer_refused_writes() {
    let with = |shares: &[f64]| {
        let mut f = facts();
        f.constraints =
            shares.iter().map(|p| Finding { percentage_of_writes: Some(*p), ..finding(Effect::WritesFail, "writes refused") }).collect();
        score(&f)
    };
    let (many, few) = (with(&[8.8, 35.3]), with(&[17.6]));
    assert_eq!((many.score, few.score), (20, 20));
    assert!((many.breakdown.refused_writes_percent - 44.1).abs() < 1e-9, "{}", many.breakdown.refused_writes_percent);
    let w = compare(1, &few, 2, &many);
    assert_eq!(
        w,
        "#1 ties with #2 at 20 and ranks above it because the server would refuse 17.6% of the sampled writes under #1 against 44.1% under #2"
    );
    // A warning is not a refusal: it counts nothing.
    let mut f = facts();
    f.constraints = vec![Finding { percentage_of_writes: Some(50.0), ..finding(Effect::Warning, "they fail before 7.1") }];
    assert_eq!(score(&f).breakdown.refused_writes_percent, 0.0);
}
