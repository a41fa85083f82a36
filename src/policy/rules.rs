//! Every rule of the policy file, once, as data: its name in `shardkey.toml`, the
//! report field it reads, the type of its threshold, its line in the starting
//! policy, and how it judges a candidate. Parsing, `--init` and evaluation all
//! read this table; adding a rule is adding one entry.

// The rules' terms, named here where callers look for them.
pub(crate) use super::judge::{DatabasesInput, Finding, Judge, RuleDef, RuleInput, Threshold, ValueType};
use super::result::Culprit;
use crate::metrics::monotonicity::MonotonicityType;
use crate::model::ShardKey;
use crate::rules::Effect;
use crate::score::Verdict;
use crate::targeting::Label;
use crate::util::text::fmt_count;
use serde_json::json;

/// A write rule not evaluated: writeDistribution counts updates, deletes and findAndModify
/// (analyzeShardKey's "sampled writes"), never inserts, so an insert-only workload has none.
const NO_SAMPLED_WRITES: &str =
    "no sampled updates, deletes or findAndModify (inserts are not writes here, as in analyzeShardKey's writeDistribution)";

/// Why a rule on key characteristics is skipped in a queries-only run.
const NO_DOCUMENTS: &str = "not measured: no documents (query logs only)";

fn at_most(p: Option<f64>, max: f64, why_missing: &'static str, message: impl Fn(f64) -> String) -> Finding {
    match p {
        Some(p) => Finding::Measured { actual: actual_percent(p), passed: p <= max, message: message(p) },
        None => Finding::Skipped(why_missing),
    }
}

/// `actual` as a reader compares it: 100.0, not 100.0000000001 (the test is on the value itself).
fn actual_percent(p: f64) -> serde_json::Value {
    json!((p * 1e4).round() / 1e4)
}

pub(crate) const RULES: &[RuleDef] = &[
    RuleDef {
        name: "min_score",
        metric: "score",
        value: ValueType::Score,
        doc: "0-100 score from `shardkey analyze` (docs/reference.md \"Score\").",
        default: "60",
        implied: None,
        culprit: Some(reasons_behind),
        judge: Judge::Candidate(|t, c| {
            let min = t.number() as u32;
            Finding::Measured { actual: json!(c.score), passed: c.score >= min, message: format!("score {} (minimum {min})", c.score) }
        }),
    },
    RuleDef {
        name: "max_scatter_gather_reads_percent",
        metric: "readDistribution.percentageOfScatterGatherReads",
        value: ValueType::Percent,
        doc: "readDistribution.percentageOfScatterGatherReads",
        default: "50.0",
        implied: None,
        culprit: Some(scatter_gather_reads),
        judge: Judge::Candidate(|t, c| {
            let max = t.number();
            at_most(c.metrics.read_distribution.percentage_of_scatter_gather_reads, max, "no sampled reads", |p| {
                format!("{p:.1}% of reads scatter-gather (maximum {max}%)")
            })
        }),
    },
    RuleDef {
        name: "max_writes_without_shard_key_percent",
        metric: "writeDistribution.percentageOf{Single,Multi}WritesWithoutShardKey",
        value: ValueType::Percent,
        doc: "writeDistribution: single + multi writes without shard key, percent of sampled writes",
        default: "50.0",
        implied: None,
        culprit: Some(untargeted_writes),
        judge: Judge::Candidate(|t, c| {
            let max = t.number();
            let wd = &c.metrics.write_distribution;
            let p = match (wd.percentage_of_single_writes_without_shard_key, wd.percentage_of_multi_writes_without_shard_key) {
                (Some(s), Some(m)) => Some(s + m),
                _ => None,
            };
            at_most(p, max, NO_SAMPLED_WRITES, |p| format!("{p:.1}% of writes without the shard key (maximum {max}%)"))
        }),
    },
    RuleDef {
        name: "forbid_monotonic",
        metric: "keyCharacteristics.monotonicity.type",
        value: ValueType::Flag,
        doc: "keyCharacteristics.monotonicity.type == \"monotonic\" fails",
        default: "true",
        implied: None,
        culprit: Some(key_fields),
        judge: Judge::Candidate(|_, c| {
            let Some(kc) = &c.metrics.key_characteristics else { return Finding::Skipped(NO_DOCUMENTS) };
            let t = kc.monotonicity.kind;
            Finding::Measured {
                actual: json!(t.as_str()),
                passed: t != MonotonicityType::Monotonic,
                message: format!("monotonicity: {}", t.as_str()),
            }
        }),
    },
    RuleDef {
        name: "max_top_value_percent",
        metric: "keyCharacteristics.topValuePercentage",
        value: ValueType::Percent,
        doc: "keyCharacteristics.topValuePercentage",
        default: "25.0",
        implied: None,
        culprit: Some(key_fields),
        judge: Judge::Candidate(|t, c| {
            let max = t.number();
            at_most(c.metrics.key_characteristics.as_ref().map(|k| k.top_value_percentage), max, NO_DOCUMENTS, |p| {
                format!("top value holds {p:.1}% of documents (maximum {max}%)")
            })
        }),
    },
    RuleDef {
        name: "forbid_jumbo_risk",
        metric: "keyCharacteristics.jumboChunkRisk.values",
        value: ValueType::Flag,
        doc: "keyCharacteristics.jumboChunkRisk: any value larger than a chunk fails",
        default: "true",
        implied: None,
        culprit: Some(key_fields),
        judge: Judge::Candidate(|_, c| {
            let Some(kc) = &c.metrics.key_characteristics else { return Finding::Skipped(NO_DOCUMENTS) };
            let n = kc.jumbo_chunk_risk.num_values;
            Finding::Measured { actual: json!(n), passed: n == 0, message: format!("{n} values larger than a chunk") }
        }),
    },
    RuleDef {
        name: "min_distinct_values",
        metric: "keyCharacteristics.estimatedNumDistinctValues",
        value: ValueType::Count,
        doc: "keyCharacteristics.estimatedNumDistinctValues",
        default: "100",
        implied: None,
        culprit: Some(key_fields),
        judge: Judge::Candidate(|t, c| {
            let min = t.number() as u64;
            let Some(kc) = &c.metrics.key_characteristics else { return Finding::Skipped(NO_DOCUMENTS) };
            // A gate passes on what the sample proves, as the score does: the range's lower end
            // (the distinct values seen), not the estimate (issue 47: a 2.5% sample's estimate
            // was 44% off). Exact when the whole collection was read.
            let r = kc.estimated_num_distinct_values.range;
            let message = if r.is_exact() {
                format!("{} distinct values (minimum {min})", r.lower)
            } else {
                format!("at least {} distinct values, about {} (up to {}; minimum {min})", r.lower, r.value, r.upper)
            };
            Finding::Measured { actual: json!(r.lower), passed: r.lower >= min, message }
        }),
    },
    RuleDef {
        name: "max_shard_key_updates_percent",
        metric: "writeDistribution.percentageOfShardKeyUpdates",
        value: ValueType::Percent,
        doc: "writeDistribution.percentageOfShardKeyUpdates",
        default: "10.0",
        implied: None,
        culprit: Some(key_fields),
        judge: Judge::Candidate(|t, c| {
            let max = t.number();
            at_most(c.metrics.write_distribution.percentage_of_shard_key_updates, max, NO_SAMPLED_WRITES, |p| {
                format!("{p:.1}% of writes change the shard key (maximum {max}%)")
            })
        }),
    },
    RuleDef {
        // Issue 48: the writes the server refuses under the key on the deployment's version
        // (`crate::rules::write_targeting`): one verdict with analyze's constraints and score.
        name: "max_refused_writes_percent",
        metric: "constraints (refused on the deployment's version).percentageOfWrites",
        value: ValueType::Percent,
        doc: "constraints: updates and deletes the server refuses under the key on the deployment's version (upserts without the key and shard key value changes by _id or in a multi update on every version; before 7.1 single writes without key or _id, and other shard key value changes without the whole key, error 31025), percent of sampled updates and deletes; the version unknown, a warning of what versions before 7.1 refuse",
        default: "0.0",
        // On unless a policy sets it: a write the server refuses is never called fine (a new
        // user's policy without it passed a key under which every write to accounts failed).
        implied: Some(Threshold::Percent(0.0)),
        culprit: Some(key_fields),
        judge: Judge::Candidate(|t, c| {
            let max = t.number();
            let failing: Vec<&crate::rules::Finding> = c.constraints.iter().filter(|f| f.refused_here).collect();
            let p = failing.iter().filter_map(|f| f.percentage_of_writes).sum::<f64>().min(100.0);
            let words: Vec<&str> = failing.iter().map(|f| f.message.as_str()).collect();
            // The version unknown: what versions before 7.1 refuse is neither counted nor
            // called fine (a gate would pass writes a 6.0 or 7.0 cluster refuses).
            let older: Vec<&crate::rules::Finding> = c.constraints.iter().filter(|f| f.refused_if_older).collect();
            let q = older.iter().filter_map(|f| f.percentage_of_writes).sum::<f64>().min(100.0);
            if p <= max && q > 0.0 {
                let said: Vec<&str> = older.iter().map(|f| f.message.as_str()).collect();
                return Finding::Warning {
                    actual: actual_percent(p),
                    message: format!(
                        "the deployment's version is not known: {q:.1}% of writes would be refused before 7.1, not counted (give --target-version X.Y): {}",
                        said.join("; ")
                    ),
                };
            }
            // No update or delete sampled (the profiler not readable, a log of reads): not
            // evaluated, as the other write rules, rather than "none refused".
            let sampled = c.metrics.write_distribution.percentage_of_shard_key_updates.is_some() || !failing.is_empty();
            at_most(sampled.then_some(p), max, NO_SAMPLED_WRITES, |p| {
                if words.is_empty() {
                    format!("no sampled write is refused under the key (maximum {max}%)")
                } else {
                    format!("{p:.1}% of writes refused (maximum {max}%): {}", words.join("; "))
                }
            })
        }),
    },
    RuleDef {
        name: "require_supporting_index",
        metric: "supportingIndex.name",
        value: ValueType::Flag,
        doc: "supportingIndex (live only): the key needs an index that can support it",
        default: "false",
        implied: None,
        culprit: None,
        judge: Judge::Candidate(|_, c| match &c.metrics.supporting_index {
            Some(si) => Finding::Measured {
                actual: json!(si.name),
                passed: si.name.is_some(),
                message: match (&si.name, &si.create_index) {
                    (Some(n), _) => format!("supporting index {n}"),
                    (None, Some(cmd)) => format!("no supporting index; {cmd}"),
                    _ => "no supporting index".into(),
                },
            },
            None => Finding::Skipped("indexes are only known with --uri"),
        }),
    },
    RuleDef {
        name: "forbid_blocked",
        metric: "constraints (effect blocked)",
        value: ValueType::Flag,
        doc: "constraints: shardCollection refuses the key until something is changed first (a unique index that does not start with the key)",
        default: "true",
        implied: Some(Threshold::Flag(true)),
        culprit: Some(blocking_indexes),
        judge: Judge::Candidate(|_, c| {
            if c.metrics.supporting_index.is_none() {
                return Finding::Skipped(NO_INDEXES);
            }
            let blocked: Vec<String> = c.constraints.iter().filter(|f| f.effect == Effect::Blocked).map(|f| blocked_message(c.key, f)).collect();
            Finding::Measured {
                actual: json!(blocked.len()),
                passed: blocked.is_empty(),
                message: if blocked.is_empty() { "nothing blocks shardCollection".into() } else { blocked.join("; ") },
            }
        }),
    },
    RuleDef {
        name: "forbid_invalid",
        metric: "verdict (invalid)",
        value: ValueType::Flag,
        doc: "verdict invalid: the server refuses the key on this collection (capped, time-series, arrays in a key field)",
        default: "true",
        implied: Some(Threshold::Flag(true)),
        culprit: Some(key_fields),
        judge: Judge::Candidate(|_, c| {
            let invalid = c.verdict == Verdict::Invalid;
            let why: Vec<String> = c.reasons.iter().map(|r| r.to_string()).collect();
            Finding::Measured {
                actual: json!(c.verdict.as_str()),
                passed: !invalid,
                message: if invalid { format!("invalid: {}", why.join("; ")) } else { format!("valid on this collection (its verdict: {})", c.verdict.as_str()) },
            }
        }),
    },
    RuleDef {
        name: "max_missing_key_percent",
        metric: "keyCharacteristics.numDocsMissingKeyFields (and null values)",
        value: ValueType::Percent,
        doc: "share of sampled documents that lack a key field or hold null there (they all share the key's null value)",
        default: "5.0",
        implied: Some(Threshold::Percent(5.0)),
        culprit: Some(missing_fields),
        judge: Judge::Candidate(|t, c| {
            let max = t.number();
            let Some(kc) = &c.metrics.key_characteristics else { return Finding::Skipped(NO_DOCUMENTS) };
            let n = &kc.null_or_missing;
            let share = |docs: u64| if n.of == 0 { 0.0 } else { docs as f64 * 100.0 / n.of as f64 };
            let p = share(n.docs);
            at_most(Some(p), max, NO_DOCUMENTS, |p| {
                // The culprit: each field that is missing or null, most often first.
                let mut fields: Vec<_> = n.by_field.iter().filter(|f| f.docs > 0).collect();
                fields.sort_by_key(|f| std::cmp::Reverse(f.docs));
                let named: Vec<String> =
                    fields.iter().map(|f| format!("{} {:.1}% ({} of {})", f.field, share(f.docs), fmt_count(f.docs), fmt_count(n.of))).collect();
                match fields.as_slice() {
                    [] => format!("no sampled document lacks a key field or holds null (maximum {max}%)"),
                    [f] => format!(
                        "{} missing or null in {:.1}% of sampled documents ({} of {}; maximum {max}%)",
                        f.field,
                        share(f.docs),
                        fmt_count(f.docs),
                        fmt_count(n.of)
                    ),
                    _ => format!("{p:.1}% of sampled documents lack a key field or hold null: {} (maximum {max}%)", named.join(", ")),
                }
            })
        }),
    },
    RuleDef {
        name: "unlisted_collections",
        metric: "listCollections of the policy's databases",
        value: ValueType::Choice(&["warn", "fail", "ignore"]),
        doc: "collections of the checked databases that no [[collection]] names: \"warn\", \"fail\" or \"ignore\" ([defaults] only)",
        default: "\"warn\"",
        implied: Some(Threshold::Choice("warn")),
        culprit: None,
        judge: Judge::Databases(|t, d| {
            let Some(unlisted) = d.unlisted else { return Finding::Skipped("the collections could not be listed (listCollections refused or failed)") };
            if unlisted.is_empty() {
                let dbs = d.databases.join(", ");
                return Finding::Measured { actual: json!(0), passed: true, message: format!("every collection of {dbs} is in the policy") };
            }
            let message = format!(
                "{} not in the policy, so unchecked: {} (add a [[collection]] with its key)",
                crate::util::text::count_of(unlisted.len() as u64, "collection", "collections"),
                unlisted.join(", ")
            );
            let actual = json!(unlisted);
            match t {
                Threshold::Choice("fail") => Finding::Measured { actual, passed: false, message },
                _ => Finding::Warning { actual, message },
            }
        }),
    },
    RuleDef {
        name: "forbid_refused_keys",
        metric: "plan given.choices[].refused",
        value: ValueType::Flag,
        doc: "[plan] only, on unless false: a declared key the server refuses (a unique index blocks it, or it is invalid)",
        default: "true",
        implied: Some(Threshold::Flag(true)),
        culprit: None,
        judge: Judge::Plan(super::plan_rules::refused_keys),
    },
    RuleDef {
        name: "max_single_shard_loss_percent",
        metric: "plan transactions.singleShardShare - given.transactions.singleShardShare",
        value: ValueType::Percent,
        doc: "[plan] only, 10 unless set: points of transactions on one shard the declared plan may give up against shardkey's own",
        default: "10.0",
        implied: Some(Threshold::Percent(10.0)),
        culprit: None,
        judge: Judge::Plan(super::plan_rules::share_loss),
    },
    RuleDef {
        name: "score_tolerance",
        metric: "score, against --baseline",
        value: ValueType::Score,
        doc: "--baseline: a score this many points below the baseline's is sampling noise, not worse",
        default: "3",
        implied: Some(Threshold::Int(3)),
        culprit: None,
        judge: Judge::Tolerance,
    },
    RuleDef {
        name: "percent_tolerance",
        metric: "each percentage rule's actual, against --baseline",
        value: ValueType::Percent,
        doc: "--baseline: a percentage rule's figure this many points from the baseline's is sampling noise, not worse",
        default: "2.0",
        implied: Some(Threshold::Percent(2.0)),
        culprit: None,
        judge: Judge::Tolerance,
    },
];

/// Why `forbid_blocked` is not evaluated.
const NO_INDEXES: &str = "indexes unknown: give --uri, or --indexes with an export";

/// A blocked finding in the gate's words: the index, what it blocks, the fix.
fn blocked_message(key: &ShardKey, f: &crate::rules::Finding) -> String {
    match &f.index {
        Some(ix) => format!(
            "unique index {} {}: shardCollection refuses {key} while it exists; drop it or move the uniqueness to a proxy collection (one document per {} value, its _id, inserted in the same transaction)",
            ix.name,
            ix.pattern(),
            ix.key.keys().map(String::as_str).collect::<Vec<_>>().join("+"),
        ),
        None => f.message.clone(),
    }
}

/// How many query shapes a culprit names.
const TOP_SHAPES: usize = 3;

/// The query shapes behind a targeting rule: the `TOP_SHAPES` most frequent of those the key
/// sends to every shard (reads) or to more than one (writes), each with its share of the reads
/// (or writes) and an example.
fn shapes_behind(c: &RuleInput, reads: bool) -> Culprit {
    let is_read = |op: &str| matches!(op, "find" | "aggregate" | "count" | "distinct");
    let total = if reads { c.metrics.read_distribution.sample_size.total } else { c.metrics.write_distribution.sample_size.total };
    let mut shapes: Vec<(u64, &crate::metrics::query_shapes::QueryShapeReport)> = c
        .metrics
        .query_shapes
        .iter()
        // Reads: the scatter-gather ones the rule counts; writes: any that one shard cannot take.
        .filter(|s| if reads { s.label == Label::ScatterGather } else { s.label != Label::SingleShard })
        .map(|s| (s.ops.iter().filter(|(op, _)| is_read(op) == reads).map(|(_, n)| n).sum(), s))
        .filter(|(n, _)| *n > 0)
        .collect();
    shapes.sort_by_key(|(n, _)| std::cmp::Reverse(*n));
    let mut culprit = Culprit::default();
    for (n, s) in shapes.into_iter().take(TOP_SHAPES) {
        let share = if total == 0 { 0.0 } else { n as f64 * 100.0 / total as f64 };
        let what = if reads { "reads" } else { "writes" };
        let example = if reads { &s.example.read } else { &s.example.write };
        culprit.causes.push(format!("query shape {} ({}): {share:.1}% of {what}, e.g. {example}", s.shape, s.label.as_str()));
        // The fields the shape filters on: what a change to the application spells out.
        for field in s.shape.trim_matches(|ch| ch == '{' || ch == '}').split(", ").filter_map(|p| p.split_once(": ").map(|x| x.0)) {
            if !field.starts_with('$') && !culprit.names.iter().any(|n| n == field) {
                culprit.names.push(field.to_string());
            }
        }
    }
    culprit.names.push(c.collection.to_string());
    culprit
}

fn scatter_gather_reads(c: &RuleInput) -> Culprit {
    shapes_behind(c, true)
}

fn untargeted_writes(c: &RuleInput) -> Culprit {
    shapes_behind(c, false)
}

/// The key's own fields: what the data holds for them is the cause.
fn key_fields(c: &RuleInput) -> Culprit {
    let mut names: Vec<String> = c.key.fields.iter().map(|f| f.path.clone()).filter(|p| p != "_id").collect();
    names.push(c.collection.to_string());
    Culprit { causes: Vec::new(), names }
}

/// The score's reasons, problems first (the score's words).
fn reasons_behind(c: &RuleInput) -> Culprit {
    let mut culprit = key_fields(c);
    culprit.causes = c.reasons.iter().take(TOP_SHAPES).map(|r| r.to_string()).collect();
    culprit
}

fn blocking_indexes(c: &RuleInput) -> Culprit {
    let mut culprit = Culprit::default();
    // The message names the index; the causes add the command that lifts the block.
    for f in c.constraints.iter().filter(|f| f.effect == Effect::Blocked) {
        culprit.causes.extend(f.fix.iter().map(|cmd| format!("fix, once the uniqueness is kept elsewhere: {cmd}")));
        let Some(ix) = &f.index else { continue };
        culprit.names.push(ix.name.clone());
        culprit.names.extend(ix.key.keys().filter(|k| *k != "_id").cloned());
    }
    culprit.names.push(c.collection.to_string());
    culprit
}

/// The fields that are missing or null (the message gives each one's share).
fn missing_fields(c: &RuleInput) -> Culprit {
    let mut culprit = Culprit::default();
    if let Some(kc) = &c.metrics.key_characteristics {
        culprit.names.extend(kc.null_or_missing.by_field.iter().filter(|f| f.docs > 0).map(|f| f.field.clone()));
    }
    culprit.names.push(c.collection.to_string());
    culprit
}

/// The rule of that name.
pub(crate) fn rule(name: &str) -> Option<&'static RuleDef> {
    RULES.iter().find(|r| r.name == name)
}
