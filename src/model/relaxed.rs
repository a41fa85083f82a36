//! A small parser for the shell-like object syntax DBAs type:
//! `{a: 1, 'b.c': "hashed"}`, `{locale: "en", strength: 2}`. Plain JSON and
//! Extended JSON are accepted too (they are a subset). Unquoted keys may hold dots.

use anyhow::{bail, Result};
use serde_json::{Map, Number, Value};

/// Objects and arrays nested deeper than this are refused (MongoDB's own limit
/// for documents is 100 levels); the parser recurses once per level.
pub(crate) const MAX_DEPTH: usize = 100;

pub fn parse(text: &str) -> Result<Value> {
    let mut p = Parser { text, s: text.as_bytes(), i: 0, depth: 0 };
    p.ws();
    let v = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        bail!("unexpected '{}' at character {}", p.current(), p.position());
    }
    Ok(v)
}

struct Parser<'a> {
    text: &'a str,
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    /// The character at the cursor (whole, not its first byte).
    fn current(&self) -> char {
        self.text.get(self.i..).and_then(|t| t.chars().next()).unwrap_or('?')
    }

    /// The cursor as a 1-based character position.
    fn position(&self) -> usize {
        self.text.get(..self.i).map(|t| t.chars().count()).unwrap_or(self.i) + 1
    }

    /// Enter an object or array; refuse nesting past `MAX_DEPTH`.
    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            bail!("nested more than {MAX_DEPTH} levels deep at character {}", self.position());
        }
        Ok(())
    }

    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, c: u8) -> Result<()> {
        self.ws();
        match self.peek() {
            Some(x) if x == c => {
                self.i += 1;
                Ok(())
            }
            Some(_) => bail!("expected '{}' but found '{}' at character {}", c as char, self.current(), self.position()),
            None => bail!("expected '{}' but the text ended", c as char),
        }
    }

    fn value(&mut self) -> Result<Value> {
        self.ws();
        match self.peek() {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') | Some(b'\'') => Ok(Value::String(self.string()?)),
            Some(c) if c == b'-' || c == b'+' || c == b'.' || c.is_ascii_digit() => self.number(),
            Some(_) => {
                let w = self.word();
                match w.as_str() {
                    "true" => Ok(Value::Bool(true)),
                    "false" => Ok(Value::Bool(false)),
                    "null" => Ok(Value::Null),
                    "" => bail!("unexpected '{}' at character {}", self.current(), self.position()),
                    _ => bail!("unknown word '{w}' (strings need quotes)"),
                }
            }
            None => bail!("the text ended where a value was expected"),
        }
    }

    fn word(&mut self) -> String {
        let start = self.i;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'.' || c >= 0x80 {
                self.i += 1;
            } else {
                break;
            }
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }

    fn number(&mut self) -> Result<Value> {
        let start = self.i;
        while let Some(c) = self.peek() {
            if c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E') {
                self.i += 1;
            } else {
                break;
            }
        }
        let t = std::str::from_utf8(&self.s[start..self.i])?;
        let t = t.strip_prefix('+').unwrap_or(t);
        if let Ok(i) = t.parse::<i64>() {
            return Ok(Value::Number(i.into()));
        }
        match t.parse::<f64>().ok().and_then(Number::from_f64) {
            Some(n) => Ok(Value::Number(n)),
            None => bail!("'{t}' is not a number"),
        }
    }

    fn string(&mut self) -> Result<String> {
        let q = self.s[self.i];
        self.i += 1;
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
            self.i += 1;
            if c == q {
                return Ok(String::from_utf8(out)?);
            }
            if c == b'\\' {
                let e = self.peek().ok_or_else(|| anyhow::anyhow!("unterminated string"))?;
                self.i += 1;
                match e {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    other => out.push(other),
                }
            } else {
                out.push(c);
            }
        }
        bail!("unterminated string")
    }

    fn object(&mut self) -> Result<Value> {
        self.enter()?;
        self.i += 1;
        let mut m = Map::new();
        loop {
            self.ws();
            if self.peek() == Some(b'}') {
                self.i += 1;
                self.depth -= 1;
                return Ok(Value::Object(m));
            }
            let key = match self.peek() {
                Some(b'"') | Some(b'\'') => self.string()?,
                Some(_) => {
                    let w = self.word();
                    if w.is_empty() {
                        bail!("expected a field name at character {}", self.position());
                    }
                    w
                }
                None => bail!("the text ended inside an object (missing '}}')"),
            };
            self.expect(b':')?;
            let v = self.value()?;
            if m.insert(key.clone(), v).is_some() {
                bail!("field '{key}' appears twice");
            }
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {}
                Some(_) => bail!("expected ',' or '}}' but found '{}' at character {}", self.current(), self.position()),
                None => bail!("the text ended inside an object (missing '}}')"),
            }
        }
    }

    fn array(&mut self) -> Result<Value> {
        self.enter()?;
        self.i += 1;
        let mut a = Vec::new();
        loop {
            self.ws();
            if self.peek() == Some(b']') {
                self.i += 1;
                self.depth -= 1;
                return Ok(Value::Array(a));
            }
            a.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {}
                _ => bail!("expected ',' or ']' at character {}", self.position()),
            }
        }
    }
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
