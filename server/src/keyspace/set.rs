//! The set value: the `goblin-zset` set engine, which owns Redis 7.2's encoding rules
//! (`set-max-intset-entries`, `set-max-listpack-*`, the conversions of t_set.c) and the
//! memory figure. Commands reach the thresholds only through [`SetConfig`], so none can
//! test one itself.

pub use goblin_zset::set::{Member, Set, SetConfig, SetEncoding};
