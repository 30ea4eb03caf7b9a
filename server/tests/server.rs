//! Integration test: starts the built `goblin-server` binary on a free port and checks the
//! exact reply bytes of a few requests over a plain TCP socket (std only).
//!
//! The differential suite in `compat-tests/` compares everything against a real Redis; this
//! test keeps a fast, dependency-free check inside `cargo test`.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running goblin-server, killed when dropped.
struct Server {
    child: Child,
    port: u16,
    dir: std::path::PathBuf,
}

impl Server {
    /// Starts a server on a free port. Tests run in parallel, so another test's server may
    /// take the port between our probe and the bind: a start is only accepted once the
    /// server on the port says it is our child (INFO's process_id), and retried otherwise.
    fn start() -> Server {
        for _ in 0..10 {
            if let Some(server) = Server::try_start() {
                return server;
            }
        }
        panic!("goblin-server did not start on a free port in 10 tries");
    }

    fn try_start() -> Option<Server> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        // No save points and a directory of its own: parallel servers must not share (or
        // load) a dump.rdb.
        let dir = std::env::temp_dir().join(format!("goblin-it-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("test directory");
        let child = Command::new(env!("CARGO_BIN_EXE_goblin-server"))
            .args([
                "--port",
                &port.to_string(),
                "--loglevel",
                "warning",
                "--save",
                "",
            ])
            .arg("--dir")
            .arg(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn goblin-server");
        let mut server = Server { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Ok(Some(_)) = server.child.try_wait() {
                return None; // e.g. the port was taken: try another
            }
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
                let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                let _ = s.write_all(b"INFO server\r\n");
                let mut reply = vec![0u8; 8192];
                let n = s.read(&mut reply).unwrap_or(0);
                let text = String::from_utf8_lossy(&reply[..n]);
                return text
                    .contains(&format!("process_id:{}\r\n", server.child.id()))
                    .then_some(server);
            }
            assert!(
                Instant::now() < deadline,
                "goblin-server did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.set_nodelay(true).unwrap();
        s
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Sends `request` and reads exactly `expected.len()` bytes, which must equal `expected`.
fn roundtrip(stream: &mut TcpStream, request: &[u8], expected: &[u8]) {
    stream.write_all(request).unwrap();
    let mut got = vec![0u8; expected.len()];
    stream.read_exact(&mut got).unwrap_or_else(|e| {
        panic!(
            "reading the reply to {:?}: {e}",
            String::from_utf8_lossy(request)
        )
    });
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(expected),
        "reply to {:?}",
        String::from_utf8_lossy(request)
    );
}

/// Reads until the peer closes the connection; returns what arrived before.
fn read_to_close(stream: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return out,
            Err(e) => panic!("connection not closed: {e}; got {out:?}"),
        }
    }
}

/// A request as a RESP array of bulk strings.
fn cmd(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

#[test]
fn ping() {
    let server = Server::start();
    let mut s = server.connect();
    roundtrip(&mut s, &cmd(&[b"PING"]), b"+PONG\r\n");
    roundtrip(&mut s, &cmd(&[b"ping", b"hello"]), b"$5\r\nhello\r\n");
    roundtrip(
        &mut s,
        &cmd(&[b"PING", b"a", b"b"]),
        b"-ERR wrong number of arguments for 'ping' command\r\n",
    );
}

#[test]
fn echo() {
    let server = Server::start();
    let mut s = server.connect();
    roundtrip(&mut s, &cmd(&[b"ECHO", b"hi there"]), b"$8\r\nhi there\r\n");
    roundtrip(&mut s, &cmd(&[b"ECHO", b""]), b"$0\r\n\r\n");
    roundtrip(&mut s, &cmd(&[b"ECHO", b"\x00\r\n"]), b"$3\r\n\x00\r\n\r\n");
    roundtrip(
        &mut s,
        &cmd(&[b"ECHO"]),
        b"-ERR wrong number of arguments for 'echo' command\r\n",
    );
}

#[test]
fn unknown_command() {
    let server = Server::start();
    let mut s = server.connect();
    roundtrip(
        &mut s,
        &cmd(&[b"NOSUCH", b"a", b"b c"]),
        b"-ERR unknown command 'NOSUCH', with args beginning with: 'a' 'b c' \r\n",
    );
    roundtrip(
        &mut s,
        &cmd(&[b"nosuch"]),
        b"-ERR unknown command 'nosuch', with args beginning with: \r\n",
    );
    // The connection stays usable.
    roundtrip(&mut s, &cmd(&[b"PING"]), b"+PONG\r\n");
}

#[test]
fn pipelined_requests_answered_in_order() {
    let server = Server::start();
    let mut s = server.connect();
    let mut request = Vec::new();
    let mut expected = Vec::new();
    for i in 0..1000 {
        let word = format!("w{i}");
        request.extend(cmd(&[b"ECHO", word.as_bytes()]));
        expected.extend(format!("${}\r\n{word}\r\n", word.len()).into_bytes());
        request.extend_from_slice(b"PING\r\n"); // inline, interleaved
        expected.extend_from_slice(b"+PONG\r\n");
    }
    roundtrip(&mut s, &request, &expected);
}

#[test]
fn request_split_across_writes() {
    let server = Server::start();
    let mut s = server.connect();
    let request = cmd(&[b"ECHO", b"in pieces"]);
    for chunk in request.chunks(3) {
        s.write_all(chunk).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    roundtrip(&mut s, b"", b"$9\r\nin pieces\r\n");
}

#[test]
fn protocol_error_closes_connection() {
    let server = Server::start();
    let mut s = server.connect();
    s.write_all(b"PING\r\n*1\r\n$abc\r\n").unwrap();
    assert_eq!(
        String::from_utf8_lossy(&read_to_close(&mut s)),
        "+PONG\r\n-ERR Protocol error: invalid bulk length\r\n"
    );

    let mut s = server.connect();
    s.write_all(b"*1\r\nfoo\r\n").unwrap();
    assert_eq!(
        read_to_close(&mut s),
        b"-ERR Protocol error: expected '$', got 'f'\r\n"
    );

    let mut s = server.connect();
    s.write_all(b"ECHO \"unbalanced\r\n").unwrap();
    assert_eq!(
        read_to_close(&mut s),
        b"-ERR Protocol error: unbalanced quotes in request\r\n"
    );

    // Other clients are not disturbed.
    let mut other = server.connect();
    roundtrip(&mut other, &cmd(&[b"PING"]), b"+PONG\r\n");
}

#[test]
fn quit_closes_after_ok() {
    let server = Server::start();
    let mut s = server.connect();
    s.write_all(&[cmd(&[b"QUIT"]), cmd(&[b"PING"])].concat())
        .unwrap();
    assert_eq!(read_to_close(&mut s), b"+OK\r\n");
}
