//! The driver-matrix workload (tests/driver_matrix.rs), written with the Rust `mongodb` crate
//! (the project's own dependency, so it runs inside the test and costs no extra build).
//! Returns its counters in the JSON the other programs print: per collection, per command as
//! the server receives it (an insert command is one operation, whatever its documents; an
//! update or delete statement is one), and the transactions committed. Same steps as
//! workload.py, except the bulk writes: the 3.x crate's `Client::bulk_write` sends the
//! `bulkWrite` command, which needs MongoDB 8.0, so against 6.0 the bulk part is what the
//! crate offers there: `insert_many` ordered and unordered, then the statement by itself.

use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use mongodb::options::ReturnDocument;
use mongodb::{Client, Collection};
use std::collections::BTreeMap;

#[derive(Default)]
struct Counts(BTreeMap<String, BTreeMap<String, u64>>);

impl Counts {
    fn add(&mut self, coll: &Collection<Document>, cmd: &str) {
        *self.0.entry(coll.name().to_string()).or_default().entry(cmd.to_string()).or_default() += 1;
    }
}

pub async fn run(uri: &str, dbname: &str) -> mongodb::error::Result<serde_json::Value> {
    let client = Client::with_uri_str(uri).await?;
    let db = client.database(dbname);
    let customers = db.collection::<Document>("customers");
    let orders = db.collection::<Document>("orders");
    let payments = db.collection::<Document>("payments");
    let mut n = Counts::default();

    // Inserts: one batched insert, fifty single ones, one more batch.
    customers.insert_many((0..100i32).map(|i| doc! {"_id": i, "name": format!("c{i}"), "tier": i % 3, "orders": 0})).await?;
    n.add(&customers, "insert");
    for i in 0..50i32 {
        orders.insert_one(doc! {"_id": i, "customerId": i % 100, "total": i, "status": "new"}).await?;
        n.add(&orders, "insert");
    }
    payments.insert_many((0..50i32).map(|i| doc! {"_id": i, "orderId": i, "amount": i})).await?;
    n.add(&payments, "insert");

    // Finds: sorted and limited (one batch each); then batchSize 5 over 50 orders (getMores follow).
    for c in 0..10i32 {
        let _: Vec<Document> = orders.find(doc! {"customerId": c}).sort(doc! {"total": -1}).limit(5).await?.try_collect().await?;
        n.add(&orders, "find");
    }
    for _ in 0..3 {
        let all: Vec<Document> = orders.find(doc! {"status": "new"}).batch_size(5).await?.try_collect().await?;
        assert_eq!(all.len(), 50);
        n.add(&orders, "find");
    }

    // count (the command), countDocuments (an aggregate), distinct, $group and $lookup.
    for c in 0..5i32 {
        db.run_command(doc! {"count": "orders", "query": {"customerId": c}}).await?;
        n.add(&orders, "count");
    }
    for _ in 0..4 {
        customers.count_documents(doc! {"tier": 1}).await?;
        n.add(&customers, "aggregate");
    }
    for _ in 0..3 {
        customers.distinct("tier", doc! {}).await?;
        n.add(&customers, "distinct");
    }
    for _ in 0..2 {
        let group = [doc! {"$match": {"status": "new"}}, doc! {"$group": {"_id": "$customerId", "n": {"$sum": 1}}}];
        let _: Vec<Document> = orders.aggregate(group).await?.try_collect().await?;
        n.add(&orders, "aggregate");
        let lookup = [
            doc! {"$match": {"customerId": 1}},
            doc! {"$lookup": {"from": "customers", "localField": "customerId", "foreignField": "_id", "as": "c"}},
        ];
        let _: Vec<Document> = orders.aggregate(lookup).await?.try_collect().await?;
        n.add(&orders, "aggregate");
    }

    // Updates: by _id, by another field, many, a replacement, an upsert.
    for c in 0..10i32 {
        customers.update_one(doc! {"_id": c}, doc! {"$set": {"seen": true}}).await?;
        n.add(&customers, "update");
    }
    for c in 0..5i32 {
        customers.update_one(doc! {"name": format!("c{c}")}, doc! {"$inc": {"visits": 1}}).await?;
        n.add(&customers, "update");
    }
    customers.update_many(doc! {"tier": 2}, doc! {"$set": {"gold": true}}).await?;
    n.add(&customers, "update");
    orders.replace_one(doc! {"_id": 1}, doc! {"customerId": 1, "total": 100, "status": "replaced"}).await?;
    n.add(&orders, "update");
    payments.update_one(doc! {"_id": 1000}, doc! {"$set": {"amount": 0}}).upsert(true).await?;
    n.add(&payments, "update");

    // Deletes, findOneAndUpdate.
    payments.delete_one(doc! {"_id": 0}).await?;
    n.add(&payments, "delete");
    payments.delete_many(doc! {"orderId": {"$gte": 40}}).await?;
    n.add(&payments, "delete");
    for _ in 0..3 {
        orders.find_one_and_update(doc! {"_id": 2}, doc! {"$inc": {"total": 1}}).return_document(ReturnDocument::After).await?;
        n.add(&orders, "findAndModify");
    }

    // "Bulk writes", ordered then unordered (see the head of this file): one insert command of
    // two documents, one update statement, one delete statement.
    for (coll, ordered, base) in [(&orders, true, 100i32), (&payments, false, 200)] {
        coll.insert_many([doc! {"_id": base, "customerId": 1}, doc! {"_id": base + 1, "customerId": 2}]).ordered(ordered).await?;
        n.add(coll, "insert");
        coll.update_one(doc! {"_id": base}, doc! {"$set": {"bulk": true}}).await?;
        n.add(coll, "update");
        coll.delete_one(doc! {"_id": base + 1}).await?;
        n.add(coll, "delete");
    }

    // 200 transactions over three collections: read a customer's order, add an order and its
    // payment, bump the customer (the crate's withTransaction: `and_run2`).
    let mut transactions = 0u64;
    let mut session = client.start_session().await?;
    for t in 0..200i32 {
        let c = t % 100;
        session
            .start_transaction()
            .and_run2(async |s| {
                orders.find_one(doc! {"customerId": c}).session(&mut *s).await?;
                n.add(&orders, "find");
                orders.insert_one(doc! {"_id": 10_000 + t, "customerId": c, "total": t}).session(&mut *s).await?;
                n.add(&orders, "insert");
                customers.update_one(doc! {"_id": c}, doc! {"$inc": {"orders": 1}}).session(&mut *s).await?;
                n.add(&customers, "update");
                payments.insert_one(doc! {"_id": 10_000 + t, "orderId": 10_000 + t, "amount": t}).session(&mut *s).await?;
                n.add(&payments, "insert");
                Ok(())
            })
            .await?;
        transactions += 1;
    }
    Ok(serde_json::json!({
        "driver": "rust mongodb 3.x (the project's dependency)",
        "database": dbname,
        "collections": n.0,
        "transactions": transactions,
    }))
}
