//! Words on the key fields the report owes the DBA (issue 49): a filtered field left out of
//! the proposals for a few bad documents, and a key field holding kinds of values that never
//! compare equal.

use crate::propose::Proposal;
use crate::report::CandidateReport;
use crate::sample::Sample;
use crate::score::Verdict;

/// Each filtered field the proposals left out for a few bad documents (`propose::left_out`):
/// its best key's score and rank among the keys the server accepts, scored without the
/// documents holding arrays (the sample already leaves them out of every measure; only the
/// refusal of the key is lifted here).
pub(super) fn left_out(proposals: &[Proposal], candidates: &[CandidateReport]) -> Vec<String> {
    let accepted = |c: &&CandidateReport| !matches!(c.verdict, Verdict::Blocked | Verdict::Invalid);
    let mut best: Vec<(&crate::propose::left_out::LeftOut, &CandidateReport, u32)> = Vec::new();
    for p in proposals {
        let crate::propose::Origin::LeftOut(l) = &p.origin else { continue };
        let Some(c) = candidates.iter().find(|c| c.key == p.key) else { continue };
        let mut m = c.metrics.clone();
        if let Some(k) = m.key_characteristics.as_mut() {
            k.num_docs_with_array_key_values = 0;
        }
        let s = crate::score::score_candidate(&m, &c.constraints).score;
        match best.iter_mut().find(|b| b.0.path == l.path) {
            Some(b) if b.2 >= s => {}
            Some(b) => *b = (l, c, s),
            None => best.push((l, c, s)),
        }
    }
    best.into_iter()
        .map(|(l, c, s)| {
            let others = candidates.iter().filter(accepted).filter(|o| o.key != c.key);
            let rank = 1 + others.clone().filter(|o| o.score > s).count();
            // The sample's counts (the whole collection when it is read whole), not the pre-scan's.
            let kc = c.metrics.key_characteristics.as_ref();
            let sampled = crate::propose::left_out::Counts {
                arrays: kc.map_or(l.arrays as u64, |k| k.num_docs_with_array_key_values),
                missing: kc.map_or(l.missing as u64, |k| k.num_docs_missing_key_fields),
                of: kc.map_or(l.scanned as u64, |k| k.num_docs_sampled),
                what: if kc.is_some() { "sampled" } else { "pre-scanned" },
            };
            crate::propose::left_out::note(l, sampled, &c.key, s, rank, others.count() + 1)
        })
        .collect()
}

/// Each key field of the candidates holding kinds of values that never compare equal
/// (`propose::type_mix`), said once per field, over the sample's documents.
pub(super) fn type_mixtures(sample: &Sample) -> Vec<String> {
    let mut seen: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for ks in &sample.keys {
        for (f, counts) in ks.key.fields.iter().zip(&ks.types_by_field) {
            if seen.contains(&f.path.as_str()) {
                continue;
            }
            seen.push(&f.path);
            out.extend(crate::propose::type_mix::note(&f.path, counts, ks.docs_counted()));
        }
    }
    out
}
