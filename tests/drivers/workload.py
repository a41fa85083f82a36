"""The driver-matrix workload (tests/driver_matrix.rs), written with pymongo.

Usage: python3 workload.py URI DB
Prints its counters as JSON: per collection, per command as the server receives it (an
insert command is one operation, whatever its documents; an update or delete statement is
one), and the transactions committed. The same workload is written for Node.js, Rust, Java
and Go beside this file; tests/drivers/README.md says what it does, step by step.
"""

import json
import sys
from collections import defaultdict

import pymongo
from pymongo import DeleteOne, InsertOne, ReturnDocument, UpdateOne

uri, dbname = sys.argv[1], sys.argv[2]
client = pymongo.MongoClient(uri)
db = client[dbname]
customers, orders, payments = db.customers, db.orders, db.payments
counts = defaultdict(lambda: defaultdict(int))


def count(coll, cmd, n=1):
    counts[coll.name][cmd] += n


# Inserts: one batched insert, fifty single ones, one more batch.
customers.insert_many([{"_id": i, "name": f"c{i}", "tier": i % 3, "orders": 0} for i in range(100)])
count(customers, "insert")
for i in range(50):
    orders.insert_one({"_id": i, "customerId": i % 100, "total": i, "status": "new"})
    count(orders, "insert")
payments.insert_many([{"_id": i, "orderId": i, "amount": i} for i in range(50)])
count(payments, "insert")

# Finds: sorted and limited (one batch each); then batchSize 5 over 50 orders (getMores follow).
for c in range(10):
    list(orders.find({"customerId": c}).sort("total", -1).limit(5))
    count(orders, "find")
for _ in range(3):
    assert len(list(orders.find({"status": "new"}).batch_size(5))) == 50
    count(orders, "find")

# count (the command), countDocuments (an aggregate), distinct, $group and $lookup.
for c in range(5):
    db.command({"count": "orders", "query": {"customerId": c}})
    count(orders, "count")
for _ in range(4):
    customers.count_documents({"tier": 1})
    count(customers, "aggregate")
for _ in range(3):
    customers.distinct("tier", {})
    count(customers, "distinct")
for _ in range(2):
    list(orders.aggregate([{"$match": {"status": "new"}}, {"$group": {"_id": "$customerId", "n": {"$sum": 1}}}]))
    count(orders, "aggregate")
    list(orders.aggregate([{"$match": {"customerId": 1}},
                           {"$lookup": {"from": "customers", "localField": "customerId", "foreignField": "_id", "as": "c"}}]))
    count(orders, "aggregate")

# Updates: by _id, by another field, many, a replacement, an upsert.
for c in range(10):
    customers.update_one({"_id": c}, {"$set": {"seen": True}})
    count(customers, "update")
for c in range(5):
    customers.update_one({"name": f"c{c}"}, {"$inc": {"visits": 1}})
    count(customers, "update")
customers.update_many({"tier": 2}, {"$set": {"gold": True}})
count(customers, "update")
orders.replace_one({"_id": 1}, {"customerId": 1, "total": 100, "status": "replaced"})
count(orders, "update")
payments.update_one({"_id": 1000}, {"$set": {"amount": 0}}, upsert=True)
count(payments, "update")

# Deletes, findOneAndUpdate.
payments.delete_one({"_id": 0})
count(payments, "delete")
payments.delete_many({"orderId": {"$gte": 40}})
count(payments, "delete")
for _ in range(3):
    orders.find_one_and_update({"_id": 2}, {"$inc": {"total": 1}}, return_document=ReturnDocument.AFTER)
    count(orders, "findAndModify")

# Bulk writes, ordered then unordered, each: one insert command of two documents, one
# update statement, one delete statement (already grouped by kind, so both orders send the same).
for coll, ordered, base in ((orders, True, 100), (payments, False, 200)):
    coll.bulk_write([InsertOne({"_id": base, "customerId": 1}), InsertOne({"_id": base + 1, "customerId": 2}),
                     UpdateOne({"_id": base}, {"$set": {"bulk": True}}), DeleteOne({"_id": base + 1})], ordered=ordered)
    count(coll, "insert")
    count(coll, "update")
    count(coll, "delete")

# 200 transactions over three collections: read a customer's order, add an order and its
# payment, bump the customer.
transactions = 0
with client.start_session() as session:
    for t in range(200):
        c = t % 100

        def txn(s, t=t, c=c):
            orders.find_one({"customerId": c}, session=s)
            count(orders, "find")
            orders.insert_one({"_id": 10000 + t, "customerId": c, "total": t}, session=s)
            count(orders, "insert")
            customers.update_one({"_id": c}, {"$inc": {"orders": 1}}, session=s)
            count(customers, "update")
            payments.insert_one({"_id": 10000 + t, "orderId": 10000 + t, "amount": t}, session=s)
            count(payments, "insert")

        session.with_transaction(txn)
        transactions += 1

print(json.dumps({"driver": "pymongo " + pymongo.version, "database": dbname,
                  "collections": {k: dict(v) for k, v in counts.items()}, "transactions": transactions}))
