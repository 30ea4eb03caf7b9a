//! Origin fetches in progress. A [`Fill`] is shared by every request that misses on its key
//! while it runs: the fetching loop appends the origin's bytes to the fill's value (laid out
//! as a stored object, see [`super::object`]) and wakes the loops whose clients read it; each
//! client streams from the value at its own pace. When the body is complete and the response
//! is cacheable, the admission thread stores the value and only then drops the fill from the
//! in-flight table, so a request always finds the object in the store or in the table.
//! Admission runs on its own threads; while their backlog is over a limit the loops stop
//! reading from the origin, so fills arrive no faster than the pool takes them.
//!
//! A value that the store will split (its length declared, at least --ram-head bytes, at
//! most --max-item-size) is laid out as it will be stored from its first byte: the RAM
//! head's share in a vector, the rest straight in the buffer of its SSD extent, after the
//! extent header's room. Once the body is complete the header is written there, and
//! admission writes that buffer to the pool and hands it to the hot-tail cache as it is:
//! the body is copied once on the way in, not again into a staging extent.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, MutexGuard};

use super::grace::{self, Revalidation};
use super::object::{self, header_value, lists_token, Meta};
use super::object::{META_LEN, VARIES};
use super::origin::Limits;
use super::parse::ResponseHead;
use super::policy;
use super::purge;
use super::stats::HttpStats;
use super::{variants, vary};
use crate::store::clock;
use crate::store::{write_tail_header, AlignedBuf, Digest, TAIL_HEADER};
use crate::store::{KeyNote, Mode, Store, Stored};

/// Where a fetch stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// No response head yet.
    Waiting,
    /// The head arrived; the body is coming in.
    Streaming,
    /// The whole body arrived.
    Done,
    /// The fetch failed (the waiters not yet sent a head get `error_status`).
    Failed,
}

/// Hop-by-hop and per-response headers that are not stored with an object.
const NOT_STORED: [&str; 13] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "proxy-authenticate",
    "proxy-authorization",
    "content-length",
    "date",
    "age",
    "accept-ranges",
];

/// The state of a fetch, behind the fill's lock.
pub struct FillState {
    /// Progress.
    pub phase: Phase,
    /// 502 or 504 for the waiters not yet sent a head when the fetch failed.
    pub error_status: u16,
    /// Meta, header block and the body received so far (of a split value, its first
    /// `split` bytes).
    value: Vec<u8>,
    /// The complete value (of a split value, its head), moved here when the fetch is done
    /// so that admission shares it.
    complete: Option<Arc<Vec<u8>>>,
    /// Of a split value, the bytes after the head, in their extent.
    tail: Option<TailFill>,
    /// The meta, once the head arrived.
    pub meta: Option<Meta>,
    /// Body length when the origin declared it (always known once done).
    pub body_len: Option<u64>,
    /// Time to live, or `None` when the response must not be cached.
    pub ttl: Option<u64>,
    /// Bit `i` set: event loop `i` has clients reading this fill.
    pub loops: u64,
    /// The origin answered the revalidation with 304: the waiters are served the stored
    /// object, which admission refreshes.
    pub refreshed: bool,
}

/// The tail of a split value as it arrives: its extent, `len` bytes in after the header's
/// room, the value's bytes from `split` on. The extent is shared (with admission) only once
/// it is sealed: its header written under the CAS value `sealed`.
struct TailFill {
    extent: Arc<AlignedBuf>,
    split: usize,
    len: usize,
    sealed: Option<u64>,
}

impl TailFill {
    fn extent_mut(&mut self) -> &mut AlignedBuf {
        Arc::get_mut(&mut self.extent).expect("an extent is not shared before it is sealed")
    }
}

impl FillState {
    /// A fetch not started yet: no head, no bytes.
    fn waiting() -> Self {
        FillState {
            phase: Phase::Waiting,
            error_status: 502,
            value: Vec::new(),
            complete: None,
            tail: None,
            meta: None,
            body_len: None,
            ttl: None,
            loops: 0,
            refreshed: false,
        }
    }

    /// The value's first bytes: meta, header block and the body up to the split (all of it
    /// when the value is not split).
    pub fn head(&self) -> &[u8] {
        self.complete.as_deref().unwrap_or(&self.value)
    }

    /// Bytes of the value so far.
    pub fn len(&self) -> usize {
        self.head().len() + self.tail.as_ref().map_or(0, |t| t.len)
    }

    /// True before the meta arrived.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes `from..to` of the value so far, or their first part when they straddle the
    /// split (`to` is capped at what arrived).
    pub fn slice(&self, from: usize, to: usize) -> &[u8] {
        let head = self.head();
        if from < head.len() {
            return &head[from..to.min(head.len())];
        }
        let Some(t) = &self.tail else {
            return &[];
        };
        let at = |i: usize| TAIL_HEADER + i.min(t.split + t.len) - t.split;
        &t.extent[at(from)..at(to.max(from))]
    }

    /// True when the value's bytes from `at` on lie in a tail extent whose pages are its
    /// own: they never change once received, so they may be spliced (see
    /// [`super::splice`]); the bytes after them, written later, share no byte with them.
    pub fn spliceable_from(&self, at: usize) -> bool {
        at >= self.head().len() && self.tail.as_ref().is_some_and(|t| t.extent.owns_pages())
    }

    /// Body bytes received so far.
    pub fn body_received(&self) -> usize {
        self.meta
            .map_or(0, |m| self.len().saturating_sub(m.body_start()))
    }

    /// Appends body bytes (past the declared length of a split value, they are dropped:
    /// the origin's reader never passes them).
    pub fn append(&mut self, mut bytes: &[u8]) {
        if let Some(t) = self.tail.as_mut() {
            let to_head = (t.split - self.value.len()).min(bytes.len());
            self.value.extend_from_slice(&bytes[..to_head]);
            bytes = &bytes[to_head..];
            let at = TAIL_HEADER + t.len;
            let extent = t.extent_mut();
            let n = bytes.len().min(extent.len() - at);
            extent[at..at + n].copy_from_slice(&bytes[..n]);
            t.len += n;
            return;
        }
        self.value.extend_from_slice(bytes);
    }

    /// The value, for decoders that append to it (a body of unknown length, never split).
    pub fn growing(&mut self) -> &mut Vec<u8> {
        debug_assert!(self.tail.is_none());
        &mut self.value
    }

    /// Marks the body complete.
    pub fn finish(&mut self) {
        self.body_len = Some(self.body_received() as u64);
        self.complete = Some(Arc::new(std::mem::take(&mut self.value)));
        self.phase = Phase::Done;
    }

    /// True when the value is split and its tail arrives in its extent.
    fn splits(&self) -> bool {
        self.tail.is_some()
    }

    /// Writes the extent header of a complete split value to be stored under `digest`
    /// with `cas`; from then on the extent may be shared.
    fn seal(&mut self, digest: &Digest, cas: u64) {
        if let Some(t) = self.tail.as_mut() {
            let len = t.len;
            write_tail_header(t.extent_mut(), digest, cas, len);
            t.sealed = Some(cas);
        }
    }

    /// The sealed extent of a split value, its tail length and CAS value.
    fn sealed(&self) -> Option<(Arc<AlignedBuf>, usize, u64)> {
        let t = self.tail.as_ref()?;
        Some((Arc::clone(&t.extent), t.len, t.sealed?))
    }

    /// Takes the origin's response head: keeps its end-to-end headers and decides whether
    /// and for how long the object may be cached (the meta and header block must fit in
    /// `limits.max_headers`, a RAM head). A 304 answering the revalidation `reval` makes
    /// the refreshed object's meta and header block, without a body: admission puts the
    /// stored body behind them.
    pub fn begin(
        &mut self,
        head: &ResponseHead,
        raw: &[u8],
        reval: Option<&Revalidation>,
        limits: &Limits,
        carve_tail: bool,
    ) {
        let now = clock::unix_now();
        let mut block = Vec::with_capacity(head.head_len);
        let connection_tokens = head.header(raw, "connection").unwrap_or_default();
        for h in &head.headers {
            let name = &raw[h.name.clone()];
            let dropped = NOT_STORED
                .iter()
                .any(|n| name.eq_ignore_ascii_case(n.as_bytes()))
                || std::str::from_utf8(name).is_ok_and(|n| lists_token(connection_tokens, n));
            if !dropped {
                block.extend_from_slice(name);
                block.extend_from_slice(b": ");
                block.extend_from_slice(&raw[h.value.clone()]);
                block.extend_from_slice(b"\r\n");
            }
        }
        let mut status = head.status;
        if let Some(r) = reval.filter(|_| head.status == 304) {
            status = r.status;
            block = grace::refreshed_headers(&r.headers, &block);
            self.refreshed = true;
        }
        let cache_control = header_value(&block, "cache-control");
        let mut ttl = policy::cache_ttl(
            status,
            cache_control,
            header_value(&block, "expires"),
            head.header(raw, "date"),
            header_value(&block, "set-cookie").is_some(),
            now,
            limits.default_ttl,
        );
        let flags = match vary::names(&block) {
            Some(names) if names.is_empty() => 0,
            Some(_) => VARIES,
            None => {
                ttl = None;
                0
            }
        };
        if META_LEN + block.len() > limits.max_headers {
            ttl = None;
        }
        let age = head
            .header(raw, "age")
            .and_then(|a| std::str::from_utf8(a).ok()?.parse::<u32>().ok())
            .unwrap_or(0);
        let (swr, sie) = policy::stale_windows(cache_control, limits.grace);
        let meta = Meta {
            status,
            flags,
            stored_at: now,
            age,
            headers_len: block.len() as u32,
            ttl: ttl.unwrap_or(0).min(u64::from(u32::MAX) / 4) as u32,
            swr,
            sie,
        };
        self.value.resize(META_LEN, 0);
        meta.write(&mut self.value);
        self.value.extend_from_slice(&block);
        self.meta = Some(meta);
        self.ttl = ttl;
        self.body_len = match head.body {
            super::parse::Framing::Length(n) => Some(n),
            super::parse::Framing::None => Some(0),
            _ => None,
        };
        let total = self.body_len.map(|n| n + self.value.len() as u64);
        match (total, limits.split_at) {
            (Some(total), Some(split))
                if total >= split as u64
                    && total <= limits.max_item
                    && split >= self.value.len() =>
            {
                self.value.reserve(split - self.value.len());
                let tail_len = total as usize - split;
                let extent_len = TAIL_HEADER + tail_len;
                self.tail = Some(TailFill {
                    extent: Arc::new(if carve_tail {
                        AlignedBuf::carved(extent_len)
                    } else {
                        AlignedBuf::new(extent_len)
                    }),
                    split,
                    len: 0,
                    sealed: None,
                });
            }
            (Some(total), _) => self.value.reserve(total.min(64 << 20) as usize),
            (None, _) => {}
        }
        self.phase = Phase::Streaming;
    }
}

/// One origin fetch.
pub struct Fill {
    /// The variant key the fetch is registered under.
    pub key: Digest,
    /// Path and query fetched.
    pub path: Vec<u8>,
    /// The request headers forwarded to the origin, a [`vary::forward`] block.
    pub forward: Vec<u8>,
    /// The stale object this fetch revalidates, if any.
    pub revalidate: Option<Revalidation>,
    /// The tail, if the value is split, goes in a carved buffer (`AlignedBuf::carved`): the
    /// hot-tail cache had room when the fetch started, so it will likely be kept.
    carve_tail: bool,
    /// The strongest purge that reached this fetch before it was admitted (0,
    /// [`PURGE_SOFT`] or [`PURGE_HARD`]; see [`super::purge`]).
    purge: AtomicU8,
    state: Mutex<FillState>,
}

/// A soft purge reached a fetch: what admission stores is marked stale.
pub const PURGE_SOFT: u8 = 1;
/// A hard purge reached a fetch: admission drops it.
pub const PURGE_HARD: u8 = 2;

impl Fill {
    /// The state.
    pub fn lock(&self) -> MutexGuard<'_, FillState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the origin's response head (see [`FillState::begin`]).
    pub fn begin(&self, head: &ResponseHead, raw: &[u8], limits: &Limits) {
        self.lock()
            .begin(head, raw, self.revalidate.as_ref(), limits, self.carve_tail);
    }

    /// True when a response with this status ends the fetch as a failure that leaves the
    /// stale object serving (a 5xx within stale-if-error).
    pub fn fails_over(&self, status: u16) -> bool {
        status >= 500 && self.revalidate.as_ref().is_some_and(|r| r.serve_on_error)
    }

    /// True when the waiters are to be answered from the stored object instead: the
    /// origin confirmed it (304), or failed within stale-if-error. `st` is this fill's
    /// locked state.
    pub fn serves_stored(&self, st: &FillState) -> bool {
        match st.phase {
            Phase::Done => st.refreshed,
            Phase::Failed => {
                st.meta.is_none() && self.revalidate.as_ref().is_some_and(|r| r.serve_on_error)
            }
            Phase::Waiting | Phase::Streaming => false,
        }
    }
}

/// Threads storing finished fills: pool writes run side by side.
const ADMITTERS: usize = 4;

/// Bytes of finished fills waiting for admission above which the loops stop reading from
/// the origin, so that a population faster than the pool writes cannot pile up in RAM.
const BACKLOG_LIMIT: u64 = 64 << 20;

/// The in-flight table and the admission threads, shared by the HTTP event loops.
pub struct Fills {
    store: Arc<Store>,
    inflight: Mutex<HashMap<[u8; 32], Arc<Fill>>>,
    admit: Mutex<Sender<Arc<Fill>>>,
    stats: Arc<HttpStats>,
    backlog: AtomicU64,
    wakers: Vec<Arc<mio::Waker>>,
    /// Store clock second of the last "not cached: too large" log line (0: none yet).
    too_large_logged: AtomicU64,
}

/// The in-flight table, locked: a request looks a key up and starts a fetch under one lock.
pub type Inflight<'a> = MutexGuard<'a, HashMap<[u8; 32], Arc<Fill>>>;

impl Fills {
    /// An empty table and its admission threads; `wakers` wake the HTTP loops when the
    /// admission backlog drains.
    pub fn new(
        store: Arc<Store>,
        stats: Arc<HttpStats>,
        wakers: Vec<Arc<mio::Waker>>,
    ) -> std::io::Result<Arc<Fills>> {
        let (tx, rx) = mpsc::channel::<Arc<Fill>>();
        let fills = Arc::new(Fills {
            store: Arc::clone(&store),
            inflight: Mutex::new(HashMap::new()),
            admit: Mutex::new(tx),
            stats,
            backlog: AtomicU64::new(0),
            wakers,
            too_large_logged: AtomicU64::new(0),
        });
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..ADMITTERS {
            let weak = Arc::downgrade(&fills);
            let (rx, store) = (Arc::clone(&rx), Arc::clone(&store));
            std::thread::Builder::new()
                .name(format!("goblin-http-admit-{i}"))
                .spawn(move || loop {
                    let next = rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
                    let (Ok(fill), Some(fills)) = (next, weak.upgrade()) else {
                        return;
                    };
                    fills.admit(&store, &fill);
                })?;
        }
        Ok(fills)
    }

    /// True while finished fills wait for admission beyond the limit: origin reads pause.
    pub fn backlogged(&self) -> bool {
        self.backlog.load(Ordering::Relaxed) > BACKLOG_LIMIT
    }

    /// Locks the in-flight table.
    pub fn inflight(&self) -> Inflight<'_> {
        self.inflight.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a new fetch of `path` forwarding the headers `forward` under the in-flight
    /// key `key` (a variant key, the plain key, or a first-contact key, see [`vary`]) in a
    /// locked table; `revalidate` names the stale object it revalidates; `carve_tail`: the
    /// hot-tail cache has room (see [`Fill`]).
    pub fn start(
        table: &mut Inflight<'_>,
        key: Digest,
        path: &[u8],
        forward: Vec<u8>,
        revalidate: Option<Revalidation>,
        carve_tail: bool,
    ) -> Arc<Fill> {
        let fill = Arc::new(Fill {
            key,
            path: path.to_vec(),
            forward,
            revalidate,
            carve_tail,
            purge: AtomicU8::new(0),
            state: Mutex::new(FillState::waiting()),
        });
        table.insert(key.0, Arc::clone(&fill));
        fill
    }

    /// Called by the fetching loop once a fill is done or failed: a complete cacheable
    /// object goes to the admission thread (a split one with its extent sealed under the
    /// key and a CAS value it will be stored with); anything else leaves the table now.
    pub fn finish(&self, fill: &Arc<Fill>) {
        let (done, cacheable, len) = {
            let mut st = fill.lock();
            let done = st.phase == Phase::Done;
            let cacheable = done && st.ttl.is_some();
            if cacheable && st.splits() {
                let meta = st.meta.expect("a done fill has a head");
                let target = self.target(fill, meta, st.head(), st.refreshed);
                st.seal(&target, self.store.reserve_cas());
            }
            (done, cacheable, st.len() as u64)
        };
        if cacheable {
            self.backlog.fetch_add(len, Ordering::Relaxed);
            let sent = self
                .admit
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .send(Arc::clone(fill));
            if sent.is_ok() {
                return;
            }
            self.backlog.fetch_sub(len, Ordering::Relaxed);
        } else if done {
            self.stats.passes.fetch_add(1, Ordering::Relaxed);
        }
        self.forget(fill);
    }

    /// Marks the fetches `hits` picks with purge `level` and drops them from the table, so
    /// later requests fetch anew instead of joining them: a joiner is served as a hit, and
    /// what either purge reached is no longer fresh. Returns how many of them hold a
    /// complete object waiting for admission.
    pub fn mark_purged(&self, hits: impl Fn(&Fill) -> bool, level: u8) -> u64 {
        let mut table = self.inflight();
        let mut pending = 0;
        table.retain(|_, f| {
            if !hits(f) {
                return true;
            }
            f.purge.fetch_max(level, Ordering::SeqCst);
            let st = f.lock();
            pending += u64::from(st.phase == Phase::Done && st.ttl.is_some());
            false
        });
        pending
    }

    fn forget(&self, fill: &Arc<Fill>) {
        let mut table = self.inflight();
        if table.get(&fill.key.0).is_some_and(|f| Arc::ptr_eq(f, fill)) {
            table.remove(&fill.key.0);
        }
    }

    /// Stores a finished fill (under its variant key, recorded in the marker under the plain
    /// key, when it varies; a refreshed one over the object it revalidated), then drops it
    /// from the table.
    fn admit(&self, store: &Store, fill: &Arc<Fill>) {
        // The complete value is shared, so the pool write runs without the fill's lock,
        // which readers on other loops take for every send.
        let (meta, exptime, complete, refreshed, sealed) = {
            let st = fill.lock();
            let meta = st.meta.expect("a done fill has a head");
            let keep = u64::from(meta.ttl) + u64::from(meta.stale_window());
            let keep = keep.min(u64::from(u32::MAX) / 2) as u32;
            let complete = st.complete.clone().expect("a done fill is complete");
            (
                meta,
                clock::now().saturating_add(keep),
                complete,
                st.refreshed,
                st.sealed(),
            )
        };
        let len = (complete.len() + sealed.as_ref().map_or(0, |s| s.1)) as u64;
        // Without an SSD pool every object lives whole in the arena, up to a block (with
        // one, larger objects are split and have no limit but their 32-bit size).
        let limit = store.max_whole_len();
        let over_limit = store.config().ssd_dir.is_none() && len > limit;
        let r = match (&fill.revalidate, refreshed) {
            _ if fill.purge.load(Ordering::SeqCst) == PURGE_HARD => Stored::NotStored,
            (_, false) if over_limit => {
                self.too_large(&fill.path, len, limit);
                Stored::NotStored
            }
            (Some(reval), true) => self.refresh(store, reval, &complete, exptime, meta),
            _ => self.store_new(store, fill, &complete, sealed, exptime, meta),
        };
        if let Stored::Stored { cas, .. } = r {
            let target = self.target(fill, meta, &complete, refreshed);
            let tags = purge::object_tags(&fill.path, meta.headers(&complete));
            store.tag(&target, cas, &tags);
            // A purge that marked the fill after the check above missed the store's copy.
            match fill.purge.load(Ordering::SeqCst) {
                PURGE_HARD => {
                    store.delete(&target, cas);
                }
                PURGE_SOFT => {
                    store.lookup(&target, false, |e, _| purge::soften(e));
                }
                _ => {}
            }
        }
        let counter = match r {
            Stored::Stored { .. } => &self.stats.admitted,
            _ => &self.stats.not_admitted,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        self.forget(fill);
        let before = self.backlog.fetch_sub(len, Ordering::Relaxed);
        if before > BACKLOG_LIMIT && before - len <= BACKLOG_LIMIT {
            for w in &self.wakers {
                let _ = w.wake();
            }
        }
    }

    /// Counts an object too large for the RAM arena (without --ssd-dir), served but not
    /// cached, and logs it, at most
    /// one line a minute (with the count so far), so that the limit does not act unseen.
    fn too_large(&self, path: &[u8], len: u64, limit: u64) {
        let n = self.stats.too_large.fetch_add(1, Ordering::Relaxed) + 1;
        let now = u64::from(clock::now()).max(1);
        let last = self.too_large_logged.load(Ordering::Relaxed);
        let due = last == 0 || now >= last + 60;
        if due
            && self
                .too_large_logged
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            crate::store_log!(
                Warning,
                "HTTP object {} ({len} bytes with its headers) not cached: over the RAM arena's \
                 {limit} bytes (a --block less its header; --ssd-dir has no such limit); {n} such \
                 object(s) so far",
                String::from_utf8_lossy(path)
            );
        }
    }

    /// The store key of a fill's object with `meta` at the start of `value`: the
    /// revalidated object's when the origin confirmed it (`refreshed`), the variant key of
    /// the forwarded headers when it varies, else the plain key.
    fn target(&self, fill: &Fill, meta: Meta, value: &[u8], refreshed: bool) -> Digest {
        match &fill.revalidate {
            Some(r) if refreshed => r.target,
            _ if meta.flags & VARIES != 0 => {
                let names = vary::names(meta.headers(value)).unwrap_or_default();
                vary::variant_key(&fill.path, &names, &fill.forward)
            }
            _ => object::key(&fill.path),
        }
    }

    /// Stores a fetched object: `value`, or when `sealed` holds its tail's extent (with
    /// the tail's length and the CAS value it was sealed with), `value` is its head.
    fn store_new(
        &self,
        store: &Store,
        fill: &Fill,
        value: &[u8],
        sealed: Option<(Arc<AlignedBuf>, usize, u64)>,
        exptime: u32,
        meta: Meta,
    ) -> Stored {
        let plain = object::key(&fill.path);
        let target = self.target(fill, meta, value, false);
        // Entry sizes are 32-bit: a larger object is served to its readers but not kept.
        // HTTP objects are keyed by digest alone: no key length is recorded for them. The
        // client flags hold the stale window (see `object`).
        let none = KeyNote::default();
        let window = meta.stale_window();
        if meta.flags & VARIES == 0 {
            // The path no longer varies: the variants a marker there lists go before the
            // object replaces it.
            variants::forget(store, &plain);
        }
        let r = match sealed {
            Some((extent, tail_len, cas)) => {
                store.store_extent(&target, window, exptime, value, extent, tail_len, cas)
            }
            None if u32::try_from(value.len()).is_ok() => {
                store.store(&target, none, Mode::Set, window, exptime, value, 0, false)
            }
            None => Stored::NoMemory,
        };
        if meta.flags & VARIES != 0 && matches!(r, Stored::Stored { .. }) {
            let names = vary::names(meta.headers(value)).unwrap_or_default();
            variants::record(store, &plain, &names, target, exptime);
        }
        r
    }

    /// Refreshes a revalidated object: the 304's meta and header block (`head`) before the
    /// stored body, stored only over the version that was revalidated. The body is read
    /// back from the store (the tail with a blocking read, on this admission thread).
    fn refresh(
        &self,
        store: &Store,
        reval: &Revalidation,
        head: &[u8],
        exptime: u32,
        meta: Meta,
    ) -> Stored {
        let Some((cas, old)) = store.read(&reval.target) else {
            return Stored::NotFound;
        };
        let Some(old_meta) = Meta::parse(&old).filter(|_| cas == reval.cas) else {
            return Stored::Exists;
        };
        let mut value = Vec::with_capacity(head.len() + old.len() - old_meta.body_start());
        value.extend_from_slice(head);
        value.extend_from_slice(&old[old_meta.body_start()..]);
        let window = meta.stale_window();
        let none = KeyNote::default();
        let r = store.store(
            &reval.target,
            none,
            Mode::Cas,
            window,
            exptime,
            &value,
            cas,
            false,
        );
        if matches!(r, Stored::Stored { .. }) {
            self.stats.refreshes.fetch_add(1, Ordering::Relaxed);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn limits(split_at: Option<usize>) -> Limits {
        Limits {
            default_ttl: 60,
            grace: 0,
            max_headers: 4096,
            timeout: Duration::from_secs(1),
            split_at,
            max_item: 1 << 20,
        }
    }

    /// A fill of `body` through `limits`, appended in uneven pieces; a split value's tail
    /// carved when `carve_tail`.
    fn filled(body: &[u8], limits: &Limits, carve_tail: bool) -> FillState {
        let raw = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
        let head = super::super::parse::parse_response(raw.as_bytes(), false)
            .unwrap()
            .unwrap();
        let mut st = FillState::waiting();
        st.begin(&head, raw.as_bytes(), None, limits, carve_tail);
        for piece in body.chunks(7777) {
            st.append(piece);
        }
        st.finish();
        st
    }

    /// The value as the readers see it, in the pieces [`FillState::slice`] gives.
    fn read_back(st: &FillState) -> Vec<u8> {
        let mut out = Vec::new();
        while out.len() < st.len() {
            out.extend_from_slice(st.slice(out.len(), st.len()));
        }
        out
    }

    #[test]
    fn split_values_fill_their_extent_and_read_back_whole() {
        let body: Vec<u8> = (0..50_000u32).map(|i| (i % 249) as u8).collect();
        let plain = filled(&body, &limits(None), false);
        assert!(!plain.splits());
        let mut split = filled(&body, &limits(Some(4096)), true);
        assert!(split.splits());
        assert_eq!(split.head().len(), 4096);
        assert_eq!(split.len(), plain.len());
        assert_eq!(split.body_received(), body.len());
        assert_eq!(read_back(&split), read_back(&plain));
        assert_eq!(
            split.slice(4000, 5000).len(),
            96,
            "a read stops at the split"
        );
        assert!(split.spliceable_from(4096), "the tail's pages are its own");
        assert!(!split.spliceable_from(4095), "the head is not");
        assert!(!plain.spliceable_from(4096), "nor a value not split");

        assert!(split.sealed().is_none(), "not shared before it is sealed");
        let d = Digest::of(b"/x");
        split.seal(&d, 9);
        let (extent, tail_len, cas) = split.sealed().unwrap();
        assert_eq!((tail_len, cas), (split.len() - 4096, 9));
        let tail = crate::store::TailRef {
            fd: -1,
            offset: 0,
            extent_len: extent.len(),
            tail_len,
            digest: d,
            cas,
        };
        assert_eq!(tail.verify(&extent), Some(&read_back(&plain)[4096..]));
        assert_eq!(read_back(&split), read_back(&plain));
    }

    #[test]
    fn values_beyond_the_item_size_or_below_the_head_are_not_split() {
        let l = Limits {
            max_item: 10_000,
            ..limits(Some(4096))
        };
        assert!(!filled(&[1; 20_000], &l, false).splits());
        assert!(!filled(&[1; 100], &l, false).splits());
    }
}
