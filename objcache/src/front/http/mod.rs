//! The HTTP/1.1 mirror front of Goblin Store: a caching reverse proxy for one origin.
//!
//! - [`parse`]: request and response heads, chunked bodies; [`policy`]: freshness, ranges,
//!   validators and dates (both I/O-free).
//! - [`object`]: how a cached response is laid out as one store value; [`vary`]: variant
//!   keys and the headers forwarded to the origin; [`variants`]: the marker listing a
//!   varying path's variants.
//! - [`fill`]: an origin fetch in progress, shared by every request that misses on its key
//!   and read by them while it streams in; finished fills are admitted by a writer thread.
//! - [`grace`]: stale objects served while one fetch revalidates them, 304 refreshes.
//! - [`origin`]: the persistent origin connections of one event loop, on non-blocking
//!   sockets or ([`origin_ring`]) as io_uring submissions.
//! - [`purge`]: PURGE by URL, path prefix or surrogate key, hard or soft.
//! - [`respond`]: the response heads the front writes, for hits, fills and errors;
//!   [`tail_stream`]: an SSD tail sent chunk by chunk as it is read, its extent pinned;
//!   [`splice`]: tail bytes handed to the socket by reference instead of copied.
//! - [`serve`]: request dispatch; [`conn`], [`event_loop`]: client connections and the
//!   event loops that drive everything; [`stats`]: the front's counters.
//!
//! Requests flow: socket -> [`parse`] -> key digest -> store lookup (hit: head from RAM, tail
//! from SSD) or [`fill`] (miss: one origin fetch per key, streamed to every waiter).

pub mod conn;
pub mod event_loop;
pub mod fill;
pub mod grace;
pub mod object;
pub mod origin;
pub mod origin_ring;
pub mod parse;
pub mod policy;
pub mod purge;
pub mod respond;
pub mod serve;
pub mod splice;
pub mod stats;
pub mod tail_stream;
pub mod variants;
pub mod vary;
