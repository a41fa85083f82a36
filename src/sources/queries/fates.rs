//! What the operations of one slow-query line become (`once`'s fates), decided as the line
//! is read into a `QueryLog` part: counted, held for the merge, or skipped as logged twice.

use super::log::QueryLog;
use super::once::{Cmd, Fate, Head, Held, Tie};

/// What the operations of one line become (`QueryLog::line_fates`).
pub(super) struct LineFates {
    /// One per operation, in order; empty when all count.
    pub(super) fates: Vec<Fate>,
    /// The line is its connection's first command line in the part: the connection, and the
    /// keys of its statements that wait.
    conn_head: Option<(Box<str>, Vec<u64>)>,
    /// The line is a getMore whose operation waits: its cursor.
    cursor_head: Option<i64>,
}

impl LineFates {
    pub(super) fn fate(&self, i: usize) -> Fate {
        self.fates.get(i).copied().unwrap_or(Fate::Count)
    }
}

impl QueryLog {
    /// The fates of a slow-query line's operations, from how it is tied to other lines.
    pub(super) fn line_fates(&mut self, conn: Option<&str>, tie: &Tie) -> LineFates {
        let mut out = LineFates { fates: Vec::new(), conn_head: None, cursor_head: None };
        if self.raw {
            return out;
        }
        match tie {
            Tie::Alone => {}
            Tie::Write(key) => {
                if let Some(c) = conn {
                    self.once.write_line(c, *key);
                }
            }
            Tie::Command(cmd) => {
                let keys: &[u64] = match cmd {
                    Cmd::Statements(k) => k,
                    _ => &[],
                };
                if let Some(c) = conn {
                    let (fates, first) = self.once.command_line(c, keys);
                    if first {
                        let waiting = keys.iter().zip(&fates).filter(|(_, f)| **f == Fate::Wait).map(|(k, _)| *k).collect();
                        out.conn_head = Some((c.into(), waiting));
                    }
                    out.fates = fates;
                }
                match cmd {
                    Cmd::Opens(c) => self.once.opens(*c),
                    Cmd::GetMore(c) => {
                        let f = self.once.getmore(*c);
                        out.fates = vec![f];
                        if f == Fate::Wait {
                            out.cursor_head = Some(*c);
                        }
                    }
                    _ => {}
                }
            }
        }
        out
    }

    /// After the line: what it held (its `Wait` operations, in order) goes to the merge.
    pub(super) fn end_line(&mut self, f: LineFates, held: Vec<Held>) {
        let mut held = Some(held);
        if let Some(cursor) = f.cursor_head {
            self.once.heads.push(Head::GetMore { cursor, ops: held.take().unwrap_or_default() });
        }
        if let Some((conn, keys)) = f.conn_head {
            let stmts = keys.into_iter().zip(held.take().unwrap_or_default()).collect();
            self.once.heads.push(Head::Command { conn, stmts });
        }
    }
}
