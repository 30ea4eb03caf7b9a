//! The stream value: the `goblin-zset` stream engine (Redis 7.2's t_stream.c model: listpack
//! nodes, `stream-node-max-bytes` / `stream-node-max-entries` through [`StreamConfig`],
//! consumer groups). Boxed in [`super::Value`], which stays 32 bytes.

pub use goblin_zset::stream::{
    AppendError, Claim, ClaimHow, Consumer, EntryRef, Group, Item, Nack, NackRef, NewId,
    SetIdError, Stream, StreamConfig, StreamId, StreamMeta, Trim, ID_TEXT_LEN, NEVER,
};

/// Calls `f` with the bytes of a stream item (an integer in decimal, formatted on the stack).
pub fn with_item_bytes<R>(item: Item, f: impl FnOnce(&[u8]) -> R) -> R {
    match item {
        Item::Str(s) => f(s),
        Item::Int(v) => f(itoa::Buffer::new().format(v).as_bytes()),
    }
}

/// A stream item's bytes, owned.
pub fn item_bytes(item: Item) -> Vec<u8> {
    with_item_bytes(item, <[u8]>::to_vec)
}
