//! MongoDB shell notation, the one parser for both places it appears:
//! - what a DBA types (`Dialect::Typed`): `{a: 1, 'b.c': "hashed"}`,
//!   `{locale: "en", strength: 2}`; plain JSON and Extended JSON are a subset. Unquoted
//!   keys may hold dots; a field given twice, an unquoted word or a number JSON cannot
//!   hold is refused, with the character where it went wrong.
//! - what legacy logs (2.2 to 4.2) print (`Dialect::Logged`):
//!   `{ _id: ObjectId('...'), ts: new Date(1700000000000), t: Timestamp 1396987200|1, r: /^ab/i }`,
//!   keys anything up to `:`, repeated keys kept last, the shell's constructors and words.
//!
//! Numbers follow one rule in both: an integer is an Int32 when it fits, else an Int64;
//! anything with `.`, `e` or `E` (or past an Int64) is a Double.

use crate::bsonx::depth::MAX_DEPTH;
use bson::{spec::BinarySubtype, Binary, Bson, Document};

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Dialect {
    Typed,
    Logged,
}

/// Why the text could not be read, in words that name the character.
pub(crate) type Fail = String;

/// A position in a text being read.
pub(crate) struct Cursor<'a> {
    text: &'a str,
    s: &'a [u8],
    pub(crate) i: usize,
    depth: usize,
    dialect: Dialect,
}

/// The whole `text` as one value (nothing but white space after it).
pub(crate) fn parse(text: &str, dialect: Dialect) -> Result<Bson, Fail> {
    let mut c = Cursor::new(text, 0, dialect);
    let v = c.value()?;
    c.ws();
    if c.i != c.s.len() {
        return Err(format!("unexpected '{}' at character {}", c.current(), c.position()));
    }
    Ok(v)
}

impl<'a> Cursor<'a> {
    /// A cursor at byte `at` of `text`.
    pub(crate) fn new(text: &'a str, at: usize, dialect: Dialect) -> Self {
        Cursor { text, s: text.as_bytes(), i: at, depth: 0, dialect }
    }

    /// The character at the cursor (whole, not its first byte).
    fn current(&self) -> char {
        self.text.get(self.i..).and_then(|t| t.chars().next()).unwrap_or('?')
    }

    /// The cursor as a 1-based character position.
    fn position(&self) -> usize {
        self.text.get(..self.i).map(|t| t.chars().count()).unwrap_or(self.i) + 1
    }

    fn ws(&mut self) {
        while self.s.get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ended(&self, inside: &str) -> Fail {
        format!("the text ended inside {inside}")
    }

    /// Skip white space, then take `c`.
    fn expect(&mut self, c: u8) -> Result<(), Fail> {
        self.ws();
        match self.peek() {
            Some(x) if x == c => {
                self.i += 1;
                Ok(())
            }
            Some(_) => Err(format!("expected '{}' but found '{}' at character {}", c as char, self.current(), self.position())),
            None => Err(format!("expected '{}' but the text ended", c as char)),
        }
    }

    /// Enter an object or array; refuse nesting past MongoDB's 100 levels (the parser
    /// recurses once per level).
    fn enter(&mut self) -> Result<(), Fail> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("nested more than {MAX_DEPTH} levels deep at character {}", self.position()));
        }
        Ok(())
    }

    /// A bare word: letters, digits, `_`, `$` (typed text: also `.` and any non-ASCII).
    fn word(&mut self) -> &'a str {
        let start = self.i;
        let typed = self.dialect == Dialect::Typed;
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || (typed && (c == b'.' || c >= 0x80))) {
            self.i += 1;
        }
        &self.text[start..self.i]
    }

    pub(crate) fn value(&mut self) -> Result<Bson, Fail> {
        self.ws();
        let logged = self.dialect == Dialect::Logged;
        match self.peek() {
            Some(b'{') => self.object().map(Bson::Document),
            Some(b'[') => self.array(),
            Some(b'"' | b'\'') => self.string().map(Bson::String),
            Some(b'/') if logged => self.regex(),
            Some(x) if x.is_ascii_digit() || matches!(x, b'-' | b'+' | b'.') => self.number(),
            Some(_) => {
                let at = self.position();
                let w = self.word();
                match w {
                    "true" => Ok(Bson::Boolean(true)),
                    "false" => Ok(Bson::Boolean(false)),
                    "null" => Ok(Bson::Null),
                    "" => Err(format!("unexpected '{}' at character {}", self.current(), self.position())),
                    _ if logged => self.logged_word(w).ok_or_else(|| format!("unreadable '{w}' at character {at}")),
                    _ => Err(format!("unknown word '{w}' (strings need quotes)")),
                }
            }
            None => Err("the text ended where a value was expected".into()),
        }
    }

    /// `{ ... }` at the cursor.
    pub(crate) fn object(&mut self) -> Result<Document, Fail> {
        self.expect(b'{')?;
        self.enter()?;
        let mut d = Document::new();
        loop {
            self.ws();
            let key = match self.peek() {
                Some(b'}') => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(d);
                }
                Some(b'"' | b'\'') => self.string()?,
                Some(_) if self.dialect == Dialect::Logged => {
                    let start = self.i;
                    while self.peek().is_some_and(|x| !matches!(x, b':' | b' ' | b'}' | b',')) {
                        self.i += 1;
                    }
                    self.text[start..self.i].to_string()
                }
                Some(_) => self.word().to_string(),
                None => return Err(self.ended("an object (missing '}')")),
            };
            if key.is_empty() {
                return Err(format!("expected a field name at character {}", self.position()));
            }
            self.expect(b':')?;
            let v = self.value()?;
            if self.dialect == Dialect::Typed && d.contains_key(&key) {
                return Err(format!("field '{key}' appears twice"));
            }
            d.insert(key, v);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {}
                Some(_) => return Err(format!("expected ',' or '}}' but found '{}' at character {}", self.current(), self.position())),
                None => return Err(self.ended("an object (missing '}')")),
            }
        }
    }

    fn array(&mut self) -> Result<Bson, Fail> {
        self.i += 1;
        self.enter()?;
        let mut a = Vec::new();
        loop {
            self.ws();
            if self.peek() == Some(b']') {
                self.i += 1;
                self.depth -= 1;
                return Ok(Bson::Array(a));
            }
            a.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {}
                _ => return Err(format!("expected ',' or ']' at character {}", self.position())),
            }
        }
    }

    /// A string in single or double quotes; `\n` and `\t` escaped, any other character after `\` as itself.
    pub(crate) fn string(&mut self) -> Result<String, Fail> {
        let q = self.peek().ok_or_else(|| self.ended("a string"))?;
        self.i += 1;
        let mut out = Vec::new();
        while let Some(x) = self.peek() {
            self.i += 1;
            if x == q {
                return String::from_utf8(out).map_err(|_| "a string that is not UTF-8".to_string());
            }
            if x == b'\\' {
                let e = self.peek().ok_or("unterminated string")?;
                self.i += 1;
                out.push(match e {
                    b'n' => b'\n',
                    b't' => b'\t',
                    other => other,
                });
            } else {
                out.push(x);
            }
        }
        Err("unterminated string".into())
    }

    fn number(&mut self) -> Result<Bson, Fail> {
        let start = self.i;
        while self.peek().is_some_and(|x| x.is_ascii_digit() || matches!(x, b'-' | b'+' | b'.' | b'e' | b'E')) {
            self.i += 1;
        }
        let t = &self.text[start..self.i];
        if !t.contains(['.', 'e', 'E']) {
            if let Ok(n) = t.parse::<i32>() {
                return Ok(Bson::Int32(n));
            }
            if let Ok(n) = t.parse::<i64>() {
                return Ok(Bson::Int64(n));
            }
        }
        match t.parse::<f64>() {
            // Typed text becomes JSON, which holds no infinity.
            Ok(f) if f.is_finite() || self.dialect == Dialect::Logged => Ok(Bson::Double(f)),
            _ => Err(format!("'{t}' is not a number")),
        }
    }

    /// `/pattern/flags` (legacy logs print regular expressions bare).
    fn regex(&mut self) -> Result<Bson, Fail> {
        self.i += 1;
        let start = self.i;
        while self.peek().is_some_and(|x| x != b'/') {
            if self.peek() == Some(b'\\') {
                self.i += 1;
            }
            self.i += 1;
        }
        // Unterminated (the line was cut): not readable.
        self.peek().ok_or_else(|| self.ended("a regular expression"))?;
        let pattern = self.text.get(start..self.i).ok_or("a cut regular expression")?.to_string();
        self.i += 1;
        let fs = self.i;
        while self.peek().is_some_and(|x| x.is_ascii_alphabetic()) {
            self.i += 1;
        }
        Ok(Bson::RegularExpression(bson::Regex { pattern, options: self.text[fs..self.i].to_string() }))
    }

    /// The shell's other words and constructors, as legacy logs print them.
    fn logged_word(&mut self, w: &str) -> Option<Bson> {
        match w {
            "undefined" => Some(Bson::Undefined),
            "MinKey" => Some(Bson::MinKey),
            "MaxKey" => Some(Bson::MaxKey),
            "Infinity" => Some(Bson::Double(f64::INFINITY)),
            "NaN" => Some(Bson::Double(f64::NAN)),
            "new" => {
                self.ws();
                let ctor = self.word();
                self.constructor(ctor)
            }
            "Timestamp" if self.s.get(self.i) == Some(&b' ') => {
                // 2.6: "Timestamp 1396987200|1"
                self.ws();
                let start = self.i;
                while self.peek().is_some_and(|x| x.is_ascii_digit() || x == b'|') {
                    self.i += 1;
                }
                let (t, i) = self.text[start..self.i].split_once('|')?;
                // 2.2 printed the seconds as milliseconds.
                let t: u64 = t.parse().ok()?;
                let time = if t > u32::MAX as u64 { t / 1000 } else { t } as u32;
                Some(Bson::Timestamp(bson::Timestamp { time, increment: i.parse().ok()? }))
            }
            _ => self.constructor(w),
        }
    }

    fn constructor(&mut self, name: &str) -> Option<Bson> {
        if name == "BinData" {
            return self.bin_data();
        }
        let a = self.args()?;
        let text_arg = || a.first().and_then(|v| v.as_str());
        match name {
            "ObjectId" => bson::oid::ObjectId::parse_str(text_arg()?).ok().map(Bson::ObjectId),
            "Date" | "ISODate" => match a.first()? {
                Bson::String(s) => bson::DateTime::parse_rfc3339_str(s).ok().map(Bson::DateTime),
                v => int_arg(v).map(|ms| Bson::DateTime(bson::DateTime::from_millis(ms))),
            },
            "Timestamp" => {
                Some(Bson::Timestamp(bson::Timestamp { time: int_arg(a.first()?)? as u32, increment: int_arg(a.get(1)?)? as u32 }))
            }
            "NumberLong" => int_arg(a.first()?).map(Bson::Int64),
            "NumberInt" => int_arg(a.first()?).map(|n| Bson::Int32(n as i32)),
            "NumberDecimal" => text_arg()?.parse::<bson::Decimal128>().ok().map(Bson::Decimal128),
            "UUID" => {
                let hex: String = text_arg()?.chars().filter(|c| *c != '-').collect();
                Some(Bson::Binary(Binary { subtype: BinarySubtype::Uuid, bytes: from_hex(&hex)? }))
            }
            _ => None,
        }
    }

    /// The argument list of a constructor: `(` values `)`.
    fn args(&mut self) -> Option<Vec<Bson>> {
        self.expect(b'(').ok()?;
        let mut out = Vec::new();
        loop {
            self.ws();
            if self.peek() == Some(b')') {
                self.i += 1;
                return Some(out);
            }
            out.push(self.value().ok()?);
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b')' => {}
                _ => return None,
            }
        }
    }

    /// `BinData(subtype, payload)`: the payload unquoted, base64 before 3.6, upper-case hex after.
    fn bin_data(&mut self) -> Option<Bson> {
        self.expect(b'(').ok()?;
        let start = self.i;
        while self.peek().is_some_and(|x| x != b')') {
            self.i += 1;
        }
        let inner = self.text.get(start..self.i)?;
        self.i += 1;
        let (t, payload) = inner.split_once(',')?;
        let subtype: u8 = t.trim().parse().ok()?;
        let payload = payload.trim().trim_matches('"');
        let is_hex = payload.len() % 2 == 0 && payload.bytes().all(|x| x.is_ascii_digit() || (b'A'..=b'F').contains(&x));
        let bytes = if is_hex && !payload.is_empty() { from_hex(payload)? } else { base64_decode(payload)? };
        Some(Bson::Binary(Binary { subtype: BinarySubtype::from(subtype), bytes }))
    }
}

/// A constructor's numeric argument: a number (`bsonx::number`'s rule) or its text (`NumberLong("5")`).
fn int_arg(v: &Bson) -> Option<i64> {
    match v {
        Bson::String(s) => s.parse().ok(),
        v => crate::bsonx::number::as_i64(v),
    }
}

fn from_hex(hex: &str) -> Option<Vec<u8>> {
    (0..hex.len() / 2).map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()).collect()
}

/// Standard base64, padded or not (the shell printed both), white space ignored.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    use base64::engine::{general_purpose::GeneralPurposeConfig, DecodePaddingMode, GeneralPurpose};
    use base64::Engine;
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent).with_decode_allow_trailing_bits(true),
    );
    let clean: Vec<u8> = s.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    LENIENT.decode(clean).ok()
}

/// A value as mongosh reads it.
pub(crate) fn shell_value(v: &Bson) -> String {
    match v {
        Bson::MinKey => "MinKey".into(),
        Bson::MaxKey => "MaxKey".into(),
        Bson::Int64(i) => format!("NumberLong(\"{i}\")"),
        Bson::Int32(i) => i.to_string(),
        Bson::Double(f) => format!("{f:?}"),
        Bson::String(s) => format!("{s:?}"),
        Bson::ObjectId(o) => format!("ObjectId(\"{o}\")"),
        Bson::DateTime(d) => format!("ISODate(\"{}\")", d.try_to_rfc3339_string().unwrap_or_default()),
        Bson::Document(d) => shell_doc(d),
        other => other.clone().into_relaxed_extjson().to_string(),
    }
}

pub(crate) fn shell_doc(d: &Document) -> String {
    let parts: Vec<String> = d
        .iter()
        .map(|(k, v)| {
            let plain = k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if plain {
                format!("{k}: {}", shell_value(v))
            } else {
                format!("{k:?}: {}", shell_value(v))
            }
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn one_number_rule_in_both_dialects() {
        for d in [Dialect::Typed, Dialect::Logged] {
            assert_eq!(parse("[1, -2147483649, 2.0, 1e3, +5]", d).unwrap(), bson::bson!([1i32, -2147483649i64, 2.0, 1000.0, 5i32]));
        }
        assert!(parse("1e999", Dialect::Typed).unwrap_err().contains("not a number"));
        assert_eq!(parse("1e999", Dialect::Logged).unwrap(), Bson::Double(f64::INFINITY));
    }

    #[test]
    fn logged_notation() {
        let v = parse(
            "{ a.b: 1, $or: [ { x: /^ab/i } ], a.b: 2, id: ObjectId('507f1f77bcf86cd799439011'), n: NumberLong(5), d: BinData(0, AQID) }",
            Dialect::Logged,
        )
        .unwrap();
        let d = v.as_document().unwrap();
        assert_eq!(d.get("a.b"), Some(&Bson::Int32(2)), "a repeated key is kept last");
        assert_eq!(d.get_array("$or").unwrap()[0], Bson::Document(doc! {"x": bson::Regex { pattern: "^ab".into(), options: "i".into() }}));
        assert_eq!(d.get_i64("n").unwrap(), 5);
        assert!(matches!(d.get("d"), Some(Bson::Binary(b)) if b.bytes == [1, 2, 3]));
        assert!(parse("{ a: ObjectId(", Dialect::Logged).is_err(), "cut");
    }

    #[test]
    fn typed_notation_refuses_what_logs_allow() {
        assert!(parse("{a: 1, a: 2}", Dialect::Typed).unwrap_err().contains("appears twice"));
        assert!(parse("{a: hashed}", Dialect::Typed).unwrap_err().contains("strings need quotes"));
        assert!(parse("{a: /x/}", Dialect::Typed).is_err());
    }
}
