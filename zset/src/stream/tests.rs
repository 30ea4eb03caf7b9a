//! The stream engine against a model: a `BTreeMap` of ids to field-value pairs.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

type Pairs = Vec<(Vec<u8>, Vec<u8>)>;
type Model = BTreeMap<StreamId, Pairs>;
type Entries = Vec<(StreamId, Pairs)>;

fn bytes(item: Item) -> Vec<u8> {
    match item {
        Item::Str(s) => s.to_vec(),
        Item::Int(v) => v.to_string().into_bytes(),
    }
}

fn collect(range: Range<'_>) -> Entries {
    range
        .map(|e| {
            let pairs = e.pairs().map(|(f, v)| (bytes(f), bytes(v))).collect();
            (e.id(), pairs)
        })
        .collect()
}

fn model_range(m: &Model, a: StreamId, b: StreamId, rev: bool) -> Entries {
    if a > b {
        return Vec::new();
    }
    let mut v: Vec<_> = m.range(a..=b).map(|(k, p)| (*k, p.clone())).collect();
    if rev {
        v.reverse();
    }
    v
}

#[derive(Clone, Debug)]
enum Op {
    Add {
        ms_step: u64,
        seq: Option<u64>,
        pairs: Vec<(Vec<u8>, Vec<u8>)>,
    },
    Delete(Vec<usize>),
    Trim {
        maxlen: Option<u64>,
        minid_at: usize,
        approx: bool,
        limit: u64,
    },
    SetId(u64),
}

fn field() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(b"user".to_vec()),
        Just(b"amount".to_vec()),
        (-200i64..70000).prop_map(|v| v.to_string().into_bytes()),
        proptest::collection::vec(any::<u8>(), 0..80),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u64..3, proptest::option::of(0u64..3), proptest::collection::vec((field(), field()), 1..4))
            .prop_map(|(ms_step, seq, pairs)| Op::Add { ms_step, seq, pairs }),
        2 => proptest::collection::vec(0usize..64, 1..4).prop_map(Op::Delete),
        1 => (proptest::option::of(0u64..30), 0usize..64, any::<bool>(), 0u64..8)
            .prop_map(|(maxlen, minid_at, approx, limit)| Op::Trim { maxlen, minid_at, approx, limit }),
        1 => (0u64..3).prop_map(Op::SetId),
    ]
}

/// An id near the model's entries: one of them (by index, wrapping) or just past.
fn pick(m: &Model, last: StreamId, i: usize) -> StreamId {
    if m.is_empty() || i % 7 == 6 {
        return last.next().unwrap_or(last);
    }
    *m.keys().nth(i % m.len()).unwrap()
}

fn check(s: &Stream, m: &Model) {
    s.validate();
    assert_eq!(s.len(), m.len() as u64);
    assert_eq!(
        collect(s.range(StreamId::MIN, StreamId::MAX, false)),
        model_range(m, StreamId::MIN, StreamId::MAX, false)
    );
    assert_eq!(
        collect(s.range(StreamId::MIN, StreamId::MAX, true)),
        model_range(m, StreamId::MIN, StreamId::MAX, true)
    );
    let keys: Vec<StreamId> = m.keys().copied().collect();
    for id in keys.iter().flat_map(|k| [k.prev().unwrap_or(*k), *k]) {
        let after = id.next().is_some_and(|n| m.range(n..).next().is_some());
        assert_eq!(s.has_live_after(id), after, "live after {id}");
    }
    for (i, &a) in keys.iter().enumerate().step_by(3) {
        let b = keys[(i * 5 + 1) % keys.len()];
        for rev in [false, true] {
            assert_eq!(collect(s.range(a, b, rev)), model_range(m, a, b, rev));
        }
        let inner = StreamId::new(a.ms, a.seq.saturating_add(1));
        assert_eq!(
            collect(s.range(inner, StreamId::MAX, false)),
            model_range(m, inner, StreamId::MAX, false)
        );
    }
    match (m.keys().next(), m.keys().next_back()) {
        (Some(f), Some(l)) => {
            assert_eq!(s.meta().first_id, *f);
            assert_eq!(s.edge_id(true, true), *f);
            assert_eq!(s.edge_id(false, true), *l);
        }
        _ => assert_eq!(s.meta().first_id, StreamId::MIN),
    }
}

fn run(ops: Vec<Op>, cfg: StreamConfig) {
    let (mut s, mut m) = (Stream::new(), Model::new());
    let mut now = 1000u64;
    let mut added = 0;
    for op in ops {
        match op {
            Op::Add {
                ms_step,
                seq,
                pairs,
            } => {
                now += ms_step;
                let flat: Vec<&[u8]> = pairs.iter().flat_map(|(f, v)| [&f[..], &v[..]]).collect();
                let how = match seq {
                    None => NewId::Auto,
                    Some(0) => NewId::AutoSeq(now),
                    Some(n) => NewId::Exact(StreamId::new(now, n)),
                };
                let last = s.last_id();
                match s.append(how, &flat, now, &cfg) {
                    Ok(id) => {
                        assert!(id > last);
                        if how == NewId::Auto {
                            assert_eq!(
                                id,
                                if now > last.ms {
                                    StreamId::new(now, 0)
                                } else {
                                    last.next().unwrap()
                                }
                            );
                        }
                        m.insert(id, pairs);
                        added += 1;
                    }
                    Err(e) => {
                        assert_eq!(e, AppendError::IdTooSmall);
                        let refused = match how {
                            NewId::Exact(id) => id <= last,
                            NewId::AutoSeq(ms) => ms < last.ms,
                            NewId::Auto => false,
                        };
                        assert!(refused, "{how:?} after {last}");
                    }
                }
            }
            Op::Delete(at) => {
                let ids: Vec<StreamId> = at.iter().map(|&i| pick(&m, s.last_id(), i)).collect();
                let mut want = 0;
                for id in &ids {
                    want += u64::from(m.remove(id).is_some());
                }
                let max_before = s.meta().max_deleted_id;
                assert_eq!(s.delete(&ids), want);
                if want > 0 {
                    assert!(s.meta().max_deleted_id >= max_before);
                }
            }
            Op::Trim {
                maxlen,
                minid_at,
                approx,
                limit,
            } => {
                let how = match maxlen {
                    Some(n) => Trim::MaxLen(n),
                    None => Trim::MinId(pick(&m, s.last_id(), minid_at)),
                };
                let exact = match how {
                    Trim::MaxLen(n) => (m.len() as u64).saturating_sub(n),
                    Trim::MinId(min) => m.range(..min).count() as u64,
                };
                let limit = if approx { limit * 3 } else { 0 };
                let n = s.trim(how, approx, limit);
                if approx {
                    assert!(n <= exact);
                } else {
                    assert_eq!(n, exact);
                }
                for _ in 0..n {
                    m.pop_first();
                }
            }
            Op::SetId(step) => {
                let id = StreamId::new(s.last_id().ms + step, 0);
                let r = s.set_id(id, Some(added), None);
                let top = m.keys().next_back().copied().unwrap_or_default();
                if id >= top && id >= s.meta().max_deleted_id {
                    r.unwrap();
                    assert_eq!(s.last_id(), id);
                } else {
                    assert!(r.is_err());
                }
            }
        }
        check(&s, &m);
        assert_eq!(s.meta().entries_added, added);
    }
    let reloaded = Stream::from_nodes(s.nodes().collect(), s.meta()).unwrap();
    check(&reloaded, &m);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn small_nodes_behave_as_the_model(ops in proptest::collection::vec(op(), 1..80)) {
        run(ops, StreamConfig { node_max_bytes: 120, node_max_entries: 3 });
    }

    #[test]
    fn default_nodes_behave_as_the_model(ops in proptest::collection::vec(op(), 1..80)) {
        run(ops, StreamConfig::default());
    }

    #[test]
    fn corrupt_nodes_are_refused_without_panicking(
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4)
    ) {
        let mut s = Stream::new();
        let cfg = StreamConfig::default();
        for i in 0..5u64 {
            s.append(NewId::Exact(StreamId::new(i + 1, 0)), &[b"f", b"v", b"n", b"12"], 0, &cfg).unwrap();
        }
        s.delete(&[StreamId::new(2, 0)]);
        let (key, bytes) = s.nodes().next().unwrap();
        let mut bad = bytes.clone();
        for (at, v) in flips {
            let i = at % bad.len();
            bad[i] = v;
        }
        if let Ok(loaded) = Stream::from_nodes(vec![(key, bad)], s.meta()) {
            let _ = collect(loaded.range(StreamId::MIN, StreamId::MAX, true));
        }
    }
}

#[test]
fn nodes_split_at_the_entry_limit_and_the_byte_limit() {
    let mut s = Stream::new();
    let cfg = StreamConfig {
        node_max_bytes: 0,
        node_max_entries: 2,
    };
    for i in 1..=5 {
        s.append(NewId::Exact(StreamId::new(i, 0)), &[b"a", b"1"], 0, &cfg)
            .unwrap();
    }
    assert_eq!(s.node_count(), 3);
    let mut s = Stream::new();
    let cfg = StreamConfig {
        node_max_bytes: 40,
        node_max_entries: 0,
    };
    for i in 1..=5 {
        s.append(NewId::Exact(StreamId::new(i, 0)), &[b"a", b"1"], 0, &cfg)
            .unwrap();
    }
    // 6 header + master (1,0,1,"a",0 = 2+2+2+3+2) + end = 18; each entry 10 bytes.
    assert_eq!(s.nodes().next().unwrap().1.len(), 38);
    assert_eq!(s.node_count(), 3);
}

#[test]
fn the_layout_is_redis_listpack_byte_for_byte() {
    let mut s = Stream::new();
    let cfg = StreamConfig::default();
    s.append(NewId::Exact(StreamId::new(5, 1)), &[b"f", b"v"], 0, &cfg)
        .unwrap();
    s.append(NewId::Exact(StreamId::new(6, 0)), &[b"g", b"100"], 0, &cfg)
        .unwrap();
    let (key, lp) = s.nodes().next().unwrap();
    assert_eq!(key, StreamId::new(5, 1));
    let want = crate::packed::listpack(&[
        Item::Int(2),
        Item::Int(0),
        Item::Int(1),
        Item::Str(b"f"),
        Item::Int(0),
        Item::Int(2),
        Item::Int(0),
        Item::Int(0),
        Item::Str(b"v"),
        Item::Int(4),
        Item::Int(0),
        Item::Int(1),
        Item::Int(-1),
        Item::Int(1),
        Item::Str(b"g"),
        Item::Int(100),
        Item::Int(6),
    ]);
    assert_eq!(lp, &want[..]);
}

#[test]
fn auto_ids_follow_the_clock_or_the_last_id() {
    let mut s = Stream::new();
    let cfg = StreamConfig::default();
    let p: &[&[u8]] = &[b"a", b"b"];
    assert_eq!(s.append(NewId::Auto, p, 10, &cfg), Ok(StreamId::new(10, 0)));
    assert_eq!(s.append(NewId::Auto, p, 5, &cfg), Ok(StreamId::new(10, 1)));
    assert_eq!(
        s.append(NewId::AutoSeq(10), p, 0, &cfg),
        Ok(StreamId::new(10, 2))
    );
    assert_eq!(
        s.append(NewId::AutoSeq(9), p, 0, &cfg),
        Err(AppendError::IdTooSmall)
    );
    assert_eq!(
        s.append(NewId::AutoSeq(11), p, 0, &cfg),
        Ok(StreamId::new(11, 0))
    );
    s.set_id(StreamId::new(12, u64::MAX), None, None).unwrap();
    assert_eq!(
        s.append(NewId::AutoSeq(12), p, 0, &cfg),
        Err(AppendError::IdTooSmall)
    );
    assert_eq!(s.append(NewId::Auto, p, 0, &cfg), Ok(StreamId::new(13, 0)));
    assert_eq!(
        s.set_id(StreamId::new(1, 0), None, None),
        Err(SetIdError::BelowTop)
    );
    assert_eq!(
        s.set_id(StreamId::new(20, 0), Some(2), None),
        Err(SetIdError::EntriesAddedBelowLength)
    );
}

#[test]
fn loaded_nodes_write_back_byte_for_byte() {
    use crate::packed::encode_listpack_item;
    // Master: 1 live, 0 deleted, field "f"; entry 5-1 with the value 7 stored as an
    // 8-byte integer, wider than Redis writes it but a valid listpack item.
    let mut lp = vec![0; 6];
    for item in [1, 0, 1]
        .map(Item::Int)
        .into_iter()
        .chain([Item::Str(b"f")])
    {
        encode_listpack_item(item, &mut lp);
    }
    for v in [0, 2, 0, 0] {
        encode_listpack_item(Item::Int(v), &mut lp);
    }
    lp.extend_from_slice(&[0xf4, 7, 0, 0, 0, 0, 0, 0, 0, 9]);
    encode_listpack_item(Item::Int(4), &mut lp);
    lp.push(0xff);
    let total = lp.len() as u32;
    lp[0..4].copy_from_slice(&total.to_le_bytes());
    lp[4..6].copy_from_slice(&10u16.to_le_bytes());
    let meta = StreamMeta {
        len: 1,
        last_id: StreamId::new(5, 1),
        first_id: StreamId::new(5, 1),
        entries_added: 1,
        ..StreamMeta::default()
    };
    let s = Stream::from_nodes(vec![(StreamId::new(5, 1), lp.clone())], meta).unwrap();
    s.validate();
    assert_eq!(
        s.nodes().collect::<Vec<_>>(),
        vec![(StreamId::new(5, 1), lp)]
    );
    assert_eq!(
        collect(s.range(StreamId::MIN, StreamId::MAX, false)),
        vec![(StreamId::new(5, 1), vec![(b"f".to_vec(), b"7".to_vec())])]
    );
}

#[test]
fn removing_the_tail_node_appends_to_the_one_before() {
    let cfg = StreamConfig {
        node_max_bytes: 0,
        node_max_entries: 2,
    };
    let mut s = Stream::new();
    for i in 1..=3 {
        s.append(NewId::Exact(StreamId::new(i, 0)), &[b"a", b"1"], 0, &cfg)
            .unwrap();
    }
    s.delete(&[StreamId::new(3, 0), StreamId::new(2, 0)]);
    assert_eq!(s.node_count(), 1);
    s.append(NewId::Exact(StreamId::new(4, 0)), &[b"a", b"1"], 0, &cfg)
        .unwrap();
    assert_eq!(
        s.node_count(),
        2,
        "the first node holds 2 entries, one deleted"
    );
    s.validate();
    let ids: Vec<_> = s
        .range(StreamId::MIN, StreamId::MAX, true)
        .map(|e| e.id())
        .collect();
    assert_eq!(ids, [StreamId::new(4, 0), StreamId::new(1, 0)]);
}

#[test]
fn the_layout_comment_sizes_hold() {
    assert_eq!(std::mem::size_of::<Stream>(), 168);
    assert_eq!(std::mem::size_of::<node::Node>(), 40);
    assert_eq!(std::mem::size_of::<index::NodeIndex>(), 80);
}
