//! Keys that honour a residency rule (`model::residency`): the zone field first, ranged, then
//! each field the other proposals lead with (and `_id`), ranged and hashed. The hashed form is
//! a compound hashed key: manual "Hashed Sharding" (4.4 adds compound indexes with one hashed
//! field, "the prefix non-hashed field or fields support zone ranges while the hashed field
//! supports more even distribution"); before, mongodb/mongo 7c3c0f3
//! src/mongo/s/shard_key_pattern.cpp `parseShardKeyPattern` took "hashed" as a single field
//! only. 6.0.5's config server checks such a key's zone bounds (tests/residency.rs).

use super::collection::merge;
use super::proposal::{Origin, Proposal};
use crate::model::residency::Residency;
use crate::model::{KeyField, KeyKind, ShardKey};

/// Fields after the zone field: the ones the proposals lead with, in their order, then `_id`.
const NEXT_FIELDS: usize = 4;

/// `proposals` and, after them, the keys led by the zone field. Err (one line) when the
/// documents read first (`seen`: their field paths) hold no such field.
pub(crate) fn with_zone_field(res: &Residency, proposals: Vec<Proposal>, seen: &[String], docs: usize) -> Result<Vec<Proposal>, String> {
    if !seen.is_empty() && !seen.contains(&res.field) {
        let hint = crate::util::text::closest(&res.field, seen).map(|s| format!("; did you mean '{s}'?")).unwrap_or_default();
        return Err(format!("--residency: none of the first {docs} documents holds '{}'{hint}", res.field));
    }
    let mut next: Vec<String> = Vec::new();
    for p in &proposals {
        for f in p.key.fields.iter().filter(|f| f.path != res.field) {
            if !next.contains(&f.path) && next.len() < NEXT_FIELDS {
                next.push(f.path.clone());
            }
        }
    }
    if !next.iter().any(|f| f == "_id") {
        next.push("_id".into());
    }
    let zone = KeyField { path: res.field.clone(), kind: KeyKind::Range };
    let mut more = Vec::new();
    for f in &next {
        for kind in [KeyKind::Range, KeyKind::Hashed] {
            let key = ShardKey { fields: vec![zone.clone(), KeyField { path: f.clone(), kind }] };
            let how =
                if kind == KeyKind::Hashed { "hashed, so each value's documents spread evenly over its zone's shards" } else { "ranged" };
            more.push(Proposal {
                key,
                origin: Origin::Proposed(format!("residency on {}: its zone field first, then {f} ({how})", res.field)),
            });
        }
    }
    Ok(merge([proposals, more]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proposes_the_zone_field_first_ranged_and_hashed() {
        let res = Residency::parse("region=EU:a,US:b").unwrap();
        let p = vec![Proposal { key: ShardKey::parse("{userId: 1}").unwrap(), origin: Origin::Proposed("x".into()) }];
        let out = with_zone_field(&res, p, &["region".into(), "userId".into()], 10).unwrap();
        let keys: Vec<String> = out.iter().map(|p| p.key.to_string()).collect();
        assert_eq!(
            keys,
            [
                "{userId: 1}",
                "{region: 1, userId: 1}",
                "{region: 1, userId: \"hashed\"}",
                "{region: 1, _id: 1}",
                "{region: 1, _id: \"hashed\"}"
            ]
        );
        let e = with_zone_field(&res, Vec::new(), &["regoin".into()], 1).unwrap_err();
        assert_eq!(e, "--residency: none of the first 1 documents holds 'region'; did you mean 'regoin'?");
    }
}
