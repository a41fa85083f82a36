//! The dense arena: every counted document's key value in `bsonx::keystring` form, one
//! sort away from exact distinct values, counts and key order (the first counting mode).

use super::values::ValueCount;
use crate::bsonx::keystring;
use bson::Bson;

/// Every counted document's key value in `bsonx::keystring` form, in insertion
/// order: one sort then gives distinct values, their counts and key order exactly.
/// About the encoding's length plus 4 bytes per document (an ObjectId: 17 bytes).
#[derive(Default)]
pub(super) struct Dense {
    pub(super) arena: Vec<u8>,
    pub(super) ends: Vec<u32>,
    pub(super) budget: usize,
    /// How many values the source expects to give (0: no guess), until room is made for them.
    pub(super) expected: usize,
    /// After `finish`: entry indices in key order, equal values in insertion order.
    pub(super) order: Vec<u32>,
    /// After `finish`: bit i set when `order[i]` starts a run of equal values (n/8 bytes).
    pub(super) starts: Vec<u64>,
    /// After `finish`: (distinct values, values held once, values held twice).
    pub(super) profile: (u64, u64, u64),
    /// After `finish`: the most frequent values, decoded, highest first (ties in key order).
    pub(super) top: Vec<ValueCount>,
}

/// How many bytes of an entry `Dense::sort` compares as one number: 11, with the entry's
/// index (32 bits) and whether it ends within them (1 bit) beside them in a u128. A
/// number's encoding is 11 bytes (type, tag, f64, tag), so numbers whose first bytes all
/// entries share still fit; with 8, every run of equal doubles was sorted a second time.
const WIDE: usize = 11;

/// In `Dense::sort`'s numbers: the entry fits the `WIDE` bytes they hold.
const FITS: u128 = 1 << 32;

/// Where `Dense::sort`'s numbers start their `WIDE` bytes: the bits below hold the flag and index.
const PREFIX_SHIFT: u32 = 40;

/// Set bit `i` of `Dense::starts`.
fn mark_run_start(starts: &mut [u64], i: usize) {
    starts[i / 64] |= 1 << (i % 64);
}

impl Dense {
    /// Where entry `i` lies in the arena.
    pub(super) fn bounds(&self, i: usize) -> (usize, usize) {
        (if i == 0 { 0 } else { self.ends[i - 1] as usize }, self.ends[i] as usize)
    }

    pub(super) fn entry(&self, i: usize) -> &[u8] {
        let (start, end) = self.bounds(i);
        &self.arena[start..end]
    }

    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    /// The `WIDE` bytes of entry `i` from `at` (zero past its end) as the top bits of a
    /// number, and whether the entry ends within them. Read from the arena as 16 bytes and
    /// masked: a copy of a length not known at compile time is a call to memcpy, which was
    /// an eighth of the sort.
    pub(super) fn prefix(&self, i: usize, at: usize) -> (u128, bool) {
        let (start, end) = self.bounds(i);
        let from = start + at;
        let avail = end.saturating_sub(from);
        if avail == 0 {
            return (0, true);
        }
        let bytes = match self.arena.get(from..from + 16).and_then(|b| b.first_chunk::<16>()) {
            Some(b) => *b,
            None => {
                // Only the last entries of the arena: fewer than 16 bytes follow them.
                let mut b = [0u8; 16];
                b[..avail].copy_from_slice(&self.arena[from..end]);
                b
            }
        };
        let take = avail.min(WIDE) as u32;
        (u128::from_be_bytes(bytes) & !(u128::MAX >> (take * 8)), avail <= WIDE)
    }

    /// Add one value; false (nothing added) when the budget would be passed. The
    /// budget counts what is allocated. Both vectors double while small against the
    /// budget (each growth copies the whole), then grow by an eighth at a time, so
    /// near the budget the allocation stays close to what is held.
    pub(super) fn push(&mut self, b: &[u8]) -> bool {
        let after = self.arena.len() + b.len();
        if after > u32::MAX as usize {
            return false;
        }
        let small = self.budget / 16;
        let growth = |cap_bytes: usize, cap: usize| if cap_bytes <= small { cap } else { cap / 8 };
        let mut need_arena =
            if after > self.arena.capacity() { growth(self.arena.capacity(), self.arena.capacity()).max(b.len()).max(4096) } else { 0 };
        let mut need_ends =
            if self.ends.len() == self.ends.capacity() { growth(self.ends.capacity() * 4, self.ends.capacity()).max(1024) } else { 0 };
        // Room for every value the source expects at once, the arena sized from the values so
        // far, when the budget has it: each growth copies the whole into fresh pages.
        if need_ends > 0 && self.expected > self.len() && self.len() >= 1024 {
            let ends = self.expected.min(u32::MAX as usize) * 65 / 64;
            let arena = (self.arena.len() as f64 / self.len() as f64 * ends as f64 * 1.03) as usize + 4096;
            if arena.saturating_add(ends * 4) <= self.budget {
                need_ends = need_ends.max(ends - self.ends.len());
                need_arena = need_arena.max(arena.saturating_sub(self.arena.len()));
            }
            self.expected = 0;
        }
        if self.arena.capacity() + need_arena + (self.ends.capacity() + need_ends) * 4 > self.budget {
            return false;
        }
        self.arena.reserve_exact(need_arena);
        self.ends.reserve_exact(need_ends);
        self.arena.extend_from_slice(b);
        self.ends.push(after as u32);
        true
    }

    /// Sort into key order, equal values in insertion order, and profile the runs.
    pub(super) fn sort(&mut self) {
        // The bytes every entry shares are skipped: the 8 after them tell most entries apart.
        let skip = match self.len() {
            0 => 0,
            n => {
                let first = self.entry(0);
                (1..n).fold(first.len(), |l, i| l.min(first.iter().zip(self.entry(i)).take_while(|(a, b)| a == b).count()))
            }
        };
        let held = self.arena.capacity() + self.ends.capacity() * 4;
        // Room for a (prefix, fits, entry) array as numbers, and the order.
        if held + self.len() * (std::mem::size_of::<u128>() + 4) <= self.budget {
            // Sorted as plain numbers: by `WIDE` bytes of the entry, then (within equal bytes)
            // by entry. Entries that fit these bytes are equal when their bytes are (the
            // encoding is prefix-free: zero padding cannot make two values alike, nor a value
            // that fits alike one that does not); a run of longer entries is sorted again by
            // their next `WIDE` bytes, and so on: numbers compared all the way, no bytes.
            let key = |i: usize, at: usize| {
                let (p, fits) = self.prefix(i, at);
                p | if fits { FITS } else { 0 } | i as u128
            };
            let mut keys: Vec<u128> = (0..self.len()).map(|i| key(i, skip)).collect();
            keys.sort_unstable();
            let mut starts = vec![0u64; keys.len().div_ceil(64)];
            // (start, end, offset of the bytes `keys[start..end]` were sorted by): a list, not
            // recursion, as a long value takes one level per `WIDE` bytes.
            let mut work = vec![(0, keys.len(), skip)];
            while let Some((lo, hi, at)) = work.pop() {
                let mut i = lo;
                while i < hi {
                    let p = keys[i] >> PREFIX_SHIFT;
                    let mut j = i + 1;
                    while j < hi && keys[j] >> PREFIX_SHIFT == p {
                        j += 1;
                    }
                    if j - i == 1 || keys[i] & FITS != 0 {
                        // One value.
                        mark_run_start(&mut starts, i);
                    } else {
                        for k in &mut keys[i..j] {
                            *k = key(*k as u32 as usize, at + WIDE);
                        }
                        keys[i..j].sort_unstable();
                        work.push((i, j, at + WIDE));
                    }
                    i = j;
                }
            }
            self.order = keys.into_iter().map(|k| k as u32).collect();
            self.starts = starts;
        } else {
            // No more memory than the order itself. Without the insertion-order tie-break,
            // equal values compare equal and the pattern-defeating quicksort partitions them
            // out at once; each run is put back in insertion order after.
            let mut order: Vec<u32> = (0..self.len() as u32).collect();
            order.sort_unstable_by(|&a, &b| {
                let (a, b) = (a as usize, b as usize);
                self.prefix(a, skip).0.cmp(&self.prefix(b, skip).0).then_with(|| self.entry(a).cmp(self.entry(b)))
            });
            // Runs found once, by comparing neighbours, and marked: every later pass reads the bits.
            let mut starts = vec![0u64; order.len().div_ceil(64)];
            let mut i = 0;
            while i < order.len() {
                let first = self.entry(order[i] as usize);
                let mut j = i + 1;
                while j < order.len() && self.entry(order[j] as usize) == first {
                    j += 1;
                }
                order[i..j].sort_unstable();
                mark_run_start(&mut starts, i);
                i = j;
            }
            self.order = order;
            self.starts = starts;
        }
        self.profile = self.run_starts().fold((0, 0, 0), |(d, f1, f2), (_, c)| (d + 1, f1 + (c == 1) as u64, f2 + (c == 2) as u64));
    }

    pub(super) fn distinct(&self) -> usize {
        self.profile.0 as usize
    }

    /// (first entry in key order, count) of every run of equal values, found by
    /// reading the run boundaries `sort` marked in `starts`.
    pub(super) fn run_starts(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        let mut i = 0;
        let n = self.order.len();
        // The next run start at or after `j` (n when none).
        let next = move |j: usize| -> usize {
            let mut w = j / 64;
            if w >= self.starts.len() {
                return n;
            }
            let mut bits = self.starts[w] & (!0u64 << (j % 64));
            while bits == 0 {
                w += 1;
                if w == self.starts.len() {
                    return n;
                }
                bits = self.starts[w];
            }
            (w * 64 + bits.trailing_zeros() as usize).min(n)
        };
        std::iter::from_fn(move || {
            let first = *self.order.get(i)? as usize;
            let j = next(i + 1);
            let count = (j - i) as u32;
            i = j;
            Some((first, count))
        })
    }

    /// The `k` largest runs as (entry, count), highest first, ties in key order: a bounded heap.
    pub(super) fn largest_runs(&self, k: usize) -> Vec<(usize, u32)> {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut heap: BinaryHeap<Reverse<(u32, Reverse<usize>, usize)>> = BinaryHeap::with_capacity(k + 1);
        for (r, (e, c)) in self.run_starts().enumerate() {
            // A run no larger than the smallest kept would be the one dropped (ties go to the earlier).
            if heap.len() == k && heap.peek().is_some_and(|Reverse((least, _, _))| c <= *least) {
                continue;
            }
            heap.push(Reverse((c, Reverse(r), e)));
            if heap.len() > k {
                heap.pop();
            }
        }
        let mut out: Vec<(u32, Reverse<usize>, usize)> = heap.into_iter().map(|Reverse(x)| x).collect();
        out.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
        out.into_iter().map(|(c, _, e)| (e, c)).collect()
    }

    pub(super) fn decode(&self, i: usize, fields: usize) -> Vec<Bson> {
        keystring::decode(self.entry(i), fields).unwrap_or_else(|| vec![Bson::Null; fields])
    }

    /// The `k` largest runs, decoded, highest first, ties in key order.
    pub(super) fn top_runs(&self, k: usize, fields: usize) -> Vec<ValueCount> {
        self.largest_runs(k).into_iter().map(|(e, c)| ValueCount { value: self.decode(e, fields), count: c as u64 }).collect()
    }
}
