//! Why one candidate ranks above the next, in words (`comparedWithNext`).

use super::verdict::{Score, Verdict};
use super::weights::{cap_words, Component, WEIGHTS};

/// A tie between keys when every sampled operation is an insert: the reads and writes that
/// would separate them were not seen (a slow-query log holds only those slower than slowms).
const ONLY_INSERTS_TIE: &str = "; the sampled operations are all inserts: reads, updates or deletes would separate them (a slow-query log holds only those slower than slowms; the profiler at level 2 or sampled queries hold every one)";

/// "X against Y" without saying twice the words both begin with: "an operation reaches 2.85
/// of 4 shards on average against 3.18 of 4 shards on average".
pub(super) fn against(a: &str, b: &str) -> String {
    let (wa, wb): (Vec<&str>, Vec<&str>) = (a.split(' ').collect(), b.split(' ').collect());
    let common = wa.iter().zip(&wb).take_while(|(x, y)| x == y).count();
    // Keep the whole second phrase when the shared words are all of it, or nothing.
    if common == 0 || common >= wb.len() {
        return format!("{a} against {b}");
    }
    format!("{a} against {}", wb[common..].join(" "))
}

/// Why the candidate ranked `a` stands above the one ranked `b`, in words: the
/// component where `a` gains the most weighted points, a cap on `b`, and the
/// component where `a` loses the most ("at the cost of").
pub(crate) fn compare(a_rank: usize, a: &Score, b_rank: usize, b: &Score) -> String {
    let gains: Vec<(Component, f64)> = WEIGHTS
        .iter()
        .map(|w| (w.component, w.weight * (a.breakdown.component(w.component) - b.breakdown.component(w.component)) * 100.0))
        .collect();
    // A gain whose words read the same for both (a difference lost to rounding) explains nothing.
    let differs = |g: &(Component, f64)| a.breakdown.words(g.0) != b.breakdown.words(g.0);
    let best = gains.iter().cloned().filter(|g| g.1 > 0.5 && differs(g)).max_by(|x, y| x.1.total_cmp(&y.1));
    let worst = gains.iter().cloned().filter(|g| g.1 < -0.5 && differs(g)).min_by(|x, y| x.1.total_cmp(&y.1));
    // Ranked by class first (accepted, blocked, invalid): a higher score below is refused.
    let refused = |v: Verdict| matches!(v, Verdict::Blocked | Verdict::Invalid);
    if refused(b.verdict) && !refused(a.verdict) || b.verdict == Verdict::Invalid && a.verdict == Verdict::Blocked {
        return format!(
            "#{a_rank} ranks above #{b_rank} ({} against {}) because the server refuses #{b_rank} {}",
            a.score,
            b.score,
            if b.verdict == Verdict::Blocked {
                "until something is changed first (its constraints say what)"
            } else {
                "whatever is changed"
            }
        );
    }
    let mut s = if a.score == b.score {
        format!("#{a_rank} ties with #{b_rank} at {}", a.score)
    } else {
        format!("#{a_rank} beats #{b_rank} ({} against {})", a.score, b.score)
    };
    let mut because = Vec::new();
    match (b.breakdown.capped_by, a.breakdown.capped_by) {
        (Some(cb), ca) if ca != Some(cb) && b.breakdown.cap.unwrap_or(100.0) < b.breakdown.weighted => {
            because.push(format!("#{b_rank} is capped at {:.0}: {}", b.breakdown.cap.unwrap_or(0.0), cap_words(cb)))
        }
        _ => {}
    }
    // On a tie the refused writes rank first (`pipeline::recommend::rank`): say so.
    let (ra, rb) = (a.breakdown.refused_writes_percent, b.breakdown.refused_writes_percent);
    if a.score == b.score && ra < rb {
        because.push(format!("the server would refuse {ra:.1}% of the sampled writes under #{a_rank} against {rb:.1}% under #{b_rank}"));
    } else if let Some((c, _)) = best {
        because.push(against(a.breakdown.words(c), b.breakdown.words(c)));
    }
    if !because.is_empty() {
        // A tie is not explained by a difference: what ranks it above the next is.
        s.push_str(if a.score == b.score { " and ranks above it because " } else { " because " });
        s.push_str(&because.join(", and "));
    }
    if let Some((c, _)) = worst {
        s.push_str(&format!(", at the cost of: {}", against(a.breakdown.words(c), b.breakdown.words(c))));
    }
    if a.score == b.score {
        // A tie the evidence cannot break: say what would.
        let missing = |c: Component| a.breakdown.measured(c).is_none() || b.breakdown.measured(c).is_none();
        let only_inserts = a.reasons.contains(&super::reasons::Reason::OnlyInsertsSampled);
        if missing(Component::FanOut) && only_inserts {
            s.push_str(ONLY_INSERTS_TIE);
        } else if missing(Component::FanOut) {
            s.push_str("; targeting was not measured: a slow-query log, the profiler or sampled queries would separate them");
        } else if missing(Component::DataSpread) {
            s.push_str("; the data was not measured: the documents (an export, a dump or --uri) would separate them");
        }
    }
    s
}
