//! Indexes and the server's rule for a shard key's supporting index: its leading
//! fields equal the key's fields (hashed where the key is hashed, ascending
//! otherwise), and it is not multikey, sparse or partial, and has the simple collation.

use super::{KeyField, KeyKind, ShardKey};
use crate::report::SupportingIndexReport;
use bson::{Bson, Document};

#[derive(Debug, Clone, PartialEq)]
pub struct IndexSpec {
    pub name: String,
    pub key: Document,
    pub unique: bool,
    pub sparse: bool,
    pub partial: bool,
    pub simple_collation: bool,
    /// From explain's `isMultiKey`; None when unknown.
    pub multikey: Option<bool>,
}

fn truthy(v: Option<&Bson>) -> bool {
    match v {
        Some(Bson::Boolean(b)) => *b,
        Some(Bson::Int32(i)) => *i != 0,
        Some(Bson::Int64(i)) => *i != 0,
        Some(Bson::Double(f)) => *f != 0.0,
        _ => false,
    }
}

impl IndexSpec {
    /// From one `listIndexes` document.
    pub fn from_list_indexes(d: &Document) -> IndexSpec {
        let name = d.get_str("name").unwrap_or("").to_string();
        IndexSpec {
            key: d.get_document("key").cloned().unwrap_or_default(),
            unique: truthy(d.get("unique")) || name == "_id_",
            sparse: truthy(d.get("sparse")),
            partial: d.contains_key("partialFilterExpression"),
            simple_collation: d
                .get_document("collation")
                .map(|c| c.get_str("locale").map(|l| l == "simple").unwrap_or(false))
                .unwrap_or(true),
            multikey: None,
            name,
        }
    }

    fn field_kind(v: &Bson) -> Option<KeyKind> {
        match v {
            Bson::String(s) if s == "hashed" => Some(KeyKind::Hashed),
            Bson::Int32(1) | Bson::Int64(1) => Some(KeyKind::Range),
            Bson::Double(f) if *f == 1.0 => Some(KeyKind::Range),
            _ => None,
        }
    }

    /// Do the index's leading fields match the key's fields (names and kinds)?
    pub fn has_prefix(&self, key: &ShardKey) -> bool {
        let mut it = self.key.iter();
        key.fields.iter().all(|f| match it.next() {
            Some((name, v)) => name == &f.path && Self::field_kind(v) == Some(f.kind),
            None => false,
        })
    }

    /// The index's key as a shard key, when it can be one.
    pub fn as_shard_key(&self) -> Option<ShardKey> {
        let fields: Option<Vec<KeyField>> = self
            .key
            .iter()
            .map(|(k, v)| Some(KeyField { path: k.clone(), kind: Self::field_kind(v)? }))
            .collect();
        ShardKey::new(fields?).ok()
    }

    fn unusable_because(&self) -> Vec<&'static str> {
        let mut why = Vec::new();
        if self.multikey == Some(true) {
            why.push("multikey");
        }
        if self.sparse {
            why.push("sparse");
        }
        if self.partial {
            why.push("partial");
        }
        if !self.simple_collation {
            why.push("non-simple collation");
        }
        why
    }
}

/// The supporting index for a key among a collection's indexes.
pub fn supporting_index(key: &ShardKey, coll: &str, indexes: &[IndexSpec]) -> SupportingIndexReport {
    let mut unusable = Vec::new();
    let mut best: Option<&IndexSpec> = None;
    for ix in indexes.iter().filter(|ix| ix.has_prefix(key)) {
        let why = ix.unusable_because();
        if !why.is_empty() {
            unusable.push(format!("{} ({})", ix.name, why.join(", ")));
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
        },
        None => SupportingIndexReport {
            name: None,
            is_unique: false,
            create_index: Some(format!("db.{coll}.createIndex({key})")),
            unusable,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

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
}
