//! Unit tests of the hash forms' conversions, and a property test against a model.

use super::*;
use proptest::prelude::*;
use std::collections::HashMap;

fn small_cfg() -> HashConfig {
    HashConfig {
        max_listpack_entries: 3,
        max_listpack_value: 5,
    }
}

fn pairs(h: &Hash) -> Vec<(Vec<u8>, Vec<u8>)> {
    h.iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect()
}

#[test]
fn listpack_keeps_order_and_converts_on_count() {
    let cfg = small_cfg();
    let mut h = Hash::new();
    assert!(h.set(b"b", b"1", &cfg));
    assert!(h.set(b"a", b"2", &cfg));
    assert!(h.set(b"c", b"3", &cfg));
    assert!(!h.set(b"b", b"10", &cfg), "an update keeps the position");
    assert_eq!(h.encoding(), HashEncoding::Listpack);
    assert_eq!(
        pairs(&h),
        [
            (b"b".to_vec(), b"10".to_vec()),
            (b"a".to_vec(), b"2".to_vec()),
            (b"c".to_vec(), b"3".to_vec())
        ]
    );
    assert!(
        h.set(b"d", b"4", &cfg),
        "the fourth pair overflows 3 entries"
    );
    assert_eq!(h.encoding(), HashEncoding::Hashtable);
    assert_eq!(h.len(), 4);
    assert_eq!(h.get(b"b"), Some(&b"10"[..]));
    for f in [&b"a"[..], b"b", b"c"] {
        assert!(h.remove(f));
    }
    assert_eq!(h.encoding(), HashEncoding::Hashtable, "never converts back");
    h.validate();
}

#[test]
fn long_field_or_value_converts_even_on_update() {
    let cfg = small_cfg();
    let mut h = Hash::new();
    h.set(b"f", b"v", &cfg);
    h.set(b"fffff", b"vvvvv", &cfg);
    assert_eq!(
        h.encoding(),
        HashEncoding::Listpack,
        "5 bytes is at the limit"
    );
    h.set(b"f", b"vvvvvv", &cfg);
    assert_eq!(h.encoding(), HashEncoding::Hashtable);
    let mut h = Hash::new();
    h.set(b"ffffff", b"v", &cfg);
    assert_eq!(h.encoding(), HashEncoding::Hashtable);
    assert_eq!(h.get(b"ffffff"), Some(&b"v"[..]));
}

#[test]
fn maybe_convert_counts_incoming_pairs() {
    let cfg = small_cfg();
    let mut h = Hash::new();
    h.set(b"a", b"1", &cfg);
    h.maybe_convert(3, &cfg);
    assert_eq!(h.encoding(), HashEncoding::Listpack);
    h.maybe_convert(4, &cfg);
    assert_eq!(h.encoding(), HashEncoding::Hashtable);
    assert_eq!(h.get(b"a"), Some(&b"1"[..]));
    assert_eq!(
        Hash::with_expected(3, &cfg).encoding(),
        HashEncoding::Listpack
    );
    assert_eq!(
        Hash::with_expected(4, &cfg).encoding(),
        HashEncoding::Hashtable
    );
}

#[test]
fn scan_and_random_cover_both_forms() {
    let cfg = HashConfig::default();
    for n in [5usize, 1000] {
        let mut h = Hash::new();
        for i in 0..n {
            h.set(format!("f{i}").as_bytes(), format!("v{i}").as_bytes(), &cfg);
        }
        let mut seen = HashMap::new();
        let mut cursor = 0;
        loop {
            cursor = h.scan(cursor, 10, |f, v, _| {
                assert!(seen.insert(f.to_vec(), v.to_vec()).is_none());
            });
            if cursor == 0 {
                break;
            }
        }
        assert_eq!(seen.len(), n);
        for seed in 0..50 {
            let (f, v) = h.random(seed);
            assert_eq!(h.get(f), Some(v));
        }
    }
}

#[test]
fn inline_size_is_16_bytes() {
    assert_eq!(std::mem::size_of::<Hash>(), 16);
}

#[derive(Debug, Clone)]
enum Op {
    Set(u8, Vec<u8>),
    Remove(u8),
    Convert(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..40, proptest::collection::vec(any::<u8>(), 0..9)).prop_map(|(f, v)| Op::Set(f, v)),
        2 => (0u8..40).prop_map(Op::Remove),
        1 => (0usize..8).prop_map(Op::Convert),
    ]
}

/// Field `i` as bytes; some are longer than the small config's value limit.
fn field(i: u8) -> Vec<u8> {
    if i.is_multiple_of(7) {
        format!("long-field-{i}").into_bytes()
    } else {
        vec![b'a' + i % 26; 1 + usize::from(i / 26)]
    }
}

proptest! {
    #[test]
    fn matches_a_hashmap_model(ops in proptest::collection::vec(op(), 1..300)) {
        let cfg = small_cfg();
        let mut h = Hash::new();
        let mut model: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
        let mut ever_large = false;
        for op in ops {
            match op {
                Op::Set(f, v) => {
                    let f = field(f);
                    let fits = f.len() <= cfg.max_listpack_value && v.len() <= cfg.max_listpack_value;
                    let added = model.insert(f.clone(), v.clone()).is_none();
                    prop_assert_eq!(h.set(&f, &v, &cfg), added);
                    ever_large |= !fits || model.len() > cfg.max_listpack_entries;
                }
                Op::Remove(f) => {
                    let f = field(f);
                    prop_assert_eq!(h.remove(&f), model.remove(&f).is_some());
                }
                Op::Convert(n) => {
                    h.maybe_convert(n, &cfg);
                    ever_large |= n > cfg.max_listpack_entries;
                }
            }
            let expected = if ever_large { HashEncoding::Hashtable } else { HashEncoding::Listpack };
            prop_assert_eq!(h.encoding(), expected);
            prop_assert_eq!(h.len(), model.len());
        }
        h.validate();
        for (f, v) in &model {
            prop_assert_eq!(h.get(f), Some(v.as_slice()));
        }
        let got: HashMap<Vec<u8>, Vec<u8>> = pairs(&h).into_iter().collect();
        prop_assert_eq!(got, model);
    }
}

#[test]
fn packed_bytes_rebuild_the_same_listpack() {
    let cfg = small_cfg();
    let mut h = Hash::new();
    assert_eq!(pairs(&Hash::from_packed(h.packed().unwrap())), pairs(&h));
    for i in 0..3u32 {
        h.set(format!("f{i}").as_bytes(), format!("v{i}").as_bytes(), &cfg);
    }
    let back = Hash::from_packed(h.packed().unwrap());
    assert_eq!(pairs(&back), pairs(&h));
    assert_eq!(back.encoding(), HashEncoding::Listpack);
    assert_eq!(back.memory_bytes(), h.memory_bytes());
    h.set(&[b'x'; 100], b"long", &cfg);
    assert!(h.packed().is_none(), "a hashtable has no listpack");
}

#[derive(Debug, Clone)]
enum TtlOp {
    Set(u8, Vec<u8>),
    SetKeepTtl(u8, Vec<u8>),
    Remove(u8),
    Expire(u8, Option<u64>),
    TakeExpired(u64, usize),
}

fn ttl_op() -> impl Strategy<Value = TtlOp> {
    let value = proptest::collection::vec(any::<u8>(), 0..7);
    prop_oneof![
        4 => (0u8..30, value.clone()).prop_map(|(f, v)| TtlOp::Set(f, v)),
        1 => (0u8..30, value).prop_map(|(f, v)| TtlOp::SetKeepTtl(f, v)),
        1 => (0u8..30).prop_map(TtlOp::Remove),
        4 => (0u8..30, proptest::option::weighted(0.8, 1u64..60)).prop_map(|(f, t)| TtlOp::Expire(f, t)),
        1 => (0u64..60, 1usize..6).prop_map(|(n, m)| TtlOp::TakeExpired(n, m)),
    ]
}

type TtlModel = HashMap<Vec<u8>, (Vec<u8>, Option<u64>)>;

proptest! {
    #[test]
    fn field_expiry_matches_a_model(ops in proptest::collection::vec(ttl_op(), 1..300)) {
        let cfg = HashConfig { max_listpack_entries: 8, max_listpack_value: 5 };
        let mut h = Hash::new();
        h.enable_field_expiry();
        let mut model: TtlModel = HashMap::new();
        for op in ops {
            match op {
                TtlOp::Set(f, v) => {
                    let f = field(f);
                    let added = model.insert(f.clone(), (v.clone(), None)).is_none();
                    prop_assert_eq!(h.set(&f, &v, &cfg), added);
                }
                TtlOp::SetKeepTtl(f, v) => {
                    let f = field(f);
                    let ttl = model.get(&f).and_then(|e| e.1);
                    let added = model.insert(f.clone(), (v.clone(), ttl)).is_none();
                    prop_assert_eq!(h.set_keep_ttl(&f, &v, &cfg), added);
                }
                TtlOp::Remove(f) => {
                    let f = field(f);
                    prop_assert_eq!(h.remove(&f), model.remove(&f).is_some());
                }
                TtlOp::Expire(f, t) => {
                    let f = field(f);
                    let held = match model.get_mut(&f) {
                        Some(e) => { e.1 = t; true }
                        None => false,
                    };
                    prop_assert_eq!(h.set_field_expiry(&f, t), held);
                }
                TtlOp::TakeExpired(now, max) => {
                    let due: Vec<u64> = model.values().filter_map(|e| e.1.filter(|&t| t <= now)).collect();
                    let taken = h.take_expired(now, max);
                    prop_assert_eq!(taken.len(), due.len().min(max));
                    let mut latest = 0;
                    for f in &taken {
                        let t = model.remove(f).and_then(|e| e.1);
                        prop_assert!(t.is_some_and(|t| t <= now), "taken but not due");
                        latest = latest.max(t.unwrap_or(0));
                    }
                    for e in model.values() {
                        prop_assert!(e.1.is_none_or(|t| t >= latest), "a due field left behind an earlier one taken");
                    }
                }
            }
            prop_assert_eq!(h.len(), model.len());
            prop_assert_eq!(h.min_field_expiry(), model.values().filter_map(|e| e.1).min());
            prop_assert!(h.encoding() != HashEncoding::Listpack, "stays able to keep times");
        }
        h.validate();
        if let Some(bytes) = h.packed() {
            Hash::from_packed(bytes).validate();
        }
        let got: TtlModel = h
            .iter_with_expiry()
            .map(|(f, v, t)| (f.to_vec(), (v.to_vec(), t)))
            .collect();
        prop_assert_eq!(&got, &model);
        for (f, (v, t)) in &model {
            prop_assert_eq!(h.get_with_expiry(f), Some((v.as_slice(), *t)));
        }
        let now = 30;
        let alive = model.values().filter(|e| field_alive(e.1, now)).count();
        prop_assert_eq!(h.live_len(now), alive);
    }
}

#[test]
fn a_hash_without_times_costs_what_it_did() {
    let cfg = HashConfig::default();
    let mut plain = Hash::new();
    let mut ex = Hash::new();
    ex.enable_field_expiry();
    for i in 0..10 {
        plain.set(format!("f{i}").as_bytes(), b"v", &cfg);
        ex.set(format!("f{i}").as_bytes(), b"v", &cfg);
    }
    assert_eq!(ex.memory_bytes(), plain.memory_bytes());
    assert_eq!(ex.encoding(), HashEncoding::ListpackEx);
    ex.set_field_expiry(b"f3", Some(1_700_000_000_000));
    assert_eq!(
        ex.memory_bytes(),
        plain.memory_bytes() + 7,
        "7 bytes for one time"
    );
}
