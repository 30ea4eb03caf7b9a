//! The hash value: the `goblin-zset` hash engine, which owns Redis 7.2's encoding rules
//! (`hash-max-listpack-entries`, `hash-max-listpack-value`, the conversions of t_hash.c)
//! and the memory figure. Commands reach the thresholds only through [`HashConfig`], so
//! none can test one itself.

pub use goblin_zset::hash::{Hash, HashConfig, HashEncoding};
