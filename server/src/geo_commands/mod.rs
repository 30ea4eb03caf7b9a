//! The geo commands, on sorted sets whose scores are 52-bit geohashes (goblin_zset::geo), so
//! a geo key is a sorted set to every other command, as in Redis.
//!
//! - [`points`]: GEOADD, GEOPOS, GEODIST, GEOHASH.
//! - [`search`]: GEOSEARCH, GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER and the _RO forms.
//!
//! The helpers here parse coordinates and units and print coordinates and distances as
//! Redis prints them.

mod points;
mod search;

use crate::commands::{Command, Ctx, Flags};
use crate::errors;
use crate::numbers::parse_f64;
use crate::resp::reply::ReplyWriter;
use goblin_zset::geo::search::valid_point;

const WD: Flags = Flags::WRITE.with(Flags::DENYOOM);
const R: Flags = Flags::READONLY;

/// Every geo command.
pub static COMMANDS: [Command; 10] = [
    Command::simple("geoadd", -5, WD, points::geoadd),
    Command::simple("geopos", -2, R, points::geopos),
    Command::simple("geodist", -4, R, points::geodist),
    Command::simple("geohash", -2, R, points::geohash),
    Command::simple("geosearch", -7, R, search::geosearch),
    Command::simple("geosearchstore", -8, WD, search::geosearchstore),
    Command::simple("georadius", -6, WD, search::georadius),
    Command::simple("georadius_ro", -6, R, search::georadius_ro),
    Command::simple("georadiusbymember", -5, WD, search::georadiusbymember),
    Command::simple("georadiusbymember_ro", -5, R, search::georadiusbymember_ro),
];

/// A float argument, or `None` after replying `message` (Redis's
/// getDoubleFromObjectOrReply; its default text when `message` is None).
fn float_arg(ctx: &mut Ctx, arg: &[u8], message: Option<&str>) -> Option<f64> {
    let v = parse_f64(arg);
    if v.is_none() {
        match message {
            Some(m) => ctx.error(&format!("ERR {m}")),
            None => ctx.error(errors::NOT_A_FLOAT),
        }
    }
    v
}

/// A `longitude latitude` argument pair within Redis's limits (extractLongLatOrReply).
fn lonlat_args(ctx: &mut Ctx, args: &[&[u8]]) -> Option<[f64; 2]> {
    let lon = float_arg(ctx, args[0], None)?;
    let lat = float_arg(ctx, args[1], None)?;
    if !valid_point(lon, lat) {
        ctx.error(&format!(
            "ERR invalid longitude,latitude pair {lon:.6},{lat:.6}"
        ));
        return None;
    }
    Some([lon, lat])
}

/// A unit argument as meters per unit (extractUnitOrReply).
fn unit_arg(ctx: &mut Ctx, arg: &[u8]) -> Option<f64> {
    let per_unit = [
        (&b"m"[..], 1.0),
        (b"km", 1000.0),
        (b"ft", 0.3048),
        (b"mi", 1609.34),
    ]
    .into_iter()
    .find(|(name, _)| arg.eq_ignore_ascii_case(name))
    .map(|(_, meters)| meters);
    if per_unit.is_none() {
        ctx.error("ERR unsupported unit provided. please use M, KM, FT, MI");
    }
    per_unit
}

/// A distance as Redis prints one (addReplyDoubleDistance): a bulk string with four
/// decimals, in RESP3 too.
fn write_distance(out: &mut ReplyWriter, d: f64) {
    out.bulk(format!("{d:.4}").as_bytes());
}

/// A `[longitude, latitude]` pair as Redis prints coordinates (addReplyHumanLongDouble):
/// `%.17Lf` of the value without trailing zeros, a double in RESP3, a bulk string in
/// RESP2.
fn write_coordinates(out: &mut ReplyWriter, xy: [f64; 2]) {
    out.array(2);
    for v in xy {
        let text = format!("{v:.17}");
        let text = text.trim_end_matches('0').trim_end_matches('.');
        out.double_text(if text == "-0" { b"0" } else { text.as_bytes() });
    }
}
