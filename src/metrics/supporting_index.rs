//! `supportingIndex` (live only) and `keyCharacteristics.isUnique`: the server's rule
//! for a shard key's supporting index: its leading fields equal the key's fields
//! (hashed where the key is hashed, ascending otherwise), and it is not multikey,
//! sparse or partial, and has the simple collation.

use crate::model::index::IndexSpec;
use crate::model::ShardKey;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SupportingIndexReport {
    /// The supporting index's name, or null when the collection has none.
    pub(crate) name: Option<String>,
    pub(crate) is_unique: bool,
    /// The command that would create one, when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) create_index: Option<String>,
    /// Indexes with the right fields that cannot support the key, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) unusable: Vec<String>,
    /// An index on exactly the key's pattern that cannot support it for a reason a new index
    /// cures (sparse, partial, a collation): the server refuses a second index on the same
    /// pattern with other options, so it must be dropped before the supporting one is created.
    #[serde(skip)]
    pub(crate) replace: Option<String>,
}

/// The supporting index for a key among a collection's indexes.
pub(crate) fn supporting_index(key: &ShardKey, coll: &str, indexes: &[IndexSpec]) -> SupportingIndexReport {
    let mut unusable = Vec::new();
    let mut best: Option<&IndexSpec> = None;
    // An index on the very pattern that cannot serve: multikey (arrays in the data: nothing
    // to create), or options a new index would not have.
    let mut same_pattern: Option<(&IndexSpec, bool)> = None;
    for ix in indexes.iter().filter(|ix| ix.has_prefix(key)) {
        let why = ix.unusable_because();
        if !why.is_empty() {
            unusable.push(format!("{} ({})", ix.name, why.join(", ")));
            if ix.key.len() == key.fields.len() {
                same_pattern = Some((ix, why.contains(&"multikey")));
            }
            continue;
        }
        let exact_unique = ix.unique && ix.key.len() == key.fields.len();
        if best.is_none() || exact_unique {
            best = Some(ix);
        }
    }
    match best {
        Some(ix) => SupportingIndexReport {
            name: Some(ix.name.clone()),
            is_unique: ix.unique && ix.key.len() == key.fields.len(),
            create_index: None,
            unusable,
            replace: None,
        },
        // The documents hold arrays there: no index can support the key.
        None if same_pattern.is_some_and(|(_, multikey)| multikey) => {
            SupportingIndexReport { name: None, is_unique: false, create_index: None, unusable, replace: None }
        }
        None => {
            let replace = same_pattern.map(|(ix, _)| ix.name.clone());
            let create = match &replace {
                Some(name) => format!("db.{coll}.dropIndex({name:?}); db.{coll}.createIndex({key})"),
                None => format!("db.{coll}.createIndex({key})"),
            };
            SupportingIndexReport { name: None, is_unique: false, create_index: Some(create), unusable, replace }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::index::IndexSpec;
    use bson::{doc, Document};

    fn ix(name: &str, key: Document, unique: bool) -> IndexSpec {
        IndexSpec { name: name.into(), key, unique, sparse: false, partial: false, simple_collation: true, multikey: Some(false) }
    }

    #[test]
    fn server_rules_for_the_supporting_index() {
        let k = ShardKey::parse("{a: 1}").unwrap();
        let r = supporting_index(&k, "c", &[ix("a_1_b_1", doc! {"a": 1, "b": 1}, true)]);
        assert_eq!(r.name.as_deref(), Some("a_1_b_1"));
        assert!(!r.is_unique, "unique only with exactly the key's fields");
        let r = supporting_index(&k, "c", &[ix("a_1", doc! {"a": 1}, true)]);
        assert!(r.is_unique);
        let r = supporting_index(&k, "c", &[ix("a_-1", doc! {"a": -1}, false), ix("b_1_a_1", doc! {"b": 1, "a": 1}, false)]);
        assert_eq!(r.name, None);
        assert_eq!(r.create_index.as_deref(), Some("db.c.createIndex({a: 1})"));
        let mut m = ix("a_1", doc! {"a": 1}, false);
        m.multikey = Some(true);
        let r = supporting_index(&k, "c", &[m]);
        assert_eq!(r.name, None);
        assert_eq!(r.unusable, vec!["a_1 (multikey)".to_string()]);
        let h = ShardKey::parse("{a: \"hashed\"}").unwrap();
        assert_eq!(supporting_index(&h, "c", &[ix("a_1", doc! {"a": 1}, false)]).name, None);
        assert_eq!(supporting_index(&h, "c", &[ix("a_hashed", doc! {"a": "hashed"}, false)]).name.as_deref(), Some("a_hashed"));
        let id = IndexSpec::from_list_indexes(&doc! {"v": 2, "key": {"_id": 1}, "name": "_id_"});
        assert!(supporting_index(&ShardKey::parse("{_id: 1}").unwrap(), "c", &[id]).is_unique);
    }

    #[test]
    fn an_index_on_the_pattern_that_cannot_serve() {
        let key = ShardKey::parse("{a: 1}").unwrap();
        // Sparse: dropped and created plain (the server keeps one index per pattern).
        let mut sparse = ix("a_1", doc! {"a": 1}, false);
        sparse.sparse = true;
        let r = supporting_index(&key, "c", &[sparse]);
        assert_eq!((r.name, r.replace.as_deref()), (None, Some("a_1")));
        assert_eq!(r.create_index.as_deref(), Some("db.c.dropIndex(\"a_1\"); db.c.createIndex({a: 1})"));
        // Multikey: arrays in the data; no index can support the key, none is advised.
        let mut multi = ix("a_1", doc! {"a": 1}, false);
        multi.multikey = Some(true);
        let r = supporting_index(&key, "c", &[multi]);
        assert_eq!((r.create_index, r.replace), (None, None));
        assert_eq!(r.unusable, ["a_1 (multikey)"]);
    }
}
