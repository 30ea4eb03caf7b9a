//! Property tests of the engine against a simple model: an ordered set of
//! `(score, member)` plus a map from member to score. Every step runs one
//! operation on both and then checks every query and `validate()`.

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};

use goblin_zset::{Config, Encoding, LexBound, LexRange, ScoreBound, ScoreRange, ZSet};
use proptest::prelude::*;

/// A score with the engine's order: numeric, `-0.0 == 0.0`, no NaN.
#[derive(Clone, Copy, Debug)]
struct Score(f64);

impl Score {
    fn norm(self) -> f64 {
        if self.0 == 0.0 {
            0.0
        } else {
            self.0
        }
    }
}

impl PartialEq for Score {
    fn eq(&self, other: &Score) -> bool {
        self.cmp(other).is_eq()
    }
}
impl Eq for Score {}
impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Score) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Score {
    fn cmp(&self, other: &Score) -> Ordering {
        self.norm().total_cmp(&other.norm())
    }
}

#[derive(Default)]
struct Model {
    order: BTreeSet<(Score, Vec<u8>)>,
    scores: HashMap<Vec<u8>, f64>,
}

impl Model {
    fn insert(&mut self, member: &[u8], score: f64) -> Option<f64> {
        let old = self.scores.get(member).copied();
        match old {
            Some(o) if Score(o) == Score(score) => {}
            Some(o) => {
                self.order.remove(&(Score(o), member.to_vec()));
                self.order.insert((Score(score), member.to_vec()));
                self.scores.insert(member.to_vec(), score);
            }
            None => {
                self.order.insert((Score(score), member.to_vec()));
                self.scores.insert(member.to_vec(), score);
            }
        }
        old
    }

    fn remove(&mut self, member: &[u8]) -> Option<f64> {
        let old = self.scores.remove(member)?;
        self.order.remove(&(Score(old), member.to_vec()));
        Some(old)
    }

    fn entries(&self) -> Vec<(Vec<u8>, u64)> {
        self.order
            .iter()
            .map(|(_, m)| (m.clone(), self.scores[m].to_bits()))
            .collect()
    }

    fn remove_ranks(&mut self, start: usize, end: usize) -> usize {
        let doomed: Vec<Vec<u8>> = self
            .order
            .iter()
            .skip(start)
            .take(end.saturating_sub(start))
            .map(|(_, m)| m.clone())
            .collect();
        for m in &doomed {
            self.remove(m);
        }
        doomed.len()
    }
}

/// Scores with many ties, both zeros, infinities, big and narrow integers.
fn score() -> impl Strategy<Value = f64> {
    prop_oneof![
        prop::sample::select(vec![
            f64::NEG_INFINITY,
            -1.5,
            -0.0,
            0.0,
            1.0,
            2.0,
            3.0,
            4_294_967_295.0,
            1e300,
            f64::INFINITY,
            0.1,
        ]),
        (-20i32..20).prop_map(f64::from),
        any::<i32>().prop_map(f64::from),
        (-1e6..1e6f64),
    ]
}

/// Member `idx`: its hex digits, padded from 1024 up so that large sets
/// pass 64 KiB of arena and widen their ids from 16 to 32 bits.
fn member(idx: u16) -> Vec<u8> {
    let pad = if idx >= 1024 {
        20 + usize::from(idx % 7) * 6
    } else {
        0
    };
    format!("{idx:x}{}", "-".repeat(pad)).into_bytes()
}

fn bound() -> impl Strategy<Value = ScoreBound> {
    (score(), any::<bool>()).prop_map(|(value, exclusive)| ScoreBound { value, exclusive })
}

fn lex_bound(space: u16) -> impl Strategy<Value = LexBound> {
    prop_oneof![
        Just(LexBound::NegInf),
        Just(LexBound::PosInf),
        (0..space).prop_map(|i| LexBound::Inclusive(member(i))),
        (0..space).prop_map(|i| LexBound::Exclusive(member(i))),
        Just(LexBound::Inclusive(Vec::new())),
    ]
}

/// Query parameters checked after a step.
#[derive(Clone, Debug)]
struct Probe {
    scores: ScoreRange,
    lex: LexRange,
    ranks: (usize, usize),
}

fn probe(space: u16) -> impl Strategy<Value = Probe> {
    (
        bound(),
        bound(),
        lex_bound(space),
        lex_bound(space),
        0usize..2000,
        0usize..2000,
    )
        .prop_map(|(min, max, lmin, lmax, a, b)| Probe {
            scores: ScoreRange { min, max },
            lex: LexRange {
                min: lmin,
                max: lmax,
            },
            ranks: (a, b),
        })
}

#[derive(Clone, Debug)]
enum Op {
    Insert(u16, f64),
    Remove(u16),
    /// Inserts members `start..start + count` with scores from a seed.
    Bulk(u16, u16, i32),
    /// Removes members `start..start + count` by name.
    RemoveBulk(u16, u16),
    RemoveRanks(usize, usize),
    Optimize(f64),
}

fn op(space: u16, bulk: u16) -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..space, score()).prop_map(|(m, s)| Op::Insert(m, s)),
        3 => (0..space).prop_map(Op::Remove),
        1 => (0..space, 1..bulk, any::<i32>()).prop_map(|(a, n, seed)| Op::Bulk(a, n, seed)),
        1 => (0..space, 1..bulk).prop_map(|(a, n)| Op::RemoveBulk(a, n)),
        1 => (0usize..1500, 0usize..300).prop_map(|(a, n)| Op::RemoveRanks(a, a + n)),
        1 => prop::sample::select(vec![0.5, 0.97, 1.0]).prop_map(Op::Optimize),
    ]
}

fn bulk_score(seed: i32, i: u16) -> f64 {
    match seed.rem_euclid(3) {
        0 => f64::from(seed.wrapping_add(i32::from(i) * 7919)),
        1 => f64::from(i32::from(i) % 5),
        _ => f64::from(seed) / 3.0 + f64::from(i),
    }
}

fn apply(z: &mut ZSet, m: &mut Model, op: &Op, cfg: &Config, space: u16) {
    match *op {
        Op::Insert(i, s) => {
            let got = z.insert(&member(i), s, cfg).map(f64::to_bits);
            assert_eq!(got, m.insert(&member(i), s).map(f64::to_bits), "insert {i}");
        }
        Op::Remove(i) => {
            let got = z.remove(&member(i)).map(f64::to_bits);
            assert_eq!(got, m.remove(&member(i)).map(f64::to_bits), "remove {i}");
        }
        Op::Bulk(start, count, seed) => {
            for k in 0..count {
                let i = (start + k) % space;
                let s = bulk_score(seed, k);
                assert_eq!(
                    z.insert(&member(i), s, cfg).map(f64::to_bits),
                    m.insert(&member(i), s).map(f64::to_bits)
                );
            }
        }
        Op::RemoveBulk(start, count) => {
            for k in 0..count {
                let i = (start + k) % space;
                assert_eq!(
                    z.remove(&member(i)).map(f64::to_bits),
                    m.remove(&member(i)).map(f64::to_bits)
                );
            }
        }
        Op::RemoveRanks(a, b) => {
            let expect = m.remove_ranks(a, b);
            assert_eq!(
                z.remove_rank_range(a..b),
                expect,
                "remove_rank_range {a}..{b}"
            );
        }
        Op::Optimize(d) => z.optimize(d),
    }
}

fn check(z: &ZSet, m: &Model, p: &Probe, space: u16) {
    z.validate();
    let want = m.entries();
    let n = want.len();
    assert_eq!(z.len(), n);
    assert_eq!(z.is_empty(), n == 0);
    let got: Vec<(Vec<u8>, u64)> = z.iter().map(|(k, s)| (k.to_vec(), s.to_bits())).collect();
    assert_eq!(got, want, "ascending iteration");
    let mut back: Vec<(Vec<u8>, u64)> = z
        .iter()
        .rev()
        .map(|(k, s)| (k.to_vec(), s.to_bits()))
        .collect();
    back.reverse();
    assert_eq!(back, want, "descending iteration");
    for (rank, (k, s)) in want.iter().enumerate() {
        assert_eq!(z.score(k).map(f64::to_bits), Some(*s));
        assert_eq!(z.rank(k), Some(rank));
        assert_eq!(
            z.get_by_rank(rank).map(|(k, s)| (k.to_vec(), s.to_bits())),
            Some((k.clone(), *s))
        );
    }
    assert!(z.get_by_rank(n).is_none());
    for i in (0..space).step_by(7) {
        if !m.scores.contains_key(&member(i)) {
            assert_eq!(z.score(&member(i)), None);
            assert_eq!(z.rank(&member(i)), None);
        }
    }
    // Rank windows from both ends.
    let (a, b) = (p.ranks.0 % (n + 2), p.ranks.1 % (n + 2));
    let (lo, hi) = (a.min(b), a.max(b));
    let window: Vec<_> = want
        .iter()
        .skip(lo)
        .take(hi.saturating_sub(lo))
        .cloned()
        .collect();
    let fwd: Vec<_> = z
        .iter_ranks(lo..hi)
        .map(|(k, s)| (k.to_vec(), s.to_bits()))
        .collect();
    assert_eq!(fwd, window, "iter_ranks {lo}..{hi}");
    let mut rev: Vec<_> = z
        .iter_ranks(lo..hi)
        .rev()
        .map(|(k, s)| (k.to_vec(), s.to_bits()))
        .collect();
    rev.reverse();
    assert_eq!(rev, window, "iter_ranks {lo}..{hi} reversed");
    assert_eq!(z.iter_ranks(lo..hi).len(), window.len());
    let mut mixed = z.iter_ranks(lo..hi);
    let mut front = Vec::new();
    let mut tail = Vec::new();
    loop {
        match (mixed.next(), mixed.next_back()) {
            (Some(x), Some(y)) => {
                front.push(x.0.to_vec());
                tail.push(y.0.to_vec());
            }
            (Some(x), None) => front.push(x.0.to_vec()),
            (None, _) => break,
        }
    }
    tail.reverse();
    front.extend(tail);
    assert_eq!(
        front,
        window.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
        "mixed ends"
    );
    // Skipping (ZRANGE ... LIMIT) from both ends, also after stepping.
    let k = (p.ranks.0 ^ p.ranks.1) % (window.len() + 2);
    let keys: Vec<Vec<u8>> = window.iter().map(|(m, _)| m.clone()).collect();
    let skipped: Vec<_> = z
        .iter_ranks(lo..hi)
        .skip(k)
        .map(|(m, _)| m.to_vec())
        .collect();
    assert_eq!(
        skipped,
        keys.iter().skip(k).cloned().collect::<Vec<_>>(),
        "skip {k}"
    );
    let rskipped: Vec<_> = z
        .iter_ranks(lo..hi)
        .rev()
        .skip(k)
        .map(|(m, _)| m.to_vec())
        .collect();
    assert_eq!(
        rskipped,
        keys.iter().rev().skip(k).cloned().collect::<Vec<_>>(),
        "rev skip {k}"
    );
    let mut it = z.iter_ranks(lo..hi);
    let mut model = keys.iter();
    assert_eq!(it.next().map(|e| e.0.to_vec()), model.next().cloned());
    assert_eq!(
        it.nth_back(k / 2).map(|e| e.0.to_vec()),
        model.nth_back(k / 2).cloned()
    );
    assert_eq!(
        it.nth(k / 3).map(|e| e.0.to_vec()),
        model.nth(k / 3).cloned()
    );
    assert_eq!(it.len(), model.len());
    assert_eq!(
        it.map(|e| e.0.to_vec()).collect::<Vec<_>>(),
        model.cloned().collect::<Vec<_>>()
    );
    // Score range.
    let r = &p.scores;
    let start = want
        .iter()
        .filter(|(_, s)| before_start(r, f64::from_bits(*s)))
        .count();
    let end = want
        .iter()
        .filter(|(_, s)| before_end(r, f64::from_bits(*s)))
        .count()
        .max(start);
    assert_eq!(z.score_range_ranks(r), start..end, "score range {r:?}");
    // Lex range: exact when all scores tie, in bounds otherwise.
    let lr = z.lex_range_ranks(&p.lex);
    assert!(lr.start <= lr.end && lr.end <= n);
    let tied = want
        .windows(2)
        .all(|w| Score(f64::from_bits(w[0].1)) == Score(f64::from_bits(w[1].1)));
    if tied {
        let start = want
            .iter()
            .filter(|(k, _)| lex_before_start(&p.lex, k))
            .count();
        let end = want
            .iter()
            .filter(|(k, _)| lex_before_end(&p.lex, k))
            .count()
            .max(start);
        assert_eq!(lr, start..end, "lex range {:?}", p.lex);
    }
}

fn before_start(r: &ScoreRange, s: f64) -> bool {
    if r.min.exclusive {
        s <= r.min.value
    } else {
        s < r.min.value
    }
}

fn before_end(r: &ScoreRange, s: f64) -> bool {
    if r.max.exclusive {
        s < r.max.value
    } else {
        s <= r.max.value
    }
}

fn lex_before_start(r: &LexRange, k: &[u8]) -> bool {
    match &r.min {
        LexBound::NegInf => false,
        LexBound::PosInf => true,
        LexBound::Inclusive(b) => k < b.as_slice(),
        LexBound::Exclusive(b) => k <= b.as_slice(),
    }
}

fn lex_before_end(r: &LexRange, k: &[u8]) -> bool {
    match &r.max {
        LexBound::NegInf => false,
        LexBound::PosInf => true,
        LexBound::Inclusive(b) => k <= b.as_slice(),
        LexBound::Exclusive(b) => k < b.as_slice(),
    }
}

/// Case count: `default`, or `PROPTEST_CASES` for a longer run.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn run(cfg: Config, space: u16, steps: Vec<(Op, Probe)>) {
    let mut z = ZSet::new();
    let mut m = Model::default();
    let mut was_large = false;
    for (op, p) in &steps {
        apply(&mut z, &mut m, op, &cfg, space);
        check(&z, &m, p, space);
        // Encoding follows Redis: large once any new member passed a threshold.
        if z.encoding() == Encoding::Skiplist {
            was_large = true;
        }
        assert_eq!(
            was_large,
            z.encoding() == Encoding::Skiplist,
            "never converts back"
        );
        if !was_large {
            assert!(z.len() <= cfg.max_listpack_entries);
        }
        let copy = z.clone();
        copy.validate();
        assert!(copy.iter().eq(z.iter()));
        // A small set lives on as its packed form (the key table keeps it so).
        if let Some(bytes) = z.packed() {
            let back = ZSet::from_packed(bytes);
            back.validate();
            assert_eq!(back.encoding(), Encoding::Listpack);
            assert!(back.iter().eq(z.iter()));
            // And as its prefixed form when that is smaller.
            let mut prefixed = Vec::new();
            if z.prefixed_into(&mut prefixed) {
                assert!(prefixed.len() < bytes.len());
                let expanded = ZSet::from_prefixed(&prefixed);
                expanded.validate();
                assert!(expanded.iter().eq(z.iter()));
                assert_eq!(expanded.packed(), Some(bytes));
            }
            z = back;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(96)))]

    /// Tiny thresholds: conversions on count (entries = 4) and on length
    /// (value = 2; members reach 3 hex digits).
    #[test]
    fn small_form_and_conversion(steps in prop::collection::vec((op(300, 8), probe(300)), 1..40)) {
        run(Config { max_listpack_entries: 4, max_listpack_value: 2 }, 300, steps);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(16)))]

    /// Default thresholds with bulk steps big enough to split and merge
    /// blocks, compact the arena, resize the member index and (starting
    /// from a preload of up to 2000 mostly padded members) widen ids.
    #[test]
    fn large_form(
        preload in (800u16..2000, 0u16..2000, any::<i32>(), probe(3000)),
        steps in prop::collection::vec((op(3000, 1500), probe(3000)), 1..20),
    ) {
        let (count, start, seed, p) = preload;
        let mut all = vec![(Op::Bulk(start + 1000, count, seed), p)];
        all.extend(steps);
        run(Config::default(), 3000, all);
    }

    /// All scores tie (as 0 and -0), so lex ranges are exact everywhere.
    #[test]
    fn lex_ranges_with_tied_scores(
        ops in prop::collection::vec((0u16..2000, 0u16..600, any::<bool>(), any::<bool>()), 1..20),
        probes in prop::collection::vec(probe(2000), 20),
    ) {
        let cfg = Config { max_listpack_entries: 16, max_listpack_value: 64 };
        let mut z = ZSet::new();
        let mut m = Model::default();
        for ((start, count, negative, removing), p) in ops.iter().zip(&probes) {
            let score = if *negative { -0.0 } else { 0.0 };
            for i in *start..start + count {
                let k = member(i % 2000);
                if *removing {
                    prop_assert_eq!(z.remove(&k).is_some(), m.remove(&k).is_some());
                } else {
                    z.insert(&k, score, &cfg);
                    m.insert(&k, score);
                }
            }
            check(&z, &m, p, 2000);
        }
    }

    /// Members present for a whole scan are returned whatever happens
    /// between steps: inserts, removals, growth, shrinking, optimize.
    #[test]
    fn scan_returns_stable_members(
        stable in 200u16..1500,
        between in prop::collection::vec((0u8..5, 0u16..2000, 1usize..80), 1..60),
    ) {
        let cfg = Config::default();
        let mut z = ZSet::new();
        for i in 0..stable {
            z.insert(format!("s{i}").as_bytes(), f64::from(i), &cfg);
        }
        let mut seen = vec![false; stable as usize];
        let mut cursor = 0;
        let mut step = 0;
        loop {
            let (action, n, count) = between[step % between.len()];
            let mut out = Vec::new();
            cursor = z.scan(cursor, count, &mut out);
            for (k, _) in out {
                if let Some(i) = std::str::from_utf8(&k).unwrap().strip_prefix('s') {
                    seen[i.parse::<usize>().unwrap()] = true;
                }
            }
            if cursor == 0 {
                break;
            }
            match action {
                0 => (0..n).for_each(|i| { z.insert(format!("v{i}").as_bytes(), 1.0, &cfg); }),
                1 => (0..n).for_each(|i| { z.remove(format!("v{i}").as_bytes()); }),
                2 => z.optimize(0.97),
                3 => z.optimize(1.0),
                _ => (0..n).for_each(|i| { z.insert(format!("s{}", i % stable).as_bytes(), -1.0, &cfg); }),
            }
            step += 1;
            prop_assert!(step < 100_000, "scan terminates");
        }
        z.validate();
        prop_assert!(seen.iter().all(|&s| s), "every stable member returned");
    }
}

#[test]
fn hundred_thousand_members() {
    let cfg = Config::default();
    let mut z = ZSet::with_expected(100_000, 8, 0, &cfg);
    assert_eq!(z.encoding(), Encoding::Skiplist);
    for i in 0..100_000u32 {
        z.insert(
            i.to_string().as_bytes(),
            f64::from(i.wrapping_mul(2_654_435_761) % 1000),
            &cfg,
        );
    }
    z.validate();
    for i in (0..100_000u32).step_by(2) {
        assert!(z.remove(i.to_string().as_bytes()).is_some());
    }
    z.validate();
    assert_eq!(z.len(), 50_000);
    z.optimize(0.97);
    z.validate();
    let mut prev = None;
    for (k, s) in z.iter() {
        if let Some((pk, ps)) = prev {
            assert!((ps, pk) < (s, k.to_vec()));
        }
        prev = Some((k.to_vec(), s));
    }
    assert_eq!(z.remove_rank_range(10..40_000), 39_990);
    z.validate();
    let mut out = Vec::new();
    let mut cursor = 0;
    loop {
        cursor = z.scan(cursor, 100, &mut out);
        if cursor == 0 {
            break;
        }
    }
    assert_eq!(out.len(), z.len());
}
