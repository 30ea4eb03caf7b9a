//! Both tail read engines, end to end over TCP: values split into a RAM head and an SSD
//! tail (some kept in the hot-tail cache, the larger read from the pool) come back intact,
//! pipelined replies keep their order, and INFO reports the engine.

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

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn read_until(s: &mut TcpStream, end: &[u8], want: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 20];
    while out.len() < want || !out.ends_with(end) {
        let n = match s.read(&mut buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            r => r.unwrap(),
        };
        assert!(n > 0, "server closed");
        out.extend_from_slice(&buf[..n]);
    }
    out
}

fn round_trip(engine: &str) {
    let dir = std::env::temp_dir().join(format!("goblin-engine-{engine}-{}", std::process::id()));
    let port = free_port().to_string();
    let cli = Cli::parse_from([
        "t",
        "--listen-address",
        "127.0.0.1",
        "--memcache-port",
        &port,
        "--cores",
        "1",
        "--ram-head",
        "4K",
        // Room for the heads and a few small tails in the hot-tail cache: the larger
        // tails must come from the pool through the engine.
        "--memory",
        "256K",
        "--small-memory",
        "8M",
        "--ssd-dir",
        dir.to_str().unwrap(),
        "--tail-io",
        engine,
    ]);
    let handle = goblin_objcache::start(&cli.store).unwrap().unwrap();
    let mut s = TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap())).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let values: Vec<Vec<u8>> = (0..6u32)
        .map(|i| {
            (0..(5000 + i as usize * 40_000))
                .map(|j| (j as u32 * 31 + i) as u8)
                .collect()
        })
        .collect();
    let mut req = Vec::new();
    for (i, v) in values.iter().enumerate() {
        req.extend_from_slice(format!("set k{i} {i} 0 {}\r\n", v.len()).as_bytes());
        req.extend_from_slice(v);
        req.extend_from_slice(b"\r\n");
    }
    s.write_all(&req).unwrap();
    read_until(&mut s, b"STORED\r\n", 8 * values.len());
    // Interleave tail reads with RAM replies; order must hold.
    let mut req = Vec::new();
    let mut expect = Vec::new();
    for (i, v) in values.iter().enumerate().rev() {
        req.extend_from_slice(format!("get k{i}\r\nversion\r\n").as_bytes());
        expect.extend_from_slice(format!("VALUE k{i} {i} {}\r\n", v.len()).as_bytes());
        expect.extend_from_slice(v);
        expect.extend_from_slice(b"\r\nEND\r\n");
        expect.extend_from_slice(
            format!("VERSION {}\r\n", goblin_objcache::store::VERSION).as_bytes(),
        );
    }
    s.write_all(&req).unwrap();
    let got = read_until(&mut s, b"\r\n", expect.len());
    assert!(
        got == expect,
        "replies differ ({} vs {} bytes)",
        got.len(),
        expect.len()
    );
    let info = handle.info_section();
    assert!(info.starts_with("# Objcache\r\n"));
    let want_engine = if engine == "uring" {
        "io_uring"
    } else {
        "blocking"
    };
    assert!(
        info.contains(&format!("tail_engine:{want_engine}\r\n")),
        "{info}"
    );
    assert!(info.contains("\r\nssd_bytes_read:"));
    assert!(!info.contains("\r\nssd_bytes_read:0\r\n"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn blocking_engine_round_trip() {
    round_trip("blocking");
}

#[test]
fn uring_engine_round_trip() {
    round_trip("uring");
}

#[test]
fn no_flag_starts_nothing() {
    let cli = Cli::parse_from(["t"]);
    assert!(goblin_objcache::start(&cli.store).unwrap().is_none());
}

#[test]
fn help_lists_every_flag_with_default() {
    use clap::CommandFactory;
    let help = Cli::command().render_help().to_string();
    for flag in [
        "--memory",
        "--small-memory",
        "--block",
        "--ram-head",
        "--io-chunk",
        "--write-io-chunk",
        "--ssd-dir",
        "--cores",
        "--listen-address",
        "--memcache-port",
        "--no-memcache",
        "--max-item-size",
        "--tail-io",
        "--http-port",
        "--mirror",
        "--mirror-client",
        "--default-ttl",
        "--origin-timeout",
        "--purge-allow",
        "--store-busy-poll-us",
    ] {
        assert!(help.contains(flag), "{flag} missing from --help");
    }
    assert!(help.contains("[default: 11211]") && help.contains("[default: 2M]"));
}
