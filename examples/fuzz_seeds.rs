//! Seed corpora for the fuzz targets (`scripts/fuzz.sh`), made from the bundled
//! fixtures and the team's real logs (`../shared/real-logs`):
//!
//! ```text
//! cargo run --example fuzz_seeds -- OUTDIR
//! ```
//!
//! Large files are cut into small pieces (a fuzzer mutates small inputs best).

use bson::Document;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

fn read_maybe_gz(path: &Path) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap_or_default();
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        let _ = flate2::read::MultiGzDecoder::new(&raw[..]).read_to_end(&mut out);
        out
    } else {
        raw
    }
}

/// Up to `max` pieces of `lines` consecutive lines each.
fn pieces(text: &[u8], lines: usize, max: usize) -> Vec<Vec<u8>> {
    let all: Vec<&[u8]> = text.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    all.chunks(lines).take(max).map(|c| c.join(&b'\n')).collect()
}

fn to_bson(lines: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in lines.split(|&b| b == b'\n') {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(l) else { continue };
        if let Ok(bson::Bson::Document(d)) = bson::Bson::try_from(v) {
            let _ = d.to_writer(&mut out);
        }
    }
    out
}

struct Corpus {
    dir: PathBuf,
    n: usize,
}

impl Corpus {
    fn new(root: &Path, name: &str) -> Corpus {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        Corpus { dir, n: 0 }
    }

    fn add(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.n += 1;
        std::fs::File::create(self.dir.join(format!("seed-{:04}", self.n))).unwrap().write_all(bytes).unwrap();
    }
}

fn main() {
    let out = PathBuf::from(std::env::args().nth(1).expect("usage: fuzz_seeds OUTDIR"));
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let fixtures = root.join("fixtures");
    let shared = root.join("../shared/real-logs");

    // Documents: NDJSON pieces, the same as a JSON array, gzipped.
    let events = std::fs::read(fixtures.join("events.ndjson")).unwrap();
    let mut docs = Corpus::new(&out, "documents");
    let mut bson_docs = Corpus::new(&out, "bson_documents");
    for p in pieces(&events, 20, 10) {
        docs.add(&p);
        let array = format!("[{}]", String::from_utf8_lossy(&p).replace('\n', ",\n"));
        docs.add(array.as_bytes());
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&p).unwrap();
        docs.add(&gz.finish().unwrap());
        bson_docs.add(&to_bson(&p));
    }
    // The projected read: single lines, plain and of every Extended JSON form.
    let mut lines = Corpus::new(&out, "projected");
    for p in pieces(&events, 1, 30) {
        lines.add(&p);
    }
    for l in [
        r#"{"_id":{"$oid":"6553f1000000000000000000"},"ts":{"$date":"2023-11-14T22:13:20.1Z"},"a":{"b":[1,{"c":null}],"n":-0},"b":"x\"y\u00e9"}"#,
        r#"{"a":{"$numberDecimal":"29796.46"},"b":{"$numberLong":"12"},"c":{"$numberInt":"-3"},"d":{"$date":{"$numberLong":"1"}},"e":1e3}"#,
        r#"{"a":{"$regularExpression":{"pattern":"a","options":"i"}},"b":{"$binary":{"base64":"AAEC","subType":"00"}},"c":{"$minKey":1}}"#,
        r#"{"a":12345678901234567890,"b":2147483648,"c":[[],{},[{}]],"d":{"$date":1700000000000},"e":{"$foo":1}}"#,
    ] {
        lines.add(l.as_bytes());
    }
    let nested: Document = bson::doc! {"a": {"b": [1, {"c": null}], "d": bson::Bson::MinKey}, "_id": bson::oid::ObjectId::new()};
    let mut b = Vec::new();
    nested.to_writer(&mut b).unwrap();
    bson_docs.add(&b);

    // Logs: the fixture log and every real log, in pieces.
    let mut logs = Corpus::new(&out, "log_lines");
    let mut profiles = Corpus::new(&out, "profile_documents");
    for p in pieces(&std::fs::read(fixtures.join("mongod.log")).unwrap(), 10, 20) {
        logs.add(&p);
    }
    for name in ["sampledQueries.ndjson", "sampledQueriesDiff.ndjson"] {
        for p in pieces(&std::fs::read(fixtures.join(name)).unwrap(), 10, 5) {
            logs.add(&p);
            profiles.add(&to_bson(&p));
        }
    }
    if let Ok(entries) = std::fs::read_dir(&shared) {
        let mut names: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        names.sort();
        for path in names.into_iter().filter(|p| p.extension().is_none_or(|e| e != "md")) {
            let text = read_maybe_gz(&path);
            for p in pieces(&text, 10, 15) {
                logs.add(&p);
                let doc_lines = to_bson(&p);
                if path.to_string_lossy().contains("profile") && !doc_lines.is_empty() {
                    profiles.add(&doc_lines);
                }
            }
        }
    }

    // The key and collation syntax, and policy files.
    let mut keys = Corpus::new(&out, "key_syntax");
    for k in [
        "{projectId: 1, _id: 1}",
        "{_id: \"hashed\"}",
        "{\"a.b\": 1, 'c': \"hashed\"}",
        "{locale: \"en\", strength: 2}",
        "{a: [1, 2.5e3, -4, null, true, {b: 'x\\'y'}]}",
    ] {
        keys.add(k.as_bytes());
    }
    let mut policies = Corpus::new(&out, "policy");
    policies.add(shardkey::policy::default_policy().as_bytes());
    policies.add(b"[defaults]\nmin_score = 60\nmax_top_value_percent = 25\n\n[[collection]]\nnamespace = \"a.b\"\nkey = '{a: 1}'\nforbid_monotonic = false\n");
    println!(
        "seeds in {}: documents {}, bson_documents {}, log_lines {}, profile_documents {}, key_syntax {}, policy {}",
        out.display(),
        docs.n,
        bson_docs.n,
        logs.n,
        profiles.n,
        keys.n,
        policies.n
    );
}
