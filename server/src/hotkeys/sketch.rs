//! The top-K sketch HOTKEYS keeps per metric: Cuckoo Heavy Keeper (Ngo and
//! Papatriantafilou), with a min-heap of the K heaviest items' names on top, as Redis 8.6's
//! chk.c builds it, so the same stream of weighted updates ranks keys as Redis ranks them.
//!
//! Layout: two tables of `buckets` (a power of two) buckets each. A bucket holds two heavy
//! entries (16-bit fingerprint, 64-bit count) and one lobby entry (fingerprint, 8-bit
//! count): 24 bytes ([`Bucket`]). An item hashes (XXH3, seed 0) to a fingerprint (low 16
//! bits) and a bucket in table 0 (bits 32..); its bucket in table 1 is the first index
//! XORed with `0x5bd1e995 * fingerprint` (so each index is the other's alternate).
//!
//! Update: an item found among its heavy entries adds its weight; else it takes an empty
//! heavy entry at once; else it counts in its lobby entry, and past
//! [`LOBBY_PROMOTION_THRESHOLD`] tries to replace the lighter heavy entry of its bucket
//! (always when heavier, else with probability (n - 16) / (min - 16)); the entry it
//! replaces is kicked to its alternate bucket while it stays a heavy hitter (at least
//! 0.8% of all weight), at most [`MAX_KICKS`] times. An item meeting another's lobby entry
//! decays it by its weight (each unit with probability `decay^-count`) and takes it over
//! once it reaches 0. The heap keeps the names of the `k` items with the largest heavy
//! counts seen; [`TopK::list`] sorts it.

use crate::rng::Rng;
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Lobby count from which an item tries to become heavy.
const LOBBY_PROMOTION_THRESHOLD: u64 = 16;
/// Longest chain of heavy entries one promotion may kick out.
const MAX_KICKS: usize = 16;
/// A heavy hitter holds at least this share of all the weight recorded.
const HEAVY_RATIO: f64 = 0.008;
/// Seed of the heap's hash (unrelated to the tables' one).
const HEAP_SEED: u64 = 1919;
/// Size of the decay look-up tables: every lobby count (8 bits) has its entry.
const LUT_SIZE: usize = 256;
/// Heavy entries per bucket.
const HEAVY_PER_BUCKET: usize = 2;

/// One bucket of a table (24 bytes).
#[derive(Clone, Copy, Default)]
struct Bucket {
    heavy_count: [u64; HEAVY_PER_BUCKET],
    heavy_fp: [u16; HEAVY_PER_BUCKET],
    lobby_fp: u16,
    lobby_count: u8,
}

/// One slot of the heap of named items.
#[derive(Clone, Default)]
struct Named {
    count: u64,
    fp: u64,
    item: Option<Box<[u8]>>,
}

/// An item's fingerprint and its bucket in each table.
#[derive(Clone, Copy)]
struct Place {
    fp: u16,
    idx: [usize; 2],
}

/// A heavy entry touched by an update: table and position (None: only the lobby moved).
type Touched = Option<(usize, Option<usize>)>;

/// The sketch: the two tables, the heap of names, the decay tables and the total weight.
pub struct TopK {
    tables: [Vec<Bucket>; 2],
    heap: Vec<Named>,
    /// Expected decay steps to bring a count to 0 (sum of decay^i, i < count).
    lut_decay_exp: [f64; LUT_SIZE + 1],
    /// Probability that one step decays a count (decay^-count).
    lut_decay_prob: [f64; LUT_SIZE + 1],
    total: u64,
    rng: Rng,
}

impl TopK {
    /// A sketch naming the `k` heaviest items, over two tables of `buckets` buckets (a
    /// power of two), decaying by `decay` (the paper's 1.08); `seed` seeds its dice.
    pub fn new(k: usize, buckets: usize, decay: f64, seed: u64) -> TopK {
        assert!(k > 0 && buckets.is_power_of_two());
        let mut lut_decay_exp = [0.0; LUT_SIZE + 1];
        let mut lut_decay_prob = [0.0; LUT_SIZE + 1];
        for i in 1..=LUT_SIZE {
            lut_decay_exp[i] = lut_decay_exp[i - 1] + decay.powi(i as i32 - 1);
            lut_decay_prob[i] = (1.0 / decay).powi(i as i32);
        }
        TopK {
            tables: [
                vec![Bucket::default(); buckets],
                vec![Bucket::default(); buckets],
            ],
            heap: vec![Named::default(); k],
            lut_decay_exp,
            lut_decay_prob,
            total: 0,
            rng: Rng::seeded(seed),
        }
    }

    /// All the weight recorded (updates of weight 0 record nothing).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The named items, heaviest first, without the empty heap slots.
    pub fn list(&self) -> Vec<(&[u8], u64)> {
        let mut out: Vec<(&[u8], u64)> = self
            .heap
            .iter()
            .filter_map(|n| Some((n.item.as_deref()?, n.count)))
            .filter(|(_, c)| *c > 0)
            .collect();
        out.sort_by_key(|item| std::cmp::Reverse(item.1));
        out
    }

    /// Adds `weight` to `item`.
    pub fn update(&mut self, item: &[u8], weight: u64) {
        if weight == 0 {
            return;
        }
        self.total += weight;
        let place = self.place(item);
        let touched = match self.bump_heavy(place, weight) {
            Some(t) => Some((t.0, Some(t.1))),
            None => match self.bump_lobby(place, weight) {
                Some(t) => Some(t),
                None => self.enter(place, weight),
            },
        };
        if let Some((table, Some(pos))) = touched {
            let count = self.tables[table][place.idx[table]].heavy_count[pos];
            self.name(item, count);
        }
    }

    fn place(&self, item: &[u8]) -> Place {
        let hash = xxh3_64_with_seed(item, 0);
        let fp = (hash & 0xffff) as u16;
        let first = ((hash >> 32) as usize) & (self.tables[0].len() - 1);
        Place {
            fp,
            idx: [first, self.alternate(fp, first)],
        }
    }

    fn alternate(&self, fp: u16, idx: usize) -> usize {
        (idx ^ 0x5bd1_e995usize.wrapping_mul(fp as usize)) & (self.tables[0].len() - 1)
    }

    /// The item's heavy entry gains `weight`, or it takes the first empty heavy entry.
    fn bump_heavy(&mut self, place: Place, weight: u64) -> Option<(usize, usize)> {
        let mut empty = None;
        for (t, &idx) in place.idx.iter().enumerate() {
            let bucket = &mut self.tables[t][idx];
            for j in 0..HEAVY_PER_BUCKET {
                if bucket.heavy_count[j] > 0 {
                    if bucket.heavy_fp[j] == place.fp {
                        bucket.heavy_count[j] += weight;
                        return Some((t, j));
                    }
                } else if empty.is_none() {
                    empty = Some((t, j));
                }
            }
        }
        let (t, j) = empty?;
        let bucket = &mut self.tables[t][place.idx[t]];
        bucket.heavy_fp[j] = place.fp;
        bucket.heavy_count[j] = weight;
        Some((t, j))
    }

    /// The item's lobby entry gains `weight`, promoted past the threshold when it can.
    fn bump_lobby(&mut self, place: Place, weight: u64) -> Touched {
        for t in 0..2 {
            let bucket = &mut self.tables[t][place.idx[t]];
            if bucket.lobby_fp != place.fp || bucket.lobby_count == 0 {
                continue;
            }
            let count = bucket.lobby_count as u64 + weight;
            if count < LOBBY_PROMOTION_THRESHOLD {
                bucket.lobby_count = count as u8;
                return Some((t, None));
            }
            if let Some(pos) = self.promote(place, count, t) {
                return Some((t, Some(pos)));
            }
            self.tables[t][place.idx[t]].lobby_count = LOBBY_PROMOTION_THRESHOLD as u8;
            return Some((t, None));
        }
        None
    }

    /// An item tracked nowhere: an empty lobby entry, else it decays the lobby entry of
    /// the table its fingerprint picks.
    fn enter(&mut self, place: Place, weight: u64) -> Touched {
        for t in 0..2 {
            let bucket = &mut self.tables[t][place.idx[t]];
            if bucket.lobby_count != 0 {
                continue;
            }
            bucket.lobby_fp = place.fp;
            if weight < LOBBY_PROMOTION_THRESHOLD {
                bucket.lobby_count = weight as u8;
                return Some((t, None));
            }
            let promoted = self.promote(place, weight, t);
            if promoted.is_none() {
                self.tables[t][place.idx[t]].lobby_count = LOBBY_PROMOTION_THRESHOLD as u8;
            }
            return Some((t, promoted));
        }
        let t = (place.fp & 1) as usize;
        let old = self.tables[t][place.idx[t]].lobby_count;
        let decayed = self.decay(old, weight);
        let count = if decayed == 0 {
            let expected = self.lut_decay_exp[old as usize] as u64;
            let bucket = &mut self.tables[t][place.idx[t]];
            bucket.lobby_fp = place.fp;
            bucket.lobby_count = if expected >= weight {
                1
            } else {
                (weight - expected).min(255) as u8
            };
            bucket.lobby_count
        } else {
            self.tables[t][place.idx[t]].lobby_count = decayed;
            decayed
        };
        if count as u64 >= LOBBY_PROMOTION_THRESHOLD {
            if let Some(pos) = self.promote(place, count as u64, t) {
                return Some((t, Some(pos)));
            }
        }
        None
    }

    /// The lobby entry of table `t` becomes heavy: in an empty heavy entry, else in place
    /// of the lighter one (always when that one is lighter than `count`, else by chance),
    /// which is kicked on. The position taken, or None when it stays in the lobby.
    fn promote(&mut self, place: Place, count: u64, t: usize) -> Option<usize> {
        let idx = place.idx[t];
        let bucket = &mut self.tables[t][idx];
        if let Some(j) = bucket.heavy_count.iter().position(|&c| c == 0) {
            bucket.heavy_fp[j] = place.fp;
            bucket.heavy_count[j] = count;
            return Some(j);
        }
        let j = if bucket.heavy_count[1] < bucket.heavy_count[0] {
            1
        } else {
            0
        };
        let min = bucket.heavy_count[j];
        if min > count {
            let chance = (count - LOBBY_PROMOTION_THRESHOLD) as f64
                / (min - LOBBY_PROMOTION_THRESHOLD) as f64;
            if self.rng.unit() >= chance {
                return None;
            }
        }
        let bucket = &mut self.tables[t][idx];
        let evicted = (bucket.heavy_fp[j], bucket.heavy_count[j]);
        // The promoted entry keeps the count of the one it replaces, as in the paper.
        bucket.heavy_fp[j] = bucket.lobby_fp;
        bucket.lobby_fp = 0;
        bucket.lobby_count = 0;
        self.kick(evicted, idx, t);
        Some(j)
    }

    /// Moves a replaced heavy entry to its alternate bucket while it stays a heavy hitter.
    fn kick(&mut self, mut entry: (u16, u64), mut idx: usize, mut t: usize) {
        for _ in 0..MAX_KICKS {
            if (entry.1 as f64) < self.total as f64 * HEAVY_RATIO {
                return;
            }
            t = 1 - t;
            idx = self.alternate(entry.0, idx);
            let bucket = &mut self.tables[t][idx];
            if let Some(j) = bucket.heavy_count.iter().position(|&c| c == 0) {
                (bucket.heavy_fp[j], bucket.heavy_count[j]) = entry;
                return;
            }
            let j = if bucket.heavy_count[1] < bucket.heavy_count[0] {
                1
            } else {
                0
            };
            let out = (bucket.heavy_fp[j], bucket.heavy_count[j]);
            (bucket.heavy_fp[j], bucket.heavy_count[j]) = entry;
            entry = out;
        }
    }

    /// A lobby count after another item's `weight` decays it.
    fn decay(&mut self, count: u8, weight: u64) -> u8 {
        if weight == 1 {
            let p = self.lut_decay_prob[count as usize];
            return if self.rng.unit() < p {
                count - 1
            } else {
                count
            };
        }
        // decay^(count - 1) steps take one unit off for sure; fewer do by chance.
        let c = count as usize;
        let min_steps = if c == 0 {
            0.0
        } else {
            self.lut_decay_exp[c] - self.lut_decay_exp[c - 1]
        };
        if weight < min_steps as u64 {
            let p = weight as f64 / min_steps;
            return if self.rng.unit() < p {
                count - 1
            } else {
                count
            };
        }
        let expected = self.lut_decay_exp[count as usize];
        if weight >= expected as u64 {
            return 0;
        }
        // The smallest count whose expected steps plus `weight` reach `count`'s.
        let (mut lo, mut hi) = (0usize, count as usize);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.lut_decay_exp[mid] + weight as f64 >= expected {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo as u8
    }

    /// The heap learns `item`'s heavy count: updated in place, or taking the lightest
    /// slot's place when heavier than it.
    fn name(&mut self, item: &[u8], count: u64) {
        if count < self.heap[0].count {
            return;
        }
        let fp = xxh3_64_with_seed(item, HEAP_SEED);
        let at = (0..self.heap.len())
            .rev()
            .find(|&i| self.heap[i].fp == fp && self.heap[i].item.as_deref() == Some(item));
        let at = match at {
            Some(i) => {
                self.heap[i].count = count;
                i
            }
            None => {
                self.heap[0] = Named {
                    count,
                    fp,
                    item: Some(item.into()),
                };
                0
            }
        };
        self.sift_down(at);
    }

    /// Restores the min-heap order below `start`.
    fn sift_down(&mut self, mut start: usize) {
        let len = self.heap.len();
        loop {
            let mut child = 2 * start + 1;
            if child >= len {
                return;
            }
            if child + 1 < len && self.heap[child].count > self.heap[child + 1].count {
                child += 1;
            }
            if self.heap[child].count > self.heap[start].count {
                return;
            }
            self.heap.swap(start, child);
            start = child;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    fn sketch(k: usize) -> TopK {
        TopK::new(k * 10, (k * 100).next_power_of_two(), 1.08, 7)
    }

    #[test]
    fn heaviest_first_and_total() {
        let mut t = sketch(5);
        for (item, w) in [
            ("item1", 100),
            ("item2", 200),
            ("item3", 150),
            ("item4", 50),
            ("item5", 300),
        ] {
            t.update(item.as_bytes(), w);
        }
        t.update(b"item6", 0);
        let list = t.list();
        assert_eq!(list[0], (&b"item5"[..], 300));
        assert_eq!(list.len(), 5);
        assert_eq!(t.total(), 800);
    }

    #[test]
    fn a_full_heap_drops_the_lightest() {
        // Two names kept; many small updates of a third item overtake the lightest one.
        let mut t = TopK::new(2, 64, 1.08, 3);
        t.update(b"item0", 50);
        t.update(b"item1", 100);
        for _ in 0..100 {
            t.update(b"item2", 1);
        }
        let names: Vec<&[u8]> = t.list().iter().map(|(n, _)| *n).collect();
        assert!(names.contains(&&b"item1"[..]) && names.contains(&&b"item2"[..]));
        assert!(!names.contains(&&b"item0"[..]));
    }

    #[test]
    fn skewed_stream_ranks_the_hot_keys() {
        let mut t = sketch(10);
        let mut x = 12345u64;
        for i in 0..50_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = if (x >> 33) % 10 < 8 {
                (x >> 40) % 20
            } else {
                20 + (x >> 40) % 10_000
            };
            t.update(format!("key_{key}").as_bytes(), 1 + i % 3);
        }
        let top: Vec<&[u8]> = t.list().iter().take(10).map(|(n, _)| *n).collect();
        let hot = top
            .iter()
            .filter(|n| {
                let n: u64 = std::str::from_utf8(&n[4..]).unwrap().parse().unwrap();
                n < 20
            })
            .count();
        assert_eq!(hot, 10, "{top:?}");
    }

    proptest! {
        /// With fewer distinct items than the table has heavy entries per item path, every
        /// item stays heavy: counts and order are exact.
        #[test]
        fn few_items_are_counted_exactly(updates in prop::collection::vec((0u8..6, 0u64..1000), 0..300)) {
            let mut t = sketch(10);
            let mut model: HashMap<Vec<u8>, u64> = HashMap::new();
            for (item, w) in &updates {
                let name = format!("k{item}").into_bytes();
                t.update(&name, *w);
                if *w > 0 {
                    *model.entry(name).or_default() += w;
                }
            }
            let mut expected: Vec<(Vec<u8>, u64)> = model.into_iter().collect();
            expected.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let mut got: Vec<(Vec<u8>, u64)> = t.list().into_iter().map(|(n, c)| (n.to_vec(), c)).collect();
            got.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            prop_assert_eq!(got, expected);
            prop_assert_eq!(t.total(), updates.iter().map(|u| u.1).sum::<u64>());
        }
    }
}
