//! `--redact`: a value becomes its BSON type and a stable short hash, so reports
//! stay comparable between runs without showing data.

use super::order::group_bytes;
use bson::Bson;
use md5::{Digest, Md5};

pub(crate) fn type_name(v: &Bson) -> &'static str {
    match v {
        Bson::Double(_) => "double",
        Bson::String(_) => "string",
        Bson::Array(_) => "array",
        Bson::Document(_) => "object",
        Bson::Boolean(_) => "bool",
        Bson::Null => "null",
        Bson::RegularExpression(_) => "regex",
        Bson::JavaScriptCode(_) | Bson::JavaScriptCodeWithScope(_) => "javascript",
        Bson::Int32(_) => "int",
        Bson::Int64(_) => "long",
        Bson::Timestamp(_) => "timestamp",
        Bson::Binary(_) => "binData",
        Bson::ObjectId(_) => "objectId",
        Bson::DateTime(_) => "date",
        Bson::Symbol(_) => "symbol",
        Bson::Decimal128(_) => "decimal",
        Bson::Undefined => "undefined",
        Bson::MaxKey => "maxKey",
        Bson::MinKey => "minKey",
        Bson::DbPointer(_) => "dbPointer",
    }
}

/// `string#1a2b3c4d`; MinKey, MaxKey and null are structure, not data, and stay as they are.
pub(crate) fn redact(v: &Bson) -> Bson {
    match v {
        Bson::MinKey | Bson::MaxKey | Bson::Null => v.clone(),
        _ => {
            let mut bytes = Vec::new();
            group_bytes(v, &mut bytes);
            let d = Md5::digest(&bytes);
            Bson::String(format!("{}#{:02x}{:02x}{:02x}{:02x}", type_name(v), d[0], d[1], d[2], d[3]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_typed_and_distinct() {
        let a = redact(&Bson::String("proj-0000".into()));
        assert_eq!(a, redact(&Bson::String("proj-0000".into())));
        assert_ne!(a, redact(&Bson::String("proj-0001".into())));
        assert!(a.as_str().unwrap().starts_with("string#"));
        assert!(!a.as_str().unwrap().contains("proj"));
        assert_eq!(redact(&Bson::MinKey), Bson::MinKey);
        assert!(redact(&Bson::Int32(5)).as_str().unwrap().starts_with("int#"));
    }
}
