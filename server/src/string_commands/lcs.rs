//! LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]: the longest common
//! subsequence of two strings, by Redis's dynamic programming table and walk back.

use crate::commands::Ctx;

/// Options of LCS.
#[derive(Default)]
struct Options {
    len: bool,
    idx: bool,
    with_match_len: bool,
    min_match_len: i64,
}

/// The bytes of the string at `key` for LCS: empty when missing; None for another type.
fn input(ctx: &mut Ctx, key: &[u8]) -> Option<Vec<u8>> {
    let db = ctx.db();
    let touch = !ctx.client.no_touch;
    match ctx.server.keyspace.lookup_read(db, key, ctx.now_ms, touch) {
        None => Some(Vec::new()),
        Some(e) => e.value.as_string().ok().map(|s| s.bytes().to_vec()),
    }
}

/// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]
pub fn lcs(ctx: &mut Ctx, args: &[&[u8]]) {
    let (a, b) = (input(ctx, args[1]), input(ctx, args[2]));
    let (Some(a), Some(b)) = (a, b) else {
        return ctx.error("ERR The specified keys must contain string values");
    };
    let mut o = Options::default();
    let mut j = 3;
    while j < args.len() {
        let opt = args[j].to_ascii_uppercase();
        match opt.as_slice() {
            b"IDX" => o.idx = true,
            b"LEN" => o.len = true,
            b"WITHMATCHLEN" => o.with_match_len = true,
            b"MINMATCHLEN" if j + 1 < args.len() => {
                let Some(n) = ctx.int_arg(args[j + 1]) else {
                    return;
                };
                o.min_match_len = n.max(0);
                j += 1;
            }
            _ => return ctx.syntax_error(),
        }
        j += 1;
    }
    if o.idx && o.len {
        return ctx.error("ERR If you want both the length and indexes, please just use IDX.");
    }
    if a.len() as u64 >= u32::MAX as u64 - 1 || b.len() as u64 >= u32::MAX as u64 - 1 {
        return ctx.error("ERR String too long for LCS");
    }
    let cells = (a.len() as u64 + 1) * (b.len() as u64 + 1);
    if cells * 4 > ctx.server.config.proto_max_bulk_len.max(0) as u64 {
        return ctx
            .error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
    }
    let table = Table::build(&a, &b);
    let total = table.at(a.len(), b.len());
    if o.len {
        return ctx.out.int(total as i64);
    }
    let (text, ranges) = table.walk(&a, &b);
    if !o.idx {
        return ctx.out.bulk(&text);
    }
    let kept: Vec<&Match> = ranges
        .iter()
        .filter(|m| o.min_match_len == 0 || m.len() >= o.min_match_len as u64)
        .collect();
    ctx.out.map(2);
    ctx.out.bulk(b"matches");
    ctx.out.array(kept.len());
    for m in kept {
        ctx.out.array(2 + o.with_match_len as usize);
        for (start, end) in [m.a, m.b] {
            ctx.out.array(2);
            ctx.out.int(start as i64);
            ctx.out.int(end as i64);
        }
        if o.with_match_len {
            ctx.out.int(m.len() as i64);
        }
    }
    ctx.out.bulk(b"len");
    ctx.out.int(total as i64);
}

/// One contiguous match: its inclusive ranges in the first and in the second string.
struct Match {
    a: (u32, u32),
    b: (u32, u32),
}

impl Match {
    fn len(&self) -> u64 {
        (self.a.1 - self.a.0 + 1) as u64
    }
}

/// LCS lengths of every pair of prefixes: `(a.len() + 1) x (b.len() + 1)` cells.
struct Table {
    cells: Vec<u32>,
    width: usize,
}

impl Table {
    fn build(a: &[u8], b: &[u8]) -> Table {
        let width = b.len() + 1;
        let mut cells = vec![0u32; (a.len() + 1) * width];
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                cells[i * width + j] = if a[i - 1] == b[j - 1] {
                    cells[(i - 1) * width + j - 1] + 1
                } else {
                    cells[(i - 1) * width + j].max(cells[i * width + j - 1])
                };
            }
        }
        Table { cells, width }
    }

    fn at(&self, i: usize, j: usize) -> u32 {
        self.cells[i * self.width + j]
    }

    /// Walks back from the end as Redis does: the subsequence, and its matches from the
    /// last to the first.
    fn walk(&self, a: &[u8], b: &[u8]) -> (Vec<u8>, Vec<Match>) {
        let mut text = vec![0u8; self.at(a.len(), b.len()) as usize];
        let mut idx = text.len();
        let mut ranges = Vec::new();
        let mut current: Option<Match> = None;
        let (mut i, mut j) = (a.len(), b.len());
        while i > 0 && j > 0 {
            let mut emit = false;
            if a[i - 1] == b[j - 1] {
                text[idx - 1] = a[i - 1];
                let (ci, cj) = ((i - 1) as u32, (j - 1) as u32);
                match &mut current {
                    None => {
                        current = Some(Match {
                            a: (ci, ci),
                            b: (cj, cj),
                        })
                    }
                    Some(m) if m.a.0 == ci + 1 && m.b.0 == cj + 1 => {
                        m.a.0 -= 1;
                        m.b.0 -= 1;
                    }
                    Some(_) => emit = true,
                }
                if current.as_ref().is_some_and(|m| m.a.0 == 0 || m.b.0 == 0) {
                    emit = true;
                }
                idx -= 1;
                i -= 1;
                j -= 1;
            } else {
                if self.at(i - 1, j) > self.at(i, j - 1) {
                    i -= 1;
                } else {
                    j -= 1;
                }
                emit = current.is_some();
            }
            if emit {
                ranges.extend(current.take());
            }
        }
        (text, ranges)
    }
}
