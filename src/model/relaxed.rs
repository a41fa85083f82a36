//! The shell-like object syntax DBAs type, as JSON: `{a: 1, 'b.c': "hashed"}`,
//! `{locale: "en", strength: 2}`. Plain JSON and Extended JSON are accepted too (they
//! are a subset). Read by `model::shell`, the one parser of shell notation.

use super::shell::{self, Dialect};
use anyhow::Result;
use serde_json::Value;

pub fn parse(text: &str) -> Result<Value> {
    // Relaxed Extended JSON: numbers stay numbers, documents keep their order.
    Ok(shell::parse(text, Dialect::Typed).map_err(anyhow::Error::msg)?.into_relaxed_extjson())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_syntax_and_json() {
        let v = parse("{a: 1, 'b.c': \"hashed\", d.e: -1}").unwrap();
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, vec!["a", "b.c", "d.e"]);
        assert_eq!(v["d.e"], -1);
        assert_eq!(parse(r#"{"locale": "en", "strength": 2}"#).unwrap()["strength"], 2);
        assert!(parse("{a: 1").is_err());
        assert!(parse("{a 1}").is_err());
        assert!(parse("{a: hashed}").is_err());
        assert!(parse("{a: 1, a: 1}").is_err());
    }

    #[test]
    fn deep_nesting_is_refused_without_overflow() {
        let deep = "{a: ".repeat(20_000) + &"}".repeat(20_000);
        let e = parse(&deep).unwrap_err().to_string();
        assert!(e.contains("nested more than 100 levels"), "{e}");
        let deep = "[".repeat(20_000);
        assert!(parse(&deep).unwrap_err().to_string().contains("nested more than 100"));
        let ok = "{a: ".repeat(100) + "1" + &"}".repeat(100);
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn errors_show_whole_characters() {
        let e = parse("{a: 1 é}").unwrap_err().to_string();
        assert!(e.contains("'é' at character 7"), "{e}");
        let e = parse("{a: 1} ü").unwrap_err().to_string();
        assert!(e.contains("'ü' at character 8"), "{e}");
    }
}
