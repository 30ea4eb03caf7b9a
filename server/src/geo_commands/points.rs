//! GEOADD, GEOPOS, GEODIST, GEOHASH.

use super::{lonlat_args, unit_arg, write_coordinates, write_distance};
use crate::commands::{lookup, Ctx};
use crate::keyspace::{SortedSet, Value};
use crate::resp::reply::ReplyWriter;
use goblin_zset::geo::hash::{decode_score, score_of, standard_string};
use goblin_zset::geo::search::distance;

/// GEOADD key [NX|XX] [CH] longitude latitude member [longitude latitude member ...]
///
/// As Redis does, the points become the scores of a ZADD with the same options, which
/// then adds them (its replies, counts and errors).
pub fn geoadd(ctx: &mut Ctx, args: &[&[u8]]) {
    let options = args[2..]
        .iter()
        .take_while(|a| {
            [&b"nx"[..], b"xx", b"ch"]
                .iter()
                .any(|o| a.eq_ignore_ascii_case(o))
        })
        .count();
    let first = 2 + options;
    let has = |o: &[u8]| args[2..first].iter().any(|a| a.eq_ignore_ascii_case(o));
    if !(args.len() - first).is_multiple_of(3) || (has(b"nx") && has(b"xx")) {
        return ctx.syntax_error();
    }
    let mut scores = Vec::with_capacity((args.len() - first) / 3);
    for point in args[first..].chunks(3) {
        let Some([lon, lat]) = lonlat_args(ctx, point) else {
            return;
        };
        let score = score_of(lon, lat).expect("a valid point has a cell");
        scores.push((score as u64).to_string().into_bytes());
    }
    let mut zadd_args: Vec<&[u8]> = args[..first].to_vec();
    for (score, point) in scores.iter().zip(args[first..].chunks(3)) {
        zadd_args.extend([score.as_slice(), point[2]]);
    }
    let zadd = lookup(b"zadd").expect("ZADD is in the table");
    (zadd.handler)(ctx, &zadd_args);
}

/// The scores of `members` in the sorted set at `key` (None for a missing member or key),
/// or `Err` after the WRONGTYPE reply.
fn scores_of(ctx: &mut Ctx, key: &[u8], members: &[&[u8]]) -> Result<Vec<Option<f64>>, ()> {
    let set = ctx
        .read_typed::<SortedSet>(key, Value::as_zset)
        .map_err(|_| ())?;
    Ok(members
        .iter()
        .map(|m| set.and_then(|s| s.score(m)))
        .collect())
}

/// Replies with one entry per member after the key: `found` of its score, or `missing`.
fn per_member(
    ctx: &mut Ctx,
    args: &[&[u8]],
    found: fn(&mut ReplyWriter, f64),
    missing: fn(&mut ReplyWriter),
) {
    let Ok(scores) = scores_of(ctx, args[1], &args[2..]) else {
        return;
    };
    ctx.out.array(scores.len());
    for score in scores {
        match score {
            Some(s) => found(&mut ctx.out, s),
            None => missing(&mut ctx.out),
        }
    }
}

/// GEOPOS key [member ...]
pub fn geopos(ctx: &mut Ctx, args: &[&[u8]]) {
    per_member(
        ctx,
        args,
        |out, s| write_coordinates(out, decode_score(s)),
        |out| out.null_array(),
    );
}

/// GEODIST key member1 member2 [M|KM|FT|MI]
pub fn geodist(ctx: &mut Ctx, args: &[&[u8]]) {
    let per_unit = match args.len() {
        4 => 1.0,
        5 => match unit_arg(ctx, args[4]) {
            Some(u) => u,
            None => return,
        },
        _ => return ctx.syntax_error(),
    };
    let Ok(scores) = scores_of(ctx, args[1], &args[2..4]) else {
        return;
    };
    match scores[..] {
        [Some(a), Some(b)] => {
            let [x1, y1] = decode_score(a);
            let [x2, y2] = decode_score(b);
            write_distance(&mut ctx.out, distance(x1, y1, x2, y2) / per_unit);
        }
        _ => ctx.out.null(),
    }
}

/// GEOHASH key [member ...]
pub fn geohash(ctx: &mut Ctx, args: &[&[u8]]) {
    per_member(
        ctx,
        args,
        |out, s| out.bulk(&standard_string(s)),
        |out| out.null(),
    );
}
