//! A RAM-only store far smaller than the data written through it: it keeps serving, evicts
//! and compacts, and every hit returns exactly the bytes stored under that key.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use clap::Parser;
use goblin_objcache::StoreArgs;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    store: StoreArgs,
}

fn value(i: u32) -> Vec<u8> {
    let len = 100 + (i as usize * 7919) % 20_000;
    (0..len)
        .map(|j| (j as u32 ^ i.wrapping_mul(2_654_435_761)) as u8)
        .collect()
}

fn reply(
    s: &mut TcpStream,
    buf: &mut Vec<u8>,
    complete: impl Fn(&[u8]) -> Option<usize>,
) -> Vec<u8> {
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        if let Some(n) = complete(buf) {
            return buf.drain(..n).collect();
        }
        let n = match s.read(&mut chunk) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            r => r.unwrap(),
        };
        assert!(n > 0, "server closed");
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn line_end(buf: &[u8]) -> Option<usize> {
    buf.windows(2).position(|w| w == b"\r\n").map(|p| p + 2)
}

#[test]
fn overfilled_store_evicts_and_never_returns_wrong_bytes() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let cli = Cli::parse_from([
        "t",
        "--listen-address",
        "127.0.0.1",
        "--memcache-port",
        &port,
        "--cores",
        "2",
        "--small-memory",
        "1M",
        "--block",
        "64K",
        "-I",
        "32K",
    ]);
    let handle = goblin_objcache::start(&cli.store).unwrap().unwrap();
    let mut s = TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap())).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = Vec::new();
    let keys = 2000u32;
    for round in 0..2 {
        for i in 0..keys {
            let v = value(i);
            let mut req = format!("set k{i} {round} 0 {}\r\n", v.len()).into_bytes();
            req.extend_from_slice(&v);
            req.extend_from_slice(b"\r\n");
            s.write_all(&req).unwrap();
            assert_eq!(reply(&mut s, &mut buf, line_end), b"STORED\r\n");
            if i % 5 == 0 {
                s.write_all(format!("delete k{}\r\n", i / 2).as_bytes())
                    .unwrap();
                reply(&mut s, &mut buf, line_end);
            }
        }
    }
    let mut hits = 0;
    for i in 0..keys {
        s.write_all(format!("get k{i}\r\n").as_bytes()).unwrap();
        let r = reply(&mut s, &mut buf, |b| {
            if b.starts_with(b"END\r\n") {
                return Some(5);
            }
            let nl = line_end(b)?;
            let len: usize = std::str::from_utf8(&b[..nl - 2])
                .ok()?
                .rsplit(' ')
                .next()?
                .parse()
                .ok()?;
            (b.len() >= nl + len + 7).then_some(nl + len + 7)
        });
        if r != b"END\r\n" {
            let v = value(i);
            let mut want = format!("VALUE k{i} 1 {}\r\n", v.len()).into_bytes();
            want.extend_from_slice(&v);
            want.extend_from_slice(b"\r\nEND\r\n");
            assert!(r == want, "key k{i} returned other bytes");
            hits += 1;
        }
    }
    let info = handle.info_section();
    let field = |name: &str| -> u64 {
        let line = info
            .lines()
            .find(|l| l.starts_with(&format!("{name}:")))
            .unwrap();
        line[name.len() + 1..].parse().unwrap()
    };
    assert!(hits > 0);
    assert!(field("evictions") > 0, "{info}");
    assert!(field("arena_compactions") > 0, "{info}");
    assert!(field("arena_bytes") <= 1 << 20);
}
