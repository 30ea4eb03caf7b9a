//! Runs arbitrary command streams through the dispatcher of an in-process server: the bytes
//! are parsed as a connection parses them (RESP or inline), and every request runs as a
//! client's would, on every type (strings, bitmaps, sets, sorted sets, hashes, lists, geo,
//! SORT, transactions, expiry), with every keyspace notification class on. Nothing may
//! panic or loop. Afterwards every value passes
//! its engine's own checks, and the keyspace survives an RDB round trip unchanged.
//!
//! Commands that leave the process or wait on the world are not run (SHUTDOWN, DEBUG, the
//! saves, CONFIG, scripts, replication, MIGRATE, CLIENT); a request that blocks (BLPOP on
//! an empty list) ends its client as a closed connection would, and the stream goes on
//! with a new one. Strings are limited to 1 MiB (proto-max-bulk-len), so SETRANGE and
//! SETBIT stay inside the fuzzer's memory limit as Redis keeps them inside 512 MiB.
//!
//! Run from server/fuzz (the seeds in corpus/command_stream/ hold one command of each
//! family; the dictionary names every command and option word):
//!
//! ```text
//! mkdir -p /tmp/cmd-corpus && cp corpus/command_stream/* /tmp/cmd-corpus/
//! cargo +nightly fuzz run command_stream /tmp/cmd-corpus -- -dict=command_stream.dict \
//!     -max_total_time=300 -max_len=2048
//! ```

#![no_main]

use common::new_client;
use goblin_server::commands::{client_gone, execute, serve_ready_keys};
use goblin_server::config::Config;
use goblin_server::resp::parse::{Limits, Parsed, RequestParser};
use goblin_server::server::Server;
use libfuzzer_sys::fuzz_target;

mod common;

/// Longest string a command may build (proto-max-bulk-len for the run).
const MAX_STRING: i64 = 1 << 20;

/// Commands that touch files, processes, other servers or the clock of the world.
const NOT_RUN: &[&str] = &[
    "shutdown",
    "debug",
    "save",
    "bgsave",
    "bgrewriteaof",
    "config",
    "eval",
    "evalsha",
    "eval_ro",
    "evalsha_ro",
    "script",
    "fcall",
    "fcall_ro",
    "function",
    "monitor",
    "replicaof",
    "slaveof",
    "sync",
    "psync",
    "replconf",
    "migrate",
    "cluster",
    "client",
    "wait",
    "failover",
    "acl",
    "module",
    "sleep",
];

fn runnable(args: &[&[u8]]) -> bool {
    let Some(name) = args.first() else {
        return false;
    };
    let name = String::from_utf8_lossy(name).to_ascii_lowercase();
    !NOT_RUN.contains(&name.as_str())
}

fuzz_target!(|data: &[u8]| {
    let mut config = Config::default();
    config.proto_max_bulk_len = MAX_STRING;
    // Every keyspace event class on, so each command's notifications are fired and
    // published (to the client itself once it subscribes to them).
    config.notify_keyspace_events =
        goblin_server::pubsub::notify::parse_flags(b"AKEnm").expect("valid classes");
    let mut server = Server::new(config);
    let mut client = new_client(1);
    let limits = Limits {
        max_bulk: MAX_STRING,
        authenticated: true,
    };
    let mut parser = RequestParser::default();
    let mut pos = 0;
    let mut out = Vec::new();
    while let Ok(Parsed::Request { end }) = parser.parse(data, pos, limits) {
        let args: Vec<Vec<u8>> = match parser.inline_args() {
            Some(a) => a.to_vec(),
            None => parser
                .args()
                .iter()
                .map(|r| data[r.clone()].to_vec())
                .collect(),
        };
        pos = end;
        let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        if !runnable(&args) {
            continue;
        }
        out.clear();
        execute(&mut server, &mut client, &mut out, &args);
        serve_ready_keys(&mut server);
        if client.blocked.is_some() || client.close_after_reply {
            client_gone(&mut server, &mut client);
            client = new_client(client.id + 1);
        }
    }

    common::check_rdb_round_trip(&server);
});
