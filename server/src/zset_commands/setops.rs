//! ZUNION, ZINTER, ZDIFF, their STORE forms (WEIGHTS, AGGREGATE, WITHSCORES), ZINTERCARD;
//! an input may be a set, whose members score 1.

use super::{parse, store_result, write_members};
use crate::commands::Ctx;
use crate::keyspace::{Value, WrongType};
use hashbrown::HashMap;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Union,
    Inter,
    Diff,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Aggregate {
    Sum,
    Min,
    Max,
    /// Redis 8.8's COUNT: each input holding a member adds its weight; scores are ignored.
    Count,
}

impl Aggregate {
    /// What an input of weight `weight` contributes for a member with `score`: the weight
    /// alone under COUNT, else the weighted score (`weighted`).
    fn contribution(self, score: f64, weight: f64, weighted: fn(f64, f64) -> f64) -> f64 {
        if self == Aggregate::Count {
            weight
        } else {
            weighted(score, weight)
        }
    }

    /// Combines an accumulated score with a new value as Redis's zunionInterAggregate does:
    /// a SUM that gives NaN (inf + -inf) is 0; MIN and MAX keep the accumulator when the
    /// value is NaN.
    fn apply(self, acc: f64, v: f64) -> f64 {
        match self {
            Aggregate::Sum | Aggregate::Count => {
                let s = acc + v;
                if s.is_nan() {
                    0.0
                } else {
                    s
                }
            }
            Aggregate::Min => {
                if v < acc {
                    v
                } else {
                    acc
                }
            }
            Aggregate::Max => {
                if v > acc {
                    v
                } else {
                    acc
                }
            }
        }
    }
}

/// A weighted score; inf * 0 is 0, as in Redis.
fn weigh(score: f64, weight: f64) -> f64 {
    let v = score * weight;
    if v.is_nan() {
        0.0
    } else {
        v
    }
}

/// Members with their scores, in ascending order.
type Members = Vec<(Vec<u8>, f64)>;

/// A sorted set or a set, the inputs these commands take; [`WrongType`] for another type.
fn zset_or_set(value: &Value) -> Result<&Value, WrongType> {
    match value {
        Value::ZSet(_) | Value::Set(_) => Ok(value),
        _ => Err(WrongType),
    }
}

/// Snapshot of the inputs, None for missing keys: a sorted set's members with their
/// scores, a set's members with score 1 (as Redis's zuiNext gives them), each in its own
/// order; `Err` after the WRONGTYPE reply when one holds another type.
fn load_inputs(ctx: &mut Ctx, keys: &[&[u8]]) -> Result<Vec<Option<Members>>, WrongType> {
    keys.iter()
        .map(|k| {
            let value = ctx.read_typed(k, zset_or_set)?;
            Ok(value.map(|v| match v {
                Value::ZSet(z) => z.iter().map(|(m, sc)| (m.to_vec(), sc)).collect(),
                Value::Set(s) => s.iter().map(|m| (m.to_vec(), 1.0)).collect(),
                _ => unreachable!("zset_or_set picks sorted sets and sets"),
            }))
        })
        .collect()
}

/// Computes the result, sorted by (score, member); `Err` after the WRONGTYPE reply.
fn compute(
    ctx: &mut Ctx,
    keys: &[&[u8]],
    weights: &[f64],
    aggregate: Aggregate,
    op: Op,
) -> Result<Members, WrongType> {
    let inputs = load_inputs(ctx, keys)?;
    // Redis visits the inputs from the smallest to the largest (a stable order for equal
    // sizes), which decides the order floating-point sums are made in.
    let mut order: Vec<usize> = (0..inputs.len()).collect();
    order.sort_by_key(|&i| inputs[i].as_ref().map_or(0, Vec::len));
    let mut result: Vec<(Vec<u8>, f64)> = match op {
        Op::Union => {
            let mut acc: HashMap<Vec<u8>, f64> = HashMap::new();
            for &i in &order {
                for (member, score) in inputs[i].iter().flatten() {
                    let v = aggregate.contribution(*score, weights[i], weigh);
                    acc.entry_ref(member.as_slice())
                        .and_modify(|a| *a = aggregate.apply(*a, v))
                        .or_insert(v);
                }
            }
            acc.into_iter().collect()
        }
        Op::Inter => {
            if inputs.iter().any(Option::is_none) {
                return Ok(Vec::new());
            }
            let sets: Vec<HashMap<&[u8], f64>> = inputs
                .iter()
                .flatten()
                .map(|s| s.iter().map(|(m, sc)| (m.as_slice(), *sc)).collect())
                .collect();
            let (first, rest) = order.split_first().expect("at least one key");
            let mut out = Vec::new();
            'members: for (member, score) in inputs[*first].iter().flatten() {
                // Only the first input's weighted score is cleaned of NaN, as in Redis.
                let mut acc = aggregate.contribution(*score, weights[*first], weigh);
                for &j in rest {
                    let Some(&other) = sets[j].get(member.as_slice()) else {
                        continue 'members;
                    };
                    acc = aggregate
                        .apply(acc, aggregate.contribution(other, weights[j], |s, w| s * w));
                }
                out.push((member.clone(), acc));
            }
            out
        }
        Op::Diff => {
            let Some(first) = &inputs[0] else {
                return Ok(Vec::new());
            };
            let others: Vec<hashbrown::HashSet<&[u8]>> = inputs[1..]
                .iter()
                .flatten()
                .map(|s| s.iter().map(|(m, _)| m.as_slice()).collect())
                .collect();
            first
                .iter()
                .filter(|(m, _)| !others.iter().any(|o| o.contains(m.as_slice())))
                .cloned()
                .collect()
        }
    };
    result.sort_by(|a, b| {
        a.1.partial_cmp(&b.1)
            .expect("no NaN scores")
            .then_with(|| a.0.cmp(&b.0))
    });
    Ok(result)
}

/// Parses the numkeys argument at `at`, checking there are that many keys after it.
fn numkeys(ctx: &mut Ctx, args: &[&[u8]], at: usize, name: &str) -> Option<usize> {
    let n = ctx.int_arg(args[at])?;
    if n < 1 {
        ctx.error(&format!(
            "ERR at least 1 input key is needed for '{name}' command"
        ));
        return None;
    }
    if n as usize > args.len() - at - 1 {
        ctx.syntax_error();
        return None;
    }
    Some(n as usize)
}

/// Parses `numkeys key... [WEIGHTS w...] [AGGREGATE SUM|MIN|MAX|COUNT] [WITHSCORES]` from `at`.
fn setop_generic(
    ctx: &mut Ctx,
    args: &[&[u8]],
    at: usize,
    dst: Option<&[u8]>,
    op: Op,
    name: &'static str,
) {
    let Some(numkeys) = numkeys(ctx, args, at, name) else {
        return;
    };
    let keys: Vec<&[u8]> = args[at + 1..at + 1 + numkeys].to_vec();
    let mut weights = vec![1.0; numkeys];
    let mut aggregate = Aggregate::Sum;
    let mut withscores = false;
    let mut j = at + 1 + numkeys;
    while j < args.len() {
        let left = args.len() - j - 1;
        let a = args[j];
        if op != Op::Diff && a.eq_ignore_ascii_case(b"WEIGHTS") && left >= numkeys {
            for (k, w) in weights.iter_mut().enumerate() {
                match crate::numbers::parse_f64(args[j + 1 + k]) {
                    Some(v) => *w = v,
                    None => return ctx.error("ERR weight value is not a float"),
                }
            }
            j += numkeys;
        } else if op != Op::Diff && a.eq_ignore_ascii_case(b"AGGREGATE") && left >= 1 {
            aggregate = match args[j + 1].to_ascii_uppercase().as_slice() {
                b"SUM" => Aggregate::Sum,
                b"MIN" => Aggregate::Min,
                b"MAX" => Aggregate::Max,
                b"COUNT" => Aggregate::Count,
                _ => return ctx.syntax_error(),
            };
            j += 1;
        } else if dst.is_none() && a.eq_ignore_ascii_case(b"WITHSCORES") {
            withscores = true;
        } else {
            return ctx.syntax_error();
        }
        j += 1;
    }
    let Ok(result) = compute(ctx, &keys, &weights, aggregate, op) else {
        return;
    };
    match dst {
        Some(dst) => {
            let n = store_result(ctx, dst, result, name);
            ctx.out.int(n as i64);
        }
        None => write_members(
            &mut ctx.out,
            result.iter().map(|(m, s)| (m.as_slice(), *s)),
            withscores,
        ),
    }
}

/// ZUNION numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX|COUNT] [WITHSCORES]
pub fn zunion(ctx: &mut Ctx, args: &[&[u8]]) {
    setop_generic(ctx, args, 1, None, Op::Union, "zunion");
}

/// ZINTER numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX|COUNT] [WITHSCORES]
pub fn zinter(ctx: &mut Ctx, args: &[&[u8]]) {
    setop_generic(ctx, args, 1, None, Op::Inter, "zinter");
}

/// ZDIFF numkeys key [key ...] [WITHSCORES]
pub fn zdiff(ctx: &mut Ctx, args: &[&[u8]]) {
    setop_generic(ctx, args, 1, None, Op::Diff, "zdiff");
}

/// ZUNIONSTORE destination numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX|COUNT]
pub fn zunionstore(ctx: &mut Ctx, args: &[&[u8]]) {
    setop_generic(ctx, args, 2, Some(args[1]), Op::Union, "zunionstore");
}

/// ZINTERSTORE destination numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX|COUNT]
pub fn zinterstore(ctx: &mut Ctx, args: &[&[u8]]) {
    setop_generic(ctx, args, 2, Some(args[1]), Op::Inter, "zinterstore");
}

/// ZDIFFSTORE destination numkeys key [key ...]
pub fn zdiffstore(ctx: &mut Ctx, args: &[&[u8]]) {
    setop_generic(ctx, args, 2, Some(args[1]), Op::Diff, "zdiffstore");
}

/// ZINTERCARD numkeys key [key ...] [LIMIT limit]
pub fn zintercard(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(numkeys) = numkeys(ctx, args, 1, "zintercard") else {
        return;
    };
    let mut limit = 0usize;
    let mut j = 2 + numkeys;
    while j < args.len() {
        if args[j].eq_ignore_ascii_case(b"LIMIT") && j + 1 < args.len() {
            let Some(l) = parse::int_in_range(
                ctx,
                args[j + 1],
                0,
                i64::MAX,
                Some("ERR LIMIT can't be negative"),
            ) else {
                return;
            };
            limit = l as usize;
            j += 2;
        } else {
            return ctx.syntax_error();
        }
    }
    let keys: Vec<&[u8]> = args[2..2 + numkeys].to_vec();
    let Ok(result) = compute(ctx, &keys, &vec![1.0; numkeys], Aggregate::Sum, Op::Inter) else {
        return;
    };
    let n = result.len();
    ctx.out.int(if limit > 0 { n.min(limit) } else { n } as i64);
}
