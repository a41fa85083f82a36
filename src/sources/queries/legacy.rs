//! Legacy text logs (MongoDB 2.2 to 4.2): the slow operation lines
//! `<time> [<ctx>] <op> <ns> <field: value>... <N>ms`, with `op` one of query,
//! getmore, update, remove, insert, command, and objects in the shell's own notation
//! (`{ foo: 33.0, _id: ObjectId('...'), ts: new Date(1700000000000) }`).
//!
//! A line becomes a `system.profile`-shaped document (`op`, `ns`, `query`,
//! `updateobj`, `command`, `originatingCommand`, `millis`, ...) read by the profiler
//! reader, so both formats share one interpretation. Write commands (`update`,
//! `delete`, `insert`) are skipped: their statements have lines of their own.

use crate::model::shell::{Cursor, Dialect};
use bson::{Bson, Document};

pub(super) const LEGACY_OTHER: &str = "legacy text log lines that are not operations";
/// Text that is no log line at all: no time stamp before a `[context]`.
pub(crate) const NOT_LOG_TEXT: &str = "text lines that are not mongod log lines";
pub(super) const LEGACY_UNREADABLE: &str = "legacy operation lines with an object that cannot be read (truncated by the server?)";
pub(super) const LEGACY_WRITE_COMMAND: &str = "legacy update/delete/insert command lines (their statements are read from their own lines)";

pub(super) enum Legacy {
    Op(Document),
    Skip(&'static str),
}

const OPS: [&str; 6] = ["query", "getmore", "update", "remove", "insert", "command"];

/// A legacy line opens with its time: "Wed Mar  5 17:14:57.407" (2.2, 2.4) or ISO 8601
/// "2014-05-01T12:00:00.000+0000" (2.6+, then severity and component before the context).
fn starts_with_time(prefix: &str) -> bool {
    const DAYS: [&str; 7] = ["Mon ", "Tue ", "Wed ", "Thu ", "Fri ", "Sat ", "Sun "];
    let iso = prefix.len() >= 19 && prefix.as_bytes()[..4].iter().all(u8::is_ascii_digit) && prefix.as_bytes()[4] == b'-';
    iso || (DAYS.iter().any(|d| prefix.starts_with(d)) && prefix.contains(':'))
}

/// Read one legacy line.
pub(super) fn parse_line(line: &str) -> Legacy {
    let line = line.trim_end();
    // The operation follows the thread context: "... [conn4] query test.docs ...".
    let Some(open) = line.find(" [") else { return Legacy::Skip(NOT_LOG_TEXT) };
    let Some(close) = line[open..].find("] ").map(|c| open + c) else { return Legacy::Skip(NOT_LOG_TEXT) };
    if !starts_with_time(&line[..open]) {
        return Legacy::Skip(NOT_LOG_TEXT);
    }
    let rest = &line[close + 2..];
    let (op, rest) = rest.split_once(' ').unwrap_or((rest, ""));
    if !OPS.contains(&op) {
        return Legacy::Skip(LEGACY_OTHER);
    }
    let (ns, rest) = rest.split_once(' ').unwrap_or((rest, ""));
    let Some(millis) = line.rsplit(' ').next().and_then(|t| t.strip_suffix("ms")).and_then(|t| t.parse::<i64>().ok()) else {
        return Legacy::Skip(LEGACY_OTHER);
    };
    if !ns.contains('.') {
        return Legacy::Skip(LEGACY_OTHER);
    }
    let mut d = Document::new();
    d.insert("op", op);
    d.insert("ns", ns);
    d.insert("millis", millis);
    // ISO timestamps (2.6+) place the line in time; 2.x ctime ones have no year.
    if let Some(t) = line.split(' ').next().and_then(iso_millis) {
        d.insert("tsMillis", t);
    }
    let mut p = Fields { s: rest.as_bytes(), text: rest, i: 0 };
    loop {
        p.ws();
        if p.i >= p.s.len() {
            break;
        }
        let key = p.key();
        if p.peek() != Some(b':') {
            // A bare token ("locks(micros)", the final "29ms").
            p.skip_token();
            continue;
        }
        p.i += 1;
        p.ws();
        let value = match key.as_str() {
            "query" | "update" | "command" | "originatingCommand" | "planSummary" => {
                // `command: find { ... }`: a command name, then its object.
                let mut name = String::new();
                if p.peek() != Some(b'{') {
                    name = p.word();
                    p.ws();
                }
                if key == "planSummary" {
                    // "IXSCAN { a: 1 }, IXSCAN { b: 1 }": the stage names only.
                    let mut stages = vec![name];
                    loop {
                        if p.peek() == Some(b'{') {
                            let mut c = p.cursor();
                            if c.object().is_err() {
                                return Legacy::Skip(LEGACY_UNREADABLE);
                            }
                            p.i = c.i;
                        }
                        p.ws();
                        if p.peek() == Some(b',') {
                            p.i += 1;
                            p.ws();
                            stages.push(p.word());
                            p.ws();
                        } else {
                            break;
                        }
                    }
                    d.insert("planSummary", stages.join(", "));
                    continue;
                }
                if p.peek() != Some(b'{') {
                    continue;
                }
                let mut c = p.cursor();
                match c.object() {
                    Ok(o) => {
                        p.i = c.i;
                        Bson::Document(o)
                    }
                    Err(_) => return Legacy::Skip(LEGACY_UNREADABLE),
                }
            }
            _ if p.peek() == Some(b'{') => {
                let mut c = p.cursor();
                if c.object().is_err() {
                    // An unreadable lock or stats object does not matter; stop reading fields.
                    break;
                }
                p.i = c.i;
                continue;
            }
            _ if matches!(p.peek(), Some(b'"')) => {
                let mut c = p.cursor();
                let s = c.string();
                p.i = c.i;
                // The client's name (3.4+): shardkey's own reads are left out by the profiler reader.
                if let (Ok(s), "appName") = (s, key.as_str()) {
                    d.insert("appName", s);
                }
                continue;
            }
            _ => {
                let t = p.token();
                if let Ok(n) = t.parse::<i64>() {
                    Bson::Int64(n)
                } else {
                    continue;
                }
            }
        };
        let name = match key.as_str() {
            "update" => "updateobj",
            "nscanned" | "nscannedObjects" => "docsExamined",
            k => k,
        };
        d.insert(name, value);
    }
    if op == "command" {
        let name = d.get_document("command").ok().and_then(|c| c.keys().next().cloned()).unwrap_or_default();
        if matches!(name.as_str(), "update" | "delete" | "insert") {
            return Legacy::Skip(LEGACY_WRITE_COMMAND);
        }
    }
    if op == "query" || op == "getmore" {
        // OP_QUERY wrapped the filter with its options: { query: {...}, orderby: {...} }.
        if let Ok(q) = d.get_document("query") {
            let wrapped = q.get_document("query").or_else(|_| q.get_document("$query")).ok().filter(|_| {
                q.keys().all(|k| {
                    matches!(
                        k.as_str(),
                        "query"
                            | "$query"
                            | "orderby"
                            | "$orderby"
                            | "$explain"
                            | "$hint"
                            | "$snapshot"
                            | "$comment"
                            | "$maxScan"
                            | "$readPreference"
                            | "$returnKey"
                            | "$showDiskLoc"
                            | "$min"
                            | "$max"
                            | "$maxTimeMS"
                    )
                })
            });
            if let Some(w) = wrapped.cloned() {
                d.insert("query", w);
            }
        }
        if op == "getmore" && !d.contains_key("originatingCommand") {
            // 2.x getmore lines carry the cursor's query: read it as that query.
            d.insert("op", "query");
        }
    }
    Legacy::Op(d)
}

/// "2019-06-18T11:59:16.516+0100" (no colon in the offset) or RFC 3339, in milliseconds.
fn iso_millis(t: &str) -> Option<i64> {
    if !t.is_ascii() || t.len() < 20 || t.as_bytes()[4] != b'-' {
        return None;
    }
    let fixed = match t.len() {
        // +hhmm → +hh:mm
        n if n > 5 && (t.as_bytes()[n - 5] == b'+' || t.as_bytes()[n - 5] == b'-') => format!("{}:{}", &t[..n - 2], &t[n - 2..]),
        _ => t.to_string(),
    };
    bson::DateTime::parse_rfc3339_str(&fixed).ok().map(|d| d.timestamp_millis())
}

/// The `field: value` part of a line.
struct Fields<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

impl Fields<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i] == b' ' {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// The text up to the first byte in `stops` (ASCII, so the slice stays on character boundaries).
    fn until(&mut self, stops: &[u8]) -> String {
        let start = self.i;
        while self.peek().is_some_and(|c| !stops.contains(&c)) {
            self.i += 1;
        }
        self.text[start..self.i].to_string()
    }

    fn key(&mut self) -> String {
        self.until(b": {")
    }

    fn word(&mut self) -> String {
        self.until(b" ,{")
    }

    fn token(&mut self) -> String {
        self.until(b" ")
    }

    fn skip_token(&mut self) {
        if self.peek().is_none_or(|c| c == b' ') {
            self.i += 1;
        }
        while self.peek().is_some_and(|c| c != b' ') {
            self.i += 1;
        }
    }

    fn cursor(&self) -> Cursor<'_> {
        Cursor::new(self.text, self.i, Dialect::Logged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    fn op(line: &str) -> Document {
        match parse_line(line) {
            Legacy::Op(d) => d,
            Legacy::Skip(why) => panic!("skipped ({why}): {line}"),
        }
    }

    #[test]
    fn op_query_2_4_with_its_wrapper() {
        let d = op("Wed Mar  5 17:14:57.407 [conn4] query test.docs query: { query: { foo: 33.0 }, orderby: { foo: -1.0 } } ntoreturn:0 ntoskip:0 nscanned:100000 scanAndOrder:1 keyUpdates:0 locks(micros) r:29773 nreturned:1 reslen:68 29ms");
        assert_eq!(d.get_str("op").unwrap(), "query");
        assert_eq!(d.get_str("ns").unwrap(), "test.docs");
        assert_eq!(d.get_document("query").unwrap(), &doc! {"foo": 33.0});
        assert_eq!(d.get_i64("millis").unwrap(), 29);
        assert_eq!(d.get_i64("docsExamined").unwrap(), 100_000);
        assert_eq!(d.get_i64("nreturned").unwrap(), 1);
    }

    #[test]
    fn commands_and_writes_of_3_x_and_4_0() {
        let d = op(
            r#"2019-06-18T12:00:01.001+0100 I COMMAND  [conn1] command test.products appName: "MongoDB Shell" command: find { find: "products", filter: { sku: "abc", _id: ObjectId('5d08c3b5e0d3b3a1f2f1a1b1'), at: new Date(1560855601000), n: NumberLong(5) }, lsid: { id: UUID("e4c4afb8-3bee-4d60-8a99-e053f7ab51d8") }, $db: "test" } planSummary: IXSCAN { sku: 1.0 }, IXSCAN { _id: 1 } keysExamined:1 docsExamined:1 cursorExhausted:1 numYields:0 nreturned:1 reslen:233 locks:{ Global: { acquireCount: { r: 1 } } } protocol:op_msg 12ms"#,
        );
        let c = d.get_document("command").unwrap();
        assert_eq!(c.get_str("find").unwrap(), "products");
        let f = c.get_document("filter").unwrap();
        assert!(matches!(f.get("_id"), Some(Bson::ObjectId(_))));
        assert_eq!(f.get("at"), Some(&Bson::DateTime(bson::DateTime::from_millis(1_560_855_601_000))));
        assert_eq!(f.get("n"), Some(&Bson::Int64(5)));
        assert_eq!(d.get_str("planSummary").unwrap(), "IXSCAN, IXSCAN");
        assert_eq!(d.get_i64("millis").unwrap(), 12);
        let u = op("2019-06-18T12:00:02.000+0100 I WRITE    [conn1] update test.docs command: { q: { a: 1.0 }, u: { $set: { b: 2.0 } }, multi: false, upsert: false } planSummary: COLLSCAN keysExamined:0 docsExamined:3 nMatched:1 nModified:1 numYields:0 locks:{} 0ms");
        assert_eq!(u.get_document("command").unwrap().get_document("q").unwrap(), &doc! {"a": 1.0});
        assert_eq!(u.get_str("planSummary").unwrap(), "COLLSCAN");
        assert!(matches!(
            parse_line(
                r#"2019-06-18T12:00:02.000+0100 I COMMAND  [conn1] command test.$cmd command: update { update: "docs", updates: [ { q: { a: 1.0 }, u: { $set: { b: 2.0 } } } ], ordered: true, $db: "test" } numYields:0 reslen:59 locks:{} protocol:op_msg 0ms"#
            ),
            Legacy::Skip(LEGACY_WRITE_COMMAND)
        ));
        let old = op("Mon Aug  5 20:22:10 [conn4] update test.docs query: { _id: 3 } update: { $inc: { n: 1 } } nscanned:1 nupdated:1 keyUpdates:0 locks(micros) w:88 101ms");
        assert_eq!(old.get_document("updateobj").unwrap(), &doc! {"$inc": {"n": 1}});
        let ts = op("2014-04-09T23:19:26.551-0400 [conn48] command test.$cmd command: count { count: \"docs\", query: { t: Timestamp 1396987200|1, r: /^ab/i, b: BinData(0, AQID) } } ntoreturn:1 182ms");
        let q = ts.get_document("command").unwrap().get_document("query").unwrap();
        assert_eq!(q.get("t"), Some(&Bson::Timestamp(bson::Timestamp { time: 1_396_987_200, increment: 1 })));
        assert!(matches!(q.get("b"), Some(Bson::Binary(b)) if b.bytes == vec![1, 2, 3]));
    }

    #[test]
    fn other_lines_and_truncated_objects_are_skipped_with_a_reason() {
        assert!(matches!(
            parse_line("2020-02-07T11:59:19.783+1100 I REPL     [replexec-0] Starting an election"),
            Legacy::Skip(LEGACY_OTHER)
        ));
        assert!(matches!(
            parse_line("Wed Mar  5 17:14:57.407 [conn4] query test.docs query: { a: 1, b: ... 29ms"),
            Legacy::Skip(LEGACY_UNREADABLE)
        ));
        // Found by fuzzing: an unterminated regex ending in a backslash.
        assert!(matches!(parse_line("Wed Mar  5 17:14:57.407 [conn4] query test.docs query: { a: /x\\"), Legacy::Skip(_)));
        assert!(matches!(
            parse_line("Wed Mar  5 17:14:57.407 [conn4] query test.docs query: { a: /rue } 0ms"),
            Legacy::Skip(LEGACY_UNREADABLE)
        ));
    }
}
