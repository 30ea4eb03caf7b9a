//! The goblin-server binary: parses the command line and runs the server (see the
//! `goblin_server` library for the parts).

use clap::Parser;
use goblin_server::config::{Args, Config};
use goblin_server::service::directives::FatalConfigError;
use goblin_server::{log, net, notice, server, service, warning};

/// The command line, read as Redis reads it: Goblin's own flags by clap, the rest as
/// configuration lines in `options`.
fn parse_args() -> Args {
    use clap::CommandFactory;
    use service::cmdline::{split, FlagKind};
    let cli = Args::command();
    let argv: Vec<String> = std::env::args().collect();
    let goblin_flag = |arg: &str| {
        let (name, _) = arg.split_once('=').unwrap_or((arg, ""));
        if matches!(name, "--help" | "-h") {
            return Some(FlagKind::Switch);
        }
        let flag = cli
            .get_arguments()
            .find(|a| match name.strip_prefix("--") {
                Some(long) => a.get_long() == Some(long),
                None => {
                    name.len() == 2
                        && a.get_short().map(|c| format!("-{c}")).as_deref() == Some(name)
                }
            })?;
        Some(match flag.get_action().takes_values() {
            true => FlagKind::TakesValue,
            false => FlagKind::Switch,
        })
    };
    let split = split(&argv, goblin_flag);
    let mut args = Args::parse_from(split.clap);
    args.options = split.options;
    args
}

fn main() {
    // First, while no other thread exists: the title takes over the environment's memory.
    service::process::title::init();
    goblin_evloop::alloc::keep_large_buffers_out_of_the_heap();
    if service::asks_version(std::env::args()) {
        println!("{}", service::version_line());
        return;
    }
    let args = parse_args();
    if let Err(e) = run(args) {
        // As Redis: once the log is open, a fatal error is its last line.
        if let Some(fatal) = e.downcast_ref::<FatalConfigError>() {
            eprintln!("\n{fatal}");
        } else if log::initialized() {
            warning!("{e:#}");
        } else {
            eprintln!("goblin-server: {e:#}");
        }
        std::process::exit(1);
    }
}

/// Goblin Store's lines, through the server's log (its format, level and --logfile).
fn store_log(level: goblin_objcache::log::Level, message: &str) {
    let level = match level {
        goblin_objcache::log::Level::Notice => goblin_server::config::LogLevel::Notice,
        goblin_objcache::log::Level::Warning => goblin_server::config::LogLevel::Warning,
    };
    log::log(level, &format!("Goblin Store: {message}"));
}

fn run(args: Args) -> anyhow::Result<()> {
    let (mut config, ignored) = Config::from_args(&args)?;
    log::init(config.loglevel, &config.logfile)?;
    service::crash::set_crash_log(config.crash_log_enabled);
    service::crash::set_exit_on_panic(config.use_exit_on_panic);
    if !service::locale::set_collate(&config.locale_collate) {
        warning!("Failed to configure LOCALE for invalid locale name.");
        std::process::exit(1);
    }
    if config.syslog_enabled {
        log::enable_syslog(&config.syslog_ident, &config.syslog_facility)?;
    }
    if let Some(summary) = service::ignored_summary(&ignored) {
        warning!("{summary}");
    }
    // SAFETY: ignoring SIGPIPE so a client that goes away mid-write yields EPIPE, not death;
    // SIGHUP is ignored as Redis ignores it (a closed terminal or a reload leaves it running).
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
    }
    let listeners = net::bind(&config.bind, config.port, config.sockets())?;
    let (unix, _socket_file) = net::unix::bind(
        &config.unixsocket,
        config.unixsocketperm,
        config.tcp_backlog,
    )?
    .unzip();
    let mut service = service::Service::start(&mut config)?;
    let argv0 = std::env::args().next().unwrap_or_default();
    // As Redis: the lines before the server is set up carry the role letter C.
    log::set_role('C');
    service::syscheck::memory_warnings(config.disable_thp);
    service::banner::starting(std::env::args().len() > 1, &argv0);
    log::set_role('M');
    service::banner::logo(&config);
    service::process::set_title_at_start(&config);
    let replica = config.repl.replicaof.is_some();
    // As Redis: a score that cannot be set at start is logged, not fatal.
    service::process::apply_oom_score(&config.process, replica);
    goblin_server::commands::load_metadata();
    service::process::affinity::configure(&config.process.cpulists);
    let mut server = server::Server::new(config);
    // As Redis, after the background threads started (they take bio_cpulist).
    service::process::affinity::enter(service::process::affinity::Role::Server);
    goblin_server::commands::load_acl_at_start(&mut server)?;
    if server.config.cluster.enabled {
        // Node ids come from the system's random source, as Redis's getRandomHexChars.
        let mut bytes = [0u8; 8];
        let urandom = std::fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes));
        let mut x = if urandom.is_ok() {
            u64::from_ne_bytes(bytes) | 1
        } else {
            server.keyspace.random() | 1
        };
        let cluster = goblin_server::cluster::Cluster::start(&server.config, move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })?;
        server.cluster = Some(Box::new(cluster));
        server.keyspace.index_slots();
    }
    goblin_objcache::log::set_hook(store_log);
    server.store = goblin_objcache::start(&args.store)?;
    server.memory.startup = goblin_server::memory::allocator::allocated();
    notice!("Server initialized");
    if server.config.aof.enabled {
        // As Redis: with appendonly yes the AOF, not the snapshot, holds the dataset.
        // Replayed by the event loop, which answers -LOADING meanwhile.
        server.aof.loading = goblin_server::aof::load::begin(&mut server)?.map(Box::new);
        if server.aof.loading.is_none() {
            goblin_server::aof::open_at_start(&mut server)?;
        }
    } else {
        server.loading = server.snapshots().start_loading();
    }
    service::shutdown::install_signal_handlers();
    let unix_too = unix.is_some();
    net::run(&mut server, listeners, unix, &mut || {
        notice!("Ready to accept connections tcp");
        if unix_too {
            notice!("Ready to accept connections unix");
        }
        service.ready();
    })
}
