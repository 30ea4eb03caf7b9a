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
    let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    (server, Client::new(1, -1, any, any, true))
}

/// Runs `cmd` (split on spaces) and returns what it propagated, one command a line.
fn run(s: &mut (Server, Client), cmd: &str) -> String {
    let args: Vec<&[u8]> = cmd.split(' ').map(str::as_bytes).collect();
    let mut out = Vec::new();
    execute(&mut s.0, &mut s.1, &mut out, &args);
    s.0.propagate_removals();
    let bytes = s.0.propagation.take();
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
