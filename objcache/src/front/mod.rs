//! The protocol fronts of the store. Each reaches the store only through its public API
//! ([`crate::store`]) and the shared I/O pieces (`crate::io`); neither names the other.
//!
//! - [`memcache`]: the memcache text and meta protocol.
//! - [`http`]: the HTTP/1.1 mirror of one origin.

pub mod http;
pub mod memcache;
