//! LATENCY: LATEST, HISTORY, GRAPH, DOCTOR and RESET over the latency monitor
//! ([`crate::latency`]), and HISTOGRAM over the per-command latency histograms that
//! INFO latencystats also reads.

use super::server_cmds::help_reply;
use super::Ctx;
use crate::latency;
use crate::stats::CommandStats;

/// LATENCY LATEST: every event with its last sample's time and latency and its maximum.
pub fn latest(ctx: &mut Ctx, _args: &[&[u8]]) {
    let rows: Vec<(String, (u64, u64), u64)> = latency::with(|e| {
        e.iter()
            .map(|(name, ts)| (name.to_owned(), ts.last(), ts.max))
            .collect()
    });
    ctx.out.array(rows.len());
    for (name, (time, ms), max) in rows {
        ctx.out.array(4);
        ctx.out.bulk(name.as_bytes());
        ctx.out.int(time as i64);
        ctx.out.int(ms as i64);
        ctx.out.int(max as i64);
    }
}

/// LATENCY HISTORY event: the event's samples as (time, latency) pairs, oldest first.
pub fn history(ctx: &mut Ctx, args: &[&[u8]]) {
    let samples: Vec<(u64, u64)> = latency::with(|e| {
        e.get(args[2])
            .map(|(_, ts)| ts.samples().collect())
            .unwrap_or_default()
    });
    ctx.out.array(samples.len());
    for (time, ms) in samples {
        ctx.out.array(2);
        ctx.out.int(time as i64);
        ctx.out.int(ms as i64);
    }
}

/// LATENCY GRAPH event: the event's samples drawn as an ASCII sparkline.
pub fn graph(ctx: &mut Ctx, args: &[&[u8]]) {
    let now = crate::clock::unix_ms() / 1000;
    match latency::with(|e| e.graph(args[2], now)) {
        Some(text) => ctx.out.verbatim(text.as_bytes()),
        None => ctx.error(&format!(
            "ERR No samples available for event '{}'",
            String::from_utf8_lossy(crate::errors::until_nul(args[2]))
        )),
    }
}

/// LATENCY DOCTOR: the human-readable report.
pub fn doctor(ctx: &mut Ctx, _args: &[&[u8]]) {
    let config = &ctx.server.config;
    let fork_usec = ctx.server.rdb.latest_fork_usec;
    // Redis's stat_fork_rate: the memory in use over the fork's time, in GB per second.
    let fork_rate = if fork_usec > 0 {
        ctx.server.memory.gauge.read(&ctx.server.keyspace) as f64 * 1_000_000.0
            / fork_usec as f64
            / (1024.0 * 1024.0 * 1024.0)
    } else {
        0.0
    };
    let facts = latency::doctor::Facts {
        threshold_ms: latency::threshold(),
        slowlog_log_slower_than: config.slowlog_log_slower_than,
        hz: config.hz,
        fsync_always: config.aof.fsync == crate::aof::config::Fsync::Always,
        fork_rate,
        anon_huge_pages: latency::doctor::anon_huge_pages_bytes() > 0,
    };
    let now = crate::clock::unix_ms() / 1000;
    let report = latency::with(|e| latency::doctor::report(e, &facts, now));
    ctx.out.verbatim(report.as_bytes());
}

/// LATENCY RESET [event ...]: forgets the events named (every event without a name);
/// replies how many went.
pub fn reset(ctx: &mut Ctx, args: &[&[u8]]) {
    let n = latency::with(|e| {
        if args.len() == 2 {
            e.reset(None)
        } else {
            args[2..].iter().map(|name| e.reset(Some(name))).sum()
        }
    });
    ctx.out.int(n as i64);
}

/// LATENCY HISTOGRAM [command ...]: for each command with calls (those named, a container
/// standing for its subcommands; every one without names), its calls and the cumulative
/// distribution of its latencies.
pub fn histogram(ctx: &mut Ctx, args: &[&[u8]]) {
    let stats = ctx.server.stats.commands_by_name();
    let with_calls = |name: &str| {
        stats
            .iter()
            .find(|c| c.name == name)
            .filter(|c| !c.latency.is_empty())
            .copied()
    };
    let mut shown: Vec<&CommandStats> = Vec::new();
    if args.len() == 2 {
        shown.extend(stats.iter().filter(|c| !c.latency.is_empty()));
    } else {
        for name in &args[2..] {
            let Some(cmd) = find_command(name) else {
                continue;
            };
            shown.extend(with_calls(cmd.name));
            for sub in cmd.subcommands {
                shown.extend(with_calls(sub.name));
            }
        }
    }
    let rows: Vec<HistogramRow> = shown
        .iter()
        .map(|c| (c.name, c.latency.total(), c.latency.cumulative_by_powers()))
        .collect();
    ctx.out.map(rows.len());
    for (name, calls, cdf) in rows {
        ctx.out.bulk(name.as_bytes());
        ctx.out.map(2);
        ctx.out.bulk(b"calls");
        ctx.out.int(calls as i64);
        ctx.out.bulk(b"histogram_usec");
        ctx.out.map(cdf.len());
        for (micros, count) in cdf {
            ctx.out.int(micros as i64);
            ctx.out.int(count as i64);
        }
    }
}

/// One command's line of LATENCY HISTOGRAM: name, calls, (microseconds, calls up to them).
type HistogramRow<'a> = (&'a str, u64, Vec<(u64, u64)>);

/// A command by its full name, `container|sub` for a subcommand (ASCII case ignored).
fn find_command(name: &[u8]) -> Option<&'static super::Command> {
    let mut parts = name.splitn(2, |&b| b == b'|');
    let top = super::lookup(parts.next()?)?;
    match parts.next() {
        None => Some(top),
        Some(sub) => top.subcommand(sub),
    }
}

/// LATENCY HELP
pub fn help(ctx: &mut Ctx, _args: &[&[u8]]) {
    help_reply(
        ctx,
        "LATENCY",
        &[
            "DOCTOR",
            "    Return a human readable latency analysis report.",
            "GRAPH <event>",
            "    Return an ASCII latency graph for the <event> class.",
            "HISTORY <event>",
            "    Return time-latency samples for the <event> class.",
            "LATEST",
            "    Return the latest latency samples for all events.",
            "RESET [<event> ...]",
            "    Reset latency data of one or more <event> classes.",
            "    (default: reset all data for all event classes)",
            "HISTOGRAM [COMMAND ...]",
            "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
            "    If no commands are specified then all histograms are replied.",
        ],
    );
}
