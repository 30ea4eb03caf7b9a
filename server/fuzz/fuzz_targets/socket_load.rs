//! The replica's socket loader (repl-diskless-load): the master's payload as it arrives in
//! chunks of any size (the first byte picks it), framed by its header (`$<len>` or
//! `$EOF:<mark>`), handed to the loading thread through the channel reader. It must never
//! panic or hang, and must load exactly what loading the same payload bytes at once loads
//! (the same keyspace, or an error in both).
//!
//! Seeds in corpus/socket_load/ are the rdb_load seeds in both payload forms. Run from
//! server/fuzz:
//!
//! ```text
//! mkdir -p /tmp/socket-corpus && cp corpus/socket_load/* /tmp/socket-corpus/
//! cargo +nightly fuzz run socket_load /tmp/socket-corpus -- -max_total_time=300 -max_len=4096
//! ```

#![no_main]

use goblin_server::rdb::contents;
use goblin_server::rdb::read::{load, LoadOptions};
use goblin_server::replication::payload::{header, EofScanner, Header};
use goblin_server::replication::socket_load;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&chunk, wire)) = data.split_first() else {
        return;
    };
    let Ok(Some((form, used))) = header(wire) else {
        return;
    };
    let opts = LoadOptions {
        skip_unsupported: true,
        ..LoadOptions::default()
    };
    let (loading, feed) = socket_load::start(0, opts.clone());
    let mut sent = Vec::new();
    let mut scanner = match &form {
        Header::Eof(mark) => Some(EofScanner::new(mark.clone())),
        Header::Len(_) => None,
    };
    for piece in wire[used..].chunks(usize::from(chunk).max(1)) {
        let (payload, done) = match (&form, scanner.as_mut()) {
            (_, Some(s)) => {
                let (payload, rest) = s.feed(piece);
                (payload, rest.is_some())
            }
            (Header::Len(n), None) => {
                let take = (*n - sent.len() as u64).min(piece.len() as u64) as usize;
                (
                    piece[..take].to_vec(),
                    sent.len() as u64 + take as u64 == *n,
                )
            }
            _ => unreachable!("a scanner for the marked form"),
        };
        sent.extend_from_slice(&payload);
        // A loader that stopped early (a bad payload) no longer receives: as the link does.
        let _ = feed.send(payload);
        if done {
            break;
        }
    }
    drop(feed);
    let streamed = loading.finish();
    let at_once = load(&sent[..], &opts);
    match (streamed, at_once) {
        (Ok(Some((a, _))), Ok((b, _))) => assert!(contents(&a) == contents(&b)),
        (Err(_), Err(_)) => {}
        (a, b) => panic!(
            "streamed {:?} but at once {:?}",
            a.map(|_| "loaded"),
            b.map(|_| "loaded")
        ),
    }
});
