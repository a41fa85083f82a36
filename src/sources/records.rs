//! Reading records from a file: JSON lines, a JSON array, or concatenated BSON
//! (mongodump), each optionally gzip-compressed. A file is opened once and its
//! layout sniffed from the read buffer, so pipes, FIFOs and `-` (stdin) read
//! like files; a JSON array streams element by element.

use crate::bsonx::depth::{depth, MAX_DEPTH};
use crate::error::input_error;
use anyhow::Result;
use bson::Document;
use flate2::read::MultiGzDecoder;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// One record of a JSON array or BSON file, and where it was found (for error messages).
pub(crate) enum Record {
    /// One element of a JSON array (1-based position).
    Json(serde_json::Value, u64),
    /// One BSON document with its size in bytes.
    Bson { doc: Document, size: usize },
}

/// How a file's records are laid out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Layout {
    /// JSON lines or a text log.
    Lines,
    JsonArray,
    Bson,
}

/// A file opened once, its layout known, positioned at its first record.
pub struct Input {
    reader: Box<dyn BufRead + Send>,
    pub(crate) layout: Layout,
    /// Line breaks consumed before the first record (they count in line numbers).
    lines_before: u64,
    /// The path as shown in messages.
    pub(crate) shown: String,
    /// Bytes on disk, for the progress bar (0 for pipes).
    size_hint: u64,
}

fn is_bson_name(path: &Path) -> bool {
    let n = path.to_string_lossy().to_ascii_lowercase();
    n.ends_with(".bson") || n.ends_with(".bson.gz")
}

const BUFFER: usize = 1 << 20;

/// Open `path` (`-` is standard input): gzip is detected by content, a UTF-8
/// byte-order mark skipped, and the layout sniffed from the first non-blank byte.
pub(crate) fn open(path: &Path) -> Result<Input> {
    let shown = path.display().to_string();
    let cannot_read = |e: std::io::Error| input_error(format!("{shown}: cannot read: {e}"));
    // The reader, and its size on disk for the progress bar (0 for standard input).
    let (raw, size_hint): (Box<dyn Read + Send>, u64) = if path.as_os_str() == "-" {
        (Box::new(std::io::stdin()), 0)
    } else {
        let f = std::fs::File::open(path).map_err(|e| input_error(format!("cannot open {shown}: {e}")))?;
        let meta = f.metadata().map_err(cannot_read)?;
        if meta.is_dir() {
            return Err(input_error(format!("{shown} is a directory, not a file")));
        }
        (Box::new(f), meta.len())
    };
    from_reader(raw, shown, size_hint, is_bson_name(path))
}

/// The same as `open`, on any reader (`shown` names it in messages; `bson_name`:
/// its name says BSON). Fuzz targets feed bytes through here.
pub fn from_reader(raw: Box<dyn Read + Send>, shown: String, size_hint: u64, bson_name: bool) -> Result<Input> {
    let cannot_read = |e: std::io::Error| input_error(format!("{shown}: cannot read: {e}"));
    let (head, raw) = sniff(raw, 2).map_err(cannot_read)?;
    let gz = head.starts_with(&[0x1f, 0x8b]);
    let raw: Box<dyn Read + Send> = if gz { Box::new(MultiGzDecoder::new(raw)) } else { raw };
    let mut input = Input { reader: Box::new(std::io::empty()), layout: Layout::Lines, lines_before: 0, shown, size_hint };
    let (head, mut raw) = sniff(raw, 4).map_err(|e| gz_error(&input.shown, e))?;
    // BSON by name, or by a NUL among the 4 bytes of its first document's length
    // (a text file never has one; its first byte alone could look like blank space).
    if bson_name || head.contains(&0) {
        input.layout = Layout::Bson;
        input.reader = Box::new(BufReader::with_capacity(BUFFER, raw));
        return Ok(input);
    }
    // A UTF-8 byte-order mark (some Windows tools write one) is not data.
    if head.starts_with(&[0xEF, 0xBB, 0xBF]) {
        raw.read_exact(&mut [0u8; 3]).map_err(|e| gz_error(&input.shown, e))?;
    }
    let mut reader: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(BUFFER, raw));
    // The first non-blank byte says the layout; blanks before it are consumed, their line breaks counted.
    loop {
        let buf = reader.fill_buf().map_err(|e| gz_error(&input.shown, e))?;
        if buf.is_empty() {
            return Err(input_error(format!("{} is empty", input.shown)));
        }
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => {
                input.lines_before += buf[..i].iter().filter(|&&b| b == b'\n').count() as u64;
                let first = buf[i];
                reader.consume(i);
                input.layout = if first == b'[' { Layout::JsonArray } else { Layout::Lines };
                input.reader = reader;
                return Ok(input);
            }
            None => {
                let n = buf.len();
                input.lines_before += buf.iter().filter(|&&b| b == b'\n').count() as u64;
                reader.consume(n);
            }
        }
    }
}

/// The first `n` bytes (fewer at the end of the input), and a reader that still
/// yields them: a pipe can be looked at without being read twice.
fn sniff(mut r: Box<dyn Read + Send>, n: usize) -> std::io::Result<(Vec<u8>, Box<dyn Read + Send>)> {
    let mut head = vec![0u8; n];
    let mut got = 0;
    while got < n {
        match r.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    head.truncate(got);
    let again: Box<dyn Read + Send> = Box::new(std::io::Cursor::new(head.clone()).chain(r));
    Ok((head, again))
}

fn gz_error(shown: &str, e: std::io::Error) -> anyhow::Error {
    input_error(format!("{shown}: cannot read (corrupt or truncated gzip?): {e}"))
}

impl Input {
    /// For a line file: call `f(block, lines_before)` on blocks of about 8 MB of
    /// whole lines, in order; `f` returns the number of the block's last line.
    /// The first lines within `max_bytes` (uncompressed), as text: a log's opening lines.
    pub(crate) fn head_lines(self, max_bytes: u64) -> Vec<String> {
        use std::io::Read;
        let mut buf = Vec::new();
        let _ = self.reader.take(max_bytes).read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).lines().map(str::to_string).collect()
    }

    pub(crate) fn for_each_line_block(self, mut f: impl FnMut(&[u8], u64) -> Result<u64>) -> Result<()> {
        self.for_each_owned_line_block(|buf, line| Ok((f(&buf, line)?, Some(buf))))
    }

    /// `for_each_line_block` handing each block over: `f(block, lines_before)` returns the
    /// number of the block's last line and a buffer done with (this one, or one it kept:
    /// the log reader merges a block while it reads the next, `queries::read_line_blocks`).
    pub(crate) fn for_each_owned_line_block(self, mut f: impl FnMut(Vec<u8>, u64) -> Result<(u64, Option<Vec<u8>>)>) -> Result<()> {
        use std::sync::mpsc::sync_channel;
        let name = Path::new(&self.shown).file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
        // Progress in uncompressed bytes; the file size is only a guess for gzip.
        let pb = crate::util::progress::progress_bytes(self.size_hint, &format!("reading {name}"));
        let (mut reader, shown, mut line) = (self.reader, self.shown, self.lines_before);
        // The next block is read on its own thread while `f` works on this one (and may keep
        // the one before); three buffers go round (a fresh buffer per block cost its pages
        // zeroed each time).
        let (give_back, free) = sync_channel::<Vec<u8>>(3);
        let (send_full, full) = sync_channel::<std::io::Result<Vec<u8>>>(1);
        for _ in 0..3 {
            let _ = give_back.send(Vec::with_capacity(BLOCK + (1 << 20)));
        }
        std::thread::scope(|s| {
            // Dropped when this closure returns, early too: a reader waiting for a buffer then stops.
            let give_back = give_back;
            s.spawn(move || {
                let mut carry: Vec<u8> = Vec::new();
                for mut buf in free {
                    buf.clear();
                    buf.append(&mut carry);
                    let read = read_whole_lines(&mut *reader, &mut buf, &mut carry);
                    let done = matches!(read, Ok(0) | Err(_));
                    if send_full.send(read.map(|_| buf)).is_err() || done {
                        return;
                    }
                }
            });
            for got in full {
                let buf = got.map_err(|e| gz_error(&shown, e))?;
                pb.inc(buf.len() as u64);
                if pb.position() > pb.length().unwrap_or(0) {
                    pb.set_length(pb.position());
                }
                if buf.is_empty() {
                    break;
                }
                let (last, done_with) = f(buf, line)?;
                line = last;
                // The reader may have stopped (end of input): then the buffer is not needed.
                if let Some(buf) = done_with {
                    let _ = give_back.send(buf);
                }
            }
            pb.finish_and_clear();
            Ok(())
        })
    }

    /// Call `f` for every record of a JSON array or BSON file; stops at the first
    /// error `f` returns. Returns the number of records.
    pub(crate) fn for_each_record(mut self, f: impl FnMut(Record) -> Result<()>) -> Result<u64> {
        match self.layout {
            Layout::Bson => read_bson(&mut *self.reader, &self.shown, f),
            Layout::JsonArray => read_json_array(&mut *self.reader, &self.shown, self.lines_before, f),
            Layout::Lines => Err(anyhow::anyhow!("internal: {} is a line file; read it with for_each_line_block", self.shown)),
        }
    }
}

/// Blocks of about this many bytes of whole lines are handed on at a time.
const BLOCK: usize = 8 << 20;

/// Fill `buf` (which holds the carried-over start of a line) with about `BLOCK` more bytes
/// up to a line end; what follows the last line end goes to `carry`. Reads on past
/// `BLOCK` while no line has ended. The bytes read (0 at the end of the input: `buf`
/// then holds the last line, if it had no line end).
fn read_whole_lines(r: &mut dyn Read, buf: &mut Vec<u8>, carry: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let start = buf.len();
        // Read into the buffer's spare room: `read_to_end` hands a file's `read` uninitialised
        // memory (std's `read_buf`), where a `resize` zeroed 8 MB a block (`memset` was 5% of
        // `analyze --queries`' profile). Bytes read before an error stay in `buf`.
        buf.reserve(BLOCK);
        let got = (&mut *r).take(BLOCK as u64).read_to_end(buf)?;
        total += got;
        if got == 0 {
            return Ok(total);
        }
        // Up to the last complete line; the rest is carried over.
        if let Some(cut) = memchr::memrchr(b'\n', &buf[start..]) {
            carry.extend_from_slice(&buf[start + cut + 1..]);
            buf.truncate(start + cut + 1);
            return Ok(total);
        }
    }
}

/// The non-blank lines of a block with their 1-based numbers, and the block's last line number.
pub(crate) fn numbered_lines(block: &[u8], lines_before: u64) -> (Vec<(u64, &[u8])>, u64) {
    let mut out = Vec::new();
    let mut n = lines_before;
    let mut start = 0;
    // memchr finds the line ends many bytes at a time (a byte-wise split was 6% of a log read).
    for end in memchr::memchr_iter(b'\n', block).chain(std::iter::once(block.len())) {
        n += 1;
        let t = block[start..end].trim_ascii();
        if !t.is_empty() {
            out.push((n, t));
        }
        start = end + 1;
    }
    (out, n.saturating_sub(1))
}

/// Read one byte, None at the end.
fn next_byte(r: &mut dyn BufRead) -> std::io::Result<Option<u8>> {
    let b = match r.fill_buf()? {
        [] => return Ok(None),
        buf => buf[0],
    };
    r.consume(1);
    Ok(Some(b))
}

/// A JSON array read element by element (never whole): each element's bytes are
/// found by a scan that tracks strings and brackets, then parsed on their own.
fn read_json_array(r: &mut dyn BufRead, shown: &str, lines_before: u64, mut f: impl FnMut(Record) -> Result<()>) -> Result<u64> {
    let mut line = lines_before + 1;
    let malformed = |line: u64, what: String| input_error(format!("{shown}: malformed JSON array at line {line}: {what}"));
    let read = |r: &mut dyn BufRead| next_byte(r).map_err(|e| gz_error(shown, e));
    // The opening '['.
    if read(r)? != Some(b'[') {
        return Err(malformed(line, "expected '['".into()));
    }
    let mut n = 0u64;
    let mut elem: Vec<u8> = Vec::new();
    loop {
        // Skip blanks before an element or the closing ']'.
        let mut c = loop {
            match read(r)? {
                Some(b'\n') => line += 1,
                Some(b) if b.is_ascii_whitespace() => {}
                other => break other,
            }
        };
        if c == Some(b']') && n == 0 {
            break;
        }
        // One element: up to a ',' or ']' outside strings and brackets.
        elem.clear();
        let elem_line = line;
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        let end = loop {
            let Some(b) = c else { return Err(malformed(line, "the array is not closed (missing ']')".into())) };
            if b == b'\n' {
                line += 1;
            }
            if in_string {
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                }
            } else {
                match b {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' if depth > 0 => depth -= 1,
                    b',' | b']' if depth == 0 => break b,
                    _ => {}
                }
            }
            elem.push(b);
            c = read(r)?;
        };
        n += 1;
        let v: serde_json::Value = serde_json::from_slice(&elem).map_err(|e| {
            if n == 1 {
                // Not JSON from its first element: a file that merely opens with '[' (TOML, INI).
                input_error(format!(
                    "{shown}: not a JSON array: it opens with '[' but its first element is not JSON (line {}: {e}); a TOML or INI file?",
                    elem_line + e.line() as u64 - 1
                ))
            } else {
                malformed(elem_line + e.line() as u64 - 1, e.to_string())
            }
        })?;
        f(Record::Json(v, n))?;
        if end == b']' {
            break;
        }
    }
    // Only blanks may follow.
    while let Some(b) = read(r)? {
        if !b.is_ascii_whitespace() {
            return Err(malformed(line, format!("unexpected '{}' after the array", b as char)));
        }
        if b == b'\n' {
            line += 1;
        }
    }
    Ok(n)
}

fn read_bson(r: &mut dyn BufRead, shown: &str, mut f: impl FnMut(Record) -> Result<()>) -> Result<u64> {
    read_bson_frames(r, shown, |buf, offset| {
        let len = buf.len();
        check_depth(shown, buf, offset)?;
        let doc = Document::from_reader(buf).map_err(|e| input_error(format!("{shown}: invalid BSON document at byte {offset}: {e}")))?;
        f(Record::Bson { doc, size: len })
    })
}

/// The decoder recurses: a document's nesting is measured first, without recursion.
pub(crate) fn check_depth(shown: &str, buf: &[u8], offset: u64) -> Result<()> {
    match depth(buf) {
        Ok(d) if d > MAX_DEPTH => Err(input_error(format!(
            "{shown}: the BSON document at byte {offset} is nested more than {MAX_DEPTH} levels deep (MongoDB's limit)"
        ))),
        Ok(_) => Ok(()),
        Err(e) => Err(input_error(format!("{shown}: invalid BSON document at byte {offset}: {e}"))),
    }
}

/// BSON documents of a mongodump file in blocks: `docs` holds each one's byte offset in the
/// file and its range in `buf`.
pub(crate) struct BsonBlock {
    pub(crate) buf: Vec<u8>,
    pub(crate) docs: Vec<(u64, std::ops::Range<usize>)>,
}

impl Input {
    /// For a BSON file: call `f` on blocks of about 8 MB of whole documents, in order.
    /// Returns the number of documents.
    pub(crate) fn for_each_bson_block(mut self, mut f: impl FnMut(&BsonBlock) -> Result<()>) -> Result<u64> {
        let mut block = BsonBlock { buf: Vec::with_capacity(BLOCK + (1 << 20)), docs: Vec::new() };
        let shown = self.shown.clone();
        let n = read_bson_frames(&mut *self.reader, &shown, |doc, offset| {
            let start = block.buf.len();
            block.buf.extend_from_slice(doc);
            block.docs.push((offset, start..block.buf.len()));
            if block.buf.len() >= BLOCK {
                f(&block)?;
                block.buf.clear();
                block.docs.clear();
            }
            Ok(())
        })?;
        if !block.docs.is_empty() {
            f(&block)?;
        }
        Ok(n)
    }
}

/// Concatenated BSON documents, framed by their lengths: `f(document bytes, byte offset)`.
fn read_bson_frames(r: &mut dyn Read, shown: &str, mut f: impl FnMut(&[u8], u64) -> Result<()>) -> Result<u64> {
    // One document at a time, in a buffer reused for the next.
    let mut buf = Vec::new();
    let mut offset = 0u64;
    let mut n = 0u64;
    loop {
        let mut len_bytes = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            let k = r.read(&mut len_bytes[got..]).map_err(|e| gz_error(shown, e))?;
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
        r.read_exact(&mut buf[4..])
            .map_err(|_| input_error(format!("{shown}: truncated BSON at byte {offset} (document of {len} bytes is cut)")))?;
        n += 1;
        f(&buf, offset)?;
        offset += len as u64;
    }
    if n == 0 {
        return Err(input_error(format!("{shown} is empty")));
    }
    Ok(n)
}

/// Parse a JSON line as an Extended JSON document.
pub(crate) fn parse_json_document(text: &str) -> std::result::Result<Document, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    json_to_document(v)
}

/// Like `parse_json_document`, but a `$`-object that is not valid Extended JSON
/// (logs print some values their own way) is kept as a plain sub-document.
pub(crate) fn parse_json_document_lenient(text: &str) -> std::result::Result<Document, String> {
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

pub(crate) fn json_to_document(v: serde_json::Value) -> std::result::Result<Document, String> {
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

#[cfg(test)]
mod tests {
    #[test]
    fn lines_are_numbered_as_a_split_at_newlines_numbers_them() {
        for block in [&b""[..], b"\n", b"a", b"a\n", b"\na\n\n b \r\n\n", b"x\ny\nz", b"  \n\t\n"] {
            let mut want = Vec::new();
            let mut n = 7u64;
            for l in block.split(|&b| b == b'\n') {
                n += 1;
                if !l.trim_ascii().is_empty() {
                    want.push((n, l.trim_ascii()));
                }
            }
            assert_eq!(super::numbered_lines(block, 7), (want, n - 1), "{block:?}");
        }
    }

    /// Yields its bytes a few at a time, as a pipe may.
    struct Trickle(std::io::Cursor<Vec<u8>>, usize);

    impl std::io::Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.1);
            self.0.read(&mut buf[..n])
        }
    }

    fn trickled(data: &[u8], step: usize) -> super::Input {
        super::from_reader(Box::new(Trickle(std::io::Cursor::new(data.to_vec()), step)), "t".into(), 0, false).unwrap()
    }

    #[test]
    fn blocks_hold_whole_lines_in_order_across_reads_and_long_lines() {
        // Lines of every length up to past a block, one longer than a block, no final newline.
        let mut data = Vec::new();
        for i in 0..3000usize {
            data.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, (i * 7919) % 9000));
            data.push(b'\n');
        }
        data.extend(std::iter::repeat_n(b'L', super::BLOCK + 12345));
        data.extend(b"\nlast");
        for step in [4096, 1 << 20, usize::MAX] {
            let mut got: Vec<(u64, Vec<u8>)> = Vec::new();
            trickled(&data, step)
                .for_each_line_block(|block, before| {
                    assert!(block.ends_with(b"\n") || block.ends_with(b"last"), "a block ends at a line end");
                    let (lines, last) = super::numbered_lines(block, before);
                    got.extend(lines.into_iter().map(|(n, l)| (n, l.to_vec())));
                    Ok(last)
                })
                .unwrap();
            let want: Vec<(u64, Vec<u8>)> =
                data.split(|&b| b == b'\n').enumerate().filter(|(_, l)| !l.is_empty()).map(|(i, l)| (i as u64 + 1, l.to_vec())).collect();
            assert!(got == want, "step {step}: {} lines, want {}", got.len(), want.len());
        }
    }

    #[test]
    fn an_error_in_a_block_stops_the_read_and_is_returned() {
        let data =
            vec![b'x'; 3 * super::BLOCK].into_iter().enumerate().map(|(i, b)| if i % 100 == 99 { b'\n' } else { b }).collect::<Vec<_>>();
        let mut calls = 0;
        let r = trickled(&data, usize::MAX).for_each_line_block(|_, _| {
            calls += 1;
            Err(anyhow::anyhow!("stop here"))
        });
        assert_eq!(r.unwrap_err().to_string(), "stop here");
        assert_eq!(calls, 1);
    }
}
