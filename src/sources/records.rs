//! Reading records from a file: JSON lines, a JSON array, or concatenated BSON
//! (mongodump), each optionally gzip-compressed.

use crate::error::input_error;
use anyhow::{Context, Result};
use bson::Document;
use flate2::read::MultiGzDecoder;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// One record of a JSON array or BSON file, and where it was found (for error messages).
pub enum Record {
    /// One element of a JSON array (1-based position).
    Json(serde_json::Value, u64),
    /// One BSON document with its size in bytes and its byte offset.
    Bson(Document, usize, u64),
}

fn open_raw(path: &Path) -> Result<Box<dyn BufRead>> {
    let f = File::open(path).map_err(|e| input_error(format!("cannot open {}: {e}", path.display())))?;
    let mut r = BufReader::with_capacity(1 << 20, f);
    let gz = {
        let head = r.fill_buf().with_context(|| format!("reading {}", path.display()))?;
        head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b
    };
    if gz {
        Ok(Box::new(BufReader::with_capacity(1 << 20, MultiGzDecoder::new(r))))
    } else {
        Ok(Box::new(r))
    }
}

fn is_bson_name(path: &Path) -> bool {
    let n = path.to_string_lossy().to_ascii_lowercase();
    n.ends_with(".bson") || n.ends_with(".bson.gz")
}

/// How a file's records are laid out.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Layout {
    /// JSON lines or a text log.
    Lines,
    JsonArray,
    Bson,
}

/// Peek at the first non-blank byte (consuming the blanks before it). Errors on an empty file.
fn layout(path: &Path, r: &mut dyn BufRead) -> Result<Layout> {
    if is_bson_name(path) {
        return Ok(Layout::Bson);
    }
    loop {
        let buf = r.fill_buf().with_context(|| format!("reading {}", path.display()))?;
        if buf.is_empty() {
            return Err(input_error(format!("{} is empty", path.display())));
        }
        if let Some(i) = buf.iter().position(|b| !b.is_ascii_whitespace()) {
            let first = buf[i];
            r.consume(i);
            return Ok(match first {
                b'[' => Layout::JsonArray,
                // Not text: most likely BSON without the .bson name.
                c if c != b'{' && !c.is_ascii_graphic() => Layout::Bson,
                _ => Layout::Lines,
            });
        }
        let n = buf.len();
        r.consume(n);
    }
}

/// A line-oriented text file (JSON lines or a text log), opened for reading;
/// None for a JSON array or BSON. Errors on an empty file.
fn open_lines(path: &Path) -> Result<Option<Box<dyn BufRead>>> {
    let mut r = open_raw(path)?;
    match layout(path, &mut r)? {
        // Re-open: the skipped white space may hold line breaks that count.
        Layout::Lines => Ok(Some(open_raw(path)?)),
        _ => Ok(None),
    }
}

/// For a line-oriented file: call `f(block, lines_before)` on blocks of about
/// 8 MB of whole lines, in order; `f` returns the number of the block's last
/// line. Returns false (and reads nothing) for a JSON array or BSON file.
pub fn for_each_line_block(path: &Path, mut f: impl FnMut(&[u8], u64) -> Result<u64>) -> Result<bool> {
    let shown = path.display().to_string();
    let Some(mut r) = open_lines(path)? else { return Ok(false) };
    // Progress in uncompressed bytes; the file size is only a guess for gzip.
    let on_disk = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let pb = crate::util::progress::progress_bytes(on_disk, &format!("reading {}", path.file_name().and_then(|n| n.to_str()).unwrap_or("")));
    const BLOCK: usize = 8 << 20;
    let mut buf: Vec<u8> = Vec::with_capacity(BLOCK + (1 << 20));
    let mut line = 0u64;
    loop {
        let start = buf.len();
        buf.resize(start + BLOCK, 0);
        let mut got = 0;
        while got < BLOCK {
            let k = r.read(&mut buf[start + got..]).map_err(|e| input_error(format!("{shown}: cannot read: {e}")))?;
            if k == 0 {
                break;
            }
            got += k;
        }
        buf.truncate(start + got);
        pb.inc(got as u64);
        if pb.position() > pb.length().unwrap_or(0) {
            pb.set_length(pb.position());
        }
        if got == 0 {
            if !buf.is_empty() {
                f(&buf, line)?;
            }
            pb.finish_and_clear();
            return Ok(true);
        }
        // Up to the last complete line; the rest is carried over.
        if let Some(cut) = buf.iter().rposition(|&b| b == b'\n') {
            let rest = buf.split_off(cut + 1);
            line = f(&buf, line)?;
            buf = rest;
        }
    }
}

/// The non-blank lines of a block with their 1-based numbers, and the block's last line number.
pub fn numbered_lines(block: &[u8], lines_before: u64) -> (Vec<(u64, &[u8])>, u64) {
    let mut out = Vec::new();
    let mut n = lines_before;
    for l in block.split(|&b| b == b'\n') {
        n += 1;
        let t = l.trim_ascii();
        if !t.is_empty() {
            out.push((n, t));
        }
    }
    (out, n.saturating_sub(1))
}

/// Call `f` for every record of a JSON array or BSON file; stops at the first
/// error `f` returns. Line files are read with `for_each_line_block`.
pub fn for_each_record(path: &Path, mut f: impl FnMut(Record) -> Result<()>) -> Result<u64> {
    let shown = path.display().to_string();
    let mut r = open_raw(path)?;
    match layout(path, &mut r)? {
        Layout::Bson => read_bson(&mut r, &shown, f),
        Layout::JsonArray => {
            let mut text = String::new();
            r.read_to_string(&mut text).map_err(|e| input_error(format!("{shown}: not UTF-8 text: {e}")))?;
            let v: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| input_error(format!("{shown}: malformed JSON array at line {}: {e}", e.line())))?;
            let serde_json::Value::Array(items) = v else { unreachable!("starts with '['") };
            let n = items.len() as u64;
            for (i, item) in items.into_iter().enumerate() {
                f(Record::Json(item, i as u64 + 1))?;
            }
            Ok(n)
        }
        Layout::Lines => Err(anyhow::anyhow!("internal: {shown} is a line file; read it with for_each_line_block")),
    }
}

fn read_bson(r: &mut dyn BufRead, shown: &str, mut f: impl FnMut(Record) -> Result<()>) -> Result<u64> {
    let mut offset = 0u64;
    let mut n = 0u64;
    let mut buf = Vec::new();
    loop {
        let mut len_bytes = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            let k = r.read(&mut len_bytes[got..]).with_context(|| format!("reading {shown}"))?;
            if k == 0 {
                break;
            }
            got += k;
        }
        if got == 0 {
            break;
        }
        if got < 4 {
            return Err(input_error(format!("{shown}: truncated BSON at byte {offset} (a document length is cut)")));
        }
        let len = i32::from_le_bytes(len_bytes);
        if !(5..=48 * 1024 * 1024).contains(&len) {
            return Err(input_error(format!("{shown}: not BSON at byte {offset} (document length {len})")));
        }
        buf.clear();
        buf.extend_from_slice(&len_bytes);
        buf.resize(len as usize, 0);
        r.read_exact(&mut buf[4..]).map_err(|_| {
            input_error(format!("{shown}: truncated BSON at byte {offset} (document of {len} bytes is cut)"))
        })?;
        let doc = Document::from_reader(&buf[..])
            .map_err(|e| input_error(format!("{shown}: invalid BSON document at byte {offset}: {e}")))?;
        n += 1;
        f(Record::Bson(doc, len as usize, offset))?;
        offset += len as u64;
    }
    if n == 0 {
        return Err(input_error(format!("{shown} is empty")));
    }
    Ok(n)
}

/// Parse a JSON line as an Extended JSON document.
pub fn parse_json_document(text: &str) -> std::result::Result<Document, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    json_to_document(v)
}

/// Like `parse_json_document`, but a `$`-object that is not valid Extended JSON
/// (logs print some values their own way) is kept as a plain sub-document.
pub fn parse_json_document_lenient(text: &str) -> std::result::Result<Document, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if let Ok(d) = json_to_document(v) {
        return Ok(d);
    }
    // Rare: parse again rather than clone every line on the fast path.
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    match lenient(v) {
        bson::Bson::Document(d) => Ok(d),
        _ => Err("expected a document".into()),
    }
}

fn lenient(v: serde_json::Value) -> bson::Bson {
    match v {
        serde_json::Value::Object(m) => {
            let special = m.keys().next().is_some_and(|k| k.starts_with('$'));
            if special {
                if let Ok(b) = bson::Bson::try_from(serde_json::Value::Object(m.clone())) {
                    return b;
                }
            }
            bson::Bson::Document(m.into_iter().map(|(k, v)| (k, lenient(v))).collect())
        }
        serde_json::Value::Array(a) => bson::Bson::Array(a.into_iter().map(lenient).collect()),
        other => bson::Bson::try_from(other).unwrap_or(bson::Bson::Null),
    }
}

pub fn json_to_document(v: serde_json::Value) -> std::result::Result<Document, String> {
    match bson::Bson::try_from(v).map_err(|e| e.to_string())? {
        bson::Bson::Document(d) => Ok(d),
        other => Err(format!("expected a document, found {}", type_name(&other))),
    }
}

fn type_name(b: &bson::Bson) -> &'static str {
    match b {
        bson::Bson::Array(_) => "an array",
        bson::Bson::String(_) => "a string",
        bson::Bson::Null => "null",
        bson::Bson::Boolean(_) => "a boolean",
        _ => "a scalar value",
    }
}
