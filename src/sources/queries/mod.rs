//! Query logs in every format we read, turned into `Query` values:
//! - mongod 4.4+ JSON log "Slow query" lines (id 51803), including per-statement
//!   `WRITE` lines and `getMore` through `originatingCommand`;
//! - `system.profile` documents (exported as JSON lines, a JSON array or BSON);
//! - 7.0 `config.sampledQueries` and `config.sampledQueriesDiff` documents;
//! - legacy text logs of MongoDB 2.2 to 4.2 (`legacy`).
//!
//! The format is detected per record, so one file may mix them.

//!
//! One file per format (`slow_log`, `profile`, `sampled`), sharing the command
//! parser (`command`); `FORMATS` lists them in detection order.

mod command;
mod fates;
mod legacy;
mod light;
mod line;
mod log;
pub use light::hand_scan_agrees;
mod once;
mod placement;
mod profile;
mod reasons;
mod resolve;
mod sampled;
pub(crate) mod sessions;
mod slow_log;

use super::records::{json_to_document, numbered_lines, open, Layout, Record};
use crate::error::input_error;
use anyhow::Result;
use bson::Document;
use line::{classify_line, version_named, Line};
use std::path::Path;

pub(crate) use log::OpSink;
pub use log::QueryLog;
// For the light reader and the log, which still name these through their parent.
use once::InBlock;
pub(crate) use reasons::{CUT_LAST_LINE, MALFORMED_LINES, NOT_CRUD, OWN_APP_NAME, TXN_LINES, UNKNOWN};

/// More malformed lines than this (and than 1% of the lines) stop the read: not a log we read.
const MALFORMED_LIMIT: u64 = 100;

/// A block's parts, read in parallel (`read_block`), waiting for their merge in file order.
type ReadBlock = (Vec<u8>, Vec<Result<QueryLog>>);

/// Read a file's blocks of whole lines: each block in parallel parts (`read_block`), merged
/// into `log` in file order while the next block is read. The merge is one thread's work:
/// run after each block (as it was), it left the other core idle for a quarter of
/// `analyze --queries`' time (with the block's line split, also moved beside the merge).
fn read_line_blocks(input: super::records::Input, log: &mut QueryLog) -> Result<u64> {
    let mut last_line = 0;
    let mut waiting: Option<ReadBlock> = None;
    input.for_each_owned_line_block(|block, first_line| {
        // What a part is made from (the log's settings; `QueryLog::part`).
        let proto = log.part();
        let before = waiting.take();
        let (merged, (parts, last)) = rayon::join(|| merge_read_block(log, before), || read_block(&block, first_line, &proto));
        let done_with = merged?;
        last_line = last;
        waiting = Some((block, parts));
        Ok((last, done_with))
    })?;
    merge_read_block(log, waiting)?;
    if let Some(sink) = &mut log.sink {
        sink.lines_read();
    }
    Ok(last_line)
}

/// Merge a read block's parts in order (the first error stops it); its buffer, now free.
fn merge_read_block(log: &mut QueryLog, read: Option<ReadBlock>) -> Result<Option<Vec<u8>>> {
    let Some((block, parts)) = read else { return Ok(None) };
    for p in parts {
        log.merge_block(p?, &block);
    }
    Ok(Some(block))
}

/// Read a block of whole lines in parallel parts (made from `proto`, a `QueryLog::part`),
/// to merge in file order; with the block's last line number.
/// Slow-query lines are read light when no operation needs its figures or time
/// (`workload`, `--since`/`--until`): counted, and parsed in full only if the sample
/// keeps one of their operations (`QueryLog::resolve`).
fn read_block(block: &[u8], first_line: u64, proto: &QueryLog) -> (Vec<Result<QueryLog>>, u64) {
    use rayon::prelude::*;
    let (lines, last_line) = numbered_lines(block, first_line);
    // `plan`'s sink of transactions takes light reads too: it is given parsed only the lines
    // whose operations it keeps (`light::needs_parsed`).
    let lazy = !proto.wants_stats() || proto.sink_reads_light();
    let figures = proto.figures_only();
    let parts: Vec<Result<QueryLog>> = lines
        .par_chunks(2048)
        .map(|chunk| {
            let mut part = if lazy { proto.staging_part() } else { proto.part() };
            // The namespaces of the last light lines, shared by the next ones on them.
            let mut recent_ns = Vec::new();
            // The operations of a line read for figures, reused (`light::figures`).
            let mut scratch = light::Scratch::default();
            // A sink of sessions (`plan`) is told of the lines read light; none otherwise.
            let sessions = part.sink.is_some();
            for (lineno, raw) in chunk {
                part.records += 1;
                let Ok(text) = simdutf8::basic::from_utf8(raw) else {
                    part.malformed_line(*lineno, "not UTF-8 text".into());
                    continue;
                };
                // `workload`: operations with their figures, filters parsed alone.
                if figures && light::is_candidate(text) && light::add_figures_line(&mut part, text, &mut scratch) {
                    continue;
                }
                if lazy && light::is_candidate(text) {
                    if let Some(found) = light::read(text, sessions).filter(|f| !sessions || !light::needs_parsed(f, text, &mut part)) {
                        if let Some(why) = found.skip {
                            part.skip(why);
                        }
                        let fates = part.line_fates(found.conn.as_deref(), &found.tie);
                        if sessions {
                            light::tell_sink(&mut part, &found, text, &fates);
                        }
                        let mut held = Vec::new();
                        if found.ops > 0 {
                            let ns = found.ns.shared(&mut recent_ns);
                            let start = raw.as_ptr() as usize - block.as_ptr() as usize;
                            for index in 0..found.ops {
                                let at = InBlock { start, len: raw.len(), lineno: *lineno, index: index as u32 };
                                match fates.fate(index) {
                                    once::Fate::Count => part.push_deferred(ns.clone(), at),
                                    once::Fate::Twice(why) => part.skip(why),
                                    once::Fate::Wait => held.push(once::Held::Light { ns: ns.clone(), at }),
                                }
                            }
                        }
                        part.end_line(fates, held);
                        continue;
                    }
                }
                match classify_line(text) {
                    Line::Skip(why) => {
                        if let Some(v) = version_named(text) {
                            part.seen_version = Some(v);
                        }
                        part.skip(why)
                    }
                    Line::Malformed(why) => part.malformed_line(*lineno, why),
                    // A slow query the typed read refused (bson refuses the `$binary` of a replica
                    // set's `$clusterTime`), tied to others as the light read would tie it (`once`).
                    Line::Doc(d) if light::is_candidate(text) && d.contains_key("msg") => {
                        slow_log::add_log_line_tied(&mut part, &d, light::tie_of(text).1)
                    }
                    Line::Doc(d) => add_record(&mut part, &d),
                    Line::Legacy(d) => {
                        let before = (part.found, part.skipped.values().sum::<u64>());
                        profile::add_profile_shaped(&mut part, &d, crate::model::QueryOrigin::SlowQueryLog);
                        if (part.found, part.skipped.values().sum::<u64>()) == before {
                            part.skip(NOT_CRUD);
                        }
                    }
                    // How the line is tied to others, as the light read sees it (`once`).
                    Line::Slow(sq) => {
                        let tie = slow_log::plain_tie(text, &sq).unwrap_or_else(|| light::tie_of(text).1);
                        slow_log::add_slow_query(&mut part, *sq, tie)
                    }
                    Line::Aborted(d) => {
                        part.skip(TXN_LINES);
                        let txn = d.get_document("attr").and_then(|a| a.get_document("parameters")).ok().and_then(command::txn_of);
                        if let (Some(t), Some(sink)) = (txn, part.sink.as_mut()) {
                            sink.aborted(t);
                        }
                    }
                }
            }
            Ok(part)
        })
        .collect();
    (parts, last_line)
}

/// Read one query file (any supported format) into a new log.
pub fn read_query_file(path: &Path) -> Result<QueryLog> {
    let mut log = QueryLog::default();
    read_query_file_into(path, &mut log)?;
    Ok(log)
}

/// Read one query file into `log`. Line files are read in blocks and parsed on every core.
/// The mongod that wrote a log, as host:port, from its startup line: "MongoDB starting"
/// (4.4+ JSON, id 4615611: `attr.host`, `attr.port`; 2.2–4.2 text: `port=N ... host=H`).
/// Only the first 1 MiB is read: the line opens the file, unless it was rotated away.
pub(crate) fn log_host(path: &Path) -> Option<String> {
    let input = open(path).ok()?;
    if input.layout != Layout::Lines {
        return None;
    }
    input.head_lines(1 << 20).iter().find_map(|l| startup_host(l))
}

fn startup_host(line: &str) -> Option<String> {
    if line.contains("\"id\":4615611") {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        let attr = v.get("attr")?;
        return Some(format!("{}:{}", attr.get("host")?.as_str()?, attr.get("port")?.as_i64()?));
    }
    let rest = line.split_once("MongoDB starting :")?.1;
    let field = |k: &str| rest.split_whitespace().find_map(|w| w.strip_prefix(k)).map(str::to_string);
    Some(format!("{}:{}", field("host=")?, field("port=")?))
}

pub(crate) fn read_query_file_into(path: &Path, log: &mut QueryLog) -> Result<()> {
    read_queries_in(open(path)?, log)
}

/// Records that are no query-log record: text that is no log line, JSON of no known format,
/// malformed lines (a cut last line is a log's, copied while mongod wrote it).
fn unrecognised(log: &QueryLog) -> u64 {
    [legacy::NOT_LOG_TEXT, UNKNOWN, MALFORMED_LINES].iter().map(|k| log.skipped.get(*k).copied().unwrap_or(0)).sum()
}

/// A file none of whose records is a mongod log line, a profiler document or a sampled
/// query is not a query log (README given for a log, a data export): refused, saying what
/// it looks like (from its name and layout; never its content, which may hold secrets).
fn refuse_if_not_a_log(shown: &str, layout: Layout, records: u64, unrecognised: u64) -> Result<()> {
    if records == 0 || unrecognised < records {
        return Ok(());
    }
    let ext = Path::new(shown).extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    let looks = match (ext.as_str(), layout) {
        ("md" | "markdown" | "rst" | "txt", _) => "text (documentation?)",
        ("py", _) => "Python source",
        ("sh" | "bash", _) => "a shell script",
        ("rs" | "js" | "ts" | "go" | "java" | "c" | "cpp" | "rb", _) => "source code",
        ("toml" | "ini" | "cfg" | "yaml" | "yml", _) => "a configuration file",
        (_, Layout::Lines) => "text, or JSON documents of another kind (data to analyse goes to --docs)",
        _ => "documents of another kind (data to analyse goes to --docs)",
    };
    Err(input_error(format!(
        "{shown}: not a query log: none of its {records} records is a mongod log line, a profiler document or a sampled query; it looks like {looks}"
    )))
}

/// Read one opened input (any supported format) into `log`.
pub fn read_queries_in(input: super::records::Input, log: &mut QueryLog) -> Result<()> {
    let shown = input.shown.clone();
    let layout = input.layout;
    let (records, unknown) = (log.records, unrecognised(log));
    if input.layout == Layout::Lines {
        // This file's malformed lines on their own (a cut last line is this file's).
        let earlier = log.malformed.take();
        log.once.new_file();
        log.seen_version = None;
        let last_line = read_line_blocks(input, log)?;
        if let Some((v, json)) = log.seen_version.take() {
            use crate::model::version::{ServerVersion, VersionFrom};
            let from = if json { VersionFrom::LogBuildInfo(shown.clone()) } else { VersionFrom::LogStartup(shown.clone()) };
            log.versions.extend(ServerVersion::parse(&v, from));
        }
        log.resolve(&shown)?;
        malformed_within_limits(log, &shown, last_line)?;
        refuse_if_not_a_log(&shown, layout, log.records - records, unrecognised(log) - unknown)?;
        log.note_malformed_from(earlier);
        return Ok(());
    }
    input.for_each_record(|rec| {
        log.records += 1;
        match rec {
            Record::Json(v, i) => {
                let d = json_to_document(v).map_err(|e| input_error(format!("{shown}: array element {i}: {e}")))?;
                add_record(log, &d);
            }
            Record::Bson { doc, .. } => add_record(log, &doc),
        }
        Ok(())
    })?;
    refuse_if_not_a_log(&shown, layout, log.records - records, unrecognised(log) - unknown)
}

/// A log copied while mongod writes it ends in half a line, and a long log may hold a few
/// garbled ones: skipped and counted, the rest read. Many of them mean the file is not a log
/// (or not one we read): one line, exit 2, naming the first.
fn malformed_within_limits(log: &mut QueryLog, shown: &str, last_line: u64) -> Result<()> {
    let Some(((first, why), last)) = log.malformed.clone() else { return Ok(()) };
    // (`last_line` is the last line a block ended with a newline; a cut one has none.)
    if last == last_line || last == last_line + 1 {
        if let Some(n) = log.skipped.get_mut(MALFORMED_LINES) {
            *n -= 1;
        }
        log.skip(CUT_LAST_LINE);
    }
    let n = log.skipped.get(MALFORMED_LINES).copied().unwrap_or(0);
    if n == 0 {
        log.skipped.remove(MALFORMED_LINES);
    }
    if n > MALFORMED_LIMIT.max(log.records / 100) {
        return Err(input_error(format!(
            "{shown}: {n} of {} lines are malformed (the first, line {first}: {why}); is it a mongod log, a profiler export or sampled queries?",
            log.records
        )));
    }
    Ok(())
}

/// One record format: how to recognise it by its fields, and how to read it.
struct RecordFormat {
    detect: fn(&Document) -> bool,
    add: fn(&mut QueryLog, &Document),
}

/// The record formats, in detection order (a record is read by the first that matches).
const FORMATS: &[RecordFormat] = &[
    // mongod 4.4+ JSON log line
    RecordFormat { detect: |d| d.contains_key("msg") && d.contains_key("t"), add: slow_log::add_log_line },
    // 7.0 config.sampledQueries
    RecordFormat { detect: |d| d.contains_key("cmdName") && d.contains_key("cmd"), add: sampled::add_sampled_query },
    // 7.0 config.sampledQueriesDiff
    RecordFormat { detect: |d| d.contains_key("diff") && d.contains_key("ns"), add: sampled::add_diff },
    // <db>.system.profile
    RecordFormat { detect: |d| d.contains_key("op") && d.contains_key("ns"), add: profile::add_profile_doc },
];

/// Classify one record by its fields and add what it holds.
pub(crate) fn add_record(log: &mut QueryLog, d: &Document) {
    match FORMATS.iter().find(|f| (f.detect)(d)) {
        Some(f) => (f.add)(log, d),
        None => log.skip(UNKNOWN),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_names_its_mongod_in_the_startup_line() {
        // mongod 6.0 and 2.6 startup lines, as written.
        let json = r#"{"t":{"$date":"2023-03-01T10:00:00.000+00:00"},"s":"I","c":"CONTROL","id":4615611,"ctx":"initandlisten","msg":"MongoDB starting","attr":{"pid":1,"port":27018,"dbPath":"/data/db","architecture":"64-bit","host":"db2"}}"#;
        assert_eq!(startup_host(json).as_deref(), Some("db2:27018"));
        let text = "2014-05-01T12:00:00.000+0000 [initandlisten] MongoDB starting : pid=123 port=27017 dbpath=/data/db 64-bit host=mongo1";
        assert_eq!(startup_host(text).as_deref(), Some("mongo1:27017"));
        assert_eq!(startup_host(r#"{"id":51803,"msg":"Slow query"}"#), None);
    }
    use crate::model::Op;
    use bson::doc;

    fn one(d: Document) -> QueryLog {
        let mut log = QueryLog::default();
        add_record(&mut log, &d);
        log
    }

    #[test]
    fn slow_query_find_and_write_statement() {
        let log = one(doc! {"t": {"$date": "2024-01-01T00:00:00Z"}, "id": 51803, "msg": "Slow query",
        "attr": {"type": "command", "ns": "shop.orders", "command": {"find": "orders", "filter": {"a": 1}, "$db": "shop"}}});
        assert_eq!(log.queries.len(), 1);
        assert_eq!(log.queries[0].ns, "shop.orders");
        assert_eq!(log.queries[0].filter, doc! {"a": 1});
        let log = one(doc! {"t": 1, "id": 51803, "msg": "Slow query", "c": "WRITE",
        "attr": {"type": "update", "ns": "shop.orders", "command": {"q": {"_id": 1}, "u": {"$set": {"x": 1}}, "multi": true, "upsert": false}}});
        assert_eq!(log.queries[0].op, Op::Update);
        assert!(log.queries[0].multi);
    }

    /// shardkey's own reads, as each source records them (appName "shardkey"), are left out
    /// and counted; the application's (another appName, or none) are read.
    #[test]
    fn own_operations_are_left_out_of_every_source() {
        let slow = |app: &str| {
            format!(
                r#"{{"t":{{"$date":"2024-01-01T00:00:00Z"}},"s":"I","c":"COMMAND","id":51803,"ctx":"conn9","msg":"Slow query","attr":{{"type":"command","ns":"shop.orders","appName":"{app}","command":{{"find":"orders","filter":{{"a":1}},"$db":"shop"}},"durationMillis":120}}}}"#
            )
        };
        let legacy = |app: &str| {
            format!(
                r#"2019-06-18T12:00:01.001+0100 I COMMAND  [conn1] command shop.orders appName: "{app}" command: find {{ find: "orders", filter: {{ a: 1 }}, $db: "shop" }} planSummary: COLLSCAN keysExamined:0 docsExamined:1 numYields:0 nreturned:1 reslen:233 protocol:op_msg 120ms"#
            )
        };
        let text = [slow("shardkey"), slow("orders-api"), legacy("shardkey"), legacy("MongoDB Shell")].join("\n") + "\n";
        for light in [true, false] {
            // The light path (counting, parsed only if kept) and the full one (`workload` reads every line).
            let mut log = QueryLog { window: if light { (None, None) } else { (Some(0), None) }, ..QueryLog::default() };
            let input =
                super::super::records::from_reader(Box::new(std::io::Cursor::new(text.clone().into_bytes())), "log".into(), 0, false)
                    .unwrap();
            read_queries_in(input, &mut log).unwrap();
            assert_eq!(log.queries.len(), 2, "light {light}: {:?}", log.skipped);
            assert_eq!(log.skipped.get(reasons::OWN_OPERATIONS), Some(&2), "light {light}: {:?}", log.skipped);
        }
        let profiled = |app: &str| doc! {"op": "query", "ns": "shop.orders", "appName": app, "command": {"find": "orders", "filter": {"a": 1}}, "millis": 3};
        let mut log = QueryLog::default();
        add_record(&mut log, &profiled("shardkey"));
        add_record(&mut log, &profiled("orders-api"));
        assert_eq!(log.queries.len(), 1);
        assert_eq!(log.skipped.get(reasons::OWN_OPERATIONS), Some(&1));
    }

    fn read_text(text: &str) -> Result<QueryLog> {
        let mut log = QueryLog::default();
        let input = super::super::records::from_reader(Box::new(std::io::Cursor::new(text.as_bytes().to_vec())), "log".into(), 0, false)?;
        read_queries_in(input, &mut log)?;
        Ok(log)
    }

    /// A log copied while mongod writes it ends in half a line; a few garbled lines in a long
    /// log are skipped too; past the limit the file is refused with the first one named.
    #[test]
    fn cut_and_malformed_lines_are_skipped_within_a_limit() {
        let line = |i: u64| {
            format!(
                r#"{{"t":{{"$date":"2024-01-01T00:00:00Z"}},"s":"I","c":"COMMAND","id":51803,"ctx":"conn9","msg":"Slow query","attr":{{"type":"command","ns":"shop.orders","command":{{"find":"orders","filter":{{"a":{i}}},"$db":"shop"}},"durationMillis":120}}}}"#
            )
        };
        let whole: Vec<String> = (0..300).map(line).collect();
        // Cut in the middle of the last line, no newline after it.
        let cut = whole.join("\n");
        let cut = &cut[..cut.len() - 40];
        let log = read_text(cut).unwrap();
        assert_eq!((log.queries.len(), log.skipped.get(CUT_LAST_LINE)), (299, Some(&1)));
        assert!(!log.skipped.contains_key(MALFORMED_LINES), "{:?}", log.skipped);
        // Two garbled lines inside: skipped, counted, the first named.
        let mut lines = whole.clone();
        lines[10] = lines[10][..100].to_string();
        lines[20] = "{\"t\":{\"$date\":\"2024\"},\"id\":51803,\"msg\":\"Slow query\",".to_string();
        let log = read_text(&(lines.join("\n") + "\n")).unwrap();
        assert_eq!((log.queries.len(), log.skipped.get(MALFORMED_LINES)), (298, Some(&2)));
        assert_eq!(log.malformed.as_ref().map(|m| (m.0 .0, m.1)), Some((11, 21)));
        // Past 100 malformed lines (and 1% of the lines): not a log we read (the last one
        // counts as a cut line).
        let garbled: Vec<String> = (0..300).map(|i| if i % 2 == 0 { line(i) } else { "{\"t\": garbage".replace("\"t\": ", "") }).collect();
        let e = read_text(&(garbled.join("\n") + "\n")).unwrap_err().to_string();
        assert!(e.starts_with("log: 149 of 300 lines are malformed (the first, line 2: malformed JSON"), "{e}");
    }

    /// A log of three 8 MB blocks: each block's merge runs beside the next one's read
    /// (`read_line_blocks`); the counts are the hand count and the kept operations come in
    /// file order, across the blocks.
    #[test]
    fn blocks_merge_in_file_order_beside_the_next_read() {
        let n: usize = 80_000;
        let pad = "x".repeat(120);
        let text: String = (0..n)
            .map(|i| {
                let coll = if i % 2 == 0 { "x" } else { "y" };
                format!(
                    r#"{{"t":{{"$date":"2024-01-01T00:00:00Z"}},"s":"I","c":"COMMAND","id":51803,"ctx":"conn9","msg":"Slow query","attr":{{"type":"command","ns":"a.{coll}","command":{{"find":"{coll}","filter":{{"i":{i}}},"comment":"{pad}","$db":"a"}},"durationMillis":1}}}}"#
                ) + "\n"
            })
            .collect();
        assert!(text.len() > 2 * (8 << 20), "{} bytes: three blocks", text.len());
        let mut log = QueryLog::for_namespace(Some("a.x".into()));
        let input = super::super::records::from_reader(Box::new(std::io::Cursor::new(text.into_bytes())), "log".into(), 0, false).unwrap();
        read_queries_in(input, &mut log).unwrap();
        assert_eq!((log.records, log.found), (n as u64, n as u64));
        assert_eq!(log.by_namespace.get("a.x"), Some(&(n as u64 / 2)));
        assert_eq!(log.by_namespace.get("a.y"), Some(&(n as u64 / 2)));
        assert_eq!(log.queries.len(), n / 2);
        for (k, q) in log.queries.iter().enumerate() {
            assert_eq!(q.filter.get_i32("i").ok(), Some(2 * k as i32), "kept operation {k}");
        }
    }

    #[test]
    fn sampled_queries_7_0_format() {
        let log = one(doc! {"_id": 1, "ns": "shop.orders", "collectionUuid": 1, "cmdName": "delete",
        "cmd": {"delete": "orders", "deletes": [{"q": {"a": 1}, "limit": 1}], "$db": "shop"}});
        assert_eq!(log.queries[0].op, Op::Delete);
        assert!(!log.queries[0].multi);
        let log = one(doc! {"_id": 1, "ns": "shop.orders", "collectionUuid": 1, "diff": {"a": "u"}});
        assert_eq!(log.diffs.len(), 1);
    }
}
