//! SORT and SORT_RO (Redis's sort.c) on lists, sets and sorted sets.
//!
//! - [`pattern`]: the BY and GET patterns' key lookups.
//!
//! The command reads the elements ([`elements`]: one match over the value's type), gives
//! each its sort key (the element or the BY pattern's value, as a number unless ALPHA),
//! sorts, cuts the LIMIT window and replies with the elements or their GET patterns'
//! values, or with STORE (SORT only) writes them as a list and replies with its length.

mod pattern;

use crate::commands::{Command, Ctx, Flags};
use crate::errors;
use crate::keyspace::{List, Value, WrongType};
use crate::numbers::parse_f64;
use crate::pubsub::notify;
use crate::scripting::run::SCRIPT_CLIENT_ID;
use crate::service::locale;
use std::cmp::Ordering;
use std::ffi::CString;

/// SORT and SORT_RO.
pub static COMMANDS: [Command; 2] = [
    Command::simple("sort", -2, Flags::WRITE.with(Flags::DENYOOM), sort),
    Command::simple("sort_ro", -2, Flags::READONLY, sort),
];

/// SORT's options.
struct Options<'a> {
    desc: bool,
    alpha: bool,
    /// LIMIT offset and count (-1: all).
    limit: (i64, i64),
    by: Option<&'a [u8]>,
    /// BY a pattern without `*` (e.g. "nosort"): keep the value's own order.
    dontsort: bool,
    gets: Vec<&'a [u8]>,
    /// STORE destination.
    store: Option<&'a [u8]>,
}

/// Parses the options after the key, replying to the first error.
fn parse<'a>(ctx: &mut Ctx, args: &[&'a [u8]]) -> Option<Options<'a>> {
    let mut o = Options {
        desc: false,
        alpha: false,
        limit: (0, -1),
        by: None,
        dontsort: false,
        gets: Vec::new(),
        store: None,
    };
    let readonly = args[0].eq_ignore_ascii_case(b"sort_ro");
    let mut j = 2;
    while j < args.len() {
        let is = |name: &[u8]| args[j].eq_ignore_ascii_case(name);
        let left = args.len() - j - 1;
        if is(b"asc") {
            o.desc = false;
        } else if is(b"desc") {
            o.desc = true;
        } else if is(b"alpha") {
            o.alpha = true;
        } else if is(b"limit") && left >= 2 {
            o.limit = (ctx.int_arg(args[j + 1])?, ctx.int_arg(args[j + 2])?);
            j += 2;
        } else if is(b"by") && left >= 1 {
            o.by = Some(args[j + 1]);
            o.dontsort = !args[j + 1].contains(&b'*');
            if !o.dontsort && !reads_any_key(ctx, args) {
                ctx.error("ERR BY option of SORT denied due to insufficient ACL permissions.");
                return None;
            }
            j += 1;
        } else if is(b"store") && left >= 1 && !readonly {
            o.store = Some(args[j + 1]);
            j += 1;
        } else if is(b"get") && left >= 1 {
            if !reads_any_key(ctx, args) {
                ctx.error("ERR GET option of SORT denied due to insufficient ACL permissions.");
                return None;
            }
            o.gets.push(args[j + 1]);
            j += 1;
        } else {
            ctx.syntax_error();
            return None;
        }
        j += 1;
    }
    Some(o)
}

/// Whether the client's user may read any key with this command: BY and GET patterns name
/// keys no key spec sees, so a user limited to some keys may not use them (as Redis).
fn reads_any_key(ctx: &mut Ctx, args: &[&[u8]]) -> bool {
    let acl = &ctx.server.acl;
    if acl.unrestricted(&mut ctx.client.user) {
        return true;
    }
    crate::commands::lookup(args[0])
        .is_some_and(|cmd| acl.may_read_any_key(&ctx.client.user, cmd, args))
}

/// The elements to sort, in the order SORT loads them: a list's in list order, a set's in
/// its own order, a sorted set's by score.
fn elements(value: &Value) -> Result<Vec<Vec<u8>>, WrongType> {
    match value {
        Value::List(l) => Ok(l.to_vecs()),
        Value::Set(s) => Ok(s.iter().map(|m| m.to_vec()).collect()),
        Value::ZSet(z) => Ok(z.iter().map(|(m, _)| m.to_vec()).collect()),
        Value::Str(_) | Value::Hash(_) | Value::Stream(_) => Err(WrongType),
    }
}

/// The LIMIT window over `len` elements, as Redis clamps it: `start..end` (empty when
/// nothing is in it).
fn window(len: usize, (offset, count): (i64, i64)) -> std::ops::Range<usize> {
    let len = len as i64;
    let start = offset.clamp(0, len);
    let count = count.clamp(-1, len);
    let end = if count < 0 {
        len
    } else {
        (start + count).min(len)
    };
    start as usize..end.max(start) as usize
}

/// A value as SORT reads a number (strtod over the whole text; the empty text is 0; NaN and
/// out-of-range values refused).
fn sort_number(text: &[u8]) -> Option<f64> {
    let text = &text[..text.iter().position(|&c| c == 0).unwrap_or(text.len())];
    let start = text
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(text.len());
    if start == text.len() {
        return (start == 0).then_some(0.0);
    }
    parse_f64(&text[start..])
}

/// One element and what it sorts by.
struct Item {
    element: Vec<u8>,
    /// The numeric key (0 when BY finds nothing).
    score: f64,
    /// The ALPHA key of a BY pattern (None when it finds nothing, which sorts first).
    by: Option<Vec<u8>>,
    /// The ALPHA key (the element or `by`) as strcoll reads it, when SORT collates.
    collation: Option<CString>,
}

/// SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA], and
/// SORT_RO with the same options.
pub fn sort(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(mut o) = parse(ctx, args) else {
        return;
    };
    let (db, now, touch) = (ctx.client.db, ctx.now_ms, !ctx.client.no_touch);
    let from_script = ctx.client.id == SCRIPT_CLIENT_ID;
    let loaded = match ctx.server.keyspace.lookup_read(db, args[1], now, touch) {
        None => Ok(Vec::new()),
        Some(entry) => {
            // As Redis: a set stored unsorted, or read so by a script, is sorted ALPHA, so
            // what STORE writes (and the AOF replays) and what a script sees does not
            // depend on the set's internal order.
            let stable = o.store.is_some() || from_script;
            if o.dontsort && stable && matches!(entry.value, Value::Set(_)) {
                (o.dontsort, o.alpha, o.by) = (false, true, None);
            }
            let native = o.dontsort && matches!(entry.value, Value::ZSet(_) | Value::List(_));
            elements(entry.value).map(|mut v| {
                // A list or sorted set keeps its order, reversed for DESC, when nothing is
                // sorted.
                if native && o.desc {
                    v.reverse();
                }
                v
            })
        }
    };
    let Ok(loaded) = loaded else {
        return ctx.error(errors::WRONGTYPE);
    };
    let mut items: Vec<Item> = loaded
        .into_iter()
        .map(|element| Item {
            element,
            score: 0.0,
            by: None,
            collation: None,
        })
        .collect();
    if !o.dontsort {
        let mut not_a_number = false;
        for item in &mut items {
            let key = match o.by {
                Some(p) => match pattern::lookup(ctx, p, &item.element) {
                    Some(v) => v,
                    None => continue,
                },
                None => item.element.clone(),
            };
            if o.alpha {
                item.by = o.by.map(|_| key);
            } else {
                match sort_number(&key) {
                    Some(v) => item.score = v,
                    None => not_a_number = true,
                }
            }
        }
        if not_a_number {
            return ctx.error("ERR One or more scores can't be converted into double");
        }
        let by_pattern = o.by.is_some();
        // As Redis: ALPHA compares by the collation locale (strcoll), but by bytes for
        // STORE, so that what is stored does not depend on the locale.
        let collated = o.alpha && o.store.is_none();
        if collated {
            for item in &mut items {
                let key = if by_pattern {
                    item.by.as_deref()
                } else {
                    Some(&item.element[..])
                };
                item.collation = key.map(locale::collation_key);
            }
        }
        items.sort_by(|a, b| {
            let cmp = if !o.alpha {
                a.score
                    .partial_cmp(&b.score)
                    .unwrap_or(Ordering::Equal)
                    .then_with(|| a.element.cmp(&b.element))
            } else if collated {
                match (&a.collation, &b.collation) {
                    (Some(x), Some(y)) => locale::collate(x, y),
                    (x, y) => x.is_some().cmp(&y.is_some()),
                }
            } else if by_pattern {
                a.by.cmp(&b.by)
            } else {
                a.element.cmp(&b.element)
            };
            if o.desc {
                cmp.reverse()
            } else {
                cmp
            }
        });
    }
    let range = window(items.len(), o.limit);
    // Each element's output: itself, or one value per GET pattern (None: nothing found).
    let mut rows: Vec<Option<Vec<u8>>> = Vec::new();
    for item in &items[range] {
        if o.gets.is_empty() {
            rows.push(Some(item.element.clone()));
        }
        for get in &o.gets {
            rows.push(pattern::lookup(ctx, get, &item.element));
        }
    }
    match o.store {
        None => {
            ctx.out.array(rows.len());
            for row in &rows {
                match row {
                    Some(v) => ctx.out.bulk(v),
                    None => ctx.out.null(),
                }
            }
        }
        Some(dst) => store(ctx, dst, &rows),
    }
}

/// STORE: the rows as a list at `dst` (a missing GET value as the empty string), replacing
/// what was there, or `dst` deleted when there are none; replies with the length.
fn store(ctx: &mut Ctx, dst: &[u8], rows: &[Option<Vec<u8>>]) {
    let db = ctx.client.db;
    let keyspace = &mut ctx.server.keyspace;
    if rows.is_empty() {
        if keyspace.delete(db, dst) {
            keyspace.add_dirty(1);
            ctx.notify(notify::GENERIC, "del", dst);
        }
    } else {
        let elements = rows.iter().map(|r| r.as_deref().unwrap_or_default());
        let list = List::from_elements(elements, &ctx.server.config.list);
        keyspace.store(db, dst, Value::List(list));
        keyspace.add_dirty(rows.len() as u64);
        ctx.notify(notify::LIST, "sortstore", dst);
    }
    ctx.out.int(rows.len() as i64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_windows_clamp_as_redis() {
        assert_eq!(window(5, (0, -1)), 0..5);
        assert_eq!(window(5, (1, 2)), 1..3);
        assert_eq!(window(5, (-3, 2)), 0..2);
        assert_eq!(window(5, (4, 10)), 4..5);
        assert_eq!(window(5, (9, 1)), 5..5);
        assert_eq!(window(5, (2, 0)), 2..2);
        assert_eq!(window(0, (0, -1)), 0..0);
        assert_eq!(window(5, (i64::MAX, i64::MAX)), 5..5);
    }

    #[test]
    fn numbers_read_as_strtod_reads_them() {
        assert_eq!(sort_number(b""), Some(0.0));
        assert_eq!(sort_number(b" 1.5"), Some(1.5));
        assert_eq!(sort_number(b"1.5 "), None);
        assert_eq!(sort_number(b"   "), None);
        assert_eq!(sort_number(b"nan"), None);
        assert_eq!(sort_number(b"1e400"), None);
        assert_eq!(sort_number(b"-inf"), Some(f64::NEG_INFINITY));
    }
}
