//! Caching decisions as Varnish and nginx users expect them (RFC 9111, RFC 9110): what to
//! cache and for how long, which byte range to serve, when to answer 304, and HTTP dates.
//! Everything here is a pure function of header values.
//!
//! Where the RFCs leave room, the choices follow Varnish's built-in VCL: the default
//! cacheable statuses, no caching with `Set-Cookie` or with `no-cache` / `no-store` /
//! `private` in any form, and If-Modified-Since compared as "not newer than".

use std::io::Write;

/// Delta-seconds at or above this count as this (RFC 9111 section 1.2.2).
const MAX_DELTA: u64 = 1 << 31;

/// Parses an HTTP-date to Unix seconds: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the
/// obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`, two-digit years below 70 are
/// 20xx) or asctime (`Sun Nov  6 08:49:37 1994`). The weekday must be a weekday name but is
/// not checked against the date. `None` for anything else.
pub fn parse_http_date(s: &[u8]) -> Option<i64> {
    let comma = s.iter().position(|&b| b == b',');
    let (day, mon, year, time) = match comma {
        // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT".
        Some(3) => {
            weekday(&s[..3], false)?;
            let r = s.get(4..)?;
            if r.len() != 25 || r[0] != b' ' || r[3] != b' ' || r[7] != b' ' || r[12] != b' ' {
                return None;
            }
            if &r[21..] != b" GMT" {
                return None;
            }
            (
                num(&r[1..3])?,
                month(&r[4..7])?,
                num(&r[8..12])?,
                &r[13..21],
            )
        }
        // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT".
        Some(c) => {
            weekday(&s[..c], true)?;
            let r = s.get(c + 1..)?;
            if r.len() != 23 || r[0] != b' ' || r[3] != b'-' || r[7] != b'-' || r[10] != b' ' {
                return None;
            }
            if &r[19..] != b" GMT" {
                return None;
            }
            let yy = num(&r[8..10])?;
            let year = if yy < 70 { 2000 + yy } else { 1900 + yy };
            (num(&r[1..3])?, month(&r[4..7])?, year, &r[11..19])
        }
        // asctime: "Sun Nov  6 08:49:37 1994".
        None => {
            if s.len() != 24 || s[3] != b' ' || s[7] != b' ' || s[10] != b' ' || s[19] != b' ' {
                return None;
            }
            weekday(&s[..3], false)?;
            let day = match s[8] {
                b' ' => num(&s[9..10])?,
                _ => num(&s[8..10])?,
            };
            (day, month(&s[4..7])?, num(&s[20..24])?, &s[11..19])
        }
    };
    if time[2] != b':' || time[5] != b':' {
        return None;
    }
    let (h, m, sec) = (num(&time[..2])?, num(&time[3..5])?, num(&time[6..8])?);
    if day == 0 || day > days_in_month(year, mon) || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    let days = goblin_evloop::calendar::days_from_civil(year as i64, mon, day);
    Some(days * 86400 + (h * 3600 + m * 60 + sec) as i64)
}

const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// Checks a weekday name: three letters, or spelled out (`long`).
fn weekday(s: &[u8], long: bool) -> Option<()> {
    WEEKDAYS
        .iter()
        .any(|d| {
            let d = d.as_bytes();
            s == if long { d } else { &d[..3] }
        })
        .then_some(())
}

/// The month (1 to 12) of a three-letter name.
fn month(s: &[u8]) -> Option<u32> {
    MONTHS
        .iter()
        .position(|m| &m[..] == s)
        .map(|i| i as u32 + 1)
}

/// The value of a fixed run of ASCII digits.
fn num(s: &[u8]) -> Option<u32> {
    s.iter().try_fold(0u32, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
    })
}

fn is_leap(year: u32) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Appends the IMF-fixdate form of Unix seconds (`Sun, 06 Nov 1994 08:49:37 GMT`, 29 bytes
/// for years 0 to 9999).
pub fn format_http_date(unix: i64, out: &mut Vec<u8>) {
    let (days, secs) = (unix.div_euclid(86400), unix.rem_euclid(86400));
    let (year, month, day) = goblin_evloop::calendar::civil_from_days(days);
    // 1970-01-01 was a Thursday.
    let wd = WEEKDAYS[(days + 3).rem_euclid(7) as usize];
    let mon = std::str::from_utf8(MONTHS[month as usize - 1]).expect("ASCII month");
    write!(
        out,
        "{}, {day:02} {mon} {year:04} {:02}:{:02}:{:02} GMT",
        &wd[..3],
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
    .expect("writing to a Vec");
}

/// The time to live in seconds of an origin response, or `None` when it must not be cached.
///
/// Not cached: a status outside Varnish's default cacheable list (200, 203, 300, 301, 302,
/// 304, 307, 404, 410), and 302 or 307 without explicit freshness; `no-store`, `private` or
/// `no-cache` in Cache-Control (with or without field names, as Varnish treats them); a
/// `Set-Cookie` field (`set_cookie`); a time to live of 0.
///
/// Freshness: `s-maxage` wins over `max-age`, which wins over Expires; Expires counts from
/// the Date field when it parses, else from `now`, and an Expires that does not parse means
/// already expired. Without any of them, `default_ttl`. Directive names are
/// case-insensitive and values may be quoted; the first occurrence of a directive counts; a
/// value that is not a number means stale; values are capped at 2^31 (RFC 9111 1.2.2).
pub fn cache_ttl(
    status: u16,
    cache_control: Option<&[u8]>,
    expires: Option<&[u8]>,
    date: Option<&[u8]>,
    set_cookie: bool,
    now: i64,
    default_ttl: u64,
) -> Option<u64> {
    if !matches!(status, 200 | 203 | 300 | 301 | 302 | 304 | 307 | 404 | 410) || set_cookie {
        return None;
    }
    let (mut s_maxage, mut max_age) = (None, None);
    for (name, value) in directives(cache_control.unwrap_or_default()) {
        let name_is = |n: &str| name.eq_ignore_ascii_case(n.as_bytes());
        if name_is("no-store") || name_is("private") || name_is("no-cache") {
            return None;
        }
        if name_is("s-maxage") && s_maxage.is_none() {
            s_maxage = Some(delta_seconds(value));
        } else if name_is("max-age") && max_age.is_none() {
            max_age = Some(delta_seconds(value));
        }
    }
    let ttl = if let Some(t) = s_maxage.or(max_age) {
        t.unwrap_or(0)
    } else if let Some(e) = expires {
        let origin_now = date.and_then(parse_http_date).unwrap_or(now);
        let left = parse_http_date(e).map_or(0, |e| e.saturating_sub(origin_now));
        (left.max(0) as u64).min(MAX_DELTA)
    } else if matches!(status, 302 | 307) {
        return None;
    } else {
        default_ttl
    };
    (ttl > 0).then_some(ttl)
}

/// The stale windows of a cacheable response as `(stale-while-revalidate,
/// stale-if-error)` seconds after its freshness ends (RFC 5861): each directive's value
/// when given (first occurrence, quoted or not; not a number means 0), else `grace` (the
/// --grace default, as Varnish's grace covers both). `must-revalidate` and
/// `proxy-revalidate` forbid serving stale: both windows are 0. `s-maxage` implies
/// proxy-revalidate (RFC 9111 5.2.2.10), so --grace does not apply with it, but explicit
/// stale-* directives beside it do, as CDNs honour them.
pub fn stale_windows(cache_control: Option<&[u8]>, grace: u64) -> (u32, u32) {
    let (mut swr, mut sie) = (None, None);
    let mut grace = grace.min(MAX_DELTA);
    for (name, value) in directives(cache_control.unwrap_or_default()) {
        let name_is = |n: &str| name.eq_ignore_ascii_case(n.as_bytes());
        if name_is("must-revalidate") || name_is("proxy-revalidate") {
            return (0, 0);
        }
        if name_is("s-maxage") {
            grace = 0;
        }
        if name_is("stale-while-revalidate") && swr.is_none() {
            swr = Some(delta_seconds(value).unwrap_or(0));
        } else if name_is("stale-if-error") && sie.is_none() {
            sie = Some(delta_seconds(value).unwrap_or(0));
        }
    }
    let secs = |w: Option<u64>| w.unwrap_or(grace).min(u64::from(u32::MAX) / 4) as u32;
    (secs(swr), secs(sie))
}

/// Delta-seconds from a directive's value, capped at [`MAX_DELTA`]; `None` when it is
/// missing or not digits.
fn delta_seconds(value: Option<&[u8]>) -> Option<u64> {
    let v = value.filter(|v| !v.is_empty())?;
    v.iter().try_fold(0u64, |n, &d| {
        d.is_ascii_digit()
            .then(|| (n * 10 + u64::from(d - b'0')).min(MAX_DELTA))
    })
}

/// The directives of a Cache-Control value: `name` or `name=value`, where a quoted value is
/// returned without its quotes (backslash escapes are kept: no directive used here needs
/// them). Commas inside quotes do not separate directives.
fn directives(mut s: &[u8]) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> {
    std::iter::from_fn(move || loop {
        s = s.trim_ascii_start();
        if s.is_empty() {
            return None;
        }
        if s[0] == b',' {
            s = &s[1..];
            continue;
        }
        let end = s
            .iter()
            .position(|&b| b == b',' || b == b'=')
            .unwrap_or(s.len());
        let name = s[..end].trim_ascii();
        if s.get(end) != Some(&b'=') {
            s = &s[end..];
            return Some((name, None));
        }
        let rest = s[end + 1..].trim_ascii_start();
        let value;
        if rest.first() == Some(&b'"') {
            let close = quoted_end(rest);
            value = &rest[1..close.min(rest.len()).max(1)];
            let after = (close + 1).min(rest.len());
            let next = rest[after..]
                .iter()
                .position(|&b| b == b',')
                .map_or(rest.len(), |p| after + p);
            s = &rest[next..];
        } else {
            let next = rest.iter().position(|&b| b == b',').unwrap_or(rest.len());
            value = rest[..next].trim_ascii();
            s = &rest[next..];
        }
        return Some((name, Some(value)));
    })
}

/// The index of the quote closing the quoted string at the start of `s`, or `s.len()` when
/// it is not closed.
fn quoted_end(s: &[u8]) -> usize {
    let mut i = 1;
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'"' => return i,
            _ => i += 1,
        }
    }
    s.len()
}

/// What a Range request asks of a representation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeSpec {
    /// The whole representation (no usable Range field): answer 200.
    Full,
    /// One byte range, `end` inclusive and within the representation: answer 206.
    Partial {
        /// First byte.
        start: u64,
        /// Last byte (inclusive).
        end: u64,
    },
    /// A range that lies outside the representation: answer 416.
    Unsatisfiable,
}

/// Parses a Range value (`bytes=a-b`, `bytes=a-` or `bytes=-n`) against a representation of
/// `len` bytes. Several ranges, another unit or bad syntax (including `b < a`) give
/// [`RangeSpec::Full`]: the field is ignored, as nginx does with what it cannot serve. A
/// start at or past `len`, or a suffix of 0 bytes (or any suffix of an empty
/// representation), is [`RangeSpec::Unsatisfiable`]. The end is clamped to `len - 1`.
pub fn parse_range(value: &[u8], len: u64) -> RangeSpec {
    let Some(spec) = value
        .iter()
        .position(|&b| b == b'=')
        .filter(|&eq| value[..eq].trim_ascii().eq_ignore_ascii_case(b"bytes"))
        .map(|eq| value[eq + 1..].trim_ascii())
    else {
        return RangeSpec::Full;
    };
    let Some(dash) = spec.iter().position(|&b| b == b'-') else {
        return RangeSpec::Full;
    };
    let (first, last) = (&spec[..dash], &spec[dash + 1..]);
    if first.is_empty() {
        return match range_num(last) {
            None => RangeSpec::Full,
            Some(0) => RangeSpec::Unsatisfiable,
            Some(_) if len == 0 => RangeSpec::Unsatisfiable,
            Some(n) => RangeSpec::Partial {
                start: len.saturating_sub(n),
                end: len - 1,
            },
        };
    }
    let Some(start) = range_num(first) else {
        return RangeSpec::Full;
    };
    let end = match (last.is_empty(), range_num(last)) {
        (true, _) => u64::MAX,
        (false, Some(end)) if end >= start => end,
        (false, _) => return RangeSpec::Full,
    };
    if start >= len {
        return RangeSpec::Unsatisfiable;
    }
    RangeSpec::Partial {
        start,
        end: end.min(len - 1),
    }
}

/// A range bound: digits, saturating at `u64::MAX` (a start that large is past any
/// representation, an end that large is clamped); `None` when empty or not digits.
fn range_num(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.iter().try_fold(0u64, |n, &d| {
        d.is_ascii_digit()
            .then(|| n.saturating_mul(10).saturating_add(u64::from(d - b'0')))
    })
}

/// Whether a conditional GET or HEAD is answered with 304 from the cached validators.
///
/// If-None-Match, when present, decides alone: `*` matches any cached object, otherwise the
/// comma-separated entity tags are compared with `etag` by the weak comparison (`W/`
/// ignored on both sides). Otherwise If-Modified-Since matches when `last_modified` is not
/// later than it; a date that does not parse never matches.
pub fn not_modified(
    if_none_match: Option<&[u8]>,
    if_modified_since: Option<&[u8]>,
    etag: Option<&[u8]>,
    last_modified: Option<&[u8]>,
) -> bool {
    if let Some(inm) = if_none_match {
        if inm.trim_ascii() == b"*" {
            return true;
        }
        let Some(etag) = etag else {
            return false;
        };
        let mine = weak(etag.trim_ascii());
        return entity_tags(inm).any(|t| weak(t) == mine);
    }
    match (
        if_modified_since.and_then(parse_http_date),
        last_modified.and_then(parse_http_date),
    ) {
        (Some(since), Some(modified)) => modified <= since,
        _ => false,
    }
}

/// Whether an If-Range value lets the Range field apply (RFC 9110 13.1.5): an entity tag
/// matches the stored ETag by the strong comparison (a weak tag on either side never
/// matches); a date matches a Last-Modified equal to it. Anything else does not match, and
/// the whole representation is sent.
pub fn if_range_matches(
    if_range: &[u8],
    etag: Option<&[u8]>,
    last_modified: Option<&[u8]>,
) -> bool {
    let v = if_range.trim_ascii();
    if v.starts_with(b"\"") || v.starts_with(b"W/") {
        return etag.is_some_and(|e| {
            let e = e.trim_ascii();
            !v.starts_with(b"W/") && !e.starts_with(b"W/") && e == v
        });
    }
    match (parse_http_date(v), last_modified.and_then(parse_http_date)) {
        (Some(date), Some(modified)) => date == modified,
        _ => false,
    }
}

/// An entity tag without its weakness indicator.
fn weak(tag: &[u8]) -> &[u8] {
    tag.strip_prefix(b"W/").unwrap_or(tag)
}

/// The entity tags of an If-None-Match list: `"x"` or `W/"x"` (which may hold commas), or
/// for lenience an unquoted element up to the next comma.
fn entity_tags(mut s: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::from_fn(move || loop {
        s = s.trim_ascii_start();
        if s.is_empty() {
            return None;
        }
        if s[0] == b',' {
            s = &s[1..];
            continue;
        }
        let open = if s.starts_with(b"W/") { 2 } else { 0 };
        let end = if s.get(open) == Some(&b'"') {
            s[open + 1..]
                .iter()
                .position(|&b| b == b'"')
                .map_or(s.len(), |p| open + p + 2)
        } else {
            s.iter().position(|&b| b == b',').unwrap_or(s.len())
        };
        let (tag, rest) = s.split_at(end);
        s = rest;
        return Some(tag.trim_ascii());
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const EPOCH_1994: i64 = 784111777; // Sun, 06 Nov 1994 08:49:37 GMT

    fn date(s: &str) -> Option<i64> {
        parse_http_date(s.as_bytes())
    }

    fn fmt(t: i64) -> String {
        let mut v = Vec::new();
        format_http_date(t, &mut v);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn the_three_date_forms() {
        assert_eq!(date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(EPOCH_1994));
        assert_eq!(date("Sunday, 06-Nov-94 08:49:37 GMT"), Some(EPOCH_1994));
        assert_eq!(date("Sun Nov  6 08:49:37 1994"), Some(EPOCH_1994));
        assert_eq!(date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(date("Thursday, 01-Jan-70 00:00:00 GMT"), Some(0));
        assert_eq!(
            date("Monday, 01-Jan-35 00:00:00 GMT"),
            date("Mon, 01 Jan 2035 00:00:00 GMT")
        );
        assert_eq!(date("Tue, 29 Feb 2028 12:00:00 GMT"), Some(1835438400));
        assert_eq!(date("Wed Dec 31 23:59:59 1969"), Some(-1));
    }

    #[test]
    fn bad_dates() {
        for s in [
            "",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 94 08:49:37 GMT",
            "Sun, 06 nov 1994 08:49:37 GMT",
            "Xyz, 06 Nov 1994 08:49:37 GMT",
            "Sun, 31 Nov 1994 08:49:37 GMT",
            "Sun, 29 Feb 1900 08:49:37 GMT",
            "Sun, 00 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:60:00 GMT",
            "Sun, 06 Nov 1994 08-49-37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT ",
            "Sun,06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:3x GMT",
            "Sun, 06-Nov-94 08:49:37 GMT",
            "Sunday, 06 Nov 1994 08:49:37 GMT",
            "Sun Nov 6 08:49:37 1994",
            "0",
            "-1",
        ] {
            assert_eq!(date(s), None, "{s:?}");
        }
    }

    #[test]
    fn formats() {
        assert_eq!(fmt(EPOCH_1994), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(fmt(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(fmt(-1), "Wed, 31 Dec 1969 23:59:59 GMT");
        assert_eq!(fmt(1835438400), "Tue, 29 Feb 2028 12:00:00 GMT");
        let mut v = b"Date: ".to_vec();
        format_http_date(253402300799, &mut v);
        assert_eq!(v, b"Date: Fri, 31 Dec 9999 23:59:59 GMT");
    }

    proptest! {
        #[test]
        fn date_round_trip(t in -62167219200i64..253402300800) {
            let s = fmt(t);
            prop_assert_eq!(s.len(), 29);
            prop_assert_eq!(date(&s), Some(t));
        }

        #[test]
        fn range_within_bounds(v in "(bytes|BYTES|x)=[0-9]{0,3}-[0-9]{0,3}", len in 0u64..2000) {
            match parse_range(v.as_bytes(), len) {
                RangeSpec::Partial { start, end } => prop_assert!(start <= end && end < len),
                RangeSpec::Unsatisfiable | RangeSpec::Full => {}
            }
        }
    }

    fn ttl(
        status: u16,
        cc: Option<&str>,
        expires: Option<&str>,
        date: Option<&str>,
    ) -> Option<u64> {
        cache_ttl(
            status,
            cc.map(str::as_bytes),
            expires.map(str::as_bytes),
            date.map(str::as_bytes),
            false,
            EPOCH_1994,
            120,
        )
    }

    #[test]
    fn ttl_statuses() {
        for s in [200, 203, 300, 301, 304, 404, 410] {
            assert_eq!(ttl(s, None, None, None), Some(120), "{s}");
        }
        for s in [201, 206, 400, 403, 500, 502, 503, 504] {
            assert_eq!(ttl(s, Some("max-age=60"), None, None), None, "{s}");
        }
        for s in [302, 307] {
            assert_eq!(ttl(s, None, None, None), None);
            assert_eq!(ttl(s, Some("max-age=5"), None, None), Some(5));
            assert_eq!(ttl(s, Some("s-maxage=7"), None, None), Some(7));
            assert_eq!(
                ttl(s, None, Some("Sun, 06 Nov 1994 08:50:37 GMT"), None),
                Some(60)
            );
        }
    }

    #[test]
    fn ttl_directives() {
        assert_eq!(ttl(200, Some("max-age=60"), None, None), Some(60));
        assert_eq!(
            ttl(200, Some("public, MAX-AGE=\"61\""), None, None),
            Some(61)
        );
        assert_eq!(
            ttl(200, Some("max-age=60, s-maxage=5"), None, None),
            Some(5)
        );
        assert_eq!(ttl(200, Some("s-maxage=0, max-age=60"), None, None), None);
        assert_eq!(ttl(200, Some("max-age=0"), None, None), None);
        assert_eq!(
            ttl(200, Some("max-age=10, max-age=20"), None, None),
            Some(10)
        );
        assert_eq!(ttl(200, Some("max-age=abc"), None, None), None);
        assert_eq!(ttl(200, Some("max-age"), None, None), None);
        assert_eq!(
            ttl(200, Some("max-age=99999999999999999999"), None, None),
            Some(1 << 31)
        );
        assert_eq!(ttl(200, Some("public"), None, None), Some(120));
        for cc in [
            "no-store",
            "private",
            "no-cache",
            "max-age=60, PRIVATE",
            "private=\"set-cookie, x\", max-age=60",
            "no-cache=\"Set-Cookie\"",
            "s-maxage=60,no-store",
        ] {
            assert_eq!(ttl(200, Some(cc), None, None), None, "{cc}");
        }
        // A quoted comma is not a separator.
        assert_eq!(
            ttl(200, Some("ext=\"a, private\", max-age=9"), None, None),
            Some(9)
        );
        let cookie = cache_ttl(200, Some(b"max-age=60"), None, None, true, 0, 120);
        assert_eq!(cookie, None);
        // default_ttl 0 means: not cached without explicit freshness.
        assert_eq!(cache_ttl(200, None, None, None, false, 0, 0), None);
    }

    #[test]
    fn ttl_expires() {
        let later = "Sun, 06 Nov 1994 08:51:37 GMT";
        assert_eq!(ttl(200, None, Some(later), None), Some(120));
        // Relative to the origin's Date, not to our clock.
        assert_eq!(
            ttl(
                200,
                None,
                Some(later),
                Some("Sun, 06 Nov 1994 08:51:07 GMT")
            ),
            Some(30)
        );
        assert_eq!(ttl(200, None, Some(later), Some("garbage")), Some(120));
        assert_eq!(
            ttl(200, None, Some("Sun, 06 Nov 1994 08:49:37 GMT"), None),
            None
        );
        assert_eq!(
            ttl(200, None, Some("Sun, 06 Nov 1994 08:00:00 GMT"), None),
            None
        );
        assert_eq!(ttl(200, None, Some("0"), None), None);
        assert_eq!(ttl(200, None, Some(""), None), None);
        // max-age wins over Expires.
        assert_eq!(ttl(200, Some("max-age=5"), Some("0"), None), Some(5));
        assert_eq!(ttl(200, Some("public"), Some(later), None), Some(120));
    }

    #[test]
    fn stale_window_directives() {
        let w = |cc: Option<&str>, grace| stale_windows(cc.map(str::as_bytes), grace);
        assert_eq!(w(None, 0), (0, 0));
        assert_eq!(w(None, 30), (30, 30));
        assert_eq!(w(Some("max-age=5"), 30), (30, 30));
        assert_eq!(w(Some("max-age=5, stale-while-revalidate=10"), 0), (10, 0));
        assert_eq!(w(Some("STALE-IF-ERROR=\"60\", max-age=5"), 7), (7, 60));
        assert_eq!(
            w(
                Some("stale-while-revalidate=1, stale-if-error=2, stale-if-error=9"),
                0
            ),
            (1, 2)
        );
        assert_eq!(w(Some("stale-while-revalidate=x"), 30), (0, 30));
        assert_eq!(
            w(Some("stale-while-revalidate=9, must-revalidate"), 30),
            (0, 0)
        );
        assert_eq!(w(Some("proxy-revalidate"), 30), (0, 0));
        assert_eq!(w(Some("s-maxage=5"), 30), (0, 0));
        assert_eq!(w(Some("s-maxage=5, stale-if-error=9"), 30), (0, 9));
        assert_eq!(w(Some("stale-if-error=99999999999999"), 0).1, u32::MAX / 4);
    }

    #[test]
    fn directive_tokenizer() {
        let d: Vec<_> = directives(b" a , b=1,c = \"x,\\\"y\" ,, d=\"unterminated").collect();
        assert_eq!(
            d,
            vec![
                (&b"a"[..], None),
                (&b"b"[..], Some(&b"1"[..])),
                (&b"c"[..], Some(&b"x,\\\"y"[..])),
                (&b"d"[..], Some(&b"unterminated"[..])),
            ]
        );
        assert_eq!(
            directives(b"a=\"\"").collect::<Vec<_>>(),
            vec![(&b"a"[..], Some(&b""[..]))]
        );
        assert_eq!(
            directives(b"a=\"").collect::<Vec<_>>(),
            vec![(&b"a"[..], Some(&b""[..]))]
        );
    }

    fn range(v: &str, len: u64) -> RangeSpec {
        parse_range(v.as_bytes(), len)
    }

    #[test]
    fn ranges() {
        use RangeSpec::*;
        let p = |start, end| Partial { start, end };
        assert_eq!(range("bytes=0-99", 1000), p(0, 99));
        assert_eq!(range("bytes=500-", 1000), p(500, 999));
        assert_eq!(range("bytes=-100", 1000), p(900, 999));
        assert_eq!(range("bytes=-5000", 1000), p(0, 999));
        assert_eq!(range("bytes=900-5000", 1000), p(900, 999));
        assert_eq!(range("Bytes = 1-1 ", 1000), p(1, 1));
        assert_eq!(range("bytes=0-18446744073709551616", 10), p(0, 9));
        assert_eq!(range("bytes=1000-", 1000), Unsatisfiable);
        assert_eq!(range("bytes=1000-2000", 1000), Unsatisfiable);
        assert_eq!(range("bytes=99999999999999999999-", 1000), Unsatisfiable);
        assert_eq!(range("bytes=-0", 1000), Unsatisfiable);
        assert_eq!(range("bytes=-1", 0), Unsatisfiable);
        assert_eq!(range("bytes=0-", 0), Unsatisfiable);
        for v in [
            "bytes=0-1,5-6",
            "items=0-1",
            "bytes=5-1",
            "bytes=-",
            "bytes=a-b",
            "bytes=1-2-3",
            "bytes 0-1",
            "bytes=--1",
            "bytes=+1-2",
            "bytes=0-1,",
            "",
        ] {
            assert_eq!(range(v, 1000), Full, "{v:?}");
        }
    }

    #[test]
    fn if_range() {
        let m = |v: &str, etag: Option<&str>, lm: Option<&str>| {
            if_range_matches(v.as_bytes(), etag.map(str::as_bytes), lm.map(str::as_bytes))
        };
        let lm = Some("Sun, 06 Nov 1994 08:49:37 GMT");
        assert!(m("\"a\"", Some("\"a\""), None));
        assert!(m(" \"a\" ", Some("\"a\""), lm));
        assert!(!m("\"a\"", Some("\"b\""), lm));
        assert!(!m("W/\"a\"", Some("W/\"a\""), None));
        assert!(!m("\"a\"", Some("W/\"a\""), None));
        assert!(!m("\"a\"", None, lm));
        assert!(m("Sun, 06 Nov 1994 08:49:37 GMT", None, lm));
        assert!(!m("Sun, 06 Nov 1994 08:49:38 GMT", None, lm));
        assert!(!m("Sun, 06 Nov 1994 08:49:37 GMT", Some("\"a\""), None));
        assert!(!m("yesterday", None, lm));
    }

    #[test]
    fn conditionals() {
        let nm = |inm: Option<&str>, ims: Option<&str>, etag: Option<&str>, lm: Option<&str>| {
            not_modified(
                inm.map(str::as_bytes),
                ims.map(str::as_bytes),
                etag.map(str::as_bytes),
                lm.map(str::as_bytes),
            )
        };
        let e = Some("\"abc\"");
        assert!(nm(Some("\"abc\""), None, e, None));
        assert!(nm(Some("W/\"abc\""), None, e, None));
        assert!(nm(Some("\"abc\""), None, Some("W/\"abc\""), None));
        assert!(nm(Some("\"x\", \"a,b\" ,W/\"abc\""), None, e, None));
        assert!(nm(Some("\"a,b\""), None, Some("\"a,b\""), None));
        assert!(nm(Some("*"), None, None, None));
        assert!(!nm(Some("\"abd\""), None, e, None));
        assert!(!nm(Some("\"a\""), None, Some("\"a,b\""), None));
        assert!(!nm(Some("\"abc\""), None, None, None));
        assert!(!nm(Some("abc"), None, e, None));
        let lm = Some("Sun, 06 Nov 1994 08:49:37 GMT");
        assert!(nm(None, lm, None, lm));
        assert!(nm(None, Some("Sun, 06 Nov 1994 08:49:38 GMT"), None, lm));
        assert!(!nm(None, Some("Sun, 06 Nov 1994 08:49:36 GMT"), None, lm));
        assert!(!nm(None, Some("yesterday"), None, lm));
        assert!(!nm(None, lm, None, None));
        assert!(!nm(None, None, e, lm));
        // If-None-Match decides alone.
        assert!(!nm(Some("\"zzz\""), lm, e, lm));
    }
}
