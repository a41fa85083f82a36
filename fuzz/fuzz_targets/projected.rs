//! The projected read of an Extended JSON line against the full parse: whenever
//! `projected::read` answers, its document and size are the full parse's, projected;
//! it never accepts a line the full parse refuses; `read_raw` holds the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shardkey::sources::projected::{full, read, read_raw, Projection};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for fields in [vec![], vec!["a".to_string(), "_id".to_string(), "b".to_string()]] {
        let p = Projection::new(fields);
        // The raw form (what the sample reads) holds what the decoded one holds; Debug text
        // compares NaN equal to itself.
        let raw = read_raw(text, &p).map(|(r, n)| (r.to_document().expect("written by bson"), n));
        assert_eq!(format!("{raw:?}"), format!("{:?}", read(text, &p)), "{text}");
        if let Some(fast) = read(text, &p) {
            match full(text, Some(&p)) {
                Ok(slow) => assert_eq!(fast, slow, "{text}"),
                Err(e) => panic!("accepted what the full parse refuses ({e}): {text}"),
            }
        }
    }
});
