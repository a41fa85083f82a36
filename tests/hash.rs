//! hash64 against MongoDB's own hashed index keys, read back from a real mongod
//! with `hint` + `returnKey` (the published vectors are unit tests in src/bsonx/hash.rs).

mod common;

use common::{rt, Mode, Mongod};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, oid::ObjectId, Bson, DateTime, Document};
use mongodb::options::Hint;
use shardkey::bsonx::hash64;

#[test]
fn hash64_matches_real_hashed_index_keys() {
    let m = Mongod::start(Mode::Standalone);
    let client = m.client();
    let values: Vec<Bson> = vec![
        Bson::Int32(42),
        Bson::Int32(-7),
        Bson::Int64(1 << 40),
        Bson::Int64(-3),
        Bson::Double(3.75),
        Bson::Double(-2.5),
        Bson::Double(1e300),
        Bson::String("string to hash".into()),
        Bson::String("".into()),
        Bson::String("ünïcødé".into()),
        Bson::ObjectId(ObjectId::parse_str("665a648ba1b2c3d4e5000000").unwrap()),
        Bson::DateTime(DateTime::from_millis(1_717_200_011_624)),
        Bson::DateTime(DateTime::from_millis(-5_000)),
        Bson::Null,
        Bson::Boolean(true),
        Bson::Document(doc! {"a": 1, "b": "x", "c": {"d": 2.5}}),
        Bson::Document(doc! {}),
    ];
    let keys: Vec<(i32, i64)> = rt().block_on(async {
        let c = client.database("h").collection::<Document>("c");
        let docs: Vec<Document> = values.iter().enumerate().map(|(i, v)| doc! {"_id": i as i32, "v": v.clone()}).collect();
        c.insert_many(docs).await.unwrap();
        client
            .database("h")
            .run_command(doc! {"createIndexes": "c", "indexes": [{"key": {"v": "hashed", "_id": 1}, "name": "v_hashed"}]})
            .await
            .unwrap();
        let mut cur = c.find(doc! {}).hint(Hint::Name("v_hashed".into())).return_key(true).await.unwrap();
        let mut out = Vec::new();
        while let Some(d) = cur.try_next().await.unwrap() {
            out.push((d.get_i32("_id").unwrap(), d.get_i64("v").unwrap()));
        }
        out
    });
    assert_eq!(keys.len(), values.len());
    for (id, server_hash) in keys {
        let v = &values[id as usize];
        assert_eq!(hash64(v), server_hash, "hash64({v:?})");
    }
}
