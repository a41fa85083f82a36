//! Each operation counted once, whatever the driver and whichever lines were logged.
//!
//! Two things make one operation show on several lines of a mongod 4.4+ log:
//!
//! - **Write statements.** mongod runs each statement of an `update` or `delete` command in
//!   its own CurOp and logs it on its own `WRITE` "Slow query" line (`attr.type` "update" or
//!   "remove", `attr.command` `{q, u, multi, upsert}` / `{q, limit}`), on the command's
//!   connection (`ctx`), before the command's own line (mongodb/mongo
//!   src/mongo/db/ops/write_ops_exec.cpp at 7a6151bd1f56c1fab96457f2e60206f106608508: each
//!   statement runs in a CurOp of its own that `finishCurOp` completes and logs under the
//!   file's component, `kWrite`; at 00957118b92b31977985afcfa095f9efe34af108 `performInserts`
//!   says inserts reuse the command's CurOp: they have no line of their own). The command's
//!   line shows the statements when the driver sent them in the command body (`updates: [...]`:
//!   the Node.js driver 6 and the Rust driver 3 for one statement), not when it sent them as an
//!   OP_MSG document sequence (pymongo 4 always, the Node.js driver's bulk writes): captured
//!   from mongod 6.0.5 with each driver (`tests/data/logs`, `tests/log_counts.rs`). With `slowms` above 0 or `slowOpSampleRate` below 1 each CurOp is logged on its
//!   own decision (`CurOp::completeAndLogOperation`), so a command line may come with all,
//!   some or none of its WRITE lines, and WRITE lines without their command line.
//!   The rule: a WRITE line always counts (it is the statement, and it may be all there is);
//!   a statement in a command line counts unless a WRITE line of the same kind and filter text
//!   was logged on the connection since its previous command line. The filter's text is the
//!   same on both lines (the server logs the `q` it received in both: captured). One case stays
//!   ambiguous: a statement whose command line was not logged, followed on the same connection
//!   by a logged command line holding a statement of the same kind and filter whose own WRITE
//!   line was not logged: the two are counted as one (the log cannot tell them apart, nor can
//!   the lines' millisecond times: a command line is written after the command ends).
//! - **Cursors.** A `getMore` line names the cursor (`attr.cursorid`) and the command that
//!   opened it (`originatingCommand`): the same read, not another. When the opening line was
//!   logged (it carries `cursorid` when the cursor stayed open), its getMores are skipped;
//!   when it was not, the cursor's first logged getMore counts once, as the opening command.
//!
//! The lines are read in parallel parts (`read_block`) merged in file order: a part decides
//! what it can alone, and holds what depends on earlier parts (a connection's first command
//! line, a cursor's first getMore) for `QueryLog::merge_block` to settle (`Once::settle`).

use crate::model::Query;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Statements in a command line that their own WRITE lines counted.
pub(crate) const STATEMENT_LOGGED_TWICE: &str =
    "update/delete statements in a command line that their own WRITE lines counted (one statement, two lines)";
/// A getMore continues a read counted once (its opening line, or its cursor's first getMore).
pub(crate) const GETMORE_OF_COUNTED: &str = "getMores of a cursor whose first batch is counted (one read)";

/// WRITE lines one connection may hold while waiting for its next command line.
const MAX_PENDING: usize = 1_000;
/// Cursors remembered per read (a getMore past it is counted).
const MAX_CURSORS: usize = 1_000_000;

/// The identity of a write statement between its WRITE line and its command's line: its kind
/// (`b'u'` update, `b'd'` delete) and the text of its filter `q` as logged (FNV-1a, 64 bits).
pub(super) fn statement_key(kind: u8, q: &str) -> u64 {
    std::iter::once(kind).chain(q.bytes()).fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

/// How a slow-query line is tied to other lines (read by `light`, for both reads).
#[derive(Debug, PartialEq, Default, Clone)]
pub(crate) enum Tie {
    /// Nothing to do with other lines.
    #[default]
    Alone,
    /// A write statement's own line (`WRITE`), with its key.
    Write(u64),
    /// A command line (`attr.type` "command"): it ends what its connection logged before.
    Command(Cmd),
}

#[derive(Debug, PartialEq, Clone)]
pub(crate) enum Cmd {
    Plain,
    /// An update or delete with its statements in the body: their keys, in order.
    Statements(Vec<u64>),
    /// A find or aggregate whose cursor stayed open.
    Opens(i64),
    /// A getMore of this cursor.
    GetMore(i64),
}

/// What becomes of an operation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Fate {
    Count,
    /// Already counted from another line: skipped under `why`.
    Twice(&'static str),
    /// Depends on earlier parts: held for the merge.
    Wait,
}

/// Where the line of an operation a light read counted is in the block being read.
#[derive(Debug)]
pub(super) struct InBlock {
    pub(super) start: usize,
    pub(super) len: usize,
    pub(super) lineno: u64,
    /// Which of the line's operations.
    pub(super) index: u32,
}

/// An operation held for the merge: parsed, or (light) where its line is in the block.
#[derive(Debug)]
pub(super) enum Held {
    Parsed(Box<Query>),
    Light { ns: Arc<str>, at: InBlock },
}

/// What a part could not settle alone.
#[derive(Debug)]
pub(super) enum Head {
    /// A connection's first command line in the part: it ends what earlier parts left pending on
    /// the connection; its statements no WRITE line of this part matched, with their keys.
    Command { conn: Box<str>, stmts: Vec<(u64, Held)> },
    /// A cursor's first getMore in the part, its opening line not in the part.
    GetMore { cursor: i64, ops: Vec<Held> },
}

#[derive(Debug, Default)]
pub(crate) struct Once {
    /// A part of a parallel read (holds what it cannot settle), not the whole log.
    pub(super) part: bool,
    /// Per connection: the keys of its WRITE lines since its last command line.
    writes: HashMap<Box<str>, Vec<u64>, ahash::RandomState>,
    /// Connections that logged a command line in this part.
    closed: HashSet<Box<str>, ahash::RandomState>,
    /// Cursors whose read is counted (opened, or a getMore counted).
    cursors: HashSet<i64>,
    pub(super) heads: Vec<Head>,
}

impl Once {
    /// The state of a part of a parallel read.
    pub(super) fn for_part() -> Once {
        Once { part: true, ..Default::default() }
    }

    /// A new file: its connections and cursors are not the last file's.
    pub(super) fn new_file(&mut self) {
        self.writes.clear();
        self.cursors.clear();
    }

    /// A WRITE line on `conn`, counted: its key waits for the connection's next command line.
    pub(super) fn write_line(&mut self, conn: &str, key: u64) {
        match self.writes.get_mut(conn) {
            Some(v) if v.len() < MAX_PENDING => v.push(key),
            Some(_) => {}
            None => {
                self.writes.insert(conn.into(), vec![key]);
            }
        }
    }

    /// A command line on `conn` with statements of these keys (none for another command):
    /// each statement's fate, and whether it is the connection's first command line in this
    /// part (its waiting statements then make a `Head`, which the caller pushes, even empty).
    pub(super) fn command_line(&mut self, conn: &str, keys: &[u64]) -> (Vec<Fate>, bool) {
        let first = self.part && !self.closed.contains(conn);
        if first {
            self.closed.insert(conn.into());
        }
        // (Most command lines carry no statements, and most parts hold no WRITE line.)
        let mut pending = if self.writes.is_empty() { Vec::new() } else { self.writes.remove(conn).unwrap_or_default() };
        if keys.is_empty() {
            return (Vec::new(), first);
        }
        let fates = keys
            .iter()
            .map(|k| match pending.iter().position(|p| p == k) {
                Some(i) => {
                    pending.swap_remove(i);
                    Fate::Twice(STATEMENT_LOGGED_TWICE)
                }
                None if first => Fate::Wait,
                None => Fate::Count,
            })
            .collect();
        (fates, first)
    }

    /// A line that opens `cursor` (its first batch counted).
    pub(super) fn opens(&mut self, cursor: i64) {
        if cursor != 0 && self.cursors.len() < MAX_CURSORS {
            self.cursors.insert(cursor);
        }
    }

    /// A getMore of `cursor`: counted when its read is not (as the opening command).
    pub(super) fn getmore(&mut self, cursor: i64) -> Fate {
        if self.cursors.contains(&cursor) {
            return Fate::Twice(GETMORE_OF_COUNTED);
        }
        self.opens(cursor);
        if self.part {
            Fate::Wait
        } else {
            Fate::Count
        }
    }

    /// Settle a later part's heads against what the parts before it left (this), then take in
    /// what it leaves: `each` gets every held operation with its fate (never `Wait`).
    pub(super) fn settle(&mut self, other: &mut Once, mut each: impl FnMut(Held, Fate)) {
        for head in std::mem::take(&mut other.heads) {
            match head {
                Head::Command { conn, stmts } => {
                    let mut pending = self.writes.remove(&conn).unwrap_or_default();
                    for (k, held) in stmts {
                        match pending.iter().position(|p| *p == k) {
                            Some(i) => {
                                pending.swap_remove(i);
                                each(held, Fate::Twice(STATEMENT_LOGGED_TWICE));
                            }
                            None => each(held, Fate::Count),
                        }
                    }
                }
                Head::GetMore { cursor, ops } => {
                    let fate = if self.cursors.contains(&cursor) { Fate::Twice(GETMORE_OF_COUNTED) } else { Fate::Count };
                    for held in ops {
                        each(held, fate);
                    }
                }
            }
        }
        // A connection the part logged a command on starts again from what the part left.
        for conn in other.closed.drain() {
            self.writes.remove(&conn);
        }
        for (conn, keys) in other.writes.drain() {
            let v = self.writes.entry(conn).or_default();
            v.extend(keys);
            v.truncate(MAX_PENDING);
        }
        for c in other.cursors.drain() {
            if self.cursors.len() < MAX_CURSORS {
                self.cursors.insert(c);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part() -> Once {
        Once::for_part()
    }

    /// A statement's WRITE line in one part, its command line in the next: counted once;
    /// a WRITE line whose command line was not logged stays counted.
    #[test]
    fn a_statement_is_settled_across_parts() {
        let (a, b, c) = (statement_key(b'u', "{\"_id\":1}"), statement_key(b'u', "{\"_id\":2}"), statement_key(b'd', "{\"_id\":1}"));
        assert_ne!(a, c, "the kind is part of the key");
        let mut main = Once::default();
        let mut p1 = part();
        p1.write_line("conn1", a);
        let mut p2 = part();
        let (fates, first) = p2.command_line("conn1", &[a, b]);
        assert!(first);
        assert_eq!(fates, vec![Fate::Wait, Fate::Wait]);
        p2.heads.push(Head::Command { conn: "conn1".into(), stmts: vec![(a, held("x")), (b, held("y"))] });
        // The same connection's next command line is settled in the part.
        p2.write_line("conn1", c);
        assert_eq!(p2.command_line("conn1", &[c, c]), (vec![Fate::Twice(STATEMENT_LOGGED_TWICE), Fate::Count], false));
        main.settle(&mut p1, |_, _| panic!("nothing held"));
        let mut got = Vec::new();
        main.settle(&mut p2, |h, f| got.push((ns_of(&h), f)));
        assert_eq!(got, vec![("x".into(), Fate::Twice(STATEMENT_LOGGED_TWICE)), ("y".into(), Fate::Count)]);
    }

    #[test]
    fn a_cursor_counts_once_across_parts() {
        let mut main = Once::default();
        let mut p1 = part();
        p1.opens(7);
        assert_eq!(p1.getmore(7), Fate::Twice(GETMORE_OF_COUNTED));
        // Cursor 8 was never seen open: its first getMore waits, the next one is the same read.
        assert_eq!(p1.getmore(8), Fate::Wait);
        assert_eq!(p1.getmore(8), Fate::Twice(GETMORE_OF_COUNTED));
        p1.heads.push(Head::GetMore { cursor: 8, ops: vec![held("a")] });
        let mut p2 = part();
        assert_eq!(p2.getmore(7), Fate::Wait);
        p2.heads.push(Head::GetMore { cursor: 7, ops: vec![held("b")] });
        let mut got = Vec::new();
        main.settle(&mut p1, |h, f| got.push((ns_of(&h), f)));
        main.settle(&mut p2, |h, f| got.push((ns_of(&h), f)));
        assert_eq!(got, vec![("a".into(), Fate::Count), ("b".into(), Fate::Twice(GETMORE_OF_COUNTED))]);
        // Read whole (not in parts), a lone getMore counts at once.
        let mut whole = Once::default();
        assert_eq!(whole.getmore(9), Fate::Count);
        assert_eq!(whole.getmore(9), Fate::Twice(GETMORE_OF_COUNTED));
    }

    fn held(ns: &str) -> Held {
        Held::Light { ns: ns.into(), at: InBlock { start: 0, len: 0, lineno: 0, index: 0 } }
    }

    fn ns_of(h: &Held) -> String {
        match h {
            Held::Light { ns, .. } => ns.to_string(),
            Held::Parsed(q) => q.ns.clone(),
        }
    }
}

/// Lines mongod 6.0.5 logged for a counted workload from the Node.js driver 6 (statements in
/// the body for one, as a document sequence for bulk writes; finds with `batchSize` and their
/// getMores; an aggregate's cursor; a transaction), on a two-member replica set (trimmed of
/// `locks`, `storage` and the like): `tests/data/logs/node-6.0.5-*.log`.
#[cfg(test)]
mod captured {
    use super::super::{read_queries_in, QueryLog};
    use super::*;
    use crate::model::Op;
    use std::collections::BTreeMap;

    const EVERY_OP: &str = include_str!("../../../tests/data/logs/node-6.0.5-every-op.log");
    const SAMPLED: &str = include_str!("../../../tests/data/logs/node-6.0.5-sample-rate-0.5.log");
    const SECONDARY: &str = include_str!("../../../tests/data/logs/node-6.0.5-secondary-mirrored.log");
    const PY_EVERY_OP: &str = include_str!("../../../tests/data/logs/pymongo-6.0.5-every-op.log");
    const PY_SAMPLED: &str = include_str!("../../../tests/data/logs/pymongo-6.0.5-sample-rate-0.5.log");

    /// Read `text` light (no window: counted, parsed only if kept) or in full; `pad` lines that
    /// are no slow query after each line put every line in another 2048-line part.
    fn read(text: &str, light: bool, pad: usize) -> QueryLog {
        let filler = "{\"t\":{\"$date\":\"2026-11-28T04:06:56.455+00:00\"},\"s\":\"I\",\"c\":\"NETWORK\",\"id\":22943,\"msg\":\"x\"}\n";
        let mut s = String::new();
        for l in text.lines() {
            s.push_str(l);
            s.push('\n');
            for _ in 0..pad {
                s.push_str(filler);
            }
        }
        let mut log = QueryLog { window: if light { (None, None) } else { (Some(0), None) }, ..QueryLog::default() };
        let input = crate::sources::records::from_reader(Box::new(std::io::Cursor::new(s.into_bytes())), "log".into(), 0, false).unwrap();
        read_queries_in(input, &mut log).unwrap();
        log
    }

    fn by_op(log: &QueryLog) -> BTreeMap<(String, Op), u64> {
        let mut m = BTreeMap::new();
        for q in &log.queries {
            *m.entry((q.ns.clone(), q.op)).or_default() += 1;
        }
        m
    }

    fn expect(rows: &[(&str, Op, u64)]) -> BTreeMap<(String, Op), u64> {
        rows.iter().map(|(ns, op, n)| ((ns.to_string(), *op), *n)).collect()
    }

    /// Every operation logged (`slowms: -1`): the script's own counters (products: 17 update
    /// and 3 delete statements, 4 finds and 2 aggregates read in batches of 10, one insert
    /// command; users: 4 delete statements, 4 finds in batches of 5 and 4, one insert command).
    #[test]
    fn every_operation_logged_counts_what_the_application_sent() {
        let want = expect(&[
            ("nodeall.products", Op::Update, 17),
            ("nodeall.products", Op::Delete, 3),
            ("nodeall.products", Op::Find, 4),
            ("nodeall.products", Op::Aggregate, 2),
            ("nodeall.products", Op::Insert, 1),
            ("nodeall.users", Op::Delete, 4),
            ("nodeall.users", Op::Find, 4),
            ("nodeall.users", Op::Insert, 1),
        ]);
        for (light, pad) in [(true, 0), (false, 0), (true, 2047), (false, 2047)] {
            let log = read(EVERY_OP, light, pad);
            assert_eq!(by_op(&log), want, "light {light}, pad {pad}");
            // Each single update/delete command's statement is on its WRITE line too (14 by
            // hand: 6 + 3 updateOne/updateMany, 2 + 1 deleteOne/deleteMany, and the
            // transaction's updateOne and deleteOne; the bulk writes' command lines show none).
            assert_eq!(log.skipped.get(STATEMENT_LOGGED_TWICE), Some(&14), "light {light}, pad {pad}: {:?}", log.skipped);
        }
    }

    /// The transaction (updateOne, deleteOne, a two-statement bulkWrite, a find in batches of 4)
    /// is read whole, each operation once: the WRITE lines join it through their command line
    /// (`sessions` `claim`), the statements in a command body are not added a second time.
    #[test]
    fn the_transaction_holds_each_operation_once() {
        use super::super::sessions::Sessions;
        for pad in [0, 2047] {
            let text: String = EVERY_OP
                .lines()
                .flat_map(|l| {
                    std::iter::once(l.to_string()).chain(std::iter::repeat_n(
                        "{\"t\":{\"$date\":\"2026-11-28T04:06:56.455+00:00\"},\"s\":\"I\",\"c\":\"NETWORK\",\"id\":22943,\"msg\":\"x\"}"
                            .to_string(),
                        pad,
                    ))
                })
                .map(|l| l + "\n")
                .collect();
            let mut log = QueryLog { sink: Some(Box::new(Sessions::default())), ..Default::default() };
            let input =
                crate::sources::records::from_reader(Box::new(std::io::Cursor::new(text.into_bytes())), "log".into(), 0, false).unwrap();
            read_queries_in(input, &mut log).unwrap();
            let s = log.sink.take().unwrap().as_any().downcast::<Sessions>().unwrap();
            assert_eq!(s.transactions.len(), 1, "pad {pad}");
            let ops: Vec<(String, Op)> = s.transactions.values().next().unwrap().iter().map(|q| (q.ns.clone(), q.op)).collect();
            let want =
                [("products", Op::Update), ("users", Op::Delete), ("products", Op::Update), ("products", Op::Update), ("users", Op::Find)];
            let mut got = ops.clone();
            got.sort();
            let mut want: Vec<(String, Op)> = want.iter().map(|(c, op)| (format!("nodeall.{c}"), *op)).collect();
            want.sort();
            assert_eq!(got, want, "pad {pad}: {ops:?}");
        }
    }

    /// `slowms: 0` and `sampleRate: 0.5`: each CurOp logged on its own draw. By hand (each
    /// statement's and read's marker filter found on any of its lines): products 8 updates,
    /// 1 delete, 4 finds, 2 aggregates; users 4 deletes, 3 finds, its insert.
    #[test]
    fn sampled_lines_count_each_statement_once() {
        let want = expect(&[
            ("nodehalf.products", Op::Update, 8),
            ("nodehalf.products", Op::Delete, 1),
            ("nodehalf.products", Op::Find, 4),
            ("nodehalf.products", Op::Aggregate, 2),
            ("nodehalf.users", Op::Delete, 4),
            ("nodehalf.users", Op::Find, 3),
            ("nodehalf.users", Op::Insert, 1),
        ]);
        for (light, pad) in [(true, 0), (false, 0), (true, 2047), (false, 2047)] {
            assert_eq!(by_op(&read(SAMPLED, light, pad)), want, "light {light}, pad {pad}");
        }
    }

    /// The same workload through pymongo 4 (statements as OP_MSG document sequences: the
    /// command lines show none, the WRITE lines are all there is): every operation logged, the
    /// script's counters (products 15 update and 3 delete statements, 4 finds, 2 aggregates, an
    /// insert; users 4 deletes, 4 finds, an insert); sampled, by hand (markers on any line).
    #[test]
    fn pymongo_lines_count_each_statement_once() {
        let every = expect(&[
            ("pyall.products", Op::Update, 15),
            ("pyall.products", Op::Delete, 3),
            ("pyall.products", Op::Find, 4),
            ("pyall.products", Op::Aggregate, 2),
            ("pyall.products", Op::Insert, 1),
            ("pyall.users", Op::Delete, 4),
            ("pyall.users", Op::Find, 4),
            ("pyall.users", Op::Insert, 1),
        ]);
        let sampled = expect(&[
            ("pyhalf.products", Op::Update, 4),
            ("pyhalf.products", Op::Delete, 1),
            ("pyhalf.products", Op::Find, 4),
            ("pyhalf.products", Op::Aggregate, 2),
            ("pyhalf.users", Op::Delete, 3),
            ("pyhalf.users", Op::Find, 4),
            ("pyhalf.users", Op::Insert, 1),
        ]);
        for (light, pad) in [(true, 0), (false, 0), (true, 2047), (false, 2047)] {
            assert_eq!(by_op(&read(PY_EVERY_OP, light, pad)), every, "light {light}, pad {pad}");
            assert_eq!(by_op(&read(PY_SAMPLED, light, pad)), sampled, "light {light}, pad {pad}");
        }
    }

    /// A secondary's log with `mirrorReads: {samplingRate: 1.0}`: the primary's reads copied
    /// there are no operation of the application's.
    #[test]
    fn mirrored_reads_in_a_secondary_log_are_skipped() {
        let mirrored = SECONDARY.lines().filter(|l| l.contains("\"mode\":\"secondaryPreferred\"")).count() as u64;
        assert!(mirrored >= 10);
        for light in [true, false] {
            let log = read(SECONDARY, light, 0);
            assert_eq!(log.found, 0, "light {light}");
            assert_eq!(log.skipped.get(super::super::profile::MIRRORED_READS), Some(&mirrored), "light {light}");
        }
    }
}
