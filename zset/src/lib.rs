//! Goblin's sorted-set engine: a library with no I/O.
//!
//! * `entry`: the byte encoding of one `(member, score)` pair, integer scores
//!   narrowed losslessly.
//! * `small`: the small form ("listpack"), all entries in one packed buffer.
//! * `arena`: the large form's member storage, entries addressed by offset.
//! * `hash::digest`: the member hash (of every Swiss table here).
//! * `swiss`: the large form's member index, a Swiss table of arena ids.
//! * `fenwick`: prefix counts over block sizes.
//! * `blocks`: the large form's score index, sorted blocks of ids.
//! * `id`: arena offsets stored as `u16` while the arena is under 64 KiB,
//!   then `u32`.
//! * `large`: the large form ("skiplist"), the last four kept in step.
//! * `order`: key order and range bounds, shared by both forms.
//! * [`list`]: the list engine (listpack and quicklist), packed nodes in a deque.
//! * [`set`]: the set engine (intset, listpack, hashtable) on the same arena, hash and
//!   Swiss table.
//! * [`hash`]: the hash engine (listpack, hashtable) on the same arena, hash and Swiss table.
//! * [`hll`]: HyperLogLog on Redis's own string bytes (sparse and dense registers, the
//!   estimator).
//! * [`geo`]: geohash math for the geo commands (encode, decode, neighbours, search cells).
//! * [`lzf`]: liblzf's format as Redis runs it (RDB strings, compressed quicklist nodes).
//! * [`packed`]: Redis's listpack, ziplist and zipmap blobs (RDB payloads, compressed
//!   list nodes).
//! * [`stream`]: the stream engine (listpack nodes under a B-tree index, consumer groups).
//! * [`keytable`]: a database's key table (keys, inline strings and integers, heap values,
//!   expiry, access clock) as packed records in size-class slabs behind the Swiss index.
//!
//! # Layout and bytes per member
//!
//! ```text
//! small form (<= 128 members of <= 64 bytes, by default)
//!   buf: [hdr|score|member][hdr|score|member]...   in (score, member) order
//!        hdr   = varint (len << 3 | score kind)    1 byte for members < 16 B
//!        score = 0..=4 bytes for integers in [-2^31, 2^32), 7 for larger
//!                integers, 8 for any other f64 (see `entry`)
//!   cost: member + 1 + score; 19 B for "m:" + 12 hex with a score < 2^32
//!
//! large form
//!   arena (Vec<u8>): [hdr|score|member]...          member + 1 + score
//!                     ^ id = u32 byte offset
//!   swiss: Vec<[16 ctrl bytes | 16 u32 ids]>, 80 B per 16-slot group,
//!     home group = (hash * groups) >> 64           (1 + 4) / load
//!                                                  = 5.15 B at load 0.97
//!   blocks: Vec<Vec<u32>>, <= 512 ids each, (score, member) order
//!                                                  4 / fill; 4.0 B repacked
//!     maxes: Vec<f64>, one per block                ~0.02 B
//!     sizes: Fenwick tree (u32 per block)           ~0.01 B
//!     block headers: 24 B per block                 ~0.05 B
//!
//!   "m:" + 12 hex, integer score < 2^32, optimized:
//!     arena 1 + 4 + 14 = 19, swiss 5.15, blocks 4.1   => ~28.2 B/member
//!   "0".."999999" with score = member, optimized:
//!     arena 1 + ~3 + ~5.9 = ~9.9, swiss 5.15, blocks 4.1 => ~19.1 B/member
//!   random non-integer f64 scores add 4 B (8 bytes instead of 4).
//!
//!   While the arena is under 64 KiB (some thousands of short members) ids
//!   are u16: swiss groups are 48 B and block ids 2 B, about 4.5 B/member
//!   less; 200 members of "m:" + 12 hex cost ~27 B/member as loaded.
//! ```
//!
//! The member bytes and the score are stored once, in the arena: the swiss
//! table holds only ids and the blocks hold only ids, so a member costs its
//! bytes and score plus about 10 bytes of overhead. The price is that
//! ordering comparisons read the arena. Locating a block searches the dense
//! block maxima; inside the block, ZRANK and removal look for the member's
//! id (a contiguous scan, no arena reads), while inserts and score or lex
//! bounds binary-search it, reading one arena entry per step.
//!
//! Limits: one set's arena is capped at 4 GiB (ids are `u32` offsets); a
//! member may be any length below that.

#![warn(missing_docs)]

mod arena;
mod blocks;
mod entry;
mod fenwick;
pub mod geo;
pub mod hash;
pub mod hll;
mod id;
pub mod keytable;
mod large;
pub mod list;
pub mod lzf;
mod order;
pub mod packed;
mod prefixed;
pub mod set;
mod small;
pub mod stream;
mod swiss;

use std::fmt;
use std::ops::Range;

pub use prefixed::{RecordInsert, RecordSet};

use large::{LargeIter, LargeSet};
use small::{SmallIter, SmallSet};

/// Thresholds for the small form, as Redis's `zset-max-listpack-*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// A set with more members than this uses the large form
    /// (`zset-max-listpack-entries`, default 128).
    pub max_listpack_entries: usize,
    /// A set with a member longer than this many bytes uses the large form
    /// (`zset-max-listpack-value`, default 64).
    pub max_listpack_value: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_listpack_entries: 128,
            max_listpack_value: 64,
        }
    }
}

impl Config {
    /// Whether `len` members, the longest `max_member_len` bytes, fit the small form: the
    /// one test of the thresholds, behind every encoding decision of [`ZSet`].
    #[inline]
    fn fits_small(&self, len: usize, max_member_len: usize) -> bool {
        len <= self.max_listpack_entries && max_member_len <= self.max_listpack_value
    }
}

/// The representation of a set, named as Redis's `OBJECT ENCODING` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// The small form: one packed buffer.
    Listpack,
    /// The large form: arena, member index and block-sorted score index.
    Skiplist,
}

impl Encoding {
    /// The name `OBJECT ENCODING` replies with.
    pub fn as_str(&self) -> &'static str {
        match self {
            Encoding::Listpack => "listpack",
            Encoding::Skiplist => "skiplist",
        }
    }
}

/// One end of a score range.
#[derive(Clone, Copy, Debug)]
pub struct ScoreBound {
    /// The bound; may be infinite, never NaN.
    pub value: f64,
    /// Whether a score equal to `value` is outside the range (`(` syntax).
    pub exclusive: bool,
}

/// A score range as ZRANGEBYSCORE takes it.
#[derive(Clone, Copy, Debug)]
pub struct ScoreRange {
    /// Lower end.
    pub min: ScoreBound,
    /// Upper end.
    pub max: ScoreBound,
}

/// One end of a member range as ZRANGEBYLEX takes it.
#[derive(Clone, Debug)]
pub enum LexBound {
    /// `-`: before every member.
    NegInf,
    /// `+`: after every member.
    PosInf,
    /// `[member`: the member itself is in range.
    Inclusive(Vec<u8>),
    /// `(member`: the member itself is out of range.
    Exclusive(Vec<u8>),
}

/// A member range; meaningful when all scores are equal, as in Redis.
#[derive(Clone, Debug)]
pub struct LexRange {
    /// Lower end.
    pub min: LexBound,
    /// Upper end.
    pub max: LexBound,
}

/// A sorted set: unique byte-string members ordered by `(score, member)`.
#[derive(Clone)]
pub struct ZSet {
    repr: Repr,
}

#[derive(Clone)]
enum Repr {
    /// The listpack form.
    Small(SmallSet),
    /// The skiplist form while every arena offset fits in 16 bits.
    Medium(Box<LargeSet<u16>>),
    /// The skiplist form with 32-bit arena offsets.
    Large(Box<LargeSet<u32>>),
}

impl Default for ZSet {
    fn default() -> ZSet {
        ZSet::new()
    }
}

impl fmt::Debug for ZSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZSet")
            .field("encoding", &self.encoding())
            .field("len", &self.len())
            .finish()
    }
}

/// Bytes `(member, score)` takes in a large set's arena: summed over the
/// members a new set is about to receive, the `bytes` hint of
/// [`ZSet::with_expected`].
pub fn stored_bytes(member: &[u8], score: f64) -> usize {
    entry::encoded_len(member, score)
}

impl ZSet {
    /// An empty set in the small form.
    pub fn new() -> ZSet {
        ZSet {
            repr: Repr::Small(SmallSet::default()),
        }
    }

    /// An empty set in the form Redis would choose for a set about to
    /// receive `len` members, the longest `max_member_len` bytes (for ZADD,
    /// STORE commands and loading). The large form reserves its member index
    /// for `len` members and its arena for `bytes` bytes (the sum of
    /// [`stored_bytes`] over the members, or 0 when unknown), so a set built
    /// in one command carries no growth slack.
    pub fn with_expected(len: usize, max_member_len: usize, bytes: usize, cfg: &Config) -> ZSet {
        if cfg.fits_small(len, max_member_len) {
            ZSet::new()
        } else {
            ZSet {
                repr: Repr::Medium(Box::new(LargeSet::with_capacity(len, bytes))),
            }
        }
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Small(s) => s.len(),
            Repr::Medium(l) => l.len(),
            Repr::Large(l) => l.len(),
        }
    }

    /// Whether the set has no members.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The current representation.
    pub fn encoding(&self) -> Encoding {
        match &self.repr {
            Repr::Small(_) => Encoding::Listpack,
            Repr::Medium(_) | Repr::Large(_) => Encoding::Skiplist,
        }
    }

    /// The score of `member`.
    pub fn score(&self, member: &[u8]) -> Option<f64> {
        match &self.repr {
            Repr::Small(s) => s.score(member),
            Repr::Medium(l) => l.score(member),
            Repr::Large(l) => l.score(member),
        }
    }

    /// Inserts `member` or updates its score; returns the previous score.
    ///
    /// `score` must not be NaN. Updating to a numerically equal score keeps
    /// the stored one (so `0` stays `0` when set to `-0`), as Redis does.
    /// Adding a member converts a small set to the large form when the set
    /// would pass `cfg.max_listpack_entries` or the member is longer than
    /// `cfg.max_listpack_value`; updates never convert, and nothing converts
    /// back.
    pub fn insert(&mut self, member: &[u8], score: f64, cfg: &Config) -> Option<f64> {
        debug_assert!(!score.is_nan(), "NaN scores are refused by the caller");
        let Repr::Small(s) = &mut self.repr else {
            return self.insert_large(member, score);
        };
        if let Some(old) = s.update(member, score) {
            return Some(old);
        }
        if cfg.fits_small(s.len() + 1, member.len()) {
            s.insert_new(member, score);
            return None;
        }
        // The packed entries are exactly the arena's first bytes.
        let bytes = s.memory_bytes() + s.memory_bytes() / 4;
        let len = s.len() + 1;
        self.convert_to_large(len, bytes);
        self.insert_large(member, score)
    }

    /// Whether [`ZSet::insert`] of `member` leaves the set in the small form: it is small
    /// and either holds `member` (updates never convert) or has room for it.
    pub fn insert_stays_small(&self, member: &[u8], cfg: &Config) -> bool {
        match &self.repr {
            Repr::Small(s) => {
                s.score(member).is_some() || cfg.fits_small(s.len() + 1, member.len())
            }
            Repr::Medium(_) | Repr::Large(_) => false,
        }
    }

    /// Converts a small set to the large form up front when one write brings more members
    /// than the small form holds (Redis 7.2's zsetTypeMaybeConvert), so the write does not
    /// convert halfway. The large form reserves its member index for them all.
    #[inline]
    pub fn maybe_convert(&mut self, incoming: usize, cfg: &Config) {
        if self.encoding() == Encoding::Listpack && !cfg.fits_small(incoming, 0) {
            self.convert_to_large(self.len() + incoming, 0);
        }
    }

    /// Moves a small set's members into a new large form reserved for `len` members and
    /// `bytes` arena bytes.
    fn convert_to_large(&mut self, len: usize, bytes: usize) {
        let Repr::Small(s) = &mut self.repr else {
            return;
        };
        let small = std::mem::take(s);
        self.repr = Repr::Medium(Box::new(LargeSet::with_capacity(len, bytes)));
        for e in small.entries() {
            self.insert_large(e.member, e.score);
        }
    }

    /// Inserts into a large set, first widening 16-bit ids to 32 bits if
    /// the next arena entry would start past 64 KiB (and compacting would
    /// not bring it back under).
    fn insert_large(&mut self, member: &[u8], score: f64) -> Option<f64> {
        if let Repr::Medium(m) = &mut self.repr {
            if m.needs_wider_ids() {
                if let Repr::Medium(m) = std::mem::replace(&mut self.repr, ZSet::new().repr) {
                    self.repr = Repr::Large(Box::new(m.widen()));
                }
            }
        }
        match &mut self.repr {
            Repr::Small(_) => unreachable!("called on a large set"),
            Repr::Medium(l) => l.insert(member, score),
            Repr::Large(l) => l.insert(member, score),
        }
    }

    /// Removes `member`, returning its score.
    pub fn remove(&mut self, member: &[u8]) -> Option<f64> {
        match &mut self.repr {
            Repr::Small(s) => s.remove(member),
            Repr::Medium(l) => l.remove(member),
            Repr::Large(l) => l.remove(member),
        }
    }

    /// The 0-based ascending rank of `member`.
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        match &self.repr {
            Repr::Small(s) => s.rank(member),
            Repr::Medium(l) => l.rank(member),
            Repr::Large(l) => l.rank(member),
        }
    }

    /// The member and score at ascending rank `rank`.
    pub fn get_by_rank(&self, rank: usize) -> Option<(&[u8], f64)> {
        match &self.repr {
            Repr::Small(s) => s.get_by_rank(rank),
            Repr::Medium(l) => l.get_by_rank(rank),
            Repr::Large(l) => l.get_by_rank(rank),
        }
    }

    /// Members and scores at ascending ranks `ranks` (clamped to the set),
    /// in O(log n + k); `.rev()` walks them descending. On a large set,
    /// `nth`/`nth_back` (and so `skip`) jump in O(log n).
    pub fn iter_ranks(&self, ranks: Range<usize>) -> Iter<'_> {
        Iter {
            inner: match &self.repr {
                Repr::Small(s) => IterInner::Small(s.range(ranks)),
                Repr::Medium(l) => IterInner::Medium(l.range(ranks)),
                Repr::Large(l) => IterInner::Large(l.range(ranks)),
            },
        }
    }

    /// Every member and score in ascending order.
    pub fn iter(&self) -> Iter<'_> {
        self.iter_ranks(0..self.len())
    }

    /// The ascending ranks of the members whose scores lie in `range`;
    /// empty when none do, including when `min > max`.
    pub fn score_range_ranks(&self, range: &ScoreRange) -> Range<usize> {
        match &self.repr {
            Repr::Small(s) => s.score_range_ranks(range),
            Repr::Medium(l) => l.score_range_ranks(range),
            Repr::Large(l) => l.score_range_ranks(range),
        }
    }

    /// The ascending ranks of the members within `range` by bytes
    /// (meaningful when all scores are equal, as in Redis).
    pub fn lex_range_ranks(&self, range: &LexRange) -> Range<usize> {
        match &self.repr {
            Repr::Small(s) => s.lex_range_ranks(range),
            Repr::Medium(l) => l.lex_range_ranks(range),
            Repr::Large(l) => l.lex_range_ranks(range),
        }
    }

    /// Removes the members at ascending ranks `ranks` (clamped); returns how
    /// many were removed.
    pub fn remove_rank_range(&mut self, ranks: Range<usize>) -> usize {
        match &mut self.repr {
            Repr::Small(s) => s.remove_rank_range(ranks),
            Repr::Medium(l) => l.remove_rank_range(ranks),
            Repr::Large(l) => l.remove_rank_range(ranks),
        }
    }

    /// One ZSCAN step: appends some members to `out` and returns the cursor
    /// to pass next, 0 when the scan is complete (start with 0).
    ///
    /// A small set returns everything at once. A large set returns about
    /// `count` members per step; a member present for the whole scan is
    /// returned, whatever inserts, removals, resizes or `optimize` calls
    /// happen between steps. The cursor is a threshold on the member hash.
    pub fn scan(&self, cursor: u64, count: usize, out: &mut Vec<(Vec<u8>, f64)>) -> u64 {
        match &self.repr {
            Repr::Small(s) => {
                out.extend(s.entries().map(|e| (e.member.to_vec(), e.score)));
                0
            }
            Repr::Medium(l) => l.scan(cursor, count, out),
            Repr::Large(l) => l.scan(cursor, count, out),
        }
    }

    /// Heap bytes this set holds: the capacity of every allocation it owns.
    /// The inline `size_of::<ZSet>()` header is the caller's to count.
    pub fn memory_bytes(&self) -> usize {
        match &self.repr {
            Repr::Small(s) => s.memory_bytes(),
            Repr::Medium(l) => l.memory_bytes(),
            Repr::Large(l) => l.memory_bytes(),
        }
    }

    /// A small set's entries, for a caller that keeps it elsewhere (the key
    /// table, inside the key's record); None for the large form.
    pub fn packed(&self) -> Option<&[u8]> {
        match &self.repr {
            Repr::Small(s) => Some(s.bytes()),
            _ => None,
        }
    }

    /// The small set whose entries [`ZSet::packed`] gave.
    pub fn from_packed(bytes: &[u8]) -> ZSet {
        let set = ZSet {
            repr: Repr::Small(SmallSet::from_bytes(bytes)),
        };
        debug_assert!({
            set.validate();
            true
        });
        set
    }

    /// Writes the small set's entries with their members' shared prefix stored once into
    /// `out` (the smaller record form, see `prefixed`) and returns true; false when the set
    /// is not small or that form would not be smaller than [`ZSet::packed`]'s.
    pub fn prefixed_into(&self, out: &mut Vec<u8>) -> bool {
        match &self.repr {
            Repr::Small(s) => prefixed::strip(s.bytes(), out),
            _ => false,
        }
    }

    /// The small set whose [`ZSet::prefixed_into`] wrote `bytes`.
    pub fn from_prefixed(bytes: &[u8]) -> ZSet {
        let (buf, len) = prefixed::expand(bytes);
        let set = ZSet {
            repr: Repr::Small(SmallSet::from_parts(buf, len)),
        };
        debug_assert!({
            set.validate();
            true
        });
        set
    }

    /// Repacks for memory: the member index to load `density` (in `(0, 1]`,
    /// validated by the caller; 0.97 is the default of GOBLIN.OPTIMIZE), the
    /// score index into full blocks and the arena to its live bytes.
    ///
    /// At 1.0 the member index may have no empty slot; then every lookup of
    /// a missing member walks as many groups as the farthest-displaced
    /// member, which grows with the set. Reserve 1.0 for read-mostly sets
    /// queried for present members.
    pub fn optimize(&mut self, density: f64) {
        match &mut self.repr {
            Repr::Small(s) => s.shrink_to_fit(),
            Repr::Medium(l) => l.optimize(density),
            Repr::Large(l) => l.optimize(density),
        }
    }

    /// Checks every internal invariant (order, block maxima, the positional
    /// index, the member index, arena accounting), panicking on the first
    /// violation. O(n log n); for tests.
    pub fn validate(&self) {
        match &self.repr {
            Repr::Small(s) => s.validate(),
            Repr::Medium(l) => l.validate(),
            Repr::Large(l) => l.validate(),
        }
    }
}

/// Members and scores over a rank range, from either end
/// (see [`ZSet::iter_ranks`]).
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    inner: IterInner<'a>,
}

#[derive(Clone, Debug)]
enum IterInner<'a> {
    Small(SmallIter<'a>),
    Medium(LargeIter<'a, u16>),
    Large(LargeIter<'a, u32>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a [u8], f64);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            IterInner::Small(i) => i.next(),
            IterInner::Medium(i) => i.next(),
            IterInner::Large(i) => i.next(),
        }
    }

    fn nth(&mut self, n: usize) -> Option<Self::Item> {
        match &mut self.inner {
            IterInner::Small(i) => i.nth(n),
            IterInner::Medium(i) => i.nth(n),
            IterInner::Large(i) => i.nth(n),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.inner {
            IterInner::Small(i) => i.size_hint(),
            IterInner::Medium(i) => i.size_hint(),
            IterInner::Large(i) => i.size_hint(),
        }
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            IterInner::Small(i) => i.next_back(),
            IterInner::Medium(i) => i.next_back(),
            IterInner::Large(i) => i.next_back(),
        }
    }

    fn nth_back(&mut self, n: usize) -> Option<Self::Item> {
        match &mut self.inner {
            IterInner::Small(i) => i.nth_back(n),
            IterInner::Medium(i) => i.nth_back(n),
            IterInner::Large(i) => i.nth_back(n),
        }
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync_clone<T: Send + Sync + Clone>() {}

    #[test]
    fn zset_is_send_sync_clone() {
        assert_send_sync_clone::<ZSet>();
    }

    #[test]
    fn small_form_limits_decide_every_conversion() {
        let cfg = Config {
            max_listpack_entries: 2,
            max_listpack_value: 4,
        };
        let mut z = ZSet::new();
        z.insert(b"a", 1.0, &cfg);
        assert!(z.insert_stays_small(b"b", &cfg));
        assert!(!z.insert_stays_small(b"long-member", &cfg));
        z.insert(b"b", 2.0, &cfg);
        assert!(!z.insert_stays_small(b"c", &cfg), "full");
        assert!(z.insert_stays_small(b"a", &cfg), "an update never converts");
        z.maybe_convert(2, &cfg);
        assert_eq!(z.encoding(), Encoding::Listpack, "two fit");
        z.maybe_convert(3, &cfg);
        assert_eq!(z.encoding(), Encoding::Skiplist);
        assert_eq!(
            z.iter().collect::<Vec<_>>(),
            [(&b"a"[..], 1.0), (&b"b"[..], 2.0)]
        );
        assert!(!z.insert_stays_small(b"a", &cfg));
        z.validate();
    }

    #[test]
    fn inline_header_is_small() {
        assert!(std::mem::size_of::<ZSet>() <= 32);
    }

    #[test]
    fn widens_ids_past_64_kib() {
        let cfg = Config::default();
        let mut z = ZSet::new();
        for i in 0..4000u32 {
            z.insert(
                format!("member:{i:08}").as_bytes(),
                f64::from(i % 100),
                &cfg,
            );
            if i % 500 == 0 {
                z.validate();
            }
        }
        assert!(matches!(z.repr, Repr::Large(_)));
        z.validate();

        // Churn in a ~40 KiB set compacts instead of widening: scores
        // alternate between 1-byte integers and 8-byte fractions, so every
        // update moves the entry and leaves its old bytes as garbage.
        let mut churn = ZSet::new();
        for round in 0..10u32 {
            let score = if round % 2 == 0 { 1.0 } else { 1.5 };
            for i in 0..1000u32 {
                let member = format!("member:{i:08}-{}", "x".repeat(20));
                churn.insert(member.as_bytes(), score, &cfg);
            }
        }
        assert!(matches!(churn.repr, Repr::Medium(_)));
        churn.validate();
        assert_eq!(z.rank(b"member:00000100"), Some(1), "after member:00000000");
    }

    #[test]
    fn converts_like_redis() {
        let cfg = Config {
            max_listpack_entries: 3,
            max_listpack_value: 4,
        };
        let mut z = ZSet::new();
        for m in [&b"a"[..], b"b", b"c"] {
            z.insert(m, 1.0, &cfg);
        }
        assert_eq!(z.encoding(), Encoding::Listpack);
        z.insert(b"a", 2.0, &cfg);
        assert_eq!(z.encoding(), Encoding::Listpack, "updates never convert");
        z.insert(b"d", 1.0, &cfg);
        assert_eq!(z.encoding(), Encoding::Skiplist);
        z.validate();
        z.remove_rank_range(0..4);
        assert_eq!(z.encoding(), Encoding::Skiplist, "never converts back");

        let mut long = ZSet::new();
        long.insert(b"abcde", 1.0, &cfg);
        assert_eq!(long.encoding().as_str(), "skiplist");
        assert_eq!(
            ZSet::with_expected(3, 4, 0, &cfg).encoding(),
            Encoding::Listpack
        );
        assert_eq!(
            ZSet::with_expected(4, 4, 0, &cfg).encoding(),
            Encoding::Skiplist
        );
        assert_eq!(
            ZSet::with_expected(1, 5, 0, &cfg).encoding(),
            Encoding::Skiplist
        );
    }

    #[test]
    fn a_byte_hint_leaves_no_arena_slack() {
        let cfg = Config::default();
        let pairs: Vec<(Vec<u8>, f64)> = (0..200u32)
            .map(|i| {
                (
                    format!("m:{:012x}", i * 7919).into_bytes(),
                    f64::from(i * 31),
                )
            })
            .collect();
        let bytes: usize = pairs.iter().map(|(m, s)| stored_bytes(m, *s)).sum();
        let build = |hint| {
            let mut z = ZSet::with_expected(pairs.len(), 14, hint, &cfg);
            for (m, s) in &pairs {
                z.insert(m, *s, &cfg);
            }
            z
        };
        let (hinted, unhinted) = (build(bytes), build(0));
        // Same members and index; only the arena's capacity differs.
        hinted.validate();
        assert_eq!(hinted.len(), 200);
        assert!(hinted.memory_bytes() < unhinted.memory_bytes());
    }

    #[test]
    fn negative_zero_keeps_its_sign_but_equal_updates_do_not_change_it() {
        let cfg = Config::default();
        let mut z = ZSet::new();
        z.insert(b"a", -0.0, &cfg);
        assert!(z.score(b"a").unwrap().is_sign_negative());
        assert_eq!(
            z.insert(b"a", 0.0, &cfg).map(f64::to_bits),
            Some((-0.0f64).to_bits())
        );
        assert!(z.score(b"a").unwrap().is_sign_negative());
    }

    #[test]
    fn small_scan_returns_everything_at_once() {
        let cfg = Config::default();
        let mut z = ZSet::new();
        z.insert(b"x", 1.0, &cfg);
        z.insert(b"y", 2.0, &cfg);
        let mut out = Vec::new();
        assert_eq!(z.scan(0, 1, &mut out), 0);
        assert_eq!(out.len(), 2);
    }
}
