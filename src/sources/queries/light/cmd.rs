//! What the light read takes of a command document: the few fields `add_command` reads
//! besides the filters it copies, each value kept as its text, and whether bson reads a value
//! as the full parse would (else the line takes the full path).

use super::super::once::statement_key;
pub(super) use super::super::slow_log::{EXT_KEYS, GOSSIP};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// What `add_command` reads of a command document besides the filters it copies.
#[derive(Debug, Default)]
pub(super) struct LightCmd<'a> {
    pub(super) first: Option<&'a str>,
    /// The first field's value, when a string.
    pub(super) first_str: Option<Cow<'a, str>>,
    pub(super) db: Option<Cow<'a, str>>,
    /// The statement documents of an `updates` / `deletes` array: their keys (`once`).
    pub(super) updates: Option<Vec<u64>>,
    pub(super) deletes: Option<Vec<u64>>,
    /// A WRITE line's statement: its filter's text.
    pub(super) q: Option<&'a str>,
    /// The texts `workload` reads its operations' filters from (`figures`): `filter`,
    /// `query`, `pipeline`, the `updates` / `deletes` arrays; whether a statement has `u`.
    pub(super) filter: Option<&'a str>,
    pub(super) query: Option<&'a str>,
    pub(super) pipeline: Option<&'a str>,
    pub(super) statements: Option<&'a str>,
    pub(super) u: bool,
    /// What marks a mirrored read (`profile::is_mirrored_command`): `secondaryPreferred`,
    /// `readConcern: local`, a `maxTimeMS`.
    pub(super) secondary_preferred: bool,
    pub(super) local: bool,
    pub(super) max_time: bool,
    /// The texts of `lsid` (also what marks a mirrored read: none), `txnNumber` and
    /// `autocommit`: the transaction (`ops::txn`).
    pub(super) lsid: Option<&'a str>,
    pub(super) txn_number: Option<&'a str>,
    pub(super) autocommit: Option<&'a str>,
    /// The fields taken so far (`take`), a bit each: a second one takes the full path.
    pub(super) taken: u16,
}

impl<'a> LightCmd<'a> {
    /// Whether the command may name `key` next: an Extended JSON name, or the first name
    /// again (the full parse keeps the last value at the first place), takes the full path.
    /// (A repeat of another name is found by `take` if it is one it takes; a repeat of any
    /// other changes nothing the light read reads. Hashing every name to find any repeat
    /// was 5% of `workload`'s time.)
    #[inline]
    pub(super) fn admits(&self, key: &str) -> bool {
        // The first bytes compared before the rest: most names of the same length differ
        // there, and need no call to compare the rest (7M of 881M instructions of `workload`
        // on the benchmark log's first 40 MB, callgrind).
        let again = self.first.is_some_and(|f| f.len() == key.len() && f.as_bytes().first() == key.as_bytes().first() && f == key);
        !(again || key.starts_with('$') && EXT_KEYS.contains(&key))
    }

    /// One field, `value` its JSON text (one bson reads as the full parse would). None: the
    /// command names again a field it takes (its last value is the one the full parse reads).
    pub(super) fn take(&mut self, key: &'a str, value: &'a str) -> Option<()> {
        let first = self.first.is_none();
        if first {
            self.first = Some(key);
            self.first_str = text(value);
        }
        let bit = match key {
            _ if first && key != "q" => 0,
            "$db" => {
                self.db = text(value);
                1
            }
            "updates" => {
                self.updates = statement_keys(value, b'u');
                self.statements = Some(value);
                1 << 1
            }
            "deletes" => {
                self.deletes = statement_keys(value, b'd');
                self.statements = Some(value);
                1 << 2
            }
            "q" => {
                self.q = Some(value);
                1 << 3
            }
            "u" => {
                self.u = true;
                1 << 4
            }
            "filter" => {
                self.filter = Some(value);
                1 << 5
            }
            "query" => {
                self.query = Some(value);
                1 << 6
            }
            "pipeline" => {
                self.pipeline = Some(value);
                1 << 7
            }
            "$readPreference" => {
                self.secondary_preferred = string_field(value, "mode").as_deref() == Some("secondaryPreferred");
                1 << 8
            }
            "readConcern" => {
                self.local = string_field(value, "level").as_deref() == Some("local");
                1 << 9
            }
            "lsid" => {
                self.lsid = Some(value);
                1 << 10
            }
            "txnNumber" => {
                self.txn_number = Some(value);
                1 << 11
            }
            "autocommit" => {
                self.autocommit = Some(value);
                1 << 12
            }
            "maxTimeMS" => {
                self.max_time = true;
                1 << 13
            }
            _ => 0,
        };
        let again = self.taken & bit != 0;
        self.taken |= bit;
        (!again).then_some(())
    }
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for LightCmd<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = LightCmd<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a command document")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<LightCmd<'a>, A::Error> {
                let declined = || de::Error::custom("declined");
                let mut c = LightCmd::default();
                // A name with escapes cannot be borrowed: the read fails, the full path takes it.
                while let Some(k) = m.next_key::<&'de str>()? {
                    if k == GOSSIP {
                        m.next_value::<de::IgnoredAny>()?;
                        continue;
                    }
                    if !c.admits(k) {
                        return Err(declined());
                    }
                    let v: &'de RawValue = m.next_value()?;
                    let v = v.get();
                    if !bson_reads(v) {
                        return Err(declined());
                    }
                    c.take(k, v).ok_or_else(declined)?;
                }
                Ok(c)
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// Whether bson reads this value as the full parse would read it inside the line: one
/// without `$` keys or long numbers is plain JSON to it; any other is read by bson here.
/// A deeply nested value is left to the full parse (its depth limit counts from the line).
pub(super) fn bson_reads(v: &str) -> bool {
    if !shallow(v) {
        return false;
    }
    let b = v.as_bytes();
    let dollar_key = memchr::memmem::find(b, b"\"$").is_some();
    let long_number = b.windows(19).any(|w| w.iter().all(u8::is_ascii_digit));
    // A float serde_json cannot hold (1e400) fails the full parse.
    let exponent = b.windows(2).any(|w| (w[0].is_ascii_digit() || w[0] == b'.') && matches!(w[1], b'e' | b'E'));
    !(dollar_key || long_number || exponent) || serde_json::from_str::<bson::Bson>(v).is_ok()
}

/// Few enough brackets (strings included) that no depth limit can matter.
pub(super) fn shallow(v: &str) -> bool {
    // 64 bytes or fewer cannot hold more (most command values: not scanned again).
    v.len() <= 64 || v.bytes().filter(|&c| c == b'{' || c == b'[').count() <= 64
}

/// A string value (borrowed when it has no escapes).
fn text(t: &str) -> Option<Cow<'_, str>> {
    if !t.starts_with('"') {
        return None;
    }
    match t[1..t.len() - 1].contains('\\') {
        false => Some(Cow::Borrowed(&t[1..t.len() - 1])),
        true => serde_json::from_str::<String>(t).ok().map(Cow::Owned),
    }
}

/// An `updates` / `deletes` array: the keys (`once::statement_key`) of the elements bson
/// reads as documents, the statements the full read pushes.
fn statement_keys(v: &str, kind: u8) -> Option<Vec<u64>> {
    if !v.starts_with('[') {
        return None;
    }
    let items: Vec<&RawValue> = serde_json::from_str(v).ok()?;
    let document = |x: &&&RawValue| {
        let t = x.get();
        t.starts_with('{')
            && (memchr::memmem::find(t.as_bytes(), b"\"$").is_none()
                || matches!(serde_json::from_str::<bson::Bson>(t), Ok(bson::Bson::Document(_))))
    };
    #[derive(serde::Deserialize)]
    struct Stmt<'a> {
        #[serde(borrow)]
        q: Option<&'a RawValue>,
    }
    let q = |t: &str| serde_json::from_str::<Stmt>(t).ok().and_then(|s| s.q).map_or(0, |r| statement_key(kind, r.get()));
    Some(items.iter().filter(document).map(|x| q(x.get())).collect())
}

/// `$readPreference`'s `mode` or `readConcern`'s `level` (`{"mode": "secondaryPreferred"}`),
/// as bson would read it (a field of another type: none), without a map.
fn string_field<'a>(v: &'a str, field: &str) -> Option<Cow<'a, str>> {
    #[derive(serde::Deserialize)]
    struct Fields<'a> {
        #[serde(borrow)]
        mode: Option<&'a RawValue>,
        #[serde(borrow)]
        level: Option<&'a RawValue>,
    }
    if !v.starts_with('{') {
        return None;
    }
    let f: Fields = serde_json::from_str(v).ok()?;
    let x = if field == "mode" { f.mode } else { f.level };
    x.and_then(|x| text(x.get()))
}

/// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in hexadecimal digits (either case).
pub(super) fn hyphenated_uuid(v: &str) -> bool {
    let Ok(b) = <&[u8; 36]>::try_from(v.as_bytes()) else { return false };
    // Each group's bytes checked without a branch per byte (every lsid of every line comes here).
    let hex = |g: &[u8]| g.iter().fold(true, |ok, c| ok & c.is_ascii_hexdigit());
    let hyphens = (b[8] == b'-') & (b[13] == b'-') & (b[18] == b'-') & (b[23] == b'-');
    hyphens & hex(&b[..8]) & hex(&b[9..13]) & hex(&b[14..18]) & hex(&b[19..23]) & hex(&b[24..])
}
