//! Feeds arbitrary bytes to the FUNCTION RESTORE payload reader, as the body of a payload
//! whose footer (RDB version, CRC64) is computed here so mutations get past the checksum.
//! It must never panic, loop or allocate without bound; the library codes it reads must
//! survive a round trip through FUNCTION DUMP's writer (compressed or not), and each code's
//! `#!lua name=` line must parse or be refused without a panic.
//!
//! ```text
//! mkdir -p /tmp/restore-corpus && cp corpus/function_restore/* /tmp/restore-corpus/
//! cargo +nightly fuzz run function_restore /tmp/restore-corpus -- -max_total_time=300
//! ```

#![no_main]

use goblin_server::rdb::crc64;
use goblin_server::scripting::library::{dump_payload, metadata, read_payload};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut payload = data.to_vec();
    payload.extend_from_slice(&10u16.to_le_bytes());
    let crc = crc64::update(0, &payload);
    payload.extend_from_slice(&crc.to_le_bytes());
    let Ok(codes) = read_payload(&payload) else {
        return;
    };
    for code in &codes {
        let _ = metadata(code);
    }
    for compress in [false, true] {
        let again = dump_payload(codes.iter().map(Vec::as_slice), compress);
        match read_payload(&again) {
            Ok(read) => assert!(read == codes, "round trip changed the codes"),
            Err(e) => panic!("Goblin's own payload does not load: {e}"),
        }
    }
});
