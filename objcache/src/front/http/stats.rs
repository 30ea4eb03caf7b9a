//! Counters of the HTTP front, served as JSON at /goblin/stats beside the store's own.

use std::sync::atomic::{AtomicU64, Ordering};

/// Relaxed atomic counters shared by the HTTP event loops.
#[derive(Default)]
pub struct HttpStats {
    /// Requests parsed.
    pub requests: AtomicU64,
    /// Requests answered without an origin fetch of their own: from the store, or by
    /// joining a fetch under way (`X-Cache: HIT`).
    pub hits: AtomicU64,
    /// Requests that started an origin fetch.
    pub misses: AtomicU64,
    /// Of the hits, those that joined a fetch already under way for their key.
    pub joined: AtomicU64,
    /// Origin responses not cacheable (no-store, private, 5xx, ...), passed through.
    pub passes: AtomicU64,
    /// Fetches that failed before a response head (502/504 to the waiters).
    pub origin_errors: AtomicU64,
    /// Fetches that failed in the body (waiters closed, nothing admitted).
    pub fills_aborted: AtomicU64,
    /// Objects admitted to the store.
    pub admitted: AtomicU64,
    /// Objects the store could not take (`too_large` among them).
    pub not_admitted: AtomicU64,
    /// Objects larger than the RAM arena holds (a --block), without --ssd-dir: served to
    /// their readers, not cached.
    pub too_large: AtomicU64,
    /// Requests answered from an expired object within its stale-while-revalidate window
    /// (`X-Cache: HIT-STALE`), counted apart from `hits`.
    pub stale_hits: AtomicU64,
    /// Requests answered from a stale object because its revalidation failed within
    /// stale-if-error.
    pub stale_errors: AtomicU64,
    /// Fetches that revalidate a stale object (in the background or for waiting requests).
    pub revalidations: AtomicU64,
    /// Revalidations the origin answered with 304 that refreshed the stored object.
    pub refreshes: AtomicU64,
    /// Hard PURGE requests of one URL.
    pub purges: AtomicU64,
    /// Hard PURGE requests by surrogate key or path prefix.
    pub tag_purges: AtomicU64,
    /// Soft PURGE requests (any form).
    pub soft_purges: AtomicU64,
    /// Objects the PURGE requests dropped or marked stale.
    pub purged_objects: AtomicU64,
    /// Requests refused with a 4xx/5xx of the front's own.
    pub bad_requests: AtomicU64,
    /// Response bytes written to clients.
    pub bytes_sent: AtomicU64,
    /// Client connections open now.
    pub curr_connections: AtomicU64,
    /// Connections refused with a 503 because --http-max-connections were open.
    pub rejected_connections: AtomicU64,
    /// Connections closed because a request head did not arrive within
    /// --http-header-timeout (408 when part of it had).
    pub header_timeouts: AtomicU64,
    /// Idle keep-alive connections closed after --http-keepalive-timeout.
    pub idle_timeouts: AtomicU64,
}

impl HttpStats {
    /// Every counter as `(name, value)`.
    pub fn counters(&self) -> [(&'static str, u64); 24] {
        let v = |c: &AtomicU64| c.load(Ordering::Relaxed);
        [
            ("requests", v(&self.requests)),
            ("hits", v(&self.hits)),
            ("misses", v(&self.misses)),
            ("joined", v(&self.joined)),
            ("passes", v(&self.passes)),
            ("origin_errors", v(&self.origin_errors)),
            ("fills_aborted", v(&self.fills_aborted)),
            ("admitted", v(&self.admitted)),
            ("not_admitted", v(&self.not_admitted)),
            ("too_large", v(&self.too_large)),
            ("stale_hits", v(&self.stale_hits)),
            ("stale_errors", v(&self.stale_errors)),
            ("revalidations", v(&self.revalidations)),
            ("refreshes", v(&self.refreshes)),
            ("purges", v(&self.purges)),
            ("tag_purges", v(&self.tag_purges)),
            ("soft_purges", v(&self.soft_purges)),
            ("purged_objects", v(&self.purged_objects)),
            ("bad_requests", v(&self.bad_requests)),
            ("bytes_sent", v(&self.bytes_sent)),
            ("curr_connections", v(&self.curr_connections)),
            ("rejected_connections", v(&self.rejected_connections)),
            ("header_timeouts", v(&self.header_timeouts)),
            ("idle_timeouts", v(&self.idle_timeouts)),
        ]
    }
}
