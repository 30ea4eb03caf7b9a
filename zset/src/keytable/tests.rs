//! The key table against a model (a HashMap), and its own invariants.

use super::*;
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

/// A value as the model keeps it; heap values are `u64`s.
#[derive(Clone, Debug, PartialEq)]
enum MV {
    Int(i64),
    Str(Vec<u8>, bool),
    Heap(u64),
    Packed(u8, Vec<u8>),
}

impl MV {
    fn value(&self) -> Value<'_, u64> {
        match self {
            MV::Int(v) => Value::Int(*v),
            MV::Str(b, f) => Value::Str(b, *f),
            MV::Packed(t, b) => Value::Packed(*t, b),
            MV::Heap(h) => Value::Heap(*h),
        }
    }

    fn heap(&self) -> Option<u64> {
        match self {
            MV::Heap(h) => Some(*h),
            _ => None,
        }
    }

    fn of(v: ValueRef<'_, u64>) -> MV {
        match v {
            ValueRef::Int(v) => MV::Int(v),
            ValueRef::Str(b, f) => MV::Str(b.to_vec(), f),
            ValueRef::Packed(t, b) => MV::Packed(t, b.to_vec()),
            ValueRef::Heap(h) => MV::Heap(*h),
        }
    }

    fn of_owned(v: Owned<u64>) -> MV {
        match v {
            Owned::Int(v) => MV::Int(v),
            Owned::Str(b, f) => MV::Str(b, f),
            Owned::Packed(t, b) => MV::Packed(t, b),
            Owned::Heap(h) => MV::Heap(h),
        }
    }
}

/// What the model knows of a key: value, expiry, clock.
type Model = HashMap<Vec<u8>, (MV, Option<u64>, u32)>;

impl<T> KeyTable<T> {
    /// Checks the table's invariants: the index, the volatile list and the value slab.
    fn check(&self) {
        let store = &self.store;
        self.index.validate(|h| key_hash(store, h));
        for (pos, &h) in self.volatile.iter().enumerate() {
            let (_, p) = self
                .record(h)
                .expiry()
                .expect("listed records are volatile");
            assert_eq!(p as usize, pos, "volatile position");
        }
        let volatile = self.iter().filter(|e| e.expire_at().is_some()).count();
        assert_eq!(volatile, self.volatile.len());
        let heap = self
            .iter()
            .filter(|e| matches!(e.value(), ValueRef::Heap(_)))
            .count();
        assert_eq!(heap, self.values.iter().flatten().count());
        assert_eq!(
            self.values.len() - heap,
            self.values_free.len(),
            "free slab slots"
        );
    }
}

/// The key of number `k`: short ones, one empty, and some longer than a paged slot.
fn key(k: u16) -> Vec<u8> {
    match k % 23 {
        0 if k == 0 => Vec::new(),
        1 => format!("long{k}").repeat(60).into_bytes(),
        _ => format!("key:{k:012}").into_bytes(),
    }
}

fn value_strategy() -> impl Strategy<Value = MV> {
    prop_oneof![
        any::<i8>().prop_map(|v| MV::Int(v as i64)),
        any::<i32>().prop_map(|v| MV::Int(v as i64)),
        any::<i64>().prop_map(MV::Int),
        (
            prop::collection::vec(any::<u8>(), 0..=STR_MAX),
            any::<bool>()
        )
            .prop_map(|(b, f)| MV::Str(b, f)),
        any::<u64>().prop_map(MV::Heap),
        (
            0..PACKED_TAGS,
            prop::collection::vec(any::<u8>(), 0..=STR_MAX)
        )
            .prop_map(|(t, b)| MV::Packed(t, b)),
    ]
}

#[derive(Clone, Debug)]
enum Op {
    Insert(u16, MV, u32),
    SetValue(u16, MV),
    /// A packed value written with `set_packed`.
    SetPacked(u16, u8, Vec<u8>),
    AddToHeap(u16, u64),
    /// INCRBY on the record's int.
    AddToInt(u16, i64),
    Remove(u16),
    Discard(u16),
    SetExpiry(u16, u64),
    ClearExpiry(u16),
    SetClock(u16, u32),
    /// A lookup compared with the model.
    Lookup(u16),
    /// A cron step of an index resize, moving up to this many groups.
    RehashStep(u8),
    /// Iteration (and every lookup) compared with the model.
    Check,
}

fn op_strategy(keys: u16) -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..keys, value_strategy(), any::<u32>()).prop_map(|(k, v, c)| Op::Insert(k, v, c)),
        2 => (0..keys, value_strategy()).prop_map(|(k, v)| Op::SetValue(k, v)),
        2 => (0..keys, 0..PACKED_TAGS, prop::collection::vec(any::<u8>(), 0..=STR_MAX))
            .prop_map(|(k, t, b)| Op::SetPacked(k, t, b)),
        1 => (0..keys, any::<u64>()).prop_map(|(k, n)| Op::AddToHeap(k, n)),
        2 => (0..keys, prop_oneof![-300i64..300, any::<i64>()]).prop_map(|(k, n)| Op::AddToInt(k, n)),
        2 => (0..keys).prop_map(Op::Remove),
        1 => (0..keys).prop_map(Op::Discard),
        2 => (0..keys, 1..u64::MAX).prop_map(|(k, at)| Op::SetExpiry(k, at)),
        1 => (0..keys).prop_map(Op::ClearExpiry),
        1 => (0..keys, any::<u32>()).prop_map(|(k, c)| Op::SetClock(k, c)),
        2 => (0..keys).prop_map(Op::Lookup),
        1 => (0..4u8).prop_map(Op::RehashStep),
        1 => Just(Op::Check),
    ]
}

/// Applies `op` to both and compares what they answer.
fn apply(t: &mut KeyTable<u64>, m: &mut Model, op: &Op) {
    match op {
        Op::Insert(k, v, c) => {
            let k = key(*k);
            let old = t.insert(&k, v.value(), *c);
            let was = m.insert(k, (v.clone(), None, c & CLOCK_MAX));
            assert_eq!(old, was.and_then(|(v, _, _)| v.heap()));
        }
        Op::SetValue(k, v) => {
            let k = key(*k);
            if let Some(slot) = t.find(&k) {
                let old = t.set_value(slot, v.value());
                let e = m.get_mut(&k).expect("model has it");
                assert_eq!(old, std::mem::replace(&mut e.0, v.clone()).heap());
            }
        }
        Op::SetPacked(k, tag, b) => {
            let k = key(*k);
            if let Some(slot) = t.find(&k) {
                let old = t.set_packed(slot, *tag, b);
                let e = m.get_mut(&k).expect("model has it");
                let v = MV::Packed(*tag, b.clone());
                assert_eq!(old, std::mem::replace(&mut e.0, v).heap());
            }
        }
        Op::AddToHeap(k, n) => {
            let k = key(*k);
            if let Some(slot) = t.find(&k) {
                let e = m.get_mut(&k).expect("model has it");
                let kind = match &e.0 {
                    MV::Int(_) => Kind::Int,
                    MV::Str(..) => Kind::Str,
                    MV::Heap(_) => Kind::Heap,
                    MV::Packed(tag, _) => Kind::Packed(*tag),
                };
                assert_eq!(t.kind(slot), kind);
                let heap = t.heap_mut(slot).map(|h| *h);
                assert_eq!(
                    heap,
                    if let MV::Heap(h) = &e.0 {
                        Some(*h)
                    } else {
                        None
                    }
                );
                match (t.heap_mut_with_expiry(slot), &mut e.0) {
                    (Some((h, at)), MV::Heap(mh)) => {
                        assert_eq!(at, e.1);
                        *h = h.wrapping_add(*n);
                        *mh = mh.wrapping_add(*n);
                    }
                    (None, MV::Int(_) | MV::Str(..) | MV::Packed(..)) => {}
                    (got, want) => panic!("heap_mut_with_expiry {got:?} for {want:?}"),
                }
            }
        }
        Op::AddToInt(k, n) => {
            let k = key(*k);
            if let Some(slot) = t.find(&k) {
                let e = m.get_mut(&k).expect("model has it");
                let want = match &mut e.0 {
                    MV::Int(v) => {
                        let sum = v.checked_add(*n);
                        *v = sum.unwrap_or(*v);
                        Some(sum)
                    }
                    _ => None,
                };
                assert_eq!(t.add_to_int(slot, *n), want);
            }
        }
        Op::Remove(k) => {
            let k = key(*k);
            let got = t.remove(&k).map(|r| (MV::of_owned(r.value), r.expire_at));
            let want = m.remove(&k).map(|(v, at, _)| (v, at));
            assert_eq!(got, want);
        }
        Op::Discard(k) => {
            let k = key(*k);
            let got = t.find(&k).map(|slot| t.discard_slot(slot));
            let want = m.remove(&k).map(|(v, _, _)| v.heap());
            assert_eq!(got, want);
        }
        Op::SetExpiry(k, at) => {
            let k = key(*k);
            if let Some(slot) = t.find(&k) {
                t.set_expiry(slot, *at);
                m.get_mut(&k).expect("model has it").1 = Some(*at);
            }
        }
        Op::ClearExpiry(k) => {
            let k = key(*k);
            if let Some(slot) = t.find(&k) {
                let had = t.clear_expiry(slot);
                let e = m.get_mut(&k).expect("model has it");
                assert_eq!(had, e.1.take().is_some());
            }
        }
        Op::SetClock(k, c) => {
            let k = key(*k);
            if let Some(slot) = t.find(&k) {
                t.set_clock(slot, *c);
                m.get_mut(&k).expect("model has it").2 = c & CLOCK_MAX;
            }
        }
        Op::Lookup(k) => {
            let k = key(*k);
            let got = t
                .get(&k)
                .map(|e| (MV::of(e.value()), e.expire_at(), e.clock()));
            assert_eq!(
                got.as_ref(),
                m.get(&k).map(|(v, at, c)| (v.clone(), *at, *c)).as_ref()
            );
        }
        Op::RehashStep(n) => {
            t.rehash_step(*n as usize);
        }
        Op::Check => same(t, m),
    }
    assert_eq!(t.len(), m.len());
    assert_eq!(
        t.volatile_len(),
        m.values().filter(|e| e.1.is_some()).count()
    );
}

/// Every key of the model is in the table with its value, expiry and clock, and nothing
/// else is.
fn same(t: &KeyTable<u64>, m: &Model) {
    t.check();
    let mut seen = 0;
    for e in t.iter() {
        let (v, at, c) = m.get(e.key()).expect("table key in the model");
        assert_eq!((&MV::of(e.value()), e.expire_at(), e.clock()), (v, *at, *c));
        seen += 1;
    }
    assert_eq!(seen, m.len());
    for k in m.keys() {
        assert_eq!(t.get(k).expect("model key in the table").key(), &k[..]);
    }
    let volatile: HashSet<Vec<u8>> = (0..t.volatile_len())
        .map(|n| t.volatile_entry(n).expect("in range").key().to_vec())
        .collect();
    let want: HashSet<Vec<u8>> = m
        .iter()
        .filter(|(_, e)| e.1.is_some())
        .map(|(k, _)| k.clone())
        .collect();
    assert_eq!(volatile, want);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn behaves_as_a_hash_map(ops in prop::collection::vec(op_strategy(300), 1..1500)) {
        let mut t = KeyTable::default();
        let mut m = Model::new();
        for op in &ops {
            apply(&mut t, &mut m, op);
        }
        same(&t, &m);
        // Remove everything: the table shrinks back and stays consistent.
        let keys: Vec<Vec<u8>> = m.keys().cloned().collect();
        for k in keys {
            prop_assert!(t.remove(&k).is_some());
        }
        m.clear();
        same(&t, &m);
    }

    #[test]
    fn scan_returns_every_stable_key_once(
        stable in 1u16..400,
        churn in prop::collection::vec(op_strategy(2000), 0..800),
        counts in prop::collection::vec(1usize..40, 1..200),
    ) {
        // Keys 0..stable stay for the whole scan (their values, expiries and clocks may
        // change, moving their records); keys from 2000 on come and go.
        let mut t = KeyTable::default();
        let mut m = Model::new();
        for k in 0..stable {
            apply(&mut t, &mut m, &Op::Insert(k, MV::Int(k as i64), 0));
        }
        let mut seen: HashMap<Vec<u8>, usize> = HashMap::new();
        let (mut cursor, mut churn) = (0, churn.into_iter());
        for count in counts.iter().cycle() {
            cursor = t.scan(cursor, *count, |e| *seen.entry(e.key().to_vec()).or_default() += 1);
            if cursor == 0 {
                break;
            }
            for op in churn.by_ref().take(4) {
                let op = match op {
                    // Stable keys are never removed or replaced by an insert.
                    Op::Remove(k) | Op::Discard(k) | Op::Insert(k, ..) if k < stable => continue,
                    Op::Remove(k) => Op::Remove(k + 2000),
                    Op::Discard(k) => Op::Discard(k + 2000),
                    Op::Insert(k, v, c) => Op::Insert(k + 2000, v, c),
                    other => other,
                };
                apply(&mut t, &mut m, &op);
            }
        }
        for k in 0..stable {
            prop_assert_eq!(seen.get(&key(k)).copied(), Some(1), "key {}", k);
        }
        for (k, n) in &seen {
            prop_assert!(*n == 1, "{:?} seen {} times", k, n);
        }
        same(&t, &m);
    }

    #[test]
    fn random_draws_come_from_the_table(
        ops in prop::collection::vec(op_strategy(60), 1..300),
        seeds in prop::collection::vec(any::<u64>(), 1..50),
    ) {
        let mut t = KeyTable::default();
        let mut m = Model::new();
        for op in &ops {
            apply(&mut t, &mut m, op);
        }
        for seed in seeds {
            match t.random_entry(seed) {
                Some(e) => prop_assert!(m.contains_key(e.key())),
                None => prop_assert!(m.is_empty()),
            }
            match t.volatile_entry(seed as usize) {
                Some(e) => prop_assert!(m[e.key()].1.is_some()),
                None => prop_assert_eq!(t.volatile_len(), 0),
            }
        }
    }
}

#[test]
fn random_draws_reach_every_key() {
    let mut t = KeyTable::<u64>::default();
    for k in 0..50 {
        t.insert(&key(k), Value::Int(k as i64), 0);
    }
    let mut seen = HashSet::new();
    for seed in 0..5000u64 {
        let e = t
            .random_entry(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .unwrap();
        seen.insert(e.key().to_vec());
    }
    assert_eq!(seen.len(), 50);
}

#[test]
fn records_take_the_planned_bytes() {
    let mut t = KeyTable::<u64>::default();
    let k = b"key:000000000042";
    let slot = t.insert_new(k, Value::Int(1_000_000), 0);
    assert_eq!(t.entry_bytes(slot), 28 + 5);
    t.set_value(slot, Value::Str(b"0123456789abcdef", false));
    assert_eq!(t.entry_bytes(slot), 40 + 5);
    t.set_value(slot, Value::Heap(7));
    assert_eq!(t.entry_bytes(slot), 28 + 5 + 16);
    t.set_expiry(slot, 1000);
    assert_eq!(t.entry_bytes(slot), 40 + 5 + 4 + 16);
    assert_eq!(t.get(k).unwrap().expire_at(), Some(1000));
    t.check();
}

#[test]
fn heap_values_are_dropped_with_the_table_or_returned() {
    use std::rc::Rc;
    let shared = Rc::new(());
    let mut t = KeyTable::<Rc<()>>::default();
    for k in 0..100 {
        t.insert(&key(k), Value::Heap(shared.clone()), 0);
    }
    assert!(t.insert(&key(0), Value::Int(1), 0).is_some());
    assert!(t.remove(&key(1)).is_some());
    assert_eq!(Rc::strong_count(&shared), 99);
    drop(t);
    assert_eq!(Rc::strong_count(&shared), 1);
}

#[test]
fn samples_are_neighbouring_keys_of_the_table_and_never_none() {
    let mut t = KeyTable::<u64>::default();
    let mut n = 0u16;
    // Stop just as a resize starts: the new index is nearly empty, so a walk that starts
    // there finds nothing and the sample falls back to a random draw.
    while n < 3000 || !t.is_rehashing() {
        t.insert(&key(n), Value::Int(n as i64), 0);
        n += 1;
    }
    for seed in 0..2000u64 {
        let mut got = Vec::new();
        t.sample(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15), 5, |e| {
            got.push(e.key().to_vec())
        });
        assert!((1..=5).contains(&got.len()), "{} keys", got.len());
        for k in got {
            assert!(t.get(&k).is_some());
        }
    }
}
