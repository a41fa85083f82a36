//! The key and collation syntax users type (`--key`, `--collation`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(k) = shardkey::model::ShardKey::parse(text) {
        // A parsed key prints back to a key that parses to the same key.
        let again = shardkey::model::ShardKey::parse(&k.to_string()).expect("a printed key parses");
        assert_eq!(again, k);
    }
    let _ = shardkey::model::relaxed::parse(text);
});
