//! The RDB loader: any file Redis 1.0 to 8.x or Valkey writes (`REDIS0001`..`REDIS0013`,
//! `VALKEY080`/`VALKEY081`) whose keys are sorted sets, in every encoding Redis ever used
//! for them: ZSET (decimal scores), ZSET_2 (binary scores), ZSET_ZIPLIST and ZSET_LISTPACK,
//! with LZF-compressed and integer-encoded strings anywhere a string may stand.
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
use crate::db::{Db, Value};
use goblin_zset::ZSet;
use std::fmt;
use std::io::Read;

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

type Result<T> = std::result::Result<T, LoadError>;

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
    /// Listpack thresholds for the sets built.
    pub zset: goblin_zset::Config,
    /// Skip keys of types Goblin does not store instead of refusing the file.
    pub skip_unsupported: bool,
    /// Now, in Unix milliseconds: keys that expired before are dropped.
    pub now_ms: u64,
    /// Server clock for the keys' access time.
    pub clock_secs: u32,
    /// The file size when known (bounds reservations).
    pub size: Option<u64>,
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
    /// Empty keys dropped (older Redis versions could write them).
    pub empty_skipped: u64,
    /// Keys of other types skipped, by type name.
    pub unsupported_skipped: Vec<(&'static str, u64)>,
    /// Function libraries skipped.
    pub functions_skipped: u64,
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
}

const BUF_SIZE: usize = 256 * 1024;

impl<R: Read> Input<R> {
    /// Reads from `inner`.
    pub fn new(inner: R) -> Self {
        Input {
            inner,
            buf: vec![0; BUF_SIZE],
            pos: 0,
            end: 0,
            base: 0,
            crc: 0,
            crc_pos: 0,
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
    pub fn len(&mut self) -> Result<u64> {
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
                let clen = self.len()?;
                let len = self.len()?;
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
                let clen = self.len()?;
                self.len()?;
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
                    message: format!(
                        "bad score text {:?}",
                        String::from_utf8_lossy(&digits)
                    ),
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
    Loader::new(Input::new(reader), opts).run()
}

struct Loader<'a, R> {
    input: Input<R>,
    opts: &'a LoadOptions,
    dbs: Vec<Db>,
    report: LoadReport,
    scratch: Vec<u8>,
}

impl<'a, R: Read> Loader<'a, R> {
    fn new(input: Input<R>, opts: &'a LoadOptions) -> Self {
        Loader {
            input,
            opts,
            dbs: (0..opts.databases).map(|_| Db::default()).collect(),
            report: LoadReport {
                version: 0,
                valkey: false,
                keys: 0,
                expired_skipped: 0,
                empty_skipped: 0,
                unsupported_skipped: Vec::new(),
                functions_skipped: 0,
                module_aux_skipped: 0,
                aux: Vec::new(),
                checksum: Checksum::Absent,
            },
            scratch: Vec::new(),
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

    fn run(mut self) -> Result<(Vec<Db>, LoadReport)> {
        self.header()?;
        let mut db = 0usize;
        let mut expire: Option<u64> = None;
        loop {
            let at = self.input.offset();
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
                    self.input.len()?;
                }
                OP_SELECTDB => {
                    let n = self.input.len()?;
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
                    self.input.len()?;
                    self.input.len()?;
                }
                OP_SLOT_INFO if self.report.version >= 12 || self.report.valkey => {
                    for _ in 0..3 {
                        self.input.len()?;
                    }
                }
                OP_AUX => {
                    let mut name = Vec::new();
                    self.input.string(&mut name)?;
                    let mut value = Vec::new();
                    self.input.string(&mut value)?;
                    if self.report.aux.len() < 64 {
                        value.truncate(256);
                        self.report.aux.push((
                            String::from_utf8_lossy(&name).into_owned(),
                            String::from_utf8_lossy(&value).into_owned(),
                        ));
                    }
                }
                OP_MODULE_AUX => {
                    self.input.len()?; // module id
                    let when_opcode = self.input.len()?;
                    if when_opcode != MODULE_UINT {
                        return Err(self.input.corrupt("bad 'when' opcode in module AUX data"));
                    }
                    self.input.len()?;
                    self.skip_module_value()?;
                    self.report.module_aux_skipped += 1;
                }
                OP_FUNCTION2 => {
                    self.input.skip_string()?;
                    self.report.functions_skipped += 1;
                }
                OP_FUNCTION_PRE_GA => {
                    return Err(LoadError {
                        kind: ErrorKind::Unsupported,
                        offset: at,
                        message: "pre-release (Redis 7.0 RC) function format not supported"
                            .into(),
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
            self.report.checksum = if stored == 0 {
                Checksum::Disabled
            } else if stored == expected {
                Checksum::Verified
            } else {
                return Err(LoadError {
                    kind: ErrorKind::Corrupt,
                    offset: at + 1,
                    message: format!(
                        "wrong RDB checksum: the file says {stored:016x}, its contents give {expected:016x}"
                    ),
                });
            };
        }
        if !self.input.at_end()? {
            return Err(self.input.corrupt("unexpected bytes after the end of the snapshot"));
        }
        Ok((self.dbs, self.report))
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
        let value = match rdb_type {
            TYPE_ZSET | TYPE_ZSET_2 => self.zset(rdb_type)?,
            TYPE_ZSET_ZIPLIST | TYPE_ZSET_LISTPACK => self.packed_zset(rdb_type)?,
            _ => {
                let name = type_name(rdb_type, valkey);
                if !self.opts.skip_unsupported {
                    return Err(LoadError {
                        kind: ErrorKind::Unsupported,
                        offset: at,
                        message: format!(
                            "key '{}' in database {db} is a {name} (RDB type {rdb_type}); Goblin stores only sorted sets. Start with 'rdb-skip-unsupported-types yes' to load the file without such keys",
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
        let Some(zset) = value else {
            self.report.empty_skipped += 1;
            return Ok(());
        };
        if expire.is_some_and(|t| t < self.opts.now_ms) {
            self.report.expired_skipped += 1;
            return Ok(());
        }
        let target = &mut self.dbs[db];
        if target.get(&key).is_some() {
            return Err(LoadError {
                kind: ErrorKind::Corrupt,
                offset: at,
                message: format!(
                    "duplicate key '{}' in database {db}",
                    String::from_utf8_lossy(&key)
                ),
            });
        }
        target.insert(&key, Value::ZSet(zset), self.opts.clock_secs);
        if let Some(t) = expire {
            target.set_expiry(&key, t);
        }
        self.report.keys += 1;
        Ok(())
    }

    /// ZSET / ZSET_2: a count, then member strings each followed by a score.
    fn zset(&mut self, rdb_type: u8) -> Result<Option<ZSet>> {
        let count = self.input.len()?;
        if count == 0 {
            return Ok(None);
        }
        let reserve = self.plausible(count, if rdb_type == TYPE_ZSET_2 { 9 } else { 2 });
        let mut zset = ZSet::with_expected(reserve, 0, &self.opts.zset);
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
                return Err(LoadError {
                    kind: ErrorKind::Corrupt,
                    offset: at,
                    message: format!(
                        "duplicate sorted set member '{}'",
                        String::from_utf8_lossy(&self.scratch)
                    ),
                });
            }
        }
        Ok(Some(zset))
    }

    /// ZSET_ZIPLIST / ZSET_LISTPACK: one blob of alternating members and scores.
    fn packed_zset(&mut self, rdb_type: u8) -> Result<Option<ZSet>> {
        let at = self.input.offset();
        let mut blob = Vec::new();
        self.input.string(&mut blob)?;
        let (kind, walk): (&str, Walker) = if rdb_type == TYPE_ZSET_LISTPACK {
            ("listpack", packed::listpack_items)
        } else {
            ("ziplist", packed::ziplist_items)
        };
        let blob_error = |message: String| LoadError {
            kind: ErrorKind::Corrupt,
            offset: at,
            message: format!("sorted set {kind}: {message}"),
        };
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
        let mut zset = ZSet::with_expected(pairs.len(), 0, &self.opts.zset);
        let mut text = Vec::new();
        for (m, score) in pairs {
            let bytes: &[u8] = match m {
                Item::Str(s) => s,
                Item::Int(v) => {
                    text.clear();
                    text.extend_from_slice(v.to_string().as_bytes());
                    &text
                }
            };
            if zset.insert(bytes, score, &self.opts.zset).is_some() {
                return Err(blob_error(format!(
                    "duplicate member '{}'",
                    String::from_utf8_lossy(bytes)
                )));
            }
        }
        Ok(Some(zset))
    }

    /// Module values: opcodes (integers, floats, doubles, strings) up to an EOF opcode.
    fn skip_module_value(&mut self) -> Result<()> {
        loop {
            match self.input.len()? {
                MODULE_EOF => return Ok(()),
                MODULE_SINT | MODULE_UINT => {
                    self.input.len()?;
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
            TYPE_STRING
            | TYPE_HASH_ZIPMAP
            | TYPE_LIST_ZIPLIST
            | TYPE_SET_INTSET
            | TYPE_HASH_ZIPLIST
            | TYPE_HASH_LISTPACK
            | TYPE_SET_LISTPACK => self.input.skip_string(),
            TYPE_LIST | TYPE_SET | TYPE_LIST_QUICKLIST => {
                let n = self.input.len()?;
                self.skip_strings(n)
            }
            TYPE_HASH => {
                let n = self.input.len()?;
                self.skip_strings(n.saturating_mul(2))
            }
            TYPE_LIST_QUICKLIST_2 => {
                let n = self.input.len()?;
                for _ in 0..n {
                    self.input.len()?;
                    self.input.skip_string()?;
                }
                Ok(())
            }
            TYPE_STREAM_LISTPACKS | TYPE_STREAM_LISTPACKS_2 | TYPE_STREAM_LISTPACKS_3 => {
                self.skip_stream(rdb_type)
            }
            TYPE_MODULE_2 => {
                self.input.len()?;
                self.skip_module_value()
            }
            TYPE_22 if valkey => {
                // Valkey 9 hash with field expiries: field, value, expiry (8 bytes).
                let n = self.input.len()?;
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
                let n = self.input.len()?;
                for _ in 0..n {
                    self.input.len()?;
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

    fn skip_stream(&mut self, rdb_type: u8) -> Result<()> {
        let input = &mut self.input;
        let listpacks = input.len()?;
        for _ in 0..listpacks {
            input.skip_string()?; // master id
            input.skip_string()?; // listpack
        }
        let lens = if rdb_type >= TYPE_STREAM_LISTPACKS_2 {
            8
        } else {
            3
        };
        for _ in 0..lens {
            input.len()?; // length, last id, [first id, max deleted id, entries added]
        }
        let groups = input.len()?;
        for _ in 0..groups {
            input.skip_string()?;
            input.len()?;
            input.len()?;
            if rdb_type >= TYPE_STREAM_LISTPACKS_2 {
                input.len()?;
            }
            let pel = input.len()?;
            for _ in 0..pel {
                input.skip(16 + 8)?;
                input.len()?;
            }
            let consumers = input.len()?;
            for _ in 0..consumers {
                input.skip_string()?;
                input.skip(if rdb_type >= TYPE_STREAM_LISTPACKS_3 {
                    16
                } else {
                    8
                })?;
                let pel = input.len()?;
                input.skip(pel.saturating_mul(16))?;
            }
        }
        Ok(())
    }
}
