// ---- The same for every plan: the checks, then the steps. ----------------------------------
// `PLAN` and `SHARDS` above hold this plan's data; nothing below changes per plan.

const config = db.getSiblingDB("config");

/** A key or index pattern as text that compares equal whatever the number types: {"a": 1}. */
function keyText(k) {
  return "{" + Object.keys(k).map((f) => JSON.stringify(f) + ": " + (typeof k[f] === "string" ? JSON.stringify(k[f]) : String(k[f]))).join(", ") + "}";
}

/** Any value as relaxed Extended JSON (bounds, partial filters), for comparing. */
function relaxed(x) {
  return x === undefined || x === null ? "null" : EJSON.stringify(x, { relaxed: true });
}

function splitNs(ns) {
  const i = ns.indexOf(".");
  return [ns.slice(0, i), ns.slice(i + 1)];
}

function coll(ns) {
  const [d, c] = splitNs(ns);
  return db.getSiblingDB(d).getCollection(c);
}

/** An index as the checks compare it: its key and the options that change what it allows. */
function indexText(ix) {
  let t = keyText(ix.key);
  if (ix.unique || ix.name === "_id_") t += " unique";
  if (ix.sparse) t += " sparse";
  if (ix.partialFilterExpression) t += " partial " + relaxed(ix.partialFilterExpression);
  if (ix.collation && ix.collation.locale && ix.collation.locale !== "simple") t += " collation " + ix.collation.locale;
  if (ix.expireAfterSeconds !== undefined && ix.expireAfterSeconds !== null) t += " TTL " + String(ix.expireAfterSeconds);
  return t;
}

/** The collection's shard key, null when it is not sharded (8.0 tracks unsharded ones too). */
function currentKey(ns) {
  const c = config.getCollection("collections").findOne({ _id: ns });
  return c && !c.dropped && !c.unsplittable && c.key ? c.key : null;
}

const SHARDING_OPS = ["shardCollection", "refineCollectionShardKey", "reshardCollection"];
/** The oldest server each command runs on (manual: refineCollectionShardKey 4.4,
 * reshardCollection 5.0, moveCollection 8.0). */
const NEEDS = { refineCollectionShardKey: [4, 4], reshardCollection: [5, 0], moveCollection: [8, 0] };

/** One kind of check: each printed ok, or `label` with its words kept in `list` (the script
 * stops on any). */
function checker(list, label) {
  return (okay, good, bad) => {
    if (okay) {
      print("  ok       " + good);
    } else {
      list.push(bad);
      print(`  ${label}  ` + bad);
    }
  };
}
/** What differs from what the plan read. */
const failed = [];
const check = checker(failed, "DIFFERS");
/** A change the plan needs before its steps (refused writes fixed, a unique index lifted):
 * not a difference from what the plan read, but it stops the script all the same. */
const blocking = [];
const gate = checker(blocking, "BLOCKED");

print(`shardkey plan for database ${PLAN.database}: checking the cluster is what the plan was made from`);

// 1. mongos: zones and sharded collections live in the config servers, reached through it.
const hello = db.adminCommand({ isMaster: 1 });
const mongos = hello.msg === "isdbgrid";
const here = mongos ? "mongos" : hello.setName ? `a member of replica set '${hello.setName}'` : "a standalone mongod";
check(
  mongos,
  "connected to mongos",
  `not connected to mongos: this is ${here}, which cannot hold zones or shard a collection; run this script through your sharded cluster's mongos: mongosh "mongodb://<mongos host>/" <this file>`
);

// 2. The shards: as many as planned, named in SHARDS.
/** Run one check; one that cannot read what it checks (a privilege missing) differs, said. */
function guarded(what, f) {
  try {
    f();
  } catch (e) {
    check(false, "", `${what} could not be checked: ${e.message}`);
  }
}

if (mongos) guarded("the shards", () => {
  const listed = db.adminCommand({ listShards: 1 }).shards.map((s) => s._id);
  check(
    listed.length === PLAN.numShards,
    `${listed.length} shards, as planned`,
    `the plan is for ${PLAN.numShards} shards; this cluster has ${listed.length} (${listed.join(", ")}): plan again with --shards ${listed.length}`
  );
  check(
    SHARDS.length === PLAN.numShards && new Set(SHARDS).size === SHARDS.length,
    `SHARDS names ${SHARDS.length} different shards`,
    `SHARDS at the top of this script must name ${PLAN.numShards} different shards (zone i goes to SHARDS[i]); it names ${SHARDS.join(", ")}`
  );
  for (const s of SHARDS) {
    check(
      listed.includes(s),
      `shard ${s} is in the cluster`,
      `shard ${JSON.stringify(s)} is not in this cluster (its shards: ${listed.join(", ")}): write your shards' names in SHARDS at the top of this script`
    );
  }
});
else print("  skipped  the shards (listShards runs on mongos)");

// 2b. The database's primary shard first in SHARDS: the plan keeps its unsharded collections
// there and calls it shard0 (zone 0 beside them, moveCollection away from them).
if (PLAN.primaryFirst) guarded("the database's primary shard", () => {
  const d = config.getCollection("databases").findOne({ _id: PLAN.database });
  if (!d || !d.primary) {
    print(`  skipped  the database's primary shard (config.databases does not list ${PLAN.database} here)`);
    return;
  }
  check(
    SHARDS[0] === d.primary,
    `SHARDS[0] is ${d.primary}, the database's primary shard, where its unsharded collections stay`,
    `the database's primary shard is ${JSON.stringify(d.primary)} (config.databases), SHARDS[0] is ${JSON.stringify(SHARDS[0])}: the plan keeps ${PLAN.database}'s unsharded collections on its primary shard as shard0, so name ${JSON.stringify(d.primary)} first in SHARDS at the top of this script`
  );
});

// 3. The version the plan followed ($lookup targets from 5.1, moveCollection from 8.0).
const running = db.version();
const [major, minor] = running.split(".").map(Number);
if (PLAN.version) {
  const [pm, pn] = PLAN.version.majorMinor;
  check(
    major === pm && minor === pn,
    `MongoDB ${running}: the plan followed ${PLAN.version.words}`,
    `this cluster runs MongoDB ${running}; the plan followed ${PLAN.version.words}: plan again with --target-version ${major}.${minor}`
  );
} else {
  const needs = PLAN.steps.map((s) => NEEDS[s.op]).filter((v) => v);
  const need = needs.reduce((a, b) => (b[0] > a[0] || (b[0] === a[0] && b[1] > a[1]) ? b : a), [0, 0]);
  check(
    major > need[0] || (major === need[0] && minor >= need[1]),
    `MongoDB ${running} runs every step (the plan did not know the version)`,
    `this cluster runs MongoDB ${running}; the plan's steps need ${need[0]}.${need[1]}`
  );
}

// 4. Each collection: there, of its kind, its default collation, its indexes, its shard key.
const plannedKey = {};
const created = {};
for (const s of PLAN.steps) {
  if (SHARDING_OPS.includes(s.op)) plannedKey[s.ns] = keyText(s.key);
  if (s.op === "createIndex") (created[s.ns] = created[s.ns] || []).push(keyText(s.key));
}
const kind = (type, capped) => (capped ? "capped collection" : type === "timeseries" ? "time-series collection" : type);
for (const c of PLAN.collections) guarded(c.ns, () => {
  const [d, n] = splitNs(c.ns);
  const info = db.getSiblingDB(d).getCollectionInfos({ name: n })[0];
  if (!info) {
    check(false, "", `${c.ns} does not exist (the plan read it)`);
    return;
  }
  const type = info.type || "collection";
  const capped = !!(info.options && info.options.capped);
  const locale = info.options && info.options.collation && info.options.collation.locale !== "simple" ? info.options.collation.locale : null;
  check(
    type === c.type && capped === c.capped && locale === c.collation,
    `${c.ns}: a ${kind(type, capped)}, default collation ${locale || "simple"}, as read`,
    `${c.ns} is a ${kind(type, capped)} of default collation ${locale || "simple"}; the plan read a ${kind(c.type, c.capped)} of default collation ${c.collation || "simple"}`
  );
  if (c.indexes && type !== "view") {
    const now = coll(c.ns).getIndexes();
    const differs = [];
    for (const ix of c.indexes) {
      const cur = now.find((i) => i.name === ix.name);
      if (!cur) differs.push(`index ${ix.name} ${indexText(ix)} is gone`);
      else if (indexText(cur) !== indexText(ix)) differs.push(`index ${ix.name} is now ${indexText(cur)}; the plan read ${indexText(ix)}`);
    }
    for (const cur of now) {
      const ours = (created[c.ns] || []).includes(keyText(cur.key));
      if (!ours && !c.indexes.some((ix) => ix.name === cur.name)) differs.push(`index ${cur.name} ${indexText(cur)} was not there when the plan was made`);
    }
    check(differs.length === 0, `${c.ns}: its ${now.length === 1 ? "index" : now.length + " indexes"} as read`, `${c.ns}: ${differs.join("; ")}`);
  } else if (type !== "view") {
    print(`  skipped  ${c.ns}'s indexes (the plan could not read them)`);
  }
  const cur = currentKey(c.ns);
  const k = cur ? keyText(cur) : null;
  const read = c.shardKey ? keyText(c.shardKey) : null;
  const was = (x) => (x ? "sharded on " + x : "unsharded");
  check(
    k === read || (k !== null && k === plannedKey[c.ns]),
    `${c.ns}: ${was(k)}, ${k === read ? "as read" : "as planned (an earlier run of this script)"}`,
    `${c.ns} is ${was(k)}; the plan read it ${was(read)}`
  );
});

// 4b. Writes the server refuses under the planned keys (the plan's blockers "refused by the
// server", and each collection's refused writes outside transactions): they run from a later
// version, or once the application's filters name the key.
for (const r of PLAN.refused) {
  const from = r.acceptedFrom ? r.acceptedFrom.split(".").map(Number) : null;
  const accepted = from !== null && (major > from[0] || (major === from[0] && minor >= from[1]));
  gate(
    accepted || REFUSED_WRITES_FIXED,
    `${r.ns}: its ${r.writes} ${accepted ? `run on MongoDB ${running}` : "are fixed in the application (REFUSED_WRITES_FIXED)"}`,
    `${r.ns} (MongoDB ${running}): ${r.says}; once the application is fixed, set REFUSED_WRITES_FIXED = true at the top of this script`
  );
}

// 4c. A planned key a unique index blocks (a key kept as given): shardCollection refuses it
// while the index exists (a unique index must start with the key's fields), so the script
// stops before its first step rather than at that collection's shardCollection.
for (const b of PLAN.blocked) {
  const there = coll(b.ns).getIndexes().some((ix) => ix.name === b.index && ix.unique);
  gate(
    !there,
    `${b.ns}: no unique index blocks ${b.key} (${b.index} is gone)`,
    `${b.ns}: the unique index ${b.index} ${b.pattern} exists: shardCollection refuses ${b.key} while it does (a unique index must start with the shard key's fields); lift it as the plan's constraints say (the index dropped or replaced), then plan again and run the new script`
  );
}

if (failed.length > 0 || blocking.length > 0) {
  const parts = [];
  if (failed.length > 0) parts.push(`${failed.length === 1 ? "1 check differs" : `${failed.length} checks differ`} from what the plan was made from`);
  if (blocking.length > 0) parts.push(blocking.length === 1 ? "1 change must come first" : `${blocking.length} changes must come first`);
  print(`shardkey: stopped before changing anything: ${parts.join("; ")}:`);
  for (const f of failed.concat(blocking)) print("  - " + f);
  print("Fix each as its line says (or make the plan again against this cluster); then run the script again.");
  quit(1);
}

// 5. The steps, in order; each one already done is skipped, so the script can run again.
const simple = (s) => (s.simpleCollation ? { collation: { locale: "simple" } } : {});

function describe(s) {
  if (s.op === "addShardToZone") return `sh.addShardToZone(${JSON.stringify(SHARDS[s.shard])}, ${JSON.stringify(s.zone)})`;
  if (s.op === "moveCollection") return `db.adminCommand({moveCollection: ${JSON.stringify(s.ns)}, toShard: ${JSON.stringify(SHARDS[s.shard])}})`;
  return s.text;
}

function isDone(s) {
  switch (s.op) {
    case "enableSharding": {
      const d = config.getCollection("databases").findOne({ _id: s.db });
      return !!(d && d.partitioned === true);
    }
    case "addShardToZone": {
      const sd = config.getCollection("shards").findOne({ _id: SHARDS[s.shard] });
      return !!(sd && (sd.tags || []).includes(s.zone));
    }
    case "createIndex":
      return coll(s.ns).getIndexes().some((i) => keyText(i.key) === keyText(s.key));
    case "updateZoneKeyRange":
      return config
        .getCollection("tags")
        .find({ ns: s.ns, tag: s.zone })
        .toArray()
        .some((t) => relaxed(t.min) === relaxed(s.min) && relaxed(t.max) === relaxed(s.max));
    case "shardCollection":
    case "refineCollectionShardKey":
    case "reshardCollection": {
      const k = currentKey(s.ns);
      return !!k && keyText(k) === keyText(s.key);
    }
    case "moveCollection": {
      const on = coll(s.ns).aggregate([{ $collStats: { count: {} } }]).toArray().map((x) => x.shard);
      return on.length > 0 && on.every((x) => x === SHARDS[s.shard]);
    }
  }
  return false;
}

function run(s) {
  switch (s.op) {
    case "enableSharding":
      return sh.enableSharding(s.db);
    case "addShardToZone":
      return sh.addShardToZone(SHARDS[s.shard], s.zone);
    case "createIndex":
      return coll(s.ns).createIndex(s.key, simple(s));
    case "updateZoneKeyRange":
      return sh.updateZoneKeyRange(s.ns, s.min, s.max, s.zone);
    case "shardCollection":
      return sh.shardCollection(s.ns, s.key, false, simple(s));
    case "refineCollectionShardKey":
      return db.adminCommand({ refineCollectionShardKey: s.ns, key: s.key });
    case "reshardCollection":
      return db.adminCommand(Object.assign({ reshardCollection: s.ns, key: s.key }, simple(s)));
    case "moveCollection":
      return db.adminCommand({ moveCollection: s.ns, toShard: SHARDS[s.shard] });
  }
  throw new Error("unknown step " + s.op);
}

print(`all checks pass: the plan's ${PLAN.steps.length} steps, in order (a step already done is skipped)`);
PLAN.steps.forEach((s, i) => {
  const tag = `step ${i + 1}/${PLAN.steps.length}: ${describe(s)}`;
  if (isDone(s)) {
    print(`${tag}: already done`);
    return;
  }
  try {
    const r = run(s);
    if (r && r.ok === 0) throw new Error(r.errmsg || JSON.stringify(r));
  } catch (e) {
    print(`${tag}: FAILED: ${e.message}`);
    print(`shardkey: stopped at step ${i + 1}; the steps before it are done. Fix the cause and run the script again: it skips the steps done.`);
    quit(1);
  }
  print(`${tag}: done`);
});
print("shardkey: the plan is applied. The balancer moves each collection's chunks into its zones over time; sh.balancerCollectionStatus(\"<db.collection>\") says how far it is.");
