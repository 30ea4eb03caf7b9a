//! Writing a base file: the whole dataset as an RDB file (aof-use-rdb-preamble yes, with
//! the snapshot writer) or as the commands that rebuild it (Redis's
//! rewriteAppendOnlyFileRio), crash-safely (Redis's rewriteAppendOnlyFile).
//!
//! ```text
//! commands base:  [#TS:<unix>]                       aof-timestamp-enabled
//!                 FUNCTION LOAD <code>               each function library
//!                 SELECT <db>                        each non-empty database
//!                 SET k v | SADD k m... | ZADD k s m...   at most 64 members a command
//!                 PEXPIREAT k <ms>                   a key with an expiry
//! ```

use crate::keyspace::stream::item_bytes;
use crate::keyspace::{Db, Stream, StreamId, Value};
use crate::propagate::encode;
use crate::rdb::file::AutoSync;
use crate::rdb::write::{write_snapshot, AuxInfo, SaveStats};
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Members a command of a commands base carries at most (AOF_REWRITE_ITEMS_PER_CMD).
const ITEMS_PER_COMMAND: usize = 64;

/// How to write a base.
pub struct BaseOptions<'a> {
    /// RDB (else commands).
    pub rdb: bool,
    /// The AUX facts of an RDB base.
    pub aux: AuxInfo<'a>,
    /// Unix milliseconds now.
    pub now_ms: u64,
    /// A `#TS:` annotation first (commands base).
    pub timestamp: bool,
}

/// Writes the base of `dbs` to `path` through `temp-rewriteaof-<pid>.aof` in `dir`:
/// written, fsynced, then renamed, so `path` is whole or absent.
pub fn write_base(dir: &Path, path: &Path, dbs: &[Db], o: &BaseOptions) -> io::Result<SaveStats> {
    let tmp = dir.join(format!("temp-rewriteaof-{}.aof", std::process::id()));
    let result = (|| {
        let file = AutoSync::new(File::create(&tmp)?, o.aux.incremental_fsync);
        let (file, stats) = if o.rdb {
            write_snapshot(file, dbs, &o.aux)?
        } else {
            write_commands(file, dbs, o)?
        };
        let file = file.into_file();
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)?;
        Ok(stats)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// The commands that rebuild `dbs`.
fn write_commands(
    file: AutoSync,
    dbs: &[Db],
    o: &BaseOptions,
) -> io::Result<(AutoSync, SaveStats)> {
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut stats = SaveStats::default();
    let mut cmd = Vec::new();
    if o.timestamp {
        out.write_all(format!("#TS:{}\r\n", o.now_ms / 1000).as_bytes())?;
    }
    // The function libraries first, as Redis's rewriteFunctions.
    for code in &o.aux.functions {
        cmd.clear();
        encode(&mut cmd, &[b"FUNCTION", b"LOAD", code]);
        out.write_all(&cmd)?;
    }
    for (i, db) in dbs.iter().enumerate() {
        if db.is_empty() {
            continue;
        }
        cmd.clear();
        encode(&mut cmd, &[b"SELECT", i.to_string().as_bytes()]);
        for e in db.iter() {
            if o.aux.key_delay_us != 0 {
                crate::clock::debug_delay(o.aux.key_delay_us);
            }
            let key = e.key();
            match &*e.value {
                Value::Str(s) => encode(&mut cmd, &[b"SET", key, &s.bytes()]),
                Value::Set(s) => {
                    let members: Vec<Vec<u8>> = s.iter().map(|m| m.to_vec()).collect();
                    for batch in members.chunks(ITEMS_PER_COMMAND) {
                        let mut argv: Vec<&[u8]> = vec![b"SADD", key];
                        argv.extend(batch.iter().map(Vec::as_slice));
                        encode(&mut cmd, &argv);
                    }
                    stats.members += members.len() as u64;
                }
                Value::List(l) => {
                    let elements: Vec<Vec<u8>> = l.to_vecs();
                    for batch in elements.chunks(ITEMS_PER_COMMAND) {
                        let mut argv: Vec<&[u8]> = vec![b"RPUSH", key];
                        argv.extend(batch.iter().map(Vec::as_slice));
                        encode(&mut cmd, &argv);
                    }
                    stats.members += elements.len() as u64;
                }
                Value::Hash(h) => {
                    let pairs: Vec<(&[u8], &[u8])> = h.iter().collect();
                    for batch in pairs.chunks(ITEMS_PER_COMMAND) {
                        let mut argv: Vec<&[u8]> = vec![b"HSET", key];
                        for (field, value) in batch {
                            argv.push(field);
                            argv.push(value);
                        }
                        encode(&mut cmd, &argv);
                    }
                    // Field times after the pairs, one field a command, as Redis's
                    // rewriteHashObject.
                    for (field, _, at) in h.iter_with_expiry() {
                        if let Some(at) = at {
                            let at = at.to_string();
                            encode(
                                &mut cmd,
                                &[b"HPEXPIREAT", key, at.as_bytes(), b"FIELDS", b"1", field],
                            );
                        }
                    }
                    stats.members += pairs.len() as u64;
                }
                Value::ZSet(z) => {
                    let pairs: Vec<(String, Vec<u8>)> =
                        z.iter().map(|(m, s)| (s.to_string(), m.to_vec())).collect();
                    for batch in pairs.chunks(ITEMS_PER_COMMAND) {
                        let mut argv: Vec<&[u8]> = vec![b"ZADD", key];
                        for (score, member) in batch {
                            argv.push(score.as_bytes());
                            argv.push(member);
                        }
                        encode(&mut cmd, &argv);
                    }
                    stats.members += pairs.len() as u64;
                }
                Value::Stream(s) => {
                    rewrite_stream(&mut cmd, key, s);
                    stats.members += s.len();
                }
            }
            if let Some(at) = e.expire_at() {
                encode(&mut cmd, &[b"PEXPIREAT", key, at.to_string().as_bytes()]);
            }
            stats.keys += 1;
            crate::rdb::fork::key_written(stats.keys);
            out.write_all(&cmd)?;
            stats.bytes += cmd.len() as u64;
            cmd.clear();
        }
    }
    let file = out.into_inner().map_err(|e| e.into_error())?;
    Ok((file, stats))
}

/// The commands that rebuild stream `s` at `key`, as Redis's rewriteStreamObject emits
/// them: an XADD per entry (for an empty stream, `XADD key MAXLEN 0 0-1 x y`), XSETID with
/// the last id, entries added and max deleted id; per group XGROUP CREATE with ENTRIESREAD
/// (-1 when unknown), per consumer an XCLAIM ... JUSTID FORCE per pending entry, or
/// XGROUP CREATECONSUMER when it has none.
fn rewrite_stream(cmd: &mut Vec<u8>, key: &[u8], s: &Stream) {
    if s.is_empty() {
        encode(cmd, &[b"XADD", key, b"MAXLEN", b"0", b"0-1", b"x", b"y"]);
    }
    for e in s.range(StreamId::MIN, StreamId::MAX, false) {
        let id = e.id().to_string();
        let pairs: Vec<Vec<u8>> = e
            .pairs()
            .flat_map(|(f, v)| [item_bytes(f), item_bytes(v)])
            .collect();
        let mut argv: Vec<&[u8]> = vec![b"XADD", key, id.as_bytes()];
        argv.extend(pairs.iter().map(Vec::as_slice));
        encode(cmd, &argv);
    }
    let meta = s.meta();
    let (last, added, max_deleted) = (
        meta.last_id.to_string(),
        meta.entries_added.to_string(),
        meta.max_deleted_id.to_string(),
    );
    encode(
        cmd,
        &[
            b"XSETID",
            key,
            last.as_bytes(),
            b"ENTRIESADDED",
            added.as_bytes(),
            b"MAXDELETEDID",
            max_deleted.as_bytes(),
        ],
    );
    for (group, g) in s.groups() {
        let last = g.last_id.to_string();
        let read = g.entries_read.map_or(-1, |n| n as i64).to_string();
        let argv: [&[u8]; 7] = [
            b"XGROUP",
            b"CREATE",
            key,
            group,
            last.as_bytes(),
            b"ENTRIESREAD",
            read.as_bytes(),
        ];
        encode(cmd, &argv);
        for c in g.consumers() {
            let consumer = c.name();
            if c.pending_len() == 0 {
                encode(cmd, &[b"XGROUP", b"CREATECONSUMER", key, group, consumer]);
            }
            for (id, nack) in g.consumer_pending(c, StreamId::MIN) {
                let (id, time, count) = (
                    id.to_string(),
                    nack.delivery_time.to_string(),
                    nack.delivery_count.to_string(),
                );
                let argv: [&[u8]; 12] = [
                    b"XCLAIM",
                    key,
                    group,
                    consumer,
                    b"0",
                    id.as_bytes(),
                    b"TIME",
                    time.as_bytes(),
                    b"RETRYCOUNT",
                    count.as_bytes(),
                    b"JUSTID",
                    b"FORCE",
                ];
                encode(cmd, &argv);
            }
        }
    }
}
