//! Propagation: the stream of commands that replays every change of the dataset
//! deterministically, which the append-only file consumes (and replicas will).
//!
//! After a command ran and changed the dataset (the keyspace's change counter moved), the
//! command path adds what replays it to the current *unit* (Redis's `also_propagate`): the
//! command as received, or what its handler asked for instead through [`Rewrite`] (an
//! absolute PEXPIREAT for a relative EXPIRE, SREMs for SPOP, ...), preceded by a DEL for
//! each key that expiry or eviction removed on the way. A unit ends with the outermost
//! command (EXEC ends the unit of its queued commands) and goes into the stream as RESP,
//! with a SELECT whenever the database differs from the last command's, and wrapped in
//! MULTI / EXEC when it holds more than one command, as Redis 7.2's
//! propagatePendingCommands:
//!
//! ```text
//! EXEC of [SET a 1, SELECT 2, EXPIRE b 10]      stream
//!   unit: (0, SET a 1)                          *1 MULTI          (no SELECT before it)
//!         (2, PEXPIREAT b <ms>)           ->    *2 SELECT 0   *3 SET a 1
//!                                               *2 SELECT 2   *3 PEXPIREAT b <ms>
//!                                               *1 EXEC
//! ```
//!
//! The consumers take the stream once per event-loop iteration ([`Propagation::take`]),
//! before the replies of that iteration go out. Nothing is collected while no consumer
//! exists ([`Propagation::set_enabled`]).

/// One command's arguments.
pub type Argv = Vec<Vec<u8>>;

/// What a handler propagates in place of the command as received.
#[derive(Debug, Default)]
pub struct Rewrite {
    /// `Some`: these commands instead of the command (empty: nothing).
    instead: Option<Vec<Argv>>,
    /// Propagate even when the dataset did not change (FLUSHALL on empty databases).
    forced: bool,
}

impl Rewrite {
    /// Adds `argv` to what replaces the command (the first call replaces it, later calls
    /// add commands after it).
    pub fn instead(&mut self, argv: &[&[u8]]) {
        self.instead
            .get_or_insert_with(Vec::new)
            .push(argv.iter().map(|a| a.to_vec()).collect());
    }

    /// The command propagates nothing, whatever it changed.
    pub fn nothing(&mut self) {
        self.instead.get_or_insert_with(Vec::new);
    }

    /// The command propagates even if it changed nothing.
    pub fn force(&mut self) {
        self.forced = true;
    }
}

/// The stream and the unit being built.
#[derive(Debug, Default)]
pub struct Propagation {
    enabled: bool,
    unit: Vec<(usize, Argv)>,
    stream: Vec<u8>,
    /// The database of the last command in the stream (None: SELECT before the next).
    selected: Option<usize>,
}

impl Propagation {
    /// Whether a consumer exists (the AOF is on): otherwise nothing is collected.
    #[inline]
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Starts or stops collecting. Starting forces a SELECT before the next command.
    pub fn set_enabled(&mut self, on: bool) {
        self.enabled = on;
        self.unit.clear();
        self.stream.clear();
        self.selected = None;
    }

    /// Stops collecting while commands run that must not propagate (DEBUG LOADAOF's
    /// replay), keeping the stream's database, unlike [`Propagation::set_enabled`]; returns
    /// whether it was collecting, for [`Propagation::resume`].
    pub fn suspend(&mut self) -> bool {
        std::mem::replace(&mut self.enabled, false)
    }

    /// Collects again if `was` (what [`Propagation::suspend`] returned).
    pub fn resume(&mut self, was: bool) {
        self.enabled = was;
    }

    /// The database the stream is in (None: the next command is preceded by a SELECT).
    pub fn selected(&self) -> Option<usize> {
        self.selected
    }

    /// The next command is preceded by a SELECT, whatever the last one's database (a new
    /// file or a new consumer starts there).
    pub fn reselect(&mut self) {
        self.selected = None;
    }

    /// Adds the result of command `argv` (received in database `db`) to the unit: the
    /// command itself when it changed the dataset (`changed`), or what `rewrite` says.
    pub fn command(&mut self, db: usize, argv: &[&[u8]], changed: bool, rewrite: Rewrite) {
        if !self.enabled || !(changed || rewrite.forced) {
            return;
        }
        match rewrite.instead {
            Some(list) => self.unit.extend(list.into_iter().map(|a| (db, a))),
            None => self
                .unit
                .push((db, argv.iter().map(|a| a.to_vec()).collect())),
        }
    }

    /// Adds a key deletion done by the server itself (expiry, eviction) to the unit: an
    /// UNLINK when `lazy` (the lazyfree-lazy-* directive of its cause), else a DEL, as
    /// Redis's propagateDeletion.
    pub fn deletion(&mut self, db: usize, key: Vec<u8>, lazy: bool) {
        if self.enabled {
            self.unit
                .push((db, vec![deletion_verb(lazy).to_vec(), key]));
        }
    }

    /// Ends the unit: its commands go into the stream, in MULTI / EXEC when there are
    /// several and `atomic` (false for commands that only read, whose deletions of
    /// expired keys need no transaction).
    pub fn end_unit(&mut self, atomic: bool) {
        if self.unit.is_empty() {
            return;
        }
        let unit = std::mem::take(&mut self.unit);
        let wrap = atomic && unit.len() > 1;
        if wrap {
            encode(&mut self.stream, &[b"MULTI"]);
        }
        for (db, argv) in &unit {
            if self.selected != Some(*db) {
                encode(&mut self.stream, &[b"SELECT", db.to_string().as_bytes()]);
                self.selected = Some(*db);
            }
            let args: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
            encode(&mut self.stream, &args);
        }
        if wrap {
            encode(&mut self.stream, &[b"EXEC"]);
        }
    }

    /// Takes the stream collected since the last call.
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.stream)
    }

    /// Bytes collected and not yet taken.
    pub fn pending(&self) -> usize {
        self.stream.len()
    }
}

/// Appends `argv` as a RESP array of bulk strings (the form Redis's AOF and replication
/// stream use).
pub fn encode(out: &mut Vec<u8>, argv: &[&[u8]]) {
    out.push(b'*');
    out.extend_from_slice(argv.len().to_string().as_bytes());
    out.extend_from_slice(b"\r\n");
    for arg in argv {
        out.push(b'$');
        out.extend_from_slice(arg.len().to_string().as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

/// How a deletion propagates: UNLINK when its lazyfree-lazy-* directive is set, else DEL.
pub fn deletion_verb(lazy: bool) -> &'static [u8] {
    if lazy {
        b"UNLINK"
    } else {
        b"DEL"
    }
}

#[cfg(test)]
mod command_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn text(p: &mut Propagation) -> String {
        String::from_utf8(p.take()).unwrap().replace("\r\n", " ")
    }

    #[test]
    fn nothing_is_collected_without_a_consumer() {
        let mut p = Propagation::default();
        p.command(0, &[b"SET", b"a", b"1"], true, Rewrite::default());
        p.end_unit(true);
        assert_eq!(p.pending(), 0);
    }

    #[test]
    fn unchanged_commands_are_dropped_and_select_follows_the_database() {
        let mut p = Propagation::default();
        p.set_enabled(true);
        p.command(0, &[b"SET", b"a", b"1"], true, Rewrite::default());
        p.end_unit(true);
        p.command(0, &[b"DEL", b"zz"], false, Rewrite::default());
        p.end_unit(true);
        p.command(0, &[b"INCR", b"n"], true, Rewrite::default());
        p.end_unit(true);
        p.command(3, &[b"INCR", b"n"], true, Rewrite::default());
        p.end_unit(true);
        assert_eq!(
            text(&mut p),
            "*2 $6 SELECT $1 0 *3 $3 SET $1 a $1 1 *2 $4 INCR $1 n *2 $6 SELECT $1 3 *2 $4 INCR $1 n "
        );
        p.reselect();
        p.command(3, &[b"INCR", b"n"], true, Rewrite::default());
        p.end_unit(true);
        assert!(text(&mut p).starts_with("*2 $6 SELECT $1 3 "));
    }

    #[test]
    fn rewrites_replace_and_units_of_several_commands_are_transactions() {
        let mut p = Propagation::default();
        p.set_enabled(true);
        p.deletion(1, b"old".to_vec(), false);
        let mut r = Rewrite::default();
        r.instead(&[b"SREM", b"s", b"a"]);
        r.instead(&[b"SREM", b"s", b"b"]);
        p.command(1, &[b"SPOP", b"s", b"2"], true, r);
        p.end_unit(true);
        assert_eq!(
            text(&mut p),
            "*1 $5 MULTI *2 $6 SELECT $1 1 *2 $3 DEL $3 old *3 $4 SREM $1 s $1 a *3 $4 SREM $1 s $1 b *1 $4 EXEC "
        );
        let mut nothing = Rewrite::default();
        nothing.nothing();
        p.command(1, &[b"SRANDMEMBER", b"s"], true, nothing);
        let mut forced = Rewrite::default();
        forced.force();
        p.command(1, &[b"FLUSHALL"], false, forced);
        p.end_unit(true);
        assert_eq!(text(&mut p), "*1 $8 FLUSHALL ");
        p.deletion(1, b"x".to_vec(), false);
        p.deletion(1, b"y".to_vec(), true);
        p.end_unit(false);
        assert_eq!(text(&mut p), "*2 $3 DEL $1 x *2 $6 UNLINK $1 y ");
    }
}
