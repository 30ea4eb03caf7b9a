//! Feeds arbitrary bytes to RESTORE's payload reader. It must never panic, loop or allocate
//! without bound; a value it accepts must survive a round trip: DUMPed again (Redis 7.2's
//! form and the portable one MIGRATE sends) and restored, it is the same value, and every
//! set, hash and list passes the engine's own checks.
//!
//! Each payload is read with and without deep sanitization (sanitize-dump-payload): the
//! deep read refuses whatever the shallow one refuses, and reads the same value otherwise.
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
    let deep = LoadOptions {
        deep_sanitize: true,
        ..LoadOptions::default()
    };
    let _ = restore(data, &opts);
    let Some((&version, body)) = data.split_first() else {
        return;
    };
    let sealed = seal(body, u16::from(version));
    // sanitize-dump-payload yes refuses more (duplicates) and never reads a value otherwise.
    let deep_value = restore(&sealed, &deep);
    let Ok(value) = restore(&sealed, &opts) else {
        assert!(deep_value.is_err(), "the deep check took what the shallow one refused");
        return;
    };
    if let Ok(deep_value) = deep_value {
        assert!(
            as_contents(deep_value) == as_contents(value.clone()),
            "the deep check read another value"
        );
    }
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
