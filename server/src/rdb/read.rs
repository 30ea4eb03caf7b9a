//! The RDB loader: any file Redis 1.0 to 8.x or Valkey writes (`REDIS0001`..`REDIS0013`,
//! `VALKEY080`/`VALKEY081`) whose keys are sorted sets, strings, sets or hashes, in every
//! encoding Redis ever used for them: ZSET (decimal scores), ZSET_2 (binary scores),
//! ZSET_ZIPLIST and ZSET_LISTPACK; STRING; SET, SET_INTSET and SET_LISTPACK; HASH,
//! HASH_ZIPMAP, HASH_ZIPLIST and HASH_LISTPACK; with LZF-compressed and
//! integer-encoded strings anywhere a string may stand.
//!
//! The loader streams: [`Input`] reads through a buffer, counts the offset and keeps the
//! CRC64 of what it consumed. It builds fresh databases and returns them only when the
//! whole file, checksum included, is good; the caller swaps them in, so a bad file never
//! leaves a half-loaded keyspace. Every error carries the byte offset where it was found.
//!
//! Nothing a corrupt file says is trusted for allocation: strings grow as their bytes
//! arrive, LZF output is bounded by [`lzf::MAX_EXPANSION`] times the input actually read,
//! and a set reserves room for at most as many members as the rest of the file can hold.
//!
//! Keys of other types are refused, naming the key and its type, unless
//! [`LoadOptions::skip_unsupported`] is set; then they are parsed past and counted.

use super::format::*;
use super::lzf;
use super::packed::{self, Item};
use super::read_stream::read_stream;
use crate::keyspace::{Db, Hash, HashConfig, List, ListConfig, Set, SetConfig, StringValue, Value};
use goblin_zset::ZSet;
use std::fmt;
use std::io::Read;

/// The latest hash field expiry time a snapshot may hold (Redis's EB_EXPIRE_TIME_MAX).
const MAX_FIELD_TIME: u64 = (1 << 48) - 1;

/// Why a load failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// Reading the file failed.
    Io,
    /// The file ends before the snapshot does.
    Truncated,
    /// The bytes do not form a valid snapshot (bad checksum, impossible length, ...).
    Corrupt,
    /// Valid, but holds what Goblin cannot load (a version, a key type, module data).
    Unsupported,
}

/// A load error: what, and at which byte offset of the file.
#[derive(Debug, Clone)]
pub struct LoadError {
    /// Category.
    pub kind: ErrorKind,
    /// Offset in the file where the problem was found.
    pub offset: u64,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ErrorKind::Io => "I/O error",
            ErrorKind::Truncated => "truncated file",
            ErrorKind::Corrupt => "corrupt file",
            ErrorKind::Unsupported => "unsupported content",
        };
        write!(f, "{what} at byte offset {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for LoadError {}

impl LoadError {
    /// The line Redis logs for a value it could not read (a refused RESTORE payload at
    /// verbose level, a failed start-up load as a warning).
    pub fn internal_error_line(&self) -> String {
        format!(
            "Internal error in RDB reading offset {} -> {}",
            self.offset, self.message
        )
    }
}

type Result<T> = std::result::Result<T, LoadError>;

/// A corrupt value found at `offset`.
fn corrupt_at(offset: u64, message: String) -> LoadError {
    LoadError {
        kind: ErrorKind::Corrupt,
        offset,
        message,
    }
}

/// A blob that failed its check, in Redis's words ("Hash listpack integrity check failed").
fn integrity_error(offset: u64, label: &str, message: impl fmt::Display) -> LoadError {
    corrupt_at(offset, format!("{label} integrity check failed: {message}"))
}

/// "duplicate <what> '<name>'".
fn duplicate_message(what: &str, name: &[u8]) -> String {
    format!("duplicate {what} '{}'", String::from_utf8_lossy(name))
}

/// A duplicate member or field in a packed blob: an error under deep sanitization (or in
/// an encoding Redis always checks in full); else skipped, its first occurrence kept.
fn duplicate(deep: bool, what: &str, name: &[u8]) -> std::result::Result<(), String> {
    match deep {
        true => Err(duplicate_message(what, name)),
        false => Ok(()),
    }
}

/// A packed-blob walker ([`packed::listpack_items`] or [`packed::ziplist_items`]).
type Walker = for<'b> fn(
    &'b [u8],
    &mut dyn FnMut(Item<'b>) -> std::result::Result<(), String>,
) -> std::result::Result<usize, String>;

/// How to load.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Number of databases; a SELECTDB beyond is an error.
    pub databases: usize,
    /// Listpack thresholds for the sorted sets built.
    pub zset: goblin_zset::Config,
    /// Intset and listpack thresholds for the sets built.
    pub set: SetConfig,
    /// Listpack thresholds for the hashes built.
    pub hash: HashConfig,
    /// Node fill of the lists built.
    pub list: ListConfig,
    /// Skip keys of types Goblin does not store instead of refusing the file.
    pub skip_unsupported: bool,
    /// Now, in Unix milliseconds: keys that expired before are dropped (0: none is, as a
    /// replica loads them).
    pub now_ms: u64,
    /// Server clock for the keys' access time.
    pub clock_secs: u32,
    /// The file size when known (bounds reservations).
    pub size: Option<u64>,
    /// key-load-delay: the delay after each key loaded ([`crate::clock::debug_delay`]).
    pub key_delay_us: i64,
    /// Deep sanitization (sanitize-dump-payload, see [`super::deep_sanitize`]): duplicates
    /// in the listpack encodings Redis 7 writes (sets, sorted sets, hashes) and in intsets
    /// are errors, as Redis's deep check finds them. Without it they are what Redis's
    /// shallow check lets through: the payload is taken, its first occurrence kept (Goblin
    /// stores no collection with duplicates). Every blob is parsed in full either way.
    pub deep_sanitize: bool,
    /// Keep the database and name of each key dropped as expired (a master's start-up
    /// load, which propagates their deletion) when the file carries a replication id:
    /// without one no stream continues, and no deletion is sent.
    pub keep_expired_names: bool,
    /// Where the load reports the bytes it has parsed, before each record (Redis's
    /// processed bytes: INFO loading_loaded_bytes, and when the clients are served).
    pub progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// rdbchecksum: the checksum that ends the file is verified (a zero one means the
    /// writer computed none); without it, not looked at.
    pub verify_checksum: bool,
}

/// How many skipped empty keys a load report names (Redis logs the first ten).
pub const EMPTY_KEYS_NAMED: usize = 10;

impl Default for LoadOptions {
    /// Redis's 16 databases and default encoding thresholds; unsupported types refused, no
    /// key dropped as expired, access clock 0, size unknown.
    fn default() -> Self {
        LoadOptions {
            databases: 16,
            zset: goblin_zset::Config::default(),
            set: SetConfig::default(),
            hash: HashConfig::default(),
            list: ListConfig::default(),
            skip_unsupported: false,
            now_ms: 0,
            clock_secs: 0,
            size: None,
            key_delay_us: 0,
            deep_sanitize: false,
            keep_expired_names: false,
            progress: None,
            verify_checksum: true,
        }
    }
}

/// How the checksum was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checksum {
    /// Present and correct.
    Verified,
    /// Zero: the file was written with rdbchecksum no.
    Disabled,
    /// The version predates checksums (RDB 1 to 4).
    Absent,
    /// Not looked at: rdbchecksum no, or DEBUG SET-SKIP-CHECKSUM-VALIDATION 1.
    Unchecked,
}

/// What a successful load found.
#[derive(Debug, Clone)]
pub struct LoadReport {
    /// RDB version of the file.
    pub version: u32,
    /// Whether the header was Valkey's.
    pub valkey: bool,
    /// Keys loaded.
    pub keys: u64,
    /// Keys dropped because their expiry had passed.
    pub expired_skipped: u64,
    /// Their databases and names, with [`LoadOptions::keep_expired_names`].
    pub expired_names: Vec<(usize, Vec<u8>)>,
    /// Empty keys dropped (older Redis versions could write them).
    pub empty_skipped: u64,
    /// The names of the first [`EMPTY_KEYS_NAMED`] of them.
    pub empty_names: Vec<Vec<u8>>,
    /// Keys of other types skipped, by type name.
    pub unsupported_skipped: Vec<(&'static str, u64)>,
    /// The function libraries' codes (RDB_OPCODE_FUNCTION2), in file order.
    pub functions: Vec<Vec<u8>>,
    /// Module AUX blocks skipped.
    pub module_aux_skipped: u64,
    /// AUX fields, e.g. ("redis-ver", "7.0.15") (values cut at 256 bytes).
    pub aux: Vec<(String, String)>,
    /// Checksum state.
    pub checksum: Checksum,
}

/// A buffered reader that tracks the offset and the CRC64 of the bytes consumed.
pub struct Input<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// File offset of `buf[0]`.
    base: u64,
    crc: u64,
    /// Bytes `buf[..crc_pos]` are in `crc`.
    crc_pos: usize,
    /// Where the offset parsed so far is reported ([`LoadOptions::progress`]).
    progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
}

const BUF_SIZE: usize = 256 * 1024;

impl<R: Read> Input<R> {
    /// Reads from `inner`.
    pub fn new(inner: R) -> Self {
        Input::with_buffer(inner, BUF_SIZE)
    }

    /// Reads from `inner` through a buffer of `size` bytes.
    pub fn with_buffer(inner: R, size: usize) -> Self {
        Input {
            inner,
            buf: vec![0; size],
            pos: 0,
            end: 0,
            base: 0,
            crc: 0,
            crc_pos: 0,
            progress: None,
        }
    }

    /// Reports the offset parsed so far, when asked to (before each record, and as each
    /// buffer is refilled, so a long record advances it too, as Redis's rio callback).
    fn report_progress(&self) {
        if let Some(progress) = &self.progress {
            progress.store(self.offset(), std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Offset of the next byte.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn error(&self, kind: ErrorKind, message: impl Into<String>) -> LoadError {
        LoadError {
            kind,
            offset: self.offset(),
            message: message.into(),
        }
    }

    fn corrupt(&self, message: impl Into<String>) -> LoadError {
        self.error(ErrorKind::Corrupt, message)
    }

    /// CRC64 of every byte consumed so far.
    fn checksum(&mut self) -> u64 {
        self.crc = super::crc64::update(self.crc, &self.buf[self.crc_pos..self.pos]);
        self.crc_pos = self.pos;
        self.crc
    }

    /// Refills an exhausted buffer; false at the end of the input.
    fn fill(&mut self) -> Result<bool> {
        debug_assert_eq!(self.pos, self.end);
        self.checksum();
        self.base += self.end as u64;
        self.pos = 0;
        self.end = 0;
        self.crc_pos = 0;
        self.report_progress();
        loop {
            match self.inner.read(&mut self.buf) {
                Ok(n) => {
                    self.end = n;
                    return Ok(n > 0);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.error(ErrorKind::Io, e.to_string())),
            }
        }
    }

    fn available(&mut self) -> Result<usize> {
        if self.pos == self.end && !self.fill()? {
            return Err(self.error(
                ErrorKind::Truncated,
                "the file ends here, before the snapshot does",
            ));
        }
        Ok(self.end - self.pos)
    }

    /// Whether any byte remains.
    fn at_end(&mut self) -> Result<bool> {
        Ok(self.pos == self.end && !self.fill()?)
    }

    /// One byte.
    #[inline]
    pub fn u8(&mut self) -> Result<u8> {
        if self.pos == self.end {
            self.available()?;
        }
        let b = self.buf[self.pos];
        self.pos += 1;
        Ok(b)
    }

    /// `N` bytes.
    #[inline]
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        if self.end - self.pos >= N {
            out.copy_from_slice(&self.buf[self.pos..self.pos + N]);
            self.pos += N;
            return Ok(out);
        }
        for b in out.iter_mut() {
            *b = self.u8()?;
        }
        Ok(out)
    }

    /// Appends `n` bytes to `out`, growing it only as bytes arrive.
    pub fn append(&mut self, mut n: u64, out: &mut Vec<u8>) -> Result<()> {
        while n > 0 {
            let take = (self.available()? as u64).min(n) as usize;
            out.extend_from_slice(&self.buf[self.pos..self.pos + take]);
            self.pos += take;
            n -= take as u64;
        }
        Ok(())
    }

    /// Skips `n` bytes.
    pub fn skip(&mut self, mut n: u64) -> Result<()> {
        while n > 0 {
            let take = (self.available()? as u64).min(n) as usize;
            self.pos += take;
            n -= take as u64;
        }
        Ok(())
    }

    /// A length; `Err` with the encoding kind when the byte announces a special encoding.
    fn len_or_enc(&mut self) -> Result<std::result::Result<u64, u8>> {
        let b = self.u8()?;
        Ok(match b >> 6 {
            LEN_ENCVAL => Err(b & 0x3f),
            0 => Ok((b & 0x3f) as u64),
            1 => Ok((((b & 0x3f) as u64) << 8) | self.u8()? as u64),
            _ if b == LEN_32BIT => Ok(u32::from_be_bytes(self.array()?) as u64),
            _ if b == LEN_64BIT => Ok(u64::from_be_bytes(self.array()?)),
            _ => return Err(self.corrupt(format!("bad length encoding byte {b:#04x}"))),
        })
    }

    /// A plain length.
    pub fn length(&mut self) -> Result<u64> {
        let at = self.offset();
        match self.len_or_enc()? {
            Ok(n) => Ok(n),
            Err(enc) => Err(LoadError {
                kind: ErrorKind::Corrupt,
                offset: at,
                message: format!("a length was expected, found a string encoding ({enc})"),
            }),
        }
    }

    /// A string (any encoding), appended to `out`.
    pub fn string(&mut self, out: &mut Vec<u8>) -> Result<()> {
        match self.len_or_enc()? {
            Ok(n) => self.append(n, out),
            Err(ENC_INT8) => {
                let v = self.u8()? as i8;
                out.extend_from_slice(v.to_string().as_bytes());
                Ok(())
            }
            Err(ENC_INT16) => {
                let v = i16::from_le_bytes(self.array()?);
                out.extend_from_slice(v.to_string().as_bytes());
                Ok(())
            }
            Err(ENC_INT32) => {
                let v = i32::from_le_bytes(self.array()?);
                out.extend_from_slice(v.to_string().as_bytes());
                Ok(())
            }
            Err(ENC_LZF) => {
                let clen = self.length()?;
                let len = self.length()?;
                let at = self.offset();
                if len > clen.saturating_mul(lzf::MAX_EXPANSION) || len == 0 {
                    return Err(self.corrupt(format!(
                        "LZF string of {clen} compressed bytes cannot expand to {len}"
                    )));
                }
                let mut compressed = Vec::new();
                self.append(clen, &mut compressed)?;
                lzf::decompress(&compressed, len as usize, out).map_err(|e| LoadError {
                    kind: ErrorKind::Corrupt,
                    offset: at,
                    message: e.into(),
                })
            }
            Err(enc) => Err(self.corrupt(format!("unknown string encoding {enc}"))),
        }
    }

    /// Skips a string without decoding it.
    pub fn skip_string(&mut self) -> Result<()> {
        match self.len_or_enc()? {
            Ok(n) => self.skip(n),
            Err(ENC_INT8) => self.skip(1),
            Err(ENC_INT16) => self.skip(2),
            Err(ENC_INT32) => self.skip(4),
            Err(ENC_LZF) => {
                let clen = self.length()?;
                self.length()?;
                self.skip(clen)
            }
            Err(enc) => Err(self.corrupt(format!("unknown string encoding {enc}"))),
        }
    }

    /// A score written as text: a length byte (253 NaN, 254 +inf, 255 -inf) and the digits.
    fn text_double(&mut self) -> Result<f64> {
        let at = self.offset();
        let n = self.u8()?;
        match n {
            253 => Ok(f64::NAN),
            254 => Ok(f64::INFINITY),
            255 => Ok(f64::NEG_INFINITY),
            _ => {
                let mut digits = Vec::with_capacity(n as usize);
                self.append(n as u64, &mut digits)?;
                parse_score(&digits).ok_or_else(|| LoadError {
                    kind: ErrorKind::Corrupt,
                    offset: at,
                    message: format!("bad score text {:?}", String::from_utf8_lossy(&digits)),
                })
            }
        }
    }
}

/// Parses a score as C's strtod would for the texts Redis writes ("1.5", "-0", "inf",
/// "1.0000000000000001e-300").
fn parse_score(text: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(text).ok()?;
    s.trim_matches(|c: char| c.is_ascii_whitespace() || c == '\0')
        .parse::<f64>()
        .ok()
}

/// Loads a snapshot from `reader` into fresh databases.
pub fn load<R: Read>(reader: R, opts: &LoadOptions) -> Result<(Vec<Db>, LoadReport)> {
    let (dbs, report, _) = Loader::new(Input::new(reader), opts).run(false)?;
    Ok((dbs, report))
}

/// Loads the snapshot at the start of `reader` and leaves what follows it (an AOF's RDB
/// preamble, followed by commands): also returns the snapshot's length in bytes.
pub fn load_preamble<R: Read>(reader: R, opts: &LoadOptions) -> Result<(Vec<Db>, LoadReport, u64)> {
    Loader::new(Input::new(reader), opts).run(true)
}

/// What [`Loader::object`] read.
enum Object {
    /// A value.
    Value(Value),
    /// An empty collection (older Redis versions could write them).
    Empty,
    /// A type Goblin does not store (nothing was read past the key).
    Unsupported,
}

/// Reads one value from `bytes`: its RDB type byte, then the value, as a DUMP payload
/// holds it (Redis's rdbLoadObjectType and rdbLoadObject). `version` is the payload's
/// RDB version. Bytes after the value are not looked at (a payload's footer follows it).
/// An empty collection and a type Goblin does not store are errors.
pub fn read_object(bytes: &[u8], version: u32, opts: &LoadOptions) -> Result<Value> {
    let mut opts = opts.clone();
    opts.size = Some(bytes.len() as u64);
    // No databases: the value is returned, not stored.
    opts.databases = 0;
    let input = Input::with_buffer(bytes, bytes.len().clamp(1, BUF_SIZE));
    let mut loader = Loader::new(input, &opts);
    loader.report.version = version;
    let at = loader.input.offset();
    let rdb_type = loader.input.u8()?;
    let unsupported = |message: String| LoadError {
        kind: ErrorKind::Unsupported,
        offset: at,
        message,
    };
    match loader.object(rdb_type)? {
        Object::Value(v) => Ok(v),
        Object::Empty => Err(loader.input.corrupt("an empty collection")),
        Object::Unsupported => Err(unsupported(format!(
            "a value of RDB type {rdb_type} ({}), which Goblin does not store",
            type_name(rdb_type, false)
        ))),
    }
}

struct Loader<'a, R> {
    input: Input<R>,
    opts: &'a LoadOptions,
    dbs: Vec<Db>,
    report: LoadReport,
    scratch: Vec<u8>,
    /// The names of keys dropped as expired are kept: asked for, and a `repl-id` AUX
    /// field was read (it comes before the keys).
    name_expired: bool,
}

impl<'a, R: Read> Loader<'a, R> {
    fn new(mut input: Input<R>, opts: &'a LoadOptions) -> Self {
        input.progress = opts.progress.clone();
        Loader {
            input,
            opts,
            dbs: (0..opts.databases).map(|_| Db::default()).collect(),
            report: LoadReport {
                version: 0,
                ..LoadReport::empty()
            },
            scratch: Vec::new(),
            name_expired: false,
        }
    }

    fn header(&mut self) -> Result<()> {
        let magic: [u8; 9] = self.input.array().map_err(|mut e| {
            e.message = "the file is shorter than an RDB header".into();
            e
        })?;
        let (valkey, digits) = if &magic[..5] == b"REDIS" {
            (false, &magic[5..])
        } else if &magic[..6] == b"VALKEY" {
            (true, &magic[6..])
        } else {
            return Err(LoadError {
                kind: ErrorKind::Corrupt,
                offset: 0,
                message: "not an RDB file (no REDIS or VALKEY signature)".into(),
            });
        };
        let version = std::str::from_utf8(digits)
            .ok()
            .filter(|d| d.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|d| d.parse::<u32>().ok());
        let ok = match version {
            Some(v) if valkey => (MIN_VALKEY_VERSION..=MAX_VALKEY_VERSION).contains(&v),
            Some(v) => (1..=MAX_REDIS_VERSION).contains(&v),
            None => false,
        };
        if !ok {
            return Err(LoadError {
                kind: ErrorKind::Unsupported,
                offset: 0,
                message: format!(
                    "can't handle RDB format version {:?} (Goblin reads REDIS0001 to REDIS{MAX_REDIS_VERSION:04} and VALKEY{MIN_VALKEY_VERSION:03} to VALKEY{MAX_VALKEY_VERSION:03})",
                    String::from_utf8_lossy(&magic)
                ),
            });
        }
        self.report.version = version.expect("checked");
        self.report.valkey = valkey;
        Ok(())
    }

    /// Upper bound on how many items of at least `min_bytes` each the rest can hold.
    fn plausible(&self, count: u64, min_bytes: u64) -> usize {
        let remaining = self
            .opts
            .size
            .map_or(u64::MAX, |s| s.saturating_sub(self.input.offset()));
        count.min(remaining / min_bytes.max(1)).min(1 << 28) as usize
    }

    /// Counts one blob checked in depth, as Redis's dump_payload_sanitizations does.
    fn count_sanitization(&self) {
        if self.opts.deep_sanitize {
            super::count_sanitizations(1);
        }
    }

    /// Reads the snapshot; bytes after its end are an error unless `tail` (their offset is
    /// returned).
    fn run(mut self, tail: bool) -> Result<(Vec<Db>, LoadReport, u64)> {
        self.header()?;
        let mut db = 0usize;
        let mut expire: Option<u64> = None;
        loop {
            let at = self.input.offset();
            self.input.report_progress();
            let op = self.input.u8()?;
            match op {
                OP_EOF => break,
                OP_EXPIRETIME_MS => {
                    let t = i64::from_le_bytes(self.input.array()?);
                    expire = Some(t.max(0) as u64);
                }
                OP_EXPIRETIME => {
                    let t = i32::from_le_bytes(self.input.array()?);
                    expire = Some((t.max(0) as u64) * 1000);
                }
                OP_FREQ => {
                    self.input.u8()?;
                }
                OP_IDLE => {
                    self.input.length()?;
                }
                OP_SELECTDB => {
                    let n = self.input.length()?;
                    if n >= self.opts.databases as u64 {
                        return Err(LoadError {
                            kind: ErrorKind::Unsupported,
                            offset: at,
                            message: format!(
                                "the file has keys in database {n} but the server is configured with {} databases (see the 'databases' parameter)",
                                self.opts.databases
                            ),
                        });
                    }
                    db = n as usize;
                }
                OP_RESIZEDB => {
                    let keys = self.input.length()?;
                    self.input.length()?; // keys with an expiry
                                          // A key takes at least 3 bytes (type, key length, value length).
                    let keys = self.plausible(keys, 3);
                    self.dbs[db].reserve(keys);
                }
                OP_SLOT_INFO if self.report.version >= 12 || self.report.valkey => {
                    for _ in 0..3 {
                        self.input.length()?;
                    }
                }
                OP_AUX => {
                    let mut name = Vec::new();
                    self.input.string(&mut name)?;
                    let mut value = Vec::new();
                    self.input.string(&mut value)?;
                    if name == b"repl-id" {
                        self.name_expired = self.opts.keep_expired_names;
                    }
                    if self.report.aux.len() < 64 {
                        value.truncate(256);
                        self.report.aux.push((
                            String::from_utf8_lossy(&name).into_owned(),
                            String::from_utf8_lossy(&value).into_owned(),
                        ));
                    }
                }
                OP_MODULE_AUX => {
                    self.input.length()?; // module id
                    let when_opcode = self.input.length()?;
                    if when_opcode != MODULE_UINT {
                        return Err(self.input.corrupt("bad 'when' opcode in module AUX data"));
                    }
                    self.input.length()?;
                    self.skip_module_value()?;
                    self.report.module_aux_skipped += 1;
                }
                OP_FUNCTION2 => {
                    let mut code = Vec::new();
                    self.input.string(&mut code)?;
                    self.report.functions.push(code);
                }
                OP_FUNCTION_PRE_GA => {
                    return Err(LoadError {
                        kind: ErrorKind::Unsupported,
                        offset: at,
                        message: "pre-release (Redis 7.0 RC) function format not supported".into(),
                    })
                }
                _ => {
                    self.key_value(op, at, db, expire.take())?;
                }
            }
        }
        let at = self.input.offset();
        if self.report.version >= FIRST_CHECKSUM_VERSION {
            let expected = self.input.checksum();
            let stored = u64::from_le_bytes(self.input.array()?);
            self.report.checksum = if !self.opts.verify_checksum || super::skip_checksum() {
                Checksum::Unchecked
            } else if stored == 0 {
                Checksum::Disabled
            } else if stored == expected {
                Checksum::Verified
            } else {
                return Err(LoadError {
                    kind: ErrorKind::Corrupt,
                    offset: at + 1,
                    message: format!(
                        "RDB CRC error: wrong RDB checksum expected: ({expected:x}) but got ({stored:x})"
                    ),
                });
            };
        }
        let end = self.input.offset();
        if !tail && !self.input.at_end()? {
            return Err(self
                .input
                .corrupt("unexpected bytes after the end of the snapshot"));
        }
        Ok((self.dbs, self.report, end))
    }

    fn key_value(&mut self, rdb_type: u8, at: u64, db: usize, expire: Option<u64>) -> Result<()> {
        let valkey = self.report.valkey;
        let is_object = matches!(rdb_type, 0..=7 | 9..=21)
            || (rdb_type == TYPE_22)
            || (rdb_type == TYPE_23 && !valkey)
            || (matches!(rdb_type, TYPE_HASH_METADATA | TYPE_HASH_LISTPACK_EX) && !valkey);
        if !is_object {
            return Err(LoadError {
                kind: if rdb_type >= OP_SLOT_IMPORT || rdb_type == 8 {
                    ErrorKind::Unsupported
                } else {
                    ErrorKind::Corrupt
                },
                offset: at,
                message: format!("unknown value type or opcode {rdb_type}"),
            });
        }
        let mut key = Vec::new();
        self.input.string(&mut key)?;
        let value = match self.object(rdb_type)? {
            Object::Value(v) => Some(v),
            Object::Empty => None,
            Object::Unsupported => {
                let name = type_name(rdb_type, valkey);
                if !self.opts.skip_unsupported {
                    return Err(LoadError {
                        kind: ErrorKind::Unsupported,
                        offset: at,
                        message: format!(
                            "key '{}' in database {db} is a {name} (RDB type {rdb_type}); Goblin stores only sorted sets, strings, sets, hashes, lists and streams. Start with 'rdb-skip-unsupported-types yes' to load the file without such keys",
                            String::from_utf8_lossy(&key)
                        ),
                    });
                }
                self.skip_value(rdb_type)?;
                match self
                    .report
                    .unsupported_skipped
                    .iter_mut()
                    .find(|(n, _)| *n == name)
                {
                    Some((_, count)) => *count += 1,
                    None => self.report.unsupported_skipped.push((name, 1)),
                }
                return Ok(());
            }
        };
        let Some(value) = value else {
            if self.report.empty_names.len() < EMPTY_KEYS_NAMED {
                self.report.empty_names.push(key);
            }
            self.report.empty_skipped += 1;
            return Ok(());
        };
        if expire.is_some_and(|t| t < self.opts.now_ms) {
            self.report.expired_skipped += 1;
            if self.name_expired {
                self.report.expired_names.push((db, key));
            }
            return Ok(());
        }
        if !self.dbs[db].insert_new_key(&key, value, self.opts.clock_secs, expire) {
            return Err(LoadError {
                kind: ErrorKind::Corrupt,
                offset: at,
                message: format!(
                    "duplicate key '{}' in database {db}",
                    String::from_utf8_lossy(&key)
                ),
            });
        }
        self.report.keys += 1;
        if self.opts.key_delay_us != 0 {
            crate::clock::debug_delay(self.opts.key_delay_us);
        }
        Ok(())
    }

    /// The value of a key of type `rdb_type` (the type byte and key already read).
    fn object(&mut self, rdb_type: u8) -> Result<Object> {
        let value = match rdb_type {
            TYPE_ZSET | TYPE_ZSET_2 => self.zset(rdb_type)?.map(|z| Value::ZSet(z.into())),
            TYPE_ZSET_ZIPLIST | TYPE_ZSET_LISTPACK => {
                self.packed_zset(rdb_type)?.map(|z| Value::ZSet(z.into()))
            }
            TYPE_STRING => {
                let mut bytes = Vec::new();
                self.input.string(&mut bytes)?;
                Some(Value::Str(StringValue::from_set(&bytes)))
            }
            TYPE_SET => self.set()?.map(Value::Set),
            TYPE_SET_INTSET => self.intset()?.map(Value::Set),
            TYPE_SET_LISTPACK => self.packed_set()?.map(Value::Set),
            TYPE_HASH => self.hash(None)?.map(Value::Hash),
            TYPE_HASH_METADATA => {
                let min = u64::from_le_bytes(self.input.array()?);
                self.hash(Some(min))?.map(Value::Hash)
            }
            TYPE_22 if !self.report.valkey => self.hash(Some(1))?.map(Value::Hash),
            TYPE_HASH_ZIPMAP | TYPE_HASH_ZIPLIST | TYPE_HASH_LISTPACK => {
                self.packed_hash(rdb_type)?.map(Value::Hash)
            }
            TYPE_HASH_LISTPACK_EX | TYPE_23 if !self.report.valkey => {
                if rdb_type == TYPE_HASH_LISTPACK_EX {
                    self.input.array::<8>()?; // the earliest field time, known from the blob
                }
                self.packed_hash(rdb_type)?.map(Value::Hash)
            }
            TYPE_LIST | TYPE_LIST_ZIPLIST | TYPE_LIST_QUICKLIST | TYPE_LIST_QUICKLIST_2 => {
                self.list(rdb_type)?.map(Value::List)
            }
            TYPE_STREAM_LISTPACKS | TYPE_STREAM_LISTPACKS_2 | TYPE_STREAM_LISTPACKS_3 => {
                let stream = read_stream(&mut self.input, rdb_type, self.opts.deep_sanitize)?;
                Some(Value::Stream(Box::new(stream)))
            }
            _ => return Ok(Object::Unsupported),
        };
        Ok(value.map_or(Object::Empty, Object::Value))
    }

    /// ZSET / ZSET_2: a count, then member strings each followed by a score.
    fn zset(&mut self, rdb_type: u8) -> Result<Option<ZSet>> {
        let count = self.input.length()?;
        if count == 0 {
            return Ok(None);
        }
        let reserve = self.plausible(count, if rdb_type == TYPE_ZSET_2 { 9 } else { 2 });
        let mut zset = ZSet::with_expected(reserve, 0, 0, &self.opts.zset);
        for _ in 0..count {
            let at = self.input.offset();
            self.scratch.clear();
            self.input.string(&mut self.scratch)?;
            let score = if rdb_type == TYPE_ZSET_2 {
                f64::from_le_bytes(self.input.array()?)
            } else {
                self.input.text_double()?
            };
            if score.is_nan() {
                return Err(LoadError {
                    kind: ErrorKind::Corrupt,
                    offset: at,
                    message: "sorted set member with a NaN score".into(),
                });
            }
            if zset.insert(&self.scratch, score, &self.opts.zset).is_some() {
                let message = duplicate_message("sorted set member", &self.scratch);
                return Err(corrupt_at(at, message));
            }
        }
        Ok(Some(zset))
    }

    /// SET: a count, then the member strings, added as Redis 7.2's loader adds them: an
    /// intset unless the count is past set-max-intset-entries, converting as members come.
    fn set(&mut self) -> Result<Option<Set>> {
        let count = self.input.length()?;
        if count == 0 {
            return Ok(None);
        }
        let cfg = self.opts.set;
        let mut set = if count as usize > cfg.max_intset_entries {
            Set::new_hashtable(self.plausible(count, 2), 0)
        } else {
            Set::new_intset()
        };
        for _ in 0..count {
            let at = self.input.offset();
            self.scratch.clear();
            self.input.string(&mut self.scratch)?;
            if !set.add(&self.scratch, &cfg) {
                return Err(corrupt_at(
                    at,
                    duplicate_message("set member", &self.scratch),
                ));
            }
        }
        Ok(Some(set))
    }

    /// SET_INTSET: an intset blob (encoding and count as u32 LE, then the integers
    /// ascending), a hashtable when it holds more than set-max-intset-entries.
    fn intset(&mut self) -> Result<Option<Set>> {
        let at = self.input.offset();
        let mut blob = Vec::new();
        self.input.string(&mut blob)?;
        self.count_sanitization();
        let corrupt = |message: &str| integrity_error(at, "Intset", message);
        if blob.len() < 8 {
            return Err(corrupt("shorter than its header"));
        }
        let width = u32::from_le_bytes(blob[..4].try_into().expect("4 bytes"));
        let len = u32::from_le_bytes(blob[4..8].try_into().expect("4 bytes")) as usize;
        let contents = &blob[8..];
        if !matches!(width, 2 | 4 | 8) || len.checked_mul(width as usize) != Some(contents.len()) {
            return Err(corrupt("bad encoding or length"));
        }
        if len == 0 {
            return Ok(None);
        }
        Set::from_intset_contents(width as u8, contents, &self.opts.set)
            .map(Some)
            .ok_or_else(|| corrupt("integers not strictly ascending"))
    }

    /// SET_LISTPACK: a listpack blob of members, kept a listpack (a hashtable when it holds
    /// more than set-max-listpack-entries).
    fn packed_set(&mut self) -> Result<Option<Set>> {
        let at = self.input.offset();
        let mut blob = Vec::new();
        self.input.string(&mut blob)?;
        self.count_sanitization();
        let (cfg, deep) = (self.opts.set, self.opts.deep_sanitize);
        let mut set = Set::new_listpack();
        let mut text = itoa::Buffer::new();
        packed::listpack_items(&blob, &mut |item| {
            let bytes: &[u8] = match item {
                Item::Str(s) => s,
                Item::Int(v) => text.format(v).as_bytes(),
            };
            match set.add(bytes, &cfg) {
                false => duplicate(deep, "member", bytes),
                true => Ok(()),
            }
        })
        .map_err(|message| integrity_error(at, "Set listpack", message))?;
        Ok((!set.is_empty()).then_some(set))
    }

    /// HASH: a count, then field and value strings, added as Redis 7.2's loader adds them:
    /// a listpack unless the count is past hash-max-listpack-entries, converting when a
    /// field or value is longer than hash-max-listpack-value.
    fn hash(&mut self, timed_from: Option<u64>) -> Result<Option<Hash>> {
        let count = self.input.length()?;
        if count == 0 {
            return Ok(None);
        }
        let cfg = self.opts.hash;
        let mut hash = if count as usize > cfg.max_listpack_entries {
            Hash::with_expected(self.plausible(count, 4), &cfg)
        } else {
            Hash::new()
        };
        if timed_from.is_some() {
            hash.enable_field_expiry();
        }
        let mut value = Vec::new();
        for _ in 0..count {
            let at = self.input.offset();
            // HASH_METADATA: each field's time, relative to the earliest plus one (0:
            // none); the 7.4 RC's form (type 22) stores it absolute (read with base 1).
            let expire_at = match timed_from {
                Some(base) => match self.input.length()? {
                    0 => None,
                    t => Some(t.saturating_add(base) - 1),
                },
                None => None,
            };
            if expire_at.is_some_and(|t| t > MAX_FIELD_TIME) {
                return Err(self.input.corrupt("hash field expiry time out of range"));
            }
            self.scratch.clear();
            self.input.string(&mut self.scratch)?;
            value.clear();
            self.input.string(&mut value)?;
            if !hash.set(&self.scratch, &value, &cfg) {
                return Err(corrupt_at(
                    at,
                    duplicate_message("hash field", &self.scratch),
                ));
            }
            if expire_at.is_some() {
                hash.set_field_expiry(&self.scratch, expire_at);
            }
        }
        Ok(Some(hash))
    }

    /// HASH_ZIPMAP / HASH_ZIPLIST / HASH_LISTPACK: one blob of alternating fields and
    /// values, kept a listpack unless it holds more than hash-max-listpack-entries pairs or
    /// a field or value longer than hash-max-listpack-value (as Redis converts it on load).
    /// HASH_LISTPACK_EX (and the 7.4 RC's type 23): triples of field, value and time (0:
    /// none), kept a listpackex.
    fn packed_hash(&mut self, rdb_type: u8) -> Result<Option<Hash>> {
        let at = self.input.offset();
        let mut blob = Vec::new();
        self.input.string(&mut blob)?;
        let (label, walk): (&str, Walker) = match rdb_type {
            TYPE_HASH_ZIPLIST => ("Hash ziplist", packed::ziplist_items),
            TYPE_HASH_ZIPMAP => ("Zipmap", packed::zipmap_items),
            _ => ("Hash listpack", packed::listpack_items),
        };
        let timed = !matches!(
            rdb_type,
            TYPE_HASH_LISTPACK | TYPE_HASH_ZIPLIST | TYPE_HASH_ZIPMAP
        );
        // Redis's shallow check lets duplicates through in the listpack forms only (it
        // converts the older ziplist and zipmap forms, which finds them).
        let listpack = !matches!(rdb_type, TYPE_HASH_ZIPLIST | TYPE_HASH_ZIPMAP);
        if listpack {
            self.count_sanitization();
        }
        let deep = self.opts.deep_sanitize || !listpack;
        let cfg = self.opts.hash;
        let mut hash = Hash::new();
        if timed {
            hash.enable_field_expiry();
        }
        let mut pending: Vec<Vec<u8>> = Vec::new();
        // A listpackex's timed triples, added last in reverse so that each goes before the
        // ones expiring with or after it: the blob's order (Redis keeps the blob as is).
        let mut timed_triples: Vec<(Vec<u8>, Vec<u8>, u64)> = Vec::new();
        let mut timed_fields = std::collections::HashSet::new();
        let mut text = itoa::Buffer::new();
        walk(&blob, &mut |item| {
            let bytes: &[u8] = match item {
                Item::Str(s) => s,
                Item::Int(v) => text.format(v).as_bytes(),
            };
            if pending.len() < 1 + usize::from(timed) {
                pending.push(bytes.to_vec());
                return Ok(());
            }
            let t = if timed {
                crate::numbers::parse_i64(bytes)
                    .filter(|t| (0..=MAX_FIELD_TIME as i64).contains(t))
                    .ok_or("bad field expiry time")?
            } else {
                0
            };
            let v = if timed {
                pending.pop().expect("value")
            } else {
                bytes.to_vec()
            };
            let f = pending.pop().expect("field");
            if hash.contains(&f) || timed_fields.contains(&f) {
                duplicate(deep, "field", &f)
            } else if t != 0 {
                timed_fields.insert(f.clone());
                timed_triples.push((f, v, t as u64));
                Ok(())
            } else {
                hash.set(&f, &v, &cfg);
                Ok(())
            }
        })
        .and_then(|items| match pending.is_empty() {
            false => Err("incomplete pair or triple".to_string()),
            // Redis's zipmap check refuses an empty zipmap (other empty blobs are an
            // empty key).
            true if items == 0 && rdb_type == TYPE_HASH_ZIPMAP => Err("no pairs".to_string()),
            true => Ok(()),
        })
        .map_err(|message| integrity_error(at, label, message))?;
        for (f, v, t) in timed_triples.iter().rev() {
            hash.set(f, v, &cfg);
            hash.set_field_expiry(f, Some(*t));
        }
        Ok((!hash.is_empty()).then_some(hash))
    }

    /// LIST (a length and the elements), LIST_ZIPLIST (one ziplist), LIST_QUICKLIST
    /// (ziplist nodes) and LIST_QUICKLIST_2 (nodes, each a PLAIN element or a PACKED
    /// listpack); the list is refilled under list-max-listpack-size and settled in the
    /// form Redis 7.2 gives a loaded list.
    fn list(&mut self, rdb_type: u8) -> Result<Option<List>> {
        let mut elements: Vec<Vec<u8>> = Vec::new();
        if rdb_type == TYPE_LIST {
            let count = self.input.length()?;
            elements.reserve(self.plausible(count, 1));
            for _ in 0..count {
                let mut e = Vec::new();
                self.input.string(&mut e)?;
                elements.push(e);
            }
        } else {
            let nodes = if rdb_type == TYPE_LIST_ZIPLIST {
                1
            } else {
                self.input.length()?
            };
            for _ in 0..nodes {
                let container = if rdb_type == TYPE_LIST_QUICKLIST_2 {
                    self.input.length()?
                } else {
                    QUICKLIST_NODE_PACKED
                };
                let at = self.input.offset();
                let label = match rdb_type {
                    TYPE_LIST_ZIPLIST => "List ziplist",
                    TYPE_LIST_QUICKLIST => "Ziplist",
                    _ if container == QUICKLIST_NODE_PACKED => "Listpack",
                    _ => "Quicklist",
                };
                let corrupt = |message: String| integrity_error(at, label, message);
                if container != QUICKLIST_NODE_PLAIN && container != QUICKLIST_NODE_PACKED {
                    return Err(corrupt(format!("unknown container {container}")));
                }
                let mut blob = Vec::new();
                self.input.string(&mut blob)?;
                if blob.is_empty() {
                    return Err(corrupt("an empty node".into()));
                }
                if container == QUICKLIST_NODE_PLAIN {
                    elements.push(blob);
                    continue;
                }
                let walk: Walker = if rdb_type == TYPE_LIST_QUICKLIST_2 {
                    self.count_sanitization();
                    packed::listpack_items
                } else {
                    packed::ziplist_items
                };
                let mut text = itoa::Buffer::new();
                walk(&blob, &mut |item| {
                    elements.push(match item {
                        Item::Str(s) => s.to_vec(),
                        Item::Int(v) => text.format(v).as_bytes().to_vec(),
                    });
                    Ok(())
                })
                .map_err(corrupt)?;
            }
        }
        if elements.is_empty() {
            return Ok(None);
        }
        Ok(Some(List::from_elements(
            elements.iter().map(Vec::as_slice),
            &self.opts.list,
        )))
    }

    /// ZSET_ZIPLIST / ZSET_LISTPACK: one blob of alternating members and scores.
    fn packed_zset(&mut self, rdb_type: u8) -> Result<Option<ZSet>> {
        let at = self.input.offset();
        let mut blob = Vec::new();
        self.input.string(&mut blob)?;
        let listpack = rdb_type == TYPE_ZSET_LISTPACK;
        let (label, walk): (&str, Walker) = if listpack {
            self.count_sanitization();
            ("Zset listpack", packed::listpack_items)
        } else {
            ("Zset ziplist", packed::ziplist_items)
        };
        // Duplicates get past Redis's shallow check in a listpack only, as in a hash.
        let deep = self.opts.deep_sanitize || !listpack;
        let blob_error = |message: String| integrity_error(at, label, message);
        let mut pairs: Vec<(Item, f64)> = Vec::new();
        let mut member: Option<Item> = None;
        walk(&blob, &mut |item| {
            let Some(m) = member.take() else {
                member = Some(item);
                return Ok(());
            };
            let score = match item {
                Item::Int(v) => v as f64,
                Item::Str(s) => parse_score(s)
                    .ok_or_else(|| format!("bad score text {:?}", String::from_utf8_lossy(s)))?,
            };
            if score.is_nan() {
                return Err("member with a NaN score".into());
            }
            pairs.push((m, score));
            Ok(())
        })
        .map_err(blob_error)?;
        if member.is_some() {
            return Err(blob_error("odd number of items".into()));
        }
        if pairs.is_empty() {
            return Ok(None);
        }
        let mut zset = ZSet::with_expected(pairs.len(), 0, 0, &self.opts.zset);
        let mut text = itoa::Buffer::new();
        for (m, score) in pairs {
            let bytes: &[u8] = match m {
                Item::Str(s) => s,
                Item::Int(v) => text.format(v).as_bytes(),
            };
            // One lookup a member: a duplicate (corrupt input only) gets its first score
            // back when it is let through.
            if let Some(first) = zset.insert(bytes, score, &self.opts.zset) {
                duplicate(deep, "member", bytes).map_err(blob_error)?;
                zset.insert(bytes, first, &self.opts.zset);
            }
        }
        Ok(Some(zset))
    }

    /// Module values: opcodes (integers, floats, doubles, strings) up to an EOF opcode.
    fn skip_module_value(&mut self) -> Result<()> {
        loop {
            match self.input.length()? {
                MODULE_EOF => return Ok(()),
                MODULE_SINT | MODULE_UINT => {
                    self.input.length()?;
                }
                MODULE_FLOAT => self.input.skip(4)?,
                MODULE_DOUBLE => self.input.skip(8)?,
                MODULE_STRING => self.input.skip_string()?,
                other => {
                    return Err(self
                        .input
                        .corrupt(format!("unknown module value opcode {other}")))
                }
            }
        }
    }

    fn skip_strings(&mut self, n: u64) -> Result<()> {
        for _ in 0..n {
            self.input.skip_string()?;
        }
        Ok(())
    }

    /// Parses past a value of a type Goblin does not store.
    fn skip_value(&mut self, rdb_type: u8) -> Result<()> {
        let valkey = self.report.valkey;
        match rdb_type {
            TYPE_STRING | TYPE_HASH_ZIPMAP | TYPE_LIST_ZIPLIST | TYPE_SET_INTSET
            | TYPE_HASH_ZIPLIST | TYPE_HASH_LISTPACK | TYPE_SET_LISTPACK => {
                self.input.skip_string()
            }
            TYPE_LIST | TYPE_SET | TYPE_LIST_QUICKLIST => {
                let n = self.input.length()?;
                self.skip_strings(n)
            }
            TYPE_HASH => {
                let n = self.input.length()?;
                self.skip_strings(n.saturating_mul(2))
            }
            TYPE_LIST_QUICKLIST_2 => {
                let n = self.input.length()?;
                for _ in 0..n {
                    self.input.length()?;
                    self.input.skip_string()?;
                }
                Ok(())
            }
            TYPE_MODULE_2 => {
                self.input.length()?;
                self.skip_module_value()
            }
            TYPE_22 if valkey => {
                // Valkey 9 hash with field expiries: field, value, expiry (8 bytes).
                let n = self.input.length()?;
                for _ in 0..n {
                    self.skip_strings(2)?;
                    self.input.skip(8)?;
                }
                Ok(())
            }
            TYPE_22 | TYPE_HASH_METADATA => {
                // Redis 7.4 hash with field expiries: [min expiry], then ttl, field, value.
                if rdb_type == TYPE_HASH_METADATA {
                    self.input.skip(8)?;
                }
                let n = self.input.length()?;
                for _ in 0..n {
                    self.input.length()?;
                    self.skip_strings(2)?;
                }
                Ok(())
            }
            TYPE_23 | TYPE_HASH_LISTPACK_EX => {
                if rdb_type == TYPE_HASH_LISTPACK_EX {
                    self.input.skip(8)?;
                }
                self.input.skip_string()
            }
            _ => Err(self.input.error(
                ErrorKind::Unsupported,
                format!(
                    "values of RDB type {rdb_type} ({}) cannot be skipped",
                    type_name(rdb_type, valkey)
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyspace::End;
    use crate::rdb::packed::{listpack, ziplist};
    use crate::rdb::write::{write_snapshot, AuxInfo, RdbWriter, ReplAux};
    use crate::rdb::{contents, Content};

    fn opts() -> LoadOptions {
        LoadOptions {
            now_ms: 1_000_000,
            ..LoadOptions::default()
        }
    }

    #[test]
    fn a_long_record_reports_progress_as_its_buffers_are_refilled() {
        let mut bytes = vec![0x40, 100];
        bytes.extend([b'x'; 100]);
        let progress = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let mut input = Input::with_buffer(&bytes[..], 16);
        input.progress = Some(progress.clone());
        let mut seen = Vec::new();
        input.append(2, &mut Vec::new()).unwrap();
        let mut out = Vec::new();
        while out.len() < 100 {
            let left = 100 - out.len() as u64;
            input.append(left.min(8), &mut out).unwrap();
            seen.push(progress.load(std::sync::atomic::Ordering::Relaxed));
        }
        assert_eq!(
            seen.iter().max(),
            Some(&96),
            "the last refill starts at byte 96"
        );
        assert!(seen.windows(2).all(|w| w[0] <= w[1]) && seen.contains(&48));
    }

    fn load_bytes(bytes: &[u8], o: &LoadOptions) -> Result<(Vec<Db>, LoadReport)> {
        let o = LoadOptions {
            size: Some(bytes.len() as u64),
            ..o.clone()
        };
        load(bytes, &o)
    }

    fn fail(bytes: &[u8], o: &LoadOptions) -> LoadError {
        match load_bytes(bytes, o) {
            Ok(_) => panic!("loaded"),
            Err(e) => e,
        }
    }

    fn sample_dbs() -> Vec<Db> {
        let cfg = goblin_zset::Config::default();
        let mut dbs: Vec<Db> = (0..16).map(|_| Db::default()).collect();
        let mut small = ZSet::new();
        for (m, s) in [
            (&b"a"[..], 1.0),
            (b"-0", -0.0),
            (b"inf", f64::INFINITY),
            (b"ninf", f64::NEG_INFINITY),
            (b"tiny", 1e-300),
            (b"12345", 3.5),
            (b"", 0.25),
        ] {
            small.insert(m, s, &cfg);
        }
        dbs[0].insert(b"small", Value::ZSet(small.into()), 0);
        let mut large = ZSet::new();
        for i in 0..5000u32 {
            large.insert(
                format!("member:{i}").as_bytes(),
                (i as f64) * 0.5 - 100.0,
                &cfg,
            );
        }
        dbs[0].insert(b"large", Value::ZSet(large.into()), 0);
        let mut long = ZSet::new();
        long.insert(&[b'x'; 200], 7.0, &cfg);
        dbs[3].insert(b"long-member", Value::ZSet(long.into()), 0);
        let mut volatile = ZSet::new();
        volatile.insert(b"v", 1.0, &cfg);
        dbs[15].insert(b"volatile", Value::ZSet(volatile.clone().into()), 0);
        dbs[15].set_expiry(b"volatile", 2_000_000);
        dbs[15].insert(b"expired", Value::ZSet(volatile.into()), 0);
        dbs[15].set_expiry(b"expired", 999_000);
        let mut noise = 7u64;
        let random: Vec<u8> = (0..100)
            .map(|_| {
                noise = noise.wrapping_mul(6364136223846793005).wrapping_add(1);
                (noise >> 56) as u8
            })
            .collect();
        for (key, value) in [
            (&b"int"[..], StringValue::from_set(b"-123456")),
            (b"big-int", StringValue::from_set(b"9223372036854775807")),
            (b"short", StringValue::from_set(b"hello")),
            (b"empty", StringValue::from_set(b"")),
            (b"embstr", StringValue::from_set(&[b'e'; 40])),
            (b"lzf", StringValue::from_set(&b"abc".repeat(100))),
            (b"random", StringValue::raw(&random)),
        ] {
            dbs[2].insert(key, Value::Str(value), 0);
        }
        dbs[2].set_expiry(b"lzf", 2_000_000);
        let scfg = SetConfig::default();
        for (key, members) in [
            (
                &b"intset16"[..],
                vec!["1".to_string(), "-7".into(), "300".into()],
            ),
            (b"intset64", vec!["1".into(), i64::MIN.to_string()]),
            (
                b"listpack",
                vec!["a".into(), "1".into(), "".into(), "01".into()],
            ),
            (b"hashtable", (0..300).map(|i| format!("m{i}")).collect()),
            (b"int-hashtable", (0..600).map(|i| i.to_string()).collect()),
        ] {
            let mut set = Set::new_intset();
            for m in &members {
                set.add(m.as_bytes(), &scfg);
            }
            dbs[2].insert(key, Value::Set(set), 0);
        }
        dbs[2].set_expiry(b"listpack", 3_000_000);
        let lcfg = ListConfig::default();
        let long = [b'l'; 300];
        let small: [&[u8]; 6] = [b"a", b"-5", b"", b"9223372036854775807", b"01", &long];
        let mut list = List::new();
        list.push(End::Back, &small, &lcfg);
        dbs[4].insert(b"small-list", Value::List(list), 0);
        let texts: Vec<String> = (0..3000).map(|i| format!("element:{i}")).collect();
        let big = List::from_elements(texts.iter().map(String::as_bytes), &lcfg);
        dbs[4].insert(b"big-list", Value::List(big), 0);
        dbs
    }

    fn sample_file() -> Vec<u8> {
        snapshot(&sample_dbs())
    }

    fn snapshot(dbs: &[Db]) -> Vec<u8> {
        snapshot_with_repl(dbs, None)
    }

    fn snapshot_with_repl(dbs: &[Db], repl: Option<ReplAux>) -> Vec<u8> {
        let aux = AuxInfo {
            ctime: 1,
            used_mem: 2,
            repl,
            ..AuxInfo::default()
        };
        write_snapshot(Vec::new(), dbs, &aux).unwrap().0
    }

    /// The sample without its 5000-member set: small enough to cut and mutate everywhere.
    fn small_file() -> Vec<u8> {
        let mut dbs = sample_dbs();
        dbs[0].remove(b"large");
        dbs[2].remove(b"hashtable");
        dbs[2].remove(b"int-hashtable");
        dbs[4].remove(b"big-list");
        snapshot(&dbs)
    }

    #[test]
    fn writer_output_loads_back_identically() {
        let file = sample_file();
        let (dbs, report) = load_bytes(&file, &opts()).unwrap();
        let mut want = contents(&sample_dbs());
        // The key whose time had passed is in the file (as Redis writes it) and dropped.
        want.retain(|(_, k, _, _)| k != b"expired");
        assert_eq!(contents(&dbs), want);
        assert_eq!((report.keys, report.expired_skipped), (18, 1));
        assert!(report.expired_names.is_empty());
        assert_eq!(
            dbs[4].get(b"small-list").unwrap().value.encoding_name(),
            "listpack"
        );
        assert_eq!(
            dbs[4].get(b"big-list").unwrap().value.encoding_name(),
            "quicklist"
        );
        for (key, encoding) in [
            (&b"intset16"[..], "intset"),
            (b"intset64", "intset"),
            (b"listpack", "listpack"),
            (b"hashtable", "hashtable"),
            (b"int-hashtable", "hashtable"),
        ] {
            assert_eq!(dbs[2].get(key).unwrap().value.encoding_name(), encoding);
        }
        assert_eq!(report.checksum, Checksum::Verified);
        assert_eq!(report.version, 10);
        assert!(report
            .aux
            .iter()
            .any(|(k, v)| k == "redis-ver" && v == "7.2.4"));
        // Loaded with the expiry passed: the volatile key is dropped.
        let later = LoadOptions {
            now_ms: 3_000_000,
            ..opts()
        };
        let (_, report) = load_bytes(&file, &later).unwrap();
        assert_eq!((report.keys, report.expired_skipped), (16, 3));
        // A master's start-up load keeps their names, to propagate their deletion, when the
        // file carries a replication state (a stream to continue).
        let named = LoadOptions {
            keep_expired_names: true,
            ..opts()
        };
        let (_, report) = load_bytes(&file, &named).unwrap();
        assert!(report.expired_names.is_empty());
        let repl = ReplAux {
            stream_db: 0,
            replid: "a".repeat(40),
            offset: 7,
        };
        let file = snapshot_with_repl(&sample_dbs(), Some(repl));
        let (_, report) = load_bytes(&file, &named).unwrap();
        assert_eq!(report.expired_names, vec![(15, b"expired".to_vec())]);
    }

    #[test]
    fn a_preamble_leaves_what_follows_it() {
        let mut file = small_file();
        let len = file.len() as u64;
        file.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
        assert_eq!(
            fail(&file, &opts()).message,
            "unexpected bytes after the end of the snapshot"
        );
        let (dbs, _, end) = load_preamble(&file[..], &opts()).unwrap();
        assert_eq!(end, len);
        assert_eq!(
            contents(&dbs),
            contents(&load_bytes(&small_file(), &opts()).unwrap().0)
        );
    }

    #[test]
    fn every_truncation_fails_cleanly() {
        let file = small_file();
        for cut in 0..file.len() {
            let err = fail(&file[..cut], &opts());
            assert!(err.offset <= cut as u64, "cut {cut}: {err}");
            assert!(
                matches!(err.kind, ErrorKind::Truncated | ErrorKind::Corrupt),
                "cut {cut}: {err}"
            );
        }
    }

    #[test]
    fn every_byte_mutation_fails_cleanly() {
        let file = small_file();
        for pos in 0..file.len() {
            for mask in [0x01u8, 0x80, 0xff] {
                let mut bad = file.clone();
                bad[pos] ^= mask;
                assert!(
                    load_bytes(&bad, &opts()).is_err(),
                    "mutation {mask:#x} at {pos} loaded"
                );
            }
        }
        let mut longer = file.clone();
        longer.push(0);
        let err = fail(&longer, &opts());
        assert_eq!(err.offset, file.len() as u64);
    }

    /// A file from raw parts, with a checksum when the version has one.
    fn file(version: &str, body: impl FnOnce(&mut RdbWriter<&mut Vec<u8>>)) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w = RdbWriter::new(&mut out);
        w.raw(version.as_bytes()).unwrap();
        body(&mut w);
        w.finish().unwrap();
        out
    }

    fn members(dbs: &[Db], db: usize, key: &[u8]) -> Vec<(Vec<u8>, f64)> {
        let value = dbs[db].get(key).expect("key").value;
        let z = value.as_zset().expect("zset");
        z.iter().map(|(m, s)| (m.to_vec(), s)).collect()
    }

    #[test]
    fn every_sorted_set_encoding_and_string_encoding() {
        let lp = listpack(&[
            Item::Str(b"a"),
            Item::Int(1),
            Item::Int(42),
            Item::Str(b"2.5"),
            Item::Str(b"c"),
            Item::Str(b"-inf"),
        ]);
        let zl = ziplist(&[
            Item::Str(b"x"),
            Item::Int(-3),
            Item::Int(7),
            Item::Str(b"inf"),
        ]);
        let bytes = file("REDIS0011", |w| {
            w.byte(OP_AUX).unwrap();
            w.string(b"redis-ver").unwrap();
            w.string(b"7.2.0").unwrap();
            w.byte(OP_FUNCTION2).unwrap();
            w.string(b"#!lua name=lib\nredis.register_function('f', function() end)")
                .unwrap();
            w.byte(OP_MODULE_AUX).unwrap();
            w.len(12345).unwrap();
            w.len(MODULE_UINT).unwrap();
            w.len(2).unwrap();
            for (op, arg) in [
                (MODULE_SINT, 5u64),
                (MODULE_STRING, 0),
                (MODULE_DOUBLE, 0),
                (MODULE_FLOAT, 0),
            ] {
                w.len(op).unwrap();
                match op {
                    MODULE_SINT => w.len(arg).unwrap(),
                    MODULE_STRING => w.string(b"blob").unwrap(),
                    MODULE_DOUBLE => w.raw(&[0; 8]).unwrap(),
                    _ => w.raw(&[0; 4]).unwrap(),
                }
            }
            w.len(MODULE_EOF).unwrap();
            w.byte(OP_SELECTDB).unwrap();
            w.len(2).unwrap();
            w.byte(OP_RESIZEDB).unwrap();
            w.len(4).unwrap();
            w.len(1).unwrap();
            // ZSET with text scores, an LZF member and integer-encoded members.
            w.byte(OP_IDLE).unwrap();
            w.len(100).unwrap();
            w.byte(OP_FREQ).unwrap();
            w.byte(5).unwrap();
            w.byte(TYPE_ZSET).unwrap();
            w.string(b"text").unwrap();
            w.len(5).unwrap();
            w.raw(&[0xc3, 5, 11, 0, b'a', 0xe0, 1, 0]).unwrap(); // LZF "a" x 11
            w.raw(&[3, b'1', b'.', b'5']).unwrap();
            w.raw(&[0xc0, 0xf9]).unwrap(); // int8 -7
            w.raw(&[254]).unwrap();
            w.raw(&[0xc1, 0x39, 0x30]).unwrap(); // int16 12345
            w.raw(&[255]).unwrap();
            w.raw(&[0xc2, 0xff, 0xff, 0xff, 0x7f]).unwrap(); // int32 max
            w.raw(&[2, b'-', b'0']).unwrap();
            w.string(b"tiny").unwrap();
            w.raw(&[23]).unwrap();
            w.raw(b"1.0000000000000001e-300").unwrap();
            w.byte(TYPE_ZSET_LISTPACK).unwrap();
            w.string(b"lp").unwrap();
            w.string(&lp).unwrap();
            w.byte(OP_EXPIRETIME).unwrap();
            w.raw(&2000i32.to_le_bytes()).unwrap();
            w.byte(TYPE_ZSET_ZIPLIST).unwrap();
            w.string(b"zl").unwrap();
            w.string(&zl).unwrap();
            w.byte(TYPE_ZSET_2).unwrap();
            w.string(b"empty").unwrap();
            w.len(0).unwrap();
        });
        let (dbs, report) = load_bytes(&bytes, &opts()).unwrap();
        assert_eq!((report.keys, report.empty_skipped), (3, 1));
        assert_eq!((report.functions.len(), report.module_aux_skipped), (1, 1));
        let text = members(&dbs, 2, b"text");
        assert_eq!(
            text,
            vec![
                (b"12345".to_vec(), f64::NEG_INFINITY),
                (b"2147483647".to_vec(), -0.0),
                (b"tiny".to_vec(), 1e-300),
                (b"aaaaaaaaaaa".to_vec(), 1.5),
                (b"-7".to_vec(), f64::INFINITY),
            ]
        );
        assert_eq!(
            members(&dbs, 2, b"lp"),
            vec![
                (b"c".to_vec(), f64::NEG_INFINITY),
                (b"a".to_vec(), 1.0),
                (b"42".to_vec(), 2.5),
            ]
        );
        assert_eq!(
            members(&dbs, 2, b"zl"),
            vec![(b"x".to_vec(), -3.0), (b"7".to_vec(), f64::INFINITY)]
        );
        assert_eq!(dbs[2].get(b"zl").unwrap().expire_at(), Some(2_000_000));
    }

    type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

    fn hash_of(dbs: &[Db], key: &[u8]) -> (&'static str, Pairs) {
        let entry = dbs[0].get(key).expect("key");
        let h = entry.value.as_hash().expect("hash");
        h.validate();
        let pairs = h.iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect();
        (h.encoding().as_str(), pairs)
    }

    fn pairs(items: &[(&str, &str)]) -> Pairs {
        items
            .iter()
            .map(|(f, v)| (f.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn every_hash_encoding_and_its_conversions() {
        let lp = listpack(&[
            Item::Str(b"name"),
            Item::Str(b"Ada"),
            Item::Str(b"age"),
            Item::Int(36),
        ]);
        let zl = ziplist(&[
            Item::Int(-3),
            Item::Str(b"x"),
            Item::Str(b"long"),
            Item::Str(&[b'v'; 65]),
        ]);
        let mut zipmap = vec![
            2u8, 1, b'a', 1, 0, b'1', 2, b'b', b'b', 2, 3, b'2', b'2', 0, 0, 0,
        ];
        zipmap.push(0xff);
        let bytes = file("REDIS0009", |w| {
            w.byte(TYPE_HASH).unwrap();
            w.string(b"plain").unwrap();
            w.len(2).unwrap();
            for s in [&b"f"[..], b"1", b"g", b"two"] {
                w.string(s).unwrap();
            }
            w.byte(TYPE_HASH).unwrap();
            w.string(b"big").unwrap();
            w.len(600).unwrap();
            for i in 0..600 {
                w.string(format!("f{i}").as_bytes()).unwrap();
                w.string(format!("{i}").as_bytes()).unwrap();
            }
            w.byte(TYPE_HASH_LISTPACK).unwrap();
            w.string(b"lp").unwrap();
            w.string(&lp).unwrap();
            w.byte(TYPE_HASH_ZIPLIST).unwrap();
            w.string(b"zl").unwrap();
            w.string(&zl).unwrap();
            w.byte(TYPE_HASH_ZIPMAP).unwrap();
            w.string(b"zm").unwrap();
            w.string(&zipmap).unwrap();
            w.byte(TYPE_HASH).unwrap();
            w.string(b"empty").unwrap();
            w.len(0).unwrap();
        });
        let (dbs, report) = load_bytes(&bytes, &opts()).unwrap();
        assert_eq!((report.keys, report.empty_skipped), (5, 1));
        assert_eq!(
            hash_of(&dbs, b"plain"),
            ("listpack", pairs(&[("f", "1"), ("g", "two")]))
        );
        let (enc, big) = hash_of(&dbs, b"big");
        assert_eq!((enc, big.len()), ("hashtable", 600));
        assert_eq!(
            hash_of(&dbs, b"lp"),
            ("listpack", pairs(&[("name", "Ada"), ("age", "36")]))
        );
        let (enc, zl_pairs) = hash_of(&dbs, b"zl");
        assert_eq!(enc, "hashtable", "a 65-byte value converts on load");
        assert_eq!(zl_pairs.len(), 2);
        assert_eq!(
            hash_of(&dbs, b"zm"),
            ("listpack", pairs(&[("a", "1"), ("bb", "22")]))
        );
        // Written back (HASH_LISTPACK for the small, HASH for the large) and loaded again.
        let again = load_bytes(&snapshot(&dbs), &opts()).unwrap().0;
        assert!(contents(&dbs) == contents(&again));
        assert_eq!(hash_of(&again, b"lp").0, "listpack");
        assert_eq!(hash_of(&again, b"big").0, "hashtable");
        // Duplicate fields are refused in both forms.
        for rdb_type in [TYPE_HASH, TYPE_HASH_LISTPACK] {
            let dup = file("REDIS0010", |w| {
                w.byte(rdb_type).unwrap();
                w.string(b"d").unwrap();
                let items = [
                    Item::Str(b"f"),
                    Item::Str(b"1"),
                    Item::Str(b"f"),
                    Item::Str(b"2"),
                ];
                if rdb_type == TYPE_HASH {
                    w.len(2).unwrap();
                    for s in [&b"f"[..], b"1", b"f", b"2"] {
                        w.string(s).unwrap();
                    }
                } else {
                    w.string(&listpack(&items)).unwrap();
                }
            });
            let deep = LoadOptions {
                deep_sanitize: true,
                ..opts()
            };
            assert!(fail(&dup, &deep).message.contains("duplicate"));
            if rdb_type == TYPE_HASH {
                assert!(fail(&dup, &opts()).message.contains("duplicate"));
            } else {
                // Past Redis's shallow check; the first occurrence is kept.
                let (dbs, _) = load_bytes(&dup, &opts()).expect("loaded");
                assert_eq!(hash_of(&dbs, b"d").1, pairs(&[("f", "1")]));
            }
        }
    }

    /// Duplicates in a set or sorted set listpack: refused by the deep check, the first
    /// kept without it; in a ziplist (which Redis always converts) refused either way.
    #[test]
    fn listpack_duplicates_follow_sanitize_dump_payload() {
        let blob = |rdb_type: u8| {
            let items: &[Item] = match rdb_type {
                TYPE_SET_LISTPACK => &[Item::Str(b"a"), Item::Int(7), Item::Str(b"a")],
                _ => &[Item::Str(b"a"), Item::Int(1), Item::Str(b"a"), Item::Int(2)],
            };
            file("REDIS0011", |w| {
                w.byte(rdb_type).unwrap();
                w.string(b"k").unwrap();
                match rdb_type {
                    TYPE_ZSET_ZIPLIST => w.string(&ziplist(items)).unwrap(),
                    _ => w.string(&listpack(items)).unwrap(),
                }
            })
        };
        let deep = LoadOptions {
            deep_sanitize: true,
            ..opts()
        };
        for rdb_type in [TYPE_SET_LISTPACK, TYPE_ZSET_LISTPACK, TYPE_ZSET_ZIPLIST] {
            let bytes = blob(rdb_type);
            let e = fail(&bytes, &deep);
            assert!(
                e.message.contains("integrity check failed: duplicate"),
                "{e}"
            );
            if rdb_type == TYPE_ZSET_ZIPLIST {
                assert!(fail(&bytes, &opts()).message.contains("duplicate"));
                continue;
            }
            let (dbs, _) = load_bytes(&bytes, &opts()).expect("loaded");
            let expected = match rdb_type {
                TYPE_SET_LISTPACK => Content::Set(vec![b"7".to_vec(), b"a".to_vec()]),
                _ => Content::ZSet(vec![(b"a".to_vec(), 1f64.to_bits())]),
            };
            assert!(contents(&dbs) == vec![(0, b"k".to_vec(), None, expected)]);
        }
    }

    /// The fuzz target's body on its seeds: each loads, and Goblin's snapshot of it loads
    /// back to the same keyspace (the hash seed holds listpack and hashtable hashes).
    #[test]
    fn fuzz_seeds_load_and_round_trip() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/corpus/rdb_load");
        let skipping = LoadOptions {
            skip_unsupported: true,
            now_ms: 0,
            ..opts()
        };
        let mut hashes = 0;
        for seed in std::fs::read_dir(dir).unwrap() {
            let path = seed.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let (dbs, _) =
                load_bytes(&bytes, &skipping).unwrap_or_else(|e| panic!("{path:?}: {e}"));
            let again = load_bytes(&snapshot(&dbs), &skipping).unwrap().0;
            assert!(contents(&dbs) == contents(&again), "{path:?}");
            hashes += contents(&dbs)
                .iter()
                .filter(|(.., c)| matches!(c, crate::rdb::Content::Hash(_)))
                .count();
        }
        assert!(hashes >= 3, "the hash seed is among them");
    }

    #[test]
    fn old_versions_without_checksum_and_valkey_header() {
        let mut old = b"REDIS0003".to_vec();
        old.extend_from_slice(&[
            OP_SELECTDB,
            0,
            TYPE_ZSET,
            1,
            b'k',
            1,
            1,
            b'm',
            1,
            b'2',
            OP_EOF,
        ]);
        let (dbs, report) = load_bytes(&old, &opts()).unwrap();
        assert_eq!(report.checksum, Checksum::Absent);
        assert_eq!(members(&dbs, 0, b"k"), vec![(b"m".to_vec(), 2.0)]);

        let valkey = file("VALKEY080", |w| {
            w.byte(TYPE_ZSET_2).unwrap();
            w.string(b"k").unwrap();
            w.len(1).unwrap();
            w.string(b"m").unwrap();
            w.double(4.0).unwrap();
        });
        let (_, report) = load_bytes(&valkey, &opts()).unwrap();
        assert!(report.valkey);
        // A zero checksum means "not computed", as Redis.
        let mut unchecked = valkey.clone();
        let n = unchecked.len();
        unchecked[n - 8..].fill(0);
        assert_eq!(
            load_bytes(&unchecked, &opts()).unwrap().1.checksum,
            Checksum::Disabled
        );
        // rdbchecksum no: a wrong checksum is not looked at.
        let mut wrong = valkey.clone();
        wrong[n - 1] ^= 1;
        assert!(load_bytes(&wrong, &opts()).is_err());
        let trusting = LoadOptions {
            verify_checksum: false,
            ..opts()
        };
        assert_eq!(
            load_bytes(&wrong, &trusting).unwrap().1.checksum,
            Checksum::Unchecked
        );
        for bad in [
            &b"REDIS0014"[..],
            b"REDIS0000",
            b"VALKEY011",
            b"REDIS00x1",
            b"RADIS0010",
        ] {
            let mut f = bad.to_vec();
            f.extend_from_slice(&valkey[9..]);
            assert!(load_bytes(&f, &opts()).is_err());
        }
    }

    #[test]
    fn every_set_encoding_reads_with_redis_conversions() {
        let mut intset = Vec::new();
        intset.extend_from_slice(&2u32.to_le_bytes());
        intset.extend_from_slice(&3u32.to_le_bytes());
        for v in [-5i16, 2, 9] {
            intset.extend_from_slice(&v.to_le_bytes());
        }
        let bytes = file("REDIS0011", |w| {
            w.byte(TYPE_SET_INTSET).unwrap();
            w.string(b"ints").unwrap();
            w.string(&intset).unwrap();
            w.byte(TYPE_SET_LISTPACK).unwrap();
            w.string(b"lp").unwrap();
            w.string(&listpack(&[
                Item::Str(b"x"),
                Item::Int(12),
                Item::Str(b"y"),
            ]))
            .unwrap();
            w.byte(TYPE_SET).unwrap();
            w.string(b"plain").unwrap();
            w.len(3).unwrap();
            for m in [&b"3"[..], b"1", b"z"] {
                w.string(m).unwrap();
            }
            w.byte(TYPE_SET).unwrap();
            w.string(b"plain-ints").unwrap();
            w.len(2).unwrap();
            w.string(b"3").unwrap();
            w.string(b"1").unwrap();
        });
        let (dbs, report) = load_bytes(&bytes, &opts()).unwrap();
        assert_eq!(report.keys, 4);
        let set = |k: &[u8]| dbs[0].get(k).unwrap().value.as_set().unwrap().clone();
        let members = |k: &[u8]| set(k).iter().map(|m| m.to_vec()).collect::<Vec<_>>();
        assert_eq!(set(b"ints").encoding().as_str(), "intset");
        assert_eq!(members(b"ints"), [&b"-5"[..], b"2", b"9"]);
        assert_eq!(members(b"lp"), [&b"x"[..], b"12", b"y"]);
        assert_eq!(set(b"lp").encoding().as_str(), "listpack");
        assert_eq!(
            members(b"plain"),
            [&b"1"[..], b"3", b"z"],
            "an intset, then a listpack"
        );
        assert_eq!(set(b"plain-ints").encoding().as_str(), "intset");

        let mut bad = intset.clone();
        bad[8..10].copy_from_slice(&50i16.to_le_bytes());
        for blob in [bad, intset[..7].to_vec(), intset[..12].to_vec()] {
            let bytes = file("REDIS0011", |w| {
                w.byte(TYPE_SET_INTSET).unwrap();
                w.string(b"ints").unwrap();
                w.string(&blob).unwrap();
            });
            assert_eq!(fail(&bytes, &opts()).kind, ErrorKind::Corrupt);
        }
        let dup = file("REDIS0011", |w| {
            w.byte(TYPE_SET).unwrap();
            w.string(b"s").unwrap();
            w.len(2).unwrap();
            w.string(b"a").unwrap();
            w.string(b"a").unwrap();
        });
        assert!(fail(&dup, &opts()).message.contains("duplicate set member"));
    }

    #[test]
    fn every_list_encoding_loads() {
        let elements = |dbs: &[Db], key: &[u8]| -> Vec<Vec<u8>> {
            let value = dbs[0].get(key).unwrap().value;
            value.as_list().unwrap().to_vecs()
        };
        let want: Vec<Vec<u8>> = vec![b"x".to_vec(), b"12".to_vec(), b"plain".to_vec()];
        let items = [Item::Str(b"x"), Item::Int(12)];
        let bytes = file("REDIS0011", |w| {
            w.byte(TYPE_LIST).unwrap();
            w.string(b"linked").unwrap();
            w.len(3).unwrap();
            for e in &want {
                w.string(e).unwrap();
            }
            w.byte(TYPE_LIST_ZIPLIST).unwrap();
            w.string(b"ziplist").unwrap();
            w.string(&ziplist(&items)).unwrap();
            w.byte(TYPE_LIST_QUICKLIST).unwrap();
            w.string(b"quicklist").unwrap();
            w.len(2).unwrap();
            w.string(&ziplist(&items)).unwrap();
            w.string(&ziplist(&[Item::Str(b"plain")])).unwrap();
            w.byte(TYPE_LIST_QUICKLIST_2).unwrap();
            w.string(b"quicklist2").unwrap();
            w.len(2).unwrap();
            w.len(QUICKLIST_NODE_PACKED).unwrap();
            w.string(&listpack(&items)).unwrap();
            w.len(QUICKLIST_NODE_PLAIN).unwrap();
            w.string(b"plain").unwrap();
        });
        let (dbs, report) = load_bytes(&bytes, &opts()).unwrap();
        assert_eq!(report.keys, 4);
        assert_eq!(elements(&dbs, b"linked"), want);
        assert_eq!(elements(&dbs, b"ziplist"), want[..2].to_vec());
        assert_eq!(elements(&dbs, b"quicklist"), want);
        assert_eq!(elements(&dbs, b"quicklist2"), want);
        assert_eq!(
            dbs[0].get(b"quicklist2").unwrap().value.encoding_name(),
            "listpack"
        );
    }

    #[test]
    fn other_types_are_refused_naming_the_key_or_skipped() {
        // A string, a list, a hash and a set load; Valkey 9's hash with field expiries
        // after them is the first refused key.
        let bytes = file("VALKEY080", |w| {
            w.byte(TYPE_STRING).unwrap();
            w.string(b"greeting").unwrap();
            w.string(b"hello").unwrap();
            w.byte(TYPE_LIST_QUICKLIST_2).unwrap();
            w.string(b"list").unwrap();
            w.len(1).unwrap();
            w.len(2).unwrap();
            w.string(&listpack(&[Item::Str(b"x")])).unwrap();
            w.byte(TYPE_HASH).unwrap();
            w.string(b"hash").unwrap();
            w.len(1).unwrap();
            w.string(b"f").unwrap();
            w.string(b"v").unwrap();
            w.byte(TYPE_SET_LISTPACK).unwrap();
            w.string(b"set").unwrap();
            w.string(&listpack(&[Item::Str(b"x")])).unwrap();
            // Valkey's hash with field expiries: a count, then field, value, 8-byte time.
            w.byte(TYPE_22).unwrap();
            w.string(b"ttlhash").unwrap();
            w.len(1).unwrap();
            w.string(b"f").unwrap();
            w.string(b"v").unwrap();
            w.raw(&[0; 8]).unwrap();
            w.byte(TYPE_ZSET_2).unwrap();
            w.string(b"z").unwrap();
            w.len(1).unwrap();
            w.string(b"m").unwrap();
            w.double(1.0).unwrap();
        });
        let err = fail(&bytes, &opts());
        assert_eq!(err.kind, ErrorKind::Unsupported);
        let hash_at = bytes
            .windows(9)
            .position(|w| w == [&[TYPE_22, 7][..], b"ttlhash"].concat())
            .unwrap();
        assert_eq!(err.offset, hash_at as u64);
        assert!(err.message.contains("'ttlhash'"), "{err}");
        let skipping = LoadOptions {
            skip_unsupported: true,
            ..opts()
        };
        let (dbs, report) = load_bytes(&bytes, &skipping).unwrap();
        assert_eq!(
            report.keys, 5,
            "the string, the list, the hash, the set and the sorted set"
        );
        assert_eq!(report.unsupported_skipped, vec![("hash", 1)]);
        assert_eq!(members(&dbs, 0, b"z"), vec![(b"m".to_vec(), 1.0)]);
    }

    #[test]
    fn impossible_contents_are_errors_with_offsets() {
        let one = |f: &dyn Fn(&mut RdbWriter<&mut Vec<u8>>)| {
            let bytes = file("REDIS0010", |w| f(w));
            fail(&bytes, &opts())
        };
        let dup = one(&|w| {
            for _ in 0..2 {
                w.byte(TYPE_ZSET_2).unwrap();
                w.string(b"k").unwrap();
                w.len(1).unwrap();
                w.string(b"m").unwrap();
                w.double(1.0).unwrap();
            }
        });
        assert!(dup.message.contains("duplicate key 'k'"), "{dup}");
        let nan = one(&|w| {
            w.byte(TYPE_ZSET_2).unwrap();
            w.string(b"k").unwrap();
            w.len(1).unwrap();
            w.string(b"m").unwrap();
            w.double(f64::NAN).unwrap();
        });
        assert!(nan.message.contains("NaN"), "{nan}");
        let member = one(&|w| {
            w.byte(TYPE_ZSET_2).unwrap();
            w.string(b"k").unwrap();
            w.len(2).unwrap();
            for _ in 0..2 {
                w.string(b"m").unwrap();
                w.double(1.0).unwrap();
            }
        });
        assert!(
            member.message.contains("duplicate sorted set member"),
            "{member}"
        );
        let db = one(&|w| {
            w.byte(OP_SELECTDB).unwrap();
            w.len(16).unwrap();
        });
        assert_eq!((db.kind, db.offset), (ErrorKind::Unsupported, 9));
        let huge = one(&|w| {
            w.byte(TYPE_ZSET_2).unwrap();
            w.string(b"k").unwrap();
            w.len(1).unwrap();
            w.len(1 << 40).unwrap();
        });
        assert_eq!(huge.kind, ErrorKind::Truncated);
        let lzf = one(&|w| {
            w.byte(TYPE_STRING).unwrap();
            w.raw(&[0xc3, 1, 0x81, 0, 0, 0, 1, 0, 0, 0, 0, 0]).unwrap();
        });
        assert!(lzf.message.contains("LZF"), "{lzf}");
        let unknown = one(&|w| w.byte(30).unwrap());
        assert_eq!((unknown.offset, unknown.kind), (9, ErrorKind::Corrupt));
        let odd = one(&|w| {
            w.byte(TYPE_ZSET_LISTPACK).unwrap();
            w.string(b"k").unwrap();
            w.string(&listpack(&[Item::Str(b"m")])).unwrap();
        });
        assert!(odd.message.contains("odd number"), "{odd}");
        assert_eq!(odd.offset, 12);
    }
}

#[cfg(test)]
mod speed {
    use super::*;
    use crate::rdb::write::RdbWriter;

    fn file(members: u32, descending: bool) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w = RdbWriter::new(&mut out);
        w.raw(b"REDIS0010").unwrap();
        w.byte(TYPE_ZSET_2).unwrap();
        w.string(b"big").unwrap();
        w.len(members as u64).unwrap();
        let mut order: Vec<u32> = (0..members).collect();
        if descending {
            order.reverse();
        }
        for i in order {
            w.string(format!("member:{i:09}").as_bytes()).unwrap();
            w.double(i as f64 * 0.25).unwrap();
        }
        w.finish().unwrap();
        out
    }

    /// Load speed by member order: `cargo test --release -p goblin-server --lib
    /// rdb::read::speed -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn load_speed_by_order() {
        let o = LoadOptions::default();
        for descending in [true, false] {
            let f = file(2_000_000, descending);
            let t = std::time::Instant::now();
            let (dbs, _) = load(&f[..], &o).unwrap();
            let secs = t.elapsed().as_secs_f64();
            eprintln!(
                "descending={descending}: {:.3} s, {:.0} MB/s",
                secs,
                f.len() as f64 / 1e6 / secs
            );
            drop(dbs);
        }
        let f = file(2_000_000, true);
        let t = std::time::Instant::now();
        let mut input = Input::new(&f[..]);
        let mut s = Vec::new();
        input.array::<9>().unwrap();
        input.u8().unwrap();
        input.string(&mut s).unwrap();
        let n = input.length().unwrap();
        for _ in 0..n {
            s.clear();
            input.string(&mut s).unwrap();
            input.array::<8>().unwrap();
        }
        eprintln!("parse only: {:.3} s", t.elapsed().as_secs_f64());
    }
}
