//! Feeds arbitrary bytes to the RDB loader. It must never panic, loop or allocate without
//! bound; whatever it accepts must survive a round trip: written by Goblin's writer (strings
//! LZF-compressed where they compress) and loaded again, it is the same keyspace (and the
//! same function libraries' codes), and every
//! set, hash and list passes the engine's own checks.
//!
//! Seeds in corpus/rdb_load/ have a zero checksum ("not computed", as Redis writes with
//! rdbchecksum no) or a pre-checksum version, so mutations get past the CRC check.
//!
//! Run from server/fuzz, growing a scratch corpus outside the repository (keep the one in
//! the repository to its few seeds):
//!
//! ```text
//! mkdir -p /tmp/rdb-corpus && cp corpus/rdb_load/* /tmp/rdb-corpus/
//! cargo +nightly fuzz run rdb_load /tmp/rdb-corpus -- -max_total_time=300 -max_len=4096
//! ```

#![no_main]

use goblin_server::rdb::contents;
use goblin_server::rdb::read::{load, LoadOptions};
use goblin_server::rdb::write::{write_snapshot, AuxInfo};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let opts = LoadOptions {
        skip_unsupported: true,
        size: Some(data.len() as u64),
        ..LoadOptions::default()
    };
    let Ok((dbs, report)) = load(data, &opts) else {
        return;
    };
    let aux = AuxInfo {
        functions: report.functions.clone(),
        ..AuxInfo::default()
    };
    let (bytes, _) = write_snapshot(Vec::new(), &dbs, &aux).expect("writing to memory");
    let (again, again_report) = match load(&bytes[..], &opts) {
        Ok(loaded) => loaded,
        Err(e) => panic!("Goblin's own snapshot does not load: {e}"),
    };
    assert!(
        contents(&dbs) == contents(&again),
        "round trip changed the keyspace"
    );
    assert!(
        report.functions == again_report.functions,
        "round trip changed the function libraries"
    );
});
