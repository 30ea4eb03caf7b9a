//! FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms], as Redis 7.2's coordinated
//! failover: the master pauses its clients' writes, waits until a replica (the named one, or
//! any) acknowledged its whole stream, then becomes that replica's replica, sending
//! `PSYNC <replid> <offset> FAILOVER`; the target, seeing its own master's history, turns
//! master and accepts the PSYNC. The pause ends when the PSYNC is answered.
//!
//!   no-failover --FAILOVER--> waiting-for-sync --target acked / timeout+FORCE-->
//!   failover-in-progress --PSYNC answered--> no-failover
//!   (timeout without FORCE, ABORT, a rejected PSYNC: back to no-failover, a master again)

use crate::commands::pause::{self, Purpose};
use crate::notice;
use crate::server::Server;

/// Where a failover is (INFO's master_failover_state).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum State {
    /// No failover.
    #[default]
    None,
    /// Writes are paused until the target replica has the whole stream.
    WaitForSync,
    /// This server is becoming the target's replica.
    InProgress,
}

/// The failover under way.
#[derive(Debug, Default)]
pub struct Failover {
    /// Where it is.
    pub state: State,
    /// The replica to hand over to (None: the first one in sync).
    target: Option<(String, u16)>,
    /// Unix milliseconds after which waiting ends (None: no TIMEOUT).
    end_ms: Option<u64>,
    /// FORCE: fail over at the timeout even when the target is behind.
    force: bool,
    /// The target refused the PSYNC FAILOVER (given up at the next iteration, once the
    /// link is back in place).
    rejected: bool,
}

impl Failover {
    /// master_failover_state's value.
    pub fn state_name(&self) -> &'static str {
        match self.state {
            State::None => "no-failover",
            State::WaitForSync => "waiting-for-sync",
            State::InProgress => "failover-in-progress",
        }
    }

    /// Whether a failover is under way.
    pub fn active(&self) -> bool {
        self.state != State::None
    }
}

/// A parsed FAILOVER request.
#[derive(Debug, Default, PartialEq, Eq)]
struct Request {
    target: Option<(String, i64)>,
    timeout_ms: i64,
    force: bool,
}

/// Parses FAILOVER's arguments as Redis does (each option once, TIMEOUT > 0).
fn parse(args: &[&[u8]]) -> Result<Request, String> {
    let mut req = Request::default();
    let mut j = 1;
    while j < args.len() {
        let word = args[j];
        if word.eq_ignore_ascii_case(b"timeout") && j + 1 < args.len() && req.timeout_ms == 0 {
            let v = crate::numbers::parse_i64(args[j + 1])
                .ok_or_else(|| crate::errors::NOT_AN_INTEGER.to_string())?;
            if v <= 0 {
                return Err("ERR FAILOVER timeout must be greater than 0".into());
            }
            req.timeout_ms = v;
            j += 2;
        } else if word.eq_ignore_ascii_case(b"to") && j + 2 < args.len() && req.target.is_none() {
            let port = crate::numbers::parse_i64(args[j + 2])
                .ok_or_else(|| crate::errors::NOT_AN_INTEGER.to_string())?;
            req.target = Some((String::from_utf8_lossy(args[j + 1]).into_owned(), port));
            j += 3;
        } else if word.eq_ignore_ascii_case(b"force") && !req.force {
            req.force = true;
            j += 1;
        } else {
            return Err(crate::errors::SYNTAX.into());
        }
    }
    Ok(req)
}

/// FAILOVER's reply: Ok for +OK, Err for the error.
pub fn command(server: &mut Server, args: &[&[u8]]) -> Result<(), String> {
    if server.cluster.is_some() {
        return Err(
            "ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead."
                .into(),
        );
    }
    if args.len() == 2 && args[1].eq_ignore_ascii_case(b"abort") {
        if !server.replication.failover.active() {
            return Err("ERR No failover in progress.".into());
        }
        abort(server, "Failover manually aborted");
        return Ok(());
    }
    let req = parse(args)?;
    if server.replication.failover.active() {
        return Err("ERR FAILOVER already in progress.".into());
    }
    if server.replication.is_replica() {
        return Err("ERR FAILOVER is not valid when server is a replica.".into());
    }
    if server.replication.master.replicas.is_empty() {
        return Err("ERR FAILOVER requires connected replicas.".into());
    }
    if req.force && (req.timeout_ms == 0 || req.target.is_none()) {
        return Err(
            "ERR FAILOVER with force option requires both a timeout and target HOST and IP.".into(),
        );
    }
    let target = match req.target {
        Some((host, port)) => {
            let Some(online) = super::master::replica_at(server, &host, port) else {
                return Err("ERR FAILOVER target HOST and PORT is not a replica.".into());
            };
            if !online {
                return Err("ERR FAILOVER target replica is not online.".into());
            }
            notice!("FAILOVER requested to {host}:{port}.");
            Some((host, port as u16))
        }
        None => {
            notice!("FAILOVER requested to any replica.");
            None
        }
    };
    let now = crate::clock::unix_ms();
    server.replication.failover = Failover {
        state: State::WaitForSync,
        target,
        end_ms: (req.timeout_ms > 0).then(|| now + req.timeout_ms as u64),
        force: req.force,
        rejected: false,
    };
    pause::pause(server, Purpose::Failover, u64::MAX, pause::WRITE_SET);
    Ok(())
}

/// Each loop iteration while waiting: hands over to the target once it acknowledged the
/// whole stream, or at the timeout (with FORCE), or gives up at the timeout (or when the
/// target refused the handover).
pub fn tick(server: &mut Server) {
    let f = &server.replication.failover;
    if f.state == State::InProgress && f.rejected {
        return abort(server, "Failover target rejected psync request");
    }
    if f.state != State::WaitForSync {
        return;
    }
    if f.end_ms.is_some_and(|end| end <= crate::clock::unix_ms()) {
        if f.force {
            let (host, port) = f.target.clone().expect("FORCE has a target");
            notice!("FAILOVER to {host}:{port} time out exceeded, failing over.");
            hand_over(server, host, port);
        } else {
            abort(server, "Replica never caught up before timeout");
        }
        return;
    }
    let offset = server.replication.offset();
    let synced = super::master::synced_replica(server, offset, f.target.as_ref());
    if let Some((host, port)) = synced {
        notice!("Failover target {host}:{port} is synced, failing over.");
        hand_over(server, host, port);
    }
}

/// Becomes the target's replica; the link's PSYNC carries FAILOVER.
fn hand_over(server: &mut Server, host: String, port: u16) {
    let f = &mut server.replication.failover;
    f.state = State::InProgress;
    f.target = Some((host.clone(), port));
    super::replica::set_master(server, host, port);
}

/// The target answered the PSYNC FAILOVER: done when it accepted it, else given up.
pub fn psync_answered(server: &mut Server, accepted: bool) {
    if server.replication.failover.state != State::InProgress {
        return;
    }
    if accepted {
        clear(server);
    } else {
        server.replication.failover.rejected = true;
    }
}

/// Whether the link's PSYNC is a handover (carries FAILOVER).
pub fn handing_over(server: &Server) -> bool {
    server.replication.failover.state == State::InProgress
}

/// Gives the failover up (a master again if it was handing over), logged with `why`.
pub fn abort(server: &mut Server, why: &str) {
    let f = &server.replication.failover;
    if !f.active() {
        return;
    }
    match &f.target {
        Some((host, port)) => notice!("FAILOVER to {host}:{port} aborted: {why}"),
        None => notice!("FAILOVER to any replica aborted: {why}"),
    }
    if f.state == State::InProgress {
        super::replica::unset_master(server);
    }
    clear(server);
}

/// Ends the failover state and its write pause.
fn clear(server: &mut Server) {
    server.replication.failover = Failover::default();
    pause::unpause(server, Purpose::Failover);
}

/// PSYNC <replid> <offset> FAILOVER received by a replica: it becomes a master when the
/// request continues its own master's history. Err holds the error reply.
pub fn psync_request(server: &mut Server, replid: &[u8], who: &str) -> Result<(), String> {
    notice!(
        "Failover request received for replid {}.",
        String::from_utf8_lossy(replid)
    );
    if !server.replication.is_replica() {
        return Err("ERR PSYNC FAILOVER can't be sent to a master.".into());
    }
    if !replid.eq_ignore_ascii_case(server.replication.replid.as_bytes()) {
        return Err("ERR PSYNC FAILOVER replid must match my replid.".into());
    }
    super::replica::unset_master(server);
    notice!("MASTER MODE enabled (failover request from '{who}')");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_as_redis() {
        let p = |args: &[&str]| {
            let args: Vec<&[u8]> = std::iter::once("failover")
                .chain(args.iter().copied())
                .map(str::as_bytes)
                .collect();
            parse(&args)
        };
        assert_eq!(p(&[]), Ok(Request::default()));
        assert_eq!(
            p(&["TO", "h", "7", "FORCE", "TIMEOUT", "50"]),
            Ok(Request {
                target: Some(("h".into(), 7)),
                timeout_ms: 50,
                force: true
            })
        );
        assert!(p(&["timeout", "0"]).unwrap_err().contains("greater than 0"));
        assert!(p(&["force", "force"]).unwrap_err().contains("syntax"));
        assert!(p(&["to", "h"]).unwrap_err().contains("syntax"));
        assert!(p(&["to", "h", "x"]).is_err());
    }
}
