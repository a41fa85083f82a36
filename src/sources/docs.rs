//! Documents from mongoexport (NDJSON or JSON array, relaxed or canonical
//! Extended JSON) and mongodump (`.bson`, `.bson.gz`). File order is insertion order.

use super::projected::{self, Projection};
use super::records::{json_to_document, numbered_lines, open, Input, Layout, Record};
use super::Batches;
use crate::bsonx::bson_size;
use crate::error::input_error;
use crate::model::SampledDoc;
use anyhow::Result;
use bson::Document;
use std::path::Path;

/// Call `f(doc, bson_size)` for every document in file order. With a projection,
/// `doc` holds only its fields (`bson_size` is still the whole document's).
pub(crate) fn for_each_document(
    path: &Path,
    projection: Option<&Projection>,
    f: impl FnMut(&Document, usize) -> Result<()> + Send,
) -> Result<u64> {
    for_each_document_in(open(path)?, projection, f)
}

/// The same, on an opened input.
pub fn for_each_document_in(
    input: Input,
    projection: Option<&Projection>,
    mut f: impl FnMut(&Document, usize) -> Result<()> + Send,
) -> Result<u64> {
    // Batches are handed over whole; a caller that stops early (the pre-scan) stops between documents.
    let mut stop: Option<anyhow::Error> = None;
    let r = for_each_batch(input, projection, &mut |batch: &[SampledDoc]| {
        for d in batch {
            let owned;
            let doc = match &d.body {
                crate::model::DocBody::Doc(x) => x,
                crate::model::DocBody::Raw(r) => {
                    owned = r.to_document()?;
                    &owned
                }
            };
            if let Err(e) = f(doc, d.bson_size) {
                stop = Some(e);
                return Err(anyhow::anyhow!("stopped"));
            }
        }
        Ok(())
    });
    match (r, stop) {
        (_, Some(e)) => Err(e),
        (r, None) => r,
    }
}

/// Documents in file order, in batches. JSON lines are read in blocks on every core
/// (the projected read when it can, the full parse otherwise) while `f` takes the
/// previous block: reading and the caller's work overlap.
pub(crate) fn for_each_batch(input: Input, projection: Option<&Projection>, f: &mut Batches) -> Result<u64> {
    let shown = input.shown.clone();
    let project = |d: Document| projected::project(projection, d);
    if let (Layout::Bson, Some(p)) = (input.layout, projection) {
        return bson_batches(input, p, f);
    }
    if input.layout != Layout::Lines {
        const BATCH: usize = 4096;
        let mut batch = Vec::with_capacity(BATCH);
        let n = input.for_each_record(|rec| {
            batch.push(match rec {
                Record::Json(v, i) => {
                    let d = json_to_document(v).map_err(|e| input_error(format!("{shown}: array element {i}: not a document: {e}")))?;
                    let n = bson_size(&d).unwrap_or(0);
                    SampledDoc::doc(project(d), n)
                }
                Record::Bson { doc, size, .. } => SampledDoc::doc(project(doc), size),
            });
            if batch.len() == BATCH {
                f(&batch)?;
                batch.clear();
            }
            Ok(())
        })?;
        if !batch.is_empty() {
            f(&batch)?;
        }
        return Ok(n);
    }
    let parse = |block: &[u8], before: u64| -> (Result<Vec<SampledDoc>>, u64) {
        use rayon::prelude::*;
        let (lines, last) = numbered_lines(block, before);
        let docs = lines
            .par_iter()
            .map(|(lineno, raw)| {
                let text = simdutf8::basic::from_utf8(raw).map_err(|_| input_error(format!("{shown}: line {lineno}: not UTF-8 text")))?;
                if is_log_line(text) {
                    return Err(input_error(format!(
                        "{shown}: line {lineno} is a mongod log line (t, s, c, id, ctx, msg), not a document: give the log to --queries; --docs takes the collection's documents (mongoexport or mongodump)"
                    )));
                }
                if let Some((doc, bson_size)) = projection.and_then(|p| projected::read_raw(text, p)) {
                    return Ok(SampledDoc { body: crate::model::DocBody::Raw(doc), bson_size });
                }
                let (doc, bson_size) = projected::full(text, projection).map_err(|e| {
                    // A line that ends inside its document: most often a file cut short (a copy
                    // or an export interrupted).
                    let cut = if e.to_string().contains("EOF while parsing") { " (the line ends inside the document: was the file cut short?)" } else { "" };
                    input_error(format!("{shown}: line {lineno}: malformed JSON document: {e}{cut}"))
                })?;
                Ok(SampledDoc::doc(doc, bson_size))
            })
            .collect();
        (docs, last)
    };
    let mut count = 0u64;
    let mut behind = OneBehind { f, pending: Vec::new() };
    input.for_each_line_block(|block, before| {
        let (n, last) = behind.next(|| parse(block, before))?;
        count += n;
        Ok(last)
    })?;
    behind.finish()?;
    if count == 0 {
        return Err(input_error(format!("{shown} is empty")));
    }
    Ok(count)
}

/// A mongod 4.4+ JSON log line (`{"t":{"$date":...},"s":"I","c":"COMMAND","id":...,"ctx":...`):
/// given as documents it would be analysed as a collection of log lines (its fields proposed as
/// keys), or stop at a line bson refuses with no word of why. An export starts with `_id`.
fn is_log_line(text: &str) -> bool {
    text.starts_with(r#"{"t":{"$date":"#) && [r#","s":""#, r#","c":""#, r#","id":"#, r#","ctx":"#].iter().all(|k| text.contains(k))
}

/// mongodump documents projected as raw BSON on every core (no field outside the projection
/// is decoded), while `f` takes the previous block: 4× faster than decoding each whole.
fn bson_batches(input: Input, projection: &Projection, f: &mut Batches) -> Result<u64> {
    use rayon::prelude::*;
    let shown = input.shown.clone();
    let project = |block: &super::records::BsonBlock| -> Result<Vec<SampledDoc>> {
        block
            .docs
            .par_iter()
            .map(|(offset, range)| {
                let bytes = &block.buf[range.clone()];
                let invalid = |e: &dyn std::fmt::Display| input_error(format!("{shown}: invalid BSON document at byte {offset}: {e}"));
                super::records::check_depth(&shown, bytes, *offset)?;
                let raw = bson::RawDocument::from_bytes(bytes).map_err(|e| invalid(&e))?;
                match projected::project_bson(raw, projection) {
                    Some(Ok(doc)) => Ok(SampledDoc { body: crate::model::DocBody::Raw(doc), bson_size: bytes.len() }),
                    Some(Err(e)) => Err(invalid(&e)),
                    None => {
                        let d = Document::from_reader(bytes).map_err(|e| invalid(&e))?;
                        Ok(SampledDoc::doc(projection.apply(d), bytes.len()))
                    }
                }
            })
            .collect()
    };
    // An empty file is refused by the reader (`records::read_bson_frames`).
    let mut behind = OneBehind { f, pending: Vec::new() };
    let n = input.for_each_bson_block(|block| behind.next(|| (project(block), ())).map(|_| ()))?;
    behind.finish()?;
    Ok(n)
}

/// Documents handed to the caller one block behind: a block is read on every core while the
/// caller takes the previous one, so reading and the caller's work overlap.
struct OneBehind<'f, 'a> {
    f: &'f mut Batches<'a>,
    pending: Vec<SampledDoc>,
}

impl OneBehind<'_, '_> {
    /// Run `work` on this block while the caller takes the previous block; the documents
    /// `work` made, and what else it returned.
    fn next<T: Send>(&mut self, work: impl FnOnce() -> (Result<Vec<SampledDoc>>, T) + Send) -> Result<(u64, T)> {
        let (f, pending) = (&mut *self.f, &self.pending);
        let ((docs, extra), taken) = rayon::join(work, || if pending.is_empty() { Ok(()) } else { f(pending) });
        taken?;
        self.pending = docs?;
        Ok((self.pending.len() as u64, extra))
    }

    /// The last block.
    fn finish(self) -> Result<()> {
        if self.pending.is_empty() {
            Ok(())
        } else {
            (self.f)(&self.pending)
        }
    }
}

/// The namespace a mongodump path names: `dump/<db>/<coll>.bson[.gz]`.
pub(crate) fn namespace_from_dump_path(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let coll = name.strip_suffix(".bson.gz").or_else(|| name.strip_suffix(".bson"))?;
    let db = path.parent()?.file_name()?.to_str()?;
    let valid = |s: &str| !s.is_empty() && !s.starts_with('.') && !s.contains(['/', '\\', ' ', '"', '$', '.']);
    (valid(db) && !coll.is_empty()).then(|| format!("{db}.{coll}"))
}
