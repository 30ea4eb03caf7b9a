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
            cursor = h.scan(cursor, 10, |f, v| {
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
