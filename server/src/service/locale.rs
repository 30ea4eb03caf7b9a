//! The collation locale (locale-collate): SORT ALPHA orders its elements by it, as Redis
//! compares them with strcoll(3), and so do Lua's string comparisons (the interpreter
//! calls strcoll too). Redis sets LC_COLLATE from the directive at start and at each
//! CONFIG SET; an empty name takes the environment's (LC_ALL, LC_COLLATE, LANG).

use std::cmp::Ordering;
use std::ffi::{CStr, CString};

/// Sets LC_COLLATE to `name`; false (nothing changed) when the system has no such locale.
pub fn set_collate(name: &str) -> bool {
    let Ok(name) = CString::new(name) else {
        return false;
    };
    // SAFETY: `name` is NUL-terminated; only the event loop's thread calls setlocale.
    !unsafe { libc::setlocale(libc::LC_COLLATE, name.as_ptr()) }.is_null()
}

/// `bytes` as strcoll sees them: up to the first NUL, which ends a C string.
pub fn collation_key(bytes: &[u8]) -> CString {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    CString::new(&bytes[..end]).expect("no NUL before `end`")
}

/// How `a` and `b` compare under LC_COLLATE (strcoll).
pub fn collate(a: &CStr, b: &CStr) -> Ordering {
    // SAFETY: both are NUL-terminated strings.
    unsafe { libc::strcoll(a.as_ptr(), b.as_ptr()) }.cmp(&0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_c_locale_orders_by_bytes_up_to_a_nul() {
        assert!(set_collate("C"));
        let key = |s: &[u8]| collation_key(s);
        assert_eq!(collate(&key(b"B"), &key(b"a")), Ordering::Less);
        assert_eq!(collate(&key(b"ab\0z"), &key(b"ab\0a")), Ordering::Equal);
        assert_eq!(collate(&key(b"ab"), &key(b"abc")), Ordering::Less);
    }

    #[test]
    fn an_unknown_locale_is_refused() {
        assert!(!set_collate("no_such_locale.UTF-99"));
        assert!(!set_collate("a\0b"));
    }
}
