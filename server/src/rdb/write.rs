//! The RDB writer: a snapshot of every database as Redis 7.0 writes it, at RDB version 10.
//!
//! ```text
//! "REDIS0010"
//! AUX redis-ver, redis-bits, ctime, used-mem, aof-base, goblin-ver
//! per non-empty database:
//!   SELECTDB n, RESIZEDB keys expires
//!   per key: [EXPIRETIME_MS t] ZSET_2 key len (member, 8-byte LE double)...
//!        or: [EXPIRETIME_MS t] STRING key value
//!        or: [EXPIRETIME_MS t] SET_INTSET key blob | SET key len member...
//!        or: [EXPIRETIME_MS t] LIST_QUICKLIST_2 key nodes (PACKED=2, listpack)...
//! EOF, CRC64 of everything before it (8 bytes LE)
//! ```
//!
//! Members are written from the highest score to the lowest, as Redis does: a loader that
//! inserts each one at the head of a list (Redis's skiplist) then never searches. Strings
//! that are canonical integers of at most 11 characters are written integer-encoded, as
//! Redis does; every string over 20 bytes (keys, values, members, fields, blobs) is
//! LZF-compressed when that saves 4 bytes or more and rdbcompression is on, as Redis's
//! rdbSaveRawString does.

use super::crc64;
use super::format::*;
use super::lzf;
use super::packed::{self, Item};
use crate::keyspace::{Db, Member, SetEncoding, Stream, StreamId, Value};
use crate::numbers::double_to_bytes;
use goblin_zset::list::StoredNode;
use goblin_zset::Encoding as ZSetEncoding;
use std::io::{self, Write};

/// Bytes gathered before they are checksummed and handed to the output.
const CHUNK: usize = 1 << 20;

/// Facts about the saving server, written as AUX fields.
pub struct AuxInfo<'a> {
    /// The Redis version Goblin follows (`redis-ver`).
    pub redis_version: &'a str,
    /// Unix seconds at the start of the save (`ctime`).
    pub ctime: u64,
    /// Bytes of data held (`used-mem`).
    pub used_mem: u64,
    /// rdbcompression: string values over 20 bytes are LZF-compressed (not a field).
    pub compress: bool,
    /// rdbchecksum: the file ends with its CRC64, else with zero (not a field).
    pub checksum: bool,
    /// rdb-save-incremental-fsync (aof-rewrite-incremental-fsync for an AOF base): the
    /// bytes after which a file being written is synced, or None (not a field).
    pub incremental_fsync: Option<u64>,
    /// The snapshot is an AOF's base (`aof-base` 1, as Redis writes a preamble).
    pub aof_base: bool,
    /// The function libraries' codes, written after the AUX fields (RDB_OPCODE_FUNCTION2).
    pub functions: Vec<Vec<u8>>,
    /// The replication state (`repl-stream-db`, `repl-id`, `repl-offset`), when this server
    /// is part of a replication chain (Redis's rdbSaveInfo).
    pub repl: Option<ReplAux>,
    /// rdb-key-save-delay: the delay after each key written ([`crate::clock::debug_delay`];
    /// not a field).
    pub key_delay_us: i64,
}

impl Default for AuxInfo<'static> {
    /// A plain snapshot at time 0: Redis's version, compressed and checksummed, no
    /// functions, no replication state, no delay.
    fn default() -> Self {
        AuxInfo {
            redis_version: crate::REDIS_VERSION,
            ctime: 0,
            used_mem: 0,
            compress: true,
            checksum: true,
            incremental_fsync: None,
            aof_base: false,
            functions: Vec::new(),
            repl: None,
            key_delay_us: 0,
        }
    }
}

/// The replication state a snapshot carries, as Redis's rdbSaveInfo: the history and offset
/// the data is at, and the database the stream continues in. A replica of the master that
/// wrote it selects that database after a full sync's load; a server restarted from it
/// continues the history with PSYNC (a replica) or lets its replicas do so (a master).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplAux {
    /// `repl-stream-db`: the database the stream continues in.
    pub stream_db: usize,
    /// `repl-id`: the replication id (40 hex digits).
    pub replid: String,
    /// `repl-offset`: the offset of the stream's last byte in the data.
    pub offset: u64,
}

impl ReplAux {
    /// The state a load's AUX fields give, when all three are there and valid (Redis uses
    /// them only then).
    pub fn from_aux(aux: &[(String, String)]) -> Option<ReplAux> {
        let field = |name: &str| aux.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let replid = field("repl-id").filter(|id| id.len() == 40)?;
        Some(ReplAux {
            stream_db: field("repl-stream-db")?.parse().ok()?,
            replid: replid.to_string(),
            offset: field("repl-offset")?.parse().ok()?,
        })
    }
}

/// What a save wrote.
#[derive(Debug, Default, Clone, Copy)]
pub struct SaveStats {
    /// Keys written.
    pub keys: u64,
    /// Members written, over all keys.
    pub members: u64,
    /// File size in bytes.
    pub bytes: u64,
}

/// Buffers output, keeping the running CRC64 of all bytes written.
pub struct RdbWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    crc: u64,
    written: u64,
    /// Buffered bytes at which they go to `out`.
    spill_at: usize,
    /// The CRC64 is computed (else the checksum written is zero: rdbchecksum no).
    checksum: bool,
}

impl<W: Write> RdbWriter<W> {
    /// A writer over `out`.
    pub fn new(out: W) -> Self {
        RdbWriter::with_capacity(out, CHUNK + 1024)
    }

    /// A writer over `out` whose buffer starts with room for `capacity` bytes (one value:
    /// a DUMP payload).
    pub fn with_capacity(out: W, capacity: usize) -> Self {
        RdbWriter {
            out,
            buf: Vec::with_capacity(capacity),
            crc: 0,
            written: 0,
            spill_at: CHUNK,
            checksum: true,
        }
    }

    fn spill(&mut self) -> io::Result<()> {
        if self.checksum {
            self.crc = crc64::update(self.crc, &self.buf);
        }
        self.out.write_all(&self.buf)?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    #[inline]
    fn maybe_spill(&mut self) -> io::Result<()> {
        if self.buf.len() >= self.spill_at {
            self.spill()?;
        }
        Ok(())
    }

    /// Raw bytes.
    pub fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.buf.extend_from_slice(bytes);
        self.maybe_spill()
    }

    /// One opcode or type byte.
    pub fn byte(&mut self, b: u8) -> io::Result<()> {
        self.buf.push(b);
        self.maybe_spill()
    }

    /// A length in the RDB length encoding.
    pub fn len(&mut self, len: u64) -> io::Result<()> {
        encode_len(len, &mut self.buf);
        self.maybe_spill()
    }

    /// A string: integer-encoded when it is a short canonical integer, else length + bytes.
    pub fn string(&mut self, s: &[u8]) -> io::Result<()> {
        encode_string(s, &mut self.buf);
        self.maybe_spill()
    }

    /// A string value: as [`RdbWriter::string`], but LZF-compressed when `compress` and it is
    /// over 20 bytes and compresses (Redis's rdbSaveRawString with rdbcompression yes).
    pub fn string_value(&mut self, s: &[u8], compress: bool) -> io::Result<()> {
        let packed = if compress && s.len() > 20 {
            lzf::compress(s)
        } else {
            None
        };
        match packed {
            Some(packed) => {
                self.buf.push((LEN_ENCVAL << 6) | ENC_LZF);
                encode_len(packed.len() as u64, &mut self.buf);
                encode_len(s.len() as u64, &mut self.buf);
                self.raw(&packed)
            }
            None => self.string(s),
        }
    }

    /// An LZF blob that expands to `raw_len` bytes, as Redis's rdbSaveLzfBlob writes it (a
    /// compressed quicklist node, whatever rdbcompression says).
    pub fn lzf_blob(&mut self, lzf: &[u8], raw_len: usize) -> io::Result<()> {
        self.buf.push((LEN_ENCVAL << 6) | ENC_LZF);
        encode_len(lzf.len() as u64, &mut self.buf);
        encode_len(raw_len as u64, &mut self.buf);
        self.raw(lzf)
    }

    /// A double as 8 bytes little-endian (ZSET_2 scores).
    pub fn double(&mut self, v: f64) -> io::Result<()> {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self.maybe_spill()
    }

    /// The output, with everything written so far in it (no EOF, no checksum), and the
    /// CRC64 of those bytes.
    pub fn into_parts(mut self) -> io::Result<(W, u64)> {
        self.spill()?;
        self.out.flush()?;
        Ok((self.out, self.crc))
    }

    /// The EOF opcode and the checksum; returns the output and the bytes written in all.
    pub fn finish(mut self) -> io::Result<(W, u64)> {
        self.buf.push(OP_EOF);
        self.spill()?;
        let crc = self.crc.to_le_bytes();
        self.out.write_all(&crc)?;
        self.out.flush()?;
        Ok((self.out, self.written + 8))
    }
}

/// Appends a length in the RDB encoding.
pub fn encode_len(len: u64, out: &mut Vec<u8>) {
    if len < 1 << 6 {
        out.push(len as u8);
    } else if len < 1 << 14 {
        out.push((LEN_14BIT << 6) | (len >> 8) as u8);
        out.push(len as u8);
    } else if len <= u32::MAX as u64 {
        out.push(LEN_32BIT);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    } else {
        out.push(LEN_64BIT);
        out.extend_from_slice(&len.to_be_bytes());
    }
}

/// The value of `s` if it is the canonical decimal form of an integer (what Redis's
/// string2ll accepts and ll2string prints back identically).
fn canonical_int(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.split_first()? {
        (b'-', rest) => (true, rest),
        _ => (false, s),
    };
    match digits {
        [] => return None,
        [b'0'] if !neg => return Some(0),
        [b'0', ..] => return None,
        _ => {}
    }
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let text = std::str::from_utf8(s).ok()?;
    text.parse::<i64>().ok()
}

/// Appends a string, integer-encoded when Redis would.
pub fn encode_string(s: &[u8], out: &mut Vec<u8>) {
    if s.len() <= 11 {
        if let Some(v) = canonical_int(s) {
            let tag = LEN_ENCVAL << 6;
            if let Ok(v) = i8::try_from(v) {
                out.push(tag | ENC_INT8);
                out.push(v as u8);
                return;
            } else if let Ok(v) = i16::try_from(v) {
                out.push(tag | ENC_INT16);
                out.extend_from_slice(&v.to_le_bytes());
                return;
            } else if let Ok(v) = i32::try_from(v) {
                out.push(tag | ENC_INT32);
                out.extend_from_slice(&v.to_le_bytes());
                return;
            }
        }
    }
    encode_len(s.len() as u64, out);
    out.extend_from_slice(s);
}

/// How a value is encoded: for a snapshot file (RDB 10) or, as Redis 7.2 writes it, for a
/// DUMP payload (RDB 11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Form {
    /// rdbcompression: strings over 20 bytes are LZF-compressed when that saves 4 bytes.
    pub compress: bool,
    /// Every value as Redis 7.2's rdbSaveObject writes it (DUMP): a listpack sorted set as
    /// ZSET_LISTPACK, a listpack set as SET_LISTPACK, and every string of a value (members,
    /// blobs, list nodes) through the compression. Otherwise (files, RDB 10, which Redis
    /// 7.0 reads): sorted sets as ZSET_2, listpack sets as SET; strings are compressed
    /// alike in both forms.
    pub exact: bool,
}

impl Form {
    /// The form of a snapshot file under `compress` (rdbcompression).
    pub fn file(compress: bool) -> Form {
        Form {
            compress,
            exact: false,
        }
    }
}

/// The RDB value type `value` is written as in `form`.
pub fn value_type(value: &Value, form: Form) -> u8 {
    match value {
        Value::ZSet(z) if form.exact && z.encoding() == ZSetEncoding::Listpack => {
            TYPE_ZSET_LISTPACK
        }
        Value::ZSet(_) => TYPE_ZSET_2,
        Value::Str(_) => TYPE_STRING,
        Value::Set(s) => match s.encoding() {
            SetEncoding::Intset => TYPE_SET_INTSET,
            SetEncoding::Listpack if form.exact => TYPE_SET_LISTPACK,
            _ => TYPE_SET,
        },
        // Redis 7.4's types only for a hash with field times, so 7.2 reads the rest.
        Value::Hash(h) => match (h.encoding().is_packed(), h.min_field_expiry()) {
            (true, None) => TYPE_HASH_LISTPACK,
            (false, None) => TYPE_HASH,
            (true, Some(_)) => TYPE_HASH_LISTPACK_EX,
            (false, Some(_)) => TYPE_HASH_METADATA,
        },
        Value::List(_) => TYPE_LIST_QUICKLIST_2,
        Value::Stream(_) if form.exact => TYPE_STREAM_LISTPACKS_3,
        Value::Stream(_) => TYPE_STREAM_LISTPACKS_2,
    }
}

/// The listpack item of a member or field: an integer when it is the canonical text of
/// one, as lpAppend stores it.
fn item(b: &[u8]) -> Item<'_> {
    canonical_int(b).map_or(Item::Str(b), Item::Int)
}

/// The listpack item of an element the engine holds as an integer or as bytes.
fn member_item(m: Member<'_>) -> Item<'_> {
    match m {
        Member::Int(v) => Item::Int(v),
        Member::Bytes(b) => item(b),
    }
}

/// Writes the body of `value` (what follows its type byte and key), as [`value_type`]
/// names it: a sorted set as ZSET_2 (descending, as Redis writes a skiplist) or, exact,
/// ZSET_LISTPACK (member and score alternating, the score as d2string prints it, stored
/// as an integer when it is one); a string as STRING; a set as SET_INTSET (the blob: width
/// and count as u32 LE, then the integers), SET_LISTPACK (exact) or SET, a count and the
/// members; a hash as HASH_LISTPACK (the pairs in order, integers in the listpack's
/// integer encodings) or HASH, a count and field, value strings; a list as QUICKLIST_2, a
/// PACKED listpack per node and a PLAIN string per plain node, as Redis 7.0 and 7.2 write
/// it. Every string and blob is LZF-compressed as Redis does under `form.compress`.
pub fn write_body<W: Write>(w: &mut RdbWriter<W>, value: &Value, form: Form) -> io::Result<()> {
    let compress = form.compress;
    let members = compress;
    match value {
        Value::ZSet(z) => {
            if value_type(value, form) == TYPE_ZSET_LISTPACK {
                let scores: Vec<Vec<u8>> = z.iter().map(|(_, s)| double_to_bytes(s)).collect();
                let items: Vec<Item> = z
                    .iter()
                    .zip(&scores)
                    .flat_map(|((m, _), s)| [item(m), item(s)])
                    .collect();
                return w.string_value(&packed::listpack(&items), compress);
            }
            w.len(z.len() as u64)?;
            for (member, score) in z.iter().rev() {
                w.string_value(member, members)?;
                w.double(score)?;
            }
        }
        Value::Str(s) => w.string_value(&s.bytes(), compress)?,
        Value::Set(s) => match s.intset_contents() {
            Some((width, ints)) => {
                let mut blob = Vec::with_capacity(8 + ints.len());
                blob.extend_from_slice(&u32::from(width).to_le_bytes());
                blob.extend_from_slice(&(s.len() as u32).to_le_bytes());
                blob.extend_from_slice(ints);
                w.string_value(&blob, members)?;
            }
            None if value_type(value, form) == TYPE_SET_LISTPACK => {
                let items: Vec<Item> = s.iter().map(member_item).collect();
                w.string_value(&packed::listpack(&items), compress)?;
            }
            None => {
                w.len(s.len() as u64)?;
                for m in s.iter() {
                    m.with_bytes(|b| w.string_value(b, members))?;
                }
            }
        },
        Value::Hash(h) => {
            let min = h.min_field_expiry();
            if let Some(t) = min {
                // HASH_LISTPACK_EX and HASH_METADATA start with the earliest field time.
                w.raw(&t.to_le_bytes())?;
            }
            match (h.encoding().is_packed(), min) {
                (true, None) => {
                    let items: Vec<Item> = h.iter().flat_map(|(f, v)| [f, v]).map(item).collect();
                    w.string_value(&packed::listpack(&items), compress)?;
                }
                (true, Some(_)) => {
                    // Triples of field, value and time (0 for none), in listpackex order.
                    let items: Vec<Item> = h
                        .iter_with_expiry()
                        .flat_map(|(f, v, t)| [item(f), item(v), Item::Int(t.unwrap_or(0) as i64)])
                        .collect();
                    w.string_value(&packed::listpack(&items), compress)?;
                }
                (false, min) => {
                    w.len(h.len() as u64)?;
                    for (f, v, t) in h.iter_with_expiry() {
                        if let Some(min) = min {
                            // A time is stored relative to the earliest, plus one (0: none).
                            w.len(t.map_or(0, |t| t - min + 1))?;
                        }
                        w.string_value(f, compress)?;
                        w.string_value(v, compress)?;
                    }
                }
            }
        }
        Value::List(l) => {
            let nodes = l.stored_nodes();
            w.len(nodes.len() as u64)?;
            for node in nodes {
                match node {
                    StoredNode::Compressed {
                        plain,
                        raw_len,
                        lzf,
                    } => {
                        w.len(container(plain))?;
                        w.lzf_blob(lzf, raw_len)?;
                    }
                    StoredNode::Elements { plain: true, items } => {
                        w.len(QUICKLIST_NODE_PLAIN)?;
                        items[0].with_bytes(|b| w.string_value(b, members))?;
                    }
                    StoredNode::Elements { items, .. } => {
                        let items: Vec<Item> = items.iter().map(|m| member_item(*m)).collect();
                        w.len(QUICKLIST_NODE_PACKED)?;
                        w.string_value(&packed::listpack(&items), members)?;
                    }
                }
            }
        }
        Value::Stream(s) => write_stream(w, s, form)?,
    }
    Ok(())
}

/// A stream as STREAM_LISTPACKS_3 (exact) or, in a file (RDB 10, which Redis 7.0 reads),
/// STREAM_LISTPACKS_2, which has no consumer active times (a load takes the seen times),
/// as Redis's rdbSaveObject writes them: the node count,
/// each node's 16-byte big-endian key and listpack; length, last id, first id, max deleted
/// id, entries added; then the groups, each its name (names and listpacks compressed as
/// other strings), last id, entries read (-1 as an
/// unsigned length when unknown), its PEL (raw id, delivery time as 8 bytes LE, delivery
/// count) and its consumers (name, seen and active times as 8 bytes LE, raw PEL ids).
fn write_stream<W: Write>(w: &mut RdbWriter<W>, s: &Stream, form: Form) -> io::Result<()> {
    let compress = form.compress;
    w.len(s.node_count() as u64)?;
    for (key, lp) in s.nodes() {
        w.string(&key.to_be_bytes())?;
        w.string_value(&lp, compress)?;
    }
    let meta = s.meta();
    w.len(meta.len)?;
    for id in [meta.last_id, meta.first_id, meta.max_deleted_id] {
        w.len(id.ms)?;
        w.len(id.seq)?;
    }
    w.len(meta.entries_added)?;
    w.len(s.groups().len() as u64)?;
    for (name, g) in s.groups() {
        w.string_value(name, compress)?;
        w.len(g.last_id.ms)?;
        w.len(g.last_id.seq)?;
        w.len(g.entries_read.unwrap_or(u64::MAX))?;
        w.len(g.pending_len() as u64)?;
        for (id, nack) in g.pending_from(StreamId::MIN) {
            w.raw(&id.to_be_bytes())?;
            w.raw(&nack.delivery_time.to_le_bytes())?;
            w.len(nack.delivery_count)?;
        }
        w.len(g.consumers_len() as u64)?;
        for c in g.consumers() {
            w.string_value(c.name(), compress)?;
            w.raw(&c.seen_time.to_le_bytes())?;
            if form.exact {
                w.raw(&c.active_time.to_le_bytes())?;
            }
            w.len(c.pending_len() as u64)?;
            for (id, _) in g.consumer_pending(c, StreamId::MIN) {
                w.raw(&id.to_be_bytes())?;
            }
        }
    }
    Ok(())
}

/// A QUICKLIST_2 node's container code.
fn container(plain: bool) -> u64 {
    if plain {
        QUICKLIST_NODE_PLAIN
    } else {
        QUICKLIST_NODE_PACKED
    }
}

/// Writes one key's type byte, key and value in `form` (see [`write_body`]).
fn write_value<W: Write>(
    w: &mut RdbWriter<W>,
    key: &[u8],
    value: &Value,
    form: Form,
) -> io::Result<()> {
    w.byte(value_type(value, form))?;
    w.string_value(key, form.compress)?;
    write_body(w, value, form)
}

/// The bytes Redis 7.2 writes for `value` after its type byte and key (rdbSavedObjectLen,
/// DEBUG OBJECT's serializedlength): the exact form's.
pub fn value_len(value: &Value, compress: bool) -> u64 {
    let mut w = RdbWriter::with_capacity(io::sink(), 64);
    let form = Form {
        compress,
        exact: true,
    };
    // Writing to a sink cannot fail; the type byte and the empty key are one byte each.
    let _ = write_value(&mut w, b"", value, form);
    // finish adds the EOF opcode and the 8-byte checksum.
    w.finish().map_or(0, |(_, written)| written - 2 - 9)
}

/// Writes a whole snapshot of `dbs` to `out`. Keys whose time has come are written too, as
/// Redis writes them: a load drops them (counting them in rdb_last_load_keys_expired), a
/// replica keeps them until its master's DEL.
pub fn write_snapshot<W: Write>(out: W, dbs: &[Db], aux: &AuxInfo) -> io::Result<(W, SaveStats)> {
    write_snapshot_spilling(out, dbs, aux, CHUNK)
}

/// [`write_snapshot`], handing the bytes to `out` each time `spill_at` of them gathered (a
/// diskless sync's pipe: its readers see a slow save progress as Redis's 16 KB writes).
pub fn write_snapshot_spilling<W: Write>(
    out: W,
    dbs: &[Db],
    aux: &AuxInfo,
    spill_at: usize,
) -> io::Result<(W, SaveStats)> {
    let mut w = RdbWriter::new(out);
    w.spill_at = spill_at;
    w.checksum = aux.checksum;
    let mut stats = SaveStats::default();
    w.raw(format!("REDIS{WRITE_VERSION:04}").as_bytes())?;
    // In Redis's order (rdbSaveInfoAuxFields), Goblin's own field last.
    let mut aux_fields: Vec<(&str, String)> = vec![
        ("redis-ver", aux.redis_version.to_string()),
        ("redis-bits", "64".into()),
        ("ctime", aux.ctime.to_string()),
        ("used-mem", aux.used_mem.to_string()),
    ];
    if let Some(repl) = &aux.repl {
        aux_fields.push(("repl-stream-db", repl.stream_db.to_string()));
        aux_fields.push(("repl-id", repl.replid.clone()));
        aux_fields.push(("repl-offset", repl.offset.to_string()));
    }
    aux_fields.push(("aof-base", u8::from(aux.aof_base).to_string()));
    aux_fields.push(("goblin-ver", env!("CARGO_PKG_VERSION").into()));
    for (name, value) in &aux_fields {
        w.byte(OP_AUX)?;
        w.string(name.as_bytes())?;
        w.string(value.as_bytes())?;
    }
    for code in &aux.functions {
        w.byte(OP_FUNCTION2)?;
        w.string_value(code, aux.compress)?;
    }
    for (index, db) in dbs.iter().enumerate() {
        if db.is_empty() {
            continue;
        }
        w.byte(OP_SELECTDB)?;
        w.len(index as u64)?;
        w.byte(OP_RESIZEDB)?;
        w.len(db.len() as u64)?;
        w.len(db.volatile_len() as u64)?;
        for entry in db.iter() {
            let expire = entry.expire_at();
            if entry.value.is_empty() {
                continue;
            }
            if let Some(at) = expire {
                w.byte(OP_EXPIRETIME_MS)?;
                w.raw(&(at as i64).to_le_bytes())?;
            }
            write_value(&mut w, entry.key(), &entry.value, Form::file(aux.compress))?;
            stats.keys += 1;
            super::fork::key_written(stats.keys);
            if aux.key_delay_us != 0 {
                crate::clock::debug_delay(aux.key_delay_us);
            }
            // Members of the collections (a string has none).
            if !matches!(*entry.value, Value::Str(_)) {
                stats.members += entry.value.len() as u64;
            }
        }
    }
    let (out, bytes) = w.finish()?;
    stats.bytes = bytes;
    Ok((out, stats))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths() {
        let enc = |n| {
            let mut v = Vec::new();
            encode_len(n, &mut v);
            v
        };
        assert_eq!(enc(0), [0]);
        assert_eq!(enc(63), [63]);
        assert_eq!(enc(64), [0x40, 64]);
        assert_eq!(enc(16383), [0x7f, 0xff]);
        assert_eq!(enc(16384), [0x80, 0, 0, 0x40, 0]);
        assert_eq!(enc(1 << 32), [0x81, 0, 0, 0, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn integer_encoding_only_for_canonical_integers() {
        let enc = |s: &[u8]| {
            let mut v = Vec::new();
            encode_string(s, &mut v);
            v
        };
        assert_eq!(enc(b"0"), [0xc0, 0]);
        assert_eq!(enc(b"-1"), [0xc0, 0xff]);
        assert_eq!(enc(b"300"), [0xc1, 0x2c, 0x01]);
        assert_eq!(enc(b"-2147483648"), [0xc2, 0, 0, 0, 0x80]);
        assert_eq!(
            enc(b"2147483648"),
            [10, b'2', b'1', b'4', b'7', b'4', b'8', b'3', b'6', b'4', b'8']
        );
        for s in [&b"007"[..], b"-0", b"+1", b"1 ", b"", b"-", b"1e3"] {
            assert_eq!(enc(s)[0] as usize, s.len(), "{s:?} must stay a string");
        }
    }
}
