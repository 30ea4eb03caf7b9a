//! The memory limit: the figure it is held against (the allocator's allocated bytes,
//! counted as they are allocated), the eviction that keeps it, and the OOM decision before each
//! command (Redis's processCommand / performEvictions).
//!
//! - [`allocator`]: the counting allocator, RSS, malloc_info, malloc_trim.
//! - [`config`]: the maxmemory directives.
//! - [`figures`]: INFO memory's and MEMORY STATS's figures.
//!
//! The eviction pool itself is the keyspace's ([`crate::keyspace::evict`]).

pub mod allocator;
pub mod config;
pub mod figures;

use crate::keyspace::evict::{Evictor, Policy, Request};
use crate::keyspace::Keyspace;
use crate::server::Server;
use std::time::{Duration, Instant};

/// The memory figure (INFO used_memory, what maxmemory limits) and its peak: the
/// allocator's allocated bytes less what the key tables hold free for the next keys, so
/// that removing a key lowers it by the key's size, as freeing does in Redis. A reading is
/// one load of the allocator's counter ([`allocator::allocated`]) and a sum over the
/// databases, so it is read afresh wherever it is needed.
#[derive(Debug, Default)]
pub struct Gauge {
    last: u64,
    peak: u64,
}

impl Gauge {
    /// The figure now for `keyspace`, keeping the peak.
    pub fn read(&mut self, keyspace: &Keyspace) -> u64 {
        let used = allocator::allocated().saturating_sub(keyspace.reusable_bytes() as u64);
        self.last = used;
        self.peak = self.peak.max(used);
        used
    }

    /// The highest figure read (INFO used_memory_peak).
    pub fn peak(&self) -> u64 {
        self.peak
    }

    /// Forgets the peak (CONFIG RESETSTAT).
    pub fn reset_peak(&mut self) {
        self.peak = self.last;
    }
}

/// Memory state of the server: the gauge, the eviction pool and the evicted key count.
#[derive(Debug, Default)]
pub struct MemoryState {
    /// The allocator's figure.
    pub gauge: Gauge,
    evictor: Evictor,
    /// Keys evicted (INFO evicted_keys).
    pub evicted_keys: u64,
    /// Clients evicted by maxmemory-clients (INFO evicted_clients).
    pub evicted_clients: u64,
    /// Eviction goes on between rounds of events (Redis's eviction time event): set by
    /// CONFIG SET maxmemory and by an eviction its time limit cut short.
    pub eviction_running: bool,
    /// Allocated bytes once the server had started (INFO used_memory_startup).
    pub startup: u64,
}

/// Cron work under a limit: when the resident set outgrows maxmemory by more than a tenth
/// (holes the allocator keeps after evictions), free pages go back to the system, so RSS
/// stays near the limit as the operator sized it.
pub fn cron(server: &Server) {
    let limit = server.config.memory.maxmemory;
    if limit != 0 && allocator::rss_bytes() > limit + limit / 10 {
        allocator::purge();
    }
}

/// Memory the eviction leaves out of the figure (INFO mem_not_counted_for_evict): the
/// replicas' share of the replication buffer and the AOF buffer, which the DELs of an
/// eviction would make grow.
pub fn not_counted_for_evict(server: &Server) -> u64 {
    crate::replication::memory::not_counted_for_evict(server) + server.aof.buffer_memory() as u64
}

/// One step of the eviction that goes on between rounds of events, if one is running:
/// the keys it evicts are propagated and notified at once, as Redis's eviction time event
/// evicts without waiting for a command (a lowered maxmemory evicts right away).
pub fn eviction_round(server: &mut Server) {
    if !std::mem::take(&mut server.memory.eviction_running) || server.config.memory.maxmemory == 0 {
        return;
    }
    perform_evictions(server);
    server.propagate_removals();
    crate::commands::publish_notifications(server, None);
}

/// Evicts until the figure is under maxmemory (called before each command when a limit
/// is set). Returns false when it stays over it: no key is left to evict under the policy,
/// or the policy is noeviction; commands that may grow memory are then refused.
pub fn perform_evictions(server: &mut Server) -> bool {
    // A write pause holds eviction too, and lets the commands run (Redis's EVICT_OK);
    // under replica-ignore-maxmemory a replica's keys go as its master's do (Redis's
    // performEvictions).
    if crate::commands::pause::paused(server, crate::commands::pause::EVICT)
        || (server.config.repl.ignore_maxmemory && server.replication.is_replica())
    {
        return true;
    }
    // The figure is held to maxmemory less what eviction does not count (Redis's
    // freeMemoryGetNotCountedMemory), and less the memory of the clients just evicted,
    // which goes when their connections close after this command (Redis frees an evicted
    // client at once, before its key eviction): the limit is raised by them instead.
    let mut config = server.config.memory;
    config.maxmemory = config
        .maxmemory
        .saturating_add(not_counted_for_evict(server))
        .saturating_add(server.clients.freeing_memory() as u64);
    let MemoryState {
        gauge,
        evictor,
        evicted_keys,
        ..
    } = &mut server.memory;
    let used = gauge.read(&server.keyspace);
    if used <= config.maxmemory {
        return true;
    }
    if config.policy == Policy::NoEviction {
        return false;
    }
    let request = Request {
        policy: config.policy,
        samples: config.samples as usize,
        to_free: used - config.maxmemory,
        // As Redis, an evicted value is freed at once unless lazyfree-lazy-eviction says
        // otherwise (Keyspace::delete_by_server), so the figure drops by it before the next
        // reading and no more keys go for memory still on its way back from the lazy-free
        // thread.
        deadline: config.eviction_time_limit().map(|d| Instant::now() + d),
    };
    let cycle = Instant::now();
    let done = evictor.evict(&mut server.keyspace, request, |ks| {
        gauge.read(ks) > config.maxmemory
    });
    crate::latency::sample("eviction-cycle", cycle.elapsed());
    *evicted_keys += done.keys;
    if done.enough {
        // Stopped by its time limit: the rest goes on between rounds (a figure still over
        // the limit for memory the lazy-free thread has yet to give back does not count).
        if done.timed_out {
            server.memory.eviction_running = true;
        }
        return true;
    }
    // Out of candidates: the lazy-free thread may still be freeing what went before
    // (values of deleted keys, or evicted ones under lazyfree-lazy-eviction): wait for it,
    // up to a round's time limit, until the figure is under maxmemory.
    let wait = config
        .eviction_time_limit()
        .unwrap_or(Duration::from_millis(100));
    let started = Instant::now();
    while server.keyspace.lazyfree_pending() > 0 && started.elapsed() < wait {
        if gauge.read(&server.keyspace) <= config.maxmemory {
            return true;
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    false
}
