//! Issue 47 as a DBA meets it on a real mongod: too little evidence gives no commands, and
//! what the report says of the evidence it rests on.

mod common;

use common::{assert_schema, json_ok, rt, shardkey, Mode, Mongod};
use mongodb::bson::{doc, Document};

/// 5,000 orders: `orderNumber` increasing, `customerId` over 400 customers.
fn seed_orders(m: &Mongod) {
    let c = m.client().database("shop").collection::<Document>("orders");
    rt().block_on(async {
        let docs: Vec<Document> = (0..5_000).map(|i| doc! {"orderNumber": i, "customerId": (i * 7919) % 400, "status": "paid"}).collect();
        c.insert_many(docs).await.unwrap();
    });
}

#[test]
fn ten_documents_give_no_commands() {
    let m = Mongod::start(Mode::Standalone);
    seed_orders(&m);
    let uri = m.uri();
    let base = ["analyze", "--uri", &uri, "--collection", "shop.orders", "--key", "{orderNumber: 1}", "--key", "{customerId: 1}"];
    let run = |more: &[&str]| shardkey(&[&base[..], more].concat());

    // The first screen says it, with the numbers and what to run; no command; exit 0.
    let o = run(&["--sample-size", "10", "--color", "never"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    // The first screen, its wrapped lines joined.
    let first_screen: String = text.lines().take(6).map(str::trim).collect::<Vec<_>>().join(" ");
    assert!(first_screen.contains("not enough evidence for an answer, so no commands"), "{text}");
    // A 10-document sample of 5,000 has a Bernoulli size around 10; the count said is the sample's own.
    assert!(first_screen.contains(" of 5,000 documents sampled, fewer than the 1,000 a verdict needs"), "{text}");
    assert!(first_screen.contains("--sample-size 1000 or more"), "{text}");
    // No command as the answer (a candidate's details may still say which index it would need).
    assert!(!text.contains("sh.shardCollection") && !first_screen.contains("createIndex"), "{text}");

    // The JSON: `evidence` with the numbers, no `recommendation`.
    let r = json_ok(&run(&["--sample-size", "10", "--format", "json", "-q"]));
    assert_schema("analyze", &r);
    assert!(r.get("recommendation").is_none(), "{}", r["recommendation"]);
    let e = &r["evidence"];
    assert_eq!((e["sufficient"].as_bool(), e["numDocsTotal"].as_u64(), e["minDocs"].as_u64()), (Some(false), Some(5_000), Some(1_000)));
    assert_eq!(e["numDocsSampled"], r["inputs"]["documents"]["numDocsRead"]);
    assert!(e["numDocsSampled"].as_u64().unwrap() < 1_000);

    // A gate does not pass on it: exit 1 (README "Exit codes").
    let o = run(&["--sample-size", "10", "--fail-under", "1", "-q"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not enough evidence to pass --fail-under"));

    // The default sample (the collection whole, 5,000 < 100,000) is enough: the commands.
    let r = json_ok(&run(&["--format", "json", "-q"]));
    assert!(r.get("evidence").is_none());
    assert!(r["recommendation"]["commands"].to_string().contains("sh.shardCollection"), "{}", r["recommendation"]);
}
