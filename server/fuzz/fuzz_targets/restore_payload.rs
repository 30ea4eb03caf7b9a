//! Feeds arbitrary bytes to RESTORE's payload reader. It must never panic, loop or allocate
//! without bound; a value it accepts must survive a round trip: DUMPed again (Redis 7.2's
//! form and the portable one MIGRATE sends) and restored, it is the same value, and every
//! set, hash and list passes the engine's own checks.
//!
//! The input is a payload body led by one byte: the target appends that byte as the RDB
//! version and the right CRC64, so mutations reach the value parser; the input as it is
//! also goes through the footer check. Seeds in corpus/restore_payload/ are Redis's DUMPs
//! of each type in this form.
//!
//! ```text
//! mkdir -p /tmp/restore-corpus && cp corpus/restore_payload/* /tmp/restore-corpus/
//! cargo +nightly fuzz run restore_payload /tmp/restore-corpus -- -max_total_time=300 -max_len=4096
//! ```

#![no_main]

use goblin_server::keyspace::{Db, Value};
use goblin_server::rdb::dump::{payload, restore, seal, Payload};
use goblin_server::rdb::read::LoadOptions;
use goblin_server::rdb::{contents, Contents};
use libfuzzer_sys::fuzz_target;

fn as_contents(value: Value) -> Contents {
    let mut db = Db::default();
    db.insert(b"k", value, 0);
    contents(&[db])
}

fuzz_target!(|data: &[u8]| {
    let opts = LoadOptions::default();
    let _ = restore(data, &opts);
    let Some((&version, body)) = data.split_first() else {
        return;
    };
    let Ok(value) = restore(&seal(body, u16::from(version)), &opts) else {
        return;
    };
    for kind in [Payload::Exact, Payload::Portable] {
        if kind == Payload::Portable && matches!(value, Value::Stream(_)) {
            // The portable form drops consumer active times: stream_payload checks it.
            continue;
        }
        let again = restore(&payload(&value, true, kind), &opts)
            .unwrap_or_else(|_| panic!("Goblin's own {kind:?} payload does not restore"));
        assert!(
            as_contents(value.clone()) == as_contents(again),
            "{kind:?} round trip changed the value"
        );
    }
});
