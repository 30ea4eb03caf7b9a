//! Property tests of the list engine against a `VecDeque` model, under small fills so
//! node splits, merges and both conversions happen often.

use std::collections::VecDeque;
use std::ops::ControlFlow;

use proptest::prelude::*;

use super::*;

/// What LPUSH (`front`) or RPUSH of `items` does to the model: one element at a time.
fn model_push(model: &mut VecDeque<Vec<u8>>, front: bool, items: Vec<Vec<u8>>) {
    for s in items {
        if front {
            model.push_front(s);
        } else {
            model.push_back(s);
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Push(bool, Vec<Vec<u8>>),
    Pop(bool, usize),
    Set(usize, Vec<u8>),
    Insert(usize, Vec<u8>),
    Trim(usize, usize),
    Rem(Vec<u8>, bool, usize),
}

fn element() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => (0i64..300).prop_map(|v| v.to_string().into_bytes()),
        2 => any::<i64>().prop_map(|v| v.to_string().into_bytes()),
        4 => prop::collection::vec(b'a'..b'e', 0..4),
        2 => prop::collection::vec(any::<u8>(), 200..320),
        // Compressible: nodes of these pass Redis's 48-byte and 8-byte thresholds.
        2 => (5usize..60).prop_map(|n| b"ab".repeat(n)),
        // Past the 4 KiB node of fill -1: plain nodes.
        1 => Just(vec![b'x'; 4100]),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<bool>(), prop::collection::vec(element(), 1..6)).prop_map(|(f, v)| Op::Push(f, v)),
        2 => (any::<bool>(), 0usize..5).prop_map(|(f, n)| Op::Pop(f, n)),
        1 => (any::<usize>(), element()).prop_map(|(i, v)| Op::Set(i, v)),
        2 => (any::<usize>(), element()).prop_map(|(i, v)| Op::Insert(i, v)),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(i, n)| Op::Trim(i, n)),
        1 => (element(), any::<bool>(), 1usize..4).prop_map(|(v, b, n)| Op::Rem(v, b, n)),
    ]
}

fn contents(list: &List) -> Vec<Vec<u8>> {
    list.to_vecs()
}

fn run(fill: i64, ops: Vec<Op>) {
    run_with(fill, 0, ops)
}

fn run_with(fill: i64, depth: i64, ops: Vec<Op>) {
    let cfg = ListConfig {
        max_listpack_size: fill,
        compress_depth: depth,
    };
    let mut list = List::new();
    let mut model: VecDeque<Vec<u8>> = VecDeque::new();
    for op in ops {
        match op {
            Op::Push(front, items) => {
                let refs: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
                let end = if front { End::Front } else { End::Back };
                list.push(end, &refs, &cfg);
                model_push(&mut model, front, items);
            }
            Op::Pop(front, n) => {
                let end = if front { End::Front } else { End::Back };
                let got = list.pop(end, n, &cfg);
                let want: Vec<Vec<u8>> = (0..n)
                    .filter_map(|_| {
                        if front {
                            model.pop_front()
                        } else {
                            model.pop_back()
                        }
                    })
                    .collect();
                assert_eq!(got, want);
            }
            Op::Set(i, v) if !model.is_empty() => {
                let i = i % model.len();
                list.set(i, &v, &cfg);
                model[i] = v;
            }
            Op::Insert(i, v) if !model.is_empty() => {
                let (pivot, after) = (i % model.len(), i % 2 == 0);
                list.insert(pivot, after, &v, &cfg);
                model.insert(pivot + usize::from(after), v);
            }
            Op::Trim(i, n) if !model.is_empty() => {
                let i = i % model.len();
                let n = n % (model.len() - i + 1);
                list.remove_range(i, n, &cfg);
                model.drain(i..i + n);
            }
            Op::Rem(v, from_back, limit) => {
                let removed = list.remove_value(&v, from_back, limit, &cfg);
                let mut want = 0;
                let idx: Vec<usize> = if from_back {
                    (0..model.len()).rev().collect()
                } else {
                    (0..model.len()).collect()
                };
                let mut drop = Vec::new();
                for i in idx {
                    if want < limit && model[i] == v {
                        drop.push(i);
                        want += 1;
                    }
                }
                drop.sort_unstable_by(|a, b| b.cmp(a));
                for i in drop {
                    model.remove(i);
                }
                assert_eq!(removed, want);
            }
            _ => {}
        }
        list.validate();
        assert_eq!(list.len(), model.len());
        assert_eq!(contents(&list), Vec::from(model.clone()));
        let mut rev: Vec<Vec<u8>> = Vec::new();
        list.each_rev(|m| {
            rev.push(m.to_vec());
            ControlFlow::Continue(())
        });
        assert!(rev.iter().eq(model.iter().rev()));
        for (i, want) in model.iter().enumerate().step_by(7) {
            assert_eq!(&list.get(i, |m| m.to_vec()), want);
            let mut first = None;
            list.each_from(i, |m| {
                first = Some(m.to_vec());
                ControlFlow::Break(())
            });
            assert_eq!(first.as_ref(), Some(want));
        }
        // A listpack lives on as its packed form (the key table keeps it so).
        if let Some(entries) = list.packed() {
            let back = List::from_packed(entries);
            back.validate();
            assert_eq!(back.encoding(), ListEncoding::Listpack);
            assert_eq!(contents(&back), contents(&list));
            list = back;
        }
    }
}

proptest! {
    #[test]
    fn matches_model_by_count(ops in prop::collection::vec(op(), 1..120)) {
        run(4, ops);
    }

    #[test]
    fn matches_model_by_bytes(ops in prop::collection::vec(op(), 1..120)) {
        run(-1, ops);
    }

    #[test]
    fn compressed_matches_model_by_count(
        depth in 1i64..4,
        ops in prop::collection::vec(op(), 1..160),
    ) {
        run_with(4, depth, ops);
    }

    #[test]
    fn compressed_matches_model_by_bytes(
        depth in 1i64..3,
        ops in prop::collection::vec(op(), 1..160),
    ) {
        run_with(-1, depth, ops);
    }
}

#[test]
fn converts_at_the_thresholds_and_back_at_half() {
    let cfg = ListConfig {
        max_listpack_size: 4,
        ..ListConfig::default()
    };
    let mut list = List::new();
    list.push(End::Back, &[b"a", b"b", b"c", b"d"], &cfg);
    assert_eq!(list.encoding(), ListEncoding::Listpack);
    list.push(End::Back, &[b"e"], &cfg);
    assert_eq!(list.encoding(), ListEncoding::Quicklist);
    list.pop(End::Front, 2, &cfg);
    // Three left in two nodes ([c d] [e]): stays a quicklist.
    assert_eq!(list.encoding(), ListEncoding::Quicklist);
    list.pop(End::Back, 1, &cfg);
    assert_eq!(list.encoding(), ListEncoding::Listpack);
    assert_eq!(contents(&list), vec![b"c".to_vec(), b"d".to_vec()]);
}

#[test]
fn the_default_fill_is_8_kib_of_listpack() {
    let cfg = ListConfig::default();
    let mut list = List::new();
    let elem = [b'x'; 16];
    let mut n = 0;
    while list.encoding() == ListEncoding::Listpack {
        list.push(End::Back, &[&elem], &cfg);
        n += 1;
    }
    // 7 + 18 per element; the push that would pass 8192 bytes converts.
    assert_eq!(n, (8192 - 7) / 18 + 1);
    for _ in 0..10_000 {
        list.push(End::Back, &[&elem], &cfg);
    }
    list.validate();
    // 17 B per element plus the node headers.
    assert!(list.memory_bytes() < 17 * list.len() * 105 / 100);
}

#[test]
fn interior_nodes_compress_and_read_back() {
    let cfg = ListConfig {
        compress_depth: 1,
        ..ListConfig::default()
    };
    let elem = |i: usize| format!("element:{:07}", i % 1000).into_bytes();
    let mut list = List::new();
    for i in 0..20_000 {
        list.push(End::Back, &[&elem(i)], &cfg);
    }
    list.validate();
    let nodes = list.stored_nodes();
    let compressed = nodes
        .iter()
        .filter(|n| matches!(n, StoredNode::Compressed { .. }))
        .count();
    // Every node but the two ends.
    assert_eq!(compressed, nodes.len() - 2);
    let stats = list.quicklist_stats().unwrap();
    assert_eq!((stats.nodes, stats.compress_depth), (nodes.len(), 1));
    assert_eq!(list.get(10_001, |m| m.to_vec()), elem(10_001));
    let plain = List::from_elements(
        (0..20_000)
            .map(elem)
            .collect::<Vec<_>>()
            .iter()
            .map(Vec::as_slice),
        &ListConfig::default(),
    );
    assert!(list.memory_bytes() * 4 < plain.memory_bytes() * 3);
    assert_eq!(list.to_vecs(), plain.to_vecs());
}

#[test]
fn a_list_made_from_its_packed_form_takes_a_push_without_growing() {
    let cfg = ListConfig {
        max_listpack_size: -2,
        compress_depth: 0,
    };
    let mut list = List::new();
    list.push(End::Back, &[b"a", b"bb", b"123"], &cfg);
    let mut back = List::from_packed(list.packed().expect("a listpack"));
    let room = back.memory_bytes();
    back.push(End::Front, &[b"e:000000012345"], &cfg);
    back.validate();
    assert_eq!(back.memory_bytes(), room);
    assert_eq!(contents(&back).len(), 4);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Pushes written into a listpack's entries (as a key's record holds them) give the
    /// entries [`List::push`] leaves, the model's elements and length, until a push that
    /// converts the list, which they decline.
    #[test]
    fn listpack_entries_take_pushes_as_the_list_does(
        fill in prop_oneof![1i64..8, Just(-1i64), Just(-2i64)],
        pushes in prop::collection::vec(
            (any::<bool>(), prop::collection::vec(element(), 1..4)),
            1..40,
        ),
    ) {
        let cfg = ListConfig { max_listpack_size: fill, compress_depth: 0 };
        let mut list = List::new();
        let mut model: VecDeque<Vec<u8>> = VecDeque::new();
        let mut entries = Vec::new();
        for (front, items) in pushes {
            let refs: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
            let end = if front { End::Front } else { End::Back };
            let mut out = vec![7];
            let got = push_to_listpack_entries(&entries, end, &refs, &cfg, &mut out);
            list.push(end, &refs, &cfg);
            model_push(&mut model, front, items);
            let Some(len) = got else {
                prop_assert_eq!(out, vec![7]);
                prop_assert_eq!(list.encoding(), ListEncoding::Quicklist);
                break;
            };
            prop_assert_eq!(len, model.len());
            prop_assert_eq!(list.packed(), Some(&out[..]));
            let read = List::from_packed(&out);
            read.validate();
            prop_assert_eq!(read.to_vecs(), Vec::from(model.clone()));
            entries = out;
        }
    }
}
