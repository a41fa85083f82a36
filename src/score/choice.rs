//! The choice a constraint puts before the DBA (issue 39.1). A unique index the key does not
//! start with blocks the key (`crate::rules`), but its guarantee can move to a proxy
//! collection (`super::apply`). So when the keys the indexes allow score far below a key they
//! block, the recommendation is the better key with that change, and both sides are said in
//! one sentence; when the gap is smaller the allowed key stays recommended and the blocked one
//! is named as the alternative. The policy (docs/reference.md "Rules"): `FAR_BELOW` points.

use super::Verdict;
use crate::model::ShardKey;
use crate::rules::{Effect, Finding, RuleId};
use crate::util::text::and_list as and;
use serde::Serialize;

/// The manual's answer to a unique index the shard key cannot keep.
pub(crate) const PROXY_PAGE: &str = "https://www.mongodb.com/docs/manual/tutorial/enforce-uniqueness-on-non-shard-key-field/";

/// A blocked key this many points or more above the best key the server accepts is
/// recommended with its change: about one verdict band (25) less a rounding margin.
pub(crate) const FAR_BELOW: u32 = 20;

/// One candidate as the choice sees it, in ranking order.
pub(crate) struct Ranked<'a> {
    pub(crate) key: &'a ShardKey,
    pub(crate) score: u32,
    pub(crate) verdict: Verdict,
    pub(crate) constraints: &'a [Finding],
    /// Capped because writes would fail: its score were they fixed (`Breakdown::if_writes_fixed`).
    pub(crate) if_writes_fixed: Option<u32>,
}

/// A key the DBA could choose instead, its score, and what it requires.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Alternative {
    pub(crate) key: ShardKey,
    pub(crate) score: u32,
    pub(crate) requires: String,
}

/// What to recommend: the index of the chosen candidate, whether it is a blocked key chosen
/// over accepted ones, the sentence and the alternatives.
pub(crate) struct Choice {
    pub(crate) chosen: usize,
    pub(crate) over_accepted: bool,
    pub(crate) trade_off: Option<String>,
    pub(crate) alternatives: Vec<Alternative>,
    /// What the application must change before the chosen key is sharded on: the writes the
    /// server would refuse under it (the commands' first note).
    pub(crate) first: Option<String>,
}

/// The unique indexes blocking a key, when nothing else blocks it (a proxy keeps each).
fn unique_blocks(c: &Ranked) -> Option<Vec<String>> {
    let blocks: Vec<&Finding> = c.constraints.iter().filter(|f| f.effect == Effect::Blocked).collect();
    if blocks.is_empty() || blocks.iter().any(|f| f.rule != RuleId::UniqueIndex || f.index.is_none()) {
        return None;
    }
    Some(blocks.iter().filter_map(|f| f.index.as_ref()).map(|ix| ix.key.keys().cloned().collect::<Vec<_>>().join(" + ")).collect())
}

/// Choose between the best accepted key and the best key only unique indexes block; then
/// name the key the application's refused writes cost, when it would beat the choice.
/// `helps_yet`: sharding the collection brings some benefit at its size; else no unique index
/// is moved for a key (a new user's 44 KiB sellers were to lose theirs beside the report's
/// own "sharding brings no benefit yet").
pub(crate) fn choose(ranked: &[Ranked], helps_yet: bool) -> Choice {
    let mut choice = with_writes_fixed(ranked, choose_index(ranked, helps_yet));
    // A chosen key under which the server refuses some writes: they change before the key.
    choice.first = ranked.get(choice.chosen).and_then(refused_writes).map(|(refused, fields)| {
        format!("this key needs a change first: {refused} must name {fields} in their filters (its details list them), or the server refuses them once the collection is sharded")
    });
    choice
}

/// The choice, or the key capped by refused writes that would beat it with them fixed.
fn with_writes_fixed(ranked: &[Ranked], mut choice: Choice) -> Choice {
    let Some(c) = ranked.get(choice.chosen) else { return choice };
    let Some(fixed) = writes_fixed(ranked, c) else { return choice };
    if choice.over_accepted {
        // The proxy collection chosen, yet a key the unique index allows would score higher
        // with the refused writes fixed. Both are the application's changes, and naming the key
        // in the filters of those writes is the smaller one (a proxy collection takes every
        // insert, in a transaction, and every change of the unique fields): that key is
        // recommended, the proxy's named beside it, as `plan` keeps it (a trial's tickets).
        let uniq = unique_blocks(c).map(|u| and(&u)).unwrap_or_default();
        let capped_at = ranked[fixed.at].score;
        return Choice {
            chosen: fixed.at,
            over_accepted: false,
            trade_off: Some(format!(
                "{} keeps the unique index on {uniq}; recommended once {} name {} in their filters (its details list them): it then scores {}, {capped_at} until they do; moving {uniq}'s uniqueness to a proxy collection ({PROXY_PAGE}) would allow {} ({}) instead, a larger change (every insert through the proxy collection)",
                fixed.alternative.key, fixed.refused, fixed.fields, fixed.alternative.score, c.key, c.score
            )),
            alternatives: vec![Alternative { key: c.key.clone(), score: c.score, requires: format!("{uniq}'s uniqueness moved to a proxy collection") }],
            first: None,
        };
    }
    choice.trade_off.get_or_insert(fixed.words);
    choice.alternatives.push(fixed.alternative);
    choice
}

/// A key capped by the writes the server refuses under it, as `writes_fixed` names it.
struct WritesFixed {
    /// The key's place in the ranking.
    at: usize,
    alternative: Alternative,
    /// The sentence when it is the only trade-off.
    words: String,
    /// "the writes it refuses (N% of sampled updates and deletes)".
    refused: String,
    /// The fields those writes must name: "tenantId and number".
    fields: String,
}

/// The best key capped only because the server would refuse some of the application's writes
/// under it, when with those writes fixed it would score above `chosen`: the tool cannot
/// make that change (it is the application's), so the key stays an alternative, said with
/// the fields the writes must name (the rules' `filter_fix`, from `write_targeting`).
fn writes_fixed(ranked: &[Ranked], chosen: &Ranked) -> Option<WritesFixed> {
    let capped = |c: &Ranked| c.constraints.iter().any(|f| f.effect == Effect::WritesFail);
    // When the choice itself is capped, every key the server accepts fails some writes: the
    // best of them with its writes fixed is named, the choice included.
    let above = if capped(chosen) { 0 } else { chosen.score };
    let (at, c, score) = ranked
        .iter()
        .enumerate()
        .filter(|(_, c)| !matches!(c.verdict, Verdict::Blocked | Verdict::Invalid))
        .filter_map(|(i, c)| c.if_writes_fixed.map(|s| (i, c, s)))
        .filter(|(_, _, s)| *s > above)
        .max_by_key(|(_, _, s)| *s)?;
    let (refused, fields) = refused_writes(c)?;
    let requires = format!("{refused} to name {fields} in their filters");
    let accepted = ranked.iter().filter(|c| !matches!(c.verdict, Verdict::Blocked | Verdict::Invalid)).count();
    let clause = format!("{} would score {score} if {refused} named {fields} in their filters (its details list them)", c.key);
    let words = if capped(chosen) && accepted == 1 {
        format!(
            "{} is capped as writes that fail; with them fixed it would score {score}: {refused} must name {fields} in their filters",
            c.key
        )
    } else if capped(chosen) {
        format!(
            "every key the server accepts makes it refuse some of the application's writes on this version (each capped as writes that fail); with them fixed {} would score {score}: {refused} must name {fields} in their filters (its details list them)",
            c.key
        )
    } else {
        format!("every sampled write runs under {} ({}); {clause}", chosen.key, chosen.score)
    };
    Some(WritesFixed { at, alternative: Alternative { key: c.key.clone(), score, requires }, words, refused, fields })
}

/// The writes the server refuses under a key ("the writes it refuses (N% of sampled updates
/// and deletes)") and the fields they must name ("tenantId and number"); None when it refuses
/// none.
fn refused_writes(c: &Ranked) -> Option<(String, String)> {
    let failing: Vec<&Finding> = c.constraints.iter().filter(|f| f.effect == Effect::WritesFail).collect();
    if failing.is_empty() {
        return None;
    }
    let mut fields: Vec<String> = Vec::new();
    for x in failing.iter().flat_map(|f| &f.filter_fix) {
        if !fields.contains(x) {
            fields.push(x.clone());
        }
    }
    let share: f64 = failing.iter().filter_map(|f| f.percentage_of_writes).sum::<f64>().min(100.0);
    Some((format!("the writes it refuses ({share:.1}% of sampled updates and deletes)"), and(&fields)))
}

fn choose_index(ranked: &[Ranked], helps_yet: bool) -> Choice {
    let none = Choice { chosen: 0, over_accepted: false, trade_off: None, alternatives: Vec::new(), first: None };
    let accepted = ranked.iter().position(|c| !matches!(c.verdict, Verdict::Blocked | Verdict::Invalid));
    let blocked =
        ranked.iter().enumerate().find_map(|(i, c)| (c.verdict == Verdict::Blocked).then(|| unique_blocks(c).map(|u| (i, u))).flatten());
    let (Some(a), Some((b, fields))) = (accepted, blocked) else { return none };
    let (ka, kb) = (&ranked[a], &ranked[b]);
    if kb.score <= ka.score {
        return none;
    }
    let uniq = and(&fields);
    let plural = if fields.len() > 1 { "s" } else { "" };
    let keep = format!("keep the unique index{plural} on {uniq} and the best key is {} ({})", ka.key, ka.score);
    let far = kb.score >= ka.score + FAR_BELOW;
    let moved = format!("{uniq}'s uniqueness moved to a proxy collection");
    if far && !helps_yet {
        return Choice {
            chosen: a,
            over_accepted: false,
            trade_off: Some(format!(
                "{keep}: recommended while sharding brings no benefit yet (the notes say from which size); moving {uniq}'s uniqueness to a proxy collection ({PROXY_PAGE}) would allow {} ({}) once it grows",
                kb.key, kb.score
            )),
            alternatives: vec![Alternative { key: kb.key.clone(), score: kb.score, requires: moved }],
            first: None,
        };
    }
    if far {
        Choice {
            chosen: b,
            over_accepted: true,
            trade_off: Some(format!(
                "{keep}; move {uniq}'s uniqueness to a proxy collection ({PROXY_PAGE}) and shard on {} ({}): recommended, {} points above (the commands below do it)",
                kb.key,
                kb.score,
                kb.score - ka.score
            )),
            alternatives: vec![Alternative { key: ka.key.clone(), score: ka.score, requires: "nothing: every unique index stays".into() }],
            first: None,
        }
    } else {
        Choice {
            chosen: a,
            over_accepted: false,
            trade_off: Some(format!(
                "{keep}: recommended; moving {uniq}'s uniqueness to a proxy collection ({PROXY_PAGE}) would allow {} ({}), less than {FAR_BELOW} points above",
                kb.key, kb.score
            )),
            alternatives: vec![Alternative { key: kb.key.clone(), score: kb.score, requires: moved }],
            first: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::index::IndexSpec;
    use bson::doc;

    fn k(s: &str) -> ShardKey {
        ShardKey::parse(s).unwrap()
    }

    fn unique_block(field: &str) -> Finding {
        let mut f = crate::rules::check(
            &crate::rules::test_support::cx(
                Some(&[IndexSpec { name: format!("{field}_1"), key: doc! {field: 1}, unique: true, ..IndexSpec::default() }]),
                None,
                &[],
            ),
            &k("{tenantId: 1, userId: 1}"),
        );
        f.remove(0)
    }

    #[test]
    fn far_below_recommends_the_blocked_key_with_its_change() {
        let (email, tu) = (k("{email: 1}"), k("{tenantId: 1, userId: 1}"));
        let blocks = [unique_block("email")];
        let ranked = [
            Ranked { key: &email, score: 48, verdict: Verdict::Poor, constraints: &[], if_writes_fixed: None },
            Ranked { key: &tu, score: 95, verdict: Verdict::Blocked, constraints: &blocks, if_writes_fixed: None },
        ];
        let c = choose(&ranked, true);
        assert_eq!((c.chosen, c.over_accepted), (1, true));
        assert_eq!(
            c.trade_off.unwrap(),
            format!("keep the unique index on email and the best key is {{email: 1}} (48); move email's uniqueness to a proxy collection ({PROXY_PAGE}) and shard on {{tenantId: 1, userId: 1}} (95): recommended, 47 points above (the commands below do it)")
        );
        assert_eq!(c.alternatives, [Alternative { key: email.clone(), score: 48, requires: "nothing: every unique index stays".into() }]);
        // Too small yet for sharding to bring anything: no unique index moves for it.
        let c = choose(&ranked, false);
        assert_eq!((c.chosen, c.over_accepted), (0, false));
        assert_eq!(
            c.trade_off.unwrap(),
            format!("keep the unique index on email and the best key is {{email: 1}} (48): recommended while sharding brings no benefit yet (the notes say from which size); moving email's uniqueness to a proxy collection ({PROXY_PAGE}) would allow {{tenantId: 1, userId: 1}} (95) once it grows")
        );
        assert_eq!(c.alternatives[0].requires, "email's uniqueness moved to a proxy collection");
        // 19 points: the accepted key stays, the blocked one is the alternative.
        let ranked = [
            Ranked { key: &email, score: 60, verdict: Verdict::Acceptable, constraints: &[], if_writes_fixed: None },
            Ranked { key: &tu, score: 79, verdict: Verdict::Blocked, constraints: &blocks, if_writes_fixed: None },
        ];
        let c = choose(&ranked, true);
        assert_eq!((c.chosen, c.over_accepted), (0, false));
        assert_eq!(c.alternatives[0].requires, "email's uniqueness moved to a proxy collection");
        // Nothing blocked above it, or nothing accepted: no choice to say.
        let ranked = [
            Ranked { key: &email, score: 80, verdict: Verdict::Good, constraints: &[], if_writes_fixed: None },
            Ranked { key: &tu, score: 79, verdict: Verdict::Blocked, constraints: &blocks, if_writes_fixed: None },
        ];
        assert!(choose(&ranked, true).trade_off.is_none());
        assert!(choose(&[Ranked { key: &tu, score: 79, verdict: Verdict::Blocked, constraints: &blocks, if_writes_fixed: None }], true)
            .trade_off
            .is_none());
    }

    /// A trial's helpdesk tickets on 6.0: {tenantId: 1, number: 1} keeps the unique index but is
    /// capped (20) by findAndModify by _id alone, 98 were they to name the key; {_id: "hashed"}
    /// (83) needs the index's uniqueness in a proxy collection. Both are the application's
    /// changes; the writes' filters are the smaller one and score higher: that key is
    /// recommended, its writes' fix the commands' first note, the proxy's key the alternative.
    #[test]
    fn a_writes_fix_that_beats_the_proxy_key_is_recommended_over_it() {
        use crate::model::{Op, Query, QueryOrigin};
        let (tn, id) = (k("{tenantId: 1, number: 1}"), k("{_id: \"hashed\"}"));
        let fam = Query::new(Op::FindAndModify, "helpdesk.tickets", doc! {"_id": 7}, QueryOrigin::Profiler);
        let refs = [&fam];
        let mut cx = crate::rules::test_support::cx(None, None, &refs);
        cx.server_version = Some((6, 0));
        let failing: Vec<Finding> = crate::rules::check(&cx, &tn).into_iter().filter(|f| f.effect == Effect::WritesFail).collect();
        assert_eq!(failing.len(), 1, "{failing:#?}");
        let blocks = [unique_block("number")];
        let ranked = [
            Ranked { key: &tn, score: 20, verdict: Verdict::Bad, constraints: &failing, if_writes_fixed: Some(98) },
            Ranked { key: &id, score: 83, verdict: Verdict::Blocked, constraints: &blocks, if_writes_fixed: None },
        ];
        let c = choose(&ranked, true);
        assert_eq!((c.chosen, c.over_accepted), (0, false));
        assert_eq!(
            c.trade_off.as_deref(),
            Some(format!("{tn} keeps the unique index on number; recommended once the writes it refuses (100.0% of sampled updates and deletes) name tenantId and number in their filters (its details list them): it then scores 98, 20 until they do; moving number's uniqueness to a proxy collection ({PROXY_PAGE}) would allow {id} (83) instead, a larger change (every insert through the proxy collection)").as_str())
        );
        assert_eq!(c.alternatives.iter().map(|a| (a.key.to_string(), a.score)).collect::<Vec<_>>(), [(id.to_string(), 83)]);
        assert_eq!(
            c.first.as_deref(),
            Some("this key needs a change first: the writes it refuses (100.0% of sampled updates and deletes) must name tenantId and number in their filters (its details list them), or the server refuses them once the collection is sharded")
        );
        // Not above the proxy's key: the sentence stays the proxy's alone.
        let ranked = [
            Ranked { key: &tn, score: 20, verdict: Verdict::Bad, constraints: &failing, if_writes_fixed: Some(80) },
            Ranked { key: &id, score: 83, verdict: Verdict::Blocked, constraints: &blocks, if_writes_fixed: None },
        ];
        let c = choose(&ranked, true);
        assert_eq!((c.chosen, c.over_accepted, c.first), (1, true, None));
        assert!(!c.trade_off.unwrap().contains("filters"));
    }

    /// The fixture's case: 34 of 284 writes are findAndModify by userId; on 6.0 mongos refuses
    /// them under {projectId: 1, _id: 1} (ShardKeyNotFound), which scores 70 uncapped, 20 capped.
    /// {userId: "hashed"} (57) is recommended and the better key named with the writes' fix.
    #[test]
    fn a_key_capped_by_refused_writes_is_named_with_their_fix() {
        use crate::model::{Op, Query, QueryOrigin};
        let (pid, uid) = (k("{projectId: 1, _id: 1}"), k("{userId: \"hashed\"}"));
        let fam = Query::new(Op::FindAndModify, "app.events", doc! {"userId": "u1"}, QueryOrigin::Profiler);
        let refs = [&fam];
        let mut cx = crate::rules::test_support::cx(None, None, &refs);
        cx.server_version = Some((6, 0));
        let failing: Vec<Finding> = crate::rules::check(&cx, &pid).into_iter().filter(|f| f.effect == Effect::WritesFail).collect();
        assert_eq!(failing.len(), 1, "{failing:#?}");
        let ranked = [
            Ranked { key: &uid, score: 57, verdict: Verdict::Acceptable, constraints: &[], if_writes_fixed: None },
            Ranked { key: &pid, score: 20, verdict: Verdict::Bad, constraints: &failing, if_writes_fixed: Some(70) },
        ];
        let c = choose(&ranked, true);
        assert_eq!((c.chosen, c.over_accepted, c.first.as_deref()), (0, false, None));
        assert_eq!(
            c.trade_off.as_deref(),
            Some("every sampled write runs under {userId: \"hashed\"} (57); {projectId: 1, _id: 1} would score 70 if the writes it refuses (100.0% of sampled updates and deletes) named projectId and _id in their filters (its details list them)")
        );
        assert_eq!((c.alternatives[0].key.clone(), c.alternatives[0].score), (pid.clone(), 70));
        // Not above the choice: nothing said.
        let ranked = [
            Ranked { key: &uid, score: 71, verdict: Verdict::Good, constraints: &[], if_writes_fixed: None },
            Ranked { key: &pid, score: 20, verdict: Verdict::Bad, constraints: &failing, if_writes_fixed: Some(70) },
        ];
        assert!(choose(&ranked, true).trade_off.is_none());
        // Every accepted key capped (the helpdesk trial: an escalation by _id refused under each):
        // the best with its writes fixed is named, the choice itself included.
        let ranked = [
            Ranked { key: &pid, score: 20, verdict: Verdict::Bad, constraints: &failing, if_writes_fixed: Some(70) },
            Ranked { key: &uid, score: 20, verdict: Verdict::Bad, constraints: &failing, if_writes_fixed: Some(57) },
        ];
        let c = choose(&ranked, true);
        assert_eq!(c.chosen, 0);
        assert!(c.first.as_deref().is_some_and(|f| f.contains("must name projectId and _id in their filters")), "{:?}", c.first);
        assert!(
            c.trade_off
                .as_deref()
                .is_some_and(|t| t.starts_with("every key the server accepts makes it refuse some of the application's writes")
                    && t.contains("with them fixed {projectId: 1, _id: 1} would score 70")),
            "{:?}",
            c.trade_off
        );
    }
}
