"""(d) of scripts/bench.sh: DuckDB (from PyPI) doing what shardkey's sample pass does
for each candidate of a mongoexport file: the distinct count and the 5 most common
values, the load from the file included. Prints the seconds and the answers as JSON."""
import json
import sys
import time

import duckdb

path, keys = sys.argv[1], sys.argv[2].split(",")
t = time.perf_counter()
con = duckdb.connect()
con.execute("CREATE TABLE t AS SELECT * FROM read_json_auto(?, format='newline_delimited')", [path])
loaded = time.perf_counter() - t
out = {}
for k in keys:
    col = ".".join('"%s"' % p for p in k.split("."))
    distinct = con.execute(f"SELECT count(DISTINCT {col}) FROM t").fetchone()[0]
    # Values as text: DuckDB's timestamps would need pytz to come back to Python.
    top = con.execute(f"SELECT CAST({col} AS VARCHAR), count(*) AS c FROM t GROUP BY {col} ORDER BY c DESC LIMIT 5").fetchall()
    out[k] = {"distinct": distinct, "top": [c for _, c in top]}
print(json.dumps({"seconds": time.perf_counter() - t, "loadSeconds": loaded, "keys": out, "version": duckdb.__version__}))
