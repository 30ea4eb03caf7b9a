//! PING, ECHO, QUIT, RESET, AUTH, HELLO, SELECT.

use super::Ctx;
use crate::clients::ReplyMode;
use crate::errors;

/// PING [message]; in RESP2's subscribed mode the reply is a `pong` message.
pub fn ping(ctx: &mut Ctx, args: &[&[u8]]) {
    if super::pubsub::in_subscribed_mode(ctx.client) && args.len() <= 2 {
        ctx.out.array(2);
        ctx.out.bulk(b"pong");
        return ctx.out.bulk(args.get(1).copied().unwrap_or_default());
    }
    match args {
        [_] => ctx.out.simple("PONG"),
        [_, msg] => ctx.out.bulk(msg),
        _ => ctx.error(&errors::wrong_arity("ping")),
    }
}

/// ECHO message
pub fn echo(ctx: &mut Ctx, args: &[&[u8]]) {
    ctx.out.bulk(args[1]);
}

/// QUIT: reply OK, then close.
pub fn quit(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.out.ok();
    ctx.client.close_after_reply = true;
}

/// RESET: back to a fresh connection's state.
pub fn reset(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.client.multi = None;
    ctx.client.multi_failed = false;
    let id = ctx.client.id;
    ctx.server.keyspace.unwatch_all(id, &mut ctx.client.watched);
    super::pubsub::drop_subscriptions(ctx.server, ctx.client);
    super::tracking::client_gone(ctx.server, ctx.client);
    super::monitor::stop(ctx.server, ctx.client);
    ctx.client.db = 0;
    ctx.client.resp3 = false;
    ctx.out.set_resp3(false);
    ctx.client.name = None;
    ctx.client.reply_mode = ReplyMode::On;
    ctx.client.no_evict = false;
    ctx.client.no_touch = false;
    ctx.client.user = crate::acl::ClientUser::default_user();
    ctx.client.authenticated = ctx.server.acl.starts_authenticated();
    ctx.out.simple("RESET");
}

/// AUTH [username] password
pub fn auth(ctx: &mut Ctx, args: &[&[u8]]) {
    let (user, password): (&[u8], &[u8]) = match args {
        [_, password] => {
            let d = ctx.server.acl.default_user();
            if d.nopass {
                return ctx.error("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?");
            }
            (b"default", password)
        }
        [_, user, password] => (user, password),
        _ => return ctx.syntax_error(),
    };
    if super::acl_cmd::authenticate(ctx, user, password, args[0], "auth") {
        ctx.out.ok();
    }
}

/// HELLO [protover [AUTH username password] [SETNAME clientname]]
pub fn hello(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut version = None;
    if args.len() >= 2 {
        match crate::numbers::parse_i64(args[1]) {
            None => return ctx.error("ERR Protocol version is not an integer or out of range"),
            Some(v) if !(2..=3).contains(&v) => {
                return ctx.error("NOPROTO unsupported protocol version")
            }
            Some(v) => version = Some(v),
        }
    }
    let mut auth = None;
    let mut name = None;
    let mut i = 2;
    while i < args.len() {
        let more = args.len() - i - 1;
        if args[i].eq_ignore_ascii_case(b"AUTH") && more >= 2 {
            auth = Some((args[i + 1], args[i + 2]));
            i += 3;
        } else if args[i].eq_ignore_ascii_case(b"SETNAME") && more >= 1 {
            name = Some(args[i + 1]);
            i += 2;
        } else {
            let opt = String::from_utf8_lossy(args[i]).into_owned();
            return ctx.error(&format!("ERR Syntax error in HELLO option '{opt}'"));
        }
    }
    if let Some((user, password)) = auth {
        if !super::acl_cmd::authenticate(ctx, user, password, args[0], "hello") {
            return;
        }
    }
    if !ctx.client.authenticated {
        return ctx.error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time");
    }
    if let Some(name) = name {
        if !super::client_cmd::valid_name(name) {
            return ctx.error(errors::BAD_CLIENT_NAME);
        }
        ctx.client.name = (!name.is_empty()).then(|| name.to_vec());
    }
    if let Some(v) = version {
        ctx.client.resp3 = v == 3;
        ctx.out.set_resp3(v == 3);
    }
    ctx.out.map(7);
    ctx.out.bulk(b"server");
    ctx.out.bulk(b"redis");
    ctx.out.bulk(b"version");
    ctx.out.bulk(crate::REDIS_VERSION.as_bytes());
    ctx.out.bulk(b"proto");
    ctx.out.int(if ctx.client.resp3 { 3 } else { 2 });
    ctx.out.bulk(b"id");
    ctx.out.int(ctx.client.id as i64);
    ctx.out.bulk(b"mode");
    ctx.out.bulk(b"standalone");
    ctx.out.bulk(b"role");
    ctx.out.bulk(b"master");
    ctx.out.bulk(b"modules");
    ctx.out.array(0);
}

/// SELECT index
pub fn select(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(index) = ctx.int_arg(args[1]) else {
        return;
    };
    if ctx.server.cluster.is_some() && index != 0 {
        return ctx.error("ERR SELECT is not allowed in cluster mode");
    }
    if index < 0 || index as usize >= ctx.server.keyspace.db_count() {
        return ctx.error(errors::DB_INDEX_OUT_OF_RANGE);
    }
    ctx.client.db = index as usize;
    ctx.out.ok();
}
