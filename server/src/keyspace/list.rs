//! The list value: the `goblin-zset` list engine, which owns Redis 7.2's encoding rules
//! (`list-max-listpack-size`, the listpack / quicklist conversions of t_list.c) and the
//! memory figure. Commands reach the fill limit only through [`ListConfig`].

pub use goblin_zset::list::{End, List, ListConfig, ListEncoding};
