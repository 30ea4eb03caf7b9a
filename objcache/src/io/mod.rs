//! The store's I/O machinery below the protocol fronts, shared by both of them.
//!
//! - [`listener`]: the SO_REUSEPORT listener each event loop accepts on.
//! - [`event_ring`]: an io_uring whose completions wake a mio loop through an eventfd.
//! - [`tail_reader`]: SSD tail reads for one loop, on io_uring or a blocking pool.

pub(crate) mod event_ring;
pub(crate) mod listener;
pub(crate) mod tail_reader;
