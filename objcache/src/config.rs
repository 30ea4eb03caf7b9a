//! Command-line flags of Goblin Store and the validated configuration derived from them.
//!
//! The flags are a `clap::Args` group so that `goblin-server` can flatten them next to its
//! own. Every field is an `Option` so that "no store flag at all" can be told apart from
//! "the defaults": with none of them the process is the sorted-set server alone.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};

/// Alignment and size unit of every O_DIRECT transfer on the tail pool.
pub const DIRECT_IO_ALIGN: u64 = 4096;

/// Flags of Goblin Store, flattened into `goblin-server` and `goblin-store`.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Goblin Store (object cache)")]
pub struct StoreArgs {
    /// RAM for the fixed-size heads of objects at least --ram-head long (bytes, K/M/G suffix)
    /// [default: 64M; used only with --ssd-dir]
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory: Option<u64>,

    /// RAM for the packed arena of whole objects (bytes, K/M/G suffix) [default: 64M]
    #[arg(long = "small-memory", value_name = "SIZE", value_parser = parse_size)]
    pub small_memory: Option<u64>,

    /// Allocation block of the arena and of the head slots; HugeTLB is tried first
    /// (bytes, K/M/G suffix) [default: 2M]
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub block: Option<u64>,

    /// Bytes of an object kept in RAM; longer objects keep the rest on SSD
    /// (bytes, K/M/G suffix) [default: 64K; used only with --ssd-dir]
    #[arg(long = "ram-head", value_name = "SIZE", value_parser = parse_size)]
    pub ram_head: Option<u64>,

    /// Unit of one O_DIRECT tail read (bytes, K/M/G suffix, multiple of 4K) [default: 256K]
    #[arg(long = "io-chunk", value_name = "SIZE", value_parser = parse_size)]
    pub io_chunk: Option<u64>,

    /// Unit of one tail write to the pool file (bytes, K/M/G suffix, multiple of 4K) [default: 1M]
    #[arg(long = "write-io-chunk", value_name = "SIZE", value_parser = parse_size)]
    pub write_io_chunk: Option<u64>,

    /// Ask for transparent huge pages (MADV_HUGEPAGE) for the store's blocks and tail
    /// buffers: fewer faults where the memory is already backed, but dearer first touch on
    /// VMs whose host must back it fresh (objcache/BENCHMARKS.md) [default: off]
    #[arg(long = "huge-pages")]
    pub huge_pages: bool,

    /// Directory of the SSD pool files holding object tails [default: none, RAM only]
    #[arg(long = "ssd-dir", value_name = "DIR")]
    pub ssd_dir: Option<PathBuf>,

    /// Tail read engine: auto (io_uring if the kernel allows it), uring or blocking
    /// (a thread pool of blocking reads) [default: auto]
    #[arg(long = "tail-io", value_name = "ENGINE", value_parser = ["auto", "uring", "blocking"])]
    pub tail_io: Option<String>,

    /// Number of store event loops, each with its own SO_REUSEPORT listener
    /// [default: number of CPUs]
    #[arg(long, value_name = "N")]
    pub cores: Option<usize>,

    /// Address the store's listeners bind to [default: 127.0.0.1, like the RESP port; 0.0.0.0 for every interface]
    #[arg(long = "listen-address", value_name = "IP")]
    pub listen_address: Option<IpAddr>,

    /// TCP port of the memcache text protocol [default: 11211]
    #[arg(long = "memcache-port", value_name = "PORT")]
    pub memcache_port: Option<u16>,

    /// Unix-domain socket the memcache front listens on, as memcached's -s (a stale socket
    /// file there is replaced); the memcache TCP port is then off unless --memcache-port is
    /// given too [default: none]
    #[arg(long = "memcache-socket", value_name = "PATH")]
    pub memcache_socket: Option<PathBuf>,

    /// Access mask of --memcache-socket in octal, as memcached's -a: the file's mode
    /// [default: 700]
    #[arg(long = "memcache-socket-perm", value_name = "OCTAL", value_parser = parse_octal_mode)]
    pub memcache_socket_perm: Option<u32>,

    /// Run the store without its memcache listener
    #[arg(long = "no-memcache")]
    pub no_memcache: bool,

    /// Most memcache client connections open at once (the whole front), as memcached's -c;
    /// one more is answered "ERROR Too many open connections" and closed [default: 1024]
    #[arg(long = "memcache-max-connections", value_name = "N")]
    pub memcache_max_connections: Option<u64>,

    /// Allow the memcache `shutdown` command, as memcached's -A (it stops the process as
    /// SIGINT does) [default: off: "ERROR: shutdown not enabled"]
    #[arg(long = "memcache-enable-shutdown")]
    pub memcache_enable_shutdown: bool,

    /// Largest object accepted, as memcached's -I (bytes, K/M/G suffix) [default: 1M]
    #[arg(short = 'I', long = "max-item-size", value_name = "SIZE", value_parser = parse_size)]
    pub max_item_size: Option<u64>,

    /// After traffic, the memcache event loops keep polling for this long instead of
    /// sleeping (microseconds; costs a busy core while traffic lasts) [default: 0, off]
    #[arg(long = "store-busy-poll-us", value_name = "MICROS")]
    pub store_busy_poll_us: Option<u64>,

    /// TCP port of the HTTP/1.1 mirror front [default: 8080 when --mirror is given]
    #[arg(long = "http-port", value_name = "PORT")]
    pub http_port: Option<u16>,

    /// Origin the HTTP front fills misses from, as http://HOST:PORT [default: none]
    #[arg(long, value_name = "URL")]
    pub mirror: Option<String>,

    /// How the HTTP front talks to the origin: plain (non-blocking sockets on the front's
    /// event loops) or uring (connects, writes and reads as io_uring submissions)
    /// [default: plain]
    #[arg(long = "mirror-client", value_name = "CLIENT", value_parser = ["plain", "uring"])]
    pub mirror_client: Option<String>,

    /// Time to live of an origin response without Cache-Control max-age/s-maxage or Expires
    /// (seconds) [default: 120, as Varnish]
    #[arg(long = "default-ttl", value_name = "SECONDS")]
    pub default_ttl: Option<u64>,

    /// Seconds an expired object may still be served, stale, while one fetch revalidates it
    /// or when the origin fails, for responses without stale-while-revalidate /
    /// stale-if-error (seconds) [default: 0, as Varnish's default_grace is 10]
    #[arg(long, value_name = "SECONDS")]
    pub grace: Option<u64>,

    /// Seconds the origin may take to connect, to answer and between body reads before the
    /// request fails with 504 [default: 10]
    #[arg(long = "origin-timeout", value_name = "SECONDS")]
    pub origin_timeout: Option<u64>,

    /// Client addresses allowed to send PURGE, comma-separated [default: 127.0.0.1,::1]
    #[arg(long = "purge-allow", value_name = "IP,...", value_delimiter = ',')]
    pub purge_allow: Option<Vec<IpAddr>>,

    /// Seconds an HTTP client has to send a whole request head, from its first byte (or,
    /// before its first request, from the connection's accept); past it the connection
    /// closes, with a 408 when part of a request arrived [default: 60, as nginx's
    /// client_header_timeout]
    #[arg(long = "http-header-timeout", value_name = "SECONDS")]
    pub http_header_timeout: Option<u64>,

    /// Seconds an idle HTTP keep-alive connection stays open after its last response
    /// [default: 75, as nginx's keepalive_timeout]
    #[arg(long = "http-keepalive-timeout", value_name = "SECONDS")]
    pub http_keepalive_timeout: Option<u64>,

    /// Most HTTP client connections open at once (the whole front, every loop); one more
    /// gets a 503 with Connection: close and is closed [default: 10000]
    #[arg(long = "http-max-connections", value_name = "N")]
    pub http_max_connections: Option<u64>,
}

/// Parses an access mask in octal, as memcached's -a (`strtol(s, NULL, 8)`), kept to the
/// permission bits.
pub fn parse_octal_mode(text: &str) -> Result<u32, String> {
    u32::from_str_radix(text.trim(), 8)
        .ok()
        .filter(|m| *m <= 0o777)
        .ok_or_else(|| format!("{text:?} is not an octal mode of at most 777"))
}

/// Parses a byte size: a decimal number with an optional K, M or G suffix (either case, an
/// optional trailing B), meaning KiB, MiB and GiB.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let t = t.strip_suffix(['b', 'B']).unwrap_or(t);
    let (digits, shift) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 10),
        Some('m' | 'M') => (&t[..t.len() - 1], 20),
        Some('g' | 'G') => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a size (examples: 4096, 256K, 2M, 1G)"))?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("`{text}` is too large"))
}

/// Which engine reads tails from the pool files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TailIoChoice {
    /// io_uring when the kernel allows it, the blocking pool otherwise.
    Auto,
    /// io_uring, failing at start if unavailable.
    Uring,
    /// The blocking-read thread pool.
    Blocking,
}

/// The validated configuration of the HTTP mirror front.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Listening port.
    pub port: u16,
    /// Origin address.
    pub origin: SocketAddr,
    /// Host header sent to the origin (`HOST:PORT` as given in --mirror).
    pub origin_host: String,
    /// Time to live when the origin gives none, in seconds.
    pub default_ttl: u64,
    /// Stale windows when the origin gives none, in seconds.
    pub grace: u64,
    /// Origin timeout.
    pub origin_timeout: Duration,
    /// Addresses allowed to PURGE.
    pub purge_allow: Vec<IpAddr>,
    /// The origin client runs on io_uring (--mirror-client uring).
    pub uring: bool,
    /// Time a client has to send a request head (--http-header-timeout).
    pub header_timeout: Duration,
    /// Time an idle keep-alive connection stays open (--http-keepalive-timeout).
    pub keepalive_timeout: Duration,
    /// Most client connections open at once (--http-max-connections).
    pub max_connections: u64,
}

/// Parses `http://HOST:PORT[/]` into the address to connect to and the Host header value.
pub fn parse_mirror(url: &str) -> anyhow::Result<(SocketAddr, String)> {
    let Some(rest) = url.strip_prefix("http://") else {
        bail!("--mirror must be an http:// URL, got {url}");
    };
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    if authority.is_empty() || authority.contains('/') {
        bail!("--mirror takes http://HOST:PORT with no path, got {url}");
    }
    let with_port = if authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        authority.to_string()
    } else {
        format!("{authority}:80")
    };
    let addr = with_port
        .to_socket_addrs()
        .with_context(|| format!("resolving --mirror {url}"))?
        .next()
        .with_context(|| format!("--mirror {url} resolves to no address"))?;
    Ok((addr, authority.to_string()))
}

/// The validated configuration of a running store.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    /// Bytes of RAM for head slots (0 without an SSD pool).
    pub memory: u64,
    /// Bytes of RAM for the packed arena.
    pub small_memory: u64,
    /// Allocation block size.
    pub block: u64,
    /// Head size: objects this long or longer are split into head and tail.
    pub ram_head: u64,
    /// Tail read unit.
    pub io_chunk: u64,
    /// Tail write unit.
    pub write_io_chunk: u64,
    /// Map blocks and tail buffers with transparent huge pages (--huge-pages).
    pub huge_pages: bool,
    /// Directory of the pool files, if objects may have SSD tails.
    pub ssd_dir: Option<PathBuf>,
    /// Tail read engine choice.
    pub tail_io: TailIoChoice,
    /// Number of event loops.
    pub cores: usize,
    /// Listen address.
    pub listen_address: IpAddr,
    /// Memcache port, `None` when the memcache front is disabled or on a Unix socket alone.
    pub memcache_port: Option<u16>,
    /// Unix-domain socket of the memcache front, and its file mode.
    pub memcache_socket: Option<(PathBuf, u32)>,
    /// Item size limit, computed as memcached computes it (header, key and value).
    pub max_item_size: u64,
    /// Most memcache client connections at once.
    pub max_connections: u64,
    /// The memcache `shutdown` command is allowed.
    pub shutdown_enabled: bool,
    /// Number of independently locked shards.
    pub shards: usize,
    /// The HTTP mirror front, when --mirror is given.
    pub http: Option<HttpConfig>,
    /// How long the event loops poll without sleeping after traffic.
    pub busy_poll: Duration,
}

impl StoreArgs {
    /// True when at least one store flag was given, so the store must run.
    pub fn enabled(&self) -> bool {
        self.memory.is_some()
            || self.small_memory.is_some()
            || self.block.is_some()
            || self.ram_head.is_some()
            || self.io_chunk.is_some()
            || self.write_io_chunk.is_some()
            || self.huge_pages
            || self.ssd_dir.is_some()
            || self.tail_io.is_some()
            || self.cores.is_some()
            || self.listen_address.is_some()
            || self.memcache_port.is_some()
            || self.memcache_socket.is_some()
            || self.memcache_socket_perm.is_some()
            || self.no_memcache
            || self.memcache_max_connections.is_some()
            || self.memcache_enable_shutdown
            || self.max_item_size.is_some()
            || self.http_port.is_some()
            || self.http_header_timeout.is_some()
            || self.http_keepalive_timeout.is_some()
            || self.http_max_connections.is_some()
            || self.store_busy_poll_us.is_some()
            || self.mirror.is_some()
    }

    /// Applies the defaults and checks that the sizes fit together.
    pub fn resolve(&self) -> anyhow::Result<StoreConfig> {
        let block = self.block.unwrap_or(2 << 20);
        let small_memory = self.small_memory.unwrap_or(64 << 20);
        let max_item_size = self.max_item_size.unwrap_or(1 << 20);
        let io_chunk = self.io_chunk.unwrap_or(256 << 10);
        let write_io_chunk = self.write_io_chunk.unwrap_or(1 << 20);
        let ram_head = self.ram_head.unwrap_or(64 << 10);
        let memory = if self.ssd_dir.is_some() {
            self.memory.unwrap_or(64 << 20)
        } else {
            0
        };
        if block < 64 << 10 || !block.is_power_of_two() {
            bail!("--block must be a power of two of at least 64K, got {block}");
        }
        if !(1024..=1 << 30).contains(&max_item_size) {
            bail!("--max-item-size must be between 1K and 1G, got {max_item_size}");
        }
        for (name, v) in [
            ("--io-chunk", io_chunk),
            ("--write-io-chunk", write_io_chunk),
        ] {
            if v == 0 || v % DIRECT_IO_ALIGN != 0 {
                bail!("{name} must be a positive multiple of 4K, got {v}");
            }
        }
        if self.ssd_dir.is_some() {
            if ram_head < 1024 || ram_head > block / 2 || !ram_head.is_multiple_of(16) {
                bail!("--ram-head must be a multiple of 16 between 1K and half a --block, got {ram_head}");
            }
            if memory < ram_head {
                bail!("--memory ({memory}) must hold at least one --ram-head ({ram_head})");
            }
        } else if max_item_size + 64 > block {
            bail!("without --ssd-dir every object lives in the arena: --block ({block}) must exceed --max-item-size ({max_item_size})");
        }
        // Each shard needs two blocks so that compaction always has somewhere to work.
        let blocks = small_memory / block;
        if blocks < 2 {
            bail!("--small-memory ({small_memory}) must hold at least two --block ({block})");
        }
        let cores = self
            .cores
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1);
        let mut shards = 1usize;
        while shards < 64 && blocks / (shards as u64 * 2) >= 4 {
            shards *= 2;
        }
        while shards > 1 && memory > 0 && memory / shards as u64 / ram_head < 4 {
            shards /= 2;
        }
        let tail_io = match self.tail_io.as_deref() {
            None | Some("auto") => TailIoChoice::Auto,
            Some("uring") => TailIoChoice::Uring,
            Some("blocking") => TailIoChoice::Blocking,
            Some(other) => bail!("unknown --tail-io {other}"),
        };
        if let Some(dir) = &self.ssd_dir {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("creating --ssd-dir {}", dir.display()))?;
        }
        let http_only = [
            ("--http-port", self.http_port.map(u64::from)),
            ("--http-header-timeout", self.http_header_timeout),
            ("--http-keepalive-timeout", self.http_keepalive_timeout),
            ("--http-max-connections", self.http_max_connections),
        ];
        for (name, value) in http_only {
            if self.mirror.is_none() && value.is_some() {
                bail!("{name} needs --mirror http://HOST:PORT (the HTTP front is a mirror cache)");
            }
            if name != "--http-port" && value == Some(0) {
                bail!("{name} must be at least 1");
            }
        }
        let http = match (&self.mirror, self.http_port) {
            (None, _) => None,
            (Some(url), port) => {
                let (origin, origin_host) = parse_mirror(url)?;
                Some(HttpConfig {
                    port: port.unwrap_or(8080),
                    origin,
                    origin_host,
                    default_ttl: self.default_ttl.unwrap_or(120),
                    grace: self.grace.unwrap_or(0),
                    origin_timeout: Duration::from_secs(self.origin_timeout.unwrap_or(10).max(1)),
                    uring: self.mirror_client.as_deref() == Some("uring"),
                    header_timeout: Duration::from_secs(self.http_header_timeout.unwrap_or(60)),
                    keepalive_timeout: Duration::from_secs(
                        self.http_keepalive_timeout.unwrap_or(75),
                    ),
                    max_connections: self.http_max_connections.unwrap_or(10_000),
                    purge_allow: self.purge_allow.clone().unwrap_or_else(|| {
                        vec![
                            IpAddr::from([127, 0, 0, 1]),
                            IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1]),
                        ]
                    }),
                })
            }
        };
        Ok(StoreConfig {
            http,
            busy_poll: Duration::from_micros(self.store_busy_poll_us.unwrap_or(0)),
            memory,
            small_memory,
            block,
            ram_head,
            io_chunk,
            write_io_chunk,
            huge_pages: self.huge_pages,
            ssd_dir: self.ssd_dir.clone(),
            tail_io,
            cores,
            listen_address: self.listen_address.unwrap_or(IpAddr::from([127, 0, 0, 1])),
            memcache_port: match (self.no_memcache, &self.memcache_socket) {
                (true, _) => None,
                (false, Some(_)) => self.memcache_port,
                (false, None) => Some(self.memcache_port.unwrap_or(11211)),
            },
            memcache_socket: match &self.memcache_socket {
                Some(path) if !self.no_memcache => {
                    Some((path.clone(), self.memcache_socket_perm.unwrap_or(0o700)))
                }
                _ => None,
            },
            max_item_size,
            max_connections: self.memcache_max_connections.unwrap_or(1024).max(1),
            shutdown_enabled: self.memcache_enable_shutdown,
            shards,
        })
    }
}

impl StoreConfig {
    /// True when an object of `len` bytes is split into a RAM head and an SSD tail.
    pub fn is_split(&self, len: usize) -> bool {
        self.ssd_dir.is_some() && len as u64 >= self.ram_head
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        store: StoreArgs,
    }

    #[test]
    fn sizes_accept_suffixes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("256K"), Ok(256 << 10));
        assert_eq!(parse_size("2M"), Ok(2 << 20));
        assert_eq!(parse_size("1m"), Ok(1 << 20));
        assert_eq!(parse_size("48G"), Ok(48 << 30));
        assert_eq!(parse_size("3GB"), Ok(3 << 30));
        assert!(parse_size("x").is_err());
        assert!(parse_size("99999999999G").is_err());
    }

    #[test]
    fn no_flag_means_disabled_and_port_alone_enables_ram_only() {
        let none = Cli::parse_from(["x"]).store;
        assert!(!none.enabled());
        let port = Cli::parse_from(["x", "--memcache-port", "11311"]).store;
        assert!(port.enabled());
        let cfg = port.resolve().unwrap();
        assert_eq!(cfg.memcache_port, Some(11311));
        assert!(cfg.ssd_dir.is_none());
        assert_eq!(cfg.memory, 0);
        assert!(!cfg.is_split(10 << 20));
        assert!(!cfg.huge_pages, "huge pages are off by default");
        let huge = Cli::parse_from(["x", "--huge-pages"]).store;
        assert!(huge.enabled());
        assert!(huge.resolve().unwrap().huge_pages);
    }

    #[test]
    fn a_memcache_socket_replaces_the_port_unless_one_is_given() {
        let cfg = Cli::parse_from(["x", "--memcache-socket", "/tmp/m.sock"]).store;
        let cfg = cfg.resolve().unwrap();
        assert_eq!(cfg.memcache_port, None);
        assert_eq!(cfg.memcache_socket, Some(("/tmp/m.sock".into(), 0o700)));
        let both = [
            "x",
            "--memcache-socket",
            "s",
            "--memcache-port",
            "1",
            "--memcache-socket-perm",
            "755",
        ];
        let cfg = Cli::parse_from(both).store.resolve().unwrap();
        assert_eq!(cfg.memcache_port, Some(1));
        assert_eq!(cfg.memcache_socket, Some(("s".into(), 0o755)));
        assert_eq!(parse_octal_mode("0644"), Ok(0o644));
        assert!(parse_octal_mode("9").is_err() && parse_octal_mode("1777").is_err());
    }

    #[test]
    fn mirror_urls() {
        let (addr, host) = parse_mirror("http://127.0.0.1:18000").unwrap();
        assert_eq!(addr, "127.0.0.1:18000".parse().unwrap());
        assert_eq!(host, "127.0.0.1:18000");
        assert_eq!(parse_mirror("http://127.0.0.1/").unwrap().0.port(), 80);
        assert!(parse_mirror("https://127.0.0.1:1").is_err());
        assert!(parse_mirror("http://127.0.0.1:1/x").is_err());
        let cli = Cli::parse_from(["x", "--http-port", "1"]).store;
        assert!(cli.resolve().is_err());
        let cli = Cli::parse_from(["x", "--mirror", "http://127.0.0.1:9"]).store;
        let http = cli.resolve().unwrap().http.unwrap();
        assert_eq!((http.port, http.default_ttl, http.grace), (8080, 120, 0));
        assert_eq!(http.purge_allow.len(), 2);
        assert_eq!(http.header_timeout, Duration::from_secs(60));
        assert_eq!(http.keepalive_timeout, Duration::from_secs(75));
        assert_eq!(http.max_connections, 10_000);
        let cli = Cli::parse_from(["x", "--http-header-timeout", "5"]).store;
        assert!(cli.resolve().is_err(), "HTTP limits need --mirror");
        let cli = Cli::parse_from([
            "x",
            "--mirror",
            "http://127.0.0.1:9",
            "--http-max-connections",
            "0",
        ])
        .store;
        assert!(cli.resolve().is_err(), "a cap of 0 connections is refused");
    }

    #[test]
    fn bad_geometry_is_refused() {
        let cli = Cli::parse_from(["x", "--block", "64K", "-I", "1m"]).store;
        assert!(cli.resolve().is_err());
        let cli = Cli::parse_from(["x", "--small-memory", "2M"]).store;
        assert!(cli.resolve().is_err());
    }
}
