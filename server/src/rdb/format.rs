//! RDB format constants: header, opcodes, value types and the length encoding, with the
//! Redis / Valkey release that introduced each (see Redis's rdb.h).

/// Version Goblin writes: Redis 7.0 and later, and every Valkey, load it (Redis 7.0 refuses 11).
pub const WRITE_VERSION: u32 = 10;
/// Highest `REDISnnnn` version Goblin reads (Redis 8.x).
pub const MAX_REDIS_VERSION: u32 = 13;
/// Lowest and highest `VALKEYnnn` version Goblin reads (Valkey 9.0 wrote 80, 9.2 writes 81).
pub const MIN_VALKEY_VERSION: u32 = 80;
/// See [`MIN_VALKEY_VERSION`].
pub const MAX_VALKEY_VERSION: u32 = 81;
/// First version whose files end with a CRC64 (Redis 2.6).
pub const FIRST_CHECKSUM_VERSION: u32 = 5;

// Opcodes: one byte where a value type may also stand, counting down from 255.
/// Valkey 9: slot import state (cluster mode only).
pub const OP_SLOT_IMPORT: u8 = 243;
/// Redis 7.4 (RDB 12): per-slot key counts, a hint.
pub const OP_SLOT_INFO: u8 = 244;
/// Redis 7.0: one function library (its source as a string).
pub const OP_FUNCTION2: u8 = 245;
/// Redis 7.0 release candidates: the old function format (refused by Redis too).
pub const OP_FUNCTION_PRE_GA: u8 = 246;
/// Redis 4.0: module data not tied to a key.
pub const OP_MODULE_AUX: u8 = 247;
/// Redis 4.0: LRU idle seconds of the next key.
pub const OP_IDLE: u8 = 248;
/// Redis 4.0: LFU counter of the next key (one byte).
pub const OP_FREQ: u8 = 249;
/// Redis 4.0 (RDB 7): a string-string field about the file.
pub const OP_AUX: u8 = 250;
/// Redis 3.2 (RDB 7): key and expiry counts of the current database, a hint.
pub const OP_RESIZEDB: u8 = 251;
/// Redis 2.6 (RDB 3): expiry of the next key in Unix milliseconds (8 bytes LE).
pub const OP_EXPIRETIME_MS: u8 = 252;
/// Expiry of the next key in Unix seconds (4 bytes LE).
pub const OP_EXPIRETIME: u8 = 253;
/// The database of the keys that follow.
pub const OP_SELECTDB: u8 = 254;
/// End of the data; the CRC64 follows from RDB 5 on.
pub const OP_EOF: u8 = 255;

// Value types.
/// A string.
pub const TYPE_STRING: u8 = 0;
/// A list of strings.
pub const TYPE_LIST: u8 = 1;
/// A set of strings.
pub const TYPE_SET: u8 = 2;
/// A sorted set with scores as decimal strings.
pub const TYPE_ZSET: u8 = 3;
/// A hash.
pub const TYPE_HASH: u8 = 4;
/// A sorted set with scores as 8-byte little-endian doubles (Redis 4.0, RDB 8).
pub const TYPE_ZSET_2: u8 = 5;
/// Module value of the 4.0 release candidates (refused by Redis too).
pub const TYPE_MODULE_PRE_GA: u8 = 6;
/// Self-describing module value.
pub const TYPE_MODULE_2: u8 = 7;
/// Hash as a zipmap blob (Redis 2.4 and older).
pub const TYPE_HASH_ZIPMAP: u8 = 9;
/// List as a ziplist blob.
pub const TYPE_LIST_ZIPLIST: u8 = 10;
/// Set of integers as an intset blob.
pub const TYPE_SET_INTSET: u8 = 11;
/// Sorted set as a ziplist blob, member and score alternating (Redis 2.6 to 6.2).
pub const TYPE_ZSET_ZIPLIST: u8 = 12;
/// Hash as a ziplist blob.
pub const TYPE_HASH_ZIPLIST: u8 = 13;
/// List as ziplist nodes.
pub const TYPE_LIST_QUICKLIST: u8 = 14;
/// Stream.
pub const TYPE_STREAM_LISTPACKS: u8 = 15;
/// Hash as a listpack blob (Redis 7.0).
pub const TYPE_HASH_LISTPACK: u8 = 16;
/// Sorted set as a listpack blob, member and score alternating (Redis 7.0).
pub const TYPE_ZSET_LISTPACK: u8 = 17;
/// List as listpack nodes, each with a container kind (Redis 7.0).
pub const TYPE_LIST_QUICKLIST_2: u8 = 18;
/// A QUICKLIST_2 node holding one element as a plain string.
pub const QUICKLIST_NODE_PLAIN: u64 = 1;
/// A QUICKLIST_2 node holding a listpack of elements.
pub const QUICKLIST_NODE_PACKED: u64 = 2;
/// Stream with first id, max deleted id and entries added (Redis 7.0).
pub const TYPE_STREAM_LISTPACKS_2: u8 = 19;
/// Set as a listpack blob (Redis 7.2, RDB 11).
pub const TYPE_SET_LISTPACK: u8 = 20;
/// Stream with consumer active times (Redis 7.2).
pub const TYPE_STREAM_LISTPACKS_3: u8 = 21;
/// Redis 7.4 RC: hash with field expiries, absolute TTLs. Valkey 9: hash with field expiries.
pub const TYPE_22: u8 = 22;
/// Redis 7.4 RC: listpack hash with field expiries. Valkey 9.2: path hash.
pub const TYPE_23: u8 = 23;
/// Redis 7.4: hash with field expiries relative to a minimum.
pub const TYPE_HASH_METADATA: u8 = 24;
/// Redis 7.4: listpack hash with field expiries after a minimum.
pub const TYPE_HASH_LISTPACK_EX: u8 = 25;

// Module value opcodes (RDB_MODULE_OPCODE_*).
/// End of a module value.
pub const MODULE_EOF: u64 = 0;
/// Signed integer (a length).
pub const MODULE_SINT: u64 = 1;
/// Unsigned integer (a length).
pub const MODULE_UINT: u64 = 2;
/// 4-byte float.
pub const MODULE_FLOAT: u64 = 3;
/// 8-byte double.
pub const MODULE_DOUBLE: u64 = 4;
/// A string.
pub const MODULE_STRING: u64 = 5;

// Length encoding: the top two bits of the first byte.
/// `00xxxxxx`: a 6-bit length.
pub const LEN_6BIT: u8 = 0;
/// `01xxxxxx xxxxxxxx`: a 14-bit length, big-endian.
pub const LEN_14BIT: u8 = 1;
/// `10000000` then 4 bytes big-endian.
pub const LEN_32BIT: u8 = 0x80;
/// `10000001` then 8 bytes big-endian.
pub const LEN_64BIT: u8 = 0x81;
/// `11xxxxxx`: a specially encoded string follows, kind in the low six bits.
pub const LEN_ENCVAL: u8 = 3;
/// String stored as an 8-bit signed integer.
pub const ENC_INT8: u8 = 0;
/// String stored as a 16-bit little-endian signed integer.
pub const ENC_INT16: u8 = 1;
/// String stored as a 32-bit little-endian signed integer.
pub const ENC_INT32: u8 = 2;
/// LZF-compressed string: compressed length, original length, data.
pub const ENC_LZF: u8 = 3;

/// What kind of key an RDB value type holds, for messages.
pub fn type_name(rdb_type: u8, valkey: bool) -> &'static str {
    match rdb_type {
        TYPE_STRING => "string",
        TYPE_LIST | TYPE_LIST_ZIPLIST | TYPE_LIST_QUICKLIST | TYPE_LIST_QUICKLIST_2 => "list",
        TYPE_SET | TYPE_SET_INTSET | TYPE_SET_LISTPACK => "set",
        TYPE_ZSET | TYPE_ZSET_2 | TYPE_ZSET_ZIPLIST | TYPE_ZSET_LISTPACK => "zset",
        TYPE_HASH | TYPE_HASH_ZIPMAP | TYPE_HASH_ZIPLIST | TYPE_HASH_LISTPACK => "hash",
        TYPE_22 | TYPE_HASH_METADATA | TYPE_HASH_LISTPACK_EX => "hash",
        TYPE_23 if !valkey => "hash",
        TYPE_23 => "path hash",
        TYPE_STREAM_LISTPACKS | TYPE_STREAM_LISTPACKS_2 | TYPE_STREAM_LISTPACKS_3 => "stream",
        TYPE_MODULE_PRE_GA | TYPE_MODULE_2 => "module",
        _ => "unknown",
    }
}
