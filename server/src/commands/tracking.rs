//! CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO, and the two moments tracking acts:
//! after a read command (its keys are remembered for the client) and after a command or an
//! event-loop round (the keys changed meanwhile are invalidated). Redis's networking.c and
//! tracking.c, with 7.2's order: a client's own invalidation follows its reply.

use super::keyspecs;
use super::{Command, Ctx, Flags};
use crate::clients::{Client, Clients};
use crate::resp::reply::ReplyWriter;
use crate::server::Server;
use crate::tracking::{frame, overlap, ClientTracking};

/// CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p ...] [OPTIN] [OPTOUT] [NOLOOP]
pub fn tracking(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut mode = ClientTracking::default();
    let mut i = 3;
    while i < args.len() {
        let more = i + 1 < args.len();
        match args[i].to_ascii_lowercase().as_slice() {
            b"redirect" if more => {
                i += 1;
                if mode.redirect != 0 {
                    return ctx.error("ERR A client can only redirect to a single other client");
                }
                let Some(id) = ctx.int_arg(args[i]) else {
                    return;
                };
                let exists =
                    id as u64 == ctx.client.id || ctx.server.clients.get(id as u64).is_some();
                if !exists {
                    return ctx.error("ERR The client ID you want redirect to does not exist");
                }
                mode.redirect = id as u64;
            }
            b"bcast" => mode.bcast = true,
            b"optin" => mode.optin = true,
            b"optout" => mode.optout = true,
            b"noloop" => mode.noloop = true,
            b"prefix" if more => {
                i += 1;
                mode.prefixes.push(args[i].to_vec());
            }
            _ => return ctx.syntax_error(),
        }
        i += 1;
    }
    match args[2].to_ascii_lowercase().as_slice() {
        b"on" => {
            if let Err(why) = check_on(&ctx.client.tracking, &mode) {
                return ctx.error(&why);
            }
            let Ctx { server, client, .. } = ctx;
            server
                .tracking
                .enable(client.id, &mut client.tracking, mode);
        }
        b"off" => {
            let Ctx { server, client, .. } = ctx;
            server.tracking.disable(client.id, &mut client.tracking);
        }
        _ => return ctx.syntax_error(),
    }
    let active = ctx.server.tracking.active();
    ctx.server.keyspace.set_collect_modified(active);
    ctx.out.ok();
}

/// The checks CLIENT TRACKING ON makes of the options and the client's current mode.
fn check_on(current: &ClientTracking, mode: &ClientTracking) -> Result<(), String> {
    if !mode.bcast && !mode.prefixes.is_empty() {
        return Err("ERR PREFIX option requires BCAST mode to be enabled".into());
    }
    if current.on && current.bcast != mode.bcast {
        return Err(
            "ERR You can't switch BCAST mode on/off before disabling tracking for \
                    this client, and then re-enabling it with a different mode."
                .into(),
        );
    }
    if mode.bcast && (mode.optin || mode.optout) {
        return Err("ERR OPTIN and OPTOUT are not compatible with BCAST".into());
    }
    if mode.optin && mode.optout {
        return Err("ERR You can't specify both OPTIN mode and OPTOUT mode".into());
    }
    if (mode.optin && current.optout) || (mode.optout && current.optin) {
        return Err(
            "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for \
                    this client, and then re-enabling it with a different mode."
                .into(),
        );
    }
    for (i, prefix) in mode.prefixes.iter().enumerate() {
        if let Some(old) = current.prefixes.iter().find(|old| overlap(old, prefix)) {
            return Err(format!(
                "ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a single \
                 client must not overlap.",
                String::from_utf8_lossy(prefix),
                String::from_utf8_lossy(old)
            ));
        }
        if let Some(other) = mode.prefixes[i + 1..].iter().find(|p| overlap(prefix, p)) {
            return Err(format!(
                "ERR Prefix '{}' overlaps with another provided prefix '{}'. Prefixes for a \
                 single client must not overlap.",
                String::from_utf8_lossy(prefix),
                String::from_utf8_lossy(other)
            ));
        }
    }
    Ok(())
}

/// CLIENT CACHING YES|NO
pub fn caching(ctx: &mut Ctx, args: &[&[u8]]) {
    let t = &ctx.client.tracking;
    if !t.on {
        return ctx.error(
            "ERR CLIENT CACHING can be called only when the client is in tracking mode with \
             OPTIN or OPTOUT mode enabled",
        );
    }
    let (optin, optout) = (t.optin, t.optout);
    match args[2].to_ascii_lowercase().as_slice() {
        b"yes" if optin => {}
        b"yes" => {
            return ctx.error(
                "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.",
            )
        }
        b"no" if optout => {}
        b"no" => {
            return ctx.error(
                "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.",
            )
        }
        _ => return ctx.syntax_error(),
    }
    ctx.client.tracking.caching = true;
    ctx.out.ok();
}

/// The client invalidations go to: -1 when not tracking, 0 for itself.
fn redirect_of(t: &ClientTracking) -> i64 {
    if t.on {
        t.redirect as i64
    } else {
        -1
    }
}

/// CLIENT GETREDIR
pub fn getredir(ctx: &mut Ctx, _args: &[&[u8]]) {
    let redirect = redirect_of(&ctx.client.tracking);
    ctx.out.int(redirect);
}

/// CLIENT TRACKINGINFO
pub fn trackinginfo(ctx: &mut Ctx, _args: &[&[u8]]) {
    let t = ctx.client.tracking.clone();
    let flags: Vec<&str> = [
        (true, if t.on { "on" } else { "off" }),
        (t.bcast, "bcast"),
        (t.optin, "optin"),
        (t.optin && t.caching, "caching-yes"),
        (t.optout, "optout"),
        (t.optout && t.caching, "caching-no"),
        (t.noloop, "noloop"),
        (t.broken_redirect, "broken_redirect"),
    ]
    .into_iter()
    .filter_map(|(set, name)| set.then_some(name))
    .collect();
    let out = &mut ctx.out;
    out.map(3);
    out.bulk(b"flags");
    out.set(flags.len());
    flags.iter().for_each(|f| out.bulk(f.as_bytes()));
    out.bulk(b"redirect");
    out.int(redirect_of(&t));
    out.bulk(b"prefixes");
    out.array(t.prefixes.len());
    t.prefixes.iter().for_each(|p| out.bulk(p));
}

/// After `cmd` ran: a read command's keys are remembered for `reader`, the client that sent
/// it or, for a command a script ran, the script's caller (as Redis's call(), which tracks for
/// `server.current_client`). The read-only script commands themselves remember nothing: only
/// the reads their scripts make.
///
/// The changes made so far (this command's lazy expiry, earlier commands of a transaction or
/// script) are settled first, so they invalidate what was read before them, not this read.
pub fn remember_reads(server: &mut Server, reader: &Client, cmd: &Command, args: &[&[u8]]) {
    if !cmd.flags.contains(Flags::READONLY)
        || matches!(cmd.name, "eval_ro" | "evalsha_ro" | "fcall_ro")
        || !reader.tracking.remembers_reads()
    {
        return;
    }
    settle(server, reader.id);
    for key in keyspecs::keys(cmd, args).unwrap_or_default() {
        server.tracking.remember(reader.id, args[key.pos]);
    }
}

/// Before a command of `client` runs, once eviction made room for it: the keys evicted are
/// told at once, ahead of the command's reply (Redis sends what does not happen while a
/// command executes straight away).
pub fn before_command(server: &mut Server, client: &mut Client, out: &mut ReplyWriter) {
    invalidate(server, Some((client, out)));
}

/// After a command of `client` (whose replies go to `out`), while any client tracks: its
/// CLIENT CACHING applies to this command (or transaction) only, and the keys it changed
/// are invalidated.
pub fn after_command(server: &mut Server, client: &mut Client, out: &mut ReplyWriter, cmd: &str) {
    if client.multi.is_none() && !cmd.starts_with("client|") {
        client.tracking.caching = false;
    }
    invalidate(server, Some((client, out)));
}

/// An event-loop round: the keys changed outside commands (expiry, eviction) are
/// invalidated, the table is brought under tracking-table-max-keys, and the BCAST
/// clients get the keys changed under their prefixes.
pub fn after_round(server: &mut Server) {
    if !server.tracking.active() {
        return;
    }
    invalidate(server, None);
    let max = server.config.tracking_table_max_keys;
    for (key, readers) in server.tracking.over_limit(max) {
        for id in readers {
            tell(
                &mut server.clients,
                None,
                id,
                Some(std::slice::from_ref(&key)),
                true,
            );
        }
    }
    let noloop_ids = server.clients.ids_where(|c| c.tracking.noloop);
    let messages = server.tracking.broadcast(|id| noloop_ids.contains(&id));
    for (id, keys) in messages {
        tell(&mut server.clients, None, id, Some(&keys), false);
    }
}

/// A client goes: its tracking ends.
pub fn client_gone(server: &mut Server, client: &mut Client) {
    server.tracking.disable(client.id, &mut client.tracking);
    let active = server.tracking.active();
    server.keyspace.set_collect_modified(active);
}

/// Decides who must hear of the keys the keyspace saw change since the last time (the
/// change of client `origin`, 0: the server's own), before anyone reads them again.
fn settle(server: &mut Server, origin: u64) {
    let (keys, flushed) = server.keyspace.take_modified();
    server.tracking.settle(keys, flushed, origin);
}

/// Sends the invalidations for the keys the keyspace saw change; `running` is the client
/// whose command changed them (NOLOOP) with its reply writer.
fn invalidate(server: &mut Server, mut running: Option<(&mut Client, &mut ReplyWriter)>) {
    let origin = running.as_ref().map_or(0, |(c, _)| c.id);
    settle(server, origin);
    let pending = server.tracking.take_pending();
    let active = server.tracking.active();
    server.keyspace.set_collect_modified(active);
    if pending.flush {
        let mut ids = server.clients.ids_where(|c| c.tracking.on);
        if let Some((me, _)) = &running {
            if me.tracking.on {
                ids.push(me.id);
            }
        }
        for id in ids {
            tell(&mut server.clients, reborrow(&mut running), id, None, false);
        }
    }
    for (key, readers) in pending.keys {
        for id in readers {
            if id == origin && running.as_ref().is_some_and(|(c, _)| c.tracking.noloop) {
                continue;
            }
            tell(
                &mut server.clients,
                reborrow(&mut running),
                id,
                Some(std::slice::from_ref(&key)),
                true,
            );
        }
    }
}

/// The running client and its writer, lent for one call.
fn reborrow<'a, 'w>(
    running: &'a mut Option<(&mut Client, &mut ReplyWriter<'w>)>,
) -> Option<(&'a mut Client, &'a mut ReplyWriter<'w>)> {
    running.as_mut().map(|(c, w)| (&mut **c, &mut **w))
}

/// One invalidation (`None`: a flush) for tracking client `id` (`reader`: one the key table
/// names, rather than a BCAST or flush message), sent where its mode says:
/// to itself, or to the client it redirects to; a redirect that is gone marks it broken
/// and, in RESP3, tells it so.
fn tell(
    clients: &mut Clients,
    mut running: Option<(&mut Client, &mut ReplyWriter)>,
    id: u64,
    keys: Option<&[Vec<u8>]>,
    reader: bool,
) {
    // The tracking client: the running one, or looked up by id.
    let tracker = match &running {
        Some((me, _)) if me.id == id => Some(&**me),
        _ => clients.get(id),
    };
    let Some((t, tracker_resp3)) = tracker.map(|c| (&c.tracking, c.resp3)) else {
        return;
    };
    // A reader that turned tracking off, or switched to BCAST since, is not told.
    if !t.on || (reader && t.bcast) {
        return;
    }
    let redirect = t.redirect;
    let receiver = if redirect == 0 { id } else { redirect };
    let redirected = redirect != 0;
    let write = |out: &mut ReplyWriter, to: &Client| {
        if frame::can_receive(out.is_resp3(), redirected, to.subscriptions.active()) {
            frame::invalidation(out, keys, tracker_resp3);
        }
    };
    let delivered = match &mut running {
        Some((me, out)) if me.id == receiver => {
            write(out, me);
            true
        }
        _ => clients.push_to(receiver, 0, write),
    };
    if !delivered {
        mark_redirect_broken(clients, running, id, redirect);
    }
}

/// The client redirected to is gone: client `id` is marked and, in RESP3, told.
fn mark_redirect_broken(
    clients: &mut Clients,
    running: Option<(&mut Client, &mut ReplyWriter)>,
    id: u64,
    redirect: u64,
) {
    match running {
        Some((me, out)) if me.id == id => {
            me.tracking.broken_redirect = true;
            if out.is_resp3() {
                frame::redirect_broken(out, redirect);
            }
        }
        _ => {
            clients.push_to(id, 0, |out, _| {
                if out.is_resp3() {
                    frame::redirect_broken(out, redirect);
                }
            });
            clients.set_redirect_broken(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_checks_options_and_the_current_mode() {
        let off = ClientTracking::default();
        let mode = |f: fn(&mut ClientTracking)| {
            let mut m = ClientTracking::default();
            f(&mut m);
            m
        };
        assert!(check_on(&off, &mode(|m| m.prefixes = vec![b"a".to_vec()])).is_err());
        assert!(check_on(
            &off,
            &mode(|m| {
                m.bcast = true;
                m.optin = true;
            })
        )
        .is_err());
        let bcast = mode(|m| {
            m.bcast = true;
            m.prefixes = vec![b"ab".to_vec(), b"a".to_vec()];
        });
        let err = check_on(&off, &bcast).unwrap_err();
        assert!(
            err.contains("'ab' overlaps with another provided prefix 'a'"),
            "{err}"
        );
        let mut on = ClientTracking {
            on: true,
            ..Default::default()
        };
        assert!(check_on(&on, &bcast)
            .unwrap_err()
            .contains("BCAST mode on/off"));
        on.optin = true;
        assert!(check_on(&on, &mode(|m| m.optout = true))
            .unwrap_err()
            .contains("OPTIN/OPTOUT"));
    }
}
