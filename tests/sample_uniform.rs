//! The live document sample is uniform over the collection as storage holds it
//! (issue 47): recent inserts, some not yet checkpointed, get their share.

mod common;

use common::{json_ok, rt, shardkey, Mode, Mongod};
use mongodb::bson::{doc, Document};

#[test]
fn recent_inserts_get_their_share_of_the_sample() {
    let m = Mongod::start(Mode::Standalone);
    let client = m.client();
    let c = client.database("u").collection::<Document>("c");
    let (old, new) = rt().block_on(async {
        for b in 0..50 {
            let docs: Vec<Document> = (0..20_000).map(|i| doc! {"age": "old", "n": b * 20_000 + i}).collect();
            c.insert_many(docs).await.unwrap();
        }
        // Checkpoint the old documents; the new ones stay in WiredTiger's in-memory pages
        // (the default checkpoint is every 60 s), where a random cursor treats them differently.
        client.database("admin").run_command(doc! {"fsync": 1}).await.unwrap();
        for b in 0..5 {
            let docs: Vec<Document> = (0..18_000).map(|i| doc! {"age": "new", "n": b * 18_000 + i}).collect();
            c.insert_many(docs).await.unwrap();
        }
        // The expected shares come from the server's own counts.
        (c.count_documents(doc! {"age": "old"}).await.unwrap(), c.count_documents(doc! {"age": "new"}).await.unwrap())
    });
    let total = (old + new) as f64;
    let p = new as f64 / total;
    // 30,000 of 1.09M is under 5%: where `$sample` would have used a random cursor.
    let uri = m.uri();
    let sample = || {
        json_ok(&shardkey(&[
            "analyze",
            "--format",
            "json",
            "-q",
            "--uri",
            &uri,
            "--collection",
            "u.c",
            "--key",
            "{age: 1}",
            "--sample-size",
            "30000",
        ]))
    };
    let r = sample();
    // The same data gives the same sample (from 5.0 the scan keeps documents by their `_id`'s
    // hash): a second run reads the very same documents.
    let again = sample();
    assert_eq!(again["candidates"][0]["keyCharacteristics"], r["candidates"][0]["keyCharacteristics"]);
    let k = &r["candidates"][0]["keyCharacteristics"];
    let n = k["numDocsSampled"].as_f64().unwrap();
    // An expected size of 30,000 (Bernoulli, rate 30,000/count): 4 sigma of the binomial.
    let rate = 30_000.0 / total;
    assert!((n - 30_000.0).abs() <= 4.0 * (total * rate * (1.0 - rate)).sqrt(), "sample size {n}");
    let seen_new = k["mostCommonValues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["value"]["age"] == "new")
        .map_or(0.0, |v| v["frequency"].as_f64().unwrap());
    let sigma = (n * p * (1.0 - p)).sqrt();
    assert!(
        (seen_new - n * p).abs() <= 4.0 * sigma,
        "new documents: {seen_new} sampled of {n}, expected {:.0} ± {:.0} (4σ)",
        n * p,
        4.0 * sigma
    );
}
