//! Indexes and the server's rule for a shard key's supporting index: its leading
//! fields equal the key's fields (hashed where the key is hashed, ascending
//! otherwise), and it is not multikey, sparse or partial, and has the simple collation.

use super::{KeyField, KeyKind, ShardKey};
use bson::{Bson, Document};

#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct IndexSpec {
    pub(crate) name: String,
    pub(crate) key: Document,
    pub(crate) unique: bool,
    pub(crate) sparse: bool,
    /// `partialFilterExpression`, when the index is partial.
    pub(crate) partial_filter: Option<Document>,
    /// A collation other than simple (an index inherits the collection's default).
    pub(crate) collation: Option<Document>,
    /// A TTL index's `expireAfterSeconds`.
    pub(crate) expire_after_seconds: Option<i64>,
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
            partial_filter: d.get_document("partialFilterExpression").ok().cloned(),
            collation: d.get_document("collation").ok().filter(|c| c.get_str("locale").is_ok_and(|l| l != "simple")).cloned(),
            expire_after_seconds: d.get("expireAfterSeconds").and_then(crate::bsonx::number::as_i64),
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
        if self.partial_filter.is_some() {
            why.push("partial");
        }
        if self.collation.is_some() {
            why.push("non-simple collation");
        }
        why
    }

    /// The locale of its collation, when not simple.
    pub(crate) fn collation_locale(&self) -> Option<&str> {
        self.collation.as_ref().map(|c| c.get_str("locale").unwrap_or("?"))
    }

    pub(crate) fn is_partial(&self) -> bool {
        self.partial_filter.is_some()
    }

    /// What the index guarantees beyond serving queries, in words, when anything: its
    /// uniqueness (and over which documents) and its expiry. Said wherever a command would
    /// touch it, so no guarantee is lost in silence.
    pub(crate) fn guarantees(&self) -> Option<String> {
        let fields: Vec<&str> = self.key.keys().map(String::as_str).collect();
        let mut g = Vec::new();
        if self.unique {
            let over = match (&self.partial_filter, self.sparse) {
                (Some(f), _) => format!(" among the documents matching {}", Bson::Document(f.clone()).into_relaxed_extjson()),
                (None, true) => " among the documents that have the field".to_string(),
                (None, false) => String::new(),
            };
            g.push(format!("{} unique{over}", fields.join(" + ")));
        }
        if let Some(s) = self.expire_after_seconds {
            g.push(format!("documents expiring {s} s after their {} (TTL)", fields.join(", ")));
        }
        (!g.is_empty()).then(|| g.join("; "))
    }
}

/// The index a shard key needs, as `createIndex` makes it: under the server's default name
/// unless an index already holds that name (an index on the same pattern with other options:
/// 5.0+ keeps both), and with the simple collation when the collection's default is not
/// simple (SERVER-24751: only an index of simple collation supports a key; tried on 6.0.5).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NewIndex {
    pub(crate) key: ShardKey,
    /// Its own name, when the default one is taken.
    pub(crate) name: Option<String>,
    pub(crate) simple_collation: bool,
}

impl NewIndex {
    pub(crate) fn for_key(key: &ShardKey, indexes: &[IndexSpec], collection_collation: bool) -> NewIndex {
        let default = default_name(key);
        let name = indexes.iter().any(|ix| ix.name == default).then(|| format!("{default}_shardKey"));
        NewIndex { key: key.clone(), name, simple_collation: collection_collation }
    }

    /// `createIndex`'s options argument (with its leading comma), or nothing.
    pub(crate) fn options(&self) -> String {
        let mut o = Vec::new();
        if let Some(n) = &self.name {
            o.push(format!("name: {n:?}"));
        }
        if self.simple_collation {
            o.push("collation: {locale: \"simple\"}".to_string());
        }
        if o.is_empty() {
            String::new()
        } else {
            format!(", {{{}}}", o.join(", "))
        }
    }

    /// `<handle>.createIndex({a: 1}, {name: ..., collation: ...})`.
    pub(crate) fn command(&self, handle: &str) -> String {
        format!("{handle}.createIndex({}{})", self.key, self.options())
    }
}

/// The name the server gives an index of this pattern (`a_1_b_hashed`).
pub(crate) fn default_name(key: &ShardKey) -> String {
    let parts: Vec<String> =
        key.fields.iter().map(|f| format!("{}_{}", f.path, if f.kind == KeyKind::Hashed { "hashed" } else { "1" })).collect();
    parts.join("_")
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
        assert!(ix.sparse && ix.collation_locale() == Some("fr") && !ix.unique);
        assert_eq!(ix.as_shard_key().map(|k| k.to_string()).as_deref(), Some("{a: 1, b: \"hashed\"}"));
        assert!(ix.has_prefix(&ShardKey::parse("{a: 1}").unwrap()));
        assert!(!ix.has_prefix(&ShardKey::parse("{b: 1}").unwrap()));
    }
}
