//! Extended JSON documents (NDJSON or a JSON array, maybe gzip) through the same
//! reader as `--docs`, then one sample pass over three candidate keys.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shardkey::model::ShardKey;
use shardkey::sample::Sample;
use shardkey::sources::docs::for_each_document_in;
use shardkey::sources::records::from_reader;

fuzz_target!(|data: &[u8]| {
    let keys: Vec<ShardKey> = ["{a: 1}", "{\"a.b\": 1, _id: 1}", "{_id: \"hashed\"}"].iter().map(|k| ShardKey::parse(k).unwrap()).collect();
    // A small budget: the dense pass, its spill and the sketches all run.
    let mut sample = Sample::with_budget(&keys, 1 << 16);
    let projection = shardkey::sources::projected::Projection::new(Sample::fields_read(&keys));
    let Ok(input) = from_reader(Box::new(std::io::Cursor::new(data.to_vec())), "fuzz".into(), 0, false) else { return };
    let _ = for_each_document_in(input, Some(&projection), |d, size| {
        sample.add(d, size);
        Ok(())
    });
    sample.finish();
});
