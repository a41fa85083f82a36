//! `supportingIndex` (live only) and `keyCharacteristics.isUnique`: the server's rule
//! for a shard key's supporting index: its leading fields equal the key's fields
//! (hashed where the key is hashed, ascending otherwise), and it is not multikey,
//! sparse or partial, and has the simple collation.

use crate::model::index::{IndexSpec, NewIndex};
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
    /// cures (sparse, partial, a collation): it stays, and the supporting one is created
    /// beside it under its own name (5.0+; tried on 6.0.5).
    #[serde(skip)]
    pub(crate) beside: Option<IndexSpec>,
    /// The index to create when there is none.
    #[serde(skip)]
    pub(crate) new_index: Option<NewIndex>,
}

/// The supporting index for a key among a collection's indexes; `collation`: the collection's
/// default collation is not simple (a new index must then say `collation: {locale: "simple"}`).
pub(crate) fn supporting_index(key: &ShardKey, coll: &str, collation: bool, indexes: &[IndexSpec]) -> SupportingIndexReport {
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
            beside: None,
            new_index: None,
        },
        // The documents hold arrays there: no index can support the key.
        None if same_pattern.is_some_and(|(_, multikey)| multikey) => {
            SupportingIndexReport { name: None, is_unique: false, create_index: None, unusable, beside: None, new_index: None }
        }
        None => {
            let new = NewIndex::for_key(key, indexes, collation);
            SupportingIndexReport {
                name: None,
                is_unique: false,
                create_index: Some(new.command(&format!("db.{coll}"))),
                unusable,
                beside: same_pattern.map(|(ix, _)| ix.clone()),
                new_index: Some(new),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::index::IndexSpec;
    use bson::{doc, Document};

    fn ix(name: &str, key: Document, unique: bool) -> IndexSpec {
        IndexSpec { name: name.into(), key, unique, multikey: Some(false), ..IndexSpec::default() }
    }

    #[test]
    fn server_rules_for_the_supporting_index() {
        let k = ShardKey::parse("{a: 1}").unwrap();
        let r = supporting_index(&k, "c", false, &[ix("a_1_b_1", doc! {"a": 1, "b": 1}, true)]);
        assert_eq!(r.name.as_deref(), Some("a_1_b_1"));
        assert!(!r.is_unique, "unique only with exactly the key's fields");
        let r = supporting_index(&k, "c", false, &[ix("a_1", doc! {"a": 1}, true)]);
        assert!(r.is_unique);
        let r = supporting_index(&k, "c", false, &[ix("a_-1", doc! {"a": -1}, false), ix("b_1_a_1", doc! {"b": 1, "a": 1}, false)]);
        assert_eq!(r.name, None);
        assert_eq!(r.create_index.as_deref(), Some("db.c.createIndex({a: 1})"));
        let mut m = ix("a_1", doc! {"a": 1}, false);
        m.multikey = Some(true);
        let r = supporting_index(&k, "c", false, &[m]);
        assert_eq!(r.name, None);
        assert_eq!(r.unusable, vec!["a_1 (multikey)".to_string()]);
        let h = ShardKey::parse("{a: \"hashed\"}").unwrap();
        assert_eq!(supporting_index(&h, "c", false, &[ix("a_1", doc! {"a": 1}, false)]).name, None);
        assert_eq!(supporting_index(&h, "c", false, &[ix("a_hashed", doc! {"a": "hashed"}, false)]).name.as_deref(), Some("a_hashed"));
        let id = IndexSpec::from_list_indexes(&doc! {"v": 2, "key": {"_id": 1}, "name": "_id_"});
        assert!(supporting_index(&ShardKey::parse("{_id: 1}").unwrap(), "c", false, &[id]).is_unique);
    }

    #[test]
    fn an_index_on_the_pattern_that_cannot_serve() {
        let key = ShardKey::parse("{a: 1}").unwrap();
        // Sparse: kept, the plain one created beside it under its own name (6.0.5 builds both).
        let mut sparse = ix("a_1", doc! {"a": 1}, false);
        sparse.sparse = true;
        let r = supporting_index(&key, "c", false, &[sparse]);
        assert_eq!((r.name, r.beside.map(|b| b.name)), (None, Some("a_1".to_string())));
        assert_eq!(r.create_index.as_deref(), Some("db.c.createIndex({a: 1}, {name: \"a_1_shardKey\"})"));
        // Another collation, on a collection whose default is not simple: the simple one beside it.
        let en = IndexSpec { collation: Some(doc! {"locale": "en"}), ..ix("a_1", doc! {"a": 1}, false) };
        let r = supporting_index(&key, "c", true, &[en]);
        assert_eq!(r.create_index.as_deref(), Some("db.c.createIndex({a: 1}, {name: \"a_1_shardKey\", collation: {locale: \"simple\"}})"));
        // No index on the pattern: the default name, and the collation when the default is not simple.
        let r = supporting_index(&ShardKey::parse("{b: \"hashed\"}").unwrap(), "c", true, &[]);
        assert_eq!(r.create_index.as_deref(), Some("db.c.createIndex({b: \"hashed\"}, {collation: {locale: \"simple\"}})"));
        // Multikey: arrays in the data; no index can support the key, none is advised.
        let mut multi = ix("a_1", doc! {"a": 1}, false);
        multi.multikey = Some(true);
        let r = supporting_index(&key, "c", false, &[multi]);
        assert_eq!((r.create_index, r.beside), (None, None));
        assert_eq!(r.unusable, ["a_1 (multikey)"]);
    }
}
