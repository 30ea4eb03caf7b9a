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
//!
//! A script's redis.set_repl sends its next commands to the AOF only, to the replicas
//! only, or nowhere ([`Targets`]). Such a unit splits the stream in two (the AOF's and the
//! replicas', each with its own SELECT state) until the next [`Propagation::take`]; its
//! MULTI and EXEC go to both, as Redis's propagatePendingCommands sends them.

/// One command's arguments.
pub type Argv = Vec<Vec<u8>>;

/// Which consumers a propagated command goes to (redis.set_repl's flags): bit 0 the AOF,
/// bit 1 the replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Targets(pub u8);

impl Targets {
    /// The AOF only (REPL_AOF).
    pub const AOF: Targets = Targets(1);
    /// The replicas only (REPL_REPLICA).
    pub const REPLICAS: Targets = Targets(2);
    /// Both (REPL_ALL, every command but a script's after set_repl).
    pub const ALL: Targets = Targets(3);

    fn has(self, t: Targets) -> bool {
        self.0 & t.0 != 0
    }
}

/// What a handler propagates in place of the command as received.
#[derive(Debug, Default)]
pub struct Rewrite {
    /// `Some`: these commands instead of the command (empty: nothing).
    instead: Option<Vec<Argv>>,
    /// Propagate even when the dataset did not change (FLUSHALL on empty databases).
    forced: bool,
    /// `Some`: to these consumers only (PUBLISH: the replicas).
    only: Option<Targets>,
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

    /// The command propagates, changed or not, to the consumers in `targets` only (Redis's
    /// forceCommandPropagation with PROPAGATE_REPL or PROPAGATE_AOF).
    pub fn force_to(&mut self, targets: Targets) {
        self.forced = true;
        self.only = Some(targets);
    }
}

/// The stream and the unit being built.
#[derive(Debug, Default)]
pub struct Propagation {
    enabled: bool,
    unit: Vec<(usize, Argv, Targets)>,
    /// The stream of both consumers, or the AOF's alone while `replicas` is split off.
    stream: Vec<u8>,
    /// The replicas' stream, split off by a unit that did not go to both.
    replicas: Option<Vec<u8>>,
    /// The database of the last command in the AOF's and in the replicas' stream (None:
    /// SELECT before the next).
    selected: [Option<usize>; 2],
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
        self.replicas = None;
        self.selected = [None; 2];
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

    /// The database the replicas' stream is in (None: the next command is preceded by a
    /// SELECT).
    pub fn selected(&self) -> Option<usize> {
        self.selected[1]
    }

    /// The next command is preceded by a SELECT, whatever the last one's database (a new
    /// file or a new consumer starts there).
    pub fn reselect(&mut self) {
        self.selected = [None; 2];
    }

    /// Adds the result of command `argv` (received in database `db`) to the unit: the
    /// command itself when it changed the dataset (`changed`), or what `rewrite` says.
    pub fn command(&mut self, db: usize, argv: &[&[u8]], changed: bool, rewrite: Rewrite) {
        self.command_to(db, argv, changed, rewrite, Targets::ALL);
    }

    /// [`Propagation::command`] for the consumers in `targets` only (none: nothing).
    pub fn command_to(
        &mut self,
        db: usize,
        argv: &[&[u8]],
        changed: bool,
        rewrite: Rewrite,
        targets: Targets,
    ) {
        let targets = rewrite
            .only
            .map_or(targets, |only| Targets(targets.0 & only.0));
        if !self.enabled || !(changed || rewrite.forced) || targets.0 == 0 {
            return;
        }
        match rewrite.instead {
            Some(list) => self.unit.extend(list.into_iter().map(|a| (db, a, targets))),
            None => self
                .unit
                .push((db, argv.iter().map(|a| a.to_vec()).collect(), targets)),
        }
    }

    /// Adds a key deletion done by the server itself (expiry, eviction) to the unit: an
    /// UNLINK when `lazy` (the lazyfree-lazy-* directive of its cause), else a DEL, as
    /// Redis's propagateDeletion.
    pub fn deletion(&mut self, db: usize, key: Vec<u8>, lazy: bool) {
        if self.enabled {
            self.unit
                .push((db, vec![deletion_verb(lazy).to_vec(), key], Targets::ALL));
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
        let shared = unit.iter().all(|(_, _, t)| *t == Targets::ALL)
            && self.replicas.is_none()
            && self.selected[0] == self.selected[1];
        if shared {
            write_unit(&mut self.stream, &mut self.selected[0], &unit, None, wrap);
            self.selected[1] = self.selected[0];
            return;
        }
        let replicas = self.replicas.get_or_insert_with(|| self.stream.clone());
        let [aof_db, replicas_db] = &mut self.selected;
        write_unit(&mut self.stream, aof_db, &unit, Some(Targets::AOF), wrap);
        write_unit(replicas, replicas_db, &unit, Some(Targets::REPLICAS), wrap);
    }

    /// Takes the streams collected since the last call: the AOF's, and the replicas' when
    /// it differs from it.
    pub fn take(&mut self) -> (Vec<u8>, Option<Vec<u8>>) {
        (std::mem::take(&mut self.stream), self.replicas.take())
    }

    /// Bytes collected and not yet taken (the longer stream's).
    pub fn pending(&self) -> usize {
        self.stream.len().max(self.pending_for_replicas())
    }

    /// Bytes of the replicas' stream not yet taken (WAIT's offsets count them).
    pub fn pending_for_replicas(&self) -> usize {
        self.replicas.as_ref().map_or(self.stream.len(), Vec::len)
    }
}

/// Writes the commands of `unit` that go to `only` (all when None) into `out`, with a
/// SELECT when one's database differs from `selected`'s, in MULTI / EXEC when `wrap`.
fn write_unit(
    out: &mut Vec<u8>,
    selected: &mut Option<usize>,
    unit: &[(usize, Argv, Targets)],
    only: Option<Targets>,
    wrap: bool,
) {
    if wrap {
        encode(out, &[b"MULTI"]);
    }
    for (db, argv, _) in unit
        .iter()
        .filter(|(_, _, t)| only.is_none_or(|o| t.has(o)))
    {
        if *selected != Some(*db) {
            encode(out, &[b"SELECT", db.to_string().as_bytes()]);
            *selected = Some(*db);
        }
        let args: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
        encode(out, &args);
    }
    if wrap {
        encode(out, &[b"EXEC"]);
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
        String::from_utf8(p.take().0).unwrap().replace("\r\n", " ")
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

    #[test]
    fn set_repl_targets_split_the_stream_until_taken() {
        let mut p = Propagation::default();
        p.set_enabled(true);
        let set = |k: &'static [u8]| [b"SET" as &[u8], k, b"1"];
        p.command(0, &set(b"a"), true, Rewrite::default());
        p.command_to(0, &set(b"b"), true, Rewrite::default(), Targets(0));
        p.command_to(0, &set(b"c"), true, Rewrite::default(), Targets::AOF);
        p.command_to(2, &set(b"r"), true, Rewrite::default(), Targets::REPLICAS);
        p.end_unit(true);
        p.command(0, &set(b"d"), true, Rewrite::default());
        p.end_unit(true);
        assert_ne!(p.pending_for_replicas(), p.stream.len());
        assert_eq!(p.pending(), p.pending_for_replicas().max(p.stream.len()));
        let (aof, replicas) = p.take();
        let words = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap().replace("\r\n", " ");
        assert_eq!(
            words(&aof),
            "*1 $5 MULTI *2 $6 SELECT $1 0 *3 $3 SET $1 a $1 1 *3 $3 SET $1 c $1 1 *1 $4 EXEC \
             *3 $3 SET $1 d $1 1 "
        );
        assert_eq!(
            words(&replicas.unwrap()),
            "*1 $5 MULTI *2 $6 SELECT $1 0 *3 $3 SET $1 a $1 1 *2 $6 SELECT $1 2 \
             *3 $3 SET $1 r $1 1 *1 $4 EXEC *2 $6 SELECT $1 0 *3 $3 SET $1 d $1 1 "
        );
        p.command(0, &set(b"e"), true, Rewrite::default());
        p.end_unit(true);
        assert_eq!(
            p.take(),
            (b"*3\r\n$3\r\nSET\r\n$1\r\ne\r\n$1\r\n1\r\n".to_vec(), None)
        );
    }
}
