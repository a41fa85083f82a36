// The driver-matrix workload (tests/driver_matrix.rs), written with the Java driver: Debian's
// libmongodb-java 3.6.3 (scripts/drivers.sh compiles it once). Usage: java Workload URI DB
// Prints its counters as JSON: per collection, per command as the server receives it (an
// insert command is one operation, whatever its documents; an update or delete statement is
// one), and the transactions committed. Same steps as workload.py, with two differences the
// 3.6 driver forces: it has no countDocuments (added in 3.8), so `count(filter)` sends the
// count command; and it has no transactions (ClientSession.startTransaction came in 3.8,
// for wire version 7): the transactions are left out and "skipped" says so.
import com.mongodb.MongoClient;
import com.mongodb.MongoClientURI;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.bson.Document;

public class Workload {
    static final Map<String, Map<String, Integer>> counts = new TreeMap<>();

    static void count(MongoCollection<Document> c, String cmd) {
        counts.computeIfAbsent(c.getNamespace().getCollectionName(), k -> new TreeMap<>()).merge(cmd, 1, Integer::sum);
    }

    static Document doc(Object... kv) {
        Document d = new Document();
        for (int i = 0; i < kv.length; i += 2) d.append((String) kv[i], kv[i + 1]);
        return d;
    }

    public static void main(String[] args) {
        MongoClient client = new MongoClient(new MongoClientURI(args[0]));
        MongoDatabase db = client.getDatabase(args[1]);
        MongoCollection<Document> customers = db.getCollection("customers");
        MongoCollection<Document> orders = db.getCollection("orders");
        MongoCollection<Document> payments = db.getCollection("payments");

        // Inserts: one batched insert, fifty single ones, one more batch.
        List<Document> docs = new ArrayList<>();
        for (int i = 0; i < 100; i++) docs.add(doc("_id", i, "name", "c" + i, "tier", i % 3, "orders", 0));
        customers.insertMany(docs);
        count(customers, "insert");
        for (int i = 0; i < 50; i++) {
            orders.insertOne(doc("_id", i, "customerId", i % 100, "total", i, "status", "new"));
            count(orders, "insert");
        }
        docs = new ArrayList<>();
        for (int i = 0; i < 50; i++) docs.add(doc("_id", i, "orderId", i, "amount", i));
        payments.insertMany(docs);
        count(payments, "insert");

        // Finds: sorted and limited (one batch each); then batchSize 5 over 50 orders (getMores follow).
        for (int c = 0; c < 10; c++) {
            orders.find(doc("customerId", c)).sort(doc("total", -1)).limit(5).into(new ArrayList<>());
            count(orders, "find");
        }
        for (int k = 0; k < 3; k++) {
            int n = orders.find(doc("status", "new")).batchSize(5).into(new ArrayList<>()).size();
            if (n != 50) throw new IllegalStateException("expected 50 orders, got " + n);
            count(orders, "find");
        }

        // count (the command, twice over: 3.6's count(filter) sends it too), distinct, $group and $lookup.
        for (int c = 0; c < 5; c++) {
            db.runCommand(doc("count", "orders", "query", doc("customerId", c)));
            count(orders, "count");
        }
        for (int k = 0; k < 4; k++) {
            customers.count(doc("tier", 1));
            count(customers, "count");
        }
        for (int k = 0; k < 3; k++) {
            customers.distinct("tier", doc(), Integer.class).into(new ArrayList<>());
            count(customers, "distinct");
        }
        for (int k = 0; k < 2; k++) {
            orders.aggregate(Arrays.asList(doc("$match", doc("status", "new")),
                    doc("$group", doc("_id", "$customerId", "n", doc("$sum", 1))))).into(new ArrayList<>());
            count(orders, "aggregate");
            orders.aggregate(Arrays.asList(doc("$match", doc("customerId", 1)),
                    doc("$lookup", doc("from", "customers", "localField", "customerId", "foreignField", "_id", "as", "c"))))
                    .into(new ArrayList<>());
            count(orders, "aggregate");
        }

        // Updates: by _id, by another field, many, a replacement, an upsert.
        for (int c = 0; c < 10; c++) {
            customers.updateOne(doc("_id", c), doc("$set", doc("seen", true)));
            count(customers, "update");
        }
        for (int c = 0; c < 5; c++) {
            customers.updateOne(doc("name", "c" + c), doc("$inc", doc("visits", 1)));
            count(customers, "update");
        }
        customers.updateMany(doc("tier", 2), doc("$set", doc("gold", true)));
        count(customers, "update");
        orders.replaceOne(doc("_id", 1), doc("customerId", 1, "total", 100, "status", "replaced"));
        count(orders, "update");
        payments.updateOne(doc("_id", 1000), doc("$set", doc("amount", 0)), new UpdateOptions().upsert(true));
        count(payments, "update");

        // Deletes, findOneAndUpdate.
        payments.deleteOne(doc("_id", 0));
        count(payments, "delete");
        payments.deleteMany(doc("orderId", doc("$gte", 40)));
        count(payments, "delete");
        for (int k = 0; k < 3; k++) {
            orders.findOneAndUpdate(doc("_id", 2), doc("$inc", doc("total", 1)),
                    new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER));
            count(orders, "findAndModify");
        }

        // Bulk writes, ordered then unordered, each: one insert command of two documents, one
        // update statement, one delete statement (already grouped by kind, so both orders send the same).
        Object[][] bulks = {{orders, true, 100}, {payments, false, 200}};
        for (Object[] b : bulks) {
            @SuppressWarnings("unchecked")
            MongoCollection<Document> coll = (MongoCollection<Document>) b[0];
            int base = (Integer) b[2];
            List<WriteModel<Document>> ops = Arrays.asList(
                    new InsertOneModel<>(doc("_id", base, "customerId", 1)),
                    new InsertOneModel<>(doc("_id", base + 1, "customerId", 2)),
                    new UpdateOneModel<>(doc("_id", base), doc("$set", doc("bulk", true))),
                    new DeleteOneModel<>(doc("_id", base + 1)));
            coll.bulkWrite(ops, new BulkWriteOptions().ordered((Boolean) b[1]));
            count(coll, "insert");
            count(coll, "update");
            count(coll, "delete");
        }

        client.close();
        StringBuilder out = new StringBuilder("{\"driver\": \"java mongodb-driver 3.6.3\", \"database\": \"" + args[1]
                + "\", \"transactions\": 0, \"skipped\": \"transactions: the Java driver 3.6.3 has none"
                + " (ClientSession.startTransaction came in 3.8)\", \"collections\": {");
        String sep = "";
        for (Map.Entry<String, Map<String, Integer>> c : counts.entrySet()) {
            out.append(sep).append('"').append(c.getKey()).append("\": {");
            String s2 = "";
            for (Map.Entry<String, Integer> e : c.getValue().entrySet()) {
                out.append(s2).append('"').append(e.getKey()).append("\": ").append(e.getValue());
                s2 = ", ";
            }
            out.append('}');
            sep = ", ";
        }
        System.out.println(out.append("}}"));
    }
}
