//! The plan's sentences about one collection's rules and about a plan given with `--key` /
//! `--unsharded`: what refused a key, and how the plan as given compares. Only words: the
//! figures come from the search (`search`) and the collections' own analyses.

use super::input::{CandidateInput, Choice, CollectionInput, UniqueIndex};
use super::outcome::Plan;

/// "the unique index slug_1 {slug: 1}", "the unique indexes a_1 {a: 1} and b_1 {b: 1}".
fn indexes(ix: &[UniqueIndex]) -> String {
    let named: Vec<String> = ix.iter().map(|i| format!("{} {}", i.name, i.pattern)).collect();
    match named.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("the unique indexes {} and {last}", rest.join(", ")),
        _ => format!("the unique index {}", named.join("")),
    }
}

/// "slug", "a, or a + b": the keys the index allows, each made of its leading fields (the
/// server's isIndexUniquenessCompatible: the key a prefix of the unique index, mongodb/mongo
/// 49802bc src/mongo/s/shard_key_pattern.cpp), so {a: 1} is allowed beside {a: 1, b: 1}.
fn prefixes(ix: &UniqueIndex) -> String {
    (1..=ix.fields.len()).map(|n| ix.fields[..n].join(" + ")).collect::<Vec<_>>().join(", or ")
}

/// Why the server refuses a candidate as things stand, in one sentence (the key with its score
/// when `scored`); None when it accepts it.
pub(crate) fn refusal(c: &CandidateInput, scored: bool) -> Option<String> {
    let key = if scored { format!("{} (score {})", c.key, c.score) } else { c.key.to_string() };
    if let Some(why) = &c.notes.invalid {
        return Some(format!("{key} is invalid on this collection: {why}"));
    }
    match c.notes.blocked_by.as_slice() {
        [] => None,
        [ix] => Some(format!(
            "{} allows only a shard key of its leading fields ({}): {key} is blocked (shardCollection refuses it while the index exists)",
            indexes(std::slice::from_ref(ix)),
            prefixes(ix),
        )),
        many => Some(format!(
            "{} allow only a shard key of the leading fields of each: {key} is blocked (shardCollection refuses it while they exist)",
            indexes(many),
        )),
    }
}

/// The rules that forced or forbade this collection's key: for a key kept as given that the
/// server refuses, why (it stays in the plan, flagged); and the best-scoring key the rules
/// refuse when it scores above the one chosen (what a unique index costs), with its score.
pub(crate) fn constraints(inp: &CollectionInput, choice: &Choice, given: bool) -> Vec<String> {
    let mut out = Vec::new();
    let chosen_score = match choice {
        Choice::Key(k) => {
            let c = &inp.candidates[*k];
            if let Some(r) = refusal(c, false) {
                out.push(if given { format!("{r}; kept as given") } else { r });
            }
            c.score
        }
        Choice::Unsharded => inp.candidates.iter().filter(|c| c.valid).map(|c| c.score).max().unwrap_or(0),
    };
    let forbidden = inp
        .candidates
        .iter()
        .filter(|c| !c.valid && c.score > chosen_score && !matches!(choice, Choice::Key(k) if inp.candidates[*k].key == c.key))
        .max_by_key(|c| c.score);
    out.extend(forbidden.and_then(|c| refusal(c, true)));
    out
}

/// "85%", or "none" without a share.
fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.0}%", v * 100.0)).unwrap_or_else(|| "none".into())
}

/// The plan as given against shardkey's, in one sentence: the transactions' single-shard
/// shares and the difference in points, the joins', the objectives.
pub(crate) fn comparison(own: &Plan, given: &Plan) -> String {
    let (o, g) = (own.transactions.single_shard_share, given.transactions.single_shard_share);
    let mut words = match (o, g) {
        (Some(o), Some(g)) => {
            let points = ((o - g) * 100.0).round();
            let n = |p: f64| crate::util::text::count_of(p.abs() as u64, "point", "points");
            let diff = match points {
                p if p > 0.0 => format!("{} fewer than shardkey's plan ({})", n(p), pct(Some(o))),
                p if p < 0.0 => format!("{} more than shardkey's plan ({})", n(p), pct(Some(o))),
                _ => format!("as many as shardkey's plan ({})", pct(Some(o))),
            };
            format!("your plan keeps {} of transactions on one shard, {diff}", pct(Some(g)))
        }
        _ => match (own.transactions.single_shard_share_range, given.transactions.single_shard_share_range) {
            // Seen in part: both plans' ranges, never one figure on the few seen whole.
            (Some(o), Some(g)) => format!(
                "your plan keeps between {} and {} of transactions on one shard, shardkey's plan between {} and {} (transactions seen in part)",
                pct(Some(g.low)),
                pct(Some(g.high)),
                pct(Some(o.low)),
                pct(Some(o.high))
            ),
            _ => "no transaction to compare".to_string(),
        },
    };
    if own.joins.single_shard_share.is_some() {
        words.push_str(&format!(
            "; joins: {} on one shard against {}",
            pct(given.joins.single_shard_share),
            pct(own.joins.single_shard_share)
        ));
    }
    words.push_str(&format!("; objective {:.3} against {:.3}", given.objective.value, own.objective.value));
    words
}

#[cfg(test)]
mod tests {
    use super::super::evaluate::tests::coll;
    use super::*;

    fn slug() -> UniqueIndex {
        UniqueIndex { name: "slug_1".into(), pattern: "{slug: 1}".into(), fields: vec!["slug".into()] }
    }

    /// tenants: {tenantId: 1} scores 90 but the unique index on slug blocks it; {slug:
    /// "hashed"} (70) is what the plan shards on. The sentence names the index and the
    /// better key; a key given that the index blocks is flagged and kept.
    #[test]
    fn a_unique_index_that_forbids_the_better_key_is_named() {
        let mut t = coll("s.tenants", 100, &["{tenantId: 1}", "{slug: \"hashed\"}"]);
        t.candidates[0].score = 90;
        t.candidates[0].valid = false;
        t.candidates[0].notes.blocked_by = vec![slug()];
        t.candidates[1].score = 70;
        assert_eq!(
            constraints(&t, &Choice::Key(1), false),
            ["the unique index slug_1 {slug: 1} allows only a shard key of its leading fields (slug): {tenantId: 1} (score 90) is blocked (shardCollection refuses it while the index exists)"]
        );
        assert_eq!(
            constraints(&t, &Choice::Key(0), true),
            ["the unique index slug_1 {slug: 1} allows only a shard key of its leading fields (slug): {tenantId: 1} is blocked (shardCollection refuses it while the index exists); kept as given"]
        );
        // Scoring below the key chosen, the index cost nothing: not said.
        t.candidates[0].score = 60;
        assert!(constraints(&t, &Choice::Key(1), false).is_empty());
    }

    /// A compound unique index allows each key of its leading fields, the shorter one too
    /// ({tenantId: 1} under {tenantId: 1, ticketNo: 1}: the key a prefix of the index).
    #[test]
    fn a_compound_unique_index_allows_each_key_of_its_leading_fields() {
        let ix = UniqueIndex {
            name: "tenantId_1_ticketNo_1".into(),
            pattern: "{tenantId: 1, ticketNo: 1}".into(),
            fields: vec!["tenantId".into(), "ticketNo".into()],
        };
        let mut t = coll("s.tickets", 100, &["{_id: \"hashed\"}"]);
        t.candidates[0].notes.blocked_by = vec![ix];
        assert_eq!(
            refusal(&t.candidates[0], false).unwrap(),
            "the unique index tenantId_1_ticketNo_1 {tenantId: 1, ticketNo: 1} allows only a shard key of its leading fields (tenantId, or tenantId + ticketNo): {_id: \"hashed\"} is blocked (shardCollection refuses it while the index exists)"
        );
    }
}
