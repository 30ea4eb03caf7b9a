//! The list value: the `goblin-zset` list engine, which owns Redis 7.2's encoding rules
//! (`list-max-listpack-size`, the listpack / quicklist conversions of t_list.c) and the
//! memory figure. Commands reach the fill limit only through [`ListConfig`].

pub use goblin_zset::list::{End, List, ListConfig, ListEncoding};

use super::db::{Db, Slot};
use super::{Keyspace, Value, WrongType};

/// A key looked up for LPUSH / RPUSH, to be pushed to (see `Db::push_to_list`).
pub struct ListPush<'a> {
    db: &'a mut Db,
    slot: Slot,
}

impl ListPush<'_> {
    /// Pushes `items` at `end` as [`List::push`] does (a listpack list its key's record holds
    /// is written there in place while it stays one): the list's new length, or `Err` when
    /// the key holds another type.
    #[inline]
    pub fn push(self, end: End, items: &[&[u8]], cfg: &ListConfig) -> Result<usize, WrongType> {
        self.db.push_to_list(self.slot, end, items, cfg)
    }
}

impl Keyspace {
    /// The key LPUSH / RPUSH (`create`: found or created as an empty list, as
    /// [`Keyspace::lookup_write_or_create`] does) or LPUSHX / RPUSHX (None when absent, as
    /// [`Keyspace::lookup_write`]) push to, and whether it was created.
    #[inline]
    pub fn lookup_list_for_push(
        &mut self,
        db: usize,
        key: &[u8],
        now_ms: u64,
        create: bool,
    ) -> Option<(ListPush<'_>, bool)> {
        let (slot, created) = if create {
            self.slot_for_write(db, key, now_ms, || Value::List(List::new()))
        } else {
            (self.live_slot_for_write(db, key, now_ms)?, false)
        };
        let db = &mut self.dbs[db];
        Some((ListPush { db, slot }, created))
    }
}
