//! goblin-bench: a closed-loop load generator for cache servers. One thread multiplexes
//! every connection with mio; each connection keeps one request in flight, and every
//! request records three nanosecond timestamps: sent, first response byte, last byte.
//! The wire protocol is behind [`Protocol`] so other fronts (HTTP) can plug in.
//!
//! Phases: `--load` stores `--keys` values of `--value-size` bytes (pipelined), then
//! `--requests` gets of uniformly random keys run over `--conns` connections. With `--pid`,
//! the server's RSS is reported after loading.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use clap::Parser;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

/// A request/response protocol the generator can speak.
trait Protocol {
    /// Appends a store request for `key`.
    fn store(&self, key: &[u8], value: &[u8], out: &mut Vec<u8>);
    /// Appends a fetch request for `key`.
    fn fetch(&self, key: &[u8], out: &mut Vec<u8>);
    /// Length of the complete response at the start of `buf`, if complete.
    fn complete(&self, buf: &[u8]) -> Option<usize>;
}

/// The memcache text protocol.
struct Memcache;

impl Protocol for Memcache {
    fn store(&self, key: &[u8], value: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(b"set ");
        out.extend_from_slice(key);
        out.extend_from_slice(format!(" 0 0 {}\r\n", value.len()).as_bytes());
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }

    fn fetch(&self, key: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(b"get ");
        out.extend_from_slice(key);
        out.extend_from_slice(b"\r\n");
    }

    fn complete(&self, buf: &[u8]) -> Option<usize> {
        let nl = buf.iter().position(|&b| b == b'\n')? + 1;
        let line = &buf[..nl];
        if !line.starts_with(b"VALUE ") {
            return Some(nl);
        }
        let text = std::str::from_utf8(&line[..nl - 2]).ok()?;
        let len: usize = text.rsplit(' ').next()?.parse().ok()?;
        let total = nl + len + 2 + 5;
        (buf.len() >= total).then_some(total)
    }
}

#[derive(Parser)]
#[command(about = "Closed-loop cache load generator")]
struct Args {
    /// Server address.
    #[arg(long, default_value = "127.0.0.1:11211")]
    addr: SocketAddr,
    /// Number of distinct keys.
    #[arg(long, default_value_t = 400_000)]
    keys: u64,
    /// Value size in bytes for --load.
    #[arg(long, default_value_t = 1024)]
    value_size: usize,
    /// Store every key before measuring.
    #[arg(long)]
    load: bool,
    /// Connections for the measured gets (0 skips them).
    #[arg(long, default_value_t = 1)]
    conns: usize,
    /// Measured gets.
    #[arg(long, default_value_t = 100_000)]
    requests: u64,
    /// Unmeasured warm-up gets before the measured ones.
    #[arg(long, default_value_t = 10_000)]
    warmup: u64,
    /// Server PID, to report RSS after loading.
    #[arg(long)]
    pid: Option<u32>,
    /// Label printed with the results.
    #[arg(long, default_value = "server")]
    label: String,
}

fn key(i: u64) -> Vec<u8> {
    format!("key:{i:010}").into_bytes()
}

struct Conn {
    stream: TcpStream,
    inbuf: Vec<u8>,
    outbuf: Vec<u8>,
    written: usize,
    sent_at: Instant,
    first_at: Option<Instant>,
}

/// One request's timestamps, in nanoseconds since the run started.
struct Sample {
    sent: u64,
    first: u64,
    last: u64,
}

fn connect(addr: SocketAddr, poll: &Poll, n: usize) -> io::Result<Vec<Conn>> {
    (0..n)
        .map(|i| {
            let s = std::net::TcpStream::connect(addr)?;
            s.set_nodelay(true)?;
            s.set_nonblocking(true)?;
            let mut stream = TcpStream::from_std(s);
            poll.registry().register(
                &mut stream,
                Token(i),
                Interest::READABLE | Interest::WRITABLE,
            )?;
            Ok(Conn {
                stream,
                inbuf: Vec::new(),
                outbuf: Vec::new(),
                written: 0,
                sent_at: Instant::now(),
                first_at: None,
            })
        })
        .collect()
}

fn flush(c: &mut Conn) -> io::Result<()> {
    while c.written < c.outbuf.len() {
        match c.stream.write(&c.outbuf[c.written..]) {
            Ok(n) => c.written += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    c.outbuf.clear();
    c.written = 0;
    Ok(())
}

fn fill(c: &mut Conn, now: Instant, buf: &mut [u8]) -> io::Result<()> {
    loop {
        match c.stream.read(buf) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                if c.first_at.is_none() {
                    c.first_at = Some(now);
                }
                c.inbuf.extend_from_slice(&buf[..n]);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// Stores every key over one connection, 64 requests in flight.
fn load(args: &Args, proto: &dyn Protocol) -> io::Result<()> {
    let mut poll = Poll::new()?;
    let mut conns = connect(args.addr, &poll, 1)?;
    let c = &mut conns[0];
    let value: Vec<u8> = (0..args.value_size)
        .map(|i| b'a' + (i % 26) as u8)
        .collect();
    let mut events = Events::with_capacity(16);
    let mut scratch = vec![0u8; 256 << 10];
    let (mut next, mut done) = (0u64, 0u64);
    while done < args.keys {
        while next < args.keys && next - done < 64 {
            proto.store(&key(next), &value, &mut c.outbuf);
            next += 1;
        }
        flush(c)?;
        poll.poll(&mut events, Some(Duration::from_millis(100)))?;
        fill(c, Instant::now(), &mut scratch)?;
        while let Some(n) = proto.complete(&c.inbuf) {
            c.inbuf.drain(..n);
            done += 1;
        }
    }
    Ok(())
}

/// Runs `total` gets over `n` connections and returns their samples and the wall time.
fn measure(
    args: &Args,
    proto: &dyn Protocol,
    n: usize,
    total: u64,
) -> io::Result<(Vec<Sample>, Duration)> {
    let mut poll = Poll::new()?;
    let mut conns = connect(args.addr, &poll, n)?;
    let mut events = Events::with_capacity(1024);
    let mut scratch = vec![0u8; 256 << 10];
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut rand_key = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        key(rng % args.keys)
    };
    let start = Instant::now();
    let mut samples = Vec::with_capacity(total as usize);
    let mut issued = 0u64;
    for c in conns.iter_mut() {
        if issued < total {
            proto.fetch(&rand_key(), &mut c.outbuf);
            c.sent_at = Instant::now();
            issued += 1;
            flush(c)?;
        }
    }
    while (samples.len() as u64) < total {
        poll.poll(&mut events, Some(Duration::from_secs(5)))?;
        if events.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "server stopped answering",
            ));
        }
        for ev in &events {
            let c = &mut conns[ev.token().0];
            let now = Instant::now();
            fill(c, now, &mut scratch)?;
            if let Some(len) = proto.complete(&c.inbuf) {
                c.inbuf.drain(..len);
                let first = c.first_at.take().unwrap_or(now);
                let ns = |t: Instant| t.duration_since(start).as_nanos() as u64;
                samples.push(Sample {
                    sent: ns(c.sent_at),
                    first: ns(first),
                    last: ns(now),
                });
                if issued < total {
                    proto.fetch(&rand_key(), &mut c.outbuf);
                    c.sent_at = Instant::now();
                    issued += 1;
                }
            }
            flush(c)?;
        }
    }
    Ok((samples, start.elapsed()))
}

fn pct(sorted: &[u64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1] as f64 / 1000.0
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() -> io::Result<()> {
    let args = Args::parse();
    let proto = Memcache;
    if args.load {
        let before = args.pid.and_then(rss_kib);
        let t = Instant::now();
        load(&args, &proto)?;
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
    if args.conns == 0 {
        return Ok(());
    }
    measure(&args, &proto, args.conns, args.warmup)?;
    let (samples, wall) = measure(&args, &proto, args.conns, args.requests)?;
    let mut done: Vec<u64> = samples.iter().map(|s| s.last - s.sent).collect();
    let mut ttfb: Vec<u64> = samples.iter().map(|s| s.first - s.sent).collect();
    done.sort_unstable();
    ttfb.sort_unstable();
    println!(
        "{} conns={} requests={} throughput={:.0} req/s | done us p50={:.1} p90={:.1} p99={:.1} p99.9={:.1} | ttfb us p50={:.1} p99={:.1}",
        args.label,
        args.conns,
        samples.len(),
        samples.len() as f64 / wall.as_secs_f64(),
        pct(&done, 50.0),
        pct(&done, 90.0),
        pct(&done, 99.0),
        pct(&done, 99.9),
        pct(&ttfb, 50.0),
        pct(&ttfb, 99.0),
    );
    Ok(())
}
