"""The sample a DBA can trust, at size (`scripts/bench.sh sample`): a 2-member replica set of
real mongod 6.0.5, an orders collection of DOCS documents (3,000,000 by default) whose newest
8.5% differ (other statuses, inserted after a checkpoint, so some sit only in memory), customers
Zipf(0.8) over CUSTOMERS values with three heavy ones (6%, 3%, 2%). shardkey's default run
(read from the secondary) is set beside the server's own `$group` counts on the primary:
every share within 4 sigma of the binomial at the sample's size, the server's distinct count
inside the reported range. Prints a table and writes JSON to the path given (or
target/bench-sample.json).

Usage: bench_sample.py MONGOD [OUT]   (PYTHONPATH holds pymongo: scripts/mongod.sh pymongo)
"""
import itertools
import json
import math
import os
import random
import socket
import subprocess
import sys
import tempfile
import time

from pymongo import MongoClient

BIN = os.environ.get("SHARDKEY_BIN", "target/release/shardkey")
DOCS = int(os.environ.get("DOCS", "3000000"))
CUSTOMERS = int(os.environ.get("CUSTOMERS", "300000"))
RECENT = 0.085
HEAVY = [("c-heavy-1", 0.06), ("c-heavy-2", 0.03), ("c-heavy-3", 0.02)]
OLD_STATUS = [("delivered", 0.85), ("shipped", 0.10), ("cancelled", 0.05)]
NEW_STATUS = [("paid", 0.40), ("shipped", 0.40), ("delivered", 0.20)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_members(mongod, root):
    members = []
    for i in range(2):
        port, path = free_port(), os.path.join(root, f"m{i}")
        os.makedirs(path)
        subprocess.run(
            [mongod, "--replSet", "bench", "--port", str(port), "--bind_ip", "127.0.0.1", "--dbpath", path,
             "--logpath", os.path.join(path, "mongod.log"), "--fork", "--wiredTigerCacheSizeGB", "1"],
            check=True, stdout=subprocess.DEVNULL)
        members.append(port)
    return members


def stop_members(members):
    for port in members:
        try:
            MongoClient(f"mongodb://127.0.0.1:{port}/?directConnection=true").admin.command("shutdown", force=True)
        except Exception:
            pass  # shutdown closes the connection it arrives on


def wait_for(cond, what, secs=300):
    end = time.time() + secs
    while time.time() < end:
        if cond():
            return
        time.sleep(1)
    raise SystemExit(f"timed out waiting for {what}")


def weighted(pairs):
    return [v for v, _ in pairs], list(itertools.accumulate(w for _, w in pairs))


def load(coll):
    """Old documents, a checkpoint, then the recent ones. Returns the load time."""
    rng = random.Random(47)
    # Zipf(0.8) over the ordinary customers; the heavy three take their shares first.
    ranks, zcum = weighted([(f"c-{i:07d}", 1.0 / (i + 1) ** 0.8) for i in range(CUSTOMERS)])

    def customer():
        r = rng.random()
        for name, w in HEAVY:
            if r < w:
                return name
            r -= w
        return rng.choices(ranks, cum_weights=zcum)[0]

    def batch(start, n, statuses):
        values, cum = weighted(statuses)
        return [{"_id": start + i, "customerId": customer(), "status": rng.choices(values, cum_weights=cum)[0],
                 "total": rng.randint(5, 900)} for i in range(n)]

    t0 = time.time()
    old = DOCS - int(DOCS * RECENT)
    for s in range(0, old, 20000):
        coll.insert_many(batch(s, min(20000, old - s), OLD_STATUS), ordered=False)
    coll.database.client.admin.command("fsync")
    for s in range(old, DOCS, 20000):
        coll.insert_many(batch(s, min(20000, DOCS - s), NEW_STATUS), ordered=False)
    return time.time() - t0


def server_figures(coll):
    status = {d["_id"]: d["n"] for d in coll.aggregate([{"$group": {"_id": "$status", "n": {"$sum": 1}}}])}
    top = list(coll.aggregate([{"$group": {"_id": "$customerId", "n": {"$sum": 1}}}, {"$sort": {"n": -1}}, {"$limit": 3}],
                              allowDiskUse=True))
    distinct = next(coll.aggregate([{"$group": {"_id": "$customerId"}}, {"$count": "n"}], allowDiskUse=True))["n"]
    return {"status": status, "top": {d["_id"]: d["n"] for d in top}, "distinct": distinct}


def shardkey(uri):
    t0 = time.time()
    out = subprocess.run([BIN, "analyze", "--uri", uri, "--collection", "bench.orders", "--key", "{status: 1}",
                          "--key", "{customerId: 1}", "--format", "json", "-q"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout), time.time() - t0


def main():
    mongod = sys.argv[1]
    out_path = sys.argv[2] if len(sys.argv) > 2 else "target/bench-sample.json"
    root = tempfile.mkdtemp(prefix="shardkey-bench-sample-")
    members = start_members(mongod, root)
    try:
        first = MongoClient(f"mongodb://127.0.0.1:{members[0]}/?directConnection=true")
        first.admin.command("replSetInitiate", {"_id": "bench", "members": [
            {"_id": i, "host": f"127.0.0.1:{p}", "priority": 1 if i == 0 else 0} for i, p in enumerate(members)]})
        wait_for(lambda: first.admin.command("hello").get("isWritablePrimary"), "a primary")
        hosts = ",".join(f"127.0.0.1:{p}" for p in members)
        uri = f"mongodb://{hosts}/?replicaSet=bench"
        client = MongoClient(uri, w="majority")
        coll = client.bench.orders
        print(f"loading {DOCS:,} documents ({RECENT:.1%} recent) ...", file=sys.stderr)
        load_secs = load(coll)
        second = MongoClient(f"mongodb://127.0.0.1:{members[1]}/?directConnection=true")
        wait_for(lambda: second.bench.orders.estimated_document_count() == DOCS, "the secondary to catch up")
        server = server_figures(coll)
        report, secs = shardkey(uri)
    finally:
        stop_members(members)
        subprocess.run(["rm", "-rf", root])

    by_key = {json.dumps(c["key"], separators=(",", ":")): c for c in report["candidates"]}
    st = by_key['{"status":1}']["keyCharacteristics"]
    cu = by_key['{"customerId":1}']["keyCharacteristics"]
    n = st["numDocsSampled"]
    rows, ok = [], True

    def share_row(label, server_n, sampled):
        nonlocal ok
        p = server_n / DOCS
        sigma = math.sqrt(n * p * (1 - p))
        good = abs(sampled - n * p) <= 4 * sigma
        ok &= good
        rows.append({"figure": label, "server": p, "shardkey": sampled / n, "within4Sigma": good})

    mcv = {v["value"]["status"]: v["frequency"] for v in st["mostCommonValues"]}
    for s, cnt in sorted(server["status"].items()):
        share_row(f"status {s}", cnt, mcv.get(s, 0))
    cmcv = {v["value"]["customerId"]: v["frequency"] for v in cu["mostCommonValues"]}
    for c, cnt in server["top"].items():
        share_row(f"customer {c}", cnt, cmcv.get(c, 0))
    est = cu["estimatedNumDistinctValues"]
    holds = est["lower"] <= server["distinct"] <= est["upper"]
    ok &= holds
    result = {
        "docs": DOCS, "recentShare": RECENT, "loadSeconds": round(load_secs, 1), "analyzeSeconds": round(secs, 1),
        "numDocsSampled": n, "readOn": report["inputs"]["documents"].get("readOn"), "shares": rows,
        "distinct": {"server": server["distinct"], "value": est["value"], "lower": est["lower"], "upper": est["upper"],
                     "error": est["value"] / server["distinct"] - 1, "rangeHolds": holds},
        "allHold": ok,
    }
    print(f"sample at size: {DOCS:,} documents on a 2-member replica set, default run {secs:.1f} s, {n:,} sampled")
    print(f"{'figure':<28} {'server':>9} {'shardkey':>9}  within 4 sigma")
    for r in rows:
        print(f"{r['figure']:<28} {r['server']:>9.4%} {r['shardkey']:>9.4%}  {'yes' if r['within4Sigma'] else 'NO'}")
    d = result["distinct"]
    print(f"customerId distinct: server {d['server']:,}; shardkey about {d['value']:,} ({d['error']:+.0%}), "
          f"range {d['lower']:,}-{d['upper']:,}: {'holds' if holds else 'DOES NOT HOLD'}")
    with open(out_path, "w") as f:
        json.dump(result, f, indent=2)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
