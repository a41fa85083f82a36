//! The words every write rule says about the writes it finds failing: their share of the
//! sampled updates and deletes, and their commonest shapes (`upserts`, `single_writes`,
//! `write_targeting`).

use super::rule::Context;
use crate::model::{Op, Query};
use crate::targeting::shapes::shape_into;
use crate::util::text::fmt_count;

/// Writes that fail under `key` (`failing`, those of `cx.queries` that do, in their order), in
/// words: "60.0% of 500 sampled writes (300 upserts: ...)". The rule picks them: it may keep
/// what it learnt of each (its refusal) rather than ask the verdict twice.
pub(super) fn failing(cx: &Context, what: &str, failing: &[&Query]) -> Option<(f64, String)> {
    let writes = cx.queries.iter().filter(|q| !q.op.is_read() && q.op != Op::Insert).count();
    if failing.is_empty() || writes == 0 {
        return None;
    }
    // Counted by text in a map, each text written into one buffer: a string and a search of
    // the list per failing write were 2% of `plan`'s profile (every write of every candidate).
    let mut counts: ahash::AHashMap<String, usize> = ahash::AHashMap::new();
    let (mut shape, mut text) = (String::new(), String::new());
    for q in failing {
        shape_into(&q.filter, &mut shape);
        text.clear();
        text.push_str(q.op.name());
        text.push(' ');
        text.push_str(&shape);
        match counts.get_mut(text.as_str()) {
            Some(n) => *n += 1,
            None => {
                counts.insert(text.clone(), 1);
            }
        }
    }
    let mut shapes: Vec<(String, usize)> = counts.into_iter().collect();
    shapes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let listed: Vec<String> = shapes.iter().take(3).map(|(s, n)| format!("{}× {s}", fmt_count(*n as u64))).collect();
    // One decimal, as the words and the cluster's percentages.
    let percent = (failing.len() as f64 * 1000.0 / writes as f64).round() / 10.0;
    Some((
        percent,
        format!(
            "{percent:.1}% of {} sampled updates and deletes are {what} ({}{})",
            fmt_count(writes as u64),
            listed.join(", "),
            if shapes.len() > 3 { format!(", {} more shapes", shapes.len() - 3) } else { String::new() }
        ),
    ))
}
