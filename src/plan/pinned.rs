//! A plan zone that pins one value: a first-field value holding more than one shard's fair
//! share (1/N on N shards, zone i on shard i) sits in one zone whatever the balancer does,
//! since a zone range here bounds the first field only. Said with the value, its share, and
//! the cut on the key's next field (its sampled median) that lets the zone span two shards.
//! The same fair-share test as `score::residency` (analyze's residency zones).

use super::evaluate::zone_of;
use super::outcome::PinnedReport;
use super::steps::shard_name;
use crate::model::pinned::Pinned;
use crate::model::shell::{shell_doc, shell_value};
use crate::model::{KeyKind, ShardKey};
use crate::util::text::fmt_count;
use bson::{Bson, Document};

/// The pinned values of `namespace` under `key`, zoned at `splits` in zones `<name>-<i>` on
/// `shards` shards. A hashed first field names hashes, not values: nothing said for it (a
/// hash above its share is one value's too many documents, which analyze's jumbo figures say).
pub(crate) fn reports(
    namespace: &str,
    key: &ShardKey,
    pinned: &[Pinned],
    (splits, name, shards): (&[Bson], &str, usize),
) -> Vec<PinnedReport> {
    if key.fields[0].kind == KeyKind::Hashed || shards < 2 {
        return Vec::new();
    }
    let fair = (1000.0 / shards as f64).round() / 10.0;
    pinned
        .iter()
        .map(|p| {
            let i = zone_of(splits, &p.value);
            let pct = (p.documents as f64 * 1000.0 / p.of.max(1) as f64).round() / 10.0;
            let zone = format!("{name}-{i}");
            let split_at = p.next_split.as_ref().map(|m| bound(key, &p.value, m));
            let message = words(namespace, key, p, (&zone, i, pct, fair, shards), split_at.as_ref());
            PinnedReport {
                zone,
                value: p.value.clone().into_relaxed_extjson(),
                documents: p.documents,
                percentage: pct,
                fair_share_percentage: fair,
                split_at: split_at.map(|d| Bson::Document(d).into_relaxed_extjson()),
                message,
            }
        })
        .collect()
}

/// `{first: value, next: m, rest: MinKey}`: where the value's range is cut.
fn bound(key: &ShardKey, value: &Bson, m: &Bson) -> Document {
    let mut d = Document::new();
    for (i, f) in key.fields.iter().enumerate() {
        d.insert(f.path.clone(), [value.clone(), m.clone()].get(i).cloned().unwrap_or(Bson::MinKey));
    }
    d
}

fn words(
    ns: &str,
    key: &ShardKey,
    p: &Pinned,
    (zone, i, pct, fair, shards): (&str, usize, f64, f64, usize),
    split_at: Option<&Document>,
) -> String {
    let field = &key.fields[0].path;
    let value = shell_value(&p.value);
    let head = format!(
        "{ns}: {field} {value} holds {pct}% of the sampled documents ({} of {}), more than one shard's fair share ({fair}%: 1 of {shards} shards); zone {zone} bounds {field} only, so {value} stays on {} for good",
        fmt_count(p.documents),
        fmt_count(p.of),
        shard_name(i)
    );
    match (key.fields.get(1), split_at) {
        (None, _) => format!(
            "{head}, as one value in one chunk the balancer cannot split (jumbo); a next key field ({{{field}: 1, <field>: 1}} or <field>: \"hashed\") lets its range be cut so the zone can span more shards"
        ),
        (Some(next), Some(at)) => format!(
            "{head}. To spread it, cut its range on {} at the sampled median {}: the range below stays in zone {zone}, the range from it goes to a zone on another shard (make {} the bound between the two zones' ranges), about half each",
            next.path,
            shell_doc(at),
            shell_doc(at)
        ),
        (Some(next), None) => format!("{head}; its documents share one {} value too, so no cut on {} can spread it", next.path, next.path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tenant 7 with 51 of 200 documents on 4 shards (hand count: 25.5% > 25%), zones cut
    /// at 5 and 7 and 9: 7 starts zone 2, on shard2; cut at orderId 26.
    #[test]
    fn a_pinned_tenant_is_named_with_its_share_and_the_next_field_cut() {
        let key = ShardKey::parse("{tenantId: 1, orderId: 1}").unwrap();
        let p = Pinned { value: Bson::Int32(7), documents: 51, of: 200, next_split: Some(Bson::Int32(26)) };
        let splits = [Bson::Int32(5), Bson::Int32(7), Bson::Int32(9)];
        let r = reports("shop.orders", &key, std::slice::from_ref(&p), (&splits, "shop-tenantId", 4));
        assert_eq!((r[0].zone.as_str(), r[0].percentage, r[0].fair_share_percentage), ("shop-tenantId-2", 25.5, 25.0));
        assert!(r[0].message.starts_with("shop.orders: tenantId 7 holds 25.5% of the sampled documents (51 of 200), more than one shard's fair share (25%: 1 of 4 shards); zone shop-tenantId-2 bounds tenantId only, so 7 stays on shard2 for good. To spread it, cut its range on orderId at the sampled median {tenantId: 7, orderId: 26}"), "{}", r[0].message);
        let hashed = ShardKey::parse("{tenantId: \"hashed\"}").unwrap();
        assert!(reports("shop.orders", &hashed, std::slice::from_ref(&p), (&splits, "x", 4)).is_empty());
        let one = ShardKey::parse("{tenantId: 1}").unwrap();
        let r = reports("shop.orders", &one, &[Pinned { next_split: None, ..p }], (&splits, "x", 4));
        assert!(r[0].message.contains("jumbo"), "{}", r[0].message);
    }
}
