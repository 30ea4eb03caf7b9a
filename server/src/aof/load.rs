//! Loading the AOF at start-up (Redis's loadAppendOnlyFiles and loadSingleAppendOnlyFile):
//! the manifest, then the base (an RDB file, or commands), then each incremental file in
//! order, the commands replayed through the command table by a client of its own. An old
//! single `appendonly.aof` in `dir` is first moved into the directory as its base, as
//! Redis 7 upgrades it.
//!
//! A file that ends inside its last command (a crash mid-write) loads up to the last whole
//! command and is cut there under aof-load-truncated yes, which only the last file may
//! need; a transaction left open at the end is dropped the same way. Any other damage
//! stops the start-up.

use super::manifest::{manifest_name, Manifest};
use super::stream::{Bad, FileWindow};
use super::{dir_path, file_size};
use crate::clients::Client;
use crate::commands::{self, WhileBlocked};
use crate::keyspace::Free;
use crate::server::Server;
use crate::{notice, warning};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How loading a file (or the directory) went (Redis's AOF_OK, AOF_TRUNCATED, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Loaded.
    Ok,
    /// Loaded up to the last whole command, the rest cut off.
    Truncated,
    /// Nothing to load.
    Empty,
    /// No AOF.
    NotExist,
    /// Could not be loaded (logged): the server must not start.
    Failed,
}

/// Reads the manifest (Redis's aofLoadManifestFromDisk): none when the directory or the
/// manifest is missing; a bad manifest is fatal.
fn read_manifest(dir: &Path, filename: &str) -> anyhow::Result<Manifest> {
    let path = dir.join(manifest_name(filename));
    if !dir.is_dir() || !path.exists() {
        return Ok(Manifest::default());
    }
    let bytes = std::fs::read(&path).map_err(|e| {
        warning!(
            "Fatal error: can't open the AOF manifest file {} for reading: {e}",
            path.display()
        );
        anyhow::anyhow!("can't read {}", path.display())
    })?;
    Manifest::parse(&bytes).map_err(|e| {
        warning!("\n*** FATAL AOF MANIFEST FILE ERROR ***\n");
        if let Some(text) = &e.text {
            warning!("Reading the manifest file, at line {}\n", e.line);
            warning!(">>> '{text}'\n");
        }
        warning!("{}\n", e.reason);
        anyhow::anyhow!("bad AOF manifest {}", path.display())
    })
}

/// Moves an old single-file AOF into the directory as its base (aofUpgradePrepare).
fn upgrade(server: &Server, dir: &Path, m: &mut Manifest) -> anyhow::Result<()> {
    let filename = &server.config.aof.filename;
    if !super::create_dir(dir) {
        anyhow::bail!("can't create {}", dir.display());
    }
    *m = Manifest::default();
    m.base = Some(super::manifest::AofFile {
        name: filename.clone(),
        seq: 1,
        kind: super::manifest::Kind::Base,
    });
    m.base_seq = 1;
    super::rewrite::persist_manifest(dir, filename, m)?;
    let old = server.config.dir.join(filename);
    if let Err(e) = std::fs::rename(&old, dir.join(filename)) {
        warning!(
            "Error trying to move the old AOF file {filename} into dir {}: {e}",
            server.config.aof.dirname
        );
        anyhow::bail!("can't move {}", old.display());
    }
    notice!(
        "Successfully migrated an old-style AOF file ({filename}) into the AOF directory ({}).",
        server.config.aof.dirname
    );
    Ok(())
}

/// A load of the AOF in progress (at start-up, or for DEBUG LOADAOF): it is replayed a
/// slice at a time ([`step`]) and the clients are served meanwhile, commands without the
/// `loading` flag answered `-LOADING` and INFO showing the loading_* fields, as Redis's
/// loadAppendOnlyFiles does with processEventsWhileBlocked. A script in it that runs past
/// busy-reply-threshold serves them too, as Redis's scriptInterrupt does.
pub struct AofLoad {
    dir: PathBuf,
    manifest: Manifest,
    /// The next file, an index into the manifest's files.
    next: usize,
    /// The commands file being replayed.
    replay: Option<Replay>,
    /// The outcome so far.
    result: Outcome,
    /// Where the load stood when it last published it (loaded_bytes: the files done).
    progress: Progress,
}

/// How far an AOF load is: INFO's loading_* fields, kept in [`super::Aof::progress`] while a
/// load runs, which is how the server knows it is loading.
#[derive(Clone, Copy)]
pub struct Progress {
    started: Instant,
    started_unix: u64,
    total_bytes: u64,
    loaded_bytes: u64,
}

impl Progress {
    /// The loading_* fields of INFO persistence.
    pub fn info_fields(&self, w: &mut String) {
        crate::rdb::loading::write_info_fields(
            w,
            self.started,
            self.started_unix,
            self.total_bytes,
            self.loaded_bytes,
        );
    }
}

/// Starts loading the AOF (the manifest read, an old single file upgraded); the server is
/// loading from then until [`finish`]. None when there is nothing to load (the manifest
/// becomes the AOF's at once); Err (after Redis's log lines) when the server must not start.
pub fn begin(server: &mut Server) -> anyhow::Result<Option<AofLoad>> {
    let dir = dir_path(server);
    let filename = server.config.aof.filename.clone();
    let mut m = read_manifest(&dir, &filename)?;
    if server.config.dir.join(&filename).is_file() {
        let only_old_base = m.base.as_ref().is_some_and(|b| b.name == filename)
            && m.incrs.is_empty()
            && !dir.join(&filename).exists();
        if !dir.is_dir() || (m.base.is_none() && m.incrs.is_empty()) || only_old_base {
            upgrade(server, &dir, &mut m)?;
        }
    }
    let mut total_bytes = 0;
    for f in m.files() {
        match std::fs::metadata(dir.join(&f.name)) {
            Ok(md) => total_bytes += md.len(),
            Err(e) => {
                warning!("Unable to obtain the AOF file {} length. stat: {e}", f.name);
                anyhow::bail!("can't load the append only file");
            }
        }
    }
    if total_bytes == 0 {
        // No files (NotExist) or only empty ones (Empty): nothing to replay.
        server.aof.manifest = m;
        return Ok(None);
    }
    let load = AofLoad {
        dir,
        manifest: m,
        next: 0,
        replay: None,
        result: Outcome::Ok,
        progress: Progress {
            started: Instant::now(),
            started_unix: crate::clock::unix_ms() / 1000,
            total_bytes,
            loaded_bytes: 0,
        },
    };
    load.publish(server);
    Ok(Some(load))
}

/// Commands replayed between two looks at the clock.
const STEP_COMMANDS: usize = 1024;

/// Replays the AOF for about `budget`: None while there is more, else the outcome.
/// `while_blocked` serves the other clients if a script in it runs long.
pub fn step(
    server: &mut Server,
    load: &mut AofLoad,
    budget: Duration,
    mut while_blocked: Option<&mut dyn WhileBlocked>,
) -> Option<Outcome> {
    let until = Instant::now() + budget;
    loop {
        load.publish(server);
        if let Some(replay) = load.replay.as_mut() {
            let events = commands::lend(&mut while_blocked);
            let outcome = replay.step(server, STEP_COMMANDS, events)?;
            let replay = load.replay.take().expect("running");
            load.progress.loaded_bytes += replay.len;
            if let Some(end) = file_done(load, &replay.name, replay.started, outcome) {
                return Some(end);
            }
        } else if load.next == load.manifest.files().count() {
            return Some(load.result);
        } else if let Some(end) = open_next(server, load) {
            return Some(end);
        }
        if Instant::now() >= until {
            return None;
        }
    }
}

/// Opens the next file: an RDB base (or preamble) loads at once, commands start a replay.
/// Some(outcome) when the load ends here.
fn open_next(server: &mut Server, load: &mut AofLoad) -> Option<Outcome> {
    let f = load
        .manifest
        .files()
        .nth(load.next)
        .expect("a file")
        .clone();
    load.next += 1;
    let started = Instant::now();
    let path = load.dir.join(&f.name);
    let opened = std::fs::File::open(&path).and_then(|file| {
        let len = file.metadata()?.len();
        Ok((file, len))
    });
    let (mut file, len) = match opened {
        Ok(opened) => opened,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            warning!("The append log file {} doesn't exist: {e}", f.name);
            load.result = Outcome::NotExist;
            return None;
        }
        Err(e) => {
            warning!(
                "Fatal error: can't open the append log file {} for reading: {e}",
                f.name
            );
            return Some(Outcome::Failed);
        }
    };
    if len == 0 {
        load.result = Outcome::Ok;
        return None;
    }
    let mut start = 0;
    match starts_with_rdb(&mut file) {
        Ok(true) => {
            let old_style = f.name == server.config.aof.filename;
            match load_rdb(server, &f.name, &mut file, len, old_style) {
                Some(end) => start = end,
                None => return Some(Outcome::Failed),
            }
            if old_style {
                notice!("Reading the remaining AOF tail...");
            }
        }
        Ok(false) => {}
        Err(e) => {
            warning!(
                "Unrecoverable error reading the append only file {}: {e}",
                f.name
            );
            return Some(Outcome::Failed);
        }
    }
    if let Err(e) = file.seek(SeekFrom::Start(start)) {
        warning!(
            "Unrecoverable error reading the append only file {}: {e}",
            f.name
        );
        return Some(Outcome::Failed);
    }
    load.replay = Some(Replay {
        client: Client::internal(AOF_CLIENT_ID),
        name: f.name,
        path,
        file,
        len,
        window: FileWindow::at(start),
        pos: start,
        valid_up_to: start,
        valid_before_multi: start,
        started,
    });
    None
}

/// Whether the file opens with an RDB snapshot ("REDIS"), read from its start.
fn starts_with_rdb(file: &mut std::fs::File) -> std::io::Result<bool> {
    let mut magic = [0u8; 5];
    let mut got = 0;
    while got < magic.len() {
        match file.read(&mut magic[got..])? {
            0 => break,
            n => got += n,
        }
    }
    file.seek(SeekFrom::Start(0))?;
    Ok(&magic[..got] == b"REDIS")
}

/// A file is done: logged as Redis does; Some(outcome) when the load ends with it.
fn file_done(
    load: &mut AofLoad,
    name: &str,
    started: Instant,
    outcome: Outcome,
) -> Option<Outcome> {
    let last = load.next == load.manifest.files().count();
    if outcome == Outcome::Ok || (outcome == Outcome::Truncated && last) {
        let what = if load.manifest.base.as_ref().is_some_and(|b| b.name == name) {
            "base"
        } else {
            "incr"
        };
        notice!(
            "DB loaded from {what} file {name}: {:.3} seconds",
            started.elapsed().as_secs_f64()
        );
    }
    if outcome == Outcome::Truncated && !last {
        warning!("Fatal error: the truncated file is not the last file");
        return Some(Outcome::Failed);
    }
    if outcome == Outcome::Failed {
        return Some(Outcome::Failed);
    }
    load.result = outcome;
    None
}

/// Ends the load: the manifest becomes the AOF's. Err when the server must not start.
pub fn finish(server: &mut Server, load: AofLoad, outcome: Outcome) -> anyhow::Result<()> {
    server.aof.progress = None;
    server.aof.rewrite.base_size = load
        .manifest
        .base
        .as_ref()
        .map_or(0, |b| file_size(&load.dir, &b.name));
    server.aof.manifest = load.manifest;
    match outcome {
        Outcome::Failed => anyhow::bail!("can't load the append only file"),
        Outcome::Ok | Outcome::Truncated => notice!(
            "DB loaded from append only file: {:.3} seconds",
            load.progress.started.elapsed().as_secs_f64()
        ),
        Outcome::Empty | Outcome::NotExist => {}
    }
    Ok(())
}

impl AofLoad {
    /// Tells the server how far the load is (the file being replayed counted to its next
    /// command).
    fn publish(&self, server: &mut Server) {
        let replaying = self.replay.as_ref().map_or(0, |r| r.pos);
        server.aof.progress = Some(Progress {
            loaded_bytes: self.progress.loaded_bytes + replaying,
            ..self.progress
        });
    }
}

/// An RDB base, or an old file's RDB preamble, which commands may follow (Redis reads on
/// after it in both): the offset where the snapshot ends, None when it did not load
/// (logged).
fn load_rdb(
    server: &mut Server,
    name: &str,
    file: &mut std::fs::File,
    len: u64,
    old_style: bool,
) -> Option<u64> {
    if old_style {
        notice!("Reading RDB preamble from AOF file...");
    } else {
        notice!("Reading RDB base file on AOF loading...");
    }
    let opts = crate::rdb::read::LoadOptions {
        size: Some(len),
        ..server.snapshots().load_options()
    };
    match crate::rdb::read::load_preamble(file, &opts) {
        Ok((dbs, report, end)) => {
            let timeout = crate::scripting::functions::FILE_LOAD_TIMEOUT;
            match server
                .scripting
                .functions
                .create_all(&report.functions, timeout)
            {
                Ok(libraries) => server.scripting.functions.libraries = libraries,
                Err(e) => {
                    warning!("Failed loading library: {e}");
                    return None;
                }
            }
            server.rdb.last_load_keys = report.keys;
            server.rdb.last_load_expired = report.expired_skipped;
            server.keyspace.replace_all(dbs, Free::Now);
            Some(end)
        }
        Err(e) => {
            warning!("{e}");
            if old_style {
                warning!(
                    "Error reading the RDB preamble of the AOF file {name}, AOF loading aborted"
                );
            } else {
                warning!("Error reading the RDB base file {name}, AOF loading aborted");
            }
            None
        }
    }
}

/// The id of the client replaying an AOF (connections' ids start at 1): MONITOR does not
/// show its commands, as Redis does not while loading.
pub const AOF_CLIENT_ID: u64 = u64::MAX;

/// A commands file being replayed by a client of its own.
struct Replay {
    client: Client,
    name: String,
    path: PathBuf,
    file: std::fs::File,
    /// The file's length.
    len: u64,
    /// The file's bytes from about `pos` on.
    window: FileWindow,
    /// The next command's file offset.
    pos: u64,
    /// The offset after the last command replayed whole (where a truncation cuts).
    valid_up_to: u64,
    /// `valid_up_to` before the open MULTI, if any.
    valid_before_multi: u64,
    started: Instant,
}

impl Replay {
    /// Replays up to `max` commands: None while the file has more, else its outcome.
    fn step(
        &mut self,
        server: &mut Server,
        max: usize,
        mut while_blocked: Option<&mut dyn WhileBlocked>,
    ) -> Option<Outcome> {
        let mut replies = Vec::new();
        let mut done = 0;
        let bad = loop {
            if done == max {
                return None;
            }
            let (parsed, after) = match self.window.command_at(self.pos, &mut self.file) {
                Ok(read) => read,
                Err(e) => {
                    warning!(
                        "Unrecoverable error reading the append only file {}: {e}",
                        self.name
                    );
                    return Some(Outcome::Failed);
                }
            };
            done += 1;
            match parsed {
                Ok(Some(argv)) => {
                    let args: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
                    let Some(cmd) = commands::lookup(args[0]) else {
                        warning!(
                            "Unknown command '{}' reading the append only file {}",
                            String::from_utf8_lossy(args[0]),
                            self.name
                        );
                        return Some(Outcome::Failed);
                    };
                    if cmd.name == "multi" {
                        self.valid_before_multi = self.valid_up_to;
                    }
                    // As Redis while loading: nothing expires (an EXPIRE in the past sets
                    // the time, a later write keeps the key); expiry comes after the load.
                    server.keyspace.pause_expiry(true);
                    let events = commands::lend(&mut while_blocked);
                    let client = &mut self.client;
                    commands::unreplied::execute(server, client, &mut replies, &args, events);
                    server.keyspace.pause_expiry(false);
                    replies.clear();
                    if server.config.key_load_delay != 0 {
                        crate::clock::debug_delay(server.config.key_load_delay);
                    }
                    self.pos = after;
                    self.valid_up_to = after;
                }
                Ok(None) if self.client.multi.is_some() => {
                    warning!(
                        "Revert incomplete MULTI/EXEC transaction in AOF file {}",
                        self.name
                    );
                    self.valid_up_to = self.valid_before_multi;
                    break Bad::Truncated;
                }
                Ok(None) => return Some(Outcome::Ok),
                Err(bad) => break bad,
            }
        };
        self.pos = self.len;
        Some(self.damaged(server, bad))
    }

    /// The file ends inside a command, or holds one that does not parse.
    fn damaged(&self, server: &Server, bad: Bad) -> Outcome {
        let (name, valid_up_to) = (&self.name, self.valid_up_to);
        if bad == Bad::Format {
            // Redis's last line before it exits (its suite waits for it as the last line).
            warning!("Bad file format reading the append only file {name}: make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>");
            return Outcome::Failed;
        }
        if server.config.aof.load_truncated {
            warning!("!!! Warning: short read while loading the AOF file {name}!!!");
            warning!("!!! Truncating the AOF {name} at offset {valid_up_to} !!!");
            let cut = std::fs::OpenOptions::new()
                .write(true)
                .open(&self.path)
                .and_then(|f| f.set_len(valid_up_to));
            match cut {
                Ok(()) => {
                    warning!("AOF {name} loaded anyway because aof-load-truncated is enabled");
                    return Outcome::Truncated;
                }
                Err(e) => warning!("Error truncating the AOF file {name}: {e}"),
            }
        }
        warning!("Unexpected end of file reading the append only file {name}. You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server.");
        Outcome::Failed
    }
}
