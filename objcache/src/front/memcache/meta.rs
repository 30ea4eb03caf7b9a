//! The meta commands mg, ms, md, ma, mn and me, with memcached 1.6.18's flags, reply codes
//! (HD, VA, EN, NS, EX, NF, MN, ME), return-flag order (the request's) and error strings.

use std::fmt::Write as _;

use super::exec::{
    count_arith_hit, count_arith_miss, count_delete_hit, count_hit, count_miss, count_no_memory,
    count_set,
};
use super::parse::{strtol, strtoul, strtoull, KEY_MAX, OPAQUE_MAX};
use super::{base64, Output, TailFetch};
use crate::store::classes::{entry_class, item_total};
use crate::store::clock;
use crate::store::stats;
use crate::store::Digest;
use crate::store::{Arith, Body, Deleted, KeyNote, Mode, Store, Stored};
use crate::store::{BIT_FETCHED, BIT_KEY_BINARY, BIT_STALE, BIT_TOKEN_SENT};

/// Most tokens (command, key, flags and the terminal one) a meta command may have.
const MAX_META_TOKENS: usize = 20;
const BAD_FORMAT: &str = "CLIENT_ERROR bad command line format";
const BAD_TOKEN: &str = "CLIENT_ERROR bad token in command line format";

/// Flags of a meta command after memcached's pre-parse.
#[derive(Default, Debug)]
pub struct MetaFlags {
    /// The key, base64-decoded with `b`.
    pub key: Vec<u8>,
    /// `b`: the key is base64.
    pub binary: bool,
    /// `N`: vivify on miss with this expiry.
    pub vivify: Option<u32>,
    /// `T`: new expiry.
    pub ttl: Option<u32>,
    /// `R`: recache threshold.
    pub recache: Option<u32>,
    /// `v`: return the value.
    pub value: bool,
    /// `u`: do not bump.
    pub no_update: bool,
    /// `q`: quiet mode.
    pub quiet: bool,
    /// `I`: invalidate (md) / stale set (ms).
    pub stale: bool,
    /// `F`: client flags.
    pub client_flags: u32,
    /// `C`: compare CAS.
    pub cas_in: Option<u64>,
    /// `M`: mode letter.
    pub mode: Option<u8>,
    /// `J`: initial value (ma).
    pub initial: u64,
    /// `D`: delta (ma).
    pub delta: u64,
}

/// memcached's `_meta_flag_preparse`: `Err` carries the error reply.
pub fn preparse(key: &[u8], flags: &[&[u8]]) -> Result<MetaFlags, &'static str> {
    let mut of = MetaFlags {
        key: key.to_vec(),
        delta: 1,
        ..MetaFlags::default()
    };
    let mut seen = [false; 128];
    let mut err: Option<&'static str> = None;
    let mut errstr = BAD_FORMAT;
    for tok in flags {
        let o = tok[0];
        if o >= 127 || seen[o as usize] {
            return Err("CLIENT_ERROR duplicate flag");
        }
        seen[o as usize] = true;
        let arg = &tok[1..];
        let mut fail = |e: Option<&'static str>| {
            if let Some(e) = e {
                errstr = e;
            }
            err = Some(errstr);
        };
        match o {
            b'b' => match base64::decode(key) {
                Some(k) => {
                    of.key = k;
                    of.binary = true;
                }
                None => fail(Some("CLIENT_ERROR error decoding key")),
            },
            b'N' | b'T' | b'R' => match strtol(arg) {
                Some(v) => {
                    let t = Some(clock::expiry(i64::from(v)));
                    match o {
                        b'N' => of.vivify = t,
                        b'T' => of.ttl = t,
                        _ => of.recache = t,
                    }
                }
                None => fail(Some(BAD_TOKEN)),
            },
            b'l' | b'h' | b'O' | b'P' | b'L' | b'k' | b's' | b't' | b'c' | b'f' => {}
            b'v' => of.value = true,
            b'u' => of.no_update = true,
            b'q' => of.quiet = true,
            b'F' => match strtoul(arg) {
                Some(f) => of.client_flags = f,
                None => fail(None),
            },
            b'C' => match strtoull(arg) {
                Some(c) => of.cas_in = Some(c),
                None => fail(Some(BAD_TOKEN)),
            },
            b'M' => {
                if tok.len() != 2 {
                    fail(Some("CLIENT_ERROR incorrect length for M token"));
                } else {
                    of.mode = Some(tok[1]);
                }
            }
            b'J' => match strtoull(arg) {
                Some(v) => of.initial = v,
                None => fail(Some("CLIENT_ERROR invalid numeric initial value")),
            },
            b'D' => match strtoull(arg) {
                Some(v) => of.delta = v,
                None => fail(Some("CLIENT_ERROR invalid numeric delta value")),
            },
            b'I' => of.stale = true,
            _ => return Err("CLIENT_ERROR invalid flag"),
        }
    }
    match err {
        Some(e) => Err(e),
        None => Ok(of),
    }
}

fn push_key(line: &mut Vec<u8>, key: &[u8], binary: bool) {
    line.extend_from_slice(b" k");
    if binary {
        line.extend_from_slice(&base64::encode(key));
        line.extend_from_slice(b" b");
    } else {
        line.extend_from_slice(key);
    }
}

/// Appends the O and k return flags; `Err` if an opaque token is too long.
fn echo_flags(line: &mut Vec<u8>, flags: &[&[u8]], of: &MetaFlags) -> Result<(), &'static str> {
    for tok in flags {
        match tok[0] {
            b'O' => {
                if tok.len() > OPAQUE_MAX {
                    return Err("CLIENT_ERROR opaque token too long");
                }
                line.push(b' ');
                line.extend_from_slice(tok);
            }
            b'k' => push_key(line, &of.key, of.binary),
            _ => {}
        }
    }
    Ok(())
}

/// Runs mg, md, ma, mn or me (`args` are the tokens after the command).
pub fn run(store: &Store, cmd: u8, args: &[&[u8]], ntokens: usize, out: &mut Output) {
    if cmd == b'e' {
        return debug(store, args, out);
    }
    if cmd == b'n' {
        out.line("MN");
        return;
    }
    if args.is_empty() {
        out.line("ERROR");
        return;
    }
    if args[0].len() > KEY_MAX {
        out.line(BAD_FORMAT);
        return;
    }
    if ntokens > MAX_META_TOKENS {
        out.line(if cmd == b'g' {
            "CLIENT_ERROR options flags are too long"
        } else {
            "CLIENT_ERROR options flags too long"
        });
        return;
    }
    let flags = &args[1..];
    let of = match preparse(args[0], flags) {
        Ok(of) => of,
        Err(e) if cmd == b'g' => return out.line(e),
        Err(_) => return out.line("CLIENT_ERROR invalid or duplicate flag"),
    };
    let result = match cmd {
        b'g' => mget(store, flags, &of, out),
        b'd' => mdelete(store, flags, &of, out),
        b'a' => marith(store, flags, &of, out),
        _ => {
            out.line("ERROR");
            Ok(())
        }
    };
    if let Err(e) = result {
        out.line(e);
    }
}

/// `me <key> [b]`, memcached's `process_meta_command`: the item's expiry, last access, CAS,
/// fetched state, slab class and total size as memcached would hold it, or EN. memcached
/// prints `exp=` as now minus expiry, so a live item with a TTL shows a negative number.
fn debug(store: &Store, args: &[&[u8]], out: &mut Output) {
    if args.is_empty() || args[0].len() > KEY_MAX {
        return out.line(BAD_FORMAT);
    }
    let mut key = args[0].to_vec();
    if args.get(1).is_some_and(|t| *t == b"b") {
        match base64::decode(args[0]) {
            Some(k) if !k.is_empty() => key = k,
            _ => return out.line(BAD_FORMAT),
        }
    }
    let now = clock::now();
    let line = store.lookup(&Digest::of(&key), false, |e, _| {
        let mut line = b"ME ".to_vec();
        if e.bits & BIT_KEY_BINARY != 0 {
            line.extend_from_slice(&base64::encode(&key));
        } else {
            line.extend_from_slice(&key);
        }
        let exp = if e.exptime == 0 {
            -1
        } else {
            now.wrapping_sub(e.exptime) as i32
        };
        let size = item_total(key.len(), e.flags, e.size as usize);
        let _ = write!(
            VecWriter(&mut line),
            " exp={exp} la={} cas={} fetch={} cls={} size={size}\r\n",
            now.wrapping_sub(e.atime),
            e.cas,
            if e.bits & BIT_FETCHED != 0 {
                "yes"
            } else {
                "no"
            },
            entry_class(e),
        );
        line
    });
    match line {
        Some(l) => out.bytes().extend_from_slice(&l),
        None => out.line("EN"),
    }
    stats::incr(&store.stats.cmd_meta);
}

fn mget(
    store: &Store,
    flags: &[&[u8]],
    of: &MetaFlags,
    out: &mut Output,
) -> Result<(), &'static str> {
    let d = Digest::of(&of.key);
    let now = clock::now();
    let attempt = |created: bool| {
        store.lookup(
            &d,
            !of.no_update,
            |e, body| -> Result<(Output, crate::store::Entry), &'static str> {
                let mut line = Vec::with_capacity(64);
                if of.value {
                    let _ = write!(VecWriter(&mut line), "VA {}", e.size);
                } else {
                    line.extend_from_slice(b"HD");
                }
                let mut won = false;
                for tok in flags {
                    let mut w = VecWriter(&mut line);
                    match tok[0] {
                        b'T' => e.exptime = of.ttl.unwrap_or(e.exptime),
                        b'N' if created => won = true,
                        b'R' => {
                            won |= e.bits & BIT_TOKEN_SENT == 0
                                && !created
                                && e.exptime != 0
                                && of.recache.is_some_and(|r| e.exptime < r);
                        }
                        b's' => {
                            let _ = write!(w, " s{}", e.size);
                        }
                        b't' if e.exptime == 0 => w.0.extend_from_slice(b" t-1"),
                        b't' => {
                            let _ = write!(w, " t{}", e.exptime.wrapping_sub(now));
                        }
                        b'c' => {
                            let _ = write!(w, " c{}", e.cas);
                        }
                        b'f' => {
                            let _ = write!(w, " f{}", e.flags);
                        }
                        b'l' => {
                            let _ = write!(w, " l{}", now.wrapping_sub(e.atime));
                        }
                        b'h' => w.0.extend_from_slice(if e.bits & BIT_FETCHED != 0 {
                            b" h1"
                        } else {
                            b" h0"
                        }),
                        // The item's own encoding, as memcached's ITEM_KEY_BINARY.
                        b'k' => push_key(&mut line, &of.key, e.bits & BIT_KEY_BINARY != 0),
                        b'O' => echo_flags(&mut line, std::slice::from_ref(tok), of)?,
                        _ => {}
                    }
                }
                if e.bits & BIT_TOKEN_SENT != 0 {
                    line.extend_from_slice(b" Z");
                }
                if e.bits & BIT_STALE != 0 {
                    line.extend_from_slice(b" X");
                    won |= e.bits & BIT_TOKEN_SENT == 0;
                }
                if won {
                    line.extend_from_slice(b" W");
                    e.bits |= BIT_TOKEN_SENT;
                }
                line.extend_from_slice(b"\r\n");
                Ok((emit_value(line, of.value.then_some(body)), *e))
            },
        )
    };
    let mut found = attempt(false);
    if found.is_none() {
        if let Some(exptime) = of.vivify {
            let key = KeyNote::new(&of.key, of.binary);
            let created = matches!(
                store.store(&d, key, Mode::Add, 0, exptime, b"", 0, false),
                Stored::Stored { .. }
            );
            if created {
                stats::incr(&store.stats.total_items);
            }
            found = attempt(created);
        }
    }
    let touch = of.ttl.is_some();
    match found {
        Some(Err(e)) => Err(e),
        Some(Ok((reply, e))) => {
            count_hit(store, touch, &e);
            out.append(reply);
            Ok(())
        }
        None => {
            count_miss(store, touch);
            let mut line = b"EN".to_vec();
            echo_flags(&mut line, flags, of)?;
            line.extend_from_slice(b"\r\n");
            if !of.quiet {
                out.bytes().extend_from_slice(&line);
            }
            Ok(())
        }
    }
}

/// Builds the output of an mg hit: the header line, then the value if asked for.
fn emit_value(line: Vec<u8>, body: Option<Body<'_>>) -> Output {
    let mut out = Output::default();
    match body {
        None => out.bytes().extend_from_slice(&line),
        Some(Body::Whole(v)) => {
            let b = out.bytes();
            b.extend_from_slice(&line);
            b.extend_from_slice(v);
            b.extend_from_slice(b"\r\n");
        }
        Some(Body::Split { head, tail }) => {
            let mut prefix = line;
            prefix.extend_from_slice(head);
            out.push_tail(TailFetch {
                prefix,
                tail,
                on_fail: b"EN\r\n".to_vec(),
                token: None,
            });
        }
    }
    out
}

fn mdelete(
    store: &Store,
    flags: &[&[u8]],
    of: &MetaFlags,
    out: &mut Output,
) -> Result<(), &'static str> {
    let mut tail = Vec::new();
    echo_flags(&mut tail, flags, of)?;
    let d = Digest::of(&of.key);
    let cas_in = of.cas_in.unwrap_or(0);
    let r = if of.stale {
        store.invalidate(&d, cas_in, of.ttl)
    } else {
        store.delete(&d, cas_in)
    };
    let code: &[u8] = match r {
        Deleted::Deleted(e) => {
            count_delete_hit(store, &e);
            if of.quiet {
                return Ok(());
            }
            b"HD"
        }
        Deleted::NotFound => {
            stats::incr(&store.stats.delete_misses);
            b"NF"
        }
        Deleted::Exists => {
            stats::incr(&store.stats.delete_misses);
            b"EX"
        }
    };
    let b = out.bytes();
    b.extend_from_slice(code);
    b.extend_from_slice(&tail);
    b.extend_from_slice(b"\r\n");
    Ok(())
}

fn marith(
    store: &Store,
    flags: &[&[u8]],
    of: &MetaFlags,
    out: &mut Output,
) -> Result<(), &'static str> {
    let incr = match of.mode {
        None | Some(b'I' | b'i' | b'+') => true,
        Some(b'D' | b'd' | b'-') => false,
        Some(_) => return Err("CLIENT_ERROR invalid mode for ma M token"),
    };
    let d = Digest::of(&of.key);
    let vivify = of.vivify.map(|t| (of.initial, t));
    // The binary-key bit goes only into an item created from the initial value.
    let key = KeyNote::new(&of.key, of.binary);
    let r = store.arith(&d, key, incr, of.delta, of.cas_in.unwrap_or(0), vivify);
    let mut line = Vec::with_capacity(64);
    match r {
        Arith::NonNumeric => {
            return Err("CLIENT_ERROR cannot increment or decrement non-numeric value")
        }
        Arith::NoMemory => return Err("SERVER_ERROR out of memory"),
        Arith::NotFound | Arith::Exists => {
            count_arith_miss(store, incr);
            line.extend_from_slice(if r == Arith::NotFound { b"NF" } else { b"EX" });
            echo_flags(&mut line, flags, of)?;
        }
        Arith::Value {
            value,
            cas,
            exptime,
            prior,
        } => {
            count_arith_hit(store, incr, prior.as_ref());
            if of.quiet {
                return Ok(());
            }
            let digits = value.to_string();
            let mut exp = exptime;
            if of.value {
                let _ = write!(VecWriter(&mut line), "VA {}", digits.len());
            } else {
                line.extend_from_slice(b"HD");
            }
            for tok in flags {
                match tok[0] {
                    b'c' => {
                        let _ = write!(VecWriter(&mut line), " c{cas}");
                    }
                    b't' if exp == 0 => line.extend_from_slice(b" t-1"),
                    b't' => {
                        let _ =
                            write!(VecWriter(&mut line), " t{}", exp.wrapping_sub(clock::now()));
                    }
                    b'T' => {
                        exp = of.ttl.unwrap_or(exp);
                        store.touch(&d, exp);
                    }
                    b'O' | b'k' => echo_flags(&mut line, std::slice::from_ref(tok), of)?,
                    _ => {}
                }
            }
            if of.value {
                line.extend_from_slice(b"\r\n");
                line.extend_from_slice(digits.as_bytes());
            }
        }
    }
    line.extend_from_slice(b"\r\n");
    out.bytes().extend_from_slice(&line);
    Ok(())
}

/// An ms request checked up to its data block.
#[derive(Debug)]
pub struct SetPlan {
    /// Parsed flags (key decoded).
    pub of: MetaFlags,
    /// Flag tokens, for the return flags.
    pub flags: Vec<Vec<u8>>,
    /// Storage mode.
    pub mode: Mode,
    /// Vivify append/prepend.
    pub vivify: bool,
    /// Value length.
    pub len: usize,
}

/// What the connection does with an ms line.
#[derive(Debug)]
pub enum SetStep {
    /// Wait for `len` + 2 bytes, then call [`finish_set`].
    Data(SetPlan),
    /// Reply with this error, then drop `swallow` bytes.
    Fail(&'static str, usize),
}

/// Checks an ms line as memcached's `process_mset_command` does, in the same order.
pub fn plan_set(store: &Store, args: &[&[u8]], ntokens: usize) -> SetStep {
    if args.is_empty() {
        return SetStep::Fail("ERROR", 0);
    }
    if args[0].len() > KEY_MAX || args.len() == 1 {
        return SetStep::Fail(BAD_FORMAT, 0);
    }
    if ntokens > MAX_META_TOKENS {
        return SetStep::Fail("CLIENT_ERROR options flags too long", 0);
    }
    let len = match strtol(args[1]) {
        Some(l) if (0..=i32::MAX - 2).contains(&l) => l as usize,
        _ => return SetStep::Fail(BAD_FORMAT, 0),
    };
    let swallow = len + 2;
    let flags = &args[2..];
    let of = match preparse(args[0], flags) {
        Ok(of) => of,
        Err(e) => return SetStep::Fail(e, swallow),
    };
    if flags.iter().any(|t| t[0] == b'O' && t.len() > OPAQUE_MAX) {
        return SetStep::Fail("CLIENT_ERROR opaque token too long", swallow);
    }
    let (mut mode, vivify) = match of.mode {
        None | Some(b'S' | b's') => (Mode::Set, false),
        Some(b'E' | b'e') => (Mode::Add, false),
        Some(b'A' | b'a') => (Mode::Append, of.vivify.is_some()),
        Some(b'P' | b'p') => (Mode::Prepend, of.vivify.is_some()),
        Some(b'R' | b'r') => (Mode::Replace, false),
        Some(_) => return SetStep::Fail("CLIENT_ERROR invalid mode for ms M token", swallow),
    };
    if of.cas_in.is_some() && matches!(mode, Mode::Set | Mode::Replace) {
        mode = Mode::Cas;
    }
    if item_total(of.key.len(), of.client_flags, len) > store.config().max_item_size {
        stats::incr(&store.stats.store_too_large);
        store.delete(&Digest::of(&of.key), 0);
        return SetStep::Fail("SERVER_ERROR object too large for cache", swallow);
    }
    let flags = flags.iter().map(|t| t.to_vec()).collect();
    SetStep::Data(SetPlan {
        of,
        flags,
        mode,
        vivify,
        len,
    })
}

/// Completes an ms once its data block (with the CRLF) has arrived.
pub fn finish_set(store: &Store, plan: &SetPlan, block: &[u8], out: &mut Output) {
    let of = &plan.of;
    // The block holds the value and its CRLF (or what came in their place).
    count_set(
        store,
        of.key.len(),
        of.client_flags,
        block.len().saturating_sub(2),
    );
    let Some(data) = block.strip_suffix(b"\r\n") else {
        out.line("CLIENT_ERROR bad data chunk");
        return;
    };
    let exptime = if plan.vivify {
        of.vivify.unwrap_or(0)
    } else {
        of.ttl.unwrap_or(0)
    };
    let d = Digest::of(&of.key);
    let concat = matches!(plan.mode, Mode::Append | Mode::Prepend);
    let r = store.store(
        &d,
        KeyNote::new(&of.key, of.binary && !concat),
        plan.mode,
        of.client_flags,
        exptime,
        data,
        of.cas_in.unwrap_or(0),
        plan.vivify,
    );
    let (code, cas): (&[u8], u64) = match r {
        Stored::Stored { cas, .. } => {
            if of.quiet {
                return;
            }
            (b"HD", cas)
        }
        Stored::Exists => (b"EX", 0),
        Stored::NotFound => (b"NF", 0),
        Stored::NotStored => (b"NS", 0),
        Stored::NoMemory => {
            count_no_memory(store, of.key.len(), of.client_flags, data.len());
            return out.line("SERVER_ERROR out of memory storing object");
        }
    };
    let mut line = code.to_vec();
    for tok in &plan.flags {
        match tok[0] {
            b'O' => {
                line.push(b' ');
                line.extend_from_slice(tok);
            }
            b'k' => push_key(&mut line, &of.key, of.binary),
            b'c' => {
                let _ = write!(VecWriter(&mut line), " c{cas}");
            }
            _ => {}
        }
    }
    line.extend_from_slice(b"\r\n");
    out.bytes().extend_from_slice(&line);
}

/// `fmt::Write` into a byte vector.
struct VecWriter<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for VecWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preparse_errors_match_memcached() {
        assert_eq!(
            preparse(b"k", &[b"v", b"v"]).unwrap_err(),
            "CLIENT_ERROR duplicate flag"
        );
        assert_eq!(
            preparse(b"k", &[b"zz"]).unwrap_err(),
            "CLIENT_ERROR invalid flag"
        );
        assert_eq!(
            preparse(b"k", &[b"b"]).unwrap_err(),
            "CLIENT_ERROR error decoding key"
        );
        assert_eq!(preparse(b"k", &[b"Tx"]).unwrap_err(), BAD_TOKEN);
        assert_eq!(
            preparse(b"k", &[b"MEE"]).unwrap_err(),
            "CLIENT_ERROR incorrect length for M token"
        );
        assert_eq!(preparse(b"k", &[b"Fx"]).unwrap_err(), BAD_FORMAT);
        let of = preparse(b"Zm9v", &[b"b", b"v", b"T10", b"D5", b"MD"]).unwrap();
        assert_eq!(of.key, b"foo");
        assert!(of.value && of.binary);
        assert_eq!((of.delta, of.mode), (5, Some(b'D')));
    }
}
