//! Glob-style pattern matching with Redis's rules (KEYS, SCAN MATCH, CONFIG GET):
//! `*`, `?`, `[abc]`, `[^abc]`, `[a-z]` and `\` escapes.

/// Whether `text` matches `pattern`; `nocase` folds ASCII case.
pub fn glob_match(pattern: &[u8], text: &[u8], nocase: bool) -> bool {
    let eq = |a: u8, b: u8| {
        if nocase {
            a.eq_ignore_ascii_case(&b)
        } else {
            a == b
        }
    };
    let (mut p, mut t) = (0usize, 0usize);
    // Position to resume at after the last '*': (pattern index after '*', text index).
    let mut backtrack: Option<(usize, usize)> = None;
    loop {
        if p < pattern.len() {
            match pattern[p] {
                b'*' => {
                    while p < pattern.len() && pattern[p] == b'*' {
                        p += 1;
                    }
                    if p == pattern.len() {
                        return true;
                    }
                    backtrack = Some((p, t));
                    continue;
                }
                b'?' if t < text.len() => {
                    p += 1;
                    t += 1;
                    continue;
                }
                b'[' if t < text.len() => {
                    if let Some((matched, next)) = match_class(pattern, p, text[t], nocase) {
                        if matched {
                            p = next;
                            t += 1;
                            continue;
                        }
                    }
                }
                b'\\' if p + 1 < pattern.len() && t < text.len() && eq(pattern[p + 1], text[t]) => {
                    p += 2;
                    t += 1;
                    continue;
                }
                c if t < text.len() && c != b'?' && c != b'[' && eq(c, text[t]) => {
                    p += 1;
                    t += 1;
                    continue;
                }
                _ => {}
            }
        } else if t == text.len() {
            return true;
        }
        // Mismatch: let the last '*' swallow one more byte.
        match backtrack {
            Some((bp, bt)) if bt < text.len() => {
                backtrack = Some((bp, bt + 1));
                p = bp;
                t = bt + 1;
            }
            _ => return false,
        }
    }
}

/// Matches one byte against the class starting at `pattern[start] == '['`. Returns whether
/// it matched and the index after the class. An unterminated class runs to the end, as in Redis.
fn match_class(pattern: &[u8], start: usize, c: u8, nocase: bool) -> Option<(bool, usize)> {
    let fold = |b: u8| if nocase { b.to_ascii_lowercase() } else { b };
    let c = fold(c);
    let mut i = start + 1;
    let negate = pattern.get(i) == Some(&b'^');
    if negate {
        i += 1;
    }
    let mut matched = false;
    while i < pattern.len() && pattern[i] != b']' {
        if pattern[i] == b'\\' && i + 1 < pattern.len() {
            i += 1;
            matched |= fold(pattern[i]) == c;
        } else if i + 2 < pattern.len() && pattern[i + 1] == b'-' {
            let (mut lo, mut hi) = (fold(pattern[i]), fold(pattern[i + 2]));
            if lo > hi {
                std::mem::swap(&mut lo, &mut hi);
            }
            matched |= (lo..=hi).contains(&c);
            i += 2;
        } else {
            matched |= fold(pattern[i]) == c;
        }
        i += 1;
    }
    Some((matched != negate, (i + 1).min(pattern.len())))
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn patterns() {
        let m = |p: &str, t: &str| glob_match(p.as_bytes(), t.as_bytes(), false);
        assert!(m("*", ""));
        assert!(m("h?llo", "hello"));
        assert!(m("h*llo", "heeeello"));
        assert!(m("h[ae]llo", "hallo"));
        assert!(!m("h[^e]llo", "hello"));
        assert!(m("h[a-b]llo", "hbllo"));
        assert!(m("a\\*b", "a*b"));
        assert!(!m("a\\*b", "axb"));
        assert!(m("*x*y*", "aaxbbyc"));
        assert!(!m("*x*y", "aaxbbyc"));
        assert!(glob_match(b"ZSET-*", b"zset-max", true));
    }
}
