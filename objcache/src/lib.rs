//! Goblin Store: an object cache inside goblin-server, with its own event loops and ports.
//!
//! The modules, one line each:
//!
//! - [`config`]: the `StoreArgs` flags and the validated `StoreConfig`.
//! - [`store`]: the object store and its API ([`Store`]); inside it, `digest` (SHA-256 key
//!   digests), `index` (the per-shard digest index of 72-byte entries), `blocks`
//!   (HugeTLB-first memory), `arena` (the packed, compacting arena of small objects),
//!   `heads` (fixed RAM head slots of large objects), `tail` (SSD pool files, the tail
//!   header, `TailRef`, the hot-tail cache, the shared regions kept tails are carved
//!   from), `pins` (the pin table of lent head slots and streamed tail extents), `eviction`
//!   (SIEVE), `shard` (the pieces of one shard kept consistent), [`store::stats`]
//!   (counters), [`store::clock`] (memcached's coarse clock) and `report` (the general
//!   stats every front shows).
//! - `io`: what both fronts share below the protocol: `listener` (SO_REUSEPORT),
//!   `event_ring` (an io_uring that wakes a mio loop), `tail_reader` (SSD tail reads on
//!   io_uring or a blocking pool).
//! - [`front::memcache`]: the memcache text and meta protocol on its event loops.
//! - [`front::http`]: the HTTP/1.1 mirror front (--mirror, --http-port) on its event loops.
//!
//! The path a request takes:
//!
//! ```text
//! socket (a front's event loop, accepted on an io::listener)
//!   -> parse: front::memcache::parse (a request line and data block)
//!             or front::http::parse (a request head)
//!   -> key digest: store::Digest::of(key) picks the shard and the index bucket
//!   -> index: the shard's entry for the digest (size, CAS, expiry, where the bytes are)
//!   -> bytes: a small object whole from the RAM arena;
//!             a large one's head from its RAM head slot, its tail from SSD
//!             (io::tail_reader, O_DIRECT; or the hot-tail cache in RAM)
//!   -> or, for the HTTP front on a miss, the origin (front::http::fill, one fetch per key)
//!   -> the reply, written by the front's event loop in request order
//! ```
//!
//! `goblin-server` flattens [`StoreArgs`] into its own flags and calls [`start`]; the
//! returned [`StoreHandle`] feeds the `# Objcache` section of INFO.

#![warn(missing_docs)]

pub mod config;
pub mod front;
pub(crate) mod io;
pub mod log;
pub mod store;

use std::net::SocketAddr;
use std::sync::Arc;

pub use config::StoreArgs;
pub use store::Store;

use config::{StoreConfig, TailIoChoice};
use front::memcache::event_loop::Listeners;
use io::listener::reuseport_listener;
use io::tail_reader::TailEngine;

/// A running store; cheap to share between threads.
pub struct StoreHandle {
    store: Arc<Store>,
    engine: TailEngine,
    http: Option<Arc<front::http::stats::HttpStats>>,
}

impl StoreHandle {
    /// The store, for other protocol fronts.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// The `# Objcache` section of INFO: `field:value` lines, CRLF-terminated.
    pub fn info_section(&self) -> String {
        let mut s = String::from("# Objcache\r\n");
        for (k, v) in store::general_stats(&self.store) {
            s.push_str(&format!("{k}:{v}\r\n"));
        }
        s.push_str(&format!("tail_engine:{}\r\n", self.engine.as_str()));
        if let Some(h) = &self.http {
            for (k, v) in h.counters() {
                s.push_str(&format!("http_{k}:{v}\r\n"));
            }
        }
        s
    }
}

fn choose_engine(choice: TailIoChoice, has_ssd: bool) -> anyhow::Result<TailEngine> {
    if !has_ssd {
        return Ok(TailEngine::None);
    }
    Ok(match (choice, io_uring::IoUring::new(8)) {
        (TailIoChoice::Blocking, _) => TailEngine::Blocking,
        (_, Ok(_)) => TailEngine::Uring,
        (TailIoChoice::Uring, Err(e)) => {
            anyhow::bail!("--tail-io uring: io_uring is unavailable: {e}")
        }
        (TailIoChoice::Auto, Err(e)) => {
            crate::store_log!(Warning, "io_uring is unavailable ({e})");
            TailEngine::Blocking
        }
    })
}

/// Binds the memcache front's listeners (one SO_REUSEPORT TCP listener per loop, one
/// Unix-domain listener they share) and spawns its event loops; nothing without either.
fn start_memcache(store: &Arc<Store>, cfg: &StoreConfig, engine: TailEngine) -> anyhow::Result<()> {
    let addr = cfg
        .memcache_port
        .map(|port| SocketAddr::new(cfg.listen_address, port));
    let unix = match &cfg.memcache_socket {
        Some((path, perm)) => Some(
            goblin_evloop::listener::bind_unix(path, *perm, 1024)
                .map_err(|e| anyhow::anyhow!("binding memcache socket {}: {e}", path.display()))?,
        ),
        None => None,
    };
    if addr.is_none() && unix.is_none() {
        return Ok(());
    }
    let mut loops = Vec::with_capacity(cfg.cores);
    for _ in 0..cfg.cores {
        let tcp = match addr {
            Some(addr) => Some(
                reuseport_listener(addr)
                    .map_err(|e| anyhow::anyhow!("binding memcache port {addr}: {e}"))?,
            ),
            None => None,
        };
        let unix = unix.as_ref().map(|u| u.try_clone()).transpose()?;
        loops.push(Listeners { tcp, unix });
    }
    for (i, on) in loops.into_iter().enumerate() {
        front::memcache::event_loop::spawn(i, Arc::clone(store), on, engine)?;
    }
    let place = match (addr, &cfg.memcache_socket) {
        (Some(addr), Some((path, _))) => format!("{addr} and {}", path.display()),
        (Some(addr), None) => addr.to_string(),
        (None, Some((path, _))) => path.display().to_string(),
        (None, None) => unreachable!("returned above"),
    };
    crate::store_log!(
        Notice,
        "memcache on {place}, {} loops, {} shards, arena {} MiB, heads {} MiB",
        cfg.cores,
        cfg.shards,
        cfg.small_memory >> 20,
        cfg.memory >> 20
    );
    Ok(())
}

/// Starts the store if any store flag was given: builds the store, binds its listeners
/// and spawns the event loops. Returns `None` when no flag was given.
pub fn start(args: &StoreArgs) -> anyhow::Result<Option<StoreHandle>> {
    if !args.enabled() {
        return Ok(None);
    }
    let cfg = args.resolve()?;
    let engine = choose_engine(cfg.tail_io, cfg.ssd_dir.is_some())?;
    if engine != TailEngine::None {
        crate::store_log!(Notice, "SSD tail reads use {}", engine.as_str());
    }
    let store = Arc::new(Store::new(cfg.clone())?);
    start_memcache(&store, &cfg, engine)?;
    let http = match cfg.http {
        Some(_) => Some(front::http::event_loop::start(&store, &cfg, engine)?),
        None => None,
    };
    Ok(Some(StoreHandle {
        store,
        engine,
        http,
    }))
}
