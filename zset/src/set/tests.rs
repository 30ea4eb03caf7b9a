//! Unit tests of the set forms' conversions, and a property test against a model.

use super::*;
use proptest::prelude::*;
use std::collections::BTreeSet;

fn small_cfg() -> SetConfig {
    SetConfig {
        max_intset_entries: 4,
        max_listpack_entries: 3,
        max_listpack_value: 5,
    }
}

fn members(s: &Set) -> Vec<Vec<u8>> {
    s.iter().map(Member::to_vec).collect()
}

#[test]
fn create_picks_redis_forms() {
    let cfg = SetConfig::default();
    assert_eq!(Set::create(b"1", 512, &cfg).encoding(), SetEncoding::Intset);
    assert_eq!(
        Set::create(b"1", 513, &cfg).encoding(),
        SetEncoding::Hashtable
    );
    assert_eq!(
        Set::create(b"a", 128, &cfg).encoding(),
        SetEncoding::Listpack
    );
    assert_eq!(
        Set::create(b"a", 129, &cfg).encoding(),
        SetEncoding::Hashtable
    );
    assert_eq!(
        Set::create(b"01", 1, &cfg).encoding(),
        SetEncoding::Listpack
    );
}

#[test]
fn intset_converts_to_listpack_or_hashtable() {
    let cfg = small_cfg();
    let mut s = Set::new_intset();
    assert!(s.add(b"3", &cfg));
    assert!(s.add(b"-1", &cfg));
    assert!(!s.add(b"3", &cfg));
    assert_eq!(members(&s), [b"-1".to_vec(), b"3".to_vec()], "ascending");
    assert!(s.add(b"x", &cfg));
    assert_eq!(s.encoding(), SetEncoding::Listpack);
    assert_eq!(members(&s), [&b"-1"[..], b"3", b"x"]);
    assert!(s.add(b"y", &cfg), "the fourth member overflows 3 entries");
    assert_eq!(s.encoding(), SetEncoding::Hashtable);
    assert_eq!(s.len(), 4);

    let mut full = Set::new_intset();
    for m in ["1", "2", "3"] {
        full.add(m.as_bytes(), &cfg);
    }
    full.add(b"z", &cfg);
    assert_eq!(
        full.encoding(),
        SetEncoding::Hashtable,
        "3 ints + 1 > 3 entries"
    );

    let mut wide = Set::new_intset();
    wide.add(b"-100000", &cfg);
    wide.add(b"a", &cfg);
    assert_eq!(
        wide.encoding(),
        SetEncoding::Hashtable,
        "7 digits > 5 bytes"
    );

    let mut many = Set::new_intset();
    for i in 0..5 {
        many.add(i.to_string().as_bytes(), &cfg);
    }
    assert_eq!(many.encoding(), SetEncoding::Hashtable, "past 4 integers");
    many.validate();
}

#[test]
fn listpack_limits_and_maybe_convert() {
    let cfg = small_cfg();
    let mut s = Set::new_listpack();
    s.add(b"abcde", &cfg);
    assert_eq!(s.encoding(), SetEncoding::Listpack);
    s.add(b"abcdef", &cfg);
    assert_eq!(s.encoding(), SetEncoding::Hashtable);

    let mut t = Set::new_listpack();
    t.add(b"a", &cfg);
    t.maybe_convert(3, &cfg);
    assert_eq!(t.encoding(), SetEncoding::Listpack);
    t.maybe_convert(4, &cfg);
    assert_eq!(t.encoding(), SetEncoding::Hashtable);
    let mut i = Set::new_intset();
    i.maybe_convert(5, &cfg);
    assert_eq!(i.encoding(), SetEncoding::Hashtable);
}

#[test]
fn back_to_intset_when_all_integers() {
    let cfg = small_cfg();
    let mut s = Set::new_listpack();
    for m in ["9", "-2", "5"] {
        s.add(m.as_bytes(), &cfg);
    }
    s.maybe_convert_to_intset(&cfg);
    assert_eq!(s.encoding(), SetEncoding::Intset);
    assert_eq!(members(&s), [&b"-2"[..], b"5", b"9"]);
    let mut mixed = Set::new_listpack();
    mixed.add(b"1", &cfg);
    mixed.add(b"01", &cfg);
    mixed.maybe_convert_to_intset(&cfg);
    assert_eq!(mixed.encoding(), SetEncoding::Listpack);
}

#[test]
fn intset_blob_round_trip() {
    let cfg = SetConfig::default();
    let mut s = Set::new_intset();
    for v in [1, 40_000, -7] {
        s.add(v.to_string().as_bytes(), &cfg);
    }
    let (w, c) = s.intset_contents().unwrap();
    assert_eq!(w, 4);
    let back = Set::from_intset_contents(w, c, &cfg).unwrap();
    assert_eq!(members(&back), members(&s));
    let few = SetConfig {
        max_intset_entries: 2,
        ..cfg
    };
    let big = Set::from_intset_contents(w, c, &few).unwrap();
    assert_eq!(big.encoding(), SetEncoding::Hashtable);
}

#[test]
fn inline_size_is_24_bytes() {
    assert_eq!(std::mem::size_of::<Set>(), 24);
}

#[derive(Clone, Debug)]
enum Op {
    Add(Vec<u8>),
    Remove(Vec<u8>),
    Pop(u64),
    Hint(usize),
}

fn member() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        (-40i64..40).prop_map(|v| v.to_string().into_bytes()),
        Just(b"70000".to_vec()),
        Just(b"-9223372036854775808".to_vec()),
        "[a-c]{1,7}".prop_map(String::into_bytes),
        Just(b"007".to_vec()),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => member().prop_map(Op::Add),
        3 => member().prop_map(Op::Remove),
        1 => any::<u64>().prop_map(Op::Pop),
        1 => (0usize..8).prop_map(Op::Hint),
    ]
}

proptest! {
    #[test]
    fn behaves_like_a_set(ops in proptest::collection::vec(op(), 1..200)) {
        let cfg = small_cfg();
        let mut set = Set::new_intset();
        let mut model = BTreeSet::new();
        // The listpack keeps insertion order; the model of it is a Vec.
        let mut order: Vec<Vec<u8>> = Vec::new();
        for op in ops {
            match op {
                Op::Add(m) => {
                    prop_assert_eq!(set.add(&m, &cfg), model.insert(m.clone()));
                    if !order.contains(&m) { order.push(m); }
                }
                Op::Remove(m) => {
                    prop_assert_eq!(set.remove(&m), model.remove(&m));
                    order.retain(|x| *x != m);
                }
                Op::Pop(seed) => {
                    if !model.is_empty() {
                        let m = set.pop_random(seed);
                        prop_assert!(model.remove(&m));
                        order.retain(|x| *x != m);
                    }
                }
                Op::Hint(n) => set.maybe_convert(n, &cfg),
            }
            set.validate();
            prop_assert_eq!(set.len(), model.len());
            let got: BTreeSet<Vec<u8>> = members(&set).into_iter().collect();
            prop_assert_eq!(&got, &model);
            match set.encoding() {
                SetEncoding::Intset => {
                    prop_assert!(model.len() <= cfg.max_intset_entries);
                    let ints: Vec<i64> = members(&set).iter().map(|m| parse_int(m).unwrap()).collect();
                    prop_assert!(ints.windows(2).all(|w| w[0] < w[1]));
                    order = members(&set);
                }
                SetEncoding::Listpack => {
                    prop_assert!(model.len() <= cfg.max_listpack_entries);
                    prop_assert_eq!(members(&set), order.clone());
                }
                SetEncoding::Hashtable => {}
            }
            if !model.is_empty() {
                let r = set.random(7).to_vec();
                prop_assert!(model.contains(&r));
            }
            for m in &model {
                prop_assert!(set.contains(m));
            }
            // A small set lives on as its packed form (the key table keeps it so).
            if let Some((form, bytes)) = set.packed() {
                let back = Set::from_packed(form, bytes);
                prop_assert_eq!(members(&back), members(&set));
                prop_assert_eq!(back.encoding(), set.encoding());
                prop_assert!(bytes.len() < set.memory_bytes() || set.encoding() == SetEncoding::Intset);
                set = back;
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn listpack_entries_take_adds_as_the_set_does(
        members in proptest::collection::vec(proptest::collection::vec(b'a'..b'e', 1..4), 1..8),
        member in proptest::collection::vec(b'a'..b'g', 1..7),
        max in 1usize..8,
    ) {
        let cfg = SetConfig { max_intset_entries: 4, max_listpack_entries: max, max_listpack_value: 5 };
        let mut set = Set::create(b"x", 1, &cfg);
        set.remove(b"x");
        for m in &members {
            set.add(m, &cfg);
        }
        let Some((PackedSet::Listpack, entries)) = set.packed() else {
            return Ok(());
        };
        let entries = entries.to_vec();
        let mut out = vec![7];
        let got = add_to_listpack_entries(&entries, &member, &cfg, &mut out);
        let added = set.add(&member, &cfg);
        match got {
            RecordAdd::Held => {
                prop_assert!(!added);
                prop_assert_eq!(out, vec![7]);
            }
            RecordAdd::Added => {
                prop_assert!(added);
                prop_assert_eq!(set.packed(), Some((PackedSet::Listpack, &out[..])));
            }
            RecordAdd::Declined => {
                prop_assert!(added);
                prop_assert_eq!(out, vec![7]);
                prop_assert_ne!(set.encoding(), SetEncoding::Listpack);
            }
        }
    }
}
