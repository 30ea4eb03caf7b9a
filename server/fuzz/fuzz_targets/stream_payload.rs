//! Feeds arbitrary stream bodies to the RDB stream reader through RESTORE's payload path.
//! It must never panic, loop or allocate without bound; a stream it accepts must pass the
//! engine's own checks, walk both ways, and survive DUMP and RESTORE: whole in Redis 7.2's
//! form (type 21), and with the consumers' active times taken from their seen times in the
//! portable form (type 19, which has none).
//!
//! The input's first byte picks the RDB type (15, 19 or 21 by its value modulo 3); the rest
//! is the value's body. The target adds the type byte, RDB version 11 and the CRC64. Seeds
//! in corpus/stream_payload/ are Redis's DUMPs of streams with tombstones, several nodes,
//! groups, pending entries and consumers, in this form.
//!
//! ```text
//! mkdir -p /tmp/stream-corpus && cp corpus/stream_payload/* /tmp/stream-corpus/
//! cargo +nightly fuzz run stream_payload /tmp/stream-corpus -- -max_total_time=300 -max_len=8192
//! ```

#![no_main]

use goblin_server::keyspace::stream::{Group, Stream, StreamId};
use goblin_server::keyspace::Value;
use goblin_server::rdb::dump::{payload, restore, seal, Payload};
use goblin_server::rdb::read::LoadOptions;
use libfuzzer_sys::fuzz_target;

/// Everything a stream holds, as text, with the consumers' active times replaced by their
/// seen times when `seen_for_active`.
fn describe(s: &Stream, seen_for_active: bool) -> String {
    let entries: Vec<String> = s
        .range(StreamId::MIN, StreamId::MAX, false)
        .map(|e| format!("{} {:?}", e.id(), e.pairs().collect::<Vec<_>>()))
        .collect();
    let groups: Vec<(Box<[u8]>, Group)> = s
        .groups()
        .iter()
        .map(|(name, g)| {
            let mut g = g.clone();
            if seen_for_active {
                g.use_seen_as_active();
            }
            (name.clone(), g)
        })
        .collect();
    format!("{entries:?} {:?} {groups:?}", s.meta())
}

fn stream_of(v: Value) -> Box<Stream> {
    match v {
        Value::Stream(s) => s,
        _ => panic!("a stream payload restored as another type"),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let rdb_type = [15u8, 19, 21][usize::from(pick % 3)];
    let mut value = vec![rdb_type];
    value.extend_from_slice(body);
    let opts = LoadOptions::default();
    let Ok(loaded) = restore(&seal(&value, 11), &opts) else {
        return;
    };
    let s = stream_of(loaded);
    s.validate();
    let forward = s.range(StreamId::MIN, StreamId::MAX, false).count();
    let backward = s.range(StreamId::MIN, StreamId::MAX, true).count();
    assert_eq!(forward, backward);
    assert_eq!(forward as u64, s.len());
    let v = Value::Stream(s.clone());
    for (kind, lossy) in [(Payload::Exact, false), (Payload::Portable, true)] {
        let again = restore(&payload(&v, true, kind), &opts)
            .unwrap_or_else(|_| panic!("Goblin's own {kind:?} payload does not restore"));
        let again = stream_of(again);
        assert_eq!(
            describe(&s, lossy),
            describe(&again, false),
            "{kind:?} round trip changed the stream"
        );
    }
});
