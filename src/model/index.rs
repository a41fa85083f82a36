//! Indexes and the server's rule for a shard key's supporting index: its leading
//! fields equal the key's fields (hashed where the key is hashed, ascending
//! otherwise), and it is not multikey, sparse or partial, and has the simple collation.

use super::{KeyField, KeyKind, ShardKey};
use bson::{Bson, Document};

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct IndexSpec {
    pub(crate) name: String,
    pub(crate) key: Document,
    pub(crate) unique: bool,
    pub(crate) sparse: bool,
    pub(crate) partial: bool,
    pub(crate) simple_collation: bool,
    /// From explain's `isMultiKey`; None when unknown.
    pub(crate) multikey: Option<bool>,
}

pub(crate) fn truthy(v: Option<&Bson>) -> bool {
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
    pub(crate) fn from_list_indexes(d: &Document) -> IndexSpec {
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
    pub(crate) fn has_prefix(&self, key: &ShardKey) -> bool {
        let mut it = self.key.iter();
        key.fields.iter().all(|f| match it.next() {
            Some((name, v)) => name == &f.path && Self::field_kind(v) == Some(f.kind),
            None => false,
        })
    }

    /// The index's key pattern as mongosh prints it: `{tenantId: 1, username: 1}`.
    pub(crate) fn pattern(&self) -> String {
        let fields: Vec<String> = self
            .key
            .iter()
            .map(|(k, v)| {
                let name = if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') { k.clone() } else { format!("{k:?}") };
                let value = match v {
                    Bson::Int32(i) => i.to_string(),
                    Bson::Int64(i) => i.to_string(),
                    Bson::Double(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", *f as i64),
                    Bson::String(s) => format!("{s:?}"),
                    other => other.to_string(),
                };
                format!("{name}: {value}")
            })
            .collect();
        format!("{{{}}}", fields.join(", "))
    }

    /// The index's key as a shard key, when it can be one.
    pub(crate) fn as_shard_key(&self) -> Option<ShardKey> {
        let fields: Option<Vec<KeyField>> =
            self.key.iter().map(|(k, v)| Some(KeyField { path: k.clone(), kind: Self::field_kind(v)? })).collect();
        ShardKey::new(fields?).ok()
    }

    /// Why the index cannot support a shard key (empty when it can).
    pub(crate) fn unusable_because(&self) -> Vec<&'static str> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn list_indexes_documents() {
        let id = IndexSpec::from_list_indexes(&doc! {"v": 2, "key": {"_id": 1}, "name": "_id_"});
        assert!(id.unique, "the _id index is unique");
        let ix = IndexSpec::from_list_indexes(
            &doc! {"v": 2, "key": {"a": 1, "b": "hashed"}, "name": "a_1_b_hashed", "sparse": 1, "collation": {"locale": "fr"}},
        );
        assert!(ix.sparse && !ix.simple_collation && !ix.unique);
        assert_eq!(ix.as_shard_key().map(|k| k.to_string()).as_deref(), Some("{a: 1, b: \"hashed\"}"));
        assert!(ix.has_prefix(&ShardKey::parse("{a: 1}").unwrap()));
        assert!(!ix.has_prefix(&ShardKey::parse("{b: 1}").unwrap()));
    }
}
