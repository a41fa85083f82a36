//! Document sources that are not a deployment: a file, or documents in memory.

use super::docs::{for_each_batch, for_each_document};
use super::projected::Projection;
use super::records::open;
use super::Batches;
use super::DocumentSource;
use crate::model::collection::DumpMetadata;
use anyhow::Result;
use bson::Document;

/// A document file as a source (mongoexport JSON, mongodump BSON).
pub(crate) struct FileSource {
    pub(crate) path: std::path::PathBuf,
    /// Set by `read_only`: `scan` builds only these fields.
    pub(crate) projection: Option<Projection>,
    /// Indexes and options from a mongodump metadata.json or `--indexes FILE`.
    pub(crate) metadata: Option<DumpMetadata>,
}

impl FileSource {
    pub(crate) fn new(path: std::path::PathBuf) -> Self {
        FileSource { path, projection: None, metadata: None }
    }

    pub(crate) fn with_metadata(mut self, metadata: Option<DumpMetadata>) -> Self {
        self.metadata = metadata;
        self
    }

    /// A mongodump of an empty collection: an empty `.bson` beside its metadata.json. Read
    /// as a collection with no documents (not an empty file given by mistake).
    fn is_empty_dump(&self) -> bool {
        let bson = self.path.extension().is_some_and(|e| e == "bson");
        self.metadata.is_some() && bson && std::fs::metadata(&self.path).is_ok_and(|m| m.is_file() && m.len() == 0)
    }
}

/// The metadata.json mongodump writes beside `<coll>.bson` (`<coll>.metadata.json`, or
/// `.metadata.json.gz` with `--gzip`), when there is one.
pub(crate) fn dump_metadata_beside(docs: &std::path::Path) -> Option<std::path::PathBuf> {
    let name = docs.file_name()?.to_str()?;
    let stem = name.strip_suffix(".bson.gz").or_else(|| name.strip_suffix(".bson"))?;
    [format!("{stem}.metadata.json"), format!("{stem}.metadata.json.gz")].into_iter().map(|n| docs.with_file_name(n)).find(|p| p.is_file())
}

/// Read a metadata.json (or `getIndexes()` output), gzipped or not.
pub(crate) fn read_metadata(path: &std::path::Path) -> Result<DumpMetadata> {
    use std::io::Read;
    let cannot = |e: &dyn std::fmt::Display| crate::error::input_error(format!("{}: {e}", path.display()));
    let bytes = std::fs::read(path).map_err(|e| cannot(&e))?;
    let mut text = String::new();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_string(&mut text).map_err(|e| cannot(&e))?;
    } else {
        text = String::from_utf8(bytes).map_err(|e| cannot(&e))?;
    }
    DumpMetadata::parse(&text).map_err(|e| cannot(&e))
}

/// Raised by the pre-scan's callback to stop reading once it has enough documents.
#[derive(Debug)]
struct Enough;

impl std::fmt::Display for Enough {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("enough documents")
    }
}

impl std::error::Error for Enough {}

impl DocumentSource for FileSource {
    fn describe(&self) -> String {
        self.path.display().to_string()
    }

    fn facts(&self) -> super::CollectionFacts {
        match &self.metadata {
            Some(m) => super::CollectionFacts {
                indexes: Some(m.indexes.clone()),
                options: Some(m.options.clone()),
                num_docs_total: self.is_empty_dump().then_some(0),
                ..Default::default()
            },
            None => super::CollectionFacts::default(),
        }
    }

    fn prescan(&mut self, n: usize) -> Result<Vec<Document>> {
        if self.is_empty_dump() {
            return Ok(Vec::new());
        }
        let mut out = Vec::with_capacity(n);
        let r = for_each_document(&self.path, None, |d, _| {
            if out.len() >= n {
                return Err(anyhow::Error::new(Enough));
            }
            out.push(d.clone());
            Ok(())
        });
        match r {
            Ok(_) => Ok(out),
            Err(e) if e.downcast_ref::<Enough>().is_some() => Ok(out),
            Err(e) => Err(e),
        }
    }

    fn read_only(&mut self, fields: &[String]) {
        self.projection = Some(Projection::new(fields.to_vec()));
    }

    /// For a plain file of lines: its size over the length of its first lines (an estimate
    /// for making room; compressed files, pipes and standard input are not looked at).
    fn expected_docs(&self) -> Option<u64> {
        use std::io::Read;
        let size = std::fs::metadata(&self.path).ok().filter(|m| m.is_file())?.len();
        let mut head = Vec::new();
        std::fs::File::open(&self.path).ok()?.take(1 << 20).read_to_end(&mut head).ok()?;
        // Gzip, a JSON array, BSON (a NUL among its first length bytes): no lines to count.
        if head.starts_with(&[0x1f, 0x8b]) || head.first() == Some(&b'[') || head.iter().take(4).any(|&b| b == 0) {
            return None;
        }
        let lines = memchr::memchr_iter(b'\n', &head).count() as u64;
        (lines >= 16).then(|| size * lines / head.len() as u64)
    }

    fn scan(&mut self, f: &mut Batches) -> Result<()> {
        if self.is_empty_dump() {
            return Ok(());
        }
        for_each_batch(open(&self.path)?, self.projection.as_ref(), f).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_file_is_expected_to_hold_about_its_lines() {
        let dir = tempfile::tempdir().unwrap();
        let lines = dir.path().join("d.ndjson");
        let text: String = (0..50_000).map(|i| format!("{{\"a\":{i},\"b\":\"{}\"}}\n", "x".repeat(i % 40))).collect();
        std::fs::write(&lines, &text).unwrap();
        let n = FileSource::new(lines).expected_docs().unwrap();
        assert!((45_000..=55_000).contains(&n), "{n}");
        // Compressed, array and missing files: no guess (and no error).
        let gz = dir.path().join("d.ndjson.gz");
        std::fs::write(&gz, [0x1f, 0x8b, 8, 0]).unwrap();
        let array = dir.path().join("a.json");
        std::fs::write(&array, "[{\"a\":1}\n,{\"a\":2}]").unwrap();
        for p in [gz, array, dir.path().join("none")] {
            assert_eq!(FileSource::new(p).expected_docs(), None);
        }
    }
}
