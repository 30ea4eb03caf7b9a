//! Typed key lookups for handlers: the value of the command's type, or the WRONGTYPE reply
//! (already written and counted) when the key holds another type.

use super::Ctx;
use crate::errors;
use crate::keyspace::{Value, WrongType};
use crate::resp::reply::ReplyWriter;

/// Reads a value of one type out of a [`Value`] (e.g. [`Value::as_zset`]).
pub type Pick<T> = fn(&Value) -> Result<&T, WrongType>;
/// Reads a value of one type out of a [`Value`] for writing (e.g. [`Value::as_zset_mut`]).
pub type PickMut<T> = fn(&mut Value) -> Result<&mut T, WrongType>;

impl<'a> Ctx<'a> {
    /// The value at `key` for reading (expired keys are removed first): None when absent,
    /// `Err` after replying WRONGTYPE when it is of another type.
    #[inline]
    pub fn read_typed<T: ?Sized>(
        &mut self,
        key: &[u8],
        pick: Pick<T>,
    ) -> Result<Option<&T>, WrongType> {
        self.read_typed_and_out(key, pick).0
    }

    /// As [`Ctx::read_typed`], beside the reply writer (split borrows), so a reply can be
    /// written straight from the value's own bytes.
    #[inline]
    pub fn read_typed_and_out<T: ?Sized>(
        &mut self,
        key: &[u8],
        pick: Pick<T>,
    ) -> (Result<Option<&T>, WrongType>, &mut ReplyWriter<'a>) {
        let Ctx {
            server,
            client,
            out,
            now_ms,
            failed,
            ..
        } = self;
        let found = server
            .keyspace
            .lookup_read(client.db, key, *now_ms, !client.no_touch);
        let picked = found.map(|e| pick(e.value)).transpose().inspect_err(|_| {
            super::record_error(out, &mut server.stats, failed, errors::WRONGTYPE)
        });
        (picked, out)
    }

    /// The value at `key` for writing: None when absent, `Err` after replying WRONGTYPE
    /// when it is of another type. A caller that changes it signals the change.
    #[inline]
    pub fn write_typed<T: ?Sized>(
        &mut self,
        key: &[u8],
        pick: PickMut<T>,
    ) -> Result<Option<&mut T>, WrongType> {
        let Ctx {
            server,
            client,
            out,
            now_ms,
            failed,
            ..
        } = self;
        let found = server.keyspace.lookup_write(client.db, key, *now_ms);
        found
            .map(|e| pick(e.value))
            .transpose()
            .inspect_err(|_| super::record_error(out, &mut server.stats, failed, errors::WRONGTYPE))
    }
}
