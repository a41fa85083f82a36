//! What one line of a text log holds: a 4.4+ slow query, a legacy (2.2–4.2) operation, a
//! transaction's summary, another record, a line to skip (and the version it names), or
//! malformed text.

use super::legacy;
use super::reasons::{NOT_SLOW_QUERY, TXN_LINES};
use super::slow_log::{FastLogLine, SlowQuery};
use crate::sources::records::parse_json_document_lenient;
use bson::Document;

/// What one line of a text file holds.
pub(super) enum Line<'a> {
    Skip(&'static str),
    Doc(Document),
    /// A legacy (2.2–4.2) text log operation, as a profiler-shaped document.
    Legacy(Document),
    Slow(Box<SlowQuery<'a>>),
    /// A transaction summary line (id 51802) of an aborted transaction.
    Aborted(Document),
    /// Not valid JSON: counted and skipped (`MALFORMED_LINES`), why kept for the words.
    Malformed(String),
}

pub(super) fn classify_line(text: &str) -> Line<'_> {
    if !text.starts_with('{') {
        return match legacy::parse_line(text) {
            legacy::Legacy::Op(d) => Line::Legacy(d),
            legacy::Legacy::Skip(why) => Line::Skip(why),
        };
    }
    // Cheap pre-filter: most log lines are not slow queries.
    if text.starts_with("{\"t\":") {
        if text.contains("\"id\":51802,") {
            // An aborted transaction never happened (its retry is another txnNumber).
            if text.contains("\"terminationCause\":\"aborted\"") {
                if let Ok(d) = parse_json_document_lenient(text) {
                    return Line::Aborted(d);
                }
            }
            return Line::Skip(TXN_LINES);
        }
        if !text.contains("\"id\":51803") && !text.contains("Slow query") {
            return Line::Skip(NOT_SLOW_QUERY);
        }
        if let Ok(FastLogLine { id: Some(51803), attr: Some(sq), t, ctx }) = serde_json::from_str::<FastLogLine>(text) {
            return Line::Slow(Box::new(sq.at(t, ctx)));
        }
    }
    match parse_json_document_lenient(text) {
        Ok(d) => Line::Doc(d),
        Err(e) => Line::Malformed(format!("malformed JSON: {e}")),
    }
}

/// The server version a line that is no operation names: a 4.4+ "Build Info" line, or a
/// 2.2–4.2 startup line ("db version v4.0.10"); with whether it was the JSON one.
pub(super) fn version_named(text: &str) -> Option<(String, bool)> {
    use crate::model::version::{from_build_info_line, from_startup_line};
    if text.starts_with('{') {
        from_build_info_line(text).map(|v| (v, true))
    } else {
        from_startup_line(text).map(|v| (v, false))
    }
}
