//! Shard key updates: does a write change a document's shard key?
//!
//! - From `config.sampledQueriesDiff` (what the server counts): the inline diff
//!   touches a key field, or a prefix of one that is a leaf (the parent was
//!   replaced or removed).
//! - From logs (no diff): the update names a key field, a parent or a child of
//!   it in `$set`/`$unset`/`$rename`/...; a replacement counts when the filter
//!   fixes the key by equality and the new document holds another value.

use crate::bsonx::{cmp_bson, lookup, Lookup};
use crate::model::{ShardKey, UpdateSpec};
use crate::targeting::{extract_key_by_equality, is_within};
use bson::{Bson, Document};

/// Whether an inline diff (`{a: 'u', b: {c: 'i'}}`) changes the key.
pub(crate) fn diff_touches_key(key: &ShardKey, diff: &Document) -> bool {
    key.fields.iter().any(|f| {
        let mut cur = diff;
        let parts: Vec<&str> = f.path.split('.').collect();
        for (i, part) in parts.iter().enumerate() {
            match cur.get(*part) {
                None => return false,
                Some(Bson::Document(sub)) if i + 1 < parts.len() => cur = sub,
                Some(_) => return true,
            }
        }
        false
    })
}

/// Do two dotted paths overlap (equal, or one inside the other)? Positional parts (`$`, `$[]`) match anything.
fn paths_overlap(a: &str, b: &str) -> bool {
    if !a.contains('$') && !b.contains('$') {
        // No positional part: the parts agree as far as the shorter goes exactly when one path
        // is the other or lies inside it, told from the bytes without splitting (this runs for
        // every update name under every candidate key).
        return is_within(a, b) || is_within(b, a);
    }
    a.split('.').zip(b.split('.')).all(|(x, y)| x == y || x.starts_with('$') || y.starts_with('$'))
}

/// Borrowed names, not owned: this runs for every sampled update under every candidate key.
fn names_touch_key<'a>(key: &ShardKey, names: impl IntoIterator<Item = &'a str>) -> bool {
    names.into_iter().any(|n| key.paths().any(|p| paths_overlap(p, n)))
}

/// Whether a logged update changes the key (see the module comment for the rules).
pub(crate) fn update_touches_key(key: &ShardKey, filter: &Document, spec: &UpdateSpec) -> bool {
    touches_key(key, spec, || extract_key_by_equality(key, filter, None))
}

/// `update_touches_key`, with `old_key` the key's values the filter fixes by equality (asked
/// only of a replacement): the distribution's count has the filter's equalities gathered already.
pub(crate) fn touches_key(key: &ShardKey, spec: &UpdateSpec, old_key: impl FnOnce() -> Option<Vec<Bson>>) -> bool {
    match spec {
        UpdateSpec::Remove => false,
        UpdateSpec::Modifiers(m) => m.iter().any(|(op, fields)| {
            if op == "$setOnInsert" {
                return false;
            }
            let Some(fields) = fields.as_document() else { return false };
            // `$rename`'s new names count as well as its old ones.
            let renamed = fields.values().filter(|_| op == "$rename").filter_map(Bson::as_str);
            names_touch_key(key, fields.keys().map(String::as_str).chain(renamed))
        }),
        UpdateSpec::Replacement(new_doc) => match old_key() {
            Some(old) => key.fields.iter().zip(old.iter()).any(|(f, old_v)| {
                let new_v = match lookup(new_doc, &f.path) {
                    Lookup::Value(v) => v.clone(),
                    Lookup::Missing => Bson::Null,
                    Lookup::Array => return true,
                };
                cmp_bson(&new_v, old_v) != std::cmp::Ordering::Equal
            }),
            None => false,
        },
        UpdateSpec::Pipeline(stages) => stages.iter().any(|s| {
            s.iter().any(|(stage, body)| match stage.as_str() {
                "$set" | "$addFields" => body.as_document().is_some_and(|d| names_touch_key(key, d.keys().map(String::as_str))),
                "$unset" => match body {
                    Bson::String(s) => names_touch_key(key, [s.as_str()]),
                    Bson::Array(a) => names_touch_key(key, a.iter().filter_map(Bson::as_str)),
                    _ => false,
                },
                "$replaceRoot" | "$replaceWith" => true,
                _ => false,
            })
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn diffs_touching_the_key() {
        let k = ShardKey::parse("{\"a.b\": 1, c: 1}").unwrap();
        assert!(diff_touches_key(&k, &doc! {"a": {"b": "u"}}));
        assert!(diff_touches_key(&k, &doc! {"a": "d"}), "parent removed");
        assert!(diff_touches_key(&k, &doc! {"a": "u"}), "parent replaced");
        assert!(diff_touches_key(&k, &doc! {"c": "i"}));
        assert!(!diff_touches_key(&k, &doc! {"a": {"x": "u"}}), "sibling only");
        assert!(!diff_touches_key(&k, &doc! {"z": "u"}));
    }

    #[test]
    fn updates_touching_the_key() {
        let k = ShardKey::parse("{\"a.b\": 1}").unwrap();
        let m = |d: Document| UpdateSpec::Modifiers(d);
        assert!(update_touches_key(&k, &doc! {}, &m(doc! {"$set": {"a.b": 1}})));
        assert!(update_touches_key(&k, &doc! {}, &m(doc! {"$set": {"a": {"b": 1}}})), "parent set");
        assert!(update_touches_key(&k, &doc! {}, &m(doc! {"$unset": {"a": ""}})), "parent unset");
        assert!(update_touches_key(&k, &doc! {}, &m(doc! {"$rename": {"x": "a.b"}})));
        assert!(!update_touches_key(&k, &doc! {}, &m(doc! {"$set": {"a.c": 1}})));
        assert!(!update_touches_key(&k, &doc! {}, &m(doc! {"$setOnInsert": {"a.b": 1}})));
        let r = |d: Document| UpdateSpec::Replacement(d);
        assert!(update_touches_key(&k, &doc! {"a.b": 1}, &r(doc! {"a": {"b": 2}})));
        assert!(!update_touches_key(&k, &doc! {"a.b": 1}, &r(doc! {"a": {"b": 1}, "x": 3})));
        assert!(update_touches_key(&k, &doc! {}, &UpdateSpec::Pipeline(vec![doc! {"$unset": "a"}])));
    }
}
