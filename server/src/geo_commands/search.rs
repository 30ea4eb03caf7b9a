//! GEOSEARCH, GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER and their _RO forms: one
//! parser and one search (Redis's georadiusGeneric), the commands differing in where the
//! key and the centre are and which options they take.
//!
//! A search reads, for each cell of [`Shape::cells`], the sorted set's members whose
//! scores fall in the cell's score range (through the engine's score-range ranks, never a
//! copy of the set), keeps the points inside the shape, and sorts or cuts them as asked.

use super::{float_arg, lonlat_args, unit_arg, write_coordinates, write_distance};
use crate::commands::Ctx;
use crate::keyspace::{SortedSet, Value};
use crate::pubsub::notify;
use crate::resp::reply::ReplyWriter;
use goblin_zset::geo::hash::decode_score;
use goblin_zset::geo::search::{Extent, Shape};
use goblin_zset::{ScoreBound, ScoreRange};

/// Which command runs, as Redis's georadiusGeneric flags.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// GEORADIUS key longitude latitude radius unit ...
    RadiusFromCoords,
    /// GEORADIUSBYMEMBER key member radius unit ...
    RadiusFromMember,
    /// GEOSEARCH key (FROMMEMBER | FROMLONLAT) (BYRADIUS | BYBOX) ...
    Search,
    /// GEOSEARCHSTORE destination source ... (GEOSEARCH's options, and STOREDIST).
    SearchStore,
}

/// The order of the results.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    None,
    Asc,
    Desc,
}

/// A parsed search.
struct Query<'a> {
    /// The centre, once known.
    center: Option<[f64; 2]>,
    /// The extent in meters, once known.
    extent: Option<Extent>,
    /// Meters per unit of the radius, box and replied distances.
    per_unit: f64,
    withdist: bool,
    withhash: bool,
    withcoord: bool,
    order: Order,
    /// COUNT, 0 when unlimited.
    count: usize,
    /// ANY: stop reading once `count` points are found.
    any: bool,
    /// Where STORE, STOREDIST or GEOSEARCHSTORE store the results.
    store: Option<&'a [u8]>,
    /// Store distances instead of geohashes.
    storedist: bool,
}

/// One point found.
struct Found<'s> {
    member: &'s [u8],
    score: f64,
    xy: [f64; 2],
    /// Distance from the centre, in meters.
    dist: f64,
}

/// The score of `member` in the set at `key` (already type-checked), for a centre.
fn member_center(ctx: &mut Ctx, key: &[u8], member: &[u8]) -> Option<[f64; 2]> {
    let (db, now) = (ctx.client.db, ctx.now_ms);
    let entry = ctx.server.keyspace.peek(db, key, now)?;
    let score = entry.value.as_zset().ok()?.score(member);
    if score.is_none() {
        ctx.error("ERR could not decode requested zset member");
    }
    score.map(decode_score)
}

/// A `radius unit` pair (extractDistanceOrReply): the extent in meters and meters per unit.
fn radius_args(ctx: &mut Ctx, args: &[&[u8]]) -> Option<(Extent, f64)> {
    let r = float_arg(ctx, args[0], Some("need numeric radius"))?;
    if r < 0.0 {
        ctx.error("ERR radius cannot be negative");
        return None;
    }
    let per_unit = unit_arg(ctx, args[1])?;
    Some((Extent::Radius(r * per_unit), per_unit))
}

/// A `width height unit` triple (extractBoxOrReply).
fn box_args(ctx: &mut Ctx, args: &[&[u8]]) -> Option<(Extent, f64)> {
    let w = float_arg(ctx, args[0], Some("need numeric width"))?;
    let h = float_arg(ctx, args[1], Some("need numeric height"))?;
    if h < 0.0 || w < 0.0 {
        ctx.error("ERR height or width cannot be negative");
        return None;
    }
    let per_unit = unit_arg(ctx, args[2])?;
    Some((
        Extent::Box {
            width: w * per_unit,
            height: h * per_unit,
        },
        per_unit,
    ))
}

/// Parses the arguments after the key (and centre) in Redis's order, replying to the first
/// error. `exists` says whether the source key holds a set: without one, FROMMEMBER and
/// GEORADIUSBYMEMBER's member are not looked up.
fn parse<'a>(
    ctx: &mut Ctx,
    args: &[&'a [u8]],
    kind: Kind,
    source: &[u8],
    exists: bool,
    nostore: bool,
) -> Option<Query<'a>> {
    let mut q = Query {
        center: None,
        extent: None,
        per_unit: 1.0,
        withdist: false,
        withhash: false,
        withcoord: false,
        order: Order::None,
        count: 0,
        any: false,
        store: None,
        storedist: false,
    };
    let base = match kind {
        Kind::RadiusFromCoords => {
            q.center = Some(lonlat_args(ctx, &args[2..4])?);
            (q.extent, q.per_unit) = radius_args(ctx, &args[4..6]).map(|(e, u)| (Some(e), u))?;
            6
        }
        Kind::RadiusFromMember if !exists => 5,
        Kind::RadiusFromMember => {
            q.center = Some(member_center(ctx, source, args[2])?);
            (q.extent, q.per_unit) = radius_args(ctx, &args[3..5]).map(|(e, u)| (Some(e), u))?;
            5
        }
        Kind::Search => 2,
        Kind::SearchStore => {
            q.store = Some(args[1]);
            3
        }
    };
    let search = matches!(kind, Kind::Search | Kind::SearchStore);
    let (mut frommember, mut fromlonlat, mut byradius, mut bybox) = (false, false, false, false);
    let mut i = base;
    while i < args.len() {
        let is = |name: &[u8]| args[i].eq_ignore_ascii_case(name);
        let left = args.len() - i - 1;
        if is(b"withdist") {
            q.withdist = true;
        } else if is(b"withhash") {
            q.withhash = true;
        } else if is(b"withcoord") {
            q.withcoord = true;
        } else if is(b"any") {
            q.any = true;
        } else if is(b"asc") {
            q.order = Order::Asc;
        } else if is(b"desc") {
            q.order = Order::Desc;
        } else if is(b"count") && left >= 1 {
            let count = ctx.int_arg(args[i + 1])?;
            if count <= 0 {
                ctx.error("ERR COUNT must be > 0");
                return None;
            }
            q.count = count as usize;
            i += 1;
        } else if (is(b"store") || is(b"storedist")) && left >= 1 && !nostore && !search {
            q.store = Some(args[i + 1]);
            q.storedist = is(b"storedist");
            i += 1;
        } else if is(b"storedist") && kind == Kind::SearchStore {
            q.storedist = true;
        } else if is(b"frommember") && left >= 1 && search && !fromlonlat {
            if exists {
                q.center = Some(member_center(ctx, source, args[i + 1])?);
            }
            frommember = true;
            i += 1;
        } else if is(b"fromlonlat") && left >= 2 && search && !frommember {
            q.center = Some(lonlat_args(ctx, &args[i + 1..i + 3])?);
            fromlonlat = true;
            i += 2;
        } else if is(b"byradius") && left >= 2 && search && !bybox {
            (q.extent, q.per_unit) =
                radius_args(ctx, &args[i + 1..i + 3]).map(|(e, u)| (Some(e), u))?;
            byradius = true;
            i += 2;
        } else if is(b"bybox") && left >= 3 && search && !byradius {
            (q.extent, q.per_unit) =
                box_args(ctx, &args[i + 1..i + 4]).map(|(e, u)| (Some(e), u))?;
            bybox = true;
            i += 3;
        } else {
            ctx.syntax_error();
            return None;
        }
        i += 1;
    }
    let name = String::from_utf8_lossy(args[0]);
    if q.store.is_some() && (q.withdist || q.withhash || q.withcoord) {
        let what = if kind == Kind::SearchStore {
            "GEOSEARCHSTORE"
        } else {
            "STORE option in GEORADIUS"
        };
        ctx.error(&format!(
            "ERR {what} is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
        ));
        return None;
    }
    if search && !(frommember || fromlonlat) {
        ctx.error(&format!(
            "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {name}"
        ));
        return None;
    }
    if search && !(byradius || bybox) {
        ctx.error(&format!(
            "ERR exactly one of BYRADIUS and BYBOX can be specified for {name}"
        ));
        return None;
    }
    if q.any && q.count == 0 {
        ctx.error("ERR the ANY argument requires COUNT argument");
        return None;
    }
    Some(q)
}

/// The points of `set` inside `shape`, in the order Redis finds them: cell by cell (a
/// cell equal to the one read before it skipped), by score within a cell; with a `limit`,
/// reading stops once that many are found (ANY).
fn find<'s>(set: &'s SortedSet, shape: &Shape, limit: usize) -> Vec<Found<'s>> {
    let cells = shape.cells();
    let matcher = shape.matcher();
    let mut found = Vec::new();
    // Redis compares a cell with the last one read only from the second one read on.
    let mut last_read = 0;
    for (i, cell) in cells.iter().enumerate() {
        if cell.is_zero() || (last_read != 0 && *cell == cells[last_read]) {
            continue;
        }
        if limit != 0 && found.len() >= limit {
            break;
        }
        let (min, max) = cell.score_range();
        let range = ScoreRange {
            min: ScoreBound {
                value: min,
                exclusive: false,
            },
            max: ScoreBound {
                value: max,
                exclusive: true,
            },
        };
        for (member, score) in set.iter_ranks(set.score_range_ranks(&range)) {
            let xy = decode_score(score);
            if let Some(dist) = matcher.distance_if_within(xy) {
                found.push(Found {
                    member,
                    score,
                    xy,
                    dist,
                });
            }
            if limit != 0 && found.len() >= limit {
                break;
            }
        }
        last_read = i;
    }
    found
}

/// The search shared by every command of this module (georadiusGeneric).
fn search(ctx: &mut Ctx, args: &[&[u8]], kind: Kind, nostore: bool) {
    let source = if kind == Kind::SearchStore {
        args[2]
    } else {
        args[1]
    };
    let Ok(found) = ctx.read_typed::<SortedSet>(source, Value::as_zset) else {
        return;
    };
    let exists = found.is_some();
    let Some(q) = parse(ctx, args, kind, source, exists, nostore) else {
        return;
    };
    let db = ctx.client.db;
    let set = match exists {
        true => ctx
            .server
            .keyspace
            .peek(db, source, ctx.now_ms)
            .and_then(|e| e.value.as_zset().ok()),
        false => None,
    };
    let (Some(set), Some(center), Some(extent)) = (set, q.center, q.extent) else {
        // No source key: an empty reply, or STORE deletes the destination.
        return match q.store {
            Some(dst) => {
                let deleted = ctx.server.keyspace.delete(db, dst);
                if deleted {
                    ctx.notify(notify::GENERIC, "del", dst);
                }
                ctx.server.keyspace.add_dirty(u64::from(deleted));
                ctx.out.int(0)
            }
            None => ctx.out.array(0),
        };
    };
    let order = match q.order {
        // COUNT returns the nearest points unless ANY says any will do.
        Order::None if q.count != 0 && !q.any => Order::Asc,
        order => order,
    };
    let shape = Shape { center, extent };
    let mut points = find(set, &shape, if q.any { q.count } else { 0 });
    match order {
        Order::Asc => points.sort_by(|a, b| a.dist.total_cmp(&b.dist)),
        Order::Desc => points.sort_by(|a, b| b.dist.total_cmp(&a.dist)),
        Order::None => {}
    }
    if q.count != 0 {
        points.truncate(q.count);
    }
    match q.store {
        None => write_points(&mut ctx.out, &points, &q),
        Some(dst) => {
            let members: Vec<(Vec<u8>, f64)> = points
                .iter()
                .map(|p| {
                    let score = if q.storedist {
                        p.dist / q.per_unit
                    } else {
                        p.score
                    };
                    (p.member.to_vec(), score)
                })
                .collect();
            store(ctx, dst, members, kind);
        }
    }
}

/// Replies with the points: members alone, or each an array of the member and what
/// WITHDIST, WITHHASH and WITHCOORD ask for, in that order.
fn write_points(out: &mut ReplyWriter, points: &[Found], q: &Query) {
    let extras = usize::from(q.withdist) + usize::from(q.withhash) + usize::from(q.withcoord);
    out.array(points.len());
    for p in points {
        if extras > 0 {
            out.array(extras + 1);
        }
        out.bulk(p.member);
        if q.withdist {
            write_distance(out, p.dist / q.per_unit);
        }
        if q.withhash {
            out.int(p.score as i64);
        }
        if q.withcoord {
            write_coordinates(out, p.xy);
        }
    }
}

/// Stores the results at `dst` (an empty result deletes it) and replies with their count;
/// the change counter grows by the count, or by one for a deletion, as in Redis.
fn store(ctx: &mut Ctx, dst: &[u8], members: Vec<(Vec<u8>, f64)>, kind: Kind) {
    let db = ctx.client.db;
    let count = members.len();
    if count == 0 {
        let deleted = ctx.server.keyspace.delete(db, dst);
        if deleted {
            ctx.notify(notify::GENERIC, "del", dst);
        }
        ctx.server.keyspace.add_dirty(u64::from(deleted));
    } else {
        let set = SortedSet::from_members(&members, &ctx.server.config.zset);
        ctx.server.keyspace.store(db, dst, Value::ZSet(set));
        let event = match kind {
            Kind::SearchStore => "geosearchstore",
            _ => "georadiusstore",
        };
        ctx.notify(notify::ZSET, event, dst);
        ctx.server.keyspace.add_dirty(count as u64);
    }
    ctx.out.int(count as i64);
}

/// GEOSEARCH key FROMMEMBER member|FROMLONLAT lon lat BYRADIUS r unit|BYBOX w h unit
/// [ASC|DESC] [COUNT n [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]
pub fn geosearch(ctx: &mut Ctx, args: &[&[u8]]) {
    search(ctx, args, Kind::Search, true);
}

/// GEOSEARCHSTORE destination source (GEOSEARCH's options) [STOREDIST]
pub fn geosearchstore(ctx: &mut Ctx, args: &[&[u8]]) {
    search(ctx, args, Kind::SearchStore, false);
}

/// GEORADIUS key longitude latitude radius unit [WITH*] [COUNT n [ANY]] [ASC|DESC]
/// [STORE key|STOREDIST key]
pub fn georadius(ctx: &mut Ctx, args: &[&[u8]]) {
    search(ctx, args, Kind::RadiusFromCoords, false);
}

/// GEORADIUS_RO: GEORADIUS without STORE and STOREDIST.
pub fn georadius_ro(ctx: &mut Ctx, args: &[&[u8]]) {
    search(ctx, args, Kind::RadiusFromCoords, true);
}

/// GEORADIUSBYMEMBER key member radius unit (GEORADIUS's options)
pub fn georadiusbymember(ctx: &mut Ctx, args: &[&[u8]]) {
    search(ctx, args, Kind::RadiusFromMember, false);
}

/// GEORADIUSBYMEMBER_RO: GEORADIUSBYMEMBER without STORE and STOREDIST.
pub fn georadiusbymember_ro(ctx: &mut Ctx, args: &[&[u8]]) {
    search(ctx, args, Kind::RadiusFromMember, true);
}
