// The driver-matrix workload (tests/driver_matrix.rs), written with the Go driver
// (go.mongodb.org/mongo-driver; Debian's golang-mongodb-mongo-driver-dev, built in GOPATH mode
// by scripts/drivers.sh). Usage: workload-go URI DB
// Prints its counters as JSON: per collection, per command as the server receives it (an
// insert command is one operation, whatever its documents; an update or delete statement is
// one), and the transactions committed. Same steps as workload.py.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
	"go.mongodb.org/mongo-driver/version"
)

var counts = map[string]map[string]int{}

func count(c *mongo.Collection, cmd string) {
	if counts[c.Name()] == nil {
		counts[c.Name()] = map[string]int{}
	}
	counts[c.Name()][cmd]++
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func drain(cur *mongo.Cursor, err error) int {
	must(err)
	var all []bson.M
	must(cur.All(context.Background(), &all))
	return len(all)
}

func main() {
	ctx := context.Background()
	uri, dbname := os.Args[1], os.Args[2]
	client, err := mongo.Connect(ctx, options.Client().ApplyURI(uri))
	must(err)
	db := client.Database(dbname)
	customers, orders, payments := db.Collection("customers"), db.Collection("orders"), db.Collection("payments")

	// Inserts: one batched insert, fifty single ones, one more batch.
	var docs []interface{}
	for i := 0; i < 100; i++ {
		docs = append(docs, bson.D{{"_id", i}, {"name", fmt.Sprintf("c%d", i)}, {"tier", i % 3}, {"orders", 0}})
	}
	_, err = customers.InsertMany(ctx, docs)
	must(err)
	count(customers, "insert")
	for i := 0; i < 50; i++ {
		_, err = orders.InsertOne(ctx, bson.D{{"_id", i}, {"customerId", i % 100}, {"total", i}, {"status", "new"}})
		must(err)
		count(orders, "insert")
	}
	docs = nil
	for i := 0; i < 50; i++ {
		docs = append(docs, bson.D{{"_id", i}, {"orderId", i}, {"amount", i}})
	}
	_, err = payments.InsertMany(ctx, docs)
	must(err)
	count(payments, "insert")

	// Finds: sorted and limited (one batch each); then batchSize 5 over 50 orders (getMores follow).
	for c := 0; c < 10; c++ {
		drain(orders.Find(ctx, bson.D{{"customerId", c}}, options.Find().SetSort(bson.D{{"total", -1}}).SetLimit(5)))
		count(orders, "find")
	}
	for k := 0; k < 3; k++ {
		if n := drain(orders.Find(ctx, bson.D{{"status", "new"}}, options.Find().SetBatchSize(5))); n != 50 {
			must(fmt.Errorf("expected 50 orders, got %d", n))
		}
		count(orders, "find")
	}

	// count (the command), countDocuments (an aggregate), distinct, $group and $lookup.
	for c := 0; c < 5; c++ {
		must(db.RunCommand(ctx, bson.D{{"count", "orders"}, {"query", bson.D{{"customerId", c}}}}).Err())
		count(orders, "count")
	}
	for k := 0; k < 4; k++ {
		_, err = customers.CountDocuments(ctx, bson.D{{"tier", 1}})
		must(err)
		count(customers, "aggregate")
	}
	for k := 0; k < 3; k++ {
		_, err = customers.Distinct(ctx, "tier", bson.D{})
		must(err)
		count(customers, "distinct")
	}
	for k := 0; k < 2; k++ {
		drain(orders.Aggregate(ctx, mongo.Pipeline{
			{{"$match", bson.D{{"status", "new"}}}},
			{{"$group", bson.D{{"_id", "$customerId"}, {"n", bson.D{{"$sum", 1}}}}}},
		}))
		count(orders, "aggregate")
		drain(orders.Aggregate(ctx, mongo.Pipeline{
			{{"$match", bson.D{{"customerId", 1}}}},
			{{"$lookup", bson.D{{"from", "customers"}, {"localField", "customerId"}, {"foreignField", "_id"}, {"as", "c"}}}},
		}))
		count(orders, "aggregate")
	}

	// Updates: by _id, by another field, many, a replacement, an upsert.
	for c := 0; c < 10; c++ {
		_, err = customers.UpdateOne(ctx, bson.D{{"_id", c}}, bson.D{{"$set", bson.D{{"seen", true}}}})
		must(err)
		count(customers, "update")
	}
	for c := 0; c < 5; c++ {
		_, err = customers.UpdateOne(ctx, bson.D{{"name", fmt.Sprintf("c%d", c)}}, bson.D{{"$inc", bson.D{{"visits", 1}}}})
		must(err)
		count(customers, "update")
	}
	_, err = customers.UpdateMany(ctx, bson.D{{"tier", 2}}, bson.D{{"$set", bson.D{{"gold", true}}}})
	must(err)
	count(customers, "update")
	_, err = orders.ReplaceOne(ctx, bson.D{{"_id", 1}}, bson.D{{"customerId", 1}, {"total", 100}, {"status", "replaced"}})
	must(err)
	count(orders, "update")
	_, err = payments.UpdateOne(ctx, bson.D{{"_id", 1000}}, bson.D{{"$set", bson.D{{"amount", 0}}}}, options.Update().SetUpsert(true))
	must(err)
	count(payments, "update")

	// Deletes, findOneAndUpdate.
	_, err = payments.DeleteOne(ctx, bson.D{{"_id", 0}})
	must(err)
	count(payments, "delete")
	_, err = payments.DeleteMany(ctx, bson.D{{"orderId", bson.D{{"$gte", 40}}}})
	must(err)
	count(payments, "delete")
	for k := 0; k < 3; k++ {
		must(orders.FindOneAndUpdate(ctx, bson.D{{"_id", 2}}, bson.D{{"$inc", bson.D{{"total", 1}}}},
			options.FindOneAndUpdate().SetReturnDocument(options.After)).Err())
		count(orders, "findAndModify")
	}

	// Bulk writes, ordered then unordered, each: one insert command of two documents, one
	// update statement, one delete statement (already grouped by kind, so both orders send the same).
	for _, b := range []struct {
		coll    *mongo.Collection
		ordered bool
		base    int
	}{{orders, true, 100}, {payments, false, 200}} {
		_, err = b.coll.BulkWrite(ctx, []mongo.WriteModel{
			mongo.NewInsertOneModel().SetDocument(bson.D{{"_id", b.base}, {"customerId", 1}}),
			mongo.NewInsertOneModel().SetDocument(bson.D{{"_id", b.base + 1}, {"customerId", 2}}),
			mongo.NewUpdateOneModel().SetFilter(bson.D{{"_id", b.base}}).SetUpdate(bson.D{{"$set", bson.D{{"bulk", true}}}}),
			mongo.NewDeleteOneModel().SetFilter(bson.D{{"_id", b.base + 1}}),
		}, options.BulkWrite().SetOrdered(b.ordered))
		must(err)
		count(b.coll, "insert")
		count(b.coll, "update")
		count(b.coll, "delete")
	}

	// 200 transactions over three collections: read a customer's order, add an order and its
	// payment, bump the customer.
	transactions := 0
	session, err := client.StartSession()
	must(err)
	for t := 0; t < 200; t++ {
		c := t % 100
		_, err = session.WithTransaction(ctx, func(sc mongo.SessionContext) (interface{}, error) {
			// No order yet for customers 50..99 in the first round: not an error here.
			if err := orders.FindOne(sc, bson.D{{"customerId", c}}).Err(); err != nil && err != mongo.ErrNoDocuments {
				return nil, err
			}
			count(orders, "find")
			if _, err := orders.InsertOne(sc, bson.D{{"_id", 10000 + t}, {"customerId", c}, {"total", t}}); err != nil {
				return nil, err
			}
			count(orders, "insert")
			if _, err := customers.UpdateOne(sc, bson.D{{"_id", c}}, bson.D{{"$inc", bson.D{{"orders", 1}}}}); err != nil {
				return nil, err
			}
			count(customers, "update")
			if _, err := payments.InsertOne(sc, bson.D{{"_id", 10000 + t}, {"orderId", 10000 + t}, {"amount", t}}); err != nil {
				return nil, err
			}
			count(payments, "insert")
			return nil, nil
		})
		must(err)
		transactions++
	}
	session.EndSession(ctx)
	must(client.Disconnect(ctx))
	out, _ := json.Marshal(map[string]interface{}{
		"driver": "go mongo-driver " + version.Driver, "database": dbname, "collections": counts, "transactions": transactions,
	})
	fmt.Println(string(out))
}
