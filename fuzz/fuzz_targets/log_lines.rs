//! mongod logs (any line format) through the same reader as `--queries`, then every
//! query classified for a range key and a hashed key (bounds, targeting, shapes); the
//! light read's hand scan held to its serde read on every line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shardkey::model::ShardKey;
use shardkey::sources::queries::{read_queries_in, QueryLog};
use shardkey::sources::records::from_reader;
use shardkey::targeting::{shapes::shape_of, target_query};

fuzz_target!(|data: &[u8]| {
    // The light read's hand scan agrees with its serde read on every line it takes.
    if let Ok(text) = std::str::from_utf8(data) {
        for line in text.lines() {
            assert!(shardkey::sources::queries::hand_scan_agrees(line.trim()), "{line}");
        }
    }
    let Ok(input) = from_reader(Box::new(std::io::Cursor::new(data.to_vec())), "fuzz.log".into(), 0, false) else { return };
    let mut log = QueryLog::default();
    if read_queries_in(input, &mut log).is_err() {
        return;
    }
    let keys = [ShardKey::parse("{a: 1, b: 1}").unwrap(), ShardKey::parse("{a: \"hashed\"}").unwrap()];
    let collation = bson::doc! {"locale": "en", "strength": 2};
    for q in log.queries.iter().take(200) {
        let _ = shape_of(&q.filter);
        for k in &keys {
            let _ = target_query(k, q, None);
            let _ = target_query(k, q, Some(&collation));
        }
    }
});
