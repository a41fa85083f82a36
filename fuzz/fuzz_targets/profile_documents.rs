//! `system.profile` and 7.0 sampled-query documents as BSON (a profiler dump),
//! through the same reader as `--queries`, then classified.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shardkey::model::ShardKey;
use shardkey::sources::queries::{read_queries_in, QueryLog};
use shardkey::sources::records::from_reader;
use shardkey::targeting::target_query;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = from_reader(Box::new(std::io::Cursor::new(data.to_vec())), "profile.bson".into(), 0, true) else { return };
    let mut log = QueryLog::default();
    if read_queries_in(input, &mut log).is_err() {
        return;
    }
    let key = ShardKey::parse("{a: 1, _id: 1}").unwrap();
    for q in log.queries.iter().take(200) {
        let _ = target_query(&key, q, None);
    }
});
