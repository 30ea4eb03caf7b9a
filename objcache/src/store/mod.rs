//! The store API the protocol fronts call: lookups, the memcached storage modes, arithmetic,
//! deletes, flush and statistics, over independently locked shards chosen by digest.
//!
//! CAS values come from one store-wide counter advanced exactly where memcached advances its
//! own (every link of a new item, in-place incr/decr, md with `I`, flush_all), so a client
//! sees the same CAS sequence from Goblin as from memcached.
//!
//! Split objects are written in three steps so the pool write happens without the shard
//! lock: reserve a head slot and extent, write the tail, then check the mode's condition and
//! link (or give the reservation back).

pub(crate) mod arena;
pub(crate) mod blocks;
pub mod classes;
pub mod clock;
pub(crate) mod digest;
pub(crate) mod eviction;
pub(crate) mod heads;
pub(crate) mod index;
pub(crate) mod loan;
pub(crate) mod pins;
pub(crate) mod report;
pub(crate) mod shard;
pub mod stats;
pub(crate) mod tags;
pub(crate) mod tail;

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::config::StoreConfig;
use shard::Shard;
use stats::Stats;
use tail::cache::TailCache;
use tail::PoolFile;

pub use digest::Digest;
pub use eviction::Sieve;
pub use index::{Entry, BIT_FETCHED, BIT_KEY_BINARY, BIT_STALE, BIT_TOKEN_SENT};
pub use loan::Loan;
pub use report::{general_stats, VERSION};
pub use tags::MAX_TAGS;
pub use tail::{write_header as write_tail_header, AlignedBuf, TailRef, TAIL_HEADER};

/// How a storage command treats an existing item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Store unconditionally.
    Set,
    /// Store only if absent.
    Add,
    /// Store only if present.
    Replace,
    /// Add the data after the present value.
    Append,
    /// Add the data before the present value.
    Prepend,
    /// Store only if present with the given CAS value.
    Cas,
}

/// The key a command stores under, recorded with the entry it links (the index finds
/// entries by digest): its length in the entry for `stats items`, `stats slabs` and
/// `stats sizes`, its bytes beside it for `lru_crawler metadump` and `stats cachedump`, and
/// whether it was given base64-encoded for mg `k` and `me`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyNote<'a> {
    /// The key (decoded); empty when the front has none to give (HTTP objects).
    pub key: &'a [u8],
    /// The key was given base64-encoded: sets the binary-key bit of a newly linked entry
    /// (an entry changed in place keeps the bit it has).
    pub binary: bool,
}

impl<'a> KeyNote<'a> {
    /// A note for `key`.
    pub fn new(key: &'a [u8], binary: bool) -> KeyNote<'a> {
        KeyNote { key, binary }
    }

    /// The key length as the entry records it, saturated at 255 (memcache keys are at
    /// most 250 bytes).
    fn len(self) -> u8 {
        self.key.len().min(255) as u8
    }

    /// The state bits of a newly linked entry.
    fn bits(self) -> u8 {
        if self.binary {
            BIT_KEY_BINARY
        } else {
            0
        }
    }
}

/// Outcome of a storage command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    /// Stored with this CAS value and final size.
    Stored {
        /// New CAS value.
        cas: u64,
        /// Final value length.
        size: u32,
    },
    /// CAS mismatch.
    Exists,
    /// `cas` on a missing item.
    NotFound,
    /// The mode's condition failed.
    NotStored,
    /// No room could be made, or the pool write failed.
    NoMemory,
}

/// Outcome of incr/decr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arith {
    /// The new value.
    Value {
        /// New numeric value.
        value: u64,
        /// New CAS value.
        cas: u64,
        /// Expiry of the item.
        exptime: u32,
        /// The item as found before the change; `None` when it was created from the
        /// initial value.
        prior: Option<Entry>,
    },
    /// No such item.
    NotFound,
    /// The value is not a decimal number.
    NonNumeric,
    /// CAS mismatch.
    Exists,
    /// No room for the longer value.
    NoMemory,
}

/// Outcome of delete and invalidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deleted {
    /// Removed (or marked stale): the item as it was found.
    Deleted(Entry),
    /// No such item.
    NotFound,
    /// CAS mismatch.
    Exists,
}

/// The bytes of a found item.
pub enum Body<'a> {
    /// The whole value, in RAM.
    Whole(&'a [u8]),
    /// The RAM head and where to read the rest.
    Split {
        /// First --ram-head bytes.
        head: &'a [u8],
        /// The tail on SSD.
        tail: TailRef,
    },
}

/// The tail of a split object being stored.
enum TailBytes<'a> {
    /// Bytes to copy into a new extent.
    Copy(&'a [u8]),
    /// An extent laid out already, its header written with `cas`, `len` tail bytes.
    Extent {
        extent: std::sync::Arc<AlignedBuf>,
        len: usize,
        cas: u64,
    },
}

impl TailBytes<'_> {
    fn len(&self) -> usize {
        match self {
            TailBytes::Copy(b) => b.len(),
            TailBytes::Extent { len, .. } => *len,
        }
    }
}

/// The object store shared by every event loop.
pub struct Store {
    cfg: StoreConfig,
    shards: Vec<Mutex<Shard>>,
    cas: AtomicU64,
    flush_at: AtomicU32,
    /// RAM limit in bytes (arena and head slots): --small-memory plus --memory, or what
    /// `cache_memlimit` last set.
    limit: AtomicU64,
    /// Counters.
    pub stats: Stats,
    /// Hot tails kept in the RAM of --memory that the heads leave.
    pub tails: TailCache,
}

impl Store {
    /// Creates the store and its pool files.
    pub fn new(cfg: StoreConfig) -> anyhow::Result<Store> {
        blocks::ask_for_huge_pages(cfg.huge_pages);
        let mut shards = Vec::with_capacity(cfg.shards);
        let mut direct = true;
        let heads_in_use = std::sync::Arc::default();
        for i in 0..cfg.shards {
            let pool = match &cfg.ssd_dir {
                Some(dir) => {
                    let p = PoolFile::create(&dir.join(format!("goblin-pool-{i}.bin")))?;
                    direct &= p.direct;
                    Some(std::sync::Arc::new(p))
                }
                None => None,
            };
            shards.push(Mutex::new(Shard::new(&cfg, pool, &heads_in_use)));
        }
        if cfg.ssd_dir.is_some() && !direct {
            crate::store_log!(
                Warning,
                "the --ssd-dir filesystem refuses O_DIRECT; tails go through the page cache"
            );
        }
        Ok(Store {
            tails: TailCache::new(cfg.memory, heads_in_use),
            limit: AtomicU64::new(cfg.small_memory + cfg.memory),
            cfg,
            shards,
            cas: AtomicU64::new(0),
            flush_at: AtomicU32::new(0),
            stats: Stats::default(),
        })
    }

    /// True when RAM bytes can be lent to a front ([`Loan`]): page-aligned head slots, and
    /// no block of HugeTLB pages (whose pages cannot be dropped a few at a time).
    pub fn lends(&self) -> bool {
        self.cfg.ram_head.is_multiple_of(4096) && !blocks::huge_mapped()
    }

    /// The configuration.
    pub fn config(&self) -> &StoreConfig {
        &self.cfg
    }

    /// The RAM limit in bytes (memcached's `maxbytes`).
    pub fn memory_limit(&self) -> u64 {
        self.limit.load(Ordering::Relaxed)
    }

    /// memcached's `cache_memlimit`: the store's RAM limit becomes `bytes`, shared between
    /// the arena and the head slots (and the hot tails beside them) in the configured ratio
    /// of --small-memory to --memory. Growing raises every shard's caps; shrinking evicts
    /// until the objects fit and unmaps the blocks left empty ([`Shard::set_limits`]), so
    /// the process's memory falls. Returns false, changing nothing, when the arena's share
    /// would leave a shard less than one --block ([`Store::min_memory_limit`]).
    pub fn set_memory_limit(&self, bytes: u64) -> bool {
        let cfg = &self.cfg;
        let configured = u128::from(cfg.small_memory + cfg.memory);
        let heads = (u128::from(bytes) * u128::from(cfg.memory) / configured) as u64;
        if bytes - heads < cfg.block * cfg.shards as u64 {
            return false;
        }
        let (blocks, slots) = shard::share(cfg, bytes - heads, heads);
        self.limit.store(bytes, Ordering::Relaxed);
        self.tails.set_memory(heads);
        let now = clock::now();
        for s in &self.shards {
            let mut s = s.lock().unwrap_or_else(|p| p.into_inner());
            s.set_limits(blocks, slots, now, &self.stats);
        }
        self.tails.trim();
        true
    }

    /// The longest value the arena holds whole: a --block less the arena's object header
    /// (without --ssd-dir, the largest object the store keeps).
    pub fn max_whole_len(&self) -> u64 {
        self.cfg.block - arena::HEADER as u64
    }

    fn next_cas(&self) -> u64 {
        self.cas.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// A fresh CAS value, for an object whose extent is written before it is stored (see
    /// [`Store::store_extent`]).
    pub fn reserve_cas(&self) -> u64 {
        self.next_cas()
    }

    fn shard(&self, d: &Digest) -> MutexGuard<'_, Shard> {
        let now = clock::now();
        let at = self.flush_at.load(Ordering::Relaxed);
        if at != 0
            && now >= at
            && self
                .flush_at
                .compare_exchange(at, 0, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            self.clear_all();
        }
        self.shards[d.shard(self.shards.len())]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    fn clear_all(&self) {
        for s in &self.shards {
            s.lock().unwrap_or_else(|p| p.into_inner()).clear();
        }
        self.tails.clear();
    }

    /// Finds a live item and calls `f` with a copy of its entry and its bytes. Changes `f`
    /// makes to the entry's expiry and state bits are kept. With `bump`, the hit is then
    /// recorded (eviction policy, access time, fetched bit), after `f` saw the old values.
    pub fn lookup<R>(
        &self,
        d: &Digest,
        bump: bool,
        f: impl FnOnce(&mut Entry, Body<'_>) -> R,
    ) -> Option<R> {
        let now = clock::now();
        let mut s = self.shard(d);
        let id = match bump {
            true => s.find_live_read(d, now, &self.stats)?,
            false => s.find_live(d, now, &self.stats)?,
        };
        let mut e = *s.entry(id);
        let r = if s.is_split(e.size as usize) {
            let pool = s.pool.as_ref().expect("split objects have a pool");
            let tail_len = e.size as usize - s.ram_head();
            let tail = TailRef {
                fd: pool.fd(),
                offset: u64::from(e.tail) * 4096,
                extent_len: tail::extent_pages(tail_len) as usize * 4096,
                tail_len,
                digest: e.digest,
                cas: e.cas,
            };
            let snapshot = e;
            f(
                &mut e,
                Body::Split {
                    head: s.head(&snapshot),
                    tail,
                },
            )
        } else {
            let bytes = s.whole(&e)?;
            f(&mut e, Body::Whole(bytes))
        };
        let stored = s.entry_mut(id);
        stored.exptime = e.exptime;
        stored.bits = e.bits;
        if bump {
            stored.atime = now;
            stored.bits |= BIT_FETCHED;
            s.touch(id);
        }
        Some(r)
    }

    /// Pins the extent of `tail`, from a lookup, against reuse while a front streams it;
    /// false when the object version it belongs to is gone. Every pin is dropped with
    /// [`Store::unpin`].
    pub fn pin(&self, tail: &TailRef) -> bool {
        let page = (tail.offset / 4096) as u32;
        self.shard(&tail.digest)
            .pin_tail(&tail.digest, tail.cas, page)
    }

    /// Drops a pin taken with [`Store::pin`].
    pub fn unpin(&self, tail: &TailRef) {
        self.shard(&tail.digest)
            .unpin_tail((tail.offset / 4096) as u32);
    }

    /// The CAS value and the whole value of a live item, a split object's tail read with a
    /// blocking read under the shard lock: for a front's background threads, not its loops.
    pub fn read(&self, d: &Digest) -> Option<(u64, Vec<u8>)> {
        let mut s = self.shard(d);
        let id = s.find_live(d, clock::now(), &self.stats)?;
        let e = *s.entry(id);
        Some((e.cas, self.read_full(&s, &e)?))
    }

    /// Sets a new expiry on a live item and returns it; `None` when missing.
    pub fn touch(&self, d: &Digest, exptime: u32) -> Option<Entry> {
        self.lookup(d, true, |e, _| {
            e.exptime = exptime;
            *e
        })
    }

    /// Runs a storage command. `key` is recorded in the entry it links; `cas_in` is the CAS
    /// value for [`Mode::Cas`] (and an optional check for append and prepend when non-zero);
    /// `vivify` makes append and prepend store the data as a new item when the key is missing.
    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &self,
        d: &Digest,
        key: KeyNote<'_>,
        mode: Mode,
        flags: u32,
        exptime: u32,
        data: &[u8],
        cas_in: u64,
        vivify: bool,
    ) -> Stored {
        let now = clock::now();
        let r = if matches!(mode, Mode::Append | Mode::Prepend) {
            self.store_concat(d, key, mode, cas_in, data, vivify, flags, exptime, now)
        } else if self.cfg.is_split(data.len()) {
            let (head, tail) = data.split_at(self.cfg.ram_head as usize);
            let tail = TailBytes::Copy(tail);
            self.store_split(d, key, mode, flags, exptime, head, tail, cas_in, now)
        } else {
            let mut s = self.shard(d);
            let old = s.find_live(d, now, &self.stats);
            match self.decide(mode, old.map(|id| s.entry(id)), cas_in) {
                Err(r) => r,
                Ok(()) => {
                    if let Some(id) = old {
                        s.unlink(id);
                    }
                    self.link_whole(&mut s, d, key, flags, exptime, data, now)
                }
            }
        };
        self.count_store(mode, r);
        r
    }

    fn count_store(&self, mode: Mode, r: Stored) {
        if mode == Mode::Cas {
            let c = match r {
                Stored::Stored { .. } => &self.stats.cas_hits,
                Stored::Exists => &self.stats.cas_badval,
                Stored::NotFound => &self.stats.cas_misses,
                _ => return,
            };
            stats::incr(c);
        }
        if let Stored::Stored { .. } = r {
            stats::incr(&self.stats.total_items);
        }
    }

    /// [`Store::condition`] where the command is decided (the item linked or not): a cas
    /// that found its item counts a hit or a bad value in the item's slab class.
    fn decide(&self, mode: Mode, old: Option<&Entry>, cas_in: u64) -> Result<(), Stored> {
        let r = self.condition(mode, old, cas_in);
        if let (Mode::Cas, Some(e)) = (mode, old) {
            let c = self.stats.classes.of(classes::entry_class(e));
            stats::incr(if r.is_ok() {
                &c.cas_hits
            } else {
                &c.cas_badval
            });
        }
        r
    }

    fn condition(&self, mode: Mode, old: Option<&Entry>, cas_in: u64) -> Result<(), Stored> {
        match (mode, old) {
            (Mode::Set, _) | (Mode::Add, None) => Ok(()),
            (Mode::Add, Some(_)) => Err(Stored::NotStored),
            (Mode::Replace | Mode::Append | Mode::Prepend, None) => Err(Stored::NotStored),
            (Mode::Cas, None) => Err(Stored::NotFound),
            (Mode::Cas, Some(e)) if e.cas != cas_in => Err(Stored::Exists),
            (Mode::Append | Mode::Prepend, Some(e)) if cas_in != 0 && e.cas != cas_in => {
                Err(Stored::Exists)
            }
            _ => Ok(()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn link_whole(
        &self,
        s: &mut Shard,
        d: &Digest,
        key: KeyNote<'_>,
        flags: u32,
        exptime: u32,
        data: &[u8],
        now: u32,
    ) -> Stored {
        let Some(loc) = s.place_whole(data, d, now, &self.stats) else {
            return Stored::NoMemory;
        };
        let cas = self.next_cas();
        let size = data.len() as u32;
        s.link(
            Entry {
                digest: *d,
                cas,
                size,
                flags,
                exptime,
                atime: now,
                loc,
                tail: 0,
                bits: key.bits(),
                key_len: key.len(),
            },
            key.key,
        );
        Stored::Stored { cas, size }
    }

    /// Stores (as [`Mode::Set`], with no key note) a split object whose tail is already laid
    /// out in its extent: `head` is its first --ram-head bytes, `extent` holds the header
    /// (written with `cas`, from [`Store::reserve_cas`]) and the `tail_len` bytes after them.
    /// The extent is written to the pool as it is and offered to the hot-tail cache, with
    /// no copy.
    #[allow(clippy::too_many_arguments)]
    pub fn store_extent(
        &self,
        d: &Digest,
        flags: u32,
        exptime: u32,
        head: &[u8],
        extent: std::sync::Arc<AlignedBuf>,
        tail_len: usize,
        cas: u64,
    ) -> Stored {
        let size = head.len() + tail_len;
        if !self.cfg.is_split(size)
            || head.len() != self.cfg.ram_head as usize
            || u32::try_from(size).is_err()
        {
            return Stored::NoMemory;
        }
        let tail = TailBytes::Extent {
            extent,
            len: tail_len,
            cas,
        };
        let r = self.store_split(
            d,
            KeyNote::default(),
            Mode::Set,
            flags,
            exptime,
            head,
            tail,
            0,
            clock::now(),
        );
        self.count_store(Mode::Set, r);
        r
    }

    #[allow(clippy::too_many_arguments)]
    fn store_split(
        &self,
        d: &Digest,
        key: KeyNote<'_>,
        mode: Mode,
        flags: u32,
        exptime: u32,
        head_bytes: &[u8],
        tail: TailBytes<'_>,
        cas_in: u64,
        now: u32,
    ) -> Stored {
        let size = head_bytes.len() + tail.len();
        let (res, pool, head) = {
            let mut s = self.shard(d);
            // Check the condition before spending a CAS value and a pool write on an object
            // that would not be stored; it is checked again when linking.
            let old = s.find_live(d, now, &self.stats);
            if let Err(r) = self.condition(mode, old.map(|id| s.entry(id)), cas_in) {
                return r;
            }
            let Some(r) = s.reserve_split(size, now, &self.stats) else {
                return Stored::NoMemory;
            };
            s.fill_head(&r, head_bytes);
            self.tails.trim();
            (
                r,
                std::sync::Arc::clone(s.pool.as_ref().expect("split objects have a pool")),
                head_bytes.len(),
            )
        };
        let chunk = self.cfg.write_io_chunk as usize;
        let written = match tail {
            TailBytes::Copy(bytes) => {
                let cas = self.next_cas();
                pool.write(res.page, d, cas, bytes, chunk)
                    .map(|e| (std::sync::Arc::new(e), cas))
            }
            TailBytes::Extent { extent, cas, .. } => pool
                .write_extent(res.page, &extent, chunk)
                .map(|()| (extent, cas)),
        };
        let (extent, cas) = match written {
            Ok(written) => written,
            Err(e) => {
                crate::store_log!(Warning, "pool write failed, object dropped: {e}");
                stats::incr(&self.stats.ssd_io_errors);
                self.shard(d).release(&res);
                return Stored::NoMemory;
            }
        };
        stats::add(&self.stats.ssd_bytes_written, (size - head) as u64);
        let mut s = self.shard(d);
        let old = s.find_live(d, now, &self.stats);
        if let Err(r) = self.decide(mode, old.map(|id| s.entry(id)), cas_in) {
            s.release(&res);
            return r;
        }
        if let Some(id) = old {
            s.unlink(id);
        }
        let size = size as u32;
        s.link(
            Entry {
                digest: *d,
                cas,
                size,
                flags,
                exptime,
                atime: now,
                loc: res.slot,
                tail: res.page,
                bits: key.bits(),
                key_len: key.len(),
            },
            key.key,
        );
        drop(s);
        // While the hot-tail cache has room, the written extent goes in as it is.
        self.tails.offer(d, cas, extent, false);
        Stored::Stored { cas, size }
    }

    /// The full value of entry `e`, reading a split object's tail with a blocking read.
    fn read_full(&self, s: &Shard, e: &Entry) -> Option<Vec<u8>> {
        if !s.is_split(e.size as usize) {
            return s.whole(e).map(<[u8]>::to_vec);
        }
        let pool = s.pool.as_ref()?;
        let tail_len = e.size as usize - s.ram_head();
        let buf = match pool.read_blocking(e.tail, tail_len, self.cfg.io_chunk as usize) {
            Ok(b) => b,
            Err(err) => {
                crate::store_log!(Warning, "pool read failed: {err}");
                stats::incr(&self.stats.ssd_io_errors);
                return None;
            }
        };
        stats::add(&self.stats.ssd_bytes_read, buf.len() as u64);
        let Some(tail) = tail::verify(&buf, &e.digest, e.cas, tail_len) else {
            stats::incr(&self.stats.ssd_check_failures);
            return None;
        };
        let mut v = s.head(e).to_vec();
        v.extend_from_slice(tail);
        Some(v)
    }

    #[allow(clippy::too_many_arguments)]
    fn store_concat(
        &self,
        d: &Digest,
        key: KeyNote<'_>,
        mode: Mode,
        cas_in: u64,
        data: &[u8],
        vivify: bool,
        flags: u32,
        exptime: u32,
        now: u32,
    ) -> Stored {
        let mut s = self.shard(d);
        let old = s.find_live(d, now, &self.stats);
        if old.is_none() && vivify {
            drop(s);
            return self.store(d, key, Mode::Add, flags, exptime, data, 0, false);
        }
        if let Err(r) = self.condition(mode, old.map(|id| s.entry(id)), cas_in) {
            return r;
        }
        let id = old.expect("condition checked presence");
        let e = *s.entry(id);
        let Some(mut value) = self.read_full(&s, &e) else {
            s.unlink(id);
            return Stored::NotStored;
        };
        if mode == Mode::Append {
            value.extend_from_slice(data);
        } else {
            value.splice(0..0, data.iter().copied());
        }
        if value.len() as u64 > self.cfg.max_item_size {
            return Stored::NotStored;
        }
        s.unlink(id);
        if self.cfg.is_split(value.len()) {
            drop(s);
            let (head, tail) = value.split_at(self.cfg.ram_head as usize);
            let tail = TailBytes::Copy(tail);
            return self.store_split(d, key, Mode::Set, e.flags, e.exptime, head, tail, 0, now);
        }
        self.link_whole(&mut s, d, key, e.flags, e.exptime, &value, now)
    }

    /// incr (`incr` true) or decr by `delta`. `cas_in` non-zero must match; `vivify` gives
    /// the initial value and expiry for a missing key. `key` is recorded in an item linked
    /// anew: in full when created from `vivify`, without the binary-key bit when relinked
    /// under a longer value; an item changed in place keeps its entry as it is.
    pub fn arith(
        &self,
        d: &Digest,
        key: KeyNote<'_>,
        incr: bool,
        delta: u64,
        cas_in: u64,
        vivify: Option<(u64, u32)>,
    ) -> Arith {
        let now = clock::now();
        let mut s = self.shard(d);
        let Some(id) = s.find_live(d, now, &self.stats) else {
            let Some((initial, exptime)) = vivify else {
                return Arith::NotFound;
            };
            let text = initial.to_string();
            return match self.link_whole(&mut s, d, key, 0, exptime, text.as_bytes(), now) {
                Stored::Stored { cas, .. } => {
                    stats::incr(&self.stats.total_items);
                    Arith::Value {
                        value: initial,
                        cas,
                        exptime,
                        prior: None,
                    }
                }
                _ => Arith::NoMemory,
            };
        };
        let e = *s.entry(id);
        if e.size == 0 || s.is_split(e.size as usize) {
            return Arith::NonNumeric;
        }
        if cas_in != 0 && cas_in != e.cas {
            return Arith::Exists;
        }
        let Some(current) = s.whole(&e).and_then(parse_u64) else {
            return Arith::NonNumeric;
        };
        let value = if incr {
            current.wrapping_add(delta)
        } else {
            current.saturating_sub(delta)
        };
        let text = value.to_string();
        let cas = if text.len() <= e.size as usize {
            let bytes = s.whole_mut(&e);
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            bytes[text.len()..].fill(b' ');
            let cas = self.next_cas();
            s.entry_mut(id).cas = cas;
            s.touch(id);
            cas
        } else {
            s.unlink(id);
            let key = KeyNote {
                binary: false,
                ..key
            };
            match self.link_whole(&mut s, d, key, e.flags, e.exptime, text.as_bytes(), now) {
                Stored::Stored { cas, .. } => cas,
                _ => return Arith::NoMemory,
            }
        };
        Arith::Value {
            value,
            cas,
            exptime: e.exptime,
            prior: Some(e),
        }
    }

    /// Deletes an item; a non-zero `cas_in` must match.
    pub fn delete(&self, d: &Digest, cas_in: u64) -> Deleted {
        let now = clock::now();
        let mut s = self.shard(d);
        let Some(id) = s.find_live(d, now, &self.stats) else {
            return Deleted::NotFound;
        };
        if cas_in != 0 && s.entry(id).cas != cas_in {
            return Deleted::Exists;
        }
        let e = *s.entry(id);
        s.unlink(id);
        Deleted::Deleted(e)
    }

    /// Marks an item stale instead of deleting it (md `I`): new CAS value, recache token
    /// released, optional new expiry.
    pub fn invalidate(&self, d: &Digest, cas_in: u64, exptime: Option<u32>) -> Deleted {
        let now = clock::now();
        let mut s = self.shard(d);
        let Some(id) = s.find_live(d, now, &self.stats) else {
            return Deleted::NotFound;
        };
        if cas_in != 0 && s.entry(id).cas != cas_in {
            return Deleted::Exists;
        }
        let cas = self.next_cas();
        let e = s.entry_mut(id);
        if let Some(t) = exptime {
            e.exptime = t;
        }
        let found = *e;
        e.bits = (e.bits | BIT_STALE) & !BIT_TOKEN_SENT;
        e.cas = cas;
        Deleted::Deleted(found)
    }

    /// Attaches `tags` (at most [`MAX_TAGS`], replacing any it had) to the live item `d`
    /// if it still has CAS value `cas`; false when it is gone or was replaced. The tags
    /// leave the index with the item, whatever unlinks it.
    pub fn tag(&self, d: &Digest, cas: u64, tags: &[u64]) -> bool {
        let mut s = self.shard(d);
        match s.find_live(d, clock::now(), &self.stats) {
            Some(id) if s.entry(id).cas == cas => {
                s.tags.set(id, tags);
                true
            }
            _ => false,
        }
    }

    /// Purges every live item carrying any of `tags`: unlinks it, or with `soft` lets
    /// `soft` change its entry's expiry and state bits instead. Returns how many items.
    pub fn purge_tags(&self, tags: &[u64], soft: Option<&dyn Fn(&mut Entry)>) -> u64 {
        let now = clock::now();
        let mut n = 0;
        for shard in &self.shards {
            let mut s = shard.lock().unwrap_or_else(|p| p.into_inner());
            for id in s.tags.carrying(tags) {
                let digest = s.entry(id).digest;
                if s.find_live(&digest, now, &self.stats) != Some(id) {
                    continue;
                }
                n += 1;
                match soft {
                    Some(f) => f(s.entry_mut(id)),
                    None => s.unlink(id),
                }
            }
        }
        n
    }

    /// flush_all: with `delay` <= 0 drops everything now, otherwise when `delay` (a protocol
    /// expiry) has passed, as memcached does (one second early, like its `oldest_live`).
    pub fn flush(&self, delay: i64) {
        stats::incr(&self.stats.cmd_flush);
        if delay > 0 {
            self.flush_at.store(
                clock::expiry(delay).saturating_sub(1).max(1),
                Ordering::Relaxed,
            );
        } else {
            self.next_cas();
            self.flush_at.store(0, Ordering::Relaxed);
            self.clear_all();
        }
    }

    /// Current sizes of the store.
    pub fn gauges(&self) -> Gauges {
        let mut g = Gauges::default();
        for s in &self.shards {
            let s = s.lock().unwrap_or_else(|p| p.into_inner());
            let (live, mapped, heads, tails) = s.usage();
            g.items += s.items() as u64;
            g.arena_bytes += live as u64;
            g.arena_mapped += mapped as u64;
            g.head_bytes += heads as u64;
            g.tail_bytes += tails;
        }
        g
    }

    /// Calls `f` with every live item's entry and key (empty when stored without one), one
    /// shard at a time under its lock (for `stats items`, `stats slabs` and the dumps).
    pub fn for_each_item(&self, mut f: impl FnMut(&Entry, &[u8])) {
        let now = clock::now();
        for s in &self.shards {
            s.lock()
                .unwrap_or_else(|p| p.into_inner())
                .for_each_live(now, &mut f);
        }
    }
}

/// Point-in-time sizes of the store.
#[derive(Default, Debug, Clone, Copy)]
pub struct Gauges {
    /// Live items.
    pub items: u64,
    /// Arena bytes of live objects (headers included).
    pub arena_bytes: u64,
    /// Arena bytes mapped.
    pub arena_mapped: u64,
    /// Head slot bytes in use.
    pub head_bytes: u64,
    /// Tail extent bytes in use.
    pub tail_bytes: u64,
}

/// memcached's `safe_strtoull` on a stored value: optional leading spaces, decimal digits,
/// then the end or whitespace; negative numbers and overflow are refused.
pub fn parse_u64(bytes: &[u8]) -> Option<u64> {
    let mut i = 0;
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    let negative = bytes.get(i) == Some(&b'-');
    if matches!(bytes.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    let start = i;
    let mut v: u64 = 0;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        v = v.checked_mul(10)?.checked_add(u64::from(bytes[i] - b'0'))?;
        i += 1;
    }
    if i == start || (i < bytes.len() && !bytes[i].is_ascii_whitespace()) {
        return None;
    }
    if negative {
        // strtoull negates; memcached refuses results that look negative as signed.
        let neg = v.wrapping_neg();
        return ((neg as i64) >= 0).then_some(neg);
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::StoreArgs;

    fn store(ssd: Option<&std::path::Path>) -> Store {
        let args = StoreArgs {
            small_memory: Some(4 << 20),
            memory: Some(1 << 20),
            block: Some(2 << 20),
            ram_head: Some(4096),
            ssd_dir: ssd.map(|p| p.to_path_buf()),
            cores: Some(1),
            ..StoreArgs::default()
        };
        Store::new(args.resolve().unwrap()).unwrap()
    }

    fn get(st: &Store, key: &str) -> Option<Vec<u8>> {
        let d = Digest::of(key.as_bytes());
        let (e, whole) = st.lookup(&d, true, |e, b| match b {
            Body::Whole(v) => (*e, Some(v.to_vec())),
            Body::Split { .. } => (*e, None),
        })?;
        whole.or_else(|| st.read_full(&st.shard(&d), &e))
    }

    fn set(st: &Store, key: &str, mode: Mode, v: &[u8], cas: u64) -> Stored {
        let note = KeyNote::new(key.as_bytes(), false);
        st.store(&Digest::of(key.as_bytes()), note, mode, 0, 0, v, cas, false)
    }

    #[test]
    fn tags_purge_and_leave_with_their_items() {
        let st = store(None);
        let d = |k: &str| Digest::of(k.as_bytes());
        let cas = |r| match r {
            Stored::Stored { cas, .. } => cas,
            other => panic!("{other:?}"),
        };
        let a = cas(set(&st, "a", Mode::Set, b"1", 0));
        let b = cas(set(&st, "b", Mode::Set, b"2", 0));
        assert!(st.tag(&d("a"), a, &[7, 8]));
        assert!(st.tag(&d("b"), b, &[8]));
        assert!(!st.tag(&d("b"), b + 100, &[9]), "another version");
        assert!(!st.tag(&d("zz"), 1, &[9]));
        // Soft: the entries stay, changed.
        let soft = |e: &mut Entry| e.bits |= BIT_STALE;
        assert_eq!(st.purge_tags(&[8], Some(&soft)), 2);
        assert!(st
            .lookup(&d("a"), false, |e, _| e.bits & BIT_STALE != 0)
            .unwrap());
        assert_eq!(st.purge_tags(&[7, 8], None), 2);
        assert!(get(&st, "a").is_none() && get(&st, "b").is_none());
        assert_eq!(st.purge_tags(&[7, 8], None), 0);
        // Replaced or deleted items leave their tags behind.
        let c = cas(set(&st, "c", Mode::Set, b"3", 0));
        st.tag(&d("c"), c, &[5]);
        set(&st, "c", Mode::Set, b"4", 0);
        assert_eq!(st.purge_tags(&[5], None), 0);
        assert_eq!(get(&st, "c").unwrap(), b"4");
    }

    #[test]
    fn evicted_items_leave_the_tag_index() {
        let st = store(None);
        let value = vec![b'x'; 100 << 10];
        for i in 0..200 {
            let k = format!("k{i}");
            if let Stored::Stored { cas, .. } = set(&st, &k, Mode::Set, &value, 0) {
                st.tag(&Digest::of(k.as_bytes()), cas, &[1, i]);
            }
        }
        assert!(st.stats.evictions.load(Ordering::Relaxed) > 0);
        let live = st.gauges().items;
        let tagged: usize = st
            .shards
            .iter()
            .map(|s| s.lock().unwrap().tags.carrying(&[1]).len())
            .sum();
        assert_eq!(tagged as u64, live);
        assert_eq!(st.purge_tags(&[1], None), live);
        assert_eq!(st.gauges().items, 0);
    }

    #[test]
    fn modes_and_cas_sequence() {
        let st = store(None);
        assert_eq!(
            set(&st, "a", Mode::Set, b"1", 0),
            Stored::Stored { cas: 1, size: 1 }
        );
        assert_eq!(set(&st, "a", Mode::Add, b"2", 0), Stored::NotStored);
        assert_eq!(set(&st, "b", Mode::Replace, b"2", 0), Stored::NotStored);
        assert_eq!(
            set(&st, "a", Mode::Append, b"x", 0),
            Stored::Stored { cas: 2, size: 2 }
        );
        assert_eq!(
            set(&st, "a", Mode::Prepend, b"y", 0),
            Stored::Stored { cas: 3, size: 3 }
        );
        assert_eq!(get(&st, "a").unwrap(), b"y1x");
        assert_eq!(set(&st, "a", Mode::Cas, b"z", 2), Stored::Exists);
        assert_eq!(
            set(&st, "a", Mode::Cas, b"z", 3),
            Stored::Stored { cas: 4, size: 1 }
        );
        assert_eq!(set(&st, "q", Mode::Cas, b"z", 3), Stored::NotFound);
        // The cas outcomes are counted in the class of the item they found.
        let class = st.stats.classes.of(classes::class_of(62));
        assert_eq!(class.cas_hits.load(Ordering::Relaxed), 1);
        assert_eq!(class.cas_badval.load(Ordering::Relaxed), 1);
        let found = entry(&st, "a");
        assert_eq!(st.delete(&Digest::of(b"a"), 0), Deleted::Deleted(found));
        assert_eq!(st.delete(&Digest::of(b"a"), 0), Deleted::NotFound);
    }

    #[test]
    fn arith_pads_in_place_and_grows() {
        let st = store(None);
        let d = Digest::of(b"n");
        set(&st, "n", Mode::Set, b"10", 0);
        assert!(matches!(
            st.arith(&d, KeyNote::default(), false, 5, 0, None),
            Arith::Value { value: 5, .. }
        ));
        assert_eq!(get(&st, "n").unwrap(), b"5 ");
        assert!(matches!(
            st.arith(&d, KeyNote::default(), true, 995, 0, None),
            Arith::Value { value: 1000, .. }
        ));
        assert_eq!(get(&st, "n").unwrap(), b"1000");
        set(&st, "t", Mode::Set, b"abc", 0);
        assert_eq!(
            st.arith(&Digest::of(b"t"), KeyNote::default(), true, 1, 0, None),
            Arith::NonNumeric
        );
        assert_eq!(
            st.arith(&Digest::of(b"zz"), KeyNote::default(), true, 1, 0, None),
            Arith::NotFound
        );
        assert!(matches!(
            st.arith(
                &Digest::of(b"zz"),
                KeyNote::default(),
                true,
                1,
                0,
                Some((7, 0))
            ),
            Arith::Value {
                value: 7,
                prior: None,
                ..
            }
        ));
    }

    /// The entry of `key`, without bumping it.
    fn entry(st: &Store, key: &str) -> Entry {
        st.lookup(&Digest::of(key.as_bytes()), false, |e, _| *e)
            .unwrap()
    }

    #[test]
    fn key_notes_are_recorded_when_linking() {
        let dir = std::env::temp_dir().join(format!("goblin-store-keys-{}", std::process::id()));
        let st = store(Some(&dir));
        let bin = KeyNote::new(b"abc", true);
        let d = Digest::of(b"abc");
        st.store(&d, bin, Mode::Set, 0, 0, b"1", 0, false);
        let e = entry(&st, "abc");
        assert_eq!((e.key_len, e.bits & BIT_KEY_BINARY), (3, BIT_KEY_BINARY));
        // A failed command leaves the entry alone.
        let plain = KeyNote::new(b"abc", false);
        assert_eq!(
            st.store(&d, plain, Mode::Add, 0, 0, b"2", 0, false),
            Stored::NotStored
        );
        assert_eq!(entry(&st, "abc").bits & BIT_KEY_BINARY, BIT_KEY_BINARY);
        // Changed in place, an item keeps its bit whatever the note says.
        assert!(matches!(
            st.arith(&d, plain, true, 1, 0, None),
            Arith::Value { value: 2, .. }
        ));
        assert_eq!(entry(&st, "abc").bits & BIT_KEY_BINARY, BIT_KEY_BINARY);
        // Relinked (append, a longer incr), it has the bit only when the note says so.
        let keep = KeyNote::new(b"abc", false);
        st.store(&d, keep, Mode::Append, 0, 0, b"9", 0, false);
        let e = entry(&st, "abc");
        assert_eq!((e.key_len, e.bits & BIT_KEY_BINARY), (3, 0));
        st.store(&d, bin, Mode::Set, 0, 0, b"9", 0, false);
        st.arith(&d, bin, true, 1, 0, None);
        assert_eq!(entry(&st, "abc").bits & BIT_KEY_BINARY, 0);
        // Created from an initial value, it takes the note's bit.
        let v = Digest::of(b"v");
        st.arith(&v, KeyNote::new(b"v", true), true, 1, 0, Some((5, 0)));
        let e = entry(&st, "v");
        assert_eq!((e.key_len, e.bits & BIT_KEY_BINARY), (1, BIT_KEY_BINARY));
        // Split objects record it too; lengths saturate at 255.
        let big = vec![7u8; 10_000];
        let long_key = [b'k'; 300];
        st.store(
            &d,
            KeyNote::new(&long_key, true),
            Mode::Set,
            0,
            0,
            &big,
            0,
            false,
        );
        let e = entry(&st, "abc");
        assert!(st.cfg.is_split(e.size as usize));
        assert_eq!((e.key_len, e.bits & BIT_KEY_BINARY), (255, BIT_KEY_BINARY));
        // The keys are kept whole beside the entries, for split objects too.
        let mut keys = Vec::new();
        st.for_each_item(|e, k| keys.push((e.key_len, k.to_vec())));
        keys.sort_unstable();
        assert_eq!(keys, [(1, b"v".to_vec()), (255, long_key.to_vec())]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn parse_like_strtoull() {
        assert_eq!(parse_u64(b"12 "), Some(12));
        assert_eq!(parse_u64(b" 12"), Some(12));
        assert_eq!(parse_u64(b"12a"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
    }

    #[test]
    fn split_objects_round_trip_and_evict() {
        let dir = std::env::temp_dir().join(format!("goblin-store-test-{}", std::process::id()));
        let st = store(Some(&dir));
        let big: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        assert!(matches!(
            set(&st, "big", Mode::Set, &big, 0),
            Stored::Stored { .. }
        ));
        assert_eq!(get(&st, "big").unwrap(), big);
        assert!(matches!(
            set(&st, "big", Mode::Append, b"!!", 0),
            Stored::Stored { size: 100_002, .. }
        ));
        assert_eq!(&get(&st, "big").unwrap()[100_000..], b"!!");
        // 1 MiB of heads = 256 slots of 4 KiB: storing 600 split objects must evict.
        for i in 0..600 {
            set(&st, &format!("k{i}"), Mode::Set, &big[..5000], 0);
        }
        assert!(st.stats.evictions.load(Ordering::Relaxed) > 0);
        assert_eq!(get(&st, "k599").unwrap(), &big[..5000]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_lowered_memory_limit_evicts_moves_and_unmaps() {
        let dir = std::env::temp_dir().join(format!("goblin-store-limit-{}", std::process::id()));
        let args = StoreArgs {
            small_memory: Some(4 << 20),
            memory: Some(1 << 20),
            block: Some(256 << 10),
            ram_head: Some(4096),
            ssd_dir: Some(dir.clone()),
            cores: Some(1),
            ..StoreArgs::default()
        };
        let mut cfg = args.resolve().unwrap();
        cfg.shards = 1;
        let st = Store::new(cfg).unwrap();
        let value = |i: usize, len: usize| -> Vec<u8> { (0..len).map(|j| (i + j) as u8).collect() };
        let key = |i: usize| format!("k{i}");
        let fill = |from: usize, to: usize| {
            for i in from..to {
                let len = if i % 5 == 0 { 5000 } else { 2000 };
                set(&st, &key(i), Mode::Set, &value(i, len), 0);
            }
        };
        fill(0, 1200);
        let mapped = |st: &Store| {
            let heads = st.shards[0].lock().unwrap().heads_mapped();
            (st.gauges().arena_mapped, heads)
        };
        let (arena_before, heads_before) = mapped(&st);
        assert!(
            arena_before > 3 << 19 && heads_before > 512 << 10,
            "{arena_before} {heads_before}"
        );
        // A quarter: 1 MiB of arena (4 blocks) and 256 KiB of heads (64 slots, one block).
        assert!(st.set_memory_limit(5 << 18));
        assert_eq!(st.memory_limit(), 5 << 18);
        let (arena_after, heads_after) = mapped(&st);
        assert!(arena_after <= 1 << 20, "{arena_after}");
        assert!(heads_after <= 256 << 10, "{heads_after}");
        assert!(st.stats.evictions.load(Ordering::Relaxed) > 0);
        let mut kept = 0;
        for i in 0..1200 {
            if let Some(v) = get(&st, &key(i)) {
                assert_eq!(v, value(i, v.len()), "{i}");
                kept += 1;
            }
        }
        assert!(kept > 300, "{kept}");
        // Grown again, the store takes as much as before without evicting more.
        assert!(st.set_memory_limit(5 << 20));
        assert!(!st.set_memory_limit(256 << 10), "under one block");
        assert_eq!(st.memory_limit(), 5 << 20);
        let evicted = st.stats.evictions.load(Ordering::Relaxed);
        fill(2000, 2900);
        assert_eq!(st.stats.evictions.load(Ordering::Relaxed), evicted);
        assert!(mapped(&st).0 > 2 << 20);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn laid_out_extents_are_stored_as_they_are() {
        let dir = std::env::temp_dir().join(format!("goblin-store-extent-{}", std::process::id()));
        let st = store(Some(&dir));
        let value: Vec<u8> = (0..70_000u32).map(|i| (i % 253) as u8).collect();
        let (head, tail) = value.split_at(4096);
        let d = Digest::of(b"laid");
        let cas = st.reserve_cas();
        let mut extent = AlignedBuf::new(TAIL_HEADER + tail.len());
        write_tail_header(&mut extent, &d, cas, tail.len());
        extent[TAIL_HEADER..TAIL_HEADER + tail.len()].copy_from_slice(tail);
        let extent = std::sync::Arc::new(extent);
        let r = st.store_extent(
            &d,
            0,
            0,
            head,
            std::sync::Arc::clone(&extent),
            tail.len(),
            cas,
        );
        assert_eq!(r, Stored::Stored { cas, size: 70_000 });
        // The hot-tail cache holds the very buffer, and the pool the same bytes.
        let kept = st.tails.get(&d, cas).unwrap();
        assert!(std::sync::Arc::ptr_eq(&kept, &extent));
        st.tails.clear();
        assert_eq!(get(&st, "laid").unwrap(), value);
        // A head that is not --ram-head bytes long is refused.
        let short = st.store_extent(&d, 0, 0, &head[1..], extent, tail.len(), cas);
        assert_eq!(short, Stored::NoMemory);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn flush_drops_everything() {
        let st = store(None);
        set(&st, "a", Mode::Set, b"1", 0);
        st.flush(0);
        assert!(get(&st, "a").is_none());
        assert_eq!(st.gauges().items, 0);
        // flush consumed a CAS value, as memcached's does.
        assert_eq!(
            set(&st, "a", Mode::Set, b"1", 0),
            Stored::Stored { cas: 3, size: 1 }
        );
    }
}
