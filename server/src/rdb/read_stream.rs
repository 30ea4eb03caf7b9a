//! Loading a stream value: RDB types STREAM_LISTPACKS (15, Redis 5 and 6),
//! STREAM_LISTPACKS_2 (19, Redis 7.0) and STREAM_LISTPACKS_3 (21, Redis 7.2), in files and
//! DUMP payloads alike.
//!
//! Layout: the node count, each node's 16-byte big-endian key and listpack string; the
//! length and last id (ms, seq); from type 19 the first id, the max deleted id and the
//! entries added; the group count, each group's name, last id, (type 19 on) entries read,
//! PEL (count; raw 16-byte id, delivery time 8 bytes LE, delivery count) and consumers
//! (count; name, seen time 8 bytes LE, (type 21) active time 8 bytes LE, PEL count and raw
//! ids, each of which must be in the group's PEL).
//!
//! Every node is validated in full and in order, every consumer PEL id must name a group
//! PEL entry not yet owned and every group PEL entry must end up owned (Redis's checks
//! under sanitize-dump-payload, made here whatever it says): a corrupt value is an error
//! naming the offset, never a panic later.

use std::collections::BTreeMap;
use std::io::Read;

use super::format::{TYPE_STREAM_LISTPACKS_2, TYPE_STREAM_LISTPACKS_3};
use super::read::{ErrorKind, Input, LoadError};
use crate::keyspace::stream::{Group, Stream, StreamId, StreamMeta};

type Result<T> = std::result::Result<T, LoadError>;

/// Reads a stream of RDB type `rdb_type` (15, 19 or 21) from `input`; `deep`: under deep
/// sanitization, each node counts in dump_payload_sanitizations (the checks are the same).
pub fn read_stream<R: Read>(input: &mut Input<R>, rdb_type: u8, deep: bool) -> Result<Stream> {
    let at = input.offset();
    let corrupt = |message: String| LoadError {
        kind: ErrorKind::Corrupt,
        offset: at,
        message: format!("stream: {message}"),
    };
    let count = input.length()?;
    let mut nodes = Vec::new();
    for _ in 0..count {
        let mut key = Vec::new();
        input.string(&mut key)?;
        let key: [u8; 16] = key
            .try_into()
            .map_err(|_| corrupt("node key is not the size of a stream ID".into()))?;
        let mut lp = Vec::new();
        input.string(&mut lp)?;
        nodes.push((StreamId::from_be_bytes(key), lp));
    }
    let len = input.length()?;
    let last_id = id(input)?;
    let v2 = rdb_type >= TYPE_STREAM_LISTPACKS_2;
    let meta = if v2 {
        StreamMeta {
            len,
            last_id,
            first_id: id(input)?,
            max_deleted_id: id(input)?,
            entries_added: input.length()?,
        }
    } else {
        StreamMeta {
            len,
            last_id,
            entries_added: len,
            ..StreamMeta::default()
        }
    };
    if deep {
        super::count_sanitizations(nodes.len() as u64);
    }
    let mut stream = Stream::from_nodes(nodes, meta)
        .map_err(|e| corrupt(format!("Stream listpack integrity check failed: {e}")))?;
    if !v2 {
        stream.derive_first_id();
    }
    let groups = input.length()?;
    for _ in 0..groups {
        let mut name = Vec::new();
        input.string(&mut name)?;
        let last_id = id(input)?;
        let entries_read = if v2 {
            Some(input.length()?).filter(|&n| n != u64::MAX)
        } else {
            stream.estimate_entries_read(last_id)
        };
        let mut group = Group::new(last_id, entries_read);
        let mut unowned = BTreeMap::new();
        for _ in 0..input.length()? {
            let id = StreamId::from_be_bytes(input.array()?);
            let time = u64::from_le_bytes(input.array()?);
            let count = input.length()?;
            if unowned.insert(id, (time, count)).is_some() {
                return Err(corrupt(format!("duplicate PEL entry {id}")));
            }
        }
        for _ in 0..input.length()? {
            let mut consumer = Vec::new();
            input.string(&mut consumer)?;
            let seen = u64::from_le_bytes(input.array()?);
            let active = if rdb_type >= TYPE_STREAM_LISTPACKS_3 {
                u64::from_le_bytes(input.array()?)
            } else {
                seen
            };
            if !group.create_consumer(&consumer, seen, active) {
                return Err(corrupt("Duplicate stream consumer detected".into()));
            }
            for _ in 0..input.length()? {
                let id = StreamId::from_be_bytes(input.array()?);
                let (time, count) = unowned.remove(&id).ok_or_else(|| {
                    corrupt(format!("consumer PEL entry {id} is not in the group PEL"))
                })?;
                group.set_pending(id, time, count, &consumer);
            }
        }
        if !unowned.is_empty() {
            return Err(corrupt("group PEL entry without consumer".into()));
        }
        if !stream.create_group(&name, group) {
            return Err(corrupt("duplicate consumer group".into()));
        }
    }
    Ok(stream)
}

/// An id as two lengths, ms and seq.
fn id<R: Read>(input: &mut Input<R>) -> Result<StreamId> {
    Ok(StreamId::new(input.length()?, input.length()?))
}

#[cfg(test)]
mod tests {
    use crate::keyspace::stream::{Group, NewId, Stream, StreamConfig, StreamId};
    use crate::keyspace::Value;
    use crate::rdb::dump::{payload, restore, Payload};
    use crate::rdb::read::LoadOptions;

    fn sample() -> Stream {
        let mut s = Stream::new();
        let cfg = StreamConfig {
            node_max_bytes: 0,
            node_max_entries: 3,
        };
        for i in 1..=10u64 {
            let v = i.to_string();
            let pairs: [&[u8]; 4] = [b"user", b"u00000001", b"amount", v.as_bytes()];
            s.append(NewId::Exact(StreamId::new(i, i)), &pairs, 0, &cfg)
                .unwrap();
        }
        s.delete(&[StreamId::new(1, 1), StreamId::new(5, 5)]);
        let mut g = Group::new(StreamId::new(4, 4), Some(4));
        g.create_consumer(b"alice", 100, 90);
        g.create_consumer(b"bob", 200, 0);
        g.set_pending(StreamId::new(2, 2), 1000, 2, b"alice");
        g.set_pending(StreamId::new(3, 3), 1001, 1, b"alice");
        s.create_group(b"workers", g);
        s.create_group(b"idle", Group::new(StreamId::MIN, None));
        s
    }

    fn reloaded(kind: Payload) -> Stream {
        let bytes = payload(&Value::Stream(Box::new(sample())), true, kind);
        match restore(&bytes, &LoadOptions::default()).unwrap() {
            Value::Stream(s) => *s,
            _ => panic!("not a stream"),
        }
    }

    #[test]
    fn dump_payloads_carry_entries_counters_groups_and_consumers() {
        let (want, got) = (sample(), reloaded(Payload::Exact));
        got.validate();
        assert_eq!(format!("{:?}", got.meta()), format!("{:?}", want.meta()));
        assert_eq!(got.groups(), want.groups());
        let ids = |s: &Stream| {
            s.range(StreamId::MIN, StreamId::MAX, false)
                .map(|e| e.id())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&got), ids(&want));
        assert_eq!(got.node_count(), want.node_count());
    }

    #[test]
    fn the_portable_form_has_no_active_times() {
        let got = reloaded(Payload::Portable);
        let alice = got.group(b"workers").unwrap().consumer(b"alice").unwrap();
        assert_eq!((alice.seen_time, alice.active_time), (100, 100));
        assert_eq!(got.group(b"idle").unwrap().entries_read, None);
    }

    /// Redis's DUMPs of a stream with tombstones, five nodes, two groups (one with entries
    /// pending for two consumers, one with an idle consumer) and an emptied stream: 7.0's
    /// (type 19) and 7.2's (type 21), the fuzz seeds (a type-picking byte, then the body).
    #[test]
    fn redis_dumps_of_streams_with_groups_restore() {
        for seed in [
            &include_bytes!("../../fuzz/corpus/stream_payload/r70-s")[..],
            include_bytes!("../../fuzz/corpus/stream_payload/r72-s"),
            include_bytes!("../../fuzz/corpus/stream_payload/r70-e"),
            include_bytes!("../../fuzz/corpus/stream_payload/r72-e"),
        ] {
            let rdb_type = [15u8, 19, 21][usize::from(seed[0])];
            let mut body = vec![rdb_type];
            body.extend_from_slice(&seed[1..]);
            let value = restore(&crate::rdb::dump::seal(&body, 11), &LoadOptions::default());
            let Ok(Value::Stream(s)) = value else {
                panic!("seed did not restore");
            };
            s.validate();
            if s.is_empty() {
                assert_eq!(s.meta().last_id, StreamId::new(1, 1));
                continue;
            }
            assert_eq!((s.len(), s.node_count()), (11, 5));
            let g1 = s.group(b"g1").unwrap();
            assert_eq!(g1.pending_len(), 5);
            assert_eq!(g1.consumer(b"alice").unwrap().pending_len(), 3);
            assert_eq!(g1.entries_read, None, "XINFO GROUPS shows no entries-read");
            assert!(s.group(b"g2").unwrap().consumer(b"carol").is_some());
            if rdb_type == 21 {
                let again = payload(&Value::Stream(s.clone()), true, Payload::Exact);
                assert_eq!(
                    again[..again.len() - 10],
                    body[..],
                    "written as Redis wrote it"
                );
            }
        }
    }

    /// A payload the fuzzer made: its stated first id is not its first entry. Redis keeps
    /// the stated one, and so does Goblin; the stream still passes the engine's checks.
    #[test]
    fn a_stated_first_id_is_kept_as_redis_keeps_it() {
        let seed = include_bytes!("../../fuzz/corpus/stream_payload/stated-first-id");
        let rdb_type = [15u8, 19, 21][usize::from(seed[0] % 3)];
        let mut body = vec![rdb_type];
        body.extend_from_slice(&seed[1..]);
        if let Ok(Value::Stream(s)) =
            restore(&crate::rdb::dump::seal(&body, 11), &LoadOptions::default())
        {
            s.validate();
        }
    }
}
