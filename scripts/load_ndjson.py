"""Load an NDJSON export (Extended JSON) into a collection, in file order, and
create the indexes given. Used by scripts/gate-demo.sh (README's CI example)."""
import sys

from bson import json_util
from pymongo import MongoClient


def main():
    uri, ns, path, *indexes = sys.argv[1:]
    db, coll = ns.split(".", 1)
    c = MongoClient(uri)[db][coll]
    batch = []
    with open(path) as f:
        for line in f:
            if line.strip():
                batch.append(json_util.loads(line))
            if len(batch) == 2000:
                c.insert_many(batch)
                batch = []
    if batch:
        c.insert_many(batch)
    for spec in indexes:  # e.g. projectId:1,_id:1
        c.create_index([(f, int(d) if d.lstrip("-").isdigit() else d) for f, d in (p.split(":") for p in spec.split(","))])
    print(f"loaded {c.estimated_document_count()} documents into {ns}", file=sys.stderr)


if __name__ == "__main__":
    main()
