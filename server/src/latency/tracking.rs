//! `latency-tracking` and `latency-tracking-info-percentiles`: whether every command's
//! duration goes into its histogram (INFO latencystats, LATENCY HISTOGRAM), and the
//! percentiles INFO latencystats prints.

use crate::config::{yes_no, yes_no_name, ConfigError};

/// The parameters this module owns, by canonical name.
pub const NAMES: &[&str] = &["latency-tracking", "latency-tracking-info-percentiles"];

/// The latency-tracking settings.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackingConfig {
    /// latency-tracking: commands' durations are recorded.
    pub enabled: bool,
    /// latency-tracking-info-percentiles, each from 0 to 100.
    pub percentiles: Vec<f64>,
}

impl Default for TrackingConfig {
    fn default() -> Self {
        TrackingConfig {
            enabled: true,
            percentiles: vec![50.0, 99.0, 99.9],
        }
    }
}

impl TrackingConfig {
    /// Sets one of [`NAMES`] from its text (the percentiles separated by spaces; `""` for
    /// none).
    pub fn apply(&mut self, name: &str, text: &str) -> Result<(), ConfigError> {
        match name {
            "latency-tracking" => self.enabled = yes_no(text)?,
            "latency-tracking-info-percentiles" => {
                self.percentiles = text
                    .split_whitespace()
                    .map(parse_percentile)
                    .collect::<Result<_, _>>()?
            }
            _ => unreachable!("{name} is not a latency-tracking parameter"),
        }
        Ok(())
    }

    /// CONFIG GET's value of one of [`NAMES`].
    pub fn value_of(&self, name: &str) -> String {
        match name {
            "latency-tracking" => yes_no_name(self.enabled),
            "latency-tracking-info-percentiles" => self
                .percentiles
                .iter()
                .map(|&p| percentile_text(p))
                .collect::<Vec<_>>()
                .join(" "),
            _ => unreachable!("{name} is not a latency-tracking parameter"),
        }
    }
}

/// One percentile as Redis's string2d reads it, from 0 to 100.
fn parse_percentile(word: &str) -> Result<f64, ConfigError> {
    let p = word
        .parse::<f64>()
        .ok()
        .filter(|p| !p.is_nan())
        .ok_or_else(|| {
            ConfigError::BadValue("Invalid latency-tracking-info-percentiles parameters".into())
        })?;
    if !(0.0..=100.0).contains(&p) {
        return Err(ConfigError::BadValue(
            "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]".into(),
        ));
    }
    Ok(p)
}

/// A percentile as Redis prints it: `%f` without its trailing zeros and point (`99.9`,
/// `50`).
pub fn percentile_text(p: f64) -> String {
    let text = format!("{p:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_parse_and_print_as_redis() {
        let mut c = TrackingConfig::default();
        assert_eq!(
            c.value_of("latency-tracking-info-percentiles"),
            "50 99 99.9"
        );
        c.apply("latency-tracking-info-percentiles", "0.0 50.0 100.0")
            .unwrap();
        assert_eq!(c.value_of("latency-tracking-info-percentiles"), "0 50 100");
        assert!(c
            .apply("latency-tracking-info-percentiles", "10 a")
            .is_err());
        assert!(c.apply("latency-tracking-info-percentiles", "101").is_err());
        c.apply("latency-tracking-info-percentiles", "").unwrap();
        assert!(c.percentiles.is_empty());
    }
}
