//! What the command handlers propagate: commands run through the dispatcher on a server
//! with propagation on, and the stream read back as text.

use crate::clients::Client;
use crate::commands::execute;
use crate::config::Config;
use crate::server::Server;

fn server() -> (Server, Client) {
    let mut server = Server::new(Config::default());
    server.propagation.set_enabled(true);
    server.keyspace.log_removals(true);
    (server, Client::internal(1))
}

/// Runs `cmd` (split on spaces) and returns what it propagated, one command a line.
fn run(s: &mut (Server, Client), cmd: &str) -> String {
    let args: Vec<&[u8]> = cmd.split(' ').map(str::as_bytes).collect();
    let mut out = Vec::new();
    execute(&mut s.0, &mut s.1, &mut out, &args);
    s.0.propagate_removals();
    let bytes = s.0.propagation.take().0;
    let mut c = crate::aof::stream::Commands::new(&bytes, 0);
    let mut lines = Vec::new();
    while let Some(argv) = c.next_command().expect("a valid stream") {
        let words: Vec<String> = argv
            .iter()
            .map(|a| String::from_utf8_lossy(a).into())
            .collect();
        lines.push(words.join(" "));
    }
    lines.join("\n")
}

/// `text` with the digits of the number after `word` replaced by N.
fn masked(text: &str, word: &str) -> String {
    text.split(' ')
        .scan(false, |after, w| {
            let out = if *after {
                "N".to_string()
            } else {
                w.to_string()
            };
            *after = w == word;
            Some(out)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn writes_as_received_and_unchanged_commands_not_at_all() {
    let mut s = server();
    assert_eq!(run(&mut s, "SET a 1"), "SELECT 0\nSET a 1");
    assert_eq!(run(&mut s, "GET a"), "");
    assert_eq!(run(&mut s, "SET a 2 NX"), "", "NX not met: nothing changed");
    assert_eq!(run(&mut s, "DEL nosuch"), "");
    assert_eq!(run(&mut s, "SADD s x"), "SADD s x");
    assert_eq!(run(&mut s, "SADD s x"), "");
    assert_eq!(run(&mut s, "SRANDMEMBER s 5"), "");
    assert_eq!(run(&mut s, "SELECT 4"), "");
    assert_eq!(run(&mut s, "INCR n"), "SELECT 4\nINCR n");
}

#[test]
fn relative_expiries_become_absolute() {
    let mut s = server();
    let set = run(&mut s, "SET k v EX 100");
    assert_eq!(masked(&set, "PXAT"), "SELECT 0\nSET k v PXAT N");
    assert_eq!(
        masked(&run(&mut s, "SETEX k 10 v"), "PXAT"),
        "SET k v PXAT N"
    );
    assert_eq!(
        masked(&run(&mut s, "PSETEX k 10000 v"), "PXAT"),
        "SET k v PXAT N"
    );
    assert_eq!(
        run(&mut s, "SET k v PXAT 99999999999999"),
        "SET k v PXAT 99999999999999"
    );
    assert_eq!(
        masked(&run(&mut s, "EXPIRE k 100 LT"), "k"),
        "PEXPIREAT k N LT"
    );
    assert_eq!(
        masked(&run(&mut s, "PEXPIRE k 500000"), "k"),
        "PEXPIREAT k N"
    );
    assert_eq!(
        run(&mut s, "EXPIREAT k 99999999999"),
        "PEXPIREAT k 99999999999000"
    );
    assert_eq!(masked(&run(&mut s, "GETEX k EX 50"), "k"), "PEXPIREAT k N");
    assert_eq!(run(&mut s, "GETEX k PERSIST"), "PERSIST k");
    assert_eq!(
        run(&mut s, "GETEX k PERSIST"),
        "",
        "no expiry left to remove"
    );
    assert_eq!(run(&mut s, "EXPIRE k -1"), "DEL k");
}

#[test]
fn effects_that_replays_could_not_reproduce_are_logged_as_done() {
    let mut s = server();
    run(&mut s, "SET f 10.5");
    assert_eq!(run(&mut s, "INCRBYFLOAT f 0.1"), "SET f 10.6 KEEPTTL");
    assert_eq!(run(&mut s, "GETDEL f"), "DEL f");
    run(&mut s, "SADD s a");
    assert_eq!(run(&mut s, "SPOP s"), "SREM s a");
    run(&mut s, "SADD s a b c");
    assert_eq!(run(&mut s, "SPOP s 5"), "DEL s");
    let members: Vec<String> = (0..3000).map(|i| i.to_string()).collect();
    run(&mut s, &format!("SADD big {}", members.join(" ")));
    let spop = run(&mut s, "SPOP big 2500");
    let lines: Vec<&str> = spop.lines().collect();
    let sizes: Vec<usize> = lines
        .iter()
        .map(|l| l.split(' ').count().saturating_sub(2))
        .collect();
    assert_eq!(lines.first().map(|l| &l[..5]), Some("MULTI"));
    assert_eq!(sizes[1..4], [1024, 1024, 452], "SREM batches as Redis's");
    run(&mut s, "ZADD z 1 a 2 b 3 c");
    assert_eq!(run(&mut s, "ZMPOP 1 z MAX COUNT 2"), "ZPOPMAX z 2");
    assert_eq!(run(&mut s, "BZPOPMIN z 0"), "ZPOPMIN z");
    assert_eq!(run(&mut s, "ZPOPMIN z 3"), "", "already empty");
}

#[test]
fn flushes_always_and_transactions_as_one_unit() {
    let mut s = server();
    assert_eq!(run(&mut s, "FLUSHALL"), "SELECT 0\nFLUSHALL");
    assert_eq!(run(&mut s, "FLUSHDB"), "FLUSHDB");
    run(&mut s, "MULTI");
    run(&mut s, "SET a 1");
    run(&mut s, "SELECT 2");
    run(&mut s, "EXPIRE a 100");
    run(&mut s, "SET b 1");
    assert_eq!(
        run(&mut s, "EXEC"),
        "MULTI\nSET a 1\nSELECT 2\nSET b 1\nEXEC"
    );
    run(&mut s, "MULTI");
    run(&mut s, "INCR c");
    run(&mut s, "GET c");
    assert_eq!(run(&mut s, "EXEC"), "INCR c", "one write: no transaction");
}

#[test]
fn keys_that_expire_are_deleted_in_the_stream_before_the_command() {
    let mut s = server();
    run(&mut s, "SET gone v PX 1");
    run(&mut s, "SET other v");
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert_eq!(run(&mut s, "GET gone"), "DEL gone");
    run(&mut s, "SET gone2 v PX 1");
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert_eq!(
        run(&mut s, "APPEND gone2 x"),
        "MULTI\nDEL gone2\nAPPEND gone2 x\nEXEC"
    );
}

/// Runs a command given as arguments (binary-safe) and returns what it propagated.
fn run_args(s: &mut (Server, Client), args: &[&[u8]]) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    execute(&mut s.0, &mut s.1, &mut out, args);
    s.0.propagate_removals();
    let bytes = s.0.propagation.take().0;
    let mut c = crate::aof::stream::Commands::new(&bytes, 0);
    let mut commands = Vec::new();
    while let Some(argv) = c.next_command().expect("a valid stream") {
        commands.push(argv.iter().map(|a| a.to_vec()).collect());
    }
    commands
}

#[test]
fn restore_propagates_an_absolute_ttl_and_a_del_when_already_expired() {
    let mut s = server();
    let value = crate::keyspace::Value::Str(crate::keyspace::StringValue::from_set(b"hello"));
    let p = crate::rdb::dump::payload(&value, true, crate::rdb::dump::Payload::Exact);
    let p = p.as_slice();
    let got = run_args(&mut s, &[b"RESTORE", b"k", b"0", p]);
    assert_eq!(got[1], [&b"RESTORE"[..], b"k", b"0", p]);
    let got = run_args(&mut s, &[b"RESTORE", b"t", b"10000", p, b"IDLETIME", b"5"]);
    let at: u64 = std::str::from_utf8(&got[0][2]).unwrap().parse().unwrap();
    assert!(at > crate::clock::unix_ms() && at <= crate::clock::unix_ms() + 10000);
    assert_eq!(got[0][3], p);
    assert_eq!(got[0][4..], [&b"IDLETIME"[..], b"5", b"ABSTTL"]);
    let got = run_args(&mut s, &[b"RESTORE", b"k", b"1", p, b"REPLACE", b"ABSTTL"]);
    assert_eq!(got, [[&b"DEL"[..], b"k"]]);
    assert!(run_args(&mut s, &[b"RESTORE", b"n", b"1", p, b"ABSTTL"]).is_empty());
    assert!(
        run_args(&mut s, &[b"RESTORE", b"t", b"0", p]).is_empty(),
        "BUSYKEY"
    );
    assert!(run_args(&mut s, &[b"DUMP", b"t"]).is_empty());
}

#[test]
fn migrate_propagates_a_del_of_the_keys_the_target_acknowledged() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    // The target: SELECT, RESTORE a, RESTORE b (refused), RESTORE c; then, for the COPY,
    // RESTORE a.
    let target = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        conn.write_all(b"+OK\r\n+OK\r\n-BUSYKEY no\r\n+OK\r\n")
            .unwrap();
        let mut buf = [0u8; 4096];
        let mut seen = Vec::new();
        while seen.windows(7).filter(|w| w == b"RESTORE").count() < 3 {
            let n = conn.read(&mut buf).unwrap();
            seen.extend_from_slice(&buf[..n]);
        }
        conn.write_all(b"+OK\r\n").unwrap();
        let _ = conn.read(&mut buf);
    });
    let mut s = server();
    run(&mut s, "MSET a 1 b 2 c 3");
    let port = port.as_bytes();
    let migrate: &[&[u8]] = &[
        b"MIGRATE",
        b"127.0.0.1",
        port,
        b"",
        b"0",
        b"5000",
        b"KEYS",
        b"a",
        b"b",
        b"c",
    ];
    let got = run_args(&mut s, migrate);
    assert_eq!(got, [[&b"DEL"[..], b"a", b"c"]]);
    let db = s.0.keyspace.db(0);
    assert!(db.get(b"a").is_none() && db.get(b"b").is_some() && db.get(b"c").is_none());
    run(&mut s, "SET a 1");
    run(&mut s, "GET a");
    let copy: &[&[u8]] = &[b"MIGRATE", b"127.0.0.1", port, b"a", b"0", b"5000", b"COPY"];
    assert!(
        run_args(&mut s, copy).is_empty(),
        "COPY changes nothing here"
    );
    drop(s);
    target.join().unwrap();
}

#[test]
fn publish_goes_to_the_replicas_and_not_to_the_aof() {
    let mut s = server();
    for args in [
        &[b"PUBLISH" as &[u8], b"ch", b"m"],
        &[b"SPUBLISH", b"sh", b"m"],
    ] {
        execute(&mut s.0, &mut s.1, &mut Vec::new(), args);
        let (aof, replicas) = s.0.propagation.take();
        assert!(aof.is_empty(), "{}", String::from_utf8_lossy(&aof));
        let replicas = String::from_utf8(replicas.expect("a stream of their own")).unwrap();
        let verb = String::from_utf8_lossy(args[0]);
        assert!(
            replicas.ends_with(&format!(
                "${}\r\n{verb}\r\n$2\r\n{}\r\n$1\r\nm\r\n",
                verb.len(),
                String::from_utf8_lossy(args[1])
            )),
            "{replicas}"
        );
    }
}
