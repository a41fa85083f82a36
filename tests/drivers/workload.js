// The driver-matrix workload (tests/driver_matrix.rs), written with the Node.js `mongodb` driver.
// Usage: node workload.js URI DB   (NODE_PATH holds node_modules with `mongodb`)
// Prints its counters as JSON: per collection, per command as the server receives it (an
// insert command is one operation, whatever its documents; an update or delete statement is
// one), and the transactions committed. Same steps as workload.py.
const { MongoClient, ReturnDocument } = require("mongodb");

async function main() {
  const [uri, dbname] = process.argv.slice(2);
  const client = new MongoClient(uri);
  const db = client.db(dbname);
  const customers = db.collection("customers");
  const orders = db.collection("orders");
  const payments = db.collection("payments");
  const counts = {};
  const count = (coll, cmd, n = 1) => {
    const c = (counts[coll.collectionName] ??= {});
    c[cmd] = (c[cmd] ?? 0) + n;
  };

  // Inserts: one batched insert, fifty single ones, one more batch.
  await customers.insertMany([...Array(100).keys()].map((i) => ({ _id: i, name: `c${i}`, tier: i % 3, orders: 0 })));
  count(customers, "insert");
  for (let i = 0; i < 50; i++) {
    await orders.insertOne({ _id: i, customerId: i % 100, total: i, status: "new" });
    count(orders, "insert");
  }
  await payments.insertMany([...Array(50).keys()].map((i) => ({ _id: i, orderId: i, amount: i })));
  count(payments, "insert");

  // Finds: sorted and limited (one batch each); then batchSize 5 over 50 orders (getMores follow).
  for (let c = 0; c < 10; c++) {
    await orders.find({ customerId: c }).sort({ total: -1 }).limit(5).toArray();
    count(orders, "find");
  }
  for (let k = 0; k < 3; k++) {
    const all = await orders.find({ status: "new" }).batchSize(5).toArray();
    if (all.length !== 50) throw new Error(`expected 50 orders, got ${all.length}`);
    count(orders, "find");
  }

  // count (the command), countDocuments (an aggregate), distinct, $group and $lookup.
  for (let c = 0; c < 5; c++) {
    await db.command({ count: "orders", query: { customerId: c } });
    count(orders, "count");
  }
  for (let k = 0; k < 4; k++) {
    await customers.countDocuments({ tier: 1 });
    count(customers, "aggregate");
  }
  for (let k = 0; k < 3; k++) {
    await customers.distinct("tier", {});
    count(customers, "distinct");
  }
  for (let k = 0; k < 2; k++) {
    await orders.aggregate([{ $match: { status: "new" } }, { $group: { _id: "$customerId", n: { $sum: 1 } } }]).toArray();
    count(orders, "aggregate");
    await orders
      .aggregate([
        { $match: { customerId: 1 } },
        { $lookup: { from: "customers", localField: "customerId", foreignField: "_id", as: "c" } },
      ])
      .toArray();
    count(orders, "aggregate");
  }

  // Updates: by _id, by another field, many, a replacement, an upsert.
  for (let c = 0; c < 10; c++) {
    await customers.updateOne({ _id: c }, { $set: { seen: true } });
    count(customers, "update");
  }
  for (let c = 0; c < 5; c++) {
    await customers.updateOne({ name: `c${c}` }, { $inc: { visits: 1 } });
    count(customers, "update");
  }
  await customers.updateMany({ tier: 2 }, { $set: { gold: true } });
  count(customers, "update");
  await orders.replaceOne({ _id: 1 }, { customerId: 1, total: 100, status: "replaced" });
  count(orders, "update");
  await payments.updateOne({ _id: 1000 }, { $set: { amount: 0 } }, { upsert: true });
  count(payments, "update");

  // Deletes, findOneAndUpdate.
  await payments.deleteOne({ _id: 0 });
  count(payments, "delete");
  await payments.deleteMany({ orderId: { $gte: 40 } });
  count(payments, "delete");
  for (let k = 0; k < 3; k++) {
    await orders.findOneAndUpdate({ _id: 2 }, { $inc: { total: 1 } }, { returnDocument: ReturnDocument.AFTER });
    count(orders, "findAndModify");
  }

  // Bulk writes, ordered then unordered, each: one insert command of two documents, one
  // update statement, one delete statement (already grouped by kind, so both orders send the same).
  for (const [coll, ordered, base] of [
    [orders, true, 100],
    [payments, false, 200],
  ]) {
    await coll.bulkWrite(
      [
        { insertOne: { document: { _id: base, customerId: 1 } } },
        { insertOne: { document: { _id: base + 1, customerId: 2 } } },
        { updateOne: { filter: { _id: base }, update: { $set: { bulk: true } } } },
        { deleteOne: { filter: { _id: base + 1 } } },
      ],
      { ordered },
    );
    count(coll, "insert");
    count(coll, "update");
    count(coll, "delete");
  }

  // 200 transactions over three collections: read a customer's order, add an order and its
  // payment, bump the customer.
  let transactions = 0;
  const session = client.startSession();
  for (let t = 0; t < 200; t++) {
    const c = t % 100;
    await session.withTransaction(async () => {
      await orders.findOne({ customerId: c }, { session });
      count(orders, "find");
      await orders.insertOne({ _id: 10000 + t, customerId: c, total: t }, { session });
      count(orders, "insert");
      await customers.updateOne({ _id: c }, { $inc: { orders: 1 } }, { session });
      count(customers, "update");
      await payments.insertOne({ _id: 10000 + t, orderId: 10000 + t, amount: t }, { session });
      count(payments, "insert");
    });
    transactions++;
  }
  await session.endSession();
  const version = require("mongodb/package.json").version;
  console.log(JSON.stringify({ driver: `node mongodb ${version}`, database: dbname, collections: counts, transactions }));
  await client.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
