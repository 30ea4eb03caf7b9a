//! Request dispatch: turns the requests in a connection's input into response parts. GET
//! and HEAD are served from the store (RAM head, then SSD tail) or from a fill; PURGE drops
//! a path's variants; /goblin/stats answers JSON; anything else is refused.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::conn::{Conn, FillPart, Part, Skip, SPLICE_FROM};
use super::fill::{Fill, Fills, Inflight, Phase};
use super::grace::{self, Revalidation, Standing};
use super::object::{self, Meta, MARKER};
use super::parse::{self, Framing, Method, ParseError, RequestHead};
use super::purge;
use super::respond::{self, Ask, Object, Send, Source};
use super::stats::HttpStats;
use super::tail_stream::TailStream;
use super::variants::Variants;
use super::vary;
use crate::config::HttpConfig;
use crate::store::clock;
use crate::store::Digest;
use crate::store::{Body, Loan, Store};
use crate::store::{BIT_FETCHED, BIT_STALE};

/// Responses queued on one connection before its input is left unread.
const MAX_QUEUED: usize = 32;

/// What every HTTP loop shares.
pub struct Shared {
    /// The object store.
    pub store: Arc<Store>,
    /// Fetches in flight.
    pub fills: Arc<Fills>,
    /// Counters.
    pub stats: Arc<HttpStats>,
    /// The front's configuration.
    pub cfg: HttpConfig,
    /// Wakers of every HTTP loop, by loop id.
    pub wakers: Vec<Arc<mio::Waker>>,
    /// Origin fetch parameters.
    pub limits: super::origin::Limits,
}

/// Handles the complete requests in `conn`'s input. Fetches to start are pushed on
/// `started`; `loop_bit` marks this loop in the fills it joins.
pub fn process(conn: &mut Conn, sh: &Shared, loop_bit: u64, started: &mut Vec<Arc<Fill>>) {
    let mut at = 0;
    while !conn.closing && conn.parts.len() < MAX_QUEUED {
        if !skip_body(conn, &mut at) {
            break;
        }
        let now = clock::unix_now();
        match parse::parse_request(&conn.input[at..]) {
            Ok(None) => break,
            Err(e) => {
                refuse(conn, sh, e, now);
                break;
            }
            Ok(Some(req)) => {
                sh.stats.requests.fetch_add(1, Ordering::Relaxed);
                conn.served = true;
                let mut out = conn.buffer();
                let raw = &conn.input[at..at + req.head_len];
                let ask = ask_of(&req, raw);
                let parts = route(
                    &req, raw, ask, conn.peer, sh, loop_bit, started, &mut out, now,
                );
                if let Err(e) = parts {
                    refuse(conn, sh, e, now);
                    break;
                }
                if !out.is_empty() {
                    conn.push_bytes(out);
                }
                for p in parts.unwrap_or_default() {
                    conn.parts.push_back(p);
                }
                conn.closing |= !req.keep_alive;
                conn.skip = match req.body {
                    Framing::Length(n) => Skip::Bytes(n),
                    Framing::Chunked => Skip::Chunked(parse::ChunkedDecoder::new()),
                    Framing::None | Framing::UntilClose => Skip::None,
                };
                at += req.head_len;
            }
        }
    }
    conn.input.drain(..at);
}

/// Consumes request body bytes; false while more are needed (or the body was malformed,
/// which closes the connection).
fn skip_body(conn: &mut Conn, at: &mut usize) -> bool {
    let avail = conn.input.len() - *at;
    match &mut conn.skip {
        Skip::None => true,
        Skip::Bytes(n) => {
            let take = (*n).min(avail as u64);
            *at += take as usize;
            *n -= take;
            if *n == 0 {
                conn.skip = Skip::None;
            }
            matches!(conn.skip, Skip::None)
        }
        Skip::Chunked(d) => {
            let mut sink = Vec::new();
            match d.decode(&conn.input[*at..], &mut sink) {
                Ok((used, done)) => {
                    *at += used;
                    if done {
                        conn.skip = Skip::None;
                    }
                    done
                }
                Err(_) => {
                    conn.skip = Skip::None;
                    let mut out = Vec::new();
                    respond::closing_error(&mut out, 400, clock::unix_now());
                    conn.push_bytes(out);
                    conn.closing = true;
                    false
                }
            }
        }
    }
}

fn refuse(conn: &mut Conn, sh: &Shared, e: ParseError, now: i64) {
    sh.stats.bad_requests.fetch_add(1, Ordering::Relaxed);
    let mut out = Vec::new();
    respond::closing_error(&mut out, e.status(), now);
    conn.push_bytes(out);
    conn.closing = true;
}

fn ask_of(req: &RequestHead, raw: &[u8]) -> Ask {
    let owned = |name| req.header(raw, name).map(<[u8]>::to_vec);
    Ask {
        head_only: req.method == Method::Head,
        minor: req.minor,
        keep_alive: req.keep_alive,
        range: owned("range"),
        if_none_match: owned("if-none-match"),
        if_modified_since: owned("if-modified-since"),
        if_range: owned("if-range"),
    }
}

#[allow(clippy::too_many_arguments)]
fn route(
    req: &RequestHead,
    raw: &[u8],
    ask: Ask,
    peer: std::net::IpAddr,
    sh: &Shared,
    loop_bit: u64,
    started: &mut Vec<Arc<Fill>>,
    out: &mut Vec<u8>,
    now: i64,
) -> Result<Vec<Part>, ParseError> {
    let path = parse::request_path(&raw[req.target.clone()])?;
    match req.method {
        Method::Get | Method::Head if path == b"/goblin/stats" => {
            let body = stats_json(sh);
            respond::simple(
                out,
                &ask,
                200,
                "application/json",
                "Cache-Control: no-store\r\n",
                body.as_bytes(),
                now,
            );
            Ok(Vec::new())
        }
        Method::Get | Method::Head => {
            let r = Request {
                path,
                head: req,
                raw,
            };
            Ok(get(&r, ask, sh, loop_bit, started, out, now))
        }
        Method::Purge => {
            let (status, n) = if !sh.cfg.purge_allow.contains(&peer) {
                (403, None)
            } else {
                let n = purge::run(sh, &purge::Purge::of(req, raw, path));
                (if n > 0 { 200 } else { 404 }, Some(n))
            };
            match n {
                Some(n) => {
                    let body = format!("purged {n}\n");
                    respond::simple(out, &ask, status, "text/plain", "", body.as_bytes(), now);
                }
                None => respond::error(out, &ask, status, now),
            }
            Ok(Vec::new())
        }
        Method::Other => {
            sh.stats.bad_requests.fetch_add(1, Ordering::Relaxed);
            let body = b"405 Method Not Allowed\n";
            respond::simple(
                out,
                &ask,
                405,
                "text/plain",
                "Allow: GET, HEAD, PURGE\r\n",
                body,
                now,
            );
            Ok(Vec::new())
        }
    }
}

/// What a store lookup found.
enum Lookup {
    Miss,
    /// A marker: the path varies, on these headers.
    Marker(Variants),
    /// Answered (the head and RAM bytes written): fresh, or stale within
    /// stale-while-revalidate, and then the revalidation to start.
    Hit(Vec<Part>, Option<Revalidation>),
    /// Stale past stale-while-revalidate, within stale-if-error: fetch, and answer from it
    /// if the fetch fails.
    Expired(Revalidation),
}

/// A GET or HEAD request for a path.
struct Request<'a> {
    path: &'a [u8],
    head: &'a RequestHead,
    raw: &'a [u8],
}

/// Serves a GET or HEAD: a hit from the store, else a fill (joined or started).
fn get(
    r: &Request<'_>,
    ask: Ask,
    sh: &Shared,
    loop_bit: u64,
    started: &mut Vec<Arc<Fill>>,
    out: &mut Vec<u8>,
    now: i64,
) -> Vec<Part> {
    let (found, fetch) = find(sh, r, &ask, out, now);
    let fetch = match found {
        Lookup::Hit(parts, reval) => {
            hit(sh, r, fetch, reval, &mut sh.fills.inflight(), started);
            return parts;
        }
        _ => fetch.unwrap_or_else(|| r.fetch(matches!(found, Lookup::Miss))),
    };
    let mut table = sh.fills.inflight();
    let (fill, source) = match table.get(&fetch.key.0) {
        Some(f) => (Arc::clone(f), Source::Hit),
        None => {
            // The fill may have been admitted between the lookup and the lock.
            let (found, again) = find(sh, r, &ask, out, now);
            let reval = match found {
                Lookup::Hit(parts, reval) => {
                    hit(sh, r, again, reval, &mut table, started);
                    return parts;
                }
                Lookup::Expired(rv) => Some(rv),
                Lookup::Miss | Lookup::Marker(_) => None,
            };
            let fetch = again.unwrap_or_else(|| r.fetch(reval.is_none()));
            match table.get(&fetch.key.0) {
                Some(f) => (Arc::clone(f), Source::Hit),
                None => {
                    let counter = match reval {
                        Some(_) => &sh.stats.revalidations,
                        None => &sh.stats.misses,
                    };
                    counter.fetch_add(1, Ordering::Relaxed);
                    let room = sh.store.tails.has_room();
                    let f = Fills::start(&mut table, fetch.key, r.path, fetch.forward, reval, room);
                    started.push(Arc::clone(&f));
                    (f, Source::Miss)
                }
            }
        }
    };
    drop(table);
    if source == Source::Hit {
        sh.stats.hits.fetch_add(1, Ordering::Relaxed);
        sh.stats.joined.fetch_add(1, Ordering::Relaxed);
    }
    fill.lock().loops |= loop_bit;
    vec![Part::Fill(FillPart {
        fill,
        ask,
        source,
        head: None,
        range: 0..0,
        chunking: None,
    })]
}

/// A hit answered: counted, and a stale one's revalidation started unless a fetch of its
/// key runs already.
fn hit(
    sh: &Shared,
    r: &Request<'_>,
    fetch: Option<Fetch>,
    reval: Option<Revalidation>,
    table: &mut Inflight<'_>,
    started: &mut Vec<Arc<Fill>>,
) {
    let Some(reval) = reval else {
        sh.stats.hits.fetch_add(1, Ordering::Relaxed);
        return;
    };
    sh.stats.stale_hits.fetch_add(1, Ordering::Relaxed);
    let fetch = fetch.unwrap_or_else(|| r.fetch(false));
    if !table.contains_key(&fetch.key.0) {
        sh.stats.revalidations.fetch_add(1, Ordering::Relaxed);
        let room = sh.store.tails.has_room();
        let fill = Fills::start(table, fetch.key, r.path, fetch.forward, Some(reval), room);
        started.push(fill);
    }
}

/// Looks the request's path up: its object, or behind a marker the variant its headers
/// select, and then also the fetch of that variant (the fetch of a plain path is made only
/// when needed, with [`Request::fetch`]).
fn find(
    sh: &Shared,
    r: &Request<'_>,
    ask: &Ask,
    out: &mut Vec<u8>,
    now: i64,
) -> (Lookup, Option<Fetch>) {
    match lookup(&sh.store, &object::key(r.path), ask, out, now, None) {
        Lookup::Marker(v) => {
            let forward = vary::forward(r.head, r.raw, Some(&v.names));
            let key = vary::variant_key(r.path, &v.names, &forward);
            let found = match lookup(&sh.store, &key, ask, out, now, None) {
                Lookup::Marker(_) => Lookup::Miss,
                found => found,
            };
            (found, Some(Fetch { key, forward }))
        }
        found => (found, None),
    }
}

/// The fetch a request would start: its in-flight key and forwarded headers.
struct Fetch {
    key: Digest,
    forward: Vec<u8>,
}

impl Request<'_> {
    /// The fetch of a path with no marker: with everything forwardable forwarded, under the
    /// first-contact key on a `miss`, else (revalidating the stored object) the plain key.
    fn fetch(&self, miss: bool) -> Fetch {
        let forward = vary::forward(self.head, self.raw, None);
        let key = match miss {
            true => vary::first_contact_key(self.path, &forward),
            false => object::key(self.path),
        };
        Fetch { key, forward }
    }
}

/// Replaces the fill part at the front of `conn`'s queue by the stored object it
/// revalidated: the origin confirmed it (`X-Cache: HIT`) or failed within stale-if-error
/// (`HIT-STALE`). An object gone meanwhile gets the fetch's error status.
pub fn serve_stored(conn: &mut Conn, sh: &Shared) {
    let Some(Part::Fill(f)) = conn.parts.pop_front() else {
        return;
    };
    let now = clock::unix_now();
    let (failed, status) = {
        let st = f.fill.lock();
        (st.phase == Phase::Failed, st.error_status)
    };
    let source = if failed { Source::Stale } else { Source::Hit };
    let mut out = conn.buffer();
    let found = f
        .fill
        .revalidate
        .as_ref()
        .map(|r| lookup(&sh.store, &r.target, &f.ask, &mut out, now, Some(source)));
    let parts = match found {
        Some(Lookup::Hit(parts, _)) => {
            if failed {
                sh.stats.stale_errors.fetch_add(1, Ordering::Relaxed);
            }
            parts
        }
        _ => {
            out.clear();
            respond::error(&mut out, &f.ask, if failed { status } else { 502 }, now);
            Vec::new()
        }
    };
    for p in parts.into_iter().rev() {
        conn.parts.push_front(p);
    }
    conn.parts.push_front(Part::Bytes(out));
}

/// Looks `digest` up and, on a hit, writes the response head and the RAM-resident body
/// bytes to `out` (or, from 16 KiB on when the store lends, returns them as a part to
/// splice), returning the tail part if the range reaches the SSD tail. With
/// `forced`, the object is answered as that source whatever its freshness (the fetch that
/// revalidated it is over).
fn lookup(
    store: &Arc<Store>,
    digest: &Digest,
    ask: &Ask,
    out: &mut Vec<u8>,
    now: i64,
    forced: Option<Source>,
) -> Lookup {
    let written = out.len();
    // RAM bytes to lend rather than copy: their range, and the version's CAS.
    let mut lend = None;
    let lendable = store.lends();
    let found = store.lookup(digest, true, |e, body| {
        let (ram, tail) = match body {
            Body::Whole(b) => (b, None),
            Body::Split { head, tail } => (head, Some(tail)),
        };
        let meta = Meta::parse(ram)?;
        if meta.flags & MARKER != 0 {
            return Variants::parse(ram).map(Lookup::Marker);
        }
        let standing = grace::standing(&meta, e.exptime, e.bits & BIT_STALE != 0, clock::now());
        let reval = |serve_on_error| Revalidation {
            target: *digest,
            cas: e.cas,
            status: meta.status,
            headers: meta.headers(ram).to_vec(),
            serve_on_error,
        };
        let (source, reval) = match (forced, standing) {
            (Some(source), _) => (source, None),
            (None, Standing::Fresh) => (Source::Hit, None),
            (None, Standing::Revalidate { on_error }) => (Source::Stale, Some(reval(on_error))),
            (None, Standing::OnErrorOnly) => return Some(Lookup::Expired(reval(true))),
            (None, Standing::Gone) => return Some(Lookup::Miss),
        };
        let start = meta.body_start();
        let body_len = u64::from(e.size) - start as u64;
        let age = u64::from(meta.age) + (now - meta.stored_at).max(0) as u64;
        let obj = Object {
            status: meta.status,
            headers: meta.headers(ram),
            body_len: Some(body_len),
            age,
            source,
        };
        let r = match respond::object_head(out, ask, &obj, now).1 {
            Send::Bytes(r) => r,
            Send::Chunked => unreachable!("a stored object has a length"),
        };
        let (from, to) = (start + r.start as usize, start + r.end as usize);
        let in_ram = from.min(ram.len())..to.min(ram.len());
        if lendable && in_ram.len() >= SPLICE_FROM {
            lend = Some((in_ram, e.cas));
        } else {
            out.extend_from_slice(&ram[in_ram]);
        }
        let mut parts = Vec::new();
        if let Some(tail) = tail.filter(|_| to > ram.len()) {
            let head_len = ram.len();
            parts.push(Part::Tail(TailStream::new(
                tail,
                from.max(head_len) - head_len..to - head_len,
                store.config().io_chunk as usize,
                e.bits & BIT_FETCHED != 0,
                store.tails.get(&tail.digest, tail.cas),
            )));
        }
        Some(Lookup::Hit(parts, reval))
    });
    let mut found = found.flatten().unwrap_or(Lookup::Miss);
    if let Lookup::Hit(parts, _) = &mut found {
        // The shard lock is free again: lend the head bytes to send and pin the extent a
        // stream reads. An object replaced in between is a miss after all.
        let lent = match lend {
            Some((range, cas)) => Loan::take(store, digest, cas, range).map(|loan| {
                parts.insert(0, Part::Lent(loan));
            }),
            None => Some(()),
        };
        let pinned = parts.iter_mut().all(|p| match p {
            Part::Tail(t) => !t.reads() || t.pin(store),
            _ => true,
        });
        if lent.is_none() || !pinned {
            out.truncate(written);
            return Lookup::Miss;
        }
    }
    found
}

fn stats_json(sh: &Shared) -> String {
    let mut s = String::from("{");
    for (i, (k, v)) in sh.stats.counters().iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!("\"{k}\":{v}"));
    }
    s.push_str(",\"store\":{");
    for (i, (k, v)) in crate::store::general_stats(&sh.store).iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let quoted = v.parse::<f64>().is_err();
        if quoted {
            s.push_str(&format!("\"{k}\":\"{v}\""));
        } else {
            s.push_str(&format!("\"{k}\":{v}"));
        }
    }
    s.push_str("}}\n");
    s
}
