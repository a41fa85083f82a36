//! A candidate shard key, validated as the server validates `shardCollection`'s key.

use anyhow::{bail, Result};
use bson::{Bson, Document};
use serde_json::Value;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum KeyKind {
    /// `1`: ranged on the raw value.
    Range,
    /// `"hashed"`: ranged on MongoDB's hash64 of the value.
    Hashed,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct KeyField {
    pub(crate) path: String,
    pub(crate) kind: KeyKind,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ShardKey {
    pub(crate) fields: Vec<KeyField>,
}

impl ShardKey {
    /// Parse `{a: 1, b: "hashed"}` (shell-like or JSON).
    pub fn parse(input: &str) -> Result<ShardKey> {
        // Messages quote the key; a huge one is cut so the message stays one readable line.
        let text =
            &if input.chars().count() > 80 { format!("{}…", input.chars().take(79).collect::<String>()) } else { input.to_string() };
        let v = super::relaxed::parse(input).map_err(|e| anyhow::anyhow!("key {text}: {e}"))?;
        let obj = match v {
            Value::Object(m) => m,
            _ => bail!("key {text}: a shard key is an object such as {{field: 1}}"),
        };
        let mut fields = Vec::new();
        for (path, spec) in obj {
            let kind = match &spec {
                Value::Number(n) if n.as_f64() == Some(1.0) => KeyKind::Range,
                Value::Number(n) if n.as_f64().is_some_and(|f| f < 0.0) => {
                    bail!("key {text}: field '{path}' is descending ({n}); shard keys are ascending (1) or \"hashed\"")
                }
                Value::String(s) if s == "hashed" => KeyKind::Hashed,
                other => bail!("key {text}: field '{path}' has {other}; a shard key field is 1 or \"hashed\" (no other index types)"),
            };
            fields.push(KeyField { path, kind });
        }
        Self::new(fields).map_err(|e| anyhow::anyhow!("key {text}: {e}"))
    }

    /// Build from a key pattern document (index key or `config.collections.key`).
    pub(crate) fn from_document(d: &Document) -> Result<ShardKey> {
        let v: Value = Bson::Document(d.clone()).into_relaxed_extjson();
        Self::parse(&v.to_string())
    }

    pub(crate) fn new(fields: Vec<KeyField>) -> Result<ShardKey> {
        if fields.is_empty() {
            bail!("a shard key needs at least one field");
        }
        if fields.iter().filter(|f| f.kind == KeyKind::Hashed).count() > 1 {
            bail!("at most one field of a shard key can be hashed");
        }
        for (i, f) in fields.iter().enumerate() {
            if f.path.is_empty() || f.path.split('.').any(|p| p.is_empty()) {
                bail!("field name '{}' is empty or has an empty part", f.path);
            }
            if f.path.split('.').any(|p| p.starts_with('$')) {
                bail!("field name '{}' may not start with '$'", f.path);
            }
            for g in &fields[..i] {
                if g.path == f.path {
                    bail!("field '{}' appears twice", f.path);
                }
                if g.path.starts_with(&format!("{}.", f.path)) || f.path.starts_with(&format!("{}.", g.path)) {
                    bail!("fields '{}' and '{}' overlap (one is inside the other)", g.path, f.path);
                }
            }
        }
        Ok(ShardKey { fields })
    }

    pub(crate) fn single(path: &str, kind: KeyKind) -> ShardKey {
        ShardKey { fields: vec![KeyField { path: path.to_string(), kind }] }
    }

    /// True when this key adds suffix fields to `current`, whose fields and kinds it starts
    /// with: what `refineCollectionShardKey` (4.4+) accepts.
    pub(crate) fn refines(&self, current: &ShardKey) -> bool {
        self.fields.len() > current.fields.len() && current.fields.iter().zip(&self.fields).all(|(a, b)| a == b)
    }

    pub(crate) fn hashed_position(&self) -> Option<usize> {
        self.fields.iter().position(|f| f.kind == KeyKind::Hashed)
    }

    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|f| f.path.as_str())
    }

    /// The key as the JSON object a user would type.
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        for f in &self.fields {
            let v = match f.kind {
                KeyKind::Range => Value::from(1),
                KeyKind::Hashed => Value::from("hashed"),
            };
            m.insert(f.path.clone(), v);
        }
        Value::Object(m)
    }

    /// A value of this key (one entry per field) as `{field: value}` relaxed
    /// Extended JSON, each value redacted when asked.
    pub(crate) fn value_json(&self, values: &[Bson], redact: bool) -> Value {
        let mut d = Document::new();
        for (f, v) in self.fields.iter().zip(values) {
            let v = if redact { crate::bsonx::redact::redact(v) } else { v.clone() };
            d.insert(f.path.clone(), v);
        }
        Bson::Document(d).into_relaxed_extjson()
    }

    /// `to_key_space` of values no longer needed: range fields are moved, not copied.
    pub(crate) fn moved_to_key_space(&self, mut values: Vec<Bson>) -> Vec<Bson> {
        for (f, v) in self.fields.iter().zip(values.iter_mut()) {
            if f.kind == KeyKind::Hashed {
                *v = Bson::Int64(crate::bsonx::hash64(v));
            }
        }
        values
    }

    /// A value of this key in key space: hashed fields replaced by MongoDB's hash64.
    pub(crate) fn to_key_space(&self, values: &[Bson]) -> Vec<Bson> {
        self.fields
            .iter()
            .zip(values)
            .map(|(f, v)| match f.kind {
                KeyKind::Hashed => Bson::Int64(crate::bsonx::hash64(v)),
                KeyKind::Range => v.clone(),
            })
            .collect()
    }

    pub(crate) fn to_document(&self) -> Document {
        let mut d = Document::new();
        for f in &self.fields {
            match f.kind {
                KeyKind::Range => d.insert(f.path.clone(), 1),
                KeyKind::Hashed => d.insert(f.path.clone(), "hashed"),
            };
        }
        d
    }
}

/// In JSON reports a key is the object a user would type: `{"projectId": 1, "_id": 1}`.
impl serde::Serialize for ShardKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl fmt::Display for ShardKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{")?;
        for (i, k) in self.fields.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            let plain = k.path.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if plain {
                write!(f, "{}: ", k.path)?;
            } else {
                // Quoted as the key syntax reads it back (`relaxed`): escape backslash, quote, line breaks.
                let quoted = k.path.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n").replace('\t', "\\t");
                write!(f, "\"{quoted}\": ")?;
            }
            match k.kind {
                KeyKind::Range => write!(f, "1")?,
                KeyKind::Hashed => write!(f, "\"hashed\"")?,
            }
        }
        write!(f, "}}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moved_to_key_space_is_to_key_space() {
        let k = ShardKey::parse("{a: 1, b: \"hashed\", c: 1}").unwrap();
        let v = vec![Bson::String("x".into()), Bson::Int32(5), Bson::Null];
        assert_eq!(k.moved_to_key_space(v.clone()), k.to_key_space(&v));
    }

    #[test]
    fn parses_and_validates_like_the_server() {
        let k = ShardKey::parse("{projectId: 1, _id: 1}").unwrap();
        assert_eq!(k.fields.len(), 2);
        assert_eq!(k.to_string(), "{projectId: 1, _id: 1}");
        let h = ShardKey::parse(r#"{"a.b": "hashed"}"#).unwrap();
        assert_eq!(h.hashed_position(), Some(0));
        assert_eq!(h.to_string(), r#"{"a.b": "hashed"}"#);
        for bad in ["{a: -1}", "{a: \"2dsphere\"}", "{a: \"hashed\", b: \"hashed\"}", "{}", "{a: 1, a.b: 1}", "{$a: 1}", "[1]", "a: 1"] {
            assert!(ShardKey::parse(bad).is_err(), "{bad} should be rejected");
        }
        // Any field name prints back to text that parses to the same key (found by the key_syntax fuzz target).
        for name in ["c\u{5}\"}c", "a\\b", "x\ny\tz", "ü.ß"] {
            let k = ShardKey::single(name, KeyKind::Range);
            assert_eq!(ShardKey::parse(&k.to_string()).unwrap(), k, "{k}");
        }
    }
}
