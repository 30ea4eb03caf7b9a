//! PFDEBUG and PFSELFTEST: Redis's debugging and self-test commands for HLLs.

use super::{edit_hll, Found, CORRUPT};
use crate::commands::Ctx;
use crate::errors::until_nul;
use goblin_zset::hll::{self, sparse, Corrupt, Encoding, HEADER_LEN};

/// What a PFDEBUG subcommand found, to reply once the value is put back.
enum Outcome {
    /// GETREG: the registers, and whether the HLL was turned dense for them.
    Registers(Vec<u8>, bool),
    /// DECODE: the opcodes' text, or None for a dense HLL.
    Decoded(Option<String>),
    /// ENCODING.
    Encoding(Encoding),
    /// TODENSE: whether it was sparse.
    Converted(bool),
    /// A corrupt sparse HLL that GETREG or TODENSE could not convert.
    Corrupt,
    /// Not a subcommand.
    Unknown,
}

/// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key. The key is looked up (and made `raw`)
/// before the subcommand is known, as in Redis; turning an HLL dense is a change that
/// propagates, without a keyspace signal.
pub fn pfdebug(ctx: &mut Ctx, args: &[&[u8]]) {
    let sub = until_nul(args[1]).to_ascii_lowercase();
    let outcome = edit_hll(ctx, args[2], |bytes| run(&sub, bytes));
    let outcome = match outcome {
        None => return,
        Some(Found::Missing) => return ctx.error("ERR The specified key does not exist"),
        Some(Found::Edited(o)) => o,
    };
    match outcome {
        Outcome::Registers(regs, converted) => {
            count_conversion(ctx, converted);
            ctx.out.array(regs.len());
            for r in regs {
                ctx.out.int(r as i64);
            }
        }
        Outcome::Decoded(Some(text)) => ctx.out.bulk(text.as_bytes()),
        Outcome::Decoded(None) => ctx.error("ERR HLL encoding is not sparse"),
        Outcome::Encoding(e) => ctx.out.simple(e.as_str()),
        Outcome::Converted(converted) => {
            count_conversion(ctx, converted);
            ctx.out.int(converted as i64);
        }
        Outcome::Corrupt => ctx.error(CORRUPT),
        Outcome::Unknown => {
            let name = String::from_utf8_lossy(until_nul(args[1]));
            ctx.error(&format!("ERR Unknown PFDEBUG subcommand '{name}'"))
        }
    }
}

/// Runs subcommand `sub` (lowercase) on a valid HLL's bytes.
fn run(sub: &[u8], bytes: &mut Vec<u8>) -> Outcome {
    let encoding = hll::encoding_of(bytes).expect("checked by the lookup");
    match sub {
        b"getreg" => match hll::to_dense(bytes) {
            Ok(converted) => Outcome::Registers(hll::registers(bytes).collect(), converted),
            Err(Corrupt) => Outcome::Corrupt,
        },
        b"decode" => Outcome::Decoded(
            (encoding == Encoding::Sparse).then(|| sparse::decode(&bytes[HEADER_LEN..])),
        ),
        b"encoding" => Outcome::Encoding(encoding),
        b"todense" => match hll::to_dense(bytes) {
            Ok(converted) => Outcome::Converted(converted),
            Err(Corrupt) => Outcome::Corrupt,
        },
        _ => Outcome::Unknown,
    }
}

/// An encoding change counts as a change, so the command propagates.
fn count_conversion(ctx: &mut Ctx, converted: bool) {
    if converted {
        ctx.server.keyspace.add_dirty(1);
    }
}

/// PFSELFTEST: Redis's self-test of the register code and the estimate's error.
pub fn pfselftest(ctx: &mut Ctx, _args: &[&[u8]]) {
    let sparse_max = ctx.server.config.hll_sparse_max_bytes;
    match hll::self_test(|| ctx.server.keyspace.random(), sparse_max) {
        Ok(()) => ctx.out.ok(),
        Err(failure) => ctx.error(&format!("ERR {failure}")),
    }
}
