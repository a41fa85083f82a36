//! Documents from mongoexport (NDJSON or JSON array, relaxed or canonical
//! Extended JSON) and mongodump (`.bson`, `.bson.gz`). File order is insertion order.

use super::records::{json_to_document, numbered_lines, open, parse_json_document, Input, Layout, Record};
use crate::error::input_error;
use anyhow::Result;
use bson::Document;
use std::path::Path;

/// Call `f(doc, bson_size)` for every document in file order. JSON lines are
/// parsed in parallel blocks; `f` still sees them one by one, in order.
pub fn for_each_document(path: &Path, f: impl FnMut(&Document, usize) -> Result<()>) -> Result<u64> {
    for_each_document_in(open(path)?, f)
}

/// The same, on an opened input.
pub fn for_each_document_in(input: Input, mut f: impl FnMut(&Document, usize) -> Result<()>) -> Result<u64> {
    let shown = input.shown.clone();
    if input.layout != Layout::Lines {
        let mut size_buf = Vec::new();
        let mut size_of = |d: &Document| -> usize {
            size_buf.clear();
            d.to_writer(&mut size_buf).map(|_| size_buf.len()).unwrap_or(0)
        };
        return input.for_each_record(|rec| match rec {
            Record::Json(v, i) => {
                let d = json_to_document(v)
                    .map_err(|e| input_error(format!("{shown}: array element {i}: not a document: {e}")))?;
                let n = size_of(&d);
                f(&d, n)
            }
            Record::Bson { doc, size, .. } => f(&doc, size),
        });
    }
    let mut count = 0u64;
    let mut stop: Option<anyhow::Error> = None;
    let lines = input.for_each_line_block(|block, before| {
        use rayon::prelude::*;
        let (lines, last) = numbered_lines(block, before);
        let parsed: Vec<Result<(Document, usize)>> = lines
            .par_iter()
            .map(|(lineno, raw)| {
                let text = std::str::from_utf8(raw).map_err(|_| input_error(format!("{shown}: line {lineno}: not UTF-8 text")))?;
                let d = parse_json_document(text)
                    .map_err(|e| input_error(format!("{shown}: line {lineno}: malformed JSON document: {e}")))?;
                let mut buf = Vec::new();
                let n = d.to_writer(&mut buf).map(|_| buf.len()).unwrap_or(0);
                Ok((d, n))
            })
            .collect();
        for p in parsed {
            let (d, n) = p?;
            count += 1;
            if let Err(e) = f(&d, n) {
                // The caller asked to stop (e.g. the pre-scan has enough).
                stop = Some(e);
                return Err(anyhow::anyhow!("stopped"));
            }
        }
        Ok(last)
    });
    match (lines, stop) {
        (_, Some(e)) => Err(e),
        (Err(e), None) => Err(e),
        (Ok(()), None) if count == 0 => Err(input_error(format!("{shown} is empty"))),
        (Ok(()), None) => Ok(count),
    }
}

/// The namespace a mongodump path names: `dump/<db>/<coll>.bson[.gz]`.
pub fn namespace_from_dump_path(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let coll = name.strip_suffix(".bson.gz").or_else(|| name.strip_suffix(".bson"))?;
    let db = path.parent()?.file_name()?.to_str()?;
    let valid = |s: &str| !s.is_empty() && !s.starts_with('.') && !s.contains(['/', '\\', ' ', '"', '$', '.']);
    (valid(db) && !coll.is_empty()).then(|| format!("{db}.{coll}"))
}
