//! The server as an operating-system process: its out-of-memory score ([`oom_score`],
//! `oom-score-adj`, `oom-score-adj-values`), its title in `ps` ([`title`],
//! `proc-title-template`) and its threads' and children's CPUs ([`affinity`], the
//! `*_cpulist` parameters), with the parameters that set them.

pub mod affinity;
pub mod oom_score;
pub mod title;

use crate::config::{one_of, Config, ConfigError};

/// The parameters this module owns, by canonical name.
pub const NAMES: &[&str] = &[
    "oom-score-adj",
    "oom-score-adj-values",
    "proc-title-template",
    "server_cpulist",
    "bio_cpulist",
    "aof_rewrite_cpulist",
    "bgsave_cpulist",
];

/// The process settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessConfig {
    /// oom-score-adj.
    pub oom_mode: oom_score::Mode,
    /// oom-score-adj-values: master, replica, background child.
    pub oom_values: [i32; 3],
    /// proc-title-template.
    pub title_template: String,
    /// server_cpulist, bio_cpulist, aof_rewrite_cpulist, bgsave_cpulist.
    pub cpulists: affinity::CpuLists,
}

impl Default for ProcessConfig {
    fn default() -> Self {
        ProcessConfig {
            oom_mode: oom_score::Mode::No,
            oom_values: oom_score::DEFAULT_VALUES,
            title_template: title::DEFAULT_TEMPLATE.into(),
            cpulists: affinity::CpuLists::default(),
        }
    }
}

impl ProcessConfig {
    /// Sets one of [`NAMES`] from its text.
    pub fn apply(&mut self, name: &str, text: &str) -> Result<(), ConfigError> {
        match name {
            "oom-score-adj" => {
                let names = oom_score::Mode::NAMES.map(|(n, _)| n);
                let name = one_of(text, &names)?;
                self.oom_mode = oom_score::Mode::named(&name).expect("a mode's name");
            }
            "oom-score-adj-values" => self.oom_values = oom_score::parse_values(text)?,
            "proc-title-template" => {
                if !title::valid_template(text) {
                    return Err(ConfigError::BadValue(
                        "template format is invalid or contains unknown variables".into(),
                    ));
                }
                self.title_template = text.into();
            }
            "server_cpulist" => self.cpulists.server = text.into(),
            "bio_cpulist" => self.cpulists.bio = text.into(),
            "aof_rewrite_cpulist" => self.cpulists.aof_rewrite = text.into(),
            "bgsave_cpulist" => self.cpulists.bgsave = text.into(),
            _ => unreachable!("{name} is not a process parameter"),
        }
        Ok(())
    }

    /// CONFIG GET's value of one of [`NAMES`].
    pub fn value_of(&self, name: &str) -> String {
        match name {
            "oom-score-adj" => self.oom_mode.name().into(),
            "oom-score-adj-values" => self
                .oom_values
                .iter()
                .map(i32::to_string)
                .collect::<Vec<_>>()
                .join(" "),
            "proc-title-template" => self.title_template.clone(),
            "server_cpulist" => self.cpulists.server.clone(),
            "bio_cpulist" => self.cpulists.bio.clone(),
            "aof_rewrite_cpulist" => self.cpulists.aof_rewrite.clone(),
            "bgsave_cpulist" => self.cpulists.bgsave.clone(),
            _ => unreachable!("{name} is not a process parameter"),
        }
    }
}

/// The title's variables as `config` gives them.
pub fn title_vars(config: &Config) -> title::Vars {
    let first = config.bind.first().map_or("*", String::as_str);
    title::Vars {
        listen_addr: if config.port != 0 {
            format!("{first}:{}", config.port)
        } else {
            format!("unixsocket:{}", config.unixsocket)
        },
        server_mode: if config.cluster.enabled {
            "[cluster]".into()
        } else {
            String::new()
        },
        config_file: config
            .config_file
            .as_ref()
            .map_or_else(|| "-".into(), |p| p.display().to_string()),
        port: config.port,
        unixsocket: config.unixsocket.clone(),
    }
}

/// Sets the process title from `config` (when proc-title-template changes); false when the
/// template does not expand.
pub fn set_title(config: &Config) -> bool {
    title::set(&config.process.title_template, title_vars(config), true)
}

/// At start: the process title from `config` unless set-proc-title is no, which leaves the
/// title as the server was started (as Redis; its forked children still take theirs).
pub fn set_title_at_start(config: &Config) {
    title::set(
        &config.process.title_template,
        title_vars(config),
        config.set_proc_title,
    );
}

/// Applies oom-score-adj for a master or a `replica` (at start, on CONFIG SET and on a
/// change of role); false when /proc/self/oom_score_adj could not be read or written.
pub fn apply_oom_score(config: &ProcessConfig, replica: bool) -> bool {
    let class = if replica {
        oom_score::Class::Replica
    } else {
        oom_score::Class::Master
    };
    oom_score::apply(config.oom_mode, config.oom_values, class)
}

/// In a forked child, right after the fork: its OOM score and the `title` computed by
/// [`title::for_child`] before the fork.
pub fn enter_child(title: Option<&str>) {
    oom_score::enter_child();
    if let Some(title) = title {
        title::write_child(title);
    }
}
