//! LMOVE, RPOPLPUSH, LMOVEM (Redis 8.10) and the blocking BLMOVE, BRPOPLPUSH, BLMOVEM.

use super::{end_arg, write_list};
use crate::commands::{block_or_null, Ctx};
use crate::keyspace::{End, List, Value};
use crate::pubsub::notify;
use crate::zset_commands::{after_write, parse};

/// How many elements a move takes and how they land (LMOVEM's how-many block; one
/// element for LMOVE and the rest).
#[derive(Clone, Copy)]
struct Take {
    /// At most this many (COUNT), or exactly this many (EXACTLY).
    count: usize,
    /// EXACTLY: nothing moves unless the source holds `count`.
    exactly: bool,
    /// BULK: the elements keep their source order at the destination; else OBO, each
    /// pushed in turn as it was popped.
    bulk: bool,
}

impl Take {
    /// One element, as LMOVE moves it.
    const ONE: Take = Take {
        count: 1,
        exactly: false,
        bulk: false,
    };
}

/// What a move found.
enum Moved {
    /// The source is missing (nothing replied).
    NoSource,
    /// EXACTLY asked for more than the source holds (nothing replied).
    Short,
    /// The moved elements, in their order at the destination (head to tail).
    Done(Vec<Vec<u8>>),
    /// A WRONGTYPE error was replied.
    Failed,
}

/// The popped elements (in pop order) as they lie at the destination, head to tail: each
/// pushed in turn (OBO), or in their source order (BULK).
fn landing_order(mut popped: Vec<Vec<u8>>, from: End, to: End, bulk: bool) -> Vec<Vec<u8>> {
    let reversed = if bulk {
        from == End::Back
    } else {
        to == End::Front
    };
    if reversed {
        popped.reverse();
    }
    popped
}

/// Moves elements from `from` of the list at `src` to `to` of the list at `dst` (created
/// when absent), as `take` says: all popped first, then pushed (so a list moved onto
/// itself OBO has them reversed in place). Push events on `dst`, then the pop's on `src`,
/// as Redis's lmoveGenericCommand; one change per element.
fn move_elements(ctx: &mut Ctx, src: &[u8], dst: &[u8], from: End, to: End, take: Take) -> Moved {
    let (db, cfg) = (ctx.client.db, ctx.server.config.list);
    let len = match write_list(ctx, src) {
        Err(_) => return Moved::Failed,
        Ok(None) => return Moved::NoSource,
        Ok(Some(list)) => list.len(),
    };
    if take.exactly && len < take.count {
        return Moved::Short;
    }
    // The destination's type is checked before anything moves.
    if src != dst && write_list(ctx, dst).is_err() {
        return Moved::Failed;
    }
    let list = write_list(ctx, src).ok().flatten().expect("checked above");
    let popped = list.pop(from, take.count, &cfg);
    let moved = landing_order(popped, from, to, take.bulk);
    // Pushing at the head one by one puts the last pushed first.
    let pushes: Vec<&[u8]> = match to {
        End::Front => moved.iter().rev().map(Vec::as_slice).collect(),
        End::Back => moved.iter().map(Vec::as_slice).collect(),
    };
    let (pushed, popped) = (
        match to {
            End::Front => "lpush",
            End::Back => "rpush",
        },
        match from {
            End::Front => "lpop",
            End::Back => "rpop",
        },
    );
    if src == dst {
        list.push(to, &pushes, &cfg);
        ctx.server.keyspace.signal_modified(db, src);
        ctx.notify(notify::LIST, pushed, dst);
        ctx.notify(notify::LIST, popped, src);
    } else {
        let empty = list.is_empty();
        let (entry, created) =
            ctx.server
                .keyspace
                .lookup_write_or_create(db, dst, ctx.now_ms, || Value::List(List::new()));
        let list = entry.value.as_list_mut().expect("checked above");
        list.push(to, &pushes, &cfg);
        if !created {
            ctx.server.keyspace.signal_modified(db, dst);
            // A longer list may be enough for a BLMOVEM EXACTLY waiting on it.
            ctx.server.keyspace.signal_ready(db, dst);
        }
        ctx.notify(notify::LIST, pushed, dst);
        after_write(ctx, src, empty, notify::LIST, popped);
    }
    ctx.server.keyspace.add_dirty(moved.len() as u64);
    Moved::Done(moved)
}

/// Moves one element and replies it; false, with nothing replied, when `src` is missing.
fn move_one(ctx: &mut Ctx, src: &[u8], dst: &[u8], from: End, to: End) -> bool {
    match move_elements(ctx, src, dst, from, to, Take::ONE) {
        Moved::NoSource | Moved::Short => false,
        Moved::Failed => true,
        Moved::Done(mut moved) => {
            ctx.out.bulk(&moved.pop().expect("one element"));
            true
        }
    }
}

/// The two ends of the LMOVE family, `args[3]` and `args[4]`: where from, where to.
fn ends(ctx: &mut Ctx, args: &[&[u8]]) -> Option<(End, End)> {
    Some((end_arg(ctx, args[3])?, end_arg(ctx, args[4])?))
}

/// LMOVE source destination LEFT|RIGHT LEFT|RIGHT
pub fn lmove(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some((from, to)) = ends(ctx, args) else {
        return;
    };
    if !move_one(ctx, args[1], args[2], from, to) {
        ctx.out.null();
    }
}

/// RPOPLPUSH source destination
pub fn rpoplpush(ctx: &mut Ctx, args: &[&[u8]]) {
    if !move_one(ctx, args[1], args[2], End::Back, End::Front) {
        ctx.out.null();
    }
}

/// Moves, or waits on the source until `deadline` (inside MULTI: the null reply). A move
/// replays in the AOF as its non-blocking form (`replay`: LMOVE's or RPOPLPUSH's argv).
fn blocking_move(
    ctx: &mut Ctx,
    args: &[&[u8]],
    from: End,
    to: End,
    deadline: Option<u64>,
    replay: &[&[u8]],
) {
    if move_one(ctx, args[1], args[2], from, to) {
        ctx.propagate_instead(replay);
    } else {
        block_or_null(ctx, &args[1..2], deadline, false);
    }
}

/// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
pub fn blmove(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some((from, to)) = ends(ctx, args) else {
        return;
    };
    let Some(deadline) = parse::timeout(ctx, args[5]) else {
        return;
    };
    blocking_move(
        ctx,
        args,
        from,
        to,
        deadline,
        &[b"LMOVE", args[1], args[2], args[3], args[4]],
    );
}

/// BRPOPLPUSH source destination timeout
pub fn brpoplpush(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(deadline) = parse::timeout(ctx, args[3]) else {
        return;
    };
    blocking_move(
        ctx,
        args,
        End::Back,
        End::Front,
        deadline,
        &[b"RPOPLPUSH", args[1], args[2]],
    );
}

/// Whether `arg` is `yes` rather than `no` (any case); None after the syntax error when it
/// is neither.
fn one_of(ctx: &mut Ctx, arg: &[u8], yes: &[u8], no: &[u8]) -> Option<bool> {
    if arg.eq_ignore_ascii_case(yes) {
        Some(true)
    } else if arg.eq_ignore_ascii_case(no) {
        Some(false)
    } else {
        ctx.syntax_error();
        None
    }
}

/// LMOVEM's and BLMOVEM's how-many block, `COUNT count|EXACTLY exactly OBO|BULK` (all
/// three or none: one element, as LMOVE), or None after the error reply: the syntax error
/// for a block of another shape, LMPOP's count error for a count that is not positive.
fn how_many(ctx: &mut Ctx, block: &[&[u8]]) -> Option<Take> {
    let [selector, count, ordering] = block else {
        if block.is_empty() {
            return Some(Take::ONE);
        }
        ctx.syntax_error();
        return None;
    };
    let exactly = one_of(ctx, selector, b"EXACTLY", b"COUNT")?;
    let bulk = one_of(ctx, ordering, b"BULK", b"OBO")?;
    let positive = Some("ERR count should be greater than 0");
    let count = parse::int_in_range(ctx, count, 1, i64::MAX, positive)? as usize;
    Some(Take {
        count,
        exactly,
        bulk,
    })
}

/// Replies what a move of several moved: the array of elements, else nil when EXACTLY
/// fell short or the empty array when the source is missing.
fn reply_moved(ctx: &mut Ctx, moved: &Moved, take: Take) {
    match moved {
        Moved::Failed => {}
        Moved::Done(elements) => {
            ctx.out.array(elements.len());
            for e in elements {
                ctx.out.bulk(e);
            }
        }
        Moved::Short => ctx.out.null(),
        Moved::NoSource if take.exactly => ctx.out.null(),
        Moved::NoSource => ctx.out.array(0),
    }
}

/// LMOVEM source destination LEFT|RIGHT LEFT|RIGHT [COUNT count|EXACTLY exactly OBO|BULK]
pub fn lmovem(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some((from, to)) = ends(ctx, args) else {
        return;
    };
    let Some(take) = how_many(ctx, &args[5..]) else {
        return;
    };
    let moved = move_elements(ctx, args[1], args[2], from, to, take);
    reply_moved(ctx, &moved, take);
}

/// BLMOVEM source destination LEFT|RIGHT LEFT|RIGHT timeout [COUNT count|EXACTLY exactly
/// OBO|BULK]: waits while the source is empty (COUNT), or shorter than `exactly`
/// (EXACTLY); a push that lengthens it wakes the wait. Replays as LMOVEM EXACTLY with the
/// number moved, so a replica never waits.
pub fn blmovem(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some((from, to)) = ends(ctx, args) else {
        return;
    };
    let Some(deadline) = parse::timeout(ctx, args[5]) else {
        return;
    };
    let Some(take) = how_many(ctx, &args[6..]) else {
        return;
    };
    match move_elements(ctx, args[1], args[2], from, to, take) {
        Moved::Done(elements) => {
            if ctx.propagating() {
                let n = elements.len().to_string();
                let ordering: &[u8] = if take.bulk { b"BULK" } else { b"OBO" };
                ctx.propagate_instead(&[
                    b"LMOVEM",
                    args[1],
                    args[2],
                    args[3],
                    args[4],
                    b"EXACTLY",
                    n.as_bytes(),
                    ordering,
                ]);
            }
            reply_moved(ctx, &Moved::Done(elements), take);
        }
        Moved::Failed => {}
        Moved::NoSource | Moved::Short => block_or_null(ctx, &args[1..2], deadline, false),
    }
}
