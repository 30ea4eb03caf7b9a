//! goblin-bench: a closed-loop load generator for cache servers. One thread multiplexes
//! every connection with mio; each connection keeps one request in flight, and every
//! request records three nanosecond timestamps: sent, first response byte, last byte.
//! The wire protocol is behind [`Protocol`]: a request writer and an incremental response
//! parser, so a large body is counted as it streams past and never buffered whole.
//!
//! Two protocols:
//! - `--protocol memcache` (default): `--load` stores `--keys` values of `--value-size`
//!   bytes (pipelined), then `--requests` gets of uniformly random keys run over
//!   `--concurrency` connections. With `--pid`, the server's RSS is reported after loading.
//! - `--protocol http`: replays `--manifest` (one `/path` per line, optionally followed by
//!   the expected body length) in order over `--concurrency` keep-alive connections, each
//!   request `GET /path HTTP/1.1`. A reply counts as good when its status is 200 and its
//!   body (Content-Length or chunked) has the manifest's length; anything else is an error.
//!
//! Results: count, errors, body bytes, wall time, Gbit/s of body bytes, and time to first
//! byte / to last byte percentiles (nearest rank) and mean, as text or `--format json`.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

/// How far a response parse got with the bytes offered to it.
enum Step {
    /// Every offered byte from `used` on is needed again with more input.
    More { used: usize },
    /// The response ended after `used` bytes.
    Done { used: usize, reply: Reply },
}

/// What the client learned from one complete response.
#[derive(Clone, Copy, Default)]
struct Reply {
    /// The server said the request succeeded (HTTP 200; a memcache non-error line).
    ok: bool,
    /// Payload bytes: the HTTP body, or the memcache value.
    body: u64,
    /// The server will close the connection after this response.
    close: bool,
}

/// A request/response protocol the generator can speak.
trait Protocol {
    /// Per-connection response parser state, reset after every response.
    type State: Default;
    /// Appends a fetch request for `key`.
    fn fetch(&self, key: &[u8], out: &mut Vec<u8>);
    /// Parses the response at the start of `buf`, continuing from `st`.
    fn parse(&self, st: &mut Self::State, buf: &[u8]) -> Result<Step, String>;
}

/// The memcache text protocol. Its replies are small, so a reply is parsed only once it
/// is complete in the buffer.
struct Memcache;

impl Memcache {
    fn store(&self, key: &[u8], value: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(b"set ");
        out.extend_from_slice(key);
        out.extend_from_slice(format!(" 0 0 {}\r\n", value.len()).as_bytes());
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
}

impl Protocol for Memcache {
    type State = ();

    fn fetch(&self, key: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(b"get ");
        out.extend_from_slice(key);
        out.extend_from_slice(b"\r\n");
    }

    fn parse(&self, _: &mut (), buf: &[u8]) -> Result<Step, String> {
        let Some(nl) = buf.iter().position(|&b| b == b'\n').map(|i| i + 1) else {
            return Ok(Step::More { used: 0 });
        };
        let line = &buf[..nl];
        if !line.starts_with(b"VALUE ") {
            let ok = !line.ends_with(b"ERROR\r\n") && !line.starts_with(b"SERVER_ERROR");
            let reply = Reply {
                ok,
                ..Reply::default()
            };
            return Ok(Step::Done { used: nl, reply });
        }
        let text = std::str::from_utf8(&line[..nl - 2]).map_err(|e| e.to_string())?;
        let len: usize = text
            .rsplit(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("bad VALUE line {text:?}"))?;
        let total = nl + len + 2 + 5;
        if buf.len() < total {
            return Ok(Step::More { used: 0 });
        }
        let reply = Reply {
            ok: true,
            body: len as u64,
            close: false,
        };
        Ok(Step::Done { used: total, reply })
    }
}

/// HTTP/1.1 GETs over keep-alive connections.
struct Http {
    /// The Host header sent with every request.
    host: String,
}

/// Largest response head the client accepts.
const MAX_HEAD: usize = 64 << 10;

/// Where an HTTP response parse stands.
#[derive(Default)]
enum HttpPhase {
    /// Waiting for the complete head (status line and headers).
    #[default]
    Head,
    /// This many Content-Length body bytes are still to come.
    Body(u64),
    /// Waiting for a chunk-size line.
    ChunkSize,
    /// This many bytes of the current chunk are still to come.
    ChunkData(u64),
    /// Waiting for the CRLF that ends a chunk's data.
    ChunkEnd,
    /// After the last chunk: trailer lines until an empty one.
    Trailer,
}

#[derive(Default)]
struct HttpState {
    phase: HttpPhase,
    reply: Reply,
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Parses a response head (through its blank line) into the reply's status and close
/// flag and the phase its body starts in.
fn http_head(head: &[u8]) -> Result<(Reply, HttpPhase), String> {
    let text = std::str::from_utf8(head).map_err(|_| "response head is not UTF-8".to_string())?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    let status: u16 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line {status_line:?}"))?;
    if !version.starts_with("HTTP/1.") {
        return Err(format!("bad status line {status_line:?}"));
    }
    let mut reply = Reply {
        ok: status == 200,
        body: 0,
        close: version == "HTTP/1.0",
    };
    let (mut length, mut chunked) = (None, false);
    for line in lines.take_while(|l| !l.is_empty()) {
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("bad header line {line:?}"));
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(value.parse::<u64>().map_err(|_| format!("bad {line:?}"))?);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.to_ascii_lowercase().ends_with("chunked");
        } else if name.eq_ignore_ascii_case("connection") {
            if value.eq_ignore_ascii_case("close") {
                reply.close = true;
            } else if value.eq_ignore_ascii_case("keep-alive") {
                reply.close = false;
            }
        }
    }
    let phase = match (status, chunked, length) {
        (100..=199 | 204 | 304, _, _) => HttpPhase::Body(0),
        (_, true, _) => HttpPhase::ChunkSize,
        (_, false, Some(n)) => HttpPhase::Body(n),
        (_, false, None) => {
            return Err(format!(
                "status {status} with neither Content-Length nor chunked body"
            ))
        }
    };
    Ok((reply, phase))
}

impl Protocol for Http {
    type State = HttpState;

    fn fetch(&self, path: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(b"GET ");
        out.extend_from_slice(path);
        out.extend_from_slice(b" HTTP/1.1\r\nHost: ");
        out.extend_from_slice(self.host.as_bytes());
        out.extend_from_slice(b"\r\n\r\n");
    }

    fn parse(&self, st: &mut HttpState, buf: &[u8]) -> Result<Step, String> {
        let mut at = 0;
        loop {
            let rest = &buf[at..];
            match &mut st.phase {
                HttpPhase::Head => {
                    let Some(end) = find(rest, b"\r\n\r\n") else {
                        if rest.len() > MAX_HEAD {
                            return Err("response head over 64 KiB".into());
                        }
                        return Ok(Step::More { used: at });
                    };
                    (st.reply, st.phase) = http_head(&rest[..end + 4])?;
                    at += end + 4;
                }
                HttpPhase::Body(left) => {
                    let take = (*left).min(rest.len() as u64);
                    (*left, st.reply.body, at) =
                        (*left - take, st.reply.body + take, at + take as usize);
                    if *left > 0 {
                        return Ok(Step::More { used: at });
                    }
                    return Ok(Step::Done {
                        used: at,
                        reply: st.reply,
                    });
                }
                HttpPhase::ChunkSize => {
                    let Some(end) = find(rest, b"\r\n") else {
                        return Ok(Step::More { used: at });
                    };
                    let line = std::str::from_utf8(&rest[..end]).unwrap_or("");
                    let hex = line.split(';').next().unwrap_or("").trim();
                    let size = u64::from_str_radix(hex, 16)
                        .map_err(|_| format!("bad chunk size line {line:?}"))?;
                    st.phase = if size == 0 {
                        HttpPhase::Trailer
                    } else {
                        HttpPhase::ChunkData(size)
                    };
                    at += end + 2;
                }
                HttpPhase::ChunkData(left) => {
                    let take = (*left).min(rest.len() as u64);
                    (*left, st.reply.body, at) =
                        (*left - take, st.reply.body + take, at + take as usize);
                    if *left > 0 {
                        return Ok(Step::More { used: at });
                    }
                    st.phase = HttpPhase::ChunkEnd;
                }
                HttpPhase::ChunkEnd => {
                    if rest.len() < 2 {
                        return Ok(Step::More { used: at });
                    }
                    if &rest[..2] != b"\r\n" {
                        return Err("chunk data not followed by CRLF".into());
                    }
                    st.phase = HttpPhase::ChunkSize;
                    at += 2;
                }
                HttpPhase::Trailer => {
                    let Some(end) = find(rest, b"\r\n") else {
                        return Ok(Step::More { used: at });
                    };
                    at += end + 2;
                    if end == 0 {
                        return Ok(Step::Done {
                            used: at,
                            reply: st.reply,
                        });
                    }
                }
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ProtocolName {
    Memcache,
    Http,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Parser)]
#[command(about = "Closed-loop cache load generator (memcache text protocol or HTTP/1.1)")]
struct Args {
    /// Wire protocol.
    #[arg(long, value_enum, default_value = "memcache")]
    protocol: ProtocolName,
    /// Server address.
    #[arg(long, default_value = "127.0.0.1:11211")]
    addr: SocketAddr,
    /// Connections, each with one request in flight (0 skips the measured requests).
    #[arg(long, visible_alias = "conns", default_value_t = 1)]
    concurrency: usize,
    /// Output format of the results.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Label printed with the results.
    #[arg(long, default_value = "server")]
    label: String,
    /// memcache: number of distinct keys.
    #[arg(long, default_value_t = 400_000)]
    keys: u64,
    /// memcache: value size in bytes for --load.
    #[arg(long, default_value_t = 1024)]
    value_size: usize,
    /// memcache: store every key before measuring.
    #[arg(long)]
    load: bool,
    /// memcache: measured gets.
    #[arg(long, default_value_t = 100_000)]
    requests: u64,
    /// Unmeasured requests before the measured ones [default: 10000 for memcache, 0 for
    /// http, where they are the manifest's first lines].
    #[arg(long)]
    warmup: Option<u64>,
    /// memcache: server PID, to report RSS after loading.
    #[arg(long)]
    pid: Option<u32>,
    /// http: the request paths, one per line, each optionally followed by whitespace and
    /// the expected body length in bytes.
    #[arg(long)]
    manifest: Option<String>,
    /// http: replay only the manifest's first N lines.
    #[arg(long)]
    limit: Option<usize>,
    /// http: Host header.
    #[arg(long, default_value = "x")]
    host: String,
    /// Seconds without any reply before the run is abandoned.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
}

fn key(i: u64) -> Vec<u8> {
    format!("key:{i:010}").into_bytes()
}

struct Conn<S> {
    stream: TcpStream,
    /// Bytes of a response not yet consumed by the parser (a partial head or reply).
    inbuf: Vec<u8>,
    outbuf: Vec<u8>,
    written: usize,
    parse: S,
    /// The request in flight: when it was sent and its expected body length.
    busy: bool,
    expect: Option<u64>,
    sent_at: Instant,
    first_at: Option<Instant>,
}

/// One request's timestamps, in nanoseconds since the run started.
struct Sample {
    sent: u64,
    first: u64,
    last: u64,
}

fn open<S: Default>(addr: SocketAddr, poll: &Poll, token: usize) -> io::Result<Conn<S>> {
    let s = std::net::TcpStream::connect(addr)?;
    s.set_nodelay(true)?;
    s.set_nonblocking(true)?;
    let mut stream = TcpStream::from_std(s);
    poll.registry().register(
        &mut stream,
        Token(token),
        Interest::READABLE | Interest::WRITABLE,
    )?;
    Ok(Conn {
        stream,
        inbuf: Vec::new(),
        outbuf: Vec::new(),
        written: 0,
        parse: S::default(),
        busy: false,
        expect: None,
        sent_at: Instant::now(),
        first_at: None,
    })
}

fn flush<S>(c: &mut Conn<S>) -> io::Result<()> {
    while c.written < c.outbuf.len() {
        match c.stream.write(&c.outbuf[c.written..]) {
            Ok(n) => c.written += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    c.outbuf.clear();
    c.written = 0;
    Ok(())
}

/// Feeds `data` to the parser and pushes every completed reply; returns how many bytes
/// of `data` were used.
fn feed<P: Protocol>(
    proto: &P,
    st: &mut P::State,
    data: &[u8],
    replies: &mut Vec<Reply>,
) -> io::Result<usize> {
    let mut at = 0;
    loop {
        match proto.parse(st, &data[at..]) {
            Ok(Step::More { used }) => return Ok(at + used),
            Ok(Step::Done { used, reply }) => {
                at += used;
                *st = P::State::default();
                replies.push(reply);
                if reply.close || at == data.len() {
                    return Ok(at);
                }
            }
            Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e)),
        }
    }
}

/// Reads everything available on `c` and parses it, pushing completed replies. Body
/// bytes read straight into `scratch` are parsed there and never copied; only a partial
/// head or memcache reply is kept in the connection's buffer.
fn fill<P: Protocol>(
    proto: &P,
    c: &mut Conn<P::State>,
    now: Instant,
    scratch: &mut [u8],
    replies: &mut Vec<Reply>,
) -> io::Result<()> {
    loop {
        let n = match c.stream.read(scratch) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if c.first_at.is_none() {
            c.first_at = Some(now);
        }
        let before = replies.len();
        if c.inbuf.is_empty() {
            let used = feed(proto, &mut c.parse, &scratch[..n], replies)?;
            c.inbuf.extend_from_slice(&scratch[used..n]);
        } else {
            c.inbuf.extend_from_slice(&scratch[..n]);
            let used = feed(proto, &mut c.parse, &c.inbuf, replies)?;
            c.inbuf.drain(..used);
        }
        if replies[before..].iter().any(|r| r.close) {
            return Ok(());
        }
    }
}

/// Stores every key over one connection, 64 requests in flight.
fn load(args: &Args) -> io::Result<()> {
    let proto = Memcache;
    let mut poll = Poll::new()?;
    let mut c: Conn<()> = open(args.addr, &poll, 0)?;
    let value: Vec<u8> = (0..args.value_size)
        .map(|i| b'a' + (i % 26) as u8)
        .collect();
    let mut events = Events::with_capacity(16);
    let mut scratch = vec![0u8; 256 << 10];
    let mut replies = Vec::new();
    let (mut next, mut done) = (0u64, 0u64);
    while done < args.keys {
        while next < args.keys && next - done < 64 {
            proto.store(&key(next), &value, &mut c.outbuf);
            next += 1;
        }
        flush(&mut c)?;
        poll.poll(&mut events, Some(Duration::from_millis(100)))?;
        fill(&proto, &mut c, Instant::now(), &mut scratch, &mut replies)?;
        done += replies.len() as u64;
        replies.clear();
    }
    Ok(())
}

/// The outcome of one measured pass.
struct Run {
    samples: Vec<Sample>,
    errors: u64,
    bytes: u64,
    wall: Duration,
}

/// Runs `total` requests over `n` connections, one in flight on each; `next(i, out)`
/// appends request `i` and returns its expected body length, if known. A connection
/// that fails or is closed by the server is reopened (its request counts as an error).
fn measure<P: Protocol>(
    args: &Args,
    proto: &P,
    n: usize,
    total: u64,
    mut next: impl FnMut(u64, &mut Vec<u8>) -> Option<u64>,
) -> io::Result<Run> {
    let mut poll = Poll::new()?;
    let mut conns = (0..n)
        .map(|i| open(args.addr, &poll, i))
        .collect::<io::Result<Vec<Conn<P::State>>>>()?;
    let mut events = Events::with_capacity(1024);
    let mut scratch = vec![0u8; 256 << 10];
    let mut replies = Vec::new();
    let start = Instant::now();
    let mut run = Run {
        samples: Vec::with_capacity(total as usize),
        errors: 0,
        bytes: 0,
        wall: Duration::ZERO,
    };
    let mut issued = 0u64;
    let mut issue = |c: &mut Conn<P::State>, issued: &mut u64| {
        if *issued < total {
            c.expect = next(*issued, &mut c.outbuf);
            c.busy = true;
            c.first_at = None;
            c.sent_at = Instant::now();
            *issued += 1;
        }
    };
    for c in conns.iter_mut() {
        issue(c, &mut issued);
        flush(c)?;
    }
    let ns = |t: Instant| t.duration_since(start).as_nanos() as u64;
    let mut last_reply = Instant::now();
    while (run.samples.len() as u64 + run.errors) < total {
        poll.poll(&mut events, Some(Duration::from_secs(1)))?;
        if events.is_empty() && last_reply.elapsed() > Duration::from_secs(args.timeout) {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "no reply for {} s after {} of {total} requests",
                    args.timeout,
                    run.samples.len() as u64 + run.errors
                ),
            ));
        }
        for ev in &events {
            let i = ev.token().0;
            let c = &mut conns[i];
            let now = Instant::now();
            let result = fill(proto, c, now, &mut scratch, &mut replies).and_then(|()| flush(c));
            let mut reopen = result.is_err();
            if let Err(e) = &result {
                if c.busy {
                    eprintln!("{}: request failed on connection {i}: {e}", args.label);
                }
            }
            for reply in replies.drain(..) {
                if !c.busy {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "reply with no request in flight",
                    ));
                }
                c.busy = false;
                last_reply = now;
                let good = reply.ok && c.expect.is_none_or(|len| len == reply.body);
                if good {
                    run.bytes += reply.body;
                    run.samples.push(Sample {
                        sent: ns(c.sent_at),
                        first: ns(c.first_at.unwrap_or(now)),
                        last: ns(now),
                    });
                } else {
                    run.errors += 1;
                }
                reopen |= reply.close;
            }
            if reopen {
                if c.busy {
                    run.errors += 1;
                    last_reply = now;
                }
                if run.errors > total / 100 + 100 {
                    return Err(io::Error::other(format!(
                        "{} errors, giving up",
                        run.errors
                    )));
                }
                poll.registry().deregister(&mut c.stream)?;
                *c = open(args.addr, &poll, i)?;
            }
            if !c.busy {
                issue(c, &mut issued);
            }
            if let Err(e) = flush(c) {
                return Err(io::Error::new(
                    e.kind(),
                    format!("sending on connection {i}: {e}"),
                ));
            }
        }
    }
    run.wall = start.elapsed();
    Ok(run)
}

/// Nearest-rank percentile of sorted nanoseconds, in microseconds.
fn pct(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1] as f64 / 1000.0
}

/// Percentiles and mean of one latency, in microseconds.
struct Dist {
    p50: f64,
    p90: f64,
    p99: f64,
    p999: f64,
    mean: f64,
}

impl Dist {
    fn of(mut ns: Vec<u64>) -> Dist {
        ns.sort_unstable();
        let mean = if ns.is_empty() {
            0.0
        } else {
            ns.iter().sum::<u64>() as f64 / ns.len() as f64 / 1000.0
        };
        Dist {
            p50: pct(&ns, 50.0),
            p90: pct(&ns, 90.0),
            p99: pct(&ns, 99.0),
            p999: pct(&ns, 99.9),
            mean,
        }
    }

    fn text(&self) -> String {
        format!(
            "p50={:.1} p90={:.1} p99={:.1} p99.9={:.1} mean={:.1}",
            self.p50, self.p90, self.p99, self.p999, self.mean
        )
    }

    fn json(&self) -> String {
        format!(
            r#"{{"p50": {:.3}, "p90": {:.3}, "p99": {:.3}, "p99_9": {:.3}, "mean": {:.3}}}"#,
            self.p50, self.p90, self.p99, self.p999, self.mean
        )
    }
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn report(args: &Args, run: &Run) {
    let ttfb = Dist::of(run.samples.iter().map(|s| s.first - s.sent).collect());
    let ttlb = Dist::of(run.samples.iter().map(|s| s.last - s.sent).collect());
    let secs = run.wall.as_secs_f64();
    let count = run.samples.len() as u64 + run.errors;
    let gbit = run.bytes as f64 * 8.0 / secs / 1e9;
    let rps = count as f64 / secs;
    match args.format {
        Format::Text => println!(
            "{} concurrency={} requests={} errors={} bytes={} wall={:.3}s {:.0} req/s {:.3} Gbit/s | ttfb us {} | ttlb us {}",
            args.label,
            args.concurrency,
            count,
            run.errors,
            run.bytes,
            secs,
            rps,
            gbit,
            ttfb.text(),
            ttlb.text()
        ),
        Format::Json => println!(
            r#"{{"label": {}, "concurrency": {}, "requests": {count}, "errors": {}, "bytes": {}, "wall_s": {secs:.6}, "req_per_s": {rps:.1}, "gbit_per_s": {gbit:.4}, "ttfb_us": {}, "ttlb_us": {}}}"#,
            json_string(&args.label),
            args.concurrency,
            run.errors,
            run.bytes,
            ttfb.json(),
            ttlb.json()
        ),
    }
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Reads a manifest: `(path, expected body length)` per non-empty line.
fn read_manifest(path: &str, limit: Option<usize>) -> io::Result<Vec<(Vec<u8>, Option<u64>)>> {
    let text = std::fs::read_to_string(path)?;
    let mut out = Vec::new();
    for (n, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        if limit.is_some_and(|l| n >= l) {
            break;
        }
        let mut fields = line.split_whitespace();
        let target = fields.next().unwrap_or("");
        if !target.starts_with('/') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{path}:{}: a request path starts with '/', got {target:?}",
                    n + 1
                ),
            ));
        }
        let len = match fields.next() {
            Some(f) => Some(f.parse().map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{path}:{}: bad length {f:?}", n + 1),
                )
            })?),
            None => None,
        };
        out.push((target.as_bytes().to_vec(), len));
    }
    Ok(out)
}

fn run_memcache(args: &Args) -> io::Result<()> {
    if args.load {
        let before = args.pid.and_then(rss_kib);
        let t = Instant::now();
        load(args)?;
        println!(
            "{} load: {} keys in {:.2?}",
            args.label,
            args.keys,
            t.elapsed()
        );
        if let (Some(pid), Some(before)) = (args.pid, before) {
            let after = rss_kib(pid).unwrap_or(0);
            println!(
                "{} rss: {} KiB after load ({} KiB before), {:.0} bytes per object",
                args.label,
                after,
                before,
                after as f64 * 1024.0 / args.keys as f64
            );
        }
    }
    if args.concurrency == 0 {
        return Ok(());
    }
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut random_get = |_: u64, out: &mut Vec<u8>| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        Memcache.fetch(&key(rng % args.keys), out);
        None
    };
    let warmup = args.warmup.unwrap_or(10_000);
    if warmup > 0 {
        measure(args, &Memcache, args.concurrency, warmup, &mut random_get)?;
    }
    let run = measure(
        args,
        &Memcache,
        args.concurrency,
        args.requests,
        &mut random_get,
    )?;
    report(args, &run);
    Ok(())
}

fn run_http(args: &Args) -> io::Result<()> {
    let Some(path) = &args.manifest else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "--protocol http needs --manifest FILE",
        ));
    };
    if args.load {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "--load is memcache only",
        ));
    }
    let manifest = read_manifest(path, args.limit)?;
    let proto = Http {
        host: args.host.clone(),
    };
    let warmup = (args.warmup.unwrap_or(0) as usize).min(manifest.len());
    let (head, measured) = manifest.split_at(warmup);
    let replay = |lines: &[(Vec<u8>, Option<u64>)]| {
        measure(
            args,
            &proto,
            args.concurrency,
            lines.len() as u64,
            |i, out| {
                let (target, len) = &lines[i as usize];
                proto.fetch(target, out);
                *len
            },
        )
    };
    if !head.is_empty() {
        replay(head)?;
    }
    let run = replay(measured)?;
    report(args, &run);
    Ok(())
}

fn main() -> io::Result<()> {
    let args = Args::parse();
    match args.protocol {
        ProtocolName::Memcache => run_memcache(&args),
        ProtocolName::Http => run_http(&args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `wire` to the HTTP parser in pieces of `step` bytes, as reads would.
    fn replies(wire: &[u8], step: usize) -> Vec<(bool, u64, bool)> {
        let (proto, mut st, mut buf, mut out) = (
            Http { host: "x".into() },
            HttpState::default(),
            Vec::new(),
            Vec::new(),
        );
        for piece in wire.chunks(step) {
            buf.extend_from_slice(piece);
            let used = feed(&proto, &mut st, &buf, &mut out).unwrap();
            buf.drain(..used);
        }
        assert!(buf.is_empty(), "{} bytes left over", buf.len());
        out.iter().map(|r| (r.ok, r.body, r.close)).collect()
    }

    #[test]
    fn http_content_length_and_chunked_in_any_split() {
        let mut wire = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789".to_vec();
        wire.extend_from_slice(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\nabcd\r\n3\r\nefg\r\n0\r\nT: v\r\n\r\n");
        wire.extend_from_slice(b"HTTP/1.1 304 Not Modified\r\n\r\n");
        // A reply that closes the connection is the last one parsed.
        wire.extend_from_slice(
            b"HTTP/1.1 404 Not Found\r\ncontent-length: 2\r\nConnection: close\r\n\r\nno",
        );
        for step in [1, 2, 3, 7, 64, wire.len()] {
            assert_eq!(
                replies(&wire, step),
                vec![
                    (true, 10, false),
                    (true, 7, false),
                    (false, 0, false),
                    (false, 2, true)
                ],
                "step {step}"
            );
        }
    }

    #[test]
    fn http_rejects_bad_framing() {
        let proto = Http { host: "x".into() };
        for wire in [
            &b"HTTP/1.1 200 OK\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            b"SPDY 200 OK\r\nContent-Length: 0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n",
        ] {
            assert!(feed(&proto, &mut HttpState::default(), wire, &mut Vec::new()).is_err());
        }
    }

    #[test]
    fn memcache_replies() {
        let wire = b"STORED\r\nVALUE k 0 3\r\nabc\r\nEND\r\nEND\r\nSERVER_ERROR out of memory\r\n";
        let mut out = Vec::new();
        assert_eq!(
            feed(&Memcache, &mut (), wire, &mut out).unwrap(),
            wire.len()
        );
        let got: Vec<_> = out.iter().map(|r| (r.ok, r.body)).collect();
        assert_eq!(got, vec![(true, 0), (true, 3), (true, 0), (false, 0)]);
    }
}
