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
use super::stream::{Bad, Commands};
use super::{dir_path, file_size};
use crate::clients::Client;
use crate::commands;
use crate::server::Server;
use crate::{notice, warning};
use std::path::Path;
use std::time::Instant;

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

/// Loads the AOF into `server` at start-up; the manifest read becomes the AOF's. Err
/// (after Redis's log lines) when the server must not start.
pub fn load_at_start(server: &mut Server) -> anyhow::Result<Outcome> {
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
    let started = Instant::now();
    let outcome = load_files(server, &dir, &m);
    server.aof.manifest = m;
    match outcome {
        Outcome::Failed => anyhow::bail!("can't load the append only file"),
        Outcome::Ok | Outcome::Truncated => notice!(
            "DB loaded from append only file: {:.3} seconds",
            started.elapsed().as_secs_f64()
        ),
        Outcome::Empty | Outcome::NotExist => {}
    }
    Ok(outcome)
}

/// The base and incremental files of `m`, in order.
fn load_files(server: &mut Server, dir: &Path, m: &Manifest) -> Outcome {
    if m.base.is_none() && m.incrs.is_empty() {
        return Outcome::NotExist;
    }
    let mut total = 0;
    for f in m.files() {
        match std::fs::metadata(dir.join(&f.name)) {
            Ok(md) => total += md.len(),
            Err(e) => {
                warning!("Unable to obtain the AOF file {} length. stat: {e}", f.name);
                return Outcome::Failed;
            }
        }
    }
    if total == 0 {
        return Outcome::Empty;
    }
    let count = m.files().count();
    let mut result = Outcome::Ok;
    for (i, f) in m.files().enumerate() {
        let last = i + 1 == count;
        let started = Instant::now();
        let old_style = f.name == server.config.aof.filename;
        let mut outcome = load_file(server, dir, &f.name, old_style);
        if outcome == Outcome::Ok || (outcome == Outcome::Truncated && last) {
            let what = if m.base.as_ref() == Some(f) {
                "base"
            } else {
                "incr"
            };
            notice!(
                "DB loaded from {what} file {}: {:.3} seconds",
                f.name,
                started.elapsed().as_secs_f64()
            );
        }
        if outcome == Outcome::Empty {
            outcome = Outcome::Ok;
        }
        if outcome == Outcome::Truncated && !last {
            warning!("Fatal error: the truncated file is not the last file");
            return Outcome::Failed;
        }
        if outcome == Outcome::Failed {
            return Outcome::Failed;
        }
        result = outcome;
    }
    server.aof.rewrite.base_size = m.base.as_ref().map_or(0, |b| file_size(dir, &b.name));
    result
}

/// One file: RDB when it starts with "REDIS", else commands.
fn load_file(server: &mut Server, dir: &Path, name: &str, old_style: bool) -> Outcome {
    let path = dir.join(name);
    let data = match std::fs::read(&path) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            warning!("The append log file {name} doesn't exist: {e}");
            return Outcome::NotExist;
        }
        Err(e) => {
            warning!("Fatal error: can't open the append log file {name} for reading: {e}");
            return Outcome::Failed;
        }
    };
    if data.is_empty() {
        return Outcome::Empty;
    }
    let mut start = 0;
    if data.starts_with(b"REDIS") {
        match load_rdb(server, name, &data, old_style) {
            Some(end) => start = end,
            None => return Outcome::Failed,
        }
        if old_style {
            notice!("Reading the remaining AOF tail...");
        }
    }
    replay(server, &path, name, &data, start)
}

/// An RDB base, or an old file's RDB preamble, which commands may follow (Redis reads on
/// after it in both): the offset where the snapshot ends, None when it did not load
/// (logged).
fn load_rdb(server: &mut Server, name: &str, data: &[u8], old_style: bool) -> Option<usize> {
    if old_style {
        notice!("Reading RDB preamble from AOF file...");
    } else {
        notice!("Reading RDB base file on AOF loading...");
    }
    let opts = crate::rdb::read::LoadOptions {
        size: Some(data.len() as u64),
        ..server.snapshots().load_options()
    };
    match crate::rdb::read::load_preamble(data, &opts) {
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
            server.keyspace.replace_all(dbs);
            Some(end as usize)
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

/// Replays the commands of a file from offset `start` with a client of its own.
fn replay(server: &mut Server, path: &Path, name: &str, data: &[u8], start: usize) -> Outcome {
    let unspecified = std::net::SocketAddr::from(([0, 0, 0, 0], 0));
    let mut client = Client::new(AOF_CLIENT_ID, -1, unspecified, unspecified, true);
    let mut replies = Vec::new();
    let mut commands = Commands::new(data, start);
    let (mut valid_up_to, mut valid_before_multi) = (start, start);
    let bad = loop {
        match commands.next_command() {
            Ok(Some(argv)) => {
                let args: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
                let Some(cmd) = commands::lookup(args[0]) else {
                    warning!(
                        "Unknown command '{}' reading the append only file {name}",
                        String::from_utf8_lossy(args[0])
                    );
                    return Outcome::Failed;
                };
                if cmd.name == "multi" {
                    valid_before_multi = valid_up_to;
                }
                commands::execute(server, &mut client, &mut replies, &args);
                replies.clear();
                valid_up_to = commands.pos;
            }
            Ok(None) if client.multi.is_some() => {
                warning!("Revert incomplete MULTI/EXEC transaction in AOF file {name}");
                valid_up_to = valid_before_multi;
                break Bad::Truncated;
            }
            Ok(None) => return Outcome::Ok,
            Err(bad) => break bad,
        }
    };
    if bad == Bad::Format {
        warning!("Bad file format reading the append only file {name}: make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>");
        warning!("The command that does not parse starts at offset {valid_up_to} of {name}");
        return Outcome::Failed;
    }
    if server.config.aof.load_truncated {
        warning!("!!! Warning: short read while loading the AOF file {name}!!!");
        warning!("!!! Truncating the AOF {name} at offset {valid_up_to} !!!");
        let cut = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(valid_up_to as u64));
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
