//! Goblin Store: an object cache inside goblin-server, with its own event loops and ports.
//!
//! - [`config`]: the `StoreArgs` flags and the validated `StoreConfig`.
//! - [`digest`], [`index`]: keys hashed with SHA-256; a compact digest index per shard.
//! - [`blocks`], [`arena`], [`heads`]: HugeTLB-first blocks; the packed, compacting arena of
//!   small objects; fixed RAM head slots of large ones.
//! - [`tail`]: SSD pool files, O_DIRECT reads through io_uring or a blocking pool;
//!   [`ring`]: an io_uring that wakes a mio loop.
//! - [`eviction`]: SIEVE; [`shard`]: the pieces of one shard kept consistent; [`store`]: the
//!   API the fronts call; [`stats`], [`clock`]: counters and memcached's coarse clock.
//! - [`memcache`], [`conn`], [`worker`]: the memcache text protocol on mio event loops;
//!   [`sockaddr`]: socket addresses for the system calls std does not wrap.
//! - [`http`]: the HTTP/1.1 mirror front (--mirror, --http-port) on its own event loops.
//!
//! `goblin-server` flattens [`StoreArgs`] into its own flags and calls [`start`]; the
//! returned [`StoreHandle`] feeds the `# Objcache` section of INFO.

#![warn(missing_docs)]

pub mod arena;
pub mod blocks;
pub mod clock;
pub mod config;
pub mod conn;
pub mod digest;
pub mod eviction;
pub mod heads;
pub mod http;
pub mod index;
pub mod memcache;
pub mod ring;
pub mod shard;
pub mod sockaddr;
pub mod stats;
pub mod store;
pub mod tail;
pub mod worker;

use std::net::SocketAddr;
use std::sync::Arc;

pub use config::StoreArgs;
pub use store::Store;

use config::TailIoChoice;
use worker::TailEngine;

/// A running store; cheap to share between threads.
pub struct StoreHandle {
    store: Arc<Store>,
    engine: TailEngine,
    http: Option<Arc<http::stats::HttpStats>>,
}

impl StoreHandle {
    /// The store, for other protocol fronts.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// The `# Objcache` section of INFO: `field:value` lines, CRLF-terminated.
    pub fn info_section(&self) -> String {
        let mut s = String::from("# Objcache\r\n");
        for (k, v) in memcache::exec::general_stats(&self.store) {
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
            eprintln!("goblin-store: io_uring is unavailable ({e})");
            TailEngine::Blocking
        }
    })
}

/// Large buffers come and go: the store's fill bodies, tail reads and hot tails, and the
/// sorted sets' arenas and member indexes as they grow. glibc raises its mmap threshold
/// each time such a buffer is freed, after which they come from the heap, whose freed holes
/// are not given back: RSS then outgrows --memory, and a big set's old copies stay resident.
/// A fixed threshold keeps every buffer of 64 KiB or more in its own mapping, returned to
/// the system when freed and grown by `mremap` without a copy. The process calls this once
/// at start, before it allocates.
pub fn keep_large_buffers_out_of_the_heap() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only changes allocator parameters.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 10);
    }
}

/// Starts the store if any store flag was given: builds the store, binds one SO_REUSEPORT
/// listener per --cores and spawns the event loops. Returns `None` when no flag was given.
pub fn start(args: &StoreArgs) -> anyhow::Result<Option<StoreHandle>> {
    if !args.enabled() {
        return Ok(None);
    }
    let cfg = args.resolve()?;
    let engine = choose_engine(cfg.tail_io, cfg.ssd_dir.is_some())?;
    if engine != TailEngine::None {
        eprintln!("goblin-store: SSD tail reads use {}", engine.as_str());
    }
    let store = Arc::new(Store::new(cfg.clone())?);
    if let Some(port) = cfg.memcache_port {
        let addr = SocketAddr::new(cfg.listen_address, port);
        let mut listeners = Vec::with_capacity(cfg.cores);
        for _ in 0..cfg.cores {
            listeners.push(
                worker::reuseport_listener(addr)
                    .map_err(|e| anyhow::anyhow!("binding memcache port {addr}: {e}"))?,
            );
        }
        for (i, l) in listeners.into_iter().enumerate() {
            worker::spawn(i, Arc::clone(&store), l, engine)?;
        }
        eprintln!(
            "goblin-store: memcache on {addr}, {} loops, {} shards, arena {} MiB, heads {} MiB",
            cfg.cores,
            cfg.shards,
            cfg.small_memory >> 20,
            cfg.memory >> 20
        );
    }
    let http = match cfg.http {
        Some(_) => Some(http::front::start(&store, &cfg, engine)?),
        None => None,
    };
    Ok(Some(StoreHandle {
        store,
        engine,
        http,
    }))
}
