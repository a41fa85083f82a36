"""The measurements of scripts/bench.sh (docs/performance.md). Prints a table
and writes the figures as JSON to the path given last."""
import json
import os
import platform
import statistics
import subprocess
import sys
import time

# `bench.py logs LOG APP_DIR OUT`: the log readers' ratios only (`log_ratios`), no server.
# `bench.py export EXPORT OUT`: (d) only (`export_ratio`), no server.
LOGS_ONLY = len(sys.argv) > 1 and sys.argv[1] in ("logs", "export")
if LOGS_ONLY:
    SAMPLE = 0
    NS = "bench.orders"
else:
    from pymongo import MongoClient

    URI, NS, SAMPLE, LOG, MEM_DOCS, OUT = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
# SHARDKEY_BIN measures another build (an earlier commit's, for a before/after in one session).
BIN = os.environ.get("SHARDKEY_BIN", "target/release/shardkey")
BENCH = "target/release/examples/shardkey-bench"
KEYS = ["_id", "ts", "u", "user", "g", "country", "status", "tenant", "sku", "a.b"]
KEY_ARGS = [x for k in KEYS for x in ("--key", "{\"%s\": 1}" % k)]
RUNS = 3
# The ratios (c)/(a), (d) and (e) alternate the two commands this many times and take the
# median of the per-pair ratios: this machine kind's speed drifts by tens of percent within
# minutes (a shared host), which unpaired medians measured minutes apart turned into noise.
PAIRS = 7


def machine():
    cpu = "unknown"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores, {cpu}, {mem:.0f} GiB RAM, {platform.platform()}"


def timed(cmd):
    """Wall seconds, this child's own peak RSS (bytes), its output and its CPU seconds (user +
    system, all threads: how much of the two cores it kept busy), of one run."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    secs = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise subprocess.CalledProcessError(p.returncode, cmd)
    return secs, usage.ru_maxrss * 1024, out, usage.ru_utime + usage.ru_stime


def median_run(cmd):
    runs = [timed(cmd) for _ in range(RUNS)]
    return statistics.median(r[0] for r in runs), runs


PAIR_RATIOS = {}


def paired(base, ours, label, pairs=PAIRS):
    """`base` and `ours` run alternately: (median base s, base runs, median ours s, ours runs,
    median of the per-pair ratios ours/base)."""
    b_runs, o_runs = [], []
    for _ in range(pairs):
        b_runs.append(timed(base))
        o_runs.append(timed(ours))
    PAIR_RATIOS[label] = [round(o[0] / b[0], 3) for b, o in zip(b_runs, o_runs)]
    ratio = statistics.median(PAIR_RATIOS[label])
    med = lambda runs: statistics.median(r[0] for r in runs)
    return med(b_runs), b_runs, med(o_runs), o_runs, ratio


def server_pipeline(client, sample=SAMPLE):
    """(b): per candidate, analyzeShardKey's cardinality/frequency pipeline."""
    db, coll = NS.split(".", 1)
    c = client[db][coll]
    t = time.perf_counter()
    for k in KEYS:
        pipeline = [
            {"$sample": {"size": sample}},
            {"$project": {"_id": 0, "k": "$" + k}},
            {"$group": {"_id": "$k", "frequency": {"$sum": 1}}},
            {"$group": {"_id": None, "numDistinctValues": {"$sum": 1},
                        "mostCommonValues": {"$topN": {"n": 5, "sortBy": {"frequency": -1},
                                                       "output": {"value": "$_id", "frequency": "$frequency"}}}}},
        ]
        list(c.aggregate(pipeline, allowDiskUse=True))
    return time.perf_counter() - t


def pymongo_raw(client, sample, count):
    """pymongo reading the same find as (a) as raw BSON (an independent floor)."""
    from bson.raw_bson import RawBSONDocument
    from bson.codec_options import CodecOptions
    db, coll = NS.split(".", 1)
    c = client[db].get_collection(coll, codec_options=CodecOptions(document_class=RawBSONDocument))
    proj = {k.split(".")[0]: 1 for k in KEYS}
    flt = {} if sample >= count else {"$sampleRate": sample / count}
    t = time.perf_counter()
    n = sum(1 for _ in c.find(flt, proj, hint=[("$natural", 1)], show_record_id=True, batch_size=10000))
    return time.perf_counter() - t, n


def peak_mib(runs):
    return max(r[1] or 0 for r in runs) / 2**20


def python_json_baseline(path):
    t = time.perf_counter()
    n = 0
    with open(path, "rb") as f:
        for line in f:
            d = json.loads(line)
            if d.get("id") == 51803:
                n += 1
    return time.perf_counter() - t, n


def main():
    client = MongoClient(URI)
    res = {"machine": machine(), "sampleSize": SAMPLE, "candidates": len(KEYS)}
    db, coll = NS.split(".", 1)
    res["documents"] = client[db][coll].estimated_document_count()
    floor_cmd = [BENCH, "io-floor", "--uri", URI, "--collection", NS, "--sample-size", str(SAMPLE)] + KEY_ARGS
    ours_cmd = [BIN, "analyze", "--uri", URI, "--collection", NS, "--sample-size", str(SAMPLE), "--format", "json",
                "--queries", "profile"] + KEY_ARGS
    subprocess.run(floor_cmd, check=True, stdout=subprocess.DEVNULL)  # warm the cache
    res["a_decode_floor_s"], _ = median_run(floor_cmd)
    res["a_pymongo_raw_s"] = statistics.median(pymongo_raw(client, SAMPLE, res["documents"])[0] for _ in range(RUNS))
    res["b_server_pipeline_s"] = statistics.median(server_pipeline(client) for _ in range(RUNS))
    res["a_io_floor_s"], _, res["c_shardkey_s"], runs, res["c_over_a"] = paired(floor_cmd + ["--raw"], ours_cmd, "c_over_a")
    res["c_peak_rss_bytes"] = max(r[1] or 0 for r in runs)
    res["b_over_c"] = res["b_server_pipeline_s"] / res["c_shardkey_s"]

    # The same at a whole-collection sample.
    whole = str(res["documents"])
    swap = lambda cmd: [whole if x == str(SAMPLE) else x for x in cmd]
    res["whole_a_pymongo_raw_s"] = statistics.median(pymongo_raw(client, res["documents"], res["documents"])[0] for _ in range(RUNS))
    res["whole_b_server_pipeline_s"] = server_pipeline(client, res["documents"])
    res["whole_a_io_floor_s"], _, res["whole_c_shardkey_s"], runs, res["whole_c_over_a"] = paired(swap(floor_cmd) + ["--raw"], swap(ours_cmd), "whole_c_over_a")
    res["whole_c_peak_rss_bytes"] = max(r[1] or 0 for r in runs)
    res["whole_b_over_c"] = res["whole_b_server_pipeline_s"] / res["whole_c_shardkey_s"]

    # (d) a mongoexport file: shardkey against DuckDB, the same 10 candidates.
    export = os.environ["EXPORT"]
    res["d_export_bytes"] = os.path.getsize(export)
    d_cmd = [BIN, "analyze", "--docs", export, "--collection", NS, "--format", "json"] + KEY_ARGS
    duck_cmd = [os.environ["DUCKDB_PYTHON"], "scripts/bench_duckdb.py", export, ",".join(KEYS)]
    res["d_duckdb_s"], duck_runs, res["d_shardkey_s"], runs, res["d_over_duckdb"] = paired(duck_cmd, d_cmd, "d_over_duckdb")
    res["d_shardkey_peak_rss_bytes"] = max(r[1] or 0 for r in runs)
    res["d_duckdb_peak_rss_bytes"] = max(r[1] or 0 for r in duck_runs)
    duck = json.loads(duck_runs[0][2])
    res["d_duckdb_version"] = duck["version"]
    res["d_agree"] = export_agree(d_cmd, duck)

    # (f) the same documents as a mongodump .bson file against the export (issue 30: BSON needs
    # no parsing and should be the faster path).
    bson_file = os.path.splitext(export)[0] + ".bson"
    f_cmd = [BIN, "analyze", "--docs", bson_file, "--collection", NS, "--format", "json"] + KEY_ARGS
    res["f_bson_bytes"] = os.path.getsize(bson_file)
    res["f_export_s"], _, res["f_bson_s"], runs, res["f_bson_over_export"] = paired(d_cmd, f_cmd, "f_bson_over_export")
    res["f_bson_peak_rss_bytes"] = max(r[1] or 0 for r in runs)

    mem = json.loads(subprocess.run([BENCH, "memcheck", "--docs", MEM_DOCS], check=True, stdout=subprocess.PIPE).stdout)
    res["memcheck"] = mem
    # Exact counting within --memory-limit's default (1 GiB): 4 candidates, every value distinct.
    exact = json.loads(subprocess.run([BENCH, "memcheck", "--docs", MEM_DOCS, "--exact-budget", str(2**30)],
                                      check=True, stdout=subprocess.PIPE).stdout)
    res["memcheckExact"] = exact

    size = os.path.getsize(LOG)
    log_cmd = [BIN, "analyze", "--docs", "fixtures/events.ndjson", "--collection", NS, "--key", "{_id: 1}",
               "--queries", LOG, "--format", "json"]
    grep_cmd = ["grep", "-c", '"id":51803', LOG]
    res["e_grep_s"], grep_runs, secs, _, res["e_over_grep"] = paired(grep_cmd, log_cmd, "e_over_grep")
    res["log_bytes"] = size
    res["log_shardkey_MBps"] = size / 1e6 / secs
    py_secs, py_n = python_json_baseline(LOG)
    res["log_python_json_MBps"] = size / 1e6 / py_secs
    res["log_slow_queries"] = py_n
    # (e) against a byte search for the slow-query lines.
    res["e_shardkey_s"] = secs
    res["e_grep_count"] = int(grep_runs[0][2])

    print(f"machine: {res['machine']}")
    print(f"collection: {res['documents']:,} documents; sample {SAMPLE:,}; {len(KEYS)} candidates")
    print(f"(a) I/O floor (same driver reads, nothing done):   {res['a_io_floor_s']:.2f} s")
    print(f"(b) server pipeline x {len(KEYS)} (pymongo):            {res['b_server_pipeline_s']:.2f} s")
    print(f"(c) shardkey analyze, {len(KEYS)} candidates:            {res['c_shardkey_s']:.2f} s, peak RSS {res['c_peak_rss_bytes'] / 2**20:.0f} MiB")
    print(f"(c)/(a) = {res['c_over_a']:.2f} (median of {PAIRS} alternating pairs)   (b)/(c) = {res['b_over_c']:.2f}   "
          f"(our stream, nothing done {res['a_decode_floor_s']:.2f} s, pymongo raw {res['a_pymongo_raw_s']:.2f} s)")
    print(f"whole collection ({res['documents']:,}): (a) raw read {res['whole_a_io_floor_s']:.2f} s, pymongo raw "
          f"{res['whole_a_pymongo_raw_s']:.2f} s, (b) {res['whole_b_server_pipeline_s']:.2f} s, (c) {res['whole_c_shardkey_s']:.2f} s "
          f"peak RSS {res['whole_c_peak_rss_bytes'] / 2**20:.0f} MiB; (c)/(a) = {res['whole_c_over_a']:.2f}   (b)/(c) = {res['whole_b_over_c']:.2f}")
    print(f"(d) export {res['d_export_bytes'] / 1e6:,.0f} MB: shardkey {res['d_shardkey_s']:.2f} s (peak RSS "
          f"{res['d_shardkey_peak_rss_bytes'] / 2**20:.0f} MiB), DuckDB {res['d_duckdb_version']} {res['d_duckdb_s']:.2f} s (peak RSS "
          f"{res['d_duckdb_peak_rss_bytes'] / 2**20:.0f} MiB): ratio {res['d_over_duckdb']:.2f}; counts agree: {all(res['d_agree'].values())}")
    print(f"(f) mongodump .bson {res['f_bson_bytes'] / 1e6:,.0f} MB of the same documents: {res['f_bson_s']:.2f} s (peak RSS "
          f"{res['f_bson_peak_rss_bytes'] / 2**20:.0f} MiB) against the export's {res['f_export_s']:.2f} s: ratio {res['f_bson_over_export']:.2f}")
    worst = max(c["errorPercent"] for c in mem["candidates"])
    print(f"memory: {int(MEM_DOCS):,} values x 4 candidates: peak RSS {mem['peakRssBytes'] / 2**20:.0f} MiB, "
          f"worst distinct-count error {worst:.2f}%, {mem['seconds']:.1f} s")
    print(f"exact: {int(MEM_DOCS):,} distinct values x 4 candidates within 1 GiB: peak RSS "
          f"{exact['peakRssBytes'] / 2**20:.0f} MiB, all exact: {all(c['exact'] for c in exact['candidates'])}, "
          f"{exact['seconds']:.1f} s")
    print(f"log: {size / 1e6:,.0f} MB: shardkey {res['log_shardkey_MBps']:.0f} MB/s, "
          f"python json.loads baseline {res['log_python_json_MBps']:.0f} MB/s ({py_n:,} slow queries)")
    print(f"(e) log: shardkey {res['e_shardkey_s']:.2f} s, grep -c {res['e_grep_s']:.2f} s ({res['e_grep_count']:,} lines): "
          f"ratio {res['e_over_grep']:.1f}")
    res["pair_ratios"] = PAIR_RATIOS
    with open(OUT, "w") as f:
        json.dump(res, f, indent=1)


def export_agree(d_cmd, duck):
    """Per candidate: did shardkey and DuckDB count the same distinct values and the same 5 top
    frequencies? (The two must agree on what they counted.)"""
    ours = json.loads(subprocess.run(d_cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout)
    agree = {}
    for cand in ours["candidates"]:
        k = next(iter(cand["key"]))
        kc = cand["keyCharacteristics"]
        agree[k] = kc["numDistinctValues"] == duck["keys"][k]["distinct"] and \
            [m["frequency"] for m in kc["mostCommonValues"]][:5] == duck["keys"][k]["top"][:len(kc["mostCommonValues"][:5])]
    return agree


def export_ratio(export, out, pairs=int(os.environ.get("EXPORT_PAIRS", PAIRS))):
    """(d) alone (`scripts/bench.sh export`): shardkey analyze --docs on a mongoexport file against
    DuckDB, alternated `pairs` times, the median of the per-pair ratios, with wall and CPU
    seconds (CPU / wall near 2 means both cores were busy) and whether the counts agree."""
    d_cmd = [BIN, "analyze", "--docs", export, "--collection", NS, "--format", "json"] + KEY_ARGS
    duck_cmd = [os.environ["DUCKDB_PYTHON"], "scripts/bench_duckdb.py", export, ",".join(KEYS)]
    b, b_runs, o, o_runs, ratio = paired(duck_cmd, d_cmd, "d_over_duckdb", pairs)
    duck = json.loads(b_runs[0][2])
    cpu = lambda runs: statistics.median(r[3] for r in runs)
    res = {"machine": machine(), "loadavg_start": os.getloadavg()[0], "export_bytes": os.path.getsize(export),
           "pairs": pairs, "bin": BIN, "duckdb_version": duck["version"],
           "shardkey_s": round(o, 3), "shardkey_cpu_s": round(cpu(o_runs), 3), "shardkey_peak_rss_mib": round(peak_mib(o_runs)),
           "duckdb_s": round(b, 3), "duckdb_cpu_s": round(cpu(b_runs), 3), "duckdb_peak_rss_mib": round(peak_mib(b_runs)),
           "ratio": round(ratio, 3), "agree": export_agree(d_cmd, duck), "pair_ratios": PAIR_RATIOS}
    res["loadavg_end"] = os.getloadavg()[0]
    print(f"machine: {res['machine']}, load average {res['loadavg_start']:.1f} -> {res['loadavg_end']:.1f}")
    print(f"(d) export {res['export_bytes'] / 1e6:,.0f} MB, median of {pairs} alternating pairs, {BIN}:")
    print(f"  shardkey {o:.2f} s wall, {res['shardkey_cpu_s']:.2f} s CPU, peak RSS {res['shardkey_peak_rss_mib']} MiB")
    print(f"  DuckDB {duck['version']} {b:.2f} s wall, {res['duckdb_cpu_s']:.2f} s CPU, peak RSS {res['duckdb_peak_rss_mib']} MiB")
    print(f"  ratio {ratio:.2f} (goal <= 1.0: {'met' if ratio <= 1.0 else 'not met'}); counts agree: {all(res['agree'].values())}")
    with open(out, "w") as f:
        json.dump(res, f, indent=1)


def log_ratios(log, app, out, rs_log=None, pairs=int(os.environ.get("LOG_PAIRS", PAIRS))):
    """Issue 52's three ratios on one generated log of transactions (shardkey-bench gen-plan),
    each pair of commands alternated `pairs` times, the median of the per-pair ratios:
    workload --queries and analyze --queries against grep -c of the same log (goal <= 3), and
    plan --queries against workload (goal <= 2), with plan's peak RSS; and, given `rs_log` (the
    same transactions as a replica set member logs them, `gen-plan --cluster-time`), workload
    on it against grep -c (goal <= 3)."""
    grep = ["grep", "-c", '"id":51803', log]
    workload = [BIN, "workload", "--queries", log, "--format", "json", "-q"]
    analyze = [BIN, "analyze", "--queries", log, "--collection", "app.orders", "--format", "json", "-q"]
    plan = [BIN, "plan", "--dump", app, "--queries", log, "--target-version", "6.0", "--format", "json", "-q"]
    res = {"machine": machine(), "log_bytes": os.path.getsize(log), "pairs": pairs}
    measures = [("workload_over_grep", grep, workload), ("analyze_over_grep", grep, analyze),
                ("plan_over_workload", workload, plan)]
    if rs_log:
        res["rs_log_bytes"] = os.path.getsize(rs_log)
        measures.append(("workload_rs_over_grep", ["grep", "-c", '"id":51803', rs_log],
                         [BIN, "workload", "--queries", rs_log, "--format", "json", "-q"]))
    for label, base, ours in measures:
        b, _, o, o_runs, ratio = paired(base, ours, label, pairs)
        res[label] = {"base_s": round(b, 3), "ours_s": round(o, 3), "ratio": round(ratio, 2),
                      "ours_peak_rss_mib": round(peak_mib(o_runs))}
    res["pair_ratios"] = PAIR_RATIOS
    print(f"machine: {res['machine']}")
    print(f"log: {res['log_bytes'] / 1e6:,.0f} MB (shardkey-bench gen-plan), median of {pairs} alternating pairs")
    goals = {"workload_over_grep": 3, "analyze_over_grep": 3, "plan_over_workload": 2}
    if rs_log:
        print(f"replica set member's log: {res['rs_log_bytes'] / 1e6:,.0f} MB (gen-plan --cluster-time)")
        goals["workload_rs_over_grep"] = 3
    for label, goal in goals.items():
        r = res[label]
        print(f"{label}: {r['ours_s']:.2f} s against {r['base_s']:.2f} s, ratio {r['ratio']:.1f} (goal <= {goal}: "
              f"{'met' if r['ratio'] <= goal else 'not met'}), peak RSS {r['ours_peak_rss_mib']} MiB")
    with open(out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    if LOGS_ONLY and sys.argv[1] == "export":
        export_ratio(sys.argv[2], sys.argv[3])
    elif LOGS_ONLY:
        log_ratios(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else None)
    else:
        main()
