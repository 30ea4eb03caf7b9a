//! SORT's BY and GET patterns (Redis's lookupKeyByPattern): `#` is the element itself; a
//! pattern with a `*` names the key the element replaces the first `*` with.

use crate::commands::Ctx;
use crate::keyspace::Value;

/// What a pattern names once the element is substituted.
enum Target<'p> {
    /// The element itself (`#`).
    Element,
    /// A string key.
    Key(Vec<u8>),
    /// A hash field (`key->field`); hashes do not exist yet, so it always finds nothing.
    HashField(Vec<u8>, &'p [u8]),
}

/// The target of `pattern` for `element`; None when the pattern has no `*` (a fixed key
/// names nothing: "nosort" and the like).
fn target<'p>(pattern: &'p [u8], element: &[u8]) -> Option<Target<'p>> {
    if pattern == b"#" {
        return Some(Target::Element);
    }
    let star = pattern.iter().position(|&c| c == b'*')?;
    // A "->" after the `*`, followed by a field name, makes it a hash field.
    let arrow = pattern[star + 1..]
        .windows(2)
        .position(|w| w == b"->")
        .map(|i| star + 1 + i)
        .filter(|&i| i + 2 < pattern.len());
    let key_end = arrow.unwrap_or(pattern.len());
    let mut key = Vec::with_capacity(key_end - 1 + element.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(element);
    key.extend_from_slice(&pattern[star + 1..key_end]);
    Some(match arrow {
        Some(i) => Target::HashField(key, &pattern[i + 2..]),
        None => Target::Key(key),
    })
}

/// The value `pattern` names for `element`: the element for `#`, a string key's bytes, a
/// hash field's value for `key->field`, or None when the key is missing or of another type. A key is looked up as a read (hits
/// and misses counted, as Redis's lookupKeyRead).
pub fn lookup(ctx: &mut Ctx, pattern: &[u8], element: &[u8]) -> Option<Vec<u8>> {
    let (key, field) = match target(pattern, element)? {
        Target::Element => return Some(element.to_vec()),
        Target::Key(key) => (key, None),
        Target::HashField(key, field) => (key, Some(field)),
    };
    let (db, now, touch) = (ctx.client.db, ctx.now_ms, !ctx.client.no_touch);
    let entry = ctx.server.keyspace.lookup_read(db, &key, now, touch)?;
    match (&entry.value, field) {
        (Value::Str(s), None) => Some(s.bytes().to_vec()),
        (Value::Hash(h), Some(field)) => h.get(field).map(<[u8]>::to_vec),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_of(pattern: &[u8], element: &[u8]) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
        target(pattern, element).map(|t| match t {
            Target::Element => (b"#".to_vec(), None),
            Target::Key(k) => (k, None),
            Target::HashField(k, f) => (k, Some(f.to_vec())),
        })
    }

    #[test]
    fn patterns_substitute_the_first_star() {
        assert_eq!(key_of(b"w_*", b"3"), Some((b"w_3".to_vec(), None)));
        assert_eq!(key_of(b"*_*", b"a"), Some((b"a_*".to_vec(), None)));
        assert_eq!(key_of(b"nosort", b"a"), None);
        assert_eq!(key_of(b"#", b"a"), Some((b"#".to_vec(), None)));
        assert_eq!(
            key_of(b"h_*->f", b"a"),
            Some((b"h_a".to_vec(), Some(b"f".to_vec())))
        );
        assert_eq!(key_of(b"h_*->", b"a"), Some((b"h_a->".to_vec(), None)));
        assert_eq!(key_of(b"h->*", b"a"), Some((b"h->a".to_vec(), None)));
    }
}
