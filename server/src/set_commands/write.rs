//! SADD, SREM, SMOVE, SPOP.

use super::{write_set, write_set_reply};
use crate::commands::Ctx;
use crate::errors;
use crate::keyspace::{Cause, Set, SetEncoding, SetMut, Value};
use crate::pubsub::notify;
use crate::zset_commands::after_write;
use crate::zset_commands::parse;

/// SADD key member [member ...]
pub fn sadd(ctx: &mut Ctx, args: &[&[u8]]) {
    let db = ctx.client.db;
    let cfg = ctx.server.config.set;
    let members = &args[2..];
    // A new set's form comes from the first member and the count (setTypeCreate); an
    // existing one converts up front when the count is past its form (setTypeMaybeConvert).
    // A listpack set its key's record holds takes the members there while it can.
    let (found, created) =
        ctx.server
            .keyspace
            .lookup_set_for_write(db, args[1], ctx.now_ms, || {
                Value::Set(Set::create(members[0], members.len(), &cfg))
            });
    let (mut added, mut rest) = (0, members);
    let left = match found {
        SetMut::Record(mut set) if !created && members.len() <= cfg.max_listpack_entries => {
            while let Some((member, tail)) = rest.split_first() {
                let Some(new) = set.add(member, &cfg) else {
                    break;
                };
                added += usize::from(new);
                rest = tail;
            }
            (!rest.is_empty()).then(|| set.into_entry())
        }
        SetMut::Record(set) => Some(set.into_entry()),
        SetMut::Entry(entry) => Some(entry),
    };
    if let Some(entry) = left {
        let Ok(set) = entry.value.as_set_mut() else {
            // One lookup finds or creates the set; another type is replied here.
            return ctx.error(errors::WRONGTYPE);
        };
        if !created {
            set.maybe_convert(members.len(), &cfg);
        }
        added += rest.iter().filter(|m| set.add(m, &cfg)).count();
    }
    ctx.server.keyspace.add_dirty(added as u64);
    if added > 0 && !created {
        ctx.server.keyspace.signal_modified(db, args[1]);
    }
    if added > 0 {
        ctx.notify(notify::SET, "sadd", args[1]);
    }
    ctx.out.int(added as i64);
}

/// SREM key member [member ...]
pub fn srem(ctx: &mut Ctx, args: &[&[u8]]) {
    let Ok(found) = write_set(ctx, args[1]) else {
        return;
    };
    let Some(set) = found else {
        return ctx.out.int(0);
    };
    let mut removed = 0;
    for m in &args[2..] {
        if set.remove(m) {
            removed += 1;
            if set.is_empty() {
                break;
            }
        }
    }
    let empty = set.is_empty();
    if removed > 0 {
        after_write(ctx, args[1], empty, notify::SET, "srem");
        ctx.server.keyspace.add_dirty(removed as u64);
    }
    ctx.out.int(removed);
}

/// SMOVE source destination member
pub fn smove(ctx: &mut Ctx, args: &[&[u8]]) {
    let (src, dst, member) = (args[1], args[2], args[3]);
    let Ok(found) = write_set(ctx, src) else {
        return;
    };
    if found.is_none() {
        return ctx.out.int(0);
    }
    if write_set(ctx, dst).is_err() {
        return;
    }
    let set = write_set(ctx, src).ok().flatten().expect("checked above");
    if src == dst {
        let is_member = set.contains(member);
        return ctx.out.int(i64::from(is_member));
    }
    if !set.remove(member) {
        return ctx.out.int(0);
    }
    let empty = set.is_empty();
    after_write(ctx, src, empty, notify::SET, "srem");
    ctx.server.keyspace.add_dirty(1);
    let db = ctx.client.db;
    let cfg = ctx.server.config.set;
    let (entry, created) = ctx
        .server
        .keyspace
        .lookup_write_or_create(db, dst, ctx.now_ms, || {
            Value::Set(Set::create(member, 1, &cfg))
        });
    let set = entry.value.as_set_mut().expect("checked above");
    let added = set.add(member, &cfg);
    ctx.server.keyspace.add_dirty(u64::from(added));
    if added && !created {
        ctx.server.keyspace.signal_modified(db, dst);
    }
    if added {
        ctx.notify(notify::SET, "sadd", dst);
    }
    ctx.out.int(1);
}

/// How much larger than the popped count the rest must be for SPOP to pop one by one
/// (Redis's SPOP_MOVE_STRATEGY_MUL); otherwise it moves the rest to a new set.
const SPOP_MOVE_STRATEGY_MUL: usize = 5;

/// Members an SREM of SPOP's propagation carries at most (Redis's batch).
const SPOP_PROPAGATION_BATCH: usize = 1024;

/// SPOP with a count replays as SREMs of the popped members (spopWithCountCommand).
fn propagate_srem(ctx: &mut Ctx, key: &[u8], popped: &[Vec<u8>]) {
    for batch in popped.chunks(SPOP_PROPAGATION_BATCH) {
        let mut argv: Vec<&[u8]> = vec![b"SREM", key];
        argv.extend(batch.iter().map(Vec::as_slice));
        ctx.propagate_instead(&argv);
    }
}

/// SPOP key [count]
pub fn spop(ctx: &mut Ctx, args: &[&[u8]]) {
    match args.len() {
        2 => spop_one(ctx, args[1]),
        3 => spop_count(ctx, args),
        _ => ctx.syntax_error(),
    }
}

fn spop_one(ctx: &mut Ctx, key: &[u8]) {
    let seed = ctx.server.keyspace.random();
    let Ok(found) = write_set(ctx, key) else {
        return;
    };
    let Some(set) = found else {
        return ctx.out.null();
    };
    let member = set.pop_random(seed);
    let empty = set.is_empty();
    after_write(ctx, key, empty, notify::SET, "spop");
    ctx.server.keyspace.add_dirty(1);
    ctx.out.bulk(&member);
    ctx.propagate_instead(&[b"SREM", key, &member]);
}

fn spop_count(ctx: &mut Ctx, args: &[&[u8]]) {
    let key = args[1];
    let cfg = ctx.server.config.set;
    let Some(count) = parse::int_in_range(
        ctx,
        args[2],
        0,
        i64::MAX,
        Some("ERR value is out of range, must be positive"),
    ) else {
        return;
    };
    let count = count as usize;
    let mut rng = ctx.server.keyspace.command_rng();
    let Ok(found) = write_set(ctx, key) else {
        return;
    };
    let Some(set) = found else {
        return ctx.out.set(0);
    };
    if count == 0 {
        return ctx.out.set(0);
    }
    let size = set.len();
    if count >= size {
        // The whole set, as SUNION of it replies it; then the key goes.
        let whole = super::algebra::union_of(std::iter::once(&*set), &cfg);
        write_set_reply(&mut ctx.out, &whole);
        ctx.notify(notify::SET, "spop", key);
        ctx.server.keyspace.delete(ctx.client.db, key);
        ctx.notify(notify::GENERIC, "del", key);
        ctx.server.keyspace.add_dirty(size as u64);
        let verb =
            crate::propagate::deletion_verb(ctx.server.keyspace.removal_is_lazy(Cause::Server));
        ctx.propagate_instead(&[verb, key]);
        return;
    }
    let remaining = size - count;
    if remaining * SPOP_MOVE_STRATEGY_MUL > count {
        let popped: Vec<Vec<u8>> = (0..count).map(|_| set.pop_random(rng.next_u64())).collect();
        ctx.out.set(popped.len());
        for m in &popped {
            ctx.out.bulk(m);
        }
        propagate_srem(ctx, key, &popped);
    } else {
        // Move the members that stay to a new set and reply the old one.
        let mut kept = match set.encoding() {
            SetEncoding::Intset => Set::new_intset(),
            SetEncoding::Listpack | SetEncoding::Hashtable => Set::new_listpack(),
        };
        for _ in 0..remaining {
            kept.add(&set.pop_random(rng.next_u64()), &cfg);
        }
        let old = std::mem::replace(set, kept);
        write_set_reply(&mut ctx.out, &old);
        if ctx.server.propagation.enabled() {
            let popped: Vec<Vec<u8>> = old.iter().map(|m| m.to_vec()).collect();
            propagate_srem(ctx, key, &popped);
        }
        // The popped members' table is freed as Redis's dbReplaceValue frees it.
        ctx.server.keyspace.free_replaced(Value::Set(old));
    }
    ctx.server.keyspace.signal_modified(ctx.client.db, key);
    ctx.notify(notify::SET, "spop", key);
    ctx.server.keyspace.add_dirty(count as u64);
}
