//! The list commands (L*, R*, BL*, BR*), on the `goblin-zset` list engine.
//!
//! - [`push`]: LPUSH, RPUSH, LPUSHX, RPUSHX, LINSERT.
//! - [`pop`]: LPOP, RPOP, LMPOP and the blocking BLPOP, BRPOP, BLMPOP.
//! - [`moves`]: LMOVE, RPOPLPUSH, LMOVEM and the blocking BLMOVE, BRPOPLPUSH, BLMOVEM.
//! - [`read`]: LLEN, LINDEX, LRANGE, LPOS.
//! - [`edit`]: LSET, LTRIM, LREM.
//!
//! The blocking forms share the sorted-set pops' machinery (`commands::blocking`): with
//! nothing to pop they wait on their keys, FIFO per key, and are run again once a
//! command or transaction made a key non-empty.

mod edit;
mod moves;
mod pop;
mod push;
mod read;

use crate::commands::{Command, Ctx, Flags};
use crate::keyspace::{End, List, Member, Value, WrongType};
use crate::resp::reply::ReplyWriter;

const W: Flags = Flags::WRITE;
const WD: Flags = Flags::WRITE.with(Flags::DENYOOM);
const WDF: Flags = WD.with(Flags::FAST);
const WF: Flags = Flags::WRITE.with(Flags::FAST);
const R: Flags = Flags::READONLY;
const RF: Flags = Flags::READONLY.with(Flags::FAST);
const WB: Flags = Flags::WRITE.with(Flags::BLOCKING);

/// Every list command.
pub static COMMANDS: [Command; 24] = [
    Command::simple("lpush", -3, WDF, push::lpush),
    Command::simple("rpush", -3, WDF, push::rpush),
    Command::simple("lpushx", -3, WDF, push::lpushx),
    Command::simple("rpushx", -3, WDF, push::rpushx),
    Command::simple("linsert", 5, WD, push::linsert),
    Command::simple("lpop", -2, WF, pop::lpop),
    Command::simple("rpop", -2, WF, pop::rpop),
    Command::simple("lmpop", -4, W, pop::lmpop),
    Command::simple("blpop", -3, WB, pop::blpop),
    Command::simple("brpop", -3, WB, pop::brpop),
    Command::simple("blmpop", -5, WB, pop::blmpop),
    Command::simple("lmove", 5, WD, moves::lmove),
    Command::simple("rpoplpush", 3, WD, moves::rpoplpush),
    Command::simple("blmove", 6, WB.with(Flags::DENYOOM), moves::blmove),
    Command::simple("brpoplpush", 4, WB.with(Flags::DENYOOM), moves::brpoplpush),
    Command::simple("lmovem", -5, WD, moves::lmovem),
    Command::simple("blmovem", -6, WB.with(Flags::DENYOOM), moves::blmovem),
    Command::simple("llen", 2, RF, read::llen),
    Command::simple("lindex", 3, R, read::lindex),
    Command::simple("lrange", 4, R, read::lrange),
    Command::simple("lpos", -3, R, read::lpos),
    Command::simple("lset", 4, WD, edit::lset),
    Command::simple("ltrim", 4, W, edit::ltrim),
    Command::simple("lrem", 4, W, edit::lrem),
];

/// The list at `key` for reading, beside the reply writer: None when absent, `Err` after
/// the WRONGTYPE reply.
fn read_list_and_out<'c, 'a>(
    ctx: &'c mut Ctx<'a>,
    key: &[u8],
) -> (Result<Option<&'c List>, WrongType>, &'c mut ReplyWriter<'a>) {
    ctx.read_typed_and_out(key, Value::as_list)
}

/// The list at `key` for writing: None when absent, `Err` after the WRONGTYPE reply.
fn write_list<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Result<Option<&'c mut List>, WrongType> {
    ctx.write_typed(key, Value::as_list_mut)
}

/// Writes one element as a bulk string.
fn bulk(out: &mut ReplyWriter, m: Member) {
    m.with_bytes(|b| out.bulk(b));
}

/// LEFT or RIGHT (any case), or the syntax error.
fn end_arg(ctx: &mut Ctx, arg: &[u8]) -> Option<End> {
    if arg.eq_ignore_ascii_case(b"LEFT") {
        Some(End::Front)
    } else if arg.eq_ignore_ascii_case(b"RIGHT") {
        Some(End::Back)
    } else {
        ctx.syntax_error();
        None
    }
}

/// An index argument (negative from the end) as a position in a list of `len`, None when
/// outside it.
fn position(index: i64, len: usize) -> Option<usize> {
    let i = if index < 0 {
        index.checked_add(len as i64)?
    } else {
        index
    };
    (0..len as i64).contains(&i).then_some(i as usize)
}
